#!/usr/bin/env bash
# Run the L0-Bench experiment notebooks (nbs/experiments/l0_*.ipynb) with papermill and keep each executed copy.
#
#   scripts/run_experiments.sh [MODEL] [SCALE]
#
# MODEL: a model spec as `l0kit models` lists them (default: smollm2, the embedded SmolLM2-135M-Instruct),
#        e.g. hf:/models/Qwen2.5-7B-Instruct,device=cuda  or  openai:http://localhost:8000/v1#qwen
# SCALE: small (default): the notebooks' defaults, what a shared 2-core CPU affords (short split, 2 programs,
#        2 voters, 4 shots; figure 3 with the simulated model at 1,024 voters)
#        full: the paper (500 programs per split, 31 voters, all four splits, 2 to 64 shots, think bypass,
#        all task variations and ablation runs, 1,024 voters in figure 3 on the named model)
# The executed notebooks go to runs/experiments/<model>-<scale>/; figures and tables to figures/l0/;
# runs (responses.jsonl) to runs/l0/<model>/, resumed when the same command runs again.
# Needs papermill (pip install papermill) in the kit's environment.
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL="${1:-smollm2}"
SCALE="${2:-small}"
case "$SCALE" in
  small|full) ;;
  *) echo "unknown scale '$SCALE': use small or full" >&2; exit 2 ;;
esac
OUT="runs/experiments/$(printf %s "$MODEL" | tr -c 'A-Za-z0-9.=_-' '_')-$SCALE"
mkdir -p "$OUT"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
run() {  # notebook, then papermill -p pairs
  local nb="$1"; shift
  local t0=$SECONDS
  papermill --cwd nbs/experiments "nbs/experiments/$nb.ipynb" "$OUT/$nb.ipynb" "$@"
  echo "$nb: $((SECONDS - t0)) s" | tee -a "$OUT/timings.txt"
}
if [ "$SCALE" = small ]; then  # the notebooks' own defaults, with the model named
  run l0_01_data -p scale small
  run l0_02_main_results -p model "$MODEL"
  run l0_03_test_time_scaling -p model "$MODEL"
  run l0_04_ablations -p model "$MODEL"
else  # the paper's sizes; figure 3's 1,024 voters run on the named model too
  ALL=short,medium,long,extra_long
  run l0_01_data -p scale full -p token_programs 500
  run l0_02_main_results -p model "$MODEL" -p programs 500 -p voters 31 -p splits "$ALL"
  run l0_03_test_time_scaling -p model "$MODEL" -p programs 500 -p voters 31 -p splits "$ALL" -p shots 2,4,8,16,32,64 \
      -p think_bypass True -p voting_model "$MODEL" -p voting_programs 500 -p voting_voters 1024
  run l0_04_ablations -p model "$MODEL" -p programs 500 -p voters 31 -p setups default,variation_1,variation_2 \
      -p ablation_programs 500 -p run_table5_model True
fi
echo "executed notebooks and timings in $OUT"
