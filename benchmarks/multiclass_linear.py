#!/usr/bin/env python
"""Multiclass linear goals outside the atlas's grid: column generation (``auto``'s method) against SplitFW.

``choose_method`` runs column generation with the recalibrated pricing on every multiclass linear
goal (error, balanced error; no constraint or polyhedral ones) on the plug-in oracle, read from
``atlas.py``'s 3-5-class cells; SplitFW ran them before. This script asks whether the choice holds
on shapes the atlas does not have: 3, 4, 5, 6 and 8 classes x 2-4 groups
(``atlas.synthetic_cell``, 10^5 training rows and as many held out, a logistic regression that
does not see the group), error and balanced error x {none, demographic parity, equalized odds}
(``atlas.constraints``), seeds 1-3 (the atlas uses seed 0). Real data: ``multiclass_real.py``.

Per fit: the objective and the worst violation on the training and on the held-out rows (exact
expectations over the randomized classifier) and the CPU seconds (one BLAS thread; one fit each,
after an untimed warm-up fit per shape and seed). Reported:
SplitFW minus column generation on held-out rows, per number of classes and over all fits
(mean ± 95% half-width, how often SplitFW is lower, how often it is more than 1e-3 higher).

Usage::

    python benchmarks/multiclass_linear.py            # 7 shapes x 3 seeds x 6 goals, ~3 min
    python benchmarks/multiclass_linear.py --quick    # 2 shapes, 1 seed

Writes ``benchmarks/results/multiclass_linear.json``.
"""
from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import half_width, machine_record, versions, write_results  # noqa: E402
from atlas import constraints, run_method, synthetic_cell  # noqa: E402

SHAPES = [(3, 2), (4, 2), (5, 2), (6, 2), (6, 3), (8, 2), (4, 4)]
GOALS = [(objective, family) for objective in ("error", "balanced_error") for family in ("none", "dp", "eodds")]
METHODS = ("column_generation", "split_frank_wolfe")
N = 100_000


def one_shape(n_classes, n_groups, seed):
    """Both methods on the six goals of one shape and seed: one record per goal."""
    P, Y, G, lr_seconds = synthetic_cell(N, n_classes, n_groups, seed, 1.0)
    # untimed warm-up (as atlas.py's cells): the first fit on new arrays pays their first touches
    run_method("column_generation", "error", [], P, Y, G, limit=300)
    out = []
    for objective, family in GOALS:
        cons = constraints(family, Y["train"], P["train"], n_classes)
        rec = {"classes": n_classes, "groups": n_groups, "seed": seed, "objective": objective, "constraints": family,
               "lr_seconds": lr_seconds}
        for m in METHODS:
            r, _ = run_method(m, objective, cons, P, Y, G, limit=300)
            rec[m] = {k: r.get(k) for k in ("train_objective", "test_objective", "train_violation", "test_violation",
                                            "seconds", "status")}
        d = {s: rec["split_frank_wolfe"][f"{s}_objective"] - rec["column_generation"][f"{s}_objective"]
             for s in ("train", "test")}
        print(f"  {n_classes} x {n_groups} seed {seed} {objective:14s} {family:5s} SplitFW - column generation: "
              f"train {d['train']:+.4f} held-out {d['test']:+.4f} | seconds {rec['column_generation']['seconds']:.2f} "
              f"{rec['split_frank_wolfe']['seconds']:.2f}", flush=True)
        out.append(rec)
    return out


def summarize(records):
    """SplitFW minus column generation on held-out rows: per number of classes and overall."""
    def stats(rs):
        d = np.array([r["split_frank_wolfe"]["test_objective"] - r["column_generation"]["test_objective"] for r in rs])
        t = np.array([r["split_frank_wolfe"]["train_objective"] - r["column_generation"]["train_objective"] for r in rs])
        return {"fits": int(d.size), "test_mean": float(d.mean()), "test_half_width": half_width(d),
                "test_max": float(d.max()), "splitfw_lower_on_test": int((d < 0).sum()),
                "splitfw_above_by_more_than_1e-3": int((d > 1e-3).sum()), "train_mean": float(t.mean()),
                "seconds_ratio_median": float(np.median([r["split_frank_wolfe"]["seconds"]
                                                         / max(r["column_generation"]["seconds"], 1e-9) for r in rs]))}
    out = {str(k): stats([r for r in records if r["classes"] == k]) for k in sorted({r["classes"] for r in records})}
    out["all"] = stats(records)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="3 x 2 and 6 x 3, seed 1")
    args = ap.parse_args()
    shapes, seeds = ([(3, 2), (6, 3)], (1,)) if args.quick else (SHAPES, (1, 2, 3))
    t0 = time.perf_counter()
    records = [r for k, g in shapes for s in seeds for r in one_shape(k, g, s)]
    summary = summarize(records)
    print("\n| classes | fits | held-out: SplitFW - column generation (mean ± hw; max) | SplitFW lower | "
          "SplitFW > +1e-3 | train: mean | time ratio (median) |\n|---|---|---|---|---|---|---|")
    for k, s in summary.items():
        hw = "" if s["test_half_width"] is None else f" ± {s['test_half_width']:.4f}"
        print(f"| {k} | {s['fits']} | {s['test_mean']:+.4f}{hw}; {s['test_max']:+.4f} | {s['splitfw_lower_on_test']} | "
              f"{s['splitfw_above_by_more_than_1e-3']} | {s['train_mean']:+.4f} | {s['seconds_ratio_median']:.1f}x |")
    rows = [{"experiment": f"multiclass linear goals, {k} classes", "dataset": "synthetic", "method": "split_frank_wolfe",
             "metric": "test_objective_minus_column_generation", "split": "test", "value": s["test_mean"],
             "spread": s["test_half_width"], "lower_is_better": True, "paper_value": None, "seconds": None}
            for k, s in summary.items()]
    write_results(HERE / "results" / "multiclass_linear.json",
                  {"benchmark": "multiclass_linear", "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                   "seconds": time.perf_counter() - t0, "quick": args.quick, "machine": machine_record(),
                   "versions": versions(), "n": N, "shapes": shapes, "seeds": list(seeds), "summary": summary,
                   "rows": rows, "records": records})


if __name__ == "__main__":
    main()
