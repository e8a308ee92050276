"""Several model turns per (item, voter) (issue 22, "Turns"): turn records on disk, resume turn by turn, tokens summed,
the run page, the batch refusal, and CoRE's RHDA-1 / RHDA-2 prompts checked against the RHDA release's description."""
import json, re, subprocess, sys
from pathlib import Path
import pytest
from l0kit.protocol.benchmark import Benchmark, Reading, continue_chat, Turn
from l0kit.protocol.models import Completion, Model
from l0kit.protocol.prompt import Prompt
from l0kit.runs.runner import run_eval, RunConfig, read_turns, TURNS_DIR
from l0kit.runs.format import RunError, read_records, RESPONSES_FILE

CLI = [sys.executable, '-c', 'import sys; from l0kit.cli.main import main; sys.exit(main())']


class Countdown(Benchmark):
    "Count down from `start`; a wrong countdown gets feedback, at most `max_turns` turns in all."
    name, max_turns = 'countdown-turns', 3
    feedback = 'Wrong. Count down again.'

    def load(self, data_dir=None, split='demo', limit=None):
        return [{'id': f"c{n}", 'split': split, 'start': n} for n in (3, 5)][:limit]

    def build_prompt(self, item, voter=0, seed=0):
        return Prompt([{'role': 'user', 'content': f"Count down from {item['start']}."}], 32)

    def reference(self, item): return ' '.join(str(k) for k in range(item['start'], 0, -1))

    def read(self, item, response, **options):
        ok = (response or '').strip() == self.reference(item)
        return Reading(answer=response, key=response or '', correct=ok, scores={'correct': int(ok)})

    def follow_up(self, item, voter, seed, turns):
        if self.read(item, turns[-1].answer).correct: return None
        return continue_chat(turns, self.feedback)


class Scripted(Model):
    """Answers by a script {(item id, voter): [answer of turn 1, of turn 2, ...]} (the reference past the script's end);
    counts every prompt it is asked, by (id, voter, turn); tokens: 10 x turn in, turn out."""
    spec, name, simulated = 'scripted', 'scripted', True

    def __init__(self, bench, script, batch_size=2, fail=None, crash_after=None):
        self.bench, self.script, self.batch_size, self.fail, self.crash_after = bench, script, batch_size, fail or set(), crash_after
        self.asked, self.calls = [], 0

    def generate(self, prompts, params=None, seeds=None):
        self.calls += 1
        if self.crash_after is not None and self.calls > self.crash_after: raise ConnectionError('server went away')
        out = []
        for p in prompts:
            i, v, k = p.pair['id'], p.pair['voter'], p.pair['turn']
            self.asked.append((i, v, k))
            if (i, v, k) in self.fail: out.append([Completion('', finish_reason='error', error='HTTP 500')]); continue
            script = self.script.get((i, v), [])
            text = script[k - 1] if k <= len(script) else self.bench.reference({'start': int(i[1:])})
            out.append([Completion(text, prompt_tokens=10 * k, completion_tokens=k, latency_s=0.5, finish_reason='stop')])
        return out


SCRIPT = {('c3', 0): ['3 1'], ('c5', 0): ['5 4 2 1', '5 3 1']}  # by hand: c3/0 2 turns, c5/0 3 turns, the others 1


def run(bench, model, out, voters=2):
    return run_eval(bench, model, bench.load(), out, RunConfig(voters=voters), data='(in memory)', split='demo', progress=False)


def turn_lines(out): return [json.loads(l) for l in (Path(out) / TURNS_DIR / RESPONSES_FILE).read_text().splitlines()]


def test_turn_records_on_disk_match_a_hand_count(tmp_path):
    b = Countdown()
    m = Scripted(b, SCRIPT)
    s = run(b, m, tmp_path / 'run')
    assert (s['complete'], s['failed'], s['new']) == (4, 0, 4)
    # by hand: (c3,0) 2 turns, (c3,1) 1, (c5,0) 3, (c5,1) 1 = 7 turns; the model asked 4 first, 2 second and 1 third turns
    lines = turn_lines(tmp_path / 'run')
    assert len(lines) == 7
    assert sorted((d['id'], d['voter'], d['meta']['turn']) for d in lines) == sorted(m.asked) == sorted(
        [('c3', 0, 1), ('c3', 0, 2), ('c3', 1, 1), ('c5', 0, 1), ('c5', 0, 2), ('c5', 0, 3), ('c5', 1, 1)])
    by = {(d['id'], d['voter'], d['meta']['turn']): d for d in lines}
    assert by['c5', 0, 2]['response'] == '5 3 1'
    assert by['c5', 0, 1]['meta']['prompt'] == [{'role': 'user', 'content': 'Count down from 5.'}]
    assert by['c5', 0, 3]['meta']['prompt'] == [{'role': 'user', 'content': Countdown.feedback}]  # only what the turn added
    final = {(r.id, r.voter): r for r in read_records(tmp_path / 'run').records}
    assert len((tmp_path / 'run' / RESPONSES_FILE).read_text().splitlines()) == 4
    assert final['c5', 0].response == '5 4 3 2 1' and final['c3', 0].response == '3 2 1'
    # tokens summed by hand: turns 1, 2, 3 take 10, 20, 30 prompt tokens and 1, 2, 3 completion tokens
    assert [(final[k].meta['turns'], final[k].prompt_tokens, final[k].completion_tokens, final[k].latency_s)
            for k in [('c3', 0), ('c3', 1), ('c5', 0), ('c5', 1)]] == [(2, 30, 3, 1.0), (1, 10, 1, 0.5), (3, 60, 6, 1.5), (1, 10, 1, 0.5)]


def test_max_turns_caps_the_conversation(tmp_path):
    b = Countdown()
    m = Scripted(b, {('c3', 0): ['x', 'y', 'z', 'never asked']})
    run(b, m, tmp_path / 'run', voters=1)
    assert ('c3', 0, 4) not in m.asked and ('c3', 0, 3) in m.asked
    assert {(r.id, r.voter): r for r in read_records(tmp_path / 'run').records}['c3', 0].response == 'z'  # the last turn's answer


def test_one_turn_benchmark_writes_no_turns(tmp_path):
    class One(Countdown): max_turns = 1
    b = One()
    m = Scripted(b, SCRIPT)
    run(b, m, tmp_path / 'run')
    assert len(m.asked) == 4 and not (tmp_path / 'run' / TURNS_DIR).exists()


def test_resume_after_a_crash_continues_at_the_next_turn(tmp_path):
    b = Countdown()
    whole = tmp_path / 'whole'
    run(b, Scripted(b, SCRIPT, batch_size=1), whole)
    # batch size 1: round 1 asks the 4 first turns, one call each, and ends c3/1 and c5/1; round 2 asks c3/0's second
    # turn (right: its response is written) and the 6th call, c5/0's second turn, crashes
    crashing = Scripted(b, SCRIPT, batch_size=1, crash_after=5)
    with pytest.raises(RunError, match=r"3 new responses and 5 turns are saved"):
        run(b, crashing, tmp_path / 'run')
    assert len(turn_lines(tmp_path / 'run')) == 5 == len(crashing.asked)
    again = Scripted(b, SCRIPT, batch_size=1)
    s = run(b, again, tmp_path / 'run')
    assert (s['new'], s['skipped'], s['complete']) == (1, 3, 4)
    assert again.asked == [('c5', 0, 2), ('c5', 0, 3)]  # the conversation goes on at its next turn; no finished turn is asked again
    assert len(turn_lines(tmp_path / 'run')) == 7
    resp = lambda d: sorted((r.id, r.voter, r.response, r.meta['turns'], r.prompt_tokens) for r in read_records(d).records)
    assert resp(tmp_path / 'run') == resp(whole)  # as one uninterrupted run
    assert run(b, Scripted(b, SCRIPT), tmp_path / 'run')['new'] == 0


def test_turns_on_disk_but_no_response_asks_nothing(tmp_path):
    "A run stopped between the last turn's write and the response's: the response is written from the turns alone."
    b = Countdown()
    run(b, Scripted(b, SCRIPT), tmp_path / 'run')
    f = tmp_path / 'run' / RESPONSES_FILE
    kept = [l for l in f.read_text().splitlines() if not ('"c5"' in l and '"voter": 0' in l)]
    f.write_text(''.join(l + '\n' for l in kept))
    m = Scripted(b, {})  # would answer right at once: any question it got would change the response
    s = run(b, m, tmp_path / 'run')
    assert (m.asked, s['new']) == ([], 1)
    r = {(r.id, r.voter): r for r in read_records(tmp_path / 'run').records}['c5', 0]
    assert (r.response, r.meta['turns'], r.prompt_tokens) == ('5 4 3 2 1', 3, 60)


def test_a_failed_turn_is_retried_from_that_turn(tmp_path):
    b = Countdown()
    m = Scripted(b, SCRIPT, fail={('c5', 0, 2)})
    s = run(b, m, tmp_path / 'run')
    assert (s['complete'], s['failed']) == (3, 1) and ('c5', 0, 3) not in m.asked
    again = Scripted(b, SCRIPT)
    s = run(b, again, tmp_path / 'run')
    assert sorted(again.asked) == [('c5', 0, 2), ('c5', 0, 3)] and (s['complete'], s['failed']) == (4, 0)
    assert {(r.id, r.voter): r for r in read_records(tmp_path / 'run').records}['c5', 0].meta['turns'] == 3


def test_a_changed_follow_up_on_resume_is_an_error(tmp_path):
    b = Countdown()
    run(b, Scripted(b, SCRIPT, fail={('c5', 0, 3)}), tmp_path / 'run')
    class Changed(Countdown): feedback = 'No. Again, please.'
    with pytest.raises(RunError, match=r"^item 'c5' voter 0 turn 2: the turn on disk answers a different prompt than the data set, the "
                                       r"settings and the earlier turns give now; evaluate into a new --out folder$"):
        run(Changed(), Scripted(b, SCRIPT), tmp_path / 'run')


def test_one_prompt_per_pair_paths_refuse_several_turns(tmp_path):
    "A batch file and the bridges that generate outside the runner hold one prompt per pair: they refuse, rather than score turn 1."
    from l0kit.runs.batch import export_batch
    from l0kit.protocol.config import ConfigError
    from l0kit.bridges.rl import rl_rows
    from l0kit.bridges.verifiers import env_rows
    from l0kit.bridges.lmeval import lmeval_docs, TokenCounter
    b, items = Countdown(), Countdown().load()
    with pytest.raises(ConfigError, match='takes up to 3 model turns per .* a batch file holds one prompt per pair'):
        export_batch(b, items, tmp_path / 'run', tmp_path / 'b.jsonl', 'openai:gpt-x')
    for make in (lambda: rl_rows(b, items), lambda: env_rows(b, items), lambda: lmeval_docs(b, items, RunConfig(), 1, TokenCounter())):
        with pytest.raises(ConfigError, match='takes up to 3 model turns'): make()
    class One(Countdown): max_turns = 1
    assert len(rl_rows(One(), items)) == 2  # a one-turn benchmark goes through


# --- CoRE: RHDA-1 and RHDA-2 -------------------------------------------------------------------------------------

@pytest.fixture(scope='module')
def core_items():
    from l0kit.corebench.benchmark import CoreBenchmark
    items = CoreBenchmark().load()
    return next(i for i in items if i['kind'] == 'io'), next(i for i in items if i['kind'] == 'probe')


def test_rhda_methods_and_turns():
    from l0kit.corebench.benchmark import CoreBenchmark
    from l0kit.protocol.config import ConfigError
    assert [CoreBenchmark(method=m).max_turns for m in ('io', 'cot', 'coc', 'rhda1', 'rhda2', 'RHDA-1', 'RHDA-2')] == [1, 1, 1, 2, 3, 2, 3]
    assert CoreBenchmark(method='RHDA-2').config.method == 'rhda2'
    with pytest.raises(ConfigError, match='method'): CoreBenchmark(method='rhda3')


def test_rhda_prompts_follow_the_release(core_items):
    """The release's output-prediction RHDA (TnTWoW/code_reasoning, prompts/cruxeval.py: rule_output_prompt and
    rule_with_feedback_output_prompt; tasks/cruxeval.py: get_feedback): the first prompt asks for a step-by-step analysis
    and the assertion in `Analysis: ... Answer: assert f(x) == <output>`; a wrong output gets, in the same chat, the code,
    the previous analysis, the predicted output, the verdict that it does not match the execution, and a request to
    reflect on the analysis steps and give the full assertion again; a right output gets no further turn."""
    from l0kit.corebench.benchmark import CoreBenchmark
    io, probe = core_items
    b = CoreBenchmark(method='rhda1')
    call = f"{io['func_name']}({io['input'].strip()})"
    first = b.build_prompt(io)
    text = first.messages[0]['content']
    assert io['source_code'].rstrip() in text and f"assert {call} == ??" in text
    assert re.search(r"step", text) and 'Analysis:' in text and text.rstrip().endswith(f"assert {call} == <the output>\n```")
    wrong = f"Analysis: the loop adds one each time, SO THE RESULT IS SEVEN.\nAnswer:\n```python\nassert {call} == 'not it'\n```"
    nxt = b.follow_up(io, 0, 0, [Turn(first, wrong)])
    assert [m['role'] for m in nxt.messages] == ['user', 'assistant', 'user']  # the history kept, as the release does
    assert nxt.messages[0] == first.messages[0] and nxt.messages[1]['content'] == wrong
    am = nxt.messages[2]['content']
    assert io['source_code'].rstrip() in am                                    # the code
    assert 'the loop adds one each time, SO THE RESULT IS SEVEN.' in am        # the previous analysis (hypothesis)
    assert "`'not it'`" in am and 'Running the code shows' in am               # the predicted output and the execution's verdict
    assert re.search(r'steps of the analysis that may be wrong', am) and 'Analysis:' in am and f"assert {call} == <the output>" in am
    right = f"Analysis: fine.\nAnswer:\n```python\nassert {call} == {io['output']}\n```"
    assert b.follow_up(io, 0, 0, [Turn(first, right)]) is None                 # feedback only after a wrong output
    assert CoreBenchmark(method='cot').follow_up(io, 0, 0, [Turn(first, wrong)]) is None
    # a probe under the oracle feedback (not the default): the question kept, the verdict from the recorded state
    ob = CoreBenchmark(method='rhda1', feedback='oracle')
    pf = ob.build_prompt(probe)
    pam = ob.follow_up(probe, 0, 0, [Turn(pf, "Analysis: guess.\nAnswer: 'surely wrong value'")]).messages[2]['content']
    assert probe['question'] in pam and "`'surely wrong value'`" in pam and 'recorded state' in pam and 'guess.' in pam


def test_rhda_run_five_table1_rows(tmp_path):
    "The simulated model through all five methods: five rows named as the paper's table 1 names them; amendments raise I_s."
    from l0kit.corebench.benchmark import CoreBenchmark, summarize, published_table
    from l0kit.runs.report import report
    b0 = CoreBenchmark()
    b0.generate(tmp_path / 'data', limit=4)
    items, names, scores = b0.load(tmp_path / 'data'), {'io': 'IO', 'cot': 'CoT', 'coc': 'CoC', 'rhda1': 'RHDA-1', 'rhda2': 'RHDA-2'}, []
    for m in names:
        b = CoreBenchmark(method=m)
        run_eval(b, b.simulated_model('output_accuracy=0.5,probe_accuracy=0.5,amend_accuracy=1,seed=2'), items, tmp_path / m, RunConfig(),
                 data=str(tmp_path / 'data'), split='test', progress=False)
        rep, = report([tmp_path / m])
        scores.append(rep.scores.assign(model='sim', method=names[m]))
        turns = read_turns(tmp_path / m)
        if m.startswith('rhda'):  # amend_accuracy=1: every wrong output is fixed by the first amendment: 1 or 2 turns each
            assert {len(t) for t in turns.values()} == {1, 2} and rep.scores.query("kind == 'io'")['correct'].all()
        else: assert not turns
    import pandas as pd
    t1 = summarize(pd.concat(scores))
    assert sorted(t1['method']) == sorted(published_table(1)['method'].unique()) == sorted(names.values())
    t1 = t1.set_index('method')
    assert t1.loc['RHDA-1', 'I_s'] == t1.loc['RHDA-2', 'I_s'] == 100.0 > t1.loc['CoT', 'I_s']


def test_cli_rhda_end_to_end(tmp_path):
    def cli(*args):
        out = subprocess.run(CLI + [str(a) for a in args], capture_output=True, text=True, cwd=tmp_path)
        assert out.returncode == 0, out.stderr[-2000:]
        return out.stdout
    cli('generate', '--benchmark', 'core', '--out', 'data', '--limit', 2)
    model = 'simulated:output_accuracy=0.3,probe_accuracy=0.3,amend_accuracy=0.5,seed=1'
    args = ['eval', '--benchmark', 'core', '--data', 'data', '--split', 'test', '--model', model, '--set', 'method=RHDA-2', '--limit', 8, '--out', 'run', '--no-progress']
    assert '24/24 responses' in cli(*args)                      # 8 items x 3 voters (CoRE's three runs)
    recs = read_records(tmp_path / 'run').records
    n_turns = len((tmp_path / 'run' / TURNS_DIR / RESPONSES_FILE).read_text().splitlines())
    assert n_turns == sum(r.meta['turns'] for r in recs) > len(recs) and max(r.meta['turns'] for r in recs) == 3
    assert '(0 new, 24 already there' in cli(*args)
    assert json.loads((tmp_path / 'run' / 'run.json').read_text())['benchmark_config']['method'] == 'rhda2'
    assert 'Table 1' in cli('report', 'run')
    cli('view', 'run', '--out', 'page.html')
    assert (tmp_path / 'page.html').stat().st_size > 0


def test_page_shows_every_turn(tmp_path):
    "The run page's item view shows each turn's prompt and answer for a run of several turns, and nothing more for one turn."
    from test_view import Browser, chromium_path  # the page tests' headless Chromium
    from conftest import require
    import shutil
    require(any(shutil.which(n) for n in ('chromium', 'chromium-browser', 'google-chrome')), 'no Chromium to render the page')
    from l0kit.view.page import write_page
    from l0kit.corebench.benchmark import CoreBenchmark
    b = CoreBenchmark(method='rhda2')
    b.generate(tmp_path / 'data', limit=2)
    items = b.load(tmp_path / 'data')[:6]
    run_eval(b, b.simulated_model('output_accuracy=0.2,probe_accuracy=0.2,amend_accuracy=0.3,seed=4'), items, tmp_path / 'run',
             RunConfig(voters=1), data=str(tmp_path / 'data'), split='test', limit=6, progress=False)
    turns = {r.id: r.meta['turns'] for r in read_records(tmp_path / 'run').records}
    path, _ = write_page([tmp_path / 'run'], tmp_path / 'page.html')
    c = CoreBenchmark(method='cot')
    run_eval(c, c.simulated_model('seed=4'), items, tmp_path / 'one', RunConfig(voters=1), data=str(tmp_path / 'data'), split='test',
             limit=6, progress=False)
    one, _ = write_page([tmp_path / 'one'], tmp_path / 'one.html')
    br = Browser()
    try:
        br.open(path.as_uri() + '#per=all&eager=1', 'document.body.dataset.ready')
        shown = br.js("""[...document.querySelectorAll('article.item')].map(a => [a.dataset.id,
            [...a.querySelectorAll('details.turns h4')].map(h => h.textContent.split(':')[0]),
            [...a.querySelectorAll('details.turns pre')].map(p => p.textContent)])""")
        assert len(shown) == 6
        for i, heads, texts in shown:
            assert heads == [f"turn {k}" for k in range(1, turns[i] + 1) for _ in (0, 1)]  # a prompt and an answer per turn
            if turns[i] > 1: assert 'Your analysis of it was:' in texts[2]
        br.open(one.as_uri() + '#per=all&eager=1', 'document.body.dataset.ready')
        assert br.js("document.querySelectorAll('details.turns').length") == 0
    finally:
        br.close()


def test_inspect_bridge_refuses_several_turns():
    pytest.importorskip('inspect_ai')
    from l0kit.bridges.inspect import kit_samples
    from l0kit.protocol.config import ConfigError
    with pytest.raises(ConfigError, match='an Inspect task holds one prompt per pair'):
        kit_samples(Countdown(), Countdown().load())


# --- CoRE: RHDA's feedback comes from outputs only (issue 35, item 4) ----------------------------------------------
# A hand-made problem: f(3) returns 7 (y = 6 after line 2); every number below is worked out by hand, not by the kit.
_SRC = "def f(x):\n    y = x * 2\n    return y + 1\n"
_IO = dict(id='h_io', benchmark='core', split='test', kind='io', problem_id='h', impl_id='h_0', family='plain', func_name='f',
           source_code=_SRC, input='3', output='7')
_PROBES = [dict(_IO, id=f'h_q{k}', kind='probe', question='What is the value of `y` after line 2 runs?', ground_truth='6',
                answer_type='integer', dimensions=['Arithmetic'], target_step_index=2, target_line_number=2) for k in (0, 1)]


def _reply(output, answer=None):
    "An RHDA reply: a probe's (predicted output, then the answer) or an output item's (the assertion)."
    if answer is None: return f"Analysis: y = 6.\nAnswer:\n```python\nassert f(3) == {output}\n```"
    return f"Analysis: y is doubled x.\nOutput:\n```python\nassert f(3) == {output}\n```\nAnswer: {answer}"


class CoreScripted(Model):
    "Answers CoRE prompts by a script {item id: [reply of turn 1, of turn 2, ...]}; records every (id, turn) asked."
    spec, name, simulated = 'core-scripted', 'core-scripted', True

    def __init__(self, script): self.script, self.asked = script, []

    def generate(self, prompts, params=None, seeds=None):
        out = []
        for p in prompts:
            i, k = p.pair['id'], p.pair['turn']
            self.asked.append((i, k))
            out.append([Completion(self.script[i][k - 1], prompt_tokens=10, completion_tokens=1, latency_s=0.5, finish_reason='stop')])
        return out


def test_rhda_probe_feedback_reads_the_output_not_the_recorded_state():
    "A probe whose predicted output is right gets no 'wrong' verdict under the default, whatever its answer; the oracle tells it."
    from l0kit.corebench.benchmark import CoreBenchmark
    probe = _PROBES[0]
    b, ob = CoreBenchmark(method='rhda2'), CoreBenchmark(method='rhda2', feedback='oracle')
    assert b.config.feedback == 'outputs'
    first = b.build_prompt(probe)
    assert 'Output:' in first.messages[0]['content'] and first.meta['output'] == '7'
    right_output_wrong_state = _reply(7, 5)                      # y is 6, not 5: the recorded state differs
    assert b.follow_up(probe, 0, 0, [Turn(first, right_output_wrong_state)]) is None
    assert not b.read(probe, right_output_wrong_state).correct   # still scored wrong: the feedback, not the score, changed
    told = ob.follow_up(probe, 0, 0, [Turn(ob.build_prompt(probe), right_output_wrong_state)])
    assert told is not None and 'recorded state shows that your answer `5`' in told.messages[-1]['content']
    # a right answer after a wrong output: told wrong (about the output, 8) by default, not by the oracle
    wrong_output_right_state = _reply(8, 6)
    am = b.follow_up(probe, 0, 0, [Turn(first, wrong_output_right_state)]).messages[-1]['content']
    assert 'output you predicted from it, `8`, is not what `f(3)` returns' in am and 'recorded state' not in am
    assert 'y is doubled x.' in am and 'Output:' not in am.split('Your analysis of it was:')[1].split('Running the code')[0]
    assert ob.follow_up(probe, 0, 0, [Turn(ob.build_prompt(probe), wrong_output_right_state)]) is None
    no_output = "Analysis: y is 6.\nAnswer: 6"                     # no predicted output: nothing to judge, told so
    assert 'No output could be read' in b.follow_up(probe, 0, 0, [Turn(first, no_output)]).messages[-1]['content']


def test_rhda_output_feedback_needs_the_recorded_output():
    from l0kit.corebench.benchmark import CoreBenchmark
    from l0kit.protocol.config import ConfigError, DataError
    with pytest.raises(ConfigError, match='feedback'): CoreBenchmark(method='rhda1', feedback='state')
    with pytest.raises(DataError, match='records no output of its call.*feedback=oracle'):
        CoreBenchmark(method='rhda1').build_prompt(dict(_PROBES[0], output=None))
    assert 'Output:' not in CoreBenchmark(method='rhda1', feedback='oracle').build_prompt(dict(_PROBES[0], output=None)).messages[0]['content']


@pytest.mark.parametrize('feedback, w_s', [('outputs', {'rhda1': 100.0, 'rhda2': 50.0}), ('oracle', {'rhda1': 100.0, 'rhda2': 100.0})])
def test_rhda2_can_score_below_rhda1(tmp_path, feedback, w_s):
    """By hand: probe q0 answers y = 6 (right) with output 8, then 6 with output 9 (both outputs wrong: amended), then
    5 with output 7 (right output, wrong answer); q1 answers right with the right output at once; the output item is
    right at once. Under output feedback RHDA-1 stops q0 after 2 turns (answer 6: right), RHDA-2 after 3 (answer 5:
    wrong): W_s 2/2 = 100 -> 1/2 = 50, I_s 100 both. Under the oracle q0's first answer is right: 1 turn, W_s 100."""
    from l0kit.corebench.benchmark import CoreBenchmark, score_response, summarize
    import pandas as pd
    script = {'h_io': [_reply(7)], 'h_q0': [_reply(8, 6), _reply(9, 6), _reply(7, 5)], 'h_q1': [_reply(7, 6)]}
    items = [_IO] + _PROBES
    turns_q0 = {'outputs': {'rhda1': 2, 'rhda2': 3}, 'oracle': {'rhda1': 1, 'rhda2': 1}}[feedback]
    for m in ('rhda1', 'rhda2'):
        b, model = CoreBenchmark(method=m, feedback=feedback), CoreScripted(script)
        run_eval(b, model, items, tmp_path / m, RunConfig(voters=1), data='(in memory)', split='test', progress=False)
        assert sorted(model.asked) == sorted([('h_io', 1), ('h_q1', 1)] + [('h_q0', k) for k in range(1, turns_q0[m] + 1)])
        by_id = {i['id']: i for i in items}
        recs = read_records(tmp_path / m).records
        assert {r.id: r.meta['turns'] for r in recs}['h_q0'] == turns_q0[m]
        t1 = summarize(pd.DataFrame([score_response(by_id[r.id], r.response) | {'voter': r.voter} for r in recs]), by=[])
        assert (t1['W_s'].iloc[0], t1['I_s'].iloc[0]) == (w_s[m], 100.0)


class Counted(Countdown):
    "Countdown whose reading reports every turn's answer it was given: it reads the whole conversation."
    name, reads_conversation = 'countdown-counted', True

    def read(self, item, response, conversation=None, **options):
        r = super().read(item, response)
        r.scores = {**r.scores, 'answers': ' | '.join(conversation) if conversation is not None else 'NOT GIVEN'}
        return r


def test_read_sees_the_whole_conversation_through_run_and_report(tmp_path):
    "By hand, from SCRIPT: c5/0 answered '5 4 2 1', '5 3 1', then the reference; c3/0 '3 1' then the reference; the rest at once."
    from l0kit.runs.report import report
    from l0kit.protocol.benchmark import BENCHMARKS, register_benchmark
    b = Counted()
    run(b, Scripted(b, SCRIPT), tmp_path / 'run')
    register_benchmark(b.name, Counted)
    try: scores = report([tmp_path / 'run'], data=tmp_path)[0].scores  # the report reads the run folder as `l0kit report` does
    finally: del BENCHMARKS[b.name]
    got = {(r['id'], r['voter']): r['answers'] for _, r in scores.iterrows()}
    assert got == {('c3', 0): '3 1 | 3 2 1', ('c3', 1): '3 2 1', ('c5', 0): '5 4 2 1 | 5 3 1 | 5 4 3 2 1', ('c5', 1): '5 4 3 2 1'}
    plain = Countdown()  # a benchmark that reads the last answer only keeps no conversation in its responses
    run(plain, Scripted(plain, SCRIPT), tmp_path / 'plain')
    assert all('conversation' not in r.meta for r in read_records(tmp_path / 'plain').records)


def test_the_runner_never_overwrites_a_benchmarks_meta_keys(tmp_path):
    "The sixth benchmark kept its own `turn` in meta; the runner's entries go under meta['runner'] (prompt.pair)."
    class Keeps(Countdown):
        name = 'countdown-keeps'
        def build_prompt(self, item, voter=0, seed=0):
            p = super().build_prompt(item, voter, seed)
            return Prompt(p.messages, p.max_new_tokens, meta={'turn': 'mine', 'id': 'mine', 'voter': 'mine'})
    b, seen = Keeps(), []
    class Looks(Scripted):
        def generate(self, prompts, params=None, seeds=None):
            seen.extend((p.meta['turn'], p.meta['id'], p.meta['voter'], p.pair['id'], p.pair['turn']) for p in prompts)
            return super().generate(prompts, params, seeds)
    run(b, Looks(b, SCRIPT), tmp_path / 'run', voters=1)
    assert sorted(seen) == [('mine', 'mine', 'mine', 'c3', 1), ('mine', 'mine', 'mine', 'c3', 2),
                            ('mine', 'mine', 'mine', 'c5', 1), ('mine', 'mine', 'mine', 'c5', 2), ('mine', 'mine', 'mine', 'c5', 3)]


def test_a_simulated_model_draws_from_each_turns_own_seed(tmp_path):
    "A simulated model that answers its first draw: turn 1 uses the (item, voter) seed, turn k the seed of 'id\\0turnk', by hand from sha256."
    import hashlib, random
    from l0kit.protocol.models import SimulatedModel
    def by_hand(seed, key, voter): return random.Random(int.from_bytes(hashlib.sha256(f"{seed}\x00{key}\x00{voter}".encode()).digest()[:8], 'big') >> 1).random()
    class Draws(SimulatedModel):
        label, defaults = 'draws', {'seed': 7}
        def answer(self, prompt, rng): return f"{rng.random()!r}", {}
    class Always(Countdown):  # never right: every (item, voter) takes all three turns
        name = 'countdown-always'
        def read(self, item, response, **options): return Reading(answer=response, key=response, correct=False, scores={})
    b = Always()
    run(b, Draws(), tmp_path / 'run', voters=1)
    got = {(d['id'], d['meta']['turn']): float(d['response']) for d in turn_lines(tmp_path / 'run')}
    want = {('c3', 1): by_hand(7, 'c3', 0), ('c3', 2): by_hand(7, 'c3\x00turn2', 0), ('c3', 3): by_hand(7, 'c3\x00turn3', 0),
            ('c5', 1): by_hand(7, 'c5', 0), ('c5', 2): by_hand(7, 'c5\x00turn2', 0), ('c5', 3): by_hand(7, 'c5\x00turn3', 0)}
    assert got == want and len(set(got.values())) == 6


def test_think_tokens_are_summed_over_a_conversations_turns(tmp_path):
    "Each turn's thinking counted by the server (5 x turn), one turn silent: the response holds the sum, by hand from SCRIPT."
    import dataclasses
    class Thinking(Scripted):
        silent = {('c5', 0, 2)}  # this turn reports no thinking: the sum skips it, it is not a zero that breaks the sum
        def generate(self, prompts, params=None, seeds=None):
            out = super().generate(prompts, params, seeds)
            return [[dataclasses.replace(c, reasoning_tokens=None if (p.pair['id'], p.pair['voter'], p.pair['turn']) in self.silent
                                         else 5 * p.pair['turn']) for c in cs] for p, cs in zip(prompts, out)]
    b = Countdown()
    run(b, Thinking(b, SCRIPT), tmp_path / 'run')
    got = {(r.id, r.voter): r.meta.get('think_tokens') for r in read_records(tmp_path / 'run').records}
    # c3/0: turns 1, 2 -> 5 + 10; c5/0: turns 1, 2 (silent), 3 -> 5 + 15; the one-turn pairs: 5
    assert got == {('c3', 0): 15, ('c3', 1): 5, ('c5', 0): 20, ('c5', 1): 5}


def test_a_benchmarks_own_runner_key_is_refused_and_a_conversation_without_its_answers_too():
    "A benchmark may not use meta['runner'] for itself; a `reads_conversation` benchmark refuses responses that carry no turns."
    import pandas as pd
    from l0kit.protocol.config import DataError
    from l0kit.protocol.prompt import PromptError
    with pytest.raises(PromptError, match="may not hold 'runner'"): Prompt([], meta={'runner': 'mine'}).for_pair('c3', 0)
    assert Prompt([], meta={'a': 1}).for_pair('c3', 0).for_pair('c3', 0, turn=2).pair == {'id': 'c3', 'voter': 0, 'turn': 2}
    frame = pd.DataFrame({'id': ['c3'], 'voter': [0], 'split': ['demo'], 'response': ['3 2 1'], 'meta': [{}]})
    with pytest.raises(DataError, match='carries no list of its turns'): Counted().score_frame(frame, {'c3': {'id': 'c3', 'start': 3}})
