"""Hostile inputs, third round (issue 31), the run folder and the load path: item ids that repeat or are numbers, a
resume with fewer voters, a folder or `.lock` of the user's, links and hard links in a run folder, answers and lines
past the reader's bound, and run.json / card fields of the wrong type. Every expected value is counted by hand."""
import gzip, json, os, shutil, subprocess, sys, textwrap
from pathlib import Path
import pytest

from l0kit.protocol.benchmark import Benchmark, get_benchmark
from l0kit.cli.main import main
from l0kit.protocol.config import DataError
from l0kit.protocol.models import Completion, Model
from l0kit.runs.runner import RunConfig, TURNS_DIR, run_eval
from l0kit.runs.format import MAX_RECORD_BYTES, RESPONSES_FILE, iter_records, read_records, scan_lines

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope='module')
def l0_data(tmp_path_factory):
    "A small generated L0 set: 4 programs in each of short and medium."
    d = tmp_path_factory.mktemp('l0') / 'data'
    get_benchmark('l0').generate(d, limit=4, preset='small')
    return d


def rows(split_file: Path) -> list:
    with gzip.open(split_file, 'rt') as f: return [json.loads(l) for l in f]


def with_short(src: Path, dst: Path, items: list) -> Path:
    "A copy of the L0 set `src` whose short split holds `items`."
    shutil.copytree(src, dst)
    with gzip.open(dst / 'short.jsonl.gz', 'wt') as f: f.write(''.join(json.dumps(it) + '\n' for it in items))
    return dst


def cli(capsys, *args) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def one_line(err: str) -> str:
    lines = [l for l in err.splitlines() if l.strip()]
    assert len(lines) == 1 and 'Traceback' not in err, err[:2000]
    return lines[0]


def evaluate(data, out, *extra):
    return ['eval', '--data', data, '--split', 'short', '--model', 'simulated:rate=0.2,seed=1', '--out', out, '--no-progress', *extra]


# Class 2: silently wrong numbers

def test_an_id_shared_by_two_items_is_refused_at_load(tmp_path, l0_data, capsys):
    "Three programs, the third with the first's id: eval and report refuse the split in one line naming the id; no run folder is made."
    items = rows(l0_data / 'short.jsonl.gz')[:3]
    items[2]['id'] = items[0]['id']
    data = with_short(l0_data, tmp_path / 'data', items)
    code, out, err = cli(capsys, *evaluate(data, tmp_path / 'run', '--voters', '2'))
    assert code == 2 and f"items 1 and 3 share the id '{items[0]['id']}'" in one_line(err)
    assert not (tmp_path / 'run').exists()
    with pytest.raises(DataError, match='share the id'): get_benchmark('l0').load(data, 'all')  # every loader, every split


def test_an_id_that_is_a_number_is_refused_at_load(tmp_path, l0_data, capsys):
    "An item whose id is the number 7: refused in one line naming it, not asked again on every eval."
    items = rows(l0_data / 'short.jsonl.gz')[:2]
    items[1]['id'] = 7
    data = with_short(l0_data, tmp_path / 'data', items)
    code, _, err = cli(capsys, *evaluate(data, tmp_path / 'run', '--voters', '1'))
    assert code == 2 and 'item 2 has id 7 (int); every item id is a non-empty string' in one_line(err)


def test_a_plugin_benchmarks_load_is_checked_too(tmp_path):
    "A benchmark written elsewhere (its own `load`, two items 'a'): its load refuses them, whoever calls it."
    class Minimal(Benchmark):  # the three other required hooks, none of which this test calls
        def build_prompt(self, item, voter=0, seed=0): raise AssertionError('not called')
        def read(self, item, response, **options): raise AssertionError('not called')
        def reference(self, item): raise AssertionError('not called')
    class Elsewhere(Minimal):
        name = 'elsewhere'
        def load(self, data_dir, split='x', limit=None): return [{'id': 'a', 'split': split}, {'id': 'a', 'split': split}]
    with pytest.raises(DataError, match=r"elsewhere data_dir '/d' split 'x': items 1 and 2 share the id 'a'"): Elsewhere().load('/d')
    class Fine(Minimal):
        name = 'fine'
        def load(self, data_dir, split='x', limit=None): return [{'id': 'a'}, {'id': 'b'}]
    class Later(Fine):  # a subclass's own load, adding to its parent's checked items: checked too
        def load(self, data_dir, split='x', limit=None): return super().load(data_dir, split) + [{'id': 'b'}]
    assert Fine().load('/d') == [{'id': 'a'}, {'id': 'b'}]
    with pytest.raises(DataError, match="items 2 and 3 share the id 'b'"): Later().load('/d')


def test_a_resume_with_fewer_voters_is_refused_and_run_json_is_kept(tmp_path, l0_data, capsys):
    "5 voters on 4 programs (20 responses), then --voters 3: refused; run.json still says 5; --voters 7 extends it to 28."
    run = tmp_path / 'run'
    assert cli(capsys, *evaluate(l0_data, run, '--voters', '5'))[0] == 0
    code, _, err = cli(capsys, *evaluate(l0_data, run, '--voters', '3'))
    assert code == 2 and 'holds a run of 5 voters; resume it with --voters 5' in one_line(err)
    assert json.loads((run / 'run.json').read_text())['run_config']['voters'] == 5
    assert len((run / RESPONSES_FILE).read_text().splitlines()) == 20
    code, out, _ = cli(capsys, *evaluate(l0_data, run, '--voters', '7'))
    assert code == 0 and out.startswith('28/28 responses') and '(8 new, 20 already there' in out
    assert json.loads((run / 'run.json').read_text())['run_config']['voters'] == 7


def test_a_report_reads_only_the_voters_run_json_records(tmp_path, l0_data, capsys):
    "A folder an older kit resumed with fewer voters: run.json says 3, the file holds 5 voters x 4 programs; the report scores 4 x 3 = 12."
    run = tmp_path / 'run'
    assert cli(capsys, *evaluate(l0_data, run, '--voters', '5'))[0] == 0
    meta = json.loads((run / 'run.json').read_text())
    meta['run_config']['voters'] = 3
    (run / 'run.json').write_text(json.dumps(meta))
    code, out, _ = cli(capsys, 'report', run)
    assert code == 0
    assert '| 12 responses scored' in out and 'voters 3, seed 0' in out and 'Table 1 (k = 3)' in out
    assert '8 response(s) of voters past the 3 its run.json records are left out' in out
    code, out, _ = cli(capsys, 'report', run, '--json')
    assert json.loads(out)['reports'][0]['responses'] == 12


# Class 3: the user's files

def test_a_users_lock_file_is_never_truncated(tmp_path, l0_data, capsys):
    "A folder holding only the user's own `.lock`: eval refuses in one line and the file keeps its bytes."
    run = tmp_path / 'mine'; run.mkdir()
    (run / '.lock').write_text('my notes, not a lock\n')
    code, _, err = cli(capsys, *evaluate(l0_data, run, '--voters', '1'))
    assert code == 2 and 'is not an l0kit lock' in one_line(err)
    assert (run / '.lock').read_text() == 'my notes, not a lock\n' and sorted(os.listdir(run)) == ['.lock']
    code, _, err = cli(capsys, *evaluate(l0_data, run, '--voters', '1', '--force'))  # --force does not make it the kit's either
    assert code == 2 and (run / '.lock').read_text() == 'my notes, not a lock\n'


def test_out_must_be_a_run_folder_an_empty_one_or_forced(tmp_path, l0_data, capsys):
    "A folder of the user's files: refused without --force; with it the run is written beside them and nothing of theirs changes."
    out = tmp_path / 'thesis'; out.mkdir()
    (out / 'chapter1.tex').write_text('\\chapter{One}')
    code, _, err = cli(capsys, *evaluate(l0_data, out, '--voters', '1'))
    assert code == 2 and "holds files that are not an l0kit run's (e.g. 'chapter1.tex')" in one_line(err)
    assert sorted(os.listdir(out)) == ['chapter1.tex']
    code, out_text, _ = cli(capsys, *evaluate(l0_data, out, '--voters', '1', '--force'))
    assert code == 0 and out_text.startswith('4/4 responses')
    assert (out / 'chapter1.tex').read_text() == '\\chapter{One}'
    assert cli(capsys, *evaluate(l0_data, out, '--voters', '1'))[0] == 0  # now a run folder: resumed without --force
    assert cli(capsys, *evaluate(l0_data, tmp_path / 'new' / 'run', '--voters', '1'))[0] == 0  # a new folder needs nothing


# Class 4: links

def test_a_turns_link_to_another_run_is_not_written_through(tmp_path):
    "Run B's `turns` is a link to run A's: B's eval is refused in one line and A's turns keep every byte."
    from tests.test_turns import Countdown, Scripted
    bench = Countdown()
    run_eval(bench, Scripted(bench, {('c3', 0): ['3 1']}), bench.load(), tmp_path / 'a', RunConfig(voters=1), progress=False)
    a_turns = (tmp_path / 'a' / TURNS_DIR / RESPONSES_FILE).read_bytes()
    assert len(a_turns.splitlines()) == 3  # c3: a wrong turn and a right one; c5: one right turn
    (tmp_path / 'b').mkdir(); (tmp_path / 'b' / TURNS_DIR).symlink_to(tmp_path / 'a' / TURNS_DIR)
    with pytest.raises(Exception, match='is a symbolic link') as e:
        run_eval(bench, Scripted(bench, {('c3', 0): ['3 2', '1']}), bench.load(), tmp_path / 'b', RunConfig(voters=1), progress=False)
    assert '\n' not in str(e.value)
    assert (tmp_path / 'a' / TURNS_DIR / RESPONSES_FILE).read_bytes() == a_turns


def test_a_hard_linked_responses_file_is_not_appended_to(tmp_path, l0_data, capsys):
    "B is a `cp -al` of A (run.json copied, responses.jsonl a hard link): resuming B with more voters is refused, A keeps its 4 lines."
    a, b = tmp_path / 'a', tmp_path / 'b'
    assert cli(capsys, *evaluate(l0_data, a, '--voters', '1'))[0] == 0
    before = (a / RESPONSES_FILE).read_bytes()
    b.mkdir(); shutil.copy(a / 'run.json', b / 'run.json'); os.link(a / RESPONSES_FILE, b / RESPONSES_FILE)
    code, _, err = cli(capsys, *evaluate(l0_data, b, '--voters', '2'))
    assert code == 2 and 'has 1 other hard link(s)' in one_line(err)
    assert (a / RESPONSES_FILE).read_bytes() == before and len(before.splitlines()) == 4


def test_a_hard_linked_lock_is_not_written(tmp_path):
    "A `.lock` hard-linked to a file elsewhere: refused, the other file untouched."
    from l0kit.runs.format import RunError, run_lock
    elsewhere = tmp_path / 'elsewhere.txt'; elsewhere.write_text('')
    (tmp_path / 'run').mkdir(); os.link(elsewhere, tmp_path / 'run' / '.lock')
    with pytest.raises(RunError, match='other hard link'): run_lock(tmp_path / 'run').__enter__()
    assert elsewhere.read_text() == ''


def test_a_symlinked_lock_is_not_followed(tmp_path):
    "A `.lock` that is a symbolic link to an empty file elsewhere (which would pass as a lock by its content): refused, untouched."
    from l0kit.runs.format import RunError, run_lock
    elsewhere = tmp_path / 'elsewhere.txt'; elsewhere.write_text('')
    (tmp_path / 'run').mkdir(); (tmp_path / 'run' / '.lock').symlink_to(elsewhere)
    with pytest.raises(RunError, match='is a symbolic link'): run_lock(tmp_path / 'run').__enter__()
    assert elsewhere.read_text() == ''


# Class 5: one oversized answer

class Huge(Model):
    "Answers voter 0 of the first item with 17 MiB of 'x' (past the 16 MiB line bound), everything else with 'L2,'."
    spec, name, simulated = 'huge', 'huge', True
    def generate(self, prompts, params=None, seeds=None):
        return [[Completion('x' * (17 * 2**20) if (p.pair['id'], p.pair['voter']) == (self.first, 0) else 'L2,',
                            prompt_tokens=1, completion_tokens=1, latency_s=0.0, finish_reason='stop')]
                for p in prompts]


def test_a_server_answer_past_the_bound_is_cut_to_fit(tmp_path, l0_data):
    "One 17 MiB answer among 4 x 2: its record is cut to the bound (finish_reason length, a note), and the run reads back 8 records, 0 bad."
    bench = get_benchmark('l0')
    items = bench.load(l0_data, 'short')
    model = Huge(); model.first = items[0]['id']
    run = tmp_path / 'run'
    run_eval(bench, model, items, run, RunConfig(voters=2), data=str(l0_data), split='short', progress=False)
    lines = (run / RESPONSES_FILE).read_bytes().split(b'\n')[:-1]
    assert len(lines) == 8 and max(map(len, lines)) <= MAX_RECORD_BYTES == 16 * 2**20
    big = [json.loads(l) for l in lines if len(l) > 1000]
    assert len(big) == 1 and big[0]['finish_reason'] == 'length' and 'cut' in big[0]['meta']
    assert set(big[0]['response']) == {'x'} and MAX_RECORD_BYTES - 1000 < len(big[0]['response']) < MAX_RECORD_BYTES
    got = read_records(run)
    assert (len(got.records), got.bad) == (8, [])


def test_one_line_past_the_bound_is_one_bad_line_wherever_it_falls(tmp_path):
    "A record, a line of bound + 1 bytes, a record of exactly the bound: for every chunk size the middle line alone is bad."
    run = tmp_path / 'run'; run.mkdir()
    first = b'{"id": "a", "voter": 0, "response": "L2,"}'
    pad = b'{"id": "c", "voter": 0, "response": "'
    exact = pad + b'y' * (MAX_RECORD_BYTES - len(pad) - 2) + b'"}'
    assert len(exact) == MAX_RECORD_BYTES
    (run / RESPONSES_FILE).write_bytes(first + b'\n' + b'z' * (MAX_RECORD_BYTES + 1) + b'\n' + exact + b'\n')
    for chunk in (1 << 20, 1 << 22, 3_000_001, 7 << 20, 40 << 20):
        got = [(no, None if raw is None else len(raw)) for no, raw in scan_lines(run, chunk)]
        assert got == [(1, len(first)), (2, None), (3, MAX_RECORD_BYTES)], chunk
    recs = list(iter_records(run))
    assert [(no, getattr(r, 'id', None)) for no, r in recs] == [(1, 'a'), (2, None), (3, 'c')]
    assert 'longer than 16,777,216 bytes' in str(recs[1][1])


def test_an_endless_line_is_read_in_bounded_memory(tmp_path):
    "A 512 MiB line of zeros (a sparse file) then one record: peak memory stays near the bound, and the record after it is read."
    run = tmp_path / 'run'; run.mkdir()
    with open(run / RESPONSES_FILE, 'wb') as f:
        f.truncate(512 * 2**20); f.seek(0, 2); f.write(b'\n{"id": "a", "voter": 0, "response": "L2,"}\n')
    code = textwrap.dedent(f"""
        import tracemalloc
        from l0kit.runs.format import read_records
        tracemalloc.start()
        got = read_records({str(run)!r})
        print(len(got.records), len(got.bad), tracemalloc.get_traced_memory()[1])
    """)
    r = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, cwd=ROOT, env={**os.environ, 'PYTHONPATH': str(ROOT)})
    records, bad, peak = map(int, r.stdout.split())
    assert (records, bad) == (1, 1), r.stderr
    assert peak < 4 * MAX_RECORD_BYTES, peak  # the line is 32 times the bound; a reader that held it would need 512 MiB


def test_a_batch_line_past_the_bound_is_one_bad_line(tmp_path, l0_data, capsys):
    "3 requests; results: one fine, one answer that fits the results line but not a record (cut), one line past the bound (left out, pending)."
    run, spec = tmp_path / 'run', 'openai:http://not-contacted/v1#m'
    base = evaluate(l0_data, run, '--voters', '1', '--limit', '3')
    base[base.index('--model') + 1] = spec
    assert cli(capsys, *base, '--export-batch', tmp_path / 'batch.jsonl')[0] == 0
    ids = [json.loads(l)['custom_id'] for l in (tmp_path / 'batch.jsonl').read_text().splitlines()]
    assert len(ids) == 3
    def result(cid, text):
        return json.dumps({'custom_id': cid, 'response': {'status_code': 200, 'body': {'choices': [{'message': {'content': text}}]}}})
    envelope = len(result(ids[1], '').encode())
    fits = result(ids[1], 'w' * (MAX_RECORD_BYTES - envelope))  # exactly the bound: read, but its record (hashes, tokens) is longer
    assert len(fits.encode()) == MAX_RECORD_BYTES
    (tmp_path / 'results.jsonl').write_text(result(ids[0], 'L2,') + '\n' + fits + '\n' + result(ids[2], 'v' * MAX_RECORD_BYTES) + '\n')
    code, out, err = cli(capsys, *base, '--import-batch', tmp_path / 'results.jsonl')
    assert code == 1 and '2 responses added' in out and 'line 3 is longer than the run format' in err
    lines = (run / RESPONSES_FILE).read_bytes().split(b'\n')[:-1]
    assert len(lines) == 2 and max(map(len, lines)) <= MAX_RECORD_BYTES
    cut = json.loads(lines[1])
    assert cut['finish_reason'] == 'length' and MAX_RECORD_BYTES - 1000 < len(cut['response']) < MAX_RECORD_BYTES - envelope
    assert cli(capsys, *base, '--export-batch', tmp_path / 'again.jsonl')[0] == 0
    assert [json.loads(l)['custom_id'] for l in (tmp_path / 'again.jsonl').read_text().splitlines()] == [ids[2]]


# Class 9: fields of the wrong type

@pytest.mark.parametrize('field, value, says', [
    ('run_config', [5], 'run_config must be a mapping'), ('shard', 5, 'shard must be a string'),
    ('shard', 'x', "shard must be K/N, got 'x'"), ('resumes', 'abc', 'resumes must be a list'),
    ('benchmark', ['l0'], 'benchmark must be a string'), ('format', '2', "has format '2'"),
    ('benchmark_config', 'a', 'benchmark_config must be a mapping'), ('simulated', 'yes', 'simulated must be true or false'),
    ('limit', 2.5, 'limit must be an integer'), ('run_config', {'voters': '3'}, "run_config.voters must be a positive integer, got '3'"),
])
def test_run_json_fields_of_the_wrong_type_are_one_line(tmp_path, l0_data, capsys, field, value, says):
    "report and a resume of a run.json with one field of the wrong type: exit 2, one line naming the field."
    run = tmp_path / 'run'
    assert cli(capsys, *evaluate(l0_data, run, '--voters', '1'))[0] == 0
    meta = json.loads((run / 'run.json').read_text())
    meta[field] = value
    (run / 'run.json').write_text(json.dumps(meta))
    for args in (['report', run], evaluate(l0_data, run, '--voters', '1')):
        code, _, err = cli(capsys, *args)
        assert code == 2 and says in one_line(err), (args[0], err)


def test_a_card_whose_benchmark_is_a_list_is_one_line(tmp_path, l0_data, capsys):
    "card.json says benchmark: ['l0', 'sx']: eval exits 2 with one line naming the field."
    data = tmp_path / 'data'; shutil.copytree(l0_data, data)
    card = json.loads((data / 'card.json').read_text()); card['benchmark'] = ['l0', 'sx']
    (data / 'card.json').write_text(json.dumps(card))
    code, _, err = cli(capsys, *evaluate(data, tmp_path / 'run', '--voters', '1'))
    assert code == 2 and "benchmark must be a benchmark's name, got ['l0', 'sx']" in one_line(err)
