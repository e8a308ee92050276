"""`l0kit train` at test size: the quick preset's data and code with a tiny model and a few steps (IN_TEST), deterministic
from (config, seed); the saved folder loads through the `hf:` backend; `l0kit eval` runs on it on a ladder split through
the command line; the ladder preset has growing step ranges. Accuracy goals are measured by commands, not asserted here."""
import json, os, subprocess, sys
from pathlib import Path
import pytest

pytest.importorskip('transformers')
from l0kit.l0.dataset import get_preset
from l0kit.organism.data import get_train_preset, prompt_of, make_tokenizer, encode_example, training_examples
from l0kit.organism.train import train, load_card

def l0kit_cli(*args, env=None):
    return subprocess.run([sys.executable, '-c', 'import sys; from l0kit.cli.main import main; sys.exit(main())', *args],
                          capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=600)

@pytest.fixture(scope='module')
def organism(tmp_path_factory):
    "The quick preset at test size, trained once through the CLI (IN_TEST shrinks model and steps)."
    out = tmp_path_factory.mktemp('org') / 'quick'
    r = l0kit_cli('train', '--preset', 'quick', '--out', str(out), '--quiet', env={'IN_TEST': '1'})
    assert r.returncode == 0, r.stderr
    assert 'trained by the kit on its own traces' in r.stdout
    return out

def test_quick_preset_is_shrunk_only_under_in_test(monkeypatch):
    monkeypatch.delenv('IN_TEST', raising=False)
    real = get_train_preset('quick')
    monkeypatch.setenv('IN_TEST', '1')
    small = get_train_preset('quick')
    assert small.gen == real.gen and small.max_target_steps == real.max_target_steps   # the same data
    assert small.steps < real.steps and small.hidden_size < real.hidden_size and small.name != real.name

def test_training_is_deterministic_from_config_and_seed(organism, tmp_path):
    import torch
    from safetensors.torch import load_file
    cfg = get_train_preset('quick', small=True)
    again = train(cfg, tmp_path / 'again', progress=False)
    first = load_card(organism)
    assert again['loss_curve'] == first['loss_curve'] and again['tokens'] == first['tokens']
    w1, w2 = load_file(organism / 'model.safetensors'), load_file(tmp_path / 'again' / 'model.safetensors')
    assert w1.keys() == w2.keys() and all(torch.equal(w1[k], w2[k]) for k in w1)
    other = train(cfg.__class__.from_dict({**cfg.to_dict(), 'seed': 1}), tmp_path / 'other', progress=False)
    assert other['loss_curve'] != first['loss_curve']   # the seed matters

def test_card_records_data_steps_tokens_loss_time_machine(organism):
    card = load_card(organism)
    assert card['steps'] == get_train_preset('quick', small=True).steps
    assert card['tokens'] > card['trace_tokens'] > 0 and card['seconds'] > 0 and card['machine']['cores'] >= 1
    assert card['loss_curve'][-1][1] < card['loss_curve'][0][1]  # a few steps already lower the loss from ln(vocab)
    readme = (organism / 'README.md').read_text()
    assert f"a {card['parameters']:,}-parameter model trained by the kit on its own traces" in readme

def test_the_saved_tokenizer_is_the_one_it_trained_with(organism):
    "The presets cut words with the space before them: the folder's tokenizer (what `hf:` loads) cuts so, and the card says so."
    from transformers import AutoTokenizer
    tok = AutoTokenizer.from_pretrained(organism)
    cut = tok.convert_ids_to_tokens(tok('Execute the program below.\n```\nL2,x:[1,0]', add_special_tokens=False)['input_ids'])
    assert cut == ['Execute', ' the', ' program', ' below', '.', '\n', '```', '\n', 'L2', ',', 'x', ':', '[', '1', ',', '0', ']']
    assert load_card(organism)['config']['tokenizer'] == 'words'

def test_the_convolutions_reach_as_far_as_the_config_says(organism):
    "The presets' convolutions read eight tokens (LFM2's own read three): the saved model, and its card, are of that width."
    assert load_card(organism)['config']['conv_kernel'] == 8
    assert json.loads((organism / 'config.json').read_text())['conv_L_cache'] == 8
    assert 'convolutions of 8 tokens' in (organism / 'README.md').read_text()

@pytest.mark.parametrize('kind', ['pieces', 'words', 'phrases', 'numbers'])
def test_loss_is_on_the_traces_only(kind):
    "What is learned is the test trace and the demonstrations' traces, as the tracer writes them (run here apart from the encoder); the rest of the prompt is not: with every tokenizer."
    from l0kit.l0.tracer import trace_program
    cfg = get_train_preset('quick', small=True)
    tok = make_tokenizer(kind=kind)
    item = next(training_examples(cfg))
    ids, labels = encode_example(item, tok, shots=4, voter=5, demo_loss=True)
    learned = [l for l in tok.decode([t for t in labels if t != -100], skip_special_tokens=True).split('\n') if l]
    traces = [trace_program(item['program'], d) for d in item['demonstrations']] + [item['target']]
    assert sorted(learned) == sorted(l for t in traces for l in t)
    assert labels[-1] == tok.eos_token_id and ids[-1] == tok.eos_token_id          # the end is learned: the model stops
    first = labels.index(next(t for t in labels if t != -100))
    assert tok.decode(ids[:first]).endswith('Output:\n```\n')                      # nothing before the first demonstration's trace
    ids, labels = encode_example(item, tok, shots=4, voter=5, demo_loss=False)
    start = next(i for i, t in enumerate(labels) if t != -100)
    assert tok.decode(ids[:start]).endswith('<|assistant|>\n') and tok.decode(ids[start:], skip_special_tokens=True) == '\n'.join(item['target']) + '\n'

def test_lfm2_organism_writes_the_same_alone_and_in_a_left_padded_batch(organism):
    "The quick preset's LFM2 convolutions must not read the left padding of a batch: each prompt decodes as it does alone."
    import itertools
    from l0kit.protocol.models import load_model, GenerationParams
    assert json.loads((organism / 'config.json').read_text())['model_type'] == 'lfm2'
    prompts = [prompt_of(it) for it in itertools.islice(training_examples(get_train_preset('quick', small=True)), 4)]
    params = GenerationParams(max_new_tokens=24)
    with load_model(f'hf:{organism},threads=2,batch_size=4') as m: batched = [c[0] for c in m.generate(prompts, params)]
    with load_model(f'hf:{organism},threads=2,batch_size=1') as m: alone = [m.generate([p], params)[0][0] for p in prompts]
    assert len({c.prompt_tokens for c in alone}) > 1          # different lengths: the batch is padded
    assert [c.text for c in batched] == [c.text for c in alone] and all(c.completion_tokens for c in alone)

def test_refuses_to_overwrite_and_says_so_in_one_line(organism):
    r = l0kit_cli('train', '--preset', 'quick', '--out', str(organism), '--quiet', env={'IN_TEST': '1'})
    assert r.returncode == 2 and 'already holds a trained model' in r.stderr and len(r.stderr.strip().splitlines()) == 1

def test_loads_through_the_hf_backend(organism):
    from l0kit.protocol.models import load_model
    item = next(training_examples(get_train_preset('quick', small=True)))
    with load_model(f'hf:{organism},threads=2') as m:
        assert m.kind == 'chat'
        out = m.generate([prompt_of(item)])[0][0]
    assert out.finish_reason in ('stop', 'length') and out.prompt_tokens > 100

def test_ladder_preset_grows_in_steps_and_keeps_the_base_short_range():
    ladder = get_preset('ladder')
    rungs = [s for s in ladder.splits if s.name != 'short']
    assert all(a.max_steps < b.min_steps for a, b in zip(rungs, rungs[1:]))
    short = next(s for s in ladder.splits if s.name == 'short')
    base_short = next(s for s in get_preset('base').splits if s.name == 'short')
    assert (short.min_steps, short.max_steps) == (base_short.min_steps, base_short.max_steps)
    assert ladder.gen == get_train_preset('quick').gen   # evaluated on the programs it was trained on

def test_eval_on_a_ladder_split_through_the_cli(organism, tmp_path):
    data = tmp_path / 'ladder'
    r = l0kit_cli('generate', '--preset', 'ladder', '--limit', '3', '--out', str(data), '--quiet')
    assert r.returncode == 0, r.stderr
    r = l0kit_cli('eval', '--model', f'hf:{organism},threads=2', '--data', str(data), '--split', 'steps_01_04',
                  '--voters', '1', '--out', str(tmp_path / 'run'), '--no-progress')
    assert r.returncode == 0, r.stderr
    rows = [json.loads(l) for l in (tmp_path / 'run' / 'responses.jsonl').read_text().splitlines()]
    assert len(rows) == 3
    r = l0kit_cli('report', str(tmp_path / 'run'))
    assert r.returncode == 0, r.stderr

def test_a_model_trained_again_in_place_does_not_resume_the_old_ones_run(tmp_path):
    "Retrained into the same folder (same spec, other weights), the organism refuses the old weights' run folder instead of mixing answers."
    data, org, run = tmp_path / 'ladder', tmp_path / 'org', tmp_path / 'run'
    assert l0kit_cli('generate', '--preset', 'ladder', '--limit', '2', '--out', str(data), '--quiet').returncode == 0
    ev = lambda limit: l0kit_cli('eval', '--model', f'hf:{org},threads=2', '--data', str(data), '--split', 'steps_01_04',
                                 '--voters', '1', '--limit', str(limit), '--out', str(run), '--no-progress')
    assert l0kit_cli('train', '--preset', 'quick', '--seed', '1', '--out', str(org), '--quiet', env={'IN_TEST': '1'}).returncode == 0
    r = ev(1); assert r.returncode == 0, r.stderr
    before = (run / 'responses.jsonl').read_bytes()
    assert json.loads((run / 'run.json').read_text())['model_info']['weights']
    r = ev(2); assert r.returncode == 0, r.stderr                      # the same weights: resumed, one more response
    assert len((run / 'responses.jsonl').read_text().splitlines()) == 2
    before = (run / 'responses.jsonl').read_bytes()
    r = l0kit_cli('train', '--preset', 'quick', '--seed', '2', '--out', str(org), '--force', '--quiet', env={'IN_TEST': '1'})
    assert r.returncode == 0, r.stderr
    r = ev(2)
    assert r.returncode != 0 and 'model weights' in r.stderr and 'has changed' in r.stderr, r.stderr
    assert (run / 'responses.jsonl').read_bytes() == before                 # nothing of the old run lost or mixed

@pytest.mark.serial  # two training workers: at most one per CPU, so the whole machine
def test_two_workers_from_the_cli_fail_in_one_line_and_leave_no_process(tmp_path):
    "A worker's ConfigError (an example longer than the context) reaches the command line as one line, exit 2; no worker is left running."
    cfg = get_train_preset('quick', small=True)
    (tmp_path / 'cfg.yaml').write_text(json.dumps({**cfg.to_dict(), 'workers': 2, 'context': 64}))  # JSON is YAML
    r = l0kit_cli('train', '--config', str(tmp_path / 'cfg.yaml'), '--out', str(tmp_path / 'org'), '--quiet', env={'TMPDIR': str(tmp_path)})
    assert r.returncode == 2 and 'more than the context 64' in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / 'org').exists()
    ps = subprocess.run(['ps', '-ww', '-eo', 'args'], capture_output=True, text=True).stdout.splitlines()
    assert not [l for l in ps if '_worker_main' in l and str(tmp_path) in l]   # the workers' rendezvous folder is under TMPDIR

@pytest.mark.serial  # two training workers: at most one per CPU, so the whole machine
def test_a_killed_worker_stops_the_run_with_an_error(tmp_path):
    "A worker that dies (killed here) ends the run with an error naming the exit codes, and the other worker is stopped, not left waiting."
    import signal, time
    cfg = get_train_preset('quick', small=True)
    (tmp_path / 'cfg.yaml').write_text(json.dumps({**cfg.to_dict(), 'workers': 2, 'steps': 100000}))
    p = subprocess.Popen([sys.executable, '-c', 'import sys; from l0kit.cli.main import main; sys.exit(main())', 'train', '--config',
                          str(tmp_path / 'cfg.yaml'), '--out', str(tmp_path / 'org'), '--quiet'], stderr=subprocess.PIPE, text=True,
                         env={**os.environ, 'TMPDIR': str(tmp_path)})
    def workers():  # this run's: their rendezvous folder is under TMPDIR
        return [l.split(None, 1) for l in subprocess.run(['ps', '-ww', '-eo', 'pid,args'], capture_output=True, text=True).stdout.splitlines()
                if '_worker_main' in l and str(tmp_path) in l]
    deadline = time.time() + 120
    while len(workers()) < 2 and time.time() < deadline: time.sleep(0.5)
    assert len(workers()) == 2
    time.sleep(5)
    pid = int(next(w for w in workers() if w[1].rstrip().endswith(' 1'))[0])
    os.kill(pid, signal.SIGKILL)
    err = p.communicate(timeout=120)[1]
    assert p.returncode != 0 and 'a training worker failed' in err, err
    assert not workers()

@pytest.mark.serial  # two training workers: at most one per CPU, so the whole machine
def test_a_killed_caller_leaves_no_worker(tmp_path):
    "`l0kit train` killed outright (SIGKILL: no chance to stop its workers) leaves no worker training on for nobody."
    import signal, time
    cfg = get_train_preset('quick', small=True)
    (tmp_path / 'cfg.yaml').write_text(json.dumps({**cfg.to_dict(), 'workers': 2, 'steps': 100000}))
    p = subprocess.Popen([sys.executable, '-c', 'import sys; from l0kit.cli.main import main; sys.exit(main())', 'train', '--config',
                          str(tmp_path / 'cfg.yaml'), '--out', str(tmp_path / 'org'), '--quiet'], stderr=subprocess.DEVNULL,
                         env={**os.environ, 'TMPDIR': str(tmp_path)})
    workers = lambda: [l for l in subprocess.run(['ps', '-ww', '-eo', 'pid,args'], capture_output=True, text=True).stdout.splitlines()
                       if '_worker_main' in l and str(tmp_path) in l]
    deadline = time.time() + 120
    while len(workers()) < 2 and time.time() < deadline: time.sleep(0.5)
    assert len(workers()) == 2
    p.send_signal(signal.SIGKILL); p.wait()
    deadline = time.time() + 30
    while workers() and time.time() < deadline: time.sleep(0.5)
    assert not workers()

def test_the_card_records_what_was_trained_on_and_what_was_skipped_for_length(tmp_path):
    "At max_example_tokens=700 the stream's items 1, 2, 4, 5, 6, 8, 9, 10 are skipped (1,295, 2,095, 711, 814, 858, 805, 821 and 788 tokens), 0, 3, 7, 11 trained on."
    import dataclasses
    cfg = dataclasses.replace(get_train_preset('quick', small=True), max_example_tokens=700, steps=1, warmup=1, tokenizer='pieces')  # the lengths below: every space a token
    card = train(cfg, tmp_path / 'org', progress=False)
    r = card['trained_on']
    assert r['target_steps'] == {'3': 2, '5': 1, '6': 1}                         # items 0, 3, 7, 11: 6, 5, 3 and 3 steps
    assert r['example_tokens'] == {'512': 1, '640': 3}                           # 666, 672, 619 and 642 tokens
    assert (r['longest_target_steps'], r['longest_example_tokens']) == (6, 672)
    assert r['skipped_for_length'] == 8
    assert r['skipped_target_steps'] == {'3': 1, '4': 1, '5': 2, '6': 1, '9': 1, '20': 1, '40': 1}
    readme = (tmp_path / 'org' / 'README.md').read_text()
    assert '| 1-4 | 2 | 2 |' in readme and '| 17-32 | 0 | 1 |' in readme and '| 33-64 | 0 | 1 |' in readme   # by ladder rung
    assert 'the longest trace trained on has 6 steps' in readme

def test_trained_programs_are_those_fed_after_the_length_filter():
    "The overlap key: the program texts of the items training fed (0, 3, 7, 11 at 700 tokens), not the first items of the unfiltered stream."
    import dataclasses, itertools
    from l0kit.organism.data import trained_items, trained_programs
    cfg = dataclasses.replace(get_train_preset('quick', small=True), max_example_tokens=700, tokenizer='pieces')  # the lengths of the test above
    stream = {it['index']: it['program'] for it in itertools.islice(training_examples(cfg), 12)}
    assert [it['index'] for it in trained_items(cfg, 4)] == [0, 3, 7, 11]
    assert trained_programs(cfg, 4) == {stream[i] for i in (0, 3, 7, 11)}

def test_a_card_without_the_record_still_loads_and_says_not_recorded(organism, tmp_path):
    from l0kit.organism.train import model_card
    old = {k: v for k, v in load_card(organism).items() if k != 'trained_on'}   # a card written before the kit recorded it
    (tmp_path / 'train_card.json').write_text(json.dumps(old))
    assert load_card(tmp_path)['name'] == old['name']
    assert 'not recorded' in model_card(old) and '## What it trained on' in model_card(old)

PERF = Path(__file__).resolve().parents[1] / 'perf'

def _tiny(*extra) -> list[str]:
    "`--set` arguments of a model small enough for a test, over the preset."
    return [a for kv in ('hidden_size=32', 'layers=2', 'heads=2', 'intermediate_size=64', *extra) for a in ('--set', kv)]

def _perf(script: str, *args):
    return subprocess.run([sys.executable, str(PERF / script), *args], capture_output=True, text=True, timeout=600)

def test_train_speed_with_no_prompts_times_training_only():
    "`perf/train_speed.py --prompts 0` prints the training line and no evaluation (it divided by the zero prompts)."
    r = _perf('train_speed.py', '--preset', 'quick', '--steps', '2', '--prompts', '0', *_tiny('batch_size=2', 'micro_batch=2'))
    assert r.returncode == 0, r.stderr[-2000:]
    assert 'training (quick: ' in r.stdout and 'evaluation (' not in r.stdout and 'load average before' in r.stdout

def test_train_windows_times_each_window_of_the_loop():
    "`perf/train_windows.py` prints one line a window of steps (time, tokens, memory) for the config as set over the preset."
    tiny = _tiny('batch_size=2', 'micro_batch=2', 'pad_to=1', 'dtype=float32')
    r = _perf('train_windows.py', '--preset', 'quick', '--steps', '4', '--window', '2', *tiny)
    assert r.returncode == 0, r.stderr[-2000:]
    assert 'float32, pad_to 1, batch 2 in passes of 2' in r.stdout
    assert [l.split(':')[0] for l in r.stdout.splitlines() if l.startswith('steps ')] == ['steps 0-2', 'steps 2-4']
    r = _perf('train_windows.py', '--preset', 'quick', '--steps', '2', *tiny, '--set', 'workers=2')
    assert r.returncode == 2 and 'workers must be 1, not 2' in r.stderr and 'steps 0-' not in r.stdout  # one process: refused before any step

def test_train_packing_packs_rows_whose_examples_see_only_themselves():
    "`perf/train_packing.py`: with Llama (no convolutions) the packed rows' loss is the padded passes' loss to rounding, so the speed it compares is of the same sums."
    r = _perf('train_packing.py', '--preset', 'quick', '--steps', '2', '--repeats', '1',
              *_tiny('batch_size=4', 'micro_batch=2', 'arch=llama', 'dtype=float32'))
    assert r.returncode == 0, r.stderr[-2000:]
    losses = {l.split(': ')[1].split()[0]: float(l.split('mean loss ')[1].rstrip(')')) for l in r.stdout.splitlines() if 'mean loss' in l}
    assert set(losses) == {'padded', 'packed'} and abs(losses['packed'] - losses['padded']) < 1e-5, r.stdout
    assert 'packed rows of 2048 read' in r.stdout and 'packed / padded time:' in r.stdout

def test_first_fit_fills_rows_in_order_of_length(monkeypatch):
    import importlib
    monkeypatch.syspath_prepend(str(PERF))   # the script imports train_speed beside it
    mod = importlib.import_module('train_packing')
    ex = lambda n: ([7] * n, [-100] * n)
    rows = mod.first_fit([ex(3), ex(6), ex(5), ex(2)], 8)   # longest first: 6, 5, 3, 2
    assert [[len(x) for x, _ in row] for row in rows] == [[6, 2], [5, 3]]
    ids, labels, pos = mod.packed_row([([1, 2, 3], [-100, 2, 3]), ([4, 5], [-100, 5])], 7, 0)
    assert ids.tolist() == [[1, 2, 3, 4, 5, 0, 0]] and labels.tolist() == [[-100, 2, 3, -100, 5, -100, -100]]
    assert pos.tolist() == [[0, 1, 2, 0, 1, 2, 3]]   # each example from 0; the pad goes on from the last

def test_dtype_auto_is_decided_when_training_starts_and_recorded(tmp_path):
    "`dtype: auto` trains in bfloat16 where /proc/cpuinfo names AVX512-BF16 or AMX, float32 elsewhere, and the card says which ran (never 'auto')."
    import dataclasses, re
    from pathlib import Path
    cfg = dataclasses.replace(get_train_preset('quick', small=True), dtype='auto', steps=2)
    card = train(cfg, tmp_path / 'auto', progress=False)
    cpu = Path('/proc/cpuinfo').read_text() if Path('/proc/cpuinfo').exists() else ''
    assert card['config']['dtype'] == ('bfloat16' if re.search(r'\b(avx512_bf16|amx_bf16)\b', cpu) else 'float32')
    assert load_card(tmp_path / 'auto')['config']['dtype'] == card['config']['dtype']
