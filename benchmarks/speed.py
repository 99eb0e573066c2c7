"""Speed of every goalfit method against its base learner, one BLAS thread, CPU seconds.

Each case times a goalfit method and, in the same process and right before it, its reference:
one fit of the base learner on the same rows (``LogisticRegression`` / ``LinearSVC``) or, for the
binary plug-in on precomputed probabilities, one ``np.argsort`` of the n scores. The ratio
``method seconds / reference seconds`` is the number compared with the targets. Seconds are the
process's CPU time (every timed fit runs on one thread: its CPU time is its work, which the
other processes of a shared machine do not inflate as they do the wall clock; ``--wall`` times
with the wall clock; the load averages are recorded). The defaults and the Ramp cases at ratio
1.25 take the median of the per-pair ratios of interleaved (reference, method) pairs; the
other cases against a learner (Ramp at ratio 2, FairSubdata, AdaptiveSurrogate) time 3
interleaved pairs and divide the fastest of each (``interleaved``); the per-pair ratios are in
the JSON. Peak memory is measured in a separate, untimed run of the method under
``tracemalloc`` (numpy reports its buffers to it): the peak of what the method allocates beyond
its inputs.

Cases (targets):

* the defaults (``method="auto"``, no ``method_params``) on precomputed probabilities, against
  one LR fit of the same rows, median of interleaved (LR, goalfit) pairs: binary H-mean s.t.
  demographic parity <= 0.01 (2 groups), target <= 2x at 10^4, 10^5 and 10^6 rows; multiclass
  (5 classes x 3 groups) H-mean s.t. DP <= 0.02, target <= 5x at 10^4, 10^5 and 10^6 and the
  objective within 1e-3 of the 2000-iteration run (``method_params={"max_iter": 2000, "tol":
  0.0, "subsample": None, "exact_binary": False}``: the paper's Alg. 5 on the full sample);
* binary error s.t. DP <= 0.01 and EO <= 0.01 (``method="auto"``, the default oracle: the
  threshold oracle for a binary problem), 10^6 and 10^7 rows; target <= 1.5x one argsort at
  10^7, <= 40 bytes per row beyond the inputs, and no more memory than the plug-in oracle
  (``method_params={"oracle": "plugin"}``, timed and measured beside it);
* ``RampClassifier`` (error s.t. the fairness ratio ``ppr(Male) <= u ppr(Female)``; default
  inner solver, and ``inner_solver="liblinear"`` as the reference) on a9a (sparse) and Adult
  (one-hot, dense): u = 2 (3 interleaved pairs) and u = 1.25 (target <= 10x one LinearSVC fit,
  median of 5 interleaved pairs); a fresh Python process times its first Ramp fit against a
  second one (target <= 1.5x), run twice (the first process after an install compiles numba's
  kernels into its cache; the second one reads them);
* ``FairSubdataClassifier`` (IRS, linear SVM; GSVMF with the OMR penalty ``rho = 1``: the goal
  ``error_rate_difference() <= 0`` in the penalty form, the paper's rule ``f(x) > 0``) on Adult
  (10,000 rows); target <= 10x one LinearSVC fit;
* ``AdaptiveSurrogateClassifier("gmean")`` on Adult; target <= 20x one LR fit;
* the peer table: binary error s.t. DP <= 0.01 or equalized odds <= 0.01, 10^5 and 10^6
  training rows (and as many test rows), 2 and 5 groups: goalfit's default, fairlearn
  ``ThresholdOptimizer`` and OxonFair and Xian & Zhao's LP post-processing on the same
  precomputed LR probabilities, fairlearn ``ExponentiatedGradient`` (LR on the features) and
  FairGBM (equalized odds only; a boosted model on the features); fit time over goalfit's,
  train and test goal value (exact expectations for randomized classifiers). Xian & Zhao's
  ``postprocess.py`` (MIT) is imported at run time from ``../shared/peers/xian_zhao`` (or
  ``$GOALFIT_PEERS/xian_zhao``), not copied.

Synthetic data: ``X ~ N(mu_y + nu_g, I_20)`` with class means on a scaled simplex and group
shifts, seeded; the LR is fitted on it and its probabilities are the "precomputed" input.
"""
from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import inspect  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import machine_record, merge_previous, versions, write_results  # noqa: E402

import goalfit as gf  # noqa: E402

SEED = 0


# ============================================================================ data


def _labels_groups(rng, n, n_classes, n_groups):
    y = rng.integers(0, n_classes, n)
    g = rng.choice(n_groups, n, p=np.linspace(2, 1, n_groups) / np.linspace(2, 1, n_groups).sum())
    return y, g


def _features(rng, y, g, mu, nu, n_groups):
    X = rng.standard_normal((len(y), mu.shape[1]))
    X += mu[y]
    X += nu[g]
    return X, y, np.array([f"g{k}" for k in range(n_groups)])[g]


def _shifts(rng, n_classes, n_groups, d):
    """The class means and the group shifts."""
    return rng.normal(0, 0.25, (n_classes, d)), rng.normal(0, 0.5, (n_groups, d))


def synthetic(n, n_classes, n_groups, d=20, seed=SEED):
    """Gaussian classes shifted per group: X (n, d) float64, y (n,), group labels (n,)."""
    rng = np.random.default_rng(seed)
    y, g = _labels_groups(rng, n, n_classes, n_groups)
    mu, nu = _shifts(rng, n_classes, n_groups, d)
    return _features(rng, y, g, mu, nu, n_groups)


def synthetic_population(n, n_classes, n_groups, m, d=20, seed=SEED):
    """``m`` new rows from the distribution :func:`synthetic` draws its ``n`` rows from (the same
    class means and group shifts; rows from another stream): a sample large enough to stand for
    the population when measuring how a fit carries to new rows."""
    rng = np.random.default_rng(seed)
    _labels_groups(rng, n, n_classes, n_groups)  # the same stream up to the means
    mu, nu = _shifts(rng, n_classes, n_groups, d)
    fresh = np.random.default_rng([seed, 1])
    y, g = _labels_groups(fresh, m, n_classes, n_groups)
    return _features(fresh, y, g, mu, nu, n_groups)


def lr():
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(max_iter=1000)


def adult_dense():
    """Adult training split, one-hot + standardized (the CLI's preprocessing), dense float64."""
    from goalfit.datasets import load_dataset

    tr = load_dataset("adult", subset="train")
    pre = gf.make_estimator("logistic_regression")[:-1]
    X = pre.fit_transform(tr.data)
    X = X.toarray() if hasattr(X, "toarray") else np.asarray(X)
    return np.ascontiguousarray(X, dtype=float), np.asarray(tr.target), np.asarray(tr.sensitive_features["sex"]).astype(str)


def a9a_sparse():
    from goalfit.datasets import load_dataset

    tr = load_dataset("a9a", subset="train")
    X = tr.data.tocsr()
    X.indices, X.indptr = X.indices.astype(np.int32), X.indptr.astype(np.int32)  # liblinear's index type
    return X, np.asarray(tr.target), np.asarray(tr.sensitive_features["sex"]).astype(str)


# ============================================================================ timing


#: the clock of every timing: CPU seconds of this process (``--wall``: wall-clock seconds). Every
#: timed fit runs on one thread, so its CPU time is its work; on a shared machine the wall clock
#: also counts the time other processes held the cores (load averages are recorded beside).
CLOCK = time.process_time


def timed(fn):
    t0 = CLOCK()
    out = fn()
    return CLOCK() - t0, out


def interleaved(ref, fit, repeats, median=False):
    """Time ``repeats`` (reference, method) pairs one after the other: the record's seconds.

    The ratio is the fastest method run over the fastest reference run: on a shared VM single
    runs of the same fit varied up to 2x (the least-disturbed run of each is the comparable
    one); the per-pair ratios and the ratio of medians are kept beside it. ``median=True``: the
    record's ``ratio`` is the median of the per-pair ratios and its seconds the medians.
    Returns ``(record, the last fitted model)``.
    """
    refs, secs, m = [], [], None
    for _ in range(repeats):
        refs.append(timed(ref)[0])
        sec, m = timed(fit)
        secs.append(sec)
    rec = {"reference_seconds": min(refs), "seconds": min(secs), "reference_runs": refs, "method_runs": secs,
           "ratio_runs": [b / a for a, b in zip(refs, secs)],
           "ratio_of_medians": float(np.median(secs) / np.median(refs)),
           "ratio_median_of_pairs": float(np.median([b / a for a, b in zip(refs, secs)])),
           "timing": f"min of {repeats} interleaved (reference, method) pairs"}
    if median:
        rec.update(reference_seconds=float(np.median(refs)), seconds=float(np.median(secs)),
                   ratio=rec["ratio_median_of_pairs"],
                   timing=f"median of {repeats} interleaved (reference, method) pairs")
    return rec, m


def peak_bytes(fn):
    """Peak bytes allocated by ``fn()`` beyond what existed before (tracemalloc)."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def supports(method, name):
    """Whether the plug-in ``method`` accepts the keyword ``name`` (the stopping rule's switch)."""
    from goalfit.methods.plugin import METHODS

    return name in inspect.signature(METHODS[method]).parameters


def ref_lr(X, y, repeats):
    ts = [timed(lambda: lr().fit(X, y))[0] for _ in range(repeats)]
    return float(np.median(ts))


def svc_fit(X, y):
    from sklearn.svm import LinearSVC

    return LinearSVC(C=1.0, random_state=0).fit(X, y)


# ============================================================================ cases


def case_plugin_hmean(n, n_classes, n_groups, bound, repeats, memory, reference_run):
    """H-mean s.t. DP <= ``bound`` with the defaults (``method="auto"``, no ``method_params``) on
    precomputed probabilities, against one LR fit of the same rows: median of ``repeats``
    interleaved (LR, goalfit) pairs."""
    X, y, g = synthetic(n, n_classes, n_groups)
    lr().fit(X[:2000], y[:2000])  # warm-up: the first fit of a process pays for imports
    P = lr().fit(X, y).predict_proba(X)
    cons = [gf.demographic_parity_difference("group") <= bound]

    def fit(params=None, method="auto"):
        return gf.GoalClassifier("precomputed", objective="hmean", constraints=cons, method=method,
                                 method_params=params).fit(P, y, sensitive_features={"group": g})

    fit()  # warm-up: goalfit's lazy imports and first calls are not the method's
    out, m = interleaved(lambda: lr().fit(X, y), fit, repeats, median=True)
    del X
    out.update({"reference": "one LogisticRegression fit", "method": m.method_, "defaults": True,
                "oracle_calls": int(m.result_.n_oracle_calls),
                "objective_train": float(m.problem_.objective.value(m.result_.confusion)),
                "max_violation_train": float(m.problem_.max_violation(m.result_.confusion)),
                "message": m.result_.message, "load_average": os.getloadavg()})
    if reference_run:
        # the paper's Alg. 5 on the full sample: no stopping rule, no binary fast path, no
        # coarse-to-fine subsample
        ref_params = {"max_iter": 2000, "tol": 0.0, "subsample": None, "exact_binary": False}
        s2, m2 = timed(lambda: fit(ref_params, "split_frank_wolfe"))
        out["objective_2000_iterations"] = float(m2.problem_.objective.value(m2.result_.confusion))
        out["seconds_2000_iterations"] = s2
        out["objective_gap_vs_2000"] = out["objective_train"] - out["objective_2000_iterations"]
    if memory:
        out["peak_bytes"] = peak_bytes(fit)
    return out


def case_binary_fair(n, kind, repeats, memory):
    """Error s.t. DP or EO <= 0.01 (method "auto") on precomputed binary probabilities."""
    rng = np.random.default_rng(SEED)
    g = np.where(rng.random(n) < 0.6, "a", "b")
    score = rng.standard_normal(n) + np.where(g == "a", 0.3, 0.0)
    y = (rng.random(n) < 1 / (1 + np.exp(-2 * score))).astype(np.int64)
    p1 = 1 / (1 + np.exp(-score))
    P = np.column_stack([1 - p1, p1])
    del score, p1
    score1 = np.ascontiguousarray(P[:, 1])
    # the reference (3.8 s = 2.6x at 10^7) is numpy's stable argsort, the sort the
    # oracle needs; the default (introsort, SIMD) one is recorded beside it
    ref = float(np.median([timed(lambda: np.argsort(score1, kind="stable"))[0] for _ in range(repeats)]))
    ref_quick = float(np.median([timed(lambda: np.argsort(score1))[0] for _ in range(repeats)]))
    del score1
    con = (gf.demographic_parity_difference("group") if kind == "dp" else gf.equalized_odds_difference("group")) <= 0.01

    def fit(params=None):
        return gf.GoalClassifier("precomputed", objective="error", constraints=[con], method_params=params).fit(
            P, y, sensitive_features={"group": g})

    fit()  # warm-up: imports and first-call costs are not the method's
    sec, m = timed(fit)
    out = {"reference": "one stable np.argsort of the n scores", "reference_seconds": ref, "seconds": sec,
           "argsort_default_seconds": ref_quick, "ratio_vs_default_argsort": sec / ref_quick,
           "method": m.method_, "oracle": str(getattr(m, "oracle_", "auto")),
           "message": m.result_.message, "max_violation_train": float(m.problem_.max_violation(m.result_.confusion))}
    # the plug-in oracle beside the default (the threshold oracle): its time and memory
    sec_p, m_p = timed(lambda: fit({"oracle": "plugin"}))
    out.update(seconds_plugin_oracle=sec_p, ratio_plugin_oracle=sec_p / ref,
               max_violation_train_plugin_oracle=float(m_p.problem_.max_violation(m_p.result_.confusion)))
    del m_p
    if memory:
        out["peak_bytes"] = peak_bytes(fit)
        out["bytes_per_row"] = out["peak_bytes"] / n
        out["peak_bytes_plugin_oracle"] = peak_bytes(lambda: fit({"oracle": "plugin"}))
        out["bytes_per_row_plugin_oracle"] = out["peak_bytes_plugin_oracle"] / n
    return out


def case_ramp(dataset, repeats, memory, inner=None, ratio=2.0, median=False):
    X, y, s = a9a_sparse() if dataset == "a9a" else adult_dense()
    cons = [gf.positive_prediction_rate(group="Male") <= ratio * gf.positive_prediction_rate(group="Female")]
    kw = {} if inner is None else {"method_params": {"inner_solver": inner}}

    def fit(rows=slice(None)):
        return gf.RampClassifier("error", cons, random_state=0, **kw).fit(X[rows], y[rows],
                                                                         sensitive_features={"sex": s[rows]})

    # warm-up: imports and first-call costs (numba's compiled kernels load from its cache) are
    # not the method's; recorded as first_call_seconds
    first, _ = timed(lambda: fit(slice(0, 400)))
    out, m = interleaved(lambda: svc_fit(X, y), fit, repeats, median=median)
    out.update({"reference": "one LinearSVC fit", "inner_solver": (m.method_params or {}).get("inner_solver", "dcd"),
                "fairness_ratio": ratio, "first_call_seconds": first, "load_average": os.getloadavg(),
           "n_inner": int(sum(h["n_inner"] for h in m.history_)), "mm_iterations": int(m.n_iter_),
           "objective_train": float(m.objective_), "max_violation_train": float(m.max_violation_),
           "accuracy_train": float((m.predict(X) == y).mean())})
    if memory:
        out["peak_bytes"] = peak_bytes(fit)
    return out


FRESH = """
import os, sys, time
for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[v] = "1"
sys.path.insert(0, {here!r})
clock = {clock}
t0 = clock()
import goalfit as gf
from goalfit import RampClassifier  # what a script's imports load (goalfit's estimators are lazy)
from speed import a9a_sparse, adult_dense
t_import = clock() - t0
X, y, s = {loader}()
cons = [gf.positive_prediction_rate(group="Male") <= {ratio} * gf.positive_prediction_rate(group="Female")]
runs = []
for _ in range(2):
    t0 = clock()
    RampClassifier("error", cons, random_state=0).fit(X, y, sensitive_features={{"sex": s}})
    runs.append(clock() - t0)
print(t_import, runs[0], runs[1])
"""


def case_ramp_fresh(dataset, ratio=1.25, processes=2):
    """First ``RampClassifier`` fit of a fresh Python process against its second (warm) fit.

    Each process imports goalfit and ``RampClassifier`` (timed apart: the import seconds),
    loads the data and fits twice; ``processes`` processes run one after the other. numba compiles the solver's kernels with ``cache=True``: the first
    process after an install (or after a change of the kernels) compiles them into the cache,
    the next ones load them. The record's ratio is the last process's first / warm fit.
    """
    import subprocess

    code = FRESH.format(here=str(HERE), loader="a9a_sparse" if dataset == "a9a" else "adult_dense", ratio=ratio,
                        clock="time.process_time" if CLOCK is time.process_time else "time.perf_counter")
    runs = []
    for _ in range(processes):
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                              env={**os.environ, "PYTHONWARNINGS": "ignore"})
        t_import, first, warm = map(float, done.stdout.split()[-3:])
        runs.append({"import_seconds": t_import, "first_fit_seconds": first, "warm_fit_seconds": warm,
                     "first_over_warm": first / warm})
    last = runs[-1]
    return {"reference": "the second RampClassifier fit of the same fresh process", "fairness_ratio": ratio,
            "reference_seconds": last["warm_fit_seconds"], "seconds": last["first_fit_seconds"],
            "ratio": last["first_over_warm"], "processes": runs, "load_average": os.getloadavg(),
            "timing": f"{processes} fresh processes one after the other; the ratio is the last one's"}


def case_subdata(n_rows, repeats, memory):
    X, y, s = adult_dense()
    rows = np.random.default_rng(SEED).permutation(len(y))[:n_rows]
    X, y, s = X[rows], y[rows], s[rows]

    def fit():
        return gf.FairSubdataClassifier("error", [gf.error_rate_difference() <= 0], method="irs", random_state=0,
                                        method_params={"form": "penalty", "rho": 1.0, "decision_threshold": 0.0,
                                                       "iterate": "objective"}).fit(X, y, sensitive_features=s)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out, m = interleaved(lambda: svc_fit(X, y), fit, repeats)
        out.update({"reference": "one LinearSVC fit", "n_iter": int(getattr(m, "n_iter_", -1))})
        if memory:
            out["peak_bytes"] = peak_bytes(fit)
    return out


def case_surrogate(repeats, memory):
    X, y, s = adult_dense()
    rng = np.random.default_rng(SEED)
    val = rng.random(len(y)) < 1 / 3
    Xtr, ytr, Xv, yv = X[~val], y[~val], X[val], y[val]

    def fit():
        return gf.AdaptiveSurrogateClassifier("gmean", random_state=0).fit(Xtr, ytr, X_val=Xv, y_val=yv)

    def fit_constrained():  # G-mean s.t. demographic parity: the multipliers' extra work per step
        return gf.AdaptiveSurrogateClassifier("gmean", [gf.demographic_parity_difference() <= 0.02],
                                              random_state=0).fit(Xtr, ytr, sensitive_features=s[~val], X_val=Xv,
                                                                  y_val=yv, sensitive_features_val=s[val])

    out, m = interleaved(lambda: lr().fit(Xtr, ytr), fit, repeats)
    out.update({"reference": "one LogisticRegression fit (training part)",
                "validation_metric": float(m.validation_metric_), "n_metric_calls": int(m.n_metric_calls_)})
    sec_c, mc = timed(fit_constrained)
    out["constrained"] = {"goal": "gmean s.t. demographic_parity_difference <= 0.02 (validation)",
                          "seconds": sec_c, "validation_metric": float(mc.validation_metric_),
                          "validation_max_violation": float(mc.selection_max_violation_),
                          "n_metric_calls": int(mc.n_metric_calls_)}
    # how the perturbed models are multiplied (LinearScorer batch_sparse="auto"): work per row
    from goalfit.methods.surrogate import LinearScorer

    sc = LinearScorer(Xtr, batch_dtype=np.float32)
    op = sc.batch_operator
    out["batch_form"] = sc.batch_form
    if op is not None:
        out["batch_sparse_nonzeros_per_row"] = op.sparse.nnz / len(Xtr)
        out["batch_dense_columns"] = int(op.dense.shape[1])  # including the offsets' column of ones
    out["batch_columns"] = sc.n_params
    if memory:
        out["peak_bytes"] = peak_bytes(fit)
    return out


# ============================================================================ peers


def peers_path():
    """The folder holding peer code that is not a package (Xian & Zhao), or None."""
    for cand in (os.environ.get("GOALFIT_PEERS"), HERE.parent.parent / "shared" / "peers"):
        if cand and Path(cand, "xian_zhao", "postprocess.py").exists():
            return Path(cand)
    return None


def _scores_estimator():
    """A fitted "estimator" whose probabilities are its one input column (fairlearn's prefit input)."""
    from sklearn.base import BaseEstimator, ClassifierMixin

    class Scores(ClassifierMixin, BaseEstimator):
        def fit(self, X, y):
            self.classes_ = np.array([0, 1])
            return self

        def predict_proba(self, X):
            p = np.asarray(X, float)[:, 0]
            return np.column_stack([1 - p, p])

        def predict(self, X):
            return (np.asarray(X, float)[:, 0] >= 0.5).astype(int)

    return Scores().fit(None, None)


def fairgbm_shim():
    """FairGBM 0.9.14 calls scikit-learn's ``check_X_y(force_all_finite=...)``, renamed
    ``ensure_all_finite`` in scikit-learn 1.8: map the keyword (in this benchmark only)."""
    import fairgbm.sklearn as fs
    from sklearn.utils import check_array, check_X_y

    fs._LGBMCheckXY = lambda *a, force_all_finite=True, **k: check_X_y(*a, ensure_all_finite=force_all_finite, **k)
    fs._LGBMCheckArray = lambda *a, force_all_finite=True, **k: check_array(*a, ensure_all_finite=force_all_finite, **k)


def case_peers(n, n_groups, kind, peers, skips=None):
    """Binary error s.t. DP <= 0.01 (``kind="dp"``) or equalized odds <= 0.01 (``"eo"``): goalfit's
    default against the peers, on ``n`` training and ``n`` test rows of the synthetic problem.

    The post-processors read the same precomputed LR probabilities (group-aware); EG refits LR
    on the features, FairGBM boosts on them. Goal values are goalfit's
    (:func:`goalfit.metrics.evaluate_problem`, exact expectations over the randomization of
    goalfit, ThresholdOptimizer and EG; the others are deterministic). A peer that raises is
    recorded with its error; ``skips``: name -> (predicate of (rows, groups), reason) for peers
    not run at a size (recorded with the reason).
    """
    from sklearn.linear_model import LogisticRegression
    from goalfit.metrics import evaluate_problem

    X, y, g = synthetic(2 * n, 2, n_groups)
    tr, te = slice(0, n), slice(n, 2 * n)
    (Xa, ya, ga), (Xb, yb, gb) = (X[tr], y[tr], g[tr]), (X[te], y[te], g[te])
    del X
    lr().fit(Xa[:2000], ya[:2000])
    t_lr, base = timed(lambda: lr().fit(Xa, ya))
    Pa, Pb = base.predict_proba(Xa), base.predict_proba(Xb)
    goal = (gf.demographic_parity_difference("group") if kind == "dp" else gf.equalized_odds_difference("group")) <= 0.01
    problem = gf.Problem("error", [goal])
    codes = {v: k for k, v in enumerate(np.unique(ga))}
    ca, cb = np.array([codes[v] for v in ga]), np.array([codes[v] for v in gb])

    def values(D, yy, gg):
        ev = evaluate_problem(problem, yy, np.asarray(D, float), sensitive_features={"group": gg}, classes=np.array([0, 1]))
        return float(ev["accuracy"]), float(ev["constraints"][0]["value"])

    def one_hot(pred):
        pred = np.asarray(pred).astype(int)
        return np.column_stack([1 - pred, pred]).astype(float)

    def gf_fit():
        return gf.GoalClassifier("precomputed", constraints=[goal]).fit(Pa, ya, sensitive_features={"group": ga})

    gf_fit()  # warm-up
    secs = []
    for _ in range(3):
        sec, m = timed(gf_fit)
        secs.append(sec)
    t_gf = float(np.median(secs))
    rows = {"goalfit (default)": {"seconds": t_gf, "runs": secs, "method": m.method_,
                                  "D": (lambda P, gg: m.predict_proba(P, sensitive_features={"group": gg}), "proba")}}
    # the exact per-group thresholds on the sample (method_params={"oracle": "threshold"}): what
    # ThresholdOptimizer optimizes over, whatever the calibration within the groups
    sec_t, mt = timed(lambda: gf.GoalClassifier("precomputed", constraints=[goal], method_params={"oracle": "threshold"})
                      .fit(Pa, ya, sensitive_features={"group": ga}))
    rows["goalfit (oracle='threshold')"] = {"seconds": sec_t, "method": mt.method_,
                                            "D": (lambda P, gg: mt.predict_proba(P, sensitive_features={"group": gg}), "proba")}

    def run_peer(name, fit, predict, needs):
        if name not in peers:
            return
        if skips is not None and name in skips and skips[name][0](n, n_groups):
            rows[name] = {"skipped": skips[name][1]}
            return
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                sec, obj = timed(fit)
                rows[name] = {"seconds": sec, "D": (lambda a, b, obj=obj: predict(obj, a, b), needs)}
            except Exception as e:  # noqa: BLE001 - record what a peer raises
                rows[name] = {"error": f"{type(e).__name__}: {str(e)[:300]}"}

    # fairlearn ThresholdOptimizer on the same probabilities (prefit "estimator" = the scores)
    def to_fit():
        from fairlearn.postprocessing import ThresholdOptimizer

        con, tol = ("demographic_parity", 0.01) if kind == "dp" else ("equalized_odds", None)
        return ThresholdOptimizer(estimator=_scores_estimator(), constraints=con, prefit=True, predict_method="predict_proba",
                                  tol=tol).fit(Pa[:, 1:], ya, sensitive_features=ga)

    run_peer("fairlearn ThresholdOptimizer", to_fit,
             lambda o, P, gg: o._pmf_predict(P[:, 1:], sensitive_features=gg), "proba")

    # fairlearn ExponentiatedGradient: LR refitted on the features (bound vs the overall rate: half the gap)
    def eg_fit():
        from fairlearn.reductions import DemographicParity, EqualizedOdds, ExponentiatedGradient

        moment = (DemographicParity if kind == "dp" else EqualizedOdds)(difference_bound=0.005)
        return ExponentiatedGradient(LogisticRegression(max_iter=1000), moment).fit(Xa, ya, sensitive_features=ga)

    run_peer("fairlearn ExponentiatedGradient (LR refits)", eg_fit, lambda o, X_, gg: o._pmf_predict(X_), "X")

    # OxonFair on the same probabilities (predictor None: the data are the scores)
    def ox_fit():
        from oxonfair import FairPredictor
        from oxonfair import group_metrics as gm

        fp = FairPredictor(None, {"data": Pa, "target": ya, "groups": ga})
        fp.fit(gm.accuracy, gm.demographic_parity if kind == "dp" else gm.equalized_odds, 0.01)
        return fp

    run_peer("OxonFair", ox_fit, lambda o, P, gg: one_hot(o.predict({"data": P, "target": np.zeros(len(P), int), "groups": gg})),
             "proba")

    # Xian & Zhao's LP (attribute-aware input 1[A = a] P(Y | X)), HiGHS through cvxpy
    def xz_fit():
        root = peers_path()
        if root is None:
            raise FileNotFoundError("../shared/peers/xian_zhao/postprocess.py not found (set GOALFIT_PEERS)")
        sys.path.insert(0, str(root / "xian_zhao"))
        import cvxpy as cp
        from postprocess import PostProcessor

        def joint(Z):
            out = np.zeros((len(Z), n_groups, 2))
            out[np.arange(len(Z)), Z[:, 0].astype(int)] = np.column_stack([1 - Z[:, 1], Z[:, 1]])
            return out

        pp = PostProcessor(2, n_groups, pred_ay_fn=joint, criterion="sp" if kind == "dp" else "eo", alpha=0.01, seed=0)
        return pp.fit(np.column_stack([ca, Pa[:, 1]]), solver=cp.HIGHS)

    run_peer("Xian & Zhao LP", xz_fit,
             lambda o, P, gg: one_hot(o.predict(np.column_stack([ca if gg is ga else cb, P[:, 1]]))), "proba")

    # FairGBM (equalized odds as FPR and FNR parity; no demographic parity): boosted on the features
    if kind == "eo":
        def fgbm_fit():
            fairgbm_shim()
            from fairgbm import FairGBMClassifier

            return FairGBMClassifier(constraint_type="FPR,FNR", n_estimators=100, n_jobs=1, random_state=0,
                                     constraint_fpr_tolerance=0.01, constraint_fnr_tolerance=0.01).fit(
                Xa, ya, constraint_group=ca)

        run_peer("FairGBM (boosted on the features)", fgbm_fit, lambda o, X_, gg: one_hot(o.predict(X_)), "X")
    out = {"n_train": n, "n_test": n, "n_groups": n_groups, "goal": f"error s.t. {goal}",
           "lr_fit_seconds": t_lr, "goalfit_seconds": t_gf, "load_average": os.getloadavg(), "peers": {}}
    for name, r in rows.items():
        if "D" not in r:
            out["peers"][name] = r
            continue
        fn, needs = r.pop("D")
        A, B = (Pa, Pb) if needs == "proba" else (Xa, Xb)
        try:
            acc_a, v_a = values(fn(A, ga), ya, ga)
            acc_b, v_b = values(fn(B, gb), yb, gb)
        except Exception as e:  # noqa: BLE001 - record what a peer's predict raises
            out["peers"][name] = {"error": f"predict: {type(e).__name__}: {str(e)[:300]}"}
            continue
        out["peers"][name] = {**r, "ratio_to_goalfit": r["seconds"] / t_gf, "train_accuracy": acc_a,
                              "train_value": v_a, "test_accuracy": acc_b, "test_value": v_b}
    return out


# ============================================================================ driver


PEERS = ("fairlearn ThresholdOptimizer", "fairlearn ExponentiatedGradient (LR refits)", "OxonFair", "Xian & Zhao LP",
         "FairGBM (boosted on the features)")
#: peers not run at some (rows, groups), with the reason recorded in the JSON
PEER_SKIPS = {
    "Xian & Zhao LP": (lambda n, groups: n > 10**5 or groups > 2,
                       "run at 10^5 rows and 2 groups only: its LP (2 n variables, built by cvxpy, solved by "
                       "HiGHS) took 420 s for demographic parity at 10^5 rows"),
    "OxonFair": (lambda n, groups: groups > 2,
                 "not run with 5 groups: its threshold search (about 30 steps per group, 30^5 combinations) "
                 "did not finish within 5 minutes at 10^5 rows"),
    "fairlearn ExponentiatedGradient (LR refits)": (lambda n, groups: n > 10**5 and groups > 2,
                                                    "not run at 10^6 rows with 5 groups: about 50 LR fits of "
                                                    "10^6 rows per goal (run with 2 groups)"),
}


def plan(quick):
    """(name, group, target ratio or None, size, thunk) for every case."""
    P = []
    for n in ((10**4,) if quick else (10**4, 10**5, 10**6)):
        P.append((f"multiclass hmean+DP defaults n={n:.0e}", "multiclass_default", 5.0, n,
                  lambda mem, n=n: case_plugin_hmean(n, 5, 3, 0.02, 3, mem, reference_run=True)))
    for n in ((10**4,) if quick else (10**4, 10**5, 10**6)):
        P.append((f"binary hmean+DP defaults n={n:.0e}", "binary_default", 2.0, n,
                  lambda mem, n=n: case_plugin_hmean(n, 2, 2, 0.01, 5, mem, reference_run=True)))
    for n in ((10**6,) if quick else (10**6, 10**7)):
        for kind in ("dp", "eo"):
            P.append((f"binary error+{kind.upper()} n={n:.0e}", "binary_fair", 1.5 if n == 10**7 else None, n,
                      lambda mem, n=n, kind=kind: case_binary_fair(n, kind, 3, mem)))
    if not quick:
        for ds in ("a9a", "adult"):
            P.append((f"RampClassifier fairness ratio {ds}", "ramp", 10.0, ds,
                      lambda mem, ds=ds: case_ramp(ds, 3, mem)))
            P.append((f"RampClassifier fairness ratio {ds} (liblinear inner)", "ramp_liblinear", None, ds,
                      lambda mem, ds=ds: case_ramp(ds, 1, mem, inner="liblinear")))
            P.append((f"RampClassifier fairness ratio 1.25 {ds}", "ramp_125", 10.0, ds,
                      lambda mem, ds=ds: case_ramp(ds, 5, mem, ratio=1.25, median=True)))
            P.append((f"RampClassifier fairness ratio 1.25 {ds} fresh process", "ramp_fresh", 1.5, ds,
                      lambda mem, ds=ds: case_ramp_fresh(ds, 1.25)))
        P.append(("FairSubdataClassifier svm irs adult n=10000", "subdata", 10.0, 10000,
                  lambda mem: case_subdata(10000, 3, mem)))
        P.append(("AdaptiveSurrogateClassifier gmean adult", "surrogate", 20.0, "adult",
                  lambda mem: case_surrogate(3, mem)))
    for n in ((10**4,) if quick else (10**5, 10**6)):
        for groups in ((2,) if quick else (2, 5)):
            for kind in ("dp", "eo"):
                P.append((f"peers binary error+{kind.upper()} n={n:.0e} groups={groups}", "peers", None, n,
                          lambda mem, n=n, groups=groups, kind=kind: case_peers(n, groups, kind, PEERS, PEER_SKIPS)))
    return P


def peer_rows(name, r):
    """The results-file rows of one peer case: per peer, its time, ratio and goal values."""
    out = []
    for peer, d in r["peers"].items():
        base = {"experiment": name, "dataset": "synthetic", "method": peer, "paper_value": None, "spread": None,
                "seconds": d.get("seconds")}
        if "seconds" not in d:
            out.append({**base, "metric": "not_run", "split": "train", "value": None, "lower_is_better": True,
                        "note": d.get("error") or d.get("skipped")})
            continue
        out += [{**base, "metric": "fit_seconds", "split": "train", "value": d["seconds"], "lower_is_better": True},
                {**base, "metric": "ratio_to_goalfit_default", "split": "train", "value": d["ratio_to_goalfit"],
                 "lower_is_better": True},
                {**base, "metric": "goal_value", "split": "train", "value": d["train_value"], "lower_is_better": True},
                {**base, "metric": "goal_value", "split": "test", "value": d["test_value"], "lower_is_better": True},
                {**base, "metric": "accuracy", "split": "test", "value": d["test_accuracy"], "lower_is_better": False}]
    return out


def print_peers(name, r):
    print(f"{name} (LR fit {r['lr_fit_seconds']:.2f} s, load {r['load_average'][0]:.1f})")
    for peer, d in r["peers"].items():
        if "seconds" not in d:
            print(f"    {peer:46s} {(d.get('error') or d.get('skipped'))[:90]}")
            continue
        print(f"    {peer:46s} {d['seconds']:8.2f} s  x{d['ratio_to_goalfit']:7.1f}  goal train {d['train_value']:.4f} "
              f"test {d['test_value']:.4f}  test acc {d['test_accuracy']:.4f}", flush=True)


def combine(paths, out_path):
    """One results file from the files of parts run with ``--only``: rows and details joined,
    seconds of the longest part (they run side by side), machine and versions of the first."""
    import json

    recs = [json.loads(Path(p).read_text()) for p in paths]
    out = dict(recs[0])
    out.update(created=max(r["created"] for r in recs), seconds=max(r["seconds"] for r in recs),
               parts=[{"file": str(p), "created": r["created"], "seconds": r["seconds"],
                       "load_average_end": r.get("load_average_end"), "cases": list(r["details"])}
                      for p, r in zip(paths, recs)],
               details={k: v for r in recs for k, v in r["details"].items()},
               rows=[row for r in recs for row in r["rows"]])
    write_results(out_path, out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="smallest size of the plug-in cases and a 10^4-row peer "
                                                         "table (2 groups) only (~3 min)")
    ap.add_argument("--only", default=None, help="comma-separated: run the cases whose group contains one of these strings")
    ap.add_argument("--no-memory", action="store_true", help="skip the tracemalloc runs")
    ap.add_argument("--out", default=str(HERE / "results" / "speed.json"))
    ap.add_argument("--merge", action="store_true", help="keep the other cases of the existing results file")
    ap.add_argument("--wall", action="store_true", help="time with the wall clock instead of CPU seconds")
    ap.add_argument("--combine", nargs="+", help="results files of parts run with --only (e.g. in parallel "
                                                  "processes): write their cases as one results file to --out")
    args = ap.parse_args(argv)
    if args.combine:
        return combine(args.combine, args.out)
    global CLOCK
    CLOCK = time.perf_counter if args.wall else time.process_time
    t_all = time.perf_counter()
    rows, details = [], {}
    print(f"{'case':48s} {'ref s':>8s} {'method s':>9s} {'ratio':>7s} {'target':>7s} {'peak MB':>8s}")
    with threadpool_limits(limits=1):
        for name, group, target, size, thunk in plan(args.quick):
            if args.only and not any(o in group for o in args.only.split(",")):
                continue
            r = thunk(not args.no_memory)
            if group == "peers":
                details[name] = dict(r, group=group, size=size)
                rows.extend(peer_rows(name, r))
                print_peers(name, r)
                continue
            ratio = r.get("ratio", r["seconds"] / r["reference_seconds"])
            r.update(ratio=ratio, target_ratio=target, target_met=None if target is None else bool(ratio <= target),
                     group=group, size=size)
            details[name] = r
            mb = r.get("peak_bytes")
            print(f"{name:48s} {r['reference_seconds']:8.3f} {r['seconds']:9.3f} {ratio:7.2f} "
                  f"{'' if target is None else f'{target:.1f}':>7s} {'' if mb is None else f'{mb / 2**20:8.1f}':>8s}"
                  + (f"  dObj={r['objective_gap_vs_2000']:+.1e}" if "objective_gap_vs_2000" in r else "")
                  + (f"  plug-in oracle x{r['ratio_plugin_oracle']:.2f}" if "ratio_plugin_oracle" in r else "")
                  + (f" {r['peak_bytes_plugin_oracle'] / 2**20:.1f} MB" if "peak_bytes_plugin_oracle" in r else "")
                  + f"  load {os.getloadavg()[0]:.1f}", flush=True)
            base = {"experiment": name, "dataset": "synthetic" if isinstance(size, int) and group != "subdata" else "adult" if not group.startswith("ramp") else size,
                    "method": group, "split": "train", "spread": None, "paper_value": None, "seconds": r["seconds"]}
            rows.append({**base, "metric": "ratio_vs_reference", "value": ratio, "lower_is_better": True,
                         "target": target})
            rows.append({**base, "metric": "seconds", "value": r["seconds"], "lower_is_better": True})
            if mb is not None:
                rows.append({**base, "metric": "peak_memory_bytes", "value": float(mb), "lower_is_better": True})
            if "peak_bytes_plugin_oracle" in r:
                rows.append({**base, "method": "binary_fair plug-in oracle", "metric": "peak_memory_bytes",
                             "value": float(r["peak_bytes_plugin_oracle"]), "lower_is_better": True})
            if "objective_gap_vs_2000" in r:
                rows.append({**base, "metric": "objective_minus_2000_iteration_objective",
                             "value": r["objective_gap_vs_2000"], "lower_is_better": True})
    if args.merge:
        rows, details, _ = merge_previous(args.out, rows, details)
    out = {"created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "seconds": time.perf_counter() - t_all,
           "machine": machine_record(), "versions": versions(), "seeds": [SEED], "quick": args.quick,
           "load_average_end": os.getloadavg(), "clock": "wall" if args.wall else "process CPU time",
           "notes": "seconds are CPU seconds of the process (every timed fit runs on one thread; --wall: wall clock); "
                    "ratios: method seconds / reference seconds, measured one after the other in one process, "
                    "1 BLAS thread (defaults and Ramp at ratio 1.25: median of the per-pair ratios of interleaved "
                    "pairs; Ramp at ratio 2, FairSubdata, AdaptiveSurrogate: fastest of 3 interleaved pairs each); "
                    "peak memory by tracemalloc in a separate run; peers: one fit each (goalfit: median of 3)",
           "details": details, "rows": rows}
    write_results(args.out, out)


if __name__ == "__main__":
    main()
