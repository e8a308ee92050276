#!/usr/bin/env bash
# The main job on the embedded defaults: generate a small L0-Bench set and show it.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.venv/bin:$PATH"
l0kit generate --preset small --out data/small --seed 0 --show
