"""CoRE pipeline: the general tracer against independent checks, the built set's invariants, and the benchmark's
scoring path on responses written as a model would write them."""
import json, os, subprocess, sys
import pandas as pd
import pytest
from l0kit.corebench.dataset import (CoreDataConfig, build_core_set, load_problem_set, load_core_io, load_core_qa, write_core_set)
from l0kit.corebench.benchmark import CoreBenchmark, items_from_published, summarize, dimension_table, family_table
from l0kit.corebench.pytrace import trace_in_process, trace_call, render_trace, Trace
from l0kit.corebench.probes import DIMENSIONS

@pytest.fixture(scope='module')
def build(): return build_core_set()

def test_trace_matches_plain_execution():
    "The tracer's output equals what the function returns when simply called."
    for p in load_problem_set():
        for impl in p['implementations']:
            ns = {}
            exec(impl['code'], ns)
            name = impl['func_name']
            fn = eval(name, ns) if '(' in name else ns[name]
            for t in p['tests']:
                want = fn(*eval(f"({t},)" if t else "()"))
                tr = trace_in_process(impl['code'], name, t)
                assert tr.status == 'ok' and tr.output_value == want, (p['id'], name, t)

def test_line_steps_agree_with_settrace_count():
    "Every step is one executed statement: steps per line equal the line events sys.settrace sees (one-line bodies aside)."
    src = "def f(xs):\n    t = 0\n    for x in xs:\n        if x % 2:\n            t += x\n        else:\n            t -= 1\n    return t\n"
    tr = trace_in_process(src, 'f', '[1, 2, 3, 4]')
    counts = {}
    for s in tr.steps: counts[s.line] = counts.get(s.line, 0) + 1
    assert counts == {2: 1, 3: 5, 4: 4, 5: 2, 7: 2, 8: 1}
    assert [s.branch for s in tr.steps if s.kind == 'if'] == [True, False, True, False]
    assert tr.steps[-1].returned == '2'

def test_trace_independent_of_hash_seed(tmp_path):
    "Reprs of sets are the same under two hash seeds."
    code = ("from l0kit.corebench.pytrace import trace_in_process, render_trace\n"
            "print(render_trace(trace_in_process('def f(s):\\n    w = set(s)\\n    return sorted(w)\\n', 'f', '\"hello world\"')))")
    env = {**os.environ, 'PYTHONPATH': os.getcwd()}
    outs = [subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, env={**env, 'PYTHONHASHSEED': s}).stdout
            for s in ('1', '2')]
    assert outs[0] == outs[1] and "{' ', 'd', 'e', 'h', 'l', 'o', 'r', 'w'}" in outs[0]

def test_build_invariants(build):
    s = build.stats
    assert s['problems'] >= 10 and s['implementations'] >= 40
    assert all(r['kept'] >= 4 for r in s['per_problem'])
    assert s['mean_jaccard'] <= 0.7 and s['mean_cc'] >= 3.0
    assert all(s['probes_per_dimension'][d] > 0 for d in DIMENSIONS)
    ids = [i['id'] for i in build.items]
    assert len(ids) == len(set(ids))
    json.dumps(build.items)   # JSON-able

def test_probe_ground_truths_from_sandboxed_traces(build):
    for it in (i for i in build.items if i['kind'] == 'probe'):
        tr = trace_call(it['source_code'], it['func_name'], it['input'])
        st = tr.steps[it['target_step_index'] - 1]
        assert st.line == it['target_line_number']
        assert it['ground_truth'] == (st.locals[it['variable']] if it['variable'] else repr(st.branch)), it['id']

def test_published_roundtrip(build, tmp_path):
    "The kit's items written in the published file format load back and score identically."
    io = [dict(id=f"{i['problem_id']}_{n}", input=i['input'], output=i['output'], code=i['source_code'], model_used='o1')
          for n, i in enumerate(x for x in build.items if x['kind'] == 'io')]
    qa = [dict(id=f"Fine/{i['id']}", question=i['question'], ground_truth=i['ground_truth'], answer_type=i['answer_type'],
               complexity_type=i['complexity_type'], target_step_index=i['target_step_index'],
               target_line_number=i['target_line_number'], source_code=i['source_code'], input=i['input'], output=i['output'],
               meta_data={'func_name': i['func_name']}, model_used='gpt-5')
          for i in build.items if i['kind'] == 'probe']
    (tmp_path / 'core_io.json').write_text(json.dumps(io)); (tmp_path / 'core_qa.json').write_text(json.dumps(qa))
    items = CoreBenchmark().load(tmp_path)
    assert len(items) == len(build.items)
    for it in items:   # the inferred entry point runs the published code
        if it['kind'] == 'io':
            assert trace_in_process(it['source_code'], it['func_name'], it['input']).output == it['output']
    # scored identically: the same answers (right, and wrong) get the same verdicts on the loaded items as on the built ones
    bench = CoreBenchmark(method='io')
    def answers(it):
        if it['kind'] == 'io': return [f"assert {it['func_name']}({it['input']}) == {v}" for v in (it['output'], 'None')]
        return [f"Answer: {v}" for v in (it['ground_truth'], 'unknown')]
    built = sorted((it['kind'], it['source_code'], it['input'], r, bench.score(it, r)['correct']) for it in build.items for r in answers(it))
    loaded = sorted((it['kind'], it['source_code'], it['input'], r, bench.score(it, r)['correct']) for it in items for r in answers(it))
    assert built == loaded
    assert [v for *_, v in built].count(True) == len(build.items) - sum(it['output'] == 'None' for it in build.items if it['kind'] == 'io')

def test_scoring_realistic_responses(build):
    bench = CoreBenchmark(method='coc')
    rows = []
    for it in build.items:
        if it['kind'] == 'io':
            # right on loop-style implementations, wrong on the others: I = 0, I_s = share of loop implementations
            val = it['output'] if it['family'] == 'loop' else 'None'
            resp = f"[TRACE]\nline: ...\n[/TRACE]\n# Answer:\n```python\nassert {it['func_name']}({it['input']}) == {val}\n```"
        else:
            resp = f"Following the loop ...\nAnswer: {it['ground_truth'] if 'Logic' in it['dimensions'] else 'unknown'}"
        rows.append({'id': it['id'], 'voter': 0, **bench.score(it, resp)})
    df = pd.DataFrame(rows)
    t1 = summarize(df).iloc[0]
    # the expected table, from the items alone and the paper's definitions (section 4), in plain Python:
    # I_s = share of a problem's implementations whose outputs are all right (here: its loop-style ones);
    # W_s = share of its probes answered right (here: the Logic ones); W = 1 iff all are; Cons. = 1 - mean (I - W_s)^2
    impls, probes = {}, {}
    for it in build.items:
        if it['kind'] == 'io': impls.setdefault(it['problem_id'], {})[it['impl_id']] = it['family'] == 'loop'
        else: probes.setdefault(it['problem_id'], []).append('Logic' in it['dimensions'])
    I = {p: float(all(v.values())) for p, v in impls.items()}
    I_s = [sum(v.values()) / len(v) for v in impls.values()]
    W_s = {p: sum(v) / len(v) for p, v in probes.items()}
    W = [float(all(v)) for v in probes.values()]
    both = [p for p in I if p in W_s]
    want = {'I': 100 * sum(I.values()) / len(I), 'I_s': 100 * sum(I_s) / len(I_s), 'W': 100 * sum(W) / len(W),
            'W_s': 100 * sum(W_s.values()) / len(W_s), 'RCS': 100 * sum(I[p] * W_s[p] for p in both) / len(both),
            'Cons.': 1 - sum((I[p] - W_s[p]) ** 2 for p in both) / len(both)}
    assert 0 < want['I_s'] < 100 and 0 < want['W_s'] < 100 and want['Cons.'] < 1   # the responses are neither all right nor all wrong
    assert {k: t1[k] for k in want} == pytest.approx(want)
    assert t1['I'] == 0.0 and t1['RCS'] == 0.0
    fam = family_table(df).iloc[0]
    assert fam['loop'] == 100.0 and fam['class'] == 0.0
    dims = dimension_table(df).iloc[0]
    assert dims['L'] == 100.0 and 0 <= dims['A'] < 100

def test_cli_build(tmp_path):
    r = subprocess.run([sys.executable, '-c', "import sys; from l0kit.cli.main import main; sys.exit(main())",
                        'generate', '--benchmark', 'core', '--out', str(tmp_path)],
                       capture_output=True, text=True, env={**os.environ, 'PYTHONPATH': os.getcwd()})
    assert r.returncode == 0, r.stderr
    assert 'wrote' in r.stdout and (tmp_path / 'test.jsonl').exists() and (tmp_path / 'card.json').exists()

def test_sandbox_limits_on_hostile_code():
    "The tracer's sandbox stops a shell call, an endless loop and a 10 GB allocation (in the default test run: about 2 s)."
    for src, status in [("def f():\n    import os\n    os.system('true')\n", 'error'),
                        ("def f():\n    while True:\n        pass\n", 'timeout'),
                        ("def f():\n    return bytearray(10**10)\n", 'memory')]:
        tr = trace_call(src, 'f', '', max_steps=10**9, timeout_s=1.0)
        assert tr.status == status, (src, tr.status, tr.error)


def test_simulated_rhda_probe_verdict_reads_its_predicted_output(tmp_path):
    """CoRE's simulated model under RHDA-1: outputs always right, probe answers always wrong (probabilities 1 and 0, so
    no draw decides). Under output feedback no probe is amended (its predicted output is right): one turn each, every
    probe wrong; under the oracle every probe is amended (2 turns) and, amendments right with probability 1, right."""
    from l0kit.runs.runner import run_eval, RunConfig
    from l0kit.runs.format import read_records
    b0 = CoreBenchmark()
    items = [i for i in b0.load() if i['kind'] == 'probe'][:6]
    for fb, turns, right in (('outputs', 1, 0), ('oracle', 2, 1)):
        b = CoreBenchmark(method='rhda1', feedback=fb)
        run_eval(b, b.simulated_model('output_accuracy=1,probe_accuracy=0,amend_accuracy=1,seed=3'), items, tmp_path / fb,
                 RunConfig(voters=1), data='(in memory)', split='test', progress=False)
        recs = {r.id: r for r in read_records(tmp_path / fb).records}
        assert {r.meta['turns'] for r in recs.values()} == {turns}
        assert [b.read(i, recs[i['id']].response).correct for i in items] == [bool(right)] * len(items)
        if fb == 'outputs':   # the reply names the executed output (from the item, not from the kit's reading) before the answer
            assert all(f"== {i['output']}" in recs[i['id']].response.replace('"', "'") or f"== {eval(i['output'])!r}" in recs[i['id']].response for i in items)
