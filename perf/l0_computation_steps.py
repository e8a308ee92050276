"""SX-style computation steps (sx-py-v1) next to trace steps, per split of an L0 data set.

Usage: python perf/l0_computation_steps.py DATA_DIR [--splits short medium long extra_long] [--limit N]
Reads the splits with `l0kit.l0.dataset.load_split` (the L0 data set loader) and counts every test run in the sandbox.
"""
import argparse, sys
import l0kit
from l0kit.sx.l0steps import l0_step_counts, l0_step_table
from l0kit.sx.stepcount import SEMANTICS_VERSION

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('data_dir')
    ap.add_argument('--splits', nargs='*', default=None, help='default: every split of the data set')
    ap.add_argument('--limit', type=int, default=None, help='items per split')
    a = ap.parse_args()
    from l0kit.l0 import dataset   # the L0 loader
    splits = a.splits or dataset.available_splits(a.data_dir)
    items = [it for s in splits for it in dataset.load_split(a.data_dir, s, with_traces=False, limit=a.limit)]
    counts = l0_step_counts(items)
    print(f"l0kit {l0kit.__version__}, semantics {SEMANTICS_VERSION}, data {a.data_dir}, {len(items)} items")
    print(l0_step_table(counts).round(2).to_string())
    bad = counts.dropna(subset=['error'])
    if len(bad): print(f"\n{len(bad)} uncounted, e.g. {bad.iloc[0]['id']}: {bad.iloc[0]['error']}")

if __name__ == '__main__':
    sys.exit(main())
