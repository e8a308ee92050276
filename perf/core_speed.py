"""Speed of the CoRE pipeline's general tracer and probe generator.

Measures, on the kit's CoRE-style set (every implementation on every test):
  * trace steps per second of `trace_in_process` (sys.settrace in this process),
  * trace steps per second of `trace_call` (the same tracer inside the l0kit.sandbox worker, one worker reused),
  * candidate probes and selected probes generated per second from ready-made traces.
Usage: python perf/core_speed.py [--repeat N]
"""
import argparse, platform, sys, time
import l0kit
from l0kit.corebench.dataset import load_problem_set
from l0kit.corebench.pytrace import trace_in_process, trace_call
from l0kit.corebench.probes import candidate_probes, select_probes
from l0kit.sandbox import Sandbox

def calls():
    return [(impl['code'], impl['func_name'], t) for p in load_problem_set() for impl in p['implementations'] for t in p['tests']]

def timed(fn, repeat):
    best, out = float('inf'), None
    for _ in range(repeat):
        t0 = time.perf_counter(); out = fn(); best = min(best, time.perf_counter() - t0)
    return best, out

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--repeat', type=int, default=3, help="timing repetitions (the best is reported)")
    a = ap.parse_args()
    cs = calls()
    print(f"l0kit {l0kit.__version__}, Python {platform.python_version()}, {platform.machine()}, "
          f"{len(cs)} calls ({len(load_problem_set())} problems)")
    t, traces = timed(lambda: [trace_in_process(*c) for c in cs], a.repeat)
    steps = sum(len(tr.steps) for tr in traces)
    print(f"in-process tracer : {steps} steps in {t:.3f} s = {steps / t:,.0f} steps/s ({len(cs) / t:,.0f} calls/s)")
    def sandboxed():
        with Sandbox(timeout_s=5.0, memory_mb=512, max_file_mb=256) as sb:
            return [trace_call(*c, sandbox=sb) for c in cs]
    t, straces = timed(sandboxed, a.repeat)
    assert [tr.to_dict() for tr in straces] == [tr.to_dict() for tr in traces], "sandboxed and in-process traces differ"
    print(f"sandboxed tracer  : {steps} steps in {t:.3f} s = {steps / t:,.0f} steps/s ({len(cs) / t:,.0f} calls/s, one worker)")
    t, cands = timed(lambda: [candidate_probes(tr) for tr in traces], a.repeat)
    n = sum(map(len, cands))
    print(f"candidate probes  : {n} in {t:.3f} s = {n / t:,.0f} probes/s")
    t, sel = timed(lambda: [select_probes(candidate_probes(tr), 4, 0) for tr in traces], a.repeat)
    n = sum(map(len, sel))
    print(f"selected probes   : {n} (4 per trace at most) in {t:.3f} s = {n / t:,.0f} probes/s, {len(traces) / t:,.0f} traces/s")

if __name__ == '__main__': sys.exit(main())
