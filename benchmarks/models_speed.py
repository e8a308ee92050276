"""Speed of the model backends on this machine.

1. transformers backend, embedded SmolLM2-135M-Instruct on CPU: generated tokens per second at batch 1 and batched,
   on real L0 prompts (default setup, 2 demonstrations), greedy, a fixed budget of new tokens. Reported end to end
   (prefill of the long prompts included) and for decoding alone (the time to the first token subtracted).
2. OpenAI-compatible HTTP backend against a llama.cpp server (llama-cpp-python[server]) serving the packaged SmolLM2
   GGUF: requests per second with 1 request in flight and with several.

Usage: python benchmarks/models_speed.py [--prompts 16] [--new-tokens 48] [--batch 8] [--dtype float32] [--threads 0] [--prompt-kind l0|short]
                                         [--concurrency 4] [--requests 16] [--skip-server] [--skip-transformers]
"""
import argparse, importlib.util, os, socket, subprocess, sys, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import requests
from l0kit.harness.benchmark import get_benchmark
from l0kit.l0.benchmark import make_l0_item
from l0kit.harness.models import GenerationParams, load_model
from l0kit.harness.runner import EvalConfig

PROGRAM = ("def function(x, y, lst_x, cond_x):\n    lst_x.append(x)\n    cnter_0 = 0\n    cond_a = cnter_0 != 4\n"
           "    while cond_a:\n        lst_x.pop()\n        y = y + 1\n        cnter_0 = cnter_0 + 2\n        cond_a = cnter_0 != 4\n"
           "    if cond_x:\n        x = 3 - y\n    lst_x.append(y)\n    return\n")

def l0_prompts(n):
    b = get_benchmark('l0')
    pool = [dict(x=i % 10, y=(3 * i) % 10, lst_x=[i % 7, 5, (2 * i) % 9, 1], cond_x=i % 2 == 0) for i in range(16)]
    items = [make_l0_item(f'speed-{k}', PROGRAM, dict(x=k % 10, y=k % 4, lst_x=[k % 6, 2, 8], cond_x=k % 3 == 0), pool) for k in range(n)]
    return [b.build_prompt(it, 0, EvalConfig(shots=2)) for it in items]

def tokens_per_second(model, prompts, params, batch):
    model.batch_size = batch
    t0 = time.perf_counter()
    outs = model.generate(prompts, params)
    dt = time.perf_counter() - t0
    toks = sum(o[0].completion_tokens for o in outs)
    return toks / dt, toks, dt

def bench_transformers(a):
    m = load_model(f'smollm2:device=cpu,dtype={a.dtype},threads={a.threads}')
    prompts = l0_prompts(a.prompts) if a.prompt_kind == 'l0' else \
              [f"Write the numbers from {k} to {k + 200}, separated by commas." for k in range(a.prompts)]
    params = GenerationParams(max_new_tokens=a.new_tokens)
    prompt_toks = sum(m.count_tokens(m.render(p)) for p in prompts) / len(prompts)
    m.generate(prompts[:1], GenerationParams(max_new_tokens=4))  # warm-up
    print(f"transformers, SmolLM2-135M-Instruct, CPU ({os.cpu_count()} cores, torch threads {__import__('torch').get_num_threads()}), "
          f"dtype {a.dtype}, {len(prompts)} {a.prompt_kind} prompts of {prompt_toks:.0f} tokens on average, greedy, up to {a.new_tokens} new tokens")
    res, dec = {}, {}
    for b in (1, a.batch):
        _, _, prefill = tokens_per_second(m, prompts, GenerationParams(max_new_tokens=1), b)  # time to the first token
        tps, toks, dt = tokens_per_second(m, prompts, params, b)
        res[b], dec[b] = tps, (toks - len(prompts)) / max(dt - prefill, 1e-9)
        print(f"  batch {b:>2}: {toks} tokens in {dt:.1f} s = {tps:.1f} generated tokens/s end to end; "
              f"prefill {prefill:.1f} s, decoding {dec[b]:.1f} tokens/s")
    print(f"  batched / batch 1: {res[a.batch] / res[1]:.2f}x end to end, {dec[a.batch] / dec[1]:.2f}x decoding")

def bench_server(a):
    if importlib.util.find_spec('llama_cpp') is None:
        print('llama.cpp server: skipped (pip install "llama-cpp-python[server]")'); return
    from l0kit.harness.hf import smollm2_gguf
    gguf, _ = smollm2_gguf()
    s = socket.socket(); s.bind(('127.0.0.1', 0)); port = s.getsockname()[1]; s.close()
    proc = subprocess.Popen([sys.executable, '-m', 'llama_cpp.server', '--model', str(gguf), '--port', str(port), '--n_ctx', '4096',
                             '--n_threads', str(a.threads or os.cpu_count())], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f'http://127.0.0.1:{port}/v1'
    try:
        for _ in range(240):
            try:
                if requests.get(url + '/models', timeout=1).ok: break
            except requests.RequestException: time.sleep(0.5)
        prompts = l0_prompts(a.requests)
        params = GenerationParams(max_new_tokens=a.new_tokens)
        print(f"llama.cpp server (llama-cpp-python), SmolLM2 Q4_1 GGUF, {a.requests} L0 chat requests, up to {a.new_tokens} new tokens")
        for c in (1, a.concurrency):
            m = load_model(f'openai:{url},concurrency={c}')
            m.generate(prompts[:1], GenerationParams(max_new_tokens=4))
            t0 = time.perf_counter(); outs = m.generate(prompts, params); dt = time.perf_counter() - t0
            errs = sum(o[0].error is not None for o in outs); toks = sum(o[0].completion_tokens or 0 for o in outs)
            print(f"  concurrency {c:>2}: {len(prompts) / dt:.2f} requests/s, {toks / dt:.1f} generated tokens/s ({dt:.1f} s, {errs} errors)")
    finally:
        proc.terminate(); proc.wait(10)

if __name__ == '__main__':
    p = argparse.ArgumentParser()
    p.add_argument('--prompts', type=int, default=16); p.add_argument('--new-tokens', type=int, default=48)
    p.add_argument('--batch', type=int, default=8); p.add_argument('--dtype', default='float32')
    p.add_argument('--threads', type=int, default=0, help='torch CPU threads (0: one per core)')
    p.add_argument('--prompt-kind', choices=['l0', 'short'], default='l0', help='real L0 prompts or a one-line request')
    p.add_argument('--concurrency', type=int, default=4); p.add_argument('--requests', type=int, default=16)
    p.add_argument('--skip-server', action='store_true'); p.add_argument('--skip-transformers', action='store_true')
    a = p.parse_args()
    if not a.skip_transformers: bench_transformers(a)
    if not a.skip_server: bench_server(a)
