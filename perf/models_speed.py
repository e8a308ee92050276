"""Speed of the model backends on this machine, in one run on the same prompts.

1. The embedded SmolLM2-135M-Instruct on llama.cpp as the main job runs it (`smollm2`: in process, the packaged Q4_1
   GGUF de-quantized once, `weights=auto`: bfloat16 where llama.cpp was built with AVX512-BF16, float32 elsewhere;
   flash attention; a prompt's voters and neighbours decoded together, the KV cache of a shared prefix reused) against
   transformers (the same GGUF de-quantized, float32 on CPU, batched):
   seconds per response, generated tokens per second, and the ratio. Real L0 prompts (default setup, four
   demonstrations), greedy, a fixed budget of new tokens. llama.cpp also runs without its prefix cache, so the gain of
   the cache is shown apart; and with other thread counts when `--llamacpp-threads` lists them.
   Each engine's prompt (prefill) and generation FLOP/s are printed against the machine's peak: a pass with one new
   token per prompt times the prefill, the full pass less that times generation, and the work is 2 x parameters
   FLOPs per token (the matrix products of a forward pass; attention over the context, small at these lengths, is
   left out, so the figures are slight underestimates). The peak is measured here: the float32 matrix product
   (numpy's BLAS, every core) of two 2048 x 2048 matrices, the best of several, the rate a well-tuned float32 kernel
   reaches on this machine; the theoretical peak (cores x clock x FLOPs per cycle) is printed when the CPU's flags
   and clock are known.
2. (`--server`) the OpenAI-compatible HTTP backend against a llama.cpp server (`python -m llama_cpp.server`) serving
   the same GGUF: requests per second with 1 request in flight and with several.

   The 4-bit file itself (`weights=file`) runs three ways after the default: its sequences decoded together
   (`--parallel`), one sequence at a time (`parallel=1`, llama-cpp-python's own way), and together without the prefix
   cache. `--temperature T` samples `--samples` completions a prompt (seeded) instead of greedy decoding; the prefill
   split times one greedy token. `--weights f32,bf16` also times the file's weights de-quantized to float32 and to
   bfloat16 (`weights=...`, cached by the kit); `--llamacpp-options` adds options to every llama.cpp run
   (`flash_attn=false`: attention as separate products). The greedy texts are compared with transformers'.

Usage: python perf/models_speed.py [--prompts 8] [--shots 4] [--new-tokens 64] [--batch 8] [--dtype float32]
                                         [--temperature 0] [--samples 4] [--parallel 8] [--weights f32,bf16]
                                         [--threads 0] [--llamacpp-threads 0,2] [--llamacpp-options flash_attn=false]
                                         [--skip-transformers] [--server]
"""
import argparse, os, socket, subprocess, sys, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import requests
from l0kit.protocol.benchmark import get_benchmark
from l0kit.l0.benchmark import make_l0_item
from l0kit.protocol.models import GenerationParams, load_model
from l0kit.backends.llamacpp import cpu_backend

PROGRAM = ("def function(x, y, lst_x, cond_x):\n    lst_x.append(x)\n    cnter_0 = 0\n    cond_a = cnter_0 != 4\n"
           "    while cond_a:\n        lst_x.pop()\n        y = y + 1\n        cnter_0 = cnter_0 + 2\n        cond_a = cnter_0 != 4\n"
           "    if cond_x:\n        x = 3 - y\n    lst_x.append(y)\n    return\n")

def l0_prompts(n, shots):
    "`n` L0 prompts of the default setup with `shots` demonstrations, one per item (voter 0)."
    b = get_benchmark('l0', shots=shots)
    pool = [dict(x=i % 10, y=(3 * i) % 10, lst_x=[i % 7, 5, (2 * i) % 9, 1], cond_x=i % 2 == 0) for i in range(16)]
    items = [make_l0_item(f'speed-{k}', PROGRAM, dict(x=k % 10, y=k % 4, lst_x=[k % 6, 2, 8], cond_x=k % 3 == 0), pool) for k in range(n)]
    return [b.build_prompt(it, 0) for it in items]

def machine_peak() -> tuple[float, str]:
    "The float32 FLOP/s of a large matrix product on every core (the best of several), and a line that says so."
    import numpy as np
    a, b = np.random.default_rng(0).random((2, 2048, 2048), dtype=np.float32)
    a @ b
    best = min(_t(lambda: a @ b) for _ in range(8))
    rate = 2 * 2048 ** 3 / best
    text = f"measured peak: {rate / 1e9:.1f} GFLOP/s float32 (2048 x 2048 matrix product, numpy BLAS, {os.cpu_count()} CPUs)"
    try:
        info = open('/proc/cpuinfo').read()
        flags, mhz = set(info.split('flags')[1].split(':')[1].split('\n')[0].split()), float(info.split('cpu MHz')[1].split(':')[1].split()[0])
        lanes = 16 if 'avx512f' in flags else 8 if 'avx2' in flags else 4
        theo = len(os.sched_getaffinity(0)) * mhz * 1e6 * lanes * 2 * 2  # two FMA units, 2 FLOPs per FMA
        text += f"; theoretical {theo / 1e9:.0f} GFLOP/s ({len(os.sched_getaffinity(0))} cores x {mhz / 1000:.2f} GHz x {lanes} float32 lanes x 2 FMA units x 2)"
    except (OSError, IndexError, ValueError): pass
    return rate, text

def _t(fn):
    t0 = time.perf_counter(); fn(); return time.perf_counter() - t0

def flops_line(n_params, prompt_tokens, t_prefill, gen_tokens, t_gen, peak) -> str:
    "Achieved prompt and generation FLOP/s (2 x parameters per token) against the peak."
    p = 2 * n_params * prompt_tokens / t_prefill
    text = f"    prompt {p / 1e9:6.1f} GFLOP/s ({p / peak:5.1%} of peak, {prompt_tokens / t_prefill:7.0f} tokens/s), "
    if t_gen < 0.05 * (t_prefill + t_gen) or not gen_tokens:  # the two passes' difference is noise: no rate
        return text + f"generation not timed apart (the full pass took {t_gen:+.2f} s more than the one-token pass)"
    g = 2 * n_params * gen_tokens / t_gen
    return text + f"generation {g / 1e9:6.2f} GFLOP/s ({g / peak:5.1%} of peak, {gen_tokens / t_gen:6.1f} tokens/s)"

def prefill_split(model, prompts, params, dt, toks, evaluated):
    "(prompt tokens evaluated, prefill seconds, generated tokens after the first, their seconds): a one-token pass times the prefill."
    one = GenerationParams(max_new_tokens=1)
    if hasattr(model, 'clear_cache'): model.clear_cache()
    _, t1, _, _ = timed(model, prompts, one)
    return evaluated, t1, max(0, toks - len(prompts) * params.n), dt - t1

def timed(model, prompts, params, seed=0):
    "Generated texts, seconds and generated tokens of one `generate` call."
    t0 = time.perf_counter()
    outs = model.generate(prompts, params, seeds=[seed + 100 * i for i in range(len(prompts))])
    dt = time.perf_counter() - t0
    assert all(o[0].error is None for o in outs), [o[0].error for o in outs if o[0].error]
    return [[c.text for c in o] for o in outs], dt, sum(c.completion_tokens for o in outs for c in o), outs

def line(label, dt, toks, n, base=None):
    r = f"  {label:<44} {dt / n:6.2f} s/response  {toks / dt:6.1f} generated tokens/s  ({dt:.1f} s, {toks} tokens)"
    return r + (f"  {base / dt:.2f}x transformers" if base else '')

def bench_engines(a):
    prompts = l0_prompts(a.prompts, a.shots)
    params = GenerationParams(max_new_tokens=a.new_tokens, temperature=a.temperature, n=a.samples if a.temperature > 0 else 1)
    mode = f"sampled (temperature {a.temperature}, {params.n} samples a prompt)" if a.temperature > 0 else 'greedy'
    res = {}
    more = f',{a.llamacpp_options}' if a.llamacpp_options else ''
    t0 = time.perf_counter(); lc = load_model('smollm2:backend=transformers' if a.skip_llamacpp else f'smollm2:parallel={a.parallel}{more}'); load_lc = time.perf_counter() - t0
    n_prompt = sum(lc.count_tokens(lc.render(p)) for p in prompts)
    quiet = os.getloadavg()
    print(f"load average before: {quiet[0]:.2f} {quiet[1]:.2f} {quiet[2]:.2f} (a quiet machine: below 0.1 x {os.cpu_count()} CPUs)")
    print(f"SmolLM2-135M-Instruct, CPU ({os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}), {len(prompts)} L0 prompts "
          f"({a.shots} demonstrations, {n_prompt} prompt tokens in all), {mode}, up to {a.new_tokens} new tokens each")
    peak, peak_text = machine_peak()
    print(f"  {peak_text}")
    if more: print(f"  every llama.cpp run with {a.llamacpp_options} (llama.cpp CPU variant: {cpu_backend()})")
    base = None
    if not a.skip_transformers:
        t0 = time.perf_counter()
        hf = load_model(f'smollm2:backend=transformers,device=cpu,dtype={a.dtype},threads={a.threads},batch_size={a.batch}')
        load_hf = time.perf_counter() - t0
        import torch
        hf.generate(prompts[:1], GenerationParams(max_new_tokens=2))  # warm-up
        texts, dt, toks, _ = timed(hf, prompts, params, a.seed)
        res['transformers'], base = texts, dt
        print(line(f"transformers {a.dtype}, batch {a.batch}, {torch.get_num_threads()} threads", dt, toks, len(prompts)) + f"  [load {load_hf:.1f} s]")
        n_params = sum(p.numel() for p in hf.model.parameters())
        print(flops_line(n_params, *prefill_split(hf, prompts, params, dt, toks, n_prompt), peak))
        hf.close()
    for th in ([] if a.skip_llamacpp else [int(x) for x in a.llamacpp_threads.split(',')]):
        # the main job's engine (`smollm2`: weights=auto), then the 4-bit file together, one at a time and without the cache
        runs = [(a.parallel, True, 'auto'), (a.parallel, True, 'file'), (1, True, 'file'), (a.parallel, False, 'file')]
        runs += [(a.parallel, True, w) for w in a.weights.split(',') if w and w not in ('auto', 'file')]
        for par, cache, w in runs:
            m = lc if (th == 0 and cache and par == a.parallel and w == 'auto') else load_model(
                f"smollm2:threads={th},prefix_cache={str(cache).lower()},parallel={par},weights={w}{more}")
            m.clear_cache()  # every pass starts from an empty cache
            texts, dt, toks, outs = timed(m, prompts, params, a.seed)
            cached = sum(o[0].meta['cached_prompt_tokens'] for o in outs)
            kind = m.info()['weights_type']
            name = f"default ({kind})" if w == 'auto' else 'Q4_1' if w == 'file' else w
            label = (f"llama.cpp {name}, {m.llm.n_threads} thread{'s' if m.llm.n_threads > 1 else ''}, "
                     f"{'sequences ' + str(par) + ' at a time' if par > 1 else 'one sequence at a time'}, cache {'on' if cache else 'off'}")
            print(line(label, dt, toks, len(prompts), base) + f"  [{cached} of {n_prompt} prompt tokens from the cache"
                  + (f"; load {load_lc:.1f} s" if m is lc else '') + ']')
            evaluated = n_prompt - cached
            print(flops_line(m.llm._model.n_params(), *prefill_split(m, prompts, params, dt, toks, evaluated), peak))
            res.setdefault(name, texts)
            if m is not lc: m.close()
    if 'transformers' in res and params.temperature <= 0:  # samples differ by their random numbers
        for name, texts in res.items():
            if name == 'transformers': continue
            same = sum(x == y for xs, ys in zip(res['transformers'], texts) for x, y in zip(xs, ys))
            print(f"  same text on transformers and llama.cpp {name}: {same} of {len(prompts) * params.n} responses"
                  + (" (its 4-bit weights multiply 8-bit activations; transformers de-quantizes them to float32)" if name == 'Q4_1' else ''))
    lc.close()
    after = os.getloadavg()
    print(f"load average after: {after[0]:.2f} {after[1]:.2f} {after[2]:.2f} (this run's own threads included)")

def bench_server(a):
    from l0kit.backends.hf import smollm2_gguf
    gguf, _ = smollm2_gguf()
    s = socket.socket(); s.bind(('127.0.0.1', 0)); port = s.getsockname()[1]; s.close()
    proc = subprocess.Popen([sys.executable, '-m', 'llama_cpp.server', '--model', str(gguf), '--host', '127.0.0.1', '--port', str(port),
                             '--n_ctx', '8192', '--n_threads', str(a.threads or max(1, os.cpu_count() // 2)), '--verbose', 'false'],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f'http://127.0.0.1:{port}/v1'
    try:
        for _ in range(480):
            try:
                if requests.get(url + '/models', timeout=1).ok: break
            except requests.RequestException: time.sleep(0.25)
        prompts = l0_prompts(a.prompts, a.shots)
        params = GenerationParams(max_new_tokens=a.new_tokens)
        print(f"llama.cpp server (llama-cpp-python), SmolLM2 Q4_1 GGUF, the same {len(prompts)} L0 prompts as chat requests")
        for c in (1, a.concurrency):
            m = load_model(f'openai:{url},concurrency={c}')
            _, dt, toks, _ = timed(m, prompts, params)
            print(f"  concurrency {c:>2}: {len(prompts) / dt:.2f} requests/s, {toks / dt:.1f} generated tokens/s ({dt:.1f} s)")
    finally:
        proc.terminate(); proc.wait(10)

if __name__ == '__main__':
    p = argparse.ArgumentParser()
    p.add_argument('--prompts', type=int, default=8); p.add_argument('--shots', type=int, default=4)
    p.add_argument('--new-tokens', type=int, default=64); p.add_argument('--batch', type=int, default=8)
    p.add_argument('--dtype', default='float32', help='transformers dtype')
    p.add_argument('--threads', type=int, default=0, help='torch CPU threads (0: one per core)')
    p.add_argument('--llamacpp-threads', default='0', help='comma-separated llama.cpp thread counts (0: one per physical core)')
    p.add_argument('--temperature', type=float, default=0.0, help='0: greedy; above 0: sampled, --samples a prompt')
    p.add_argument('--samples', type=int, default=4); p.add_argument('--seed', type=int, default=0)
    p.add_argument('--parallel', type=int, default=8, help='llama.cpp sequences decoded together (also timed at 1)')
    p.add_argument('--weights', default='f32,bf16', help="llama.cpp weights also timed besides the default's and the file's own (comma-separated; '' for none)")
    p.add_argument('--llamacpp-options', default='', help="more llama.cpp options for every llama.cpp run, e.g. 'flash_attn=false'")
    p.add_argument('--skip-transformers', action='store_true')
    p.add_argument('--skip-llamacpp', action='store_true')
    p.add_argument('--server', action='store_true', help='also time a llama.cpp server through the OpenAI backend')
    p.add_argument('--concurrency', type=int, default=4)
    a = p.parse_args()
    bench_engines(a)
    if a.server: bench_server(a)
