#!/usr/bin/env python
"""Deploying a randomized GoalClassifier on small groups: which derandomization keeps the test
disparity near the expected classifier's?

Case (as ``fairness_vs_fairlearn.law_school_experiment``, but with the 8-level ``race`` as the
sensitive feature): law_school, features race, sex, LSAT, UGPA, region_first, sander_index;
label = first-year average ZFYA in tertiles (cut points from the training part); base model
``make_estimator("logistic_regression", random_state=0)``; ``GoalClassifier(objective="error",
constraints=[demographic_parity_difference("race") <= 0.02], random_state=0)`` (multiclass DP:
the largest between-group gap of ``P(h = k | race)`` over the 3 classes). 8 race groups, the
smallest with ~30 test rows.

Over ``--splits`` re-splits (70/30, stratified by race x ZFYA tertile, seeds 0..4) the same fitted
model is deployed as

1. ``expected``: the randomized classifier's exact expectation (``evaluate``, i.e. ``predict_proba``);
2. ``sampled``: ``predict(random_state=r, stratified=False)``, one member drawn per example (``--pred-seeds`` seeds);
3. ``hash``: ``to_deterministic("hash", random_state=r)`` (``--hash-seeds`` seeds);
4. ``best_rule``: ``to_deterministic("best_rule")``;
5. ``max_weight``: ``to_deterministic("max_weight")``;

and four prototypes (this script only, not in the library):

6. ``min_mix`` ("randomize less"): the deterministic rule b (best_rule's rule or a member) mixed
   with the fitted mixture h with the smallest share t such that ``(1 - t) C[b] + t C[h]`` meets
   the goals on the training rows, deployed by hashing. (The mixture sits on the constraint
   boundary, so t comes out 1: min_mix is the hash rule.)
7. ``cell_rule`` ("randomize only where needed"): per cell, the most accurate rule whose
   training class counts are the mixture's expected counts: the transportation LP
   ``max sum_i eta_{i, h(i)}`` s.t. those counts, deployed as ``argmax_j eta_j(x) + mu_cj`` (mu:
   the LP's duals), a plug-in rule with per-cell offsets; only rows on which two classes tie
   exactly (duplicated feature rows at the boundary) are split by the row hash in the LP's
   proportions. Batch-independent; training counts within 1 of the mixture's per cell.
8. ``strat_pattern`` (batch-dependent): within each (group, members'-prediction pattern)
   stratum of the batch, rows sorted by their row hash get the classes by systematic rounding
   of the stratum's class distribution q (position ``(j + phi) / m``, phi a hash of the stratum):
   each stratum's class counts match ``m q`` within 1;
9. ``strat_group`` (batch-dependent): per group, rows in hash order, each gets a class drawn by
   its row hash from the group's remaining deficit ``E_k - N_k`` (expected minus realized counts,
   restricted to the classes its members predict): counts within ``K - 1`` of the expectation per
   group whatever the number of patterns.

10. ``stratified``: the library's default ``predict`` (``stratified=True``: sequential systematic
    sampling per group: each row keeps its label distribution exactly, a group's count of the
    first class is within 1 of its expectation), over the ``--pred-seeds`` seeds.

Both stratified prototypes are permutation-invariant (they depend on the set of rows, not their order)
and on a batch of one row reduce to a hash rule; ``--batch`` sizes measure how they degrade.

Per split it records the test disparity (``evaluate(..., classifier=)`` for the expected and the
library's rules, ``gf.score(goal, y_test, labels, ...)`` for hard labels; both for the hard
library rules as a cross-check) and accuracy, the training values, the members and weights,
the group sizes, the share of rows on which the members disagree, and the noise decomposition:
(a) estimation noise of the expected classifier (test vs train rates, ``Var_i(q_ik) / n_g``)
and (b) the randomization noise of sampling (``sum_i q_ik (1 - q_ik) / n_g^2`` per rate, bounded by
``f_g / (4 n_g)``), each turned into a predicted mean disparity by Monte Carlo over Gaussian rates
and compared with the measured one.

Usage::

    GOALFIT_DATA=../shared/data python benchmarks/derandomization.py [--quick]

Writes ``benchmarks/results/derandomization.json`` and ``benchmarks/results/derandomization.png``.
"""
from __future__ import annotations

import argparse
import os
import time
import warnings
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

import goalfit as gf
from goalfit.classifiers.hashing import hash_uniform, row_hash
from goalfit.datasets import load_dataset
from goalfit.estimators import make_estimator
from goalfit.goals.problem import FEASIBLE_TOL

from _common import machine_record, versions, write_results  # noqa: E402
from fairness_vs_fairlearn import expected_multiclass_dp, one_hot  # noqa: E402  (independent DP check)

NAME = "derandomization"
HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
EXPERIMENT = "law_school race(8) 3-class DP<=0.02"
BOUND = 0.02
GOAL = gf.demographic_parity_difference("race")
ORDER = ["expected", "sampled", "hash", "best_rule", "max_weight", "min_mix", "cell_rule", "strat_pattern",
         "strat_group", "stratified"]
N_MC = 4000


# ============================================================================ data
_DS = None


def law_school_race(seed, test_size=0.3):
    """The features and label of ``fairness_vs_fairlearn.law_school_experiment`` (there built
    inline), with the 8-level race as the sensitive feature and a 70/30 split stratified by
    race x ZFYA tertile (tertiles of the whole column for the stratification only)."""
    global _DS
    if _DS is None:
        _DS = load_dataset("law_school")
    ds = _DS
    z = ds.data["ZFYA"]
    X = ds.data.drop(columns=["ZFYA"])
    race = ds.sensitive_features["race"].astype(str).reset_index(drop=True)
    strat = race + "_" + pd.Series(np.digitize(z, np.quantile(z, [1 / 3, 2 / 3]))).astype(str)
    tr, te = train_test_split(np.arange(len(X)), test_size=test_size, random_state=seed, stratify=strat)
    cuts = np.quantile(z.iloc[tr], [1 / 3, 2 / 3])
    label = pd.Series(np.digitize(z, cuts), name="ZFYA_tertile")

    def part(rows):
        return (X.iloc[rows].reset_index(drop=True), label.iloc[rows].reset_index(drop=True),
                race.iloc[rows].reset_index(drop=True))

    return part(tr), part(te), cuts


# ============================================================================ rates and noise
def dist_of(codes, weights, K):
    """Per-row class distribution of the mixture from the members' codes (M, n)."""
    q = np.zeros((codes.shape[1], K))
    for w, c in zip(weights, codes):
        q[np.arange(codes.shape[1]), c] += w
    return q


def group_rates(P, g, G):
    """Rates P(h = k | group), shape (G, K), from a distribution (n, K) or hard one-hot."""
    return np.stack([P[g == a].mean(axis=0) for a in range(G)])


def dp_of_rates(R):
    """Multiclass DP difference: max over classes of (max - min over groups); R (..., G, K)."""
    return (R.max(axis=-2) - R.min(axis=-2)).max(axis=-1)


def mc_dp(mean, sd, rng):
    """Mean and sd of the DP of Gaussian rates N(mean, sd^2) (independent), by Monte Carlo."""
    draws = dp_of_rates(mean[None] + sd[None] * rng.standard_normal((N_MC,) + mean.shape))
    return float(draws.mean()), float(draws.std())


# ============================================================================ prototypes
def min_mix(model, det_best):
    """'Randomize only where needed': ``(1 - t) b + t h`` with the least training randomization.

    Returns (base name, base member, t, info) with the training objective / DP / variance of the
    chosen one and, for every base tried, its t and training randomization variance.
    """
    ts, clf, problem = model.train_sample_, model.classifier_, model.problem_
    space, K = problem.space, len(model.classes_)
    w = clf.weights
    Cm = [ts.confusion(ts.member_codes[k], space) for k in range(len(w))]
    Cmix = sum(wk * Ck for wk, Ck in zip(w, Cm))
    q_mix = dist_of(ts.member_codes, w, K)
    best_member = det_best.members[0]
    bases = [("best_rule", best_member, best_member.predict_codes(None, ts.proba, ts.cells))]
    bases += [(f"member {k}", m, ts.member_codes[k]) for k, m in enumerate(clf.members)]
    tried = []
    for name, member, codes in bases:
        Cb = ts.confusion(codes, space)
        if problem.max_violation(Cb) <= FEASIBLE_TOL:
            t = 0.0
        else:
            lo, hi = 0.0, 1.0
            for _ in range(40):
                mid = 0.5 * (lo + hi)
                if problem.max_violation((1 - mid) * Cb + mid * Cmix) <= FEASIBLE_TOL:
                    hi = mid
                else:
                    lo = mid
            t = hi
        q = t * q_mix
        q[np.arange(len(codes)), codes] += 1 - t
        C = (1 - t) * Cb + t * Cmix
        tried.append({"base": name, "t": t, "train_rand_var": float((q * (1 - q)).sum(axis=1).mean()),
                      "train_objective": float(problem.objective.value(C)),
                      "train_dp": float(problem.constraint_values(C)[0]), "member": member})
    pick = min(tried, key=lambda d: (round(d["train_rand_var"], 12), d["train_objective"]))
    info = {k: v for k, v in pick.items() if k != "member"}
    info["tried"] = [{k: v for k, v in d.items() if k != "member"} for d in tried]
    info["mixture_train_rand_var"] = float((q_mix * (1 - q_mix)).sum(axis=1).mean())
    return pick["member"], pick["t"], info


def _largest_remainder(x):
    """Integers summing to round(sum x), each floor or ceil of x."""
    f = np.floor(x)
    k = int(round(x.sum() - f.sum()))
    f[np.argsort(-(x - f), kind="stable")[:k]] += 1
    return f


def cell_rule(model, tie_tol=1e-7):
    """Per cell, the most accurate (in eta) rule whose training class counts are the mixture's
    expected counts (largest-remainder rounded): the transportation LP ``max sum_i eta_{i,h(i)}``
    s.t. those counts, whose solution is ``argmax_j eta_j(x) + mu_cj`` (mu: the LP's duals) except
    on rows where two classes tie; tied rows ("randomize only where needed") are split between the
    tied classes by the row hash in the proportions the LP gave them.

    Returns a dict: per cell ``mu`` and ``ties`` {tied classes: their LP shares}, and diagnostics.
    """
    import scipy.sparse as sp
    from scipy.optimize import linprog

    ts, clf = model.train_sample_, model.classifier_
    K = len(model.classes_)
    q = dist_of(ts.member_codes, clf.weights, K)
    rule = {"mu": {}, "ties": {}, "tie_tol": tie_tol, "cells": []}
    for c in np.unique(ts.cells):
        idx = np.flatnonzero(ts.cells == c)
        eta, n = ts.proba[idx], len(idx)
        T = _largest_remainder(q[idx].sum(axis=0))
        rows = np.repeat(np.arange(n), K)
        A = sp.vstack([sp.csr_matrix((np.ones(n * K), (rows, np.arange(n * K))), shape=(n, n * K)),
                       sp.csr_matrix((np.ones(n * K), (np.tile(np.arange(K), n), np.arange(n * K))), shape=(K, n * K))])
        lp = linprog(-eta.ravel(), A_eq=A, b_eq=np.r_[np.ones(n), T], bounds=(0, 1), method="highs")
        x = lp.x.reshape(n, K)
        mu = lp.eqlin.marginals[n:]  # complementary slackness: x_ij > 0 only where eta_ij + mu_j is maximal
        mu = mu - mu.min()
        score = eta + mu
        tied = score >= score.max(axis=1, keepdims=True) - tie_tol
        ties = {}
        for pat in {tuple(np.flatnonzero(t)) for t in tied[tied.sum(axis=1) > 1]}:
            m = (tied == np.isin(np.arange(K), pat)).all(axis=1)
            share = x[m][:, list(pat)].sum(axis=0)
            ties[pat] = (share / share.sum()).tolist() if share.sum() > 0 else [1.0 / len(pat)] * len(pat)
        rule["mu"][int(c)], rule["ties"][int(c)] = mu, ties
        rule["cells"].append({"cell": int(c), "n": n, "lp_status": int(lp.status),
                              "lp_fractional_rows": int(((x > 1e-9) & (x < 1 - 1e-9)).any(axis=1).sum()),
                              "tied_rows": int((tied.sum(axis=1) > 1).sum()),
                              "distinct_eta_rows": int(len(np.unique(np.round(eta, 12), axis=0)))})
    return rule


def cell_rule_predict(rule, eta, cells, hashes, seed):
    """Class codes of :func:`cell_rule`'s rule: argmax of eta + mu_cell; tied rows by the hash."""
    n, K = eta.shape
    out = np.empty(n, dtype=np.intp)
    u = hash_uniform(hashes, seed)
    for c, mu in rule["mu"].items():
        idx = np.flatnonzero(cells == c)
        score = eta[idx] + mu
        tied = score >= score.max(axis=1, keepdims=True) - rule["tie_tol"]
        out[idx] = np.argmax(score, axis=1)
        for pat, share in rule["ties"][c].items():
            m = (tied == np.isin(np.arange(K), pat)).all(axis=1)
            cum = np.cumsum(share)
            cum[-1] = 1.0
            out[idx[m]] = np.asarray(pat)[np.minimum(np.searchsorted(cum, u[idx[m]], side="right"), len(pat) - 1)]
    return out


def strat_pattern(codes, weights, cells, hashes, seed, K):
    """Systematic rounding within each (cell, members'-prediction pattern) stratum, hash order."""
    n = codes.shape[1]
    q = dist_of(codes, weights, K)
    u = hash_uniform(hashes, seed)
    _, inv = np.unique(np.column_stack([cells, codes.T]), axis=0, return_inverse=True)
    inv = inv.ravel()
    out = np.empty(n, dtype=np.intp)
    order = np.lexsort((u, inv))  # by stratum, then by hash
    bounds = np.flatnonzero(np.diff(inv[order])) + 1
    for idx in np.split(order, bounds):
        m = len(idx)
        with np.errstate(over="ignore"):
            key = np.bitwise_xor.reduce(hashes[idx]) ^ np.uint64(m)
        phi = hash_uniform(np.array([key], dtype=np.uint64), seed + 7919)[0]
        cum = np.cumsum(q[idx[0]])
        cum[-1] = 1.0
        out[idx] = np.minimum(np.searchsorted(cum, (np.arange(m) + phi) / m, side="right"), K - 1)
    return out


def strat_group(codes, weights, cells, hashes, seed, K):
    """Per cell, rows in hash order; each row's class drawn by its hash from the cell's remaining
    deficit (expected minus realized counts) over the classes its members predict."""
    q = dist_of(codes, weights, K)
    u = hash_uniform(hashes, seed)
    out = np.empty(codes.shape[1], dtype=np.intp)
    for c in np.unique(cells):
        idx = np.flatnonzero(cells == c)
        idx = idx[np.argsort(u[idx], kind="stable")]
        E = np.zeros(K)
        N = np.zeros(K)
        for i in idx:
            qi = q[i]
            E += qi
            r = np.where(qi > 0, np.clip(E - N, 0, None), 0.0)
            if r.sum() <= 1e-12:
                r = qi
            cum = np.cumsum(r / r.sum())
            k = min(int(np.searchsorted(cum, u[i], side="right")), K - 1)
            while qi[k] == 0 or r[k] == 0:  # searchsorted may land on a zero-width class at a boundary
                k = (k - 1) % K
            out[i] = k
            N[k] += 1
    return out


def max_count_error(pred, q, cells, K):
    """Largest |realized - expected| class count over the (cell, class) pairs."""
    err = 0.0
    for c in np.unique(cells):
        m = cells == c
        err = max(err, float(np.abs(np.bincount(pred[m], minlength=K) - q[m].sum(axis=0)).max()))
    return err


def batched(fn, n, batch):
    """Apply ``fn(rows)`` -> codes to consecutive batches of ``batch`` rows (None: one batch)."""
    if batch is None or batch >= n:
        return fn(np.arange(n))
    return np.concatenate([fn(np.arange(s, min(s + batch, n))) for s in range(0, n, batch)])


# ============================================================================ one split
def run_split(split, args):
    t0 = time.perf_counter()
    (X, y, s), (Xt, yt, st), cuts = law_school_race(split)
    model = gf.GoalClassifier(make_estimator("logistic_regression", random_state=0), objective="error",
                              constraints=[GOAL <= BOUND], random_state=0)
    t_fit = time.perf_counter()
    model.fit(X, y, sensitive_features=s)
    fit_seconds = time.perf_counter() - t_fit
    clf, classes, K = model.classifier_, model.classes_, len(model.classes_)
    w = clf.weights
    levels = sorted(pd.unique(s))
    G = len(levels)
    g_tr, g_te = (pd.Categorical(v, categories=levels).codes for v in (s, st))
    cells_tr = clf.cell_encoder.transform(s, len(s))
    cells_te = clf.cell_encoder.transform(st, len(st))
    codes_tr = clf.member_predictions(X, sensitive_features=s)
    codes_te = clf.member_predictions(Xt, sensitive_features=st)
    assert np.array_equal(model.train_sample_.member_codes, codes_tr), "train_sample_ rows are not X's"
    q_tr, q_te = dist_of(codes_tr, w, K), dist_of(codes_te, w, K)
    y_tr, y_te = np.searchsorted(classes, np.asarray(y)), np.searchsorted(classes, np.asarray(yt))
    h_tr, h_te = row_hash(X), row_hash(Xt)

    def hard(labels_codes, part):
        """(DP via gf.score, accuracy) of hard class codes on the train / test part."""
        yy, ss, yc = (y, s, y_tr) if part == "train" else (yt, st, y_te)
        lab = classes[labels_codes]
        return float(gf.score(GOAL, yy, lab, sensitive_features=ss)), float(np.mean(labels_codes == yc))

    def via_evaluate(classifier, part):
        XX, yy, ss = (X, y, s) if part == "train" else (Xt, yt, st)
        ev = model.evaluate(XX, yy, sensitive_features=ss, classifier=classifier)
        return float(ev["constraints"][0]["value"]), float(ev["accuracy"])

    def hard_rates(codes_, part):
        gg = g_tr if part == "train" else g_te
        return group_rates(one_hot(codes_, np.arange(K)), gg, G)

    res = {"split": split, "cut_points": cuts.tolist(), "fit_seconds": fit_seconds, "method": model.method_,
           "n_train": len(y), "n_test": len(yt), "groups": levels,
           "group_sizes_train": [int((g_tr == a).sum()) for a in range(G)],
           "group_sizes_test": [int((g_te == a).sum()) for a in range(G)],
           "n_members": int(len(w)), "n_members_positive": int((w > 0).sum()), "weights": w.tolist(),
           "deployments": {}}
    dep = res["deployments"]

    # 1. expected
    dpE, accE = via_evaluate(None, "test")
    dpE_tr, accE_tr = via_evaluate(None, "train")
    chk = expected_multiclass_dp(yt, q_te, st, classes)
    dep["expected"] = {"test_dp": [dpE], "test_acc": [accE], "train_dp": [dpE_tr], "train_acc": [accE_tr],
                       "score_minus_evaluate": abs(float(gf.score(GOAL, yt, q_te, sensitive_features=st,
                                                                  classes=classes)) - dpE),
                       "independent_minus_evaluate": max(abs(chk[0] - accE), abs(chk[1] - dpE))}

    # 2. sampled predict
    d = dep["sampled"] = {"test_dp": [], "test_acc": [], "train_dp": [], "train_acc": []}
    rates_samp = []
    for r in range(args.pred_seeds):
        lab = model.predict(Xt, sensitive_features=st, random_state=r, stratified=False)
        codes = np.searchsorted(classes, lab)
        v, a = hard(codes, "test")
        d["test_dp"].append(v)
        d["test_acc"].append(a)
        rates_samp.append(hard_rates(codes, "test"))
        lab_tr = model.predict(X, sensitive_features=s, random_state=r, stratified=False)
        v, a = hard(np.searchsorted(classes, lab_tr), "train")
        d["train_dp"].append(v)
        d["train_acc"].append(a)
    rates_samp = np.stack(rates_samp)

    # 3-5. the library's deterministic rules
    dets = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for r in range(args.hash_seeds):
            dets[("hash", r)] = model.to_deterministic("hash", random_state=r)
        t_b = time.perf_counter()
        dets[("best_rule", 0)] = model.to_deterministic("best_rule")
        res["best_rule_seconds"] = time.perf_counter() - t_b
        dets[("max_weight", 0)] = model.to_deterministic("max_weight")
    res["to_deterministic_warnings"] = sorted({str(c.message)[:160] for c in caught})
    rates_hash = []
    for (name, r), det in dets.items():
        d = dep.setdefault(name, {"test_dp": [], "test_acc": [], "train_dp": [], "train_acc": [],
                                  "score_minus_evaluate": 0.0, "train_lib_minus_ours": 0.0})
        v, a = via_evaluate(det, "test")
        codes = np.searchsorted(classes, det.predict(Xt, sensitive_features=st))
        v2, a2 = hard(codes, "test")
        d["score_minus_evaluate"] = max(d["score_minus_evaluate"], abs(v - v2), abs(a - a2))
        d["test_dp"].append(v)
        d["test_acc"].append(a)
        d["train_dp"].append(det.train_constraint_values_[0])
        d["train_acc"].append(1.0 - det.train_objective_)
        vt, _ = hard(np.searchsorted(classes, det.predict(X, sensitive_features=s)), "train")
        d["train_lib_minus_ours"] = max(d["train_lib_minus_ours"], abs(vt - det.train_constraint_values_[0]))
        d["train_max_violation"] = det.train_max_violation_
        d["derandomization"] = {k: v for k, v in det.derandomization_.items() if k != "strategy"}
        if name == "hash":
            rates_hash.append(hard_rates(codes, "test"))
    rates_hash = np.stack(rates_hash)
    best_codes_te = np.searchsorted(classes, dets[("best_rule", 0)].predict(Xt, sensitive_features=st))
    res["best_rule_disagrees_with_max_weight_test"] = float(np.mean(
        best_codes_te != np.searchsorted(classes, dets[("max_weight", 0)].predict(Xt, sensitive_features=st))))

    # 6. min_mix: the least randomization that meets the goals on the training rows
    base, t, info = min_mix(model, dets[("best_rule", 0)])
    mm_w = np.r_[1.0 - t, t * w]
    d = dep["min_mix"] = {"test_dp": [], "test_acc": [], "train_dp": [], "train_acc": [], "info": info}
    mm_expected = clf.with_members([base] + clf.members, mm_w)
    d["expected_test_dp"], d["expected_test_acc"] = via_evaluate(mm_expected, "test")
    mm_codes_te = np.vstack([base.predict_codes(None, clf.probability_model.predict_proba(Xt), cells_te), codes_te])
    q_mm_te = dist_of(mm_codes_te, mm_w, K)
    for r in range(args.hash_seeds):
        det = clf.with_members([base] + clf.members, mm_w, hash_seed=r)
        for part, XX, ss in (("test", Xt, st), ("train", X, s)):
            v, a = hard(np.searchsorted(classes, det.predict(XX, sensitive_features=ss)), part)
            d[f"{part}_dp"].append(v)
            d[f"{part}_acc"].append(a)

    # 7. cell_rule: per-cell rate-matching plug-in rule, the hash only on tied rows
    t_c = time.perf_counter()
    rule = cell_rule(model)
    res["cell_rule_seconds"] = time.perf_counter() - t_c
    eta_te = clf.probability_model.predict_proba(Xt)
    d = dep["cell_rule"] = {"test_dp": [], "test_acc": [], "train_dp": [], "train_acc": [],
                            "info": {"cells": rule["cells"]}}
    cr_err = []
    for r in range(args.hash_seeds):
        codes = cell_rule_predict(rule, eta_te, cells_te, h_te, r)
        v, a = hard(codes, "test")
        d["test_dp"].append(v)
        d["test_acc"].append(a)
        codes = cell_rule_predict(rule, model.train_sample_.proba, model.train_sample_.cells, h_tr, r)
        cr_err.append(max_count_error(codes, q_tr, cells_tr, K))
        v, a = hard(codes, "train")
        d["train_dp"].append(v)
        d["train_acc"].append(a)
    d["info"]["train_count_error_max"] = max(cr_err)
    full0 = cell_rule_predict(rule, eta_te, cells_te, h_te, 0)
    d["info"]["test_share_depending_on_hash_seed"] = float(np.mean(full0 != cell_rule_predict(rule, eta_te, cells_te, h_te, 1)))
    res["cell_rule_disagrees_with_best_rule_test"] = float(np.mean(best_codes_te != full0))

    # 8-9. stratified rounding (batch-dependent), over the hash seeds, whole batch and smaller ones
    strat = {"strat_pattern": strat_pattern, "strat_group": strat_group}
    res["count_error_max"] = {}
    res["batch"] = {}
    for name, fn in strat.items():
        d = dep[name] = {"test_dp": [], "test_acc": [], "train_dp": [], "train_acc": []}
        errs = []
        for r in range(args.hash_seeds):
            codes = fn(codes_te, w, cells_te, h_te, r, K)
            errs.append(max_count_error(codes, q_te, cells_te, K))
            v, a = hard(codes, "test")
            d["test_dp"].append(v)
            d["test_acc"].append(a)
            v, a = hard(fn(codes_tr, w, cells_tr, h_tr, r, K), "train")
            d["train_dp"].append(v)
            d["train_acc"].append(a)
        res["count_error_max"][name] = max(errs)
        full = fn(codes_te, w, cells_te, h_te, 0, K)
        for b in args.batch:
            codes = batched(lambda rows: fn(codes_te[:, rows], w, cells_te[rows], h_te[rows], 0, K), len(yt), b)
            v, a = hard(codes, "test")
            res["batch"].setdefault(name, []).append(
                {"batch": b, "test_dp": v, "test_acc": a, "share_changed_vs_full_batch": float(np.mean(codes != full))})

    # 10. the library's predict(stratified=True): sequential systematic sampling per group
    d = dep["stratified"] = {"test_dp": [], "test_acc": [], "train_dp": [], "train_acc": []}
    errs = []

    def lib_strat(Xp, sp, r):
        return np.searchsorted(classes, model.predict(Xp, sensitive_features=sp, random_state=r, stratified=True))

    for r in range(args.pred_seeds):
        codes = lib_strat(Xt, st, r)
        errs.append(max_count_error(codes, q_te, cells_te, K))
        v, a = hard(codes, "test")
        d["test_dp"].append(v)
        d["test_acc"].append(a)
        v, a = hard(lib_strat(X, s, r), "train")
        d["train_dp"].append(v)
        d["train_acc"].append(a)
    res["count_error_max"]["stratified"] = max(errs)
    full = lib_strat(Xt, st, 0)
    for b in args.batch:
        codes = batched(lambda rows: lib_strat(Xt.iloc[rows], st.iloc[rows], 0), len(yt), b)
        v, a = hard(codes, "test")
        res["batch"].setdefault("stratified", []).append(
            {"batch": b, "test_dp": v, "test_acc": a, "share_changed_vs_full_batch": float(np.mean(codes != full))})

    # ---------------------------------------------------------------- noise decomposition
    rng = np.random.default_rng(1000 + split)
    n_te = np.array(res["group_sizes_test"], float)
    n_tr = np.array(res["group_sizes_train"], float)
    disagree_te = (codes_te[w > 0] != codes_te[w > 0][:1]).any(axis=0)
    f_g = np.array([disagree_te[g_te == a].mean() for a in range(G)])
    R_te, R_tr = group_rates(q_te, g_te, G), group_rates(q_tr, g_tr, G)
    var_q_te = np.stack([q_te[g_te == a].var(axis=0) for a in range(G)])
    var_q_tr = np.stack([q_tr[g_tr == a].var(axis=0) for a in range(G)])
    rand_sd = np.sqrt(np.stack([(q_te[g_te == a] * (1 - q_te[g_te == a])).sum(axis=0) for a in range(G)])) / n_te[:, None]
    est_sd_te, est_sd_tr = np.sqrt(var_q_te / n_te[:, None]), np.sqrt(var_q_tr / n_tr[:, None])
    hard_sd_te = np.sqrt(R_te * (1 - R_te) / n_te[:, None])  # any hard rule with these rates
    emp_sd_samp, emp_sd_hash = rates_samp.std(axis=0, ddof=1), rates_hash.std(axis=0, ddof=1)
    pred_samp = mc_dp(R_te, rand_sd, rng)  # (b) given this test set
    pred_exp = mc_dp(R_tr, np.sqrt(est_sd_te ** 2 + est_sd_tr ** 2), rng)  # (a) train -> test
    pred_hard = mc_dp(R_tr, np.sqrt(hard_sd_te ** 2 + est_sd_tr ** 2), rng)  # (a)+(b): any hard rule
    sel = rand_sd > 1e-9
    res["noise"] = {
        "disagree_share_test": float(disagree_te.mean()),
        "disagree_share_test_by_group": f_g.tolist(),
        "min_mix_disagree_share_test": float((q_mm_te.max(axis=1) < 1).mean()),
        "rand_sd_bound_by_group": np.sqrt(f_g / (4 * n_te)).tolist(),
        "rand_sd_pred_by_group_max_over_classes": rand_sd.max(axis=1).tolist(),
        "rand_sd_empirical_sampled_by_group_max": emp_sd_samp.max(axis=1).tolist(),
        "rand_sd_empirical_hash_by_group_max": emp_sd_hash.max(axis=1).tolist(),
        "est_sd_test_by_group_max": est_sd_te.max(axis=1).tolist(),
        "hard_sd_test_by_group_max": hard_sd_te.max(axis=1).tolist(),
        "ratio_emp_over_pred_sd_sampled_median": float(np.median(emp_sd_samp[sel] / rand_sd[sel])),
        "ratio_emp_over_pred_sd_hash_median": float(np.median(emp_sd_hash[sel] / rand_sd[sel])),
        "pooled_ratio_sampled": float(np.sqrt((emp_sd_samp[sel] ** 2).sum() / (rand_sd[sel] ** 2).sum())),
        "pooled_ratio_hash": float(np.sqrt((emp_sd_hash[sel] ** 2).sum() / (rand_sd[sel] ** 2).sum())),
        "expected_rates_test": R_te.tolist(), "expected_rates_train": R_tr.tolist(),
        "pred_dp_sampled_given_test": pred_samp, "pred_dp_expected_test": pred_exp, "pred_dp_hard_rule_test": pred_hard,
        "pred_sd_per_rate": {"rand": rand_sd.tolist(), "est_test": est_sd_te.tolist(), "hard_test": hard_sd_te.tolist()},
    }
    # the variance identity Var(1[h = k]) = Var(q_k) + E[q_k (1 - q_k)] = r (1 - r) per group
    ident = np.stack([(q_te[g_te == a] * (1 - q_te[g_te == a])).mean(axis=0) for a in range(G)]) + var_q_te
    res["noise"]["variance_identity_max_abs"] = float(np.abs(ident - R_te * (1 - R_te)).max())
    res["seconds"] = time.perf_counter() - t0
    return res


# ============================================================================ summary and output
def summarize(per_split):
    out = {}
    for name in ORDER:
        rec = {}
        for key in ("test_dp", "test_acc", "train_dp", "train_acc"):
            per = np.array([np.mean(r["deployments"][name][key]) for r in per_split])
            within = [np.std(r["deployments"][name][key], ddof=1) for r in per_split
                      if len(r["deployments"][name][key]) > 1]
            rec[key] = float(per.mean())
            rec[key + "_sd_splits"] = float(per.std(ddof=1)) if len(per) > 1 else None
            rec[key + "_sd_seeds"] = float(np.mean(within)) if within else None
        gap = np.array([np.mean(r["deployments"][name]["test_dp"]) - r["deployments"]["expected"]["test_dp"][0]
                        for r in per_split])
        rec["test_dp_minus_expected"] = float(gap.mean())
        rec["test_dp_minus_expected_sd"] = float(gap.std(ddof=1)) if len(gap) > 1 else None
        out[name] = rec
    return out


def print_report(per_split, summary, noise):
    print(f"\n{EXPERIMENT}: {len(per_split)} split(s)")
    print(f"{'deployment':<14} {'test DP':>16} {'-expected':>10} {'seed sd':>8} {'test acc':>8} "
          f"{'train DP':>9} {'train acc':>9}")
    for name in ORDER:
        r = summary[name]
        sd = "" if r["test_dp_sd_splits"] is None else f" ± {r['test_dp_sd_splits']:.3f}"
        ss = "-" if r["test_dp_sd_seeds"] is None else f"{r['test_dp_sd_seeds']:.3f}"
        print(f"{name:<14} {r['test_dp']:>8.3f}{sd:<8} {r['test_dp_minus_expected']:>+10.3f} {ss:>8} "
              f"{r['test_acc']:>8.4f} {r['train_dp']:>9.3f} {r['train_acc']:>9.4f}")
    print("\nnoise decomposition (mean over splits):")
    for k, v in noise.items():
        print(f"  {k}: {v:.4f}" if isinstance(v, float) else f"  {k}: {v}")
    print("\nbatch dependence (hash seed 0, mean over splits; the whole test set is one batch otherwise):")
    for name, rows in batch_summary(per_split).items():
        for b in rows:
            print(f"  {name} batch {b['batch']}: test DP {b['test_dp']:.3f}, acc {b['test_acc']:.4f}, "
                  f"rows changed vs the whole batch {b['share_changed_vs_full_batch']:.3f}")


def batch_summary(per_split):
    out = {}
    for name in per_split[0]["batch"]:
        out[name] = [{k: (b0[k] if k == "batch" else float(np.mean([r["batch"][name][i][k] for r in per_split])))
                      for k in b0} for i, b0 in enumerate(per_split[0]["batch"][name])]
    return out


def noise_summary(per_split):
    def m(f):
        return float(np.mean([f(r) for r in per_split]))

    dep = lambda r, n: float(np.mean(r["deployments"][n]["test_dp"]))  # noqa: E731
    return {
        "expected_train_dp": m(lambda r: r["deployments"]["expected"]["train_dp"][0]),
        "expected_test_dp": m(lambda r: dep(r, "expected")),
        "(a) estimation: expected test - train": m(lambda r: dep(r, "expected") - r["deployments"]["expected"]["train_dp"][0]),
        "(a) predicted expected test DP (Var(q)/n, train+test)": m(lambda r: r["noise"]["pred_dp_expected_test"][0]),
        "sampled_test_dp": m(lambda r: dep(r, "sampled")),
        "(b) randomization: sampled - expected (same test set)": m(lambda r: dep(r, "sampled") - dep(r, "expected")),
        "(b) predicted sampled DP given the test set (sum q(1-q)/n^2)": m(lambda r: r["noise"]["pred_dp_sampled_given_test"][0]),
        "hash_test_dp": m(lambda r: dep(r, "hash")),
        "predicted DP of any hard rule with the mixture's rates (r(1-r)/n)": m(lambda r: r["noise"]["pred_dp_hard_rule_test"][0]),
        "rate sd: empirical / predicted, sampled (pooled)": m(lambda r: r["noise"]["pooled_ratio_sampled"]),
        "rate sd: empirical / predicted, hash (pooled)": m(lambda r: r["noise"]["pooled_ratio_hash"]),
        "disagree share (test)": m(lambda r: r["noise"]["disagree_share_test"]),
        "min_mix disagree share (test)": m(lambda r: r["noise"]["min_mix_disagree_share_test"]),
        "variance identity max abs": max(r["noise"]["variance_identity_max_abs"] for r in per_split),
    }


def make_rows(summary, per_split):
    rows = []
    secs = float(np.mean([r["fit_seconds"] for r in per_split]))
    for name in ORDER:
        s = summary[name]
        for split in ("test", "train"):
            for metric, key, lower in (("demographic_parity_difference", "dp", True), ("accuracy", "acc", False)):
                rows.append({"experiment": EXPERIMENT, "dataset": "law_school", "method": name, "metric": metric,
                             "split": split, "value": s[f"{split}_{key}"], "spread": s[f"{split}_{key}_sd_splits"],
                             "paper_value": None, "lower_is_better": lower, "seconds": secs,
                             "note": None if s[f"{split}_{key}_sd_seeds"] is None else
                             f"mean over seeds per split; sd over seeds {s[f'{split}_{key}_sd_seeds']:.4f}"})
    return rows


def plot(per_split, summary, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(13, 4.8), gridspec_kw={"width_ratios": [1.6, 1]})
    for i, name in enumerate(ORDER):
        for j, r in enumerate(per_split):
            v = r["deployments"][name]["test_dp"]
            ax.scatter(i + (j - len(per_split) / 2) * 0.07 + np.zeros(len(v)), v, s=8, alpha=0.35, color=f"C{j}")
        ax.plot([i - 0.3, i + 0.3], [summary[name]["test_dp"]] * 2, color="k", lw=2)
        ax.plot([i - 0.3, i + 0.3], [summary[name]["train_dp"]] * 2, color="r", lw=1, ls="--")
    ax.axhline(summary["expected"]["test_dp"], color="gray", lw=0.8, ls=":")
    ax.set_xticks(range(len(ORDER)))
    ax.set_xticklabels(ORDER, rotation=25, fontsize=8)
    ax.set_ylabel("demographic parity difference (race, 8 groups)")
    ax.set_title("test DP per split (colors) and seed; black: mean test, red dashed: mean train", fontsize=9)
    for j, r in enumerate(per_split):
        emp = np.array(r["noise"]["rand_sd_empirical_sampled_by_group_max"])
        ax2.scatter(r["noise"]["rand_sd_pred_by_group_max_over_classes"], emp, s=12, color=f"C{j}",
                    label=f"split {j}" if j < 5 else None)
        ax2.scatter(r["noise"]["rand_sd_pred_by_group_max_over_classes"], r["noise"]["rand_sd_empirical_hash_by_group_max"],
                    s=12, marker="x", color=f"C{j}")
    lim = ax2.get_xlim()[1]
    ax2.plot([0, lim], [0, lim], color="k", lw=0.8)
    ax2.set_xlabel("predicted sd of a group rate: sqrt(sum q(1-q)) / n_g (max over classes)")
    ax2.set_ylabel("empirical sd over seeds (o sampled, x hash)")
    ax2.set_title("randomization noise per group: prediction vs measurement", fontsize=9)
    ax2.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="2 splits, 5 predict seeds, 3 hash seeds")
    ap.add_argument("--splits", type=int, default=None, help="re-splits, seeds 0..n-1 (default 5, quick 2)")
    ap.add_argument("--pred-seeds", type=int, default=None, help="predict() seeds (default 20, quick 5)")
    ap.add_argument("--hash-seeds", type=int, default=None, help="hash seeds (default 10, quick 3)")
    ap.add_argument("--batch", type=int, nargs="*", default=[1, 10, 100, 1000],
                    help="batch sizes for the stratified rules' batch dependence (split 0 .. all, seed 0)")
    ap.add_argument("--threads", type=int, default=1, help="BLAS/OpenMP threads (0: no limit)")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    args.splits = args.splits or (2 if args.quick else 5)
    args.pred_seeds = args.pred_seeds or (5 if args.quick else 20)
    args.hash_seeds = args.hash_seeds or (3 if args.quick else 10)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(args.threads or None):
        run(args)


def run(args):
    warnings.filterwarnings("ignore", category=FutureWarning)
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    t_start = time.perf_counter()
    per_split = []
    for split in range(args.splits):
        r = run_split(split, args)
        per_split.append(r)
        print(f"split {split}: fit {r['fit_seconds']:.1f} s, best_rule {r['best_rule_seconds']:.1f} s, "
              f"split total {r['seconds']:.1f} s; {r['n_members_positive']} members, "
              f"test DP expected {r['deployments']['expected']['test_dp'][0]:.3f} "
              f"sampled {np.mean(r['deployments']['sampled']['test_dp']):.3f} "
              f"hash {np.mean(r['deployments']['hash']['test_dp']):.3f} "
              f"strat_group {np.mean(r['deployments']['strat_group']['test_dp']):.3f} "
              f"stratified {np.mean(r['deployments']['stratified']['test_dp']):.3f}", flush=True)
    summary = summarize(per_split)
    noise = noise_summary(per_split)
    total = time.perf_counter() - t_start
    print_report(per_split, summary, noise)
    print(f"\ntotal run time {total:.1f} s ({'quick' if args.quick else 'full'})")
    args.out.mkdir(parents=True, exist_ok=True)
    for r in per_split:  # drop the bulky per-rate arrays from all but the first split
        if r["split"] > 0:
            r["noise"].pop("pred_sd_per_rate", None)
    record = {
        "benchmark": NAME, "script": f"benchmarks/{NAME}.py", "quick": bool(args.quick),
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"), "seconds": total,
        "machine": {**machine_record(), "blas_openmp_thread_limit": args.threads or None,
                    "loadavg_end": os.getloadavg() if hasattr(os, "getloadavg") else None},
        "versions": versions(),
        "seeds": {"splits": list(range(args.splits)), "predict_random_states": list(range(args.pred_seeds)),
                  "hash_seeds": list(range(args.hash_seeds)), "goalfit_random_state": 0, "monte_carlo": N_MC},
        "notes": {
            "setup": "law_school; features race, sex, LSAT, UGPA, region_first, sander_index; label ZFYA tertile "
                     "(cut points from the training part); sensitive race (8 levels); 70/30 split stratified by "
                     "race x ZFYA tertile; GoalClassifier(make_estimator('logistic_regression', random_state=0), "
                     "objective='error', constraints=[demographic_parity_difference('race') <= 0.02], random_state=0)",
            "value": "test/train DP and accuracy: per split the mean over seeds (sampled: predict seeds; hash, "
                     "min_mix, strat_*: hash seeds), then the mean over splits; spread = sd over splits",
            "training values": "on the full training part (= the method's rows, in-sample LR); library rules: "
                               "det.train_constraint_values_ / train_objective_",
            "noise": "(a) estimation: rate sd sqrt(Var_i(q_ik)/n_g) on test and train; (b) randomization: "
                     "sqrt(sum_i q_ik(1-q_ik))/n_g given the test set; hard rule: sqrt(r(1-r)/n_g) = sqrt of (a)+(b) "
                     "(variance identity); predicted mean DP by Monte Carlo over independent Gaussian rates",
        },
        "summary": summary, "noise_summary": noise, "batch_summary": batch_summary(per_split), "per_split": per_split,
        "rows": make_rows(summary, per_split),
    }
    write_results(args.out / f"{NAME}.json", record)
    plot(per_split, summary, args.out / f"{NAME}.png")


if __name__ == "__main__":
    main()
