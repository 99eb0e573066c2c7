#!/usr/bin/env python
"""The bisections' search where their steps are inexact: Dinkelbach's against the paper's midpoints.

``bisection`` and ``con_bisection`` test values ``gamma`` of a ratio objective (F1, micro-F1).
Where each step is exact on the sample (the threshold oracle; ConBisection over the binary ROC
hulls) Dinkelbach's tests reach the midpoints' objective in 2-4 steps instead of 14
(``atlas.py``). Here the steps are inexact: the plug-in rule of the model's probabilities
(several classes, priced with its recalibrations within the cells by ConBisection; or binary
without constraints on the plug-in oracle), on the shapes of ``atlas.py`` (synthetic Gaussian
classes shifted per group, a logistic regression that does not see the group, as many held-out
rows as training rows), each drawn anew per seed. Per case and seed both searches run on the same
probabilities (alternating which runs first); reported: the paired difference Dinkelbach minus
midpoints of the training and held-out objectives (mean ± 95% half-width over the seeds,
min..max) and CPU seconds over one LR fit of the same rows.

Usage::

    python benchmarks/ratio_search.py [--quick]   # ~5 min; --quick: 2 seeds, 2 shapes

Writes ``benchmarks/results/ratio_search.json``.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import save_run  # noqa: E402
from _paired import add_case, draw, fit_settings, pair_line  # noqa: E402  (through atlas: one BLAS thread)
from atlas import constraints  # noqa: E402

REFERENCE = "midpoints"
#: (rows, classes, groups, method, objective, constraint family, oracle)
CASES = ([(n, k, g, "con_bisection", "micro_f1", family, None)
          for n in (10_000, 100_000) for k, g in ((3, 2), (4, 2), (5, 2), (3, 5), (6, 3))
          for family in ("none", "dp")]
         + [(n, 2, g, "bisection", "f1", "none", "plugin") for n in (10_000, 100_000) for g in (2, 5)])
NEW = "Dinkelbach"
SEARCHES = [(REFERENCE, "midpoint"), (NEW, "dinkelbach")]


def one_seed(n, k, g, method, objective, family, oracle, seed):
    P, Y, G, lr_seconds = draw(n, k, g, seed)
    cons = constraints(family, Y["train"], P["train"], k)
    oracle_param = {} if oracle is None else {"oracle": oracle}
    settings = [(label, method, {"search": search, **oracle_param}) for label, search in SEARCHES]
    out = fit_settings(settings, objective, cons, P, Y, G, lr_seconds, reverse=seed % 2 == 1)
    ref, new = out[REFERENCE], out[NEW]
    print(f"  {method:13s} {objective:8s} {family:4s} {k}x{g} n={n:.0e} seed {seed}: steps {ref['steps']} -> "
          f"{new['steps']}, x LR {ref['seconds_over_lr']:.2f} -> {new['seconds_over_lr']:.2f} | train "
          f"{new['train_objective'] - ref['train_objective']:+.1e} | test "
          f"{new['test_objective'] - ref['test_objective']:+.1e}", flush=True)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="2 seeds, 10^4 rows, the first two shapes")
    args = ap.parse_args()
    seeds, cases = (2, [c for c in CASES if c[0] == 10_000][:4]) if args.quick else (3, CASES)
    t0 = time.perf_counter()
    one_seed(3_000, 3, 2, "con_bisection", "micro_f1", "none", None, 99)  # warm-up: lazy imports
    summary, per, rows = {}, {}, []
    lines = ["| case | x LR: midpoints -> Dinkelbach | train: Dinkelbach - midpoints (mean ± hw; min..max) "
             "| held-out: Dinkelbach - midpoints (mean ± hw; min..max) |", "|---|---|---|---|"]
    for n, k, g, method, objective, family, oracle in cases:
        name = f"{method} {objective} s.t. {family}, {k} classes x {g} groups, n={n}"
        name += "" if oracle is None else f", {oracle} oracle"
        per[name] = [one_seed(n, k, g, method, objective, family, oracle, seed) for seed in range(seeds)]
        cells = add_case(name, per[name], REFERENCE, summary, rows, metric="objective_minus_midpoints")[NEW]
        lines.append(pair_line(name, summary, name, REFERENCE, NEW, cells))
    print("\n" + "\n".join(lines))
    save_run("ratio_search", t0, args.quick, summary=summary, per_seed=per, rows=rows)


if __name__ == "__main__":
    main()
