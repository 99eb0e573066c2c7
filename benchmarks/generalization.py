#!/usr/bin/env python
"""Do the goals hold on new data? In-sample vs cross-fitted vs certified fits, 20 re-splits.

Problems (random stratified re-splits, 2/3 train and 1/3 test; Adult uses adult.data + adult.test
pooled):

(a) Adult, sex: demographic parity difference <= 0.01; equalized odds difference <= 0.01;
    recall (true positive rate) of each sex >= 0.7;
(b) COMPAS, African-American vs Caucasian: equal opportunity difference <= 0.02;
(c) law school, first-year average in tertiles (3 classes, cut points from the training part),
    demographic parity difference <= 0.02 over race_binary.

Base models: LogisticRegression and HistGradientBoosting (``goalfit.make_estimator``:
one-hot + impute + scale, then the model). Methods: goalfit in-sample (``cv=None``), ``cv=5``
(fold-model average deployed), ``cv=5`` with a full refit deployed (HGB only: the deployed-model
choice), ``confidence=0.95``, ``cv=5`` + ``confidence=0.95``, fairlearn ThresholdOptimizer and
ExponentiatedGradient (LR only; binary problems it supports).

Columns: share of splits whose test value meets every bound, mean and worst test violation (max
over the problem's constraints, 0 when met), mean test accuracy, share certified, fit time as a
ratio to one base fit on the same rows. Values of randomized classifiers are exact expectations
(goalfit ``evaluate``; fairlearn ``_pmf_predict``).

Cost control (a shared 2-core machine): base fits are memoized within a split (same rows, same
model), except for the fits that are timed: fit-time ratios come from the first 5 splits of the
first Adult problem, COMPAS and law school. fairlearn's ExponentiatedGradient (about 30 base fits
per problem) runs on the first 5 splits only; its rows say how many splits they cover.

Usage::

    GOALFIT_DATA=/path/to/data python benchmarks/generalization.py [--quick] [--splits 20]

Writes ``benchmarks/results/generalization.json`` and ``generalization.png``.
"""
from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import os
import time
import warnings
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from sklearn.base import BaseEstimator, ClassifierMixin, clone  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402

import goalfit as gf  # noqa: E402
from goalfit.estimators import make_estimator  # noqa: E402
from goalfit.datasets import load_dataset  # noqa: E402
from _common import machine_record, versions  # noqa: E402

gfm = importlib.import_module("goalfit.metrics")
NAME = "generalization"
HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
TIMED_SPLITS = 5  # fit-time ratios from the first splits (later ones reuse memoized base fits)
EG_SPLITS = 5     # ExponentiatedGradient (~30 base fits per problem) on the first splits only
TARGETS = {"hgb_cv5_halves_mean_test_violation": True, "lr_cv5_accuracy_cost_max": 0.003,
           "confidence_meets_bound_share_min": 0.9}


# ----------------------------------------------------------------------------- data
def adult():
    a, b = load_dataset("adult", subset="train"), load_dataset("adult", subset="test")
    X = pd.concat([a.data, b.data], ignore_index=True)
    y = np.concatenate([np.asarray(a.target), np.asarray(b.target)])
    S = pd.concat([a.sensitive_features, b.sensitive_features], ignore_index=True)[["sex"]].astype(str)
    return X, y, S


def compas():
    d = load_dataset("compas")
    race = d.sensitive_features["race"].astype(str)
    keep = race.isin(["African-American", "Caucasian"]).to_numpy()
    X = d.data[keep].reset_index(drop=True)
    return X, np.asarray(d.target)[keep], pd.DataFrame({"race": race[keep].reset_index(drop=True)})


def law_school():
    d = load_dataset("law_school")
    X = d.data.drop(columns=["ZFYA"]).reset_index(drop=True)
    S = pd.DataFrame({"race_binary": d.sensitive_features["race_binary"].astype(str).reset_index(drop=True)})
    return X, d.data["ZFYA"].to_numpy(), S


PROBLEMS = [
    # key, data, sensitive column, constraints, fairlearn constraint (name, bound) or None
    ("adult_dp", "adult", "sex", lambda: [gf.demographic_parity_difference("sex") <= 0.01], ("dp", 0.01)),
    ("adult_eodds", "adult", "sex", lambda: [gf.equalized_odds_difference("sex") <= 0.01], ("eodds", 0.01)),
    ("adult_recall", "adult", "sex", lambda: [gf.true_positive_rate(group={"sex": "Female"}) >= 0.7,
                                              gf.true_positive_rate(group={"sex": "Male"}) >= 0.7], None),
    ("compas_eopp", "compas", "race", lambda: [gf.equal_opportunity_difference("race") <= 0.02], ("eopp", 0.02)),
    ("law_dp3", "law_school", "race_binary", lambda: [gf.demographic_parity_difference("race_binary") <= 0.02], None),
]
LOADERS = {"adult": adult, "compas": compas, "law_school": law_school}


# ----------------------------------------------------------------------------- memoized base fits
_CACHE: dict = {}


def _key(X, y, sample_weight, tag):
    h = hashlib.sha1(pd.util.hash_pandas_object(X, index=False).to_numpy().tobytes())
    h.update(np.asarray(y).tobytes())
    if sample_weight is not None:
        h.update(np.asarray(sample_weight, dtype=float).tobytes())
    return tag, h.hexdigest()


class Memo(ClassifierMixin, BaseEstimator):
    """A base model whose fits on identical rows are computed once (benchmark bookkeeping)."""

    def __init__(self, estimator=None, tag=""):
        self.estimator = estimator
        self.tag = tag

    def fit(self, X, y, sample_weight=None):
        k = _key(X, y, sample_weight, self.tag)
        if k not in _CACHE:
            m = clone(self.estimator)
            m.fit(X, y) if sample_weight is None else m.fit(X, y, sample_weight=sample_weight)
            _CACHE[k] = m
        self.model_ = _CACHE[k]
        self.classes_ = self.model_.classes_
        return self

    def predict_proba(self, X):
        return self.model_.predict_proba(X)

    def predict(self, X):
        return self.model_.predict(X)


# ----------------------------------------------------------------------------- methods
GOALFIT = {
    "in-sample": dict(cv=None),
    "cv=5": dict(cv=5),
    "cv=5 refit": dict(cv=5, method_params={"cv_model": "refit"}),
    "confidence=0.95": dict(cv=None, confidence=0.95),
    "cv=5 + confidence=0.95": dict(cv=5, confidence=0.95),
}


def fairlearn_fit(kind, method, base, X, y, s, bound):
    from fairlearn.postprocessing import ThresholdOptimizer
    from fairlearn.reductions import DemographicParity, EqualizedOdds, ExponentiatedGradient, TruePositiveRateParity

    if method == "ThresholdOptimizer":
        c = {"dp": "demographic_parity", "eodds": "equalized_odds", "eopp": "true_positive_rate_parity"}[kind]
        return ThresholdOptimizer(estimator=base, constraints=c, predict_method="predict_proba",
                                  objective="accuracy_score").fit(X, y, sensitive_features=s)
    moment = {"dp": DemographicParity, "eodds": EqualizedOdds, "eopp": TruePositiveRateParity}[kind](
        difference_bound=bound)
    return ExponentiatedGradient(base, moment, sample_weight_name="logisticregression__sample_weight").fit(
        X, y, sensitive_features=s)


def evaluate(constraints, model, X, y, S, col, classes, is_goalfit):
    if is_goalfit:
        ev = model.evaluate(X, y, sensitive_features=S)
    else:
        p1 = model._pmf_predict(X, sensitive_features=S[col]) if hasattr(model, "estimator_") and \
            not hasattr(model, "predictors_") else model._pmf_predict(X)
        dist = np.asarray(p1, dtype=float)
        ev = gfm.evaluate_problem(gf.goals.Problem("error", constraints), y, dist, sensitive_features=S,
                                  classes=classes)
    viol = max([c["violation"] for c in ev["constraints"]] + [0.0])
    return ev["accuracy"], viol, [c["value"] for c in ev["constraints"]]


def run(splits, quick, partial=None):
    rows, t_start = [], time.time()
    data = {}
    for split in range(splits):
      for key, dname, col, make_cons, fl in PROBLEMS:
        if dname not in data:
            data[dname] = LOADERS[dname]()
        X_all, y_all, S_all = data[dname]
        if True:
            strat = S_all[col].astype(str) + "_" + pd.Series(np.asarray(y_all > np.median(y_all) if dname == "law_school"
                                                                        else y_all).astype(str))
            tr, te = train_test_split(np.arange(len(X_all)), test_size=1 / 3, random_state=split, stratify=strat)
            X, Xt = X_all.iloc[tr].reset_index(drop=True), X_all.iloc[te].reset_index(drop=True)
            S, St = S_all.iloc[tr].reset_index(drop=True), S_all.iloc[te].reset_index(drop=True)
            y, yt = y_all[tr], y_all[te]
            if dname == "law_school":
                cuts = np.quantile(y, [1 / 3, 2 / 3])
                y, yt = np.digitize(y, cuts), np.digitize(yt, cuts)
            classes = np.unique(y)
            cons = make_cons()
            timed = key in ("adult_dp", "compas_eopp", "law_dp3") and split < TIMED_SPLITS
            for bname in ("LR", "HGB"):
                est = make_estimator("logistic_regression" if bname == "LR" else "gradient_boosting", random_state=0)
                t0 = time.perf_counter()
                clone(est).fit(X, y)
                t_base = time.perf_counter() - t0
                memo = Memo(est, tag=f"{dname}/{bname}")
                for mname, kw in GOALFIT.items():
                    if mname == "cv=5 refit" and bname == "LR":
                        continue
                    with warnings.catch_warnings(record=True) as caught:
                        warnings.simplefilter("always")
                        t0 = time.perf_counter()
                        m = gf.GoalClassifier(est if timed else memo, constraints=cons, random_state=split,
                                              **kw).fit(X, y, sensitive_features=S)
                        secs = time.perf_counter() - t0
                    acc, viol, vals = evaluate(cons, m, Xt, yt, St, col, classes, True)
                    _, viol_tr, _ = evaluate(cons, m, X, y, S, col, classes, True)
                    rows.append(dict(problem=key, split=split, base=bname, method=f"goalfit {mname}",
                                     test_accuracy=acc, test_violation=viol, train_violation=viol_tr,
                                     test_values=vals, certified=m.certified_,
                                     certification=m.certification_, seconds=secs if timed else None,
                                     fit_time_ratio=secs / t_base if timed else None,
                                     warnings=len([w for w in caught if issubclass(w.category, RuntimeWarning)])))
                if bname == "LR" and fl is not None:
                    for fm in ("ThresholdOptimizer", "ExponentiatedGradient"):
                        if fm == "ExponentiatedGradient" and split >= EG_SPLITS:
                            continue
                        t0 = time.perf_counter()
                        try:
                            with warnings.catch_warnings():
                                warnings.simplefilter("ignore")
                                m = fairlearn_fit(fl[0], fm, est, X, y, S[col], fl[1])
                        except Exception as e:  # noqa: BLE001 - record what the peer raises
                            rows.append(dict(problem=key, split=split, base=bname, method=f"fairlearn {fm}",
                                             error=f"{type(e).__name__}: {e}"[:300]))
                            continue
                        secs = time.perf_counter() - t0
                        acc, viol, vals = evaluate(cons, m, Xt, yt, St, col, classes, False)
                        _, viol_tr, _ = evaluate(cons, m, X, y, S, col, classes, False)
                        rows.append(dict(problem=key, split=split, base=bname, method=f"fairlearn {fm}",
                                         test_accuracy=acc, test_violation=viol, train_violation=viol_tr,
                                         test_values=vals, certified=None, seconds=secs if timed else None,
                                         fit_time_ratio=secs / t_base if timed else None))
            print(f"[{time.time() - t_start:7.0f}s] {key} split {split} done", flush=True)
      _CACHE.clear()
      if partial is not None:  # completed splits so far, for a run cut short
          partial.write_text(json.dumps({"splits_done": split + 1, "per_split": rows}, default=str))
    return rows


def summarize(rows):
    df = pd.DataFrame([r for r in rows if "error" not in r])
    out = []
    for (prob, base, meth), g in df.groupby(["problem", "base", "method"], sort=False):
        ratio = g["fit_time_ratio"].dropna()
        cert = g["certified"].dropna()
        out.append(dict(problem=prob, base=base, method=meth, n_splits=len(g),
                        share_meets_bound=float((g["test_violation"] <= 1e-9).mean()),
                        mean_test_violation=float(g["test_violation"].mean()),
                        worst_test_violation=float(g["test_violation"].max()),
                        mean_train_violation=float(g["train_violation"].mean()),
                        mean_test_accuracy=float(g["test_accuracy"].mean()),
                        sd_test_accuracy=float(g["test_accuracy"].std(ddof=1)) if len(g) > 1 else None,
                        share_certified=float(cert.astype(bool).mean()) if len(cert) else None,
                        # "never a silent miss": the test split meets the bound, or the fit said
                        # "not certified" (with the data it would need)
                        share_meets_or_refused=(float(((g["test_violation"] <= 1e-9) | (g["certified"] == False)).mean())  # noqa: E712
                                                if len(cert) else None),
                        share_meets_given_certified=(float((g.loc[g["certified"] == True, "test_violation"] <= 1e-9).mean())  # noqa: E712
                                                     if (g["certified"] == True).any() else None),  # noqa: E712
                        fit_time_ratio=float(ratio.median()) if len(ratio) else None))
    return pd.DataFrame(out)


def needed_sizes(rows):
    """Per problem/base/method: the median safety-part size the failed certifications ask for."""
    out = {}
    for r in rows:
        for c in (r.get("certification") or []):
            if not c["passed"]:
                k = f"{r['problem']}/{r['base']}/{r['method']}"
                out.setdefault(k, []).append(c.get("needed_safety_size"))
    return {k: {"n_failed_checks": len(v), "median_needed_safety_size":
                (float(np.median([x for x in v if x is not None])) if any(x is not None for x in v) else None),
                "n_already_violating": sum(x is None for x in v)} for k, v in out.items()}


def targets(summary):
    s = summary.set_index(["problem", "base", "method"])
    res = {}
    for prob in summary["problem"].unique():
        ins = s.loc[(prob, "HGB", "goalfit in-sample")]["mean_test_violation"]
        cv = s.loc[(prob, "HGB", "goalfit cv=5")]["mean_test_violation"]
        lr_cost = s.loc[(prob, "LR", "goalfit in-sample")]["mean_test_accuracy"] - \
            s.loc[(prob, "LR", "goalfit cv=5")]["mean_test_accuracy"]
        conf = {}
        for base in ("LR", "HGB"):
            for meth in ("goalfit confidence=0.95", "goalfit cv=5 + confidence=0.95"):
                r = s.loc[(prob, base, meth)]
                conf[f"{base}/{meth}"] = {"share_meets_bound": r["share_meets_bound"],
                                          "share_certified": r["share_certified"],
                                          "share_meets_or_refused": r["share_meets_or_refused"],
                                          "target_met": bool(r["share_meets_bound"] >= 0.9
                                                             or r["share_meets_or_refused"] >= 1.0)}
        res[prob] = {"hgb_in_sample_mean_violation": ins, "hgb_cv5_mean_violation": cv,
                     "hgb_cv5_halves": bool(cv <= ins / 2 + 1e-12), "lr_cv5_accuracy_cost": lr_cost,
                     "lr_cost_ok": bool(lr_cost <= 0.003), "confidence": conf}
    return res


def dkw_vs_split(rows, confidence=0.95):
    """Which high-confidence bound is tighter on these data: DKW uniform bounds or the safety split?

    DKW (Dvoretzky-Kiefer-Wolfowitz, Massart's constant): with ``N`` scores in a slice, every
    threshold rule's rate on that slice is within ``sqrt(log(2 / delta) / (2 N))`` of its sample
    value, simultaneously over thresholds, with probability ``1 - delta``; rates of mixtures are
    averages, so the bound covers every randomized threshold rule too, and all the training rows
    can be used (no split; it needs a score function independent of those rows). A difference of
    two slices' rates moves by at most the sum of their two margins. ``delta`` is split
    (Bonferroni) over the slices a problem's constraints involve. The split-based width is the
    observed ``certified_bound - safety_value`` of the certification runs (median over splits), which
    uses 40% of the rows but a variance-aware bound. Binary problems only (threshold rules).
    """
    data = {"adult": adult(), "compas": compas()}
    slices = {  # (dataset, sensitive column, labels whose slices enter, slices per constraint)
        "adult_dp": ("adult", "sex", None), "adult_eodds": ("adult", "sex", (0, 1)),
        "adult_recall": ("adult", "sex", (1,)), "compas_eopp": ("compas", "race", (1,)),
    }
    out = {}
    for prob, (dname, col, labels) in slices.items():
        X, y, S = data[dname]
        n_train = 2 / 3
        groups = S[col].astype(str).to_numpy()
        sizes = []
        for gname in np.unique(groups):
            if labels is None:
                sizes.append(n_train * (groups == gname).sum())
            else:
                sizes += [n_train * ((groups == gname) & (y == lab)).sum() for lab in labels]
        delta = (1 - confidence) / len(sizes)
        eps = [np.sqrt(np.log(2 / delta) / (2 * N)) for N in sizes]
        per_group = len(eps) // len(np.unique(groups))
        if prob == "adult_recall":  # each constraint is one slice's rate
            dkw = max(eps)
        else:  # a difference of two groups' rates, per label family: the sum of their margins
            dkw = max(eps[k] + eps[per_group + k] for k in range(per_group))
        widths = [abs(c["certified_bound"] - c["safety_value"]) for r in rows if r.get("problem") == prob
                  and r.get("method") == "goalfit confidence=0.95" and r.get("base") == "LR"
                  for c in (r.get("certification") or [])]
        out[prob] = {"dkw_margin_all_rows": float(dkw), "split_bound_width_median": float(np.median(widths))
                     if widths else None, "slice_sizes_train": [int(v) for v in sizes]}
    return out


def plot(summary, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    probs = list(summary["problem"].unique())
    methods = list(dict.fromkeys(summary["method"]))
    color = {m: f"C{k % 10}" for k, m in enumerate(methods)}  # one colour per method in every panel
    fig, axes = plt.subplots(1, len(probs), figsize=(4.2 * len(probs), 4.2), squeeze=False)
    for ax, prob in zip(axes[0], probs):
        g = summary[summary["problem"] == prob]
        for _, r in g.iterrows():
            marker = "o" if r["base"] == "LR" else "s"
            ax.errorbar(r["mean_test_violation"], r["mean_test_accuracy"], fmt=marker, color=color[r["method"]],
                        label=f"{r['base']} {r['method'].replace('goalfit ', '')}")
        ax.set_title(prob)
        ax.set_xlabel("mean test violation")
        ax.set_ylabel("mean test accuracy")
        ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="2 splits")
    ap.add_argument("--splits", type=int, default=20)
    ap.add_argument("--from-partial", action="store_true",
                    help="summarize the splits a run cut short completed (results/generalization_partial.json)")
    ap.add_argument("--dkw-only", action="store_true",
                    help="add the DKW-vs-split comparison to an existing results JSON and exit")
    args = ap.parse_args()
    if args.dkw_only:
        path = RESULTS / f"{NAME}{'_quick' if args.quick else ''}.json"
        out = json.loads(path.read_text())
        out["dkw_vs_split"] = dkw_vs_split(out["per_split"])
        print(json.dumps(out["dkw_vs_split"], indent=1))
        path.write_text(json.dumps(out, indent=1, default=str) + "\n")
        return
    splits = 2 if args.quick else args.splits
    t0 = time.time()
    RESULTS.mkdir(exist_ok=True)
    if args.from_partial:
        part = json.loads((RESULTS / f"{NAME}_partial.json").read_text())
        rows, splits = part["per_split"], part["splits_done"]
        rows = [r for r in rows if r["split"] < splits]
    else:
        rows = run(splits, args.quick, RESULTS / f"{NAME}_partial.json")
    summary = summarize(rows)
    pd.set_option("display.width", 200)
    pd.set_option("display.max_rows", 200)
    print(summary.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    tg = targets(summary)
    print(json.dumps(tg, indent=1, default=float))
    RESULTS.mkdir(exist_ok=True)
    suffix = "_quick" if args.quick else ""
    out = {"machine": machine_record(), "versions": versions("fairlearn"), "splits": splits,
           "seconds": time.time() - t0, "targets": TARGETS, "target_results": tg,
           "needed_sizes": needed_sizes(rows), "dkw_vs_split": dkw_vs_split(rows),
           "rows": [dict(experiment=r["problem"], dataset=r["problem"].split("_")[0], method=f"{r['base']} {r['method']}",
                         metric="test_violation (max over constraints, 0 when met)", split="test",
                         value=float(row["mean_test_violation"]), spread=float(row["worst_test_violation"]),
                         paper_value=None, lower_is_better=True, seconds=None)
                    for r, row in [({"problem": x["problem"], "base": x["base"], "method": x["method"]}, x)
                                   for x in summary.to_dict("records")]],
           "summary": summary.to_dict("records"), "per_split": rows}
    (RESULTS / f"{NAME}{suffix}.json").write_text(json.dumps(out, indent=1, default=str) + "\n")
    plot(summary, RESULTS / f"{NAME}{suffix}.png")
    print(f"wrote {RESULTS / (NAME + suffix + '.json')} in {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
