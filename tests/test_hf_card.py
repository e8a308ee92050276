"""The Hugging Face export's dataset card: `datasets` reads its YAML without a warning, and the split sizes it states
pass `datasets`' own full verification (`verification_mode='all_checks'`) on every benchmark."""
import ast, json, os, re, subprocess, sys
from pathlib import Path
import pytest
from l0kit.protocol.benchmark import get_benchmark

ROOT = Path(__file__).resolve().parents[1]
LOAD = "import datasets, sys; ds = datasets.load_dataset(sys.argv[1], verification_mode='all_checks'); print({k: v.num_rows for k, v in ds.items()})"

@pytest.mark.parametrize('name', ['l0', 'procbench', 'sx', 'core'])
def test_card_reads_without_a_warning(tmp_path, name):
    from l0kit.bridges.hf_datasets import export_hf
    data = tmp_path / 'data'
    get_benchmark(name).generate(data, limit=2, **({'preset': 'small'} if name == 'l0' else {}))
    export_hf(data, tmp_path / 'hf', name)
    env = os.environ | {'HF_DATASETS_OFFLINE': '1', 'HF_HUB_OFFLINE': '1', 'HF_DATASETS_CACHE': str(tmp_path / 'cache'), 'PYTHONPATH': str(ROOT)}
    r = subprocess.run([sys.executable, '-c', LOAD, str(tmp_path / 'hf')], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    warnings = [l for l in r.stderr.splitlines() if 'malformed' in l or 'Ignoring' in l or 'WARNING' in l.upper()]
    assert warnings == []
    bench = get_benchmark(name)
    assert ast.literal_eval(r.stdout.strip().splitlines()[-1]) == {s: len(bench.load(data, s)) for s in bench.splits(data) if bench.load(data, s)}

HOSTILE = '0.1.0``\n```\n<script>alert(1)</script>\n# Injected\n[click](javascript:alert(1)) <img src=x onerror=alert(2)>'

def rendered_body(readme: Path) -> str:
    "The card's text (after its YAML) as CommonMark renders it, raw HTML allowed: what a page would show."
    from markdown_it import MarkdownIt
    return MarkdownIt('commonmark').render(readme.read_text().split('\n---\n', 1)[1])

def test_card_values_are_text_not_markup(tmp_path):
    "Issue 31 class 8: a card whose kit_version holds HTML, a heading, a link and a fence break: the exported card shows it as text."
    from huggingface_hub import DatasetCard
    from l0kit.bridges.hf_datasets import export_hf
    data = tmp_path / 'data'
    get_benchmark('l0').generate(data, limit=2, preset='small')
    card = json.loads((data / 'card.json').read_text()); card['kit_version'] = HOSTILE
    (data / 'card.json').write_text(json.dumps(card))
    readme = export_hf(data, tmp_path / 'hf', 'l0')
    page = rendered_body(readme)
    assert re.findall(r'<(script|img|h1|h2)\b', page) == ['h1'] + ['h2'] * 4   # the card's own title and sections only
    assert re.findall(r'<a href="([^"]*)"', page) == ['https://github.com/l0kit/l0kit']
    assert 'alert(1)' in page   # shown, as text
    assert DatasetCard.load(readme).data.to_dict()['l0kit']['kit_version'] == HOSTILE   # the metadata keeps the value exactly

def test_rows_carry_what_the_kit_sends_and_the_reference(tmp_path):
    "Every row's messages are what `l0kit eval` sent (the runner's recorded prompt hash) and its reference reads as right."
    import datasets
    from l0kit.bridges.hf_datasets import export_hf
    from l0kit.cli.main import main
    from l0kit.protocol.prompt import Prompt, prompt_hash
    for name in ('l0', 'procbench'):
        data, bench = tmp_path / name, get_benchmark(name)
        bench.generate(data, limit=2, **({'preset': 'small'} if name == 'l0' else {}))
        export_hf(data, tmp_path / f'hf-{name}', name)
        split = bench.splits(data)[0]
        assert main(['eval', '--data', str(data), '--split', split, '--model', 'simulated', '--voters', '1', '--out', str(tmp_path / f'run-{name}'), '--no-progress']) == 0
        sent = {r['id']: r['prompt_hash'] for r in map(json.loads, (tmp_path / f'run-{name}' / 'responses.jsonl').read_text().splitlines())}
        rows = datasets.load_dataset(str(tmp_path / f'hf-{name}'))[split]
        items = {it['id']: it for it in bench.load(data, split)}
        assert len(rows) == len(sent) == len(items) > 0
        for row in rows:
            assert prompt_hash(Prompt(messages=row['messages'], assistant_prefix=row['assistant_prefix'] or None)) == sent[row['id']]
            assert bench.read(items[row['id']], row['reference']).correct

def test_push_to_hub_uploads_the_folder(tmp_path, monkeypatch, capsys):
    "`export hf --push-to-hub` creates the dataset repository and uploads the written folder (HfApi mocked: no network here)."
    import huggingface_hub
    from l0kit.cli.main import main
    calls = []
    class FakeApi:
        def create_repo(self, repo_id, **kw): calls.append(('create', repo_id, kw)); return f"https://huggingface.co/datasets/{repo_id}"
        def upload_folder(self, **kw): calls.append(('upload', sorted(str(p.relative_to(kw['folder_path'])) for p in Path(kw['folder_path']).rglob('*') if p.is_file()), kw['repo_id'], kw['repo_type']))
    monkeypatch.setattr(huggingface_hub, 'HfApi', FakeApi)
    get_benchmark('procbench').generate(tmp_path / 'data', limit=2)
    assert main(['export', 'hf', '--data', str(tmp_path / 'data'), '--out', str(tmp_path / 'hf'), '--push-to-hub', 'me/procbench-small', '--private']) == 0
    assert calls == [('create', 'me/procbench-small', {'repo_type': 'dataset', 'private': True, 'exist_ok': True}),
                     ('upload', ['README.md', 'data/short-00000-of-00001.parquet', 'l0kit_card.json', 'l0kit_config.yaml'], 'me/procbench-small', 'dataset')]
    assert 'https://huggingface.co/datasets/me/procbench-small' in capsys.readouterr().out
    calls.clear()
    assert main(['export', 'hf', '--data', str(tmp_path / 'data'), '--out', str(tmp_path / 'hf2'), '--push-to-hub', 'a/b/c']) == 2
    assert calls == [] and not (tmp_path / 'hf2').exists()   # refused before anything is written
    assert 'is not a repository id' in capsys.readouterr().err

def test_export_help_lists_every_export():
    "`l0kit export --help` names every export subcommand the parser has; every option of every export has a help text."
    import argparse
    from l0kit.cli.export import register_cli
    ap = argparse.ArgumentParser(prog='l0kit'); sub = ap.add_subparsers(dest='command'); register_cli(sub)
    export = sub.choices['export']
    targets = next(a for a in export._actions if isinstance(a, argparse._SubParsersAction)).choices
    assert set(targets) == {'lm-eval', 'rl', 'hf', 'inspect-log'}
    r = subprocess.run([sys.executable, '-m', 'l0kit', 'export', '--help'], capture_output=True, text=True, env=os.environ | {'PYTHONPATH': str(ROOT), 'COLUMNS': '200'})
    described = re.search(r'Exports: (.*?)\n\n', r.stdout, re.S).group(1)
    assert [t for t in targets if f'{t}: ' not in described] == []
    assert [(t, a.dest) for t, p in targets.items() for a in p._actions if not a.help] == []

def test_a_plugins_card_names_the_plugin_and_a_task_that_exists(tmp_path):
    "The plugin's set: the card's install line names the plugin at its installed version, and its Inspect line the generic task."
    import importlib.metadata, shlex
    import l0kit
    from l0kit.bridges.hf_datasets import export_hf
    if os.environ.get('CI') != 'true': pytest.importorskip('l0kit_sums')
    get_benchmark('sums').generate(tmp_path / 'data', limit=2)
    text = export_hf(tmp_path / 'data', tmp_path / 'hf', 'sums').read_text()
    install = next(l for l in text.splitlines() if l.startswith('pip install '))
    assert shlex.split(install)[2:] == [f"l0kit=={json.loads((tmp_path / 'data' / 'card.json').read_text()).get('kit_version', l0kit.__version__)}",
                                        f"l0kit-sums=={importlib.metadata.version('l0kit-sums')}"]
    inspect = next(l for l in text.splitlines() if l.startswith('inspect eval '))
    assert shlex.split(inspect)[2] == 'l0kit/benchmark'   # the generic task: every registered benchmark, a plugin's included
