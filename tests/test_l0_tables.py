"""L0's reading of one response and its tables as `l0kit report` prints them (`L0Benchmark.tables`): which tables, their names and columns, and the
numbers, counted by hand on one program whose voters' answers are chosen: table 1 at k voters (capped at the run's),
the vote (the authors' first k, or expected over k-voter subsets), tables 7/8 at the paper's k, the intervals' seed,
table 10 from the records' thought tokens, the paper's row beside the kit's, and the first-error types written to disk.
From the L0 group's mutation survivors (`bash scripts/mutation.sh l0`): no selected test called the tables with these
options, nor read a wrong answer field by field."""
import json
import warnings
import pandas as pd
import pytest
from l0kit.l0.analysis import pass_maj_table, summarize_l0, summary_intervals
from l0kit.l0.benchmark import L0Benchmark, l0_reading, make_l0_item
from l0kit.l0.metrics import vote_key
from l0kit.protocol.benchmark import FirstError

SMALL = "def function(x, lst_y, cond_x):\n    lst_y.append(x)\n    if cond_x:\n        x = x + 2\n    lst_y.pop()\n    return\n"
DEMOS = [dict(x=i, lst_y=[], cond_x=i % 3 == 0) for i in range(8)]
NAMES = 'abcdefgh'
ITEMS = {i: make_l0_item(i, SMALL, dict(x=n, lst_y=[n], cond_x=True), DEMOS, 'short') for n, i in enumerate(NAMES, 1)}
RIGHT = {i: 'L2,lst_y:[{0},{0}]\nL3,\nL4,x:{1}\nL5,lst_y:[{0}]\nL6,'.format(n, n + 2) for n, i in enumerate(NAMES, 1)}  # by hand
WRONG = 'L2,lst_y:[9]\n'  # wrong at the first step


def scores(pattern: dict, meta=None):
    "Scored responses: item id -> a string of R (right) and W (wrong) per voter, in voter order."
    rows = [{'id': i, 'voter': v, 'split': 'short', 'response': RIGHT[i] if c == 'R' else WRONG,
             **({'meta': meta(v)} if meta else {})} for i, p in pattern.items() for v, c in enumerate(p)]
    return L0Benchmark().score_frame(pd.DataFrame(rows), ITEMS)


def test_the_right_traces_are_the_tracers():
    assert [L0Benchmark().reference(ITEMS[i]) for i in NAMES] == [RIGHT[i] for i in NAMES]


def test_a_slip_at_step_3_read_field_by_field():
    # a's trace is L2,lst_y:[1,1] / L3, / L4,x:3 / L5,lst_y:[1] / L6,; the answer writes x:4 at L4 (x = 1 + 2 computed wrong)
    slip = 'L2,lst_y:[1,1]\nL3,\nL4,x:4\nL5,lst_y:[1]\nL6,'
    r = l0_reading(ITEMS['a'], slip)
    rows = ['L2,lst_y:[1,1]', 'L3,', 'L4,x:4', 'L5,lst_y:[1]', 'L6,']
    assert (r.correct, r.answer, r.steps, r.partial, r.note) == (False, rows, rows, 2 / 5, 'steps to error 2 of 5')
    assert r.reference == RIGHT['a'] and r.key == r.scores['vote_key'] == vote_key(slip)
    assert r.error == FirstError(3, 'expression', 'arithmetic')  # the first wrong line is the third, a wrong sum
    assert r.scores == {'split': 'short', 'target_steps': 5, 'steps_to_error': 2, 'failure': 'mismatch',
                        'error_target_line': 'L4,x:3', 'error_response_line': 'L4,x:4',
                        'target_context': ['L2,lst_y:[1,1]', 'L3,', 'L4,x:3'], 'response_context': rows[:3],
                        'vote_key': vote_key(slip), 'vote_correct': False, 'vote_steps_to_error': 2}
    # L2 is `lst_y.append(x)`: an answer that leaves lst_y at [1] did not apply the append (the program says so)
    assert l0_reading(ITEMS['a'], 'L2,lst_y:[1]\nL3,').error == FirstError(1, 'list_copy', 'op_not_applied')
    right = l0_reading(ITEMS['a'], RIGHT['a'])
    assert (right.correct, right.error, right.partial, right.scores['error_target_line'], right.scores['error_response_line']) == (
        True, None, 1.0, None, None)


def test_the_answer_starts_after_the_first_think_and_the_vote_reads_past_a_second():
    # after the first </think>: L2,lst_y:[7] (wrong at step 1); the vote reads past the second </think>: the right trace
    r = l0_reading(ITEMS['a'], '<think>L2,lst_y:[9]</think>\nL2,lst_y:[7]\n</think>\n' + RIGHT['a'])
    assert (r.correct, r.scores['steps_to_error'], r.scores['vote_correct'], r.scores['vote_steps_to_error']) == (False, 0, True, 5)
    assert r.error.step == 1


def test_strict_reading_refuses_a_line_past_the_return_and_bytes_are_read():
    extra = RIGHT['a'] + '\nL7,'
    assert l0_reading(ITEMS['a'], extra).correct
    strict = l0_reading(ITEMS['a'], extra, strict=True)
    assert (strict.correct, strict.scores['failure']) == (False, 'extra_steps')
    cut = l0_reading(ITEMS['a'], b'L2,lst_y:[1,1]\nL3,\nL4,x:5')  # raw bytes, wrong at step 3 (L4,x:5), then it ends
    assert (cut.correct, cut.scores['steps_to_error'], cut.error.step) == (False, 2, 3)


def test_the_strict_vote_and_the_rows_shown_and_a_one_step_trace():
    # the vote reads past a second </think> under the same strictness: a line past the return is wrong when strict.
    # The answer after the first </think> starts with an `L2,` line before the second, so the vote's own reading (the
    # trace after the second </think>) is reached: right when not strict, an extra step when strict
    think = '<think>x</think>\nL2,lst_y:[9]\n</think>\n' + RIGHT['a'] + '\nL7,'
    r = {x: l0_reading(ITEMS['a'], think, strict=x).scores for x in (False, True)}
    assert [(r[x]['vote_correct'], r[x]['vote_steps_to_error'], r[x]['steps_to_error']) for x in (False, True)] == [(True, 5, 0), (False, 5, 0)]
    # the rows kept beside the target: at most the target's 5 lines + 50
    long = l0_reading(ITEMS['a'], RIGHT['a'] + ''.join(f'\nL{n},' for n in range(7, 107)))
    assert len(long.steps) == 55 and long.steps[-1] == 'L56,'
    # a one-line program: its trace is the return line alone, and a right answer earns the whole credit (1 of 1)
    one = make_l0_item('one', 'def function(x):\n    return\n', dict(x=1), [dict(x=2)], 'short')
    assert (one['target'], l0_reading(one, 'L2,').partial, l0_reading(one, 'L3,').partial) == (['L2,'], 1.0, 0.0)


def test_by_default_table_1_at_the_papers_31_voters_and_nothing_else():
    # 32 voters, the last one wrong: table 1 at k = 31 (the paper's), single attempt over all 32 = 31/32
    t = L0Benchmark().tables(scores({'a': 'R' * 31 + 'W'}))
    assert list(t) == ['Table 1 (k = 31)']
    row = t['Table 1 (k = 31)'].loc['short']
    assert (row['Trace Acc. single attempt'], row['Trace Acc. majvote@31'], row['Trace Acc. pass@31']) == (96.875, 100.0, 100.0)
    assert (row['programs'], row['voters'], row['target steps'], row['Steps to Err. single attempt']) == (1, 32, 5.0, 31 * 5 / 32)


def test_tables_7_8_at_the_papers_k_with_their_name():
    t = L0Benchmark().tables(scores({'a': 'R' * 31 + 'W'}), pass_maj=True)
    t78 = t['Tables 7/8: pass@k and maj@k (%)']
    assert list(t78.columns) == ['pass@1', 'pass@5', 'pass@15', 'pass@31', 'maj@5', 'maj@15', 'maj@31']
    assert t78.loc['short'].tolist() == pytest.approx([96.875] + [100.0] * 6)
    assert list(L0Benchmark().tables(scores({'a': 'RRWWW'}), k=5, pass_maj=True)['Tables 7/8: pass@k and maj@k (%)'].columns) == [
        'pass@1', 'pass@5', 'maj@5']  # only the paper's k up to the run's voters


def test_the_vote_and_its_seed_reach_table_1():
    # 5 voters R R W W W (the wrong ones agree), k = 3: the first three vote R 2:1 -> 100; pass@3 = 1 - C(3,3)/C(5,3) = 90
    s = scores({'a': 'RRWWW'})
    first = L0Benchmark().tables(s, k=3)
    assert list(first) == ['Table 1 (k = 3)']
    assert first['Table 1 (k = 3)'].loc['short', ['Trace Acc. majvote@3', 'Trace Acc. pass@3']].tolist() == [100.0, 90.0]
    # expected over 3-voter subsets: 3 of the 10 subsets hold both right voters (30 %), estimated from seeded draws
    exp = {seed: L0Benchmark().tables(s, k=3, vote='expected', seed=seed, pass_maj=True) for seed in (0, 1)}
    assert list(exp[0]) == ['Table 1 (k = 3)', 'Tables 7/8: pass@k and maj@k (%), maj@k expected over k-voter subsets']
    got = {seed: t['Table 1 (k = 3)'].loc['short', 'Trace Acc. majvote@3'] for seed, t in exp.items()}
    assert all(20 < v < 40 for v in got.values()) and got[0] != got[1], got
    for seed in (0, 1):
        pd.testing.assert_frame_equal(exp[seed]['Table 1 (k = 3)'], summarize_l0(s, k=3, how='expected', seed=seed))
    # tables 7/8's expected maj@5 takes the seed too: 7 voters R R W W W W R, k = 5
    s7 = scores(dict(zip(NAMES, ['RRWWWWR', 'RWRWRWW', 'WWRRWRR', 'RRRWWWW'])))
    t78 = {seed: L0Benchmark().tables(s7, k=5, vote='expected', pass_maj=True, seed=seed)[
        'Tables 7/8: pass@k and maj@k (%), maj@k expected over k-voter subsets'] for seed in (0, 1)}
    for seed in (0, 1): pd.testing.assert_frame_equal(t78[seed], pass_maj_table(s7, ks=[1, 5], how='expected', seed=seed))
    assert t78[0].loc['short', 'maj@5'] != t78[1].loc['short', 'maj@5']


def test_the_intervals_take_the_vote_k_and_seed():
    s = scores(dict(zip(NAMES, ['RRWWW', 'RWWWW', 'RRRRW', 'WRRWR', 'RWRWW', 'WWRRR', 'RRWRW', 'WRWWR'])))
    for seed in (0, 1):
        t = L0Benchmark().tables(s, k=3, vote='expected', ci=True, seed=seed)
        assert list(t) == ['Table 1 (k = 3)', '95% bootstrap intervals over programs']
        pd.testing.assert_frame_equal(t['95% bootstrap intervals over programs'], summary_intervals(s, k=3, seed=seed, how='expected'))
    a, b = (L0Benchmark().tables(s, k=3, vote='expected', ci=True, seed=x)['95% bootstrap intervals over programs'] for x in (0, 1))
    assert not a.equals(b)


def test_table_10_from_the_records_thought_tokens():
    t = L0Benchmark().tables(scores({'a': 'RRRRW'}, meta=lambda v: {'think_tokens': 10 * v}))
    assert t['Table 10: thought tokens (mean per response)'].loc['short', 'thought tokens'] == 20.0  # (0 + 10 + 20 + 30 + 40) / 5
    assert 'Table 10: thought tokens (mean per response)' not in L0Benchmark().tables(scores({'a': 'RRRRW'}))


def test_the_papers_row_beside_the_kits():
    # QwQ-32B in the paper: table 7, short split, pass@1 95.26 and maj@31 99.20; table 1's average trace accuracy 86.6
    t = L0Benchmark().tables(scores({'a': 'R' * 31 + 'W'}), compare='QwQ-32B')
    side = t['Kit vs paper (QwQ-32B), pass@k and maj@k (%)']
    assert side.loc['short', [('pass@1', 'kit'), ('pass@1', 'paper'), ('maj@31', 'paper')]].tolist() == pytest.approx([96.875, 95.26, 99.2])
    avg = t['Kit vs paper (QwQ-32B), table 1 average']
    assert avg.loc['average', [('Trace Acc. single attempt', 'kit'), ('Trace Acc. single attempt', 'paper')]].tolist() == pytest.approx([96.875, 86.6])
    assert 'Tables 7/8: pass@k and maj@k (%)' in t  # compare brings the kit's tables 7/8 too
    assert list(side.index) == ['short', 'average']  # the paper's rows of the kit's splits only


def test_the_first_error_types_are_written_and_counted(tmp_path):
    # voters 3 and 4 of `a` are wrong at the first step; every other answer is right
    t = L0Benchmark().tables(scores({'a': 'RRRWW'}), ITEMS, errors=str(tmp_path))
    types = t[f'First-error types (voter_*/errors.jsonl in {tmp_path})']
    assert types.to_numpy().sum() == 2
    lines = {p.parent.name: [json.loads(x) for x in p.read_text().splitlines()] for p in tmp_path.glob('voter_*/errors.jsonl')}
    assert {v: [(x['id'], x['error_type']) for x in r] for v, r in sorted(lines.items())} == {
        'voter_0': [('a', None)], 'voter_1': [('a', None)], 'voter_2': [('a', None)],
        'voter_3': [('a', 'list_copy')], 'voter_4': [('a', 'list_copy')]}  # `lst_y:[9]` for `[1,1]`: the list's value


def test_first_error_types_of_two_splits_count_zero_where_a_type_is_missing(tmp_path):
    # a (short): voter 1 leaves lst_y at [9] (list_copy); b (medium): voter 1 writes x:5 for x = 2 + 2 (expression)
    rows = [{'id': i, 'voter': v, 'split': sp, 'response': RIGHT[i] if v == 0 else bad}
            for i, sp, bad in (('a', 'short', WRONG), ('b', 'medium', 'L2,lst_y:[2,2]\nL3,\nL4,x:5\n')) for v in range(2)]
    items = {**ITEMS, 'b': {**ITEMS['b'], 'split': 'medium'}}
    t = L0Benchmark().tables(L0Benchmark().score_frame(pd.DataFrame(rows), items), items, errors=str(tmp_path))
    types = t[f'First-error types (voter_*/errors.jsonl in {tmp_path})']
    assert types.loc[['short', 'medium'], ['expression', 'list_copy']].to_numpy().tolist() == [[0, 1], [1, 0]]


def test_a_program_with_fewer_voters_is_left_out_of_table_1():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        t = L0Benchmark().tables(scores({'a': 'RRRRR', 'b': 'WWWWW', 'c': 'WW'}), k=5)
    assert t['Table 1 (k = 5)'].loc['short', ['programs', 'Trace Acc. single attempt']].tolist() == [2, 50.0]
    assert any('fewer than 5 voters' in str(x.message) for x in w)


if __name__ == '__main__':
    pytest.main([__file__, '-q'])
