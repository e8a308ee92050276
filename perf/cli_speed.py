"""What a short `l0kit` command costs before it does its work: `--help`, `generate`, `eval` and `report` on a few items
of the simulated model, each its own process as a user (or a test) runs it.

    python perf/cli_speed.py [--repeat 5] [--baseline CHECKOUT]

Each command runs `--repeat` times; prints the median wall and CPU seconds (the process's own, from the kernel). With
`--baseline` (another checkout of the kit, e.g. `git worktree add /tmp/old HEAD~3`) every command also runs with that
code, alternating with this one's, on the same folders: the ratio of CPU seconds is the comparison a loaded machine
distorts least. Prints the machine and the load average before and after.
"""
import argparse, statistics, sys, tempfile
from pathlib import Path
from million import ROOT, child, load, machine

COMMANDS = {  # name: the arguments; {t} the temporary folder, {d} its data set, {r} a folder of this repetition's own
    'help': ['--help'],
    'generate': ['generate', '--limit', '2', '--out', '{r}/data', '--quiet'],
    'eval': ['eval', '--data', '{d}', '--split', 'short', '--model', 'simulated', '--voters', '2', '--out', '{r}/run', '--no-progress'],
    'report': ['report', '{t}/run0'],
}


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--repeat', type=int, default=5)
    ap.add_argument('--baseline', type=Path, help='another checkout of the kit: every command also runs with its code')
    a = ap.parse_args(argv)
    codes = [('this', ROOT)] + ([('baseline', a.baseline.resolve())] if a.baseline else [])
    print(f"machine: {machine()}\nload average before: {load()}")
    times = {(c, label): [] for c in COMMANDS for label, _ in codes}
    with tempfile.TemporaryDirectory(prefix='l0kit-cli-speed-') as t:
        d = Path(t) / 'data'
        rc, *_ = child(['generate', '--limit', '2', '--out', d, '--quiet'], 600)
        if rc != 0: sys.exit("could not generate the data set")
        rc, *_ = child(['eval', '--data', d, '--split', 'short', '--model', 'simulated', '--voters', '2', '--out', Path(t) / 'run0', '--no-progress'], 600)
        if rc != 0: sys.exit("could not make the run to report")
        for i in range(a.repeat):
            for name, args in COMMANDS.items():
                for label, root in codes:  # alternating: a change in the machine's load falls on both alike
                    r = Path(t) / f"{label}-{name}-{i}"; r.mkdir()
                    rc, wall, _, cpu, _ = child([x.format(t=t, d=d, r=r) for x in args], 600, root=root)
                    if rc != 0: sys.exit(f"`l0kit {' '.join(args)}` failed with the {label} code (exit {rc})")
                    times[name, label].append((wall, cpu))
    result = {}
    for name in COMMANDS:
        row = []
        for label, _ in codes:
            wall, cpu = (statistics.median(x[k] for x in times[name, label]) for k in (0, 1))
            result[f"{name}_{label}_s"], result[f"{name}_{label}_cpu_s"] = wall, cpu
            row.append(f"{label}: {wall:.2f} s wall, {cpu:.2f} s CPU")
        ratio = f"; this / baseline CPU {result[f'{name}_this_cpu_s'] / result[f'{name}_baseline_cpu_s']:.2f}x" if a.baseline else ''
        print(f"l0kit {name:<9} (median of {a.repeat}) {'; '.join(row)}{ratio}")
    print(f"load average after: {load()}")
    return result


if __name__ == '__main__':
    main()
