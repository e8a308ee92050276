"""L0 data sets, cards and releases from strangers (issue 31: class 1, and the L0 parts of classes 6 and 9).

Every hostile input here is refused in one line and nothing of it runs: a card cannot choose the grammar its programs
are checked by, no program may name a builtin, a keyword or a `_` name, the tracer runs programs with `len` as their
only builtin, inputs are checked against the generator's bounds before anything is traced, and every file is read
through the bounded reader."""
import json, os, pickle, re, subprocess, sys, textwrap
from pathlib import Path

import pytest

from l0kit.protocol.config import ConfigError, DataError
from l0kit.l0 import dataset
from l0kit.l0.benchmark import L0Benchmark
from l0kit.l0.check import ProgramRejected, check_program
from l0kit.l0.dataset import build_dataset, get_preset, save_dataset, load_split, load_card, DatasetError
from l0kit.l0.generator import GenConfig
from l0kit.l0.release import import_release, load_id_list, write_release_format, ReleaseFormatError
from l0kit.l0.tracer import trace_program, ProgramRuntimeError, UnsupportedProgram

ROOT = Path(__file__).resolve().parents[1]
CLI = 'import sys; from l0kit.cli.main import main; sys.exit(main())'


@pytest.fixture(scope='module')
def small():
    "A real small L0 set: (items, card), two programs per split."
    return build_dataset(get_preset('small').with_counts(2), seed=0)


def hostile_set(folder: Path, small, program: str, test_input: dict, override: str | None = None) -> Path:
    "The small set with its first short item replaced by `program` (demonstrations = the test input), its card's override set."
    items, card = small
    items = {k: [dict(it) for it in v] for k, v in items.items()}
    items['short'][0].update(program=program, test_input=test_input, demonstrations=[test_input] * 3, target=['L2,'], steps=1)
    if override is not None: card = {**card, 'config': {**card['config'], 'gen': {**card['config']['gen'], 'grammar_override': override}}}
    return save_dataset(items, card, folder)


def cli(*args, timeout=120):
    "Run `l0kit ARGS` in a fresh process; (return code, stdout + stderr)."
    r = subprocess.run([sys.executable, '-c', CLI, *map(str, args)], cwd=ROOT, env={**os.environ, 'PYTHONPATH': str(ROOT)},
                       capture_output=True, text=True, timeout=timeout)
    return r.returncode, r.stdout + r.stderr


def one_line_refusal(rc: int, out: str, says: str):
    "The command failed with exit 2 and one error line saying `says`, no traceback."
    assert rc == 2, out[-3000:]
    assert 'Traceback' not in out and says in out, out[-3000:]
    assert len([l for l in out.splitlines() if 'error:' in l]) == 1, out[-3000:]


# --- class 1: code from a data set --------------------------------------------------------------------------------------

def payload(marker: Path) -> str: return f"import pathlib; pathlib.Path({str(marker)!r}).touch()"

# (card override, program, why it is refused): each program would run `payload` if it were traced with the real builtins
CARDS = {
    'len = exec': ('<var> ::= i | j | len | exec', "def function(x, lst_x):\n    len = exec\n    a = len(lst_x)\n    return\n",
                   "asks for the grammar override '<var> ::= i | j | len | exec', which is not one of the kit's"),
    'builtin pool name': ('<var> ::= i | len | eval', "def function(x, lst_x):\n    len = eval\n    a = len(lst_x)\n    return\n",
                          "which is not one of the kit's"),
    'dunder pool name': ('<var> ::= i | len | __builtins__', "def function(x, lst_x):\n    len = __builtins__\n    a = len(lst_x)\n    return\n",
                         "which is not one of the kit's"),
    'card-borne override': ('<stmt> ::= <assignment> | <list_op> | <while_block_nh>',
                            "def function(x, lst_x):\n    while True:\n        lst_x.append(1)\n    return\n", "which is not one of the kit's"),
}


@pytest.mark.parametrize('case', sorted(CARDS))
def test_a_hostile_card_is_refused_at_load_and_nothing_runs(tmp_path, small, case):
    "`load` (what eval, report, view and every export call) refuses the set in one line; the payload's marker is never made."
    override, program, says = CARDS[case]
    marker = tmp_path / 'PWNED'
    data = hostile_set(tmp_path / 'data', small, program, {'x': 1, 'lst_x': payload(marker)}, override)
    for split in ('short', 'medium', 'all'):
        with pytest.raises(DataError, match='not one of the kit') as e: L0Benchmark().load(data, split)
        assert says in str(e.value) and '\n' not in str(e.value)
    assert not marker.exists()


@pytest.mark.parametrize('case', ['len = exec', 'card-borne override'])
def test_a_hostile_card_is_refused_by_eval_and_export_in_one_line(tmp_path, small, case):
    "Through the command line: `l0kit eval` and `l0kit export lm-eval` exit 2 with one error line; nothing runs, nothing is written."
    override, program, says = CARDS[case]
    marker = tmp_path / 'PWNED'
    data = hostile_set(tmp_path / 'data', small, program, {'x': 1, 'lst_x': payload(marker)}, override)
    one_line_refusal(*cli('eval', '--data', data, '--split', 'short', '--voters', '1', '--model', 'simulated', '--out', tmp_path / 'run',
                          '--no-progress'), says)
    one_line_refusal(*cli('export', 'lm-eval', '--data', data, '--split', 'short', '--out', tmp_path / 'tasks'), says)
    assert not marker.exists() and not (tmp_path / 'tasks').exists()


def test_the_len_exec_program_is_refused_under_the_kits_own_grammar_too(tmp_path, small):
    "With a kit grammar on its card the same program is refused by the check (`exec` is a builtin, never a variable)."
    marker = tmp_path / 'PWNED'
    data = hostile_set(tmp_path / 'data', small, CARDS['len = exec'][1], {'x': 1, 'lst_x': payload(marker)})
    with pytest.raises(DataError, match=r"item 'short-0000', line 2: the name 'exec' is a Python builtin, never a variable"):
        L0Benchmark().load(data, 'short')
    one_line_refusal(*cli('eval', '--data', data, '--split', 'short', '--voters', '1', '--model', 'simulated', '--out', tmp_path / 'run',
                          '--no-progress'), "the name 'exec' is a Python builtin")
    assert not marker.exists()


@pytest.mark.parametrize('override, why', [('<var> ::= i | len | exec', 'a Python builtin'), ('<var> ::= i | __class__', 'a dunder name'),
                                           ('<bool_var> ::= cond_a | while', 'a Python keyword'), ('<list_var> ::= _l0_trace', "starting with '_'")])
def test_the_kit_cannot_be_configured_to_generate_a_reserved_name(override, why):
    "GenConfig refuses a pool holding a builtin, a dunder, a keyword or a `_` name, so neither a user nor a card can make one."
    with pytest.raises(ConfigError, match=why): GenConfig(grammar_override=override)


def test_a_users_own_grammar_is_passed_explicitly_and_the_card_is_ignored(tmp_path, small):
    "A set made with a grammar of one's own loads when that configuration is passed; the card's override never decides."
    items, card = build_dataset(dataset.L0DataConfig('mine', GenConfig(grammar_override='<var> ::= i | j'),
                                                     [dataset.SplitSpec('short', 1, 20, 2)]), seed=0)
    data = save_dataset(items, card, tmp_path / 'data')
    with pytest.raises(DataError, match="'<var> ::= i | j', which is not one of the kit's"): L0Benchmark().load(data, 'short')
    mine = GenConfig(grammar_override='<var> ::= i | j')
    assert [it['id'] for it in L0Benchmark().load(data, 'short', grammar=mine)] == ['short-0000', 'short-0001']
    hostile_set(tmp_path / 'evil', small, CARDS['len = exec'][1], {'x': 1, 'lst_x': 'x'}, '<var> ::= i | j')   # the card's override matches
    with pytest.raises(DataError, match="the name 'exec' is a Python builtin"): L0Benchmark().load(tmp_path / 'evil', 'short', grammar=mine)


PAST_THE_CHECK = {  # programs a weakened check would let through, and what stops each in the tracer
    "a = exec(lst_x)": "NameError: name 'exec' is not defined",
    "a = open(lst_x)": "NameError: name 'open' is not defined",
    "a = eval(lst_x)": "NameError: name 'eval' is not defined",
    "a = __import__(lst_x)": "the name '__import__' is not supported",
    "a = lst_x.__class__": "the name '__class__' is not supported",
}


@pytest.mark.parametrize('line', sorted(PAST_THE_CHECK))
def test_a_program_past_a_weakened_check_still_cannot_reach_python(tmp_path, small, monkeypatch, line):
    "With the data set check switched off, tracing the set's demonstrations still reaches neither `exec`, `open` nor `__import__`."
    monkeypatch.setattr(dataset, 'check_items', lambda items, *a, **k: sum(1 for _ in items))   # the check, weakened to nothing
    marker = tmp_path / 'PWNED'
    data = hostile_set(tmp_path / 'data', small, f"def function(x, lst_x):\n    {line}\n    return\n", {'x': 1, 'lst_x': payload(marker)})
    with pytest.raises(DataError, match="item 'short-0000': a demonstration cannot be traced") as e: load_split(data, 'short')
    assert PAST_THE_CHECK[line] in str(e.value)
    with pytest.raises((ProgramRuntimeError, UnsupportedProgram), match=PAST_THE_CHECK[line].replace('(', r'\(')):
        trace_program(f"def function(lst_x):\n    {line}\n    return\n", {'lst_x': payload(marker)})
    assert not marker.exists()


# --- class 6: memory -----------------------------------------------------------------------------------------------------

LOOP = textwrap.dedent("""\
    def function(x, lst_x):
        cnter_0 = 0
        cond_a = cnter_0 != 98
        while cond_a:
            lst_x.append(x)
            cnter_0 = cnter_0 + 2
            cond_a = cnter_0 != 98
        return
    """)   # in the base grammar: 49 iterations, each printing the list once
TWO_LOOPS = LOOP.replace('    return\n', LOOP.split('\n', 1)[1].replace('cond_a', 'cond_b'))   # 98 list lines, about 400 steps

MEASURE = textwrap.dedent("""\
    import resource, sys, tracemalloc
    from pathlib import Path
    tracemalloc.start()
    try: {run}
    except {error} as e: print('REFUSED', str(e)[:300])
    else: print('DONE')
    print('PYTHON_PEAK', tracemalloc.get_traced_memory()[1], 'RSS_PEAK', int(next(l for l in open('/proc/self/status') if l.startswith('VmHWM:')).split()[1]) * 1024)  # this program's own peak (ru_maxrss keeps a forked parent's)
    """)


def measured(script: str, *args) -> tuple[str, int, int]:
    "Run `script` in a fresh process: (its output, the peak of Python's allocations, the process's peak resident memory), in bytes."
    r = subprocess.run([sys.executable, '-c', script, *map(str, args)], cwd=ROOT, env={**os.environ, 'PYTHONPATH': str(ROOT)},
                       capture_output=True, text=True, timeout=300)
    assert 'PYTHON_PEAK' in r.stdout, r.stdout + r.stderr[-3000:]
    words = r.stdout.split('PYTHON_PEAK')[1].split()
    return r.stdout, int(words[0]), int(words[2])


def test_an_l0_bomb_is_refused_before_tracing_with_peak_memory_far_below_its_need(tmp_path, small):
    "A gzipped item of kilobytes whose 64 demonstrations would each print a 100,000-number list 98 times: refused, memory far below."
    n, demos = 100_000, 64
    items, card = small
    items = {k: [dict(it) for it in v] for k, v in items.items()}
    items['short'][0].update(program=TWO_LOOPS, test_input={'x': 1, 'lst_x': [0] * 5}, demonstrations=[{'x': 1, 'lst_x': [0] * n}] * demos)
    data = save_dataset(items, card, tmp_path / 'data')
    check_program(TWO_LOOPS)   # in the card's grammar: only its inputs are out of bounds
    # what tracing it needs, counted by hand: each demonstration prints the list at each of its 98 appends, 2 characters a number
    need = demos * sum(2 * (n + k) for k in range(1, 99))
    assert (data / 'short.jsonl.gz').stat().st_size < 100_000 and need > 1_200_000_000
    script = MEASURE.format(run="from l0kit.l0.benchmark import L0Benchmark; L0Benchmark().load(Path(sys.argv[1]), 'short')", error='ValueError')
    out, python_peak, rss_peak = measured(script, data)
    assert "REFUSED item 'short-0000': demonstration 0: lst_x holds 100,000 numbers; the data set's lists hold 5 to 10" in out, out
    assert python_peak < need / 8 and rss_peak < need / 4, (python_peak, rss_peak, need)   # measured: 106 MB and 238 MB of 1.26 GB


def test_the_tracer_bounds_characters_with_peak_memory_far_below_the_unbounded_trace(tmp_path):
    "A 200,000-step trace printing a list of 10,000+ numbers at every fourth step stops at the character bound, far before its 3.5 GB."
    (tmp_path / 'p.py').write_text(LOOP.replace('98', '99998'))   # 49,999 iterations
    script = MEASURE.format(run="from l0kit.l0.tracer import trace_program; "
                                "trace_program(open(sys.argv[1]).read(), {'x': 1, 'lst_x': [0] * 10_000}, max_steps=1_000_000)",
                            error='ValueError')   # the list prints as 30,000 characters: under the inputs' own bound
    out, python_peak, rss_peak = measured(script, tmp_path / 'p.py')
    assert 'REFUSED the trace exceeded 2,000,000 characters' in out, out
    need = sum(2 * (10_000 + k) for k in range(1, 50_000))   # the 49,999 list lines alone, by hand: `[0,0,...,1,1]`
    assert need > 3_000_000_000 and python_peak < need / 100 and rss_peak < need / 10, (python_peak, rss_peak, need)


def test_a_card_cannot_raise_the_bounds_it_is_checked_against(tmp_path, small):
    "A card allowing lists of a million numbers is refused: the generator's sizes have ceilings."
    items, card = small
    gen = {**card['config']['gen'], 'max_list_len': 10**6}
    data = save_dataset(items, {**card, 'config': {**card['config'], 'gen': gen}}, tmp_path / 'data')
    with pytest.raises(DataError, match='max_list_len must be at most 1,000, got 1,000,000'): L0Benchmark().load(data, 'short')


def test_a_split_holds_at_most_its_trace_budget(tmp_path, small):
    "`load_split` stops once the demonstration traces it holds pass `max_chars`, naming the file."
    data = save_dataset(*small, tmp_path / 'data')
    held = sum(len(line) for it in load_split(data, 'medium') for t in it['demo_traces'] for line in t)
    load_split(data, 'medium', max_chars=held)
    with pytest.raises(DataError, match=f"medium.jsonl.gz: the demonstration traces of its first 2 items exceed {held - 1:,} characters"):
        load_split(data, 'medium', max_chars=held - 1)


def release(tmp_path, small) -> Path:
    "The small set in the release's format."
    return write_release_format(small[0], tmp_path / 'release')


def test_a_release_id_list_is_bounded_and_each_id_is_listed_once(tmp_path, small):
    d = release(tmp_path, small)
    ids = load_id_list(d / 'index_1.bin')
    (d / 'index_1.bin').write_bytes(pickle.dumps(ids + ids[:1]))
    with pytest.raises(ReleaseFormatError, match=f"the id '{ids[0]}' is listed twice"): import_release(d)
    (d / 'index_1.bin').write_bytes(pickle.dumps(['x'] * 1_000_000))   # one memoised string: 2 MB of pickle
    with pytest.raises(ReleaseFormatError, match='1,000,000 ids; a split holds at most 100,000'): import_release(d)
    with open(d / 'index_1.bin', 'wb') as f: f.truncate(3 * 2**30)   # a sparse file of 3 GB: refused, never read whole
    with pytest.raises(ReleaseFormatError, match='longer than 16,777,216 bytes'): load_id_list(d / 'index_1.bin')


def test_a_release_with_a_repeated_id_or_a_malformed_record_is_refused(tmp_path, small):
    d = release(tmp_path, small)
    lines = (d / 'data.jsonl').read_text().splitlines()
    (d / 'data.jsonl').write_text('\n'.join(lines + lines[:1]) + '\n')
    with pytest.raises(ReleaseFormatError, match=f"data.jsonl:{len(lines) + 1}: the id '{json.loads(lines[0])['id']}' appears twice"): import_release(d)
    rec = json.loads(lines[0]); rec['inputs'] = 'x'
    (d / 'data.jsonl').write_text('\n'.join([json.dumps(rec)] + lines[1:]) + '\n')
    with pytest.raises(ReleaseFormatError, match="data.jsonl:1: 'inputs' and 'traces' are lists"): import_release(d)


def test_release_files_are_read_bounded_and_a_fifo_does_not_hang(tmp_path, small):
    "A sparse data.jsonl of 3 GB without a newline is refused at the line bound; a FIFO is refused at once, not waited on."
    d = release(tmp_path, small)
    (d / 'data.jsonl').unlink()
    with open(d / 'data.jsonl', 'wb') as f: f.truncate(3 * 2**30)
    with pytest.raises(DataError, match='line 1 is longer than'): import_release(d)
    (d / 'data.jsonl').unlink(); os.mkfifo(d / 'data.jsonl')
    rc, out = cli('l0', 'import-release', d, '--out', tmp_path / 'out', timeout=60)
    one_line_refusal(rc, out, 'is not a regular file')


def test_a_release_input_outside_the_release_bounds_is_refused_untraced(tmp_path, small):
    d = release(tmp_path, small)
    lines = (d / 'data.jsonl').read_text().splitlines()
    rec = json.loads(lines[0]); k = next(k for k, v in rec['inputs'][0].items() if isinstance(v, list))
    rec['inputs'][0][k] = [0] * 100_000
    (d / 'data.jsonl').write_text('\n'.join([json.dumps(rec)] + lines[1:]) + '\n')
    with pytest.raises(ProgramRejected, match=f"item '{rec['id']}': the test input: {k} holds 100,000 numbers"): import_release(d)


# --- class 9: one line, not a traceback ----------------------------------------------------------------------------------

@pytest.mark.parametrize('card, says', [({'counts': {'short': 2}}, 'has no generator settings (config.gen)'),
                                        ({'counts': {'short': 2}, 'config': {'gen': 'x'}}, 'has no generator settings'),
                                        ({'config': {'gen': {}}}, "a mapping of split to count under 'counts'"),
                                        ([1, 2], "a mapping of split to count under 'counts'")])
def test_a_card_without_generator_settings_is_one_line(tmp_path, small, card, says):
    data = save_dataset(*small, tmp_path / 'data')
    (data / 'card.json').write_text(json.dumps(card))
    with pytest.raises(DataError, match=re.escape(says)): load_card(data)
    one_line_refusal(*cli('eval', '--data', data, '--split', 'short', '--voters', '1', '--model', 'simulated', '--out', tmp_path / 'run',
                          '--no-progress'), says)


def test_a_card_that_is_a_fifo_or_huge_is_refused_without_hanging(tmp_path, small):
    data = save_dataset(*small, tmp_path / 'data')
    (data / 'card.json').unlink()
    with open(data / 'card.json', 'wb') as f: f.truncate(3 * 2**30)
    with pytest.raises(DatasetError, match='longer than 16,777,216 bytes'): load_card(data)
    (data / 'card.json').unlink(); os.mkfifo(data / 'card.json')
    with pytest.raises(DatasetError, match='not a regular file'): load_card(data)


def test_a_split_file_that_is_a_fifo_is_refused_without_hanging(tmp_path, small):
    data = save_dataset(*small, tmp_path / 'data')
    (data / 'short.jsonl.gz').unlink(); os.mkfifo(data / 'short.jsonl.gz')
    rc, out = cli('eval', '--data', data, '--split', 'short', '--voters', '1', '--model', 'simulated', '--out', tmp_path / 'run',
                  '--no-progress', timeout=60)
    one_line_refusal(rc, out, 'is not a regular file')
