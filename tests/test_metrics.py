"""Property tests of the scoring rules, pass@k, voting and the run-directory path (l0kit.l0.metrics, l0kit.l0.analysis)."""
import json, re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st, HealthCheck

from l0kit.l0.metrics import score_trace, majority_vote, clean_response, TraceScore
from l0kit.protocol.scoring import pass_at_k, bootstrap_ci
from l0kit.l0.analysis import score_responses, summarize_l0, pass_maj_table, survival_curve
from l0kit.runs.report import group_responses, group_runs, report
from l0kit.runs.format import RunError
from conftest import run_json
from l0kit.l0.taxonomy import VALIDATION_PROGRAMS, _random_inputs, write_errors_jsonl, classify_errors
from l0kit.l0.tracer import trace_program

# ---- trace strategies --------------------------------------------------------------------------------------
values = st.one_of(st.integers(-20, 120).map(str), st.sampled_from(["True", "False"]),
                   st.lists(st.integers(0, 9), max_size=12).map(lambda xs: str(xs).replace(" ", "")))
names = st.sampled_from(["x", "y", "a", "cnter_0", "cond_a", "lst_x", "lst_y"])
line_nos = st.integers(3, 60)

@st.composite
def trace_lines(draw, min_size=1, max_size=200):
    "A target trace: starts with `L2,...`, then control lines `Ln,` and value lines `Ln,name:value`."
    n = draw(st.integers(min_size, max_size))
    first = draw(st.one_of(st.just("L2,"), st.builds(lambda a, v: f"L2,{a}:{v}", names, values)))
    rest = draw(st.lists(st.one_of(line_nos.map(lambda k: f"L{k},"),
                                   st.builds(lambda k, a, v: f"L{k},{a}:{v}", line_nos, names, values)),
                         min_size=n - 1, max_size=n - 1))
    return [first] + rest

def _matches(resp_line: str, target_line: str) -> bool:
    "The reference's per-line rule, written independently for the tests."
    r = resp_line.strip().replace(" ", "")
    if target_line.endswith(","): return r.split(",")[0] == target_line.split(",")[0]
    return r == target_line

def _wrong(line: str, rng) -> str:
    "A line that does not match `line` under the reference rules."
    k = int(re.match(r"L(\d+),", line).group(1))
    if line.endswith(","): return f"L{k + 100},"
    return line + "7" if not line.endswith("7") else line[:-1] + "8"

# ---- score_trace --------------------------------------------------------------------------------------------
@given(trace_lines(), st.sampled_from(["", "```\n", "Here is the trace:\n", "<think>L2,x:1</think>\n"]),
       st.sampled_from(["", "\n```", "\nThat is all.", "\nL2,x:999"]))
def test_target_scores_correct_against_itself(target, head, tail):
    s = score_trace(head + "\n".join(target) + tail, target)
    assert s.correct and s.steps_to_error == len(target) == s.target_steps

@given(trace_lines(min_size=2), st.data())
def test_single_corruption_at_step_s(target, data):
    s = data.draw(st.integers(1, len(target) - 1))
    kind = data.draw(st.sampled_from(["replace", "truncate", "skip"]))
    if kind == "replace": resp = target[:s] + [_wrong(target[s], None)] + target[s + 1:]
    elif kind == "truncate": resp = target[:s]
    else:
        resp = target[:s] + target[s + 1:]
        if s + 1 < len(target) and _matches(target[s + 1], target[s]): return  # skipping a line equal to its successor
    sc = score_trace("\n".join(resp), target)
    assert (sc.correct, sc.steps_to_error) == (False, s)
    assert sc.target_context[-1] == target[s] and len(sc.target_context) == min(s, 10) + 1

@given(trace_lines(min_size=1))
def test_corruption_of_first_value_line(target):
    if target[0] == "L2,": return
    sc = score_trace("\n".join([_wrong(target[0], None)] + target[1:]), target)
    assert (sc.correct, sc.steps_to_error) == (False, 0)

@given(trace_lines(), st.data())
def test_spaces_and_blank_lines_are_ignored(target, data):
    pad = data.draw(st.sampled_from(["", " ", "  ", "\t"]))
    resp = "\n\n".join(pad + t.replace(",", ", ").replace(":", " : ") + pad for t in target)
    assert score_trace(resp, target).correct

@given(trace_lines(max_size=30))
def test_strict_mode_fails_extra_trace_lines(target):
    resp = "\n".join(target) + "\nL7,x:1"
    assert score_trace(resp, target).correct
    s = score_trace(resp, target, strict=True)
    assert (s.correct, s.steps_to_error, s.failure) == (False, len(target), "extra_steps")

@settings(suppress_health_check=[HealthCheck.too_slow], max_examples=200)
@given(st.one_of(st.text(max_size=2000), st.binary(max_size=2000), st.none()), trace_lines(max_size=20))
def test_bad_input_never_crashes(response, target):
    s = score_trace(response, target)
    assert isinstance(s, TraceScore) and 0 <= s.steps_to_error <= len(target)
    text = response.decode("utf-8", "replace") if isinstance(response, bytes) else (response or "")
    if "L2," not in text: assert (s.correct, s.steps_to_error, s.failure) == (False, 0, "no_trace")

@pytest.mark.parametrize("response", ["", None, b"\x00" * 10_000, "x" * 3_000_000, "\ud800\udfff L2", "L2" * 500_000])
def test_huge_binary_empty_score_zero(response):
    s = score_trace(response, ["L2,", "L3,x:1", "L4,"])
    assert (s.correct, s.steps_to_error) == (False, 0)

def test_real_traces_score_correct():
    rng = np.random.default_rng(1)
    for prog in VALIDATION_PROGRAMS:
        for _ in range(20):
            t = trace_program(prog, _random_inputs(prog, rng))
            assert score_trace("```\n" + "\n".join(t) + "\n```", t).steps_to_error == len(t)

# ---- voting and pass@k --------------------------------------------------------------------------------------
def paper_pass_at_k(n, c, k):  # appendix G of the paper
    if n - c < k: return 1.0
    return 1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1))

@given(st.integers(1, 1100).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n))))
def test_pass_at_k_matches_paper_formula(nck):
    n, c, k = nck
    assert pass_at_k(n, c, k) == pytest.approx(paper_pass_at_k(n, c, k), abs=1e-9)

def test_pass_at_k_vectorised():
    rng = np.random.default_rng(0)
    n = rng.integers(31, 100, 500); c = rng.integers(0, 31, 500); k = rng.integers(1, 31, 500)
    assert np.allclose(pass_at_k(n, c, k), [paper_pass_at_k(*a) for a in zip(n, c, k)], atol=1e-9)

@given(st.lists(st.sampled_from(["L2,a", "L2,b", "no trace", "x L2,a"]), min_size=1, max_size=31))
def test_majority_vote_is_most_frequent_earliest(responses):
    cleaned = [clean_response(r) for r in responses]
    best = max(cleaned.count(c) for c in cleaned)
    assert majority_vote(responses) == next(c for c in cleaned if cleaned.count(c) == best)

def test_bootstrap_reproducible_and_covers_mean():
    x = np.random.default_rng(0).random(300)
    lo, hi = bootstrap_ci(x, seed=3)
    assert lo < x.mean() < hi and (lo, hi) == bootstrap_ci(x, seed=3)

# ---- a run directory end to end -----------------------------------------------------------------------------
def _make_run(tmp_path, voters=7, garbage=True):
    rng = np.random.default_rng(0)
    items, lines = [], []
    for i, prog in enumerate(VALIDATION_PROGRAMS * 3):
        t = trace_program(prog, _random_inputs(prog, rng))
        items.append(dict(id=f"p{i}", split=["short", "long"][i % 2], program=prog, target=t, steps=len(t), demonstrations=[]))
        for v in range(voters):
            r = "\n".join(t if v % 3 else t[: v + 1])
            lines.append(json.dumps(dict(id=f"p{i}", split=items[-1]["split"], voter=v, response=r, error=None)))
    if garbage:
        lines += [json.dumps(dict(id="p0", voter=voters, response=None)), json.dumps(dict(id="p1", voter=voters, response="\x00" * 5000)),
                  '{"id": "p2", "voter": 99, "response": "trunc']
    (tmp_path / "run.json").write_text(json.dumps(run_json(voters)))
    (tmp_path / "responses.jsonl").write_text("\n".join(lines) + "\n")
    return items

def _save_data(items, path):
    "The items as an L0 data set folder (what `l0kit report --data` reads)."
    from l0kit.l0.dataset import save_dataset
    by_split = {}
    for it in items: by_split.setdefault(it["split"], []).append(it)
    save_dataset(by_split, {"config": {"gen": {"max_trace_steps": 500}}, "counts": {k: len(v) for k, v in by_split.items()}}, path)
    return path

def _responses(run_dir):
    "The run's usable records, read by the harness's one results path."
    return group_responses(group_runs([run_dir])[0])

def test_report_end_to_end(tmp_path):
    (tmp_path / "run").mkdir()
    items = _make_run(tmp_path / "run")
    (rep,) = report([tmp_path / "run"], data=_save_data(items, tmp_path / "data"))
    t = rep.tables["Table 1 (k = 7)"]
    assert t.index[-1] == "average" and set(t.index[:-1]) == {"short", "long"} and t.loc["average", "programs"] == 6
    assert any(n.startswith("2 line(s) that do not fit the record format") for n in rep.notes), rep.notes  # the cut line, the record with no response
    resp, _ = _responses(tmp_path / "run")
    scores = score_responses(resp, items)
    assert scores.loc[scores.response.isna(), "failure"].eq("no_trace").all()
    pm = pass_maj_table(scores, ks=(1, 5, 7))
    assert list(pm.columns) == ["pass@1", "pass@5", "pass@7", "maj@5", "maj@7"]
    assert (pm["pass@1"] <= pm["pass@5"] + 1e-9).all() and (pm["pass@5"] <= pm["pass@7"] + 1e-9).all()
    paths = write_errors_jsonl(classify_errors(scores, items), items, tmp_path / "errors")
    rec = json.loads(paths[0].read_text().splitlines()[0])
    assert {"id", "tgt_trace_lines", "model_trace_lines", "program"} <= set(rec)
    sc = survival_curve(scores)
    assert ((sc.survival >= 0) & (sc.survival <= 1)).all()

def test_report_without_items_or_dataset(tmp_path):
    _make_run(tmp_path, garbage=False)
    with pytest.raises(RunError, match="is not here: pass its folder"):
        report([tmp_path])

def test_summary_matches_hand_computation(tmp_path):
    "Table 1 of four hand-written programs of 5 voters each, every expected cell counted by hand (not from the frame)."
    target = ["L2,a:1", "L3,b:2", "L4,"]                       # three lines; a response is one of these four:
    full, one, two, none = "\n".join(target), target[0], "\n".join(target[:2]), "I cannot trace this."
    voters = {"p0": (full, full, full, one, none),            # short: correct 3/5, steps 3+3+3+1+0; majority full (3 votes)
              "p1": (none, one, one, full, none),             # short: correct 1/5, steps 0+1+1+3+0; none and one tie at 2,
                                                              #   the earliest voter's (none) wins: majority steps 0, wrong
              "p2": (two,) * 5,                               # long: correct 0/5, steps 2 each; majority two, wrong
              "p3": (full, two, two, two, full)}              # long: correct 2/5, steps 3+2+2+2+3; majority two (3 votes)
    split = {"p0": "short", "p1": "short", "p2": "long", "p3": "long"}
    items = [dict(id=i, split=split[i], program="def function(a):\n    b = a + 1\n    return\n", target=target, steps=3,
                  demonstrations=[]) for i in voters]
    (tmp_path / "run.json").write_text(json.dumps(run_json(5)))
    (tmp_path / "responses.jsonl").write_text("".join(json.dumps(dict(id=i, split=split[i], voter=v, response=r, error=None)) + "\n"
                                                      for i, rs in voters.items() for v, r in enumerate(rs)))
    resp, _ = _responses(tmp_path)
    t = summarize_l0(score_responses(resp, items), k=5)
    cols = ["Steps to Err. single attempt", "Steps to Err. majvote@5", "Trace Acc. single attempt", "Trace Acc. majvote@5",
            "Trace Acc. pass@5"]
    assert list(t.columns[-5:]) == cols
    want = {"short": [15 / 10, (3 + 0) / 2, 100 * 4 / 10, 100 * 1 / 2, 100 * 2 / 2],   # pass@5: each has a correct voter
            "long": [22 / 10, (2 + 2) / 2, 100 * 2 / 10, 0.0, 100 * 1 / 2]}          # p2 has none, p3 has two
    want["average"] = [(a + b) / 2 for a, b in zip(want["short"], want["long"])]
    for row, values in want.items():
        assert t.loc[row, cols].tolist() == pytest.approx(values), (row, t.loc[row, cols].tolist())
    assert t.loc["average", "programs"] == 4 and t["voters"].tolist() == [5, 5, 5]

# ---- published numbers against the paper's text -------------------------------------------------------------
from conftest import seed_text
L0_PAPER = "000_90d55257f6dd9005.txt"   # under ../shared/seeds; missing: a skip, or a failure under CI=true

@pytest.mark.parametrize("table", ["1", "7", "8"])
def test_published_rows_appear_in_the_paper(table):
    from l0kit.l0.published import published_table
    text = [l.split("\t") for l in seed_text(L0_PAPER).read_text().splitlines()]
    df = published_table(table)
    num_cols = [c for c in df.columns if c not in ("model", "printed_name", "thinking", "split")]
    for _, row in df.iterrows():
        want = ["-" if pd.isna(row[c]) else row[c] for c in num_cols]
        found = False
        for f in text:
            if f[0].strip() != row["printed_name"] or len(f) < len(num_cols) + 1: continue
            cells = [x.strip() for x in f[1:] if x.strip()]
            if table == "1": cells = cells[1:]  # the thinking column
            try: got = [x if x == "-" else float(x) for x in cells[:len(num_cols)]]
            except ValueError: continue  # a same-named row of another table
            if got == want: found = True; break
        assert found, f"table {table}: row {row['printed_name']} {want} not found in the paper's text"

# ---- the fast path against a plain transcription of the reference rules ---------------------------------------
def reference_score(response, target):
    "Spec §4, rule by rule, written as plainly as possible: (correct, steps_to_error)."
    text = response
    if "</think>" in text: text = text[text.index("</think>"):]
    if "L2," not in text: return False, 0
    text = text[text.index("L2,"):]
    tl = [x.strip() for x in target if x.strip()]
    rl = [x.strip() for x in text.split("\n") if x.strip()]
    k = 0
    for r, t in zip(rl, tl):
        if t.endswith(","): ok = r.split(",")[0].replace(" ", "").strip() == t.split(",")[0]
        else: ok = r.replace(" ", "").strip() == t
        if not ok: break
        k += 1
    return k == len(tl), k

perturb = st.sampled_from(["keep", "keep", "keep", "spaces", "tabs", "suffix", "blank", "crlf", "typo", "drop", "dup",
                           "tab_comma", "cr_only"])

@st.composite
def noisy_response(draw, target):
    out = []
    for t in target:
        p = draw(perturb)
        if p == "spaces": t = " ".join(t)
        elif p == "tabs": t = "\t" + t + " \t"
        elif p == "suffix": t = t + draw(st.sampled_from([",x", "5", "  ", ",", "x"]))
        elif p == "blank": out.append(draw(st.sampled_from(["", "  ", "\t", "\r"])))
        elif p == "crlf": t = t + "\r"
        elif p == "typo" and len(t) > 3: t = t[:-1] + draw(st.sampled_from(["0", "]", ",", "e"]))
        elif p == "drop": continue
        elif p == "dup": out.append(t)
        elif p == "tab_comma": t = t.replace(",", "\t,", 1)
        elif p == "cr_only": t = t + "\r" + t
        out.append(t)
    head = draw(st.sampled_from(["", "```\n", "Sure.\n", "<think>L2,x:1</think>", "L2 is\n"]))
    tail = draw(st.sampled_from(["", "\n", "\n```", "\r\n```\r\n", " done"]))
    return head + "\n".join(out) + tail

@settings(max_examples=500, suppress_health_check=[HealthCheck.too_slow])
@given(trace_lines(max_size=40), st.data())
def test_score_trace_equals_plain_reference(target, data):
    resp = data.draw(noisy_response(target))
    s = score_trace(resp, target)
    assert (s.correct, s.steps_to_error) == reference_score(resp, target), repr(resp)

# ---- the `l0kit report` command -----------------------------------------------------------------------------
def test_report_cli_all_options(tmp_path, capsys):
    from l0kit.cli.main import main
    from l0kit.l0.dataset import save_dataset
    (tmp_path / "run").mkdir()
    items = _make_run(tmp_path / "run", voters=5, garbage=False)
    by_split = {}
    for it in items: by_split.setdefault(it["split"], []).append(it)
    save_dataset(by_split, {"config": {"gen": {"max_trace_steps": 500}}, "counts": {k: len(v) for k, v in by_split.items()}},
                 tmp_path / "data")
    rc = main(["report", str(tmp_path / "run"), "--data", str(tmp_path / "data"), "--set", "pass_maj=true", "--set", "compare=QwQ-32B",
               "--set", f"errors={tmp_path / 'err'}", "--figures", str(tmp_path / "fig")])
    out = capsys.readouterr().out
    assert rc == 0 and "Table 1 (k = 5)" in out and "Kit vs paper (QwQ-32B)" in out and "First-error types" in out
    assert sorted(p.name for p in (tmp_path / "fig").iterdir()) == sorted(
        f"{n}.{e}" for n in ("accuracy_vs_steps", "voting", "survival") for e in ("png", "svg", "json"))
    assert len(list((tmp_path / "err").glob("voter_*/errors.jsonl"))) == 5

def test_report_cli_user_errors_exit_2(tmp_path, capsys):
    from l0kit.cli.main import main
    assert main(["report", str(tmp_path / "missing")]) == 2
    assert "is not a run folder (no run.json)" in capsys.readouterr().err

def test_summary_intervals_cover_the_table(tmp_path):
    from l0kit.l0.analysis import summary_intervals
    items = _make_run(tmp_path, voters=5, garbage=False)
    resp, _ = _responses(tmp_path)
    scores = score_responses(resp, items)
    t, ci = summarize_l0(scores, k=5), summary_intervals(scores, k=5, n_resamples=500)
    for row in t.index:
        for col in [c for c in t.columns if c.startswith(("Steps", "Trace"))]:
            assert ci.loc[row, (col, "low")] - 1e-9 <= t.loc[row, col] <= ci.loc[row, (col, "high")] + 1e-9

NUMERIC_RUNS = {  # per table, the columns whose values stand next to each other on one line of the paper's text
    "2": ["Trace Acc. pass@1", "ci_half_width"],
    "3": ["Trace Acc. single attempt", "Trace Acc. majvote@31", "Trace Acc. pass@31"],
    "4": ["shots", "Trace Acc. single attempt", "Trace Acc. majvote@31", "Trace Acc. pass@31"],
    "5": ["target_steps", "gpt-4o", "qwen2.5-coder-7b-inst", "qwen2.5-7b-inst-1m", "qwen2.5-coder-32b-inst", "qwen2.5-32b-inst"],
    "9": ["shots", "Steps to Err. single attempt", "Steps to Err. majvote@31", "Trace Acc. single attempt",
          "Trace Acc. majvote@31", "Trace Acc. pass@31"],
    "10": ["short", "medium", "long", "extra_long"],
}

@pytest.mark.parametrize("table", sorted(NUMERIC_RUNS))
def test_published_small_tables_appear_in_the_paper(table):
    from l0kit.l0.published import published_table
    lines = [[float(x) for x in re.findall(r"(?<![\w.])-?\d+(?:\.\d+)?", l.replace("K", ""))] for l in seed_text(L0_PAPER).read_text().splitlines()]
    df = published_table(table)
    for _, row in df.iterrows():
        want = [float(row[c]) for c in NUMERIC_RUNS[table] if not pd.isna(row[c])]
        ok = any(nums[i:i + len(want)] == want for nums in lines for i in range(len(nums) - len(want) + 1))
        assert ok, f"table {table}: {want} not found on one line of the paper's text"

def test_report_validates_taxonomy_on_simulated_runs(tmp_path, capsys):
    "Records carrying a simulated model's `meta.injected` get a confusion matrix in `--set errors=DIR` output (the command in process)."
    from l0kit.cli.main import main
    from l0kit.l0.taxonomy import corrupt_trace
    rng = np.random.default_rng(0)
    items, lines = [], []
    for i, prog in enumerate(VALIDATION_PROGRAMS * 4):
        t = trace_program(prog, _random_inputs(prog, rng))
        items.append(dict(id=f"p{i}", split="short", program=prog, target=t, steps=len(t), demonstrations=[]))
        for v in range(3):
            resp, e = corrupt_trace(t, prog, "expression", rng)
            meta = {"simulated": True, "injected": [{"step": e, "kind": "value"}]}
            lines.append(json.dumps(dict(id=f"p{i}", split="short", voter=v, response="\n".join(resp), meta=meta)))
    (tmp_path / "run.json").write_text(json.dumps(run_json(3, model="simulated:rate=0.1", split="short", simulated=True)))
    (tmp_path / "responses.jsonl").write_text("\n".join(lines) + "\n")
    from l0kit.l0.dataset import save_dataset
    save_dataset({"short": items}, {"config": {"gen": {"max_trace_steps": 500}}, "counts": {"short": len(items)}}, tmp_path / "data")
    assert main(["report", str(tmp_path), "--data", str(tmp_path / "data"), "--set", f"errors={tmp_path / 'err'}"]) == 0
    out = capsys.readouterr().out
    assert "Injected (simulated model) vs classified first errors: accuracy 1.000" in out
    # 8 items x 3 voters = 24 wrong responses, each an injected value error ("expression") classified as one: the matrix
    # has that one row and one column (no column of a type never predicted)
    matrix = out.split("accuracy 1.000\n", 1)[1].split("\n\n", 1)[0].split("\n")
    assert len(items) == 8 and [l.split() for l in matrix] == [["predicted", "expression"], ["injected"], ["expression", "24"]]

# ---- the constant hazard measured by program (issue 35) -------------------------------------------------------
def _hazard_scores():
    "Three programs of three voters by hand: x1 (10 steps) errs at step 3 thrice, x2 (10 steps) is right thrice, y1 (5 steps) errs at steps 5, 1 and 5."
    rows = [("x1", "x", 10, False, 2)] * 3 + [("x2", "x", 10, True, 10)] * 3 + [("y1", "y", 5, False, 4), ("y1", "y", 5, False, 0), ("y1", "y", 5, False, 4)]
    return pd.DataFrame([dict(id=i, split=s, target_steps=t, correct=c, failure=None if c else "mismatch", steps_to_error=e)
                         for i, s, t, c, e in rows])

def test_hazards_by_split_are_errors_over_steps_attempted():
    from l0kit.l0.analysis import hazard_by_split, per_step_error_rate
    h = hazard_by_split(_hazard_scores())
    # x: 3 errors in 3 * 3 + 3 * 10 = 39 steps; y: 3 errors in 5 + 1 + 5 = 11 steps; pooled 6 in 50
    assert h.loc["x", ["errors", "steps attempted"]].tolist() == [3, 39] and h.loc["y", ["errors", "steps attempted"]].tolist() == [3, 11]
    assert h.loc["x", "hazard"] == pytest.approx(3 / 39) and h.loc["y", "hazard"] == pytest.approx(3 / 11)
    assert h.loc["x", ["low", "high"]].tolist() == pytest.approx([0, 6 / 18])   # x1x1: 6/18, x1x2: 3/39, x2x2: 0/60
    assert per_step_error_rate(_hazard_scores())["rate"] == pytest.approx(6 / 50)

def test_the_fit_interval_resamples_programs_within_splits():
    "A program's voters travel together: x draws x1x1 (6/18), x1x2 (3/39) or x2x2 (0/60) with chances 1/4, 1/2, 1/4, each with y1's 3 errors in 11 steps."
    from l0kit.l0.analysis import program_bootstrap_rate
    b = program_bootstrap_rate(_hazard_scores(), seed=3)
    assert (b["low"], b["high"]) == (pytest.approx(3 / 71), pytest.approx(9 / 29))   # x2x2 + y1: 3/71; x1x1 + y1: 9/29
    assert b["rate"] == pytest.approx(6 / 50) and b["programs"] == 3

def test_constant_hazard_check_says_where_the_prediction_leaves_the_interval():
    from l0kit.l0.analysis import constant_hazard_check
    chk = constant_hazard_check(_hazard_scores(), {"rate": 0.125, "low": 0.1, "high": 0.2})
    assert chk.loc["x", "predicted"] == pytest.approx(100 * 0.875 ** 10) and chk.loc["x", "inside"]   # 26.3 % in [0, 100]
    assert chk.loc["y", "predicted"] == pytest.approx(100 * 0.875 ** 5) and not chk.loc["y", "inside"]  # 51.3 %, both programs wrong
    assert chk.loc["y", "predicted low"] == pytest.approx(100 * 0.8 ** 5) and chk.loc["y", "predicted high"] == pytest.approx(100 * 0.9 ** 5)
    ends = constant_hazard_check(_hazard_scores(), {"rate": 0.125, "low": 1.0, "high": 1.0})   # ends that predict 0 %, y's accuracy
    assert not ends.loc["y", "inside"]   # the point prediction is judged, not the ends of its interval

def test_rungs_beyond_the_trained_lengths():
    from l0kit.l0.analysis import beyond_trained, WITHIN, BEYOND
    bt = beyond_trained(_hazard_scores(), longest=5)
    assert bt["length"].to_dict() == {"y": WITHIN, "x": BEYOND} and bt.loc["x", "programs beyond"] == 2
