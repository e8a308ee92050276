"`l0kit compare`: two runs paired item by item, checked against counts made by hand (issue 36)."
import json, re, subprocess, sys
import pytest
from l0kit.l0.benchmark import L0Benchmark
from l0kit.protocol.models import SimulatedModel
from l0kit.runs.runner import run_eval, RunConfig
from l0kit.runs.compare import compare, mcnemar_exact

CLI = [sys.executable, '-c', 'import sys; from l0kit.cli.main import main; sys.exit(main())']

@pytest.fixture(scope='module')
def runs(tmp_path_factory):
    "Two planned models on 7 programs, 2 voters each: who is right on which (item, voter) is set by hand."
    d = tmp_path_factory.mktemp('cmp')
    bench = L0Benchmark(shots=0)
    bench.generate(d / 'data', limit=7, seed=3, preset='small')
    items = bench.load(d / 'data', 'short')
    by_id = {it['id']: it for it in items}
    ids = [it['id'] for it in items]

    class Planned(SimulatedModel):
        label, defaults = 'planned', {'plan': '', 'seed': 0}
        def answer(self, prompt, rng):
            right = {tuple(p.split(':')) for p in self.plan.split('+') if p}
            key = (prompt.pair['id'], str(prompt.pair['voter']))
            return (bench.reference(by_id[key[0]]) if key in right else 'L2,x:0'), {}

    # A: voter 0 right on items 0-4, voter 1 right on items 0-1   -> per item: 1, 1, .5, .5, .5, 0, 0; mean 3.5/7
    # B: voter 0 right on items 0 and 5-6, voter 1 right on 0-6   -> per item: 1, .5, .5, .5, .5, 1, 1; mean 5/7
    a = [f"{i}:0" for i in ids[:5]] + [f"{i}:1" for i in ids[:2]]
    b = [f"{i}:0" for i in (ids[0], ids[5], ids[6])] + [f"{i}:1" for i in ids]
    for name, plan in (('a', a), ('b', b)):
        model = Planned(plan='+'.join(plan)); model.spec = f'planned-{name}'   # two models: one run each on a page of both
        run_eval(bench, model, items, d / name, RunConfig(voters=2), data=str(d / 'data'), split='short', progress=False)
    return d, ids

def test_paired_numbers(runs):
    d, ids = runs
    c = compare(d / 'a', d / 'b')
    # first voters: A right on 0-4, B on 0, 5, 6 -> A only: 1-4 (4), B only: 5, 6 (2), both: 0, neither: none
    assert c.mcnemar == {'a_only': 4, 'b_only': 2, 'both': 1, 'neither': 0, 'p_value': pytest.approx(2 * (1 + 6 + 15) / 64)}
    t = c.table.loc['trace_accuracy']
    assert (t['A'], t['B'], t['items']) == (pytest.approx(3.5 / 7), pytest.approx(5 / 7), 7)
    assert t['B - A'] == pytest.approx(1.5 / 7)
    assert sorted(c.disagree['id']) == sorted(ids[1:7])

def test_mcnemar_hand_values():
    assert mcnemar_exact(4, 2) == pytest.approx(2 * (1 + 6 + 15) / 64)
    assert mcnemar_exact(0, 10) == pytest.approx(2 / 1024)
    assert mcnemar_exact(3, 3) == 1.0

def test_cli_json_and_refusals(runs, tmp_path):
    d, _ = runs
    out = subprocess.run([*CLI, 'compare', str(d / 'a'), str(d / 'b'), '--json'],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    j = json.loads(out.stdout)
    assert (j['items'], j['mcnemar']['a_only'], j['mcnemar']['b_only']) == (7, 4, 2)
    bad = subprocess.run([*CLI, 'compare', str(d / 'a')], capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and 'compare takes two run folders' in bad.stderr and 'Traceback' not in bad.stderr

def test_interval_is_paired(runs):
    "The interval resamples items with both models' values together: per-item differences counted by hand, resampled here."
    import numpy as np
    d, _ = runs
    c = compare(d / 'a', d / 'b', n_resamples=4000, seed=5)
    diffs = np.array([1 - 1, .5 - 1, .5 - .5, .5 - .5, .5 - .5, 1 - 0, 1 - 0])  # B - A per item, in item order
    draws = np.random.default_rng(5).integers(0, 7, size=(4000, 7))
    lo, hi = np.quantile(diffs[draws].mean(axis=1), [0.025, 0.975])
    t = c.table.loc['trace_accuracy']
    assert (t['low'], t['high']) == (pytest.approx(lo), pytest.approx(hi))


def test_the_page_of_two_runs_opens_with_their_comparison(runs, tmp_path):
    "`l0kit view A B`: the page's comparison holds the hand-counted McNemar table and the six disagreeing items; one run has none."
    from l0kit.view.page import write_page
    d, ids = runs
    path, _ = write_page([d / 'a', d / 'b'], tmp_path / 'two.html')
    html = path.read_text()
    assert 'items both answered</h2>' in html and 'McNemar (first voter of each item): A only 4, B only 2, both 1, neither 0' in html
    assert f'Items where the first voters disagree (6): {", ".join(ids[1:7])}' in html   # ids in data order
    flat = re.sub(r'\s+', ' ', html)   # trace accuracy: A 3.5 / 7, B 5 / 7, B - A 1.5 / 7 (the page shows two decimals)
    assert '<th>trace_accuracy</th> <td>0.50</td> <td>0.71</td> <td>0.21</td>' in flat
    path, _ = write_page([d / 'a'], tmp_path / 'one.html')
    assert 'items both answered' not in path.read_text()
