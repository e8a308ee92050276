"""Hostile inputs, third round (issue 31), the command line: folders of the user's under `train --out` and
`generate --out` (class 3), a server that echoes the API key (class 7), malformed model files, cards, run.json fields
and training configs past the machine (class 9), a chat template that expands without bound (class 6, GGUF part) and
a benchmark plugin that raises at import (class 10). Each is run through the `l0kit` command in a subprocess where the
issue speaks of the command: one line on stderr, a non-zero status, no traceback, and nothing of the user's changed."""
import gzip, json, os, resource, shutil, subprocess, sys, textwrap, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
KEY = 'sk-hostile0123456789abcdefSECRET'


def l0kit(*args, cwd=None, env=None, timeout=600) -> subprocess.CompletedProcess:
    "The `l0kit` command of this checkout, in a subprocess."
    e = {**os.environ, 'PYTHONPATH': os.pathsep.join([str(ROOT), *filter(None, [(env or {}).get('PYTHONPATH')])]),
         **{k: v for k, v in (env or {}).items() if k != 'PYTHONPATH'}}
    return subprocess.run([sys.executable, '-c', 'import sys; from l0kit.cli.main import main; sys.exit(main())', *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, env=e, timeout=timeout)


def one_line(r: subprocess.CompletedProcess, *words) -> str:
    "The single stderr line of a refused command (status 2, no traceback), which holds every one of `words`."
    assert r.returncode == 2, (r.returncode, r.stderr[-2000:])
    assert 'Traceback' not in r.stderr, r.stderr[-2000:]
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    for w in words: assert w in lines[0], (w, lines[0])
    return lines[0]


def tree(d: Path) -> dict:
    "Every file under `d` with its bytes."
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob('*')) if p.is_file()}


@pytest.fixture(scope='module')
def l0_data(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp('l0') / 'data'
    r = l0kit('generate', '--out', d, '--limit', '2', '--quiet')
    assert r.returncode == 0, r.stderr
    return d


# ---------------------------------------------------------------- class 3: folders of the user's

TRAIN = ('train', '--preset', 'quick', '--steps', '2', '--quiet')  # under IN_TEST the tiny model of the same data: seconds


def test_train_refuses_a_folder_of_the_users_and_keeps_its_checkpoint_folder(tmp_path):
    "`train --out` a folder of the user's: refused, untouched; with --force the model's files go in beside the user's, and "
    "the user's own `OUT.checkpoint` is never deleted."
    out, ck = tmp_path / 'mine', tmp_path / 'mine.checkpoint'
    out.mkdir(); (out / 'thesis.tex').write_text('years of work'); (out / 'config.json').write_text('{"mine": 1}')
    ck.mkdir(); (ck / 'notes.txt').write_text('my notes')
    before_out, before_ck = tree(out), tree(ck)
    r = l0kit(*TRAIN, '--out', out, env={'IN_TEST': '1'})
    one_line(r, 'already holds a trained model', '--force')  # a config.json: the old check's words
    (out / 'config.json').unlink(); before_out = tree(out)
    one_line(l0kit(*TRAIN, '--out', out, env={'IN_TEST': '1'}), "holds files that are not a model the kit trained (e.g. 'thesis.tex')", '--force')
    assert tree(out) == before_out and tree(ck) == before_ck
    # a checkpoint would be written into the user's `OUT.checkpoint`: refused even with --force
    one_line(l0kit(*TRAIN, '--out', out, '--force', '--checkpoint-every', '1', env={'IN_TEST': '1'}),
             f"{ck} is not a checkpoint of the kit's")
    assert tree(out) == before_out and tree(ck) == before_ck
    r = l0kit(*TRAIN, '--out', out, '--force', env={'IN_TEST': '1'})
    assert r.returncode == 0, r.stderr
    assert (out / 'thesis.tex').read_text() == 'years of work'          # the user's file is still there
    assert (out / 'train_card.json').is_file() and (out / 'model.safetensors').is_file()
    assert tree(ck) == before_ck                                          # and the sibling checkpoint folder too (the old code removed it)


def test_train_replaces_only_its_own_organism_and_checkpoint(tmp_path):
    "An organism of the kit's is replaced with --force (and refused without); the kit's own checkpoint folder is removed at the end."
    out = tmp_path / 'org'
    assert l0kit(*TRAIN, '--out', out, env={'IN_TEST': '1'}).returncode == 0
    one_line(l0kit(*TRAIN, '--out', out, env={'IN_TEST': '1'}), 'already holds a trained model')
    r = l0kit(*TRAIN, '--out', out, '--force', '--checkpoint-every', '1', env={'IN_TEST': '1'})
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ['org']  # the checkpoint it wrote (step 1 of 2) is gone, nothing else left
    assert json.loads((out / 'train_card.json').read_text())['steps'] == 2


def test_train_refuses_a_file_as_out(tmp_path):
    f = tmp_path / 'f'; f.write_text('x')
    one_line(l0kit(*TRAIN, '--out', f, '--force', env={'IN_TEST': '1'}), 'is a link or a file, not a folder')
    assert f.read_text() == 'x'


def test_generate_refuses_another_benchmarks_data_folder_and_a_users_folder(tmp_path, l0_data):
    "`generate --out` a ProcBench data folder: its splits and card stay; a folder of the user's: refused; --force keeps other files."
    pb = tmp_path / 'pb'
    assert l0kit('generate', '--benchmark', 'procbench', '--out', pb, '--limit', '1', '--quiet').returncode == 0
    before = tree(pb)
    one_line(l0kit('generate', '--out', pb, '--limit', '2', '--quiet'), f'--out {pb} holds a data set of procbench', '--force')
    assert tree(pb) == before
    mine = tmp_path / 'mine'; mine.mkdir(); (mine / 'short.jsonl').write_text('my own lines\n'); (mine / 'notes.md').write_text('n')
    before = tree(mine)
    one_line(l0kit('generate', '--out', mine, '--limit', '2', '--quiet'), "files that are not a data set of l0 the kit made (e.g. ['notes.md'])")
    assert tree(mine) == before
    assert l0kit('generate', '--out', mine, '--limit', '2', '--quiet', '--force').returncode == 0
    assert (mine / 'notes.md').read_text() == 'n' and (mine / 'card.json').is_file()


def test_generate_makes_its_own_set_again(tmp_path):
    "An L0 data folder of the kit's is made again without --force (the demo run twice); an empty folder is taken."
    d = tmp_path / 'd'; d.mkdir()
    assert l0kit('generate', '--out', d, '--limit', '2', '--seed', '1', '--quiet').returncode == 0
    r = l0kit('generate', '--out', d, '--limit', '2', '--seed', '2', '--quiet')
    assert r.returncode == 0, r.stderr
    assert json.loads((d / 'card.json').read_text())['seed'] == 2


def test_eval_refuses_a_folder_holding_the_users_lock(tmp_path, l0_data):
    "A `.lock` of the user's in --out is neither truncated nor taken: refused in one line."
    run = tmp_path / 'run'; run.mkdir(); (run / '.lock').write_text('my lock file\n')
    r = l0kit('eval', '--data', l0_data, '--split', 'short', '--model', 'simulated', '--out', run, '--no-progress')
    one_line(r)
    assert (run / '.lock').read_text() == 'my lock file\n' and sorted(os.listdir(run)) == ['.lock']


# ---------------------------------------------------------------- class 7: a server that echoes the key

class Echo:
    "A server whose /models lists `sim` and whose completions answer `status` with a body echoing the request's headers."
    def __init__(self, status: int, body):
        self.status, self.body = status, body

    def __enter__(self) -> str:
        echo = self
        class H(BaseHTTPRequestHandler):
            def log_message(self, *a): pass
            def _send(self, code, b):
                self.send_response(code); self.send_header('Content-Type', 'application/json'); self.send_header('Content-Length', str(len(b)))
                self.end_headers(); self.wfile.write(b)
            def do_GET(self):  # the models it lists, and its version (vLLM's GET /version), echo the key too
                auth = self.headers.get('Authorization', '')
                if self.path.endswith('/version'): return self._send(200, json.dumps({'version': f"0.1 for {auth}"}).encode())
                self._send(200, json.dumps({'data': [{'id': 'sim', 'owned_by': auth, 'root': f"{auth.split()[-1]}/sim"}]}).encode())
            def do_POST(self):
                self.rfile.read(int(self.headers['Content-Length']))
                self._send(echo.status, echo.body(dict(self.headers)).encode())
        self.httpd = ThreadingHTTPServer(('127.0.0.1', 0), H)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __exit__(self, *a): self.httpd.shutdown(); self.httpd.server_close()


@pytest.mark.parametrize('status,body', [
    (500, lambda h: f"internal error; you sent {h}"),                                         # Python repr of the headers
    (400, lambda h: json.dumps({'error': {'message': f"bad request with {h['Authorization']}", 'param': None}})),
    (200, lambda h: json.dumps({'echo': h['Authorization'], 'choices': 'none'})),            # a reply without usable choices
    (200, lambda h: json.dumps({'choices': [{'message': {'content': f"key {h['Authorization'].split()[1]} ok"}}]})),  # in the answer
])
def test_the_key_a_server_echoes_reaches_neither_the_run_folder_nor_the_terminal(tmp_path, l0_data, status, body):
    with Echo(status, body) as url:
        r = l0kit('eval', '--data', l0_data, '--split', 'short', '--model', f'openai:{url}#sim,max_retries=0', '--voters', '1',
                  '--out', tmp_path / 'run', '--no-progress', env={'OPENAI_API_KEY': KEY})
    written = b''.join(tree(tmp_path / 'run').values()).decode()
    assert 'redacted' in written + r.stderr + r.stdout, (r.stderr, written[:2000])  # the server's text is there, cleaned
    for part in (KEY, KEY[:12], 'hostile0123'):
        assert part not in written and part not in r.stdout and part not in r.stderr, (part, r.stderr, written[:2000])


def test_what_the_server_says_of_itself_is_recorded_without_the_key(tmp_path, l0_data):
    "GET /models and GET /version answers are kept in run.json (`model_info.server`): an echoed key is cleaned there, not dropped."
    with Echo(200, lambda h: json.dumps({'choices': [{'message': {'content': 'L2,x:1'}, 'finish_reason': 'stop'}]})) as url:
        r = l0kit('eval', '--data', l0_data, '--split', 'short', '--model', f'openai:{url}#sim,max_retries=0', '--voters', '1',
                  '--out', tmp_path / 'run', '--no-progress', env={'OPENAI_API_KEY': KEY})
    assert r.returncode == 0, r.stderr
    server = json.loads((tmp_path / 'run' / 'run.json').read_text())['model_info']['server']
    assert server['version'] == '0.1 for Bearer [redacted]', server
    assert server['models'][0]['id'] == 'sim' and '[redacted]' in json.dumps(server['models'][0]), server
    for part in (KEY, KEY[:12], 'hostile0123'):
        assert part not in json.dumps(server) and part not in r.stdout + r.stderr, part


def test_redaction_keeps_the_error_shape_the_client_parses():
    "`_refused` reads `HTTP 400: {json}`: a redacted body is still that JSON, and its param still found."
    from l0kit.backends.openai_http import redact
    body = json.dumps({'error': {'message': f"max_tokens unsupported (auth Bearer {KEY}, also sk-other12345678)", 'param': 'max_tokens'}})
    text = f"HTTP 400: {redact(body, KEY, 300)}"
    err = json.loads(text.partition(': ')[2])['error']
    assert err['param'] == 'max_tokens' and err['message'] == 'max_tokens unsupported (auth Bearer [redacted], also [redacted])'
    assert redact(f'key={KEY}x', KEY) == 'key=[redacted]x' and redact('no secret here') == 'no secret here'
    assert redact(json.dumps({'k': 'a"b\\c'}), 'a"b\\c') == '{"k": "[redacted]"}'  # the key as JSON writes it


# ---------------------------------------------------------------- class 9: one line, no traceback

def test_malformed_gguf_files_are_one_line(tmp_path, l0_data):
    short, noise = tmp_path / 'short.gguf', tmp_path / 'noise.gguf'
    short.write_bytes(b'GGUF\x03\x00\x00\x00garbage')  # the magic, then a header cut short (transformers' reader: struct.error)
    noise.write_bytes(bytes(range(256)) * 20)
    common = ('--data', l0_data, '--split', 'short', '--voters', '1', '--no-progress')
    one_line(l0kit('eval', *common, '--model', f'gguf:{short}', '--out', tmp_path / 'r1'), 'not a GGUF file transformers can read')
    one_line(l0kit('eval', *common, '--model', f'gguf:{noise}', '--out', tmp_path / 'r2'), 'could not load')
    pytest.importorskip('llama_cpp')
    one_line(l0kit('eval', *common, '--model', f'llamacpp:{short}', '--out', tmp_path / 'r3'), 'not a GGUF file llama.cpp can read')


@pytest.mark.parametrize('yaml,words', [
    ('hidden_size: 1000000\nheads: 4\n', 'TrainConfig.hidden_size must be at most 16384'),
    ('hidden_size: 16384\nheads: 4\nintermediate_size: 65536\nlayers: 256\n', 'more than the trainer'),   # within each bound, too big together
    ('context: 100000000000\n', 'TrainConfig.context must be at most 131072'),
    ('steps: 1000000000000\n', 'TrainConfig.steps must be at most'),
    ('workers: {n}\nthreads: {n}\nbatch_size: {n}\n'.format(n=len(os.sched_getaffinity(0)) + 1), 'at most one worker per CPU'),  # a CPU short
])
def test_a_training_config_past_the_machine_is_one_line(tmp_path, yaml, words):
    (tmp_path / 'c.yaml').write_text(yaml)
    one_line(l0kit('train', '--config', tmp_path / 'c.yaml', '--out', tmp_path / 'org', '--quiet', timeout=120), words)
    assert not (tmp_path / 'org').exists()


def test_cards_of_the_wrong_shape_are_one_line(tmp_path, l0_data):
    as_list = tmp_path / 'list'; as_list.mkdir()
    (as_list / 'card.json').write_text(json.dumps({'benchmark': ['l0'], 'splits': ['short']}))
    one_line(l0kit('eval', '--data', as_list, '--split', 'short', '--model', 'simulated', '--out', tmp_path / 'r1', '--no-progress'),
             "benchmark must be a benchmark's name, got ['l0']")
    no_gen = tmp_path / 'nogen'; no_gen.mkdir()
    card = json.loads((l0_data / 'card.json').read_text()); del card['config']['gen']
    (no_gen / 'card.json').write_text(json.dumps(card))
    for f in l0_data.glob('*.jsonl.gz'): (no_gen / f.name).write_bytes(f.read_bytes())
    one_line(l0kit('eval', '--data', no_gen, '--split', 'short', '--model', 'simulated', '--out', tmp_path / 'r2', '--no-progress'),
             'has no generator settings (config.gen)')
    org = tmp_path / 'org'; org.mkdir(); (org / 'train_card.json').write_text('[1, 2]')
    from l0kit.protocol.config import ConfigError
    from l0kit.organism.train import load_card
    with pytest.raises(ConfigError, match="not a training card of the kit's"): load_card(org)


@pytest.fixture(scope='module')
def l0_run(tmp_path_factory, l0_data) -> Path:
    "A finished run of the simulated model, made once; each test corrupts a copy. A plain copy reports and resumes."
    run = tmp_path_factory.mktemp('run') / 'run'
    eval_args = ('eval', '--data', l0_data, '--split', 'short', '--model', 'simulated', '--voters', '2', '--no-progress')
    assert l0kit(*eval_args, '--out', run).returncode == 0
    copy = run.with_name('copy'); shutil.copytree(run, copy)
    r, e = l0kit('report', copy), l0kit(*eval_args, '--out', copy)
    assert (r.returncode, e.returncode) == (0, 0) and 'already there' in e.stdout + e.stderr, (r.stderr, e.stdout, e.stderr)
    return run


@pytest.mark.parametrize('field,value', [('benchmark', ['l0']), ('run_config', 'x'), ('run_config', {'voters': '2'}), ('model_info', []),
                                         ('split', ['short']), ('limit', '3'), ('shard', 12), ('resumes', {}), ('format', '2')])
def test_run_json_fields_of_the_wrong_type_are_one_line(tmp_path, l0_data, l0_run, field, value):
    run = tmp_path / 'run'; shutil.copytree(l0_run, run)
    meta = json.loads((run / 'run.json').read_text()); meta[field] = value; (run / 'run.json').write_text(json.dumps(meta))
    before = tree(run)
    for args in (('report', run), ('eval', '--data', l0_data, '--split', 'short', '--model', 'simulated', '--voters', '2', '--out', run, '--no-progress')):
        r = l0kit(*args)
        assert r.returncode != 0 and 'Traceback' not in r.stderr and len(r.stderr.strip().splitlines()) == 1, (args[0], r.stderr)
    assert tree(run) == before


# ---------------------------------------------------------------- class 6: a chat template without bound

BOMBS = {
    'range': "{% for i in range(10**9) %}x{% endfor %}",
    'loops': "{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}",
    'output': "{% for i in range(99999) %}{% for j in range(99999) %}xxxxxxxxxxxxxxxx{% endfor %}{% endfor %}",
    'repeat': "{{ 'x' * 10**10 }}",
    'folded': "{{ 'x' * 500000000 }}",  # a constant: a compiler that folds constants builds its 500 MB before any render
    'doubling': "{% set ns = namespace(s='x') %}{% for i in range(60) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}",
    'ljust': "{{ 'x'.ljust(10**10) }}",
    'center': "{{ 'x' | center(10**10) }}",
    'format': "{{ '%10000000000d' % 1 }}",
    'join': "{{ range(99999) | map('string') | join('y' * 99999) }}",
    'long': 'x' * 300_000,
}

RENDER = """
import json, sys, time
from types import SimpleNamespace
from l0kit.backends.chat_template import ChatTemplateError
msgs, template = [{'role': 'user', 'content': 'hi'}], sys.stdin.read()
if sys.argv[1] == 'llamacpp':
    from l0kit.backends.llamacpp import bounded_chat_formatter
    render = lambda: bounded_chat_formatter(template, '</s>', '<s>')(messages=msgs)
else:  # the transformers backend's path: a tokenizer's chat_template
    from l0kit.backends.chat_template import render_chat, _transformers_environment
    from l0kit.protocol.prompt import Prompt
    _transformers_environment()  # transformers' own environment, made before the clock starts
    render = lambda: render_chat(Prompt(msgs), SimpleNamespace(chat_template=template, special_tokens_map={'eos_token': '</s>'}))
t0 = time.perf_counter()
try: render(); out = 'rendered'
except ChatTemplateError as e: out = str(e)
print(json.dumps([out, time.perf_counter() - t0, int(next(l for l in open('/proc/self/status') if l.startswith('VmHWM:')).split()[1]) / 1024]))  # VmHWM: ru_maxrss keeps a forked parent's peak
"""


@pytest.mark.parametrize('engine', ['llamacpp', 'transformers'])
@pytest.mark.parametrize('name', list(BOMBS))
def test_a_chat_template_bomb_is_refused_within_bounds(name, engine):
    "Each bomb expands to gigabytes or runs for hours unbounded; rendered here, by each engine's path, in a process of at most 2 GiB of address space."
    if engine == 'llamacpp': pytest.importorskip('llama_cpp')
    r = subprocess.run([sys.executable, '-c', RENDER, engine], input=BOMBS[name], capture_output=True, text=True, timeout=120,
                       env={**os.environ, 'PYTHONPATH': str(ROOT)}, preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30)))
    assert r.returncode == 0, r.stderr[-2000:]
    message, seconds, peak_mib = json.loads(r.stdout)
    assert message.startswith("the model's chat template ") and 'bound' in message, message
    assert seconds < 20 and peak_mib < 200, (seconds, peak_mib)


def test_a_model_folder_whose_template_is_a_bomb_is_one_line(tmp_path, l0_data):
    "`hf:DIR` whose chat template is a bomb: refused when the model is loaded, in one line, within the memory a real eval needs."
    from tiny_model import tiny_llama_dir  # tests/tiny_model.py
    import shutil
    d = tmp_path / 'model'; shutil.copytree(tiny_llama_dir(), d)
    (d / 'chat_template.jinja').write_text(BOMBS['repeat'])  # where transformers saves a tokenizer's template
    r = l0kit('eval', '--data', l0_data, '--split', 'short', '--model', f'hf:{d},device=cpu', '--voters', '1', '--out', tmp_path / 'run', '--no-progress')
    one_line(r, "the model's chat template repeats a value that often")


def test_a_real_template_renders_as_llama_cpp_renders_it():
    "The bounds change nothing for a template of the usual kind (namespace, macros, loop, tojson, raise_exception, strftime_now)."
    pytest.importorskip('llama_cpp')
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter
    from l0kit.backends.llamacpp import bounded_chat_formatter
    t = textwrap.dedent("""\
        {%- macro show(m) -%}<|{{ m['role'] }}|>{{ m['content'] | trim }}{%- endmacro -%}
        {%- set ns = namespace(n=0) -%}
        {{ bos_token }}{% for m in messages %}{% if m['role'] not in ['system', 'user', 'assistant'] %}{{ raise_exception('role') }}{% endif %}
        {%- set ns.n = ns.n + m['content'] | length %}{{ show(m) }}{{ loop.index }}{{ eos_token }}
        {% endfor %}{{ messages | tojson }}{{ ns.n }}{{ '%5d' % 3 }}{{ strftime_now('%Y')[:0] }}{% if add_generation_prompt %}<|assistant|>{% endif %}""")
    msgs = [{'role': 'system', 'content': ' be exact '}, {'role': 'user', 'content': 'x = [1, 2]\n  y ü'}]
    want = Jinja2ChatFormatter(t, eos_token='</s>', bos_token='<s>')(messages=msgs).prompt
    assert bounded_chat_formatter(t, '</s>', '<s>')(messages=msgs).prompt == want
    assert '<|user|>x = [1, 2]\n  y ü2</s>' in want and want.endswith('   3<|assistant|>')


# ---------------------------------------------------------------- class 10: a plugin that raises at import

@pytest.fixture
def broken_plugin(tmp_path) -> dict:
    "A tmp site folder with an installed distribution whose `l0kit.benchmarks` entry point imports a module that raises."
    site = tmp_path / 'site'
    dist = site / 'l0kit_broken-1.0.dist-info'; dist.mkdir(parents=True)
    (dist / 'METADATA').write_text('Metadata-Version: 2.1\nName: l0kit-broken\nVersion: 1.0\n')
    (dist / 'entry_points.txt').write_text('[l0kit.benchmarks]\nbroken = l0kit_broken_plugin:Broken\n')
    marker = tmp_path / 'imported'  # written when the plugin's module is imported: a plugin is loaded only when it is used
    (site / 'l0kit_broken_plugin.py').write_text(f'open({str(marker)!r}, "a").write("x")\nraise RuntimeError("this plugin is broken on purpose")\n')
    return {'PYTHONPATH': str(site)}


def test_a_broken_plugin_is_unavailable_and_the_kit_carries_on(tmp_path, broken_plugin, l0_data):
    imported = tmp_path / 'imported'
    r = l0kit('--help', env=broken_plugin)
    assert r.returncode == 0 and 'Traceback' not in r.stderr, r.stderr
    assert 'broken' in r.stdout and 'loaded when run' in r.stdout and not imported.exists()  # listed, not imported
    r = l0kit('eval', '--data', l0_data, '--split', 'short', '--model', 'simulated', '--voters', '1', '--out', tmp_path / 'run', '--no-progress',
              env=broken_plugin)
    assert r.returncode == 0, r.stderr
    assert len((tmp_path / 'run' / 'responses.jsonl').read_text().splitlines()) == 2   # 2 programs x 1 voter, counted by hand
    assert l0kit('generate', '--out', tmp_path / 'd', '--limit', '1', '--quiet', env=broken_plugin).returncode == 0
    assert not imported.exists()  # --help, an L0 eval and generate never imported the plugin
    r = l0kit('models', env=broken_plugin)  # lists every benchmark's simulated model: it loads the plugins, and says which is broken
    assert r.returncode == 0 and 'simulated' in r.stdout and "benchmark 'broken' is unavailable" in r.stdout, r.stderr
    assert imported.read_text() == 'x'  # once: each command imports a plugin at most once
    one_line(l0kit('broken', 'anything', env=broken_plugin), "l0kit broken: error: benchmark 'broken' is unavailable", 'RuntimeError: this plugin is broken on purpose')
    assert imported.read_text() == 'xx'  # used, so imported
    one_line(l0kit('generate', '--benchmark', 'broken', '--out', tmp_path / 'd2', env=broken_plugin), "benchmark 'broken' is unavailable")
    one_line(l0kit('eval', '--benchmark', 'broken', '--data', l0_data, '--split', 'short', '--model', 'simulated', '--out', tmp_path / 'r2',
                   env=broken_plugin), "benchmark 'broken' is unavailable")
