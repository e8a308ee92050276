"""Running sums: a fifth procedural benchmark for l0kit, in a package of its own.

An item is a start value and a chain of operations (`+3`, `*2`, `-5`); the model writes the value after each one.
Like L0-Bench it is graded on the whole sequence, with the steps before the first error. Everything the kit needs is
the `Benchmark` protocol (`from l0kit import Benchmark, ...`): data, prompts, one reading per response, tables, the item view
and a simulated model. The entry point in `pyproject.toml` registers it.
"""
from __future__ import annotations
import json, random, re
from dataclasses import asdict, dataclass
from pathlib import Path
import pandas as pd
from l0kit import (Benchmark, DataError, ItemLayout, Prompt, Reading, SimulatedModel, YamlConfig, answer_part, check_value,
                   first_difference, prefix_credit, read_card, safe_name, stream_seed)

__all__ = ['SumsDataConfig', 'SumsEvalConfig', 'make_item', 'SumsSimulated', 'SumsBenchmark']


@dataclass
class SumsDataConfig(YamlConfig):
    "What `generate` builds: items per split and operations per item."
    items: int = 20  # items per split
    short_ops: int = 3  # operations of a `short` item
    long_ops: int = 8  # operations of a `long` item
    seed: int = 0  # the data is a function of the seed alone

    def __post_init__(self):
        for f in ('items', 'short_ops', 'long_ops'): check_value('SumsDataConfig', f, getattr(self, f), int, minimum=1)
        check_value('SumsDataConfig', 'seed', self.seed, int)

    def splits(self) -> dict: return {'short': self.short_ops, 'long': self.long_ops}


@dataclass
class SumsEvalConfig(YamlConfig):
    "How items are put to a model."
    max_new_tokens: int = 128  # answer budget

    def __post_init__(self): check_value('SumsEvalConfig', 'max_new_tokens', self.max_new_tokens, int, minimum=1)


def make_item(i: int, split: str, n: int, rng: random.Random) -> dict:
    "Item `i` of a split: a start value, `n` operations and the value after each."
    start = v = rng.randint(0, 9)
    ops, values = [rng.choice('+-*') + str(rng.randint(1, 9)) for _ in range(n)], []
    for op in ops:
        k = int(op[1:])
        v = v + k if op[0] == '+' else v - k if op[0] == '-' else v * k
        values.append(v)
    return {'id': f'{split}-{i:03d}', 'split': split, 'start': start, 'ops': ops, 'values': values}


class SumsSimulated(SimulatedModel):
    "Each value right with probability 1 - rate; a slip carries into every later value (not a language model)."
    label, defaults, probabilities = 'sums-simulated', {'rate': 0.1, 'seed': 0}, ('rate',)

    def answer(self, prompt, rng) -> tuple[str, dict]:
        off, vals = 0, []
        for v in prompt.meta['values']:
            off += rng.random() < self.rate
            vals.append(v + off)
        return 'Values: ' + ', '.join(map(str, vals)), {'slips': off}


class SumsBenchmark(Benchmark):
    "Running sums: write the value after each operation."
    name, paper, tool_name = 'sums', 'Running sums (the l0kit tutorial benchmark)', 'sumsbench'
    Config, DataConfig, Simulated, default_voters = SumsEvalConfig, SumsDataConfig, SumsSimulated, 3
    metrics = {'accuracy': 'correct', 'partial': 'partial'}

    def generate(self, out, config=None, limit=None, seed=None, workers=1, progress=None) -> str:
        "Write `short.jsonl`, `long.jsonl` and a card naming the benchmark and its splits."
        cfg = SumsDataConfig.from_yaml(config) if config else SumsDataConfig()
        if seed is not None: cfg.seed = seed
        if limit is not None: cfg.items = limit
        rng, out = random.Random(cfg.seed), Path(out)
        out.mkdir(parents=True, exist_ok=True)
        for split, n in cfg.splits().items():
            (out / f'{split}.jsonl').write_text(''.join(json.dumps(make_item(i, split, n, rng)) + '\n' for i in range(cfg.items)))
        (out / 'card.json').write_text(json.dumps({'benchmark': 'sums', 'splits': list(cfg.splits()), 'seed': cfg.seed,
                                                   'config': asdict(cfg)}, indent=1))
        return f"wrote {len(cfg.splits()) * cfg.items} running-sums items to {out} (seed {cfg.seed})"

    def load(self, data_dir, split: str, limit: int | None = None) -> list:
        "The items of one split."
        f = Path(data_dir) / f'{safe_name(split, "split")}.jsonl'
        if not f.is_file(): raise DataError(f"no split {split!r} in {data_dir}; make a set with `l0kit generate --benchmark sums --out {data_dir}`")
        return [json.loads(line) for line in f.read_text().splitlines() if line.strip()][:limit]

    def build_prompt(self, item: dict, voter: int = 0, seed: int = 0) -> Prompt:
        "The chain, and how to write the answer."
        text = (f"Start with {item['start']}. Apply these operations in order: {' '.join(item['ops'])}.\n"
                "Write the value after each operation on one line, separated by commas, after 'Values:'.")
        return Prompt([{'role': 'user', 'content': text}], self.config.max_new_tokens, meta={'values': item['values']})

    def read(self, item: dict, response, **options) -> Reading:
        "The integers after the last `Values:` of the answer, step by step against the values."
        want = item['values']
        text = answer_part(response)
        got = [int(x) for x in re.findall(r'-?\d{1,18}', text.rpartition('Values:')[2])][:len(want) + 1] if 'Values:' in text else []
        err = first_difference(got, want)
        return Reading(answer=got or None, key=json.dumps(got), correct=err is None and len(got) == len(want),
                       scores={'target_steps': len(want)}, error=err, partial=prefix_credit(err, len(want)),
                       steps=[str(g) for g in got], reference=self.reference(item), note=f"{len(got)} values")

    def reference(self, item: dict) -> str: return 'Values: ' + ', '.join(map(str, item['values']))

    def layout(self, item: dict) -> ItemLayout:
        "The chain, one row per operation."
        return ItemLayout(self.build_prompt(item).messages[0]['content'], rows=[f"{op}" for op in item['ops']],
                          target=[str(v) for v in item['values']], facts={'start': item['start'], 'operations': len(item['ops'])})

    def corruptions(self, item: dict) -> list:
        "The reference with one value off by one."
        v = item['values']
        return [self.reference({**item, 'values': v[:k] + [v[k] + 1] + v[k + 1:]}) for k in range(len(v))]

    def stream_item(self, index: int, seed: int = 0, split: str | None = None, config=None) -> dict:
        "Item `index` of an endless stream (the splits in turn when none is given)."
        cfg = config if isinstance(config, SumsDataConfig) else SumsDataConfig.from_dict(config or {})
        split = split or list(cfg.splits())[index % 2]
        return make_item(index, split, cfg.splits()[split], random.Random(stream_seed(seed, index))) | {'id': f"stream-{index:08d}"}

    def splits(self, data_dir) -> list:
        "The splits the card names."
        s = read_card(data_dir).get('splits')
        if not s: raise DataError(f"{data_dir} has no running-sums card.json; make one with `l0kit generate --benchmark sums`")
        return list(s)

    def tables(self, scores: pd.DataFrame, items: dict | None = None) -> dict:
        "Accuracy and steps to the first error per chain length."
        g = scores.groupby('split', sort=False)
        steps = scores['error_step'].fillna(scores['target_steps'] + 1) - 1
        return {'Running sums': pd.DataFrame({'items': g['id'].nunique(), 'responses': g.size(), 'accuracy (%)': 100 * g['correct'].mean(),
                                              'steps to error': steps.groupby(scores['split'], sort=False).mean(),
                                              'operations': g['target_steps'].mean()})}
