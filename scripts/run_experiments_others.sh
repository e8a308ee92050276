#!/usr/bin/env bash
# Run the ProcBench, SX-Bench and CoRE experiment notebooks at full scale, writing figures/ and tables.
#
#   bash scripts/run_experiments_others.sh                 # every notebook, default parameters
#   bash scripts/run_experiments_others.sh sx_01_data      # some notebooks (names without .ipynb)
#   PARAMS='model=hf:/path/to/model limit=50' bash scripts/run_experiments_others.sh procbench_02_models
#
# Each notebook runs like papermill would: the assignments in PARAMS (Python literals or bare strings) go into a
# cell right after the notebook's `parameters` cell. The executed copy (with outputs) is written to
# runs/experiments/NAME.ipynb; the source notebooks in nbs/ stay clean. With papermill installed you can use it
# directly instead: `papermill nbs/experiments/sx_01_data.ipynb out.ipynb -p scale 0.5`.
#
# The committed figures/ and tables came from these commands on a shared 2-core CPU (times include the model runs):
#   bash scripts/run_experiments_others.sh sx_01_data procbench_01_data core_01_data          # 44 s, 15 s, 14 s
#   PARAMS='model=smollm2:threads=1 max_new_tokens=192' bash scripts/run_experiments_others.sh procbench_02_models  # ~14 min
#   PARAMS='model=smollm2:threads=1 per_subset=4 max_new_tokens=256' bash scripts/run_experiments_others.sh sx_02_models  # ~4 min
#   PARAMS='model=smollm2:threads=1 max_new_tokens=96' bash scripts/run_experiments_others.sh core_02_models  # ~11 min
# The model notebooks resume their run directories under runs/, so an interrupted command continues where it stopped.
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
[ -x .venv/bin/python ] && export PATH="$PWD/.venv/bin:$PATH"
default=(procbench_01_data sx_01_data core_01_data procbench_02_models sx_02_models core_02_models)
names=("$@"); [ ${#names[@]} -eq 0 ] && names=("${default[@]}")
mkdir -p runs/experiments
for name in "${names[@]}"; do
  start=$(date +%s)
  echo "== $name (${PARAMS:-default parameters})"
  python - "$name" "${PARAMS:-}" <<'PY'
import ast, sys
from pathlib import Path
import nbformat
from nbclient import NotebookClient
name, params = sys.argv[1], sys.argv[2]
src = Path('nbs/experiments') / f'{name}.ipynb'
nb = nbformat.read(src, as_version=4)
lines = []
for kv in params.split():
    k, _, v = kv.partition('=')
    try: ast.literal_eval(v); lines.append(f"{k} = {v}")
    except (ValueError, SyntaxError): lines.append(f"{k} = {v!r}")
if lines:
    at = next(i for i, c in enumerate(nb.cells) if 'parameters' in c.metadata.get('tags', []))
    nb.cells.insert(at + 1, nbformat.v4.new_code_cell('# Injected parameters\n' + '\n'.join(lines), metadata={'tags': ['injected-parameters']}))
NotebookClient(nb, timeout=None, kernel_name='python3', resources={'metadata': {'path': str(src.parent)}}).execute()
nbformat.write(nb, Path('runs/experiments') / f'{name}.ipynb')
PY
  echo "-- $name took $(( $(date +%s) - start )) s; executed copy: runs/experiments/$name.ipynb"
done
