"""Nothing committed names one machine: no absolute path of a user's or a work directory in any tracked file (issue 22,
issue 34): tests, notebooks' sources and committed outputs, docs, scripts, data and the figures' records, SVGs and PNG
metadata (`save_figure` writes paths relative to the repository). Paths are found from the repository root
(`../shared/seeds` for the papers), and a notebook that prints a warning shows the kit's file path, so such cells
record their warnings instead."""
import gzip, re, shutil, subprocess
from conftest import ROOT, require

MACHINE_PATH = re.compile(rb"(?<![\w.])/(?:work|home|Users|mnt)/[\w.-]+")


def tracked_files() -> list:
    "Every file git tracks in the repository (the check needs a git checkout: under CI=true a missing git fails)."
    require(shutil.which('git') is not None and (ROOT / '.git').exists(), 'not a git checkout: the tracked files are unknown')
    out = subprocess.run(['git', 'ls-files', '-z'], cwd=ROOT, capture_output=True, check=True).stdout
    return [ROOT / p.decode() for p in out.split(b'\0') if p]


def test_no_machine_path_in_any_tracked_file():
    found, files = [], tracked_files()
    assert len(files) > 300 and any(f.suffix == '.svg' for f in files) and any(f.suffix == '.png' for f in files)
    for f in files:
        if not f.is_file(): continue  # deleted in the working tree, not yet committed
        raw = f.read_bytes()
        if f.suffix == '.gz': raw = gzip.decompress(raw)  # reference data: what it holds, not its compressed bytes
        for n, line in enumerate(raw.split(b'\n'), 1):  # PNG metadata (tEXt) is plain bytes too
            found += [f"{f.relative_to(ROOT)}:{n}: {m[0].decode('latin-1')}" for m in MACHINE_PATH.finditer(line)]
    assert not found, "absolute paths of one machine:\n" + "\n".join(found[:20])


def test_the_pattern_finds_what_it_must():
    "The check itself: a path printed by a warning is found, a URL path or a relative one is not (built in parts: this file names no machine)."
    assert MACHINE_PATH.search(b'"/' + b'work/main/l0kit/backends/openai_http.py:165: ServerFailover"')
    assert MACHINE_PATH.search(b"Path('/" + b"home/ci/shared/seeds')")
    assert MACHINE_PATH.search(b'<dc:description>{"data": "/' + b'work/main/data/core-seed0"}')  # a figure's SVG metadata
    assert not any(MACHINE_PATH.search(s) for s in (b'../shared/seeds', b'http://x.org' + b'/work' + b'/y', b'tests/data/' + b'work/a', b'/tmp/x'))
