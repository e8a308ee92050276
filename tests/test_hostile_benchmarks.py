"""Hostile inputs, third round (issue 31), for ProcBench, SX, CoRE and the replayed run: a data set, a release file or a
run folder made by someone else. Each test hands the kit one hostile input and checks the harm does not happen: no code
from the file runs in the kit's process, no count is silently wrong, nothing unbounded is built (peak memory measured
in a fresh process under an address-space limit, far below what the input would need), no FIFO is waited on (each
such test runs under a time limit), and every refusal is one line."""
import json, os, re, subprocess, sys, textwrap, time
from pathlib import Path
import pytest
from l0kit.protocol.benchmark import get_benchmark
from l0kit.protocol.config import DataError

ROOT = Path(__file__).resolve().parents[1]
GIB, MIB = 2**30, 2**20


def measured(code: str, timeout: float = 120, limit: int = 2 * GIB) -> tuple[int, str, str, int]:
    "Run `code` in a fresh Python under an address-space limit: (exit status, stdout, stderr, peak resident MiB)."
    prelude = (f"import atexit, resource, sys\nresource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))\n"
               # VmHWM: this program's own peak; ru_maxrss would also count the parent's pages at fork (Linux keeps it across exec)
               "hwm = lambda: int(next(l for l in open('/proc/self/status') if l.startswith('VmHWM:')).split()[1]) // 1024\n"
               "atexit.register(lambda: print(f'PEAK_MIB={hwm()}', file=sys.stderr))\n")
    env = {**os.environ, 'PYTHONPATH': os.pathsep.join([str(ROOT), os.environ.get('PYTHONPATH', '')])}  # this checkout's kit
    r = subprocess.run([sys.executable, '-c', prelude + textwrap.dedent(code)], capture_output=True, text=True, timeout=timeout,
                       env=env, cwd=ROOT)
    err, peak = r.stderr.rsplit('PEAK_MIB=', 1)
    return r.returncode, r.stdout, err, int(peak)


def cli(*args) -> str:
    "Child code that runs `l0kit ARGS` and exits with its status."
    return f"from l0kit.cli.main import main\nsys.exit(main({[str(a) for a in args]!r}))"


def sparse(path: Path, size: int = 4 * GIB, newline_every: int | None = None) -> Path:
    "A file of `size` bytes that takes no disk: zeros, with a newline every `newline_every` bytes if given."
    with open(path, 'wb') as f:
        f.truncate(size)
        for at in range(newline_every or size, size, newline_every or size):
            f.seek(at - 1); f.write(b'\n')
    return path


def one_line(err: str) -> str:
    "The error text, checked to be one line with no traceback."
    assert 'Traceback' not in err and len(err.strip().splitlines()) == 1, err[-2000:]
    return err


# ProcBench: a question the solver would follow without end, or a state without bound (class 6)

def procedure(task: str) -> str:
    from l0kit.procbench.tasks import get_task
    return get_task(task).procedure

BIG_QUESTION = "Strings: [" + ", ".join(f"s{k:02d}abcdef" for k in range(20)) + "]\nIndices: [" + ", ".join(["1"] * 1_200_000) + "]"
ENDLESS = {  # a question of a few characters asking for a procedure without end or a state of a gigabyte
    'Rhythm': ("Sequence 1: 1, 2\nSequence 2: a, b\nN: 100000000", "the states pass 2,000,000 characters"),
    'Decode': ("Sentence: 1x999999999 0x999999999", "Decode: the piece 1x999999999 is longer than the solver's 2,000,000"),
    'FindCyclic': ("String: abc\nCommand: ['a', '100000000000']", "the procedure takes more than 10,000 steps"),
    'Cumulate': ("N = 3\nOperations: [" + ", ".join(["Multiply 99999"] * 6000) + "]", "a number of more than 4,000 digits"),
}


def test_procbench_check_refuses_a_3_6_mb_question_and_endless_procedures_in_little_memory(tmp_path):
    "The issue's 3.6 MB question, and four short ones that ask for 10**8 steps or a 1 GB state: each one disagreement, in one line, the rest checked."
    from l0kit.procbench.dataset import generate_item
    assert 3.5e6 < len(BIG_QUESTION) < 3.7e6 and all(len(q) < 100_000 for q, _ in ENDLESS.values())
    good = generate_item('Sort', 3, 0)
    rows = [{'prompt': good['prompt'], 'task_name': 'task01', 'problem_name': good['id'], 'label': good['label']}]
    for task, q in [('Copy', BIG_QUESTION)] + [(t, q) for t, (q, _) in ENDLESS.items()]:
        rows.append({'prompt': f"{procedure(task)}\n\n[Question]\n{q}", 'task_name': task, 'problem_name': f"{task}_0000",
                     'label': {'init': '', 'intermediate': ['x'], 'final': 'y'}})
    path = tmp_path / 'release.jsonl'
    path.write_text(''.join(json.dumps(r) + '\n' for r in rows))
    t0 = time.perf_counter()
    rc, out, err, peak = measured(cli('procbench', 'check', path))
    assert rc == 1 and out.startswith('1 of 6 items agree with the kit'), (rc, out[:500], err[-2000:])
    assert time.perf_counter() - t0 < 60 and peak < 400, peak   # unbounded: a MemoryError at 2 GiB (each of the five)
    lines = out.splitlines()[1:]
    assert len(lines) == 5 and all(len(l) < 400 for l in lines)
    assert 'Copy: the question holds 3,6' in out and 'the solver reads at most 100,000' in out
    for task, (_, says) in ENDLESS.items(): assert any(l.strip().startswith(f'{task}_0000') and says in l for l in lines), (task, out)


def test_the_procbench_simulated_model_fails_only_the_prompts_it_cannot_solve(tmp_path):
    "A data set with the 3.6 MB question and an endless one among its items: those two are failed requests, the others answered."
    bench = get_benchmark('procbench')
    data = tmp_path / 'data'
    bench.generate(data, limit=1)
    items = [json.loads(l) for l in (data / 'short.jsonl').read_text().splitlines()][:3]
    for k, (task, q) in enumerate([('task05', BIG_QUESTION), ('task12', ENDLESS['Rhythm'][0])]):
        items.append({**items[0], 'id': f'hostile-{k}', 'task': task, 'prompt': f"{procedure(task)}\n\n[Question]\n{q}", 'question': q})
    (data / 'short.jsonl').write_text(''.join(json.dumps(it) + '\n' for it in items))
    rc, out, err, peak = measured(cli('eval', '--data', data, '--split', 'short', '--model', 'simulated', '--out', tmp_path / 'run', '--no-progress'))
    assert peak < 500, (peak, err[-2000:])
    recs = {r['id']: r for r in map(json.loads, (tmp_path / 'run' / 'responses.jsonl').read_text().splitlines())}
    assert sorted(recs) == sorted(it['id'] for it in items), (rc, out, err[-2000:])
    assert [recs[f'hostile-{k}']['error'][:60] for k in (0, 1)] == ['procbench-simulated cannot answer: Copy: the question holds 3'[:60],
                                                                  'procbench-simulated cannot answer: the states pass 2,000,000 c'[:60]]
    assert all(recs[it['id']]['error'] is None and recs[it['id']]['response'] for it in items[:3])


def test_a_procbench_split_that_is_a_fifo_is_refused_at_once(tmp_path):
    "A split file that is a FIFO: a plain open() would wait forever for a writer; refused in one line."
    data = tmp_path / 'data'
    get_benchmark('procbench').generate(data, limit=1)
    (data / 'short.jsonl').unlink(); os.mkfifo(data / 'short.jsonl')
    rc, out, err, peak = measured(cli('eval', '--data', data, '--split', 'short', '--model', 'simulated', '--out', tmp_path / 'run', '--no-progress'), timeout=60)
    assert rc == 2 and 'is not a regular file' in one_line(err) and not (tmp_path / 'run').exists()


# SX: the step counter's rules are the kit's (class 1); the data folder's files are bounded (class 6)

def test_an_l0_programs_len_rebound_to_exec_is_refused_and_its_payload_never_runs(tmp_path):
    "The issue's `len = exec`, in an L0 item whose step count SX is asked for: refused by the counter's own rules, nothing written."
    from l0kit.sx.l0steps import l0_step_counts
    marker = tmp_path / 'MARKER'
    program = f"def function(x):\n    len = exec\n    len(\"open({str(marker)!r}, 'w').write('pwned')\")\n    return\n"
    counts = l0_step_counts([dict(id='p', split='s', program=program, test_input={'x': 1}, steps=3)])
    assert counts.error.tolist() == ["UnsupportedProgram: line 2: the program rebinds the built-in `len`, which the counter's own code calls; rename it"]
    assert not marker.exists()


@pytest.mark.parametrize('program,says', [
    ("def len(v):\n    return 0\ndef f(x):\n    return 1 < x < 3\n", "rebinds the built-in `len`"),   # the prelude's chained comparison calls len
    ("def f(x):\n    for range in [x]:\n        pass\n    return 1 < x < 3\n", "rebinds the built-in `range`"),
    ("def f(x):\n    globals()['run_steps'] = -100\n    return x\n", "uses `globals`"),
    ("def f(x):\n    return f.__globals__\n", "uses `__globals__`"),
    ("import builtins\ndef f(x):\n    builtins.len = lambda v: 0\n    return 1 < x < 3\n", "imports 'builtins'"),
])
def test_a_program_cannot_reach_the_counter(program, says):
    "A program that would make its own count wrong without a sign (shadowing what the counter calls, writing run_steps by name) is refused."
    from l0kit.sx.stepcount import UnsupportedProgram, count_steps
    with pytest.raises(UnsupportedProgram, match=re.escape(says)): count_steps(program, 'f', (2,))


def test_a_16_mb_program_is_refused_before_it_is_parsed():
    "A 16 MiB program (an item line's limit): refused at once; parsing it would need more than 3 GB."
    rc, out, err, peak = measured("""
        from l0kit.sx.stepcount import UnsupportedProgram, count_steps
        try: count_steps('x = 1\\n' * 2_790_000 + 'def f():\\n    return 1\\n', 'f', ())
        except UnsupportedProgram as e: print(e)
    """)
    assert rc == 0 and out == "the program holds 16,740,022 characters; the counter reads at most 100,000\n" and peak < 300, (out, err[-1000:], peak)


def sx_folder(tmp_path: Path) -> Path:
    from l0kit.sx.stepcount import SEMANTICS_VERSION
    d = tmp_path / 'sx'; d.mkdir()
    (d / 'card.json').write_text(json.dumps({'semantics': SEMANTICS_VERSION, 'splits': {'easy': 'easy.jsonl'}}))
    (d / 'easy.jsonl').write_text(json.dumps({'id': 'a', 'task': 'reasoning'}) + '\n')
    return d


@pytest.mark.parametrize('what', ['card', 'split'])
def test_an_sx_file_that_is_a_fifo_is_refused_at_once(tmp_path, what):
    "The card or a split of an SX folder that is a FIFO: refused in one line, not waited on."
    d = sx_folder(tmp_path)
    name = 'card.json' if what == 'card' else 'easy.jsonl'
    (d / name).unlink(); os.mkfifo(d / name)
    rc, out, err, peak = measured(f"from l0kit.protocol.benchmark import get_benchmark\nget_benchmark('sx').load({str(d)!r}, 'easy')", timeout=60)
    assert rc == 1 and 'is not a regular file' in err.splitlines()[-1]


def test_a_sparse_sx_card_is_refused_small(tmp_path):
    "A 4 GiB sparse `card.json`: read whole it is a MemoryError; refused at 16 MiB, in one line."
    d = sx_folder(tmp_path)
    sparse(d / 'card.json')
    rc, out, err, peak = measured(cli('eval', '--benchmark', 'sx', '--data', d, '--split', 'easy', '--model', 'simulated', '--out', tmp_path / 'run', '--no-progress'))
    assert rc == 2 and 'is longer than 16,777,216 bytes' in one_line(err) and peak < 300, (err[-1000:], peak)


def test_an_sx_split_past_64_mib_is_refused(tmp_path):
    "A split of 70 lines of 1 MiB each (valid JSON): refused at the split bound, naming it."
    d = sx_folder(tmp_path)
    line = json.dumps({'id': 'a', 'task': 'reasoning', 'pad': 'x' * MIB}) + '\n'
    with open(d / 'easy.jsonl', 'w') as f:
        for _ in range(70): f.write(line)
    with pytest.raises(DataError, match='more than 67,108,864 characters'): get_benchmark('sx').load(d, 'easy')


# CoRE: a problem set from elsewhere runs only in the sandbox (class 1); published files and items are bounded (class 6)

def test_a_core_problem_set_from_elsewhere_never_runs_in_the_kits_process(tmp_path):
    "A problems.yaml whose implementation writes a file when it is defined: built with the kit's defaults, it runs in the sandbox only."
    from l0kit.corebench.dataset import CoreDataError, build_core_set, load_problem_set
    marker = tmp_path / 'MARKER'
    code = f"open({str(marker)!r}, 'w').write('pwned')\ndef f(x):\n    return x + 1\n"
    (tmp_path / 'problems.yaml').write_text(json.dumps([{'id': 'p', 'tests': ['1', '2'], 'implementations': [
        {'func_name': 'f', 'code': code}, {'func_name': 'f', 'code': 'def f(x):\n    return x + 1\n'}]}]))
    with pytest.raises(CoreDataError, match='implementation 0 fails on 1: PermissionError'):
        build_core_set(problems=load_problem_set(tmp_path / 'problems.yaml'))
    assert not marker.exists()


def test_core_published_files_that_are_a_fifo_or_sparse_are_refused_small(tmp_path):
    "`core_io.json` a FIFO: refused, not waited on; a 4 GiB sparse `core_qa.json`: refused at 64 MiB, in one line, in little memory."
    d = tmp_path / 'core'; d.mkdir()
    os.mkfifo(d / 'core_io.json'); (d / 'core_qa.json').write_text('[]')
    args = ('eval', '--benchmark', 'core', '--data', d, '--split', 'test', '--model', 'simulated', '--out', tmp_path / 'run', '--no-progress')
    rc, out, err, peak = measured(cli(*args), timeout=60)
    assert rc == 2 and 'core_io.json is not a regular file' in one_line(err)
    (d / 'core_io.json').unlink(); (d / 'core_io.json').write_text('[]')
    sparse(d / 'core_qa.json')
    rc, out, err, peak = measured(cli(*args))
    assert rc == 2 and 'core_qa.json is longer than 67,108,864 bytes' in one_line(err) and peak < 300, (err[-1000:], peak)


def test_a_core_items_16_mb_output_is_not_parsed_when_scoring():
    "An item whose expected output is a 16 MB list literal: scored without parsing it (ast.literal_eval of it needs more than 3 GB)."
    rc, out, err, peak = measured("""
        from l0kit.protocol.benchmark import get_benchmark
        out = '[' + '0,' * 8_000_000 + ']'
        item = dict(id='x', kind='io', problem_id='p', impl_id='p_0', func_name='f', input='1', output=out, source_code='def f(x): ...')
        r = get_benchmark('core').read(item, "# Answer:\\n```python\\nassert f(1) == [0, 0]\\n```")
        print(r.correct, r.answer)
    """)
    assert rc == 0 and out == "False [0, 0]\n" and peak < 300, (out, err[-1000:], peak)


# The replayed run (class 6)

@pytest.mark.parametrize('where', ['file', 'run folder'])
def test_a_replayed_fifo_is_refused_at_once(tmp_path, where):
    "`replay:FIFO`, or a run folder whose responses.jsonl is a FIFO: one line, not waited on."
    target = tmp_path / 'responses.jsonl'
    os.mkfifo(target)
    spec = f"replay:{target if where == 'file' else tmp_path}"
    rc, out, err, peak = measured(f"from l0kit.protocol.models import load_model\nload_model({spec!r})", timeout=60)
    assert rc == 1 and err.splitlines()[-1].endswith('is not a regular file (a FIFO, a device or a socket); the kit reads data only from regular files')


def test_a_sparse_responses_file_is_refused_small(tmp_path):
    "A 3 GiB sparse responses.jsonl with a newline every 8 MiB (lines under the line bound): refused at its first line, in little memory."
    run = tmp_path / 'run'; run.mkdir()
    sparse(run / 'responses.jsonl', 3 * GIB, newline_every=8 * MIB)
    data = tmp_path / 'data'
    get_benchmark('procbench').generate(data, limit=1)
    rc, out, err, peak = measured(cli('eval', '--data', data, '--split', 'short', '--model', f'replay:{run}', '--out', tmp_path / 'r2', '--no-progress'))
    assert rc == 2 and 'responses.jsonl:1 is not valid JSON' in one_line(err) and peak < 300, (err[-1000:], peak)


def test_a_replay_keeps_at_most_its_bound_of_responses(tmp_path, monkeypatch):
    "The bound on the responses a replay keeps, lowered to 1,000 here: the 1,001st refuses the file in one line."
    import l0kit.backends.replay as replay
    monkeypatch.setattr(replay, 'MAX_REPLAY_RECORDS', 1000)
    f = tmp_path / 'responses.jsonl'
    f.write_text(''.join(json.dumps({'id': str(k), 'voter': 0, 'response': 'x', 'extra': 'y' * 100}) + '\n' for k in range(1001)))
    with pytest.raises(replay.ModelUnavailable, match='holds more than 1,000 recorded responses'): replay.read_recorded(f)
    f.write_text(''.join(json.dumps({'id': str(k), 'voter': 0, 'response': 'x', 'extra': 'y' * 100}) + '\n' for k in range(1000)))
    kept = replay.read_recorded(f)
    assert len(kept) == 1000 and 'extra' not in kept[('0', 0)]   # only what the replay answers with is kept
