"""The papers' static tables as data, spot-checked against the papers' texts (issue 17, item 6): L0-Bench table 11 (the
model list) and SX-Bench table 1 (CRUXEval saturation). Each row must appear in the seed text as printed."""
from conftest import seed_text


def rows_of(paper: str) -> list[list[str]]:
    "The paper's text as tab-separated rows of stripped cells (skipped, or failed under CI=true, when it is missing)."
    return [[c.strip() for c in line.split("\t")] for line in seed_text(paper).read_text().splitlines()]


def test_l0_table11_rows_appear_in_the_paper():
    from l0kit.l0.published import published_table
    text = rows_of("000_90d55257f6dd9005.txt")
    t11 = published_table(11)
    assert len(t11) == 20
    for _, r in t11.iterrows():
        want = [r["printed_name"], r["size"], r["printed_api"]]
        hits = [f for f in text if len(f) >= 4 and [f[0], f[1], f[3]] == want]
        assert hits, f"table 11: {want} not in the paper"
        assert hits[0][2].replace("Ν", "N") == r["thinking"]  # the text prints some N as a Greek capital Nu


def test_l0_table11_names_every_table1_model():
    from l0kit.l0.published import published_table
    assert set(published_table(1)["model"]) <= set(published_table(11)["model"])


def test_sx_table1_rows_appear_in_the_paper():
    from l0kit.sx.benchmark import PAPER_TABLE_1
    text = rows_of("004_29cd2c1844f922f1.txt")
    header = next(i for i, f in enumerate(text) if f[:3] == ["Model", "CRUXEVAL", "CRUXEVAL-X"])
    printed = {f[0]: [float(f[1]), float(f[2])] for f in text[header + 1:header + 5]}
    assert printed == {m: r.tolist() for m, r in PAPER_TABLE_1.iterrows()}
