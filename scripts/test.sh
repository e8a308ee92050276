#!/usr/bin/env bash
# The whole test suite: notebooks clean and in sync with the package, ruff on the package, notebook tests (one worker per
# CPU, one thread each), pytest.
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
# pytest ends a test that waits past 600 s (pyproject.toml); a hang that no signal ends ends the whole part here (the
# notebooks too) after TEST_TIMEOUT seconds (default 2400: each part takes 3-6 minutes on 2 cores): SIGUSR1 first, on
# which pytest and its workers print every thread's stack (tests/conftest.py; each process into a file of its own,
# printed here), then SIGKILL TEST_KILL_AFTER seconds later (default 10). Unbuffered, so that a log cut short shows how far the run got
export PYTHONUNBUFFERED=1
bounded() {
  local rc=0 f fg=()
  [ -t 0 ] && fg=(--foreground)  # at a terminal: Ctrl-C reaches the tests (timeout's own process group would not get it)
  export L0KIT_TEST_STACKS; L0KIT_TEST_STACKS="$(mktemp -d)"
  if command -v timeout >/dev/null; then timeout ${fg[@]+"${fg[@]}"} --signal=USR1 --kill-after="${TEST_KILL_AFTER:-10}" "${TEST_TIMEOUT:-2400}" "$@" || rc=$?; else "$@" || rc=$?; fi
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    echo "FAIL: $* ran past TEST_TIMEOUT=${TEST_TIMEOUT:-2400} s and was ended; where each process was:" >&2
    for f in "$L0KIT_TEST_STACKS"/*.txt; do [ -s "$f" ] && { echo "--- $(basename "$f" .txt)"; cat "$f"; } >&2; done
  fi
  rm -rf "$L0KIT_TEST_STACKS"
  return "$rc"
}
# the notebooks on as many workers, each with one thread (torch, BLAS and llama.cpp's default all take OMP_NUM_THREADS):
# two workers each spinning two threads on two cores took the slowest notebooks 1.6x longer. Not beside pytest: the two
# side by side took longer than one after the other (pytest 618 s against 426 s; docs/performance.md)
OMP_NUM_THREADS=1 bounded nbdev-test --n-workers "$workers" --timing
bounded python -m pytest -q -n "$workers" --dist loadscope -m "not serial" --durations=15 "$@"
rc=0; bounded python -m pytest -q -m serial "$@" || rc=$?
[ "$rc" = 5 ] && rc=0  # 5: the arguments given select no serial test
exit "$rc"
