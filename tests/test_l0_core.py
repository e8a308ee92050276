"""Property tests of the L0 core: grammar, generator, tracer, data set, release importer, CLI."""
import copy, hashlib, json, os, pickle, random, subprocess, sys, textwrap
from pathlib import Path

import pytest

from l0kit.l0.grammar import Grammar, GrammarError, BASE_GRAMMAR
from l0kit.l0.generator import GenConfig, ProgramGenerator, ConfigError, GenerationError, sample_inputs, check_program
from l0kit.l0.tracer import trace_program, TraceError, ProgramRuntimeError, StepLimitExceeded, UnsupportedProgram
from l0kit.l0.dataset import (L0DataConfig, SplitSpec, build_dataset, save_dataset, load_split, load_card, get_preset,
                           step_bounds, DatasetError)
from l0kit.l0.release import write_release_format, import_release, load_id_list, ReleaseFormatError

CONFIGS = [GenConfig(), GenConfig(max_scope_depth=2, min_code_lines=10, max_code_lines=40),
           GenConfig(list_index_vars=True), GenConfig(max_num=20, min_list_len=1, max_list_len=3, max_while_loop=12)]


def settrace_oracle(program, inputs):
    "An independent reference: sys.settrace line events and the locals after each line."
    import ast
    mod = ast.parse(program); ns = {}
    exec(compile(mod, '<oracle>', 'exec'), {}, ns)
    fn = next(iter(ns.values()))
    stores = {}
    for st in ast.walk(mod.body[0]):
        if isinstance(st, ast.Assign): stores[st.lineno] = st.targets[0].id if isinstance(st.targets[0], ast.Name) else st.targets[0].value.id
        elif isinstance(st, ast.Expr) and isinstance(st.value, ast.Call) and isinstance(st.value.func, ast.Attribute):
            stores[st.lineno] = st.value.func.value.id
    snaps, code = [], fn.__code__
    def local(frame, event, arg):
        if event in ('line', 'return'): snaps.append((frame.f_lineno if event == 'line' else None, copy.deepcopy(frame.f_locals)))
        return local
    sys.settrace(lambda f, e, a: local if f.f_code is code else None)
    try: fn(**copy.deepcopy(inputs))
    finally: sys.settrace(None)
    return [f"L{n},{stores[n]}:" + repr(after[stores[n]]).replace(' ', '') if n in stores else f"L{n},"
            for (n, _), (_, after) in zip(snaps, snaps[1:])]


@pytest.mark.parametrize('ci', range(len(CONFIGS)))
def test_generated_programs_respect_constraints(ci):
    cfg = CONFIGS[ci]; gen = ProgramGenerator(cfg)
    for s in range(80):
        prog = gen.generate(random.Random(f"t/{ci}/{s}"))
        assert check_program(prog.text, cfg) == [], prog.text
        # every argument is read, lists are never assigned, names follow the pools
        body = prog.text.split('\n', 1)[1]
        for name, typ in prog.args: assert name in body
        assert ' = [' not in body


@pytest.mark.parametrize('ci', range(len(CONFIGS)))
def test_traces_match_an_independent_settrace_oracle(ci):
    cfg = CONFIGS[ci]; gen = ProgramGenerator(cfg); compared = 0
    for s in range(60):
        rng = random.Random(f"o/{ci}/{s}")
        prog = gen.generate(rng)
        for _ in range(4):
            inp = sample_inputs(prog.args, cfg, rng)
            try: ours = trace_program(prog.text, inp, 2000)
            except ProgramRuntimeError:
                with pytest.raises(Exception): settrace_oracle(prog.text, inp)
                continue
            except StepLimitExceeded: continue
            assert ours == settrace_oracle(prog.text, inp); compared += 1
            lo, hi = step_bounds(prog.text)
            assert lo <= len(ours) <= hi
            assert ours == trace_program(prog.text, inp, 2000, fast=False)
    assert compared > 20


def test_tracer_accepts_release_formatting_and_reports_errors():
    prog = "def function(x, lst_a):\n\tx = x + 1 \t\n\tif x == 2:\n\t\tlst_a.pop()\n\treturn\n"
    assert trace_program(prog, {'x': 1, 'lst_a': [5, 6]}) == ['L2,x:2', 'L3,', 'L4,lst_a:[5]', 'L5,']
    with pytest.raises(ProgramRuntimeError, match='line 4: IndexError'): trace_program(prog, {'x': 1, 'lst_a': []})
    with pytest.raises(StepLimitExceeded): trace_program("def function():\n    while True:\n        pass\n", {}, max_steps=50)
    with pytest.raises(StepLimitExceeded): trace_program("def function():\n    while True:\n        pass\n", {})  # safety cap, no hang
    with pytest.raises(UnsupportedProgram, match='Import'): trace_program("def function():\n    import os\n", {})
    # a deque has append and pop too: the incremental list text must not be used for it
    from collections import deque
    assert trace_program("def function(q):\n    q.append(1)\n    return\n", {'q': deque([2])}) == ['L2,q:deque([2,1])', 'L3,']


def test_bad_configs_fail_with_clear_messages(tmp_path):
    with pytest.raises(ConfigError, match='min_code_lines <= max_code_lines'): GenConfig(min_code_lines=60)
    with pytest.raises(ConfigError, match='max_while_loop'): GenConfig(max_while_loop=3)
    with pytest.raises(ConfigError, match='block_stmts'): GenConfig(block_stmts=(0, 3))
    f = tmp_path / 'bad.yaml'; f.write_text('gen: {max_num: 10}\nsplits: [1, 2\n')
    with pytest.raises(ConfigError, match='not valid YAML'): L0DataConfig.from_yaml(f)
    f.write_text('name: x\ngen: {max_nums: 10}\nsplits: [{name: a, min_steps: 1, max_steps: 20, count: 2}]\n')
    with pytest.raises(ConfigError, match=r"unknown GenConfig field\(s\) \['max_nums'\]"): L0DataConfig.from_yaml(f)
    f.write_text('name: x\nsplits: [{name: a, min_steps: 30, max_steps: 20, count: 2}]\n')
    with pytest.raises(ConfigError, match="split 'a'"): L0DataConfig.from_yaml(f)
    with pytest.raises(GrammarError, match='<nope> is used but never defined'): GenConfig(grammar_override='<stmt> ::= <nope>').grammar()
    # a grammar that can never reach the line bounds fails with a message, not a hang
    gen = ProgramGenerator(GenConfig(min_code_lines=45, max_code_lines=50, grammar_override='<stmt_lst> ::= <stmt>'))
    with pytest.raises(GenerationError, match='no program within 45-50 lines'): gen.generate(random.Random(0), max_tries=5)


def test_yaml_config_round_trip(tmp_path):
    cfg = L0DataConfig('t', GenConfig(max_scope_depth=2, list_index_vars=True), [SplitSpec('a', 1, 30, 3)])
    import yaml
    f = tmp_path / 'c.yaml'; f.write_text(yaml.safe_dump(cfg.to_dict()))
    assert L0DataConfig.from_yaml(f).to_dict() == cfg.to_dict()


def _digest(items):
    return hashlib.sha256(json.dumps(items, sort_keys=True).encode()).hexdigest()

def test_dataset_identical_across_workers_and_hash_seeds(tmp_path):
    cfg = L0DataConfig('t', GenConfig(), [SplitSpec('short', 1, 20, 6), SplitSpec('medium', 60, 100, 3)])
    a, ca = build_dataset(cfg, seed=3, workers=1)
    b, cb = build_dataset(cfg, seed=3, workers=2)
    assert a == b and {**ca, 'build_seconds': 0} == {**cb, 'build_seconds': 0}
    script = textwrap.dedent(f"""
        import json, hashlib
        from l0kit.l0.dataset import L0DataConfig, build_dataset
        cfg = L0DataConfig.from_dict(json.loads({json.dumps(json.dumps(cfg.to_dict()))}))
        items, _ = build_dataset(cfg, seed=3, workers=1)
        print(hashlib.sha256(json.dumps(items, sort_keys=True).encode()).hexdigest())""")
    for hs in ('0', '12345'):
        out = subprocess.run([sys.executable, '-c', script], env={**os.environ, 'PYTHONHASHSEED': hs}, capture_output=True, text=True, check=True)
        assert out.stdout.strip() == _digest(a)
    c, _ = build_dataset(cfg, seed=4, workers=1)
    assert c != a


def test_dataset_items_replay_and_round_trip(tmp_path):
    items, card = build_dataset(get_preset('small'), seed=5, workers=1)
    for split, recs in items.items():
        spec = next(s for s in get_preset('small').splits if s.name == split)
        assert len(recs) == spec.count
        for r in recs:
            assert spec.min_steps <= r['steps'] <= spec.max_steps and r['steps'] == len(r['target'])
            assert trace_program(r['program'], r['test_input']) == r['target']
            keys = {json.dumps(d, sort_keys=True) for d in r['demonstrations']}
            assert len(keys) == 64 and json.dumps(r['test_input'], sort_keys=True) not in keys
    save_dataset(items, card, tmp_path)
    back = load_split(tmp_path, 'short')
    assert [{k: v for k, v in r.items() if k != 'demo_traces'} for r in back] == items['short']
    assert all(len(r['demo_traces']) == 64 for r in back)
    with pytest.raises(DatasetError, match="no split 'long'"): load_split(tmp_path, 'long')
    with pytest.raises(DatasetError, match='no card.json'): load_split(tmp_path / 'nothing', 'short')


def test_release_import_round_trip_and_safety(tmp_path):
    items, _ = build_dataset(get_preset('small'), seed=6, workers=1)
    write_release_format(items, tmp_path / 'rel')
    got, card, problems = import_release(tmp_path / 'rel', {1: 'short', 2: 'medium'})
    assert problems == [] and card['counts'] == {'short': 8, 'medium': 4}
    assert [r['target'] for r in got['short']] == [r['target'] for r in items['short']]
    (tmp_path / 'rel' / 'index_1.bin').write_bytes(pickle.dumps(os.getcwd) )
    with pytest.raises(ReleaseFormatError, match='refusing to unpickle'): import_release(tmp_path / 'rel')


def test_cli_generate_and_trace(tmp_path):
    exe = [sys.executable, '-c', 'import sys; from l0kit.cli.main import main; sys.exit(main())']
    out = subprocess.run(exe + ['generate', '--preset', 'small', '--out', str(tmp_path / 'd'), '--limit', '2', '--quiet', '--show'],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert 'short' in out.stdout and 'target:' in out.stdout
    prog = tmp_path / 'p.py'; prog.write_text("def function(x):\n    y = x + 1\n    return\n")
    out = subprocess.run(exe + ['l0', 'trace', str(prog), 'x=4'], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.splitlines()[-2:] == ['L2,y:5', 'L3,']
    out = subprocess.run(exe + ['l0', 'trace', str(prog), 'x=='], capture_output=True, text=True)
    assert out.returncode == 2 and 'name=value' in out.stderr


def test_shipped_configs_load_and_build():
    for f in sorted(Path(__file__).parent.parent.glob('configs/*.yaml')):
        cfg = L0DataConfig.from_yaml(f)
        items, card = build_dataset(cfg.with_counts(2), workers=1)
        assert all(len(v) == 2 for v in items.values()), f
        assert card['seed'] == cfg.gen.seed
