"""Run the L0-Bench authors' tracer and scorer (SimengSun/L0-reasoning-bench, unmodified) on the kit's cases.

From the release's checkout, with Python 3.12 (the release's docker image, nvcr.io/nvidia/pytorch:24.12-py3, has 3.12):
    python run_reference.py CASES.json OUT_DIR
CASES.json: [{id, split, program, input}] (programs the kit generated). Writes OUT_DIR/traces.jsonl.gz (the target trace
the release's generator + evaluator make of each case) and OUT_DIR/scores.jsonl.gz (responses scored by the release's
aggregator). The modules the two functions never use (model clients, tokenizers, progress bars) are stubbed at import.
"""
import copy, gzip, json, random, sys, types
from pathlib import Path

sys.path[:0] = ['src/generators', 'src']
for name, attrs in {'tiktoken': {}, 'jsonlines': {}, 'transformers': {'AutoTokenizer': None}, 'tqdm': {'tqdm': None},
                    'tqdm.contrib': {}, 'tqdm.contrib.concurrent': {'thread_map': None}, 'evaluators.client': {'Client': None},
                    'evaluators.launcher': {'load_yaml_config': None}, 'scipy': {}, 'scipy.stats': {'bootstrap': None}}.items():
    sys.modules[name] = types.SimpleNamespace(**attrs)
import ast
from tracer import generate_ast_function_trace            # src/generators/tracer.py
from evaluators.evaluator import Evaluator                # src/evaluators/evaluator.py: process_inputs_traces
from evaluators.aggregator import TraceAnalyzer           # src/evaluators/aggregator.py: analyze_trace

MAX_STEPS = 1000   # configs/example_eval_maxtrace1k.yaml


def release_target(program: str, inp: dict) -> list[str]:
    "The target lines the release builds: the generator's trace (split into lines, as data.jsonl stores it), formatted by the evaluator."
    _, traces = generate_ast_function_trace(ast.parse(program), [copy.deepcopy(inp)], max_steps=MAX_STEPS)  # it runs in place
    _, formatted = Evaluator.process_inputs_traces(None, [inp], [t.split('\n') for t in traces], program)
    return formatted[0].splitlines()


def responses(target: list[str], rng: random.Random) -> dict:
    "Responses a model could write to `target`, by kind."
    t = '\n'.join(target)
    k = rng.randrange(len(target))
    bad = list(target); bad[k] = bad[k][:-1] + ('0' if not bad[k].endswith('0') else '1') if not bad[k].endswith(',') else bad[k].replace('L', 'L9', 1)
    return {'exact': t, 'spaced': '\n'.join(' '.join(x) for x in target), 'fenced after prose': 'Here it is.\n```\n' + t + '\n```',
            'thinking first': '<think>L2,x:5 maybe</think>' + t, 'one line wrong': '\n'.join(bad),
            'stops early': '\n'.join(target[:k]), 'extra lines': t + '\nL2,\nL3,', 'no trace': 'I cannot trace this program.',
            'condition with a value': '\n'.join(x + 'True' if x.endswith(',') else x for x in target),
            'blank lines': '\n\n'.join(target), 'one line skipped': '\n'.join(target[:k] + target[k + 1:])}


def main(cases_path, out):
    out = Path(out); out.mkdir(parents=True, exist_ok=True)
    cases = json.loads(Path(cases_path).read_text())
    rng, traces, scores = random.Random(0), [], []
    for c in cases:
        target = release_target(c['program'], c['input'])
        traces.append(dict(id=c['id'], split=c['split'], program=c['program'], input=c['input'], target=target))
        if not c['id'].endswith('/0'): continue   # responses to each program's test input only (the file stays small)
        for kind, r in responses(target, rng).items():
            res = TraceAnalyzer.analyze_trace({'id': c['id'], 'targets': ['\n'.join(target)], 'responses': [r]})
            scores.append(dict(id=c['id'], kind=kind, response=r, target=target, is_failed=res.is_failed,
                               correct_traces=res.correct_traces, total_traces=res.total_traces))
    for fname, rows in (('traces.jsonl.gz', traces), ('scores.jsonl.gz', scores)):
        with gzip.GzipFile(out / fname, 'wb', mtime=0) as f: f.write(''.join(json.dumps(r, sort_keys=True) + '\n' for r in rows).encode())
    print(f"{len(traces)} traces, {len(scores)} scored responses -> {out}")


if __name__ == '__main__':
    main(*sys.argv[1:])
