"""The verifiers (0.4) taskset of every benchmark, run by verifiers' own eval loop (`run_eval`: its interception
server, its `null` chat program in a subprocess runtime, its scoring) against a local OpenAI-compatible server that
streams the kit's simulated models' answers: the tasks are the kit's prompts and items, and the rewards verifiers
records equal what `l0kit report` scores for the same answers (exact) and the steps before the first error (partial)."""
import asyncio, dataclasses, hashlib, json, os, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import pytest
vf = pytest.importorskip('verifiers.v1', reason="the `rl` extra's verifiers (0.4) is not installed")
from sim_server import text_of
from l0kit.protocol.config import ConfigError
from l0kit.protocol.benchmark import get_benchmark
from l0kit.protocol.models import load_model
from l0kit.protocol.prompt import prompt_hash
from l0kit.runs.report import report
from l0kit.runs.runner import RunConfig
from l0kit.runs.format import Record, append_records, new_run_meta, write_meta
from l0kit.bridges.answers import reference_answer
from l0kit.bridges.rl import corruptions

SPLITS = {'l0': 'short', 'procbench': 'short', 'sx': 'easy', 'core': 'test'}
SIMULATED = {'l0': 'rate=0.05,seed=0', 'procbench': 'error_rate=0.3', 'core': 'output_accuracy=0.5,probe_accuracy=0.5'}  # `simulated:` options

@pytest.fixture(scope='module')
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp('data')
    for b in SPLITS: get_benchmark(b).generate(root / b, **({'preset': 'small', 'limit': 6} if b == 'l0' else {'limit': 2}))
    return root

def answers(name, bench, items) -> dict:
    "id -> the answer: the kit's simulated model's, or for SX (no simulator) the reference and one-value corruptions in turn."
    if name in SIMULATED:
        with bench.simulated_model(SIMULATED[name]) as m:
            prompts = [bench.build_prompt(it, 0, 0).for_pair(it['id'], 0) for it in items]
            return {it['id']: c[0].text for it, c in zip(items, m.generate(prompts))}  # the meta the runner adds
    return {it['id']: bench.reference(it) if k % 2 == 0 else bench.corruptions(it)[k % len(bench.corruptions(it))] for k, it in enumerate(items)}

def report_scores(tmp, name, bench, items, texts, data_dir):
    "The report's score rows of the answers, from a run folder as `l0kit eval` writes it."
    run = tmp / 'run'; run.mkdir()
    write_meta(run, new_run_meta(benchmark=name, benchmark_config=bench.settings(), run_config=vars(RunConfig()) | {'voters': 1}, model='sim',
                                 model_identity='sim', model_info={}, simulated=True, data=str(data_dir), split=SPLITS[name], limit=len(items)))
    append_records(run, [Record(id=it['id'], voter=0, response=texts[it['id']], split=SPLITS[name], prompt_hash=prompt_hash(bench.build_prompt(it, 0, 0)),
                                item_hash=bench.item_hash(it)) for it in items])
    return {r['id']: r for r in report([run])[0].scores.to_dict('records')}

def partial_by_hand(name, item, row, text) -> float:
    "Steps before the first error over the steps, from the report's columns (SX: the first test whose line differs)."
    if name == 'l0': return row['steps_to_error'] / row['target_steps']
    if name == 'procbench': return row['pml'] / (len(item['label']['intermediate']) + 1)
    if name == 'core': return float(row['correct'])
    ref = reference_answer(get_benchmark('sx'), item).splitlines()
    k = next((i for i, (a, b) in enumerate(zip(text.splitlines(), ref)) if a != b), len(ref))
    return k / len(item['tests'])

GARBAGE = 'Sorry, I lost track of the steps.'  # no answer in any benchmark's format: exact 0, partial 0

class StreamServer:
    "`with StreamServer(answer) as url:` serves `POST {url}/chat/completions` as OpenAI's SSE stream (verifiers' chat program streams)."
    def __init__(self, answer): self.answer, self.requests = answer, []
    def __enter__(self) -> str:
        server = self
        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a): pass
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers['Content-Length']))); server.requests.append(body)
                text = server.answer(body['messages'])
                base = {'id': f"sim-{len(server.requests)}", 'object': 'chat.completion.chunk', 'created': int(time.time()), 'model': body.get('model', 'sim')}
                chunks = [{'choices': [{'index': 0, 'delta': {'role': 'assistant', 'content': text}, 'finish_reason': None}]},
                          {'choices': [{'index': 0, 'delta': {}, 'finish_reason': 'stop'}]},
                          {'choices': [], 'usage': {'prompt_tokens': 10, 'completion_tokens': 10, 'total_tokens': 20}}]
                self.send_response(200); self.send_header('Content-Type', 'text/event-stream'); self.end_headers()
                for c in chunks: self.wfile.write(b'data: ' + json.dumps(base | c).encode() + b'\n\n')
                self.wfile.write(b'data: [DONE]\n\n')
        self.httpd = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
    def __exit__(self, *exc): self.httpd.shutdown(); self.httpd.server_close()

@pytest.fixture
def offline(tmp_path, monkeypatch):
    """verifiers imports a taskset by a top-level module name: `l0kit_verifiers`, the module the kit ships. verifiers runs its chat program in a uv environment it builds from PyPI; offline, the test's interpreter (which
    has the program's packages: openai, mcp, httpx, httpx2, tenacity) runs the same program file."""
    from verifiers.v1.runtimes.base import Runtime
    async def here(self, script, env=None, *, activate=True):
        # rollouts run concurrently: each script is written whole under its own name, then renamed (no half-written file is run)
        data = script.encode() if isinstance(script, str) else script
        path = tmp_path / f"chat_program_{hashlib.sha256(data).hexdigest()[:16]}.py"
        if not path.exists():
            tmp = path.with_suffix(f'.{os.getpid()}.{id(data)}.tmp'); tmp.write_bytes(data); os.replace(tmp, path)
        return [sys.executable, str(path)]
    monkeypatch.setattr(Runtime, 'prepare_uv_script', here)
    monkeypatch.setenv('LOCAL_API_KEY', 'none')
    return tmp_path

def run_eval(url, out, taskset: dict) -> list:
    "verifiers' own eval loop over the taskset, the model at `url`: the traces."
    from verifiers.v1.configs.cli.eval import EvalConfig
    from verifiers.v1.cli.eval.runner import run_eval
    cfg = EvalConfig.model_validate({'env': {'taskset': {'id': 'l0kit_verifiers', **taskset}, 'agent': {'runtime': {'type': 'subprocess'}}},
                                     'model': 'sim', 'client': {'base_url': url, 'api_key_var': 'LOCAL_API_KEY'},
                                     'rich': None, 'push': False, 'output_dir': str(out)})
    return [t for e in asyncio.run(run_eval(cfg)) for t in e.traces]

@pytest.mark.parametrize('name', list(SPLITS))
def test_rollouts_through_a_local_server_score_as_the_report(tmp_path, data, name, offline):
    from l0kit.bridges.verifiers import reply_text, taskset
    bench, split = get_benchmark(name), SPLITS[name]
    items = bench.load(data / name, split, 6)
    bench.prepare(items)
    texts = answers(name, bench, items) | {items[-1]['id']: GARBAGE}
    by_prompt = {bench.build_prompt(it, 0, 0).messages[-1]['content']: texts[it['id']] for it in items}
    rows = report_scores(tmp_path, name, bench, items, texts, data / name)
    tasks = list(taskset(name, data=str(data / name), split=split, limit=6))
    assert [t.data.id for t in tasks] == [it['id'] for it in items]
    assert [[m.model_dump() for m in t.data.prompt] for t in tasks] == [bench.build_prompt(it, 0, 0).messages for it in items]
    assert [t.data.answer for t in tasks] == [reference_answer(bench, it) for it in items]
    with StreamServer(lambda messages: by_prompt[text_of(messages[-1]['content'])]) as url:
        traces = run_eval(url, tmp_path / 'out', {'benchmark': name, 'data': str(data / name), 'split': split, 'limit': 6})
    assert len(traces) == len(items) and all(t.ok for t in traces), [t.errors for t in traces if not t.ok]
    got = {t.task.data.id: t for t in traces}
    exact_seen = set()
    for it in items:
        t, row = got[it['id']], rows[it['id']]
        assert reply_text(t) == texts[it['id']] and t.num_turns == 1
        assert t.rewards['l0kit_exact'].score == float(row['correct']) == t.reward  # reward='exact' carries the weight
        assert t.rewards['l0kit_partial'].score == pytest.approx(partial_by_hand(name, it, row, texts[it['id']]))
        exact_seen.add(t.reward)
    assert exact_seen == {0.0, 1.0}, 'the answers should include right and wrong ones'
    assert (got[items[-1]['id']].rewards['l0kit_exact'].score, got[items[-1]['id']].rewards['l0kit_partial'].score) == (0.0, 0.0)

def test_partial_reward_carries_the_weight(data):
    from l0kit.bridges.verifiers import taskset
    for reward, weights in [('exact', [1.0, 0.0]), ('partial', [0.0, 1.0])]:
        task = next(iter(taskset('procbench', data=str(data / 'procbench'), split='short', limit=2, reward=reward)))
        assert [(f.__name__, f._vf_weight) for f in task.hooks('reward')] == list(zip(['l0kit_exact', 'l0kit_partial'], weights))

def test_stream_and_bad_settings(data):
    from l0kit.bridges.verifiers import taskset
    s = taskset('l0', split='short', seed=1)
    assert not s.bounded and [t.data.id for t in s.take(3)] == ['stream-00000000', 'stream-00000001', 'stream-00000002']
    assert len(list(taskset('l0', split='short', seed=1, limit=2))) == 2
    with pytest.raises(ConfigError, match='give the split'): taskset('procbench', data=str(data / 'procbench'))
    with pytest.raises(ConfigError, match='assistant prefix'): list(taskset('l0', data=str(data / 'l0'), split='short', settings={'think_bypass': True}))
