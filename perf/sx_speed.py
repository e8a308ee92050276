"""SX-style generation speed and the cost of step counting.

Prints (1) samples generated per second for each subset, with 1 and with N worker processes, and (2) the overhead of
counting: time of the entry call of generated programs run plain, with the visible counter and with the hidden
counter, timed inside the sandbox (repeated calls, best of 3), plus the time `instrument` itself takes.

Usage: python perf/sx_speed.py [--samples 60] [--workers 2] [--programs 60] [--seed 0]
"""
import argparse, ast, platform, statistics, sys, time
from dataclasses import asdict
import l0kit
from l0kit.sandbox import Sandbox
from l0kit.sx.stepcount import instrument, SEMANTICS_VERSION
from l0kit.sx.atomic import all_instances
from l0kit.sx.dataset import SXDataConfig, SubsetConfig, generate_subset

TIMING_HARNESS = '''
def harness(ns, entry, args):
    import time
    x, repeats = args
    fn = ns[entry]
    best = None
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(repeats):
            ns["run_steps"] = 0
            fn(x)
        dt = (time.perf_counter() - t0) / repeats
        best = dt if best is None else min(best, dt)
    return best
'''

def generation_speed(n, workers, seed):
    cfg = SXDataConfig(seed=seed, subsets=[SubsetConfig(**{**asdict(s), 'count': n}) for s in SXDataConfig().subsets])
    rows, items = [], []
    for s in cfg.subsets:
        # workers=1 twice in this process: cold instrumentation caches, then warm (the steady state of a long run);
        # pool workers are fresh processes, so always cold
        for w, label in [(1, 'cold'), (1, 'warm')] + ([(workers, 'cold')] if workers > 1 else []):
            t0 = time.perf_counter()
            its = generate_subset(cfg, s.name, workers=w)
            dt = time.perf_counter() - t0
            rows.append((s.name, w, label, n, dt, n / dt, statistics.mean(it['attempts'] for it in its)))
        items += its
    return rows, items

def counting_overhead(items, n_programs, repeats=1000):
    out = {'plain': [], 'visible': [], 'hidden': []}
    t_instr = []
    with Sandbox(timeout_s=30) as sb:
        for it in items[:n_programs]:
            x = ast.literal_eval(it['tests'][0]['input'])
            t0 = time.perf_counter()
            srcs = {'plain': it['program'], 'visible': instrument(it['program'], 'visible'), 'hidden': instrument(it['program'], 'hidden')}
            t_instr.append((time.perf_counter() - t0) / 2)
            for mode, src in srcs.items():
                r = sb.run(src, 'main', (x, repeats), harness=TIMING_HARNESS, timeout_s=30)
                if not r.ok: raise RuntimeError(f"{it['id']} {mode}: {r.error_type}: {r.error}")
                out[mode].append(r.value)
    return out, t_instr

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--samples', type=int, default=60, help='samples per subset for the generation speed')
    ap.add_argument('--workers', type=int, default=2, help='worker processes for the parallel measurement')
    ap.add_argument('--programs', type=int, default=60, help='generated programs timed for the counting overhead')
    ap.add_argument('--seed', type=int, default=0)
    a = ap.parse_args()
    print(f"l0kit {l0kit.__version__}, semantics {SEMANTICS_VERSION}, Python {platform.python_version()}, "
          f"{platform.machine()}, seed {a.seed}")
    t0 = time.perf_counter(); all_instances()
    print(f"one-time build of the atomic library: {time.perf_counter() - t0:.2f} s (excluded below; per-function "
          "instrumentation caches start cold in every run and worker)")
    rows, items = generation_speed(a.samples, a.workers, a.seed)
    print("\n== Generation speed ==")
    print(f"{'subset':8} {'workers':>7} {'caches':>6} {'samples':>7} {'seconds':>8} {'samples/s':>10} {'programs drawn/sample':>22}")
    for name, w, label, n, dt, rate, att in rows: print(f"{name:8} {w:7d} {label:>6} {n:7d} {dt:8.2f} {rate:10.1f} {att:22.2f}")
    times, t_instr = counting_overhead(items, a.programs)
    print(f"\n== Counting overhead ({len(times['plain'])} generated programs, entry call timed in the sandbox) ==")
    base = statistics.median(times['plain'])
    for mode in ('plain', 'visible', 'hidden'):
        ratios = [t / p for t, p in zip(times[mode], times['plain'])]
        print(f"{mode:8} median call {statistics.median(times[mode]) * 1e6:8.1f} us   "
              f"median ratio to plain {statistics.median(ratios):5.2f}x   (min {min(ratios):.2f}x, max {max(ratios):.2f}x)")
    print(f"instrument() per program and mode: median {statistics.median(t_instr) * 1e3:.2f} ms")

if __name__ == '__main__':
    sys.exit(main())
