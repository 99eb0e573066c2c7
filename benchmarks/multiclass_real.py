#!/usr/bin/env python
"""Multiclass linear goals on real data: column generation (``auto``'s method) against SplitFW.

``choose_method`` runs column generation with the recalibrated pricing on multiclass linear goals
(error, balanced error; no constraint or polyhedral ones) on the plug-in oracle, read from
``atlas.py``'s synthetic cells, whose logistic regression is well specified (Gaussian classes)
and does not see the group. This script asks whether the choice holds on real data, where the
model is misspecified: eight multiclass data sets under ``$GOALFIT_DATA`` (law school's ZFYA
tertiles by race, as ``fairness_vs_fairlearn.py``; the others grouped by their first feature
above or below its training median), error and balanced error x {none, demographic parity
<= 0.02, coverage of the last class <= 3/4 of its rate} (``atlas.constraints``), 3 random 2/3 -
1/3 splits per data set (stratified by race for law school, by the label for the others).

The probabilities are the user's default path, made once per split: a cross-fitted logistic
regression (``goalfit.make_estimator("logistic_regression")``, 5 stratified folds; the training
rows' out-of-fold probabilities, the held-out rows' the mean of the five fold models), and each
method runs on them as ``GoalClassifier("precomputed", method=...)`` (``atlas.run_method``: the
objective and the worst violation on the training and the held-out rows, exact expectations over
the randomized classifier; CPU seconds, one BLAS thread). Reported: column generation minus SplitFW
per data set and over all fits (mean ± 95% half-width; how often column generation is more than
1e-3 above on each sample), and the time ratio.

Usage::

    python benchmarks/multiclass_real.py            # 8 data sets x 3 splits x 6 goals, ~5 min
    python benchmarks/multiclass_real.py --quick    # 2 data sets, 1 split

Writes ``benchmarks/results/multiclass_real.json``.
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
import pandas as pd  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import half_width, machine_record, versions, write_results  # noqa: E402
from atlas import constraints, run_method  # noqa: E402

import goalfit as gf  # noqa: E402
from goalfit.datasets import load_dataset  # noqa: E402

DATASETS = ("law_school", "satimage", "pageblocks", "vehicle", "wine_quality", "yeast", "abalone", "shuttle")
GOALS = [(objective, family) for objective in ("error", "balanced_error") for family in ("none", "dp", "coverage")]
METHODS = ("column_generation", "split_frank_wolfe")


def data(name):
    """(features, labels as codes, group labels) of a data set."""
    d = load_dataset(name)
    if name == "law_school":
        z = d.data["ZFYA"]
        X = d.data.drop(columns=["ZFYA"])
        g = np.asarray(d.sensitive_features["race_binary"]).astype(str)
        return X, z, g
    X = d.data
    y = np.unique(np.asarray(d.target), return_inverse=True)[1]
    return X, y, None


def split_probabilities(name, seed):
    """Cross-fitted probabilities (P), labels (Y) and groups (G) of one random split, and one LR fit's seconds."""
    from sklearn.base import clone
    from sklearn.model_selection import StratifiedKFold, train_test_split

    X, y, g = data(name)
    rng_idx = np.arange(len(X))
    # stratified by race (law school) or by the label (every class on both sides: balanced error
    # on held-out rows needs each one)
    tr, te = train_test_split(rng_idx, test_size=1 / 3, random_state=seed, stratify=g if g is not None else y)
    if name == "law_school":  # tertiles of the first-year average, cut on the training part
        cuts = np.quantile(np.asarray(y)[tr], [1 / 3, 2 / 3])
        y = np.digitize(np.asarray(y), cuts)
    y = np.asarray(y)
    if g is None:  # the first feature above or below its training median
        first = pd.to_numeric(X.iloc[:, 0], errors="coerce").to_numpy()
        g = np.where(first > np.nanmedian(first[tr]), "high", "low")
    base = gf.make_estimator("logistic_regression", random_state=0)
    Xa, Xb = X.iloc[tr].reset_index(drop=True), X.iloc[te].reset_index(drop=True)
    ya = y[tr]
    K = len(np.unique(y))
    t = time.process_time()
    clone(base).fit(Xa, ya)
    lr_seconds = time.process_time() - t
    P_train, P_test = np.zeros((len(tr), K)), np.zeros((len(te), K))
    folds = StratifiedKFold(5, shuffle=True, random_state=seed)
    for a, b in folds.split(Xa, ya):
        m = clone(base).fit(Xa.iloc[a], ya[a])
        cols = np.searchsorted(np.arange(K), m.classes_)
        P_train[np.ix_(b, cols)] = m.predict_proba(Xa.iloc[b])
        P_test[:, cols] += m.predict_proba(Xb) / 5
    P_train = np.clip(P_train, 1e-12, None)
    P_train /= P_train.sum(1, keepdims=True)
    return ({"train": P_train, "test": P_test}, {"train": ya, "test": y[te]}, {"train": g[tr], "test": g[te]},
            lr_seconds)


def one_split(name, seed):
    """Both methods on the six goals of one data set and split: one record per goal."""
    P, Y, G, lr_seconds = split_probabilities(name, seed)
    K = P["train"].shape[1]
    run_method("column_generation", "error", [], P, Y, G, limit=300)  # untimed warm-up
    out = []
    for objective, family in GOALS:
        cons = constraints(family, Y["train"], P["train"], K)
        rec = {"dataset": name, "classes": K, "rows": len(Y["train"]), "seed": seed, "objective": objective,
               "constraints": family, "lr_seconds": lr_seconds}
        for m in METHODS:
            r, _ = run_method(m, objective, cons, P, Y, G, limit=300)
            rec[m] = {k: r.get(k) for k in ("train_objective", "test_objective", "train_violation", "test_violation",
                                            "seconds", "status", "ran")}
        if all(rec[m]["status"] == "finished" for m in METHODS):
            d = {s: rec["column_generation"][f"{s}_objective"] - rec["split_frank_wolfe"][f"{s}_objective"]
                 for s in ("train", "test")}
            print(f"  {name:12s} seed {seed} {objective:14s} {family:8s} column generation - SplitFW: "
                  f"train {d['train']:+.4f} held-out {d['test']:+.4f} | seconds "
                  f"{rec['column_generation']['seconds']:.2f} {rec['split_frank_wolfe']['seconds']:.2f}", flush=True)
        else:
            print(f"  {name:12s} seed {seed} {objective:14s} {family:8s} "
                  f"{[rec[m]['status'] for m in METHODS]}", flush=True)
        out.append(rec)
    return out


def summarize(records):
    """Column generation minus SplitFW on both samples: per data set and overall."""
    def stats(rs):
        rs = [r for r in rs if all(r[m]["status"] == "finished" for m in METHODS)]
        out = {"fits": len(rs)}
        for s in ("train", "test"):
            d = np.array([r["column_generation"][f"{s}_objective"] - r["split_frank_wolfe"][f"{s}_objective"]
                          for r in rs])
            out.update({f"{s}_mean": float(d.mean()), f"{s}_half_width": half_width(d), f"{s}_max": float(d.max()),
                        f"{s}_min": float(d.min()), f"cg_above_1e-3_{s}": int((d > 1e-3).sum()),
                        f"cg_below_1e-3_{s}": int((d < -1e-3).sum())})
        ratio = np.array([r["column_generation"]["seconds"] / r["split_frank_wolfe"]["seconds"] for r in rs])
        out["time_ratio_median"] = float(np.median(ratio))
        return out

    per = {name: stats([r for r in records if r["dataset"] == name]) for name in dict.fromkeys(r["dataset"] for r in records)}
    return per, stats(records)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=str(HERE / "results" / "multiclass_real.json"))
    args = ap.parse_args(argv)
    names = DATASETS[:2] if args.quick else DATASETS
    seeds = (0,) if args.quick else (0, 1, 2)
    t0 = time.time()
    records = []
    for name in names:
        for seed in seeds:
            records.extend(one_split(name, seed))
    per, overall = summarize(records)
    print("\n| data set | classes | train rows | fits | train: CG - SplitFW (mean ± hw) | CG > 1e-3 above | "
          "held-out: CG - SplitFW | CG > 1e-3 above / below | time CG / SplitFW (median) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, s in list(per.items()) + [("all", overall)]:
        r = next((r for r in records if r["dataset"] == name), None)
        shape = ("-", "-") if r is None else (r["classes"], r["rows"])
        print(f"| {name} | {shape[0]} | {shape[1]} | {s['fits']} | {s['train_mean']:+.4f} ± {s['train_half_width']:.4f} | "
              f"{s['cg_above_1e-3_train']} | {s['test_mean']:+.4f} ± {s['test_half_width']:.4f} | "
              f"{s['cg_above_1e-3_test']} / {s['cg_below_1e-3_test']} | {s['time_ratio_median']:.2f} |")
    rows = [{"experiment": "multiclass real data", "dataset": name, "method": "column_generation - split_frank_wolfe",
             "metric": f"{s_}_objective_difference", "split": s_, "value": s[f"{s_}_mean"],
             "spread": s[f"{s_}_half_width"], "paper_value": None, "lower_is_better": True, "seconds": None}
            for name, s in list(per.items()) + [("all", overall)] for s_ in ("train", "test")]
    write_results(args.out, {"script": "multiclass_real.py", "machine": machine_record(), "versions": versions(),
                             "seeds": list(seeds), "rows": rows,
                             "details": {"per_dataset": per, "overall": overall, "records": records},
                             "seconds": time.time() - t0})


if __name__ == "__main__":
    main()
