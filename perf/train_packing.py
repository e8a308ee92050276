"""Packing against the organism's padded passes: the same examples' forward and backward, either as `l0kit train` runs
them (a step's programs sorted by length, `micro_batch` a pass, each pass padded to a multiple of `pad_to`) or packed
first-fit into rows of `--row` tokens, one row a pass, each example its own positions (transformers then masks
attention to each example's own tokens).

Packing wastes fewer tokens in the linear layers, but on a CPU there is no kernel that skips the masked blocks of a
row's attention: a row of 2,048 tokens costs the attention of 2,048 tokens, where its examples padded cost the sum of
their own squares. This measures which wins. (LFM2's convolutions would also need each example's start to reset them;
the cost is the same, so the speed is measured without it, and the loss printed is not a packed model's loss.)

Usage: python perf/train_packing.py [--preset full] [--steps 30] [--row 2048] [--repeats 2] [--set arch=llama --set dtype=float32 ...]

With `--set arch=llama` (no convolutions) the packed rows' loss is the padded passes' loss: the check that each example
sees only itself.
"""
import argparse, os, sys, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.pop('IN_TEST', None)  # the real preset sizes
from l0kit.organism.data import get_train_preset, tokenizer_of, training_batches
from l0kit.organism.model import make_model
from l0kit.organism.train import _backward, _learned, machine, machine_config
from train_speed import with_fields  # the same --set as perf/train_speed.py

def first_fit(examples: list, row: int) -> list[list]:
    "Examples (longest first) into rows of at most `row` tokens, each into the first row with room."
    rows, room = [], []
    for ex in sorted(examples, key=lambda e: -len(e[0])):
        i = next((i for i, r in enumerate(room) if r >= len(ex[0])), None)
        if i is None: rows.append([]); room.append(row); i = len(rows) - 1
        rows[i].append(ex); room[i] -= len(ex[0])
    return rows

def packed_row(examples: list, row: int, pad_id: int):
    "One row: the examples' tokens one after another, each with its own positions from 0, padded at the end to `row`."
    import torch
    ids, labels, pos = [], [], []
    for x, y in examples: ids += x; labels += y; pos += range(len(x))
    n = row - len(ids)
    ids += [pad_id] * n; labels += [-100] * n; pos += range(pos[-1] + 1, pos[-1] + 1 + n)  # the pad continues the last example
    return torch.tensor([ids]), torch.tensor([labels]), torch.tensor([pos])

def padded_pass(model, cfg, batch, pad_id) -> float:
    learned = [_learned(ex) for ex in batch]
    order = sorted(range(len(batch)), key=lambda i: len(batch[i][0]))
    return _backward(model, cfg, [batch[i] for i in order], [learned[i] / sum(learned) for i in order], pad_id)

def packed_pass(model, cfg, batch, pad_id, row: int) -> float:
    import torch
    total, learned = 0.0, sum(_learned(ex) for ex in batch)
    for part in first_fit(batch, row):
        ids, labels, pos = packed_row(part, row, pad_id)
        with torch.autocast('cpu', dtype=torch.bfloat16, enabled=cfg.dtype == 'bfloat16'):  # each row weighted by its share of the learned tokens, as a pass is
            loss = model(input_ids=ids, labels=labels, position_ids=pos, use_cache=False).loss.float() * (sum(_learned(ex) for ex in part) / learned)
        loss.backward(); total += loss.item()
    return total

def timed(model, batches, run) -> tuple[float, float]:
    t0, value = time.perf_counter(), 0.0
    for batch in batches:
        value += run(batch); model.zero_grad(set_to_none=True)
    return time.perf_counter() - t0, value / len(batches)

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--preset', default='full'); ap.add_argument('--steps', type=int, default=30)
    ap.add_argument('--row', type=int, default=2048); ap.add_argument('--repeats', type=int, default=2)
    ap.add_argument('--set', action='append', default=[], metavar='FIELD=VALUE', help="a TrainConfig field over the preset (repeatable)")
    a = ap.parse_args(argv)
    import torch
    cfg = machine_config(with_fields(get_train_preset(a.preset, small=False), a.set))
    torch.set_num_threads(cfg.threads)
    tok = tokenizer_of(cfg); model = make_model(cfg, tok); model.train()
    source = training_batches(cfg, tok)
    batches = [next(source)[0] for _ in range(a.steps)]
    longest = max(len(x) for b in batches for x, _ in b)
    if longest > a.row: ap.error(f"an example has {longest} tokens, more than a row of {a.row}")
    real = sum(len(x) for b in batches for x, _ in b)
    load0 = os.getloadavg()
    padded_tokens = sum(len(p) * -(-max(len(x) for x, _ in p) // cfg.pad_to) * cfg.pad_to
                        for b in batches for p in (sorted(b, key=lambda e: len(e[0]))[i:i + cfg.micro_batch] for i in range(0, len(b), cfg.micro_batch)))
    rows = sum(len(first_fit(b, a.row)) for b in batches)
    print(f"{cfg.name}: {cfg.arch}, {cfg.dtype}, {a.steps} steps of {cfg.batch_size} programs, {real:,} real tokens; padded passes of "
          f"{cfg.micro_batch} read {padded_tokens:,} ({padded_tokens / real:.3f}x), packed rows of {a.row} read {rows * a.row:,} "
          f"({rows * a.row / real:.3f}x, {rows} rows)", flush=True)
    pack = lambda b: packed_pass(model, cfg, b, tok.pad_token_id, a.row)
    pad = lambda b: padded_pass(model, cfg, b, tok.pad_token_id)
    timed(model, batches[:3], pad); timed(model, batches[:3], pack)  # the kernels of both shapes built first
    best = {'padded': float('inf'), 'packed': float('inf')}
    for r in range(a.repeats):
        for name, run in (('padded', pad), ('packed', pack)):
            t, loss = timed(model, batches, run); best[name] = min(best[name], t)
            print(f"  repeat {r}: {name} {t:.2f} s, {real / t:,.0f} real tokens/s (mean loss {loss:.6f})", flush=True)
    print(f"packed / padded time: {best['packed'] / best['padded']:.2f}x (best of {a.repeats}; below 1 packing is faster)")
    m = machine()
    print(f"machine: {m['cpu']}, {m['cores']} cores, torch {m['torch']}; load average before {[round(x, 2) for x in load0]}, after {m['load_average']}")

if __name__ == '__main__': main()
