"""Every figure function draws something a reader can see: no legend covers a plotted point, and every title names its paper item (issue 17, item 5).

The figure functions are rendered on small data: the L0 plots on a synthetic responder's scores (the one the plotting
notebook uses), CoRE's heatmaps on hand-made tables, and the functions that the experiment notebooks define in their
own cells (ProcBench figures 2-6 and 9-13, CoRE figure 6) read from those notebooks, so the test and the notebook
cannot drift apart."""
import json
from pathlib import Path

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from l0kit.experiments import legend_overlaps, nothing_to_draw, figure_title

ROOT = Path(__file__).resolve().parents[1]


def notebook_cell(notebook: str, marker: str) -> str:
    "The source of the first code cell of `nbs/<notebook>.ipynb` that contains `marker`."
    nb = json.loads((ROOT / "nbs" / f"{notebook}.ipynb").read_text())
    return next("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code" and marker in "".join(c["source"]))


def titles(fig) -> list[str]:
    "Every title of a figure: the suptitle and each axes' title."
    out = [fig._suptitle.get_text()] if fig._suptitle is not None else []
    return out + [ax.get_title() for ax in fig.axes if ax.get_title()]


def check(fig, item: str):
    "No legend covers a plotted point, and some title names the paper item."
    assert legend_overlaps(fig) == [], legend_overlaps(fig)
    assert any(item in t for t in titles(fig)), (item, titles(fig))
    plt.close(fig)


# ---- the check itself can fail ----------------------------------------------------------------------------------
def test_legend_overlaps_sees_a_covered_point():
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot(np.arange(10), np.full(10, 95.0), "o-", label="high line")
    ax.set_ylim(0, 100)
    ax.legend(loc="upper right")
    assert legend_overlaps(fig)  # the legend sits on the line's points
    ax.legend(loc="lower right")
    assert legend_overlaps(fig) == []
    plt.close(fig)


def test_nothing_to_draw_and_titles():
    assert nothing_to_draw([0.0, 0.0]) == "all 2 values are 0"
    assert nothing_to_draw([0.0, 3.0]) is None
    t = figure_title("ProcBench figure 4", "correct at step k", "simulated answers", "69 items", simulated=True)
    assert t.startswith("ProcBench figure 4: ") and "(SIMULATED)" in t


# ---- L0-Bench plots ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def l0_scores():
    from l0kit.l0.analysis import score_responses
    from l0kit.l0.tracer import trace_program
    from l0kit.l0.taxonomy import corrupt_trace
    ns = dict(np=np, pd=pd, trace_program=trace_program, corrupt_trace=corrupt_trace)
    exec(notebook_cell("15c_l0_plots", "def synthetic_run").split("\nitems, responses = synthetic_run()")[0], ns)
    items, responses = ns["synthetic_run"](p_step=0.01, programs_per_split=6, voters=7)
    return score_responses(responses, items)


def test_l0_plots(l0_scores):
    from l0kit.l0.plots import plot_accuracy_vs_steps, plot_voting, plot_survival
    for scores in (l0_scores, None, l0_scores.assign(correct=False)):
        fig, ax = plt.subplots(figsize=(8.5, 4.2))
        plot_accuracy_vs_steps(scores, published_models=("Qwen2.5-72B-Instruct", "Meta-Llama-3.1-8B-Instruct"), ax=ax)
        ax.set_title(figure_title("L0-Bench figure 2", "accuracy vs target steps", "synthetic", "6 programs x 7 voters"))
        check(fig, "L0-Bench figure 2")
    for scores in (l0_scores, None):
        fig, ax = plt.subplots(figsize=(8.5, 4.2))
        plot_voting(scores, published_model="Qwen2.5-72B-Instruct", ax=ax)
        ax.set_title(figure_title("L0-Bench tables 7/8", "voting", "synthetic", "6 programs x 7 voters"))
        check(fig, "L0-Bench tables 7/8")
    fig, ax = plt.subplots(figsize=(8.5, 4.2))
    plot_survival(l0_scores, ax=ax)
    ax.set_title("L0-Bench survival (section 4)")
    check(fig, "L0-Bench")


def test_l0_fit_needs_accuracies_between_0_and_100(l0_scores):
    from l0kit.l0.plots import plot_accuracy_vs_steps
    fig = plot_accuracy_vs_steps(l0_scores.assign(correct=False))
    assert not any("(1-p)" in t.get_text() for t in fig.axes[0].get_legend().get_texts())
    plt.close(fig)


# ---- CoRE ------------------------------------------------------------------------------------------------------
def test_core_heatmaps():
    from l0kit.corebench.benchmark import family_heatmap, paper_family_heatmap, published_table, model_family
    fam = pd.DataFrame({"loop": [40.0, 10.0], "class": [60.0, 10.0], "recursive": [np.nan, 30.0]}, index=["m1 IO", "m2 IO"])
    check(family_heatmap(fam, title=figure_title("CoRE, the kit's implementation styles (not a paper figure; cf. figure 5)",
                                                 "I_s by style", "m1, m2", "2 models")), "cf. figure 5")
    t1 = published_table(1)
    side = t1.assign(family=t1["model"].map(model_family)).pivot_table(index="family", columns="method", values="I_s")
    fig = paper_family_heatmap(side=side)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "98.2" in texts and texts.count("not\npublished") == 24
    check(fig, "CoRE figure 5")


def test_core_exposure_figure():
    ns = dict(pd=pd, np=np, plt=plt)
    exec(notebook_cell("experiments/core_02_models", "def exposure_figure"), ns)
    curve = pd.DataFrame([dict(k=k, metric=m, mean=v, p10=v * 0.9, p90=min(1.0, v * 1.1) if m == "exposure" else v * 1.1)
                          for k in (1, 2, 3) for m, v in (("exposure", 0.3 * k), ("I", 90 - 20 * k))])
    check(ns["exposure_figure"](curve, "sim", "note", figure_title("CoRE figure 6", "exposure", "simulated", "3 problems")), "CoRE figure 6")


# ---- ProcBench figures 2-6 and 9-13 ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def procbench_ns(tmp_path_factory):
    from matplotlib.ticker import MaxNLocator
    from l0kit.experiments import save_table
    figs = tmp_path_factory.mktemp("figures")
    saved = []
    ns = dict(pd=pd, np=np, plt=plt, MaxNLocator=MaxNLocator, nothing_to_draw=nothing_to_draw, figure_title=figure_title,
              save_table=save_table, fig_dir=figs, display=lambda *a: None,
              save_figure=lambda fig, name, folder, provenance=None: saved.append((name, fig)))
    exec(notebook_cell("experiments/procbench_02_models", "def procbench_figures"), ns)
    ns["saved"] = saved
    return ns


def procbench_scores(zero: bool = False) -> pd.DataFrame:
    "Two answerers on 5 tasks x N in 3, 8, 15: one error-free, one slipping halfway (or both all wrong)."
    rows = []
    for t in range(5):
        for n in (3, 8, 15):
            for model, pml in (("error-free", n), ("halfway", n // 2)):
                pml = 0 if zero else pml
                rows.append(dict(model=model, task_name=f"Task{t}", n=n, pml=pml, pa=pml / n, sm=float(pml == n),
                                 fm=float(pml == n), m=0 if zero else (n if model == "error-free" else pml + 1)))
    return pd.DataFrame(rows)


def test_procbench_figures(procbench_ns):
    ns = procbench_ns
    drawn = ns["procbench_figures"](procbench_scores(), "test", "two answers (SIMULATED)", "30 items", "note", {})
    assert len(drawn) == 10, drawn   # M varies (the halfway answerer predicts pml + 1 states): figure 13 and per-task M drawn
    m_equals_n = procbench_scores().assign(m=lambda d: d["n"])   # M = N in every answer: those two carry nothing, not drawn
    assert sorted(set(drawn) - set(ns["procbench_figures"](m_equals_n, "test", "m = n", "30 items", "note", {}))) == [
        "fig05_11_12_per_task_m", "fig13_prediction_length"]
    items = {"fig02": "figure 2", "fig03": "figures 3/10", "fig04": "figure 4", "fig05": "figures 5/11/12", "fig06": "figures 6/9",
             "fig13": "figure 13"}
    for name, fig in ns["saved"]:
        check(fig, "ProcBench " + items[name.split("_")[1]])
    fig = ns["fig_correct_at_step"](procbench_scores(), "x", "y", "z")
    assert all(float(t).is_integer() for t in fig.axes[0].get_xticks())  # whole steps only
    plt.close(fig)


def test_procbench_figures_all_zero_draws_nothing(procbench_ns):
    ns = procbench_ns
    ns["saved"].clear()
    assert ns["procbench_figures"](procbench_scores(zero=True), "zero", "nothing right", "30 items", "note", {}) == []
    assert ns["saved"] == []


def test_report_figures_skips_a_benchmark_that_draws_none_and_says_simulated(tmp_path, capsys):
    "SX draws no figures: `report --figures` says so on stderr and exits 0; an L0 run's figures record that it is simulated."
    from l0kit.cli.main import main
    for name, split in (('sx', 'easy'), ('l0', 'short')):
        assert main(['generate', '--benchmark', name, '--out', str(tmp_path / name), '--limit', '2', '--quiet']) == 0
        assert main(['eval', '--data', str(tmp_path / name), '--split', split, '--model', 'simulated', '--voters', '2',
                     '--out', str(tmp_path / f'{name}-run'), '--no-progress']) == 0
    capsys.readouterr()
    assert main(['report', str(tmp_path / 'sx-run'), '--figures', str(tmp_path / 'sx-fig')]) == 0
    err = capsys.readouterr().err
    assert 'note: sx draws no figures from a run' in err and not list((tmp_path / 'sx-fig').glob('*'))
    assert main(['report', str(tmp_path / 'l0-run'), '--figures', str(tmp_path / 'l0-fig')]) == 0
    assert '3 figure(s) saved to' in capsys.readouterr().out
    record = json.loads((tmp_path / 'l0-fig' / 'accuracy_vs_steps.json').read_text())
    assert record['provenance']['simulated'] is True, record


def test_a_figure_record_names_the_commit_of_the_code_that_drew_it(tmp_path):
    "The JSON record beside a figure holds the checkout's commit (asked of git apart from the kit) and whether the package had changes."
    import json, subprocess
    from pathlib import Path
    import matplotlib.pyplot as plt
    import l0kit
    from l0kit.protocol.figures import save_figure
    pkg = Path(l0kit.__file__).resolve().parent
    head = subprocess.run(['git', '-C', str(pkg), 'rev-parse', 'HEAD'], capture_output=True, text=True)
    dirty = subprocess.run(['git', '-C', str(pkg), 'diff', '--quiet', 'HEAD', '--', '.']).returncode != 0
    fig, ax = plt.subplots(); ax.plot([0, 1])
    rec = json.loads(save_figure(fig, 'f', tmp_path)[2].read_text()); plt.close(fig)
    want = head.stdout.strip() if head.returncode == 0 else None
    assert (rec['commit'], rec['modified']) == (want, dirty if want else None)
