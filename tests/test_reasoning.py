"""Reasoning models as researchers serve them (issue 36, items 1-5): a local server answering in vLLM's, OpenRouter's and
OpenAI's reasoning shapes (their errors included) and the real llama.cpp server, run through `l0kit eval` / `report`."""
import contextlib, io, json, threading, warnings
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
import pytest
from l0kit.cli.main import main
from l0kit.protocol.models import GenerationParams, load_model
from l0kit.protocol.prompt import Prompt
from l0kit.runs.format import read_records
from l0kit.l0.benchmark import L0Benchmark

THOUGHT = 'x starts at 1; the loop runs twice.'  # what every reply of the local server thinks


class ReasoningServer:
    "`with ReasoningServer(reply) as url:` serves /v1/models, /version and /v1/chat/completions; `reply(body, n) -> (status, obj)` for the n-th POST."
    def __init__(self, reply, version='0.9.2', max_model_len=32768):
        self.reply, self.version, self.max_model_len, self.requests, self.lock = reply, version, max_model_len, [], threading.Lock()

    def __enter__(self) -> str:
        srv = self
        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a): pass
            def do_GET(self):
                if self.path == '/version' and srv.version: return self._send(200, {'version': srv.version})
                if self.path == '/v1/models':
                    return self._send(200, {'object': 'list', 'data': [{'id': 'Qwen/Qwen3-8B', 'object': 'model', 'owned_by': 'vllm',
                                                                         'root': 'Qwen/Qwen3-8B', 'max_model_len': srv.max_model_len}]})
                self._send(404, {'detail': 'Not Found'})
            def do_POST(self):
                if self.path != '/v1/chat/completions': return self._send(404, {'detail': 'Not Found'})
                body = json.loads(self.rfile.read(int(self.headers['Content-Length'])))
                with srv.lock: srv.requests.append(body); n = len(srv.requests)
                self._send(*srv.reply(body, n))
            def _send(self, status, obj):
                b = json.dumps(obj).encode()
                self.send_response(status); self.send_header('Content-Type', 'application/json'); self.send_header('Content-Length', str(len(b)))
                self.end_headers(); self.wfile.write(b)
        self.httpd = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __exit__(self, *exc): self.httpd.shutdown(); self.httpd.server_close()


def vllm_reply(content='L2,x:1', finish='stop', field='reasoning_content', reasoning_tokens=84):
    "A reply as vLLM with `--reasoning-parser` gives it (OpenRouter: field='reasoning')."
    def reply(body, n):
        return 200, {'id': f'chatcmpl-{n}', 'object': 'chat.completion', 'model': body['model'], 'system_fingerprint': 'fp_vllm_1',
                     'choices': [{'index': 0, 'message': {'role': 'assistant', 'content': content, field: THOUGHT}, 'finish_reason': finish}],
                     'usage': {'prompt_tokens': 50, 'completion_tokens': 90, 'total_tokens': 140,
                               'completion_tokens_details': {'reasoning_tokens': reasoning_tokens}}}
    return reply


def openai_error(message, param, code):
    return 400, {'error': {'message': message, 'type': 'invalid_request_error', 'param': param, 'code': code}}


def o_series(refuse_from=1):
    "OpenAI's o-series: 400 to max_tokens, and (from the `refuse_from`-th request on) to any temperature but 1."
    def reply(body, n):
        if 'max_tokens' in body:
            return openai_error("Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
                                'max_tokens', 'unsupported_parameter')
        if body.get('temperature', 1) != 1 and n >= refuse_from:
            return openai_error(f"Unsupported value: 'temperature' does not support {body['temperature']} with this model. Only the default (1) "
                                "value is supported.", 'temperature', 'unsupported_value')
        return vllm_reply(reasoning_tokens=64)(body, n)
    return reply


@pytest.fixture(scope='module')
def data(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp('reasoning') / 'data'
    L0Benchmark().generate(d, limit=2, seed=0)
    return d


def l0kit(*args) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err): rc = main([str(a) for a in args])
    return rc, out.getvalue(), err.getvalue()


def evaluate(data, url, out, *more, model='#Qwen/Qwen3-8B'):
    return l0kit('eval', '--data', data, '--split', 'short', '--model', f'openai:{url}{model}', '--voters', 2, '--out', out, '--no-progress', *more)


# --- 1 and 2: the thinking kept, counted apart, extra_body sent and recorded, the server recorded --------------------------

EXTRA = {'chat_template_kwargs': {'enable_thinking': True}, 'top_k': 20}

def test_vllm_reasoning_kept_counted_and_extra_body_sent(data, tmp_path):
    server = ReasoningServer(vllm_reply())
    with server as url: rc, out, err = evaluate(data, url, tmp_path / 'run', '--extra-body', json.dumps(EXTRA))
    assert rc == 0, err
    recs = read_records(tmp_path / 'run').records
    assert len(recs) == 4 and len(server.requests) == 4  # 2 items x 2 voters
    assert {(r.response, r.reasoning, r.meta['think_tokens'], r.completion_tokens) for r in recs} == {('L2,x:1', THOUGHT, 84, 90)}
    assert all(r.meta['system_fingerprint'] == 'fp_vllm_1' for r in recs)
    assert all(b['chat_template_kwargs'] == {'enable_thinking': True} and b['top_k'] == 20 and b['max_tokens'] > 0 for b in server.requests)
    meta = json.loads((tmp_path / 'run' / 'run.json').read_text())
    assert meta['run_config']['extra_body'] == EXTRA
    assert meta['model_info']['server'] == {'models': [{'id': 'Qwen/Qwen3-8B', 'owned_by': 'vllm', 'root': 'Qwen/Qwen3-8B', 'max_model_len': 32768}],
                                            'version': '0.9.2'}
    assert 'tokens: 336 thinking, 24 answering (84 thinking per response)' in out  # 4 x 84 of 4 x 90
    rc, text, err = l0kit('report', tmp_path / 'run')
    assert rc == 0, err
    assert 'server: version 0.9.2 | Qwen/Qwen3-8B (max_model_len 32768) | system_fingerprint fp_vllm_1 (4)' in text
    assert 'tokens: 336 thinking, 24 answering' in text
    j = json.loads(l0kit('report', tmp_path / 'run', '--json')[1])['reports'][0]
    assert (j['budget']['think_tokens'], j['budget']['answer_tokens'], j['budget']['with_reasoning']) == (336, 24, 4)
    t10 = j['tables']['Table 10: thought tokens (mean per response)']
    assert t10['columns'] == ['thought tokens', 'cut by budget (%)'] and t10['data'][0] == [84.0, 0.0]


def test_openrouter_reasoning_field_and_scoring_reads_content():
    with ReasoningServer(vllm_reply(content='the answer', field='reasoning', reasoning_tokens=0)) as url:
        with load_model(f'openai:{url}#m') as m:
            c = m.generate([Prompt([{'role': 'user', 'content': 'Trace it.'}], max_new_tokens=50)])[0][0]
    assert (c.text, c.reasoning, c.reasoning_tokens) == ('the answer', THOUGHT, 0)


def test_resume_with_other_extra_body_refused(data, tmp_path):
    with ReasoningServer(vllm_reply()) as url:
        assert evaluate(data, url, tmp_path / 'run', '--extra-body', '{"top_k": 20}')[0] == 0
        rc, out, err = evaluate(data, url, tmp_path / 'run', '--extra-body', '{"top_k": 40}')
        assert rc == 2 and len(err.strip().splitlines()) == 1 and 'holds a different run (run_config' in err
        rc, out, err = evaluate(data, url, tmp_path / 'run')  # none at all is another setting too
        assert rc == 2 and 'holds a different run' in err
        assert evaluate(data, url, tmp_path / 'run', '--extra-body', '{"top_k": 20}')[0] == 0  # the same: resumed


def test_extra_body_may_not_override_the_run(data, tmp_path):
    rc, out, err = l0kit('eval', '--data', data, '--split', 'short', '--model', 'simulated', '--out', tmp_path / 'r', '--no-progress',
                         '--extra-body', '{"max_tokens": 5}')
    assert rc == 2 and 'extra_body may not set max_tokens' in err
    rc, out, err = l0kit('eval', '--data', data, '--split', 'short', '--model', 'simulated', '--out', tmp_path / 'r', '--no-progress',
                         '--extra-body', '[1, 2]')
    assert rc == 2 and '--extra-body takes a JSON object' in err


# --- 3: OpenAI's reasoning models -------------------------------------------------------------------------------------------

def test_max_completion_tokens_learned_once_and_kept(data, tmp_path):
    server = ReasoningServer(o_series())
    with server as url:
        rc, out, err = evaluate(data, url, tmp_path / 'run', '--temperature', 1, model='#o3,concurrency=1')
    assert rc == 0, err
    assert ['max_tokens' in b for b in server.requests] == [True, False, False, False, False]  # one 400, then 4 answers
    assert server.requests[1]['max_completion_tokens'] == server.requests[0]['max_tokens']  # the same budget, resent under the other name
    assert all(b['max_completion_tokens'] > 0 for b in server.requests[1:])
    assert [r.failed for r in read_records(tmp_path / 'run').records] == [False] * 4


def test_token_field_option_sends_max_completion_tokens_from_the_start(data, tmp_path):
    server = ReasoningServer(o_series())
    with server as url:
        rc, out, err = evaluate(data, url, tmp_path / 'run', '--temperature', 1, model='#o3,token_field=max_completion_tokens')
    assert rc == 0 and len(server.requests) == 4 and not any('max_tokens' in b for b in server.requests)
    rc, out, err = l0kit('eval', '--data', data, '--split', 'short', '--model', 'openai:http://127.0.0.1:9/v1#o3,token_field=budget',
                         '--out', tmp_path / 'bad', '--no-progress')
    assert rc == 2 and 'token_field must be max_tokens or max_completion_tokens' in err


def test_refused_temperature_stops_in_one_line_keeping_what_was_answered(data, tmp_path):
    server = ReasoningServer(o_series(refuse_from=4))  # request 1: the 400 on max_tokens; 2 and 3 answered; then refused
    with server as url:
        rc, out, err = evaluate(data, url, tmp_path / 'run', '--reasoning', model='#o3,concurrency=1')
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) == 1, err
    assert 'refuses temperature=0.6 for o3' in lines[0] and 'run with --temperature 1' in lines[0]
    assert len(server.requests) == 4  # nothing sent after the refusal
    recs = read_records(tmp_path / 'run').records
    assert len(recs) == 2 and not any(r.failed for r in recs)  # the two answered before it are kept, the refused one stays pending


# --- 4: truncation counted, an unclosed <think> read either way ---------------------------------------------------------

def test_truncation_counted_and_unclosed_think_read_either_way(data, tmp_path):
    bench = L0Benchmark()
    by_prompt = {bench.build_prompt(it, v, 0).messages[-1]['content']: it for it in bench.load(data, 'short') for v in range(2)}
    def reply(body, n):  # every response cut by the budget inside its thinking, which holds the right trace
        it = by_prompt[body['messages'][-1]['content']]
        text = '<think>Let me trace it.\n' + '\n'.join(it['target']) + '\nso the answer'
        return 200, {'choices': [{'index': 0, 'message': {'content': text}, 'finish_reason': 'length'}],
                     'usage': {'prompt_tokens': 50, 'completion_tokens': 70}}
    with ReasoningServer(reply) as url: rc, out, err = evaluate(data, url, tmp_path / 'run')
    assert rc == 0, err
    assert "4 of 4 responses were cut by the token budget (finish_reason length); 4 end inside an unclosed <think>" in out
    authors = json.loads(l0kit('report', tmp_path / 'run', '--json')[1])['reports'][0]
    no_answer = json.loads(l0kit('report', tmp_path / 'run', '--json', '--set', 'unclosed_think=no_answer')[1])['reports'][0]
    for j, rule in ((authors, 'authors'), (no_answer, 'no_answer')):
        assert (j['budget']['truncated'], j['budget']['unclosed_think'], j['budget']['unclosed_think_read_as']) == (4, 4, rule)
    acc = lambda j: dict(zip(j['tables']['Table 1 (k = 2)']['columns'], j['tables']['Table 1 (k = 2)']['data'][-1]))['Trace Acc. single attempt']
    assert (acc(authors), acc(no_answer)) == (100.0, 0.0)  # the thinking's trace is right: read whole it scores, as no answer it does not
    rc, text, err = l0kit('report', tmp_path / 'run', '--set', 'unclosed_think=none')
    assert rc == 2 and 'unclosed_think must be authors or no_answer' in err


# --- 5: the server recorded, a change of engine noted on resume -----------------------------------------------------------

def test_resume_against_another_engine_version_is_noted(data, tmp_path):
    with ReasoningServer(vllm_reply(), version='0.9.2') as url:
        assert evaluate(data, url, tmp_path / 'run', '--limit', 1)[0] == 0
    with ReasoningServer(vllm_reply(), version='0.10.1') as url, warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter('always')
        rc, out, err = evaluate(data, url, tmp_path / 'run')
    assert rc == 0, err
    meta = json.loads((tmp_path / 'run' / 'run.json').read_text())
    assert meta['model_info']['server']['version'] == '0.9.2'  # what began the run stays
    assert 'engine version 0.9.2 -> 0.10.1' in meta['resumes'][-1]['note'] and meta['resumes'][-1]['server']['version'] == '0.10.1'
    assert any('engine version 0.9.2 -> 0.10.1' in str(w.message) for w in seen)


def test_hostile_server_description_is_bounded(tmp_path):
    server = ReasoningServer(vllm_reply(), version='v' * 10_000, max_model_len='a lot')
    with server as url, load_model(f'openai:{url}#m') as m:
        s = m.info()['server']
    assert s == {'models': [{'id': 'Qwen/Qwen3-8B', 'owned_by': 'vllm', 'root': 'Qwen/Qwen3-8B'}], 'version': 'v' * 100}


# --- the real llama.cpp server ------------------------------------------------------------------------------------------------

from test_models import llama_server  # noqa: E402,F401  (the module's fixture: one server for these tests too)

@pytest.mark.server
def test_llama_server_extra_body_truncation_and_description(llama_server, data, tmp_path):
    m = load_model(f'openai:{llama_server}')
    assert m.info()['server']['models'][0]['id']  # llama-cpp-python lists its model; it has no /version route
    outs = m.generate([Prompt([{'role': 'user', 'content': 'Count from 1 to 50.'}], max_new_tokens=3)],
                      GenerationParams(extra_body={'top_k': 1}))
    c = outs[0][0]
    assert c.error is None and c.finish_reason == 'length' and c.completion_tokens == 3 and c.reasoning is None
    m.close()
    rc, out, err = l0kit('eval', '--data', data, '--split', 'short', '--model', f'openai:{llama_server}', '--voters', 1, '--limit', 1,
                         '--max-new-tokens-cap', 4, '--extra-body', '{"top_k": 1}', '--out', tmp_path / 'run', '--no-progress')
    assert rc == 0, err
    assert '1 of 1 responses were cut by the token budget' in out
    assert json.loads((tmp_path / 'run' / 'run.json').read_text())['run_config']['extra_body'] == {'top_k': 1}


def test_run_page_shows_thinking_folded_and_marks_cut_answers(data, tmp_path):
    with ReasoningServer(vllm_reply(content='L2,x:1', finish='length')) as url: assert evaluate(data, url, tmp_path / 'run')[0] == 0
    rc, out, err = l0kit('view', tmp_path / 'run', '--out', tmp_path / 'page.html')
    assert rc == 0, err
    page = (tmp_path / 'page.html').read_text()
    data_json = json.loads(page.split('<script type="application/json" id="l0kit-data">', 1)[1].split('</script>', 1)[0])
    answers = [a for it in data_json['runs'][0]['items'] for a in it['a']]
    assert len(answers) == 2 and all(a['th'] == THOUGHT and a['cut'] == 1 for a in answers)  # one distinct answer per item
    assert 'cut by the token budget: 4 of 4 responses' in page and 'tokens: 336 thinking, 24 answering' in page
    assert "a.th ? `<details class=\"thinking\">" in page  # drawn folded by the page's script


def test_inspect_log_carries_the_thinking(data, tmp_path):
    pytest.importorskip('inspect_ai')
    from inspect_ai.log import read_eval_log
    with ReasoningServer(vllm_reply()) as url: assert evaluate(data, url, tmp_path / 'run')[0] == 0
    rc, out, err = l0kit('export', 'inspect-log', tmp_path / 'run', '--out', tmp_path / 'run.eval')
    assert rc == 0, err
    samples = read_eval_log(str(tmp_path / 'run.eval')).samples
    assert len(samples) == 4
    for s in samples:
        reasoning, text = s.messages[-1].content
        assert (type(reasoning).__name__, reasoning.reasoning, text.text) == ('ContentReasoning', THOUGHT, 'L2,x:1')
        assert (s.output.completion, s.output.usage.reasoning_tokens) == ('L2,x:1', 84)  # the answer scored, the thinking counted apart


# --- the run format: the thinking within the line bound, old folders still read and resumed --------------------------------

def test_huge_thinking_is_cut_before_the_answer():
    from l0kit.runs.format import MAX_RECORD_BYTES, Record, record_from_dict
    line = Record(id='a', voter=0, response='L2,x:1', reasoning='é' * MAX_RECORD_BYTES).to_json()  # 2 x the bound in UTF-8 bytes
    assert len(line.encode()) <= MAX_RECORD_BYTES
    r = record_from_dict(json.loads(line))
    assert r.response == 'L2,x:1' and r.finish_reason == 'length' and 0 < len(r.reasoning) < MAX_RECORD_BYTES // 2 and set(r.reasoning) == {'é'}


def test_reasoning_field_checked_and_old_lines_read():
    from l0kit.runs.format import RecordError, record_from_dict
    assert record_from_dict({'id': 'a', 'voter': 0, 'response': 'L2,'}).reasoning is None  # a line from before the field
    with pytest.raises(RecordError, match='reasoning must be str'): record_from_dict({'id': 'a', 'voter': 0, 'response': 'L2,', 'reasoning': ['x']})


def test_folder_from_before_extra_body_resumes(data, tmp_path):
    args = ('eval', '--data', data, '--split', 'short', '--model', 'simulated', '--voters', 2, '--out', tmp_path / 'run', '--no-progress')
    assert l0kit(*args, '--limit', 1)[0] == 0
    meta = json.loads((tmp_path / 'run' / 'run.json').read_text())
    del meta['run_config']['extra_body']  # as a kit before issue 36 wrote it
    (tmp_path / 'run' / 'run.json').write_text(json.dumps(meta))
    rc, out, err = l0kit(*args)
    assert rc == 0, err
    assert len(read_records(tmp_path / 'run').records) == 4
    assert l0kit(*args, '--extra-body', '{"top_k": 20}')[0] == 2  # sending fields it never sent is another run


def test_batch_results_keep_the_thinking():
    from l0kit.runs.batch import completion_from_batch_line
    body = {'choices': [{'message': {'content': 'L2,x:1', 'reasoning_content': THOUGHT}, 'finish_reason': 'stop'}],
            'usage': {'prompt_tokens': 50, 'completion_tokens': 90, 'completion_tokens_details': {'reasoning_tokens': 84}}}
    c = completion_from_batch_line({'custom_id': 'x', 'response': {'status_code': 200, 'body': body}})
    assert (c.text, c.reasoning, c.reasoning_tokens, c.completion_tokens) == ('L2,x:1', THOUGHT, 84, 90)
    body['choices'][0]['message']['reasoning_content'] = 7
    with pytest.raises(ValueError, match='reasoning is not text'): completion_from_batch_line({'response': {'status_code': 200, 'body': body}})
