"ProcBench: generators vs solvers, determinism, metrics edge cases, the answer parser on messy answers."
import gzip, hashlib, json, os, random, subprocess, sys
from pathlib import Path
import pytest
from hypothesis import given, settings, strategies as st

from l0kit.procbench import (TASKS, ProcBenchBenchmark, ProcBenchError, compat_equal, empty_prediction,
                             generate_dataset, get_task, load_release, parse_answer, render_answer, score, solve,
                             states_equal)

@pytest.fixture(scope="module")
def full_set():
    return generate_dataset()

# --- tasks ---------------------------------------------------------------------------------------------------------

def test_full_set_layout(full_set):
    assert len(full_set) == 5520
    assert len({it["id"] for it in full_set}) == 5520
    per_task = {}
    for it in full_set: per_task.setdefault(it["task_name"], []).append(it["n"])
    assert len(per_task) == 23 and all(sorted(ns) == sorted(list(range(2, 26)) * 10) for ns in per_task.values())
    assert {it["split"] for it in full_set if it["n"] <= 6} == {"short"}
    assert {it["split"] for it in full_set if 7 <= it["n"] <= 16} == {"medium"}
    assert {it["split"] for it in full_set if it["n"] >= 17} == {"long"}

REFERENCE = Path(__file__).parent / "data" / "procbench_reference"   # the authors' release, run once (README.md there)

def _reference(name):
    with gzip.open(REFERENCE / name, "rt") as f: return [json.loads(l) for l in f]

def test_solver_agrees_with_the_authors_generator():
    "The kit's solver, on 1,097 questions the authors' own generators wrote, gives the label their generators gave."
    refs = _reference("labels.jsonl.gz")
    assert len(refs) == 1097 and len({r["task_name"] for r in refs}) == 23 and {r["n"] for r in refs} == set(range(2, 26))
    wrong = [(r["task_name"], r["example"]) for r in refs if solve(r["task"], r["question"]) != r["label"]]
    assert wrong == []

def test_compat_scoring_agrees_with_the_authors_evaluator():
    "FM, PML, PA and SM of 1,096 predictions (8 kinds per label) as the authors' evaluator scored them."
    cases = _reference("evaluator_cases.jsonl.gz")
    assert len(cases) == 1096
    wrong = []
    for c in cases:
        pred = dict(c["prediction"])
        if pred["final"] == "" and c["label"]["final"] != "": pred["final"] = None   # the kit's parser: no final state read
        s = score(c["label"], pred, compat=True)
        if (s["fm"], s["pml"], s["pa"], s["sm"]) != (c["fm"], c["pml"], c["pa"], c["sm"]): wrong.append((c["task_name"], c["kind"], s, c))
    assert wrong == [], wrong[:3]

def test_a_missing_final_state_is_where_the_paper_and_the_release_differ():
    "An answer that lists every state as a step and names no final: the release scores SM 0, the paper (default) SM 1."
    for c in _reference("evaluator_cases.jsonl.gz"):
        if c["kind"] != "all as steps, no final" or c["label"]["final"] == "": continue
        pred = {**c["prediction"], "final": None}
        assert (c["sm"], score(c["label"], pred)["sm"]) == (0.0, 1), c   # the release: one state too many; the paper: all

_TYPES = {"str": str, "int": int, "list[str]": list, "list[int]": list}

def test_label_types_follow_the_task(full_set):
    for it in full_set:
        t = get_task(it["task"])
        assert all(type(s) is _TYPES[t.intermediate_type] for s in it["label"]["intermediate"]), it["id"]
        assert type(it["label"]["final"]) is _TYPES[t.final_type], it["id"]
        for s in it["label"]["intermediate"] + [it["label"]["final"]]:
            if isinstance(s, list):
                inner = int if t.intermediate_type == "list[int]" or t.final_type == "list[int]" else str
                assert all(type(x) is inner for x in s), it["id"]

def _digest(items):
    return hashlib.sha256(json.dumps(items, sort_keys=True).encode()).hexdigest()

def test_deterministic_across_workers_and_hash_seeds(full_set):
    assert generate_dataset(workers=2) == full_set
    code = "import json,hashlib; from l0kit.procbench import generate_dataset; " \
           "print(hashlib.sha256(json.dumps(generate_dataset(limit=24), sort_keys=True).encode()).hexdigest())"
    outs = set()
    for hs in ("0", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": hs}
        outs.add(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout.strip())
    assert outs == {_digest(generate_dataset(limit=24))}

def test_seeds_change_the_set():
    a, b = generate_dataset(limit=3, seed=0), generate_dataset(limit=3, seed=1)
    assert [x["n"] for x in a] == [x["n"] for x in b]
    assert sum(x["question"] != y["question"] for x, y in zip(a, b)) > 60

def test_spec_checked_examples():
    assert solve("task01", "String: itstb") == {"init": "itstb", "intermediate": ["btsti"], "final": "bistt"}
    assert solve("Count", "[Question]\nStrings:\n['ihi6ms5r9', 'abkuwk']")["final"] == 3954
    assert solve("Compare", "Target: maay\nCandidate: mtlg, mafu, maay, maay, maez, mohc")["final"] == ["m", "ma", "maay"]
    assert solve("FindCyclic", "String: lknq\nCommand: ['l', '3']")["intermediate"] == [["k", "2"], ["n", "1"]]
    assert solve("Encode", "String:\n000000001000")["final"] == ["0_8", "1_1", "0_3"]
    assert solve("Rotate", "String:\ngyxehwhyns\nIndices:\n(2, 6), (0, 2), (0, 2)")["final"] == "gywxehhyns"

def test_malformed_questions_raise_named_errors():
    with pytest.raises(ProcBenchError, match="no 'Indices:' line"): solve("Rotate", "String: abc")
    with pytest.raises(ProcBenchError, match="no candidate equals"): solve("Compare", "Target: ab\nCandidate: ac, ad")
    with pytest.raises(ProcBenchError, match="states pass 2,000,000 characters"): solve("Decompose", "characters: a\nrules:\na -> ab")
    with pytest.raises(ProcBenchError, match="unknown ProcBench task"): solve("Sorting", "String: ab")

def test_cumulate_values_stay_exact():
    q = "N = 9\nOperations: [" + ", ".join(["Multiply 5"] * 25) + "]"
    assert solve("Cumulate", q)["final"] == 9 * 5 ** 25

# --- metrics -------------------------------------------------------------------------------------------------------

def test_reference_evaluator_comparisons():
    # the reference evaluator's own assertions, through compat_equal
    assert compat_equal(5, "5") and compat_equal(32, "32") and compat_equal(234, 234)
    assert not any(compat_equal(5, x) for x in ("55", "a", [5], None, []))
    assert compat_equal("21", 21) and compat_equal("fe a t", "fe a t")
    assert not any(compat_equal("abc", x) for x in ("ac", ["abc"], None, []))
    assert compat_equal([1, 3, 5], [1, 3, 5]) and compat_equal(["abc", "de"], ["abc", "de"])
    assert not any(compat_equal(a, b) for a, b in [([], []), ([], [1]), ([2], [3]), ([1], [1, 1]), ([1], 1),
                                                    (["abc", "de"], ["de", "abc"]), ([1], None), (["abc", "de"], [None, "de"])])

def test_typed_equality_is_strict():
    assert not states_equal(12, 12.0) and not states_equal(1, True) and not states_equal("12", 12)
    assert not states_equal(["a", "b", "c"], "abc") and states_equal([["a"]], [("a",)])

def test_an_answer_without_a_final_state_is_the_states_it_gave():
    "Section 3.2: P = (p_1..p_M) ends at the last state given; FM compares t_N with p_M. Expected values counted by hand."
    lab = {"init": 7, "intermediate": [12], "final": 24}           # Cumulate, N = 7, [Add 5, Multiply 2]: T = (12, 24)
    # P = (12, 24): M = 2, PML 2, PA 2/2, SM 1, FM 1 (24 = 24)
    assert score(lab, {"intermediate": [12, 24], "final": None}) == {"pml": 2, "pa": 1.0, "sm": 1, "fm": 1}
    # P = (12, 24, 48): M = 3, PML 2, PA 2/3, SM 0, FM 0 (24 is not 48)
    assert score(lab, {"intermediate": [12, 24, 48], "final": None}) == {"pml": 2, "pa": 2 / 3, "sm": 0, "fm": 0}
    # P = (12): M = 1, PML 1, PA 1/2, FM 0 (24 is not 12); P = (): M = 0, PA 0/2
    assert score(lab, {"intermediate": [12], "final": None}) == {"pml": 1, "pa": 0.5, "sm": 0, "fm": 0}
    assert score(lab, {"intermediate": [], "final": None}) == {"pml": 0, "pa": 0.0, "sm": 0, "fm": 0}
    # the release's converter writes final "" for what it could not read: P = (12, 24, ""), M = 3, PA 2/3, FM 0
    assert score(lab, {"intermediate": [12, 24], "final": None}, compat=True) == {"pml": 2, "pa": 2 / 3, "sm": 0, "fm": 0}
    # the benchmark's M column (the paper's figure 13, prediction length) counts the states given: 2, and 0 for no answer
    item = {"task": "Cumulate", "task_name": "Cumulate", "n": 2, "label": lab}
    bench = ProcBenchBenchmark()
    got = bench.score(item, '{"intermediate": [12, 24], "final": null}')
    assert (got["m"], got["pml"], got["pa"], got["sm"], got["fm"]) == (2, 2, 1.0, 1, 1)
    assert bench.score(item, "I do not know.")["m"] == 0
    # through the parser: an answer that lists its steps and never says "final" (Sort of "itstb": T = (btsti, bistt))
    from l0kit.procbench.parser import parse_answer
    pred = parse_answer("Sort", "Step 1: btsti\nStep 2: bistt")
    assert score({"init": "itstb", "intermediate": ["btsti"], "final": "bistt"}, pred)["sm"] == 1, pred

def test_initial_state_is_never_scored():
    lab = {"init": 7, "intermediate": [12], "final": 24}
    assert score(lab, {"intermediate": [12], "final": 24}) == score({**lab, "init": None}, {"intermediate": [12], "final": 24})

states = st.one_of(st.integers(-5, 5), st.text("ab", max_size=3), st.lists(st.text("ab", max_size=2), max_size=3))

@settings(max_examples=200, deadline=None)
@given(st.lists(states, min_size=1, max_size=6), st.lists(states, min_size=0, max_size=6), st.booleans())
def test_metric_invariants(target, pred_inter, compat):
    label = {"init": None, "intermediate": target[:-1], "final": target[-1]}
    pred = {"intermediate": pred_inter[:-1], "final": pred_inter[-1] if pred_inter else None}
    s = score(label, pred, compat=compat)
    n, m = len(target), (max(len(pred_inter), 1) if compat else len(pred_inter))  # compat: the release's "" final slot
    assert 0 <= s["pml"] <= min(n, m) and 0 <= s["pa"] <= 1
    assert s["pa"] == s["pml"] / max(n, m)
    assert s["sm"] == int(s["pml"] == n == m)
    if s["sm"]: assert s["fm"] == 1
    if not compat:
        assert score(label, {"intermediate": label["intermediate"], "final": label["final"]}) == {"pml": n, "pa": 1.0, "sm": 1, "fm": 1}

# --- parser --------------------------------------------------------------------------------------------------------

def test_render_parse_round_trip(full_set):
    for it in full_set:
        want = {"intermediate": it["label"]["intermediate"], "final": it["label"]["final"]}
        for style in ("json", "steps", "sections"):
            assert parse_answer(it["task"], render_answer(it["label"], style)) == want, (it["id"], style)

MESSY = [
    ("Sort", "Sure! Let's go.\n\n**Step 1:** Find 'b' at position 4 → swap → `btsti`\n**Step 2:** Find 'i' → swap → `bistt`\n\n"
             "So the final sorted string is **bistt**.", {"intermediate": ["btsti"], "final": "bistt"}),
    ("Sort", "Intermediate states:\n- btsti\n\nFinal state:\nbistt", {"intermediate": ["btsti"], "final": "bistt"}),
    ("Sort", "```python\n{'intermediate': ['btsti'], 'final': 'bistt'}\n```\nHope this helps!", {"intermediate": ["btsti"], "final": "bistt"}),
    ("DeleteChar", "Step 0 (initial): hchouumkd\nStep 1: remove c: hhouumkd\nStep 2: remove u: hhoumkd\nFinal answer: hhoumkd",
     {"intermediate": ["hhouumkd"], "final": "hhoumkd"}),
    ("Cumulate", "1) 7 + 5 = 12\n2) 12 × 2 = 24\n\nAnswer: 24", {"intermediate": [12], "final": 24}),
    ("Cumulate", 'Intermediate states (after each operation): [12]\nFinal answer: N = 24 (12 times 2)', {"intermediate": [12], "final": 24}),
    ("Sort", 'The "itstb string.\n{"intermediate": ["btsti"], "final": "bistt"}', {"intermediate": ["btsti"], "final": "bistt"}),
    ("Cumulate", '{"intermediate": [12], "final": 24.0}', {"intermediate": [12], "final": 24}),
    ("Cumulate", '{"intermediate": ["12"], "final": "24"}', {"intermediate": [12], "final": 24}),
    ("Search", "After 'ab': [2, 0, 1]\n\nIntermediate states: [[2, 0, 1], [2, 0, 1]]\nFinal state: [2, 0, 2]",
     {"intermediate": [[2, 0, 1], [2, 0, 1]], "final": [2, 0, 2]}),
    ("Encode", "Step 1: [0_8]\nStep 2: [0_8, 1_1]\nStep 3: [0_8, 1_1, 0_3]", {"intermediate": [["0_8"], ["0_8", "1_1"]], "final": ["0_8", "1_1", "0_3"]}),
    ("Compare", "Step 1: candidate mtlg -> common prefix 'm'\nStep 2: mafu -> 'ma'\nStep 3: maay matches exactly!\n"
                "Final state: ['m', 'ma', 'maay']", {"intermediate": ["m", "ma"], "final": ["m", "ma", "maay"]}),
    ("Count", "| string | N1 | N2 | N3 |\n1. ['ihi6ms5r9', 6, 659, 3954]\n2. ['abkuwk', 6, 0, 0]\n\nThe total is 3954.",
     {"intermediate": [["ihi6ms5r9", "6", "659", "3954"], ["abkuwk", "6", "0", "0"]], "final": 3954}),
    ("FillWord", "Step 1: [2] is a small country\nStep 2: Malta is a small country\nFinal sentence: Malta is a small country",
     {"intermediate": ["[2] is a small country"], "final": "Malta is a small country"}),
    ("DeleteWord", "1. what is now Malawi\n2. what now Malawi", {"intermediate": ["what is now Malawi"], "final": "what now Malawi"}),
    ("DeleteWord", "Initial state: Russia initially pledged\n1. initially pledged\n2. pledged", {"intermediate": ["initially pledged"], "final": "pledged"}),
    ("PushPop", 'Step 1: "b"\nStep 2: ""\nFinal state: ""', {"intermediate": ["b"], "final": ""}),
    ("Split1", "Step 1: ['abcde', 'fgh']\nStep 2: ['ab', 'cde', 'fgh']\nThe final list is ['ab', 'cde', 'fgh'].",
     {"intermediate": [["abcde", "fgh"]], "final": ["ab", "cde", "fgh"]}),
    ("FindCyclic", "<think>l->k->n->q</think>Step 1: [k, 2]\nStep 2: [n, 1]\nStep 3: q", {"intermediate": [["k", "2"], ["n", "1"]], "final": "q"}),
]

@pytest.mark.parametrize("task,text,want", MESSY)
def test_parser_on_messy_answers(task, text, want):
    assert parse_answer(task, text) == want

@pytest.mark.parametrize("text", [None, "", "   ", "I cannot solve this.", "{not json", "The answer depends on the rules."])
def test_parser_gives_the_empty_prediction(text):
    assert parse_answer("Sort", text) == empty_prediction()

def test_unconvertible_states_match_nothing():
    p = parse_answer("Cumulate", '{"intermediate": ["twelve"], "final": 24}')
    assert p == {"intermediate": [None], "final": 24}
    assert score({"init": 7, "intermediate": [12], "final": 24}, p) == {"pml": 0, "pa": 0.0, "sm": 0, "fm": 1}

# --- benchmark and release loader ----------------------------------------------------------------------------------

def test_benchmark_protocol(tmp_path):
    from l0kit.procbench import save_dataset
    items = generate_dataset(limit=2)
    save_dataset(items, tmp_path)
    b = ProcBenchBenchmark()
    loaded = b.load(tmp_path, "short")
    assert loaded and {it["split"] for it in loaded} == {"short"}
    p = b.build_prompt(loaded[0], 0)
    assert p.messages[0]["role"] == "user" and p.max_new_tokens == 4096
    json.dumps(p.as_dict())
    rows = [b.score(it, render_answer(it["label"], "json")) for it in loaded]
    assert all(r["sm"] == 1 and r["sm_compat"] == 1 for r in rows)
    json.dumps(rows)

def test_release_loader_reports_disagreements(tmp_path):
    rows = []
    for it in generate_dataset(limit=2):
        rows.append({"prompt": it["prompt"], "label": it["label"], "task_name": it["task"],
                     "example_name": it["example_name"], "problem_name": it["id"]})
    rows[5]["prompt"] = rows[5]["prompt"].replace("[Question]", "[Question]\n(garbled)").replace(":", ";")
    p = tmp_path / "release.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    items, report = load_release(p)
    assert report["items"] == 46 and report["agree"] == 45
    assert report["disagree"][0]["why"].startswith("solver failed")
    assert ProcBenchBenchmark().load(p, limit=3) == items[:3]

# --- a real model (skipped unless --runslow) ------------------------------------------------------------------------

@pytest.mark.model
def test_embedded_model_answers_are_scored():
    "SmolLM2-135M through transformers: prompts render, answers parse or come back empty, scores are well formed."
    tr = pytest.importorskip("transformers")
    from l0kit.backends.hf import smollm2_dir
    d = smollm2_dir()   # the GGUF converted once into the kit's cache (other model tests share it)
    tok = tr.AutoTokenizer.from_pretrained(d)
    model = tr.AutoModelForCausalLM.from_pretrained(d, dtype="float32")
    bench = ProcBenchBenchmark(answer_format="json", max_new_tokens=24)
    items = [it for it in generate_dataset(limit=1) if it["task_name"] in ("Cumulate", "Sort", "Encode")]
    for it in items:
        p = bench.build_prompt(it, 0)
        enc = tok(tok.apply_chat_template(p.messages, add_generation_prompt=True, tokenize=False), return_tensors="pt")
        out = model.generate(**enc, max_new_tokens=p.max_new_tokens, do_sample=False)
        text = tok.decode(out[0, enc["input_ids"].shape[1]:], skip_special_tokens=True)
        row = bench.score(it, text)
        assert 0 <= row["pa"] <= 1 and row["pml"] <= it["n"] and row["parsed"] in (0, 1)
