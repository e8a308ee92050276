"""Under CI=true nothing skips (issue 34): `importorskip`, `skipif`, `pytest.skip` and a module skipped at import fail,
naming what is missing, and the `slow` / `model` tests run without --runslow; outside CI they skip as before."""
import os, re, subprocess, sys, textwrap, time
from conftest import ROOT

CASES = textwrap.dedent('''
    import pytest
    def test_importorskip(): pytest.importorskip('no_such_package_l0kit')
    @pytest.mark.skipif(True, reason='no bubblewrap here')
    def test_skipif(): pass
    def test_skip(): pytest.skip('no chromium here')
    @pytest.mark.slow
    def test_slow(): pass
    @pytest.mark.xfail(reason='known', strict=True)
    def test_xfail(): assert False
    def test_plain(): pass
''')


def kit_conftest(folder, *hooks, extra: str = ''):
    "A conftest.py in `folder` that loads the kit's tests/conftest.py under another name and takes the `hooks` named from it."
    (folder / 'conftest.py').write_text(
        "import importlib.util\n"
        f"spec = importlib.util.spec_from_file_location('kit_conftest', {str(ROOT / 'tests' / 'conftest.py')!r})\n"
        "kit = importlib.util.module_from_spec(spec); spec.loader.exec_module(kit)\n"
        + ''.join(f"{h} = kit.{h}\n" for h in hooks) + extra)


def run_cases(tmp_path, ci: bool, files=('test_cases.py', 'test_module.py')):
    kit_conftest(tmp_path, 'pytest_addoption', 'pytest_collection_modifyitems', 'pytest_runtest_makereport', 'pytest_make_collect_report',
                 extra="def pytest_configure(config): config.addinivalue_line('markers', 'slow: slow')\n")
    (tmp_path / 'test_cases.py').write_text(CASES)
    (tmp_path / 'test_module.py').write_text("import pytest\npytest.importorskip('no_such_module_l0kit')\ndef test_x(): pass\n")
    env = {k: v for k, v in os.environ.items() if k != 'CI'} | ({'CI': 'true'} if ci else {})
    r = subprocess.run([sys.executable, '-m', 'pytest', '-q', '-rA', '-p', 'no:cacheprovider', *files], cwd=tmp_path,
                       capture_output=True, text=True, env=env, timeout=120)
    return r.returncode, r.stdout


def test_skips_fail_under_ci(tmp_path):
    code, out = run_cases(tmp_path, ci=True, files=['test_cases.py'])
    # importorskip and skip fail; skipif fails at setup (an error); the slow test runs
    assert code == 1 and '2 failed, 2 passed, 1 xfailed, 1 error' in out.strip().splitlines()[-1], out[-3000:]
    for why in ("could not import 'no_such_package_l0kit'", 'no bubblewrap here', 'no chromium here'):
        assert f"CI=true and this would be skipped ({why}" in out, why
    assert 'PASSED test_cases.py::test_slow' in out
    code, out = run_cases(tmp_path, ci=True, files=['test_module.py'])  # a module skipped at import: a collection error
    assert code == 2 and 'CI=true and this would be skipped' in out and 'no_such_module_l0kit' in out, out[-3000:]


def test_skips_stay_skips_outside_ci(tmp_path):
    code, out = run_cases(tmp_path, ci=False)
    assert code == 0 and '1 passed, 5 skipped, 1 xfailed' in out.strip().splitlines()[-1], out[-3000:]



def test_a_test_that_waits_forever_fails_saying_where_it_waited(tmp_path, pytestconfig):
    """No test hangs the run (a CI run once waited 90 minutes): the kit's pytest configuration bounds every test
    (pytest-timeout, 600 s, by SIGALRM), and a test blocked on a read that never returns fails with the line it waited on."""
    assert (pytestconfig.getini('timeout'), pytestconfig.getini('timeout_method')) == ('600', 'signal')
    (tmp_path / 'test_wait.py').write_text("import os\ndef test_wait():\n    r, w = os.pipe()\n    os.read(r, 1)  # nothing ever comes\n")
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider', '-c', str(ROOT / 'pyproject.toml'), '--rootdir',
                        str(tmp_path), '-o', 'timeout=2', str(tmp_path / 'test_wait.py')], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and 'Failed: Timeout' in r.stdout and 'os.read(r, 1)  # nothing ever comes' in r.stdout, r.stdout[-3000:]
    assert time.perf_counter() - t0 < 60


def test_a_run_past_its_time_is_ended_saying_where_each_process_waited(tmp_path):
    """scripts/test.sh's `bounded` ends a pytest run past TEST_TIMEOUT (a hang no test's own limit ends: here SIGALRM is
    blocked) and prints where it waited: the kit's conftest makes SIGUSR1 print every thread's stack into a file."""
    kit_conftest(tmp_path, 'pytest_configure')  # the kit's pytest_configure, which registers the SIGUSR1 dump
    (tmp_path / 'test_wait.py').write_text("import os, signal\ndef test_wait():\n    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGALRM])\n"
                                           "    r, w = os.pipe()\n    os.read(r, 1)  # nothing ever comes\n")
    bounded = re.search(r'^bounded\(\) \{.*?^\}$', (ROOT / 'scripts' / 'test.sh').read_text(), re.S | re.M).group(0)
    t0 = time.perf_counter()
    env = {k: v for k, v in os.environ.items() if not k.startswith('PYTEST_XDIST_')}  # a plain run, also when this test runs in a worker
    r = subprocess.run(['bash', '-c', f'set -euo pipefail\n{bounded}\nTEST_TIMEOUT=3 TEST_KILL_AFTER=2 bounded {sys.executable} -m pytest -q -p no:cacheprovider test_wait.py'],
                       cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode in (124, 137) and 'ran past TEST_TIMEOUT=3 s and was ended' in r.stderr, (r.returncode, r.stderr[-3000:])
    assert '--- main-' in r.stderr and 'test_wait.py", line 5 in test_wait' in r.stderr, r.stderr[-3000:]
    assert time.perf_counter() - t0 < 60
