"""Speed of each CPU variant of a llama.cpp runtime-dispatch build on this machine (the build of
`L0KIT_LLAMA_BUILD=dispatch bash scripts/setup.sh`), against the one ggml picks by itself.

Each variant runs in a process of its own (`L0KIT_LLAMA_CPU=NAME`: a process loads one CPU backend): the embedded
SmolLM2 Q4_1 GGUF reads a 1,024-token prompt (best of three) and decodes 32 tokens one at a time; `--repeat N` runs each N
times, alternating, and keeps each rate's best. Variants this CPU lacks the instructions for are listed as such.
`--against PYTHON` also runs the interpreter of another environment, such as a clone set up by plain `bash
scripts/setup.sh` (llama.cpp built for AVX2 alone), in the same alternation.

Usage: python perf/llama_variants.py [--variants x64,sse42,haswell] [--threads 0] [--repeat 1] [--against .venv/bin/python]
"""
import argparse, json, os, subprocess, sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from llama_weights import ONE  # one process's prompt and generation rates (the weights as given, the attention as chosen)

def run(variant: str, threads: int, python: str = sys.executable) -> dict:
    env = {**os.environ, 'L0KIT_LLAMA_CPU': variant} if variant else {k: v for k, v in os.environ.items() if k != 'L0KIT_LLAMA_CPU'}
    p = subprocess.run([python, '-c', ONE, 'file', 'off', str(threads)], env=env, capture_output=True, text=True)  # the packaged file, as measured before
    if p.returncode: return {'variant': variant, 'error': (p.stderr.strip().splitlines() or ['crashed'])[-1]}
    return json.loads(p.stdout.strip().splitlines()[-1])

def best_of(runs: list) -> dict:
    "One variant's rounds: the first error, else each rate's best."
    if bad := [r for r in runs if 'error' in r]: return bad[0]
    return {'variant': runs[0]['variant'], 'prefill': max(r['prefill'] for r in runs), 'generation': max(r['generation'] for r in runs)}

if __name__ == '__main__':
    a = argparse.ArgumentParser(); a.add_argument('--variants', default='x64,sse42,haswell'); a.add_argument('--threads', type=int, default=0)
    a.add_argument('--repeat', type=int, default=1); a.add_argument('--against', default=None, help="another environment's python (a one-CPU build)")
    a = a.parse_args()
    from l0kit.backends.llamacpp import _llama_cpp, _variant_dir
    if not (d := _variant_dir(_llama_cpp())): sys.exit("this llama-cpp-python is built for one CPU: run L0KIT_LLAMA_BUILD=dispatch bash scripts/setup.sh")
    load = os.getloadavg()
    print(f"load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; variants in {d}")
    asked = a.variants.split(',') + ['(ggml picks)'] + (['(--against)'] if a.against else [])
    jobs = [(v, sys.executable) for v in a.variants.split(',')] + [('', sys.executable)] + ([('', a.against)] if a.against else [])
    rounds = [[run(v, a.threads, py) for v, py in jobs] for _ in range(a.repeat)]
    rows = [best_of(runs) for runs in zip(*rounds)]
    best = rows[len(a.variants.split(','))]
    for r, asked in zip(rows, asked):
        if 'error' in r: print(f"  {asked:<14} not run: {r['error']}"); continue
        print(f"  {asked:<14} {r['variant']:<10} prompt {r['prefill']:6.0f} tokens/s  generation {r['generation']:5.0f} tokens/s"
              + ('' if 'error' in best else f"  (the picked variant: {best['prefill'] / r['prefill']:.1f}x and {best['generation'] / r['generation']:.1f}x)"))
    load = os.getloadavg()
    print(f"load average after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
