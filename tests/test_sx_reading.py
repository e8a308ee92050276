"""SX's reading of one response, field by field, against values worked out by hand (issue 34: mutmut left 92 one-line
changes of `SXBenchmark.read` alive, since no test read a wrong answer field by field)."""
import json
from l0kit.protocol.benchmark import FirstError
from l0kit.sx.benchmark import SXBenchmark, parse_judgements, parse_step_answers, score_response

def item(task, tests, split='hard'):
    return {'task': task, 'split': split, 'composition': 'sequential', 'mean_steps': 12.5, 'program': 'def main(x):\n    return x\n',
            'program_visible': 'def main(x):\n    run_steps += 1\n    return x\n', 'tests': tests}

PREDICT = item('predict', [{'input': '1', 'shown_output': '2', 'matches': True}, {'input': '3', 'shown_output': '4', 'matches': False},
                           {'input': '5', 'shown_output': '6', 'matches': True}], split='predict')
STEPS = item('reasoning', [{'input': '1', 'steps': 7}, {'input': '2', 'steps': 9}, {'input': '3', 'steps': 11}, {'input': '4', 'steps': 13}])

def test_predict_reading_with_a_wrong_second_judgement():
    r = SXBenchmark().read(PREDICT, "Thinking...\nPair 1: Yes\nPair 2: Yes\nPair 3: Yes")
    assert (r.answer, r.key, r.correct) == ([True, True, True], '[true, true, true]', False)
    assert r.error == FirstError(2, 'wrong judgement', 'pair 2: said Yes')
    assert (r.partial, r.steps, r.note) == (1 / 3, ['Yes', 'Yes', 'Yes'], '2 of 3 right')
    assert r.reference == 'Pair 1: Yes\nPair 2: No\nPair 3: Yes'
    assert r.scores == {'subset': 'predict', 'task': 'predict', 'composition': 'sequential', 'judgements': 3, 'parsed': 3,
                        'judgements_correct': 2, 'correct': False, 'mean_steps': 12.5, 'semantics': 'sx-py-v1', 'presentation': 'visible'}

def test_predict_reading_with_a_missing_pair_and_a_right_one():
    r = SXBenchmark().read(PREDICT, "Pair 1: Yes\nPair 3: No")
    assert (r.answer, r.key, r.correct) == ([True, None, False], '[true, null, false]', False)
    assert r.error == FirstError(2, 'no answer', 'pair 2')
    assert (r.partial, r.steps, r.note) == (1 / 3, ['Yes', '', 'No'], '1 of 3 right')

def test_predict_reading_that_says_no_to_a_true_pair():
    r = SXBenchmark().read(PREDICT, "Pair 1: No\nPair 2: No\nPair 3: Yes")
    assert (r.error, r.partial, r.steps) == (FirstError(1, 'wrong judgement', 'pair 1: said No'), 0.0, ['No', 'No', 'Yes'])

def test_predict_reading_all_right_and_nothing_read():
    right = SXBenchmark().read(PREDICT, "Pair 1: Yes\nPair 2: No\nPair 3: Yes")
    assert (right.correct, right.error, right.partial, right.steps, right.note) == (True, None, 1.0, ['Yes', 'No', 'Yes'], '3 of 3 right')
    none = SXBenchmark().read(PREDICT, None)  # a failed request: no text
    assert (none.answer, none.key, none.correct, none.partial) == (None, '[null, null, null]', False, 0.0)
    assert none.error == FirstError(1, 'no answer', 'pair 1') and none.steps == ['', '', ''] and none.scores['parsed'] == 0
    chat = SXBenchmark().read(PREDICT, [{'role': 'assistant', 'content': 'Pair 1: Yes'}])  # not text: read as nothing
    assert (chat.answer, chat.error, chat.scores['parsed']) == (None, FirstError(1, 'no answer', 'pair 1'), 0)

def test_step_reading_over_and_under_counts():
    b = SXBenchmark()
    over = b.read(STEPS, "Call 1: 7\nCall 2: 9\nCall 3: 14\nCall 4: 13")
    assert (over.answer, over.key, over.correct) == ([7, 9, 14, 13], '[7, 9, 14, 13]', False)
    assert over.error == FirstError(3, 'overcount', 'call 3: off by +3')
    assert (over.partial, over.steps, over.note) == (2 / 4, ['7', '9', '14', '13'], '3 of 4 right')
    assert over.reference == 'Call 1: 7\nCall 2: 9\nCall 3: 11\nCall 4: 13'
    under = b.read(STEPS, "Call 1: 5\nCall 2: 9")
    assert under.error == FirstError(1, 'undercount', 'call 1: off by -2')
    assert (under.answer, under.partial, under.steps, under.scores['parsed'], under.scores['judgements_correct']) == (
        [5, 9, None, None], 0.0, ['5', '9', '', ''], 2, 1)
    missing = b.read(STEPS, "Call 1: 7\nCall 2: 9\nCall 3: 11")
    assert (missing.error, missing.partial) == (FirstError(4, 'no answer', 'call 4'), 3 / 4)

def test_hidden_presentation_is_in_the_scores():
    b = SXBenchmark(presentation='hidden')
    r = b.read(STEPS, "Call 1: 7\nCall 2: 9\nCall 3: 11\nCall 4: 13")
    assert (r.correct, r.error, r.partial, r.scores['presentation'], r.scores['subset']) == (True, None, 1.0, 'hidden', 'hard')

def test_the_parsers_by_hand():
    assert parse_judgements("Answers: yes, no, YES", 3) == [True, False, True]  # no `Pair k:`: exactly n bare words
    assert parse_judgements("Well, no. Answers: yes, no, YES", 3) == [True, False, True]  # or more: the last n
    assert parse_judgements("yes no", 3) == [None, None, None]  # fewer words than pairs: nothing read
    assert parse_judgements("Pair 2: no\nPair 1: yes", 2) == [True, False]  # by number, not by order
    assert parse_step_answers("the answer is \\boxed{1,024} steps", 1) == [1024]
    assert parse_step_answers("first 12, then 40", 1) == [40]  # one call: the last integer
    assert parse_step_answers("first 12, then 40", 2) == [None, None]  # several calls: only `Call k:` lines
    assert parse_step_answers("<think>Call 1: 5</think>Call 1: 8", 1) == [8]  # after the first </think>
    assert score_response(STEPS, "Call 1: 7")['parsed'] == 1
    assert score_response({**STEPS, 'semantics': 'sx-py-v0'}, "Call 1: 7")['semantics'] == 'sx-py-v0'  # an older set's rules, kept
