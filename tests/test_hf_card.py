"""The Hugging Face export's dataset card: `datasets` reads its YAML without a warning, and the split sizes it states
pass `datasets`' own full verification (`verification_mode='all_checks'`) on every benchmark."""
import ast, os, subprocess, sys
from pathlib import Path
import pytest
from l0kit.harness.benchmark import get_benchmark

ROOT = Path(__file__).resolve().parents[1]
LOAD = "import datasets, sys; ds = datasets.load_dataset(sys.argv[1], verification_mode='all_checks'); print({k: v.num_rows for k, v in ds.items()})"

@pytest.mark.parametrize('name', ['l0', 'procbench', 'sx', 'core'])
def test_card_reads_without_a_warning(tmp_path, name):
    from l0kit.bridges.hf_datasets import export_hf
    data = tmp_path / 'data'
    get_benchmark(name).generate(data, limit=2, **({'preset': 'small'} if name == 'l0' else {}))
    export_hf(data, tmp_path / 'hf', name)
    env = os.environ | {'HF_DATASETS_OFFLINE': '1', 'HF_HUB_OFFLINE': '1', 'HF_DATASETS_CACHE': str(tmp_path / 'cache'), 'PYTHONPATH': str(ROOT)}
    r = subprocess.run([sys.executable, '-c', LOAD, str(tmp_path / 'hf')], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    warnings = [l for l in r.stderr.splitlines() if 'malformed' in l or 'Ignoring' in l or 'WARNING' in l.upper()]
    assert warnings == []
    bench = get_benchmark(name)
    assert ast.literal_eval(r.stdout.strip().splitlines()[-1]) == {s: len(bench.load(data, s)) for s in bench.splits(data) if bench.load(data, s)}
