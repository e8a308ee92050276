"""`l0kit export inspect-log`: a kit run becomes an Inspect log that Inspect's reader and its `inspect log` command read,
one sample per (item, voter), with the prompt the kit showed, the response, and the report's per-response scores;
reference answers score 1 and answers with one wrong value score 0, as the benchmark's paper counts them."""
import json, os, subprocess, sys
from pathlib import Path
import pytest
from l0kit.protocol.benchmark import get_benchmark
from l0kit.protocol.prompt import prompt_hash
from l0kit.runs.report import report
from l0kit.runs.runner import RunConfig
from l0kit.runs.format import Record, append_records, new_run_meta, write_meta
from l0kit.bridges.answers import reference_answer
from l0kit.bridges.rl import corruptions

ROOT = Path(__file__).resolve().parents[1]
SPLITS = {'l0': 'short', 'procbench': 'short', 'sx': 'easy', 'core': 'test'}
BIN = Path(sys.executable).parent

@pytest.fixture(scope='module')
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp('data')
    for b in SPLITS: get_benchmark(b).generate(root / b, limit=2, **({'preset': 'small'} if b == 'l0' else {}))
    return root

def make_run(tmp: Path, name: str, data_dir: Path, limit: int = 3) -> tuple[Path, dict]:
    "A run folder of two voters: voter 0 gives the reference answer, voter 1 an answer with one wrong value."
    bench, split = get_benchmark(name), SPLITS[name]
    items = bench.load(data_dir, split, limit)
    bench.prepare(items)
    run = tmp / f'run-{name}'; run.mkdir()
    write_meta(run, new_run_meta(benchmark=name, benchmark_config=bench.settings(), run_config=vars(RunConfig()) | {'voters': 2}, model='test',
                                 model_identity='test', model_info={}, simulated=False, data=str(data_dir.resolve()), split=split, limit=limit))
    expected = {}
    for it in items:
        for v, text in enumerate([reference_answer(bench, it), corruptions(bench, it)[0]]):
            append_records(run, [Record(id=it['id'], voter=v, response=text, split=split, prompt_hash=prompt_hash(bench.build_prompt(it, v, 0)),
                                        item_hash=bench.item_hash(it), completion_tokens=7, finish_reason='stop')])
            expected[(it['id'], v + 1)] = (text, bench.build_prompt(it, v, 0).messages, 1.0 - v)
    return run, expected

@pytest.mark.parametrize('name', list(SPLITS))
def test_export_reads_back_with_the_reports_scores(tmp_path, data, name):
    from inspect_ai.log import read_eval_log
    run, expected = make_run(tmp_path, name, data / name)
    out = tmp_path / 'logs' / f'{name}.eval'
    r = subprocess.run([str(BIN / 'l0kit'), 'export', 'inspect-log', str(run), '--out', str(out)], cwd=ROOT, capture_output=True, text=True,
                       env=os.environ | {'PYTHONPATH': str(ROOT)})
    assert r.returncode == 0, r.stderr[-3000:]
    log = read_eval_log(str(out))
    rep = report([run])[0]
    assert log.status == 'success' and log.eval.task == f"l0kit/{ {'l0': 'l0bench', 'procbench': 'procbench', 'sx': 'sxbench', 'core': 'corebench'}[name]}"
    assert len(log.samples) == len(expected) == len(rep.scores) and log.eval.config.epochs == 2
    rows = {(row['id'], int(row['voter']) + 1): row for row in rep.scores.to_dict('records')}
    exact = "correct"  # every reading has it (ProcBench: SM = 1)
    for s in log.samples:
        text, messages, right = expected[(s.id, s.epoch)]
        sc = s.scores['kit_scorer']
        assert s.messages[-1].text == text and s.output.completion == text
        assert [m.text for m in s.input] == [m['content'] for m in messages] and s.metadata['prompt_matches_run']
        assert float(sc.metadata['scores'][exact]) == right  # reference 1, one wrong value 0 (not computed by the export)
        row = rows[(s.id, s.epoch)]
        for col, v in sc.metadata['scores'].items():  # every per-response column of `l0kit report`
            want = row[col]
            assert v == want or (v is None and want != want) or (isinstance(want, float) and v == pytest.approx(want)), (col, v, want)
        assert (sc.metadata['partial_credit'] == 1.0) == bool(right) and 0 <= sc.metadata['partial_credit'] <= 1
        assert (sc.metadata['first_error_step'] is None) == bool(right)
    means = {e.name: e.metrics['mean'].value for e in log.results.scores}
    assert means and all(v == pytest.approx(sum(s.scores['kit_scorer'].value[m] for s in log.samples) / len(log.samples)) for m, v in means.items())
    # Inspect's own command reads the file too
    d = subprocess.run([str(BIN / 'inspect'), 'log', 'dump', str(out)], capture_output=True, text=True)
    assert d.returncode == 0 and len(json.loads(d.stdout)['samples']) == len(expected)

def test_export_refuses_what_it_cannot_write(tmp_path, data):
    run, _ = make_run(tmp_path, 'procbench', data / 'procbench', 1)
    r = subprocess.run([str(BIN / 'l0kit'), 'export', 'inspect-log', str(run), '--out', str(tmp_path / 'x.txt')], capture_output=True, text=True,
                       env=os.environ | {'PYTHONPATH': str(ROOT)})
    assert r.returncode != 0 and '.eval or .json' in r.stderr and 'Traceback' not in r.stderr
    r = subprocess.run([str(BIN / 'l0kit'), 'export', 'inspect-log', str(tmp_path / 'nothing'), '--out', str(tmp_path / 'x.eval')],
                       capture_output=True, text=True, env=os.environ | {'PYTHONPATH': str(ROOT)})
    assert r.returncode != 0 and 'not a run folder' in r.stderr and 'Traceback' not in r.stderr
