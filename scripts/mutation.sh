#!/usr/bin/env bash
# Mutation testing of the code that makes published numbers (outside CI): mutmut copies the package to mutants/, makes
# one-line changes (mutants) in the functions named below, and runs, for each mutant, only the tests (of the files in
# [tool.mutmut] of pyproject.toml) that call the mutated function. A mutant that no test notices "survives": prints them.
#
#   bash scripts/mutation.sh                  # every group below, from a fresh mutants/ (about 15-20 minutes on 2 cores)
#   bash scripts/mutation.sh scoring l0       # some groups only
#   KEEP=1 bash scripts/mutation.sh ...       # reuse mutants/ and its results (only after changing nothing)
#   LIMIT=1800 bash scripts/mutation.sh       # the time box in seconds (default 1500)
#
# It runs niced, with 2 workers (JOBS=n to change). Only the functions named here are mutated: the rest of a module
# (command lines, prompts, figures, writers) makes no number. mutmut leaves decorated functions alone; a benchmark's
# hooks are methods of its class body (mutated as module.xǁClassǁmethod); where a hook calls a named function of its
# module (L0's `read` calls `l0_reading`), that function is listed.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d .venv ] && export PATH="$PWD/.venv/bin:$PATH"  # else the python on PATH (a work tree shares the main checkout's venv)
# mutmut puts mutants/ first on the path: no PYTHONPATH to the work tree (it would import the unmutated kit); the plugin
# benchmark of tests/test_plugin.py is taken from this checkout, not from wherever it was installed editable
export PYTHONPATH="$PWD/plugins/l0kit-sums"
command -v mutmut >/dev/null || { echo "mutmut is missing: pip install -e '.[dev]'" >&2; exit 1; }

# group -> mutant name globs (module.x_function for a function, module.xǁClassǁmethod for a method)
declare -A FUNCS=(
  [scoring]="l0kit.protocol.scoring.x_*"
  [l0]="l0kit.l0.metrics.x_clean_response__* l0kit.l0.metrics.x__leading_matches__* l0kit.l0.metrics.x__compare__*
        l0kit.l0.metrics.x__has_extra_steps__* l0kit.l0.metrics.x_score_trace__* l0kit.l0.metrics.x_majority_vote__*
        l0kit.l0.metrics.x_majvote_at_k__* l0kit.l0.metrics.x_vote_key__* l0kit.l0.metrics.x_response_lines__*
        l0kit.l0.metrics.x__split_lines__* l0kit.l0.metrics.x__prepare__* l0kit.l0.benchmark.x_trace_rows__*
        l0kit.l0.benchmark.x_l0_reading__* l0kit.l0.benchmark.x_l0_tables__*"
  [procbench]="l0kit.procbench.metrics.x_states_equal__* l0kit.procbench.metrics.x_compat_equal__* l0kit.procbench.metrics.x_target_sequence__*
               l0kit.procbench.metrics.x_predicted_sequence__* l0kit.procbench.metrics.x_score__* l0kit.procbench.metrics.x_table2__*
               l0kit.procbench.parser.x_parse_answer__* l0kit.procbench.benchmark.xǁProcBenchBenchmarkǁread__*"
  [sx]="l0kit.sx.benchmark.x_parse_judgements__* l0kit.sx.benchmark.x_parse_step_answers__* l0kit.sx.benchmark.x_score_response__*
        l0kit.sx.benchmark.xǁSXBenchmarkǁread__*"
  [core]="l0kit.corebench.benchmark.x_score_response__* l0kit.corebench.benchmark.x_problem_metrics__* l0kit.corebench.benchmark.x_summarize__*
          l0kit.corebench.benchmark.xǁCoreBenchmarkǁread__* l0kit.corebench.prompts.x_output_correct__* l0kit.corebench.prompts.x_probe_correct__*"
  [runner]="l0kit.runs.runner.x_check_resume__* l0kit.runs.runner.x_pending_pairs__* l0kit.runs.runner.x_read_turns__*
            l0kit.runs.runner.x_resume_conversation__* l0kit.runs.runner.x_final_record__* l0kit.runs.runner.x_summarize_run__*"
  [organism]="l0kit.organism.model.x_lr_at__* l0kit.organism.data.x_collate__* l0kit.organism.data.x_step_bin__* l0kit.organism.data.x_length_record__*
              l0kit.organism.data.x__trace_spans__* l0kit.organism.data.x__learned_mask__* l0kit.organism.data.x_encode_example__*
              l0kit.organism.train.x__learned__*"
)
ORDER=(scoring l0 procbench sx core runner organism)
groups=("$@"); [ ${#groups[@]} -gt 0 ] || groups=("${ORDER[@]}")
globs=()
for g in "${groups[@]}"; do
  [ -n "${FUNCS[$g]:-}" ] || { echo "unknown group $g (one of: ${ORDER[*]})" >&2; exit 1; }
  read -r -a more <<< "$(echo ${FUNCS[$g]})"; globs+=("${more[@]}")
done

[ "${KEEP:-0}" = 1 ] || rm -rf mutants
start=$(date +%s)
status=0
timeout "${LIMIT:-1500}" nice -n 10 mutmut run --max-children "${JOBS:-2}" "${globs[@]}" > mutants.log 2>&1 || status=$?
echo "mutmut run: exit $status after $(( $(date +%s) - start )) s (log: mutants.log)"
if [ $status -ne 0 ] && [ $status -ne 124 ]; then tail -n 30 mutants.log >&2; exit $status; fi
[ $status -eq 124 ] && echo "TIME BOX: stopped after ${LIMIT:-1500} s; the figures below count only the mutants tried" >&2

# the figures and the surviving mutants of the selected functions, from mutmut's result files (mutants/**/*.py.meta)
python - "${globs[@]}" <<'EOF'
import ast, copy, difflib, fnmatch, json, pathlib, sys
globs, status = sys.argv[1:], {1: 'killed', 3: 'killed', 0: 'survived', 5: 'no tests', 33: 'no tests', 36: 'timeout',
                                    -24: 'timeout', 24: 'timeout', 152: 'timeout', 255: 'timeout', None: 'not checked'}
rows = {}
for meta in sorted(pathlib.Path('mutants').rglob('*.py.meta')):
    for k, code in json.loads(meta.read_text())['exit_code_by_key'].items():
        if any(fnmatch.fnmatch(k, g) for g in globs): rows[k] = status.get(code, f'suspicious ({code})')
count = {}
for k, s in rows.items(): count[s] = count.get(s, 0) + 1
by_module = {}
for k, s in rows.items():
    mod = k.rpartition('.x')[0]; by_module.setdefault(mod, {}); by_module[mod][s] = by_module[mod].get(s, 0) + 1
print(f"\n{len(rows)} mutants: " + ', '.join(f"{n} {s}" for s, n in sorted(count.items(), key=lambda x: -x[1])))
for mod, c in sorted(by_module.items()): print(f"  {mod}: " + ', '.join(f"{n} {s}" for s, n in sorted(c.items())))
funcs = {}  # mutated file -> {function name: its definition}, parsed once per file
def definition(path, name):
    if path not in funcs:
        lines = path.read_text().splitlines()  # (ast.get_source_segment splits the whole file at every call)
        funcs[path] = {n.name: (n, '\n'.join(lines[n.lineno - 1:n.end_lineno])) for n in ast.walk(ast.parse('\n'.join(lines)))
                       if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    return funcs[path].get(name, (None, ''))
def plain(node, texts=False):
    "The function's AST without its name and docstring (and, with texts, without the strings of its raise statements)."
    node = copy.deepcopy(node); node.name = ''
    if node.body and isinstance(node.body[0], ast.Expr) and isinstance(getattr(node.body[0], 'value', None), ast.Constant) \
            and isinstance(node.body[0].value.value, str): node.body[0].value.value = ''
    if texts:
        for r in [r for r in ast.walk(node) if isinstance(r, ast.Raise)]:
            for c in ast.walk(r):
                if isinstance(c, ast.Constant) and isinstance(c.value, str): c.value = ''
                if isinstance(c, ast.JoinedStr): c.values = []
    return ast.dump(node)
kinds = {}
for k, st in rows.items():
    if st in ('killed', 'not checked'): continue
    mod, _, func = k.rpartition('.x')  # module . x_name__mutmut_N or xǁClassǁname__mutmut_N
    path = pathlib.Path('mutants', *mod.split('.')).with_suffix('.py')
    orig, mutant = definition(path, 'x' + func.rsplit('__mutmut_', 1)[0] + '__mutmut_orig'), definition(path, 'x' + func)
    kind = 'code'
    if orig[0] is not None and mutant[0] is not None:
        if plain(orig[0]) == plain(mutant[0]): kind = 'docstring'
        elif plain(orig[0], True) == plain(mutant[0], True): kind = 'error text'
    kinds[k] = (kind, orig[1], mutant[1].replace('x' + func, 'x' + func.rsplit('__mutmut_', 1)[0] + '__mutmut_orig'))
n_doc = sum(v[0] == 'docstring' for v in kinds.values()); n_text = sum(v[0] == 'error text' for v in kinds.values())
print(f"not killed: {len(kinds)}, of which {n_doc} change only a docstring (equivalent: no number reads it) and {n_text} only the "
      f"text of an error; the other {len(kinds) - n_doc - n_text} change code:")
for k, (kind, a, b) in sorted(kinds.items()):
    if kind == 'docstring': continue
    print(f"\n--- {k}: {rows[k]}" + (" (error text only)" if kind == 'error text' else ''))
    print('\n'.join(l for l in difflib.unified_diff(a.splitlines(), b.splitlines(), lineterm='', n=0) if l[:1] in '+-' and l[:3] not in ('+++', '---')))
EOF
