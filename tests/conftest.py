import faulthandler, importlib.util, os, signal, subprocess, sys
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
# the four papers as text: `../shared/seeds` seen from the repository root (the project's layout; no machine's path)
SEEDS = ROOT.parent / "shared" / "seeds"
IN_CI = os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")
WORKER = os.environ.get("PYTEST_XDIST_WORKER")  # 'gw0', 'gw1', ... in a worker of `pytest -n N`; None in a plain run

def worker_cpus(cpus: list, worker: str, workers: int) -> list:
    "The CPUs of one of `workers` pytest-xdist workers: every `workers`-th of `cpus`, so that the workers share none."
    return cpus[int(worker.removeprefix('gw')) % workers::workers] if 1 < workers <= len(cpus) else cpus

_STACKS = []

def _stacks_file():
    "Where this process prints its threads' stacks on SIGUSR1: a file of its own in L0KIT_TEST_STACKS (scripts/test.sh prints them one after another), else standard error."
    if not (d := os.environ.get('L0KIT_TEST_STACKS')): return sys.__stderr__
    _STACKS.append(open(os.path.join(d, f"{WORKER or 'main'}-{os.getpid()}.txt"), 'w'))  # kept open: faulthandler writes to its descriptor
    return _STACKS[-1]

def pytest_configure(config):
    """Under `pytest -n N` each worker runs on its own CPUs, with as many threads as it has CPUs (torch, BLAS and
    llama.cpp read their thread counts from the CPUs a process may use): N workers whose models each start a thread per
    core of the machine would ask for N times its cores, and llama.cpp's spinning threads slow down many times under that.
    Tests that need the whole machine are marked `serial` and run after the parallel part (scripts/test.sh).
    SIGUSR1 prints the stack of every thread (the main process and each worker), which scripts/test.sh sends to a run
    that has gone past its time before it ends it: a hang outside any test (a worker starting) still says where."""
    if hasattr(signal, 'SIGUSR1'): faulthandler.register(signal.SIGUSR1, file=_stacks_file(), all_threads=True)
    if not WORKER or not hasattr(os, 'sched_setaffinity'): return
    mine = worker_cpus(sorted(os.sched_getaffinity(0)), WORKER, int(os.environ.get('PYTEST_XDIST_WORKER_COUNT', '1')))
    os.sched_setaffinity(0, mine)
    for v in ('OMP_NUM_THREADS', 'MKL_NUM_THREADS', 'OPENBLAS_NUM_THREADS'): os.environ[v] = str(len(mine))

def require(ok: bool, reason: str):
    "Skip when `ok` is false, except under CI=true, where a missing prerequisite is a failure that says what is missing."
    if ok: return
    if IN_CI: pytest.fail(f"CI=true and {reason}: the check would be skipped, so it fails instead", pytrace=False)
    pytest.skip(reason)

def seed_text(name: str) -> Path:
    "The path of one seed paper's text, or a skip (a failure under CI=true) when the seeds are not beside the repository."
    p = SEEDS / name
    require(p.exists(), f"the seed paper's text {p.relative_to(ROOT.parent)} is missing (expected at ../shared/seeds)")
    return p

# what `python -m llama_cpp.server` imports: llama-cpp-python and the pure-Python packages of its `[server]` extra
SERVER_PACKAGES = ('llama_cpp', 'fastapi', 'uvicorn', 'sse_starlette', 'starlette_context', 'pydantic_settings')

def missing_server_packages() -> list:
    "The server packages that are not importable here."
    return [p for p in SERVER_PACKAGES if importlib.util.find_spec(p) is None]

def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", default=False, help="also run slow / model tests")

def pytest_collection_modifyitems(config, items):
    """`slow` and `model` tests need --runslow, except under CI=true, where they run; `server` tests (a real llama.cpp
    server) run by default, unless also slow."""
    if config.getoption("--runslow") or IN_CI: return
    skip = pytest.mark.skip(reason="needs --runslow")
    for item in items:
        if any(k in item.keywords for k in ("slow", "model")): item.add_marker(skip)

def run_json(voters: int, model: str = 'hand-written', split: str = 'all', benchmark: str = 'l0', **fields) -> dict:
    "A hand-written `run.json` of the current format (2): the fields `check_meta` needs, and any others given."
    return dict(format=2, benchmark=benchmark, benchmark_config={}, run_config={'voters': voters}, model=model,
                model_identity=model, split=split, shard='1/1', **fields)

CI_SKIP = "CI=true and this would be skipped ({}): under CI a missing package, tool, browser or file fails instead"

def _fail_if_skipped_in_ci(rep):
    "Under CI=true a skip (importorskip, skipif, skip, `require`) becomes a failure that says why it would have skipped."
    if not (IN_CI and rep.skipped) or hasattr(rep, "wasxfail"): return  # an expected failure is not a skip
    reason = rep.longrepr[2] if isinstance(rep.longrepr, tuple) else str(rep.longrepr)
    rep.outcome, rep.longrepr = "failed", CI_SKIP.format(reason.removeprefix("Skipped: "))

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    _fail_if_skipped_in_ci((yield).get_result())

@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    "A module skipped as a whole (`pytest.importorskip` at the top of the file) fails under CI too."
    _fail_if_skipped_in_ci((yield).get_result())


def shared_tmp(tmp_path_factory) -> Path:
    "A folder of this test run that every pytest-xdist worker of the run sees (the base temporary folder without xdist)."
    base = tmp_path_factory.getbasetemp()
    return base.parent if WORKER else base

@pytest.fixture(scope='session')
def docs_site(tmp_path_factory) -> Path:
    """The documentation site built by scripts/docs.sh, once for every test of the run that reads it (a build takes
    about a minute): under pytest-xdist the first worker to ask builds it, under a lock, and the others wait for it."""
    from filelock import FileLock
    out = shared_tmp(tmp_path_factory) / 'docs-site'
    with FileLock(f'{out}.lock', timeout=900):  # a build that never ends fails the build's test and then this wait
        if not (out / 'index.html').exists():
            building = out.with_name('docs-site.partial')  # a failed or killed build never passes for a site
            r = subprocess.run(['bash', str(ROOT / 'scripts' / 'docs.sh'), str(building)], capture_output=True, text=True, cwd=ROOT, timeout=540)
            assert r.returncode == 0, r.stderr[-3000:]
            building.rename(out)
    return out
