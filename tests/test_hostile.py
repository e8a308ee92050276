"""Hostile inputs, second round (issue 24): what a data set, a results file or a run folder from elsewhere can do.
Each test hands the kit one hostile input of a class the issue names and checks the harm does not happen: no code from
a data set runs, no file outside the output folder is written, no answer is rewritten, no link is followed, nothing
unbounded is built, no control byte reaches the terminal, no non-number reaches a run folder, no count is wrong."""
import gzip, json, os, shutil, signal, subprocess, sys, time, tracemalloc
from pathlib import Path
import pytest

os.environ.setdefault('HF_DATASETS_OFFLINE', '1'); os.environ.setdefault('HF_HUB_OFFLINE', '1')
from l0kit.protocol.benchmark import get_benchmark
from l0kit.cli.main import main
from l0kit.protocol.config import ConfigError, DataError
from l0kit.runs.runner import RunConfig, run_eval
from l0kit.runs.format import read_records

PWN = "x'); import os; os.system('touch PWNED'); ('"  # a split name that is Python if written unescaped


@pytest.fixture(scope='module')
def l0_data(tmp_path_factory):
    "A small generated L0 set (short and medium, 4 programs each)."
    d = tmp_path_factory.mktemp('l0') / 'data'
    get_benchmark('l0').generate(d, limit=4, preset='small')
    return d


def renamed_split(src: Path, dst: Path, old: str, new: str) -> Path:
    "A copy of an L0 data set with split `old` renamed `new` (file and card): a set as someone else named it."
    shutil.copytree(src, dst)
    card = json.loads((dst / 'card.json').read_text())
    card['counts'] = {(new if k == old else k): v for k, v in card['counts'].items()}
    card['splits'] = [new if s == old else s for s in card['splits']]
    (dst / 'card.json').write_text(json.dumps(card))
    if new == new.strip('/') and '/' not in new: (dst / f'{old}.jsonl.gz').rename(dst / f'{new}.jsonl.gz')
    return dst


def l0_run(data: Path, run: Path, voters: int = 2, **kw):
    bench = get_benchmark('l0')
    items = bench.load(data, 'short')
    return run_eval(bench, bench.simulated_model('rate=0.2,seed=1'), items, run, RunConfig(voters=voters), data=str(data.resolve()),
                    split='short', progress=False, **kw)


# 1. Code from a data set: split names become Python, YAML and file names of an lm-eval task

def test_a_dotted_split_exports_and_lm_eval_loads_it(tmp_path, l0_data):
    "`easy.v1` works end to end: the glue module is `l0bench_easy_v1.py` and lm-eval itself loads and scores the task."
    from lm_eval import simple_evaluate
    from lm_eval.api.model import LM
    from lm_eval.tasks import TaskManager
    data = renamed_split(l0_data, tmp_path / 'data', 'short', 'easy.v1')
    assert main(['export', 'lm-eval', '--data', str(data), '--split', 'easy.v1', '--out', str(tmp_path / 'tasks'), '--voters', '1']) == 0
    assert sorted(p.name for p in (tmp_path / 'tasks').iterdir()) == [
        'l0bench_easy.v1.docs.jsonl', 'l0bench_easy.v1.items.jsonl', 'l0bench_easy.v1.kit.json', 'l0bench_easy.v1.yaml', 'l0bench_easy_v1.py']
    class Reference(LM):  # answers every document with its reference trace: accuracy 1 if lm-eval scores through the kit
        def generate_until(self, requests): return [r.doc['reference'] for r in requests]
        def loglikelihood(self, requests): raise NotImplementedError
        def loglikelihood_rolling(self, requests): raise NotImplementedError
    res = simple_evaluate(Reference(), tasks=['l0bench_easy.v1'], task_manager=TaskManager(include_path=str(tmp_path / 'tasks'), include_defaults=False))
    assert res['results']['l0bench_easy.v1']['trace_accuracy,none'] == 1.0


def test_two_splits_of_one_module_name_do_not_overwrite_each_other(tmp_path, l0_data):
    "`easy.v1` and `easy-v1` share the identifier `l0bench_easy_v1`: the second export into the same folder is refused."
    data = renamed_split(renamed_split(l0_data, tmp_path / 'a', 'short', 'easy.v1'), tmp_path / 'b', 'medium', 'easy-v1')
    from l0kit.bridges.lmeval import export_lmeval
    export_lmeval(data, 'easy.v1', tmp_path / 'tasks', 'l0', RunConfig(voters=1))
    glue = (tmp_path / 'tasks' / 'l0bench_easy_v1.py').read_text()
    with pytest.raises(ConfigError, match='glue of another task'): export_lmeval(data, 'easy-v1', tmp_path / 'tasks', 'l0', RunConfig(voters=1))
    assert (tmp_path / 'tasks' / 'l0bench_easy_v1.py').read_text() == glue and not (tmp_path / 'tasks' / 'l0bench_easy-v1.yaml').exists()


@pytest.mark.parametrize('name', [PWN, "kid's", '../../escaped', '/tmp/abs', 'a\nb'])
def test_a_hostile_split_name_writes_no_code(tmp_path, l0_data, name, capsys):
    "A split name from the card or the command line that is not a plain name: one line, exit 2, no file, nothing run."
    data = renamed_split(l0_data, tmp_path / 'data', 'short', name)  # the card names it (and, for a plain file name, the file)
    out = tmp_path / 'tasks'
    assert main(['export', 'lm-eval', '--data', str(data), '--split', name, '--out', str(out), '--voters', '1']) == 2
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and 'cannot be a file name' in err
    assert not out.exists() and not list(tmp_path.rglob('PWNED')) and not Path('PWNED').exists()
    for args in (['export', 'hf', '--data', str(data), '--out', str(tmp_path / 'hf')],
                 ['eval', '--data', str(data), '--split', name, '--model', 'simulated', '--out', str(tmp_path / 'run'), '--no-progress']):
        assert main(args) == 2 and 'cannot be a file name' in capsys.readouterr().err
    assert not list((tmp_path / 'hf').rglob('*.parquet')) and not (tmp_path / 'run').exists() and not list(tmp_path.rglob('PWNED'))


# 4. Names from a data card stay in the output and data folders

@pytest.fixture(scope='module')
def sx_data(tmp_path_factory):
    d = tmp_path_factory.mktemp('sx') / 'data'
    get_benchmark('sx').generate(d, limit=1)
    return d


@pytest.mark.parametrize('split', ['../../x', '/tmp/l0kit-hostile-abs'])
def test_export_hf_writes_nothing_outside_out(tmp_path, sx_data, split, capsys):
    "An SX card naming a split `../../x` or an absolute path: refused, and no Parquet lands outside --out."
    data = tmp_path / 'deep' / 'er' / 'data'; shutil.copytree(sx_data, data)
    meta = json.loads((data / 'card.json').read_text())
    meta['splits'][split] = 'easy.jsonl'
    (data / 'card.json').write_text(json.dumps(meta))
    before = set(tmp_path.rglob('*'))
    assert main(['export', 'hf', '--data', str(data), '--out', str(tmp_path / 'deep' / 'er' / 'out')]) == 2
    assert 'cannot be a file name' in capsys.readouterr().err
    assert [p for p in set(tmp_path.rglob('*')) - before if p.suffix == '.parquet'] == []
    assert not Path('/tmp/l0kit-hostile-abs-00000-of-00001.parquet').exists()


@pytest.mark.parametrize('target', ['../secret.jsonl', '/etc/hostname', 'sub/../../secret.jsonl'])
def test_an_sx_card_cannot_point_at_a_file_outside_the_data_folder(tmp_path, sx_data, target):
    "The card's file of a split is a plain name in the data folder; anything else is a one-line data error, nothing read."
    data = tmp_path / 'data'; shutil.copytree(sx_data, data)
    (tmp_path / 'secret.jsonl').write_text(json.dumps({'id': 'secret', 'task': 'predict'}) + '\n')
    meta = json.loads((data / 'card.json').read_text())
    meta['splits']['easy'] = target
    (data / 'card.json').write_text(json.dumps(meta))
    with pytest.raises(DataError, match="the file of split 'easy'"): get_benchmark('sx').load(data, 'easy')


def test_the_make_it_again_line_quotes_the_card(tmp_path):
    "A card's seed, limit and kit_version that are shell code: the card's shell lines pass them as one argument each."
    from l0kit.bridges.hf_datasets import regenerate_command
    card = {'seed': '0; touch PWNED1 #', 'kit_version': '1$(touch PWNED2)`touch PWNED3`', 'limit': "2 && touch 'PWNED4'"}
    lines = regenerate_command(get_benchmark('l0'), card)
    shell = 'pip() { printf "%s\\n" "$@" >> args; }\nl0kit() { printf "%s\\n" "$@" >> args; }\n' + lines + '\n'
    subprocess.run(['bash', '-c', shell], cwd=tmp_path, check=True)
    args = (tmp_path / 'args').read_text().splitlines()
    assert not list(tmp_path.glob('PWNED*'))
    assert args[:2] == ['install', 'l0kit==1$(touch PWNED2)`touch PWNED3`']
    assert args[args.index('--seed') + 1] == '0; touch PWNED1 #' and args[args.index('--limit') + 1] == "2 && touch 'PWNED4'"


# 2. A batch results file is applied all or nothing, each request answered once

@pytest.fixture
def batch(tmp_path):
    from l0kit.runs.batch import export_batch
    from l0kit.l0.benchmark import L0Benchmark, make_l0_item
    from l0kit.l0.examples import FIGURE_1_PROGRAM, FIGURE_1_INPUT
    bench, spec = L0Benchmark(shots=1), 'openai:http://never-contacted/v1#m'
    items = [make_l0_item(f'p{k}', FIGURE_1_PROGRAM, {**FIGURE_1_INPUT, 'z': k}, [{**FIGURE_1_INPUT, 'z': 9}], 'short') for k in range(2)]
    assert export_batch(bench, items, tmp_path / 'run', tmp_path / 'batch.jsonl', spec, RunConfig(voters=2)) == 4
    reqs = [json.loads(l) for l in (tmp_path / 'batch.jsonl').read_text().splitlines()]
    def line(cid, text='L1,x:1', usage=None):
        body = {'choices': [{'message': {'content': text}, 'finish_reason': 'stop'}], 'usage': usage or {'prompt_tokens': 5, 'completion_tokens': 3}}
        return json.dumps({'custom_id': cid, 'response': {'status_code': 200, 'body': body}, 'error': None})
    return bench, items, spec, reqs, line


def imports(tmp_path, bench, items, spec, lines):
    from l0kit.runs.batch import import_batch
    (tmp_path / 'results.jsonl').write_text('\n'.join(lines) + '\n')
    return import_batch(bench, items, tmp_path / 'run', tmp_path / 'results.jsonl', spec, RunConfig(voters=2))


def test_a_repeated_custom_id_refuses_the_whole_file(tmp_path, batch):
    "The issue's case: every id twice ('8 responses added' to a 4-request run, the last line winning): refused, nothing written."
    from l0kit.runs.format import RunError
    bench, items, spec, reqs, line = batch
    lines = [line(r['custom_id'], 'first') for r in reqs] + [line(r['custom_id'], 'second') for r in reqs]
    with pytest.raises(RunError, match=r"line 5 repeats custom_id '0:p0' of line 1.*nothing was imported"): imports(tmp_path, bench, items, spec, lines)
    assert read_records(tmp_path / 'run').records == []
    assert imports(tmp_path, bench, items, spec, lines[:4]) == {'added': 4, 'failed': 0, 'already there': 0}
    assert sorted((r.id, r.voter, r.response) for r in read_records(tmp_path / 'run').records) == [
        ('p0', 0, 'first'), ('p0', 1, 'first'), ('p1', 0, 'first'), ('p1', 1, 'first')]


@pytest.mark.parametrize('usage', [5, {'prompt_tokens': 'many'}, {'completion_tokens': -1}, {'prompt_tokens': True}])
def test_a_malformed_usage_is_one_line_and_nothing_written(tmp_path, batch, usage):
    "`\"usage\": 5` was a traceback; now the whole file is refused naming the line, and no record is written."
    from l0kit.runs.format import RunError
    bench, items, spec, reqs, line = batch
    lines = [line(r['custom_id']) for r in reqs[:3]] + [line(reqs[3]['custom_id'], usage=usage)]
    with pytest.raises(RunError, match='line 4: its usage .* is not an object of token counts; nothing was imported'):
        imports(tmp_path, bench, items, spec, lines)
    assert read_records(tmp_path / 'run').records == []


# 5. The SIMULATED label is kept by a replay

def test_a_replayed_simulated_run_stays_simulated(tmp_path, l0_data, capsys):
    "`--model replay:RUN` of a simulated run: the new run.json, the report and its text all say SIMULATED."
    l0_run(l0_data, tmp_path / 'sim')
    assert main(['eval', '--data', str(l0_data), '--split', 'short', '--voters', '2', '--model', f'replay:{tmp_path / "sim"}',
                 '--out', str(tmp_path / 'replayed'), '--no-progress']) == 0
    assert json.loads((tmp_path / 'replayed' / 'run.json').read_text())['simulated'] is True
    capsys.readouterr()
    assert main(['report', str(tmp_path / 'replayed')]) == 0
    assert 'SIMULATED' in capsys.readouterr().out


# 6. Memory without bound: decompression and YAML

def test_a_gzip_bomb_is_refused_early_and_small(tmp_path, l0_data, capsys):
    "A split file that expands to one 64 MiB line: refused at the 16 MiB line bound, in little time and memory."
    data = tmp_path / 'data'; shutil.copytree(l0_data, data)
    with gzip.open(data / 'short.jsonl.gz', 'wb', compresslevel=9) as f:
        for _ in range(64): f.write(b'x' * 2**20)
    assert (data / 'short.jsonl.gz').stat().st_size < 2**20
    tracemalloc.start(); t0 = time.perf_counter()
    with pytest.raises(DataError, match='line 1 is longer than 16,777,216 characters'): get_benchmark('l0').load(data, 'short')
    elapsed, peak = time.perf_counter() - t0, tracemalloc.get_traced_memory()[1]; tracemalloc.stop()
    assert elapsed < 20 and peak < 200 * 2**20, (elapsed, peak)
    assert main(['eval', '--data', str(data), '--split', 'short', '--model', 'simulated', '--out', str(tmp_path / 'run'), '--no-progress']) == 2
    assert 'longer than' in capsys.readouterr().err and not (tmp_path / 'run').exists()


BOMB = 'a: &a ["x","x","x","x","x","x","x","x","x"]\n' + ''.join(
    f'{c}: &{c} [*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p}]\n' for p, c in zip('abcdefgh', 'bcdefghi'))


def test_a_yaml_alias_bomb_is_refused_in_a_moment(tmp_path, l0_data, capsys):
    "The issue's 469-byte YAML (54 s and 3.2 GB, then the whole value in the error): one short line, at once, no run folder."
    (tmp_path / 'bomb.yaml').write_text(BOMB)
    assert len(BOMB) < 600
    t0 = time.perf_counter()
    assert main(['eval', '--data', str(l0_data), '--split', 'short', '--model', 'simulated', '--config', str(tmp_path / 'bomb.yaml'),
                 '--out', str(tmp_path / 'run'), '--no-progress']) == 2
    err = capsys.readouterr().err
    assert time.perf_counter() - t0 < 5 and len(err) < 400 and 'expand past' in err and not (tmp_path / 'run').exists()
    flow = '{' + ', '.join(BOMB.strip().splitlines()) + '}'  # the same bomb on one line, for --set
    assert main(['eval', '--data', str(l0_data), '--split', 'short', '--model', 'simulated', '--set', f'shots={flow}',
                 '--out', str(tmp_path / 'run'), '--no-progress']) == 2
    assert 'expand past' in capsys.readouterr().err


# 9. Every number is finite before a run folder exists

@pytest.mark.parametrize('value', ['nan', 'inf', '-inf'])
def test_a_temperature_that_is_not_a_number(tmp_path, l0_data, value, capsys):
    "`--temperature nan` failed every request and wrote NaN into the run folder: now refused before the folder exists."
    assert main(['eval', '--data', str(l0_data), '--split', 'short', '--model', 'simulated', f'--temperature={value}',
                 '--out', str(tmp_path / 'run'), '--no-progress']) == 2
    assert 'must be a finite number' in capsys.readouterr().err and not (tmp_path / 'run').exists()


# 8, 9, 3. Model text at the terminal and in matplotlib; a link named view.html

HOSTILE_MODEL = '$\\frac{x$ \x1b[31mred\x1b]0;title\x07 \x9b31mc1\u2066iso'  # C1 CSI (U+009B) and a bidi isolate too
HOSTILE_TEXT = 'L2,x:1\x9b2J\u200f\x1b[2J\x1b]0;owned\x07\r\u202eevil'  # C1 CSI (U+009B) and RLM first: `view --show` cuts the row


@pytest.fixture(scope='module')
def hostile_run(tmp_path_factory, l0_data):
    "A simulated L0 run whose model name and responses hold escapes, a bell and `$...$` maths."
    run = tmp_path_factory.mktemp('hostile') / 'run'
    l0_run(l0_data, run)
    meta = json.loads((run / 'run.json').read_text())
    meta['model_identity'] = meta['model'] = HOSTILE_MODEL
    (run / 'run.json').write_text(json.dumps(meta))
    lines = [json.loads(l) for l in (run / 'responses.jsonl').read_text().splitlines()]
    for r in lines: r['response'] = HOSTILE_TEXT + '\n' + (r['response'] or '')
    (run / 'responses.jsonl').write_text(''.join(json.dumps(r) + '\n' for r in lines))
    return run


CONTROL = [chr(c) for c in (*range(0, 9), *range(11, 32), *range(127, 160), 0x200e, 0x200f, 0x2028, 0x2029, *range(0x202a, 0x202f), *range(0x2066, 0x206a))]


def test_view_show_and_report_print_no_control_characters(hostile_run, tmp_path):
    "`l0kit view RUN --show` and `l0kit report RUN` print the escapes visibly (`\\x1b`), never the bytes."
    for args in (['view', str(hostile_run), '--show', '--out', str(tmp_path / 'v.html')], ['report', str(hostile_run)]):
        r = subprocess.run([sys.executable, '-c', 'import sys; from l0kit.cli.main import main; sys.exit(main())', *args],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr[-2000:]
        out = r.stdout + r.stderr
        assert [c for c in CONTROL if c in out] == [], args
        assert '\\x1b' in out and '\\x9b' in out  # C1 controls shown as escapes: the responses' (view), the model name's (report)
        assert ('\\u200f' if args[0] == 'view' else '\\u2066') in out  # and bidirectional controls


def test_figures_draw_a_model_name_as_text(hostile_run, tmp_path, capsys):
    "A model named `$\\frac{x$` broke `view` and `report --figures` (matplotlib's maths parser): both draw it as text."
    assert main(['report', str(hostile_run), '--figures', str(tmp_path / 'figs')]) == 0
    assert list((tmp_path / 'figs').glob('*.png'))
    assert main(['view', str(hostile_run), '--out', str(tmp_path / 'page.html')]) == 0
    assert 'data:image/png;base64,' in (tmp_path / 'page.html').read_text()
    from l0kit.experiments import figure_title
    import matplotlib; matplotlib.use('Agg'); import matplotlib.pyplot as plt
    fig, ax = plt.subplots(); ax.set_title(figure_title('L0 figure 2', 'accuracy', '$\\frac{x$', '1 x 1')); fig.savefig(tmp_path / 't.png'); plt.close(fig)


def test_view_replaces_a_link_named_view_html(hostile_run, tmp_path):
    "A `view.html` link in a run folder: the page replaces the link; the file it pointed at is untouched."
    run = tmp_path / 'run'; shutil.copytree(hostile_run, run)
    precious = tmp_path / 'precious.txt'; precious.write_text('keep me')
    (run / 'view.html').symlink_to(precious)
    assert main(['view', str(run)]) == 0
    assert precious.read_text() == 'keep me' and not (run / 'view.html').is_symlink()
    assert (run / 'view.html').read_text().startswith('<!doctype html>') or '<html' in (run / 'view.html').read_text()[:200]


# 10. Summaries count what is there

def test_a_report_of_part_of_a_run_says_what_is_missing(tmp_path, l0_data, capsys):
    "Two of the four programs answered: the report names the two missing, in the notes and in its text."
    run = tmp_path / 'run'
    l0_run(l0_data, run, voters=2)
    lines = (run / 'responses.jsonl').read_text().splitlines()
    ids = list(dict.fromkeys(json.loads(l)['id'] for l in lines))
    assert len(ids) == 4
    (run / 'responses.jsonl').write_text(''.join(l + '\n' for l in lines if json.loads(l)['id'] in ids[:2]))
    assert main(['report', str(run)]) == 0
    assert '2 of 4 items have no scored response yet: the tables cover the other 2' in capsys.readouterr().out


# 3. Links in a run folder are refused, never followed

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize('name', ['.lock', 'responses.jsonl', 'run.json', 'responses.torn'])
def test_a_link_in_a_run_folder_is_not_followed(tmp_path, l0_data, name, capsys):
    "A resume of a run folder whose `.lock`, `responses.jsonl`, `run.json` or `responses.torn` is a link: the target is untouched."
    run = tmp_path / 'run'
    l0_run(l0_data, run)
    f = run / 'responses.jsonl'
    f.write_bytes(f.read_bytes() + b'{"id": "torn')  # a torn last line: a resume sets it aside into responses.torn
    precious = tmp_path / 'precious.txt'; precious.write_text('keep me\n')
    if (run / name).exists(): precious.write_bytes((run / name).read_bytes())
    before = precious.read_bytes()
    (run / name).unlink(missing_ok=True); (run / name).symlink_to(precious)
    code = main(['eval', '--data', str(l0_data), '--split', 'short', '--voters', '3', '--model', 'simulated:rate=0.2,seed=1',
                 '--out', str(run), '--no-progress'])
    assert code == 2 and 'symbolic link' in capsys.readouterr().err
    assert precious.read_bytes() == before and (run / name).is_symlink()


def test_a_folder_of_responses_without_run_json_is_not_adopted(tmp_path, l0_data, capsys):
    "Simulated responses whose run.json is gone: a run of another model into that folder is refused, the responses kept."
    run = tmp_path / 'run'
    l0_run(l0_data, run)
    (run / 'run.json').unlink()
    before = (run / 'responses.jsonl').read_bytes()
    assert main(['eval', '--data', str(l0_data), '--split', 'short', '--voters', '2', '--model', f'replay:{tmp_path / "run" / "responses.jsonl"}',
                 '--out', str(run), '--no-progress']) == 2
    assert 'holds responses but no run.json' in capsys.readouterr().err
    assert (run / 'responses.jsonl').read_bytes() == before and not (run / 'run.json').exists()


# 7. Credentials never reach the disk

@pytest.mark.parametrize('url', ['http://user:s3cret@127.0.0.1:9/v1', 'http://:s3cret@127.0.0.1:9/v1', 'http://127.0.0.1:9/v1?key=s3cret'])
@pytest.mark.parametrize('batch', [False, True])
def test_a_server_url_with_credentials_is_refused_before_anything_is_written(tmp_path, l0_data, url, batch, capsys):
    "`openai:http://user:pass@host/v1#m` (and a ?query): one line that does not repeat the secret, no run folder, no batch file."
    args = ['eval', '--data', str(l0_data), '--split', 'short', '--voters', '1', '--model', f'openai:{url}#m', '--out', str(tmp_path / 'run'), '--no-progress']
    assert main(args + (['--export-batch', str(tmp_path / 'batch.jsonl')] if batch else [])) == 2
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and ('no user name or password' in err or 'without a ?query' in err)
    assert 's3cret' not in err or '?key=' in url  # a query is shown so the user sees what to remove; a password is never shown
    assert not (tmp_path / 'run').exists() and not (tmp_path / 'batch.jsonl').exists()


# 9. Options of a model spec and counts are numbers in range before a run folder exists

@pytest.mark.parametrize('option, says', [('timeout=-1', 'openai.timeout must be at least'), ('timeout=nan', 'openai.timeout must be a finite number'),
                                          ('timeout=inf', 'finite number'), ('max_retries=-1', 'openai.max_retries must be at least 0'),
                                          ('concurrency=0', 'openai.concurrency must be at least 1'), ('backoff=nan', 'finite number')])
def test_openai_spec_options_are_checked_first(tmp_path, l0_data, option, says, capsys):
    "`timeout=-1`, `timeout=nan`, `max_retries=-1` were a TypeError after the run folder existed: now one line before it."
    assert main(['eval', '--data', str(l0_data), '--split', 'short', '--voters', '1', '--model', f'openai:http://127.0.0.1:9/v1#m,{option}',
                 '--out', str(tmp_path / 'run'), '--no-progress']) == 2
    assert says in capsys.readouterr().err and not (tmp_path / 'run').exists()


def test_a_billion_voters_is_refused_at_once(tmp_path, l0_data, capsys):
    "`--voters 1000000000` was a MemoryError traceback after 17 s."
    t0 = time.perf_counter()
    assert main(['eval', '--data', str(l0_data), '--split', 'short', '--voters', '1000000000', '--model', 'simulated',
                 '--out', str(tmp_path / 'run'), '--no-progress']) == 2
    assert 'RunConfig.voters must be at most 10000' in capsys.readouterr().err
    assert time.perf_counter() - t0 < 5 and not (tmp_path / 'run').exists()


# 10. Every summary counts what is on disk

from l0kit.protocol.models import Model
from l0kit.protocol.benchmark import model_for


class Hooked(Model):
    "The L0 simulated model two prompts at a time, calling `hook(call number)` and waiting `delay` s before each batch."
    batch_size, simulated = 2, True
    def __init__(self, hook, delay: float = 0.0):
        self.inner = model_for('simulated:rate=0.2', get_benchmark('l0'))
        self.spec, self.name, self.calls, self.hook, self.delay = self.inner.spec, 'hooked', 0, hook, delay
    def generate(self, prompts, params=None, seeds=None):
        self.calls += 1; self.hook(self.calls); time.sleep(self.delay)
        return self.inner.generate(prompts, params, seeds)
    def info(self): return self.inner.info()


def test_a_responses_file_removed_during_a_run_is_said(tmp_path, l0_data):
    "Removed mid-run: a run that goes on does not report responses that are nowhere; one that stops says none are saved there."
    from l0kit.runs.format import RunError
    items = get_benchmark('l0').load(l0_data, 'short')
    def remove(call):
        if call == 3: (tmp_path / 'run' / 'responses.jsonl').unlink()
    with pytest.raises(RunError, match='was removed or replaced during the run: the 8 responses written are not in the run folder'):
        run_eval(get_benchmark('l0'), Hooked(remove), items, tmp_path / 'run', RunConfig(voters=2), progress=False)
    def remove_then_stop(call):
        if call == 2: (tmp_path / 'run2' / 'responses.jsonl').unlink()
        if call == 3: raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt, match='was removed or replaced during the run: no new response is saved there'):
        run_eval(get_benchmark('l0'), Hooked(remove_then_stop), items, tmp_path / 'run2', RunConfig(voters=2), progress=False)


FULL_DISK = """
import resource, signal, sys
from pathlib import Path
from l0kit.protocol.benchmark import get_benchmark
from l0kit.runs.runner import RunConfig, run_eval
import tests.test_hostile as t
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG, as on a full disk
if float(sys.argv[4]):  # the writer slowed: every answer is handed over before its failing write (the race a CI run met)
    import time, l0kit.runs.format as fmt
    loop = fmt.RecordWriter._commit_loop
    fmt.RecordWriter._commit_loop = lambda self: (time.sleep(float(sys.argv[4])), loop(self))[1]
data, run = Path(sys.argv[1]), Path(sys.argv[2])
items = get_benchmark('l0').load(data, 'short')
def limit(call):
    if call == 2: resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[3]), int(sys.argv[3])))
try: run_eval(get_benchmark('l0'), t.Hooked(limit), items, run, RunConfig(voters=3), progress=False)
except Exception as e: print(e)
"""


@pytest.mark.parametrize('delay', [0, 1.0])
def test_a_full_disk_counts_the_lines_on_disk(tmp_path, l0_data, delay):
    """A write cut by the file-size limit keeps part of a batch: the message counts the complete lines in the file, and a
    resume completes the run; also when the write fails after the last answer was handed over (`delay`: the writer slowed)."""
    first = tmp_path / 'probe'
    run_eval(get_benchmark('l0'), Hooked(lambda c: None), get_benchmark('l0').load(l0_data, 'short')[:1], first, RunConfig(voters=1), progress=False)
    one = len((first / 'responses.jsonl').read_bytes())  # about one record
    r = subprocess.run([sys.executable, '-c', FULL_DISK, str(l0_data), str(tmp_path / 'run'), str(int(3.5 * one)), str(delay)], cwd=ROOT,
                       capture_output=True, text=True, env={**os.environ, 'PYTHONPATH': str(ROOT)}, timeout=600)
    f = tmp_path / 'run' / 'responses.jsonl'
    lines = f.read_bytes().count(b'\n')  # counted here, independently of the kit
    assert 'File too large' in r.stdout and f'; {lines} new responses are saved in' in r.stdout, (r.stdout, r.stderr[-2000:])
    assert 2 <= lines < 12
    s = run_eval(get_benchmark('l0'), Hooked(lambda c: None), get_benchmark('l0').load(l0_data, 'short'), tmp_path / 'run', RunConfig(voters=3),
                 progress=False)  # the same run goes on: the torn line set aside, every pair answered once
    assert s['complete'] == 12 and len(read_records(tmp_path / 'run').records) == 12


def test_a_write_that_fails_while_flush_waits_ends_the_flush(tmp_path):
    """A write that fails while `flush` waits for it (a full disk under a conversation's turns, which the runner flushes
    before the response that ends them) raises in `flush`: the writer wakes it. Bug seen: the wake-up lost in a comment,
    so `flush` waited forever once it had begun to wait before the error."""
    import threading
    from l0kit.runs.format import Record, RecordWriter, RunError
    w = RecordWriter(tmp_path)
    class Full:  # the file as a full disk makes it: the write fails, but only after `flush` has begun to wait
        def write(self, data): time.sleep(0.5); raise OSError(28, 'No space left on device')
        def __getattr__(self, name): return getattr(real, name)
    real, w.fh = w.fh, Full()
    w.add([Record(id='a', voter=0, response='x', split='demo')])
    got = []
    def flush():
        try: w.flush(); got.append('returned')
        except RunError as e: got.append(str(e))
    t = threading.Thread(target=flush, daemon=True); t.start(); t.join(20)
    assert not t.is_alive(), "flush still waits 20 s after the write failed"
    assert got == [f"cannot write {tmp_path / 'responses.jsonl'} ([Errno 28] No space left on device)"]
    with pytest.raises(RunError, match='No space left on device'): w.close()


def load_slow(arg: str = '', **options):
    "`slow`: the L0 simulated model, 0.2 s per pair of prompts (a model for signal tests, registered by the test itself)."
    return Hooked(lambda c: None, delay=0.2)


SLOW_CLI = """
import sys
from l0kit.protocol.models import register_model_kind
from l0kit.cli.main import main
register_model_kind('slow', 'tests.test_hostile:load_slow')
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize('sig', [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_says_what_is_saved(tmp_path, l0_data, sig):
    "`kill` of a running `l0kit eval` was silent: now it says how many responses the folder holds, exits 128+signal, and resumes."
    args = ['eval', '--data', str(l0_data), '--split', 'short', '--voters', '4', '--model', 'slow', '--out', str(tmp_path / 'run'), '--no-progress']
    p = subprocess.Popen([sys.executable, '-c', SLOW_CLI, *args], cwd=ROOT, env={**os.environ, 'PYTHONPATH': str(ROOT)},
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    f, t0 = tmp_path / 'run' / 'responses.jsonl', time.time()
    while (not f.exists() or f.read_bytes().count(b'\n') < 4) and time.time() - t0 < 60 and p.poll() is None: time.sleep(0.05)
    p.send_signal(sig); out, err = p.communicate(timeout=60)
    lines = f.read_bytes().count(b'\n')
    assert p.returncode == 128 + sig, err[-2000:]
    assert f'stopped by {sig.name}' in err and f'{lines} new responses are saved in' in err and 4 <= lines < 16
    r = subprocess.run([sys.executable, '-c', SLOW_CLI, *args], cwd=ROOT, env={**os.environ, 'PYTHONPATH': str(ROOT)}, capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.startswith('16/16 responses') and f'({16 - lines} new, {lines} already there' in r.stdout


def test_a_responses_file_with_an_endless_line_is_refused(tmp_path, l0_data, capsys):
    "A run folder from elsewhere whose responses.jsonl holds one 20 MiB line: that line is left out and said, the run is still reported (issue 31)."
    run = tmp_path / 'run'
    l0_run(l0_data, run)
    with open(run / 'responses.jsonl', 'ab') as f: f.write(b'{"id": "' + b'x' * (20 * 2**20) + b'"}\n')
    assert main(['report', str(run)]) == 0
    assert '1 line(s) that do not fit the record format left out' in capsys.readouterr().out


def test_core_family_names_from_data_are_drawn_as_text(tmp_path):
    "CoRE's figure 5 labels its columns with implementation families read from the problem files: `$` there is text."
    import pandas as pd
    import matplotlib; matplotlib.use('Agg'); import matplotlib.pyplot as plt
    from l0kit.corebench.benchmark import family_heatmap
    family_heatmap(pd.DataFrame([[50.0, 70.0]], columns=['$\\frac{x$', 'iterative'], index=['$m'])).savefig(tmp_path / 'f.png')
    plt.close('all')
    assert (tmp_path / 'f.png').stat().st_size > 1000


def test_a_servers_error_text_reaches_the_terminal_escaped(tmp_path, l0_data):
    "A server that answers every request with HTTP 400 and ESC/BEL bytes in its body: `eval`'s summary shows them as escapes."
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    class Rude(BaseHTTPRequestHandler):
        def log_message(self, *a): pass
        def _send(self, code, data: bytes):
            self.send_response(code); self.send_header('Content-Type', 'application/json'); self.send_header('Content-Length', str(len(data)))
            self.end_headers(); self.wfile.write(data)
        def do_GET(self): self._send(200, json.dumps({'data': [{'id': 'm'}]}).encode())
        def do_POST(self):
            self.rfile.read(int(self.headers.get('Content-Length', 0)))
            self._send(404 if 'tokenize' in self.path else 400, b'{"error": "no \x1b]0;owned\x07\x1b[2J\r way \xc2\x9b2J \xe2\x80\xae"}')  # C1 CSI and RLO in UTF-8
    srv = ThreadingHTTPServer(('127.0.0.1', 0), Rude)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        r = subprocess.run([sys.executable, '-c', 'import sys; from l0kit.cli.main import main; sys.exit(main())', 'eval', '--data', str(l0_data),
                            '--split', 'short', '--voters', '1', '--model', f'openai:http://127.0.0.1:{srv.server_port}/v1#m,max_retries=0',
                            '--out', str(tmp_path / 'run'), '--no-progress'], capture_output=True, text=True, cwd=ROOT, timeout=120)
    finally: srv.shutdown()
    out = r.stdout + r.stderr
    assert r.returncode == 1 and 'requests failed, e.g. HTTP 400' in r.stderr, out[-2000:]
    assert [c for c in CONTROL if c in out] == [] and '\\x1b]0;owned\\x07' in r.stderr and '\\x9b2J \\u202e' in r.stderr


def test_json_nested_thousands_deep_is_a_bad_line_or_one_error(tmp_path, l0_data, sx_data, capsys):
    "A record of 100,000 nested brackets in a responses file is one bad line; in an SX data file, a one-line error (no traceback)."
    run = tmp_path / 'run'
    l0_run(l0_data, run)
    with open(run / 'responses.jsonl', 'a') as f: f.write('[' * 100_000 + '\n')
    assert main(['report', str(run)]) == 0
    assert read_records(run).bad == [(9, 'JSON nested too deeply')]
    data = tmp_path / 'sx'; shutil.copytree(sx_data, data)
    (data / 'easy.jsonl').write_text('[' * 100_000 + '\n')
    capsys.readouterr()
    assert main(['eval', '--data', str(data), '--split', 'easy', '--model', 'simulated', '--out', str(tmp_path / 'r'), '--no-progress']) == 2
    assert 'nested too deeply' in capsys.readouterr().err
