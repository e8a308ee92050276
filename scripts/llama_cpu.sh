#!/usr/bin/env bash
# The instruction sets to build llama.cpp for on this CPU, in ggml's names (GGML_<NAME>=ON), one line:
# AVX2 with FMA and F16C where the CPU has them, and AVX-512 with its VBMI, VNNI and BF16 extensions where it has
# those. Never AMX (a build using it crashed on a VM that advertises it) and never -march=native.
# Usage: bash scripts/llama_cpu.sh [CPUINFO]   (default /proc/cpuinfo; where it lists no flags: the AVX2 set)
set -euo pipefail
flags=" $(grep -m1 '^flags' "${1:-/proc/cpuinfo}" 2>/dev/null | cut -d: -f2 || true) "
has() { [[ "$flags" == *" $1 "* ]]; }
if [ -z "${flags// /}" ]; then echo "AVX AVX2 FMA F16C BMI2"; exit 0; fi  # not Linux on x86: ggml ignores them elsewhere
want=()
if has avx2 && has fma && has f16c; then
  want+=(AVX AVX2 FMA F16C); has bmi2 && want+=(BMI2)
  if has avx512f && has avx512cd && has avx512vl && has avx512dq && has avx512bw; then
    want+=(AVX512)
    has avx512vbmi && want+=(AVX512_VBMI); has avx512_vnni && want+=(AVX512_VNNI); has avx512_bf16 && want+=(AVX512_BF16)
  fi
fi
echo "${want[*]+${want[*]}}"
