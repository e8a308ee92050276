"""End to end through the one runner: every benchmark, generated data, a run directory, a replay of it, a report."""
import json, subprocess, sys
from pathlib import Path

import pandas as pd
import pytest

from l0kit.protocol.benchmark import get_benchmark
from l0kit.protocol.models import Model, Completion, load_model, prepare
from l0kit.runs.runner import run_eval, RunConfig
from l0kit.runs.format import read_records
from l0kit.runs.report import report
from conftest import run_json

def read_responses(run): return [vars(r) for r in read_records(run).records]

CLI = [sys.executable, '-c', 'import sys; from l0kit.cli.main import main; sys.exit(main())']

def cli(*args):
    out = subprocess.run(CLI + [str(a) for a in args], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


class ScriptedModel(Model):
    "Answers each prompt with `answer(item, voter)`: a stand-in for a language model in plumbing tests."
    name, spec = 'scripted', 'scripted'
    def __init__(self, items, answer): self.by_id, self.answer = {it['id']: it for it in items}, answer
    def generate(self, prompts, params=None, seeds=None):
        prompts, params = prepare(prompts, params)
        return [[Completion(self.answer(self.by_id[p.pair['id']], p.pair['voter']), prompt_tokens=10, completion_tokens=10, latency_s=0.0,
                            finish_reason='stop')] for p in prompts]


def replay_matches(bench, items, run1, tmp_path, config):
    "A replay of run1 reproduces its responses exactly."
    run_eval(bench, load_model(f"replay:{run1}"), items, tmp_path / 'replay', config, progress=False)
    key = lambda rs: sorted((r['id'], r['voter'], r['response']) for r in rs)
    assert key(read_responses(tmp_path / 'replay')) == key(read_responses(run1))


def test_l0_simulated_then_replay_through_the_cli(tmp_path):
    cli('generate', '--preset', 'small', '--limit', '2', '--out', tmp_path / 'data', '--quiet')
    cli('eval', '--data', tmp_path / 'data', '--split', 'short', '--model', 'simulated:rate=0.05,seed=1', '--voters', '3',
        '--out', tmp_path / 'run', '--no-progress')
    cli('eval', '--data', tmp_path / 'data', '--split', 'short', '--model', f"replay:{tmp_path / 'run'}", '--voters', '3',
        '--out', tmp_path / 'replay', '--no-progress')
    a, b = cli('report', tmp_path / 'run'), cli('report', tmp_path / 'replay')
    assert 'simulated' in a
    table = lambda s: [l for l in s.splitlines() if l.startswith(('short', 'average', 'Average'))]
    assert table(a) and table(a) == table(b)


def test_procbench_end_to_end(tmp_path):
    from l0kit.procbench import ProcBenchDataConfig, generate_dataset, save_dataset, render_answer
    items = generate_dataset(ProcBenchDataConfig(examples_per_length=1, max_length=4, tasks=['Sort', 'Cumulate', 'DeleteChar']))
    save_dataset(items, tmp_path / 'data')
    bench = get_benchmark('procbench')
    split = items[0]['split']
    loaded = bench.load(tmp_path / 'data', split)
    config = RunConfig(voters=2)
    model = ScriptedModel(loaded, lambda it, v: render_answer(it['label']) if v == 0 else 'I am not sure.')
    run_eval(bench, model, loaded, tmp_path / 'run', config, data=str(tmp_path / 'data'), split=split, progress=False)
    scores = report([tmp_path / 'run'])[0].scores
    assert scores[scores.voter == 0].sm.mean() == 1.0 and scores[scores.voter == 1].sm.mean() == 0.0
    assert len(bench.summarize(scores)) >= 1
    replay_matches(bench, loaded, tmp_path / 'run', tmp_path, config)


def test_sx_end_to_end(tmp_path):
    from l0kit.sx.dataset import write_dataset
    write_dataset(tmp_path / 'data', limit=2)
    for name in ('visible', 'hidden'):
        bench = get_benchmark('sx', presentation=name)
        items = bench.load(tmp_path / 'data', 'easy')
        config = RunConfig(voters=1)
        run_eval(bench, ScriptedModel(items, lambda it, v: 'The answer is 3.'), items, tmp_path / name, config, data=str(tmp_path / 'data'), split='easy', progress=False)
        scores = report([tmp_path / name], data=tmp_path / 'data')[0].scores
        assert len(scores) == len(items)
        replay_matches(bench, items, tmp_path / name, tmp_path / f"{name}-r", config)


def test_core_simulated_end_to_end(tmp_path):
    cli('generate', '--benchmark', 'core', '--out', tmp_path / 'data')
    bench = get_benchmark('core', method='io')
    items = bench.load(tmp_path / 'data', 'test')
    config = RunConfig(voters=1)
    run_eval(bench, bench.simulated_model('output_accuracy=1.0,probe_accuracy=0.0,seed=1'), items, tmp_path / 'run', config,
             data=str(tmp_path / 'data'), split='test', progress=False)
    r = report([tmp_path / 'run'])[0]
    assert r.simulated and r.tables['Table 1'].iloc[0]['I'] == 100.0
    replay_matches(bench, items, tmp_path / 'run', tmp_path, config)


def test_procbench_simulated_and_replay_through_the_cli(tmp_path):
    cli('generate', '--benchmark', 'procbench', '--out', tmp_path / 'data', '--limit', '2')
    for name, spec in (('sim', 'simulated:error_rate=0.3,seed=2'), ('replay', f"replay:{tmp_path / 'sim'}")):
        cli('eval', '--benchmark', 'procbench', '--data', tmp_path / 'data', '--split', 'short', '--model', spec,
            '--voters', '2', '--out', tmp_path / name, '--no-progress')
    key = lambda run: sorted((r['id'], r['voter'], r['response']) for r in read_responses(tmp_path / run))
    assert key('sim') == key('replay') and len(key('sim')) > 0
    assert json.loads((tmp_path / 'sim' / 'run.json').read_text())['simulated'] is True
    text = cli('report', tmp_path / 'sim')
    assert 'SIMULATED' in text and 'Table 2' in text


@pytest.mark.model
def test_procbench_with_the_embedded_model(tmp_path):
    cli('generate', '--benchmark', 'procbench', '--out', tmp_path / 'data', '--limit', '1')
    cli('eval', '--benchmark', 'procbench', '--data', tmp_path / 'data', '--split', 'short', '--model', 'smollm2',
        '--voters', '1', '--limit', '1', '--max-new-tokens-cap', '48', '--out', tmp_path / 'run', '--no-progress')
    assert len(read_responses(tmp_path / 'run')) == 1


def test_experiment_cost_projects_from_measured_batches(tmp_path):
    "perf/experiment_cost.py: the median batch rate; a split whose requests all failed is not runnable."
    def write(split, records):
        d = tmp_path / 'runs' / split; d.mkdir(parents=True)
        (d / 'run.json').write_text(json.dumps(run_json(1, model='m', split=split, model_info={'batch_size': 2})))
        (d / 'responses.jsonl').write_text(''.join(json.dumps(r) + '\n' for r in records))
    rec = dict(prompt_hash='-', response='L2,', prompt_tokens=100, completion_tokens=10, error=None, finish_reason='stop')
    write('short', [dict(rec, id=f'p{i}', voter=0, latency_s=4.0 if i < 2 else 6.0) for i in range(4)])  # 2 batches: 10 s
    write('long', [dict(rec, id='q', voter=0, latency_s=0.0, response='', error='prompt of 9000 tokens does not fit',
                        finish_reason='error')])
    out = subprocess.run([sys.executable, 'perf/experiment_cost.py', str(tmp_path / 'runs'), '--programs', '10', '--voters', '36'],
                         capture_output=True, text=True, cwd=Path(__file__).parents[1])
    assert out.returncode == 0, out.stderr
    assert 'not runnable: prompt of 9000 tokens' in out.stdout
    short = next(l for l in out.stdout.splitlines() if l.startswith('short')).split()
    assert short[1:4] == ['4', '0', '2'] and float(short[5]) == 2.5   # median of 2 s and 3 s per response
    assert 'projected generation time of the runnable splits: 0.2 h' in out.stdout   # 2.5 s x 360 responses = 0.25 h


@pytest.mark.parametrize('bench,split', [('l0', 'short'), ('procbench', 'short'), ('sx', 'easy'), ('core', 'test')])
def test_every_benchmark_through_the_cli_with_its_simulated_model(tmp_path, bench, split):
    "One generate, eval and report for every benchmark; simulated models are labelled in run.json, text and JSON."
    cli('generate', '--benchmark', bench, '--out', tmp_path / 'data', '--limit', '2')
    out = cli('eval', '--benchmark', bench, '--data', tmp_path / 'data', '--split', split, '--model', 'simulated',
              '--out', tmp_path / 'run', '--no-progress')
    assert '[simulated model]' in out
    meta = json.loads((tmp_path / 'run' / 'run.json').read_text())
    assert meta['simulated'] is True and meta['format'] == 2
    assert meta['run_config']['voters'] == {'l0': 31, 'core': 3}.get(bench, 1)   # each paper's default: CoRE's three runs
    assert 'SIMULATED' in cli('report', tmp_path / 'run')
    assert json.loads(cli('report', tmp_path / 'run', '--json'))['reports'][0]['simulated'] is True


def test_options_a_benchmark_does_not_take_are_errors(tmp_path):
    cli('generate', '--benchmark', 'sx', '--out', tmp_path / 'data', '--limit', '1')
    out = subprocess.run(CLI + ['eval', '--benchmark', 'sx', '--data', str(tmp_path / 'data'), '--split', 'easy', '--model',
                                'simulated', '--set', 'shots=2', '--out', str(tmp_path / 'run'), '--no-progress'], capture_output=True, text=True)
    assert out.returncode == 2 and "sx does not take 'shots'; its settings are: presentation, max_new_tokens" in out.stderr
