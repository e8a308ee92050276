"""Inspect finds the kit's tasks from any working folder, through its Python API and its command, with a local
OpenAI-compatible server as the model: from the repository root (where `pip install -e .` leaves a `l0kit.egg-info`
that hid the kit from Inspect's package test), from a folder holding such an egg-info, and from elsewhere."""
import json, os, subprocess, sys
from pathlib import Path
import pytest
from sim_server import SimServer, text_of
from l0kit.protocol.benchmark import get_benchmark
from l0kit.bridges.answers import reference_answer

ROOT = Path(__file__).resolve().parents[1]
API_RUN = """
import json, sys
from inspect_ai import eval as inspect_eval
log = inspect_eval('l0kit/procbench', task_args={'data': sys.argv[1], 'split': 'short', 'limit': 4}, model='openai-api/local/sim',
                   log_dir=sys.argv[2], display='none', max_retries=2, timeout=120)[0]  # bounded: Inspect retries without end by default
print(json.dumps({'location': log.location, 'status': log.status}))
"""

@pytest.fixture(scope='module')
def served(tmp_path_factory):
    "A ProcBench set and a server answering its prompts: the reference answer, except no final state for the first item."
    data = tmp_path_factory.mktemp('data') / 'procbench'
    bench = get_benchmark('procbench')
    bench.generate(data, limit=2)
    items = bench.load(data, 'short', 4)
    by_prompt = {bench.build_prompt(it, 0).messages[-1]['content']: it for it in items}
    def answer(messages):
        it = by_prompt[text_of(messages[-1]['content'])]
        if it is items[0]: return json.dumps({'intermediate': it['label']['intermediate'], 'final': None})
        return reference_answer(bench, it)
    with SimServer(answer) as url: yield data, items, url

def check_log(location, items):
    from inspect_ai.log import read_eval_log
    log = read_eval_log(location)
    assert log.status == 'success' and log.eval.task == 'l0kit/procbench' and len(log.samples) == len(items)
    sm = {s.id: s.scores['kit_scorer'].value['sm'] for s in log.samples}
    assert sm == {it['id']: 0.0 if it is items[0] else 1.0 for it in items}
    assert log.samples[0].output.model == 'sim' or log.eval.model == 'openai-api/local/sim'

def fake_egg_info(folder: Path):
    "What `pip install -e .` leaves in a project folder: metadata with the entry point and no `direct_url.json`."
    egg = folder / 'l0kit.egg-info'; egg.mkdir()
    (egg / 'PKG-INFO').write_text('Metadata-Version: 2.1\nName: l0kit\nVersion: 0.1.0\n')
    (egg / 'entry_points.txt').write_text('[inspect_ai]\nl0kit = l0kit.bridges.inspect\n')

def editable_dist_info(folder: Path):
    "What `pip install -e .` puts in site-packages: metadata with the entry point and a `direct_url.json` saying editable."
    d = folder / 'l0kit-0.1.0.dist-info'; d.mkdir(parents=True)
    (d / 'METADATA').write_text('Metadata-Version: 2.1\nName: l0kit\nVersion: 0.1.0\n')
    (d / 'entry_points.txt').write_text('[inspect_ai]\nl0kit = l0kit.bridges.inspect\n')
    (d / 'direct_url.json').write_text(json.dumps({'dir_info': {'editable': True}, 'url': ROOT.as_uri()}))

@pytest.mark.parametrize('where', ['root', 'egg-info', 'elsewhere', 'installed'])
def test_python_api_finds_the_tasks(tmp_path, served, where):
    "Wherever Python starts, and whether or not Inspect sees the kit as installed, the task is `l0kit/procbench` (never doubled)."
    data, items, url = served
    cwd, path = (ROOT if where == 'root' else tmp_path / 'cwd'), str(ROOT)
    if where != 'root':
        cwd.mkdir()
        if where == 'egg-info': fake_egg_info(cwd)
        if where == 'installed': editable_dist_info(tmp_path / 'site'); path = f"{tmp_path / 'site'}{os.pathsep}{ROOT}"
    env = os.environ | {'PYTHONPATH': path, 'LOCAL_BASE_URL': url, 'LOCAL_API_KEY': 'none'}
    r = subprocess.run([sys.executable, '-c', API_RUN, str(data), str(tmp_path / 'logs')], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    check_log(json.loads(r.stdout.strip().splitlines()[-1])['location'], items)

@pytest.mark.parametrize('where', ['root', 'elsewhere'])
def test_inspect_command_finds_the_tasks(tmp_path, served, where):
    data, items, url = served
    cwd = ROOT if where == 'root' else tmp_path
    env = os.environ | {'PYTHONPATH': str(ROOT), 'LOCAL_BASE_URL': url, 'LOCAL_API_KEY': 'none'}
    inspect = Path(sys.executable).parent / 'inspect'
    r = subprocess.run([str(inspect), 'eval', 'l0kit/procbench', '--model', 'openai-api/local/sim', '-T', f'data={data}', '-T', 'split=short',
                        '-T', 'limit=4', '--log-dir', str(tmp_path / 'logs'), '--display', 'none', '--max-retries', '2', '--timeout', '120'],
                       cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    logs = sorted((tmp_path / 'logs').glob('*.eval'))
    assert len(logs) == 1
    check_log(str(logs[0]), items)
