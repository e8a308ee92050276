"""Speed of the metrics: responses scored per second on one core for 150-step targets, and the time to build
table 1 (and tables 7/8) for 2,000 programs x 31 voters.

Usage: python perf/metrics_speed.py [--programs 2000] [--voters 31] [--seed 0]
Prints the figures; nothing is timed inside the test suite.
"""
import argparse, os, platform, sys, time

import numpy as np
import pandas as pd

import l0kit
from l0kit.l0.tracer import trace_program
from l0kit.l0.metrics import score_trace
from l0kit.l0.analysis import score_responses, summarize_l0, pass_maj_table
from l0kit.l0.taxonomy import corrupt_trace

LOOP = """def function(x, lst_x, cond_x):
    cnter_0 = 0
    cond_a = cnter_0 != {bound}
    while cond_a:
        lst_x.append(x)
        x = x + 1
        lst_x.pop()
        cnter_0 = cnter_0 + 2
        cond_a = cnter_0 != {bound}
    if cond_x:
        lst_x.pop()
    return
"""
SPLIT_BOUNDS = dict(short=(2, 6), medium=(22, 30), long=(50, 58), extra_long=(78, 86))  # about 13-250 steps

def item(bound, rng, pid, split):
    prog = LOOP.format(bound=bound)
    inp = dict(x=int(rng.integers(10)), lst_x=[int(v) for v in rng.integers(0, 10, int(rng.integers(5, 11)))],
               cond_x=bool(rng.integers(2)))
    t = trace_program(prog, inp)
    return dict(id=pid, split=split, program=prog, test_input=inp, target=t, steps=len(t))

def responses_for(it, voters, rng, p_correct=0.5):
    "Chat-style responses: half correct, the rest with one injected error at a random step."
    t, out = it["target"], []
    for v in range(voters):
        lines = t
        if rng.random() > p_correct:
            kind = rng.choice(["expression", "list_copy", "skipped_step", "truncated"])
            lines = (corrupt_trace(t, it["program"], kind, rng) or (t[:-1], 0))[0]
        out.append("Here is the execution trace:\n```\n" + "\n".join(lines) + "\n```")
    return out

def per_second(fn, args, min_time=2.0):
    "(calls per second of CPU time, calls per second of wall time): other processes on the machine only affect the second."
    n, t0, c0 = 0, time.perf_counter(), time.process_time()
    while time.process_time() - c0 < min_time:
        for a in args: fn(*a)
        n += len(args)
    return n / (time.process_time() - c0), n / (time.perf_counter() - t0)

class Timer:
    "CPU and wall time of a block."
    def __enter__(self): self.c, self.w = time.process_time(), time.perf_counter(); return self
    def __exit__(self, *exc): self.cpu, self.wall = time.process_time() - self.c, time.perf_counter() - self.w

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--programs", type=int, default=2000)
    ap.add_argument("--voters", type=int, default=31)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    if hasattr(os, "sched_setaffinity"): os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})  # one core
    rng = np.random.default_rng(a.seed)
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.processor()) \
        if os.path.exists("/proc/cpuinfo") else platform.processor()
    load = " | load average %.1f" % os.getloadavg()[0] if hasattr(os, "getloadavg") else ""
    print(f"l0kit {l0kit.__version__} | Python {sys.version.split()[0]} | {cpu} | one core | seed {a.seed}{load}")

    # 1. responses per second, 150-step targets
    bound = 48  # the loop bound giving a trace of 150 steps
    its = [item(bound, rng, f"b{i}", "long") for i in range(50)]
    print(f"\n1. score_trace on {len(its)} targets of {np.mean([i['steps'] for i in its]):.0f} steps on average")
    print(f"   {'':22s} {'per CPU second':>15s} {'per wall second':>16s}")
    for name, p in [("correct", 1.0), ("one error", 0.0), ("mixed (50% correct)", 0.5)]:
        args = [(r, it["target"]) for it in its for r in responses_for(it, 20, rng, p)]
        cpu, wall = per_second(score_trace, args)
        print(f"   {name:22s} {cpu:>15,.0f} {wall:>16,.0f}  responses")
    args = [(r, it["target"]) for it in its for r in responses_for(it, 20, rng, 0.5)]
    cpu, wall = per_second(lambda r, t: score_trace(r, t, strict=True), args)
    print(f"   {'mixed, strict=True':22s} {cpu:>15,.0f} {wall:>16,.0f}  responses")

    # 2. the table for programs x voters
    per_split = a.programs // len(SPLIT_BOUNDS)
    items, rows = [], []
    for split, (lo, hi) in SPLIT_BOUNDS.items():
        for i in range(per_split):
            it = item(2 * int(rng.integers(lo // 2, hi // 2 + 1)), rng, f"{split}-{i}", split)
            items.append(it)
            rows += [dict(id=it["id"], split=split, voter=v, response=r) for v, r in enumerate(responses_for(it, a.voters, rng))]
    responses = pd.DataFrame(rows)
    steps = np.mean([it["steps"] for it in items])
    print(f"\n2. tables for {len(items):,} programs x {a.voters} voters = {len(responses):,} responses "
          f"(mean target {steps:.0f} steps)")
    with Timer() as ts: scores = score_responses(responses, items)
    with Timer() as t1: table1 = summarize_l0(scores, k=a.voters)
    with Timer() as t78: pass_maj_table(scores, ks=(1, 5, 15, 31) if a.voters >= 31 else (1, a.voters))
    print(f"   {'':22s} {'CPU s':>8s} {'wall s':>8s}")
    print(f"   {'score_responses':22s} {ts.cpu:8.2f} {ts.wall:8.2f}   ({len(responses) / ts.cpu:,.0f} responses per CPU second)")
    print(f"   {f'summarize_l0 (k={a.voters})':22s} {t1.cpu:8.2f} {t1.wall:8.2f}")
    print(f"   {'pass_maj_table':22s} {t78.cpu:8.2f} {t78.wall:8.2f}")
    print(f"   {'total':22s} {ts.cpu + t1.cpu + t78.cpu:8.2f} {ts.wall + t1.wall + t78.wall:8.2f}")
    print("\n" + table1.round(1).to_string())

if __name__ == "__main__":
    main()
