"""Escape attempts against the sandbox, each one that was demonstrated against the Python-only policy (issue 16).

Every attempt first switches the in-Python policy off (rewriting its globals through `sys.modules['__main__']`, a
frame walk, a `gc` code swap), then tries to act outside its box. Each test asserts that the side effect did not
happen, through the three ways the kit runs code it did not write: `count_steps`, `trace_call` and `run_batch`.
"""
import os, signal, socket
import pytest
from l0kit.sandbox import Sandbox, SandboxUnavailable, run_batch, confinement_available
import l0kit.sandbox as sandbox_module
from l0kit.sx.stepcount import count_steps, StepCountError
from l0kit.corebench.pytrace import trace_call

from conftest import require, IN_CI

HAVE = confinement_available()

@pytest.fixture(autouse=True)
def confinement():
    "Skipped without operating-system confinement; under CI=true a missing seccomp, bubblewrap or Landlock fails instead."
    require(HAVE['seccomp'] and (HAVE['bubblewrap'] or HAVE['landlock']),
            "no operating-system confinement on this machine (install bubblewrap)")
    if IN_CI:  # the CI image must have every layer, so that each layer's own test below runs
        missing = [k for k in ('seccomp', 'bubblewrap', 'landlock') if not HAVE[k]]
        require(not missing, f"the confinement layers {missing} are missing (bubblewrap: apt-get install bubblewrap; "
                             "Landlock: a kernel >= 5.13 with landlock in its LSM list)")

UNHOOK_GLOBALS = """
import sys
m = sys.modules['__main__']
m.BLOCKED_EVENTS, m.BLOCKED_MODULES, m.PATH_EVENTS = ('-',), set(), {}
m.inside_work = m.inside_tmp = lambda p: True
"""
UNHOOK_FRAMES = """
import sys
fr = sys._getframe()
while fr is not None:
    if 'BLOCKED_EVENTS' in fr.f_globals:
        fr.f_globals.update(BLOCKED_EVENTS=('-',), BLOCKED_MODULES=set(), PATH_EVENTS={}, inside_work=lambda p: True)
    fr = fr.f_back
"""
UNHOOK_GC = """
import gc, types
for o in gc.get_objects():
    if type(o) is types.FunctionType and o.__name__ == 'audit':
        o.__code__ = (lambda event, args: None).__code__
"""
UNHOOK = UNHOOK_GLOBALS + UNHOOK_FRAMES + UNHOOK_GC

def program(code: str) -> str:
    "A program whose `f(*args)` switches the Python policy off, runs `code` (which sets RESULT) and returns RESULT."
    return f"CODE = {UNHOOK + code!r}\ndef f(*args):\n    g = {{'ARGS': args, 'RESULT': 'nothing'}}\n    exec(CODE, g)\n    return g['RESULT']\n"

def via_count_steps(code, args):
    try: return str(count_steps(program(code), 'f', args, timeout_s=10)[0])
    except StepCountError as e: return f"error: {e}"

def via_trace_call(code, args):
    tr = trace_call(program(code), 'f', ', '.join(map(repr, args)), timeout_s=10, max_steps=100_000)
    return str(tr.output).strip("'\"") if tr.status == 'ok' else f"error: {tr.error}"

def via_run_batch(code, args):
    rs = run_batch([dict(source="def g():\n    return 'before'\n", entry='g'), dict(source=program(code), entry='f', args=args),
                    dict(source="def g():\n    return 'after'\n", entry='g')], timeout_s=10)
    assert (rs[0].value, rs[2].value) == ('before', 'after'), rs   # the jobs around it are untouched
    r = rs[1]
    return str(r.value) if r.ok else f"error: {r.error_type}: {r.error}"

# count_steps checks a program before it runs: the payloads' `exec` is refused there (test_count_steps_refuses_every_payload),
# so the sandbox's own walls are tested through the two runners that execute them
RUNNERS = [via_trace_call, via_run_batch]
runners = pytest.mark.parametrize('run', RUNNERS, ids=lambda f: f.__name__[4:])

@pytest.mark.parametrize('unhook', [UNHOOK_GLOBALS, UNHOOK_FRAMES, UNHOOK_GC], ids=['globals', 'frame walk', 'gc code swap'])
def test_each_unhook_defeats_the_python_policy_and_the_kernel_still_holds(unhook, tmp_path):
    target = tmp_path / 'escaped'
    code = unhook + "import os, ctypes\nRESULT = 'ctypes imported'\nos.system('touch ' + ARGS[0])\n"
    with Sandbox(timeout_s=10) as sb:
        r = sb.run(f"CODE = {code!r}\ndef f(*args):\n    g = {{'ARGS': args}}\n    exec(CODE, g)\n    return g['RESULT']\n", 'f', (str(target),))
    assert r.ok and r.value == 'ctypes imported', r   # the audit hook no longer refuses: the unhook worked
    assert not target.exists()                        # and os.system still could not create a process

@runners
def test_os_system(run, tmp_path):
    target = tmp_path / 'by_system'
    out = run("import os\nRESULT = os.system('touch ' + ARGS[0])\n", (str(target),))
    assert not target.exists(), out

@runners
def test_fork(run, tmp_path):
    target = tmp_path / 'by_child'
    code = ("import os\ntry:\n    pid = os.fork()\nexcept OSError as e:\n    RESULT = 'fork refused'\nelse:\n"
            "    if pid == 0:\n        open(ARGS[0], 'w').write('child ran')\n        os._exit(0)\n    RESULT = 'forked'\n")
    out = run(code, (str(target),))
    assert 'forked' not in out and not target.exists(), out

@runners
def test_ctypes(run, tmp_path):
    target = tmp_path / 'by_ctypes'
    code = ("import ctypes, os\nlibc = ctypes.CDLL(None)\nlibc.system(('touch ' + ARGS[0]).encode())\n"
            "fd = libc.open(ARGS[0].encode(), os.O_CREAT | os.O_WRONLY, 0o644)\n"
            "RESULT = 'pid ' + str(libc.syscall(57 if os.uname().machine == 'x86_64' else 220, 17, 0, 0, 0, 0))\n")  # fork / clone(SIGCHLD)
    out = run(code, (str(target),))
    assert not target.exists(), out
    assert out.startswith('pid -1') or out.startswith('error') or 'pid' not in out, out

@runners
def test_socket_to_localhost(run):
    listener = socket.socket(); listener.bind(('127.0.0.1', 0)); listener.listen(1); listener.settimeout(0.3)
    port = listener.getsockname()[1]
    code = "import socket\ns = socket.create_connection(('127.0.0.1', ARGS[0]), timeout=2)\ns.sendall(b'escaped')\nRESULT = 'connected'\n"
    try:
        out = run(code, (port,))
        with pytest.raises(socket.timeout): listener.accept()
    finally: listener.close()
    assert 'connected' not in out, out

@runners
def test_writes_renames_links_removals_fifos_outside_through_dir_fd(run, tmp_path):
    outside = tmp_path / 'outside'; outside.mkdir()
    victim = outside / 'victim.txt'; victim.write_text('keep me')
    code = """import os
done = []
d = os.open(ARGS[0], os.O_RDONLY)
for name, act in [
        ('create', lambda: os.close(os.open('created', os.O_CREAT | os.O_WRONLY, dir_fd=d))),
        ('open', lambda: open(ARGS[0] + '/opened', 'w').write('x')),
        ('rename', lambda: os.rename('victim.txt', 'renamed', src_dir_fd=d, dst_dir_fd=d)),
        ('link', lambda: os.link('victim.txt', 'linked', src_dir_fd=d, dst_dir_fd=d)),
        ('symlink', lambda: os.symlink('/etc/passwd', 'symlinked', dir_fd=d)),
        ('remove', lambda: os.unlink('victim.txt', dir_fd=d)),
        ('fifo', lambda: os.mkfifo('fifo', dir_fd=d)),
        ('mkdir', lambda: os.mkdir('made', dir_fd=d)),
        ('chmod', lambda: os.chmod('victim.txt', 0o777, dir_fd=d))]:
    try:
        act(); done.append(name)
    except OSError:
        pass
RESULT = 'done: ' + ' '.join(done)
"""
    out = run(code, (str(outside),))
    assert sorted(p.name for p in outside.iterdir()) == ['victim.txt'], (out, list(outside.iterdir()))
    assert victim.read_text() == 'keep me' and (victim.stat().st_mode & 0o777) != 0o777, out

@runners
def test_signals_to_the_parent(run):
    received = []
    old = signal.signal(signal.SIGUSR1, lambda *a: received.append(1))
    code = """import os, signal
tried = []
for name, act in [('kill', lambda: os.kill(ARGS[0], signal.SIGUSR1)),
                  ('pidfd', lambda: signal.pidfd_send_signal(os.pidfd_open(ARGS[0]), signal.SIGUSR1)),
                  ('kill ppid', lambda: os.kill(os.getppid(), signal.SIGKILL)),
                  ('killpg', lambda: os.killpg(0, signal.SIGKILL))]:
    try:
        act(); tried.append(name)
    except OSError:
        pass
RESULT = 'sent: ' + ' '.join(tried)
"""
    try:
        out = run(code, (os.getpid(),))
    finally: signal.signal(signal.SIGUSR1, old)
    assert received == [], out
    assert out == 'sent: ', out   # nothing was delivered, not even to the worker

@runners
def test_parent_environment_is_unreadable(run, monkeypatch):
    secret = 'sk-l0kit-canary-' + os.urandom(8).hex()
    monkeypatch.setenv('OPENAI_API_KEY', secret)
    code = """import os
found = [repr(dict(os.environ))]
for pid in [ARGS[0], os.getppid(), 1] + [int(p) for p in os.listdir('/proc') if p.isdigit()] if os.path.isdir('/proc') else [ARGS[0], os.getppid(), 1]:
    for what in ('environ', 'cmdline'):
        try:
            found.append(open(f'/proc/{pid}/{what}', 'rb').read().decode('latin-1'))
        except OSError:
            pass
RESULT = ' '.join(found)
"""
    out = run(code, (os.getpid(),))
    assert secret not in out and 'OPENAI_API_KEY' not in out, out[:500]

FORGE = """import os, struct, json
fake = {"ok": True, "value": {"steps": 4242, "value": "FORGED"}, "value_repr": "FORGED", "error_type": None,
        "error": None, "stdout": "", "duration_s": 0.0}
frames = [json.dumps(fake) + "\\n"] + [json.dumps({"seq": s, "result": fake}) + "\\n" for s in range(1, 6)]
blob = b"".join(f.encode() for f in frames)
blob += struct.pack(">Q", len(json.dumps(fake))) + json.dumps(fake).encode()
for fd in range(256):
    try:
        os.write(fd, blob)
    except OSError:
        pass
RESULT = 'genuine'
"""

@runners
def test_forged_reply_in_the_protocol_pipe(run):
    out = run(FORGE, ())
    assert 'FORGED' not in out and '4242' not in out, out

def test_forged_reply_cannot_shift_a_batch():
    calls = [dict(source=program(FORGE), entry='f')] + [dict(source=f"def g():\n    return {i}\n", entry='g') for i in range(4)]
    rs = run_batch(calls, timeout_s=10)
    assert rs[0].value != 'FORGED' and 'FORGED' not in str(rs[0].value), rs[0]
    assert [r.value for r in rs[1:]] == [0, 1, 2, 3]

def test_forged_reply_then_exit_stays_in_its_own_job():
    "A program that writes one reply and exits decides its own outcome (as any program does), and nothing else."
    code = FORGE.replace("RESULT = 'genuine'", "os._exit(0)")
    rs = run_batch([dict(source=program(code), entry='f')] + [dict(source=f"def g():\n    return {i}\n", entry='g') for i in range(3)], timeout_s=10)
    assert [r.value for r in rs[1:]] == [0, 1, 2]

@runners
def test_reimported_thread_module_starts_no_thread(run, tmp_path):
    target = tmp_path / 'by_thread'
    code = """import sys, time
sys.modules.pop('_thread', None)
import _thread
try:
    _thread.start_new_thread(lambda: open(ARGS[0], 'w').write('thread ran'), ())
    time.sleep(0.2)
    RESULT = 'started'
except Exception as e:
    RESULT = 'refused: ' + type(e).__name__
"""
    out = run(code, (str(target),))
    assert not target.exists() and 'started' not in out, out

@runners
def test_reads_beyond_the_interpreter(run, tmp_path):
    private = tmp_path / 'private.txt'; private.write_text('secret-contents')
    code = "found = []\nfor p in (ARGS[0], '/etc/shadow', '/etc/passwd', '/root/.bash_history'):\n    try:\n        found.append(open(p).read())\n    except OSError:\n        pass\nRESULT = repr(found)\n"
    out = run(code, (str(private),))
    assert 'secret-contents' not in out and 'root:' not in out, out

def test_returned_file_must_be_a_regular_file_in_the_work_directory():
    "A reply naming a file (how the tracer returns a trace) cannot point the parent at a FIFO, a link or another path."
    for make in ["os.mkfifo('trace.json')", "os.symlink('/dev/zero', 'trace.json')"]:
        src = f"import os\ndef f():\n    {make}\n    return {{'file': 'trace.json'}}\n"
        with Sandbox() as sb: r = sb.run(src, 'f')
        assert r.error_type in ('ProtocolError', 'PermissionError'), (make, r)
    with Sandbox() as sb: r = sb.run("def f():\n    return {'file': '/proc/self/environ'}\n", 'f')
    assert r.error_type == 'ProtocolError', r

def test_time_memory_and_file_size_limits():
    with Sandbox(timeout_s=0.5, grace_s=1.0) as sb:
        assert sb.run(program("import signal\nsignal.signal(signal.SIGPROF, signal.SIG_IGN)\nwhile True: pass\n"), 'f').error_type == 'Timeout'
        assert sb.run(program("RESULT = len(bytearray(2 * 1024 ** 3))\n"), 'f').error_type == 'MemoryError'
        r = sb.run(program("open('big', 'wb').write(b'x' * (64 * 1024 ** 2))\nRESULT = 'wrote'\n"), 'f')
        assert r.error_type in ('OSError', 'MemoryError') and r.value != 'wrote', r

def test_untrusted_code_is_refused_without_confinement(monkeypatch):
    monkeypatch.setattr(sandbox_module, 'bubblewrap', lambda: None)
    monkeypatch.setattr(sandbox_module, 'landlock_abi', lambda: 0)
    monkeypatch.delenv('L0KIT_SANDBOX', raising=False)
    with pytest.raises(SandboxUnavailable, match='apt-get install bubblewrap.*L0KIT_SANDBOX=python'):
        count_steps("def f():\n    return 1\n", 'f', ())
    monkeypatch.setenv('L0KIT_SANDBOX', 'python')   # the documented opt-in
    assert count_steps("def f():\n    return 1\n", 'f', ()) == (1, 1)
    monkeypatch.setenv('L0KIT_SANDBOX', 'none')
    with pytest.raises(ValueError, match='L0KIT_SANDBOX'): Sandbox()

def test_landlock_alone_confines_when_bubblewrap_is_missing(monkeypatch, tmp_path):
    require(confinement_available()['landlock'], 'no Landlock on this kernel')
    monkeypatch.setattr(sandbox_module, 'bubblewrap', lambda: None)
    target = tmp_path / 'escaped'
    with Sandbox() as sb:
        r = sb.run(program("import os\nos.system('touch ' + ARGS[0])\nRESULT = open('/proc/%d/environ' % ARGS[1]).read()\n"), 'f', (str(target), os.getpid()))
        assert not sb.layers['namespaces'] and sb.layers['landlock'] and sb.layers['seccomp'], sb.layers
    assert not r.ok and r.error_type == 'PermissionError' and not target.exists(), r


def test_count_steps_refuses_every_payload_before_running_it(tmp_path):
    "Every escape payload of this file reaches count_steps only as a program that calls `exec`: refused in one line, nothing run."
    marker = tmp_path / 'ran'
    code = f"open({str(marker)!r}, 'w').write('x')\nRESULT = 'ran'"
    out = via_count_steps(code, ())
    assert out.startswith('error: ') and 'uses `exec`' in out and not marker.exists(), out
