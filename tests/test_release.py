"""What a release holds and what a stranger reads first: the README is made from `nbs/index.ipynb` and says what it
did when run, its links lead to pages that exist, the wheel carries the license and `python -m l0kit` is the command,
the citation file cites the four papers the kit implements, and the experiment notebooks hold the outputs of the runs
`scripts/run_experiments.sh --committed` makes.

`python tests/test_release.py readme` writes README.md from nbs/index.ipynb (nbdev's `nbdev-readme` needs Quarto)."""
import json, os, re, shutil, subprocess, sys, zipfile
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]

def readme_from_index(nb_path) -> str:
    "README.md's text from the front page's notebook: markdown cells as they are, code cells as ```python blocks, hidden cells left out."
    parts = []
    for c in json.loads(Path(nb_path).read_text(encoding='utf-8'))['cells']:
        text = ''.join(c['source']).strip('\n')
        if c['cell_type'] == 'markdown': parts.append(text)
        elif c['cell_type'] == 'code' and not re.match(r'#\|\s*(hide|default_exp)', text): parts.append(f"```python\n{text}\n```")
    return '\n\n'.join(parts) + '\n'

README = (ROOT / 'README.md').read_text(encoding='utf-8')

def test_readme_is_made_from_index():
    "The README says what nbs/index.ipynb says, word for word (rewrite it with `python tests/test_release.py readme`)."
    assert readme_from_index(ROOT / 'nbs' / 'index.ipynb') == README

def test_readme_is_a_front_page():
    "At most 150 lines; the two commands first; no date, no path outside the repository, no notes on how the kit was made."
    lines = README.splitlines()
    assert len(lines) <= 150
    commands = [l.strip() for l in lines[:15] if l.startswith('    bash ')]
    assert commands == ['bash scripts/setup.sh && bash scripts/demo.sh', 'bash scripts/setup.sh && bash scripts/test.sh']
    assert re.findall(r'\b20\d\d-\d\d-\d\d\b', README) == []
    assert re.findall(r'(?<![\w.])(?:\.\./|~/|/(?:work|tmp|home)/)', README) == []
    assert re.findall(r'\b(?:issue|this round|session|lab note)', README, re.I) == []
    for heading in ('## Install', '## Quickstart', '## The four benchmarks', '## Reproduce a table', '## Run your own model', '## Cite', '## Documentation'):
        assert heading in lines, heading

def relative_links(md: str) -> list:
    return [u for u in re.findall(r'\]\(([^)\s]+)\)', md) if not re.match(r'[a-z]+:', u) and not u.startswith('#')]

def test_links_lead_to_files_that_exist():
    "Every relative link of the README and of the docs pages names a file of the repository."
    missing = [('README.md', u) for u in relative_links(README) if not (ROOT / u.split('#')[0]).is_file()]
    for page in sorted((ROOT / 'docs').glob('*.md')):
        missing += [(page.name, u) for u in relative_links(page.read_text(encoding='utf-8')) if not (page.parent / u.split('#')[0]).is_file()]
    assert missing == []
    linked = {Path(u).name for u in relative_links(README)}
    assert {p.name for p in (ROOT / 'docs').glob('*.md')} <= linked   # every docs page is reachable from the front page

def quickstart(text: str) -> tuple[list, str]:
    "(the quickstart's commands, the output printed under them) from the README."
    section = text.split('## Quickstart', 1)[1].split('\n## ', 1)[0]
    blocks = re.findall(r'```(\w*)\n(.*?)\n```', section, re.S)
    commands = next(b for lang, b in blocks if lang == 'bash').splitlines()
    output = next(b for lang, b in blocks if lang == '')
    return commands, output

def steady(text: str) -> str:
    "Output without its timings (the only values that vary from run to run)."
    return re.sub(r'\b\d+(?:\.\d+)? s\b', 'T s', text)

def test_quickstart_prints_what_the_readme_shows(tmp_path):
    "The quickstart's commands, run in an empty folder, print the README's output (timings aside)."
    commands, shown = quickstart(README)
    assert [c.split()[:2] for c in commands] == [['l0kit', 'generate'], ['l0kit', 'eval'], ['l0kit', 'report']]
    env = os.environ | {'PYTHONPATH': str(ROOT), 'COLUMNS': '200'}
    printed = ''
    for c in commands:
        r = subprocess.run([sys.executable, '-m', 'l0kit'] + c.split()[1:], cwd=tmp_path, capture_output=True, text=True, env=env)
        assert r.returncode == 0, r.stderr[-2000:]
        printed += r.stdout
    assert steady(printed.rstrip('\n')) == steady(shown)
    assert '72.5' in shown and 'Table 1 (k = 5)' in shown   # the simulated model's single-attempt accuracy, as pasted

def test_python_m_l0kit_is_the_command():
    import l0kit
    r = subprocess.run([sys.executable, '-m', 'l0kit', '--version'], capture_output=True, text=True, env=os.environ | {'PYTHONPATH': str(ROOT)})
    assert r.returncode == 0 and r.stdout.split() == ['l0kit', l0kit.__version__]

def test_the_wheel_carries_the_license_and_the_main_module(tmp_path):
    "The wheel built from the repository holds LICENSE (the Apache-2.0 text) and `l0kit/__main__.py`."
    text = (ROOT / 'LICENSE').read_text()
    assert 'Apache License' in text and 'Version 2.0, January 2004' in text and 'END OF TERMS AND CONDITIONS' in text
    src = tmp_path / 'src'
    files = subprocess.run(['git', 'ls-files', '-z', '--cached', '--others', '--exclude-standard'], cwd=ROOT, capture_output=True, check=True).stdout
    for f in filter(None, files.decode().split('\0')):
        if (ROOT / f).is_file(): (src / f).parent.mkdir(parents=True, exist_ok=True); shutil.copy2(ROOT / f, src / f)
    r = subprocess.run([sys.executable, '-m', 'pip', 'wheel', '-q', '--no-deps', '--no-build-isolation', '-w', str(tmp_path / 'dist'), str(src)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    wheel = zipfile.ZipFile(next((tmp_path / 'dist').glob('l0kit-*.whl')))
    names = wheel.namelist()
    license_file = next(n for n in names if re.fullmatch(r'l0kit-[^/]+\.dist-info/licenses/LICENSE', n))
    assert wheel.read(license_file).decode() == text
    assert 'l0kit/__main__.py' in names
    meta = wheel.read(next(n for n in names if n.endswith('.dist-info/METADATA'))).decode()
    assert 'License-Expression: Apache-2.0' in meta and 'Requires-Python: >=3.10' in meta
    extras = set(re.findall(r'^Provides-Extra: (\S+)', meta, re.M))
    assert {'llamacpp', 'transformers', 'models', 'server', 'bridges', 'rl', 'docs', 'dev'} <= extras

def test_citation_cites_the_kit_and_the_four_papers():
    "CITATION.cff is the kit's, at its version; its references are the papers whose BibTeX the four benchmarks carry."
    import yaml, l0kit
    from l0kit.protocol.benchmark import get_benchmark
    cff = yaml.safe_load((ROOT / 'CITATION.cff').read_text())
    assert cff['cff-version'] == '1.2.0' and cff['type'] == 'software' and cff['version'] == l0kit.__version__
    assert cff['license'] == 'Apache-2.0'
    bibtex = {n: get_benchmark(n).citation for n in ('l0', 'procbench', 'sx', 'core')}
    titles = {n: re.search(r'title=\{(.*?)\},', b).group(1) for n, b in bibtex.items()}
    assert sorted(r['title'] for r in cff['references']) == sorted(titles.values())
    for r in cff['references']:
        n = next(k for k, t in titles.items() if t == r['title'])
        assert str(r['year']) in bibtex[n]
        assert [a['family-names'] for a in r['authors']] == [a.split(',')[0].strip() for a in re.search(r'author=\{(.*?)\}', bibtex[n]).group(1).split(' and ')]
    assert f"## {l0kit.__version__}" in (ROOT / 'CHANGELOG.md').read_text()

if __name__ == '__main__' and sys.argv[1:] == ['readme']:
    (ROOT / 'README.md').write_text(readme_from_index(ROOT / 'nbs' / 'index.ipynb'), encoding='utf-8')
    print('wrote README.md from nbs/index.ipynb')


def committed_plan() -> dict:
    "The (model, scale) of each experiment notebook's committed run, as `scripts/run_experiments.sh --committed` runs it."
    text = (ROOT / 'scripts' / 'run_experiments.sh').read_text()
    block = text.split('declare -A COMMITTED=(', 1)[1].split(')\n', 1)[0]
    return {nb: tuple(v.split()) for nb, v in re.findall(r'\[(\w+)\]="([^"]+)"', block)}


FULL = {'l0_01_data': dict(scale='full', token_programs=500), 'procbench_01_data': dict(examples_per_length=10),
        'sx_01_data': dict(scale=1.0), 'core_01_data': dict(probes_per_problem=4),  # the data notebooks at the papers' sizes
        'l0_04_ablations': dict(programs=500, voters=31, ablation_programs=500, run_table5_model=True)}


def test_each_experiment_notebook_holds_the_outputs_of_its_committed_run():
    "Every experiment notebook was run by `run_experiments.sh --committed` at its plan's model and scale: papermill's "
    "parameters are in it, the papers' sizes where the plan says full, outputs in its cells, no error and no smoke run."
    plan = committed_plan()
    assert sorted(plan) == sorted(p.stem for p in (ROOT / 'nbs' / 'experiments').glob('*.ipynb'))
    for name, (model, scale) in plan.items():
        nb = json.loads((ROOT / 'nbs' / 'experiments' / f'{name}.ipynb').read_text())
        injected = [c for c in nb['cells'] if 'injected-parameters' in c.get('metadata', {}).get('tags', [])]
        assert len(injected) == 1, f"{name}: no papermill parameters: not the output of `run_experiments.sh --committed`"
        params = {}
        exec(''.join(injected[0]['source']), {}, params)
        if 'model' in params: assert params['model'] == model, (name, params['model'])
        if scale == 'full':  # the papers' sizes: L0 500 programs x 31 voters on the four splits, every data item
            want = FULL.get(name, dict(programs=500, voters=31, splits='short,medium,long,extra_long'))
            assert {k: params.get(k) for k in want} == want, (name, params)
        code = [c for c in nb['cells'] if c['cell_type'] == 'code' and ''.join(c['source']).strip()]
        outputs = [o for c in code for o in c.get('outputs', [])]
        assert len([c for c in code if c.get('outputs')]) >= len(code) // 3, f"{name}: most cells have no output"
        assert not [o for o in outputs if o['output_type'] == 'error'], f"{name}: a cell failed"
        text = json.dumps(outputs)
        assert 'l0kit-experiment-' not in text and 'scale=smoke' not in text, f"{name}: the test runner's smoke run"

def test_parallel_test_workers_share_no_cpu():
    "scripts/test.sh's xdist workers: each gets every n-th CPU, none shared, none left out; one worker or too few CPUs: all of them."
    from conftest import worker_cpus
    assert [worker_cpus([0, 1], f'gw{i}', 2) for i in range(2)] == [[0], [1]]
    assert [worker_cpus([0, 1, 2, 3, 4], f'gw{i}', 2) for i in range(2)] == [[0, 2, 4], [1, 3]]
    assert [worker_cpus([2, 5, 7], f'gw{i}', 3) for i in range(3)] == [[2], [5], [7]]
    assert worker_cpus([0, 1], 'gw0', 1) == [0, 1] and worker_cpus([0], 'gw1', 2) == [0]

def strings(x):
    "Every string inside a JSON value."
    if isinstance(x, str): yield x
    elif isinstance(x, dict): yield from (s for v in x.values() for s in strings(v))
    elif isinstance(x, list): yield from (s for v in x for s in strings(v))

def test_each_committed_figure_record_names_its_commit_and_its_runs():
    """Every figure's JSON record in figures/ was drawn by committed code (a commit, no uncommitted change in the package),
    names each run folder it draws with the run's identity (model, data digest, responses), and holds no machine path."""
    records = sorted((ROOT / 'figures').rglob('*.json'))
    assert len(records) >= 25
    for p in records:
        rec = json.loads(p.read_text(encoding='utf-8'))
        name = p.relative_to(ROOT)
        assert re.fullmatch(r'[0-9a-f]{40}', rec.get('commit') or ''), f"{name}: no commit: a figure of a run this checkout cannot name"
        assert rec['modified'] is False, f"{name}: drawn by a package with uncommitted changes"
        for run in rec['provenance'].get('runs', []):
            assert isinstance(run, dict) and {'run', 'model', 'data_version', 'responses'} <= set(run), f"{name}: a run without its identity: {run}"
            assert not Path(run['run']).is_absolute() and (run['run'].startswith('runs/') or run['run'].startswith('data/')), (name, run['run'])
        assert not [s for s in strings(rec) if s.startswith('/') or re.search(r'(^|\s)(/tmp|/home|/work|/Users)/', s)], f"{name}: a machine path"
