#!/usr/bin/env python
"""Group-blind classifiers that meet fairness goals, and deterministic classifiers that keep them.

Problems (the sensitive feature is dropped from ``X``; group-blind methods never see it at
predict time; every violation is measured with the true groups):

* Adult (official split, 32,561 / 16,281 rows), sex: minimize error s.t. demographic parity
  difference <= 0.01, and s.t. equalized odds difference <= 0.01;
* law_school, 3 classes (ZFYA tertiles, cut points from the training part; ``race`` dropped),
  race_binary: demographic parity difference <= 0.02 (max over classes of the between-group gap);
* credit default (UCI, ``SEX`` dropped), sex: equal opportunity difference <= 0.02.

law_school and credit default have no official split: ``--splits`` (default 10) stratified
2/3 - 1/3 splits (seeds 0, 1, ...); Adult uses its official split (re-split with seeds 1, ...).

Every accuracy and violation is goalfit's own goal evaluation
(:func:`goalfit.metrics.evaluate_problem` of ``Problem("error", [goal <= bound])`` on the
per-example class distributions, with the true groups).

Methods: the group-blind plug-in (``GoalClassifier(group_blind=True)``; logistic regression
with the joint model as one multiclass model on (group, class) ("product") and as
P(Y|x) P(A|x,Y) ("factored"); HistGradientBoosting, product, cross-fitted with cv=5; on
equalized odds also LR with ``margin=0.01``, ``cv=5`` and ``confidence=0.9``),
``RampClassifier`` (Goh et al., on the one-hot / standardized features, deterministic
``f > 0`` and randomized ``sigma(f)``; first ``--slow-splits`` splits only, or ``--reuse``d
from an earlier JSON), Zafar et al.'s covariance-constrained SVM
(``goh_fairness_adult.zafar_svm``; DP only, ``c`` chosen on the training data as the most
accurate value meeting the goal there; as RampClassifier for the splits), fairlearn
ExponentiatedGradient (group-blind at predict time), OxonFair with inferred groups (a second
logistic regression predicts the group) -- both also tried on the 3-class problem, where they
raise (recorded) -- and the group-aware plug-in as the reference. Columns: test accuracy,
test violation, train violation (expected over the randomization where there is one; of the
deployed model on the training rows, so in-sample for the cross-fitted HGB), fit time ratio to
one fit of the base model (logistic regression; HistGradientBoosting for the HGB row) measured
just before in the same process.

``--part tradeoff``: the group-blind LR and EG at several bounds on the same splits, and
goalfit's accuracy interpolated at EG's test violation (``group_blind_tradeoff.png``).
``--part lightgbm``: Adult, equal opportunity difference <= 0.01, on a 200-tree LightGBM base
(one thread): goalfit's group-blind defaults against the factored joint model at 3 and 5 folds and
the product joint model at 2 and 5 folds, FairGBM (TPR parity, tolerance 0.01, 200
trees; its scikit-learn wrapper needs a two-line shim for scikit-learn >= 1.8, applied here only)
and LightGBM alone (its argmax predictions); fit time in CPU seconds over one LightGBM fit measured just before.
``--part folds``: the factored joint model with 2 and 5 folds on 3,000- and 8,000-row subsamples
of Adult's training split (same goal and base model), paired per split.
``--part deterministic`` (Adult DP and EOdds, group-aware and group-blind LR): the randomized
classifier vs ``to_deterministic("hash" | "best_rule" | "max_weight")``, with the hashing-noise
standard deviation on test. ``--table`` prints the README tables.

Usage::

    GOALFIT_DATA=/path/to/data python benchmarks/group_blind.py [--quick] [--splits N] [--part PART]

Writes one results file, ``benchmarks/results/group_blind.json``: the main part at its top level,
the others under ``parts`` (``tradeoff``, ``deterministic``, ``lightgbm``); a part's run replaces
its own entry and keeps the others. Plots: ``group_blind.png`` (main), ``group_blind_tradeoff.png``.
"""
from __future__ import annotations

import argparse
import json
import os
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
from goalfit.estimators import make_estimator
from goalfit.estimators.joint import FactoredJointClassifier
from goalfit.datasets import load_dataset
from goalfit.metrics import evaluate_problem

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
def goal_problem(kind, bound):
    """The problem as goalfit states it: minimize error s.t. the fairness goal on column ``g``."""
    return gf.Problem("error", [constraint(kind, bound, "g")])


def measure(problem, y, D, s, classes):
    """(accuracy, goal value) of a (randomized) classifier by goalfit's own goal evaluation.

    ``D[l, k] = P(h(x_l) = classes[k])`` (one-hot for deterministic classifiers): the values
    are exact expectations over the randomization, with the **true** groups ``s``
    (:func:`goalfit.metrics.evaluate_problem`; for multiclass demographic parity the goal is the
    max over classes of the between-group gap, for binary problems ``classes[1]`` is positive).
    """
    ev = evaluate_problem(problem, np.asarray(y), np.asarray(D, float), sensitive_features={"g": np.asarray(s)},
                          classes=np.asarray(classes))
    return float(ev["accuracy"]), float(ev["constraints"][0]["value"])


def constraint(kind, bound, col):
    return {"dp": gf.demographic_parity_difference, "eodds": gf.equalized_odds_difference,
            "eopp": gf.equal_opportunity_difference}[kind](col) <= bound


def one_hot(pred, classes):
    return (np.asarray(pred)[:, None] == np.asarray(classes)[None, :]).astype(float)


def hash_noise_sd(kind, y, D, s, classes):
    """Standard deviation of (deterministic - randomized) goal value from per-example coins.

    A deterministic classifier that reproduces a binary randomized one's expected rates (hash
    derandomization) predicts 1 on ``x`` with "probability" ``p(x) = D[x, 1]`` over the hash:
    on a sample, each rate of group ``a`` within a condition (all rows, ``y = 1``, ``y = 0``)
    moves by a sum of independent terms of variance ``p (1 - p) / n_{a,cond}^2``. Returned: the
    largest over the conditions of the goal of ``sqrt(var_a + var_b)`` (the standard deviation
    of the change of that between-group gap). It is a floor for any deterministic rule whose
    predictions agree with the randomized classifier in expectation on every ``x``: for a 0/1
    prediction ``h`` with mean ``p``, ``E(h - p)^2 = p (1 - p)``.
    """
    y, s, D = np.asarray(y), np.asarray(s), np.asarray(D, float)
    p = D[:, 1]  # binary: classes[1] is the positive class
    conds = {"dp": [np.ones(len(y), bool)], "eopp": [y == classes[1]],
             "eodds": [y == classes[1], y == classes[0]]}[kind]
    out = 0.0
    for cond in conds:
        var = sum((p[m] * (1 - p[m])).sum() / m.sum() ** 2 for m in (cond & (s == g) for g in np.unique(s)))
        out = max(out, float(np.sqrt(var)))
    return out


# ============================================================================ methods
SLOW = ("RampClassifier", "Zafar")  # run on the first --slow-splits splits only (or reused with --reuse)


def fit_goal(X, y, s, kind, bound, est, group_blind, joint="product", cv="auto", **kw):
    m = gf.GoalClassifier(est, constraints=[constraint(kind, bound, "g")], group_blind=group_blind,
                          method_params={"joint_model": joint}, cv=cv, random_state=0, **kw)
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
    problem = goal_problem("dp", bound)
    _, _, c0 = zafar_svm(Z, yy, lab, lam, None)
    best = None
    for fr in (0.5, 0.2, 0.1, 0.05, 0.02, 0.01, 0.0):
        w, b, _ = zafar_svm(Z, yy, lab, lam, fr * abs(c0))
        p = (Z @ w + b > 0).astype(float)
        acc, v = measure(problem, yy, np.column_stack([1 - p, p]), s, np.array([0, 1]))
        print(f"    Zafar c = {fr:g} c0: train acc {acc:.4f}, DP {v:.4f}", flush=True)
        cand = (0.0, -acc) if v <= bound else (v, -acc)  # feasible and most accurate, else least violating
        if best is None or cand < best[0]:
            best = (cand, w, b, fr)
    return best[1], best[2], best[3]


def fit_eg(X, y, s, kind, bound, lr):
    from fairlearn.reductions import DemographicParity, EqualizedOdds, ExponentiatedGradient, TruePositiveRateParity

    moment = {"dp": DemographicParity, "eodds": EqualizedOdds, "eopp": TruePositiveRateParity}[kind]
    return ExponentiatedGradient(lr(), moment(difference_bound=bound),
                                 sample_weight_name="logisticregression__sample_weight").fit(
        X, y, sensitive_features=np.asarray(s))


def fit_oxonfair(X, y, s, kind, bound, lr):
    from oxonfair import FairPredictor
    from oxonfair import group_metrics as gm

    pred = lr().fit(X, y)
    groups = lr().fit(X, np.asarray(s))
    fp = FairPredictor(pred, {"data": X, "target": np.asarray(y)}, groups=np.asarray(s), inferred_groups=groups)
    metric = {"dp": gm.demographic_parity, "eodds": gm.equalized_odds, "eopp": gm.equal_opportunity}[kind]
    fp.fit(gm.accuracy, metric, bound)
    return fp


def eg_predictor(o):
    return lambda Xe, se: o._pmf_predict(Xe)  # exact expectation of EG's randomized predictions


def run_problem(name, kind, bound, X, y, s, Xt, yt, st, quick, rows, split, slow=True, reuse=None):
    """Every method on one problem and split; ``slow``: also RampClassifier and Zafar et al.
    (``reuse``: their per-split results from an earlier run, used instead of re-running)."""
    classes = np.unique(y)
    binary = len(classes) == 2
    problem = goal_problem(kind, bound)
    base = make_estimator("logistic_regression", random_state=0)
    clone(base).fit(X, y)  # warm-up
    hgb_base = make_estimator("gradient_boosting", random_state=0)

    def timed_base(est):
        t0 = time.perf_counter()
        clone(est).fit(X, y)
        return time.perf_counter() - t0

    out = {}

    def add_rows(label, res, sec):
        for metric in ("test_accuracy", "test_violation", "train_violation", "fit_time_ratio"):
            sp, mt = metric.split("_", 1) if metric != "fit_time_ratio" else ("train", metric)
            rows.append({"experiment": name, "dataset": name.split()[0], "method": label, "metric": mt,
                         "split": sp, "value": res[metric], "spread": None, "paper_value": None,
                         "lower_is_better": mt != "accuracy", "seconds": sec, "resplit": split})

    def record(method, fit, predictors, base_model=base, fit_value=None):
        if ONLY and ONLY not in method:
            return None
        if any(k in method for k in SLOW):
            if reuse is not None:
                for label, res in reuse.items():
                    if method.split(" ")[0] in label:
                        out[label] = dict(res, reused=True)
                        if "error" not in res:
                            add_rows(label, res, res.get("fit_seconds"))
                        print(f"  {label:38s} reused from the earlier run", flush=True)
                return None
            if not slow:
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
            (acc_t, v_t), (acc_tr, v_tr) = measure(problem, yt, Dt, st, classes), measure(problem, y, Dtr, s, classes)
            res = {"test_accuracy": acc_t, "test_violation": v_t, "train_accuracy": acc_tr, "train_violation": v_tr,
                   "fit_seconds": sec, "base_fit_seconds": t_base, "fit_time_ratio": sec / t_base}
            if fit_value is not None:  # the value the method itself measured (out-of-fold when cross-fitted)
                res["train_violation_at_fit"] = fit_value(obj)
            if isinstance(obj, tuple) and isinstance(obj[0], gf.GoalClassifier) and obj[0].certified_ is not None:
                res["certified"] = float(obj[0].certified_)  # confidence=: passed the safety test
            out[label] = res
            print(f"  {label:38s} test acc {res['test_accuracy']:.4f} viol {res['test_violation']:.4f} | "
                  f"train viol {res['train_violation']:.4f} | time x{res['fit_time_ratio']:.1f}", flush=True)
            add_rows(label, res, sec)
        return obj

    lr = lambda: make_estimator("logistic_regression", random_state=0)  # noqa: E731
    hgb = lambda: make_estimator("gradient_boosting", random_state=0)  # noqa: E731
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
    if kind == "eodds":  # issue 12's tools against the test noise of a 0.01 equalized-odds bound
        for label, kw in (("margin=0.01", {"margin": 0.01}), ("cv=5", {"cv": 5}),
                          ("confidence=0.9", {"confidence": 0.9})):
            full = f"group-blind plug-in (LR, product, {label})"
            record(full, lambda kw=kw: fit_goal(X, y, s, kind, bound, lr(), True, **kw),
                   lambda o, full=full: {full: o[1]}, fit_value=at_fit)

    # peers; fairlearn and OxonFair raise on more than two classes (their error is recorded)
    record("fairlearn EG", lambda: fit_eg(X, y, s, kind, bound, lr),
           lambda o: {"fairlearn ExponentiatedGradient": eg_predictor(o)})
    record("OxonFair", lambda: fit_oxonfair(X, y, s, kind, bound, lr),
           lambda o: {"OxonFair (inferred groups)": lambda Xe, se: one_hot(o.predict(Xe), classes)})
    if binary:
        pre = lr()[:-1].fit(X)
        import scipy.sparse as sp

        Z, Zt = sp.csr_matrix(pre.transform(X), dtype=np.float64), sp.csr_matrix(pre.transform(Xt), dtype=np.float64)
        zmap = lambda Xe: Zt if Xe is Xt else Z  # noqa: E731
        record("RampClassifier", lambda: fit_ramp(Z, y, s, kind, bound), lambda o: {
            "RampClassifier (deterministic f>0)": lambda Xe, se: one_hot((o.randomized_classifier_.decision_function(zmap(Xe)) > 0).astype(int), classes),
            "RampClassifier (predict: fitted threshold)": lambda Xe, se: one_hot(
                (o.randomized_classifier_.decision_function(zmap(Xe)) > o.threshold_).astype(int), classes),
            "RampClassifier (randomized)": lambda Xe, se: (lambda p: np.column_stack([1 - p, p]))(
                gf.methods.ramp.ramp(o.randomized_classifier_.decision_function(zmap(Xe))))})
        if kind == "dp":
            record("Zafar et al.", lambda: fit_zafar(Z, y, s, bound), lambda o: {
                "Zafar et al. (covariance SVM)": lambda Xe, se: one_hot((zmap(Xe) @ o[0] + o[1] > 0).astype(int), classes)})
    return out, models


def deterministic_table(name, kind, bound, models, Xt, yt, st, X, y, s, rows, split):
    """Randomized classifier vs ``to_deterministic`` strategies (group-aware and group-blind LR)."""
    out = {}
    problem = goal_problem(kind, bound)
    for key, label in (("aware", "group-aware LR"), ("blind", "group-blind LR")):
        if models.get(key) is None:
            continue
        m, pred = models[key]
        classes = m.classes_
        variants = {"randomized": (pred, None)}
        for strat in ("hash", "best_rule", "max_weight"):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                t0 = time.perf_counter()
                d = m.to_deterministic(strat)
                sec = time.perf_counter() - t0
            sf = (lambda se: None) if key == "blind" else (lambda se: {"g": np.asarray(se)})
            variants[strat] = ((lambda Xe, se, d=d, sf=sf: d.predict_proba(Xe, sensitive_features=sf(se))),
                               {"seconds": sec, "warned": float(any(issubclass(w.category, RuntimeWarning)
                                                                    for w in caught)),
                                "train_max_violation": d.train_max_violation_})
        ref = None
        for strat, (pred_fn, extra) in variants.items():
            Dt, Dtr = pred_fn(Xt, st), pred_fn(X, s)
            (acc_t, v_t), (_, v_tr) = measure(problem, yt, Dt, st, classes), measure(problem, y, Dtr, s, classes)
            res = {"test_accuracy": acc_t, "test_violation": v_t, "train_violation": v_tr, **(extra or {})}
            if ref is None:  # the randomized classifier: the hashing-noise floor on test and train
                ref = res
                res["hash_noise_sd_test"] = hash_noise_sd(kind, yt, Dt, st, classes)
                res["hash_noise_sd_train"] = hash_noise_sd(kind, y, Dtr, s, classes)
            else:
                res["d_test_accuracy"] = acc_t - ref["test_accuracy"]
                res["d_test_violation"] = v_t - ref["test_violation"]
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


# ============================================================================ LightGBM part
#: goalfit's group-blind fits on a LightGBM base, by (joint_model, cv); None: the default
LGBM_OPTIONS = {
    "goalfit group-blind (defaults: factored joint, 2 folds from 20,000 rows)": {},
    "goalfit group-blind, factored joint, cv=3": {"joint_model": "factored", "cv": 3},
    "goalfit group-blind, factored joint, cv=5": {"joint_model": "factored", "cv": 5},
    "goalfit group-blind, product joint, cv=2": {"joint_model": "product", "cv": 2},
    "goalfit group-blind, product joint, cv=5": {"joint_model": "product", "cv": 5},
}


def lgbm(n_estimators=200):
    from lightgbm import LGBMClassifier

    return LGBMClassifier(n_estimators=n_estimators, n_jobs=1, verbose=-1, random_state=0)


def fairgbm_shim():
    """FairGBM 0.9.14 calls scikit-learn's ``check_X_y(force_all_finite=...)``, renamed
    ``ensure_all_finite`` in scikit-learn 1.8: map the keyword (in this benchmark only)."""
    import fairgbm.sklearn as fs
    from sklearn.utils import check_array, check_X_y

    fs._LGBMCheckXY = lambda *a, force_all_finite=True, **k: check_X_y(*a, ensure_all_finite=force_all_finite, **k)
    fs._LGBMCheckArray = lambda *a, force_all_finite=True, **k: check_array(*a, ensure_all_finite=force_all_finite, **k)


def as_categories(X, ref=None):
    """Non-numeric columns as pandas categories (LightGBM's categorical input), with the
    categories of ``ref`` (the training frame) when given."""
    X = X.copy()
    for c in X.columns:
        if not pd.api.types.is_numeric_dtype(X[c]):
            values = X[c].astype(str)
            if ref is None:
                X[c] = pd.Categorical(values)
            else:  # a category the training frame never had: missing (NaN), as LightGBM reads it
                cats = ref[c].cat.categories
                X[c] = pd.Categorical(values.where(values.isin(cats)), categories=cats)
    return X


def run_lightgbm(args):
    """Adult (sex dropped), equal opportunity difference <= 0.01: goalfit's group-blind plug-in
    on a LightGBM base (200 trees, one thread) by joint model and folds, beside FairGBM (same
    trees; the group only in training) and LightGBM alone; fit time (CPU seconds) over one
    LightGBM fit of the same rows measured just before (the ``lightgbm`` part of ``group_blind.json``)."""
    bound = 0.01
    problem = goal_problem("eopp", bound)
    t_start = time.perf_counter()
    per_split, rows = [], []
    for split in range(1 if args.quick else args.splits):
        name, kind, _, X, y, s, Xt, yt, st = next(iter(problems(split, args.quick)))
        X = as_categories(X)
        Xt = as_categories(Xt, X)
        y, yt = np.asarray(y), np.asarray(yt)
        classes = np.unique(y)
        print(f"=== split {split}: Adult EOpp<={bound} (train {len(y)}, test {len(yt)}), load {os.getloadavg()[0]:.1f}",
              flush=True)
        lgbm().fit(X, y)  # warm-up
        out = {}

        def record(label, fit, predict, at_fit=None):
            # CPU seconds of this process (every fit runs on one thread): on a shared machine the
            # wall clock also counts other processes' turns
            t0 = time.process_time()
            lgbm().fit(X, y)
            t_base = time.process_time() - t0
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t0, w0 = time.process_time(), time.perf_counter()
                obj = fit()
                sec, wall = time.process_time() - t0, time.perf_counter() - w0
            (acc_t, v_t), (_, v_tr) = (measure(problem, yt, predict(obj, Xt), st, classes),
                                       measure(problem, y, predict(obj, X), s, classes))
            res = {"test_accuracy": acc_t, "test_violation": v_t, "train_violation": v_tr, "fit_seconds": sec,
                   "base_fit_seconds": t_base, "fit_time_ratio": sec / t_base, "wall_seconds": wall,
                   "load": os.getloadavg()[0]}
            if at_fit is not None:
                res.update(at_fit(obj))
            out[label] = res
            print(f"  {label:62s} test acc {acc_t:.4f} viol {v_t:.4f} | train viol {v_tr:.4f} | "
                  f"{sec:6.2f} s = x{sec / t_base:.1f} base ({t_base:.2f} s)", flush=True)
            for metric in ("test_accuracy", "test_violation", "train_violation", "fit_time_ratio"):
                sp, mt = metric.split("_", 1) if metric != "fit_time_ratio" else ("train", metric)
                rows.append({"experiment": "Adult EOpp<=0.01 (LightGBM)", "dataset": "adult", "method": label,
                             "metric": mt, "split": sp, "value": res[metric], "spread": None, "paper_value": None,
                             "lower_is_better": mt != "accuracy", "seconds": sec, "resplit": split})

        record("LightGBM alone (200 trees)", lambda: lgbm().fit(X, y), lambda o, Xe: one_hot(o.predict(Xe), classes))
        for label, kw in LGBM_OPTIONS.items():
            kw = dict(kw)
            mp = {"joint_model": kw.pop("joint_model")} if "joint_model" in kw else None
            record(label, lambda kw=kw, mp=mp: gf.GoalClassifier(
                       lgbm(), constraints=[constraint("eopp", bound, "g")], group_blind=True, method_params=mp,
                       random_state=0, **kw).fit(X, y, sensitive_features={"g": np.asarray(s)}),
                   lambda o, Xe: o.predict_proba(Xe),
                   lambda o: {"folds": None if o.cv_ is None else o.cv_.get_n_splits(),
                              "factored": float(isinstance((o.estimators_ or [o.estimator_])[0], FactoredJointClassifier)),
                              "train_violation_at_fit": float(o.problem_.constraints[0].value(o.result_.confusion)),
                              "base_part_seconds": o.base_fit_seconds_})

        def fairgbm_fit():
            fairgbm_shim()
            from fairgbm import FairGBMClassifier

            return FairGBMClassifier(constraint_type="FNR", constraint_fnr_tolerance=bound, n_estimators=200,
                                     n_jobs=1, random_state=0).fit(X, y, constraint_group=(np.asarray(s) == "Female").astype(int))

        record("FairGBM (TPR parity, tolerance 0.01, 200 trees)", fairgbm_fit,
               lambda o, Xe: one_hot(o.predict(Xe), classes))
        per_split.append({"split": split, "methods": {"Adult EOpp<=0.01": out}})
        summary = summarize(per_split)
        record_ = {"benchmark": NAME, "part": "lightgbm", "date": datetime.now(timezone.utc).isoformat(),
                   "quick": args.quick, "n_splits": len(per_split), "seconds": time.perf_counter() - t_start,
                   "machine": machine_record(), "versions": versions("lightgbm", "fairgbm"),
                   "seeds": {"splits": list(range(len(per_split))), "goalfit_random_state": 0, "lightgbm": 0},
                   "load_average": os.getloadavg(), "options": {k: dict(v) for k, v in LGBM_OPTIONS.items()},
                   "summary": summary, "per_split": per_split, "rows": rows}
        path = save_part(args, "lightgbm", record_)
        print(f"wrote {path} (lightgbm part) after {len(per_split)} split(s) ({record_['seconds']:.0f} s)", flush=True)


def lightgbm_table(record):
    """The README table of ``--part lightgbm``: mean ± half-width over the splits, the paired
    difference to goalfit's defaults on the same split (mean ± half-width), time: median ratio."""
    summary = record["summary"].get("Adult EOpp<=0.01", {})
    per = [s["methods"]["Adult EOpp<=0.01"] for s in record["per_split"]]
    ref = next(iter(LGBM_OPTIONS))
    out = ["| method | test accuracy | test TPR gap | train TPR gap | accuracy - defaults | TPR gap - defaults "
           "| fit time / one LightGBM fit (median) |", "|---|---|---|---|---|---|---|"]

    for meth, d in summary.items():
        diffs = ["-" if meth == ref else _paired(per, meth, ref, key) for key in ("test_accuracy", "test_violation")]
        out.append(f"| {meth} | {_pm(d, 'test_accuracy')} | {_pm(d, 'test_violation')} | "
                   f"{_pm(d, 'train_violation')} | {diffs[0]} | {diffs[1]} | "
                   f"{np.median(d['fit_time_ratio']['values']):.1f} |")
    return "\n".join(out)


def _paired(per, meth, ref, key):
    """``meth - ref`` in ``key`` over the splits that ran both (``per``: one dict of method ->
    results per split), as "mean ± half-width" ("-" with fewer than two splits)."""
    d = [p[meth][key] - p[ref][key] for p in per if meth in p and ref in p]
    return "-" if len(d) < 2 else f"{np.mean(d):+.4f} ± {half_width(d):.4f}"


#: ``--part folds``: training rows of the Adult subsamples
FOLD_ROWS = (3_000, 8_000)


def run_folds(args):
    """Adult (sex dropped), equal opportunity difference <= 0.01, LightGBM base: the factored joint
    model cross-fitted with 2 and with 5 folds on random subsamples of the training split
    (:data:`FOLD_ROWS` rows; the whole test split), paired on each split: what 2 folds cost as the
    data shrink (the ``folds`` part of ``group_blind.json``; the full split is ``--part lightgbm``)."""
    bound = 0.01
    problem = goal_problem("eopp", bound)
    t_start = time.perf_counter()
    per_split = []
    for split in range(1 if args.quick else args.splits):
        _, _, _, X_all, y_all, s_all, Xt, yt, st = next(iter(problems(split, False)))
        yt = np.asarray(yt)
        methods = {}
        for n_rows in FOLD_ROWS:
            idx = np.sort(np.random.RandomState(100 + split).choice(len(y_all), n_rows, replace=False))
            X = as_categories(X_all.iloc[idx].reset_index(drop=True))
            y, s = np.asarray(y_all)[idx], np.asarray(s_all)[idx]
            classes = np.unique(y)
            out = {}
            for cv in (2, 5):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    m = gf.GoalClassifier(lgbm(), constraints=[constraint("eopp", bound, "g")], group_blind=True,
                                          method_params={"joint_model": "factored"}, cv=cv, random_state=0).fit(
                        X, y, sensitive_features={"g": s})
                acc, v = measure(problem, yt, m.predict_proba(as_categories(Xt, X)), st, classes)
                out[f"factored joint, cv={cv}"] = {"test_accuracy": acc, "test_violation": v}
                print(f"  split {split}, {n_rows} rows, cv={cv}: test acc {acc:.4f} viol {v:.4f}", flush=True)
            methods[f"Adult EOpp<=0.01, {n_rows} training rows"] = out
        per_split.append({"split": split, "methods": methods})
        record_ = {"benchmark": NAME, "part": "folds", "date": datetime.now(timezone.utc).isoformat(),
                   "quick": args.quick, "n_splits": len(per_split), "seconds": time.perf_counter() - t_start,
                   "machine": machine_record(), "versions": versions("lightgbm"),
                   "seeds": {"splits": list(range(len(per_split))), "subsample": "RandomState(100 + split)",
                             "goalfit_random_state": 0, "lightgbm": 0},
                   "rows": list(FOLD_ROWS), "summary": summarize(per_split), "per_split": per_split}
        path = save_part(args, "folds", record_)
    print(f"wrote {path} (folds part)", flush=True)


def folds_table(record):
    """The README lines of ``--part folds``: 2 folds minus 5 folds, paired (mean ± half-width)."""
    out = ["| training rows | test accuracy, 2 / 5 folds | accuracy, 2 - 5 folds | test violation, 2 / 5 folds "
           "| violation, 2 - 5 folds |", "|---|---|---|---|---|"]
    two, five = "factored joint, cv=2", "factored joint, cv=5"
    for prob, d in record["summary"].items():
        per = [p["methods"][prob] for p in record["per_split"]]
        cells = []
        for key in ("test_accuracy", "test_violation"):
            cells += [f"{d[two][key]['mean']:.4f} / {d[five][key]['mean']:.4f}", _paired(per, two, five, key)]
        out.append(f"| {prob.split(', ')[-1].split()[0]} | " + " | ".join(cells) + " |")
    return "\n".join(out)


# ============================================================================ trade-off sweep
SWEEP = {"group-blind plug-in (LR, product)": (0, 0.25, 0.5, 1, 1.5, 2, 3, 4),
         "fairlearn ExponentiatedGradient": (0.5, 1, 2)}


def tradeoff(name, kind, bound, X, y, s, Xt, yt, st, split):
    """Test accuracy and violation of the group-blind LR and fairlearn EG at several bounds."""
    classes = np.unique(y)
    lr = lambda: make_estimator("logistic_regression", random_state=0)  # noqa: E731
    out = {}
    for method, factors in SWEEP.items():
        for f in factors:
            b = bound * f
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if method.startswith("group-blind"):
                    pred = fit_goal(X, y, s, kind, b, lr(), True)[1]
                else:
                    pred = eg_predictor(fit_eg(X, y, s, kind, b, lr))
            acc, v = measure(goal_problem(kind, bound), yt, pred(Xt, st), st, classes)
            out.setdefault(method, []).append({"bound": b, "test_accuracy": acc, "test_violation": v,
                                               "seconds": time.perf_counter() - t0})
            print(f"  {method:36s} bound {b:.4f}: test acc {acc:.4f} viol {v:.4f}", flush=True)
    return out


def at_matched_violation(curve, v):
    """Accuracy of a method's sweep at test violation ``v``: interpolated between its points
    (sorted by violation); above the largest violation it reached, the accuracy of that point
    (the method at a smaller violation, flagged ``capped``); None below its smallest."""
    pts = sorted((p["test_violation"], p["test_accuracy"]) for p in curve)
    xs, ys = np.array([p[0] for p in pts]), np.array([p[1] for p in pts])
    if v < xs[0]:
        return None, False
    return float(np.interp(v, xs, ys)), bool(v > xs[-1])


def matched_summary(per_split):
    """Per problem and EG bound: goalfit's accuracy at EG's test violation minus EG's (paired by split)."""
    out = {}
    for rec in per_split:
        for prob, curves in rec["tradeoff"].items():
            eg, gb = curves["fairlearn ExponentiatedGradient"], curves["group-blind plug-in (LR, product)"]
            for p in eg:
                a, capped = at_matched_violation(gb, p["test_violation"])
                d = out.setdefault(prob, {}).setdefault(f"{p['bound']:.4g}", {"diff": [], "eg_acc": [],
                                                                               "eg_viol": [], "outside": 0,
                                                                               "capped": 0})
                d["capped"] += capped
                d["eg_acc"].append(p["test_accuracy"])
                d["eg_viol"].append(p["test_violation"])
                if a is None:
                    d["outside"] += 1
                else:
                    d["diff"].append(a - p["test_accuracy"])
    for prob in out:
        for b, d in out[prob].items():
            for k in ("diff", "eg_acc", "eg_viol"):
                v = d[k]
                d[k] = {"mean": float(np.mean(v)) if v else None, "half_width": half_width(v), "n": len(v),
                        "values": v}
    return out


def mean_curves(per_split):
    """Per problem and method: mean test accuracy and violation at each bound over the splits."""
    acc = {}
    for rec in per_split:
        for prob, curves in rec["tradeoff"].items():
            for meth, pts in curves.items():
                for p in pts:
                    acc.setdefault(prob, {}).setdefault(meth, {}).setdefault(p["bound"], []).append(
                        (p["test_accuracy"], p["test_violation"]))
    return {prob: {meth: [{"bound": b, "test_accuracy": float(np.mean([a for a, _ in v])),
                           "test_accuracy_hw": half_width([a for a, _ in v]),
                           "test_violation": float(np.mean([x for _, x in v])),
                           "test_violation_hw": half_width([x for _, x in v]), "n": len(v)}
                          for b, v in sorted(d.items())] for meth, d in m.items()} for prob, m in acc.items()}


def plot_tradeoff(curves, path):
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(curves), figsize=(5 * len(curves), 4))
    for ax, (prob, meths) in zip(np.atleast_1d(axes), curves.items()):
        for i, (meth, pts) in enumerate(meths.items()):
            ax.errorbar([p["test_violation"] for p in pts], [p["test_accuracy"] for p in pts],
                        xerr=[p["test_violation_hw"] or 0 for p in pts], yerr=[p["test_accuracy_hw"] or 0 for p in pts],
                        marker="os"[i % 2], color=f"C{i}", label=meth, ms=5)
            for p in pts:
                ax.annotate(f"{p['bound']:.3g}", (p["test_violation"], p["test_accuracy"]), fontsize=6)
        _label(ax, prob, "mean ")
        ax.legend(fontsize=7)
    _save(fig, path)


def _label(ax, title, prefix=""):
    ax.set_title(title, fontsize=9)
    ax.set_xlabel(f"{prefix}test violation (true groups)")
    ax.set_ylabel(f"{prefix}test accuracy")


def _save(fig, path):
    import matplotlib.pyplot as plt

    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


# ============================================================================ driver
def summarize(results):
    """Mean, 95% half-width and number of splits per (problem, method, metric)."""
    table = {}
    for per_split in results:
        for prob, methods in per_split["methods"].items():
            for meth, res in methods.items():
                if "error" in res:
                    table.setdefault(prob, {}).setdefault(meth, {"error": res["error"]})
                    continue
                d = table.setdefault(prob, {}).setdefault(meth, {})
                for k, v in res.items():
                    if isinstance(v, (float, int)) and not isinstance(v, bool):
                        d.setdefault(k, []).append(float(v))
    out = {}
    for prob, methods in table.items():
        for meth, d in methods.items():
            out.setdefault(prob, {})[meth] = d if "error" in d else {
                k: {"mean": float(np.mean(v)), "half_width": half_width(v), "std": float(np.std(v)), "n": len(v),
                    "values": v} for k, v in d.items()}
    return out


def plot(summary, path):
    import matplotlib.pyplot as plt

    probs = list(summary)
    fig, axes = plt.subplots(1, len(probs), figsize=(5 * len(probs), 4.6))
    for ax, prob in zip(np.atleast_1d(axes), probs):
        for i, (meth, d) in enumerate(summary[prob].items()):
            if "error" in d:
                continue
            ax.errorbar(d["test_violation"]["mean"], d["test_accuracy"]["mean"],
                        xerr=d["test_violation"]["half_width"], yerr=d["test_accuracy"]["half_width"],
                        fmt="o^sDv<>"[i % 7], color=f"C{i % 10}", label=f"{meth} (n={d['test_accuracy']['n']})", ms=6)
        bound = float(prob.split("<=")[1]) if "<=" in prob else None
        if bound:
            ax.axvline(bound, color="grey", ls="--", lw=1)
        _label(ax, prob)
        ax.legend(fontsize=5, loc="lower right")
    _save(fig, path)


def _pm(d, k, nd=4):
    v = d.get(k)
    if v is None or v["mean"] is None:
        return "-"
    hw = v["half_width"]
    return f"{v['mean']:.{nd}f}" + (f" ± {hw:.{nd}f}" if hw is not None else "")


def markdown(main_record, trade_record=None, det_record=None):
    """The README tables from the JSON records (``--table``)."""
    out = []
    for prob, methods in main_record["summary"].items():
        out += [f"**{prob}**", "", "| method | splits | test accuracy | test violation | train violation "
                "| fit time / base fit (median) |", "|---|---|---|---|---|---|"]
        for meth, d in methods.items():
            if "error" in d:
                out.append(f"| {meth} | - | not supported: `{d['error'][:90]}` | | | |")
                continue
            tv = _pm(d, "train_violation")
            if "HGB" in meth and "train_violation_at_fit" in d:
                tv += f" (at fit: {d['train_violation_at_fit']['mean']:.4f})"
            if "certified" in d:
                tv += f" (certified on {d['certified']['mean'] * d['certified']['n']:.0f}/{d['certified']['n']})"
            out.append(f"| {meth} | {d['test_accuracy']['n']} | {_pm(d, 'test_accuracy')} | "
                       f"{_pm(d, 'test_violation')} | {tv} | {np.median(d['fit_time_ratio']['values']):.1f} |")
        out.append("")
    out += ["**Deterministic classifiers (Adult)**: differences to the randomized classifier of the same "
            "fit, per split, then mean ± half-width and the largest |difference| over the splits", "",
            "| problem | classifier | test accuracy | test violation | train violation | Δ test accuracy "
            "(max abs) | Δ test violation (max abs) | hashing-noise sd (test) |", "|---|---|---|---|---|---|---|---|"]
    det = det_record["summary"] if det_record else main_record.get("deterministic", {})
    for prob, variants in det.items():
        for name, d in variants.items():
            extra = ""
            if "d_test_accuracy" in d:
                da, dv = d["d_test_accuracy"], d["d_test_violation"]
                extra = (f"{_pm(d, 'd_test_accuracy')} ({max(abs(x) for x in da['values']):.4f}) | "
                         f"{_pm(d, 'd_test_violation')} ({max(abs(x) for x in dv['values']):.4f}) | ")
            else:
                extra = f" | | {_pm(d, 'hash_noise_sd_test')}"
            out.append(f"| {prob} | {name} | {_pm(d, 'test_accuracy')} | {_pm(d, 'test_violation')} | "
                       f"{_pm(d, 'train_violation')} | {extra} |".replace("|  |", "| |"))
    out.append("")
    if trade_record:
        out += ["**Accuracy at matched test violation** (group-blind LR's sweep interpolated at EG's test "
                "violation, same split; paired difference)", "",
                "| problem | EG bound | EG test accuracy | EG test violation | goalfit − EG accuracy at EG's "
                "violation | splits counted (of which EG above goalfit's whole sweep: its least-constrained point "
                "used; EG below the sweep: not counted) |",
                "|---|---|---|---|---|---|"]
        for prob, bounds in matched_summary(trade_record["per_split"]).items():
            for b, d in bounds.items():
                out.append(f"| {prob} | {b} | {_pm(d, 'eg_acc')} | {_pm(d, 'eg_viol')} | {_pm(d, 'diff')} | "
                           f"{d['diff']['n']} ({d.get('capped', 0)}; {d['outside']}) |")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="8,000 training rows per problem, one split, cv=3")
    ap.add_argument("--splits", type=int, default=10, help="number of (re-)splits (seeds 0..N-1)")
    ap.add_argument("--slow-splits", type=int, default=3,
                    help="RampClassifier and Zafar et al. run on the first N splits only (the slow methods)")
    ap.add_argument("--reuse", type=Path, help="an earlier group_blind.json: take RampClassifier's and Zafar et "
                                               "al.'s results of its splits from it instead of re-running them")
    ap.add_argument("--part", choices=("main", "tradeoff", "deterministic", "lightgbm", "folds"), default="main",
                    help="main: every method at the goal's bound (+ deterministic table); tradeoff: the "
                         "group-blind LR and EG at several bounds; deterministic: the deterministic "
                         "table alone (refits the two LR models); lightgbm: Adult EOpp on a LightGBM "
                         "base, joint models and folds against FairGBM; folds: 2 against 5 folds on "
                         "Adult subsamples (each part: its own entry of group_blind.json)")
    ap.add_argument("--only", help="re-run only the methods whose name contains this string (e.g. 'Zafar') "
                                   "on the splits of the existing JSON, and merge them into it")
    ap.add_argument("--table", action="store_true", help="print the README tables from the existing JSON files")
    ap.add_argument("--resume", action="store_true", help="keep the splits of the existing JSON of this part "
                                                          "and run the next ones")
    ap.add_argument("--first-split", type=int, default=0,
                    help="start at this split and write group_blind_from<N>.json (to run splits in two "
                         "processes; merge with --merge)")
    ap.add_argument("--merge", type=Path, nargs="+", help="main-part JSON files of disjoint splits to merge "
                                                           "into group_blind.json")
    ap.add_argument("--no-deterministic", action="store_true",
                    help="main part without the deterministic table (run it with --part deterministic)")
    args = ap.parse_args()
    if args.table:
        lg = load_part(args, "lightgbm")
        if lg is not None:
            print(lightgbm_table(lg) + "\n")
        fo = load_part(args, "folds")
        if fo is not None:
            print(folds_table(fo) + "\n")
        return print(markdown(load_part(args, "main"), load_part(args, "tradeoff"), load_part(args, "deterministic")))
    if args.only:
        return rerun_only(args)
    if args.part == "deterministic":
        return run_deterministic(args)
    if args.part == "lightgbm":
        return run_lightgbm(args)
    if args.part == "folds":
        return run_folds(args)
    n_splits = 1 if args.quick else args.splits
    reuse = None if args.reuse is None else {r["split"]: r["methods"] for r in json.loads(args.reuse.read_text())["per_split"]}
    t_start = time.perf_counter()
    rows, per_split = [], []
    if args.resume:
        old = load_part(args, args.part)
        if old is None:
            raise SystemExit(f"--resume: {results_path(args)} has no {args.part!r} part to resume; run it without --resume")
        per_split, rows = old["per_split"], old.get("rows", [])
        t_start -= old["seconds"]
    if args.merge:
        recs = [json.loads(f.read_text()) for f in args.merge]
        per_split = sorted((p for r in recs for p in r["per_split"]), key=lambda p: p["split"])
        rows = [row for r in recs for row in r["rows"]]
        t_start -= sum(r["seconds"] for r in recs)
        args.reuse = args.reuse or recs[0].get("reused")
        if args.no_deterministic:  # the deterministic table is its own part (--part deterministic)
            for p in per_split:
                p["deterministic"] = {}
            rows = [r for r in rows if not r["experiment"].endswith("deterministic")]
        return write(args, per_split, rows, t_start)
    for split in range(max(len(per_split), args.first_split), n_splits):
        print(f"=== split {split}", flush=True)
        methods, det, trade = {}, {}, {}
        for (name, kind, bound, X, y, s, Xt, yt, st) in problems(split, args.quick):
            print(f"--- {name} (train {len(y)}, test {len(yt)})", flush=True)
            if args.part == "tradeoff":
                if len(np.unique(y)) == 2:
                    trade[name] = tradeoff(name, kind, bound, X, y, s, Xt, yt, st, split)
                continue
            old = None if reuse is None or split not in reuse else reuse[split].get(name, {})
            out, models = run_problem(name, kind, bound, X, y, s, Xt, yt, st, args.quick, rows, split,
                                      slow=split < args.slow_splits, reuse=old)
            methods[name] = out
            if name.startswith("Adult") and not args.no_deterministic:
                print(f"  deterministic classifiers ({name}):", flush=True)
                det[name] = deterministic_table(name, kind, bound, models, Xt, yt, st, X, y, s, rows, split)
        per_split.append({"split": split, "methods": methods, "deterministic": det, "tradeoff": trade})
        write(args, per_split, rows, t_start)


def rerun_only(args):
    """Re-run the methods matching ``--only`` on every split of the existing JSON and merge."""
    global ONLY
    ONLY = args.only
    old = load_part(args, "main")
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


def run_deterministic(args):
    """The deterministic table alone (refits the two LR models on the Adult problems), in
    the ``deterministic`` part of ``group_blind.json``: runnable after a change to ``to_deterministic``."""
    global ONLY
    ONLY = "plug-in (LR)"  # the group-aware and the group-blind (product) LR only
    t_start = time.perf_counter()
    per_split, rows = [], []
    for split in range(1 if args.quick else args.splits):
        det = {}
        for (name, kind, bound, X, y, s, Xt, yt, st) in problems(split, args.quick):
            if name.startswith("Adult"):
                print(f"--- split {split} {name}", flush=True)
                _, models = run_problem(name, kind, bound, X, y, s, Xt, yt, st, args.quick, [], split)
                det[name] = deterministic_table(name, kind, bound, models, Xt, yt, st, X, y, s, rows, split)
        per_split.append({"split": split, "methods": det})
        write(args, per_split, rows, t_start)


def results_path(args) -> Path:
    """The script's one results file (``group_blind.json``; ``_quick`` with ``--quick``)."""
    return RESULTS / f"{NAME}{'_quick' if args.quick else ''}.json"


def load_part(args, part):
    """A part's record from the results file: the file itself for ``main``, else its ``parts``
    entry (None when that part was never run)."""
    path = results_path(args)
    if not path.exists():
        return None
    full = json.loads(path.read_text())
    return full if part == "main" else full.get("parts", {}).get(part)


def save_part(args, part, record):
    """Write ``record`` as the ``main`` part (the file's top level, keeping the other parts) or
    under ``parts[part]`` of the one results file."""
    path = results_path(args)
    full = json.loads(path.read_text()) if path.exists() else {}
    if part == "main":
        record = dict(record, parts=full.get("parts", {}))
    else:
        full.setdefault("parts", {})[part] = record
        record = full
    RESULTS.mkdir(exist_ok=True)
    path.write_text(json.dumps(record, indent=1, default=float))
    return path


def write(args, per_split, rows, t_start):
    """Summaries over the splits done so far, the plot and the JSON (rewritten after every split)."""
    n_splits = len(per_split)
    stem = NAME + ("" if args.part == "main" else f"_{args.part}") + ("_quick" if args.quick else "")
    if args.first_split and not args.merge:
        stem += f"_from{args.first_split}"
    RESULTS.mkdir(exist_ok=True)
    record = {"benchmark": NAME, "part": args.part, "date": datetime.now(timezone.utc).isoformat(),
              "quick": args.quick, "n_splits": n_splits, "seconds": time.perf_counter() - t_start,
              "machine": machine_record(), "versions": versions("fairlearn", "oxonfair", "cvxpy"),
              "seeds": {"splits": list(range(n_splits)), "goalfit_random_state": 0}}
    if args.part == "tradeoff":
        curves = mean_curves(per_split)
        plot_tradeoff(curves, RESULTS / f"{stem}.png")
        record.update(sweep={k: list(v) for k, v in SWEEP.items()}, curves=curves,
                      matched=matched_summary(per_split), per_split=per_split)
    elif args.part == "deterministic":
        record.update(summary=summarize(per_split), per_split=per_split, rows=rows)
    else:
        summary = summarize(per_split)
        plot(summary, RESULTS / f"{stem}.png")
        record.update(slow_splits=args.slow_splits, reused=None if args.reuse is None else str(args.reuse),
                      targets=TARGETS, summary=summary, per_split=per_split, rows=rows)
        if any(p["deterministic"] for p in per_split):
            record["deterministic"] = summarize([{"methods": p["deterministic"]} for p in per_split])
    if args.first_split and not args.merge:  # a share of the splits, merged later with --merge
        path = RESULTS / f"{stem}.json"
        path.write_text(json.dumps(record, indent=1, default=float))
    else:
        path = save_part(args, args.part, record)
    print(f"wrote {path} ({args.part} part) after {n_splits} split(s) ({record['seconds']:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
