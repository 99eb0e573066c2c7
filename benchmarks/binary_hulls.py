#!/usr/bin/env python
"""Binary goals over the groups' ROC hulls against the iterative methods they replaced, held out.

``method="auto"`` solves binary min-max recall (the epigraph LP) and binary macro-F1 (SLSQP from
two starts, a local optimum) over the cells' ROC hulls (``goalfit.methods.plugin.binary_hull``),
where it ran ConGDA (Narasimhan et al., JMLR 2024, Alg. 6, 2000 iterations). The hulls' optimum is
the sample's over every threshold rule, so it is at or below ConGDA's on the training rows; this
measures whether that carries to held-out rows, over re-splits: Adult (sex), COMPAS (race) and
bank marketing (age < 25), half of the rows to train on, and ``atlas.py``'s synthetic 5-group
problem (a logistic regression that does not see the group, 10^5 training and as many held-out
rows, drawn anew per seed); DP <= 0.02, equalized odds <= 0.03 and the precision bound of
``atlas.constraints``; 5 seeds. Reported: the paired difference auto - ConGDA of the training and
held-out objectives (mean ± 95% half-width, min..max), the mean held-out violations, CPU seconds
over one LR fit of the same rows.

Usage::

    GOALFIT_DATA=../shared/data python benchmarks/binary_hulls.py [--quick]   # ~5 min; --quick: 2 seeds

Writes ``benchmarks/results/binary_hulls.json``.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import save_run  # noqa: E402
from atlas import constraints, real_cell, run_method, synthetic_cell  # noqa: E402  (atlas pins BLAS first)
from multiclass_defaults import paired_cells, summarize  # noqa: E402

REFERENCE = "ConGDA (2000 iterations)"
LIMIT = 3600.0  # CPU seconds a fit may take (atlas.run_method's limit)
DATA = ["adult", "compas", "bank_marketing", "synthetic 5 groups"]
OBJECTIVES = ["macro_f1", "minmax_recall"]
FAMILIES = ["dp", "eodds", "precision"]
METHODS = [("auto (ROC hulls)", "auto"), (REFERENCE, "con_gda")]


def cell(data, seed):
    if data.startswith("synthetic"):
        return synthetic_cell(100_000, 2, 5, seed, 1.0)
    return real_cell(data, 1.0, seed)


def one_seed(P, Y, G, lr_seconds, objective, family):
    cons = constraints(family, Y["train"], P["train"], 2)
    out = {}
    for label, method in METHODS:
        rec, est = run_method(method, objective, cons, P, Y, G, LIMIT)
        if est is None:
            raise RuntimeError(f"{label} did not finish: {rec.get('message', rec['status'])}")
        res = {k: rec[k] for k in ("seconds", "train_objective", "test_objective", "train_violation",
                                   "test_violation")}
        res["seconds_over_lr"] = rec["seconds"] / lr_seconds
        res["ran"] = rec["ran"]
        out[label] = res
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="2 seeds")
    args = ap.parse_args()
    seeds = 2 if args.quick else 5
    t0 = time.perf_counter()
    per: dict = {}
    for data in DATA:
        for seed in range(seeds):
            P, Y, G, lr_s = cell(data, seed)
            run_method("column_generation", "error", [], P, Y, G, LIMIT)  # untimed warm-up, as atlas.run_cell
            for objective in OBJECTIVES:
                for family in FAMILIES:
                    name = f"{objective} s.t. {family}, {data}"
                    r = one_seed(P, Y, G, lr_s, objective, family)
                    per.setdefault(name, []).append(r)
                    a, b = r[METHODS[0][0]], r[REFERENCE]
                    print(f"  {name:45s} seed {seed}: train {a['train_objective'] - b['train_objective']:+.5f} "
                          f"held-out {a['test_objective'] - b['test_objective']:+.5f} "
                          f"({a['seconds_over_lr']:.2f}x / {b['seconds_over_lr']:.2f}x LR)", flush=True)
    summary, rows = {}, []
    lines = ["| goal | auto x LR / ConGDA x LR | train: auto - ConGDA (mean ± hw; min..max) | held-out: auto - ConGDA "
             "(mean ± hw; min..max) | held-out violation auto / ConGDA |", "|---|---|---|---|---|"]
    for name, runs in per.items():
        for r in runs:  # summarize averages every numeric field; "ran" names the method
            for v in r.values():
                v.pop("ran", None)
        s = summarize(runs, REFERENCE)
        summary[name] = s
        a, b = s[METHODS[0][0]], s[REFERENCE]
        cells, more = paired_cells(name, name.split(", ")[-1], METHODS[0][0], a)
        rows += more
        lines.append(f"| {name} | {a['seconds_over_lr']:.2f} / {b['seconds_over_lr']:.2f} | {cells[0]} | {cells[1]} "
                     f"| {a['test_violation']:.4f} / {b['test_violation']:.4f} |")
    print("\n" + "\n".join(lines))
    save_run("binary_hulls", t0, args.quick, seeds=list(range(seeds)), summary=summary, per_seed=per, rows=rows)


if __name__ == "__main__":
    main()
