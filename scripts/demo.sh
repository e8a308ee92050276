#!/usr/bin/env bash
# The main job on the embedded defaults: generate a small L0-Bench set, evaluate the embedded SmolLM2-135M-Instruct
# (llama.cpp, in process) on its short split with the paper's protocol at a small scale, print the table-1 summary,
# write the run's page (every response aligned against its target) and print one item's alignment.
# Re-running resumes: finished responses are kept.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.venv/bin:$PATH"
l0kit generate --preset small --out data/small --seed 0 --show --quiet
l0kit eval --data data/small --split short --model smollm2 --voters 2 --set shots=2 --limit 3 --out runs/demo-smollm2-short
l0kit report runs/demo-smollm2-short
l0kit view runs/demo-smollm2-short --show
