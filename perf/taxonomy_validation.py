"""Validate the first-error taxonomy (l0kit.l0.taxonomy) on errors whose type is known.

Two sources of labelled errors, on programs from the kit's generator (base configuration, seed 0):
1. the simulated model backend (`l0kit.l0.simulated`): each response's first injected error;
2. the kit's own controlled corruptions (`l0kit.l0.taxonomy.corrupt_trace`), every applicable type per program.
Prints a confusion matrix (rows: injected, columns: predicted) and the accuracy for each.

Usage: python perf/taxonomy_validation.py [--candidates 3000] [--simulated-from-branch models]
`--simulated-from-branch` reads the backend's injection functions from another git branch, for use before
`l0kit.l0.simulated` is merged into this one.
"""
import argparse, random, re, subprocess, time
from pathlib import Path
import numpy as np
from l0kit.l0.tracer import trace_program, normalize_program
from l0kit.l0.dataset import get_preset, make_candidate
from l0kit.l0.generator import ProgramGenerator
from l0kit.l0.metrics import score_trace
from l0kit.l0.taxonomy import classify_first_error, confusion_matrix, taxonomy_accuracy, corrupt_trace, ERROR_TYPES, SIMULATED_KINDS

def simulated_backend(branch=None):
    "(simulate_response, ERROR_KINDS) of the simulated backend, imported or read from a git branch."
    if branch is None:
        from l0kit.l0.simulated import simulate_response, ERROR_KINDS
        return simulate_response, ERROR_KINDS
    repo = Path(__file__).resolve().parents[1]
    src = subprocess.run(["git", "-C", str(repo), "show", f"{branch}:l0kit/simulated.py"], capture_output=True, text=True, check=True).stdout
    ns = dict(re=re, random=random, trace_program=trace_program, normalize_program=normalize_program)
    for name in ("ERROR_KINDS", "_while_lines", "eligible_kinds", "corrupt_step", "simulate_response"):
        exec(re.search(rf"^(?:def {name}\b|{name} =).*?(?=^# %%|^def |^class |\Z)", src, re.S | re.M).group(0), ns)
    return ns["simulate_response"], ns["ERROR_KINDS"]

def show(title, pairs):
    cm = confusion_matrix(pairs)
    print(f"\n{title}\n" + cm.loc[:, cm.sum() > 0].to_string())
    print(f"accuracy {taxonomy_accuracy(cm):.4f} over {cm.to_numpy().sum()} responses")

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--candidates", type=int, default=3000, help="generator candidates scanned (about 28%% yield a program)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--simulated-from-branch", metavar="BRANCH")
    a = ap.parse_args()
    cfg = get_preset("base")
    gen = ProgramGenerator(cfg.gen)
    t0 = time.time()
    cands = [c for i in range(a.candidates) if (c := make_candidate(cfg, gen, a.seed, i))]
    print(f"{len(cands)} generated programs ({time.time() - t0:.1f}s), mean target {np.mean([c['steps'] for c in cands]):.1f} steps")

    simulate, kinds = simulated_backend(a.simulated_from_branch)
    rng, pairs = random.Random(a.seed), []
    for c in cands:
        for rate in (0.02, 0.1):
            lines, injected = simulate(c["program"], c["test_input"], rate, kinds, rng)
            if not injected: continue
            resp = "\n".join(lines)
            s = score_trace(resp, c["target"])
            want = SIMULATED_KINDS[injected[0]["kind"]]
            if s.steps_to_error != injected[0]["step"]: pairs.append((want, "wrong_step")); continue
            f = classify_first_error(resp, c["target"], c["program"], score=s)
            pairs.append((want, f.error_type if f else "correct"))
    show("Simulated backend: first injected error -> taxonomy", pairs)

    nrng, pairs = np.random.default_rng(a.seed), []
    for c in cands:
        for kind in ERROR_TYPES:
            if kind == "other_control_flow" or (x := corrupt_trace(c["target"], c["program"], kind, nrng)) is None: continue
            f = classify_first_error("\n".join(x[0]), c["target"], c["program"])
            pairs.append((kind, f.error_type if f else "correct"))
    show("Kit corruptions (corrupt_trace) -> taxonomy", pairs)

if __name__ == "__main__":
    main()
