#!/usr/bin/env bash
# Run the experiment notebooks (nbs/experiments/*.ipynb) with papermill, keep each executed copy and time it.
#
#   scripts/run_experiments.sh [MODEL] [SCALE] [NOTEBOOK ...]
#   scripts/run_experiments.sh --committed [NOTEBOOK ...]
#
# --committed  the runs whose outputs the repository's notebooks hold: every one of the eleven notebooks with the model
#          and scale of COMMITTED below (the data notebooks at the papers' sizes; the L0 analyses on the simulated model
#          at the paper's 500 programs x 31 voters where a simulated model can show them; ProcBench, SX and CoRE with
#          the embedded SmolLM2 at the small scale; the organism, trained first with `l0kit train --preset quick` when
#          the cache holds none). Each executed notebook, its outputs' paths made relative to the repository
#          (`l0kit.experiments.portable_outputs`) and cleaned by nbdev-clean, replaces nbs/experiments/NB.ipynb;
#          papermill's `injected-parameters` cell stays in it, saying the run's parameters.
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
declare -A COMMITTED=(  # notebook -> "MODEL SCALE" of the committed outputs
  [l0_01_data]="smollm2 full" [procbench_01_data]="smollm2 full" [sx_01_data]="smollm2 full" [core_01_data]="smollm2 full"
  [l0_02_main_results]="simulated:rate=0.01 full" [l0_03_test_time_scaling]="simulated:rate=0.01 small"
  [l0_04_ablations]="simulated:rate=0.01 full" [l0_05_organism]="organism small"
  [procbench_02_models]="smollm2 small" [sx_02_models]="smollm2 small" [core_02_models]="smollm2 small")
COMMITTED_ORDER=(l0_01_data procbench_01_data sx_01_data core_01_data l0_02_main_results l0_03_test_time_scaling l0_04_ablations
                 procbench_02_models sx_02_models core_02_models l0_05_organism)
if [ "${1:-}" = --committed ]; then
  shift
  names=("$@"); [ ${#names[@]} -gt 0 ] || names=("${COMMITTED_ORDER[@]}")
  for nb in "${names[@]}"; do
    [ -n "${COMMITTED[$nb]:-}" ] || { echo "no committed run for notebook $nb (one of: ${COMMITTED_ORDER[*]})" >&2; exit 2; }
  done
  for nb in "${names[@]}"; do
    read -r model scale <<< "${COMMITTED[$nb]}"
    COMMIT=1 bash "$0" "$model" "$scale" "$nb"
  done
  exit 0
fi
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
    procbench_01_data) args=(-p examples_per_length 10) ;;  # the paper's sizes at either scale (seconds): 10 per task and N
    sx_01_data) args=(-p scale 1.0) ;;                      # all of the paper's sample counts
    core_01_data) args=(-p probes_per_problem 4) ;;         # the paper's 4.1 on average, over the kit's whole problem set
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
    l0_05_organism) args=(-p programs 100 -p voting_programs 10 -p voting_voters 32) ;;  # the organism in the cache (full, else quick)
  esac  # the data notebooks' defaults are the papers' sizes; they are passed, so the executed notebook says them
  return 0
}
total=0
for nb in "${names[@]}"; do
  [ -f "nbs/experiments/$nb.ipynb" ] || { echo "no notebook nbs/experiments/$nb.ipynb" >&2; exit 2; }
  set_args "$nb"
  echo "== $nb ${args[*]}"
  t0=$SECONDS
  if [ "$nb" = l0_05_organism ] && ! python -c "import sys; from l0kit.organism.data import get_train_preset as g; from l0kit.organism.train import default_out as d
sys.exit(not any((d(g(p, small=False)) / 'config.json').exists() for p in ('full', 'quick')))"; then  # the notebook's own rule
    echo "no trained organism in the cache: l0kit train --preset quick"; python -m l0kit train --preset quick
  fi
  papermill --cwd nbs/experiments "nbs/experiments/$nb.ipynb" "$OUT/$nb.ipynb" "${args[@]}"
  dt=$((SECONDS - t0)); total=$((total + dt))
  printf '%s\t%s\n' "$nb" "$dt" | tee -a "$OUT/timings.tsv"
  if [ "${COMMIT:-0}" = 1 ]; then  # the executed notebook becomes the committed one, cleaned as CI checks it
    cp "$OUT/$nb.ipynb" "nbs/experiments/$nb.ipynb"
    python -c "import sys; from l0kit.experiments import portable_outputs; portable_outputs(sys.argv[1])" "nbs/experiments/$nb.ipynb"
    nbdev-clean --fname "nbs/experiments/$nb.ipynb"  # no machine path in its outputs, cleaned as CI checks it
    echo "nbs/experiments/$nb.ipynb now holds the outputs of this run ($MODEL, $SCALE)"
  fi
done
echo "all ${#names[@]} notebooks: $total s; executed copies and timings.tsv in $OUT"
