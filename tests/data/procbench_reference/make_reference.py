"""Turn a run of the ProcBench authors' release into the kit's test data (see README.md here for the commands).

Run from the release's checkout, after its generators wrote experiment/main/dataset, with the release's Python:
    python make_reference.py OUT_DIR
Writes OUT_DIR/labels.jsonl.gz (every question and the label the authors' generator gave it) and
OUT_DIR/evaluator_cases.jsonl.gz (predictions scored by the authors' `proc_bench.evaluator`, as `evaluate.py` does).
"""
import copy, gzip, json, sys
from pathlib import Path
from proc_bench.evaluator import exact_match, prefix_match_length   # the authors' evaluator, imported, not copied

NAMES = ['Sort', 'Gather', 'Count', 'Search', 'Copy', 'Substitute', 'Encode', 'Split1', 'Split2', 'Compose', 'Decompose',
         'Rhythm', 'Compare', 'Count2', 'Decode', 'PushPop', 'Rotate', 'FillWord', 'DeleteChar', 'DeleteWord', 'Cumulate',
         'MoveCyclic', 'FindCyclic']   # the release's task order (evaluate.py's disp_task_names)


def release_scores(y_true, y_pred):
    "FM, PML, PA and SM as the release's evaluate.py (`mp_eval`) computes them from the two label dicts."
    states_true, states_pred = y_true['intermediate'] + [y_true['final']], y_pred['intermediate'] + [y_pred['final']]
    pml = prefix_match_length(states_true, states_pred)
    pa = pml / max(len(states_true), len(states_pred))
    return dict(fm=float(exact_match(y_true['final'], y_pred['final'])), pml=pml, pa=pa, sm=float(pa == 1))


def variants(label):
    "Predictions a model could give, each as the release's converter would write it (a missing final state is '')."
    inter, final = label['intermediate'], label['final']
    changed = copy.deepcopy(inter)
    if changed:
        k = len(changed) // 2
        changed[k] = (changed[k] + 1 if isinstance(changed[k], int) else changed[k][::-1] + 'x' if isinstance(changed[k], str)
                      else changed[k][:-1] if changed[k] else ['x'])
    as_text = lambda s: str(s) if isinstance(s, int) else [str(x) for x in s] if isinstance(s, list) else s
    return {'exact': dict(intermediate=inter, final=final), 'no final': dict(intermediate=inter, final=''),
            'all as steps, no final': dict(intermediate=inter + [final], final=''),
            'one state short': dict(intermediate=inter[:-1], final=final), 'one state changed': dict(intermediate=changed, final=final),
            'final repeated': dict(intermediate=inter + [final], final=final),
            'initial state first': dict(intermediate=[label['init']] + inter, final=final),
            'states as text': dict(intermediate=[as_text(s) for s in inter], final=as_text(final))}


def main(out):
    out = Path(out); out.mkdir(parents=True, exist_ok=True)
    labels, cases = [], []
    for t, name in enumerate(NAMES, 1):
        d = Path('experiment/main/dataset') / f'task{t:02d}'
        for lp in sorted((d / 'label').glob('*.json')):
            label = json.loads(lp.read_text())
            cfg = json.loads((d / 'config' / lp.name).read_text())
            if name == 'Count2' and cfg.get('sentence') == '': continue   # no sentence of that length in the sentence file
            question = (d / 'prompt' / f'{lp.stem}.txt').read_text().split('[Question]\n', 1)[1]
            n = len(label['intermediate']) + 1
            if int(lp.stem) % 10 in (0, 5):   # two examples of every (task, problem length): 1,104 of the 5,520 (less Count2's empties)
                labels.append(dict(task=f'task{t:02d}', task_name=name, example=lp.stem, n=n, question=question, label=label))
            if int(lp.stem) % 10 == 0 and n in (2, 5, 9, 14, 20, 25):   # the first example of six problem lengths
                for kind, pred in variants(label).items():
                    cases.append(dict(task_name=name, example=lp.stem, n=n, kind=kind, label=label, prediction=pred,
                                      **release_scores(label, pred)))
    for fname, rows in (('labels.jsonl.gz', labels), ('evaluator_cases.jsonl.gz', cases)):
        with gzip.GzipFile(out / fname, 'wb', mtime=0) as f: f.write(''.join(json.dumps(r, sort_keys=True) + '\n' for r in rows).encode())
    print(f"{len(labels)} labels, {len(cases)} evaluator cases -> {out}")


if __name__ == '__main__':
    main(sys.argv[1])
