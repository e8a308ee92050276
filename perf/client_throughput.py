"""Requests per second of the kit's OpenAI-compatible client against a bare aiohttp client, same server, same run.

    python perf/client_throughput.py [--programs 200] [--voters 31] [--concurrency 256] [--servers 1]

Starts instant OpenAI-compatible servers on localhost (one aiohttp process each, answering every chat request at
once with the same short completion), then sends the same requests through:

- a bare aiohttp client: the request bodies built beforehand, `concurrency` requests in flight per server, each reply
  read and decoded as JSON; nothing else;
- the kit: `run_eval` of the L0 benchmark (`programs` x `voters` responses) through `openai:URL#instant`, which builds
  each prompt, sends it, and writes and fsyncs each answer's record in the run folder (`l0kit eval` without the CLI).

The bare client runs before and after the kit and their mean is the reference, so load that changes during the run
weighs on both. Prints requests/s, client CPU per request (this process only: the servers are other processes), the
ratio, the machine and its load average before and after. The servers and the client share the machine's cores: the
figures are those of this machine, a client and its servers together.
"""
import argparse, asyncio, json, os, platform, socket, subprocess, sys, tempfile, time
from pathlib import Path

import aiohttp

SERVER = r"""
import json, sys
from aiohttp import web
ANSWER = json.dumps({'choices': [{'index': 0, 'message': {'role': 'assistant', 'content': 'L2,x:1\nL3,x:2\nL4,x:3'},
                                   'finish_reason': 'stop'}], 'usage': {'prompt_tokens': 700, 'completion_tokens': 12}}).encode()
async def models(r): return web.json_response({'data': [{'id': 'instant'}]})
async def chat(r):
    await r.read()
    return web.Response(body=ANSWER, content_type='application/json')
app = web.Application(client_max_size=2 ** 24)
app.router.add_get('/v1/models', models); app.router.add_post('/v1/chat/completions', chat)
web.run_app(app, host='127.0.0.1', port=int(sys.argv[1]), print=None, access_log=None, backlog=4096)
"""


def free_port() -> int:
    s = socket.socket(); s.bind(('127.0.0.1', 0)); port = s.getsockname()[1]; s.close(); return port


def start_servers(k: int) -> tuple[list, list]:
    "k instant servers, each its own process; (their processes, their base URLs), once they answer."
    import requests
    procs, urls = [], []
    for _ in range(k):
        port = free_port()
        procs.append(subprocess.Popen([sys.executable, '-c', SERVER, str(port)]))
        urls.append(f'http://127.0.0.1:{port}/v1')
    for u in urls:
        for _ in range(200):
            try:
                if requests.get(u + '/models', timeout=1).status_code == 200: break
            except requests.RequestException: time.sleep(0.05)
        else: raise SystemExit(f"the instant server at {u} did not start")
    return procs, urls


def l0_items(programs: int, seed: int = 0) -> list:
    "`programs` short L0 programs with their demonstrations (generated here, about 30 ms each)."
    from l0kit.l0.dataset import L0DataConfig, SplitSpec, build_dataset, save_dataset
    from l0kit.l0.generator import GenConfig
    from l0kit.l0.benchmark import L0Benchmark
    items, card = build_dataset(L0DataConfig('bench', GenConfig(), [SplitSpec('short', 1, 20, programs)]), seed, workers=os.cpu_count() or 1)
    d = Path(tempfile.mkdtemp(prefix='l0kit-bench-data-'))
    save_dataset(items, card, d)
    return L0Benchmark().load(d, 'short')


async def bare(urls: list, bodies: list, concurrency: int) -> float:
    "Seconds for a bare aiohttp client to POST every body and decode every reply, `concurrency` in flight per server."
    sessions = [aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) for _ in urls]
    jobs = iter(range(len(bodies)))
    async def worker(k):
        s, url = sessions[k], urls[k] + '/chat/completions'
        for i in jobs:
            async with s.post(url, data=bodies[i], headers={'Content-Type': 'application/json'}) as r:
                json.loads(await r.read())
    t0 = time.perf_counter()
    await asyncio.gather(*(worker(k) for k in range(len(urls)) for _ in range(concurrency)))
    dt = time.perf_counter() - t0
    for s in sessions: await s.close()
    return dt


def timed(fn):
    "(result, wall seconds, CPU seconds of this process)."
    c0, t0 = time.process_time(), time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0, time.process_time() - c0


def machine() -> str:
    cpu = next((l.split(':', 1)[1].strip() for l in open('/proc/cpuinfo') if l.startswith('model name')), platform.processor()) \
        if Path('/proc/cpuinfo').exists() else platform.processor()
    return (f"{cpu}, {os.cpu_count()} logical CPUs ({len(os.sched_getaffinity(0))} usable), Python {platform.python_version()}, "
            f"aiohttp {aiohttp.__version__}, {platform.system()} {platform.release()}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--programs', type=int, default=200)
    ap.add_argument('--voters', type=int, default=31)
    ap.add_argument('--concurrency', type=int, default=256, help='requests in flight per server, for both clients')
    ap.add_argument('--servers', type=int, default=1, help='instant server processes')
    a = ap.parse_args(argv)
    from l0kit.protocol.models import load_model
    from l0kit.runs.runner import RunConfig, build_prompts, run_eval
    from l0kit.backends.openai_http import request_body
    from l0kit.protocol.models import GenerationParams
    from l0kit.l0.benchmark import L0Benchmark

    print(f"machine: {machine()}")
    load0 = os.getloadavg()
    print(f"load average before: {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}")
    items = l0_items(a.programs)
    procs, urls = start_servers(a.servers)
    try:
        bench, run = L0Benchmark(), RunConfig(voters=a.voters)
        spec = f"openai:{'|'.join(urls)}#instant,concurrency={a.concurrency}"
        with load_model(spec) as model:
            pairs = [(it, v) for it in items for v in range(a.voters)]
            bench.prepare(items)
            bodies = [json.dumps(request_body(p, 'instant', GenerationParams())).encode() for p in build_prompts(bench, model, run, pairs)]
            n = len(bodies)
            _, bare1, bare1_cpu = timed(lambda: asyncio.run(bare(urls, bodies, a.concurrency)))
            out = Path(tempfile.mkdtemp(prefix='l0kit-bench-run-')) / 'run'
            summary, kit, kit_cpu = timed(lambda: run_eval(bench, model, items, out, run, data='(generated)', split='short', progress=False))
            _, bare2, bare2_cpu = timed(lambda: asyncio.run(bare(urls, bodies, a.concurrency)))
    finally:
        for p in procs: p.terminate()
        for p in procs: p.wait()
    assert summary['complete'] == n and summary['new'] == n, summary
    bare_rate, kit_rate = 2 * n / (bare1 + bare2), n / kit
    print(f"requests: {n:,} ({a.programs} programs x {a.voters} voters), {a.servers} server(s), {a.concurrency} in flight per server")
    print(f"bare aiohttp client: {bare_rate:,.0f} requests/s ({n / bare1:,.0f} before, {n / bare2:,.0f} after the kit), "
          f"{1000 * (bare1_cpu + bare2_cpu) / (2 * n):.3f} ms client CPU per request")
    print(f"kit (run_eval, records fsynced): {kit_rate:,.0f} requests/s in {kit:.1f} s, {1000 * kit_cpu / n:.3f} ms client CPU per request")
    print(f"ratio kit / bare: {kit_rate / bare_rate:.2f}")
    load1 = os.getloadavg()
    print(f"load average after: {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}")
    return dict(requests=n, bare_rate=bare_rate, kit_rate=kit_rate, ratio=kit_rate / bare_rate)


if __name__ == '__main__':
    main()
