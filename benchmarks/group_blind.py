#!/usr/bin/env python
"""Group-blind classifiers that meet fairness goals, and deterministic classifiers that keep them.

Problems (the sensitive feature is dropped from ``X``; group-blind methods never see it at
predict time; every violation is measured with the true groups):

* Adult (official split, 32,561 / 16,281 rows), sex: minimize error s.t. demographic parity
  difference <= 0.01, and s.t. equalized odds difference <= 0.01;
* law_school, 3 classes (ZFYA tertiles, cut points from the training part; ``race`` dropped),
  race_binary: demographic parity difference <= 0.02 (max over classes of the between-group gap);
* credit default (UCI, ``SEX`` dropped), sex: equal opportunity difference <= 0.02.

law_school and credit default have no official split: ``--splits`` stratified 2/3 - 1/3 splits
(seeds 0, 1, ...); Adult uses its official split (re-split with seeds 1, ... when
``--splits`` > 1).

Methods: the group-blind plug-in (``GoalClassifier(group_blind=True)``; logistic regression
with the joint model as one multiclass model on (group, class) ("product") and as
P(Y|x) P(A|x,Y) ("factored"); HistGradientBoosting, product, cross-fitted with cv=5),
``RampClassifier`` (Goh et al., on the one-hot / standardized features, deterministic
``f > 0`` and randomized ``sigma(f)``), Zafar et al.'s covariance-constrained SVM
(``goh_fairness_adult.zafar_svm``; DP only, ``c`` chosen on the training data as the most
accurate value meeting the goal there), fairlearn ExponentiatedGradient (group-blind at predict
time; binary only), OxonFair with inferred groups (a second logistic regression predicts the
group; binary only), and the group-aware plug-in as the reference. Columns: test accuracy,
test violation, train violation (expected over the randomization where there is one; of the
deployed model on the training rows, so in-sample for the cross-fitted HGB), fit time ratio to
one fit of the base model (logistic regression; HistGradientBoosting for the HGB row) measured
just before in the same process.

Deterministic table (Adult DP and EOdds, group-aware and group-blind LR): the randomized
classifier vs ``to_deterministic("hash")`` and ``to_deterministic("best_rule")``.

Usage::

    GOALFIT_DATA=/path/to/data python benchmarks/group_blind.py [--quick] [--splits N]

Writes ``benchmarks/results/group_blind.json`` and ``benchmarks/results/group_blind.png``.
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
import pandas as pd
from sklearn.base import clone
from sklearn.model_selection import train_test_split

import goalfit as gf
from goalfit.cli.models import make_estimator
from goalfit.datasets import load_dataset

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import half_width, machine_record, versions  # noqa: E402

NAME = "group_blind"
RESULTS = HERE / "results"
ONLY = None  # --only: run the methods whose name contains this string, merged into the JSON
TARGETS = {"oxonfair_adult_dp": {"accuracy": 0.8297, "test_violation": 0.0069, "source": "notes-peers.md §8"}}


# ============================================================================ data
def problems(split, quick):
    """Yield (name, kind, bound, X, y, s, Xt, yt, st) for one split."""
    rng = np.random.RandomState(split)

    def sub(X, y, s, n):
        if not quick or len(y) <= n:
            return X, y, s
        idx = np.sort(rng.choice(len(y), n, replace=False))
        return X.iloc[idx].reset_index(drop=True), y.iloc[idx].reset_index(drop=True), s.iloc[idx].reset_index(drop=True)

    tr, te = load_dataset("adult", subset="train"), load_dataset("adult", subset="test")
    X, y, s = tr.data.drop(columns=["sex"]), pd.Series(np.asarray(tr.target)), tr.sensitive_features["sex"].astype(str)
    Xt, yt, st = te.data.drop(columns=["sex"]), pd.Series(np.asarray(te.target)), te.sensitive_features["sex"].astype(str)
    if split > 0:
        XA, yA, sA = pd.concat([X, Xt], ignore_index=True), pd.concat([y, yt], ignore_index=True), pd.concat([s, st], ignore_index=True)
        a, b = train_test_split(np.arange(len(yA)), test_size=len(yt), random_state=split, stratify=sA + yA.astype(str))
        X, y, s = XA.iloc[a].reset_index(drop=True), yA.iloc[a].reset_index(drop=True), sA.iloc[a].reset_index(drop=True)
        Xt, yt, st = XA.iloc[b].reset_index(drop=True), yA.iloc[b].reset_index(drop=True), sA.iloc[b].reset_index(drop=True)
    X, y, s = sub(X, y, s, 8000)
    yield ("Adult DP<=0.01", "dp", 0.01, X, y, s, Xt, yt, st)
    yield ("Adult EOdds<=0.01", "eodds", 0.01, X, y, s, Xt, yt, st)

    ds = load_dataset("law_school")
    z = ds.data["ZFYA"]
    XL = ds.data.drop(columns=["ZFYA", "race"])
    race = ds.sensitive_features["race_binary"].astype(str)
    a, b = train_test_split(np.arange(len(XL)), test_size=1 / 3, random_state=split, stratify=race)
    cuts = np.quantile(z.iloc[a], [1 / 3, 2 / 3])
    lab = pd.Series(np.digitize(z, cuts))
    X, y, s = XL.iloc[a].reset_index(drop=True), lab.iloc[a].reset_index(drop=True), race.iloc[a].reset_index(drop=True)
    X, y, s = sub(X, y, s, 8000)
    yield ("law_school 3-class DP<=0.02", "dp", 0.02, X, y, s,
           XL.iloc[b].reset_index(drop=True), lab.iloc[b].reset_index(drop=True), race.iloc[b].reset_index(drop=True))

    ds = load_dataset("credit_default")
    XC = ds.data.drop(columns=["SEX"])
    yC = pd.Series(np.asarray(ds.target))
    sex = ds.sensitive_features["SEX"].astype(str)
    a, b = train_test_split(np.arange(len(XC)), test_size=1 / 3, random_state=split, stratify=sex + yC.astype(str))
    X, y, s = XC.iloc[a].reset_index(drop=True), yC.iloc[a].reset_index(drop=True), sex.iloc[a].reset_index(drop=True)
    X, y, s = sub(X, y, s, 8000)
    yield ("credit_default EOpp<=0.02", "eopp", 0.02, X, y, s,
           XC.iloc[b].reset_index(drop=True), yC.iloc[b].reset_index(drop=True), sex.iloc[b].reset_index(drop=True))


# ============================================================================ metrics
def violation(kind, y, D, s, classes):
    """Between-group gap of a (randomized) classifier, D[l, k] = P(h(x_l) = classes[k]).

    dp: max over classes of max - min over groups of P(h = k | A = a); eopp: TPR gap (class 1);
    eodds: max of the TPR and FPR gaps.
    """
    y, s, D = np.asarray(y), np.asarray(s), np.asarray(D, float)
    groups = np.unique(s)

    def gap(col, mask):
        r = [D[(s == g) & mask, col].mean() for g in groups]
        return max(r) - min(r)

    every = np.ones(len(y), bool)
    if kind == "dp":
        return float(max(gap(k, every) for k in range(D.shape[1])))
    pos = classes.tolist().index(1)
    if kind == "eopp":
        return float(gap(pos, y == 1))
    return float(max(gap(pos, y == 1), gap(pos, y == 0)))


def accuracy(y, D, classes):
    idx = np.searchsorted(classes, np.asarray(y))
    return float(np.asarray(D)[np.arange(len(idx)), idx].mean())


def constraint(kind, bound, col):
    return {"dp": gf.demographic_parity_difference, "eodds": gf.equalized_odds_difference,
            "eopp": gf.equal_opportunity_difference}[kind](col) <= bound


def one_hot(pred, classes):
    return (np.asarray(pred)[:, None] == np.asarray(classes)[None, :]).astype(float)


# ============================================================================ methods
def fit_goal(X, y, s, kind, bound, est, group_blind, joint="product", cv="auto"):
    m = gf.GoalClassifier(est, constraints=[constraint(kind, bound, "g")], group_blind=group_blind,
                          joint_model=joint, cv=cv, random_state=0)
    m.fit(X, y, sensitive_features={"g": np.asarray(s)})
    blind = group_blind
    return m, (lambda Xe, se: m.predict_proba(Xe) if blind else m.predict_proba(Xe, sensitive_features={"g": np.asarray(se)}))


def ramp_rates(kind, bound):
    """Goh et al.'s rate goals for the problem (linear in positive prediction rates)."""
    def diff(rate, **kw):
        a, b = rate(group="A", **kw), rate(group="B", **kw)
        return [a - b <= bound, b - a <= bound]
    if kind == "dp":
        return diff(gf.positive_prediction_rate)
    if kind == "eopp":
        return diff(gf.true_positive_rate)
    return diff(gf.true_positive_rate) + diff(gf.false_positive_rate)


def fit_ramp(Z, y, s, kind, bound):
    groups = np.unique(s)
    g = np.where(np.asarray(s) == groups[0], "A", "B")
    m = gf.RampClassifier("error", ramp_rates(kind, bound), random_state=0, max_iter=8)
    m.fit(Z, np.asarray(y), sensitive_features={"group": g})
    return m


def fit_zafar(Z, y, s, bound):
    """Zafar et al. covariance-constrained SVM: most accurate c on train meeting DP <= bound."""
    from goh_fairness_adult import zafar_svm

    groups = np.unique(s)
    lab = np.where(np.asarray(s) == groups[0], "Male", "Female")  # zafar_svm's group names
    yy = np.asarray(y)
    lam = 1.0 / len(yy)
    _, _, c0 = zafar_svm(Z, yy, lab, lam, None)
    best = None
    for fr in (0.5, 0.2, 0.1, 0.05, 0.02, 0.01, 0.0):
        w, b, _ = zafar_svm(Z, yy, lab, lam, fr * abs(c0))
        p = (Z @ w + b > 0).astype(float)
        D = np.column_stack([1 - p, p])
        acc, v = accuracy(yy, D, np.array([0, 1])), violation("dp", yy, D, s, np.array([0, 1]))
        print(f"    Zafar c = {fr:g} c0: train acc {acc:.4f}, DP {v:.4f}", flush=True)
        cand = (0.0, -acc) if v <= bound else (v, -acc)  # feasible and most accurate, else least violating
        if best is None or cand < best[0]:
            best = (cand, w, b, fr)
    return best[1], best[2], best[3]


def run_problem(name, kind, bound, X, y, s, Xt, yt, st, quick, rows, split):
    classes = np.unique(y)
    binary = len(classes) == 2
    base = make_estimator("logistic_regression", X)
    clone(base).fit(X, y)  # warm-up

    hgb_base = make_estimator("gradient_boosting", X)

    def timed_base(est):
        t0 = time.perf_counter()
        clone(est).fit(X, y)
        return time.perf_counter() - t0

    out = {}

    def record(method, fit, predictors, base_model=base, fit_value=None):
        if ONLY and ONLY not in method:
            return None
        t_base = timed_base(base_model)
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                obj = fit()
            except Exception as e:  # noqa: BLE001 - record what a peer raises
                print(f"  {method}: {type(e).__name__}: {str(e)[:150]}")
                out[method] = {"error": f"{type(e).__name__}: {str(e)[:300]}"}
                return None
        sec = time.perf_counter() - t0
        for label, pred in predictors(obj).items():
            Dt, Dtr = pred(Xt, st), pred(X, s)
            res = {"test_accuracy": accuracy(yt, Dt, classes), "test_violation": violation(kind, yt, Dt, st, classes),
                   "train_accuracy": accuracy(y, Dtr, classes), "train_violation": violation(kind, y, Dtr, s, classes),
                   "fit_seconds": sec, "base_fit_seconds": t_base, "fit_time_ratio": sec / t_base}
            if fit_value is not None:  # the value the method itself measured (out-of-fold when cross-fitted)
                res["train_violation_at_fit"] = fit_value(obj)
            out[label] = res
            print(f"  {label:38s} test acc {res['test_accuracy']:.4f} viol {res['test_violation']:.4f} | "
                  f"train viol {res['train_violation']:.4f} | time x{res['fit_time_ratio']:.1f}", flush=True)
            for metric in ("test_accuracy", "test_violation", "train_violation", "fit_time_ratio"):
                sp, mt = metric.split("_", 1) if metric != "fit_time_ratio" else ("train", metric)
                rows.append({"experiment": name, "dataset": name.split()[0], "method": label, "metric": mt,
                             "split": sp, "value": res[metric], "spread": None, "paper_value": None,
                             "lower_is_better": mt != "accuracy", "seconds": sec, "resplit": split})
        return obj

    lr = lambda: make_estimator("logistic_regression", X)  # noqa: E731
    hgb = lambda: make_estimator("gradient_boosting", X)  # noqa: E731
    models = {}
    at_fit = lambda o: float(o[0].problem_.constraints[0].value(o[0].result_.confusion))  # noqa: E731
    models["aware"] = record("group-aware plug-in (LR)", lambda: fit_goal(X, y, s, kind, bound, lr(), False),
                             lambda o: {"group-aware plug-in (LR, reference)": o[1]}, fit_value=at_fit)
    models["blind"] = record("group-blind plug-in (LR)", lambda: fit_goal(X, y, s, kind, bound, lr(), True),
                             lambda o: {"group-blind plug-in (LR, product)": o[1]}, fit_value=at_fit)
    record("group-blind plug-in (LR, factored)", lambda: fit_goal(X, y, s, kind, bound, lr(), True, "factored"),
           lambda o: {"group-blind plug-in (LR, factored)": o[1]}, fit_value=at_fit)
    record("group-blind plug-in (HGB)", lambda: fit_goal(X, y, s, kind, bound, hgb(), True, cv=3 if quick else 5),
           lambda o: {"group-blind plug-in (HGB, product, cross-fitted)": o[1]}, base_model=hgb_base,
           fit_value=at_fit)

    if binary:
        from fairlearn.reductions import DemographicParity, EqualizedOdds, ExponentiatedGradient, TruePositiveRateParity

        moment = {"dp": DemographicParity, "eodds": EqualizedOdds, "eopp": TruePositiveRateParity}[kind]
        record("fairlearn EG", lambda: ExponentiatedGradient(
            lr(), moment(difference_bound=bound), sample_weight_name="logisticregression__sample_weight",
        ).fit(X, y, sensitive_features=np.asarray(s)),
            lambda o: {"fairlearn ExponentiatedGradient": lambda Xe, se: o._pmf_predict(Xe)})
        record("OxonFair", lambda: fit_oxonfair(X, y, s, kind, bound, lr),
               lambda o: {"OxonFair (inferred groups)": lambda Xe, se: one_hot(o.predict(Xe), classes)})
        pre = lr()[:-1].fit(X)
        Z, Zt = pre.transform(X), pre.transform(Xt)
        import scipy.sparse as sp

        Z, Zt = sp.csr_matrix(Z, dtype=np.float64), sp.csr_matrix(Zt, dtype=np.float64)
        zmap = lambda Xe: Zt if Xe is Xt else Z  # noqa: E731
        record("RampClassifier", lambda: fit_ramp(Z, y, s, kind, bound), lambda o: {
            "RampClassifier (deterministic f>0)": lambda Xe, se: one_hot((o.decision_function(zmap(Xe)) > 0).astype(int), classes),
            "RampClassifier (randomized)": lambda Xe, se: (lambda p: np.column_stack([1 - p, p]))(
                gf.methods.ramp.ramp(o.decision_function(zmap(Xe))))})
        if kind == "dp":
            record("Zafar et al.", lambda: fit_zafar(Z, y, s, bound), lambda o: {
                "Zafar et al. (covariance SVM)": lambda Xe, se: one_hot((zmap(Xe) @ o[0] + o[1] > 0).astype(int), classes)})
    return out, models


def fit_oxonfair(X, y, s, kind, bound, lr):
    from oxonfair import FairPredictor
    from oxonfair import group_metrics as gm

    pred = lr().fit(X, y)
    groups = lr().fit(X, np.asarray(s))
    fp = FairPredictor(pred, {"data": X, "target": np.asarray(y)}, groups=np.asarray(s), inferred_groups=groups)
    metric = {"dp": gm.demographic_parity, "eodds": gm.equalized_odds, "eopp": gm.equal_opportunity}[kind]
    fp.fit(gm.accuracy, metric, bound)
    return fp


def deterministic_table(name, kind, bound, models, Xt, yt, st, X, y, s, rows, split):
    out = {}
    for key, label in (("aware", "group-aware LR"), ("blind", "group-blind LR")):
        if models.get(key) is None:
            continue
        m, pred = models[key]
        classes = m.classes_
        variants = {"randomized": (pred, None)}
        for strat in ("hash", "best_rule"):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                t0 = time.perf_counter()
                d = m.to_deterministic(strat)
                sec = time.perf_counter() - t0
            sf = (lambda se: None) if key == "blind" else (lambda se: {"g": np.asarray(se)})
            variants[strat] = ((lambda Xe, se, d=d, sf=sf: d.predict_proba(Xe, sensitive_features=sf(se))),
                               {"seconds": sec, "warned": bool(caught), "train_max_violation": d.train_max_violation_})
        for strat, (pred_fn, extra) in variants.items():
            Dt, Dtr = pred_fn(Xt, st), pred_fn(X, s)
            res = {"test_accuracy": accuracy(yt, Dt, classes), "test_violation": violation(kind, yt, Dt, st, classes),
                   "train_violation": violation(kind, y, Dtr, s, classes), **(extra or {})}
            out[f"{label} / {strat}"] = res
            print(f"  {label:15s} {strat:10s} test acc {res['test_accuracy']:.4f} viol {res['test_violation']:.4f} "
                  f"| train viol {res['train_violation']:.4f}", flush=True)
            for metric in ("test_accuracy", "test_violation", "train_violation"):
                sp_, mt = metric.split("_", 1)
                rows.append({"experiment": f"{name} deterministic", "dataset": "adult", "method": f"{label} / {strat}",
                             "metric": mt, "split": sp_, "value": res[metric], "spread": None, "paper_value": None,
                             "lower_is_better": mt != "accuracy", "seconds": (extra or {}).get("seconds"),
                             "resplit": split})
    return out


def summarize(results):
    """Mean and 95% half-width over re-splits per (problem, method, metric)."""
    table = {}
    for per_split in results:
        for prob, methods in per_split["methods"].items():
            for meth, res in methods.items():
                if "error" in res:
                    table.setdefault(prob, {}).setdefault(meth, {"error": res["error"]})
                    continue
                d = table.setdefault(prob, {}).setdefault(meth, {})
                for k, v in res.items():
                    if isinstance(v, float):
                        d.setdefault(k, []).append(v)
    out = {}
    for prob, methods in table.items():
        for meth, d in methods.items():
            out.setdefault(prob, {})[meth] = d if "error" in d else {
                k: {"mean": float(np.mean(v)), "half_width": half_width(v), "values": v} for k, v in d.items()}
    return out


def plot(summary, path):
    import matplotlib.pyplot as plt

    probs = list(summary)
    fig, axes = plt.subplots(1, len(probs), figsize=(5 * len(probs), 4.2))
    for ax, prob in zip(np.atleast_1d(axes), probs):
        for i, (meth, d) in enumerate(summary[prob].items()):
            if "error" in d:
                continue
            ax.errorbar(d["test_violation"]["mean"], d["test_accuracy"]["mean"],
                        xerr=d["test_violation"]["half_width"], yerr=d["test_accuracy"]["half_width"],
                        fmt="o^sDv<>"[i % 7], color=f"C{i % 10}", label=meth, ms=6)
        bound = float(prob.split("<=")[1]) if "<=" in prob else None
        if bound:
            ax.axvline(bound, color="grey", ls="--", lw=1)
        ax.set_title(prob, fontsize=9)
        ax.set_xlabel("test violation (true groups)")
        ax.set_ylabel("test accuracy")
    handles, labels = np.atleast_1d(axes)[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=7)
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="8,000 training rows per problem, one split, cv=3")
    ap.add_argument("--splits", type=int, default=1, help="number of (re-)splits (seeds 0..N-1)")
    ap.add_argument("--only", help="re-run only the methods whose name contains this string (e.g. 'Zafar') "
                                   "on the splits of the existing JSON, and merge them into it")
    args = ap.parse_args()
    if args.only:
        return rerun_only(args)
    t_start = time.perf_counter()
    rows, per_split = [], []
    for split in range(1 if args.quick else args.splits):
        print(f"=== split {split}", flush=True)
        methods, det = {}, {}
        for (name, kind, bound, X, y, s, Xt, yt, st) in problems(split, args.quick):
            print(f"--- {name} (train {len(y)}, test {len(yt)})", flush=True)
            out, models = run_problem(name, kind, bound, X, y, s, Xt, yt, st, args.quick, rows, split)
            methods[name] = out
            if name.startswith("Adult"):
                print(f"  deterministic classifiers ({name}):", flush=True)
                det[name] = deterministic_table(name, kind, bound, models, Xt, yt, st, X, y, s, rows, split)
        per_split.append({"split": split, "methods": methods, "deterministic": det})
        write(args, per_split, rows, t_start)


def rerun_only(args):
    """Re-run the methods matching ``--only`` on every split of the existing JSON and merge."""
    global ONLY
    ONLY = args.only
    path = RESULTS / (f"{NAME}_quick.json" if args.quick else f"{NAME}.json")
    old = json.loads(path.read_text())
    t_start = time.perf_counter() - old["seconds"]
    per_split, rows = old["per_split"], old["rows"]
    for rec in per_split:
        split = rec["split"]
        for (name, kind, bound, X, y, s, Xt, yt, st) in problems(split, args.quick):
            new_rows = []
            out, _ = run_problem(name, kind, bound, X, y, s, Xt, yt, st, args.quick, new_rows, split)
            if not out:
                continue
            rec["methods"][name].update(out)
            rows = [r for r in rows if not (r["experiment"] == name and r["resplit"] == split
                                            and r["method"] in out)] + new_rows
    write(args, per_split, rows, t_start)


def write(args, per_split, rows, t_start):
    """Summaries over the splits done so far, the plot and the JSON (rewritten after every split)."""
    n_splits = len(per_split)
    summary = summarize(per_split)
    det_summary = summarize([{"methods": p["deterministic"]} for p in per_split])
    RESULTS.mkdir(exist_ok=True)
    plot(summary, RESULTS / (f"{NAME}_quick.png" if args.quick else f"{NAME}.png"))
    record = {"benchmark": NAME, "date": datetime.now(timezone.utc).isoformat(), "quick": args.quick,
              "n_splits": n_splits, "seconds": time.perf_counter() - t_start,
              "machine": machine_record(), "versions": versions("fairlearn", "cvxpy"),
              "seeds": {"splits": list(range(n_splits)), "goalfit_random_state": 0},
              "targets": TARGETS, "summary": summary, "deterministic": det_summary,
              "per_split": per_split, "rows": rows}
    path = RESULTS / (f"{NAME}_quick.json" if args.quick else f"{NAME}.json")
    path.write_text(json.dumps(record, indent=1, default=float))
    print(f"wrote {path} after {n_splits} split(s) ({record['seconds']:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
