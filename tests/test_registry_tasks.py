"""Shared code names no benchmark: Inspect's named tasks are made from the registry (every registered benchmark, a plugin's
and one registered at run time included, with its settings' own defaults), and the `--help` of the shared verbs reads
each benchmark's defaults from the benchmark instead of restating them."""
import argparse, dataclasses, importlib.util, inspect, json, os, re, subprocess, sys
from pathlib import Path
import pytest
import l0kit
from l0kit.protocol.benchmark import BENCHMARKS, DEFAULT_BENCHMARK, available_benchmarks, benchmark_class

PKG = Path(l0kit.__file__).resolve().parent  # the package under test (a subprocess imports the same)
RUN_PARAMS = ['data', 'split', 'voters', 'seed', 'limit', 'stop', 'temperature', 'tokenizer']  # the generic task's, by hand
HAS_INSPECT = importlib.util.find_spec('inspect_ai') is not None
needs_inspect = pytest.mark.skipif(not HAS_INSPECT, reason='inspect_ai is not installed (the `bridges` extra)')

# a benchmark no file of the kit names: its settings' defaults (width 7, style 'plain') and its 5 voters are chosen here
COUNTDOWN = '''
from __future__ import annotations
import json
from dataclasses import dataclass
from pathlib import Path
from l0kit import Benchmark, Prompt, Reading, YamlConfig

@dataclass
class CountdownConfig(YamlConfig):
    "How the count is asked for."
    width: int = 7  # numbers per line
    style: str = 'plain'  # how the numbers are written

class Countdown(Benchmark):
    "Countdown: count down from a start to zero, a benchmark no file of the kit names."
    name, Config, default_voters = 'countdownx', CountdownConfig, 5

    def load(self, data_dir, split, limit=None):
        return [json.loads(l) for l in (Path(data_dir) / f'{split}.jsonl').read_text().splitlines()][:limit]

    def build_prompt(self, item, voter=0, seed=0):
        return Prompt([{'role': 'user', 'content': f"Count down from {item['start']}, {self.config.width} a line."}], 32)

    def reference(self, item): return ' '.join(str(k) for k in range(item['start'], -1, -1))

    def read(self, item, response, **options):
        ok = (response or '').strip() == self.reference(item)
        return Reading(answer=response, key=str(response), correct=ok, scores={})
'''


def countdown_class():
    ns = {}
    exec(compile(COUNTDOWN, 'countdownx_benchmark', 'exec'), ns)
    return ns['Countdown']


def countdown_data(d: Path) -> Path:
    "Two splits of two items each, and a card naming the benchmark (its first split: `first`)."
    d.mkdir(parents=True)
    (d / 'card.json').write_text(json.dumps({'benchmark': 'countdownx', 'splits': ['first', 'second']}))
    for s, starts in (('first', (3, 4)), ('second', (5, 6))):
        (d / f'{s}.jsonl').write_text(''.join(json.dumps({'id': f'{s}-{k}', 'split': s, 'start': k}) + '\n' for k in starts))
    return d


@pytest.fixture
def countdown(monkeypatch):
    "`countdownx` registered at run time (`register_benchmark`), unregistered afterwards."
    cls = countdown_class()
    monkeypatch.setitem(BENCHMARKS, 'countdownx', cls)
    return cls


def field_default(f):
    return f.default if f.default is not dataclasses.MISSING else f.default_factory()


def inspect_task(label: str):
    "The task Inspect's own registry holds under `l0kit/LABEL` (as `inspect eval l0kit/LABEL` looks it up)."
    import l0kit.bridges.inspect  # noqa: F401 (the module the package's `inspect_ai` entry point names)
    from inspect_ai._util.registry import registry_lookup
    return registry_lookup('task', f'l0kit/{label}')


# ------------------------------------------------------------------ Inspect's named tasks, made from the registry

@needs_inspect
@pytest.mark.parametrize('name', available_benchmarks())
def test_each_benchmark_has_a_task_with_its_settings_defaults(name):
    "Every available benchmark (the kit's four, an installed plugin's) is `l0kit/LABEL`; its parameters are the run's, then each "
    "field of its Config with the dataclass's own default (read here with `dataclasses.fields`), and its docstring is the class's."
    cls = benchmark_class(name)
    fn = inspect_task(cls.tool_name or cls.name)
    assert fn is not None, f"Inspect has no task l0kit/{cls.tool_name or cls.name}"
    params = inspect.signature(fn).parameters
    fields = dataclasses.fields(cls.Config)
    assert list(params) == RUN_PARAMS + [f.name for f in fields]
    assert {f.name: params[f.name].default for f in fields} == {f.name: field_default(f) for f in fields}
    assert params['split'].default is None  # the data's first split, as the generic task takes it
    assert fn.__doc__ == cls.__doc__


@needs_inspect
def test_the_four_kit_tasks_keep_their_names():
    labels = {benchmark_class(n).tool_name or n for n in ('l0', 'procbench', 'sx', 'core')}
    assert labels == {'l0bench', 'procbench', 'sxbench', 'corebench'}
    assert all(inspect_task(label) is not None for label in labels | {'benchmark'})


@needs_inspect
def test_a_benchmark_registered_at_run_time_gets_its_task(tmp_path, countdown):
    "Registered after the bridge was imported, `countdownx` gets `l0kit/countdownx`, which Inspect's own loader builds from "
    "`-T` arguments: a setting given is the task's, one not given is the Config's default, the split the data's first."
    from inspect_ai._eval.loader import load_tasks
    from inspect_ai._util.config import parse_cli_args
    from inspect_ai._util.registry import registry_info
    from l0kit.bridges.inspect import benchmark_tasks
    assert 'countdownx' in benchmark_tasks()
    fn = inspect_task('countdownx')
    params = inspect.signature(fn).parameters
    assert (params['width'].default, params['style'].default, params['width'].kind) == (7, 'plain', inspect.Parameter.KEYWORD_ONLY)
    assert fn.__doc__ == countdown.__doc__
    data = countdown_data(tmp_path / 'data')
    (t,) = load_tasks(['l0kit/countdownx'], parse_cli_args([f'data={data}', 'width=9']))
    assert registry_info(t).name == 'l0kit/countdownx'
    assert (t.metadata['settings'], t.metadata['split'], t.metadata['voters']) == ({'width': 9, 'style': 'plain'}, 'first', 5)
    assert [s.id for s in t.dataset] == ['first-3', 'first-4'] and 'Count down from 3, 9 a line.' in t.dataset[0].input[0].text
    (t,) = load_tasks(['l0kit/countdownx'], parse_cli_args([f'data={data}', 'split=second', 'voters=2']))
    assert (t.metadata['settings']['width'], t.metadata['split'], t.metadata['voters']) == (7, 'second', 2)
    with pytest.raises(TypeError):  # a setting the benchmark does not declare is not a parameter of its task
        fn(data=str(data), shots=2)


PLUGIN_RUN = """
import json, sys
from inspect_ai import eval as inspect_eval
from inspect_ai._util.config import parse_cli_args
from inspect_ai._util.registry import registry_lookup
from inspect_ai.model import ModelOutput, ModelUsage, get_model
def answer(messages, *_):  # the count, with the usage set (Inspect need not count tokens)
    start = int(messages[-1].text.split()[3].rstrip(','))
    return ModelOutput.from_content('mockllm/model', ' '.join(str(k) for k in range(start, -1, -1))).model_copy(
        update={'usage': ModelUsage(input_tokens=5, output_tokens=5, total_tokens=10)})
# as `inspect eval l0kit/countdownx -T data=DIR -T width=9`: Inspect finds the task by name through the entry points
(log,) = inspect_eval('l0kit/countdownx', task_args=parse_cli_args([f'data={sys.argv[1]}', 'width=9']),
                      model=get_model('mockllm/model', custom_outputs=answer), log_dir=sys.argv[2], display='none')
found = {n: registry_lookup('task', f'l0kit/{n}') is not None for n in ('countdownx', 'broken', 'l0bench', 'benchmark')}
print(json.dumps({'found': found, 'location': log.location}))
"""


@needs_inspect
def test_a_plugin_gets_its_task_and_a_broken_plugin_is_left_out(tmp_path):
    "A benchmark installed by entry point, beside one whose module raises: Inspect runs `l0kit/countdownx` by name with "
    "`width=9` as `-T` gives it; the broken plugin has no task and keeps no other task from loading."
    site = tmp_path / 'site'
    dist = site / 'l0kit_countdownx-1.0.dist-info'; dist.mkdir(parents=True)
    (dist / 'METADATA').write_text('Metadata-Version: 2.1\nName: l0kit-countdownx\nVersion: 1.0\n')
    (dist / 'entry_points.txt').write_text('[l0kit.benchmarks]\ncountdownx = l0kit_countdownx:Countdown\nbroken = l0kit_broken_x:Broken\n'
                                           '[inspect_ai]\nl0kit = l0kit.bridges.inspect\n')  # the kit's own entry point, as pyproject installs it
    (site / 'l0kit_countdownx.py').write_text(COUNTDOWN)
    (site / 'l0kit_broken_x.py').write_text('raise RuntimeError("this plugin is broken on purpose")\n')
    data = countdown_data(tmp_path / 'data')
    r = subprocess.run([sys.executable, '-c', PLUGIN_RUN, str(data), str(tmp_path / 'logs')], cwd=tmp_path, capture_output=True, text=True,
                       env=os.environ | {'PYTHONPATH': f"{site}{os.pathsep}{PKG.parent}"})
    assert r.returncode == 0, r.stderr[-3000:]
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got['found'] == {'countdownx': True, 'broken': False, 'l0bench': True, 'benchmark': True}
    from inspect_ai.log import read_eval_log
    log = read_eval_log(got['location'])
    assert log.status == 'success' and log.eval.task == 'l0kit/countdownx' and log.eval.task_args['width'] == 9
    assert log.eval.task_args['style'] == 'plain' and len(log.samples) == 2 * 5  # two items of split `first`, five voters: the class's
    assert {s.name: s.metrics['mean'].value for s in log.results.scores}['correct'] == 1.0


# ------------------------------------------------------------------ `--help` of the shared verbs

def help_of(*path) -> str:
    from l0kit.cli.main import build_parser
    p = build_parser()
    for word in path:
        p = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction)).choices[word]
    return p.format_help()


def shared_part(text: str) -> str:
    "The help without what the registry makes: the `{a,b,...}` choice lists and the section from a line starting `benchmarks`."
    text = re.split(r'^benchmarks\b', text, maxsplit=1, flags=re.M)[0]
    return re.sub(r'\{[^{}]*\}', '{...}', text).replace(f'(default: {DEFAULT_BENCHMARK})', '')


def registry_section(text: str) -> dict:
    "Each benchmark's line of the section that lists them: name -> line."
    parts = re.split(r'^benchmarks\b', text, maxsplit=1, flags=re.M)
    assert len(parts) == 2, 'no section listing the benchmarks'
    return {l.split()[0]: l for l in parts[1].splitlines()[1:] if l.strip() and not l.strip().startswith("(")}


VERBS = [('eval',), ('generate',), ('models',), ('describe',), ('export',), ('export', 'lm-eval'), ('export', 'rl'), ('export', 'hf'),
         ('export', 'inspect-log'), ('report',), ('view',), ('compare',)]


@pytest.mark.parametrize('path', VERBS, ids=' '.join)
def test_shared_help_names_no_benchmark(path, countdown, monkeypatch):
    "Outside what the registry makes, a shared verb's help names no benchmark and gives no benchmark's setting a value "
    "(`--set KEY=VALUE` examples take placeholders)."
    monkeypatch.setenv('COLUMNS', '1000')  # one line per help text
    text = shared_part(help_of(*path))
    names = {w for n in available_benchmarks() for w in (n, benchmark_class(n).tool_name) if w}
    assert re.findall(r'\b(' + '|'.join(map(re.escape, sorted(names))) + r')\b', text, flags=re.I) == []
    assert [kv for kv in re.findall(r"--set\s+(\w+=[^\s,;)\]]+)", text) if not re.fullmatch(r'\w+=[A-Z_]+', kv)] == []


@pytest.mark.parametrize('path', [('eval',), ('export', 'lm-eval'), ('export', 'rl')], ids=' '.join)
def test_help_reads_each_benchmarks_defaults_from_the_benchmark(path, countdown, monkeypatch):
    "The verbs that take settings list every available benchmark with its declared voters and each setting's default, "
    "`countdownx` (registered a moment ago) with what its class declares."
    monkeypatch.setenv('COLUMNS', '1000')
    lines = registry_section(help_of(*path))
    assert set(lines) == set(available_benchmarks())
    for name, line in lines.items():
        cls = benchmark_class(name)
        assert f"{cls.default_voters} voter" in line
        assert all(f"{f.name}={field_default(f)!r}" in line for f in dataclasses.fields(cls.Config)), line
    assert '5 voters' in lines['countdownx'] and "width=7" in lines['countdownx'] and "style='plain'" in lines['countdownx']


def test_generate_help_lists_each_generators_options():
    lines = registry_section(help_of('generate'))
    for name in available_benchmarks():
        for k, o in benchmark_class(name).generate_options.items(): assert f"{k}={o.default!r}" in lines[name]


def test_shared_modules_hold_no_benchmark_name():
    "No string constant of a shared command or bridge module is a kit benchmark's name (the default is `DEFAULT_BENCHMARK`); "
    "`l0kit train` trains the L0 organism and is left out."
    import ast
    names = {w for n in ('l0', 'procbench', 'sx', 'core') for w in (n, benchmark_class(n).tool_name) if w}
    found = []
    for f in [*sorted((PKG / 'cli').glob('*.py')), *sorted((PKG / 'bridges').glob('*.py'))]:
        if f.name == 'train.py': continue
        found += [(f.name, n.lineno, n.value) for n in ast.walk(ast.parse(f.read_text()))
                  if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value in names]
    assert found == []


def test_verifiers_taskset_takes_the_benchmark_from_the_card(tmp_path):
    "With no benchmark named, the verifiers taskset of a data folder is the benchmark its card names (as for `l0kit eval`), "
    "and with no data the kit's `DEFAULT_BENCHMARK`, not a name written into the bridge."
    pytest.importorskip('verifiers')
    from l0kit.bridges.verifiers import taskset
    from l0kit.protocol.benchmark import get_benchmark
    get_benchmark('procbench').generate(tmp_path / 'pb', limit=1)
    assert taskset(data=str(tmp_path / 'pb'), split='short', limit=2).bench.name == 'procbench'
    assert taskset(limit=1).bench.name == benchmark_class(DEFAULT_BENCHMARK).name
