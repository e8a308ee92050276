"""The cases the L0 reference was run on: programs and inputs the kit generated (run with the kit's environment).

    python tests/data/l0_reference/make_cases.py CASES.json
The kit's `base` preset, 25 programs per split (seed 0, 2 workers), each program's test input and first three
demonstration inputs: 400 (program, input) cases over short, medium, long and extra_long.
"""
import json, sys, tempfile
from pathlib import Path
from l0kit.protocol.benchmark import get_benchmark
from l0kit.l0 import dataset

def main(out):
    bench = get_benchmark('l0')
    with tempfile.TemporaryDirectory() as d:
        bench.generate(d, limit=25, preset='base', workers=2)
        cases = [dict(id=f"{it['id']}/{k}", split=s, program=it['program'], input=inp)
                 for s in dataset.available_splits(d) for it in bench.load(d, s)
                 for k, inp in enumerate([it['test_input']] + it['demonstrations'][:3])]
    Path(out).write_text(json.dumps(cases))
    print(f"{len(cases)} cases -> {out}")

if __name__ == '__main__':
    main(sys.argv[1])
