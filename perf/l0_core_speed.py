"""L0 core benchmark: tracer speed against a sys.settrace baseline and untraced execution, and the base-set build.

Usage: python perf/l0_core_speed.py [--programs 1000] [--inputs 4] [--skip-build] [--workers 2]
Prints every figure it measures; nothing is hard-coded. Run it on an otherwise idle machine.
"""
import argparse, copy, json, os, platform, random, shutil, sys, tempfile, time
from functools import lru_cache
from pathlib import Path
import ast

from l0kit.l0.dataset import get_preset, make_candidate, build_dataset, save_dataset
from l0kit.l0.generator import ProgramGenerator, sample_inputs
from l0kit.l0.tracer import trace_program, compile_tracer, TraceError, normalize_program


# --- the baseline: how the authors' release traces (sys.settrace, deep copy of locals at every line) -----------------
@lru_cache(maxsize=None)
def _plain(program):
    "The untraced function and, per line, the variable it stores (from the syntax tree, computed once per program)."
    mod = ast.parse(program)
    ns = {}
    exec(compile(mod, '<plain>', 'exec'), {}, ns)
    stores = {}
    for st in ast.walk(mod.body[0]):
        if isinstance(st, ast.Assign) and isinstance(st.targets[0], ast.Name): stores[st.lineno] = st.targets[0].id
        elif isinstance(st, ast.Expr) and isinstance(st.value, ast.Call) and isinstance(st.value.func, ast.Attribute):
            stores[st.lineno] = st.value.func.value.id
    return ns['function'], stores

def settrace_trace(program, inputs):
    fn, stores = _plain(program)
    code, snaps = fn.__code__, []
    def local(frame, event, arg):
        if event == 'line': snaps.append((frame.f_lineno, copy.deepcopy(frame.f_locals)))
        elif event == 'return': snaps.append((None, copy.deepcopy(frame.f_locals)))
        return local
    def glob(frame, event, arg): return local if frame.f_code is code else None
    sys.settrace(glob)
    try: fn(**copy.deepcopy(inputs))
    finally: sys.settrace(None)
    out = []
    for (n, _), (_, after) in zip(snaps, snaps[1:]):
        v = stores.get(n)
        out.append(f"L{n},{v}:" + repr(after[v]).replace(' ', '') if v else f"L{n},")
    return out

def untraced(program, inputs):
    fn, _ = _plain(program)
    fn(**{k: (list(v) if type(v) is list else v) for k, v in inputs.items()})


def interleaved_rates(fns: dict, pairs, chunk=50, repeat=None):
    "Traces per CPU-second of each function, measured chunk by chunk in turn so that all see the same machine load."
    repeat = repeat or {k: 1 for k in fns}
    spent = {k: 0.0 for k in fns}
    for s in range(0, len(pairs), chunk):
        part = pairs[s:s + chunk]
        for k, fn in fns.items():
            t = time.process_time()
            for _ in range(repeat[k]):
                for p, x in part: fn(p, x)
            spent[k] += time.process_time() - t
    return {k: len(pairs) * repeat[k] / spent[k] for k in fns}

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--programs', type=int, default=1000)
    ap.add_argument('--inputs', type=int, default=4, help='valid inputs traced per program')
    ap.add_argument('--workers', type=int, default=2)
    ap.add_argument('--skip-build', action='store_true')
    a = ap.parse_args()
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"load average {os.getloadavg()[0]:.2f}")

    cfg = get_preset('base'); gen = ProgramGenerator(cfg.gen)
    pairs, i = [], 0
    while len({p for p, _ in pairs}) < a.programs:
        c = make_candidate(cfg, gen, 12345, i); i += 1
        if c is None: continue
        rng = random.Random(i); got = [c['test_input']]
        for _ in range(40):
            if len(got) == a.inputs: break
            x = sample_inputs(tuple(map(tuple, c['args'])), cfg.gen, rng)
            try: trace_program(c['program'], x, 500); got.append(x)
            except TraceError: pass
        pairs += [(c['program'], x) for x in got]
    programs = sorted({p for p, _ in pairs})
    steps = sum(len(trace_program(p, x)) for p, x in pairs)
    print(f"workload: {len(programs)} programs, {len(pairs)} (program, input) pairs, {steps} trace steps "
          f"(mean {steps / len(pairs):.1f} per trace)")

    # correctness first: the baseline and the kit agree on every pair
    mismatches = sum(settrace_trace(p, x) != trace_program(p, x) for p, x in pairs)
    print(f"settrace baseline vs kit tracer: {mismatches} mismatching traces of {len(pairs)}")

    for p in programs: _plain(p)                      # both sides get their per-program work cached
    compile_tracer.cache_clear()
    t = time.perf_counter()
    for p in programs: compile_tracer(p, True)   # the key trace_program uses
    compile_ms = (time.perf_counter() - t) / len(programs) * 1e3
    r = interleaved_rates({'kit': trace_program, 'base': settrace_trace, 'plain': untraced}, pairs,
                          repeat={'kit': 3, 'base': 1, 'plain': 10})
    kit, base, plain = r['kit'], r['base'], r['plain']
    print("rates are per CPU-second of this process (time.process_time), measured interleaved in chunks")
    print(f"kit tracer:        {kit:10.0f} traces/s  ({kit * steps / len(pairs):10.0f} steps/s)")
    print(f"settrace baseline: {base:10.0f} traces/s  ({base * steps / len(pairs):10.0f} steps/s)")
    print(f"untraced:          {plain:10.0f} calls/s")
    print(f"kit / settrace = {kit / base:.1f}x   untraced / kit = {plain / kit:.1f}x   untraced / settrace = {plain / base:.1f}x")
    print(f"kit compilation of a new program: {compile_ms:.2f} ms (cached afterwards; included in the build figure below)")
    # cold: every program seen for the first time (compilation and per-program analysis included on both sides)
    firsts = list({p: (p, x) for p, x in pairs}.values())
    compile_tracer.cache_clear(); _plain.cache_clear()
    cold = interleaved_rates({'kit': trace_program, 'base': settrace_trace}, firsts)
    print(f"cold (one trace per new program, compilation included): kit {cold['kit']:.0f} traces/s, "
          f"settrace {cold['base']:.0f} traces/s, ratio {cold['kit'] / cold['base']:.1f}x")

    if not a.skip_build:
        out = Path(tempfile.mkdtemp())
        t = time.perf_counter(); c0 = time.process_time()
        items, card = build_dataset(cfg, seed=0, workers=a.workers)
        wall = time.perf_counter() - t
        save_dataset(items, card, out)
        size = sum(f.stat().st_size for f in out.iterdir())
        print(f"base preset (2,000 programs x 64 demonstrations), {a.workers} workers: {wall:.1f} s wall, "
              f"{card['scan']['scanned']} candidates scanned")
        print("split means: " + ', '.join(f"{k} {v['mean']}" for k, v in card['steps'].items()))
        print(f"size on disk: {size / 1e6:.1f} MB ({', '.join(f'{f.name} {f.stat().st_size / 1e6:.1f} MB' for f in sorted(out.iterdir()))})")
        shutil.rmtree(out)

if __name__ == '__main__':
    main()
