"""A million simulated responses: the runner's bookkeeping, then `l0kit report` and `l0kit view` over the runs.

    python benchmarks/million.py [--programs 500] [--voters 1024] [--runs 2] [--data DIR] [--keep DIR] [--skip-report] [--skip-view]

The scale of the L0 paper's figure 3: 500 programs x 1,024 voters, twice (1,024,000 responses). Each run is
`run_eval` of the L0 benchmark with the simulated model (the tracer with injected errors, no language model: what is
measured is the kit), at error rates 0.02, 0.05, ... for runs 1, 2, ..., each into its own folder. Then `l0kit
report FOLDERS --json` and `l0kit view FOLDERS --out page.html` run as separate processes, each timed with its peak
memory (the maximum resident set size the kernel reports for it). Prints every figure, the machine and its load
average before and after: figures taken on a loaded machine are not the machine's.
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
from l0kit.harness.cli import main
try: rc = main(sys.argv[1:])
finally: open(os.environ['L0KIT_PEAK_FILE'], 'w').write(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))
sys.exit(rc)
"""

def child(args: list, timeout: float) -> tuple[int | None, float, float, str]:
    "(exit code or None if cut at `timeout`, wall seconds, peak resident MiB, stdout) of `l0kit ARGS` run as its own process."
    peak = Path(tempfile.mkstemp(prefix='l0kit-peak-')[1])
    t0 = time.perf_counter()
    p = subprocess.Popen([sys.executable, '-c', CLI, *map(str, args)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env={**os.environ, 'PYTHONPATH': str(ROOT), 'L0KIT_PEAK_FILE': str(peak)})
    out, err, rc = b'', b'', None
    try: out, err = p.communicate(timeout=timeout); rc = p.returncode
    except subprocess.TimeoutExpired: p.kill(); p.communicate()
    dt = time.perf_counter() - t0
    if rc not in (0, None): print(err.decode(errors='replace')[-2000:], file=sys.stderr)
    kib = int(peak.read_text() or 0) if peak.exists() and peak.stat().st_size else 0
    return rc, dt, kib / 1024, out.decode(errors='replace')


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
    a = ap.parse_args(argv)
    from l0kit.harness.runner import RunConfig, run_eval
    from l0kit.l0.benchmark import L0Benchmark

    print(f"machine: {machine()}")
    l0 = os.getloadavg(); print(f"load average before: {l0[0]:.2f} {l0[1]:.2f} {l0[2]:.2f}")
    t0 = time.perf_counter(); data = data_set(a.programs, a.data); t_data = time.perf_counter() - t0
    bench = L0Benchmark()
    items = bench.load(data, 'short')
    print(f"data: {len(items)} programs (short split) in {t_data:.1f} s")
    root = a.keep or Path(tempfile.mkdtemp(prefix='l0kit-million-'))
    folders, total, wall, cpu = [], 0, 0.0, 0.0
    for k in range(a.runs):
        out = root / f'run{k + 1}'
        spec = f'simulated:rate={0.02 + 0.03 * k:g}'
        c0, w0 = time.process_time(), time.perf_counter()
        s = run_eval(bench, bench.simulated_model(spec.partition(':')[2]), items, out, RunConfig(voters=a.voters), data=str(data), split='short', progress=False)
        dw, dc = time.perf_counter() - w0, time.process_time() - c0
        assert s['complete'] == len(items) * a.voters, s
        folders.append(out); total += s['new']; wall += dw; cpu += dc
        size = (out / 'responses.jsonl').stat().st_size
        print(f"run {k + 1} ({spec}): {s['new']:,} responses in {dw:.1f} s ({s['new'] / dw:,.0f}/s, {1e6 * dc / max(1, s['new']):.0f} us CPU each), "
              f"{size / 2 ** 20:,.0f} MiB on disk")
    print(f"all runs: {total:,} responses in {wall:.1f} s ({total / wall:,.0f}/s); a million would take {1e6 * wall / max(1, total):.0f} s")
    result = dict(responses=total, run_s=wall, per_million_s=1e6 * wall / max(1, total))
    if not a.skip_report:
        rc, dt, mib, out = child(['report', *folders, '--json'], a.timeout)
        ok = rc == 0 and len(json.loads(out)['reports']) == a.runs
        print(f"l0kit report over {a.runs} folders: {status(rc, ok, a.timeout)} in {dt:.1f} s" + (f", peak memory {mib:,.0f} MiB" if rc is not None else ''))
        result.update(report_s=dt, report_mib=mib, report_ok=ok)
    if not a.skip_view:
        page = root / 'view.html'
        rc, dt, mib, out = child(['view', *folders, '--out', page], a.timeout)
        ok = rc == 0 and page.exists()
        size = page.stat().st_size / 2 ** 20 if page.exists() else float('nan')
        print(f"l0kit view over {a.runs} folders: {status(rc, ok, a.timeout)} in {dt:.1f} s" + (f", peak memory {mib:,.0f} MiB, page {size:,.1f} MiB" if rc is not None else ''))
        result.update(view_s=dt, view_mib=mib, page_mib=size, view_ok=ok)
    l1 = os.getloadavg(); print(f"load average after: {l1[0]:.2f} {l1[1]:.2f} {l1[2]:.2f}")
    return result


if __name__ == '__main__':
    main()
