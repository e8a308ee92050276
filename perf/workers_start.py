"""What safe worker processes cost: each generator with one process, with workers forked, and with workers started by
the fork server (what `l0kit.protocol.workers.start_method` picks in a process of several threads, such as the CLI's).

Usage: python perf/workers_start.py [--workers 2] [--repeats 2] [--l0-limit 200] [--procbench-limit N] [--sx-limit 60]
Each generation runs in a fresh process, as `l0kit generate` does (a parent that generated before would hand forked
workers its warm caches); the two start methods alternate. Prints the best wall time of each, checks that every way
gives the same data, and prints the load before and after.
"""
import argparse, hashlib, json, os, platform, subprocess, sys, time

def job(name: str, workers: int, a):
    if name == 'L0 base':
        from l0kit.l0.dataset import build_dataset, get_preset
        base = get_preset('base'); d = base.to_dict()
        cfg = base.from_dict({**d, 'splits': [{**s, 'count': a.l0_limit} for s in d['splits']]})
        return build_dataset(cfg, seed=0, workers=workers)[0]
    if name == 'ProcBench':
        from l0kit.procbench.dataset import generate_dataset
        return generate_dataset(seed=0, workers=workers, limit=a.procbench_limit)
    from l0kit.sx.dataset import SXDataConfig, generate_subset
    return generate_subset(SXDataConfig(seed=0), 'easy', workers=workers, limit=a.sx_limit)

def run_one(name: str, method: str, a):
    "In this process: generate once, print the time and a digest of the data."
    from l0kit.protocol import workers
    workers.start_method = lambda: method   # what worker_pool asks for
    t0 = time.perf_counter(); data = job(name, 1 if method == 'one' else a.workers, a); t = time.perf_counter() - t0
    print(json.dumps([t, hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()]))

def fresh(name: str, method: str, a) -> tuple:
    r = subprocess.run([sys.executable, __file__, *sys.argv[1:], '--run', name, method], capture_output=True, text=True, check=True)  # the same options
    return tuple(json.loads(r.stdout.splitlines()[-1]))

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--workers', type=int, default=2)
    ap.add_argument('--repeats', type=int, default=2)
    ap.add_argument('--l0-limit', type=int, default=200, help="programs per split of L0's base preset")
    ap.add_argument('--procbench-limit', type=int, default=None, help="items per ProcBench task (default: the paper's 5,520 items)")
    ap.add_argument('--sx-limit', type=int, default=60, help="samples of SX's easy subset")
    ap.add_argument('--run', nargs=2, metavar=('JOB', 'METHOD'), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.run: return run_one(*a.run, a)
    print(f"workers {a.workers} on {platform.python_implementation()} {platform.python_version()}, {platform.machine()}, "
          f"{os.cpu_count()} CPUs; each in a fresh process; load before {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for name in ('L0 base', 'ProcBench', 'SX easy'):
        t1, digest = fresh(name, 'one', a)
        times = {'fork': [], 'forkserver': []}
        for _ in range(a.repeats):
            for method in times:
                t, d = fresh(name, method, a)
                assert d == digest, f"{name}: {method} gave other data than one process"
                times[method].append(t)
        fork, server = (min(v) for v in times.values())
        print(f"  {name:10s} one process {t1:6.2f} s   forked {fork:6.2f} s   fork server {server:6.2f} s   "
              f"({server - fork:+.2f} s, {server / fork:.2f}x; best of {a.repeats}, the same data each way)")
    print(f"load after {' '.join(f'{x:.2f}' for x in os.getloadavg())}")

if __name__ == '__main__':
    main()
