#!/usr/bin/env python
"""SplitFW's coarse budget without constraints: 300 coarse iterations against 1000.

With more than two classes on the plug-in oracle and at least 40,000 rows, SplitFW runs
``coarse_iter`` iterations on a 10,000-row subsample, then polishes on every row
(:func:`goalfit.methods.plugin.coarse_to_fine.coarse_to_fine`). The budget of 1000 was chosen on
constrained goals (``multiclass_defaults.py``). Without constraints the polish, fully corrective
on every row and pricing the recalibrated rules, finishes what fewer coarse iterations leave.
This measures it on the shapes of ``atlas.py`` (synthetic Gaussian classes shifted per group, a
logistic regression that does not see the group, as many held-out rows as training rows), each
drawn anew per seed: every multiclass objective SplitFW runs without constraints (H-, G-,
Q-mean, KL quantification, macro-F1, min-max recall on its smoothing) x 6 shapes x 3 seeds at
10^5 rows, and 2 shapes x 2 seeds at 10^6. Reported: the paired difference to the 1000-iteration
run of the training and held-out objectives (mean ± 95% half-width over the seeds, min..max),
CPU seconds over one LR fit of the same rows (the two budgets alternate which runs first).

Usage::

    python benchmarks/coarse_budget.py [--quick]   # ~6 min; --quick: 10^5 rows, 2 seeds, 2 shapes

Writes ``benchmarks/results/coarse_budget.json``.
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

REFERENCE = "1000 coarse iterations"
OBJECTIVES = ["hmean", "gmean", "qmean", "kl_quantification", "macro_f1", "minmax_recall"]
#: (rows, classes, groups, seeds)
GRID = [(100_000, k, g, 3) for k, g in ((3, 2), (4, 2), (5, 2), (3, 5), (6, 3), (4, 4))] + \
       [(1_000_000, k, g, 2) for k, g in ((3, 2), (5, 2))]
NEW = "300 coarse iterations"
BUDGETS = [(label, "split_frank_wolfe", {"coarse_iter": budget}) for label, budget in ((REFERENCE, 1000), (NEW, 300))]


def one_seed(n, k, g, seed):
    P, Y, G, lr_seconds = draw(n, k, g, seed)
    out = {}
    for objective in OBJECTIVES:
        out[objective] = fit_settings(BUDGETS, objective, [], P, Y, G, lr_seconds, reverse=seed % 2 == 1)
        ref, new = out[objective][REFERENCE], out[objective][NEW]
        print(f"  {k}x{g} n={n:.0e} seed {seed} {objective:17s} x LR {ref['seconds_over_lr']:.2f} -> "
              f"{new['seconds_over_lr']:.2f} | train {new['train_objective'] - ref['train_objective']:+.1e} | "
              f"test {new['test_objective'] - ref['test_objective']:+.1e}", flush=True)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="10^5 rows, 2 seeds, the first two shapes")
    args = ap.parse_args()
    grid = [(n, k, g, 2) for n, k, g, _ in GRID[:2]] if args.quick else GRID
    t0 = time.perf_counter()
    one_seed(50_000, 3, 2, 99)  # warm-up: the first fits of a process pay goalfit's lazy imports
    summary, per, rows = {}, {}, []
    lines = ["| shape | objective | x LR: 1000 -> 300 | train: 300 - 1000 (mean ± hw; min..max) "
             "| held-out: 300 - 1000 (mean ± hw; min..max) |", "|---|---|---|---|---|"]
    for n, k, g, seeds in grid:
        draws = [one_seed(n, k, g, seed) for seed in range(seeds)]
        for objective in OBJECTIVES:
            name = f"{objective} s.t. none, {k} classes x {g} groups, n={n}"
            per[name] = [d[objective] for d in draws]
            cells = add_case(name, per[name], REFERENCE, summary, rows, metric="objective_minus_1000_iterations")[NEW]
            lines.append(pair_line(f"{k} x {g}, n={n:.0e} | {objective}", summary, name, REFERENCE, NEW, cells))
    print("\n" + "\n".join(lines))
    save_run("coarse_budget", t0, args.quick, summary=summary, per_seed=per, rows=rows)


if __name__ == "__main__":
    main()
