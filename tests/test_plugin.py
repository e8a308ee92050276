"""A benchmark in its own package (plugins/l0kit-sums, installed by scripts/setup.sh) goes through every verb and bridge
of the kit with no change to the kit: the harness's promise, checked from the command line as a user runs it."""
import json, subprocess, sys
from importlib.metadata import entry_points
from pathlib import Path
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
L0KIT = [str(Path(sys.executable).with_name('l0kit'))]  # the installed command, as a user runs it


def installed() -> bool:
    return any(e.name == 'sums' for e in entry_points(group='l0kit.benchmarks'))


pytestmark = pytest.mark.skipif(not installed(), reason="plugins/l0kit-sums is not installed: run scripts/setup.sh "
                                "(pip install -e plugins/l0kit-sums)")


def l0kit(*args, cwd, ok=True):
    p = subprocess.run([*L0KIT, *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=300)
    if ok: assert p.returncode == 0, p.stderr
    return p


def test_the_package_is_its_own_folder():
    "The benchmark's code lives outside the kit, and no file of the kit names it."
    import l0kit_sums
    assert Path(l0kit_sums.__file__).resolve().is_relative_to(ROOT / 'plugins' / 'l0kit-sums')
    named = [p for p in (ROOT / 'l0kit').rglob('*.py') if 'sums' in p.read_text() and p.name != '_modidx.py']
    assert named == [], f"kit modules that name the plugin's benchmark: {named}"


def test_a_run_names_the_plugins_distribution_without_reading_every_installed_file(monkeypatch):
    "The distribution a run records is found by its name, or, where it has no `top_level.txt` (hatchling and flit write none), by its entry point: never by reading every installed distribution's file list (about a second a command)."
    import importlib.metadata as md
    from l0kit.protocol.benchmark import benchmark_package, get_benchmark
    monkeypatch.setattr(md, 'packages_distributions', lambda: pytest.fail('read every installed distribution'))
    assert benchmark_package(get_benchmark('sums')) == {'name': 'l0kit-sums', 'version': '0.1.0'}
    read = md.PathDistribution.read_text
    monkeypatch.setattr(md.PathDistribution, 'read_text', lambda self, name: None if name == 'top_level.txt' else read(self, name))
    assert benchmark_package(get_benchmark('sums')) == {'name': 'l0kit-sums', 'version': '0.1.0'}


@pytest.fixture(scope='module')
def work(tmp_path_factory):
    d = tmp_path_factory.mktemp('sums')
    l0kit('generate', '--benchmark', 'sums', '--out', 'data', '--limit', '6', '--seed', '3', '--quiet', cwd=d)
    for split in ('short', 'long'):  # --benchmark not given: the data folder's card names it
        l0kit('eval', '--data', 'data', '--split', split, '--model', 'simulated:rate=0.2', '--out', f'run-{split}', '--no-progress', cwd=d)
    return d


def hand_scores(d: Path) -> pd.DataFrame:
    "Each recorded response read by hand (the numbers after 'Values:' against the item's values), not by the kit."
    items = {json.loads(l)['id']: json.loads(l) for s in ('short', 'long') for l in (d / 'data' / f'{s}.jsonl').read_text().splitlines()}
    rows = []
    for s in ('short', 'long'):
        for line in (d / f'run-{s}' / 'responses.jsonl').read_text().splitlines():
            r = json.loads(line)
            got = [int(x) for x in r['response'].split('Values:')[1].split(',')]
            want = items[r['id']]['values']
            k = next((i for i, (g, w) in enumerate(zip(got, want)) if g != w), len(want))
            rows.append({'split': s, 'id': r['id'], 'voter': r['voter'], 'correct': got == want, 'partial': k / len(want)})
    return pd.DataFrame(rows)


def test_report_and_json_agree_with_a_hand_count(work):
    hand = hand_scores(work)
    out = json.loads(l0kit('report', 'run-short', 'run-long', '--json', cwd=work).stdout)
    (rep,) = out['reports']
    assert rep['benchmark'] == 'sums' and rep['simulated'] is True and rep['responses'] == len(hand) == 2 * 6 * 3
    t = rep['tables']['Running sums']
    got = {row: dict(zip(t['columns'], vals)) for row, vals in zip(t['index'], t['data'])}
    for split in ('short', 'long'):
        want = 100 * hand[hand.split == split]['correct'].mean()
        assert abs(got[split]['accuracy (%)'] - want) < 1e-9
    assert got['long']['accuracy (%)'] < got['short']['accuracy (%)']  # compounding slips over a longer chain
    text = l0kit('report', 'run-short', cwd=work).stdout
    assert 'SIMULATED' in text and 'Running sums' in text


def test_report_options_and_errors_are_the_benchmarks(work):
    p = l0kit('report', 'run-short', '--set', 'k=3', cwd=work, ok=False)
    assert p.returncode == 2 and p.stderr.strip() == 'l0kit report: error: the sums report takes no option k; its options are: none'


def test_view_page_and_text(work):
    p = l0kit('view', 'run-short', 'run-long', '--show', cwd=work)
    assert (work / 'run-short' / 'view.html').stat().st_size > 1000
    assert '# sums ' in p.stdout and 'voter' in p.stdout


def test_exports(work):
    l0kit('export', 'lm-eval', '--data', 'data', '--split', 'short', '--out', 'tasks', '--voters', '3', cwd=work)
    spec = json.loads((work / 'tasks' / 'sumsbench_short.kit.json').read_text())
    assert spec['benchmark'] == 'sums' and 'accuracy_majvote@3' in spec['aggregates']
    l0kit('export', 'rl', '--data', 'data', '--split', 'long', '--out', 'rl.parquet', cwd=work)
    rows = pd.read_parquet(work / 'rl.parquet')
    from l0kit.bridges.rl import compute_score
    for r in rows.itertuples():  # verl's reward: the reference scores 1, a value off by one scores 0 exactly (partial below 1)
        truth = r.reward_model['ground_truth']
        assert compute_score(r.data_source, truth, truth, r.extra_info) == 1.0
        vals = json.loads(r.extra_info['item'])['values']
        bad = 'Values: ' + ', '.join(map(str, vals[:-1] + [vals[-1] + 1]))
        assert compute_score(r.data_source, bad, truth, r.extra_info) == 0.0
        assert compute_score(r.data_source, bad, truth, r.extra_info, mode='partial') == (len(vals) - 1) / len(vals)
    l0kit('export', 'hf', '--data', 'data', '--out', 'hf', cwd=work)
    import datasets
    ds = datasets.load_dataset(str(work / 'hf'))
    assert {s: len(x) for s, x in ds.items()} == {'short': 6, 'long': 6}


def test_lm_eval_scores_like_the_report(work):
    "lm-eval itself on the exported task, answering with the run's own responses: the same accuracy as the report."
    from lm_eval import simple_evaluate
    from lm_eval.api.model import LM
    from lm_eval.tasks import TaskManager
    l0kit('export', 'lm-eval', '--data', 'data', '--split', 'short', '--out', 'tasks3', '--voters', '3', cwd=work)
    recorded = {(r['id'], r['voter']): r['response'] for r in map(json.loads, (work / 'run-short' / 'responses.jsonl').read_text().splitlines())}

    class Replay(LM):
        def generate_until(self, requests): return [recorded[(r.doc['id'], r.doc['voter'])] for r in requests]
        def loglikelihood(self, requests): raise NotImplementedError
        def loglikelihood_rolling(self, requests): raise NotImplementedError

    res = simple_evaluate(Replay(), tasks=['sumsbench_short'], task_manager=TaskManager(include_path=str(work / 'tasks3'), include_defaults=False))
    r = res['results']['sumsbench_short']
    hand = hand_scores(work)
    assert abs(r['accuracy,none'] - hand[hand.split == 'short']['correct'].mean()) < 1e-9
    res = simple_evaluate(Replay(), tasks=['sumsbench_short'], task_manager=TaskManager(include_path=str(work / 'tasks3'), include_defaults=False), limit=4)
    assert 'accuracy,none' in res['results']['sumsbench_short']  # --limit 4 (one item and a voter): no crash


def test_inspect_generic_task(work):
    """Inspect's one task for every benchmark, `l0kit/benchmark`, with the mock model answering the reference for half the
    items and, for the other half, the reference with its last value off by one: the scorer gives those 0 (accuracy) and
    (m - 1) / m of their m values (partial), by hand."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    items = [json.loads(l) for l in (work / 'data' / 'short.jsonl').read_text().splitlines()]
    refs = {f"Start with {it['start']}. Apply these operations in order: {' '.join(it['ops'])}.": it for it in items}
    wrong = {it['id'] for it in items[::2]}
    def answer(messages, tools, tool_choice, config):
        it = refs[messages[-1].text.splitlines()[0]]
        vals = it['values'][:-1] + [it['values'][-1] + 1] if it['id'] in wrong else it['values']
        return ModelOutput.from_content('mockllm/model', 'Values: ' + ', '.join(map(str, vals))).model_copy(
            update={'usage': ModelUsage(input_tokens=5, output_tokens=5, total_tokens=10)})
    from l0kit.bridges.inspect import benchmark
    (log,) = inspect_eval(benchmark(data=str(work / 'data'), split='short', voters=1), model=get_model('mockllm/model', custom_outputs=answer),
                          log_dir=str(work / 'logs'), log_level='error', display='none')
    assert log.status == 'success' and len(log.samples) == len(items) and 0 < len(wrong) < len(items)
    hand_acc = [0.0 if it['id'] in wrong else 1.0 for it in items]
    hand_partial = [(len(it['values']) - 1) / len(it['values']) if it['id'] in wrong else 1.0 for it in items]
    means = {s.name: s.metrics['mean'].value for s in log.results.scores}
    assert means['accuracy'] == pytest.approx(sum(hand_acc) / len(items)) and means['partial'] == pytest.approx(sum(hand_partial) / len(items))
