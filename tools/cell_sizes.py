"""cell_sizes.py [--over N] [--before REV] [NB ...] -- measure the notebooks' export cells: how many, their median length in
lines, and which are over N lines (default 40), with the names each defines. Lines count the cell's whole source, directives
included. `--before REV` also prints the summary of the same measure on the notebooks as git revision REV holds them."""
import ast, json, re, statistics, subprocess, sys
from pathlib import Path

def export_cells(nb, text=None):
    "Yield (cell id, source) for each code cell whose directives export it (`#| export`, `#| exports`, `#| exporti`)."
    for c in json.loads(text if text is not None else Path(nb).read_text())['cells']:
        src = ''.join(c['source'])
        if c['cell_type'] == 'code' and re.search(r'^#\|\s*export[is]?\s*$', src, re.M): yield c.get('id'), src

def names(src):
    "The top-level names a cell defines: functions, classes, assigned names."
    try: tree = ast.parse('\n'.join(l for l in src.splitlines() if not l.startswith('%')))
    except SyntaxError: return ['?']
    out = []
    for n in tree.body:
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.append(('@' if n.decorator_list and any(getattr(d, 'id', None) == 'patch' for d in n.decorator_list) else '') + n.name)
        elif isinstance(n, (ast.Assign, ast.AnnAssign)):
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target]):
                out += [e.id for e in ast.walk(t) if isinstance(e, ast.Name)]
    return out

def summary(sizes, over) -> str: return f'export cells {len(sizes)}, median lines {statistics.median(sizes)}, over {over} lines {sum(s > over for s in sizes)}'

if __name__ == '__main__':
    args, over, before = sys.argv[1:], 40, None
    while args[:1] in (['--over'], ['--before']):
        if args[0] == '--over': over = int(args[1])
        else: before = args[1]
        args = args[2:]
    nbs = [Path(a) for a in args] or sorted(Path('nbs').glob('*.ipynb'))
    if before:
        old = []
        for nb in nbs:
            text = subprocess.run(['git', 'show', f'{before}:{nb.as_posix()}'], capture_output=True, text=True).stdout
            old += [len(src.splitlines()) for _, src in export_cells(nb, text)] if text else []
        print(f'before ({before}): {summary(old, over)}')
    sizes = []
    for nb in nbs:
        for cid, src in export_cells(nb):
            n = len(src.splitlines()); sizes.append(n)
            if n > over: print(f'{nb.name}\t{cid}\t{n}\t{", ".join(names(src))}')
    print(('now: ' if before else '') + summary(sizes, over))
