"""The bridges to other tools: lm-evaluation-harness on a real local model agrees with `l0kit report`, Inspect tasks on
the mock model, RL rewards exact on every benchmark, a training stream independent of sharding, GRPO plumbing, and
Hugging Face datasets that load offline."""
import zlib
import json, os, subprocess, sys
from pathlib import Path
import pandas as pd
import numpy as np
import pytest

os.environ.setdefault('HF_DATASETS_OFFLINE', '1'); os.environ.setdefault('HF_HUB_OFFLINE', '1')
from l0kit.protocol.benchmark import get_benchmark
from l0kit.backends.chat_template import render_chat
from l0kit.runs.runner import RunConfig

SPLITS = {'l0': 'short', 'procbench': 'short', 'sx': 'easy', 'core': 'test'}
CHATML = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
          "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")

@pytest.fixture(scope='session')
def data(tmp_path_factory):
    "A tiny generated set of every benchmark."
    root = tmp_path_factory.mktemp('data')
    for b in SPLITS:
        kw = {'preset': 'small'} if b == 'l0' else {}
        get_benchmark(b).generate(root / b, limit=2, **kw)
    return root

@pytest.fixture(scope='session')
def tiny_model(tmp_path_factory, data):
    "A randomly initialised 2-layer Llama with a byte-level BPE tokenizer trained on the data's prompts (plumbing only)."
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers, decoders, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast
    d = tmp_path_factory.mktemp('tiny')
    bench = get_benchmark('l0')
    texts = [bench.build_prompt(it, 0).messages[0]['content'] for it in bench.load(data / 'l0', 'short')]
    tok = Tokenizer(models.BPE()); tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False); tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(texts, trainers.BpeTrainer(vocab_size=400, special_tokens=['<|endoftext|>', '<|im_start|>', '<|im_end|>'],
                                                        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    t = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token='<|endoftext|>', eos_token='<|im_end|>', pad_token='<|endoftext|>')
    t.chat_template = CHATML
    t.save_pretrained(d)
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=len(t), hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                      num_key_value_heads=4, max_position_embeddings=8192, eos_token_id=t.eos_token_id, bos_token_id=t.bos_token_id,
                      pad_token_id=t.pad_token_id, tie_word_embeddings=True)
    LlamaForCausalLM(cfg).save_pretrained(d)
    return d

def test_lm_eval_on_a_real_local_model_agrees_with_the_report(tmp_path, data, tiny_model):
    "`lm_eval` (the command) on a tiny Hugging Face model: prompts are the kit's, per-sample scores follow the spec's rules."
    from transformers import AutoTokenizer
    import argparse
    from l0kit.cli.export import register_cli
    ap = argparse.ArgumentParser(); register_cli(ap.add_subparsers(dest='command'))
    out = tmp_path / 'tasks'
    args = ap.parse_args(['export', 'lm-eval', '--data', str(data / 'l0'), '--split', 'short', '--out', str(out), '--voters', '2',
                          '--limit', '1', '--set', 'shots=1', '--set', 'budget_margin=8', '--tokenizer', str(tiny_model)])
    assert args.func(args) == 0
    lm_eval = Path(sys.executable).with_name('lm_eval')
    r = subprocess.run([str(lm_eval), '--model', 'hf', '--model_args', f'pretrained={tiny_model},dtype=float32', '--include_path', str(out),
                    '--tasks', 'l0bench_short', '--apply_chat_template', '--log_samples', '--output_path', str(tmp_path / 'res'),
                    '--device', 'cpu', '--batch_size', '4'], capture_output=True, text=True, env=os.environ | {'TOKENIZERS_PARALLELISM': 'false'})
    assert r.returncode == 0, r.stderr[-3000:]
    samples = [json.loads(l) for f in (tmp_path / 'res').rglob('samples_l0bench_short*.jsonl') for l in f.read_text().splitlines()]
    assert len(samples) == 2
    bench, tok = get_benchmark('l0'), AutoTokenizer.from_pretrained(tiny_model)
    items = {it['id']: it for it in bench.load(data / 'l0', 'short')}
    bench.config.shots = 1
    for s in samples:  # the context lm-eval sent is the kit's chat rendering of voter v's prompt
        assert s['arguments']['gen_args_0']['arg_0'] == render_chat(bench.build_prompt(items[s['doc']['id']], s['doc']['voter'], 0), tok)
    # per-sample scores against the spec's rules transcribed plainly (tests/test_metrics.py), not the kit's scorer
    from test_metrics import reference_score
    got = {(s['doc']['id'], s['doc']['voter']): (s['trace_accuracy'], s['steps_to_error']) for s in samples}
    want = {(s['doc']['id'], s['doc']['voter']): reference_score(s['filtered_resps'][0], items[s['doc']['id']]['target']) for s in samples}
    assert got == {k: (float(c), float(n)) for k, (c, n) in want.items()}

@pytest.mark.parametrize('bench_name', ['l0', 'core'])
def test_lm_eval_votes_and_tables_equal_the_report(tmp_path, data, bench_name):
    "lm-eval's pipeline on answers with slips: per-sample metrics and aggregates (majority vote, pass@k, CoRE's I..Cons.) by hand."
    from lm_eval import simple_evaluate
    from lm_eval.api.model import LM
    from lm_eval.tasks import TaskManager
    from l0kit.bridges.lmeval import export_lmeval
    split, voters = SPLITS[bench_name], 3 if bench_name == 'l0' else 1
    y = export_lmeval(data / bench_name, split, tmp_path / 'tasks', bench_name, RunConfig(voters=voters))
    def answer(doc):  # about every third document slips (a hash that does not change with PYTHONHASHSEED)
        ref = doc['reference']
        return ref if zlib.crc32(f"{doc['id']}/{doc['voter']}".encode()) % 3 else ref.replace(':', ':9', 1).replace('== ', '== -1 + ', 1).replace('Answer: ', 'Answer: x', 1)
    class Answers(LM):
        def generate_until(self, requests): return [answer(r.doc) for r in requests]
        def loglikelihood(self, requests): raise NotImplementedError
        def loglikelihood_rolling(self, requests): raise NotImplementedError
    res = simple_evaluate(Answers(), tasks=[y.stem], task_manager=TaskManager(include_path=str(tmp_path / 'tasks'), include_defaults=False), log_samples=True)
    samples, results = res['samples'][y.stem], res['results'][y.stem]
    # the expected values, from which answers slipped (known by construction) and the papers' definitions, in plain Python
    right = {(s['doc']['id'], s['doc']['voter']): s['resps'][0][0] == s['doc']['reference'] for s in samples}
    assert 0 < sum(right.values()) < len(right) and len(right) == len(samples)
    items = {it['id']: it for it in get_benchmark(bench_name).load(data / bench_name, split)}
    metric = {'l0': 'trace_accuracy', 'core': 'correct'}[bench_name]
    assert [s for s in samples if s[metric] != float(right[(s['doc']['id'], s['doc']['voter'])])] == []
    mean = lambda xs: sum(xs) / len(xs)
    if bench_name == 'l0':
        # a slip writes 9 into the first stored value: the lines before the first line with a ':' are right
        slip_at = {i: next(k for k, line in enumerate(it['target']) if ':' in line) for i, it in items.items()}
        for s in samples:
            i, v = s['doc']['id'], s['doc']['voter']
            assert s['steps_to_error'] == (len(items[i]['target']) if right[(i, v)] else slip_at[i]), (i, v)
        ok = {i: sum(right[(i, v)] for v in range(voters)) for i in items}   # voters whose answer is the reference
        maj = {i: ok[i] > voters / 2 for i in items}   # the slipped answers are all the same text: 2 of 3 win the vote
        assert results[f'trace_accuracy_majvote@{voters},none'] == pytest.approx(mean([float(maj[i]) for i in items]))
        assert results[f'steps_to_error_majvote@{voters},none'] == pytest.approx(
            mean([len(items[i]['target']) if maj[i] else slip_at[i] for i in items]))
        assert results[f'pass@{voters},none'] == pytest.approx(mean([float(ok[i] > 0) for i in items]))   # n = k: any right
    else:   # CoRE, section 4: I, I_s (implementations), W, W_s (probes), RCS = I x W_s, Cons. = 1 - mean (I - W_s)^2
        impls, probes = {}, {}
        for i, it in items.items():
            if it['kind'] == 'io': impls.setdefault(it['problem_id'], {}).setdefault(it['impl_id'], []).append(right[(i, 0)])
            else: probes.setdefault(it['problem_id'], []).append(right[(i, 0)])
        I = {p: float(all(all(t) for t in v.values())) for p, v in impls.items()}
        I_s = {p: mean([float(all(t)) for t in v.values()]) for p, v in impls.items()}
        W_s = {p: mean([float(x) for x in v]) for p, v in probes.items()}
        W = {p: float(all(v)) for p, v in probes.items()}
        both = [p for p in I if p in W_s]
        want = {'I': mean(list(I.values())), 'I_s': mean(list(I_s.values())), 'W': mean(list(W.values())),
                'W_s': mean(list(W_s.values())), 'RCS': mean([I[p] * W_s[p] for p in both]),
                'Cons.': 1 - mean([(I[p] - W_s[p]) ** 2 for p in both])}
        assert {m: results[f'{m},none'] for m in want} == pytest.approx(want)
    # lm_eval --limit keeps the first documents (item by item): every number then covers the same complete items, no crash
    lim = simple_evaluate(Answers(), tasks=[y.stem], task_manager=TaskManager(include_path=str(tmp_path / 'tasks'), include_defaults=False), limit=voters + 1)
    first = [s for s in samples if s['doc']['id'] == samples[0]['doc']['id']]
    assert lim['results'][y.stem][f'{metric},none'] == pytest.approx(np.mean([s[metric] for s in first]))

INSPECT_RUN = """
import json, sys
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from l0kit.protocol.benchmark import get_benchmark
from l0kit.bridges.answers import reference_answer
data, logs = sys.argv[1], sys.argv[2]
bench = get_benchmark('procbench')
items = bench.load(data, 'short', limit=6)
by_prompt = {bench.build_prompt(it, 0).messages[0]['content']: it for it in items}
def answer(messages, *_):
    it = by_prompt[messages[-1].text]
    text = reference_answer(bench, it) if it is not items[0] else json.dumps({'intermediate': it['label']['intermediate'], 'final': None})
    return ModelOutput.from_content('mockllm/model', text).model_copy(update={'usage': ModelUsage(input_tokens=5, output_tokens=5, total_tokens=10)})
log = inspect_eval('l0kit/procbench', task_args={'data': data, 'split': 'short', 'limit': 6},
                   model=get_model('mockllm/model', custom_outputs=answer), log_dir=logs, display='none')[0]
print(json.dumps({'location': log.location, 'first': items[0]['id']}))
"""

def test_inspect_task_by_name_with_the_mock_model(tmp_path, data):
    "`l0kit/procbench` resolves through the inspect_ai entry point; scores carry the first error; the log reads back."
    from inspect_ai.log import read_eval_log
    ep = tmp_path / 'ep' / 'l0kit_inspect_entry-0.dist-info'; ep.mkdir(parents=True)  # what pyproject's entry point installs
    (ep / 'METADATA').write_text('Metadata-Version: 2.1\nName: l0kit-inspect-entry\nVersion: 0\n')
    (ep / 'entry_points.txt').write_text('[inspect_ai]\nl0kit = l0kit.bridges.inspect\n')
    # run outside the checkout: there Inspect names the kit's tasks `l0kit/...` as for an installed package
    r = subprocess.run([sys.executable, '-c', INSPECT_RUN, str(data / 'procbench'), str(tmp_path / 'logs')], cwd=tmp_path, capture_output=True,
                       text=True, env=os.environ | {'PYTHONPATH': str(tmp_path / 'ep')})
    assert r.returncode == 0, r.stderr[-3000:]
    got = json.loads(r.stdout.strip().splitlines()[-1])
    log = read_eval_log(got['location'])
    assert log.status == 'success' and log.eval.task == 'l0kit/procbench' and len(log.samples) == 6
    sc = {s.id: s.scores['kit_scorer'] for s in log.samples}
    first = sc.pop(got['first'])
    assert first.value['sm'] == 0.0 and first.metadata['first_error_type'] == 'too few states'  # every intermediate state, no final: one state short
    assert all(v.value['sm'] == 1.0 and v.metadata['first_error_step'] is None for v in sc.values())
    assert {s.name: s.metrics['mean'].value for s in log.results.scores}['sm'] == pytest.approx(5 / 6)

@pytest.mark.parametrize('bench_name', list(SPLITS))
def test_rl_rewards_are_exact(tmp_path, data, bench_name):
    "The ground truth scores 1.0 on every row; every single-value corruption scores less, in both modes."
    from l0kit.bridges.rl import compute_score, corruptions, export_rl
    bench = get_benchmark(bench_name)
    df = pd.read_parquet(export_rl(bench_name, data / bench_name, SPLITS[bench_name], tmp_path / 'rl.parquet'))
    assert list(df.columns) == ['data_source', 'prompt', 'ability', 'reward_model', 'extra_info'] and len(df)
    for r in df.itertuples():
        gt, extra = r.reward_model['ground_truth'], r.extra_info
        assert compute_score(r.data_source, gt, gt, extra) == 1.0 == compute_score(r.data_source, gt, gt, extra, mode='partial')
        bad = corruptions(bench, json.loads(extra['item']))
        assert bad and all(compute_score(r.data_source, b, gt, extra) == 0.0 and compute_score(r.data_source, b, gt, extra, mode='partial') < 1 for b in bad)

@pytest.mark.parametrize('bench_name', ['l0', 'procbench', 'sx', 'core'])
def test_training_stream_is_the_same_however_sharded(bench_name):
    from l0kit.bridges.rl import TrainingStream
    split = {'l0': 'short', 'procbench': None, 'sx': 'easy', 'core': None}[bench_name]
    config = {'procbench': {'max_length': 5}}.get(bench_name)
    key = lambda rows: sorted(json.dumps(r, sort_keys=True, default=str) for r in rows)
    with TrainingStream(bench_name, config, seed=3, split=split) as s: whole = s.rows(0, 4)
    parts = []
    for k in (1, 2):
        with TrainingStream(bench_name, config, seed=3, split=split, shard=f'{k}/2') as s: parts += s.rows(0, 4)
    assert key(parts) == key(whole) and len({r['extra_info']['id'] for r in whole}) == 4

@pytest.mark.parametrize('bench_name', list(SPLITS))
def test_hf_export_loads_offline(tmp_path, data, bench_name):
    import datasets, yaml
    from l0kit.bridges.hf_datasets import export_hf
    bench = get_benchmark(bench_name)
    card = export_hf(data / bench_name, tmp_path / 'hf', bench_name).read_text()
    front = yaml.safe_load(card.split('---')[1])
    assert front['l0kit']['benchmark'] == bench_name and 'seed' in front['l0kit'] and front['license'] and '@article' in card
    ds = datasets.load_dataset(str(tmp_path / 'hf'))
    for split in bench.splits(data / bench_name):
        items = bench.load(data / bench_name, split)
        assert [r['id'] for r in ds[split]] == [it['id'] for it in items]

def test_grpo_two_steps_with_trl(tmp_path, data, tiny_model):
    "Two GRPO steps of TRL on the tiny model with the kit's rewards on exported rows: logged as returned, and a right answer scores 1."
    import datasets
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer
    from l0kit.bridges.rl import export_rl, reward_function
    f = export_rl('procbench', data / 'procbench', 'short', tmp_path / 'rl.parquet', limit=4)
    ds = datasets.load_dataset('parquet', data_files=str(f), split='train')
    args = GRPOConfig(output_dir=str(tmp_path / 'out'), max_steps=2, per_device_train_batch_size=2, num_generations=2,
                      max_completion_length=8, report_to='none', use_cpu=True, logging_steps=1, save_strategy='no')
    calls = {}
    def recorded(fn):   # the kit's reward function, its calls kept to compare with what TRL logged
        def call(*a, **k):
            out = fn(*a, **k); calls.setdefault(fn.__name__, []).append((a, k, list(out))); return out
        call.__name__ = fn.__name__
        return call
    tr = GRPOTrainer(model=AutoModelForCausalLM.from_pretrained(tiny_model), processing_class=AutoTokenizer.from_pretrained(tiny_model),
                     reward_funcs=[recorded(reward_function('exact')), recorded(reward_function('partial'))], args=args, train_dataset=ds)
    tr.train()
    logged = [h for h in tr.state.log_history if 'rewards/l0kit_partial/mean' in h]
    assert tr.state.global_step == 2 and len(logged) == 2
    for name in ('l0kit_exact', 'l0kit_partial'):   # what TRL logged is the mean of what the kit's function returned, per step
        assert [h[f'rewards/{name}/mean'] for h in logged] == pytest.approx([sum(r) / len(r) for *_, r in calls[name]])
    # the rows reached the reward with the exported fields: given the reference answers instead of the tiny model's
    # 8 tokens, the same call (same row fields) rewards every completion 1
    from l0kit.bridges.answers import reference_answer
    bench = get_benchmark('procbench')
    items = {it['id']: it for it in bench.load(data / 'procbench', 'short')}
    for name in ('l0kit_exact', 'l0kit_partial'):
        a, k, _ = calls[name][-1]
        got = k['completions'] if 'completions' in k else a[-1]
        ids = [e['id'] for e in k['extra_info']]
        refs = [reference_answer(bench, items[i]) for i in ids]
        refs = [[{'role': 'assistant', 'content': r}] if isinstance(c, list) else r for c, r in zip(got, refs)]
        fn = reward_function(name.removeprefix('l0kit_'))
        kw = {**k, 'completions': refs} if 'completions' in k else k
        assert list(fn(*(a[:-1] + (refs,)) if 'completions' not in k else a, **kw)) == [1.0] * len(refs), name

def test_lm_eval_task_folder_runs_after_being_moved(tmp_path, data, monkeypatch):
    "An exported task folder names no absolute path; moved elsewhere and run from a third folder, lm-eval scores it (hand count)."
    import shutil
    from lm_eval import simple_evaluate
    from lm_eval.api.model import LM
    from lm_eval.tasks import TaskManager
    from l0kit.bridges.lmeval import export_lmeval
    bench = get_benchmark('l0')
    items = bench.load(data / 'l0', 'short')
    export_lmeval(data / 'l0', 'short', tmp_path / 'made' / 'tasks', run=RunConfig(voters=3))
    for f in (tmp_path / 'made' / 'tasks').iterdir():
        text = f.read_text()
        assert str(tmp_path) not in text and str(data) not in text and str(Path.cwd()) not in text, f.name
    moved = tmp_path / 'elsewhere' / 'shared'
    shutil.move(str(tmp_path / 'made' / 'tasks'), str(moved)); shutil.rmtree(tmp_path / 'made')
    (tmp_path / 'third').mkdir(); monkeypatch.chdir(tmp_path / 'third')
    slip = (items[1]['id'], 0)
    class Answers(LM):
        "The reference answer, except a slip for voter 0 of the second item."
        def generate_until(self, requests): return ['L2,oops' if (r.doc['id'], r.doc['voter']) == slip else r.doc['reference'] for r in requests]
        def loglikelihood(self, requests): raise NotImplementedError
        def loglikelihood_rolling(self, requests): raise NotImplementedError
    res = simple_evaluate(Answers(), tasks=['l0bench_short'], task_manager=TaskManager(include_path=str(moved), include_defaults=False))
    r = res['results']['l0bench_short']
    assert len(items) == 2 and r['trace_accuracy,none'] == pytest.approx(5 / 6)   # 6 documents (2 items x 3 voters), one slip
    assert r['trace_accuracy_majvote@3,none'] == 1.0   # two of the second item's three voters are right
