"""cell_sizes.py [--over N] [NB ...] -- measure the notebooks' export cells: how many, their median length in lines, and
which are over N lines (default 40), with the names each defines. Lines count the cell's whole source, directives included."""
import ast, json, re, statistics, sys
from pathlib import Path

def export_cells(nb):
    "Yield (cell id, source) for each code cell whose directives export it (`#| export`, `#| exports`, `#| exporti`)."
    for c in json.loads(Path(nb).read_text())['cells']:
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

if __name__ == '__main__':
    args, over = sys.argv[1:], 40
    if args[:1] == ['--over']: over, args = int(args[1]), args[2:]
    nbs = [Path(a) for a in args] or sorted(Path('nbs').glob('*.ipynb'))
    sizes = []
    for nb in nbs:
        for cid, src in export_cells(nb):
            n = len(src.splitlines()); sizes.append(n)
            if n > over: print(f'{nb.name}\t{cid}\t{n}\t{", ".join(names(src))}')
    print(f'export cells {len(sizes)}, median lines {statistics.median(sizes)}, over {over} lines {sum(s > over for s in sizes)}')
