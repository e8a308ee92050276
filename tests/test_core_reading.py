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

# --- problem_metrics and summarize (table 1) on a score table worked out by hand -----------------------------------
# Two voters, three problems: A (implementations a1, a2, two tests each, three probes), B (one implementation, one test,
# no probe), C (probes only). Per the paper (section 4): an implementation is right when all its tests are; I = 1 iff
# every implementation is right, I_s = the share that are; W_s = the share of probes answered right, W = 1 iff all are;
# RCS = I * W_s; Cons. = 1 - mean over problems with both of (I - W_s)^2. Table 1 averages over problems, then voters.
def _rows(voter, io, probes, **extra):
    out = [dict(kind='io', problem_id=p, impl_id=i, correct=c, voter=voter, **extra) for p, i, cs in io for c in cs]
    return out + [dict(kind='probe', problem_id=p, impl_id='', correct=c, voter=voter, **extra) for p, cs in probes for c in cs]

VOTER0 = _rows(0, [('A', 'a1', [1, 1]), ('A', 'a2', [1, 0]), ('B', 'b1', [1])], [('A', [1, 1, 0]), ('C', [1, 1])])
VOTER1 = _rows(1, [('A', 'a1', [1, 1]), ('A', 'a2', [1, 1]), ('B', 'b1', [0])], [('A', [1, 0, 1]), ('B', [1]), ('C', [0, 1])])
NAN = float('nan')

def _same(got, want):
    assert len(got) == len(want) and all((g != g and w != w) or g == pytest.approx(w) for g, w in zip(got, want)), (got, want)

def test_problem_metrics_by_hand():
    import pandas as pd
    from l0kit.corebench.benchmark import problem_metrics
    pm = problem_metrics(pd.DataFrame(VOTER0 + VOTER1)).set_index(['voter', 'problem_id'])
    assert list(pm.columns) == ['I', 'I_s', 'W', 'W_s', 'RCS'] and sorted(pm.index) == [(v, p) for v in (0, 1) for p in 'ABC']
    #                               I    I_s  W    W_s  RCS
    _same(list(pm.loc[(0, 'A')]), [0.0, 0.5, 0.0, 2 / 3, 0.0])  # a2 fails one test; one probe wrong
    _same(list(pm.loc[(0, 'B')]), [1.0, 1.0, NAN, NAN, NAN])    # no probe: W, W_s, RCS undefined (voter 1 has one)
    _same(list(pm.loc[(0, 'C')]), [NAN, NAN, 1.0, 1.0, NAN])    # no test: I, I_s, RCS undefined
    _same(list(pm.loc[(1, 'A')]), [1.0, 1.0, 0.0, 2 / 3, 2 / 3])
    _same(list(pm.loc[(1, 'B')]), [0.0, 0.0, 1.0, 1.0, 0.0])
    _same(list(pm.loc[(1, 'C')]), [NAN, NAN, 0.0, 0.5, NAN])
    one = problem_metrics(pd.DataFrame(VOTER0).drop(columns='voter'))  # no voter column: voter 0
    assert list(one['voter']) == [0, 0, 0] and list(one['problem_id']) == ['A', 'B', 'C']
    _same(list(one.iloc[0, 2:]), [0.0, 0.5, 0.0, 2 / 3, 0.0])

def test_summarize_by_hand_per_voter_then_over_voters():
    import pandas as pd
    from l0kit.corebench.benchmark import summarize, TABLE1_COLUMNS
    # voter 0: I (0 + 1)/2, I_s (.5 + 1)/2, W (0 + 1)/2, W_s (2/3 + 1)/2, RCS 0 (A only), Cons. 1 - (0 - 2/3)^2 = 5/9
    # voter 1: I (1 + 0)/2, I_s (1 + 0)/2, W (0 + 1 + 0)/3, W_s (2/3 + 1 + 1/2)/3 = 13/18, RCS (2/3 + 0)/2,
    #          Cons. (1 - (1 - 2/3)^2 + 1 - (0 - 1)^2)/2 = 4/9 (averaged within the voter first: pooled, it would be 13/27)
    want = [50.0, 62.5, (50 + 100 / 3) / 2, (5 / 6 + 13 / 18) / 2 * 100, 50 / 3, (5 / 9 + 4 / 9) / 2]
    t = summarize(pd.DataFrame(VOTER0 + VOTER1))
    assert list(t.columns) == TABLE1_COLUMNS and len(t) == 1
    _same(list(t.iloc[0]), want)
    _same(list(summarize(pd.DataFrame(VOTER0)).iloc[0]), [50.0, 75.0, 50.0, 250 / 3, 0.0, 5 / 9])  # one voter
    # grouped by model and method: each group its own table; a group column absent from the scores is dropped
    two = pd.DataFrame(_rows(0, [('A', 'a1', [1]), ('A', 'a2', [0])], [('A', [1, 0])], model='m1', method='direct')
                       + VOTER0 + VOTER1).fillna({'model': 'm2', 'method': 'direct'})
    g = summarize(two)
    assert list(g.columns) == ['model', 'method'] + TABLE1_COLUMNS and list(g['model']) == ['m1', 'm2']
    _same(list(g.iloc[0, 2:]), [0.0, 50.0, 0.0, 50.0, 0.0, 1 - 0.5 ** 2])
    _same(list(g.iloc[1, 2:]), want)
    m = summarize(two, by=['model'])
    assert list(m.columns) == ['model'] + TABLE1_COLUMNS and list(m['model']) == ['m1', 'm2']  # whole names (one key: a tuple in pandas 2)
    _same(list(m.iloc[1, 1:]), want)
    # by=[]: one table over both models (m1's rows join voter 0's problem A: probes 3 of 5, Cons. 1 - 0.6^2)
    _same(list(summarize(two, by=[]).iloc[0]), [50.0, 62.5, (50 + 100 / 3) / 2, (0.8 + 13 / 18) / 2 * 100, 50 / 3, (0.64 + 4 / 9) / 2])

def test_probe_correct_reads_the_last_answer_as_its_type_up_to_the_bound():
    from l0kit.corebench.prompts import probe_correct, MAX_LITERAL_CHARS
    assert probe_correct('Answer: 3.0', '3') and not probe_correct('Answer: 3.0', '3', 'string')  # the type is passed on
    assert probe_correct('Answer: 4\nOn second thought:\nAnswer: 3', '3') and not probe_correct('Answer: 3\nAnswer: 4', '3')
    assert not probe_correct('It is 3.', '3')  # no Answer line
    text = 'a' * (MAX_LITERAL_CHARS - 2)  # its repr is exactly the bound long: read; one character more: not read
    assert probe_correct(f'Answer: {text!r}', repr(text)) and not probe_correct(f'Answer: {text + "a"!r}', repr(text + 'a'))
