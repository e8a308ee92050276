"""ProcBench's reading of one response, field by field, against values worked out by hand (issue 34: mutmut left 84 of
the ProcBench group's mutants alive in `ProcBenchBenchmark.read`; no test read a wrong answer field by field).

The item: Sort "dcba" by swaps, T = (acbd, abcd, abcd): two intermediate states and the final one (the paper's
section 3.2: PML = the states matched before the first wrong one, PA = PML / max(N, M), SM = [PA = 1], FM = [t_N = p_M];
the release's evaluator (`_compat`) reads a missing final state as "")."""
import json
import pytest
from l0kit.procbench.benchmark import ProcBenchBenchmark
from l0kit.protocol.benchmark import FirstError

LABEL = {'init': 'dcba', 'intermediate': ['acbd', 'abcd'], 'final': 'abcd'}
ITEM = {'id': 'task01_0007', 'task': 'task01', 'task_name': 'Sort', 'n': 3, 'prompt': 'Sort the string.', 'label': LABEL}
REFERENCE = '{"intermediate": ["acbd", "abcd"], "final": "abcd"}'

def answer(inter, final) -> str: return json.dumps({'intermediate': inter, 'final': final})

def scores(pml, pa, sm, fm, compat=None, parsed=1, m=3, n=3, bin='short'):
    "The score row: typed PML / PA / SM / FM, the same under the release's rules (`compat`: the typed ones if None)."
    c = compat or (pml, pa, sm, fm)
    return {'task_name': 'Sort', 'n': n, 'bin': bin, 'pml': pml, 'pa': pa, 'sm': sm, 'fm': fm,
            'pml_compat': c[0], 'pa_compat': c[1], 'sm_compat': c[2], 'fm_compat': c[3], 'parsed': parsed, 'm': m}

def check(r, *, answer, key, correct, scores, error, partial, steps, note):
    assert (r.answer, r.key, r.correct, r.error, r.steps, r.note) == (answer, key, correct, error, steps, note)
    assert r.scores == scores and r.partial == pytest.approx(partial) and r.reference == REFERENCE

def test_right_answer():
    r = ProcBenchBenchmark().read(ITEM, REFERENCE)
    check(r, answer={'intermediate': ['acbd', 'abcd'], 'final': 'abcd'}, key='["acbd", "abcd", "abcd"]', correct=True,
          scores=scores(3, 1.0, 1, 1), error=None, partial=1.0, steps=['acbd', 'abcd', 'abcd'], note='prefix match 3 of 3 states')

def test_wrong_second_state():
    r = ProcBenchBenchmark().read(ITEM, answer(['acbd', 'abdc'], 'abcd'))  # PML 1, PA 1/3, FM 1 (the final is right)
    check(r, answer={'intermediate': ['acbd', 'abdc'], 'final': 'abcd'}, key='["acbd", "abdc", "abcd"]', correct=False,
          scores=scores(1, 1 / 3, 0, 1), error=FirstError(2, 'wrong state', '3 states answered, 3 expected'),
          partial=1 / 3, steps=['acbd', 'abdc', 'abcd'], note='prefix match 1 of 3 states')

def test_wrong_final_state():
    r = ProcBenchBenchmark().read(ITEM, answer(['acbd', 'abcd'], 'abdc'))  # PML 2, PA 2/3, FM 0
    check(r, answer={'intermediate': ['acbd', 'abcd'], 'final': 'abdc'}, key='["acbd", "abcd", "abdc"]', correct=False,
          scores=scores(2, 2 / 3, 0, 0), error=FirstError(3, 'wrong final state', '3 states answered, 3 expected'),
          partial=2 / 3, steps=['acbd', 'abcd', 'abdc'], note='prefix match 2 of 3 states')

def test_too_many_states():
    r = ProcBenchBenchmark().read(ITEM, answer(['acbd', 'abcd', 'abcd'], 'abcd'))  # M = 4: PML 3, PA 3/4, FM 1
    check(r, answer={'intermediate': ['acbd', 'abcd', 'abcd'], 'final': 'abcd'}, key='["acbd", "abcd", "abcd", "abcd"]',
          correct=False, scores=scores(3, 0.75, 0, 1, m=4), error=FirstError(4, 'too many states', '4 states answered, 3 expected'),
          partial=1.0, steps=['acbd', 'abcd', 'abcd', 'abcd'], note='prefix match 3 of 3 states')  # partial: PML / N

def test_too_few_states_with_a_final():
    r = ProcBenchBenchmark().read(ITEM, answer(['acbd'], 'abcd'))  # P = (acbd, abcd): PML 2, PA 2/3, FM 1
    check(r, answer={'intermediate': ['acbd'], 'final': 'abcd'}, key='["acbd", "abcd"]', correct=False,
          scores=scores(2, 2 / 3, 0, 1, m=2), error=FirstError(3, 'too few states', '2 states answered, 3 expected'),
          partial=2 / 3, steps=['acbd', 'abcd'], note='prefix match 2 of 3 states')

def test_no_final_state_paper_and_release_differ():
    # the paper: P = (acbd, abcd), FM compares t_N = abcd with p_M = abcd: 1; the release: P = (acbd, abcd, ""): FM 0
    r = ProcBenchBenchmark().read(ITEM, '{"intermediate": ["acbd", "abcd"], "final": null}')
    check(r, answer={'intermediate': ['acbd', 'abcd'], 'final': None}, key='["acbd", "abcd"]', correct=False,
          scores=scores(2, 2 / 3, 0, 1, compat=(2, 2 / 3, 0, 0), m=2),
          error=FirstError(3, 'too few states', '2 states answered, 3 expected'), partial=2 / 3, steps=['acbd', 'abcd'],
          note='prefix match 2 of 3 states')

def test_a_final_state_alone():
    r = ProcBenchBenchmark().read(ITEM, answer([], 'abcd'))  # parsed (a final, no intermediate); P = (abcd): PML 0, FM 1
    check(r, answer={'intermediate': [], 'final': 'abcd'}, key='["abcd"]', correct=False, scores=scores(0, 0.0, 0, 1, m=1),
          error=FirstError(1, 'wrong state', '1 states answered, 3 expected'), partial=0.0, steps=['abcd'],
          note='prefix match 0 of 3 states')

@pytest.mark.parametrize('response', ['I cannot sort this.', None, ['{"intermediate": ["acbd", "abcd"], "final": "abcd"}']])
def test_no_answer(response):
    "No answer, no text, or a chat message list instead of text: nothing parsed (the release's P is one empty final slot)."
    r = ProcBenchBenchmark().read(ITEM, response)
    check(r, answer=None, key='[]', correct=False, scores=scores(0, 0.0, 0, 0, parsed=0, m=0),
          error=FirstError(1, 'no answer parsed', '0 states answered, 3 expected'), partial=0.0, steps=[],
          note='prefix match 0 of 3 states')

def test_the_bin_follows_n():
    "Cumulate, N = 7 after [Add 5, Multiply 2]: T = (12, 24); n = 8 is the paper's medium bin (7-16), 17 its long one."
    item = {'id': 'task21_0003', 'task': 'task21', 'task_name': 'Cumulate', 'n': 8, 'prompt': '...',
            'label': {'init': 7, 'intermediate': [12], 'final': 24}}
    b = ProcBenchBenchmark()
    assert (b.read(item, '{"intermediate": [12], "final": 24}').scores['bin'], b.read({**item, 'n': 17}, None).scores['bin']) == ('medium', 'long')
    r = b.read(item, '{"intermediate": [13], "final": 26}')
    assert (r.error, r.partial, r.scores['n']) == (FirstError(1, 'wrong state', '2 states answered, 2 expected'), 0.0, 8)

def test_a_label_without_its_states_is_named():
    from l0kit.procbench.metrics import target_sequence
    from l0kit.procbench.tasks import ProcBenchError
    with pytest.raises(ProcBenchError, match=r"a label needs 'intermediate' and 'final', got \{'init': 'dcba'\}"):
        target_sequence({'init': 'dcba'})
