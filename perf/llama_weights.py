"""The embedded model's prompt and generation rates on llama.cpp by weights and attention, each in a process of its own.

For each of `--weights` (file: the packaged Q4_1 GGUF; f32, bf16: de-quantized from it once, `unpacked_gguf`) with
llama.cpp's fused attention off and on: a 1,024-token prompt read whole (the best of three), then 32 tokens decoded
one at a time. The rates say which weights the machine's llama.cpp build multiplies fastest (`weights=auto` takes
bfloat16 where the build has AVX512-BF16, float32 elsewhere) and what the fused attention adds. The load average is
printed before and after; `--repeat N` alternates the processes N times and keeps each rate's best.

Usage: python perf/llama_weights.py [--weights file,f32,bf16] [--threads 0] [--repeat 1]
"""
import argparse, json, os, subprocess, sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

ONE = r'''
import json, sys, time
from l0kit.backends.llamacpp import _llama_cpp, _smollm2_file, unpacked_gguf, cpu_backend, default_threads
weights, flash, th = sys.argv[1], sys.argv[2] == 'on', int(sys.argv[3]) or default_threads()
lc = _llama_cpp()
path = _smollm2_file() if weights == 'file' else unpacked_gguf(_smollm2_file(), weights)
llm = lc.Llama(str(path), n_ctx=2048, n_batch=512, n_threads=th, n_threads_batch=th, flash_attn=flash, verbose=False)
toks = [(i * 7919) % 40000 + 100 for i in range(1024)]
best = 1e9
for _ in range(3):
    llm.reset(); t0 = time.perf_counter(); llm.eval(toks); best = min(best, time.perf_counter() - t0)
t0 = time.perf_counter()
for t in toks[:32]: llm.eval([t])
print(json.dumps({'prefill': 1024 / best, 'generation': 32 / (time.perf_counter() - t0), 'variant': cpu_backend()}))
'''

def run(weights: str, flash: str, threads: int) -> dict:
    p = subprocess.run([sys.executable, '-c', ONE, weights, flash, str(threads)], capture_output=True, text=True)
    if p.returncode: return {'error': (p.stderr.strip().splitlines() or ['crashed'])[-1]}
    return json.loads(p.stdout.strip().splitlines()[-1])

if __name__ == '__main__':
    a = argparse.ArgumentParser(); a.add_argument('--weights', default='file,f32,bf16'); a.add_argument('--threads', type=int, default=0)
    a.add_argument('--repeat', type=int, default=1)
    a = a.parse_args()
    from l0kit.backends.llamacpp import cpu_features
    load = os.getloadavg()
    print(f"load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; llama.cpp built with {' '.join(sorted(cpu_features()))}")
    jobs = [(w, f) for w in a.weights.split(',') for f in ('off', 'on')]
    rounds = [[run(w, f, a.threads) for w, f in jobs] for _ in range(a.repeat)]
    for (w, f), runs in zip(jobs, zip(*rounds)):
        if bad := [r for r in runs if 'error' in r]: print(f"  {w:<5} fused attention {f:<3} failed: {bad[0]['error']}"); continue
        print(f"  {w:<5} fused attention {f:<3} ({runs[0]['variant']}): prompt {max(r['prefill'] for r in runs):6.0f} tokens/s, "
              f"generation {max(r['generation'] for r in runs):5.1f} tokens/s")
    load = os.getloadavg()
    print(f"load average after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
