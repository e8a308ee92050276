"""How the model organism's step time moves over a run: `l0kit train`'s own step (`_step`: the passes, clipping, the optimisers) on a
preset's model and data, timed in windows of `--window` steps, with the process's peak resident memory after each.

A projection from a run's first steps says how long a whole run takes only if the step time stays flat. It did not in
bfloat16: every new length of a pass is a new matrix shape, for which the CPU's bfloat16 kernels are built (oneDNN), so
steps slowed and memory grew for hundreds of steps. `--set pad_to=1` against the presets' `pad_to=64` shows it.

Usage: python perf/train_windows.py [--preset full] [--steps 500] [--window 50] [--set pad_to=1 --set dtype=float32 ...]
"""
import argparse, os, resource, sys, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.pop('IN_TEST', None)  # the real preset sizes
from l0kit.organism.data import get_train_preset, tokenizer_of, training_batches
from l0kit.organism.model import make_model, make_optimizers
from l0kit.organism.train import _step, machine, machine_config
from train_speed import with_fields  # the same --set as perf/train_speed.py

def windows(cfg, steps: int, window: int):
    "Yield (first step, seconds a step, real tokens a second, peak resident GB) for each window of `window` steps of the loop."
    import torch
    torch.set_num_threads(cfg.threads); torch.use_deterministic_algorithms(True)
    tok = tokenizer_of(cfg); model = make_model(cfg, tok); opts = make_optimizers(cfg, model)
    batches = training_batches(cfg, tok)
    model.train()
    t0, tokens = time.perf_counter(), 0
    for step in range(steps):
        batch = next(batches)[0]
        _step(model, opts, cfg, batch, step, tok.pad_token_id)  # the loop's own step
        tokens += sum(len(x) for x, _ in batch)
        if (step + 1) % window == 0:
            dt = time.perf_counter() - t0
            yield step + 1 - window, dt / window, tokens / dt, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
            t0, tokens = time.perf_counter(), 0

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--preset', default='full'); ap.add_argument('--steps', type=int, default=500); ap.add_argument('--window', type=int, default=50)
    ap.add_argument('--set', action='append', default=[], metavar='FIELD=VALUE', help="a TrainConfig field over the preset (repeatable), e.g. pad_to=1")
    a = ap.parse_args(argv)
    cfg = machine_config(with_fields(get_train_preset(a.preset, small=False), a.set))
    if cfg.workers != 1: ap.error(f"times the loop in one process: workers must be 1, not {cfg.workers} (l0kit train runs the workers)")
    load0 = os.getloadavg()
    print(f"{cfg.name}: {cfg.dtype}, pad_to {cfg.pad_to}, batch {cfg.batch_size} in passes of {cfg.micro_batch}, {cfg.threads} thread(s); {a.steps} steps", flush=True)
    for first, per_step, rate, gb in windows(cfg, a.steps, a.window):
        print(f"steps {first}-{first + a.window}: {per_step:.3f} s a step, {rate:,.0f} tokens/s, peak resident {gb:.2f} GB", flush=True)
    m = machine()
    print(f"machine: {m['cpu']}, {m['cores']} cores, torch {m['torch']}; load average before {[round(x, 2) for x in load0]}, after {m['load_average']}")

if __name__ == '__main__': main()
