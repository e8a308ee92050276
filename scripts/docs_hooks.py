"""mkdocs hooks of the documentation build (`scripts/docs.sh` names this file in the config it writes).

mkdocs-jupyter makes a new nbconvert exporter, so a new jinja environment, for each notebook, and each recompiled the
same templates (twice a notebook: the page and its table of contents); and each notebook page carried nbconvert's
JupyterLab style sheet inline (about 575 KB of the 800 KB of a page), which the search plugin then parsed on every page.
Here the compiled templates are kept in memory for the build, and the style sheet is written once, as
`assets/jupyter-notebook.css`, each page linking to it. The pages render the same; the site is about a fifth the size."""
from __future__ import annotations
import re
from pathlib import Path
import jinja2
from nbconvert.exporters.templateexporter import TemplateExporter


class _MemoryBytecodeCache(jinja2.BytecodeCache):
    "Compiled templates by name and source checksum (jinja's bucket key), for every environment of one build."
    def __init__(self): self.code: dict[str, bytes] = {}
    def load_bytecode(self, bucket):
        if bucket.key in self.code: bucket.bytecode_from_string(self.code[bucket.key])
    def dump_bytecode(self, bucket): self.code[bucket.key] = bucket.bytecode_to_string()


_BYTECODE = _MemoryBytecodeCache()
_create_environment = TemplateExporter._create_environment

def _environment_with_cache(self):
    env = _create_environment(self)
    env.bytecode_cache = _BYTECODE
    return env

TemplateExporter._create_environment = _environment_with_cache

CSS_NAME = 'assets/jupyter-notebook.css'
_JUPYTER_CSS = re.compile(r'<style type="text/css">\s*(@charset "UTF-8";\.jupyter-wrapper\{.*?)</style>', re.S)
_css: dict[str, str] = {}  # the one style sheet, once a page had it


def on_page_content(html: str, page, config, files) -> str:
    "The page with nbconvert's inline JupyterLab style sheet replaced by a link to the shared copy (left inline if it differs)."
    m = _JUPYTER_CSS.search(html)
    if not m: return html
    css = _css.setdefault('text', m.group(1))
    if css != m.group(1): return html  # another theme's sheet: keep it where it is
    return html[:m.start()] + f'<link rel="stylesheet" href="{CSS_NAME}">' + html[m.end():]


def on_post_build(config) -> None:
    "Write the shared style sheet beside the pages."
    if 'text' in _css:
        out = Path(config['site_dir']) / CSS_NAME
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(_css['text'], encoding='utf-8')
