"""A million simulated responses: the runner's bookkeeping, then `l0kit report` and `l0kit view` over the runs.

    python perf/million.py [--programs 500] [--voters 1024] [--runs 2] [--data DIR] [--keep DIR] [--skip-report] [--skip-view]
                                 [--baseline CHECKOUT]

The scale of the L0 paper's figure 3: 500 programs x 1,024 voters, twice (1,024,000 responses). Each run is
`run_eval` of the L0 benchmark with the simulated model (the tracer with injected errors, no language model: what is
measured is the kit), at error rates 0.02, 0.05, ... for runs 1, 2, ..., each into its own folder (a folder of --keep
that already holds a complete run is reused, not timed). Then `l0kit report FOLDERS --json` and `l0kit view FOLDERS
--out page.html`. Eval, report and view each run as a separate process, timed (wall and CPU seconds) with its peak
memory (the maximum resident set size the kernel reports for it). With `--baseline` (another checkout of the kit, e.g.
`git worktree add /tmp/old v0.1.0`), report and view also run with that code on the same folders, in the same run: the
ratios of CPU time and memory are the comparison a loaded machine does not distort, and the two JSON reports and pages
are compared byte for byte. Prints every figure, the machine and its load average before and after each step: figures
taken on a loaded machine are not the machine's.
"""
import argparse, json, os, platform, subprocess, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def machine() -> str:
    cpu = next((l.split(':', 1)[1].strip() for l in open('/proc/cpuinfo') if l.startswith('model name')), platform.processor()) \
        if Path('/proc/cpuinfo').exists() else platform.processor()
    mem = next((int(l.split()[1]) // 1024 for l in open('/proc/meminfo') if l.startswith('MemTotal')), 0) if Path('/proc/meminfo').exists() else 0
    return f"{cpu}, {os.cpu_count()} logical CPUs, {mem:,} MiB memory, Python {platform.python_version()}, {platform.system()} {platform.release()}"


def data_set(programs: int, where: Path | None, seed: int = 0) -> Path:
    "A data set of `programs` short L0 programs (generated once into `where`, or into a temporary folder)."
    from l0kit.l0.dataset import L0DataConfig, SplitSpec, build_dataset, save_dataset, available_splits
    from l0kit.l0.generator import GenConfig
    d = where or Path(tempfile.mkdtemp(prefix='l0kit-million-data-'))
    if (d / 'card.json').exists() and 'short' in available_splits(d): return d
    items, card = build_dataset(L0DataConfig('million', GenConfig(), [SplitSpec('short', 1, 20, programs)]), seed, workers=os.cpu_count() or 1)
    save_dataset(items, card, d)
    return d


CLI = """
import os, resource, sys
from l0kit.cli.main import main
try: rc = main(sys.argv[1:])
finally:
    u = resource.getrusage(resource.RUSAGE_SELF)
    open(os.environ['L0KIT_PEAK_FILE'], 'w').write(f"{u.ru_maxrss} {u.ru_utime + u.ru_stime}")
sys.exit(rc)
"""

EVAL = """
import json, os, resource, sys, time
from pathlib import Path
from l0kit.runs.runner import RunConfig, run_eval
from l0kit.l0.benchmark import L0Benchmark
data, out, spec, voters = sys.argv[1], Path(sys.argv[2]), sys.argv[3], int(sys.argv[4])
try:
    bench = L0Benchmark()
    items = bench.load(data, 'short')
    s = run_eval(bench, bench.simulated_model(spec.partition(':')[2]), items, out, RunConfig(voters=voters), data=data, split='short', progress=False)
    assert s['complete'] == len(items) * voters, s
    print(json.dumps({'new': s['new']}))
finally:
    u = resource.getrusage(resource.RUSAGE_SELF)
    open(os.environ['L0KIT_PEAK_FILE'], 'w').write(f"{u.ru_maxrss} {u.ru_utime + u.ru_stime}")
"""

def child(args: list, timeout: float, code: str = CLI, root: Path = ROOT) -> tuple[int | None, float, float, float, str]:
    "(exit code or None if cut at `timeout`, wall seconds, peak resident MiB, CPU seconds, stdout) of `l0kit ARGS` (or `code`) run as its own process with the kit of `root`."
    peak = Path(tempfile.mkstemp(prefix='l0kit-peak-')[1])
    path = os.pathsep.join([str(root)] + [p for p in os.environ.get('PYTHONPATH', '').split(os.pathsep) if p and Path(p).resolve() != ROOT])
    t0 = time.perf_counter()
    p = subprocess.Popen([sys.executable, '-c', code, *map(str, args)], cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env={**os.environ, 'PYTHONPATH': path, 'L0KIT_PEAK_FILE': str(peak)})
    out, err, rc = b'', b'', None
    try: out, err = p.communicate(timeout=timeout); rc = p.returncode
    except subprocess.TimeoutExpired: p.kill(); p.communicate()
    dt = time.perf_counter() - t0
    if rc not in (0, None): print(err.decode(errors='replace')[-2000:], file=sys.stderr)
    kib, cpu = (peak.read_text().split() + ['0', '0'])[:2] if peak.exists() else ('0', '0')
    peak.unlink(missing_ok=True)
    return rc, dt, int(kib) / 1024, float(cpu), out.decode(errors='replace')


def load() -> str:
    l = os.getloadavg(); return f"{l[0]:.2f} {l[1]:.2f} {l[2]:.2f}"


def status(rc, ok, timeout) -> str:
    return 'done' if ok else f'cut at the --timeout of {timeout:g} s (not finished)' if rc is None else f'FAILED (exit {rc})'


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--programs', type=int, default=500)
    ap.add_argument('--voters', type=int, default=1024)
    ap.add_argument('--runs', type=int, default=2)
    ap.add_argument('--data', type=Path, help='data set folder to reuse (generated there when absent)')
    ap.add_argument('--keep', type=Path, help='write the run folders here (default: a temporary folder)')
    ap.add_argument('--skip-report', action='store_true'); ap.add_argument('--skip-view', action='store_true')
    ap.add_argument('--timeout', type=float, default=900, help='seconds report and view may take each before they are cut')
    ap.add_argument('--baseline', type=Path, help='another checkout of the kit: report and view also run with its code, on the same folders')
    a = ap.parse_args(argv)
    from l0kit.l0.benchmark import L0Benchmark

    print(f"machine: {machine()}")
    print(f"load average before: {load()}")
    t0 = time.perf_counter(); data = data_set(a.programs, a.data); t_data = time.perf_counter() - t0
    items = L0Benchmark().load(data, 'short')
    print(f"data: {len(items)} programs (short split) in {t_data:.1f} s")
    root = a.keep or Path(tempfile.mkdtemp(prefix='l0kit-million-'))
    folders, total, wall, cpu, peak = [], 0, 0.0, 0.0, 0.0
    for k in range(a.runs):
        out = root / f'run{k + 1}'
        spec = f'simulated:rate={0.02 + 0.03 * k:g}'
        rc, dw, mib, dc, text = child([data, out, spec, a.voters], a.timeout * 4, EVAL)
        if rc != 0: raise SystemExit(f"eval of run {k + 1} {status(rc, False, a.timeout * 4)}")
        new = json.loads(text.strip().splitlines()[-1])['new']
        folders.append(out)
        size = (out / 'responses.jsonl').stat().st_size
        if not new: print(f"run {k + 1} ({spec}): complete in {out} already, reused"); continue
        total += new; wall += dw; cpu += dc; peak = max(peak, mib)
        print(f"run {k + 1} ({spec}): {new:,} responses in {dw:.1f} s ({new / dw:,.0f}/s, {1e6 * dc / max(1, new):.0f} us CPU each), "
              f"peak memory {mib:,.0f} MiB, {size / 2 ** 20:,.0f} MiB on disk; load average {load()}")
    if total: print(f"all runs: {total:,} responses in {wall:.1f} s ({total / wall:,.0f}/s, {cpu:.1f} CPU-s); a million would take {1e6 * wall / total:.0f} s")
    result = dict(responses=total, run_s=wall, run_cpu_s=cpu, run_mib=peak, per_million_s=1e6 * wall / max(1, total))
    codes = [('', ROOT)] + ([('baseline ', a.baseline.resolve())] if a.baseline else [])
    outputs = {}
    for what in ('report', 'view'):
        if getattr(a, f'skip_{what}'): continue
        for label, code_root in codes:
            page = root / f"view{'-baseline' if label else ''}.html"
            rc, dt, mib, dc, out = child([what, *folders, *(['--json'] if what == 'report' else ['--out', page])], a.timeout, root=code_root)
            ok = rc == 0 and (len(json.loads(out)['reports']) == a.runs if what == 'report' else page.exists())
            outputs[label, what] = out if what == 'report' else page.read_bytes() if page.exists() else None
            extra = f", page {page.stat().st_size / 2 ** 20:,.1f} MiB" if what == 'view' and page.exists() else ''
            print(f"{label}l0kit {what} over {a.runs} folders: {status(rc, ok, a.timeout)} in {dt:.1f} s"
                  + (f" ({dc:.1f} CPU-s), peak memory {mib:,.0f} MiB{extra}" if rc is not None else '') + f"; load average {load()}")
            key = f"{'baseline_' if label else ''}{what}"
            result.update({f'{key}_s': dt, f'{key}_cpu_s': dc, f'{key}_mib': mib, f'{key}_ok': ok})
            if what == 'view': result[f"{'baseline_' if label else ''}page_mib"] = page.stat().st_size / 2 ** 20 if page.exists() else float('nan')
        if a.baseline and result.get(f'{what}_ok') and result.get(f'baseline_{what}_ok'):
            same = outputs['', what] == outputs['baseline ', what]
            print(f"{what}: this code / baseline: CPU {result[f'{what}_cpu_s'] / result[f'baseline_{what}_cpu_s']:.2f}x, "
                  f"wall {result[f'{what}_s'] / result[f'baseline_{what}_s']:.2f}x, peak memory {result[f'{what}_mib'] / result[f'baseline_{what}_mib']:.2f}x; "
                  f"{'output byte-identical' if same else 'OUTPUT DIFFERS'}")
            result[f'{what}_identical'] = same
    print(f"load average after: {load()}")
    return result

if __name__ == '__main__':
    main()
