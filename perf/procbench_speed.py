"""ProcBench speed: generating the paper's 5,520-item set, solving it from the questions, parsing and scoring answers.

Usage: python perf/procbench_speed.py [--workers 2] [--repeats 3]
Prints the best of `repeats` wall-clock times for each stage.
"""
import argparse, platform, random, time

from l0kit.procbench import (ProcBenchBenchmark, generate_dataset, load_sentences, parse_answer, render_answer, score,
                             solve)

def best(fn, repeats):
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter(); out = fn(); times.append(time.perf_counter() - t0)
    return min(times), out

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    t0 = time.perf_counter(); load_sentences(); t_sent = time.perf_counter() - t0
    t_gen, items = best(lambda: generate_dataset(), a.repeats)
    t_gen_w, items_w = best(lambda: generate_dataset(workers=a.workers), a.repeats)
    assert items_w == items and len(items) == 5520
    t_solve, solved = best(lambda: [solve(it["task"], it["prompt"]) for it in items], a.repeats)
    assert all(s == it["label"] for s, it in zip(solved, items))
    preds = [{"intermediate": it["label"]["intermediate"], "final": it["label"]["final"]} for it in items]
    t_score, _ = best(lambda: [score(it["label"], p) for it, p in zip(items, preds)], a.repeats)
    t_compat, _ = best(lambda: [score(it["label"], p, compat=True) for it, p in zip(items, preds)], a.repeats)
    rng = random.Random(0)
    answers = [render_answer(it["label"], rng.choice(["json", "steps", "sections"])) for it in items]
    t_parse, parsed = best(lambda: [parse_answer(it["task"], r) for it, r in zip(items, answers)], a.repeats)
    assert all(p == q for p, q in zip(parsed, preds))
    bench = ProcBenchBenchmark()
    t_bench, rows = best(lambda: [bench.score(it, r) for it, r in zip(items, answers)], a.repeats)
    n = len(items)
    print(f"ProcBench speed on {platform.python_implementation()} {platform.python_version()}, "
          f"{platform.machine()}, best of {a.repeats}; {n} items")
    print(f"  load sentences (first call)        {t_sent:7.2f} s")
    print(f"  generate 5,520 items, 1 process    {t_gen:7.2f} s")
    print(f"  generate 5,520 items, {a.workers} processes  {t_gen_w:7.2f} s")
    print(f"  solve all from the question text   {t_solve:7.2f} s  ({n / t_solve:,.0f} items/s)")
    print(f"  score all (typed)                  {t_score:7.2f} s  ({n / t_score:,.0f} items/s)")
    print(f"  score all (compat)                 {t_compat:7.2f} s")
    print(f"  parse free-text answers            {t_parse:7.2f} s  ({n / t_parse:,.0f} answers/s)")
    print(f"  benchmark.score (parse + 2 scores) {t_bench:7.2f} s")
    print(f"  solve + score                      {t_solve + t_score:7.2f} s")

if __name__ == "__main__":
    main()
