"""Model backends end to end: the tiny random Llama (default run), the embedded SmolLM2 and its GGUF (`model`), and a
real llama.cpp OpenAI-compatible server serving the packaged SmolLM2 GGUF (`server`; skipped when llama-cpp-python is
not installed)."""
import importlib.util, os, socket, subprocess, sys, time
from pathlib import Path
import pytest, requests
from l0kit.harness.benchmark import get_benchmark
from l0kit.l0.benchmark import make_l0_item
from l0kit.harness.models import GenerationParams, ModelUnavailable, ModelSpecError, load_model
from l0kit.harness.prompt import Prompt
from l0kit.harness.runner import EvalConfig, run_eval, read_responses

SMALL = "def function(x, lst_y, cond_x):\n    lst_y.append(x)\n    if cond_x:\n        x = x + 2\n    lst_y.pop()\n    return\n"
ITEMS = [make_l0_item(f'small-{k}', SMALL, dict(x=k, lst_y=[k], cond_x=k % 2 == 0), [dict(x=i, lst_y=[], cond_x=i % 3 == 0) for i in range(8)])
         for k in range(3)]

def test_unknown_and_malformed_specs():
    with pytest.raises(ModelSpecError, match='unknown model kind'): load_model('llama3:/x')
    with pytest.raises(ModelSpecError, match='take no option'): load_model('replay:/x,temperature=1')
    with pytest.raises(ModelUnavailable, match='not a Hugging Face model directory'): load_model('hf:/nonexistent')

def test_tiny_llama_runs_the_protocol(tmp_path):
    from l0kit.harness.hf import tiny_llama_dir
    m = load_model(f'hf:{tiny_llama_dir()},device=cpu,batch_size=4')
    s = run_eval(get_benchmark('l0'), m, ITEMS, tmp_path / 'run', EvalConfig(voters=3, shots=2, budget_margin=5), progress=False)
    assert (s['complete'], s['failed']) == (9, 0)
    recs = read_responses(tmp_path / 'run')
    budgets = {it['id']: m.count_tokens('\n'.join(it['target'])) + 5 for it in ITEMS}  # target tokens + margin
    assert all(0 < r['completion_tokens'] <= budgets[r['id']] and r['prompt_tokens'] > 100 for r in recs)
    assert any(r['completion_tokens'] == budgets[r['id']] for r in recs)  # random weights rarely stop early

@pytest.mark.model
def test_smollm2_batched_equals_batch_1_and_writes_traces(tmp_path):
    m = load_model('smollm2:device=cpu,batch_size=3')
    b = get_benchmark('l0'); b.items = ITEMS
    cfg = EvalConfig(voters=1, shots=1, budget_margin=16)
    prompts = [b.build_prompt(it, 0, cfg) for it in ITEMS]
    params = GenerationParams(max_new_tokens=24)
    batched = [c[0].text for c in m.generate(prompts, params)]
    assert batched == [m.generate([p], params)[0][0].text for p in prompts]
    s = run_eval(b, m, ITEMS, tmp_path / 'run', cfg, progress=False)
    assert s['complete'] == 3
    assert sum(r['response'].lstrip('`\n').startswith('L2,') for r in read_responses(tmp_path / 'run')) >= 2  # it keeps the trace shape

@pytest.mark.model
def test_gguf_file_loads_through_transformers():
    from l0kit.harness.hf import smollm2_gguf
    gguf, _ = smollm2_gguf()
    m = load_model(f'gguf:{gguf},device=cpu')
    assert m.kind == 'chat' and m.count_tokens('L2,x:1') > 0
    assert m.generate(['Say hi.'], GenerationParams(max_new_tokens=5))[0][0].completion_tokens <= 5

# --- a real llama.cpp server -------------------------------------------------------------------------------------

def _free_port():
    s = socket.socket(); s.bind(('127.0.0.1', 0)); port = s.getsockname()[1]; s.close(); return port

@pytest.fixture(scope='module')
def llama_server():
    if importlib.util.find_spec('llama_cpp') is None: pytest.skip('llama-cpp-python[server] is not installed (pip install "llama-cpp-python[server]")')
    from l0kit.harness.hf import smollm2_gguf
    gguf, _ = smollm2_gguf()
    port = _free_port()
    proc = subprocess.Popen([sys.executable, '-m', 'llama_cpp.server', '--model', str(gguf), '--host', '127.0.0.1', '--port', str(port),
                             '--n_ctx', '4096', '--n_threads', '2', '--seed', '0'], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f'http://127.0.0.1:{port}/v1'
    try:
        for _ in range(240):
            try:
                if requests.get(url + '/models', timeout=1).status_code == 200: break
            except requests.RequestException: pass
            if proc.poll() is not None: pytest.skip('the llama.cpp server exited at start')
            time.sleep(0.5)
        else: pytest.fail('the llama.cpp server did not answer within 120 s')
        yield url
    finally:
        proc.terminate()
        try: proc.wait(10)
        except subprocess.TimeoutExpired: proc.kill()

@pytest.mark.server
def test_llama_server_chat_and_completions(llama_server):
    chat = load_model(f'openai:{llama_server},concurrency=2')
    assert chat.info()['server_tokenizer']  # llama-cpp-python's /extras/tokenize gives exact budgets
    outs = chat.generate([Prompt([{'role': 'user', 'content': 'Count from 1 to 5.'}], max_new_tokens=12)] * 2, GenerationParams(n=2))
    assert [len(o) for o in outs] == [2, 2]
    assert all(c.error is None and 0 < c.completion_tokens <= 12 and c.prompt_tokens > 5 for o in outs for c in o)
    comp = load_model(f'openai:{llama_server},endpoint=completions')
    c = comp.generate(['L2,x:1\nL3,x:2\nL4,x:'], GenerationParams(max_new_tokens=8, stop=['\n']))[0][0]
    assert c.error is None and '\n' not in c.text

@pytest.mark.server
def test_llama_server_runs_the_protocol(llama_server, tmp_path):
    m = load_model(f'openai:{llama_server},concurrency=2')
    s = run_eval(get_benchmark('l0'), m, ITEMS[:2], tmp_path / 'run', EvalConfig(voters=2, shots=2), progress=False)
    assert (s['complete'], s['failed']) == (4, 0)
