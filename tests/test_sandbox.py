"Sandbox: isolation and recovery across a batch of misbehaving programs."
import json, os
import pytest
from l0kit.sandbox import Sandbox, run_batch, run_in_sandbox, SandboxResult

PROBE = os.path.expanduser('~/l0kit_sandbox_probe')   # outside the sandbox (it sees no /etc/passwd, so no `~` either)
BAD = {
    'infinite loop': ("def f():\n    while True:\n        pass\n", 'Timeout'),
    'huge allocation': ("def f():\n    return [0] * (10 ** 10)\n", 'MemoryError'),
    'deep recursion': ("def f(n=0):\n    return f(n + 1)\n", 'RecursionError'),
    'os.system': ("import os\ndef f():\n    return os.system('true')\n", 'PermissionError'),
    'fork': ("import os\ndef f():\n    return os.fork()\n", 'PermissionError'),
    'network': ("def f():\n    import socket\n    return socket.socket()\n", 'PermissionError'),
    'write outside': (f"def f():\n    with open({PROBE!r}, 'w') as fh: fh.write('x')\n", 'PermissionError'),
    'rename outside': ("import os\ndef f():\n    os.rename('/tmp', '/tmp2')\n", 'PermissionError'),
    'exit': ("import os\ndef f():\n    os._exit(0)\n", 'Crashed'),
}

def test_batch_survives_every_misbehaviour():
    calls = []
    for src, _ in BAD.values(): calls += [dict(source=src, entry='f', timeout_s=0.5), dict(source="def g(x):\n    return x * 2\n", entry='g', args=(21,))]
    res = run_batch(calls)
    for (name, (_, want)), bad, good in zip(BAD.items(), res[::2], res[1::2]):
        assert (bad.ok, bad.error_type) == (False, want), (name, bad)
        assert (good.ok, good.value) == (True, 42), name
    assert not os.path.exists(PROBE)
    json.dumps([r.to_dict() for r in res])

def test_temporary_directory_is_removed():
    sb = Sandbox()
    r = sb.run("import os\ndef f():\n    return os.getcwd()\n", 'f')
    assert r.ok and os.path.isdir(r.value)
    sb.close()
    assert not os.path.exists(r.value)

def test_result_round_trips_json():
    r = run_in_sandbox("def f():\n    return {'k': [1, 2.5, 'x', None, False]}\n", 'f')
    assert SandboxResult(**json.loads(json.dumps(r.to_dict()))) == r
