#!/usr/bin/env python
"""The bisection methods' bracket tolerance: ``tol=1e-4`` (the default) against the narrower one.

Bisection (Alg. 4 of Narasimhan et al., JMLR 2024) and constrained bisection (Alg. 8) halve a
bracket on the ratio objective's value (F1, micro-F1) and return the best classifier seen; the
bracket's width is their ``tol`` (objective units). The other plug-in methods stop at
``tol=1e-4``; the bisections stopped at 1e-9 and 1e-6 (30 and 20 steps from ``[0, 1]``, against
14 at 1e-4). This script fits both tolerances on the same probabilities and reports the
difference of the training and the held-out objective, and the time ratio:

* ``con_bisection``: F1 and micro-F1 (binary; micro-F1 on 3 classes) s.t. each of DP, equalized
  odds, FPR parity, coverage, the 80% rule and precision (the atlas's families), on
  ``atlas.py``'s synthetic cells (2 classes x 2 and 5 groups, 3 classes x 2 groups) at 10^4 and
  10^5 rows, 3 seeds; and on Adult (sex), COMPAS (race) and bank marketing (age < 25), half of
  the rows to train on, 3 splits, F1 and micro-F1 s.t. DP, equalized odds, FPR parity and the
  80% rule. Old tolerance 1e-6.
* ``bisection`` (no constraints): F1 and micro-F1 on 2 x 2, 2 x 5, 3 x 2 and 4 x 2 synthetic
  cells at 10^4 and 10^5 rows, 3 seeds; and Table 7 of the paper (micro-F1 loss, the most
  frequent class as the default class) on abalone, page blocks and SatImage, 10 random 70/30
  splits with ``narasimhan_tables.py``'s logistic regression. Old tolerance 1e-9.

Both arms test the bracket's midpoints (``search="midpoint"``, the paper's search; the default
where each step is exact, Dinkelbach's, reaches a bracket of ``tol`` in 2-5 steps, so the
tolerance matters less there), and bisection prices the plug-in rule alone
(``recalibration=()``, the paper's Alg. 4). Every fit is ``GoalClassifier("precomputed", ...,
method=..., method_params={"tol": tol, "search": "midpoint"})`` with
the binary default oracle (threshold) or the plug-in oracle (several classes); objectives are
exact expectations over the randomized classifier (:func:`atlas.run_method`).

Usage::

    python benchmarks/bisection_tol.py [--quick]

Writes ``benchmarks/results/bisection_tol.json``. ~2 min (``--quick``: 10^4 rows, one seed, no
real data: ~10 s).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import atlas  # noqa: E402
from _common import machine_record, versions, write_results  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

import goalfit as gf  # noqa: E402

NEW = 1e-4
OLD = {"con_bisection": 1e-6, "bisection": 1e-9}
FAMILIES = ("dp", "eodds", "fpr", "coverage", "ratio80", "precision")
REAL_FAMILIES = ("dp", "eodds", "fpr", "ratio80")
SEARCH = "midpoint"  # the paper's halvings, whose step count the tolerance sets (Dinkelbach's: 2-5 steps)


def params(method, tol):
    """The fit's ``method_params``: the paper's search, and for bisection its plug-in rule alone."""
    return {"tol": tol, "search": SEARCH, **({"recalibration": ()} if method == "bisection" else {})}

LIMIT = 3600.0  # CPU seconds a fit may take (atlas.run_method's limit): none comes close


def fit(method, objective, cons, P, Y, G, tol):
    """CPU seconds, steps and the train / test objective and worst violation of one fit
    (:func:`atlas.run_method`)."""
    rec, est = atlas.run_method(method, objective, cons, P, Y, G, LIMIT, method_params=params(method, tol))
    if est is None:
        raise RuntimeError(f"{method} did not finish: {rec.get('message', rec['status'])}")
    return {**rec, "steps": int(est.n_iter_)}


def compare(cell, method, objective, cons, P, Y, G, first_new=False):
    """Both tolerances on one goal, in the order ``first_new`` says (alternated by the callers:
    the later fit of a pair would otherwise always be the warmer one)."""
    order = (NEW, OLD[method]) if first_new else (OLD[method], NEW)
    got = {tol: fit(method, objective, cons, P, Y, G, tol) for tol in order}
    old, new = got[OLD[method]], got[NEW]
    row = {**cell, "method": method, "objective": objective, "old": old, "new": new,
           "train_difference": new["train_objective"] - old["train_objective"],
           "test_difference": new["test_objective"] - old["test_objective"],
           "time_ratio": new["seconds"] / old["seconds"]}
    print(f"{method:13s} {cell['data']:15s} {objective:8s} {cell['constraints']:9s} {cell['shape']:5s} "
          f"n={cell['n']:.0e} s{cell['seed']} steps {old['steps']}->{new['steps']} time x{row['time_ratio']:.2f} "
          f"d train {row['train_difference']:+.1e} d test {row['test_difference']:+.1e}", flush=True)
    return row


def warm_up(P, Y, G):
    """An untimed fit on a data set's rows first (as ``atlas.run_cell``): the first fit on new
    arrays pays for first touches of them."""
    atlas.run_method("column_generation", "error", [], P, Y, G, LIMIT)


def synthetic_rows(sizes, seeds):
    rows = []
    for n in sizes:
        for seed in seeds:
            for K, groups in ((2, 2), (2, 5), (3, 2), (4, 2)):
                P, Y, G, _ = atlas.synthetic_cell(n, K, groups, seed, 1.0)
                warm_up(P, Y, G)
                objectives = ("f1", "micro_f1") if K == 2 else ("micro_f1",)
                for objective in objectives:
                    cell = {"data": "synthetic", "shape": f"{K}x{groups}", "n": n, "seed": seed}
                    rows.append(compare({**cell, "constraints": "none"}, "bisection", objective, [], P, Y, G,
                                        first_new=len(rows) % 2 == 1))
                    if K == 4:
                        continue
                    for family in FAMILIES:
                        cons = atlas.constraints(family, Y["train"], P["train"], K)
                        rows.append(compare({**cell, "constraints": family}, "con_bisection", objective, cons,
                                            P, Y, G, first_new=len(rows) % 2 == 1))
    return rows


def real_rows(seeds):
    rows = []
    for name in ("adult", "compas", "bank_marketing"):
        for seed in seeds:
            P, Y, G, _ = atlas.real_cell(name, 1.0, seed)
            warm_up(P, Y, G)
            for objective in ("f1", "micro_f1"):
                for family in REAL_FAMILIES:
                    cons = atlas.constraints(family, Y["train"], P["train"], 2)
                    cell = {"data": name, "shape": "2x2", "n": len(Y["train"]), "seed": seed, "constraints": family}
                    rows.append(compare(cell, "con_bisection", objective, cons, P, Y, G, first_new=len(rows) % 2 == 1))
    return rows


def table7_rows(splits):
    """Table 7 of Narasimhan et al.: micro-F1 by bisection on the UCI multiclass data sets."""
    from narasimhan_tables import uci_base
    from sklearn.frozen import FrozenEstimator

    from goalfit.datasets import load_dataset

    rows = []
    for name, kw in {"abalone": {}, "pageblocks": {}, "satimage": {"subset": "all"}}.items():
        d = load_dataset(name, **kw)
        X, y = d.data, d.target
        goal = gf.micro_f1(default_class=y.value_counts().idxmax())
        for i in range(splits):
            tr, te, base = uci_base(X, y, i)
            res = {}
            pairs = (("old", OLD["bisection"]), ("new", NEW))
            for label, tol in pairs[::-1] if i % 2 else pairs:  # alternated, as compare()
                t = time.process_time()
                m = gf.GoalClassifier(FrozenEstimator(base), objective=goal, method="bisection",
                                      method_params=params("bisection", tol)).fit(X.iloc[tr], y.iloc[tr])
                res[label] = {"seconds": time.process_time() - t, "steps": int(m.n_iter_),
                              "train_objective": float(m.evaluate(X.iloc[tr], y.iloc[tr])["objective"]["value"]),
                              "test_objective": float(m.evaluate(X.iloc[te], y.iloc[te])["objective"]["value"])}
            row = {"data": name, "shape": f"{y.nunique()}x1", "n": len(tr), "seed": i, "constraints": "none",
                   "method": "bisection", "objective": "micro_f1", **res,
                   "train_difference": res["new"]["train_objective"] - res["old"]["train_objective"],
                   "test_difference": res["new"]["test_objective"] - res["old"]["test_objective"],
                   "time_ratio": res["new"]["seconds"] / res["old"]["seconds"]}
            print(f"bisection     {name:15s} micro_f1 split {i} steps {res['old']['steps']}->{res['new']['steps']} "
                  f"time x{row['time_ratio']:.2f} d train {row['train_difference']:+.1e} "
                  f"d test {row['test_difference']:+.1e}", flush=True)
            rows.append(row)
    return rows


def summarize(rows):
    """Per method and data kind: cells, the largest objective difference, the time ratios."""
    out = {}
    for method in ("bisection", "con_bisection"):
        for real in (False, True):
            rs = [r for r in rows if r["method"] == method and (r["data"] != "synthetic") == real]
            if not rs:
                continue
            d = [abs(r[k]) for r in rs for k in ("train_difference", "test_difference")]
            ratios = [r["time_ratio"] for r in rs]
            out[f"{method} {'real' if real else 'synthetic'}"] = {
                "cells": len(rs), "max_abs_objective_difference": max(d),
                "cells_with_a_difference": sum(1 for r in rs if max(abs(r["train_difference"]),
                                                                     abs(r["test_difference"])) > 0),
                "time_ratio_median": float(np.median(ratios)), "time_ratio_min": min(ratios),
                "time_ratio_max": max(ratios),
                "steps_old": sorted({r["old"]["steps"] for r in rs}), "steps_new": sorted({r["new"]["steps"] for r in rs})}
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="10^4 rows, one seed, no real data")
    args = ap.parse_args()
    t0 = time.perf_counter()
    with threadpool_limits(limits=1):  # one BLAS / OpenMP thread, as atlas.py and speed.py
        rows, summary = run(args)
    write_results(HERE / "results" / "bisection_tol.json",
                  {"benchmark": "bisection_tol", "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                   "seconds": time.perf_counter() - t0, "quick": args.quick, "machine": machine_record(),
                   "versions": versions(), "tolerances": {"new": NEW, "old": OLD}, "summary": summary,
                   "rows": result_rows(summary), "cells": rows})


def result_rows(summary):
    """The results format's rows (benchmarks/README.md): per method and kind of data, the largest
    objective difference and the median time ratio, new tolerance against old."""
    out = []
    for key, s in summary.items():
        method, kind = key.split()
        base = {"experiment": f"{method} tol=1e-4 against the old bracket", "dataset": kind, "method": method,
                "split": "train and test", "paper_value": None, "seconds": None}
        out.append({**base, "metric": "max_abs_objective_difference", "value": s["max_abs_objective_difference"],
                    "spread": None, "lower_is_better": True})
        out.append({**base, "metric": "time_ratio_median", "value": s["time_ratio_median"],
                    "spread": [s["time_ratio_min"], s["time_ratio_max"]], "lower_is_better": True})
    return out


def run(args):
    seeds = (0,) if args.quick else (0, 1, 2)
    synthetic_rows((2_000,), (99,))  # warm-up: the first fits of a process pay goalfit's lazy imports
    rows = synthetic_rows((10**4,) if args.quick else (10**4, 10**5), seeds)
    if not args.quick:
        rows += real_rows(seeds) + table7_rows(10)
    summary = summarize(rows)
    print("\n| method | data | cells | cells with a difference | largest difference (train or test) | time new / old: median (range) | steps |")
    print("|---|---|---|---|---|---|---|")
    for key, s in summary.items():
        method, kind = key.split()
        print(f"| {method} | {kind} | {s['cells']} | {s['cells_with_a_difference']} | "
              f"{s['max_abs_objective_difference']:.1e} | {s['time_ratio_median']:.2f} "
              f"({s['time_ratio_min']:.2f}-{s['time_ratio_max']:.2f}) | {s['steps_old']} -> {s['steps_new']} |")
    return rows, summary


if __name__ == "__main__":
    main()
