import importlib.util, os, subprocess
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
# the four papers as text: `../shared/seeds` seen from the repository root (the project's layout; no machine's path)
SEEDS = ROOT.parent / "shared" / "seeds"
IN_CI = os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")

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


@pytest.fixture(scope='session')
def docs_site(tmp_path_factory) -> Path:
    "The documentation site built by scripts/docs.sh, once for every test that reads it (a build takes over a minute)."
    out = tmp_path_factory.mktemp('docs') / 'site'
    r = subprocess.run(['bash', str(ROOT / 'scripts' / 'docs.sh'), str(out)], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-3000:]
    return out
