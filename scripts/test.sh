#!/usr/bin/env bash
# The whole test suite: notebooks clean and in sync with the package, ruff on the package, notebook tests (one worker per
# CPU, one thread each) beside pytest, then pytest's serial tests.
# Extra pytest arguments pass through (e.g. `--runslow`). pytest runs in two parts: every test not marked `serial` on
# TEST_WORKERS pytest-xdist workers (default: one per CPU this process may use), each worker on its own CPUs
# (tests/conftest.py), a module's tests on one worker (its fixtures made once); then the `serial` tests, which need
# the whole machine, in one process.
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
# the kit's modules byte-compiled once: where PYTHONDONTWRITEBYTECODE is set (as on this project's machines) Python writes no
# .pyc files, and each of the few hundred processes of the tests would compile the kit from source again (0.15 s each)
python -m compileall -q l0kit plugins/l0kit-sums >/dev/null
ruff check l0kit
workers="${TEST_WORKERS:-$(python -c 'import os; print(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)')}"
# the notebooks on as many workers, each with one thread (torch, BLAS and llama.cpp's default all take OMP_NUM_THREADS):
# two workers each spinning two threads on two cores took the slowest notebooks 1.6x longer. They run beside pytest's
# parallel part: each alone kept the cores busy about nine tenths of the time (docs/performance.md); their report
# is printed when both are done
notebooks=$(mktemp)
OMP_NUM_THREADS=1 nbdev-test --n-workers "$workers" --timing > "$notebooks" 2>&1 & nbpid=$!
trap 'kill "$nbpid" 2>/dev/null; rm -f "$notebooks"' EXIT
rc=0; python -m pytest -q -n "$workers" --dist loadscope -m "not serial" --durations=15 "$@" || rc=$?
nbrc=0; wait "$nbpid" || nbrc=$?
echo "--- nbdev-test (beside pytest):"; cat "$notebooks"
[ "$nbrc" = 0 ] || { echo "FAIL: nbdev-test (above)" >&2; exit "$nbrc"; }
[ "$rc" = 0 ] || exit "$rc"
rc=0; python -m pytest -q -m serial "$@" || rc=$?
[ "$rc" = 5 ] && rc=0  # 5: the arguments given select no serial test
exit "$rc"
