"""Model backends end to end: the tiny random Llama; the embedded SmolLM2 on llama.cpp (default run) and on transformers
(`model`); a real llama.cpp OpenAI-compatible server serving the packaged SmolLM2 GGUF (`server`, default run: it fails,
saying to run scripts/setup.sh, when the server's packages are missing), alone and beside a server that fails."""
import hashlib
import json, socket, subprocess, sys, tempfile, threading, time, warnings
from pathlib import Path
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import pytest, requests
from conftest import missing_server_packages
from tiny_model import tiny_llama_dir, _trace, _PROGRAM
from l0kit.protocol.benchmark import get_benchmark
from l0kit.l0.benchmark import make_l0_item
from l0kit.protocol.models import GenerationParams, ModelUnavailable, ModelSpecError, load_model
from l0kit.protocol.prompt import Prompt
from l0kit.runs.runner import RunConfig, run_eval
from l0kit.runs.format import read_records

SMALL = "def function(x, lst_y, cond_x):\n    lst_y.append(x)\n    if cond_x:\n        x = x + 2\n    lst_y.pop()\n    return\n"
ITEMS = [make_l0_item(f'small-{k}', SMALL, dict(x=k, lst_y=[k], cond_x=k % 2 == 0), [dict(x=i, lst_y=[], cond_x=i % 3 == 0) for i in range(8)])
         for k in range(3)]

def read_responses(run): return [vars(r) for r in read_records(run).records]

def test_unknown_and_malformed_specs():
    with pytest.raises(ModelSpecError, match='unknown model kind'): load_model('llama3:/x')
    with pytest.raises(ModelSpecError, match='take no option'): load_model('replay:/x,temperature=1')
    with pytest.raises(ModelUnavailable, match='not a Hugging Face model directory'): load_model('hf:/nonexistent')
    with pytest.raises(ModelUnavailable, match='not found'): load_model('llamacpp:/nonexistent.gguf')
    with pytest.raises(ModelSpecError, match='takes no option device'): load_model('smollm2:device=cpu')
    with pytest.raises(ModelSpecError, match='listed twice'): load_model('openai:http://127.0.0.1:1/v1|http://127.0.0.1:1#m')

def test_the_tiny_models_traces_are_the_tracers():
    "The tiny model's tokenizer learns from traces written out by `_trace`, so that it depends on no benchmark: they are the L0 tracer's, character for character."
    from l0kit.l0.tracer import trace_program
    for x in range(40):
        assert _trace(x) == '\n'.join(trace_program(_PROGRAM, dict(x=x, lst_y=list(range(x % 5)), cond_x=bool(x % 2)))), x

def test_tiny_llama_runs_the_protocol(tmp_path):
    m = load_model(f'hf:{tiny_llama_dir()},device=cpu,batch_size=4')
    s = run_eval(get_benchmark('l0', shots=2, budget_margin=5), m, ITEMS, tmp_path / 'run', RunConfig(voters=3), progress=False)
    assert (s['complete'], s['failed']) == (9, 0)
    recs = read_responses(tmp_path / 'run')
    budgets = {it['id']: m.count_tokens('\n'.join(it['target'])) + 5 for it in ITEMS}  # target tokens + margin
    assert all(0 < r['completion_tokens'] <= budgets[r['id']] and r['prompt_tokens'] > 100 for r in recs)
    assert any(r['completion_tokens'] == budgets[r['id']] for r in recs)  # random weights rarely stop early

# --- the embedded SmolLM2 on llama.cpp (in process) ---------------------------------------------------------------

@pytest.fixture(scope='module')
def smol():
    with load_model('smollm2') as m: yield m

def _fingerprint(f: Path, chunk: int = 8 << 20) -> str:
    "A weights fingerprint by hand: the file's name and size, its first and last 8 MiB."
    size = f.stat().st_size
    with open(f, 'rb') as fh:
        head = fh.read(chunk); fh.seek(max(0, size - chunk)); tail = fh.read(chunk)
    return hashlib.sha256(f"{f.name}\x00{size}\x00".encode() + head + tail).hexdigest()[:16]

def test_smollm2_runs_on_llamacpp_by_default(smol):
    import llama_cpp
    from l0kit.backends.hf import smollm2_gguf
    info, src = smol.info(), smollm2_gguf()[0]
    # the packaged Q4_1 file de-quantized once: to bfloat16 where llama.cpp's CPU code was built with AVX512-BF16, else float32
    kind = 'bf16' if b'AVX512_BF16 = 1' in llama_cpp.llama_print_system_info() else 'f32'
    assert (info['backend'], info['name'], info['weights_type'], info['flash_attn'], info['context_length']) == ('llamacpp', 'SmolLM2-135M-Instruct', kind, True, 8192)
    run = Path(info['file'])
    assert run.name == f"{src.stem}-{_fingerprint(src)}-{kind}.gguf" and run.stat().st_size > 2 * src.stat().st_size
    assert info['weights'] == _fingerprint(run)  # the figure's record names the weights that ran

def test_llamacpp_greedy_is_deterministic_and_stops(smol):
    b = get_benchmark('l0', shots=1)
    p = b.build_prompt(ITEMS[0], 0)
    g = GenerationParams(max_new_tokens=32)
    first, again = smol.generate([p], g)[0][0], smol.generate([p], g)[0][0]
    assert first.text == again.text and first.text.lstrip('`\n').startswith('L2,')
    assert (first.error, again.meta['cached_prompt_tokens']) == (None, first.prompt_tokens - 1)  # the second call reused the prompt
    assert first.prompt_tokens == smol.count_tokens(smol.render(p)) and 0 < first.completion_tokens <= 32
    cut = smol.generate([p], GenerationParams(max_new_tokens=32, stop=['\nL3']))[0][0]
    assert (cut.text, cut.finish_reason) == (first.text[:first.text.index('\nL3')], 'stop')
    assert cut.completion_tokens == smol.count_tokens(cut.text) < first.completion_tokens

def test_llamacpp_runs_the_protocol_reusing_the_voters_prefix(smol, tmp_path):
    s = run_eval(get_benchmark('l0', shots=1, budget_margin=4), smol, ITEMS[:2], tmp_path / 'run', RunConfig(voters=3), progress=False)
    assert (s['complete'], s['failed']) == (6, 0)
    recs = read_responses(tmp_path / 'run')
    assert all(r['meta']['cached_prompt_tokens'] < r['prompt_tokens'] for r in recs)
    # the voters of an item share the instruction and the program: all but the first read them from the cache
    assert sum(r['meta']['cached_prompt_tokens'] > 100 for r in recs) >= 4

@pytest.mark.model
def test_smollm2_on_transformers_batched_equals_batch_1_and_writes_traces(tmp_path):
    m = load_model('smollm2:backend=transformers,device=cpu,batch_size=3')
    b = get_benchmark('l0', shots=1, budget_margin=16)
    prompts = [b.build_prompt(it, 0) for it in ITEMS]
    params = GenerationParams(max_new_tokens=24)
    batched = [c[0].text for c in m.generate(prompts, params)]
    assert batched == [m.generate([p], params)[0][0].text for p in prompts]
    s = run_eval(b, m, ITEMS, tmp_path / 'run', RunConfig(voters=1), progress=False)
    assert s['complete'] == 3
    assert sum(r['response'].lstrip('`\n').startswith('L2,') for r in read_responses(tmp_path / 'run')) >= 2  # it keeps the trace shape

@pytest.mark.model
def test_gguf_file_loads_through_transformers():
    from l0kit.backends.hf import smollm2_gguf
    gguf, _ = smollm2_gguf()
    m = load_model(f'gguf:{gguf},device=cpu')
    assert m.kind == 'chat' and m.count_tokens('L2,x:1') > 0
    assert m.generate(['Say hi.'], GenerationParams(max_new_tokens=5))[0][0].completion_tokens <= 5

# --- a real llama.cpp server ---------------------------------------------------------------------------------------

def _free_port():
    s = socket.socket(); s.bind(('127.0.0.1', 0)); port = s.getsockname()[1]; s.close(); return port

def _start_llama_server(gguf, ports, tries: int = 3):
    """A llama.cpp server of `gguf` on the first port of `ports` it can bind: (process, url, log). A port free when chosen
    may be another worker's before the server binds it; the server then exits at start saying so, and the next port is tried."""
    for attempt in range(tries):
        port, log = next(ports), tempfile.TemporaryFile()  # a file, not a pipe: a full pipe would stop the server
        proc = subprocess.Popen([sys.executable, '-m', 'llama_cpp.server', '--model', str(gguf), '--host', '127.0.0.1', '--port', str(port),
                                 '--n_ctx', '4096', '--n_threads', '1', '--n_threads_batch', '1', '--seed', '0', '--verbose', 'false'],
                                stdout=log, stderr=log)  # batch threads default to every CPU of the machine, not the worker's one
        url = f'http://127.0.0.1:{port}/v1'
        tail = lambda: (log.seek(0), log.read().decode(errors='replace')[-1500:])[1]
        try:
            for _ in range(480):
                try:
                    r = requests.get(url + '/models', timeout=1)  # this server's answer: the port may be another's
                    if r.status_code == 200 and Path(gguf).name in r.text: return proc, url, log
                except requests.RequestException: pass
                if proc.poll() is not None: break
                time.sleep(0.25)
            else: pytest.fail(f"the llama.cpp server did not answer within 120 s: {tail()}")
            if 'address already in use' not in tail().lower() or attempt == tries - 1:
                pytest.fail(f"the llama.cpp server exited at start (port {port}): {tail()}")
        except BaseException:
            _stop(proc, log); raise
        _stop(proc, log)

def _stop(proc, log):
    proc.terminate()
    try: proc.wait(10)
    except subprocess.TimeoutExpired: proc.kill(); proc.wait(10)
    log.close()

def _llama_gguf():
    if missing := missing_server_packages():
        pytest.fail(f"the llama.cpp server needs {', '.join(missing)}: run scripts/setup.sh (it installs the kit's `server` extra)")
    from l0kit.backends.hf import smollm2_gguf
    return smollm2_gguf()[0]

@pytest.fixture(scope='module')
def llama_server():
    proc, url, log = _start_llama_server(_llama_gguf(), iter(_free_port, None))
    try: yield url
    finally: _stop(proc, log)

@pytest.mark.server
def test_a_port_taken_before_the_server_binds_it_is_given_up_for_another():
    "The race of `_free_port`: the port is taken between choosing it and the server binding it. The server exits saying so, and the next port is tried."
    taken = socket.socket(); taken.bind(('127.0.0.1', 0)); taken.listen()   # another worker's server, say
    free = _free_port()
    try:
        proc, url, log = _start_llama_server(_llama_gguf(), iter([taken.getsockname()[1], free]))
        try: assert url == f'http://127.0.0.1:{free}/v1' and requests.get(url + '/models', timeout=5).status_code == 200
        finally: _stop(proc, log)
        with pytest.raises(pytest.fail.Exception, match='exited at start'):   # a port taken on every try: an error with the log, no wait
            _start_llama_server(_llama_gguf(), iter([taken.getsockname()[1]] * 2), tries=2)
    finally: taken.close()

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
    s = run_eval(get_benchmark('l0', shots=1, budget_margin=4), m, ITEMS[:2], tmp_path / 'run', RunConfig(voters=2), progress=False)
    assert (s['complete'], s['failed']) == (4, 0)

class FailingServer(BaseHTTPRequestHandler):
    "Lists the model like a server that works, then fails every request: HTTP 500, or (mode 'close') no answer at all."
    mode, posts = '500', 0
    def log_message(self, *a): pass
    def _send(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code); self.send_header('Content-Type', 'application/json'); self.send_header('Content-Length', str(len(data)))
        self.end_headers(); self.wfile.write(data)
    def do_GET(self): self._send(200, {'data': [{'id': 'smollm2'}]})
    def do_POST(self):
        self.rfile.read(int(self.headers.get('Content-Length', 0)))
        FailingServer.posts += 1
        if FailingServer.mode == 'close': self.close_connection = True; return
        self._send(500, {'error': 'internal server error'})

@pytest.mark.server
@pytest.mark.parametrize('mode', ['500', 'close'])
def test_two_servers_one_failing(llama_server, mode):
    FailingServer.mode, FailingServer.posts = mode, 0
    fake = ThreadingHTTPServer(('127.0.0.1', 0), FailingServer)
    threading.Thread(target=fake.serve_forever, daemon=True).start()
    bad = f'http://127.0.0.1:{fake.server_port}/v1'
    try:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter('always')
            m = load_model(f'openai:{bad}|{llama_server}#smollm2,concurrency=2,backoff=0.01')
            prompts = [Prompt([{'role': 'user', 'content': f'Say the number {k}.'}], max_new_tokens=6) for k in range(5)]
            outs = m.generate(prompts)
    finally: fake.shutdown()
    assert all(o[0].error is None and o[0].meta['server'] == llama_server and o[0].completion_tokens > 0 for o in outs)
    info = m.info()
    assert FailingServer.posts >= 1 and info['handed_off'] >= 1 and info['servers'][0]['handed_off'] == info['handed_off']
    assert info['servers'][1]['answered'] == 5
    failovers = [str(x.message) for x in w if x.category.__name__ == 'ServerFailover']
    assert failovers and all(bad in f for f in failovers)

@pytest.mark.server
def test_lm_eval_local_chat_completions_against_the_llama_server(llama_server, tmp_path):
    "lm_eval as people run it against an OpenAI-compatible server (`local-chat-completions`, `--limit`): budgets at least"
    " `l0kit eval`'s, and every per-sample score equal to `l0kit report` on the same responses."
    from l0kit.bridges.lmeval import export_lmeval
    from l0kit.protocol.prompt import prompt_hash
    from l0kit.runs.report import report
    from l0kit.runs.runner import generation_budget
    from l0kit.runs.format import Record, append_records, new_run_meta, write_meta
    bench = get_benchmark('l0', shots=1)
    bench.generate(tmp_path / 'data', limit=2, preset='small', seed=3)
    y = export_lmeval(tmp_path / 'data', 'short', tmp_path / 'tasks', 'l0', RunConfig(voters=1), {'shots': 1})
    docs = [json.loads(l) for l in (tmp_path / 'tasks' / 'l0bench_short.docs.jsonl').read_text().splitlines()]
    items = {it['id']: it for it in bench.load(tmp_path / 'data', 'short')}
    server = load_model(f'openai:{llama_server}')  # counts tokens with the server's own tokenizer, as `l0kit eval` does
    for d in docs:  # the exported budget (a byte bound) is never below the runner's, counted with the model's tokenizer
        assert d['max_gen_toks'] >= generation_budget(bench.build_prompt(items[d['id']], d['voter'], 0), server, RunConfig())
    lm_eval = Path(sys.executable).with_name('lm_eval')
    r = subprocess.run([str(lm_eval), '--model', 'local-chat-completions', '--model_args',
                        f'model=smollm2,base_url={llama_server}/chat/completions,num_concurrent=1,max_retries=2,tokenized_requests=False',
                        '--include_path', str(tmp_path / 'tasks'), '--tasks', y.stem, '--apply_chat_template', '--limit', '2',
                        '--log_samples', '--output_path', str(tmp_path / 'res')], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    samples = [json.loads(l) for f in (tmp_path / 'res').rglob('samples_l0bench_short*.jsonl') for l in f.read_text().splitlines()]
    assert len(samples) == 2 and all(s['resps'][0][0] for s in samples)
    run = tmp_path / 'run'; run.mkdir()
    write_meta(run, new_run_meta(benchmark='l0', benchmark_config=bench.settings(), run_config=vars(RunConfig()) | {'voters': 1}, model='lm-eval',
                                 model_identity='lm-eval', model_info={}, simulated=False, data=str(tmp_path / 'data'), split='short', limit=2))
    append_records(run, [Record(id=s['doc']['id'], voter=s['doc']['voter'], response=s['resps'][0][0], split='short',
                                prompt_hash=prompt_hash(bench.build_prompt(items[s['doc']['id']], 0, 0)),
                                item_hash=bench.item_hash(items[s['doc']['id']])) for s in samples])
    kit = report([run])[0].scores.set_index(['id', 'voter'])
    for s in samples:
        row = kit.loc[(s['doc']['id'], s['doc']['voter'])]
        assert (s['trace_accuracy'], s['steps_to_error']) == (float(row['correct']), float(row['steps_to_error']))
