#!/usr/bin/env bash
# The whole test suite: notebooks clean and in sync with the package, ruff on the package, notebook tests, pytest.
# Extra pytest arguments pass through (e.g. `--runslow`).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.venv/bin:$PATH"
state() { { git status --porcelain -- nbs l0kit; git diff -- nbs l0kit; } | sha1sum; }
before=$(state)
nbdev-clean
nbdev-export
if [ "$(state)" != "$before" ]; then
  echo "FAIL: nbdev-clean / nbdev-export changed files: notebooks are not clean or the package is out of sync." >&2
  git status --porcelain -- nbs l0kit >&2
  exit 1
fi
echo "notebooks clean, package in sync"
ruff check l0kit
nbdev-test --n-workers 2 --timing
python -m pytest -q "$@"
