"""Tests that catch a wrong number (issue 34): each behaviour below is checked against a value counted by hand, and each
test was seen to fail with a one-line bug in the code it guards (the bug is named in the test's docstring)."""
import gzip, json, re, subprocess, sys, textwrap
from pathlib import Path
import numpy as np
import pandas as pd
import pytest
from conftest import ROOT
from l0kit.protocol.benchmark import Benchmark, Turn, answer_part, get_benchmark
from l0kit.protocol.models import Completion, Model
from l0kit.runs.runner import RunConfig, run_eval, TURNS_DIR
from l0kit.runs.format import RESPONSES_FILE, read_records

DATA = Path(__file__).parent / 'data'


# ---- majvote@k: the first k voters (the L0 authors' rule) ------------------------------------------------------------

# 7 voters; the first three vote A, A, B (A wins), the last three B, B, B, and all seven B (4 of 7)
KEYS = ['A', 'A', 'B', 'C', 'B', 'B', 'B']


def test_majority_of_the_first_k_voters():
    "Bug seen: `codes[:k]` -> `codes[-k:]` (the last k voters) makes B win at k = 3."
    from l0kit.protocol.scoring import majority_winners
    assert majority_winners(KEYS, 3).tolist() == [0]      # A, A, B: A, whose first voter is voter 0
    assert majority_winners(KEYS, 7).tolist() == [2]      # four B of seven: B, first given by voter 2
    assert majority_winners(KEYS, 2).tolist() == [0]      # A, A
    assert majority_winners(KEYS, 4).tolist() == [0]      # A, A, B, C: A


def test_l0_majvote_at_k_and_table_vote_the_first_k():
    """The same vote through L0's `majvote_at_k` and the table's `majority_votes` (voters stored out of order).
    Bug seen: `responses[:k]` -> `responses[-k:]` in `majvote_at_k`."""
    from l0kit.l0.metrics import majvote_at_k, vote_key
    from l0kit.l0.analysis import majority_votes
    target = ['L2,x:1', 'L3,y:2', 'L4,']
    right, wrong = '\n'.join(target), 'L2,x:1\nL3,y:7\nL4,'
    texts = {'A': right, 'B': wrong, 'C': 'L2,x:5'}
    responses = [texts[k] for k in KEYS]
    assert majvote_at_k(responses, target, 3).correct and majvote_at_k(responses, target, 3).steps_to_error == 3
    assert not majvote_at_k(responses, target, 7).correct and majvote_at_k(responses, target, 7).steps_to_error == 1
    order = [6, 2, 0, 5, 3, 1, 4]  # rows stored in another order than the voters'
    scores = pd.DataFrame({'id': 'p', 'split': 's', 'voter': order, 'vote_key': [vote_key(texts[KEYS[v]]) for v in order],
                           'vote_correct': [float(KEYS[v] == 'A') for v in order],
                           'vote_steps_to_error': [{'A': 3.0, 'B': 1.0, 'C': 0.0}[KEYS[v]] for v in order]})
    got = majority_votes(scores, 3)
    assert (got.loc['p', 'correct'], got.loc['p', 'steps_to_error']) == (1.0, 3.0)
    got = majority_votes(scores, 7)
    assert (got.loc['p', 'correct'], got.loc['p', 'steps_to_error']) == (0.0, 1.0)


# ---- the answer starts after the FIRST </think> --------------------------------------------------------------------

def test_answer_part_cuts_at_the_first_think_end():
    "Bug seen: `text.find` -> `text.rfind` in `answer_part` (and in L0's `clean_response`)."
    from l0kit.l0.metrics import clean_response
    two = '<think>plan</think>L2,x:1\nL3,\n</think>L2,x:9'
    assert answer_part(two) == 'L2,x:1\nL3,\n</think>L2,x:9'
    assert clean_response(two) == 'L2,x:1\nL3,\n</think>L2,x:9'
    assert answer_part('no thinking') == 'no thinking' and answer_part('<think>a</think>') == ''


@pytest.mark.parametrize('name', ['l0', 'procbench', 'sx', 'core'])
def test_every_benchmark_reads_after_the_first_think_end(tmp_path, name):
    """A reasoning model's reply with a second, stray `</think>` after its answer: every benchmark reads the answer
    between the first and the second (right), none reads only what follows the last (nothing: wrong).
    Bug seen: ProcBench's parser cut at the last `</think>` (`rsplit`); this test found it."""
    b = get_benchmark(name)
    kw = {'preset': 'small'} if name == 'l0' else {}
    b.generate(tmp_path / name, limit=1, **kw)
    split = b.splits(tmp_path / name)[0]
    items = b.load(tmp_path / name, split, 2)
    b.prepare(items)
    for it in items:
        ref = b.reference(it)
        assert b.read(it, ref).correct
        assert b.read(it, f"<think>thinking about it</think>{ref}\n</think>").correct, (name, it['id'])


# ---- ProcBench table 2, every difficulty bin -------------------------------------------------------------------------

LABEL = {'init': 0, 'intermediate': [1, 2], 'final': 3}  # T = [1, 2, 3]
ROWS = [  # n (its bin), the prediction, and by hand: PML, PA, SM, FM
    (2, {'intermediate': [1, 2], 'final': 3}, 3, 1, 1, 1),          # short
    (6, {'intermediate': [1, 9], 'final': 3}, 1, 1 / 3, 0, 1),      # short (the last short length)
    (7, {'intermediate': [1], 'final': 2}, 2, 2 / 3, 0, 0),         # medium (the first medium length)
    (16, {'intermediate': [1, 2, 3], 'final': 4}, 3, 3 / 4, 0, 0),  # medium: one state too many
    (17, {'intermediate': [], 'final': None}, 0, 0, 0, 0),          # long: nothing parsed
    (25, {'intermediate': [1, 2], 'final': 3}, 3, 1, 1, 1),         # long
]
# per bin by hand: short PA (1 + 1/3) / 2, SM 1/2, FM 1, PML 2; medium PA (2/3 + 3/4) / 2 = 17/24, SM 0, FM 0, PML 5/2;
# long PA 1/2, SM 1/2, FM 1/2, PML 3/2; overall PA 3.75 / 6, SM 2/6, FM 3/6, PML 12/6
HAND = {'Short': (2 / 3, 1 / 2, 1, 2), 'Medium': (17 / 24, 0, 0, 5 / 2), 'Long': (1 / 2, 1 / 2, 1 / 2, 3 / 2)}


def test_procbench_table2_per_bin_matches_a_hand_count():
    "Bug seen: `gb = g[g['bin'] == b]` -> `gb = g` (every bin's PA and SM over all rows)."
    from l0kit.procbench.metrics import score, table2, aggregate
    rows = []
    for n, pred, *hand in ROWS:
        s = score(LABEL, pred)
        assert [s['pml'], s['pa'], s['sm'], s['fm']] == pytest.approx(hand), (n, pred)
        rows.append({'model': 'm', 'task_name': 'T', 'n': n, **s})
    df = pd.DataFrame(rows)
    t = table2(df).loc['m']
    for b, (pa, sm, fm, pml) in HAND.items():
        assert (t[(b, 'PA')], t[(b, 'SM')]) == pytest.approx((pa, sm)), b
    assert [t[('Overall', c)] for c in ('PA', 'SM', 'FM', 'PML')] == pytest.approx([3.75 / 6, 2 / 6, 3 / 6, 2])
    per_bin = aggregate(df, 'bin')
    for b, (pa, sm, fm, pml) in HAND.items():
        assert per_bin.loc[b.lower(), ['pa', 'sm', 'fm', 'pml', 'count']].tolist() == pytest.approx([pa, sm, fm, pml, 2]), b
    # the benchmark's own table (typed, and the reference evaluator's loose columns when they are the ones asked for)
    from l0kit.procbench.benchmark import ProcBenchBenchmark
    loose = df.assign(**{f"{m}_compat": df[m] for m in ('pa', 'sm', 'fm', 'pml')}).assign(pa=0.0, sm=0, fm=0, pml=0)
    t2 = ProcBenchBenchmark().summarize(loose, compat=True).iloc[0]
    assert [t2[('Short', 'PA')], t2[('Medium', 'SM')], t2[('Long', 'PA')], t2[('Overall', 'PML')]] == pytest.approx([2 / 3, 0, 1 / 2, 2])


# ---- turn resume: two records on disk for one turn ------------------------------------------------------------------

def test_a_turn_answered_in_a_later_run_is_not_asked_again(tmp_path):
    """Run 1: c5/0's turn 2 fails. Run 2: turn 2 is answered (wrong), turn 3 fails. Run 3: only turn 3 is asked.
    Turn 2 has two records on disk (failed, then answered): the later one counts.
    Bug seen: `read_turns` keeping each turn's first record (`setdefault`) re-asks turn 2 in run 3."""
    from test_turns import Countdown, Scripted, SCRIPT, run, turn_lines
    b, out = Countdown(), tmp_path / 'run'
    first = Scripted(b, SCRIPT, fail={('c5', 0, 2)})
    run(b, first, out)
    second = Scripted(b, SCRIPT, fail={('c5', 0, 3)})
    s = run(b, second, out)
    assert second.asked == [('c5', 0, 2), ('c5', 0, 3)] and (s['complete'], s['failed']) == (3, 1)
    third = Scripted(b, SCRIPT)
    s = run(b, third, out)
    assert third.asked == [('c5', 0, 3)] and (s['new'], s['complete'], s['failed']) == (1, 4, 0)
    turn2 = [d for d in turn_lines(out) if (d['id'], d['voter'], d['meta']['turn']) == ('c5', 0, 2)]
    assert [d['error'] is None for d in turn2] == [False, True] and turn2[1]['response'] == '5 3 1'
    r = {(r.id, r.voter): r for r in read_records(out).records}['c5', 0]
    # by hand: turns 1, 2, 3 answered ('5 4 2 1', '5 3 1', the reference), 10 + 20 + 30 prompt tokens, 1 + 2 + 3 completion
    assert (r.response, r.meta['turns'], r.prompt_tokens, r.completion_tokens) == ('5 4 3 2 1', 3, 60, 6)


# ---- RHDA-2: the third prompt quotes the second analysis; the release's facts ----------------------------------------

RELEASE = json.loads((DATA / 'rhda_reference' / 'release.json').read_text())
A1, A2 = 'FIRST HYPOTHESIS: the loop runs twice.', 'SECOND HYPOTHESIS: the loop runs three times.'


@pytest.fixture(scope='module')
def io_item():
    from l0kit.corebench.benchmark import CoreBenchmark
    return next(i for i in CoreBenchmark().load() if i['kind'] == 'io')


def wrong(item, analysis, value):
    return f"Analysis: {analysis}\nAnswer:\n```python\nassert {item['func_name']}({item['input'].strip()}) == {value!r}\n```"


def test_rhda2_third_prompt_quotes_the_second_analysis(io_item):
    """Two wrong answers: the third prompt's amendment holds the second analysis and its predicted output, not the first
    (the release feeds back the latest response's rule). Bug seen: `turns[-1].answer` -> `turns[0].answer` in `follow_up`."""
    from l0kit.corebench.benchmark import CoreBenchmark
    b = CoreBenchmark(method='rhda2')
    p1 = b.build_prompt(io_item)
    t1 = Turn(p1, wrong(io_item, A1, 'one'))
    p2 = b.follow_up(io_item, 0, 0, [t1])
    t2 = Turn(p2, wrong(io_item, A2, 'two'))
    p3 = b.follow_up(io_item, 0, 0, [t1, t2])
    assert [m['role'] for m in p3.messages] == ['user', 'assistant', 'user', 'assistant', 'user']  # the history kept
    last = p3.messages[-1]['content']
    assert A2 in last and "`'two'`" in last
    assert A1 not in last and "'one'" not in last
    assert p3.messages[1]['content'] == t1.answer and p3.messages[3]['content'] == t2.answer
    assert b.follow_up(io_item, 0, 0, [t1, t2, Turn(p3, wrong(io_item, 'x', 'three'))]) is not None  # the benchmark's max_turns stops it
    assert b.max_turns == 3 and CoreBenchmark(method='rhda1').max_turns == 2


class ByTurn(Model):
    "Answers turn k of every (item, voter) with `answers[k - 1]` (item-agnostic), recording each prompt."
    spec, name, simulated, batch_size = 'by-turn', 'by-turn', True, 4

    def __init__(self, answers): self.answers, self.prompts = answers, []

    def generate(self, prompts, params=None, seeds=None):
        self.prompts += prompts
        return [[Completion(self.answers[p.pair['turn'] - 1], prompt_tokens=10, completion_tokens=5, latency_s=0.1, finish_reason='stop')]
                for p in prompts]


def test_rhda2_run_writes_the_second_analysis_into_turn_3(tmp_path, io_item):
    "The same through the runner: turn 3's record holds, as the prompt it added, the amendment quoting analysis 2."
    from l0kit.corebench.benchmark import CoreBenchmark
    b = CoreBenchmark(method='rhda2')
    m = ByTurn([wrong(io_item, A1, 'one'), wrong(io_item, A2, 'two'), wrong(io_item, 'third', 'three')])
    run_eval(b, m, [io_item], tmp_path / 'run', RunConfig(voters=1), data='(in memory)', split=io_item['split'], progress=False)
    lines = [json.loads(l) for l in (tmp_path / 'run' / TURNS_DIR / RESPONSES_FILE).read_text().splitlines()]
    assert [d['meta']['turn'] for d in lines] == [1, 2, 3]
    added = lines[2]['meta']['prompt']
    assert [x['role'] for x in added] == ['user'] and A2 in added[0]['content'] and A1 not in added[0]['content']
    assert len(m.prompts[2].messages) == 5


def release_analysis(response: str) -> str:
    "The release's `extract_rules`, from the stored facts: the last match of its pattern, stripped, else the whole response."
    facts = RELEASE['extract_rules']
    found = re.findall(facts['pattern'], response, getattr(re, facts['flags']))
    assert facts['match'] == 'last' and facts['strip']
    return found[-1].strip() if found else response


def lines_in_order(text: str, openings: list) -> bool:
    "Whether lines of `text` open with each of `openings`, in that order."
    at = 0
    lines = text.splitlines()
    for o in openings:
        at = next((i for i in range(at, len(lines)) if lines[i].startswith(o)), None)
        if at is None: return False
        at += 1
    return True


def test_rhda_prompts_against_the_release(io_item):
    """What the kit says it takes from the release (`tests/data/rhda_reference`, commit cd975b6): the hypothesis and the
    amendment ask for the release's reply format, in its order; the amendment holds what the release's feedback template
    holds, in its order (code, previous analysis, predicted output, the request); the analysis is read as the release reads
    it; a right output ends the loop. Bug seen: `m[-1]` -> `m[0]` in `rhda_analysis` (the first `Analysis:` block)."""
    from l0kit.corebench.benchmark import CoreBenchmark
    from l0kit.corebench.prompts import rhda_analysis
    assert RELEASE['commit'].startswith('cd975b6')
    hyp, fb = RELEASE['templates']['rule_output_prompt'], RELEASE['templates']['rule_with_feedback_output_prompt']
    b = CoreBenchmark(method='rhda1')
    call = f"{io_item['func_name']}({io_item['input'].strip()})"
    first = b.build_prompt(io_item).messages[-1]['content']
    fmt = [o.replace('assert f(', f"assert {io_item['func_name']}(") for o in hyp['reply_format']]
    assert lines_in_order(first, fmt) and 'step by step' in first and io_item['source_code'].rstrip() in first
    assert hyp['placeholders'][:2] == ['code', 'input'] and first.index(io_item['source_code'].rstrip()) < first.index(f"assert {call} == ??")
    t1 = Turn(b.build_prompt(io_item), wrong(io_item, A1, 'one'))
    am = b.follow_up(io_item, 0, 0, [t1]).messages[-1]['content']
    assert lines_in_order(am, fmt)
    # the feedback template's placeholders in order: code, rule (the analysis), p_output, then the format's input
    assert fb['placeholders'] == ['code', 'rule', 'p_output', 'input']
    at = [am.index(io_item['source_code'].rstrip()), am.index(A1), am.index("`'one'`"), am.rindex('Analysis:')]
    assert at == sorted(at), at
    assert 'analysis' in am and 'assertion' in am  # the request: the analysis steps, the full assertion again
    # the analysis as the release reads it: the last Analysis:...Answer:, stripped; the whole reply when there is none
    for reply in [wrong(io_item, A1, 'one'), f"Analysis: draft\nAnswer: 1\nAnalysis: {A2}\nAnswer:\n```python\nassert f(1) == 2\n```",
                  "assert f(1) == 2", "Analysis:\n  multi\n  line\nAnswer: 3", "Analysis: a Answer: b Analysis: c Answer: d"]:
        assert rhda_analysis(reply) == release_analysis(reply), reply
    right = f"Analysis: ok\nAnswer:\n```python\nassert {call} == {io_item['output']}\n```"
    assert b.follow_up(io_item, 0, 0, [Turn(t1.prompt, right)]) is None


# ---- the trainer's loss mask, as training hands it to the model ------------------------------------------------------

@pytest.mark.parametrize('demo_loss', [True, False])
def test_collate_labels_learn_only_the_traces(demo_loss):
    """The labels of a training batch as `_train_loop` builds it (`training_batches`, then `collate`): the input ids on the
    test trace and its end token (with `demo_loss`, the quick preset's default, on each demonstration's trace too), which
    decode to the item's target and the demonstrations' traces; -100 on every other prompt position and on padding.
    Bug seen: `labels[r, :len(y)] = torch.tensor(y)` -> `torch.tensor(x)` (loss on the prompt too)."""
    pytest.importorskip('transformers')  # the `models` extra (a failure under CI=true)
    import dataclasses
    from l0kit.backends.chat_template import render_chat
    from l0kit.l0.benchmark import l0_demonstrations
    from l0kit.organism.data import collate, get_train_preset, tokenizer_of, training_batches, l0_benchmark
    cfg = dataclasses.replace(get_train_preset('quick', small=True), demo_loss=demo_loss)
    tok = tokenizer_of(cfg)
    batch, items, _ = next(training_batches(cfg, tok))
    ids, mask, labels = collate(batch, tok.pad_token_id)
    assert ids.shape == labels.shape == mask.shape and ids.shape[0] == len(items) >= 2
    assert len({len(x) for x, _ in batch}) > 1  # rows of different lengths: the shorter ones are padded
    bench = l0_benchmark(cfg.setup, cfg.shots)
    for r, it in enumerate(items):
        n, voter = int(mask[r].sum()), it['index'] % 64  # the voter `training_batches` shows the item as
        row_ids, row_labels = ids[r].tolist(), labels[r].tolist()
        assert all(l == -100 for l in row_labels[n:]) and all(t == tok.pad_token_id for t in row_ids[n:])  # padding
        learned = [i for i in range(n) if row_labels[i] != -100]
        assert all(row_labels[i] == row_ids[i] for i in learned)
        runs, start = [], None  # the learned positions as runs of consecutive tokens
        for i in learned:
            if runs and runs[-1][1] == i: runs[-1][1] = i + 1
            else: runs.append([i, i + 1])
        texts = [tok.decode(row_ids[a:b]) for a, b in runs]
        demos = ['\n'.join(d.trace) + '\n' for d in l0_demonstrations(bench, it, voter, 0)] if demo_loss else []
        assert texts == demos + ['\n'.join(it['target']) + '\n' + tok.eos_token], (r, texts[:2])
        assert runs[-1][1] == n and row_ids[n - 1] == tok.eos_token_id
        assert tok.decode(row_ids[:runs[-1][0]]) == render_chat(bench.build_prompt(it, voter, 0), tok)  # the prompt, all before the trace


# ---- bounds: a decompression bomb far past the line bound; control characters at the terminal --------------------------

BOMB_RUN = textwrap.dedent("""
    import sys, tracemalloc
    from l0kit.protocol.benchmark import get_benchmark
    from l0kit.protocol.config import DataError, MAX_LINE_CHARS
    b = get_benchmark('l0')
    tracemalloc.start()
    try: b.load(sys.argv[1], 'short'); print('LOADED')
    except DataError as e: print('REFUSED', str(e).splitlines()[0][-120:])
    print('PEAK', tracemalloc.get_traced_memory()[1], 'BOUND', MAX_LINE_CHARS)
""")


def test_a_bomb_far_past_the_line_bound_is_refused_near_the_bound(tmp_path):
    """A split file whose one line expands to 256 MiB, 16 times the 16 MiB line bound (sixteen gzip members of 16 MiB, so
    the file is small): refused at line 1, with peak Python memory under 3 x the bound, in a fresh process.
    Bug seen: `f.readline(max_line + 1)` -> `f.readline()` (no bound): the peak passes 256 MiB."""
    import zlib
    b = get_benchmark('l0')
    data = tmp_path / 'data'
    b.generate(data, limit=1, preset='small')
    (data / 'short.jsonl').unlink(missing_ok=True)
    c = zlib.compressobj(9, zlib.DEFLATED, 31)  # one gzip member of 16 MiB of 'x'
    member = c.compress(b'x' * 2**24) + c.flush()
    (data / 'short.jsonl.gz').write_bytes(member * 16)
    assert (data / 'short.jsonl.gz').stat().st_size < 2**20
    with gzip.open(data / 'short.jsonl.gz', 'rb') as f: assert len(f.read(2**25)) == 2**25  # the members do expand past the bound
    r = subprocess.run([sys.executable, '-c', BOMB_RUN, str(data)], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    out = dict(l.split(' ', 1) for l in r.stdout.splitlines())
    assert 'line 1 is longer than 16,777,216 characters' in out['REFUSED'], r.stdout
    peak, bound = (int(x) for x in out['PEAK'].split(' BOUND '))
    assert bound == 2**24 and peak < 3 * bound, f"peak {peak / 2**20:.0f} MiB for a {bound / 2**20:.0f} MiB bound"


CONTROLS = ''.join(map(chr, range(0x80, 0xa0))) + '\u200e\u200f\u2028\u2029' + ''.join(map(chr, range(0x202a, 0x202f))) + \
    ''.join(map(chr, range(0x2066, 0x206a)))


def test_terminal_safe_escapes_c1_and_bidi_controls():
    "Every C1 control (U+0080-U+009F) and bidirectional control is written as an escape. Bug seen: `\\x7f-\\x9f` -> `\\x7f`."
    from l0kit.protocol.config import terminal_safe
    for c in CONTROLS + '\x1b\x07\r\x7f':
        got = terminal_safe(f"a{c}b")
        assert c not in got and got == 'a' + c.encode('unicode_escape').decode('ascii') + 'b', repr(c)
    assert terminal_safe('tab\tnew\nline é ü') == 'tab\tnew\nline é ü'  # tabs, newlines and letters kept


# ---- a data set changed under a run: a label only -------------------------------------------------------------------

def test_a_label_only_change_under_a_run_is_refused(tmp_path, capsys):
    """One trace line of one L0 target changed (the prompt does not show targets, so every prompt hash still matches):
    a resume and a report both refuse, in one line, and the run's file is untouched.
    Bug seen: the item-hash comparison in `check_resume` removed (`if False and h != r.item_hash`): the resume goes on."""
    from l0kit.cli.main import main
    from l0kit.protocol.prompt import prompt_hash
    data, run = tmp_path / 'data', tmp_path / 'run'
    b = get_benchmark('l0')
    b.generate(data, limit=2, preset='small')
    args = ['--data', str(data), '--split', 'short', '--model', 'simulated:rate=0.1,seed=0', '--out', str(run), '--no-progress']
    assert main(['eval', '--voters', '2', *args]) == 0
    before_items = b.load(data, 'short')
    f = next(p for p in data.iterdir() if p.name.startswith('short.jsonl'))
    opener = gzip.open if f.suffix == '.gz' else open
    with opener(f, 'rt') as fh: rows = [json.loads(l) for l in fh]
    t = rows[0]['target']
    k = next(i for i, l in enumerate(t) if ':' in l)
    t[k] = t[k] + '0'  # one value, e.g. `L3,x:4` -> `L3,x:40`
    with opener(f, 'wt') as fh: fh.write(''.join(json.dumps(r) + '\n' for r in rows))
    after = b.load(data, 'short')
    assert [prompt_hash(b.build_prompt(it, 0)) for it in after] == [prompt_hash(b.build_prompt(it, 0)) for it in before_items]
    assert b.item_hash(after[0]) != b.item_hash(before_items[0])
    capsys.readouterr()
    kept = (run / RESPONSES_FILE).read_bytes()
    assert main(['eval', '--voters', '3', *args]) == 2
    err = capsys.readouterr().err
    assert f"item {rows[0]['id']!r} of the data set differs" in err and len(err.strip().splitlines()) == 1, err
    assert (run / RESPONSES_FILE).read_bytes() == kept
    assert main(['report', str(run)]) == 2
    assert 'differs from the one the responses answer' in capsys.readouterr().err
