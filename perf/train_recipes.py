"""Which organism recipe learns fastest in the same wall-clock time? Trains each configuration for `--minutes` (the
steps are set from the first ten steps' speed, and the learning-rate schedule follows them), then reads the test traces
of the first `--programs` programs of two ladder splits teacher-forced: the share of traces whose every token is the
model's greedy choice (which is whole-trace accuracy under greedy decoding), next-token accuracy by kind (label,
variable, digit, other; `l0kit.organism.probes.token_kind`), and next-token accuracy on the first demonstration's trace against the
test trace's (`demo1`, `test`): a model that reads its demonstrations does better on the test trace, after four traces of
the same program, than on the first, after none.

Configurations are JSON objects of `TrainConfig` fields over the `full` preset (one worker each; name `arch` and
`optimizer` to compare against the earlier recipe: `{"arch": "llama", "optimizer": "adamw"}`); `--parallel 2
--threads 1` (the default) runs two at once, one thread each, on two cores, so each pair shares the machine alike: give
an even number. The steps are set from the speed of steps 5-20, the warm-up is the preset's share of them. Prints each
result as it ends and a table; load before and after.

Usage: python perf/train_recipes.py [--minutes 10] [--threads 1] [--parallel 2] [--programs 60]
                                          '{"batch_size": 16}' '{"batch_size": 8}' ...
"""
import argparse, dataclasses, json, os, subprocess, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.pop('IN_TEST', None)  # the real preset sizes

SPLITS = ('steps_01_04', 'steps_05_08')

def teacher_forced(model, tok, items, cfg) -> dict:
    "Share of test traces right token for token under teacher forcing (greedy whole-trace accuracy), and accuracy by token kind."
    from l0kit.organism.probes import _read_test_trace
    model.eval()
    reads = [_read_test_trace(model, tok, it, cfg.setup, cfg.shots) for it in items]
    tokens = [t for r in reads for t in r if t[0] != 'end']
    kinds = sorted({k for k, _ in tokens})
    first = [trace_reads(model, tok, it, cfg)[0] for it in items]
    return {'exact': round(sum(all(ok for _, ok in r) for r in reads) / len(reads), 3),
            **{k: round(sum(ok for kk, ok in tokens if kk == k) / sum(kk == k for kk, _ in tokens), 3) for k in kinds},
            'demo1': round(sum(map(sum, first)) / sum(map(len, first)), 3), 'test': round(sum(ok for _, ok in tokens) / len(tokens), 3)}

def trace_reads(model, tok, item, cfg) -> list[list[bool]]:
    "Greedy next-token rightness on each learned trace of the item's prompt in order (the demonstrations', then the test trace), teacher-forced."
    import torch
    from l0kit.organism.data import encode_example
    ids, labels = encode_example(item, tok, cfg.setup, cfg.shots, 0, demo_loss=True)
    with torch.no_grad(): guess = model(torch.tensor([ids])).logits[0].argmax(-1).tolist()
    traces, run = [], []
    for i in range(1, len(ids)):
        if labels[i] != -100: run.append(guess[i - 1] == ids[i])
        elif run: traces.append(run); run = []
    return traces + [run] if run else traces

def run_one(over: dict, minutes: float, threads: int, ladder: str, programs: int) -> dict:
    "Train one configuration for `minutes` in this process (one worker), then read the ladder splits teacher-forced."
    import torch
    from l0kit.protocol.benchmark import get_benchmark
    from l0kit.organism.data import TrainConfig, get_train_preset, tokenizer_of, training_batches
    from l0kit.organism.train import _backward, _learned, machine_config
    from l0kit.organism.model import make_model, make_optimizers, lr_at, n_params
    torch.set_num_threads(threads)
    cfg = machine_config(TrainConfig.from_dict({**get_train_preset('full', small=False).to_dict(), 'workers': 1, 'threads': threads, **over}))
    tok = tokenizer_of(cfg); model = make_model(cfg, tok); model.train()
    opts = make_optimizers(cfg, model)
    batches = training_batches(cfg, tok)
    t0, step, total, losses, tokens, t5 = time.perf_counter(), 0, cfg.steps, [], 0, None
    while step < 20 or step < total:
        if step == 5: t5 = time.perf_counter()
        if step == 20:  # the steps that fit the budget, at the speed of steps 5-20 (the first ones pay one-off costs)
            total = 20 + int((minutes * 60 - (time.perf_counter() - t0)) / ((time.perf_counter() - t5) / 15))
            cfg = dataclasses.replace(cfg, steps=max(total, 21), warmup=max(1, round(cfg.warmup * total / cfg.steps)))  # the preset's share of warm-up
        batch, _, _ = next(batches)  # (batch, items, skipped for length)
        for g in (g for o in opts for g in o.param_groups): g['lr'] = lr_at(cfg, step)
        learned = [_learned(ex) for ex in batch]  # the step of `l0kit train`: shortest to longest in passes of `micro_batch`, weighted by learned tokens
        order = sorted(range(len(batch)), key=lambda i: len(batch[i][0]))
        loss = _backward(model, cfg, [batch[i] for i in order], [learned[i] / sum(learned) for i in order], tok.pad_token_id)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        for o in opts: o.step(); o.zero_grad(set_to_none=True)
        losses.append(loss); tokens += sum(len(x) for x, _ in batch); step += 1
    seconds = time.perf_counter() - t0
    bench = get_benchmark('l0', {'shots': cfg.shots, 'setup': cfg.setup})
    ev = {s: teacher_forced(model, tok, bench.load(ladder, s, limit=programs), cfg) for s in SPLITS}
    return {'config': json.dumps(over), 'warmup': cfg.warmup, 'parameters': n_params(model), 'steps': step, 'seconds': round(seconds), 'tokens_per_second': round(tokens / seconds),
            'loss': round(sum(losses[-50:]) / len(losses[-50:]), 4), **{f"{s} {k}": v for s, r in ev.items() for k, v in r.items()}}

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('configs', nargs='*', default=['{"batch_size": 16}', '{"batch_size": 8}', '{"batch_size": 4}', '{"batch_size": 2}'])
    ap.add_argument('--minutes', type=float, default=10); ap.add_argument('--threads', type=int, default=1)
    ap.add_argument('--parallel', type=int, default=2); ap.add_argument('--programs', type=int, default=60)
    ap.add_argument('--one', help=argparse.SUPPRESS); ap.add_argument('--ladder', help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.one:  # a child: one configuration, its result as a JSON line
        print(json.dumps(run_one(json.loads(a.one), a.minutes, a.threads, a.ladder, a.programs)), flush=True); return
    for c in a.configs:
        try: json.loads(c)
        except json.JSONDecodeError as e: sys.exit(f"not a JSON object of TrainConfig fields: {c!r} ({e})")
    load0 = os.getloadavg()
    with tempfile.TemporaryDirectory() as d:
        r = subprocess.run([sys.executable, '-c', 'import sys; from l0kit.cli.main import main; sys.exit(main())', 'generate', '--preset', 'ladder', '--limit', str(a.programs),
                            '--out', f"{d}/ladder", '--quiet'], capture_output=True, text=True)
        if r.returncode: sys.exit(f"could not generate the ladder: {r.stderr.strip()}")
        rows, queue = [], list(a.configs)
        while queue:
            group, queue = queue[:a.parallel], queue[a.parallel:]
            procs = [subprocess.Popen([sys.executable, __file__, '--one', c, '--minutes', str(a.minutes), '--threads', str(a.threads),
                                       '--ladder', f"{d}/ladder", '--programs', str(a.programs)], stdout=subprocess.PIPE, text=True) for c in group]
            try:
                for c, p in zip(group, procs):
                    out, _ = p.communicate()
                    if p.returncode: sys.exit(f"configuration {c} failed (exit {p.returncode})")
                    rows.append(json.loads(out.strip().splitlines()[-1])); print(json.dumps(rows[-1]), flush=True)
            finally:  # a failed configuration stops the one beside it before the ladder folder goes
                for p in procs:
                    if p.poll() is None: p.terminate()
                    p.wait()
    import pandas as pd
    print(pd.DataFrame(rows).set_index('config').T.astype(object).to_string())  # each value as measured, not in a shared float format
    print(f"load average before {[round(x, 2) for x in load0]}, after {[round(x, 2) for x in os.getloadavg()]}; "
          f"{a.parallel} at once, {a.threads} thread(s) each, {a.minutes} min each")

if __name__ == '__main__':
    main()
