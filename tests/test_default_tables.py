"""The protocol's default tables (`Benchmark.tables`): with several voters per item, pass@k and majvote@k of the *first*
k voters from each reading's vote key and correctness, checked against hand counts."""
import json
import pandas as pd
import pytest
from l0kit import Benchmark, Prompt, Reading
from l0kit.protocol.benchmark import VOTING_TABLE, voting_table


class Letters(Benchmark):
    "Answer the item's letter: the key is the answer's text, right when it is the item's letter."
    name = 'letters'
    def load(self, data_dir=None, split='s', limit=None): return list(ITEMS.values())[:limit]
    def build_prompt(self, item, voter=0, seed=0): return Prompt([{'role': 'user', 'content': 'Which letter?'}], 4)
    def reference(self, item): return item['letter']
    def read(self, item, response, **options):
        got = response.strip()
        return Reading(answer=got, key=json.dumps(got), correct=got == item['letter'], scores={}, reference=item['letter'])


ITEMS = {'a': {'id': 'a', 'letter': 'A'}, 'b': {'id': 'b', 'letter': 'B'}, 'c': {'id': 'c', 'letter': 'C'}}


def frame(answers: dict, split: dict) -> pd.DataFrame:
    "Scores of `answers` (item id -> its voters' answers in voter order), read by Letters."
    rows = [{'id': i, 'voter': v, 'split': split[i], 'response': a} for i, ans in answers.items() for v, a in enumerate(ans)]
    return Letters().score_frame(pd.DataFrame(rows), ITEMS)


def test_majvote_takes_the_first_k_voters_and_pass_at_k_all_of_them():
    # item a, 7 voters: A A x x x x A (the four wrong ones agree on "x"); by hand:
    # maj@3 = the first three vote A 2:1 -> right (the last three would vote x -> wrong); maj@5: x 3:2 -> wrong; maj@7: x 4:3 -> wrong
    # pass@1 = 3/7; pass@3 = 1 - C(4,3)/C(7,3) = 1 - 4/35; pass@5 = pass@7 = 1 (only four wrong voters)
    t = Letters().tables(frame({'a': list('AAxxxxA')}, {'a': 's'}))[VOTING_TABLE]
    assert list(t.columns) == ['items', 'pass@1', 'maj@3', 'pass@3', 'maj@5', 'pass@5', 'maj@7', 'pass@7']
    assert t.loc['s', ['maj@3', 'maj@5', 'maj@7']].tolist() == [1.0, 0.0, 0.0]
    assert t.loc['s', ['pass@1', 'pass@3', 'pass@5', 'pass@7']].tolist() == pytest.approx([3 / 7, 31 / 35, 1.0, 1.0])


def test_a_tie_goes_to_the_key_whose_first_voter_came_first_and_splits_average_items():
    # b, 4 voters: y B B y -> maj@3: B 2:1 right; maj@4: tie 2:2, y's first voter (0) came first -> wrong
    # c, 4 voters: C z z C -> maj@3: z 2:1 wrong; maj@4: tie, C first -> right
    t = voting_table(frame({'b': list('yBBy'), 'c': list('CzzC')}, {'b': 'one', 'c': 'two'}))
    assert t.loc['one', ['maj@3', 'maj@4']].tolist() == [1.0, 0.0] and t.loc['two', ['maj@3', 'maj@4']].tolist() == [0.0, 1.0]
    assert t.loc['all', 'items'] == 2 and t.loc['all', ['pass@1', 'maj@3', 'maj@4']].tolist() == pytest.approx([0.5, 0.5, 0.5])


def test_an_item_with_fewer_voters_is_left_out_and_one_voter_makes_no_table():
    t = voting_table(frame({'a': list('AAA'), 'b': list('BBx'), 'c': list('C')}, dict.fromkeys('abc', 's')))
    assert t.loc['s', 'items'] == 2 and t.loc['s', 'maj@3'] == 1.0   # c (one voter) is not counted as a vote of one
    assert VOTING_TABLE not in Letters().tables(frame({'a': ['A'], 'b': ['x']}, dict.fromkeys('ab', 's')))
