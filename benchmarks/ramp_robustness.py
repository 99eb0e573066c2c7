#!/usr/bin/env python
"""RampClassifier where the group appears only in the constraints: the spread of its answer over
reasonable settings.

Problems (the sensitive feature is dropped from ``X``; the model never sees it; violations
measured with the true groups):

* COMPAS (African-American vs Caucasian, 5,278 rows; one-hot + standardized features without
  race): minimize error s.t. ``false_positive_rate_difference("race") <= 0.01``;
* Adult (sex; one-hot + standardized, ``sex`` dropped; a random 10,000-row training part of
  the official training split, test on the official test split): minimize error s.t.
  ``demographic_parity_difference("sex") <= 0.01``.

Grid: ``alpha`` in {default, 1e-2, 1e-3, 1e-4} x ``init`` in {"zeros", "unconstrained"} x 3 seeds
(each seed draws the 70/30 train/test split of COMPAS or the Adult training part, and is the
estimator's ``random_state``). Per fit: train and test accuracy and violation of the deployed
deterministic ``predict`` (``f(x) > threshold_``, the fitted threshold), the randomized rule's
train violation and feasibility, the fit time. Per problem: the spread (min, max, std) of each
column over the grid. ``--compare A.json B.json`` prints two results files side by side (e.g.
this file at two git revisions).

Usage::

    GOALFIT_DATA=/path/to/data python benchmarks/ramp_robustness.py [--quick]

``--quick``: COMPAS only, seeds 0-1 (about 2 min). Writes ``benchmarks/results/ramp_robustness.json``.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
from sklearn.model_selection import train_test_split

import goalfit as gf
from goalfit.estimators import make_estimator
from goalfit.datasets import load_dataset

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import machine_record, versions  # noqa: E402

ALPHAS = [None, 1e-2, 1e-3, 1e-4]
INITS = ["zeros", "unconstrained"]
COLUMNS = ["train_acc", "train_viol", "train_viol_randomized", "test_acc", "test_viol", "seconds"]


def _features(Xtr, Xte):
    pre = make_estimator("logistic_regression", random_state=0)[:-1]
    A = pre.fit_transform(Xtr)
    B = pre.transform(Xte)
    dense = lambda M: np.asarray(M.toarray() if hasattr(M, "toarray") else M, dtype=float)  # noqa: E731
    return dense(A), dense(B)


def compas(seed):
    d = load_dataset("compas")
    race = d.sensitive_features["race"].astype(str)
    keep = race.isin(["African-American", "Caucasian"]).to_numpy()
    X = d.data[keep].drop(columns=[c for c in ("race",) if c in d.data.columns]).reset_index(drop=True)
    y = np.asarray(d.target)[keep]
    g = race[keep].to_numpy()
    tr, te = train_test_split(np.arange(len(y)), test_size=0.3, random_state=seed, stratify=g + y.astype(str))
    A, B = _features(X.iloc[tr], X.iloc[te])
    return A, y[tr], g[tr], B, y[te], g[te], gf.false_positive_rate_difference("race") <= 0.01, "race"


def adult(seed, n_train=10000):
    a, b = load_dataset("adult", subset="train"), load_dataset("adult", subset="test")
    rows = np.random.default_rng(seed).permutation(len(a.target))[:n_train]
    Xa = a.data.iloc[rows].drop(columns=["sex"]).reset_index(drop=True)
    Xb = b.data.drop(columns=["sex"])
    A, B = _features(Xa, Xb)
    ga = np.asarray(a.sensitive_features["sex"]).astype(str)[rows]
    gb = np.asarray(b.sensitive_features["sex"]).astype(str)
    return (A, np.asarray(a.target)[rows], ga, B, np.asarray(b.target), gb,
            gf.demographic_parity_difference("sex") <= 0.01, "sex")


PROBLEMS = {"compas_fpr_parity_0.01": compas, "adult_dp_0.01": adult}


def run_one(data, alpha, init, seed):
    A, ytr, gtr, B, yte, gte, con, col = data
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = gf.RampClassifier("error", [con], alpha=alpha, method_params={"init": init}, random_state=seed).fit(
            A, ytr, sensitive_features={col: gtr})
    sec = time.perf_counter() - t0

    def measured(X, y, g):
        ev = m.evaluate(X, y, sensitive_features={col: g})
        return ev["accuracy"], max(c["violation"] for c in ev["constraints"])

    tr_acc, tr_viol = measured(A, ytr, gtr)
    te_acc, te_viol = measured(B, yte, gte)
    return {"alpha": alpha, "alpha_used": float(getattr(m, "alpha_", np.nan)), "init": init, "seed": seed,
            "train_acc": tr_acc, "train_viol": tr_viol, "train_viol_randomized": float(m.result_.details.randomized.max_violation),
            "test_acc": te_acc, "test_viol": te_viol, "feasible": bool(m.result_.details.randomized.feasible), "seconds": sec,
            "mm_iterations": int(m.n_iter_)}


def summary(runs):
    out = {}
    for k in COLUMNS:
        v = np.array([r[k] for r in runs], dtype=float)
        out[k] = {"min": float(v.min()), "max": float(v.max()), "mean": float(v.mean()), "std": float(v.std())}
    out["infeasible_fits"] = int(sum(not r["feasible"] for r in runs))
    out["train_violations_above_bound"] = int(sum(r["train_viol"] > 1e-9 for r in runs))
    out["n_fits"] = len(runs)
    return out


def print_table(name, s, label=""):
    print(f"\n{name} {label} ({s['n_fits']} fits; {s['infeasible_fits']} reported infeasible; "
          f"{s['train_violations_above_bound']} with train violation > 0)")
    print(f"{'column':24s} {'min':>8s} {'max':>8s} {'max-min':>8s} {'std':>8s}")
    for k in COLUMNS:
        r = s[k]
        print(f"{k:24s} {r['min']:8.4f} {r['max']:8.4f} {r['max'] - r['min']:8.4f} {r['std']:8.4f}")


def compare(paths):
    recs = [json.loads(Path(p).read_text()) for p in paths]
    for name in recs[0]["summary"]:
        print(f"\n{name}")
        head = "".join(f" | {r['label']:>26s}" for r in recs)
        print(f"{'column':24s}{head}")
        for k in COLUMNS + ["infeasible_fits", "train_violations_above_bound"]:
            cells = []
            for r in recs:
                s = r["summary"].get(name)
                if s is None:
                    cells.append(f" | {'-':>26s}")
                elif isinstance(s[k], dict):
                    cells.append(f" | {s[k]['min']:.4f} - {s[k]['max']:.4f} (sd {s[k]['std']:.4f})")
                else:
                    cells.append(f" | {s[k]:>26d}")
            print(f"{k:24s}{''.join(cells)}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="COMPAS only, seeds 0-1")
    ap.add_argument("--label", default="current", help="a name for this run in the results file")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--only", default=None, help="run the problems whose name contains this string")
    ap.add_argument("--compare", nargs="+", default=None, help="print JSON results side by side")
    ap.add_argument("--out", default=str(HERE / "results"))
    args = ap.parse_args(argv)
    if args.compare:
        compare(args.compare)
        return
    t_all = time.perf_counter()
    seeds = list(range(2 if args.quick else args.seeds))
    problems = {k: v for k, v in PROBLEMS.items() if not (args.quick and k.startswith("adult"))
                and (args.only is None or args.only in k)}
    runs, summaries = {}, {}
    for name, loader in problems.items():
        runs[name] = []
        for seed in seeds:
            data = loader(seed)
            for alpha in ALPHAS:
                for init in INITS:
                    r = run_one(data, alpha, init, seed)
                    runs[name].append(r)
                    print(f"{name} seed {seed} alpha {str(alpha):6s} ({r['alpha_used']:.1e}) {init:13s} "
                          f"train acc {r['train_acc']:.4f} viol {r['train_viol']:.4f} (rnd {r['train_viol_randomized']:.4f}) "
                          f"test acc {r['test_acc']:.4f} viol {r['test_viol']:.4f} feasible {r['feasible']} "
                          f"{r['seconds']:.1f}s", flush=True)
        summaries[name] = summary(runs[name])
        print_table(name, summaries[name], args.label)
    rows = []
    for name, s in summaries.items():
        for k in COLUMNS:
            rows.append({"experiment": name, "dataset": name.split("_")[0], "method": "RampClassifier",
                         "metric": f"{k}_spread_max_minus_min", "value": s[k]["max"] - s[k]["min"],
                         "split": "test" if k.startswith("test") else "train",
                         "spread": {"min": s[k]["min"], "max": s[k]["max"], "std": s[k]["std"]},
                         "lower_is_better": True, "paper_value": None, "seconds": None})
    record = {"script": "ramp_robustness.py", "label": args.label, "quick": args.quick,
              "date": datetime.now(timezone.utc).isoformat(), "seconds_total": time.perf_counter() - t_all,
              "machine": machine_record(), "versions": versions(), "seeds": seeds,
              "grid": {"alpha": ALPHAS, "init": INITS}, "summary": summaries, "runs": runs, "rows": rows}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"ramp_robustness{'_quick' if args.quick else ''}.json"
    path.write_text(json.dumps(record, indent=1) + "\n")
    print(f"\nwrote {path} ({record['seconds_total']:.0f} s)")


if __name__ == "__main__":
    main()
