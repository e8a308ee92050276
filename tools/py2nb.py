"""Authoring aid: turn a percent-format script into a clean notebook.

Cells start with `# %%` (code) or `# %% [markdown]` (markdown; each line's leading `# ` is removed).
The notebook in `nbs/` is the source of truth afterwards; this only saves typing JSON by hand.
Usage: python tools/py2nb.py SRC.py nbs/NAME.ipynb
"""
import json, re, sys
from pathlib import Path

def convert(src: str) -> dict:
    cells, kind, buf = [], None, []
    def flush():
        if kind is None: return
        text = "\n".join(buf).strip("\n")
        if kind == "markdown":
            text = "\n".join(re.sub(r"^# ?", "", l) for l in text.splitlines())
        if not text.strip(): return
        lines = text.splitlines(keepends=True)
        cell = {"cell_type": kind, "metadata": {}, "source": lines}
        if kind == "code": cell.update(execution_count=None, outputs=[])
        cells.append(cell)
    for line in src.splitlines():
        m = re.match(r"^# %%( \[markdown\])?\s*$", line)
        if m:
            flush(); kind = "markdown" if m.group(1) else "code"; buf = []
        else: buf.append(line)
    flush()
    return {"cells": cells, "metadata": {"kernelspec": {"display_name": "python3", "language": "python", "name": "python3"}},
            "nbformat": 4, "nbformat_minor": 5}

if __name__ == "__main__":
    src, dst = sys.argv[1], sys.argv[2]
    Path(dst).write_text(json.dumps(convert(Path(src).read_text()), indent=1) + "\n")
