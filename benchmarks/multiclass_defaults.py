#!/usr/bin/env python
"""How close the multiclass default comes to 2000 SplitFW iterations, on training and held-out rows.

The problem of ``benchmarks/speed.py``'s multiclass rows: H-mean loss s.t. demographic parity
difference <= 0.02, 5 classes x 3 groups (Gaussian classes shifted per group), the probabilities
of a logistic regression that does not see the group; ``n`` training rows and ``n`` test rows
from the same draw; 20 seeds at 10^4 rows, 8 at 10^5. On each seed, with ``GoalClassifier("precomputed")``:

* ``defaults``: ``method="auto"`` (SplitFW; from 4 x 10^4 rows its coarse run on a subsample,
  ``coarse_iter="auto"`` iterations, then the fully-corrective polish on all rows);
* ``2000 iterations``: the reference, SplitFW's Alg. 5 on all rows with no stopping rule and no
  subsample (what ``speed.py``'s dObj is measured against);
* ``coarse run of 2000 iterations`` (10^5 rows): ``coarse_iter=2000``, the coarse budget before
  ``coarse_iter="auto"``;
* ``column generation from the start``: a one-iteration coarse run on a quarter of the rows,
  then the polish on all rows (fully-corrective column generation from two plug-in rules).

Reported per method: CPU seconds, the objective and the worst violation on the training and on
the test rows (exact expectations over the randomized classifier, by
:func:`goalfit.metrics.evaluate_problem`), and the paired difference to the reference (mean ±
95% half-width over the seeds).

Usage::

    python benchmarks/multiclass_defaults.py [--quick]

Writes ``benchmarks/results/multiclass_defaults.json``. ~6 min (``--quick``: 10^4 rows, 2 seeds).
"""
from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import half_width, machine_record, versions, write_results  # noqa: E402
from speed import lr, synthetic  # noqa: E402

import goalfit as gf  # noqa: E402
from goalfit.metrics import evaluate_problem  # noqa: E402

BOUND = 0.02
REFERENCE = "2000 iterations"


def methods(n):
    """(label, method, method_params) of the fits compared at ``n`` training rows."""
    out = [("defaults", "auto", None),
           (REFERENCE, "split_frank_wolfe", {"max_iter": 2000, "tol": 0.0, "subsample": None})]
    if n >= 4 * 10_000:  # where the default's coarse run applies
        out.append(("coarse run of 2000 iterations", "split_frank_wolfe", {"coarse_iter": 2000}))
    out.append(("column generation from the start", "split_frank_wolfe", {"subsample": n // 4, "coarse_iter": 1}))
    return out


def one_seed(n, seed):
    X, y, g = synthetic(2 * n, 5, 3, seed=seed)
    base = lr().fit(X[:n], y[:n])
    P = {"train": base.predict_proba(X[:n]), "test": base.predict_proba(X[n:])}
    Y, G = {"train": y[:n], "test": y[n:]}, {"train": g[:n], "test": g[n:]}
    problem = gf.Problem("hmean", [gf.demographic_parity_difference("group") <= BOUND])
    out = {}
    for label, method, params in methods(n):
        t = time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = gf.GoalClassifier("precomputed", objective="hmean", constraints=problem.constraints, method=method,
                                  method_params=params).fit(P["train"], Y["train"],
                                                            sensitive_features={"group": G["train"]})
        res = {"seconds": time.process_time() - t, "oracle_calls": int(m.result_.n_oracle_calls)}
        for split in ("train", "test"):
            ev = evaluate_problem(problem, Y[split], m.predict_proba(P[split], sensitive_features={"group": G[split]}),
                                  sensitive_features={"group": G[split]}, classes=m.classes_)
            res[f"{split}_objective"] = float(ev["objective"]["value"])
            res[f"{split}_violation"] = float(max(c["violation"] for c in ev["constraints"]))
        out[label] = res
        print(f"  n={n:.0e} seed {seed} {label:34s} {res['seconds']:6.2f} s | train {res['train_objective']:.5f} "
              f"(viol {res['train_violation']:.1e}) | test {res['test_objective']:.5f} "
              f"(viol {res['test_violation']:.4f})", flush=True)
    return out


def summarize(per_seed, reference=REFERENCE, splits=("train", "test")):
    """Per method: mean of each measure, and the paired difference to ``reference`` (mean,
    half-width, min, max) of the objective on each of ``splits``."""
    out = {}
    for label in per_seed[0]:
        vals = {k: [s[label][k] for s in per_seed] for k in per_seed[0][label]}
        d = {k: float(np.mean(v)) for k, v in vals.items()}
        for split in splits:
            diff = [s[label][f"{split}_objective"] - s[reference][f"{split}_objective"] for s in per_seed]
            d[f"{split}_objective_minus_reference"] = {"mean": float(np.mean(diff)), "half_width": half_width(diff),
                                                       "min": float(np.min(diff)), "max": float(np.max(diff))}
        out[label] = d
    return out


def paired_cells(name, dataset, label, d, metric="objective_minus_con_gda", splits=("train", "test")):
    """A method's paired differences to the reference (one entry of :func:`summarize`) as table
    cells, one per split ("mean ± hw (min..max)"), and as the results format's rows."""
    cells, rows = [], []
    for split in splits:
        e = d[f"{split}_objective_minus_reference"]
        hw = "" if e["half_width"] is None else f" ± {e['half_width']:.4f}"
        cells.append(f"{e['mean']:+.4f}{hw} ({e['min']:+.4f}..{e['max']:+.4f})")
        rows.append({"experiment": name, "dataset": dataset, "method": label, "metric": metric, "split": split,
                     "value": e["mean"], "spread": e["half_width"], "lower_is_better": True, "paper_value": None,
                     "seconds": d["seconds"]})
    return cells, rows


def table(summary):
    lines = ["| rows | method | CPU s | train objective - 2000 it. (mean ± hw; min..max) | test objective - 2000 it. "
             "| test violation |", "|---|---|---|---|---|---|"]
    for n, by_method in summary.items():
        for label, d in by_method.items():
            cells = []
            for split in ("train", "test"):
                e = d[f"{split}_objective_minus_reference"]
                hw = "" if e["half_width"] is None else f" ± {e['half_width']:.4f}"
                cells.append(f"{e['mean']:+.4f}{hw}" + (f" ({e['min']:+.4f}..{e['max']:+.4f})" if split == "train" else ""))
            lines.append(f"| {n} | {label} | {d['seconds']:.2f} | {cells[0]} | {cells[1]} | {d['test_violation']:.4f} |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="10^4 rows, 2 seeds")
    args = ap.parse_args()
    plan = {10**4: 2} if args.quick else {10**4: 20, 10**5: 8}
    t0 = time.perf_counter()
    one_seed(2_000, 99)  # warm-up: the first fit of a process pays goalfit's lazy imports
    per, summary, rows = {}, {}, []
    for n, seeds in plan.items():
        per[n] = [one_seed(n, seed) for seed in range(seeds)]
        summary[n] = summarize(per[n])
        for label, d in summary[n].items():
            for split in ("train", "test"):
                e = d[f"{split}_objective_minus_reference"]
                rows.append({"experiment": f"multiclass hmean+DP n={n:.0e}", "dataset": "synthetic", "method": label,
                             "metric": "objective_minus_2000_iterations", "split": split, "value": e["mean"],
                             "spread": e["half_width"], "lower_is_better": True, "paper_value": None,
                             "seconds": d["seconds"]})
    print("\n" + table(summary))
    write_results(HERE / "results" / "multiclass_defaults.json",
                  {"benchmark": "multiclass_defaults", "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                   "seconds": time.perf_counter() - t0, "quick": args.quick, "machine": machine_record(),
                   "versions": versions(), "seeds": {str(n): list(range(s)) for n, s in plan.items()}, "bound": BOUND,
                   "summary": {str(n): s for n, s in summary.items()},
                   "per_seed": {str(n): p for n, p in per.items()}, "rows": rows})


if __name__ == "__main__":
    main()
