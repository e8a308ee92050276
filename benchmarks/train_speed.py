"""Speed of the model organism on this machine: tokens per second of training (`l0kit train`'s loop on a preset's model
and data) and of evaluation (greedy decoding through the `hf:` backend, as `l0kit eval` runs it).

Training: `--steps` optimiser steps of the preset (the first `--warmup-steps` are not timed), tokens read per second
(prompts with their demonstrations, and the trace: the forward pass reads all; batches as the training loop builds them). Evaluation: `--prompts` four-shot L0 prompts (as the organism reads them) of the organism's
programs, greedy, batch `--batch`, a fixed budget of `--new-tokens` new tokens each (no stop), generated tokens per
second; the model is the preset's architecture freshly initialised unless `--model DIR` names a trained organism
(speed does not depend on the weights, only on the sizes).

Prints the machine, the torch threads and the load average before and after: on a shared machine the figures are
inflated, so re-run it on a quiet one.

Usage: python benchmarks/train_speed.py [--preset quick] [--steps 20] [--warmup-steps 3] [--prompts 16] [--batch 8]
                                         [--new-tokens 64] [--threads 2] [--model DIR]
"""
import argparse, dataclasses, itertools, os, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.pop('IN_TEST', None)  # the real preset sizes
from l0kit.train import (get_train_preset, make_tokenizer, make_model, training_examples, training_batches, collate, lr_at,
                         n_params, prompt_of, machine)

def train_speed(cfg, steps, warmup):
    "Tokens per second of the training loop (forward, backward, AdamW step, data generation included)."
    import torch
    tok = make_tokenizer(); model = make_model(cfg, tok); model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr)
    batches = training_batches(cfg, tok)  # the training loop's own batches: four-shot prompts, long examples skipped
    tokens, t0 = 0, None
    for step in range(warmup + steps):
        if step == warmup: t0, tokens = time.perf_counter(), 0
        ids, mask, labels = collate(next(batches)[0], tok.pad_token_id)
        for g in opt.param_groups: g['lr'] = lr_at(cfg, step)
        model(input_ids=ids, attention_mask=mask, labels=labels).loss.backward()
        opt.step(); opt.zero_grad(set_to_none=True)
        tokens += int(mask.sum())
    dt = time.perf_counter() - t0
    return model, tok, tokens, dt

def eval_speed(spec, cfg, prompts, batch, new_tokens):
    "Generated tokens per second of greedy decoding through the hf: backend."
    from l0kit.harness.models import GenerationParams, load_model
    items = list(itertools.islice(training_examples(dataclasses.replace(cfg, seed=cfg.seed + 1000)), prompts))
    with load_model(spec) as m:
        ps = [prompt_of(it) for it in items]
        m.generate(ps[:1], GenerationParams(max_new_tokens=4))  # warm-up
        t0 = time.perf_counter()
        outs = m.generate(ps, GenerationParams(max_new_tokens=new_tokens))
        dt = time.perf_counter() - t0
    return sum(o[0].completion_tokens for o in outs), sum(o[0].prompt_tokens for o in outs), dt

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--preset', default='quick'); ap.add_argument('--steps', type=int, default=20)
    ap.add_argument('--warmup-steps', type=int, default=3); ap.add_argument('--prompts', type=int, default=16)
    ap.add_argument('--batch', type=int, default=8); ap.add_argument('--new-tokens', type=int, default=64)
    ap.add_argument('--threads', type=int, default=2); ap.add_argument('--model', default=None)
    a = ap.parse_args(argv)
    import torch
    torch.set_num_threads(a.threads)
    cfg = get_train_preset(a.preset, small=False)
    load0 = os.getloadavg()
    model, tok, tokens, dt = train_speed(cfg, a.steps, a.warmup_steps)
    print(f"training ({a.preset}: {n_params(model):,} parameters, batch {cfg.batch_size}): {tokens / dt:,.0f} tokens/s "
          f"({tokens:,} tokens in {a.steps} steps, {dt / a.steps:.2f} s/step); the preset's {cfg.steps} steps: about "
          f"{cfg.steps * dt / a.steps / 60:.1f} min")
    with tempfile.TemporaryDirectory() as d:
        path = a.model
        if path is None:  # the preset's architecture, as trained for a few steps above
            path = str(Path(d) / 'untrained'); model.save_pretrained(path); tok.save_pretrained(path)
        gen, read, dt = eval_speed(f"hf:{path},threads={a.threads},batch_size={a.batch}", cfg, a.prompts, a.batch, a.new_tokens)
    print(f"evaluation (greedy, batch {a.batch}, {a.prompts} prompts of {read / a.prompts:.0f} tokens, {a.new_tokens} new tokens): "
          f"{gen / dt:,.0f} generated tokens/s ({dt:.1f} s)")
    m = machine()
    print(f"machine: {m['cpu']}, {m['cores']} cores, {a.threads} torch threads, torch {m['torch']}, transformers {m['transformers']}; "
          f"load average before {[round(x, 2) for x in load0]}, after {m['load_average']}")

if __name__ == '__main__':
    main()
