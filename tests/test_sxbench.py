"SX-style data: reproducibility across worker counts, subset statistics, corruptions, scoring round trip."
import ast, json, random
from dataclasses import asdict
import pytest
from l0kit.sx.dataset import SXDataConfig, SubsetConfig, generate_subset, table2, corrupt, composition_plan, write_dataset
from l0kit.sx.benchmark import SXBenchmark, parse_judgements

def small(n):
    return SXDataConfig(subsets=[SubsetConfig(**{**asdict(s), 'count': n}) for s in SXDataConfig().subsets])

def test_worker_count_does_not_change_the_data():
    cfg = small(6)
    assert generate_subset(cfg, 'easy', workers=1) == generate_subset(cfg, 'easy', workers=2)

def test_seed_changes_the_data():
    a, b = small(3), small(3)
    b.seed = 1
    assert generate_subset(a, 'predict') != generate_subset(b, 'predict')

def test_composition_plan_follows_the_mix():
    cfg = SXDataConfig()
    for s in cfg.subsets:
        plan = composition_plan(cfg, s)
        assert len(plan) == s.count
        assert {k: plan.count(k) for k in s.composition_mix} == s.composition_mix

def test_samples_are_counted_consistently_and_meet_the_bands():
    cfg = small(5)
    items = [it for s in cfg.subsets for it in generate_subset(cfg, s.name)]
    for it in items:
        assert it['num_functions'] >= 3 and len(it['tests']) >= 3
        sub = cfg.subset(it['split'])
        if sub.step_range: assert sub.step_range[0] <= it['mean_steps'] <= sub.step_range[1]
        for c in it['tests']:
            # an independent recount: the program the model is shown, run by plain Python (no kit code), and its
            # `run_steps` when main returns; that value is, by the benchmark's definition, the answer
            ns = {}
            exec(compile(it['program_visible'], '<shown program>', 'exec'), ns)
            out = ns['main'](ast.literal_eval(c['input']))
            assert (repr(out), ns['run_steps']) == (c['output'], c['steps']), (it['id'], c)
    t = table2(items)
    assert t['Total Samples'].tolist() == [5, 5, 5]

def test_corruptions_differ_and_keep_type():
    rng = random.Random(7)
    for v in [0, -1, 2**62, True, '', 'x', 'abc', [], [0], [1, 1, 1]]:
        for _ in range(50):
            c = corrupt(v, rng)
            assert c != v and type(c) is type(v)

def test_predict_is_about_balanced():
    items = generate_subset(small(40), 'predict')
    pairs = [c['matches'] for it in items for c in it['tests']]
    assert 0.4 < sum(pairs) / len(pairs) < 0.6

def test_load_score_round_trip(tmp_path):
    write_dataset(tmp_path, small(2))
    b = SXBenchmark()
    for split in ('predict', 'easy', 'hard'):
        for it in b.load(tmp_path, split):
            if it['task'] == 'predict': resp = "\n".join(f"Pair {k}: {'Yes' if c['matches'] else 'No'}" for k, c in enumerate(it['tests'], 1))
            else: resp = "\n".join(f"Call {k}: {c['steps']}" for k, c in enumerate(it['tests'], 1))
            s = b.score(it, resp)
            assert s['correct'] and json.dumps(s)
            assert not b.score(it, "I am not sure.")['correct']

def test_runs_through_the_shared_runner(tmp_path):
    "End to end with the kit's runner: an oracle's answers score 100 on every column."
    from l0kit.runs import runner   # part of the kit: failing to import it is a failure, not a skip
    from l0kit.protocol.models import Model, Completion
    import pandas as pd
    write_dataset(tmp_path / 'data', small(2))
    b = SXBenchmark()
    items = [it for s in ('predict', 'easy', 'hard') for it in b.load(tmp_path / 'data', s)]
    by_id = {it['id']: it for it in items}

    class Oracle(Model):
        spec = name = 'oracle'
        simulated = True
        def generate(self, prompts, params=None, seeds=None):
            out = []
            for p in prompts:
                it = by_id[p.pair['id']]
                if it['task'] == 'predict': t = "\n".join(f"Pair {k}: {'Yes' if c['matches'] else 'No'}" for k, c in enumerate(it['tests'], 1))
                else: t = "\n".join(f"Call {k}: {c['steps']}" for k, c in enumerate(it['tests'], 1))
                out.append([Completion(t, prompt_tokens=1, completion_tokens=1, latency_s=0.0, finish_reason='stop')])
            return out

    summary = runner.run_eval(b, Oracle(), items, tmp_path / 'run', runner.RunConfig(voters=1), data=str(tmp_path / 'data'), split='all', progress=False)
    assert summary['complete'] == len(items) and not summary['problems']
    from l0kit.runs.format import read_records
    scores = pd.DataFrame([b.score(by_id[r.id], r.response) for r in read_records(tmp_path / 'run').records])
    from l0kit.sx.benchmark import summarize_scores
    assert summarize_scores(scores).iloc[0].tolist() == [100.0] * 4

@pytest.mark.slow
def test_full_mix_is_the_same_with_one_and_two_workers():
    cfg = small(100)
    for s in ('predict', 'easy', 'hard'):
        assert generate_subset(cfg, s, workers=1) == generate_subset(cfg, s, workers=2)
