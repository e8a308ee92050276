"Step counting: the visible and hidden presentations agree on every atomic instance and on composed programs."
import random
import pytest
from l0kit.sandbox import Sandbox
from l0kit.sx.stepcount import instrument, STEP_HARNESS, count_steps, SEMANTICS_VERSION
from l0kit.sx.atomic import all_instances, CLASSES_BY_NAME, random_value, EDGE_CASES

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
    ("import os\ndef f():\n    return os.system('touch /tmp/l0kit_probe')\n", 'visible', 'UnsupportedProgram'),  # refused before it runs
    ("import shutil\ndef f():\n    shutil.rmtree('/tmp')\n", 'hidden', 'UnsupportedProgram'),
    ("def f():\n    import socket\n    return 1\n", 'hidden', 'UnsupportedProgram'),
    ("def f():\n    return [].__class__.__base__.__subclasses__()\n", 'hidden', 'UnsupportedProgram'),
    ("def f():\n    math = __import__('os')\n    return math.getpid()\n", 'hidden', 'UnsupportedProgram'),
    ("import math\ndef f():\n    return math.factorial(10 ** 7)\n", 'hidden', 'SandboxFailure'),  # allowed names, contained by the sandbox
]

@pytest.mark.parametrize("src,mode,err", MISBEHAVING)
def test_misbehaving_programs_fail_with_a_named_error(src, mode, err):
    import l0kit.sx.stepcount as sc
    with pytest.raises(getattr(sc, err)):
        count_steps(src, 'f', (), mode=mode, step_limit=100_000, timeout_s=1.0)

# --- random programs beyond the library: the two instrumenters must agree with each other and with plain Python ---
def _expr(rng, d, names):
    if d == 0 or rng.random() < 0.3: return rng.choice(names + [str(rng.randint(-3, 9))])
    k = rng.choice(['bin', 'bin', 'un', 'call'])
    if k == 'bin': return f"({_expr(rng, d - 1, names)} {rng.choice(['+', '-', '*', '&', '|', '^'])} {_expr(rng, d - 1, names)})"
    if k == 'un': return f"(-{_expr(rng, d - 1, names)})"
    return f"g({_expr(rng, d - 1, names)})"

def _cond(rng, names):
    c = f"{_expr(rng, 1, names)} {rng.choice(['<', '<=', '==', '!=', '>', '>='])} {_expr(rng, 1, names)}"
    r = rng.random()
    if r < 0.2: return f"not {c}"
    if r < 0.4: return f"{c} {rng.choice(['and', 'or'])} g({rng.choice(names)})"
    return c

def _block(rng, names, depth, ind, in_for=False):
    lines = []
    for _ in range(rng.randint(1, 3)):
        r = rng.random()
        if depth > 0 and r < 0.2:
            lines += [f"{ind}if {_cond(rng, names)}:"] + _block(rng, names, depth - 1, ind + '    ', in_for)
            for _ in range(rng.randint(0, 2)):
                lines += [f"{ind}elif {_cond(rng, names)}:"] + _block(rng, names, depth - 1, ind + '    ', in_for)
            if rng.random() < 0.5: lines += [f"{ind}else:"] + _block(rng, names, depth - 1, ind + '    ', in_for)
        elif depth > 0 and r < 0.35:
            v = f"i{depth}"
            lines += [f"{ind}for {v} in range({rng.randint(0, 3)}):"] + _block(rng, names + [v], depth - 1, ind + '    ', True)
        elif depth > 0 and r < 0.45:
            v = f"w{depth}"
            lines += [f"{ind}{v} = 0", f"{ind}while {v} < {rng.randint(0, 3)}:", f"{ind}    {v} += 1"] + \
                     _block(rng, names + [v], depth - 1, ind + '    ', False)
        elif in_for and r < 0.5: lines.append(f"{ind}continue")
        elif r < 0.75: lines.append(f"{ind}{rng.choice(['a', 'b'])} {rng.choice(['+=', '-=', '^='])} {_expr(rng, 2, names)}")
        else: lines.append(f"{ind}{rng.choice(['a', 'b'])} = {_expr(rng, 2, names)}")
    return lines

def random_program(seed):
    rng = random.Random(seed)
    body = _block(rng, ['a', 'b'], 3, '    ')
    return "def g(y):\n    return y % 5 - 1\n\ndef f(a, b):\n" + "\n".join(body) + "\n    return a - b\n"

def test_random_programs_count_the_same_visibly_and_hidden():
    harness = MULTI.replace('ns[entry](a)', 'ns[entry](*a)')
    args = [(0, 1), (3, -2), (-5, 7)]
    with Sandbox(timeout_s=10) as sb:
        for seed in range(150):
            src = random_program(seed)
            plain = [sb.run(src, 'f', a).value_repr for a in args]
            vis = sb.run(instrument(src, 'visible'), 'f', (args,), harness=harness)
            hid = sb.run(instrument(src, 'hidden'), 'f', (args,), harness=harness)
            assert vis.ok and hid.ok, (seed, vis.error, hid.error, src)
            assert vis.value == hid.value, (seed, src)
            assert [r for r, _ in hid.value] == plain, (seed, src)
