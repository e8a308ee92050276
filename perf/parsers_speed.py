"""Every answer parser and scorer of the kit on 1 MB of degenerate model output: CPU seconds per parser and shape.

Degenerate output looks exactly like this: a model stuck repeating a line, a run of newlines, a number that never ends.
Each parser gets every shape below (the grid: 27 parsers x 43 shapes), and the script prints the CPU time of each call,
the worst shape per parser, and the machine it ran on. A call is stopped after STOP_S wall seconds (a quadratic parser
would run for minutes). The tests (tests/test_parsers.py) time a handful of these calls and check the parsers' answers
on degenerate input by value; this script is the full measurement.

Usage: python perf/parsers_speed.py [--limit 1.0] [--only SUBSTRING]
Exits 1 when a call takes more than `--limit` CPU seconds or is stopped.
"""
import argparse, gc, os, platform, signal, sys, time
from contextlib import contextmanager

SIZE = 1_000_000   # characters of degenerate text
LIMIT_S = 1.0      # CPU seconds one call may take (the slowest took 0.26 s on an Intel Xeon, 0.52-0.59 s on an AMD EPYC, quiet)
STOP_S = 3         # wall seconds after which a call is stopped (a quadratic parser would run for minutes)


def rep(unit: str, size: int = SIZE) -> str:
    "`unit` repeated to `size` characters."
    return (unit * (size // len(unit) + 1))[:size]


SHAPES = {
    'newlines': '\n' * SIZE, 'newlines then x': '\n' * SIZE + 'x', 'x, newlines, x': 'x' + '\n' * SIZE + 'x',
    'spaces then x': ' ' * SIZE + 'x', 'blank mix then x': rep(' \n\t') + 'x', 'crlf then x': rep('\r\n') + 'x',
    'digits': '7' * SIZE, 'digits with commas then x': rep('1,') + '1x', 'Step 1: digits': 'Step 1: ' + '7' * SIZE,
    'final answer: digits': 'final answer: ' + '7' * SIZE, 'Sum = digits': 'Sum = ' + '7' * SIZE, 'Answer: digits': 'Answer: ' + '7' * SIZE,
    '[[[[': '[' * SIZE, ']]]]': ']' * SIZE, '[][]': rep('[]'), '{{{{': '{' * SIZE, '{}{}': rep('{}'), '()() then x': rep('()') + 'x',
    'double quotes': '"' * SIZE, 'single quotes': "'" * SIZE, 'escaped quotes': rep('\\"'), '"["[': rep('"['),
    'Step 1: repeated': rep('Step 1:\n'), '1. repeated': rep('1. \n'), '- repeated': rep('- \n'), 'Step 1: [1, 2] repeated': rep('Step 1: [1, 2] -> "a"\n'),
    'unclosed fences': rep('```\n'), 'unclosed fence then text': '```python\n' + 'x' * SIZE, '</think> repeated': rep('</think>'),
    '<think> never closed': '<think>' + rep('hmm '), 'L2, then newlines': 'L2,' + '\n' * SIZE + 'x', 'L2,x:1 repeated': rep('L2,x:1\n'),
    'final answer: repeated': rep('final answer:\n'), 'intermediate ( repeated': rep('intermediate ('), 'spaces then (a)x': ' ' * SIZE + '(a)x',
    'pair 1 then spaces': 'pair 1' + ' ' * SIZE + 'x', 'call 1 then spaces': 'call 1' + ' ' * SIZE + 'x', 'yes no repeated': rep('yes no '),
    'assert lines never completed': rep('assert f(1) == \n'), 'assert of a huge list': 'assert f(1) == [' + rep('1, ') + ']',
    'Answer: repeated': rep('Answer:\n'), 'Answer: a huge list': 'Answer: [' + rep('1, ') + ']', '\\boxed{ never closed': '\\boxed{' + ' ' * SIZE,
}


# --- the parsers -------------------------------------------------------------------------------------------------------

def _l0():
    from l0kit.l0.metrics import score_trace, clean_response, vote_key
    from l0kit.l0.taxonomy import classify_first_error
    target = ['L2,x:1', 'L3,', 'L4,lst_x:[1,2]'] * 30
    prog = "def function(x):\n    a = x + 1\n    return\n"
    return {'l0 score_trace': lambda s: score_trace(s, target), 'l0 score_trace strict': lambda s: score_trace(s, target, strict=True),
            'l0 clean_response': clean_response, 'l0 vote_key': vote_key,
            'l0 classify_first_error': lambda s: classify_first_error(s, target, prog)}


PROCBENCH_TASKS = ['Sort', 'FillWord', 'Count', 'Search', 'Encode', 'Compare', 'Cumulate', 'FindCyclic']   # every state-type pair


def _procbench():
    from l0kit.procbench.parser import parse_answer
    from l0kit.procbench.tasks import get_task
    from l0kit.procbench.benchmark import ProcBenchBenchmark
    bench = ProcBenchBenchmark()
    example = {'str': 'abc', 'int': 3, 'list[str]': ['a', 'b'], 'list[int]': [1, 2]}
    out = {}
    for name in PROCBENCH_TASKS:
        t = get_task(name)
        label = {'intermediate': [example[t.intermediate_type]] * 2, 'final': example[t.final_type]}
        item = {'task': name, 'task_name': name, 'n': 3, 'label': label}
        out[f"procbench parse_answer {name}"] = (lambda name: lambda s: parse_answer(name, s))(name)
        if name in ('Sort', 'Count', 'Search'):   # the scorer: the parser, then `l0kit.procbench.metrics.score` (typed and loose)
            out[f"procbench score {name}"] = (lambda item: lambda s: bench.score(item, s))(item)
    return out


def _sx():
    from l0kit.sx.benchmark import parse_judgements, parse_step_answers, score_response
    predict = {'tests': [{'matches': True}] * 3, 'task': 'predict', 'split': 'predict', 'composition': 'c', 'mean_steps': 1}
    reason = {'tests': [{'steps': 5}], 'task': 'reasoning', 'split': 'easy', 'composition': 'c', 'mean_steps': 1}
    return {'sx parse_judgements': lambda s: parse_judgements(s, 3), 'sx parse_step_answers n=1': lambda s: parse_step_answers(s, 1),
            'sx parse_step_answers n=3': lambda s: parse_step_answers(s, 3), 'sx score_response predict': lambda s: score_response(predict, s),
            'sx score_response reasoning': lambda s: score_response(reason, s)}


def _core():
    from l0kit.corebench.benchmark import score_response
    from l0kit.corebench.prompts import parse_assertion, parse_probe_answer, output_correct, probe_correct, ResponseParseError
    io = {'kind': 'io', 'problem_id': 'p', 'impl_id': 'i', 'output': '5'}
    probe = {'kind': 'probe', 'problem_id': 'p', 'impl_id': 'i', 'ground_truth': '[1, 2]', 'answer_type': 'list', 'dimensions': ['State']}
    def may_refuse(f):
        def call(s):
            try: return f(s)
            except ResponseParseError: return None   # the documented answer to a response without an answer
        return call
    return {'core score_response io': lambda s: score_response(io, s), 'core score_response probe': lambda s: score_response(probe, s),
            'core parse_assertion': may_refuse(parse_assertion), 'core parse_probe_answer': may_refuse(parse_probe_answer),
            'core output_correct': lambda s: output_correct(s, '5'), 'core probe_correct': lambda s: probe_correct(s, '[1, 2]', 'list')}


def load_parsers() -> dict:
    "Every parser and scorer, by name: one-argument functions of the response text."
    return {**_l0(), **_procbench(), **_sx(), **_core()}


class Stopped(Exception): "A call ran past STOP_S."


@contextmanager
def stop_after(seconds: float):
    "Raise `Stopped` in the calling (main) thread after `seconds` of wall time."
    def stop(*_): raise Stopped()
    old = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try: yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def measure(parse, text: str) -> float:
    "CPU seconds of one call; `inf` when it ran past STOP_S wall seconds."
    gc.disable()  # the parser's own work, not a collection of the whole heap
    t = time.process_time()
    try:
        with stop_after(STOP_S): parse(text)
    except Stopped: return float('inf')
    finally: gc.enable()
    return time.process_time() - t


def machine() -> str:
    "The machine the figures were measured on, and its load."
    load = ', '.join(f"{x:.2f}" for x in os.getloadavg())
    return (f"{platform.python_implementation()} {platform.python_version()} on {platform.machine()}, "
            f"{os.cpu_count()} CPUs, load average {load}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--limit', type=float, default=LIMIT_S, help='CPU seconds one call may take')
    ap.add_argument('--only', default='', help='only the parsers whose name contains this')
    a = ap.parse_args(argv)
    parsers = {k: v for k, v in load_parsers().items() if a.only in k}
    print(f"parsers on {SIZE:,} characters of degenerate text: {len(parsers)} parsers x {len(SHAPES)} shapes")
    print(f"before: {machine()}")
    worst, over, total = {}, [], 0.0
    for name, parse in parsers.items():
        times = {shape: measure(parse, text) for shape, text in SHAPES.items()}
        total += sum(t for t in times.values() if t != float('inf'))
        shape = max(times, key=times.get)
        worst[name] = (times[shape], shape)
        over += [(name, s, t) for s, t in times.items() if t > a.limit]
        print(f"  {name:38s} worst {times[shape]:6.3f} s  ({shape})  median {sorted(times.values())[len(times) // 2]:6.3f} s", flush=True)
    print(f"after: {machine()}")
    print(f"{len(parsers) * len(SHAPES)} calls, {total:.1f} CPU s in all; slowest: "
          + ', '.join(f"{n} {t:.3f} s" for n, (t, _) in sorted(worst.items(), key=lambda x: -x[1][0])[:3]))
    for name, shape, t in over: print(f"OVER {a.limit} s: {name} on {shape!r}: {t:.3f} s")
    return 1 if over else 0


if __name__ == '__main__':
    sys.exit(main())
