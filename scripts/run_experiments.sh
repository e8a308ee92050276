#!/usr/bin/env bash
# Run the L0-Bench experiment notebooks (nbs/experiments/l0_*.ipynb) with papermill and keep each executed copy.
#
#   scripts/run_experiments.sh [MODEL] [SCALE]
#
# MODEL: a model spec as `l0kit models` lists them (default: smollm2, the embedded SmolLM2-135M-Instruct),
#        e.g. hf:/models/Qwen2.5-7B-Instruct,device=cuda  or  openai:http://localhost:8000/v1#qwen
# SCALE: small (default: 2 programs per split, 2 voters, short split, 2 and 4 shots; what a 2-core CPU affords)
#        full  (the paper: 500 programs per split, 31 voters, all four splits, 2 to 64 shots, 1,024 voters in figure 3)
# The executed notebooks go to runs/experiments/<model>-<scale>/; figures and tables to figures/l0/;
# runs (responses.jsonl) to runs/l0/<model>/, resumed when the same command runs again.
# Needs papermill (pip install papermill) in the kit's environment.
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL="${1:-smollm2}"
SCALE="${2:-small}"
case "$SCALE" in
  small) DATA=small; PROGRAMS=2; VOTERS=2; SPLITS=short; SHOTS=2,4; VPROGRAMS=5; VVOTERS=1024 ;;
  full)  DATA=full; PROGRAMS=500; VOTERS=31; SPLITS=short,medium,long,extra_long; SHOTS=2,4,8,16,32,64; VPROGRAMS=500; VVOTERS=1024 ;;
  *) echo "unknown scale '$SCALE': use small or full" >&2; exit 2 ;;
esac
# figure 3's voters: the simulated model unless a full-scale run names a real model
VMODEL='simulated:rate=0.02'; [ "$SCALE" = full ] && VMODEL="$MODEL"
OUT="runs/experiments/$(echo "$MODEL" | tr -c 'A-Za-z0-9.=_-' '_')-$SCALE"
mkdir -p "$OUT"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
run() {  # notebook, then papermill -p pairs
  local nb="$1"; shift
  local t0=$SECONDS
  papermill --cwd nbs/experiments "nbs/experiments/$nb.ipynb" "$OUT/$nb.ipynb" "$@"
  echo "$nb: $((SECONDS - t0)) s" | tee -a "$OUT/timings.txt"
}
run l0_01_data -p scale "$DATA" -p token_programs 50
run l0_02_main_results -p model "$MODEL" -p programs "$PROGRAMS" -p voters "$VOTERS" -p splits "$SPLITS"
run l0_03_test_time_scaling -p model "$MODEL" -p programs "$PROGRAMS" -p voters "$VOTERS" -p splits "$SPLITS" -p shots "$SHOTS" \
    -p voting_model "$VMODEL" -p voting_programs "$VPROGRAMS" -p voting_voters "$VVOTERS"
T5=False; [ "$SCALE" = full ] && T5=True
run l0_04_ablations -p model "$MODEL" -p programs "$PROGRAMS" -p voters "$VOTERS" -p run_table5_model "$T5"
echo "executed notebooks and timings in $OUT"
