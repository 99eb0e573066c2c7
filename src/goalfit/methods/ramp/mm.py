"""Majorization-minimization for the ramp relaxation (Goh et al., NIPS 2016, Alg. 1).

Problem 2 (the ramp relaxation: expected rates of the randomized classifier that predicts
positive with probability ``sigma(f(x))``) is non-convex. Each MM step replaces every ramp by its
hinge/constant upper bound at the current scores (Problem 3, convex, tight at the anchor) and
solves it (:func:`~goalfit.methods.ramp.cutting_plane.solve_problem3`, or cvxpy directly). From a
feasible anchor the step's solution is feasible for Problem 2 with an objective no larger than
the anchor's: MM never increases the objective and keeps every iterate feasible.

Feasible start (the paper starts from ``w = 0``, where every rate is 1/2, and notes that
egregious-example constraints may make that infeasible): when the start violates some rows, a
first phase (our construction; the paper leaves phase 1 open) runs MM steps of "minimize the sum
of the violated rows subject to the rows already met", with a weaker l2 weight
(``feasibility_lam``), until every row is met. It ignores the objective, so it ends well inside
the feasible set
(see benchmarks/README.md, section "Measurements behind the library's choices"),
and phase 2 walks back towards the boundary one MM step at a time. (Pulling the first
feasible iterate back to the boundary along its segment was tried: from a start on the boundary
the cutting plane stalls, because liblinear's dual value is not a certified bound.) When phase 1
stalls with rows still violated, the goals are reported infeasible with the least-violating
iterate.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ...goals.problem import FEASIBLE_TOL
from ...utils.extras import optional_import
from .cutting_plane import Majorizer, solve_problem3
from .dcd import DualState
from .phase1 import hinge_feasibility
from .rates import ramp


@dataclass
class RampResult:
    """Outcome of :func:`majorization_minimization`.

    Attributes
    ----------
    coef : ndarray of shape (d,)
    intercept : float
    objective : float
        Ramp objective (Problem 2, with ``lam/2 |w|^2``) at the solution.
    rows : ndarray of shape (m,)
        Ramp constraint rows (<= 0 when met).
    multipliers : ndarray of shape (m,)
        Lagrange multipliers of the last Problem-3 solve.
    feasible : bool
    max_violation : float
    history : list of dict
        Per MM iteration: phase, objective, max_violation, upper_bound, dual_bound,
        n_inner (weighted-SVM solves), oracle_calls (cumulative solves), seconds.
    """

    coef: np.ndarray
    intercept: float
    objective: float
    rows: np.ndarray
    multipliers: np.ndarray
    feasible: bool
    max_violation: float
    history: list = field(default_factory=list)


def ramp_values(program, X, coef, intercept, lam):
    """Problem-2 objective (with the regularizer) and rows of a linear model."""
    p = ramp(np.asarray(X @ coef).ravel() + intercept)
    obj, rows = program.values(p)
    return obj + 0.5 * lam * float(coef @ coef), rows


def solve_problem3_cvxpy(majorizer):
    """Problem 3 solved directly by cvxpy (Clarabel): the reference for Alg. 2.

    Returns
    -------
    (coef, intercept, objective) with ``objective`` Problem 3's optimum, or None when the solver
    finds Problem 3 infeasible.
    """
    cp = optional_import("cvxpy", "the cvxpy inner solver of RampClassifier")
    import scipy.sparse as sp

    p = majorizer.program
    X = majorizer.X.toarray() if sp.issparse(majorizer.X) else np.asarray(majorizer.X, dtype=float)
    w = cp.Variable(X.shape[1])
    b = cp.Variable()
    z = X @ w + b
    hp = majorizer.z_anchor <= 0.5
    hn = majorizer.z_anchor >= -0.5

    def form(a, c, k):
        return (a[hp] @ cp.pos(0.5 + z[hp]) + c[hn] @ cp.pos(0.5 - z[hn])
                + float(a[~hp].sum() + c[~hn].sum()) + k)

    obj = form(p.a0, p.c0, p.k0) + majorizer.lam / 2 * cp.sum_squares(w)
    cons = [form(p.A[j], p.C[j], p.k[j]) <= 0 for j in range(p.n_rows)]
    prob = cp.Problem(cp.Minimize(obj), cons)
    prob.solve(solver=cp.CLARABEL)
    if w.value is None:  # infeasible (possible only from an infeasible anchor) or failed
        return None
    return np.asarray(w.value).ravel(), float(b.value), float(prob.value)


def _step(program, X, lam, coef, intercept, solver_params, v0=None, warm_start=None, expected_decrease=None):
    maj = Majorizer(program, X, np.asarray(X @ coef).ravel() + intercept, lam)
    if solver_params.get("multiplier_solver") == "cvxpy":
        sol = solve_problem3_cvxpy(maj)
        if sol is None:
            return coef, intercept, np.inf, np.inf, np.zeros(program.n_rows), 0
        c, b, val = sol
        return c, b, val, val, np.zeros(program.n_rows), 0
    params = {k: v for k, v in solver_params.items() if k != "multiplier_solver"}
    r = solve_problem3(maj, coef, intercept, v0=v0, warm_start=warm_start, expected_decrease=expected_decrease,
                       **params)
    return r.coef, r.intercept, r.objective, r.lower, r.multipliers, r.n_inner


def majorization_minimization(program, X, lam, *, coef0=None, intercept0=0.0, max_iter=10, tol=1e-4,
                              max_feasibility_iter=None, feasibility_lam=None, feasibility_tol=FEASIBLE_TOL,
                              solver_params=None, callback=None) -> RampResult:
    """Alg. 1 with a feasibility phase.

    Parameters
    ----------
    program : RateProgram
    X : ndarray or sparse matrix of shape (n, d)
    lam : float
        ``lam/2 |w|^2`` regularization.
    coef0, intercept0 : starting point (default ``w = 0``, the paper's)
    max_iter : int
        MM iterations of Alg. 1 (phase 2, from a feasible point).
    tol : float
        Stop when an iteration lowers the objective by less than ``tol``.
    max_feasibility_iter : int, optional
        MM iterations of the feasibility phase (default ``max(max_iter, 20)``). The phase also
        stops as soon as every row is met, or when an iteration lowers the sum of the violated
        rows by less than ``tol / 100`` (stalled: the goals are reported infeasible). Its own
        budget because a tight goal far from the start (churn <= 0.03 from ``w = 0``, where
        churn is 1/2) needs more steps than the objective's MM.
    feasibility_lam : float, optional
        The l2 weight of the feasibility phase (default ``lam / 100``; multiplied by 10, up to
        ``lam``, after a step that made no progress, before the phase counts as stalled).
        Phase 1 minimizes the sum of the violated ramp rows; with the objective's ``lam`` it would stop where shrinking
        them further costs more in ``lam/2 |w|^2`` than it gains, short of feasibility (the
        ramp rates of a small-norm model sit in the band where ``0 < sigma < 1``). The weight
        only keeps the weighted SVMs well posed there.
    feasibility_tol : float, default :data:`goalfit.goals.FEASIBLE_TOL` (1e-7)
        Rows above this value count as violated (``RampResult.feasible``, hence
        ``RampClassifier.feasible_``, means what ``feasible`` means everywhere in goalfit).
    solver_params : dict
        ``multiplier_solver`` ("cutting_plane" or "cvxpy") and the arguments of
        :func:`~goalfit.methods.ramp.cutting_plane.solve_problem3`.
    callback : callable(dict), optional
        Called with each history record.

    Returns
    -------
    RampResult
    """
    solver_params = dict(solver_params or {})
    coef = np.zeros(X.shape[1]) if coef0 is None else np.asarray(coef0, dtype=float)
    intercept = float(intercept0)
    history: list = []
    t0 = time.perf_counter()
    obj, rows = ramp_values(program, X, coef, intercept, lam)

    def record(phase, obj, rows, upper, lower, n_inner, mult):
        h = {"iteration": len(history), "phase": phase, "objective": obj,
             "max_violation": float(max(rows.max(), 0.0)) if len(rows) else 0.0,
             "upper_bound": upper, "dual_bound": lower, "n_inner": n_inner,
             "multipliers": np.asarray(mult).tolist(), "seconds": time.perf_counter() - t0,
             "oracle_calls": n_inner + (history[-1]["oracle_calls"] if history else 0)}
        history.append(h)
        if callback is not None:
            callback(h)

    record("start", obj, rows, obj, None, 0, np.zeros(program.n_rows))
    mult = np.zeros(program.n_rows)
    dcd = solver_params.get("inner_solver", "dcd") == "dcd" and solver_params.get("multiplier_solver") != "cvxpy"
    seed = solver_params.get("random_state")  # the rows' storage order of the dcd solver
    state1 = None  # warm starts of the feasibility phase's SVMs (built when the phase runs)
    # the feasibility phase only needs progress, not optimal steps (its l2 weight is 100x weaker,
    # which makes each SVM 100x harder for coordinate descent): loose steps, at most 10 solves
    params1 = dict(solver_params)
    if dcd:
        params1.update(rel_tol=max(solver_params.get("rel_tol", 0.0), 0.5),
                       tol=max(solver_params.get("tol", 1e-4), 1e-3),
                       max_iter=min(solver_params.get("max_iter", 30), 10))
    # phase 1: reach a feasible point
    best = (float(rows.max()) if len(rows) else 0.0, coef, intercept)
    n_feasibility = max(int(max_iter), 20) if max_feasibility_iter is None else int(max_feasibility_iter)
    lam1 = lam / 100.0 if feasibility_lam is None else float(feasibility_lam)
    for _ in range(n_feasibility):
        violated = np.flatnonzero(rows > feasibility_tol)
        if len(violated) == 0:
            break
        met = np.flatnonzero(rows <= feasibility_tol)
        sub = program.subproblem(violated, met)
        before = float(rows[violated].sum())
        if dcd and state1 is None:
            state1 = DualState(X, seed)
        coef, intercept, upper, lower, _, n_inner = _step(sub, X, lam1, coef, intercept, params1,
                                                          warm_start=state1)
        obj, rows = ramp_values(program, X, coef, intercept, lam)
        record("feasibility", obj, rows, upper, lower, n_inner, np.zeros(program.n_rows))
        if rows.max() < best[0] - 1e-12:  # rounding-level ties keep the earlier iterate
            best = (float(rows.max()), coef, intercept)
        if before - float(rows[violated].sum()) <= tol * 1e-2 and rows.max() > feasibility_tol:
            if lam1 >= lam:
                break
            # no progress: with a very weak l2 weight the weighted SVMs can be too ill-conditioned
            # for the inner solver to finish (it then returns the anchor); strengthen it, up to lam
            lam1 = min(lam, 10.0 * lam1)
    if len(rows) and rows.max() > feasibility_tol:  # stalled: the certified LP start (phase1.py)
        lp_coef, lp_intercept, lp_value = hinge_feasibility(
            program, X, fit_intercept=solver_params.get("fit_intercept", True))
        if lp_coef is not None and lp_value <= 0:
            coef, intercept = lp_coef, lp_intercept
            obj, rows = ramp_values(program, X, coef, intercept, lam)
            record("feasibility_lp", obj, rows, lp_value, None, 0, np.zeros(program.n_rows))
    if len(rows) and rows.max() > feasibility_tol:
        viol, coef, intercept = best
        obj, rows = ramp_values(program, X, coef, intercept, lam)
        return RampResult(coef, intercept, obj, rows, mult, False, max(viol, 0.0), history)
    # phase 2: MM from a feasible point (Alg. 1), each step warm-started from the previous one's
    # multipliers and dual variables
    # (the two phases' states share one stored copy of X)
    state2 = None if not dcd else DualState(X, seed) if state1 is None else state1.cold()
    decrease = obj  # a first guess of the step's decrease: all of the objective
    for _ in range(max_iter):
        prev = obj
        new_coef, new_intercept, upper, lower, mult, n_inner = _step(program, X, lam, coef, intercept,
                                                                     solver_params, v0=mult, warm_start=state2,
                                                                     expected_decrease=decrease)
        new_obj, new_rows = ramp_values(program, X, new_coef, new_intercept, lam)
        if len(new_rows) and new_rows.max() > feasibility_tol + 1e-9 or new_obj > prev + 1e-12:
            # the step's rounding left the feasible set or went uphill: keep the anchor
            record("mm", obj, rows, upper, lower, n_inner, mult)
            break
        coef, intercept, obj, rows = new_coef, new_intercept, new_obj, new_rows
        decrease = prev - obj
        record("mm", obj, rows, upper, lower, n_inner, mult)
        if prev - obj <= tol:
            break
    viol = float(max(rows.max(), 0.0)) if len(rows) else 0.0
    return RampResult(coef, intercept, obj, rows, mult, True, viol, history)
