"""L0-Bench against the authors' own code, run once (tests/data/l0_reference/README.md): the target traces their
tracer and evaluator make of 400 programs the kit generated, and 1,100 responses their aggregator scored."""
import gzip, json
from pathlib import Path

from l0kit.l0.metrics import score_trace
from l0kit.l0.tracer import trace_program

DATA = Path(__file__).parent / "data" / "l0_reference"

def _rows(name):
    with gzip.open(DATA / name, "rt") as f: return [json.loads(l) for l in f]

def test_tracer_gives_the_authors_target_traces():
    cases = _rows("traces.jsonl.gz")
    assert len(cases) == 400 and {c["split"] for c in cases} == {"short", "medium", "long", "extra_long"}
    assert sum(len(c["target"]) for c in cases) > 20_000   # lines compared
    assert [c["id"] for c in cases if trace_program(c["program"], c["input"]) != c["target"]] == []

def test_scorer_agrees_with_the_authors_aggregator():
    "Whole-trace accuracy and steps to the first error, as the authors' `TraceAnalyzer.analyze_trace` found them."
    rows = _rows("scores.jsonl.gz")
    assert len(rows) == 1100 and 0 < sum(r["is_failed"] for r in rows) < 1100
    wrong = []
    for r in rows:
        s = score_trace(r["response"], r["target"])
        if (s.correct, s.steps_to_error) != (not r["is_failed"], r["correct_traces"]): wrong.append((r["id"], r["kind"]))
    assert wrong == []
