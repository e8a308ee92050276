"""The instructions `scripts/setup.sh` builds llama.cpp for (`scripts/llama_cpu.sh`), from /proc/cpuinfo files of the
CPUs the kit has met: AVX-512 and its bfloat16 products where the CPU has them, AVX2 where it has no more, nothing
above x86-64 on an older CPU, and never AMX (a build using it crashed on a VM that advertises it)."""
import subprocess
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
BASE = 'fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr sse sse2 ht syscall nx lm'
AVX2 = BASE + ' pni ssse3 fma cx16 sse4_1 sse4_2 movbe popcnt aes xsave avx f16c rdrand avx2 bmi1 bmi2 adx sha_ni'
ZEN4 = AVX2 + ' avx512f avx512dq avx512ifma avx512cd avx512bw avx512vl avx512_bf16 avx512vbmi avx512_vbmi2 avx512_vnni avx512_bitalg'
SPR = ZEN4 + ' avx512_fp16 amx_bf16 amx_tile amx_int8'
SKX = AVX2 + ' avx512f avx512dq avx512cd avx512bw avx512vl'  # Skylake-SP: AVX-512 without VBMI, VNNI or BF16

def flags_for(tmp_path, text: str) -> str:
    f = tmp_path / 'cpuinfo'
    f.write_text(text)
    return subprocess.run(['bash', str(ROOT / 'scripts/llama_cpu.sh'), str(f)], capture_output=True, text=True, check=True).stdout.strip()

@pytest.mark.parametrize('flags, want', [
    (ZEN4, 'AVX AVX2 FMA F16C BMI2 AVX512 AVX512_VBMI AVX512_VNNI AVX512_BF16'),
    (SPR, 'AVX AVX2 FMA F16C BMI2 AVX512 AVX512_VBMI AVX512_VNNI AVX512_BF16'),  # no AMX
    (SKX, 'AVX AVX2 FMA F16C BMI2 AVX512'),
    (AVX2, 'AVX AVX2 FMA F16C BMI2'),  # Zen 3, Haswell
    (BASE + ' avx sse4_2', ''),  # older than AVX2: plain x86-64
])
def test_llama_cpu_flags(tmp_path, flags, want):
    # the first CPU's flags decide (every processor of a machine lists the same)
    assert flags_for(tmp_path, f"processor\t: 0\nflags\t\t: {flags}\n\nprocessor\t: 1\nflags\t\t: {BASE}\n") == want

def test_llama_cpu_without_flags(tmp_path):
    # an Arm machine lists `Features`, not `flags`: the set of before, which ggml leaves unused there
    assert flags_for(tmp_path, 'processor\t: 0\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32\n') == 'AVX AVX2 FMA F16C BMI2'
