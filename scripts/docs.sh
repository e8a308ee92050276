#!/usr/bin/env bash
# Build the documentation site into _docs/ (or the folder given): the README as the front page, one page per notebook
# with the outputs stored in it (nothing is executed), navigation that follows the subpackages, search, and no network
# resource, so the site opens from disk offline (file://.../_docs/index.html). Needs mkdocs, mkdocs-material,
# mkdocs-jupyter (and jupyter-server-mathjax for formulas offline) in the venv. Usage: bash scripts/docs.sh [OUT]
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.venv/bin:$PATH" NO_MKDOCS_2_WARNING=1
OUT="$(realpath -m "${1:-_docs}")"
SRC="$(mktemp -d)"
trap 'rm -rf "$SRC"' EXIT

# The pages: notebooks without nbdev's directives and hidden cells, flat (one folder, so one relative path to the
# assets serves every page), the README and CONTRIBUTING as pages, and the navigation written from the file names.
python - "$SRC" <<'EOF'
import html, json, re, shutil, sys
from pathlib import Path
src = Path(sys.argv[1]); docs = src / 'docs'; docs.mkdir()
SECTIONS = [('Harness', 0, 9), ('L0-Bench', 10, 18), ('Experiments', 19, 19), ('ProcBench', 20, 29), ('SX', 30, 39),
            ('CoRE', 40, 49), ('Tutorials', 50, 59), ('Bridges', 60, 69)]

def section(nb: Path) -> str:
    if nb.parent.name == 'experiments': return 'Experiments'
    m = re.match(r'(\d\d)', nb.name)
    return next((s for s, lo, hi in SECTIONS if m and lo <= int(m.group(1)) <= hi), 'More')

# mkdocs-jupyter drops backtick spans when it makes a page's table of contents: `## Budgets and `<think>`` became
# "Budgets and", linked to `#budgets-and`, while the heading's id is `budgets-and-think`. As HTML the code survives.
def code_in_headings(md: str) -> str:
    "The markdown with the `code` spans of its headings written as <code> HTML."
    out, fence = [], False
    for line in md.split('\n'):
        if line.lstrip().startswith(('```', '~~~')): fence = not fence
        if not fence and re.match(r'#{1,6}\s', line):
            line = re.sub(r'`([^`]+)`', lambda m: f"<code>{html.escape(m.group(1))}</code>", line)
        out.append(line)
    return '\n'.join(out)

def page(nb: Path) -> tuple[str, str]:
    "Write the notebook's page source; (title, file name)."
    d = json.loads(nb.read_text(encoding='utf-8'))
    cells = []
    for c in d['cells']:
        text = ''.join(c['source'])
        flags = re.findall(r'^#\|\s*(\S+)', text, re.M)
        if c['cell_type'] == 'code' and ({'hide', 'default_exp'} & set(flags) or 'exporti' in flags): continue
        if c['cell_type'] == 'code': text = re.sub(r'^#\|.*\n?', '', text, flags=re.M)
        if c['cell_type'] == 'markdown': text = code_in_headings(text)
        if not text.strip() and not c.get('outputs'): continue
        c['source'] = text
        cells.append(c)
    d['cells'] = cells
    first = next((''.join(c['source']) for c in cells if c['cell_type'] == 'markdown'), '')
    title = re.search(r'^#\s+(.+)$', first, re.M)
    name = ('experiments-' if nb.parent.name == 'experiments' else '') + nb.name
    (docs / name).write_text(json.dumps(d, indent=1), encoding='utf-8')
    return (title.group(1).strip() if title else nb.stem), name

nav = {s: [] for s, *_ in SECTIONS + [('More', 0, 0)]}
names = {}
for nb in sorted(Path('nbs').glob('*.ipynb')) + sorted(Path('nbs/experiments').glob('*.ipynb')):
    if nb.name == 'index.ipynb': continue  # the README is the front page
    title, name = page(nb)
    nav[section(nb)].append({title: name})
    names[str(nb.relative_to('nbs').with_suffix(''))] = name

def link_notebooks(md: str) -> str:
    "`nbs/05_runs` and `05_runs` references of existing notebooks become links to their pages."
    def sub(m):
        key = m.group(2).removesuffix('.ipynb')
        return f"[`{m.group(1) or ''}{m.group(2)}`]({names[key]})" if key in names else m.group(0)
    return re.sub(r'`(nbs/)?([\w/]+?(?:\.ipynb)?)`', sub, md)

# the guide's pages (docs/*.md, linked from the README as docs/NAME.md): flat beside the notebooks' pages
guide = []
for md in sorted(Path('docs').glob('*.md')):
    (docs / md.name).write_text(link_notebooks(md.read_text(encoding='utf-8')), encoding='utf-8')
    guide.append({re.search(r'^#\s+(.+)$', md.read_text(encoding='utf-8'), re.M).group(1).strip(): md.name})
front = re.sub(r'\]\(docs/([\w.-]+\.md)', r'](\1', Path('README.md').read_text(encoding='utf-8'))
(docs / 'index.md').write_text(link_notebooks(front), encoding='utf-8')
(docs / 'contributing.md').write_text(link_notebooks(Path('CONTRIBUTING.md').read_text(encoding='utf-8')), encoding='utf-8')
try:
    import jupyter_server_mathjax
    mj = Path(jupyter_server_mathjax.__file__).parent / 'static'
    shutil.copytree(mj, docs / 'assets/mathjax')
    mathjax = 'assets/mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full,Safe'
except ImportError:
    print('docs: jupyter-server-mathjax is not installed: formulas in notebooks show as TeX source', file=sys.stderr)
    mathjax = 'assets/no-mathjax.js'
# iframe-worker 1.0.4 (MIT, (c) 2020-2022 Martin Donath, npm `iframe-worker`): lets the search worker start from file://;
# mkdocs-material's offline plugin would load it from unpkg.com otherwise.
shim = docs / 'assets/javascripts/iframe-worker-shim.js'
shim.parent.mkdir(parents=True, exist_ok=True)
shim.write_text("""/* iframe-worker 1.0.4, MIT License, Copyright (c) 2020-2022 Martin Donath <martin.donath@squidfunk.com> */
"use strict";(()=>{function c(s,n){parent.postMessage(s,n||"*")}function d(...s){return s.reduce((n,e)=>n.then(()=>new Promise(r=>{let t=document.createElement("script");t.src=e,t.onload=r,document.body.appendChild(t)})),Promise.resolve())}var o=class extends EventTarget{constructor(e){super();this.url=e;this.m=e=>{e.source===this.w&&(this.dispatchEvent(new MessageEvent("message",{data:e.data})),this.onmessage&&this.onmessage(e))};this.e=(e,r,t,i,m)=>{if(r===`${this.url}`){let a=new ErrorEvent("error",{message:e,filename:r,lineno:t,colno:i,error:m});this.dispatchEvent(a),this.onerror&&this.onerror(a)}};let r=document.createElement("iframe");r.hidden=!0,document.body.appendChild(this.iframe=r),this.w.document.open(),this.w.document.write(`<html><body><script>postMessage=${c};importScripts=${d};addEventListener("error",({error})=>{parent.dispatchEvent(new ErrorEvent("error",{filename:"${e}",error}))})<\\/script><script src=${e}?${+Date.now()}><\\/script></body></html>`),this.w.document.close(),onmessage=this.m,onerror=this.e,this.r=new Promise((t,i)=>{this.w.onload=t,this.w.onerror=i})}terminate(){this.iframe.remove(),onmessage=onerror=null}postMessage(e){this.r.catch().then(()=>{this.w.dispatchEvent(new MessageEvent("message",structuredClone({data:e})))})}get w(){return this.iframe.contentWindow}};window.IFrameWorker=o;location.protocol==="file:"&&(window.Worker=o);})();""", encoding='utf-8')
root = Path.cwd()
config = {'INHERIT': str(root / 'mkdocs.yml'), 'docs_dir': str(docs), 'hooks': [str(root / 'scripts/docs_hooks.py')],
          'extra': {'polyfills': ['assets/javascripts/iframe-worker-shim.js']},
          'nav': [{'Home': 'index.md'}, {'Guide': guide}] + [{s: pages} for s, pages in nav.items() if pages] + [{'Contributing': 'contributing.md'}],
          'plugins': ['search', 'offline', {'mkdocs-jupyter': {'execute': False, 'include_source': False, 'no_prompt': True, 'custom_mathjax_url': mathjax,
                                                               'include_requirejs': False, 'cache': False}}]}
(src / 'mkdocs.yml').write_text(json.dumps(config, indent=1), encoding='utf-8')
print(f"docs: {sum(len(p) for p in nav.values())} notebook pages in {len([p for p in nav.values() if p])} sections")
EOF

mkdocs build --quiet --clean --config-file "$SRC/mkdocs.yml" --site-dir "$OUT"
# Nothing may come from the network: no script, image, frame or style sheet of another site in the pages.
NET='(src="(https?:)?//|<link [^>]*href="(https?:)?//)'
if grep -q -E "$NET" -r "$OUT" --include='*.html'; then
  echo "docs: a page loads a resource from the network:" >&2
  grep -o -h -E "${NET}[^\"]*" -r "$OUT" --include='*.html' | sort -u | head >&2
  exit 1
fi
echo "docs: built $OUT ($(find "$OUT" -name '*.html' | wc -l) pages, $(du -sh "$OUT" | cut -f1)); open $OUT/index.html"
