"""The runner under real interruptions: a run killed with SIGKILL keeps every response it wrote and resumes to the same
result as an uninterrupted run; the `eval` command's user errors."""
import json, os, signal, subprocess, sys, textwrap, time
from pathlib import Path
import pandas as pd
import pytest
from l0kit.protocol.benchmark import get_benchmark
from l0kit.l0.benchmark import make_l0_item
from l0kit.protocol.benchmark import model_for
from l0kit.runs.runner import RunConfig, run_eval
from l0kit.runs.format import read_records
from l0kit.l0.benchmark import L0Benchmark

def read_responses(run): return [vars(r) for r in read_records(run).records]

ROOT = Path(__file__).resolve().parents[1]
SMALL = "def function(x, lst_y, cond_x):\n    lst_y.append(x)\n    if cond_x:\n        x = x + 2\n    lst_y.pop()\n    return\n"
ITEMS = [make_l0_item(f'small-{k}', SMALL, dict(x=k, lst_y=[k], cond_x=k % 2 == 0), [dict(x=i, lst_y=[], cond_x=i % 3 == 0) for i in range(8)])
         for k in range(6)]
CFG = RunConfig(voters=5)
BENCH = lambda: L0Benchmark(shots=3)

SLOW_RUN = textwrap.dedent("""
    import sys, time, json
    from l0kit.protocol.benchmark import get_benchmark
    from l0kit.l0.benchmark import make_l0_item
    from l0kit.protocol.models import Model
    from l0kit.protocol.benchmark import model_for
    from l0kit.l0.benchmark import L0Benchmark
    from l0kit.runs.runner import run_eval
    import tests.test_runner as t
    class Slow(Model):
        batch_size = 2
        def __init__(self): self.inner = model_for('simulated:rate=0.2', L0Benchmark()); self.spec = self.inner.spec; self.simulated = True
        def generate(self, prompts, params=None, seeds=None):
            time.sleep(0.2); return self.inner.generate(prompts, params, seeds)
        def info(self): return self.inner.info()
    run_eval(t.BENCH(), Slow(), t.ITEMS, sys.argv[1], t.CFG, progress=False)
""")

def test_sigkill_loses_nothing_and_resumes(tmp_path):
    ref = tmp_path / 'ref'
    run_eval(BENCH(), model_for('simulated:rate=0.2', L0Benchmark()), ITEMS, ref, CFG, progress=False)
    run = tmp_path / 'killed'
    env = {**os.environ, 'PYTHONPATH': str(ROOT)}
    p = subprocess.Popen([sys.executable, '-c', SLOW_RUN, str(run)], cwd=ROOT, env=env)
    f, t0 = run / 'responses.jsonl', time.time()
    while (not f.exists() or len(f.read_text().splitlines()) < 6) and time.time() - t0 < 60 and p.poll() is None: time.sleep(0.05)
    os.kill(p.pid, signal.SIGKILL); p.wait()
    kept = read_responses(run)
    assert 6 <= len(kept) < 30, len(kept)
    s = run_eval(BENCH(), model_for('simulated:rate=0.2', L0Benchmark()), ITEMS, run, CFG, progress=False)
    assert (s['skipped'], s['complete']) == (len(kept), 30)
    assert [(r['id'], r['voter'], r['response']) for r in read_responses(run)] == \
           [(r['id'], r['voter'], r['response']) for r in read_responses(ref)]

def test_prompts_do_not_depend_on_the_hash_seed(tmp_path):
    outs = []
    for hs, bs in (('1', 1), ('2', 7)):
        code = f"""
import json, sys
import tests.test_runner as t
from l0kit.protocol.benchmark import get_benchmark
b = t.BENCH(); b.prepare(t.ITEMS)
print(json.dumps([b.build_prompt(it, v).messages[0]['content'] for it in t.ITEMS for v in range(5)]))
"""
        r = subprocess.run([sys.executable, '-c', code], cwd=ROOT, env={**os.environ, 'PYTHONPATH': str(ROOT), 'PYTHONHASHSEED': hs},
                           capture_output=True, text=True, check=True)
        outs.append(json.loads(r.stdout))
    assert outs[0] == outs[1]

def test_eval_command_errors(tmp_path, capsys):
    "User errors reach `main`, which prints one line naming the command and exits 2."
    from l0kit.cli.main import main
    assert main(f'eval --data {tmp_path}/nothing --split short --model simulated --out {tmp_path}/r --no-progress'.split()) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith('l0kit eval: error: data directory') and 'does not exist' in err and len(err.splitlines()) == 1
    assert main(f'eval --data {tmp_path} --split short --model nonsense:x --out {tmp_path}/r --no-progress'.split()) == 2


def cli(*args):
    out = subprocess.run([sys.executable, '-c', 'import sys; from l0kit.cli.main import main; sys.exit(main())', *map(str, args)],
                         capture_output=True, text=True, cwd=ROOT)
    return out.returncode, out.stdout, out.stderr


def test_a_data_set_changed_under_a_run_is_refused(tmp_path):
    "The issue's case: regenerate the data with another seed, resume with more voters: refused, file untouched."
    data, run = tmp_path / 'data', tmp_path / 'run'
    assert cli('generate', '--out', data, '--limit', '3', '--seed', '1', '--quiet')[0] == 0
    assert cli('eval', '--data', data, '--split', 'short', '--model', 'simulated:rate=0.1', '--voters', '2', '--out', run, '--no-progress')[0] == 0
    before = (run / 'responses.jsonl').read_bytes()
    assert cli('generate', '--out', data, '--limit', '3', '--seed', '2', '--quiet')[0] == 0
    code, _, err = cli('eval', '--data', data, '--split', 'short', '--model', 'simulated:rate=0.1', '--voters', '3', '--out', run, '--no-progress')
    assert code == 2 and "item 'short-0000' of the data set differs" in err, err
    assert (run / 'responses.jsonl').read_bytes() == before
    code, _, err = cli('report', run)
    assert code == 2 and 'differs from the one the responses answer' in err, err


def test_shards_report_equals_the_whole_run(tmp_path):
    "`--shard K/N`: the report over the N folders equals the report of the run done in one piece, number for number."
    data = tmp_path / 'data'
    cli('generate', '--out', data, '--limit', '4', '--quiet')
    common = ['--data', data, '--split', 'short', '--model', 'simulated:rate=0.05,seed=3', '--voters', '5', '--no-progress']
    assert cli('eval', *common, '--out', tmp_path / 'whole')[0] == 0
    for k in (1, 2, 3): assert cli('eval', *common, '--shard', f'{k}/3', '--out', tmp_path / f'part{k}')[0] == 0
    whole = json.loads(cli('report', tmp_path / 'whole', '--json', '--set', 'pass_maj=true')[1])
    parts = json.loads(cli('report', *(tmp_path / f'part{k}' for k in (1, 2, 3)), '--json', '--set', 'pass_maj=true')[1])
    assert whole['reports'][0]['tables'] == parts['reports'][0]['tables']
    assert whole['reports'][0]['responses'] == parts['reports'][0]['responses'] == 20


def test_a_second_writer_is_refused_and_a_torn_record_is_redone(tmp_path):
    from l0kit.runs.format import run_lock
    run = tmp_path / 'run'
    run_eval(BENCH(), model_for('simulated:rate=0.2', L0Benchmark()), ITEMS[:2], run, RunConfig(voters=2), progress=False)
    with run_lock(run):  # another process holding the folder
        with pytest.raises(Exception, match='is being written by process'):
            run_eval(BENCH(), model_for('simulated:rate=0.2', L0Benchmark()), ITEMS[:2], run, RunConfig(voters=3), progress=False)
    f = run / 'responses.jsonl'
    lines = f.read_bytes().splitlines(keepends=True)
    f.write_bytes(b''.join(lines[:-1]) + lines[-1][:-5] + 'é'.encode()[:1])  # a kill mid-write, half a character
    s = run_eval(BENCH(), model_for('simulated:rate=0.2', L0Benchmark()), ITEMS[:2], run, RunConfig(voters=2), progress=False)
    assert (s['new'], s['complete']) == (1, 4)
    assert (run / 'responses.torn').exists()


def test_report_scoring_distinct_responses_gives_the_same_numbers(tmp_path):
    "The report reads each distinct (item, response) once; its scores and tables equal those of reading every response alone."
    import l0kit.runs.report as rep
    run, data, bench = tmp_path / 'run', tmp_path / 'data', L0Benchmark(shots=2)
    bench.generate(data, limit=4, seed=0)
    run_eval(bench, model_for('simulated:rate=0.1', bench), bench.load(data, 'short'), run, RunConfig(voters=12), data=str(data), split='short', progress=False)
    fast = rep.report([run], pass_maj=True)[0]
    assert fast.scores['response'].nunique() < len(fast.scores)  # voters repeat each other: the distinct path matters
    alone = pd.DataFrame([bench.read(fast.items[i], r).columns() for i, r in zip(fast.scores['id'], fast.scores['response'])])
    slow = pd.concat([fast.scores.drop(columns=list(alone.columns)), alone], axis=1)[list(fast.scores.columns)]
    pd.testing.assert_frame_equal(fast.scores, slow, check_dtype=False)
    tables = bench.tables(slow, items=fast.items, k=31, pass_maj=True)
    assert fast.tables.keys() == tables.keys()
    for k in fast.tables: pd.testing.assert_frame_equal(fast.tables[k], tables[k])


def test_million_benchmark_reduced(tmp_path):
    "perf/million.py end to end at a small size: runs, report and view as their own processes."
    sys.path.insert(0, str(ROOT / 'perf'))
    import million
    r = million.main(['--programs', '3', '--voters', '8', '--data', str(tmp_path / 'data'), '--keep', str(tmp_path / 'runs')])
    assert r['responses'] == 2 * 3 * 8 and r['report_ok'] and r['view_ok'] and r['page_mib'] < 5
    assert all(r[f'{k}_mib'] > 50 and r[f'{k}_cpu_s'] > 0 for k in ('run', 'report', 'view'))  # each step's own process: its peak memory and CPU
