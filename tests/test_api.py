"""The import surface of the first release: what a plugin needs comes from `l0kit` itself, and nothing of an earlier
layout is kept (no old module path, config alias, renamed command, hidden flag or run format 1)."""
import json, subprocess, sys
import pytest

PLUGIN_API = ['Benchmark', 'Reading', 'FirstError', 'SimulatedModel', 'Prompt', 'ConfigError', 'DataError', 'ItemLayout',
              'Option', 'answer_part', 'first_difference', 'prefix_credit', 'read_card', 'stream_seed', 'get_benchmark',
              'benchmark_names', 'register_benchmark', 'YamlConfig', 'check_value', 'safe_name']
HOME = {'Benchmark': 'protocol.benchmark', 'Reading': 'protocol.benchmark', 'SimulatedModel': 'protocol.models',
        'Prompt': 'protocol.prompt', 'ConfigError': 'protocol.config', 'DataError': 'protocol.config', 'safe_name': 'protocol.config'}

def py(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=120)

def test_the_plugin_api_is_the_kits_own_objects():
    "Each name of `from l0kit import ...` is the very object of the module that defines it (not a copy or a wrapper)."
    import importlib, l0kit
    for name, mod in HOME.items(): assert getattr(l0kit, name) is getattr(importlib.import_module(f'l0kit.{mod}'), name), name
    missing = [n for n in PLUGIN_API if not hasattr(l0kit, n)]
    assert not missing and sorted(set(l0kit.__all__) - {'__version__'}) == sorted(PLUGIN_API)
    with pytest.raises(AttributeError, match="no attribute 'Benchmrk'"): l0kit.Benchmrk

def test_import_l0kit_is_light():
    "`import l0kit` loads none of the harness (nor pandas) until a name is asked for."
    out = py("import sys, l0kit; print(sorted(m for m in sys.modules if m.startswith('l0kit.') or m == 'pandas'))")
    assert out.returncode == 0 and out.stdout.strip() == '[]', out
    out = py("import sys, l0kit; l0kit.ConfigError; print('l0kit.protocol.config' in sys.modules)")
    assert out.stdout.strip() == 'True', out

@pytest.mark.parametrize('code', ['import l0kit.core', 'import l0kit.core.data', 'import l0kit.sx.data', 'import l0kit.harness.hf',
                                  'import l0kit.harness.benchmark', 'from l0kit.harness.cli import main', 'import l0kit.train',
                                  'import l0kit.bridges.export_cli',
                                  'import l0kit.bridges.hf', 'from l0kit.l0.dataset import DatasetConfig',
                                  'from l0kit.l0.benchmark import L0Config', 'from l0kit.procbench.dataset import ProcBenchConfig',
                                  'from l0kit.sx.dataset import SXConfig', 'from l0kit.corebench.dataset import CoreConfig',
                                  'from l0kit.procbench.benchmark import load_procbench_simulated',
                                  'import l0kit.backends.tiny_model'])  # the tests' fixture, tests/tiny_model.py
def test_no_name_of_an_earlier_layout_imports(code):
    out = py(code)
    assert out.returncode == 1 and ('ModuleNotFoundError' in out.stderr or 'ImportError' in out.stderr), out

@pytest.mark.parametrize('argv', [['trace', '--help'], ['procbench-check', '--help'], ['import-release', '--help'],
                                  ['report', 'RUN', '--pass-maj'], ['report', 'RUN', '--errors', 'D']])
def test_no_renamed_command_or_hidden_flag(argv):
    "argparse refuses them (exit 2, its usage line), as it does any word the parser does not know."
    from l0kit.cli.main import main
    with pytest.raises(SystemExit) as e: main(argv)
    assert e.value.code == 2

def test_a_run_folder_of_format_1_is_refused_in_one_line(tmp_path, capsys):
    from l0kit.cli.main import main
    (tmp_path / 'run.json').write_text(json.dumps({'model': 'm', 'benchmark': 'l0', 'split': 's', 'config': {'voters': 3}}))
    (tmp_path / 'responses.jsonl').write_text('')
    assert main(['report', str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and 'has format None; this kit' in err and 'reads format 2' in err


def _imports(root) -> dict:
    "module -> the kit's modules it imports, at the top or inside a function (relative imports resolved)."
    import ast, collections
    graph = collections.defaultdict(set)
    name = lambda p: '.'.join(p.relative_to(root.parent).with_suffix('').parts).removesuffix('.__init__')
    mods = {name(p) for p in root.rglob('*.py')}
    for p in root.rglob('*.py'):
        m = name(p); pkg = m if p.name == '__init__.py' else m.rsplit('.', 1)[0]
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.ImportFrom):
                base = pkg.split('.')[:len(pkg.split('.')) - node.level + 1] if node.level else []
                targets = ['.'.join(base + ([node.module] if node.module else []))]
            elif isinstance(node, ast.Import): targets = [a.name for a in node.names]
            else: continue
            graph[m] |= {t for t in targets if t in mods and t != m}
    return graph

def _cycle(graph) -> list:
    "One import cycle of `graph` as a list of modules, or []."
    state, stack = {}, []
    def visit(v):
        state[v] = 1; stack.append(v)
        for w in sorted(graph.get(v, ())):
            if state.get(w) == 1: return stack[stack.index(w):] + [w]
            if w not in state and (c := visit(w)): return c
        state[v] = 2; stack.pop(); return []
    for v in sorted(graph):
        if v not in state and (c := visit(v)): return c
    return []

def test_no_import_cycle_in_the_package():
    "Counting imports inside functions: no module of the kit reaches itself (the protocol never imports the viewer)."
    from pathlib import Path
    import l0kit
    graph = _imports(Path(l0kit.__file__).parent)
    assert 'l0kit.view.page' not in graph['l0kit.protocol.benchmark']
    assert _cycle(graph) == [], ' -> '.join(_cycle(graph))
    assert _cycle({'a': {'b'}, 'b': {'c'}, 'c': {'a'}}) == ['a', 'b', 'c', 'a']   # the check finds a cycle it is shown


# what each part of the package may import, beside itself and `l0kit` (its version): the layers of docs/architecture.md;
# no shared part imports a benchmark (l0, procbench, sx, corebench: the registry names them)
MAY_IMPORT = {'protocol': set(), 'backends': {'protocol'}, 'sandbox': {'protocol'}, 'runs': {'protocol', 'backends'},
              'view': {'protocol', 'runs'}, 'cli': {'protocol', 'backends', 'runs', 'view', 'sandbox', 'bridges', 'organism'},
              'bridges': {'protocol', 'runs', 'backends'}}

def _parts(graph) -> dict:
    "part of the package -> the other parts its modules import (a part: `protocol`, `runs`, `l0`, ... the name under l0kit)."
    part = lambda m: m.split('.')[1] if '.' in m else m
    out = {}
    for a, bs in graph.items(): out.setdefault(part(a), set()).update(part(b) for b in bs if part(b) not in (part(a), 'l0kit'))
    return out

def test_the_package_is_layered():
    "Counting imports inside functions: the protocol imports no other part, the backends only the protocol, runs no view or command line, the bridges no command, no shared part any benchmark."
    from pathlib import Path
    import l0kit
    parts = _parts(_imports(Path(l0kit.__file__).parent))
    wrong = {p: sorted(parts.get(p, set()) - allowed) for p, allowed in MAY_IMPORT.items() if parts.get(p, set()) - allowed}
    assert wrong == {}, wrong
    assert _parts({'l0kit.protocol.a': {'l0kit.runs.b'}}) == {'protocol': {'runs'}}  # the check sees an arrow upwards


def test_run_json_records_the_benchmark_package_and_the_report_says_when_it_changed(tmp_path, capsys):
    "The plugin's distribution and version (its pyproject says l0kit-sums 0.1.0) go into the data card and run.json; a run made by another version is noted."
    from l0kit.cli.main import main
    assert main(['generate', '--benchmark', 'sums', '--out', str(tmp_path / 'data'), '--limit', '2', '--quiet']) == 0
    card = json.loads((tmp_path / 'data' / 'card.json').read_text())
    assert card['benchmark_package'] == {'name': 'l0kit-sums', 'version': '0.1.0'}   # the data card too
    split = card['splits'][0]
    assert main(['eval', '--data', str(tmp_path / 'data'), '--split', split, '--model', 'simulated', '--voters', '2',
                 '--out', str(tmp_path / 'run'), '--no-progress']) == 0
    meta = json.loads((tmp_path / 'run' / 'run.json').read_text())
    assert meta['benchmark_package'] == {'name': 'l0kit-sums', 'version': '0.1.0'}
    capsys.readouterr()
    assert main(['report', str(tmp_path / 'run')]) == 0
    assert 'an upgrade can change its numbers' not in capsys.readouterr().out
    meta['benchmark_package']['version'] = '0.0.1'
    (tmp_path / 'run' / 'run.json').write_text(json.dumps(meta))
    assert main(['report', str(tmp_path / 'run')]) == 0
    assert 'the run was made with l0kit-sums 0.0.1 and is scored with l0kit-sums 0.1.0: an upgrade can change its numbers' in capsys.readouterr().out


def test_every_import_of_the_kit_inside_the_kit_resolves():
    "Each `from l0kit.X import name` in the package, inside functions too, names a module or an attribute that exists (a shim removed leaves none behind)."
    import ast, importlib
    from pathlib import Path
    import l0kit
    root = Path(l0kit.__file__).parent
    mods = {'.'.join(p.relative_to(root.parent).with_suffix('').parts).removesuffix('.__init__') for p in root.rglob('*.py')}
    missing = []
    for p in sorted(root.rglob('*.py')):
        me = '.'.join(p.relative_to(root.parent).with_suffix('').parts)
        pkg = me.removesuffix('.__init__') if p.name == '__init__.py' else me.rsplit('.', 1)[0]
        for node in ast.walk(ast.parse(p.read_text())):
            if not isinstance(node, ast.ImportFrom): continue
            base = '.'.join(pkg.split('.')[:len(pkg.split('.')) - node.level + 1] + ([node.module] if node.module else [])) if node.level else node.module
            if not (base or '').startswith('l0kit'): continue
            if base not in mods: missing.append(f"{me}: module {base}"); continue
            for a in node.names:
                if a.name != '*' and f"{base}.{a.name}" not in mods and not hasattr(importlib.import_module(base), a.name):
                    missing.append(f"{me}: {base}.{a.name}")
    assert missing == []



KIT_BENCHMARKS = {'l0.benchmark': 'L0Benchmark', 'procbench.benchmark': 'ProcBenchBenchmark', 'sx.benchmark': 'SXBenchmark',
                  'corebench.benchmark': 'CoreBenchmark'}

@pytest.mark.parametrize('module, cls_name', sorted(KIT_BENCHMARKS.items()))
def test_each_kit_benchmark_holds_its_hooks_in_its_own_class_body(module, cls_name):
    "Every hook a kit benchmark overrides, and every attribute of its class, is written in its class body (no `@patch` or assignment in a later cell), and no module-level None (what `@patch` leaves behind) shadows a hook's name in its module or package."
    import ast, importlib, inspect
    from l0kit.protocol.benchmark import Benchmark
    mod = importlib.import_module(f'l0kit.{module}')
    cls = getattr(mod, cls_name)
    hooks = {n for n, v in vars(Benchmark).items() if not n.startswith('__') and (callable(v) or isinstance(v, property))}
    overridden = {n for n in hooks if getattr(cls, n) is not getattr(Benchmark, n)}
    assert {'load', 'build_prompt', 'read', 'reference', 'tables', 'generate', 'stream_item'} <= overridden, sorted(overridden)
    assert sorted(n for n in overridden if n not in vars(cls)) == []   # each in the class's own __dict__
    lines, first = inspect.getsourcelines(cls)
    body = ast.parse(''.join(lines)).body[0].body
    written = {n.name for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    written |= {t.id for n in body if isinstance(n, (ast.Assign, ast.AnnAssign)) for tg in (n.targets if isinstance(n, ast.Assign) else [n.target])
                for t in (tg.elts if isinstance(tg, ast.Tuple) else [tg]) if isinstance(t, ast.Name)}
    attrs = {n for n in vars(cls) if not (n.startswith('__') and n.endswith('__')) and n != '_abc_impl'}   # not the ABC machinery's own
    assert sorted(attrs - written) == [], f"{cls_name}: {sorted(attrs - written)} set outside its class body"
    for name in sorted(attrs):
        f = inspect.unwrap(getattr(vars(cls)[name], 'fget', vars(cls)[name]))   # `load` is wrapped to check item ids; a property's getter
        if inspect.isfunction(f):
            assert inspect.getsourcefile(f) == inspect.getsourcefile(cls) and first <= f.__code__.co_firstlineno < first + len(lines), \
                f"{cls_name}.{name} is defined outside its class body"
    pkg = importlib.import_module(f"l0kit.{module.split('.')[0]}")
    shadows = sorted(f"{m.__name__}.{x}" for m in (mod, pkg) for x in hooks | attrs if vars(m).get(x, 0) is None)
    assert shadows == [], f"module-level None for hook names: {shadows}"


def test_every_wide_record_is_built_by_keyword_after_its_first_field():
    "Each wide dataclass of the kit (five fields or more, once built positionally) takes its first field by position and every other by keyword only: its old positional form is a TypeError, and the same values named build it."
    import dataclasses, importlib
    f = lambda *a: None
    old_forms = {   # module.Class: the positional form it was built with before, as in the kit's own calls
        'protocol.models.Completion': ('', 40, 0, 0.0, 'error', 'server down'),
        'runs.report.Report': ('l0', 'model', False, {}, 0, {}, [], None, None, {}, {}),
        'runs.compare.Comparison': ('l0', 'a', 'b', 0, None, {}, None, [], 0.95),
        'view.page.Answer': ([0, 2], ['L2,x:1', 'L3,'], False, 1, 'expression', 'arithmetic', '', None, 'k'),
        'view.page.ItemView': ('l0', 'short-0000', 'short', 'L1 def function(x):', [1, 2], ['L2,x:1', 'L3,'], [], {}, []),
        'view.page.RunView': (None, None, {}, {}, {}),
        'l0.metrics.TraceScore': (False, 2, 3, 'ended_early', ['L2,'], ['L2,']),
        'l0.check.Vocabulary': ((('x', 'int'),), False, frozenset(), frozenset(), frozenset(), frozenset(), 9, 4),
        'procbench.tasks.Task': ('task00', 'Double', 'int', 'int', 'Double the number.', f, f, f, f),
        'sx.atomic.AtomicClass': ('negate', 'arithmetic', 'int', 'int', '-x', ('def f(x):\n    return -x\n',)),
        'sx.compose.Composite': ('sequential', 'def main(x):\n    return x\n', 'int', [], []),
        'sx.dataset.SubsetConfig': ('easy', 'reasoning', 750, {'sequential': 325}, (3, 5), (6, 10)),
        'corebench.pytrace.TraceStep': (3, 4, 'total += x', 'stmt', 'f', 0, 0, {'total': '6'}, ['total']),
        'corebench.pytrace.Trace': ('def f(xs): ...', 'f', '[1]', [], '1', None, 'ok'),
        'corebench.pytrace._Stmt': (3, 3, 'for x in xs', 'for', (4, 7), ('x',), (0, 11)),
        'corebench.diversity.FilterDecision': (1, 5, 0.91, False, 'similar to #0'),
        'corebench.diversity.TestReduction': ([3], 4, 1, 12, []),
        'corebench.probes.Probe': ('What is `total`?', '16', 'integer', ['State'], 16, 6, 'total', 'history'),
        'protocol.benchmark.ItemLayout': ('def f(x): ...', [1, 2], ['L2,x:1', 'L3,'], {}, []),
    }
    for where, args in old_forms.items():
        module, name = where.rsplit('.', 1)
        cls = getattr(importlib.import_module(f'l0kit.{module}'), name)
        fs = dataclasses.fields(cls)
        assert len(fs) >= 5 and len(args) <= len(fs), where
        assert [x.name for x in fs if not x.kw_only] == [fs[0].name], f"{where}: {[x.name for x in fs[1:] if not x.kw_only]} not keyword-only"
        with pytest.raises(TypeError, match='positional argument'): cls(*args)
        named = cls(args[0], **{x.name: v for x, v in zip(fs[1:], args[1:])})
        assert [getattr(named, x.name) for x in fs[:len(args)]] == list(args), where


def test_a_benchmark_lacking_a_required_hook_cannot_be_made_and_says_which():
    "The four required hooks are abstract: a class without `read` and `reference` is refused at construction, naming both."
    from l0kit.protocol.benchmark import Benchmark
    class Half(Benchmark):
        def load(self, data_dir, split, limit=None): return []
        def build_prompt(self, item, voter, seed=0): return None
    with pytest.raises(TypeError, match=r"Half lacks the protocol's required hooks read, reference"): Half()
    class Whole(Half):
        def read(self, item, response, **options): return None
        def reference(self, item): return ''
    assert Whole().name == ''
