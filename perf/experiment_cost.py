"""Project the generation time of a full-scale L0 run from a measured smaller one.

    python perf/experiment_cost.py runs/l0/smollm2/main-8-seed0 [--programs 500] [--voters 31]

Reads every split's run directory under the given directory, measures the generation seconds per response
(the median over batches of a batch's latency over its responses, so that one batch slowed by other work on the
machine does not set the figure; failed requests left out), and multiplies by programs x voters per split.
Splits whose requests failed (a prompt longer than the model's context) are reported as not runnable.
The projection is an estimate from one machine's measurement, not a run: it says so in its output.
"""
import argparse
import platform

import numpy as np
from pathlib import Path
import pandas as pd

from l0kit.runs.report import RESPONSE_COLUMNS
from l0kit.runs.format import read_run


def measure(run_dir: Path) -> dict:
    "Responses, failures, tokens and generation seconds of one run directory."
    run = read_run(run_dir)  # the kit's one reader of run folders
    meta = run.meta
    df = pd.DataFrame([vars(r) for r in run.records], columns=RESPONSE_COLUMNS).drop_duplicates(['id', 'voter'], keep='last')
    failed = df['error'].notna()
    ok = df[~failed]
    batches = ok.groupby('latency_s').size()  # a batch's latency is shared by its rows
    seconds = float(batches.index.to_numpy().sum())
    per_batch = batches.index.to_numpy() / batches.to_numpy()  # seconds per response in each batch
    return dict(split=meta.get('split'), responses=len(ok), failed=int(failed.sum()),
                completion_tokens=int(ok['completion_tokens'].fillna(0).sum()),
                prompt_tokens=float(ok['prompt_tokens'].mean()) if len(ok) else float('nan'),
                seconds=seconds, median_per_response=float(np.median(per_batch)) if len(per_batch) else float('nan'),
                batches=len(batches),
                first_error=df.loc[failed, 'error'].iloc[0] if failed.any() else None)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('runs', type=Path, help='a directory holding one run directory per split')
    ap.add_argument('--programs', type=int, default=500, help='programs per split at full scale (the paper: 500)')
    ap.add_argument('--voters', type=int, default=31, help='voters per program at full scale (the paper: 31)')
    a = ap.parse_args()
    dirs = sorted(d for d in a.runs.iterdir() if (d / 'responses.jsonl').is_file())
    if not dirs: raise SystemExit(f"no run directories with responses under {a.runs}")
    n_full = a.programs * a.voters
    total, rows = 0.0, [measure(d) for d in dirs]
    print(f"measured on {platform.machine()} with {platform.python_version()}; projection to {a.programs} programs x "
          f"{a.voters} voters per split (an estimate, not a run)")
    print(f"{'split':<11}{'ok':>5}{'failed':>8}{'batches':>9}{'prompt tok':>12}{'s/response':>12}{'tok/s':>8}{'projected h':>13}")
    for r in rows:
        if not r['responses']:
            print(f"{r['split']:<11}{0:>5}{r['failed']:>8}  not runnable: {r['first_error']}")
            continue
        per = r['median_per_response']
        hours = per * n_full / 3600
        total += hours
        print(f"{r['split']:<11}{r['responses']:>5}{r['failed']:>8}{r['batches']:>9}{r['prompt_tokens']:>12.0f}{per:>12.1f}"
              f"{r['completion_tokens'] / max(r['seconds'], 1e-9):>8.1f}{hours:>13.1f}")
    print(f"projected generation time of the runnable splits: {total:.1f} h ({total / 24:.1f} days)")


if __name__ == '__main__':
    main()
