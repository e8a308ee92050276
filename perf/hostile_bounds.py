"""How fast and how small the kit refuses inputs built to exhaust it (issue 24, class 6).

Each case runs `l0kit` in a fresh process and reports its wall time, its peak resident memory and its exit status:
  * a YAML file of nested aliases given as `--config` (the issue's kind: a few hundred bytes expanding to billions of nodes),
  * an L0 data set whose split file is a small gzip that expands to one line of `--line-mib` MiB,
  * `--voters 1000000000`.
Usage: python perf/hostile_bounds.py [--line-mib 2048]
"""
import argparse, gzip, json, os, platform, resource, shutil, subprocess, sys, tempfile, time
from pathlib import Path
import l0kit

BOMB = 'a: &a ["x","x","x","x","x","x","x","x","x"]\n' + ''.join(
    f'{c}: &{c} [*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p}]\n' for p, c in zip('abcdefgh', 'bcdefghi'))

CHILD = """
import resource, sys, time
from l0kit.cli.main import main
t0 = time.perf_counter(); code = main(sys.argv[1:]); t = time.perf_counter() - t0
print(f"RESULT {code} {t:.3f} {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f}", file=sys.stderr)
"""

def run(args):
    r = subprocess.run([sys.executable, '-c', CHILD, *map(str, args)], capture_output=True, text=True)
    code, t, mib = r.stderr.strip().splitlines()[-1].split()[1:]
    first = next((l for l in r.stderr.splitlines() if 'error' in l), '')
    return int(code), float(t), int(mib), first[:160]

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--line-mib', type=int, default=2048, help='length of the gzip bomb\'s one line, in MiB')
    a = ap.parse_args()
    print(f"l0kit {l0kit.__version__}, Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}")
    d = Path(tempfile.mkdtemp())
    try:
        from l0kit.protocol.benchmark import get_benchmark
        get_benchmark('l0').generate(d / 'data', limit=2, preset='small')
        (d / 'bomb.yaml').write_text(BOMB)
        bombed = d / 'bombed'; shutil.copytree(d / 'data', bombed)
        with gzip.open(bombed / 'short.jsonl.gz', 'wb', compresslevel=9) as f:
            block = b'x' * 2**20
            for _ in range(a.line_mib): f.write(block)
        common = ['eval', '--data', d / 'data', '--split', 'short', '--model', 'simulated', '--no-progress']
        cases = [(f"YAML aliases, {len(BOMB)} bytes, as --config", common + ['--config', d / 'bomb.yaml', '--out', d / 'r1']),
                 (f"gzip of {(bombed / 'short.jsonl.gz').stat().st_size / 2**20:.1f} MiB expanding to one {a.line_mib} MiB line",
                  ['eval', '--data', bombed, '--split', 'short', '--model', 'simulated', '--no-progress', '--out', d / 'r2']),
                 ("--voters 1000000000", common + ['--voters', '1000000000', '--out', d / 'r3'])]
        for name, args in cases:
            code, t, mib, err = run(args)
            print(f"{name}: exit {code} in {t:.3f} s, peak {mib} MiB resident\n    {err}")
    finally: shutil.rmtree(d, ignore_errors=True)

if __name__ == '__main__': main()
