"""The runner under real interruptions: a run killed with SIGKILL keeps every response it wrote and resumes to the same
result as an uninterrupted run; the `eval` command's user errors."""
import json, os, signal, subprocess, sys, textwrap, time
from pathlib import Path
import pytest
from l0kit.harness.benchmark import get_benchmark
from l0kit.l0.benchmark import make_l0_item
from l0kit.harness.models import load_model
from l0kit.harness.runner import EvalConfig, run_eval, read_responses

ROOT = Path(__file__).resolve().parents[1]
SMALL = "def function(x, lst_y, cond_x):\n    lst_y.append(x)\n    if cond_x:\n        x = x + 2\n    lst_y.pop()\n    return\n"
ITEMS = [make_l0_item(f'small-{k}', SMALL, dict(x=k, lst_y=[k], cond_x=k % 2 == 0), [dict(x=i, lst_y=[], cond_x=i % 3 == 0) for i in range(8)])
         for k in range(6)]
CFG = EvalConfig(voters=5, shots=3)

SLOW_RUN = textwrap.dedent("""
    import sys, time, json
    from l0kit.harness.benchmark import get_benchmark
    from l0kit.l0.benchmark import make_l0_item
    from l0kit.harness.models import load_model, Model
    from l0kit.harness.runner import EvalConfig, run_eval
    import tests.test_runner as t
    class Slow(Model):
        batch_size = 2
        def __init__(self): self.inner = load_model('simulated:rate=0.2'); self.spec = self.inner.spec
        def generate(self, prompts, params=None, seeds=None):
            time.sleep(0.2); return self.inner.generate(prompts, params, seeds)
        def info(self): return self.inner.info()
    run_eval(get_benchmark('l0'), Slow(), t.ITEMS, sys.argv[1], t.CFG, progress=False)
""")

def test_sigkill_loses_nothing_and_resumes(tmp_path):
    ref = tmp_path / 'ref'
    run_eval(get_benchmark('l0'), load_model('simulated:rate=0.2'), ITEMS, ref, CFG, progress=False)
    run = tmp_path / 'killed'
    env = {**os.environ, 'PYTHONPATH': str(ROOT)}
    p = subprocess.Popen([sys.executable, '-c', SLOW_RUN, str(run)], cwd=ROOT, env=env)
    f, t0 = run / 'responses.jsonl', time.time()
    while (not f.exists() or len(f.read_text().splitlines()) < 6) and time.time() - t0 < 60 and p.poll() is None: time.sleep(0.05)
    os.kill(p.pid, signal.SIGKILL); p.wait()
    kept = read_responses(run)
    assert 6 <= len(kept) < 30, len(kept)
    s = run_eval(get_benchmark('l0'), load_model('simulated:rate=0.2'), ITEMS, run, CFG, progress=False)
    assert (s['skipped'], s['complete']) == (len(kept), 30)
    assert [(r['id'], r['voter'], r['response']) for r in read_responses(run)] == \
           [(r['id'], r['voter'], r['response']) for r in read_responses(ref)]

def test_prompts_do_not_depend_on_the_hash_seed(tmp_path):
    outs = []
    for hs, bs in (('1', 1), ('2', 7)):
        code = f"""
import json, sys
import tests.test_runner as t
from l0kit.harness.benchmark import get_benchmark
b = get_benchmark('l0'); b.items = t.ITEMS
print(json.dumps([b.build_prompt(it, v, t.CFG).messages[0]['content'] for it in t.ITEMS for v in range(5)]))
"""
        r = subprocess.run([sys.executable, '-c', code], cwd=ROOT, env={**os.environ, 'PYTHONPATH': str(ROOT), 'PYTHONHASHSEED': hs},
                           capture_output=True, text=True, check=True)
        outs.append(json.loads(r.stdout))
    assert outs[0] == outs[1]

def test_eval_command_errors(tmp_path, capsys):
    import argparse
    from l0kit.harness.eval_cli import register_cli
    parser = argparse.ArgumentParser(prog='l0kit'); register_cli(parser.add_subparsers(required=True))
    a = parser.parse_args(f'eval --data {tmp_path}/nothing --split short --model simulated --out {tmp_path}/r --no-progress'.split())
    assert a.func(a) == 2
    assert 'does not exist' in capsys.readouterr().err
    a = parser.parse_args(f'eval --data {tmp_path} --split short --model nonsense:x --out {tmp_path}/r --no-progress'.split())
    assert a.func(a) == 2
