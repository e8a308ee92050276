"""Tests that kill mutants of the number-making code (`bash scripts/mutation.sh`, CONTRIBUTING.md "Mutation testing").

Every expected value is counted by hand in the comment beside it, never computed by the code under test."""
import re
import numpy as np
import pytest

from l0kit.protocol.scoring import (InvalidSampleCounts, bootstrap_ci, bootstrap_means, majority_index, majority_winners,
                                   pass_at_k, pd_factorize)


# ---------------------------------------------------------------- l0kit.protocol.scoring

def test_majority_index_ties_go_to_the_earliest_first_voter():
    assert majority_index(['a', 'b', 'b', 'a', 'c']) == 0  # a 2, b 2: a's first voter (0) came before b's (1)
    assert majority_index(['c', 'b', 'b', 'a', 'a']) == 1  # b 2, a 2, c 1: b first appears at 1, a at 3
    assert majority_index(['b', 'a', 'a']) == 1  # a 2 beats b 1; a's first voter is 1
    assert majority_index(['x']) == 0
    with pytest.raises(ValueError, match='at least one voter'): majority_index([])


def test_pd_factorize_codes_in_order_of_first_appearance():
    assert pd_factorize(['q', 'p', 'q', 'r', 'p']) == [0, 1, 0, 2, 1]
    assert pd_factorize([]) == []


def test_majority_winners_first_k_of_seven():
    keys = ['a', 'b', 'b', 'c', 'a', 'a', 'a']  # first three: a b b -> b (voter 1); all seven: a 4 -> voter 0
    assert majority_winners(keys, 3).tolist() == [1]
    assert majority_winners(keys, 7).tolist() == [0]
    assert majority_winners(keys, 1).tolist() == [0]
    assert majority_winners(keys, 7, how='expected').tolist() == [0]  # k = n: the one vote of everyone
    assert majority_winners(keys, 1, how='expected').tolist() == list(range(7))  # every voter alone
    for bad in (0, 8):
        with pytest.raises(ValueError, match='between 1 and 7'): majority_winners(keys, bad)
    with pytest.raises(ValueError, match='how must be one of first, expected'): majority_winners(keys, 3, how='last')


def test_majority_winners_expected_over_subsets_by_hand():
    # keys b a a b, k = 2: the six pairs {0,1} b/a tie -> 0, {0,2} -> 0, {0,3} b b -> 0, {1,2} a a -> 1,
    # {1,3} a/b tie -> 1, {2,3} a/b tie -> 2: voter 0 wins 3/6, voter 1 2/6, voter 2 1/6, voter 3 never
    w = majority_winners(['b', 'a', 'a', 'b'], 2, how='expected', samples=3000, rng=5)
    assert w.shape == (3000,) and set(w.tolist()) == {0, 1, 2}
    freq = np.bincount(w, minlength=4) / len(w)
    assert freq == pytest.approx([3 / 6, 2 / 6, 1 / 6, 0], abs=0.04)
    # keys a b b c b, k = 3: ten triples; b (voters 1, 2, 4) has two of a triple in 7 of them -> its first voter there;
    # the 3 triples with one b at most: {0,1,3} a b c tie -> 0, {0,2,3} -> 0, {0,3,4} -> 0
    # b wins: {0,1,2} 1, {0,1,4} 1, {0,2,4} 2, {1,2,3} 1, {1,2,4} 1, {1,3,4} 1, {2,3,4} 2 -> voter 1: 5/10, 2: 2/10, 0: 3/10
    w = majority_winners(['a', 'b', 'b', 'c', 'b'], 3, how='expected', samples=3000, rng=1)
    assert np.bincount(w, minlength=5) / len(w) == pytest.approx([0.3, 0.5, 0.2, 0, 0], abs=0.04)
    assert majority_winners(['a', 'b', 'b', 'c', 'b'], 3, how='expected', samples=50, rng=9).tolist() == \
        majority_winners(['a', 'b', 'b', 'c', 'b'], 3, how='expected', samples=50, rng=9).tolist()


def test_pass_at_k_by_hand():
    assert pass_at_k(5, 2, 2) == pytest.approx(0.7)  # 1 - C(3,2)/C(5,2) = 1 - 3/10
    assert pass_at_k(10, 3, 5) == pytest.approx(1 - 21 / 252)  # C(7,5) = 21, C(10,5) = 252
    assert pass_at_k(4, 0, 1) == 0.0 and pass_at_k(4, 4, 4) == 1.0
    assert pass_at_k(3, 1, 3) == 1.0  # two failures cannot fill three draws
    assert pass_at_k(3, 1, 2) == pytest.approx(1 - 1 / 3)  # C(2,2)/C(3,2) = 1/3: exactly the fail >= k boundary
    assert isinstance(pass_at_k(5, 2, 2), float)
    out = pass_at_k(np.array([5, 10, 3]), np.array([2, 3, 1]), np.array([2, 5, 3]))
    assert isinstance(out, np.ndarray) and out == pytest.approx([0.7, 1 - 21 / 252, 1.0])
    assert pass_at_k(np.array([], dtype=int), np.array([], dtype=int), np.array([], dtype=int)).shape == (0,)
    for n, c, k in ((5, 6, 1), (5, -1, 1), (5, 2, 0), (5, 2, 6), (5.0, 2, 1), (5, 2.0, 1), (5, 2, 1.0)):
        with pytest.raises(InvalidSampleCounts): pass_at_k(n, c, k)
    with pytest.raises(InvalidSampleCounts, match='between 0 and n'): pass_at_k(5, 6, 1)
    with pytest.raises(InvalidSampleCounts, match='between 1 and n'): pass_at_k(5, 2, 6)


def test_bootstrap_means_by_hand():
    assert bootstrap_means([2.0, 2.0, 2.0], n_resamples=7).tolist() == [2.0] * 7
    m = bootstrap_means([0.0, 1.0], n_resamples=4000, rng=2)  # means of two draws: 0 (1/4), 0.5 (1/2), 1 (1/4)
    assert m.shape == (4000,) and set(m.tolist()) <= {0.0, 0.5, 1.0}
    assert [np.mean(m == v) for v in (0.0, 0.5, 1.0)] == pytest.approx([0.25, 0.5, 0.25], abs=0.03)
    assert bootstrap_means([0.0, 1.0], 50, rng=4).tolist() == bootstrap_means([0.0, 1.0], 50, rng=np.random.default_rng(4)).tolist()
    # over 2,000,000 / 1,000,001 < 2 values a chunk of the index array holds one resample: three chunks, every slot filled
    assert bootstrap_means(np.ones(1_000_001), n_resamples=3, rng=0).tolist() == [1.0, 1.0, 1.0]
    for bad in ([], [[1.0, 2.0]]):
        with pytest.raises(ValueError, match='non-empty 1-d'): bootstrap_means(bad)


def test_bootstrap_ci_by_hand():
    assert bootstrap_ci([3.0, 3.0, 3.0]) == (3.0, 3.0)
    # means of two draws of {0, 1}: P(0) = P(1) = 1/4, P(0.5) = 1/2: the 95% interval is (0, 1); a 40% one cuts 30% off
    # each side, inside the 0.5 mass: (0.5, 0.5)
    assert bootstrap_ci([0.0, 1.0], seed=1) == (0.0, 1.0)
    assert bootstrap_ci([0.0, 1.0], confidence=0.4, seed=1) == (0.5, 0.5)
    lo, hi = bootstrap_ci([0.0, 1.0], confidence=0.4, seed=1)
    assert type(lo) is float and type(hi) is float
    for bad in (0.0, 1.0, 1.5):
        with pytest.raises(ValueError, match='confidence must be in'): bootstrap_ci([0.0, 1.0], confidence=bad)


def test_scoring_defaults_are_the_documented_ones():
    # the published intervals and vote curves are reproducible only with these defaults: 2,000 draws and seed 0, 256 subsets
    x = [0.0, 1.0, 1.0, 3.0, 7.0]
    y = [0.13, 1.7, 2.35, 3.9, 7.21, 11.03, 0.4, 5.55]  # many distinct means: one draw more or another seed moves the ends
    assert bootstrap_ci(y) == bootstrap_ci(y, 0.95, 2000, 0) != bootstrap_ci(y, 0.95, 2001, 0)
    assert bootstrap_means(x).tolist() == bootstrap_means(x, 2000, 0).tolist()
    keys = ['a', 'b', 'b', 'c', 'b']
    assert majority_winners(keys, 3, how='expected').tolist() == majority_winners(keys, 3, 'expected', 256, 0).tolist()


def test_bootstrap_takes_its_seed_and_numpys_draws():
    x = np.array([0.0, 1.0, 1.0, 3.0, 7.0])
    assert bootstrap_ci(x, seed=1) != bootstrap_ci(x, seed=2)  # the seed reaches the draws
    # the means are those of numpy's indices drawn by the seeded generator: 5 draws from 0..4 per resample
    idx = np.random.default_rng(7).integers(0, 5, size=(30, 5))
    assert bootstrap_means(x, 30, 7).tolist() == x[idx].mean(axis=1).tolist()
    # 700,000 values: chunks of 2,000,000 // 700,000 = 2 resamples, the last chunk of 3 holds one
    assert bootstrap_means(np.ones(700_000), n_resamples=3, rng=0).tolist() == [1.0, 1.0, 1.0]


def test_pass_at_k_refuses_non_integer_counts_in_words():
    with pytest.raises(InvalidSampleCounts, match='must be integers'): pass_at_k(5.0, 2, 1)
    with pytest.raises(ValueError, match='at least one voter'): majority_index(iter(()))


# ---------------------------------------------------------------- l0kit.l0.metrics: majvote@k takes the first k voters

def test_majvote_at_k_votes_the_first_k_of_seven():
    from l0kit.l0.metrics import majvote_at_k
    target = ['L2,', 'L3,x:5']
    good, bad = 'L2,\nL3,x:5', 'L2,\nL3,x:6'  # bad: one step right, then wrong
    votes = [bad, bad, good, good, good, good, good]  # first three: bad 2 of 3; all seven: good 5 of 7; last three: good
    s = majvote_at_k(votes, target, 3)
    assert (s.correct, s.steps_to_error, s.target_steps, s.failure) == (False, 1, 2, 'mismatch')
    assert majvote_at_k(votes, target, 7).correct and not majvote_at_k(votes, target, 1).correct
    assert majvote_at_k(votes, target, 5).correct  # bad 2, good 3
    for k in (0, 8):
        with pytest.raises(ValueError, match=f'majvote@{k} needs between 1 and 7 voters'): majvote_at_k(votes, target, k)
    extra = [good + '\nL4,x:7'] * 3  # right, then a trace line past the target: fails only strict scoring
    assert majvote_at_k(extra, target, 3).correct
    assert majvote_at_k(extra, target, 3, strict=True).failure == 'extra_steps'


def test_strict_scoring_passes_a_trace_that_stops_where_the_target_does():
    "Strict scoring fails only trace lines after the target's last: a right trace followed by prose is right (mutmut: `n` as None)."
    from l0kit.l0.metrics import score_trace, InvalidTarget
    target = ['L2,', 'L3,x:5']
    s = score_trace('L2,\nL3,x:5\n\nSo x ends as 5.', target, strict=True)
    assert (s.correct, s.steps_to_error, s.target_steps, s.failure) == (True, 2, 2, None)
    with pytest.raises(InvalidTarget, match=r'a list of lines, not one string: split it with \.splitlines\(\)'):
        score_trace('L2,\nL3,x:5', 'L2,\nL3,x:5')


# ---------------------------------------------------------------- l0kit.procbench.metrics: table 2 per difficulty bin

def test_procbench_table2_per_bin_by_hand():
    import pandas as pd
    from l0kit.procbench.metrics import table2
    rows = [('B', 16, 1.0, 1, 1, 17),  # medium (7-16)
            ('A', 2, 1.0, 1, 1, 3), ('A', 6, 0.5, 0, 0, 2),  # short (2-6)
            ('A', 7, 0.25, 0, 1, 1), ('A', 17, 0.0, 0, 0, 0)]  # medium, long (17-)
    scores = pd.DataFrame(rows, columns=['model', 'n', 'pa', 'sm', 'fm', 'pml'])
    t = table2(scores)
    assert t.index.name == 'Model' and list(t.index) == ['B', 'A']  # models in order of appearance
    assert list(t.columns) == [(b, m) for b in ('Short', 'Medium', 'Long') for m in ('PA', 'SM')] + \
        [('Overall', 'PA'), ('Overall', 'SM'), ('Overall', 'FM'), ('Overall', 'PML')]
    # A: short PA (1 + 0.5) / 2, SM 1/2; medium 0.25, 0; long 0, 0; overall PA 1.75 / 4, SM 1/4, FM 2/4, PML 6/4
    assert t.loc['A'].tolist() == [0.75, 0.5, 0.25, 0.0, 0.0, 0.0, 0.4375, 0.25, 0.5, 1.5]
    b = t.loc['B'].tolist()  # B: medium only; short and long have no rows
    assert np.isnan(b[0]) and np.isnan(b[1]) and b[2:4] == [1.0, 1.0] and np.isnan(b[4]) and np.isnan(b[5]) and b[6:] == [1.0, 1.0, 1.0, 17.0]
    one = table2(scores.drop(columns='model'), by='task')  # no such column: one row over everything
    assert one.index.name == 'task' and list(one.index) == ['all']
    assert one.loc['all', ('Overall', 'PML')] == pytest.approx(23 / 5) and one.loc['all', ('Medium', 'PA')] == pytest.approx(1.25 / 2)


def test_procbench_states_equal_is_typed():
    from l0kit.procbench.metrics import states_equal
    assert states_equal(True, True) and states_equal(False, False) and states_equal(1, 1) and states_equal('ab', 'ab')
    assert not states_equal(True, False) and not states_equal(True, 1) and not states_equal(1, True)
    assert not states_equal(False, 0) and not states_equal(0, False)
    assert not states_equal('a', 'b') and not states_equal(1, 2) and not states_equal(1.0, 1) and not states_equal('1', 1)
    assert states_equal([1, 2], [1, 2]) and states_equal([1, 2], (1, 2)) and not states_equal([1], [1, 2])
    assert not states_equal([True], [1]) and not states_equal([1, 2], [1, 3])


def test_procbench_predicted_sequence_by_hand():
    from l0kit.procbench.metrics import predicted_sequence, compat_equal
    from l0kit.procbench.tasks import ProcBenchError
    assert predicted_sequence(None) == [] and predicted_sequence(None, compat=True) == ['']
    assert predicted_sequence({'intermediate': ['a']}) == ['a'] and predicted_sequence({'intermediate': ['a']}, compat=True) == ['a', '']
    assert predicted_sequence({'intermediate': ['a'], 'final': 'b'}) == ['a', 'b']
    with pytest.raises(ProcBenchError, match="a prediction is a dict with 'intermediate' and 'final', got list"): predicted_sequence([1])
    with pytest.raises(ProcBenchError, match="'intermediate' must be a list, got str"): predicted_sequence({'intermediate': 'ab'})
    with pytest.raises(ProcBenchError, match='label states are str, int or list, got float'): compat_equal(1.5, 1.5)


# ---------------------------------------------------------------- l0kit.l0.benchmark.trace_rows, l0kit.l0.metrics.majority_vote

def test_trace_rows_are_the_lines_with_spaces_and_blank_lines_dropped():
    from l0kit.l0.benchmark import trace_rows
    # by hand: spaces go, the blank line goes, a tab inside a line stays (only newlines split), the ends are stripped
    assert trace_rows('L2, lst_y : [1]\n\n  L3,\nL4,\tx:3\nL5,') == ['L2,lst_y:[1]', 'L3,', 'L4,\tx:3', 'L5,']
    assert trace_rows('L2,x:1\nL3,\nL4,', 2) == ['L2,x:1', 'L3,']  # the first `limit` rows
    assert trace_rows('') == []


def test_majority_vote_of_no_response_says_so():
    from l0kit.l0.metrics import majority_vote
    with pytest.raises(ValueError, match='majority_vote needs at least one response'): majority_vote([])


# ---------------------------------------------------------------- l0kit.l0.metrics: response_lines, vote_key

def test_response_lines_are_the_first_lines_asked_for_without_spaces():
    from l0kit.l0.metrics import response_lines
    # by hand: spaces go, blank lines are skipped, exactly `need` lines from the first character on
    assert response_lines('L2, x : 1\n\nL3,\nL4,y:2', 2) == ['L2,x:1', 'L3,']
    assert response_lines('L2,x:1\nL3,', 5) == ['L2,x:1', 'L3,']
    assert response_lines('L2, x : 1\n\n L3,\nL4,\ty:2', None) == ['L2,x:1', 'L3,', 'L4,\ty:2']  # all of them; a tab stays


def test_vote_key_digests_the_cleaned_answer_lone_surrogates_included():
    import hashlib
    from l0kit.l0.metrics import vote_key
    want = hashlib.blake2b('L2,x:\ud8001'.encode('utf-8', 'surrogatepass'), digest_size=8).hexdigest()
    assert vote_key('L2,x:\ud8001') == want  # a model's broken UTF-16 half still gets a key, not an exception
    assert vote_key('L2,x:1') == hashlib.blake2b(b'L2,x:1', digest_size=8).hexdigest()


# ---------------------------------------------------------------- l0kit.runs.runner.check_resume

def test_check_resume_by_hand(tmp_path):
    """A resume checks each record on disk against the items given now: an item outside them is left alone; a record's
    item hash, where it has one, must be the item's; one voter's prompt per item must be what the data set, settings and
    seed give now. The hashes on disk are written by hand from the items as they were, not by `check_resume`."""
    from l0kit.protocol.benchmark import get_benchmark
    from l0kit.protocol.prompt import prompt_hash
    from l0kit.runs.format import Record, RunError
    from l0kit.runs.runner import check_resume
    b = get_benchmark('l0')
    b.generate(tmp_path / 'd', limit=2, preset='small', seed=0)
    a, c = b.load(tmp_path / 'd', 'short')[:2]
    rec = lambda it, voter, seed=0, **kw: Record(id=it['id'], voter=voter, response='x', item_hash=kw.get('item_hash', b.item_hash(it)),
                                                 prompt_hash=kw.get('prompt_hash', prompt_hash(b.build_prompt(it, voter, seed))))
    check_resume(b, [a, c], [rec(a, 0), rec(a, 1), rec(c, 0)])           # the same items, the default seed 0: nothing raised
    check_resume(b, [a], [rec(a, 0), rec(c, 0, item_hash='0' * 16)])    # c is outside the items given (--limit): not checked
    with pytest.raises(RunError, match=f"item {a['id']!r} of the data set differs"):
        check_resume(b, [a], [rec(c, 0), rec(a, 0, item_hash='0' * 16)])  # a record outside the items does not end the check
    check_resume(b, [a], [rec(a, 0), rec(a, 1, prompt_hash='0' * 16)])  # one voter's prompt per item is checked: the first with a hash
    check_resume(b, [a], [rec(a, 0, item_hash=None)])                   # no item hash on disk (an older run): not checked
    check_resume(b, [a], [rec(a, 0, prompt_hash=None, item_hash=None)])  # nor a prompt hash: nothing to check
    with pytest.raises(RunError, match=re.escape(f"item {a['id']!r} of the data set differs from the one the responses in RUNDIR answer "
                                                  "(the data set was regenerated or edited since); evaluate into a new --out folder") + '$'):
        check_resume(b, [a, c], [rec(c, 0), rec(a, 1, item_hash='0' * 16)], out='RUNDIR')  # after a good record, a bad one
    with pytest.raises(RunError, match=re.escape(f"item {c['id']!r} voter 1: the prompt on disk differs from the one the data set and settings "
                                                  "give now (the data set or the prompt templates changed); evaluate into a new --out folder") + '$'):
        check_resume(b, [a, c], [rec(a, 0), rec(c, 1, seed=1)])           # drawn with seed 1, checked with the default 0
    check_resume(b, [c], [rec(c, 1, seed=1)], seed=1)
    with pytest.raises(RunError, match='prompt on disk differs'):
        check_resume(b, [a], [rec(a, 0, prompt_hash=None), rec(a, 1, prompt_hash='0' * 16)])  # the first voter with a hash is checked


# ---------------------------------------------------------------- l0kit.runs.runner: pending_pairs, read_turns, resume_conversation

def _countdown_run(out, items, voters=1, shard=None, bench=None, model=None):
    from l0kit.protocol.countdown import CountdownBenchmark, CountdownSimulated
    from l0kit.runs.runner import run_eval, RunConfig
    b = bench or CountdownBenchmark()
    return run_eval(b, model or CountdownSimulated(slip=0.0), items, out, RunConfig(voters=voters), data='(in memory)', split='demo',
                    shard=shard, progress=False)


def test_pending_pairs_by_hand(tmp_path):
    """The pairs a run asks: ids checked and the run's items named in the message; a shard's pairs are those whose
    sha256 of "id NUL voter" falls on it (the hash computed here, not by `Shard.holds`); a data set changed under a
    run is refused with the run folder named."""
    import hashlib, json
    from l0kit.protocol.config import DataError
    from l0kit.runs.format import RunError
    items = [{'id': f"c{n}", 'split': 'demo', 'start': n} for n in (3, 4, 5, 6, 7, 8)]
    with pytest.raises(DataError, match=r"^the items of this run: items 1 and 2 share the id 'c3'"):
        _countdown_run(tmp_path / 'dup', [items[0], dict(items[0])])
    out = tmp_path / 'shard'
    _countdown_run(out, items, voters=2, shard='2/2')
    on_disk = sorted((d['id'], d['voter']) for d in map(json.loads, (out / 'responses.jsonl').read_text().splitlines()))
    mine = sorted((it['id'], v) for it in items for v in range(2)
                  if int.from_bytes(hashlib.sha256(f"{it['id']}\x00{v}".encode()).digest()[:8], 'big') % 2 == 1)
    assert on_disk == mine and 0 < len(mine) < 12  # shard 2 of 2: remainder 1; neither none nor all of the 12 pairs
    _countdown_run(tmp_path / 'run', items[:2])
    changed = [{**items[0], 'start': 9}, items[1]]  # c3 now counts down from 9: its responses answer another item
    with pytest.raises(RunError, match=rf"item 'c3' of the data set differs from the one the responses in {tmp_path / 'run'} answer"):
        _countdown_run(tmp_path / 'run', changed)


def test_read_turns_keeps_the_keys_asked_and_whole_turn_numbers(tmp_path):
    """`read_turns` returns the last record of each turn of the keys asked; a record whose turn is not a whole number
    (written by something else) is not a turn."""
    from l0kit.runs.format import Record, RecordWriter
    from l0kit.runs.runner import read_turns, TURNS_DIR
    (tmp_path / TURNS_DIR).mkdir()
    rec = lambda i, turn, text: Record(id=i, voter=0, response=text, split='demo', meta={'turn': turn})
    w = RecordWriter(tmp_path, TURNS_DIR)
    w.add([rec('a', 1, 'a1'), rec('b', 1, 'b1'), rec('a', 2, 'a2 first'), rec('a', 2, 'a2 last'), rec('a', '3', 'not a turn'),
           rec('b', None, 'no turn')])
    w.close()
    got = read_turns(tmp_path)
    assert {k: {t: r.response for t, r in v.items()} for k, v in got.items()} == {
        ('demo', 'a', 0): {1: 'a1', 2: 'a2 last'}, ('demo', 'b', 0): {1: 'b1'}}
    only_a = read_turns(tmp_path, {('demo', 'a', 0)})
    assert list(only_a) == [('demo', 'a', 0)] and sorted(only_a[('demo', 'a', 0)]) == [1, 2]


def test_resume_conversation_budgets_each_turn_for_the_model(tmp_path):
    """A turn's token budget counts the benchmark's `budget_text` with the model's own tokenizer, on the first run and on
    a resume that reuses turns from disk: here the model counts 7 tokens a character, so the budget is 7 x 5 + 2 = 37
    for the text '3 2 1' and margin 2 (not the estimate of any other tokenizer)."""
    from l0kit.protocol.countdown import CheckedCountdown, CountdownSimulated
    from l0kit.protocol.models import Completion
    class Budgeted(CheckedCountdown):
        def build_prompt(self, item, voter=0, seed=0):
            p = super().build_prompt(item, voter, seed)
            p.meta = {**p.meta, 'budget_text': '3 2 1', 'budget_margin': 2}
            return p
    class Counting(CountdownSimulated):
        spec = 'counting'
        def __init__(self, wrong_first=True, fail_turn=None):
            super().__init__(slip=0.0); self.budgets, self.wrong_first, self.fail_turn = [], wrong_first, fail_turn
        def count_tokens(self, text): return 7 * len(text)
        def generate(self, prompts, params=None, seeds=None):
            out = []
            for p in prompts:
                self.budgets.append((p.pair['turn'], p.max_new_tokens))
                if p.pair['turn'] == self.fail_turn: out.append([Completion('', finish_reason='error', error='HTTP 500')])
                elif p.pair['turn'] == 1: out.append([Completion('3\n1', finish_reason='stop')])  # wrong: turn 2 follows
                else: out.append([Completion('3\n2\n1', finish_reason='stop')])
            return out
    items = [{'id': 'c3', 'split': 'demo', 'start': 3}]
    first = Counting(fail_turn=2)
    _countdown_run(tmp_path / 'run', items, bench=Budgeted(), model=first)   # turn 1 answered, turn 2 fails
    again = Counting()
    s = _countdown_run(tmp_path / 'run', items, bench=Budgeted(), model=again)  # turn 1 from disk, turn 2 asked
    assert first.budgets == [(1, 37), (2, 37)] and again.budgets == [(2, 37)]
    assert s['complete'] == 1


def test_final_record_by_hand():
    """The (item, voter)'s record after its turns: ids, split and hashes from the first turn, the answer, error and
    finish reason of the last, tokens summed (None when a turn has none), latency summed to 4 places with a missing
    one as 0, think tokens summed, and every answer with `conversation`."""
    from l0kit.protocol.benchmark import Turn
    from l0kit.runs.format import Record
    from l0kit.runs.runner import Conversation, final_record
    t1 = Record(id='c3', voter=1, response='3 1', split='demo', prompt_hash='p1', item_hash='i1', prompt_tokens=10,
                completion_tokens=3, latency_s=0.12345, finish_reason='stop', meta={'turn': 1, 'think_tokens': 4})
    t2 = Record(id='c3', voter=1, response='3 2 1', split='demo', prompt_hash='p2', item_hash='i2', prompt_tokens=20,
                completion_tokens=5, latency_s=None, finish_reason='length', meta={'turn': 2})
    t3 = Record(id='c3', voter=1, response='3 2 1', split='demo', prompt_hash='p3', item_hash='i3', prompt_tokens=30,
                completion_tokens=None, latency_s=0.00001, finish_reason='stop', meta={'turn': 3})
    conv = Conversation({'id': 'c3'}, 1, turns=[Turn(None, '3 1'), Turn(None, '3 2 1')], records=[t1, t2])
    r = final_record(conv, conversation=True)
    assert (r.id, r.voter, r.split, r.prompt_hash, r.item_hash) == ('c3', 1, 'demo', 'p1', 'i1')
    assert (r.response, r.finish_reason, r.error) == ('3 2 1', 'length', None)
    assert (r.prompt_tokens, r.completion_tokens, r.latency_s) == (30, 8, 0.1235)  # 10 + 20, 3 + 5; 0.12345 + 0 to 4 places
    assert r.meta == {'turns': 2, 'think_tokens': 4, 'conversation': ['3 1', '3 2 1']}
    r3 = final_record(Conversation({'id': 'c3'}, 1, records=[t1, t2, t3]))
    assert (r3.completion_tokens, r3.prompt_tokens, r3.latency_s, r3.finish_reason) == (None, 60, 0.1235, 'stop')  # 0.12346 -> 0.1235
    assert r3.meta == {'turns': 3, 'think_tokens': 4}
    failed = Record(id='c3', voter=1, response=None, split='demo', error='HTTP 500', finish_reason='error', meta={'turn': 2})
    rf = final_record(Conversation({'id': 'c3'}, 1, records=[t1, failed]))
    assert (rf.response, rf.error, rf.finish_reason, rf.failed) == (None, 'HTTP 500', 'error', True)


def test_summarize_run_by_hand(tmp_path):
    """The counts of a run folder, against records written by hand: the last record of a pair counts; items outside
    the run and voters past `voters` are left out; a line that is not a record is counted as bad; cut, unclosed,
    think and completion tokens summed over complete responses only; a shard's pairs by a sha256 computed here."""
    import hashlib
    from l0kit.protocol.countdown import CountdownBenchmark
    from l0kit.runs.format import Record, RecordWriter, RESPONSES_FILE, Shard
    from l0kit.runs.runner import summarize_run
    items = [{'id': 'c3', 'split': 'demo', 'start': 3}, {'id': 'c5', 'split': 'demo', 'start': 5}]
    rec = lambda i, v, text, **kw: Record(id=i, voter=v, response=text, split='demo', **kw)
    w = RecordWriter(tmp_path)
    w.add([rec('c3', 0, '3\n2\n1', completion_tokens=5, meta={'think_tokens': 2}),                          # complete (no finish reason)
           rec('c3', 1, None, error='HTTP 500', finish_reason='error')])                                  # failed, then
    w.close()
    with open(tmp_path / RESPONSES_FILE, 'ab') as f: f.write(b'{"not": "a record"}\n')               # a bad line in the middle
    w = RecordWriter(tmp_path)
    w.add([
           rec('c3', 2, None, error='HTTP 502', finish_reason='error'),                                   # failed, and again below
           rec('c3', 1, ' ', finish_reason='length', completion_tokens=9),                                 # empty and cut
           rec('c5', 0, '<think>five', finish_reason='length', completion_tokens=7),                       # unclosed, nothing read
           rec('c5', 1, '5\n4\n3\n2\n1', finish_reason='stop', completion_tokens=11),                      # right, then
           rec('c5', 1, None, error='timeout', finish_reason='error'),                                    # failed last
           rec('c3', 2, None, error='HTTP 503', finish_reason='error'),                                   # failed last, after c5's
           rec('c9', 0, '9', completion_tokens=100), rec('c3', 3, '3', completion_tokens=100)])            # outside: left out
    w.close()
    with open(tmp_path / RESPONSES_FILE, 'ab') as f: f.write(b'{"not": "a record"}\n')               # and one at the end
    s = summarize_run(CountdownBenchmark(), items, tmp_path, voters=3)
    # the pairs in the order of their last records: c3/0, c3/1, c5/0, c5/1 (timeout), c3/2 (HTTP 503): the first error is c5/1's
    assert (s['pairs'], s['complete'], s['failed'], s['first_error'], s['bad_lines'], s['shard']) == (6, 3, 2, 'timeout', 2, '1/1')
    assert s['problems'] == {'empty': 1, 'no answer could be read': 1}
    assert (s['truncated'], s['unclosed_think'], s['think_tokens'], s['completion_tokens']) == (2, 1, 2, 21)  # 5 + 9 + 7
    w = RecordWriter(tmp_path)
    w.add([rec('c5', 0, '', finish_reason='stop', completion_tokens=0)])  # c5/0 now empty too: two empty responses
    w.close()
    assert summarize_run(CountdownBenchmark(), items, tmp_path, voters=3)['problems'] == {'empty': 2}
    assert s['run_dir'] == str(tmp_path)
    holds = lambda i, v: int.from_bytes(hashlib.sha256(f"{i}\x00{v}".encode()).digest()[:8], 'big') % 2 == 0
    half = summarize_run(CountdownBenchmark(), items, tmp_path, voters=3, shard=Shard(1, 2))
    assert half['pairs'] == sum(holds(i, v) for i in ('c3', 'c5') for v in range(3)) and half['shard'] == '1/2'


# ---------------------------------------------------------------- l0kit.l0.metrics._compare (through score_trace)

def test_score_trace_context_after_the_first_chunk_of_lines():
    """A first error more than eight lines past the verbatim prefix (the comparison reads eight lines at a time): the
    response's context is its own lines before the error and the error itself, and a wrong line is a mismatch, not an
    early end. Line 1 matches the control line `L2,` by its number only, so no line is verbatim."""
    from l0kit.l0.metrics import score_trace
    target = ['L2,'] + [f"L{i},x:{i}" for i in range(3, 15)]                     # 13 lines
    response = ['L2,cond:True'] + [f"L{i},x:{i}" for i in range(3, 13)] + ['L13,x:99', 'L14,x:14']
    s = score_trace('\n'.join(response), target, context=3)
    assert (s.correct, s.steps_to_error, s.failure) == (False, 11, 'mismatch')     # lines 1-11 right, line 12 wrong
    assert s.target_context == ['L10,x:10', 'L11,x:11', 'L12,x:12', 'L13,x:13']
    assert s.response_context == ['L10,x:10', 'L11,x:11', 'L12,x:12', 'L13,x:99']
    short = score_trace('\n'.join(response[:10]), target, context=3)              # ten lines, all right, then nothing
    assert (short.steps_to_error, short.failure, short.response_context[-1]) == (10, 'ended_early', '')


def test_scoring_errors_say_what_is_wrong():
    "Each refusal of the shared scoring names its rule (mutmut: five survivors changed only these texts)."
    with pytest.raises(ValueError, match=r'^a majority vote needs at least one voter$'): majority_index([])
    with pytest.raises(ValueError, match=r'^a vote of 4 voters needs between 1 and 3$'): majority_winners(['a', 'b', 'a'], 4)
    with pytest.raises(InvalidSampleCounts, match=r'^n, c and k must be integers \(counts of voters\)$'): pass_at_k(4, 1.5, 1)
    with pytest.raises(InvalidSampleCounts, match=r'^c \(correct voters\) must be between 0 and n$'): pass_at_k(4, 5, 1)
    with pytest.raises(InvalidSampleCounts, match=r'^k must be between 1 and n: pass@k needs at least k voters$'): pass_at_k(4, 1, 5)
    with pytest.raises(ValueError, match=r'^bootstrap needs a non-empty 1-d array of values$'): bootstrap_means([])


def test_simulated_pairs_by_hand():
    "(first injected kind in the taxonomy's names, classified type) of wrong responses only; right or uninjected ones are left out."
    import pandas as pd
    from l0kit.l0.taxonomy import simulated_pairs
    rows = pd.DataFrame({'meta': [{'injected': [{'step': 3, 'kind': 'value'}, {'step': 5, 'kind': 'loop_exit'}]},  # the first counts
                                  {'injected': [{'step': 2, 'kind': 'value'}]},    # right anyway (a harmless slip): left out
                                  {'injected': []}, None,                          # nothing injected / no meta: left out
                                  {'injected': [{'step': 1, 'kind': 'list_copy'}]}, {'injected': [{'step': 1, 'kind': 'odd'}]}],
                         'correct': [False, True, False, False, False, False],
                         'error_type': ['expression', None, 'wrong_branch', 'expression', 'expression', 'skipped_step']})
    assert simulated_pairs(rows) == [('expression', 'expression'), ('list_copy', 'expression'), ('odd', 'skipped_step')]
    assert simulated_pairs(rows.drop(columns='meta')) == []
