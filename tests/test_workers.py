"""Worker processes of the generators: no fork where another thread may hold a lock, and a dead worker is an error, not a wait."""
import json, os, subprocess, sys, textwrap, threading
from pathlib import Path
import pytest
import l0kit.l0.dataset as l0data
from l0kit.cli.main import main
from l0kit.protocol import workers

LINUX = sys.platform.startswith('linux')

def _script(tmp_path, body: str) -> str:
    path = tmp_path / 'script.py'
    path.write_text(textwrap.dedent(body))
    return str(path)

def _run(script: str, timeout: int = 60):
    try: return subprocess.run([sys.executable, script], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired: pytest.fail(f"{script} did not end within {timeout} s: its workers wait without end")

@pytest.mark.skipif(not LINUX, reason='fork is the question only on Linux, the one platform the kit forks on')
def test_a_lock_held_by_another_thread_when_the_pool_starts_does_not_hang_its_workers(tmp_path):
    # the lock stands for any a thread may hold at that moment (a stream's, the allocator's, a library's): a forked
    # worker that needs it waits for a thread that does not exist in the worker
    script = _script(tmp_path, '''
        import json, threading, time
        import l0kit.l0.dataset as D
        lock = threading.Lock()
        real = D._work
        def _work(task):
            with lock: return real(task)
        if __name__ == '__main__':
            D._work = _work
            held = threading.Event()
            def hold():
                with lock: held.set(); time.sleep(600)
            threading.Thread(target=hold, daemon=True).start(); held.wait()
            items, card = D.build_dataset(D.get_preset('small'), seed=0, workers=2)
            print(json.dumps(items, sort_keys=True))
        ''')
    r = _run(script)
    assert r.returncode == 0, r.stderr
    expected, _ = l0data.build_dataset(l0data.get_preset('small'), seed=0, workers=1)
    assert r.stdout.strip() == json.dumps(expected, sort_keys=True)
    assert [len(v) for v in expected.values()] == [8, 4]  # the preset's splits, so the comparison is of something

@pytest.mark.skipif(not LINUX, reason='fork is the question only on Linux')
def test_a_script_without_its_main_guard_in_a_process_of_threads_ends_with_an_error_that_says_so(tmp_path):
    script = _script(tmp_path, '''
        import threading
        import l0kit.l0.dataset as D
        stop = threading.Event(); threading.Thread(target=stop.wait, daemon=True).start()
        D.build_dataset(D.get_preset('small'), seed=0, workers=2)
        print('generated')
        ''')
    r = _run(script)
    assert r.returncode == 1 and 'generated' not in r.stdout
    assert "WorkerError: a worker process died" in r.stderr
    assert "under `if __name__ == '__main__':`" in r.stderr

def test_a_script_without_its_main_guard_in_a_process_of_one_thread_forks_and_works(tmp_path):
    script = _script(tmp_path, '''
        import l0kit.l0.dataset as D
        from l0kit.protocol.workers import start_method, thread_count
        print(thread_count(), start_method())
        items, card = D.build_dataset(D.get_preset('small'), seed=0, workers=2)
        print(sum(len(v) for v in items.values()))
        ''')
    r = _run(script)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == (['1', 'fork', '12'] if LINUX else [r.stdout.split()[0], 'spawn', '12'])

def test_start_method_forks_only_in_a_process_of_one_thread_on_linux(monkeypatch):
    monkeypatch.setattr(workers.sys, 'platform', 'linux')
    for n, method in [(1, 'fork'), (2, 'forkserver'), (9, 'forkserver')]:
        monkeypatch.setattr(workers, 'thread_count', lambda n=n: n)
        assert workers.start_method() == method
    for platform in ('darwin', 'win32'):
        monkeypatch.setattr(workers.sys, 'platform', platform)
        assert workers.start_method() == 'spawn'

@pytest.mark.skipif(not os.path.isdir('/proc/self/task'), reason='counts from /proc')
def test_thread_count_counts_native_threads_too():
    # torch's threads are not Python's: threading.active_count() does not see them, /proc does
    torch = pytest.importorskip('torch')
    torch.ones(256, 256) @ torch.ones(256, 256)   # its thread pool started, if importing it did not
    assert workers.thread_count() > threading.active_count()

def _die(task): os._exit(9)   # a worker's end when the kernel kills it for memory

def test_a_worker_killed_in_generate_is_one_line_of_the_command_not_a_wait(tmp_path, monkeypatch, capsys):
    # forked on purpose, so the worker sees the job replaced by one that dies as an out-of-memory kill would end it
    monkeypatch.setattr(workers, 'start_method', lambda: 'fork')
    monkeypatch.setattr(l0data, '_work', _die)
    rc = main(['generate', '--preset', 'small', '--out', str(tmp_path / 'out'), '--workers', '2', '--quiet'])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1
    assert err[0].startswith('l0kit generate: error: a worker process died')

def test_the_start_methods_benchmark_runs_and_checks_its_data():
    "`perf/workers_start.py` at a small size: each generator each way, in fresh processes, the same data."
    script = Path(__file__).resolve().parents[1] / 'perf' / 'workers_start.py'
    r = subprocess.run([sys.executable, str(script), '--l0-limit', '2', '--procbench-limit', '2', '--sx-limit', '2', '--repeats', '1'],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    rows = [line for line in r.stdout.splitlines() if 'the same data each way' in line]
    assert [row.split()[0] for row in rows] == ['L0', 'ProcBench', 'SX'] and 'load after' in r.stdout
