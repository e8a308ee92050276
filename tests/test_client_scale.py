"""The OpenAI-compatible client at scale: thousands of requests in flight across servers, failover under that load,
Ctrl-C keeping (and counting exactly) what was answered, and the throughput benchmark at a reduced size."""
import asyncio, contextlib, json, os, signal, subprocess, sys, textwrap, threading, time, warnings
from pathlib import Path
import pytest
from aiohttp import web
from l0kit.protocol.models import GenerationParams, load_model
from l0kit.runs.format import read_records

ROOT = Path(__file__).resolve().parents[1]


class Instant:
    """An OpenAI-compatible server in a thread of its own: answers after `delay` seconds (or 503 when `broken`), counting
    requests in flight. It honours `n` (n choices; one, as llama.cpp, when `one_choice`) and `seed`: with a seed, choice i
    of a request answers `<prompt's last 12 characters>|s<seed>|c<i>`."""
    def __init__(self, delay=0.0, broken=False, one_choice=False):
        self.delay, self.broken, self.one_choice, self.inflight, self.peak, self.posts = delay, broken, one_choice, 0, 0, 0
        self.bodies = []
        self.loop, ready = asyncio.new_event_loop(), threading.Event()
        async def models(r): return web.json_response({'data': [{'id': 'm'}]})
        async def chat(r):
            body = await r.json()
            self.posts += 1; self.inflight += 1; self.peak = max(self.peak, self.inflight)
            try:
                await asyncio.sleep(self.delay)
                if self.broken: return web.json_response({'error': 'overloaded'}, status=503)
                self.bodies.append(body)
                text, seed = body['messages'][-1]['content'][-12:], body.get('seed')
                n = 1 if self.one_choice else body.get('n', 1)
                return web.json_response({'choices': [{'index': i, 'message': {'content': text if seed is None else f"{text}|s{seed}|c{i}"},
                                                       'finish_reason': 'stop'} for i in range(n)],
                                          'usage': {'prompt_tokens': 5, 'completion_tokens': 3 * n}})
            finally: self.inflight -= 1
        async def start():
            app = web.Application(); app.router.add_get('/v1/models', models); app.router.add_post('/v1/chat/completions', chat)
            self.runner = web.AppRunner(app, access_log=None); await self.runner.setup()
            site = web.TCPSite(self.runner, '127.0.0.1', 0, backlog=4096); await site.start()
            self.url = f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}/v1"
        def main():
            asyncio.set_event_loop(self.loop); self.loop.run_until_complete(start()); ready.set(); self.loop.run_forever()
        self.thread = threading.Thread(target=main, daemon=True); self.thread.start(); ready.wait(10)

    def close(self):
        asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop); self.thread.join(10)


def open_files(want: int) -> int:
    "Raise this process's open-file limit towards `want` (as far as the hard limit allows); the limit it has."
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < want:
        with contextlib.suppress(ValueError, OSError): resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, hard), hard)); soft = min(want, hard)
    return soft


def test_thousands_in_flight_across_servers():
    conc = min(1000, (open_files(4500) - 200) // 4)  # each connection is two sockets here, client and server
    assert conc >= 200, f"this machine allows {conc * 4 + 200} open files; the test needs about 4,000"
    a, b = Instant(delay=0.5), Instant(delay=0.5)
    try:
        n = 3000
        with load_model(f'openai:{a.url}|{b.url}#m,concurrency={conc}') as m:
            t0 = time.monotonic()
            outs = m.generate([f'prompt {i:05d}' for i in range(n)])
            dt = time.monotonic() - t0
            info = m.info()
    finally: a.close(); b.close()
    assert [o[0].text for o in outs] == [f'prompt {i:05d}'[-12:] for i in range(n)]  # every answer, in order
    assert a.peak + b.peak >= 1.5 * conc, (a.peak, b.peak, conc)  # (with the usual limits) well over a thousand in flight at once
    assert dt < 3000 * 0.5 / 100, dt  # far from one at a time: 3,000 half-second requests in seconds, not 25 minutes at 1
    assert info['servers'][0]['answered'] + info['servers'][1]['answered'] == n


def test_failover_with_many_in_flight():
    good, bad = Instant(delay=0.05), Instant(delay=0.01, broken=True)
    try:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter('always')
            with load_model(f'openai:{bad.url}|{good.url}#m,concurrency=200,backoff=0.01,cooldown=600') as m:
                outs = m.generate([f'p{i}' for i in range(1000)])
                info = m.info()
    finally: good.close(); bad.close()
    assert all(o[0].error is None and o[0].meta['server'] == good.url for o in outs)
    assert info['servers'][1]['answered'] == 1000 and info['servers'][0]['handed_off'] == info['handed_off'] >= 1
    assert bad.posts <= 2 * 200 + 10  # set aside after its failures: its slots' first requests and their retries, no more
    assert any(bad.url in str(x.message) for x in w if x.category.__name__ == 'ServerFailover')


CTRL_C_RUN = textwrap.dedent("""
    import signal, sys
    signal.signal(signal.SIGINT, signal.default_int_handler)   # a background job's children start with Ctrl-C ignored
    import tests.test_runner as t
    from l0kit.protocol.models import load_model
    from l0kit.runs.runner import RunConfig, run_eval
    with load_model(sys.argv[2]) as m:
        try: run_eval(t.BENCH(), m, t.ITEMS, sys.argv[1], RunConfig(voters=200), progress=False)
        except KeyboardInterrupt as e: print('INTERRUPTED', e, flush=True); sys.exit(130)
""")


def test_ctrl_c_keeps_and_counts_what_was_answered(tmp_path):
    srv = Instant(delay=0.05)
    run, spec = tmp_path / 'run', f'openai:{srv.url}#m,concurrency=16'
    try:
        p = subprocess.Popen([sys.executable, '-c', CTRL_C_RUN, str(run), spec], cwd=ROOT, env={**os.environ, 'PYTHONPATH': str(ROOT)},
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        f, t0 = run / 'responses.jsonl', time.time()
        while (not f.exists() or f.read_bytes().count(b'\n') < 100) and time.time() - t0 < 60 and p.poll() is None: time.sleep(0.02)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
        assert p.returncode == 130, (out, err)
        saved = int(out.split('; ')[1].split(' new responses')[0])
        kept = read_records(run).records
        assert saved == len(kept) >= 100 and len(kept) < 6 * 200  # exactly what is on disk, and the run was cut short
        assert all(r.error is None for r in kept)  # requests in flight gave up without writing errors
        import tests.test_runner as t
        from l0kit.runs.runner import RunConfig, run_eval
        with load_model(spec) as m:
            s = run_eval(t.BENCH(), m, t.ITEMS, run, RunConfig(voters=200), progress=False)
        assert (s['skipped'], s['new'], s['complete']) == (saved, 1200 - saved, 1200)
    finally: srv.close()


@pytest.mark.parametrize('one_choice', [False, True])
def test_params_n_and_sampling_seeds(one_choice):
    """Three samples of each of two prompts with seeds 10 and 20, from a server that honours `n` (one request each, seed
    as given, choices 0-2) and from one that answers one choice (llama.cpp: asked again with the next seed), by hand."""
    srv = Instant(one_choice=one_choice)
    try:
        with load_model(f'openai:{srv.url}#m,concurrency=4') as m:
            outs = m.generate(['abc', 'defg'], GenerationParams(n=3, temperature=0.7), seeds=[10, 20])
    finally: srv.close()
    got = [[c.text for c in o] for o in outs]
    if one_choice:
        assert got == [['abc|s10|c0', 'abc|s11|c0', 'abc|s12|c0'], ['defg|s20|c0', 'defg|s21|c0', 'defg|s22|c0']]
        assert sorted((b['seed'], b['n']) for b in srv.bodies) == [(10, 3), (11, 2), (12, 1), (20, 3), (21, 2), (22, 1)]
    else:
        assert got == [['abc|s10|c0', 'abc|s10|c1', 'abc|s10|c2'], ['defg|s20|c0', 'defg|s20|c1', 'defg|s20|c2']]
        assert sorted((b['seed'], b['n']) for b in srv.bodies) == [(10, 3), (20, 3)]
    assert all(b['temperature'] == 0.7 for b in srv.bodies)


def test_client_throughput_benchmark_reduced():
    sys.path.insert(0, str(ROOT / 'perf'))
    import client_throughput
    r = client_throughput.main(['--programs', '4', '--voters', '5', '--concurrency', '16'])
    assert r['requests'] == 20 and r['kit_rate'] > 0 and r['bare_rate'] > 0


def test_sim_server_honours_n_and_seed():
    "The shared test server (tests/sim_server.py) as the kit's client sees it: n choices, each with its own seed, by hand."
    from sim_server import SimServer
    srv = SimServer(lambda messages, seed: f"{messages[-1]['content']}/{seed}")
    with srv as url, load_model(f'openai:{url}#sim') as m:
        outs = m.generate(['q'], GenerationParams(n=2, temperature=1.0), seeds=[5])
        plain = m.generate(['r'], GenerationParams(n=2, temperature=1.0))
    assert [c.text for c in outs[0]] == ['q/5', 'q/6'] and [c.text for c in plain[0]] == ['r/None', 'r/None']
    assert [(b['n'], b.get('seed')) for b in srv.requests] == [(2, 5), (2, None)]
