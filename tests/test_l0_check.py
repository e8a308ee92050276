"""L0 programs are data: every program the generator makes is in its grammar, and nothing else is traced (issue 16, item 1)."""
import gzip, json, random, time
from pathlib import Path

import pytest
from hypothesis import given, settings, HealthCheck, strategies as st

from l0kit.l0.check import check_program, check_items, ProgramRejected, release_config, vocabulary
from l0kit.l0.generator import GenConfig, ProgramGenerator, GenerationError
from l0kit.l0.dataset import L0DataConfig, SplitSpec, get_preset, PRESETS, build_dataset, save_dataset, load_split, load_dataset
from l0kit.l0.release import write_release_format, import_release

ROOT = Path(__file__).resolve().parents[1]
PROGRAMS_PER_CONFIG = 300


def table5_ablations() -> dict:
    "The 18 ablation configurations of table 5, read from the experiment notebook that builds them (so they cannot drift apart)."
    nb = json.loads((ROOT / 'nbs' / 'experiments' / 'l0_04_ablations.ipynb').read_text())
    cell = next(''.join(c['source']) for c in nb['cells'] if c['cell_type'] == 'code' and 'ABLATIONS = {' in ''.join(c['source']))
    ns = dict(GenConfig=GenConfig, L0DataConfig=L0DataConfig, SplitSpec=SplitSpec)
    exec(cell, ns)
    return {f"table5 {op} {setting}".strip(): ns['ablation_config'](op, setting, 1).gen for op, setting in ns['ABLATIONS']}


def all_configs() -> dict:
    "Every generator configuration the kit ships or documents."
    out = {f"preset {name}": PRESETS[name]().gen for name in PRESETS}
    out.update({f"configs/{p.name}": L0DataConfig.from_yaml(p).gen for p in sorted((ROOT / 'configs').glob('*.yaml'))})
    out.update({'list_index_vars': GenConfig(list_index_vars=True),
                'nested blocks': GenConfig(max_scope_depth=2, min_code_lines=10, max_code_lines=40),
                'small pools': GenConfig(max_num=20, min_list_len=1, max_list_len=3, max_while_loop=12),
                'release grammar': release_config()})
    out.update(table5_ablations())
    return out


CONFIGS = all_configs()


def test_the_ablations_are_the_eighteen_rows_of_table_5():
    assert len(table5_ablations()) == 18


@pytest.mark.parametrize('name', sorted(CONFIGS))
def test_every_generated_program_is_in_its_grammar(name):
    cfg = CONFIGS[name]
    gen, made = ProgramGenerator(cfg), 0
    for s in range(PROGRAMS_PER_CONFIG):
        try: prog = gen.generate(random.Random(f"check/{name}/{s}"))
        except GenerationError: continue
        check_program(prog.text, cfg)
        made += 1
    assert made >= PROGRAMS_PER_CONFIG * 0.9, f"{name}: only {made} programs generated"


def test_narrow_grammars_refuse_what_they_cannot_derive():
    pop_only = CONFIGS['configs/ablation_pop.yaml']
    check_program("def function(lst_x):\n    lst_x.pop()\n    return\n", pop_only)
    with pytest.raises(ProgramRejected, match=r"line 2: assign statements \(`a = 1`\) are not in the grammar"):
        check_program("def function(lst_x):\n    a = 1\n    lst_x.pop()\n    return\n", pop_only)
    with pytest.raises(ProgramRejected, match="the method `.append"):
        check_program("def function(lst_x):\n    lst_x.append(1)\n    return\n", pop_only)


# --- attacks ----------------------------------------------------------------------------------------------------------

def _small_set(tmp_path):
    items, card = build_dataset(get_preset('small').with_counts(3), seed=0)
    return items, card


def test_a_shared_data_set_with_a_shell_command_is_refused_and_nothing_runs(tmp_path):
    items, card = _small_set(tmp_path)
    marker = tmp_path / 'F'
    evil = dict(items['medium'][2])
    evil['program'] = evil['program'].replace('\n', f"\n    w = __import__('os').system('touch {marker}') + 1\n", 1)
    items['medium'][2] = evil
    save_dataset(items, card, tmp_path / 'data')
    for load in (lambda: load_split(tmp_path / 'data', 'short'), lambda: load_split(tmp_path / 'data', 'medium', limit=1),
                 lambda: load_dataset(tmp_path / 'data', with_traces=True)):
        with pytest.raises(ProgramRejected, match=r"item 'medium-0002', line 2: a call .*refused as a whole"): load()
    from l0kit.l0.benchmark import L0Benchmark
    from l0kit.protocol.benchmark import DataError
    with pytest.raises(DataError, match=r"item 'medium-0002', line 2: a call .*refused as a whole"):  # one line, exit 2 on the CLI
        L0Benchmark().load(tmp_path / 'data', 'short')
    assert not marker.exists()


def test_an_edited_split_file_is_checked_again(tmp_path):
    items, card = _small_set(tmp_path)
    save_dataset(items, card, tmp_path / 'data')
    assert len(load_split(tmp_path / 'data', 'short')) == 3          # checked and cached
    p = tmp_path / 'data' / 'short.jsonl.gz'
    recs = [json.loads(l) for l in gzip.open(p, 'rt')]
    recs[0]['program'] = recs[0]['program'].replace('\n', "\n    a = x ** 99999999\n", 1)
    with gzip.open(p, 'wt') as f: f.writelines(json.dumps(r) + '\n' for r in recs)
    with pytest.raises(ProgramRejected, match=r"item 'short-0000', line 2: the operator `\*\*`"): load_split(tmp_path / 'data', 'short')


def test_a_release_with_a_shell_command_is_refused_and_nothing_runs(tmp_path, capsys):
    items, _ = _small_set(tmp_path)
    rel = write_release_format(items, tmp_path / 'rel')
    marker = tmp_path / 'F'
    lines = (rel / 'data.jsonl').read_text().splitlines()
    rec = json.loads(lines[-1])
    rec['program'] = rec['program'].replace('\n', f"\n\tw = __import__('os').system('touch {marker}') + 1\n", 1)
    lines[-1] = json.dumps(rec)
    (rel / 'data.jsonl').write_text('\n'.join(lines) + '\n')
    with pytest.raises(ProgramRejected, match=f"item '{rec['id']}', line 2: a call"): import_release(rel)
    from l0kit.cli.main import main
    rc = main(['l0', 'import-release', str(rel), '--out', str(tmp_path / 'out')])   # a crash (any exception) fails the test
    err = capsys.readouterr().err
    assert rc == 2 and f"item '{rec['id']}', line 2: a call" in err and len(err.strip().splitlines()) == 1, (rc, err)
    assert not marker.exists() and not (tmp_path / 'out').exists()


def test_a_huge_power_is_refused_at_once():
    prog = "def function(x):\n    a = x ** 99999999\n    return\n"
    t = time.perf_counter()
    with pytest.raises(ProgramRejected, match=r"line 2: the operator `\*\*` is not in the grammar .*never accepted"): check_program(prog)
    # even a grammar that names ** does not get it: its cost is unbounded
    with pytest.raises(ProgramRejected, match="never accepted"):
        check_program(prog, GenConfig(grammar_override='<arithm_expr> ::= <operand> " ** " <number>'))
    assert time.perf_counter() - t < 0.5


def test_a_release_program_with_variable_indices_and_while_true_is_in_the_release_grammar():
    prog = "def function(x, lst_x):\n\ta = lst_x[x]\n\twhile True:\n\t\tlst_x.pop()\n\treturn\n"
    check_program(prog, release_config())
    with pytest.raises(ProgramRejected): check_program(prog)


ESCAPES = ["__import__('os').system('id')", "open('/etc/passwd').read()", "lst_x.__class__", "(lambda: 1)()", "[c for c in lst_x]",
           "globals()", "x.__add__(1)", "getattr(x, 'real')", "lst_x.copy()", "eval('1')", "exec('1')", "type(x)", "len(x)", "len(lst_x, lst_y)",
           "x ** 9", "x * x", "x << 99", "-x", "'a'", "1.5", "None", "x if cond_x else 1", "(a := 1)", "{1: 2}", "(1, 2)",
           "lst_x[0:1]", "x // 1", "x % 1", "not cond_x", "cond_x and cond_x", "f'{x}'", "b'a'", "...", "__builtins__",
           "breakpoint()", "vars()", "x.real", "x in lst_x"]
STATEMENTS = ["import os", "from os import system", "del lst_x", "global a", "nonlocal a", "for i in lst_x: pass", "pass",
              "with open('f') as f: pass", "try:\n        a = 1\n    except Exception:\n        a = 2", "raise SystemExit",
              "assert x", "def g(): pass", "class C: pass", "lst_x[0] = 1", "a += 1", "a: int = 1", "a = b = 1", "a, b = 1, 2",
              "lst_x.sort()", "lst_x.extend(lst_x)", "lst_x.append(x, x)", "lst_x.pop(0)", "return x", "x", "lst_x.append(lst_x)",
              "async def g(): pass", "while cond_x:\n        a = 1\n    else:\n        a = 2"]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), expr=st.sampled_from(ESCAPES), stmt=st.sampled_from(STATEMENTS), where=st.floats(0, 1))
def test_any_program_with_a_shape_outside_the_grammar_is_refused(seed, expr, stmt, where):
    "A generated program with one foreign expression or statement inserted anywhere is refused at that line."
    cfg = GenConfig(list_index_vars=True)
    prog = ProgramGenerator(cfg).generate(random.Random(seed)).text
    lines = prog.splitlines()
    k = 1 + int(where * (len(lines) - 2))          # a body line, before the final return
    indent = lines[k][:len(lines[k]) - len(lines[k].lstrip())]
    for bad in (f"a = {expr}", stmt.replace('\n    ', '\n' + indent)):
        text = '\n'.join(lines[:k] + [indent + bad] + lines[k:]) + '\n'
        with pytest.raises(ProgramRejected) as e: check_program(text, cfg)
        assert e.value.line is not None and k + 1 <= e.value.line <= k + 4, (bad, str(e.value))


def test_check_items_names_the_item_and_counts():
    good = "def function(x):\n    a = x + 1\n    return\n"
    assert check_items([{'id': 'a', 'program': good}] * 3) == 3
    with pytest.raises(ProgramRejected, match="item 'b': a program is text"): check_items([{'id': 'a', 'program': good}, {'id': 'b'}])
    with pytest.raises(ProgramRejected, match=r"item '#2', line 1: not valid Python"): check_items([good, 'def'])


def test_the_check_is_cheap_next_to_a_trace():
    "About a millisecond or less per program: it runs once per program, never per trace."
    cfg = GenConfig()
    gen = ProgramGenerator(cfg)
    progs = [gen.generate(random.Random(i)).text for i in range(200)]
    vocabulary(cfg)
    t = time.process_time()
    for p in progs: check_program(p, cfg)
    assert (time.process_time() - t) / len(progs) < 0.003


def test_every_grammar_the_kit_generates_with_is_one_a_card_may_name():
    "KIT_GRAMMARS holds the override of every preset, shipped configuration and table 5 ablation: the kit's own sets load (issue 31)."
    from l0kit.l0.check import KIT_GRAMMARS
    assert {name: cfg.grammar_override for name, cfg in CONFIGS.items() if cfg.grammar_override not in KIT_GRAMMARS} == {}


def test_a_set_made_with_a_shipped_ablation_grammar_loads(tmp_path):
    "configs/ablation_pop.yaml's override is on the card; the loader accepts it because it is the kit's own, matched exactly."
    cfg = L0DataConfig.from_yaml(ROOT / 'configs' / 'ablation_pop.yaml').with_counts(2)
    save_dataset(*build_dataset(cfg, seed=0), tmp_path / 'data')
    assert [len(it['demo_traces']) for it in load_split(tmp_path / 'data', 'all')] == [64, 64]
