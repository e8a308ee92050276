"""CoRE's reading and score row of one response, field by field, against values worked out by hand (issue 34: the
CoRE group's `read` and `score_response` were left with survivors by mutmut)."""
import pytest
from l0kit.corebench.benchmark import CoreBenchmark, CoreDataError, score_response
from l0kit.protocol.benchmark import FirstError

IO = {'id': 'p1-i2-io', 'kind': 'io', 'problem_id': 'p1', 'impl_id': 'i2', 'family': 'loop', 'func_name': 'f', 'input': '3',
      'output': '[1, 2, 3]', 'source_code': 'def f(n):\n    return list(range(1, n + 1))\n'}
PROBE = {'id': 'p1-i2-probe0', 'kind': 'probe', 'problem_id': 'p1', 'impl_id': 'i2', 'family': 'loop', 'func_name': 'f', 'input': '3',
         'source_code': IO['source_code'], 'question': 'How many times does the loop run?', 'ground_truth': '3',
         'answer_type': 'int', 'dimensions': ['loop', 'count']}

def test_io_reading_right_wrong_and_without_an_assertion():
    b = CoreBenchmark()
    right = b.read(IO, "It builds the list.\n```python\nassert f(3) == [1, 2, 3]\n```")
    assert (right.answer, right.key, right.correct, right.error, right.partial, right.steps) == ('[1, 2, 3]', '[1, 2, 3]', True, None, 1.0, ['[1, 2, 3]'])
    assert right.scores == {'kind': 'io', 'problem_id': 'p1', 'impl_id': 'i2', 'family': 'loop', 'correct': 1, 'parsed': 1, 'dimensions': ''}
    assert right.reference == "# Answer:\n```python\nassert f(3) == [1, 2, 3]\n```"
    wrong = b.read(IO, "assert f(3) == [0, 1, 2]")
    assert (wrong.answer, wrong.key, wrong.correct, wrong.partial, wrong.steps) == ('[0, 1, 2]', '[0, 1, 2]', False, 0.0, ['[0, 1, 2]'])
    assert wrong.error == FirstError(1, 'wrong output', None) and (wrong.scores['correct'], wrong.scores['parsed']) == (0, 1)
    none = b.read(IO, "The answer is a list of three numbers.")
    assert (none.answer, none.key, none.correct, none.steps, none.error) == (None, '', False, [], FirstError(1, 'no completed assertion', None))
    assert (none.scores['correct'], none.scores['parsed']) == (0, 0)
    assert b.read(IO, None).error == FirstError(1, 'no completed assertion', None)  # no text at all
    assert b.read(IO, ['assert f(3) == [1, 2, 3]']).answer is None  # not text: read as nothing

def test_io_true_is_not_one():
    item = {**IO, 'output': '1'}
    assert score_response(item, "assert f(3) == True")['correct'] == 0 and score_response(item, "assert f(3) == 1")['correct'] == 1

def test_probe_reading_right_wrong_and_missing():
    b = CoreBenchmark()
    right = b.read(PROBE, "The loop body runs once per number.\nAnswer: 3")
    assert (right.answer, right.key, right.correct, right.error, right.partial, right.steps) == ('3', '3', True, None, 1.0, ['3'])
    assert right.scores == {'kind': 'probe', 'problem_id': 'p1', 'impl_id': 'i2', 'family': 'loop', 'correct': 1, 'parsed': 1,
                            'dimensions': 'loop+count'}
    assert right.reference == 'Answer: 3'
    wrong = b.read(PROBE, "Answer: 4")
    assert (wrong.answer, wrong.correct, wrong.error) == ('4', False, FirstError(1, 'wrong answer', 'loop+count'))
    none = b.read(PROBE, "It runs a few times.")
    assert (none.answer, none.key, none.error, none.scores['parsed']) == (None, '', FirstError(1, 'no answer', 'loop+count'), 0)
    no_dims = b.read({**PROBE, 'dimensions': []}, "Answer: 4")
    assert no_dims.error == FirstError(1, 'wrong answer', '') and no_dims.scores['dimensions'] == ''

def test_score_row_defaults_and_a_bad_kind():
    item = {k: v for k, v in IO.items() if k != 'family'}
    assert score_response(item, "assert f(3) == [1, 2, 3]")['family'] == 'unknown'
    assert score_response(PROBE, "answer = 3")['correct'] == 1  # `answer =` is an Answer line too
    # the probe's answer type, not the type its ground truth reads as: 3.0000001 is 3 as a float, not as an int
    assert score_response({**PROBE, 'answer_type': 'float'}, "Answer: 3.0000001")['correct'] == 1
    assert score_response(PROBE, "Answer: 3.0000001")['correct'] == 0
    bare = {k: v for k, v in PROBE.items() if k != 'dimensions'}  # a probe that names no dimension
    assert score_response(bare, "Answer: 4")['dimensions'] == '' and CoreBenchmark().read(bare, "Answer: 4").error == FirstError(1, 'wrong answer', '')
    with pytest.raises(CoreDataError, match="item 'p1-i2-io': kind must be 'io' or 'probe', got 'trace'"):
        score_response({**IO, 'kind': 'trace'}, "assert f(3) == 1")
