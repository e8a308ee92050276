"""Every answer parser and scorer of the kit reads 1 MB of degenerate model output in well under a second (issue 16, item 3).

Degenerate output looks exactly like this: a model stuck repeating a line, a run of newlines, a number that never ends.
Each parser gets every shape below (a grid) and, in a property test, shapes that hypothesis builds from the same
pieces. A parser passes when it returns (or raises only its documented parse error) within `LIMIT_S` of CPU time.
"""
import gc, signal, time
from contextlib import contextmanager

import pytest
from hypothesis import given, settings, strategies as st, HealthCheck, Phase

SIZE = 1_000_000   # characters of degenerate text
LIMIT_S = 0.5      # CPU seconds one call may take ("well under a second")
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
    from l0kit.core.benchmark import score_response
    from l0kit.core.prompts import parse_assertion, parse_probe_answer, output_correct, probe_correct, ResponseParseError
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


PARSERS = {**_l0(), **_procbench(), **_sx(), **_core()}


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


def cpu_seconds(parse, text: str) -> float:
    "CPU time of one call (fails the test if the call raises or runs past STOP_S)."
    gc.disable()  # the parser's own work, not a collection of the whole test session's heap
    t = time.process_time()
    try:
        with stop_after(STOP_S): parse(text)
    except Stopped: pytest.fail(f"still running after {STOP_S} s on {len(text):,} characters (quadratic or worse)")
    finally: gc.enable()
    return time.process_time() - t


# --- the grid -----------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('shape', list(SHAPES))
@pytest.mark.parametrize('parser', list(PARSERS))
def test_a_megabyte_of_degenerate_text_is_read_in_well_under_a_second(parser, shape):
    took = cpu_seconds(PARSERS[parser], SHAPES[shape])
    assert took < LIMIT_S, f"{parser} took {took:.2f} s of CPU on 1 MB of {shape!r}"


# --- property test: shapes built from the degenerate pieces ------------------------------------------------------------------

PIECES = ['\n', ' ', '\t', '7', '1,', ',', '[', ']', '{', '}', '(', ')', '"', "'", '`', '```', '\\', '*', '-', '#', ':', '=', '->',
          'Step 1:', '1.', '- ', 'final answer:', 'Final state:', 'Sum:', 'intermediate', 'intermediate states (', '</think>',
          'L2,', 'L3,x:1', 'pair 1', 'call 1', 'yes', 'assert f(1) == ', 'Answer:', '\\boxed{', 'x', 'abc', '(a)']
unit = st.lists(st.sampled_from(PIECES), min_size=1, max_size=4).map(''.join)


@pytest.mark.parametrize('parser', list(PARSERS))
@settings(max_examples=12, deadline=None, phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
@given(head=st.sampled_from(['', 'Step 1: ', 'L2,', 'final answer: ', 'pair 1', 'call 1', 'assert f(1) == ', 'Answer: ', 'intermediate (']),
       body=unit, tail=st.sampled_from(['', 'x', '1x', ')', ']', '"', '\n```']))
def test_any_repeated_piece_of_degenerate_text_is_read_in_well_under_a_second(parser, head, body, tail):
    text = head + rep(body, SIZE - len(head) - len(tail)) + tail
    took = cpu_seconds(PARSERS[parser], text)
    assert took < LIMIT_S, f"{parser} took {took:.2f} s of CPU on 1 MB of {head!r} + {body!r}... + {tail!r}"


# --- what the fixes must keep ----------------------------------------------------------------------------------------------

def test_procbench_reads_what_it_read_before():
    "The linear parser gives the answers the quadratic one gave (the notebook's examples, and the int limit)."
    from l0kit.procbench.parser import parse_answer, read_state, empty_prediction
    assert parse_answer("Count", "- [ihi6ms5r9, 6, 659, 3954]\n- [abkuwk, 6, 0, 0]\n\nSum of all N3 values: 3954") == \
        {"intermediate": [["ihi6ms5r9", "6", "659", "3954"], ["abkuwk", "6", "0", "0"]], "final": 3954}
    assert parse_answer("Compare", "Step 1: mtlg -> common prefix 'm'\nStep 2: mafu -> 'ma'\nStep 3: maay matches exactly!\n"
                        "Final state: ['m', 'ma', 'maay']") == {"intermediate": ["m", "ma"], "final": ["m", "ma", "maay"]}
    assert parse_answer("Sort", "Intermediate states (in order):\n[\"btsti\"]\nFinal state: bistt") == {"intermediate": ["btsti"], "final": "bistt"}
    assert read_state("hhouumkd (removed c)", "str") == "hhouumkd"
    assert read_state("the count is " + "7" * 4301, "int") is None          # past Python's int limit: no state, no ValueError
    assert read_state("the count is " + "7" * 4300, "int") == int("7" * 4300)
    assert parse_answer("Cumulate", "Step 1: 5\nfinal answer: " + "9" * 5000) == {"intermediate": [5], "final": None}
    assert parse_answer("Sort", "Step 1:\n" * 3) == {"intermediate": ["Step 1:", "Step 1:"], "final": None}
    assert parse_answer("Sort", '"' * 10) == empty_prediction()


def test_repeated_states_are_separate_lists():
    "Each distinct line is read once, but every state in the prediction is its own object."
    from l0kit.procbench.parser import parse_answer
    p = parse_answer("Search", "Step 1: [1, 2]\nStep 2: [1, 2]\nStep 3: [1, 2]\nFinal state: [3]")
    assert p == {"intermediate": [[1, 2]] * 3, "final": [3]}
    p["intermediate"][0].append(9)
    assert p["intermediate"][1] == [1, 2]
