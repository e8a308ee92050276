"""The organism's number-making pieces against values worked by hand (not computed by the code under test): the learning
rate schedule, the card's length record and ladder rungs, the batch a step trains on, and which tokens the loss is on.
`bash scripts/mutation.sh organism` mutates these functions; each test here fails on mutants no test caught before
(CONTRIBUTING.md, Mutation testing)."""
import math
from types import SimpleNamespace

import pytest
import torch

from l0kit.protocol.config import ConfigError
from l0kit.backends.chat_template import render_chat
from l0kit.organism.data import (TrainConfig, _learned_mask, _trace_spans, collate, encode_example, get_train_preset,
                                 length_record, make_tokenizer, prompt_of, step_bin, training_examples)
from l0kit.organism.model import lr_at
from l0kit.organism.train import _learned


def _cfg(**kw) -> TrainConfig: return TrainConfig(**{'steps': 110, 'warmup': 10, 'lr': 1.0, 'final_lr': 0.1, **kw})

@pytest.mark.parametrize('step, want', [
    (0, 0.1), (4, 0.5), (9, 1.0),            # linear warm-up: (step + 1) / warmup of the peak
    (10, 1.0),                               # the cosine starts at the peak
    (60, 0.55),                              # half way: 0.1 + 0.9 * (1 + cos(pi / 2)) / 2
    (35, 0.1 + 0.9 * (1 + math.cos(math.pi / 4)) / 2),
    (110, 0.1), (500, 0.1),                  # the end, and past it: a tenth of the peak, never below
])
def test_lr_at_warms_up_then_decays_to_its_final_fraction(step, want):
    assert lr_at(_cfg(), step) == pytest.approx(want, abs=1e-12)

def test_lr_at_scales_with_the_peak_and_can_decay_to_zero():
    assert lr_at(_cfg(lr=0.006), 60) == pytest.approx(0.0033, abs=1e-12)
    assert lr_at(_cfg(final_lr=0.0), 110) == pytest.approx(0.0, abs=1e-12)
    assert lr_at(_cfg(final_lr=0.0), 60) == pytest.approx(0.5, abs=1e-12)
    assert lr_at(_cfg(warmup=0), 0) == pytest.approx(1.0, abs=1e-12)  # no warm-up: the peak at once
    assert lr_at(_cfg(steps=11), 11) == pytest.approx(0.1, abs=1e-12)   # one step of decay: at its end after that step

@pytest.mark.parametrize('steps, rung', [(1, '1-4'), (4, '1-4'), (5, '5-8'), (8, '5-8'), (9, '9-16'), (16, '9-16'),
                                         (17, '17-32'), (32, '17-32'), (33, '33-64'), (64, '33-64'), (65, '65-128')])
def test_step_bin_is_the_ladder_rung(steps, rung):
    assert step_bin(steps) == rung

def test_length_record_counts_bins_and_longest():
    trained = [(3, 100), (3, 130), (7, 300), (12, 127)]
    skipped = [(30, 2000), (30, 1500), (25, 1100)]
    assert length_record(trained, skipped) == {
        'target_steps': {'3': 2, '7': 1, '12': 1},
        'example_tokens': {'0': 2, '128': 1, '256': 1},   # bins of 128 tokens: 100 and 127 in the first, 130 in the second
        'longest_target_steps': 12, 'longest_example_tokens': 300,
        'skipped_for_length': 3, 'skipped_target_steps': {'25': 1, '30': 2}}
    assert list(length_record(trained, skipped)['target_steps']) == ['3', '7', '12']  # in order of steps
    assert length_record([], []) == {'target_steps': {}, 'example_tokens': {}, 'longest_target_steps': 0,
                                     'longest_example_tokens': 0, 'skipped_for_length': 0, 'skipped_target_steps': {}}

def test_collate_pads_right_to_a_multiple_and_learns_nothing_on_padding():
    examples = [([11, 12, 13], [-100, 12, 13]), ([14], [14])]
    ids, mask, labels = collate(examples, pad_id=0, multiple=4)
    assert ids.tolist() == [[11, 12, 13, 0], [14, 0, 0, 0]]
    assert mask.tolist() == [[1, 1, 1, 0], [1, 0, 0, 0]]
    assert labels.tolist() == [[-100, 12, 13, -100], [14, -100, -100, -100]]
    assert ids.dtype == mask.dtype == labels.dtype == torch.long   # a float mask compares equal in .tolist(), not here
    ids, mask, labels = collate(examples, pad_id=5)           # no rounding: as wide as the longest
    assert ids.tolist() == [[11, 12, 13], [14, 5, 5]] and mask.tolist() == [[1, 1, 1], [1, 0, 0]]
    assert collate([([1] * 5, [1] * 5)], 0, 4)[0].shape == (1, 8)

def test_learned_counts_labels_after_the_first():
    assert _learned(([1, 2, 3, 4], [7, -100, 8, 9])) == 2   # the first label is never learned (nothing before it)
    assert _learned(([1, 2], [-100, 6])) == 1
    assert _learned(([1], [5])) == 0

def test_learned_mask_takes_tokens_inside_a_span_and_refuses_one_across_its_edge():
    offsets = [(0, 2), (2, 5), (5, 7), (7, 9)]
    assert _learned_mask(offsets, [(2, 7)]) == [False, True, True, False]
    assert _learned_mask(offsets, [(0, 2), (7, 9)]) == [True, False, False, True]
    assert _learned_mask(offsets, []) == [False] * 4
    with pytest.raises(ConfigError, match='characters 1-3'): _learned_mask([(0, 1), (1, 3)], [(2, 7)])   # starts outside, ends inside
    with pytest.raises(ConfigError, match='characters 6-8'): _learned_mask([(6, 8)], [(2, 7)])           # starts inside, ends outside

def test_trace_spans_are_the_fenced_outputs_with_their_last_newline():
    demos = [SimpleNamespace(trace=['L2,x:1', 'L3,y:2', 'L4,'])] * 2  # the same trace twice, longer than the fence before it
    head, fence = 'Program:\n```\ndef f(x):\n```\nInput:\n```\nx=1\n```\n', 'Output:\n```\n'
    body = 'L2,x:1\nL3,y:2\nL4,\n'
    text = head + fence + body + '```\n\n' + head + fence + body + '```\n\nnow you'
    first = len(head) + len(fence)
    second = first + len(body) + len('```\n\n') + len(head) + len(fence)
    assert _trace_spans(text, demos) == [(first, first + len(body)), (second, second + len(body))]  # the second found after the first
    assert text[first:first + len(body)] == body
    with pytest.raises(ConfigError, match=r"^a demonstration's trace is not in the prompt as `Output:` and a fenced block"):
        _trace_spans(text, demos + demos[:1])  # a third: not there

def test_trace_spans_find_a_trace_at_the_very_start():
    body = 'L2,x:1\n'
    assert _trace_spans('Output:\n```\n' + body + '```', [SimpleNamespace(trace=['L2,x:1'])]) == [(12, 19)]  # 12: len('Output:\n```\n'), 7: the body

def test_encode_example_defaults_are_the_benchmarks_default_prompt_and_the_test_trace_alone():
    "Called with the item and tokenizer only: the `default` setup, 4 shots, voter 0's demonstrations, and only the test trace learned."
    tok = make_tokenizer(kind='words')
    item = next(training_examples(get_train_preset('quick', small=True)))
    ids, labels = encode_example(item, tok)
    start = next(i for i, t in enumerate(labels) if t != -100)
    assert tok.decode(ids[:start]) == render_chat(prompt_of(item, 'default', 4, 0), tok)
    assert tok.decode(ids[start:], skip_special_tokens=True) == '\n'.join(item['target']) + '\n'
    assert all(t != -100 for t in labels[start:])

def test_encode_example_refuses_a_piece_its_tokenizer_does_not_know():
    tok = make_tokenizer(kind='words')
    item = next(training_examples(get_train_preset('quick', small=True)))
    with pytest.raises(ConfigError, match=f"does not know a piece of program {item['index']} "):
        encode_example(dict(item, target=item['target'] + ['L9,é:1']), tok)   # a letter outside the trace alphabet
