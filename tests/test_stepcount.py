"Step counting: the visible and hidden presentations agree on every atomic instance and on composed programs."
import random
import pytest
from l0kit.sandbox import Sandbox
from l0kit.stepcount import instrument, STEP_HARNESS, count_steps, SEMANTICS_VERSION
from l0kit.sxatomic import all_instances, CLASSES_BY_NAME, random_value, EDGE_CASES

MULTI = '''
def harness(ns, entry, args):
    out = []
    for a in args[0]:
        ns["run_steps"] = 0
        value = ns[entry](a)
        out.append([repr(value), ns["run_steps"]])
    return out
'''

def test_every_instance_counts_the_same_visibly_and_hidden():
    rng = random.Random(1)
    with Sandbox(timeout_s=10) as sb:
        for inst in all_instances():
            t = CLASSES_BY_NAME[inst.class_name].in_type
            inputs = EDGE_CASES[t][:3] + [random_value(t, rng) for _ in range(4)]
            vis = sb.run(instrument(inst.source, 'visible'), 'f', (inputs,), harness=MULTI)
            hid = sb.run(instrument(inst.source, 'hidden'), 'f', (inputs,), harness=MULTI)
            assert vis.ok and hid.ok, (inst.id, vis.error, hid.error)
            assert vis.value == hid.value, inst.id

def test_plain_and_instrumented_results_agree():
    src = "def f(xs):\n    total = 0\n    for v in xs:\n        if v % 3 == 0:\n            total += v * v\n    return total\n"
    with Sandbox() as sb:
        plain = sb.run(src, 'f', ([3, 4, 6],))
        assert count_steps(src, 'f', ([3, 4, 6],), sandbox=sb) == (plain.value, 1 + 3 * 4 + 2 * 2)

def test_version_string():
    assert SEMANTICS_VERSION == "sx-py-v1"

MISBEHAVING = [
    ("def f():\n    while True:\n        pass\n", 'visible', 'SandboxFailure'),
    ("def f():\n    x = 0\n    while True:\n        x += 1\n", 'hidden', 'StepLimitExceeded'),
    ("def f():\n    return len('x' * 10 ** 10)\n", 'hidden', 'SandboxFailure'),
    ("def f(n=0):\n    return f(n + 1)\n", 'hidden', 'ProgramRaised'),
    ("import os\ndef f():\n    return os.system('touch /tmp/l0kit_probe')\n", 'visible', 'ProgramRaised'),
    ("import shutil\ndef f():\n    shutil.rmtree('/tmp')\n", 'hidden', 'ProgramRaised'),
    ("def f():\n    import socket\n    return 1\n", 'hidden', 'ProgramRaised'),
]

@pytest.mark.parametrize("src,mode,err", MISBEHAVING)
def test_misbehaving_programs_fail_with_a_named_error(src, mode, err):
    import l0kit.stepcount as sc
    with pytest.raises(getattr(sc, err)):
        count_steps(src, 'f', (), mode=mode, step_limit=100_000, timeout_s=1.0)
