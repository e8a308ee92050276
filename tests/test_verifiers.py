"""The verifiers environment of every benchmark, run by verifiers' own rollout loop against a local OpenAI-compatible
server that answers with the kit's simulated models: the dataset is the kit's prompts and items, and the rubric's
rewards equal what `l0kit report` scores for the same answers (exact) and the steps before the first error (partial)."""
import dataclasses
import pytest
vf = pytest.importorskip('verifiers', reason="the `rl` extra's verifiers (0.3) is not installed")
from sim_server import SimServer, text_of
from l0kit.harness.benchmark import get_benchmark
from l0kit.harness.models import load_model
from l0kit.harness.prompt import prompt_hash
from l0kit.harness.report import report
from l0kit.harness.runner import RunConfig
from l0kit.harness.runs import Record, append_records, new_run_meta, write_meta
from l0kit.bridges.answers import reference_answer
from l0kit.bridges.rl import corruptions

SPLITS = {'l0': 'short', 'procbench': 'short', 'sx': 'easy', 'core': 'test'}
SIMULATED = {'l0': 'rate=0.05,seed=0', 'procbench': 'error_rate=0.3', 'core': 'output_accuracy=0.5,probe_accuracy=0.5'}  # `simulated:` options

@pytest.fixture(scope='module')
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp('data')
    for b in SPLITS: get_benchmark(b).generate(root / b, **({'preset': 'small', 'limit': 6} if b == 'l0' else {'limit': 2}))
    return root

def answers(name, bench, items) -> dict:
    "id -> the answer: the kit's simulated model's, or for SX (no simulator) the reference and one-value corruptions in turn."
    if name in SIMULATED:
        with bench.simulated_model(SIMULATED[name]) as m:
            prompts = [dataclasses.replace(p, meta={'id': it['id'], 'voter': 0, **p.meta}) for it in items for p in [bench.build_prompt(it, 0, 0)]]
            return {it['id']: c[0].text for it, c in zip(items, m.generate(prompts))}  # the meta the runner adds
    return {it['id']: bench.reference(it) if k % 2 == 0 else bench.corruptions(it)[k % len(bench.corruptions(it))] for k, it in enumerate(items)}

def report_scores(tmp, name, bench, items, texts, data_dir):
    "The report's score rows of the answers, from a run folder as `l0kit eval` writes it."
    run = tmp / 'run'; run.mkdir()
    write_meta(run, new_run_meta(name, bench.settings(), vars(RunConfig()) | {'voters': 1}, 'sim', 'sim', {}, True, str(data_dir), SPLITS[name], len(items)))
    append_records(run, [Record(id=it['id'], voter=0, response=texts[it['id']], split=SPLITS[name], prompt_hash=prompt_hash(bench.build_prompt(it, 0, 0)),
                                item_hash=bench.item_hash(it)) for it in items])
    return {r['id']: r for r in report([run])[0].scores.to_dict('records')}

def partial_by_hand(name, item, row, text) -> float:
    "Steps before the first error over the steps, from the report's columns (SX: the first test whose line differs)."
    if name == 'l0': return row['steps_to_error'] / row['target_steps']
    if name == 'procbench': return row['pml'] / (len(item['label']['intermediate']) + 1)
    if name == 'core': return float(row['correct'])
    ref = reference_answer(get_benchmark('sx'), item).splitlines()
    k = next((i for i, (a, b) in enumerate(zip(text.splitlines(), ref)) if a != b), len(ref))
    return k / len(item['tests'])

@pytest.mark.parametrize('name', list(SPLITS))
def test_rollouts_through_a_local_server_score_as_the_report(tmp_path, data, name, monkeypatch):
    from verifiers.types import ClientConfig
    from l0kit.bridges.verifiers import load_environment
    bench, split = get_benchmark(name), SPLITS[name]
    items = bench.load(data / name, split, 6)
    bench.prepare(items)
    texts = answers(name, bench, items)
    by_prompt = {bench.build_prompt(it, 0, 0).messages[-1]['content']: texts[it['id']] for it in items}
    rows = report_scores(tmp_path, name, bench, items, texts, data / name)
    env = load_environment(name, data=str(data / name), split=split, limit=6)
    ds = env.get_dataset()
    assert [r['info']['id'] for r in ds] == [it['id'] for it in items]
    assert [r['prompt'] for r in ds] == [bench.build_prompt(it, 0, 0).messages for it in items]
    assert [r['answer'] for r in ds] == [reference_answer(bench, it) for it in items]
    with SimServer(lambda messages: by_prompt[text_of(messages[-1]['content'])]) as url:
        monkeypatch.setenv('LOCAL_API_KEY', 'none')
        client = ClientConfig(api_base_url=url, api_key_var='LOCAL_API_KEY', max_retries=0)
        out = env.evaluate_sync(client, 'sim', num_examples=-1, rollouts_per_example=1)['outputs']
    assert len(out) == len(items)
    got = {o['info']['id']: o for o in out}
    exact_seen = set()
    for it in items:
        o, row = got[it['id']], rows[it['id']]
        assert o['completion'][-1]['content'] == texts[it['id']]
        assert o['metrics']['l0kit_exact'] == float(row["correct"]) == o['reward']  # reward='exact' carries the weight
        assert o['metrics']['l0kit_partial'] == pytest.approx(partial_by_hand(name, it, row, texts[it['id']]))
        exact_seen.add(o['reward'])
    assert exact_seen == {0.0, 1.0}, 'the answers should include right and wrong ones'

def test_partial_reward_carries_the_weight(data):
    from l0kit.bridges.verifiers import load_environment
    env = load_environment('procbench', data=str(data / 'procbench'), split='short', limit=2, reward='partial')
    rubric = env.rubric.rubrics[0] if hasattr(env.rubric, 'rubrics') else env.rubric
    assert [(f.__name__, w) for f, w in zip(rubric.funcs, rubric.weights)] == [('l0kit_exact', 0.0), ('l0kit_partial', 1.0)]
