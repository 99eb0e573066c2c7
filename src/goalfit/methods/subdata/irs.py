"""The iterative refining strategy (IRS) of Ye & Xie: alternate exact z-steps and w-steps.

Algorithm 2 (linear SVM, GSVMF; and GLRF with :class:`~.wstep.LogisticStep`), Algorithm 4
(kernel SVM), Algorithm 5 (any estimator with ``sample_weight``; deep models), and the
multiclass version (GMSVMF, z-step Algorithm 3). With warm starts along a rho path
(:func:`irs_path`), random restarts, a stopping tolerance and an iteration cap.

The measure is one of the paper's named measures on labels and groups in {-1, +1} (``"omr"``,
``"fpr"``, ``"eo"``, ``"dp"``, ``"f1"`` with ``rho`` / ``epsilon``), or compiled goals as a
:class:`~.measure.SelectionMeasure` (any linear rate goal; the accuracy weights ``reward``
replace the ``1/N`` of Eq. 12 in the costs and the w-step).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .framework import fairness_value, multiclass_costs, selection_costs, step_weights
from .measure import SelectionMeasure
from .wstep import DegenerateSelection
from .zstep import select, select_goals, select_multiclass

__all__ = ["IRSResult", "irs", "irs_path"]


@dataclass
class IRSResult:
    """Outcome of an IRS run (the best iterate over restarts).

    Attributes
    ----------
    model : LinearModel or a fitted scikit-learn estimator
        The learner's fitted model (an :class:`EstimatorStep` fits its scikit-learn estimator).
    z : ndarray of shape (n,) (or (n, K) for multiclass), 0/1
        The selection paired with ``model`` (the z-step output the model was trained on).
    objective : float
        ``H(w, b, u, z)`` (Ye & Xie Eq. 12 and variants) at the returned iterate.
    fairness : float
        ``F(z)`` of the selection (``1 - F1`` for ``"f1"``).
    history : list of dict
        Per iteration: ``restart``, ``iteration``, ``objective_after_zstep``, ``objective``
        (after the w-step), ``fairness``, ``n_selected``, ``seconds``.
    n_iter : int
        Iterations of the run that produced the returned iterate.
    converged : bool
        Whether that run stopped by the tolerance (not the cap or a degenerate selection).
    stop_reason : str
    seconds : float
        Wall-clock seconds of the whole call: initial fits on all data (or the warm start),
        restart fits, every z-step and w-step (``history`` times only the iterations); for
        :func:`irs_path`, everything run for that rho (the cold and the warm-started run).
    """

    model: Any  # LinearModel, or an estimator of scikit-learn (untyped)
    z: np.ndarray
    objective: float
    fairness: float
    history: list = field(default_factory=list)
    n_iter: int = 0
    converged: bool = False
    stop_reason: str = ""
    seconds: float = 0.0


def _goals(measure) -> bool:
    return isinstance(measure, SelectionMeasure)


def _evaluate(learner, model, X, y, g, z, *, measure, rho, t):
    """``H`` and ``F`` of (model, z)."""
    u = learner.outcomes(model, X, y)
    reg = learner.regularizer(model)
    if _goals(measure):
        if learner.multiclass:
            F = measure.fairness(z[np.arange(len(y)), y])
            return multiclass_costs(u, y, z, t, weights=measure.reward) + reg + measure.rho * F, F, u
        F = measure.fairness(z)
        return float(measure.costs(u, t, learner.kind) @ z) + reg + measure.rho * F, F, u
    if learner.multiclass:
        F = fairness_value("omr", z[np.arange(len(y)), y], np.ones(len(y), int), g)
        return multiclass_costs(u, y, z, t) + reg + rho * F, F, u
    c = selection_costs(u, t, y, kind=learner.kind, class_weighted=measure == "f1")
    F = fairness_value(measure, z, y, g)
    return float(c @ z) + reg + rho * F, F, u


def _zstep(learner, u, y, g, *, measure, rho, epsilon, t, zstep):
    """The z-step's :class:`~.zstep.Selection`."""
    if _goals(measure):
        if learner.multiclass:
            return select_multiclass(u, y, t=t, measure=measure, **zstep)
        return select_goals(measure.costs(u, t, learner.kind), measure, **zstep)
    if learner.multiclass:
        return select_multiclass(u, y, g, t=t, rho=rho, epsilon=epsilon)
    c = selection_costs(u, t, y, kind=learner.kind, class_weighted=measure == "f1")
    return select(c, y, g, measure=measure, rho=rho, epsilon=epsilon)


def _fit(learner, X, y, z, measure):
    """The w-step on selection ``z`` (the (n, K) assignment for a multiclass learner)."""
    if _goals(measure):
        if learner.multiclass:
            return learner.fit(X, y, z, scale=measure.reward * len(y))
        return learner.fit(X, y, measure.step_weights(z))
    return learner.fit(X, y, z if learner.multiclass else step_weights(z, y, measure))


def _feasible(measure, z, y, multiclass, epsilon, F) -> bool:
    if _goals(measure):
        return bool(measure.feasible(z[np.arange(len(y)), y] if multiclass else z))
    return epsilon is None or F <= epsilon + 1e-12


def _initial_selection(learner, u, t, y):
    if learner.multiclass:
        return np.eye(u.shape[1])[y]  # every point assigned its own class
    return (u <= t).astype(float) if learner.kind == "margin" else (u >= t).astype(float)


def _run(learner, X, y, g, model, z_start, *, measure, rho, epsilon, t, max_iter, tol, restart, history,
         zstep, callback):
    u = learner.outcomes(model, X, y)
    z = _initial_selection(learner, u, t, y)
    H_prev = _evaluate(learner, model, X, y, g, z, measure=measure, rho=rho, t=t)[0]
    best = None
    if z_start is not None:  # the starting model with the data it was trained on: a feasible point
        H0, F0, _ = _evaluate(learner, model, X, y, g, z_start, measure=measure, rho=rho, t=t)
        if _feasible(measure, z_start, y, learner.multiclass, epsilon, F0):
            best = (H0, F0, model, z_start)
        if callback is not None:
            callback({"restart": restart, "iteration": 0, "objective_after_zstep": H0, "objective": H0,
                      "fairness": F0, "n_selected": int(np.sum(z_start[np.arange(len(y)), y] if learner.multiclass
                                                                   else z_start)), "seconds": 0.0}, model, z_start)
    reason, converged, it = "max_iter", False, 0
    for it in range(1, max_iter + 1):
        t0 = time.perf_counter()
        sel = _zstep(learner, u, y, g, measure=measure, rho=rho, epsilon=epsilon, t=t, zstep=zstep)
        z = sel.z
        H_half = _evaluate(learner, model, X, y, g, z, measure=measure, rho=rho, t=t)[0]
        try:
            model = _fit(learner, X, y, z, measure)
        except DegenerateSelection as exc:
            reason = f"degenerate selection: {exc}"
            it -= 1
            break
        H, F, u = _evaluate(learner, model, X, y, g, z, measure=measure, rho=rho, t=t)
        row = {"restart": restart, "iteration": it, "objective_after_zstep": H_half,
               "objective": H, "fairness": F, "n_selected": int(np.sum(
                   z[np.arange(len(y)), y] if learner.multiclass else z)),
               "seconds": time.perf_counter() - t0}
        if _goals(measure):
            row["zstep"], row["zstep_exact"] = sel.solver, bool(sel.exact)
        history.append(row)
        if callback is not None:
            callback(row, model, z)
        if best is None or H < best[0]:
            best = (H, F, model, z.copy())
        if H_prev - H <= tol:
            reason, converged = "tolerance", True
            break
        H_prev = H
    return best, it, converged, reason


def irs(learner, X, y, g=None, *, measure="omr", rho: float = 0.0, epsilon: float | None = None,
        t: float = 1.0, max_iter: int = 50, tol: float = 1e-8, n_restarts: int = 0,
        init_model=None, random_state=None, zstep_solver: str = "auto", zstep_time_limit: float = 60.0,
        callback=None) -> IRSResult:
    """Iterative refining strategy (Ye & Xie Alg. 2, 4, 5; multiclass with Alg. 3).

    1. Train on all data (or start from ``init_model``: a warm start), compute outcomes ``u``.
    2. z-step: exact selection for the current ``u`` (:mod:`.zstep`).
    3. w-step: retrain on the selection (:mod:`.wstep`), recompute ``u`` for **all** points.
    4. Stop when the objective decreases by at most ``tol`` or after ``max_iter`` iterations.

    For learners whose w-step minimises the same objective (linear SVM, logistic regression,
    multiclass SVM) the objective never increases (Prop. 9); for kernel SVMs and black boxes
    the best iterate is kept. The starting model paired with the points it was trained on is a
    candidate too (so a first z-step that selects a single class, which logistic regression or
    an SVC cannot be trained on, returns the start rather than failing). ``n_restarts`` extra runs start from models trained on random
    subsets (each point kept with probability drawn from U(0.5, 1)); the best run is returned.

    Parameters
    ----------
    learner : a w-step object of :mod:`.wstep`
    X : ndarray of shape (n, d)
    y : ndarray of shape (n,)
        Labels in {-1, +1} (multiclass: codes ``0..K-1``).
    g : ndarray of shape (n,), values in {-1, +1}
        Groups of a named measure (unused with a SelectionMeasure).
    measure : {"omr", "fpr", "eo", "dp", "f1"} or SelectionMeasure
        A named measure (multiclass: "omr" only), or compiled goals
        (:meth:`SelectionMeasure.from_compiled`; their ``rho`` and enforced rows apply, the
        z-step is :func:`~.zstep.select_goals`).
    rho : float >= 0
        Fairness penalty (named measures).
    epsilon : float, optional
        Fairness constraint ``F(z) <= epsilon`` enforced in every z-step (named measures).
    t : float
        Threshold (margin for SVMs, log-likelihood for logistic, probability for black boxes).
    max_iter : int
    tol : float
        Stop when ``H_prev - H <= tol`` (the paper's delta; it gives no value).
    n_restarts : int
    init_model : optional
        Warm start (a model of the same learner, e.g. the previous rho's solution).
    random_state : int or Generator, optional
    zstep_solver : {"auto", "structured", "milp"}
        With a SelectionMeasure: the z-step (:func:`~.zstep.select_goals`).
    zstep_time_limit : float
        Seconds per MILP z-step.
    callback : callable, optional
        ``callback(row, model, z)`` after every w-step (``row`` is the history record, which
        the callback may extend) and once for each start with ``iteration = 0`` (the starting
        model and the data it was trained on).

    Returns
    -------
    IRSResult

    Raises
    ------
    ValueError
        Bad measure for a multiclass learner, or when every run hits a degenerate selection in
        its first iteration.
    """
    if learner.multiclass and not _goals(measure) and measure != "omr":
        raise ValueError("the multiclass IRS (GMSVMF) supports measure='omr' only")
    if max_iter < 1:
        raise ValueError(f"max_iter must be >= 1, got {max_iter}")
    started = time.perf_counter()
    rng = np.random.default_rng(random_state)
    n = len(y)
    history: list = []
    results = []
    starts = [init_model] if init_model is not None else [None]
    starts += [None] * n_restarts
    for r, start in enumerate(starts):
        keep = None
        if start is not None:
            model = start
        else:
            keep = np.ones(n) if r == 0 else (rng.random(n) < rng.uniform(0.5, 1.0)).astype(float)
            if learner.multiclass:  # a valid assignment: dropped points go to the next class
                K = learner.n_classes
                keep = np.eye(K)[np.where(keep > 0, y, (y + 1) % K)]
            try:  # the named measures start from the plain fit (Alg. 2 step 1); goals from their weights
                model = _fit(learner, X, y, keep, measure) if _goals(measure) else learner.fit(X, y, keep)
            except DegenerateSelection:
                continue
        best, it, conv, reason = _run(learner, X, y, g, model, keep, measure=measure, rho=rho, epsilon=epsilon,
                                      t=t, max_iter=max_iter, tol=tol, restart=r, history=history,
                                      zstep={"solver": zstep_solver, "time_limit": zstep_time_limit},
                                      callback=callback)
        if best is not None:
            results.append((best, it, conv, reason))
    if not results:
        raise ValueError("no IRS run produced a model: every start selected subdata the model cannot "
                         "be trained on (e.g. a single class); lower rho or change t")
    (H, F, model, z), it, conv, reason = min(results, key=lambda r: r[0][0])
    return IRSResult(model, z, H, F, history, it, conv, reason, time.perf_counter() - started)


def irs_path(learner, X, y, g, rhos, *, warm_start: bool = True, **kwargs) -> list[IRSResult]:
    """IRS along a path of rho values, each warm-started from the previous solution.

    Ye & Xie §5: warm starts along a rho grid "significantly improve convergence". With
    ``warm_start`` each rho also runs the cold start (training on all data, plus
    ``n_restarts``) and keeps the better of the two, so the path is never worse than
    independent runs; the warm-started run itself has no random restarts.

    Parameters
    ----------
    learner, X, y, g :
        As for :func:`irs`.
    rhos : sequence of float
        Penalties, in the order run.
    warm_start : bool, default True
    **kwargs :
        Passed to :func:`irs` (``measure``, ``epsilon``, ``t``, ``max_iter``, ...).

    Returns
    -------
    list of IRSResult, one per rho (in the given order); ``seconds`` is the wall-clock time of
    both runs for that rho.
    """
    out, prev = [], None
    for rho in rhos:
        res = irs(learner, X, y, g, rho=rho, **kwargs)
        if warm_start and prev is not None:
            warm = irs(learner, X, y, g, rho=rho, init_model=prev.model,
                       **{k: v for k, v in kwargs.items() if k != "n_restarts"})
            both = res.seconds + warm.seconds
            if warm.objective < res.objective:
                warm.history = res.history + warm.history
                res = warm
            res.seconds = both
        out.append(res)
        prev = res
    return out
