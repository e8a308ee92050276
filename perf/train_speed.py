"""Speed of the model organism on this machine: tokens per second of training (`l0kit train`'s loop on a preset's model
and data) and of evaluation (greedy decoding through the `hf:` backend, as `l0kit eval` runs it).

Training: `l0kit train`'s own run (`train`, with the preset's workers, batches, data generation, start-up and saving)
for `--steps` optimiser steps, tokens read per second (prompts with their demonstrations, and the traces: the forward
pass reads all), seconds per step and the preset's projected time. Evaluation: `--prompts` four-shot L0 prompts (as the organism reads them) of the organism's
programs, greedy, batch `--batch`, a fixed budget of `--new-tokens` new tokens each (no stop), generated tokens per
second; the model is the preset's architecture freshly initialised unless `--model DIR` names a trained organism
(speed does not depend on the weights, only on the sizes). The training line also gives the loop's useful floating-point
rate (6 per parameter and real token, and the causal attention's; padding not counted) against this machine's float32
peak, measured first (the best of ten 2048 x 2048 products on the preset's threads). `--compare-micro`: the same steps again
with the whole batch in one pass (`micro_batch = batch_size`, the loop before micro-batches): the ratio.
`--compare-dtype`: the same steps again with the other of float32 and bfloat16 (autocast; fast only where the CPU has
AVX512-BF16 or AMX), the ratio, and the bfloat16 product peak measured beside the float32 one.

`--muon`: only the optimiser step of `optimizer='muon'` on the preset's hidden weight matrices, `torch.optim.Muon`
(Newton-Schulz in bfloat16) against the kit's `muon` (float32), milliseconds a step each, and how far their updates
differ (the kit computes torch's step; bfloat16 rounding is the difference).

Prints the machine, the torch threads and the load average before and after: on a shared machine the figures are
inflated, so re-run it on a quiet one.

Usage: python perf/train_speed.py [--preset quick] [--steps 200] [--set batch_size=8 ...] [--workers 2 --compare-workers] [--compare-micro]
                                         [--compare-dtype] [--prompts 16 (0: training only)] [--batch 8]
                                         [--new-tokens 64] [--threads 2] [--model DIR]
       python perf/train_speed.py --muon [--preset quick] [--steps 20] [--threads 2]
"""
import argparse, dataclasses, itertools, os, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.pop('IN_TEST', None)  # the real preset sizes
from l0kit.organism.data import get_train_preset, training_examples, prompt_of
from l0kit.organism.train import train, machine, machine_config

def train_speed(cfg, steps, out):
    "The card of `l0kit train`'s run of the preset for `steps` steps (its workers and threads); the card's seconds are the loop's."
    return train(dataclasses.replace(cfg, name=f"{cfg.name}-speed", steps=steps, warmup=min(cfg.warmup, steps)), out, progress=False)

def with_fields(cfg, pairs: list):
    "`cfg` with `FIELD=VALUE` pairs set, each converted to the field's type."
    for kv in pairs:
        k, v = kv.split('=', 1)
        t = type(getattr(cfg, k))
        cfg = dataclasses.replace(cfg, **{k: v.lower() in ('1', 'true', 'yes') if t is bool else t(v)})
    return cfg

def matmul_peak(threads: int, n: int = 2048, repeats: int = 10, dtype: str = 'float32') -> float:
    "The machine's measured peak in GFLOP/s for `dtype` ('float32' or 'bfloat16'): the best of `repeats` n x n matrix products on `threads` torch threads."
    import torch
    torch.set_num_threads(threads)
    a, b = torch.randn(n, n, dtype=getattr(torch, dtype)), torch.randn(n, n, dtype=getattr(torch, dtype))
    a @ b
    best = min(_timed(lambda: a @ b) for _ in range(repeats))
    return 2 * n ** 3 / best / 1e9

def _timed(f) -> float:
    t0 = time.perf_counter(); f(); return time.perf_counter() - t0

def useful_flops(cfg, steps: int, parameters: int) -> float:
    "Floating-point operations of `steps` training steps on the real tokens (no padding): 6 per parameter and token (forward and backward), and the causal attention's 6 x hidden x length^2 per example and attention layer."
    from l0kit.organism.data import tokenizer_of, training_batches
    from l0kit.organism.model import _layer_types
    batches = training_batches(cfg, tokenizer_of(cfg))
    lengths = [len(x) for _ in range(steps) for x, _ in next(batches)[0]]
    attention = sum(t != 'conv' for t in _layer_types(cfg.layers)) if cfg.arch == 'lfm2' else cfg.layers
    return 6 * parameters * sum(lengths) + 6 * cfg.hidden_size * attention * sum(n * n for n in lengths)

def eval_speed(spec, cfg, prompts, batch, new_tokens):
    "Generated tokens per second of greedy decoding through the hf: backend."
    from l0kit.protocol.models import GenerationParams, load_model
    items = list(itertools.islice(training_examples(dataclasses.replace(cfg, seed=cfg.seed + 1000)), prompts))
    with load_model(spec) as m:
        ps = [prompt_of(it) for it in items]
        m.generate(ps[:1], GenerationParams(max_new_tokens=4))  # warm-up
        t0 = time.perf_counter()
        outs = m.generate(ps, GenerationParams(max_new_tokens=new_tokens))
        dt = time.perf_counter() - t0
    return sum(o[0].completion_tokens for o in outs), sum(o[0].prompt_tokens for o in outs), dt

def muon_speed(cfg, steps, threads):
    "Milliseconds a step of torch.optim.Muon and of the kit's muon on the preset's hidden matrices (same gradients), and the largest difference of their updates relative to the largest update."
    import torch
    from l0kit.organism.data import tokenizer_of
    from l0kit.organism.model import make_model, make_optimizers, muon
    torch.set_num_threads(threads)
    model = make_model(cfg, tokenizer_of(cfg))
    hidden = make_optimizers(dataclasses.replace(cfg, optimizer='muon'), model)[0].param_groups[0]['params']
    g = torch.Generator().manual_seed(0)
    grads = [[torch.randn(p.shape, generator=g) for p in hidden] for _ in range(steps)]
    def run(make):
        ws = [torch.nn.Parameter(p.detach().clone()) for p in hidden]
        opt, t = make(ws), 0.0
        for gs in grads:
            for w, gr in zip(ws, gs): w.grad = gr
            t0 = time.perf_counter(); opt.step(); t += time.perf_counter() - t0
        return ws, 1000 * t / steps
    kw = dict(lr=cfg.lr, weight_decay=cfg.weight_decay)
    theirs, t_torch = run(lambda ws: torch.optim.Muon(ws, nesterov=True, adjust_lr_fn='match_rms_adamw', **kw))
    ours, t_kit = run(lambda ws: muon(ws, **kw))
    moved = max((a - p).abs().max().item() for a, p in zip(theirs, hidden))
    diff = max((a - b).abs().max().item() for a, b in zip(ours, theirs))
    return len(hidden), sum(p.numel() for p in hidden), t_torch, t_kit, diff / moved

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--preset', default='quick'); ap.add_argument('--steps', type=int, default=200)
    ap.add_argument('--prompts', type=int, default=16, help='four-shot prompts of the evaluation (0: training only)')
    ap.add_argument('--batch', type=int, default=8); ap.add_argument('--new-tokens', type=int, default=64)
    ap.add_argument('--threads', type=int, default=2, help='torch threads of the evaluation (training: the preset\'s)')
    ap.add_argument('--model', default=None)
    ap.add_argument('--workers', type=int, default=None, help="training workers (default: the preset's)")
    ap.add_argument('--compare-workers', action='store_true', help='also train one process of the same threads: the ratio')
    ap.add_argument('--compare-micro', action='store_true', help="also train with the whole batch in one pass (micro_batch = batch_size): the ratio")
    ap.add_argument('--compare-dtype', action='store_true', help="also train in the other of float32 and bfloat16: the ratio")
    ap.add_argument('--set', action='append', default=[], metavar='FIELD=VALUE', help="a TrainConfig field over the preset (repeatable), e.g. batch_size=8")
    ap.add_argument('--muon', action='store_true', help="time only the Muon step: torch.optim.Muon against the kit's")
    a = ap.parse_args(argv)
    cfg = machine_config(with_fields(get_train_preset(a.preset, small=False), a.set))  # dtype 'auto' decided as `l0kit train` decides it
    load0 = os.getloadavg()
    if a.muon:
        n, size, t_torch, t_kit, rel = muon_speed(cfg, a.steps, a.threads)
        m = machine()
        print(f"Muon step on {cfg.name}'s {n} hidden matrices ({size:,} weights), {a.steps} steps, {a.threads} thread(s): torch.optim.Muon "
              f"{t_torch:.1f} ms, the kit's muon {t_kit:.1f} ms: {t_torch / t_kit:.1f}x; largest update difference {100 * rel:.2f} % of the largest "
              f"update (torch's bfloat16)\nmachine: {m['cpu']}, {m['cores']} cores, torch {m['torch']}; load average before "
              f"{[round(x, 2) for x in load0]}, after {m['load_average']}")
        return
    with tempfile.TemporaryDirectory() as d:
        cards = {}
        first = a.workers or cfg.workers
        other = {'float32': 'bfloat16', 'bfloat16': 'float32'}[cfg.dtype]
        peaks = {t: matmul_peak(cfg.threads, dtype=t) for t in ([cfg.dtype, other] if a.compare_dtype else [cfg.dtype])}
        if a.compare_dtype:
            print(f"measured peak ({cfg.threads} threads, the best of ten 2048 x 2048 products): " + ", ".join(f"{t} {p:.1f} GFLOP/s" for t, p in peaks.items()), flush=True)
        base_key = (first, cfg.micro_batch, cfg.dtype)
        runs = [base_key] + ([(1, cfg.micro_batch, cfg.dtype)] if a.compare_workers and first > 1 else []) \
             + ([(first, cfg.batch_size, cfg.dtype)] if a.compare_micro and cfg.micro_batch < cfg.batch_size else []) \
             + ([(first, cfg.micro_batch, other)] if a.compare_dtype else [])
        for workers, micro, dtype in runs:
            c, peak = dataclasses.replace(cfg, workers=workers, micro_batch=micro, dtype=dtype), peaks[dtype]
            t0 = time.perf_counter()
            card = cards[workers, micro, dtype] = train_speed(c, a.steps, Path(d) / f'organism-{workers}-{micro}-{dtype}')
            wall = time.perf_counter() - t0
            rate = useful_flops(c, a.steps, card['parameters']) / card['seconds'] / 1e9
            print(f"training ({a.preset}: {card['parameters']:,} parameters, {dtype}, batch {c.batch_size} in passes of {micro}, {workers} worker(s) of "
                  f"{c.threads // workers} thread(s)): {card['tokens_per_second']:,.0f} tokens/s ({card['tokens']:,} tokens in {a.steps} "
                  f"steps, {card['seconds'] / a.steps:.3f} s/step in the loop; {wall:.1f} s with start-up and saving); {rate:.1f} GFLOP/s on the "
                  f"real tokens, {rate / peak:.0%} of the measured {dtype} peak ({peak:.1f} GFLOP/s, {cfg.threads} threads); the preset's "
                  f"{cfg.steps} steps: about {(cfg.steps * card['seconds'] / a.steps + wall - card['seconds']) / 60:.1f} min", flush=True)
        base = cards[base_key]['tokens_per_second']
        def ratio(key, words):
            if key in cards and key != base_key:
                print(f"{words}, same steps and batches: {base / cards[key]['tokens_per_second']:.2f}x the tokens per second")
        ratio((1, cfg.micro_batch, cfg.dtype), f"{first} workers against one process of {cfg.threads} threads")
        ratio((first, cfg.batch_size, cfg.dtype), f"passes of {cfg.micro_batch} programs against one pass of the batch of {cfg.batch_size}")
        ratio((first, cfg.micro_batch, other), f"{cfg.dtype} against {other}")
        card = cards[base_key]
        path = a.model or card['path']  # the preset's architecture as trained for a few steps above: speed depends on the sizes only
        if a.prompts > 0:
            gen, read, dt = eval_speed(f"hf:{path},threads={a.threads},batch_size={a.batch}", cfg, a.prompts, a.batch, a.new_tokens)
            print(f"evaluation (greedy, batch {a.batch}, {a.prompts} prompts of {read / a.prompts:.0f} tokens, {a.new_tokens} new tokens): "
                  f"{gen / dt:,.0f} generated tokens/s ({dt:.1f} s)")
    m = machine()
    print(f"machine: {m['cpu']}, {m['cores']} cores, {a.threads} torch threads in evaluation, torch {m['torch']}, transformers {m['transformers']}; "
          f"load average before {[round(x, 2) for x in load0]}, after {m['load_average']}")

if __name__ == '__main__':
    main()
