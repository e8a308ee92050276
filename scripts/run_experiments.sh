#!/usr/bin/env bash
# Run the experiment notebooks (nbs/experiments/*.ipynb) with papermill, keep each executed copy and time it.
#
#   scripts/run_experiments.sh [MODEL] [SCALE] [NOTEBOOK ...]
#
# MODEL    a model spec as `l0kit models` lists them (default: smollm2, the embedded SmolLM2-135M-Instruct), e.g.
#          hf:/models/Qwen2.5-7B-Instruct,device=cuda   or   openai:http://localhost:8000/v1#qwen
#          It is the model of every model notebook. A simulated L0 model (simulated:rate=0.01) only fits the L0
#          notebooks, so with one the default notebook list is the four l0_* notebooks.
# SCALE    small (default): the notebooks' own defaults, what a shared 2-core CPU affords with the embedded model
#          full: the papers' sizes: L0 500 programs per split x 31 voters on all four splits, 2 to 64 shots, think
#          bypass, task variations, the model on all 18 ablation sets, 1,024 voters in figure 3; ProcBench all 5,520
#          items; SX every sample of the three subsets; CoRE all five prompting methods
# NOTEBOOK names without .ipynb (default: ten of the eleven, all but l0_05_organism (it trains a model first), data notebooks first, in the papers' order)
#
# Executed notebooks go to runs/experiments/<model>-<scale>/ with timings.tsv (notebook, seconds); figures and tables
# to figures/; model runs to runs/, resumed when the same command runs again (an interrupted command continues).
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL="${1:-smollm2}"
SCALE="${2:-small}"
shift $(( $# < 2 ? $# : 2 ))
case "$SCALE" in
  small|full) ;;
  *) echo "unknown scale '$SCALE': use small or full" >&2; exit 2 ;;
esac
[ -x .venv/bin/python ] && export PATH="$PWD/.venv/bin:$PATH"
command -v papermill >/dev/null || { echo "papermill is missing: pip install -e '.[dev]' (or bash scripts/setup.sh)" >&2; exit 2; }
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
L0=(l0_01_data l0_02_main_results l0_03_test_time_scaling l0_04_ablations)
OTHERS=(procbench_01_data procbench_02_models sx_01_data sx_02_models core_01_data core_02_models)
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  case "$MODEL" in simulated*) names=("${L0[@]}") ;; *) names=("${L0[@]}" "${OTHERS[@]}") ;; esac
fi
OUT="runs/experiments/$(printf %s "$MODEL" | tr -c 'A-Za-z0-9.=_-' '_')-$SCALE"
mkdir -p "$OUT"
ALL=short,medium,long,extra_long
set_args() {  # the papermill arguments of notebook $1 at this scale, into the array `args`
  args=()
  case "$1" in
    l0_01_data) [ "$SCALE" = full ] && args=(-p scale full -p token_programs 500) || args=(-p scale small) ;;
    l0_02_main_results) args=(-p model "$MODEL")
      [ "$SCALE" = full ] && args+=(-p programs 500 -p voters 31 -p splits "$ALL") ;;
    l0_03_test_time_scaling) args=(-p model "$MODEL")
      [ "$SCALE" = full ] && args+=(-p programs 500 -p voters 31 -p splits "$ALL" -p shots 2,4,8,16,32,64 -p think_bypass True
                                    -p voting_model "$MODEL" -p voting_programs 500 -p voting_voters 1024) ;;
    l0_04_ablations) args=(-p model "$MODEL")
      [ "$SCALE" = full ] && args+=(-p programs 500 -p voters 31 -p setups default,variation_1,variation_2
                                    -p ablation_programs 500 -p run_table5_model True) ;;
    procbench_02_models) args=(-p model "$MODEL")
      [ "$SCALE" = full ] && args+=(-y "lengths: [$(seq -s, 2 25)]" -p examples 10) ;;
    sx_02_models) args=(-p model "$MODEL"); [ "$SCALE" = full ] && args+=(-p per_subset 750) ;;
    core_02_models) args=(-p model "$MODEL"); [ "$SCALE" = full ] && args+=(-y "methods: [io, cot, coc, rhda1, rhda2]") ;;
  esac  # the data notebooks' defaults are the papers' sizes
  return 0
}
total=0
for nb in "${names[@]}"; do
  [ -f "nbs/experiments/$nb.ipynb" ] || { echo "no notebook nbs/experiments/$nb.ipynb" >&2; exit 2; }
  set_args "$nb"
  echo "== $nb ${args[*]}"
  t0=$SECONDS
  papermill --cwd nbs/experiments "nbs/experiments/$nb.ipynb" "$OUT/$nb.ipynb" "${args[@]}"
  dt=$((SECONDS - t0)); total=$((total + dt))
  printf '%s\t%s\n' "$nb" "$dt" | tee -a "$OUT/timings.tsv"
done
echo "all ${#names[@]} notebooks: $total s; executed copies and timings.tsv in $OUT"
