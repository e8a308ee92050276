"Run the ProcBench authors' generators (generate_main.gen_taskNN, unmodified) without hydra: seed 12 as configs/main.yaml (Python 3.10, numpy 2.1.1)."
import sys, types, time
from pathlib import Path
sys.modules['hydra'] = types.SimpleNamespace(main=lambda **k: (lambda f: f))   # only the decorator of run() is used
sys.modules['omegaconf'] = types.SimpleNamespace(DictConfig=dict)
import generate_main as g
g.num_sentences = sum(1 for _ in open(g.sentence_file))   # the sentence file here is the kit's (the release's is not stored)
base, tmpl, seed = Path('experiment/main/dataset'), Path('templates'), 12
for k in sys.argv[1:] or range(1, 24):
    k = int(k); f = getattr(g, f'gen_task{k:02d}'); t = time.time()
    args = (seed, base, tmpl) + ((g.sentence_file,) if k in (14, 18, 20) else ())
    import io, contextlib
    with contextlib.redirect_stdout(io.StringIO()): f(*args)
    print(f'task{k:02d}', round(time.time() - t, 1), 's', file=sys.stderr)
