"""Exact mixed-integer formulations of Ye & Xie on SCIP (pyscipopt), and brute-force enumeration.

* :func:`solve_gsvmf` - GSVMF (Prop. 5, Eq. 12 with the McCormick linearisation (5)) for OMR,
  FPR, EO and DP (Eqs. 22, 24, 26), penalty or constraint form; GSVM-F1 (Prop. 14, Eq. 36)
  with ``measure="f1"``; and any linear rate goals given as a
  :class:`~.measure.SelectionMeasure` (several constraints, any real ``alpha``, ``kappa``: the
  integrality argument of Prop. 5 only needs ``F`` linear-representable in ``z``, which every
  compiled row is). A mixed-integer QP (MISOCP-like for F1).
* :func:`solve_gmsvmf` - multiclass GMSVMF (Prop. 11, Eq. 27-28).
* :func:`solve_glrf` - logistic GLRF (Eq. 31) as a mixed-integer nonlinear program.
* :func:`solve_gsvmf_milp` - GSVMF with ``lambda = 0`` (a mixed-integer **linear** program) on
  HiGHS through ``scipy.optimize.milp``.
* :func:`bruteforce_gsvmf` - solver-free ground truth: one exact convex w-step per ``z``.

``||w||^2`` enters through an epigraph variable ``theta >= ||w||^2`` (SCIP wants a linear
objective). All solves honour ``time_limit`` and report the incumbent, the dual bound and the
relative gap; an IRS solution can be passed as a starting incumbent.
"""
from __future__ import annotations

import itertools
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...utils.extras import optional_import

from .framework import check_binary_pm1, f1_loss_value, measure_form
from .measure import SelectionMeasure
from .zstep import InfeasibleSelectionError, select_goals

__all__ = ["MIPResult", "big_m", "reference_value", "solve_gsvmf", "solve_gsvmf_milp", "solve_gmsvmf",
           "solve_glrf", "bruteforce_gsvmf"]


@dataclass
class MIPResult:
    """Result of an exact solve.

    Attributes
    ----------
    w : ndarray of shape (d,) (multiclass: (d, K))
    b : float or ndarray of shape (K,)
    z : ndarray of shape (n,) (multiclass: (n, K))
    objective : float
        Incumbent (primal) value; ``inf`` when no feasible solution was found.
    bound : float
        Proven lower bound.
    gap : float
        ``(objective - bound) / |objective|`` (0 when solved to optimality).
    status : str
        SCIP status ("optimal", "timelimit", ...) or "enumerated".
    seconds : float
    fairness : float
        ``F(z)`` at the incumbent.
    start : str or None
        What became of a ``warm_start``: None (none given), ``"accepted"`` (a feasible
        incumbent SCIP starts from) or ``"rejected: <reason>"`` (infeasible for the model; a
        RuntimeWarning says why; the solve ran cold).
    """

    w: np.ndarray
    b: np.ndarray | float
    z: np.ndarray
    objective: float
    bound: float
    gap: float
    status: str
    seconds: float
    fairness: float = float("nan")
    start: str | None = None

    @property
    def optimal(self) -> bool:
        return self.status in ("optimal", "enumerated")


def big_m(X, *, lam: float, t: float, ref_value: float = 0.0, cost_mass: float = 1.0) -> float:
    """Closed-form big-M of Ye & Xie Prop. 3: ``M_u = 2 + 2 L1 L2``.

    ``L2 = max_i ||x_i||`` and ``L1 = sqrt((cost_mass t + ref_value) / lam)`` bounds ``||w*||``:
    the accuracy term is at least ``-cost_mass t`` (``cost_mass = sum of the cost weights``: 1
    for Eq. 12, 2 for the class-weighted Eq. 35) and ``F >= 0``, while the optimum is at most
    ``ref_value``, the objective of any feasible point (:func:`reference_value`: ``w = 0, b = 0``
    with the best feasible selection, or a warm start). The paper's case (OMR, ``z = 0``) is
    ``ref_value = 0``, ``cost_mass = 1``: ``L1 = sqrt(t / lam)``. Requires
    ``lam > 0``: the paper gives no bound for ``lam = 0`` (pass ``big_m_value=`` or use
    ``formulation="indicator"``).

    Raises
    ------
    ValueError
        ``lam <= 0``.
    """
    if not lam > 0:
        raise ValueError("the closed-form big-M (Prop. 3) needs lam > 0; pass big_m_value= or "
                         "formulation='indicator' for lam = 0")
    L2 = float(np.max(np.linalg.norm(np.asarray(X, float), axis=1)))
    L1 = np.sqrt(max(cost_mass * t + ref_value, 0.0) / lam)
    return 2.0 + 2.0 * L1 * L2


def _as_measure(measure, y, g, rho, epsilon) -> SelectionMeasure:
    if isinstance(measure, SelectionMeasure):
        return measure
    return SelectionMeasure.from_named(measure, y, g, rho=rho, epsilon=epsilon)


def _warm_objective(X, y, start, meas: SelectionMeasure, lam: float, t: float) -> float:
    """GSVMF objective of a start ``(w, b, z)`` with hinge margins, ``inf`` if ``z`` is infeasible."""
    w, b, z = start
    w, z = np.asarray(w, float), np.asarray(z, float)
    if w.shape != (X.shape[1],) or z.shape != (len(y),) or not meas.feasible(z):
        return np.inf
    u = np.maximum(0.0, 1.0 - y * (X @ w + b))
    return float(meas.costs(u, t) @ z + lam * w @ w + meas.rho * meas.fairness(z))


def reference_value(X, y, measure: SelectionMeasure, *, lam: float, t: float, warm_start=None,
                    time_limit: float = 60.0) -> float:
    """An upper bound of the GSVMF optimum from feasible points (the reference of Prop. 3).

    Ye & Xie's proof of Prop. 3 bounds ``||w*||`` by the objective of ``w = 0, b = 0, z = 0``,
    which is feasible for the penalty form of OMR only. Here the selection is the exact z-step
    at ``w = 0, b = 0`` (every hinge margin is 1, so the costs are ``reward (1 - t)``): the best
    selection among those meeting the enforced rows, whatever the goals. A feasible
    ``warm_start = (w, b, z)`` (e.g. the IRS solution) can only lower the bound.

    Returns
    -------
    float
        ``inf`` when no selection meets the enforced rows (the model is infeasible).
    """
    costs = measure.costs(np.ones(len(y)), t)
    try:
        ref = select_goals(costs, measure, time_limit=time_limit).value
    except InfeasibleSelectionError:
        ref = np.inf
    if warm_start is not None:
        ref = min(ref, _warm_objective(np.asarray(X, float), y, warm_start, measure, lam, t))
    return float(ref)


def _add_goal_rows(m, zs, meas: SelectionMeasure):
    """Rows of compiled goals on the binaries ``zs``; returns ``(sum_c v_c, [v_c])``.

    ``v_c >= row_r(z)`` for the rows of constraint ``c`` (when ``rho > 0``), ``v_c >= 0``, and
    ``row_r(z) <= bound_c`` for the enforced rows.
    """
    pen, pen_vars = 0, []
    enf = meas.enforced
    for c in range(meas.n_constraints):
        v = m.addVar(f"v{c}", lb=0.0) if meas.rho > 0 else None
        if v is not None:
            pen = pen + v
            pen_vars.append(v)
        for r in np.flatnonzero(meas.row_group == c):
            a = meas.alpha[r]
            lin = sum(a[i] * zs[i] for i in np.flatnonzero(a)) + float(meas.kappa[r])
            if v is not None:
                m.addCons(v >= lin)
            if enf[r]:
                m.addCons(lin <= float(meas.bounds[c]) + meas.tolerance())
    return pen, pen_vars


def _model(time_limit, threads=1, verbose=False):
    Model = optional_import("pyscipopt", "solver='mip' (SCIP)").Model

    m = Model()
    if not verbose:
        m.hideOutput()
    m.setParam("limits/time", float(time_limit))
    m.setParam("parallel/maxnthreads", int(threads))
    return m


def _add_fairness(m, phi, zs, alpha, kappa, epsilon):
    """``phi >= |alpha'z + kappa|`` and, in constraint form, ``|alpha'z + kappa| <= epsilon``."""
    lin = sum(alpha[i] * zs[i] for i in range(len(zs)) if alpha[i] != 0) + kappa
    m.addCons(phi >= lin)
    m.addCons(phi >= -lin)
    if epsilon is not None:
        m.addCons(lin <= epsilon)
        m.addCons(lin >= -epsilon)


def _finish(m, t0):
    status = m.getStatus()
    n_sols = m.getNSols()
    obj = m.getObjVal() if n_sols > 0 else float("inf")
    bound = m.getDualbound()
    gap = 0.0 if status == "optimal" else (abs(obj - bound) / max(abs(obj), 1e-12) if n_sols else float("inf"))
    return status, obj, bound, gap, time.perf_counter() - t0


def solve_gsvmf(X, y, g=None, *, measure="omr", lam: float = 1.0, t: float = 1.0, rho: float = 0.0,
                epsilon: float | None = None, time_limit: float = 60.0, big_m_value: float | None = None,
                formulation: str = "big_m", warm_start=None, threads: int = 1, verbose: bool = False) -> MIPResult:
    """Solve GSVMF (and GSVM-F1) exactly with SCIP.

    Formulation (Prop. 5 / Prop. 14)::

        min  sum_i c_i (s_i - t z_i) + lam theta + rho phi
        s.t. y_i (x_i'w + b) >= 1 - u_i,  u_i >= 0,  z_i in {0, 1},  theta >= ||w||^2
             s_i >= u_i - M (1 - z_i),  s_i >= 0                    (McCormick (5), big-M)
          or z_i = 1  =>  s_i >= u_i                                 (indicator form)
             phi >= +-(alpha'z + kappa)                              (|F(z)|, OMR/FPR/EO/DP)
             phi * (N + k+ - k-) >= sum_i (1 - z_i)                  (1 - F1, Eq. 36)
             [|alpha'z + kappa| <= epsilon  or  sum(1 - z) <= epsilon (N + k+ - k-)]

    with ``c_i = 1/N`` (``1/N+-`` for F1). With compiled goals (a SelectionMeasure) ``c_i`` is
    their ``reward_i``, ``phi`` is ``sum_c v_c`` with ``v_c >= row_r(z)`` for each row of
    constraint ``c``, and the enforced rows ``row_r(z) <= bound_c`` replace the epsilon rows.
    Only the lower McCormick bounds are kept: the objective pushes ``s`` down, and ``u_i <= M``
    is added since Prop. 3 bounds every margin. The closed-form ``M`` uses
    :func:`reference_value` (a feasible selection from the exact z-step, and the warm start).

    Parameters
    ----------
    X : ndarray of shape (n, d)
    y, g : ndarray of shape (n,), values in {-1, +1}
        Labels; groups of a named measure (unused with a SelectionMeasure).
    measure : {"omr", "fpr", "eo", "dp", "f1"} or SelectionMeasure
    lam, t, rho : float
        ``rho`` of a named measure (a SelectionMeasure holds its own).
    epsilon : float, optional
        Constraint form of a named measure.
    time_limit : float
        Seconds.
    big_m_value : float, optional
        Overrides the closed-form big-M (needed for ``lam = 0`` with ``formulation="big_m"``).
    formulation : {"big_m", "indicator"}
    warm_start : (w, b, z), optional
        A starting incumbent (e.g. the IRS solution): ``w`` of shape (d,), ``b`` float, ``z``
        of shape (n,). It is checked against the model first (a start whose margins exceed the
        big-M, or that violates ``epsilon``, is infeasible); ``MIPResult.start`` records whether
        SCIP accepted it, and a rejected start raises a RuntimeWarning instead of being dropped
        silently.
    threads : int
    verbose : bool

    Returns
    -------
    MIPResult
        ``status`` "infeasible" (no solve) when no selection meets the enforced rows.

    Raises
    ------
    ValueError
        Bad labels/groups, empty groups, ``lam = 0`` with the big-M form and no ``big_m_value``.
    """
    X = np.asarray(X, float)
    y = check_binary_pm1(y, "y")
    n, d = X.shape
    goals = isinstance(measure, SelectionMeasure)
    meas = _as_measure(measure, y, g, rho, epsilon)
    f1 = meas.f1_labels is not None
    if not goals and not f1:
        alpha, kappa = measure_form(measure, y, g).coef()
    cw = meas.reward
    rho = meas.rho
    t0 = time.perf_counter()
    if formulation == "big_m":
        if big_m_value is not None:
            M = big_m_value
        else:
            if not lam > 0:
                big_m(X, lam=lam, t=t)  # raises, naming the alternatives
            ref = reference_value(X, y, meas, lam=lam, t=t, warm_start=warm_start, time_limit=time_limit)
            if not np.isfinite(ref):
                return MIPResult(np.full(d, np.nan), np.nan, np.full(n, np.nan), np.inf, np.inf, np.inf,
                                 "infeasible", time.perf_counter() - t0)
            M = big_m(X, lam=lam, t=t, cost_mass=float(cw.sum()), ref_value=ref)
    elif formulation != "indicator":
        raise ValueError(f"formulation must be 'big_m' or 'indicator', got {formulation!r}")
    m = _model(time_limit, threads, verbose)
    w = [m.addVar(f"w{j}", lb=None) for j in range(d)]
    b = m.addVar("b", lb=None)
    u = [m.addVar(f"u{i}", lb=0.0, ub=M if formulation == "big_m" else None) for i in range(n)]
    s = [m.addVar(f"s{i}", lb=0.0) for i in range(n)]
    z = [m.addVar(f"z{i}", vtype="B") for i in range(n)]
    theta = m.addVar("theta", lb=0.0)
    phi = m.addVar("phi", lb=0.0)
    for i in range(n):
        m.addCons(y[i] * (sum(X[i, j] * w[j] for j in range(d)) + b) >= 1 - u[i])
        if formulation == "big_m":
            m.addCons(s[i] >= u[i] - M * (1 - z[i]))
        else:
            m.addConsIndicator(s[i] - u[i] >= 0, z[i])
    m.addCons(theta >= sum(wj * wj for wj in w))
    pen, pen_vars = 0, []
    yf = meas.f1_labels
    if yf is not None:  # f1
        A = n + sum(z[i] for i in range(n) if yf[i] == 1) - sum(z[i] for i in range(n) if yf[i] == -1)
        miss = sum(1 - z[i] for i in range(n))
        m.addCons(phi * A >= miss)
        if not np.isnan(meas.f1_bound):
            m.addCons(miss <= meas.f1_bound * A)
    if goals:
        pen, pen_vars = _add_goal_rows(m, z, meas)
    elif not f1:
        _add_fairness(m, phi, z, alpha, kappa, epsilon)
    m.setObjective(sum(cw[i] * (s[i] - t * z[i]) for i in range(n)) + lam * theta + rho * phi + rho * pen,
                   "minimize")
    start = None
    if warm_start is not None:
        start = _add_start(m, X, y, warm_start, w, b, u, s, z, theta, phi, pen_vars, meas,
                           M if formulation == "big_m" else None)
    m.optimize()
    status, obj, bound, gap, secs = _finish(m, t0)
    if m.getNSols() == 0:
        return MIPResult(np.full(d, np.nan), np.nan, np.full(n, np.nan), obj, bound, gap, status, secs,
                         start=start)
    wv = np.array([m.getVal(v) for v in w])
    zv = np.round([m.getVal(v) for v in z]).astype(float)
    return MIPResult(wv, m.getVal(b), zv, obj, bound, gap, status, secs, meas.fairness(zv), start)


def _add_start(m, X, y, start, w, b, u, s, z, theta, phi, pen_vars, meas: SelectionMeasure, M) -> str:
    """Give SCIP ``start = (w, b, z)`` as a starting incumbent; returns ``MIPResult.start``.

    In SCIP's problem stage ``addSol`` stores a solution without checking it (an infeasible
    one is discarded later, silently), so the start is checked against the original model
    first and only a feasible one is added; a rejection is warned about with its reason.
    """
    import warnings

    wv, bv, zv = start
    wv, zv = np.asarray(wv, float), np.asarray(zv, float)
    if wv.shape != (len(w),) or zv.shape != (len(z),) or not np.isin(zv, (0.0, 1.0)).all():
        raise ValueError(f"warm_start must be (w of shape ({len(w)},), b, z of shape ({len(z)},) with 0/1 "
                         f"entries), got shapes {wv.shape}, {zv.shape}")
    uv = np.maximum(0.0, 1.0 - y * (X @ wv + bv))
    F = float(meas.fairness(zv))
    sol = m.createSol()
    for j, v in enumerate(w):
        m.setSolVal(sol, v, float(wv[j]))
    m.setSolVal(sol, b, float(bv))
    for i in range(len(y)):
        m.setSolVal(sol, u[i], float(uv[i]))
        m.setSolVal(sol, s[i], float(uv[i] * zv[i]))
        m.setSolVal(sol, z[i], float(zv[i]))
    m.setSolVal(sol, theta, float(wv @ wv))
    if meas.named is not None:
        m.setSolVal(sol, phi, F)  # |F(z)| of a named measure, or 1 - F1
    elif meas.f1_labels is not None:
        m.setSolVal(sol, phi, float(f1_loss_value(zv, meas.f1_labels)))
    for var, v in zip(pen_vars, meas.violations(zv) if pen_vars else ()):
        m.setSolVal(sol, var, float(v))
    if m.checkSol(sol, printreason=False, original=True):
        if m.addSol(sol, free=True):
            return "accepted"
        reason = "SCIP did not store it"
    elif M is not None and uv.max() > M:
        reason = f"a margin u_i = {uv.max():.4g} exceeds the big-M {M:.4g} (u <= M is part of the model)"
    elif not meas.feasible(zv):
        eps = meas.named[3] if meas.named is not None else None
        reason = (f"F(z) = {F:.4g} > epsilon = {eps}" if eps is not None
                  else f"the selection violates the goals (F(z) = {F:.4g})")
    else:
        reason = "infeasible for the model"
    m.freeSol(sol)
    warnings.warn(f"warm start rejected: {reason}; SCIP starts without it", RuntimeWarning, stacklevel=3)
    return f"rejected: {reason}"


def solve_gsvmf_milp(X, y, g=None, *, measure="omr", t: float = 1.0, rho: float = 0.0,
                     epsilon: float | None = None, big_m_value: float, time_limit: float = 60.0) -> MIPResult:
    """Solve GSVMF with ``lambda = 0`` exactly with HiGHS (``scipy.optimize.milp``).

    Without the regulariser the formulation of :func:`solve_gsvmf` is linear: variables
    ``(w, b, u, s, z, v)``, rows ``y_i(x_i'w + b) + u_i >= 1``, ``s_i - u_i - M z_i >= -M``,
    ``v_c >= row_r(z)`` for the goal rows (for a named measure the pair ``+-(alpha'z + kappa)``,
    so ``v = |F(z)|``), the enforced rows (the epsilon rows), ``0 <= u_i <= M``. Prop. 3 gives no
    big-M for ``lambda = 0``, so ``big_m_value`` is required: it bounds every margin, i.e. it
    restricts the model to classifiers with ``y_i f(x_i) >= 1 - M`` (state it with the result).

    Parameters
    ----------
    X, y, g, measure, t, rho, epsilon : as :func:`solve_gsvmf` (``measure`` not "f1", which is
        not linear); a SelectionMeasure holds its own ``rho`` and enforced rows.
    big_m_value : float > 0
    time_limit : float

    Returns
    -------
    MIPResult
    """
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import csr_matrix, hstack, identity

    X = np.asarray(X, float)
    y = check_binary_pm1(y, "y")
    meas = _as_measure(measure, y, g, rho, epsilon)
    if meas.f1_labels is not None:
        raise ValueError("1 - F1 is not linear in z: use solve_gsvmf (SCIP)")
    if not big_m_value > 0:
        raise ValueError("big_m_value must be > 0")
    n, d = X.shape
    M = float(big_m_value)
    G = meas.n_constraints if meas.rho > 0 else 0
    nv = d + 1 + 3 * n + G  # w, b, u, s, z, v
    is_, iz, iv = d + 1 + n, d + 1 + 2 * n, d + 1 + 3 * n
    c = np.zeros(nv)
    c[is_:iz] = meas.reward
    c[iz:iv] = -t * meas.reward
    c[iv:] = meas.rho
    Id, Z0 = identity(n, format="csr"), csr_matrix((n, n))
    A1 = hstack([csr_matrix(y[:, None] * X), csr_matrix(y[:, None]), Id, Z0, Z0, csr_matrix((n, G))])
    A2 = hstack([csr_matrix((n, d + 1)), -Id, Id, -M * Id, csr_matrix((n, G))])
    rows = [LinearConstraint(A1, 1.0, np.inf), LinearConstraint(A2, -M, np.inf)]
    enf, tol = meas.enforced, meas.tolerance()
    for r in range(meas.n_rows):
        fz = np.r_[np.zeros(d + 1 + 2 * n), meas.alpha[r], np.zeros(G)]
        if G:
            ev = np.zeros(nv)
            ev[iv + int(meas.row_group[r])] = 1.0
            rows.append(LinearConstraint(csr_matrix((ev - fz)[None, :]), float(meas.kappa[r]), np.inf))
        if enf[r]:
            rows.append(LinearConstraint(csr_matrix(fz[None, :]), -np.inf,
                                         float(meas.bounds[meas.row_group[r]] - meas.kappa[r] + tol)))
    lb = np.r_[np.full(d + 1, -np.inf), np.zeros(3 * n + G)]
    ub = np.r_[np.full(d + 1, np.inf), np.full(n, M), np.full(n, np.inf), np.ones(n), np.full(G, np.inf)]
    integrality = np.zeros(nv)
    integrality[iz:iv] = 1
    t0 = time.perf_counter()
    res = milp(c, constraints=rows, integrality=integrality, bounds=Bounds(lb, ub),
               options={"time_limit": float(time_limit)})
    secs = time.perf_counter() - t0
    if res.x is None:
        return MIPResult(np.full(d, np.nan), np.nan, np.full(n, np.nan), np.inf, -np.inf, np.inf,
                         res.message, secs)
    zv = np.round(res.x[iz:iv])
    bound = float(getattr(res, "mip_dual_bound", np.nan))
    gap = float(getattr(res, "mip_gap", np.nan)) if res.status != 0 else 0.0
    status = "optimal" if res.status == 0 else ("timelimit" if res.status == 1 else res.message)
    return MIPResult(res.x[:d], float(res.x[d]), zv, float(res.fun), bound, gap, status, secs, meas.fairness(zv))


def solve_gmsvmf(X, y, g=None, *, lam: float = 1.0, t: float = 1.0, rho: float = 0.0, epsilon: float | None = None,
                 measure: SelectionMeasure | None = None, time_limit: float = 60.0, threads: int = 1,
                 verbose: bool = False) -> MIPResult:
    """Solve multiclass GMSVMF (Ye & Xie Prop. 11, Eqs. 27-28) exactly with SCIP.

    The product ``(1 - z_ij) u_ij`` is modelled with indicator constraints ``z_ij = 0 =>
    r_ij >= u_ij``, ``r_ij >= 0`` (equivalent to McCormick (28) with a valid M; the paper gives
    no closed-form M for the multiclass model).

    Parameters
    ----------
    X : ndarray of shape (n, d)
    y : ndarray of shape (n,), class codes ``0..K-1``
    g : ndarray of shape (n,), values in {-1, +1}
        Groups of the OMR measure (Eq. 27a); unused with ``measure``.
    lam, t, rho, epsilon, time_limit, threads, verbose : as :func:`solve_gsvmf`
    measure : SelectionMeasure, optional
        Correctness-only compiled goals on ``z_{i, y_i}`` instead of OMR: ``reward_i``
        replaces ``1/N``, their rows replace ``phi >= |F|`` (``rho``, ``epsilon`` unused).

    Returns
    -------
    MIPResult
        ``w`` of shape (d, K), ``b`` of shape (K,), ``z`` of shape (n, K).
    """
    X = np.asarray(X, float)
    y = np.asarray(y)
    n, d = X.shape
    K = int(y.max()) + 1
    meas = SelectionMeasure.from_named("omr", np.ones(n, int), g, rho=rho, epsilon=epsilon) if measure is None \
        else measure
    cw = meas.reward
    t0 = time.perf_counter()
    m = _model(time_limit, threads, verbose)
    W = [[m.addVar(f"w{j}_{k}", lb=None) for k in range(K)] for j in range(d)]
    b = [m.addVar(f"b{k}", lb=None) for k in range(K)]
    z = [[m.addVar(f"z{i}_{k}", vtype="B") for k in range(K)] for i in range(n)]
    theta, phi = m.addVar("theta", lb=0.0), m.addVar("phi", lb=0.0)
    obj = 0
    for i in range(n):
        m.addCons(sum(z[i]) == 1)
        score = [sum(X[i, j] * W[j][k] for j in range(d)) + b[k] for k in range(K)]
        for k in range(K):
            if k == y[i]:
                continue
            uik, rik = m.addVar(f"u{i}_{k}", lb=0.0), m.addVar(f"r{i}_{k}", lb=0.0)
            m.addCons(score[y[i]] - score[k] >= 1 - uik)
            m.addConsIndicator(rik - uik >= 0, z[i][k], activeone=False)
            obj = obj + cw[i] * (rik - t * (1 - z[i][k]))
    m.addCons(theta >= sum(W[j][k] * W[j][k] for j in range(d) for k in range(K)))
    zc = [z[i][int(y[i])] for i in range(n)]
    if measure is None:
        alpha, kappa = measure_form("omr", np.ones(n, int), g).coef()
        _add_fairness(m, phi, zc, alpha, kappa, epsilon)
        pen = rho * phi
    else:
        pen = meas.rho * _add_goal_rows(m, zc, meas)[0]
    m.setObjective(obj + lam * theta + pen, "minimize")
    m.optimize()
    status, objv, bound, gap, secs = _finish(m, t0)
    if m.getNSols() == 0:
        return MIPResult(np.full((d, K), np.nan), np.full(K, np.nan), np.full((n, K), np.nan),
                         objv, bound, gap, status, secs)
    Wv = np.array([[m.getVal(v) for v in row] for row in W])
    Zv = np.round([[m.getVal(v) for v in row] for row in z]).astype(float)
    F = meas.fairness(Zv[np.arange(n), y])
    return MIPResult(Wv, np.array([m.getVal(v) for v in b]), Zv, objv, bound, gap, status, secs, F)


def solve_glrf(X, y, g=None, *, measure="omr", lam: float = 1.0, t: float = np.log(0.5), rho: float = 0.0,
               epsilon: float | None = None, coef_bound: float = 10.0, time_limit: float = 60.0,
               threads: int = 1, verbose: bool = False) -> MIPResult:
    """Solve GLRF (Ye & Xie Eq. 31) exactly with SCIP as a mixed-integer nonlinear program.

    ``min (1/N) sum_i z_i (t + l_i) + lam ||w||^2 + rho F(z)`` with the logistic loss
    ``l_i >= log(1 + exp(-y_i (x_i'w + b)))`` (so ``u_i = -l_i`` is the log-likelihood) and
    ``z_i = 1 => s_i >= l_i`` (indicator). The paper states GLRF but gives no MICP; this is
    the direct exponential-cone-free MINLP that SCIP handles. ``t < 0`` (a log-probability).
    With compiled goals (a SelectionMeasure) ``1/N`` is their ``reward_i`` and ``F`` their rows,
    as in :func:`solve_gsvmf`.

    The intercept is not regularised, so a selection holding a single class has infimum
    ``t k / N`` approached only as ``|b| -> inf`` (not attained): the model is well posed only
    with a box, ``|w_j|, |b| <= coef_bound`` (an assumption of this implementation, not the
    paper's). The IRS never selects a single class (logistic regression cannot be trained on it).

    Returns
    -------
    MIPResult
    """
    scip = optional_import("pyscipopt", "solver='mip' (SCIP)")
    exp, log = scip.exp, scip.log

    X = np.asarray(X, float)
    y = check_binary_pm1(y, "y")
    if not t < 0:
        raise ValueError(f"GLRF needs t < 0 (a log-likelihood threshold), got {t}")
    n, d = X.shape
    goals = isinstance(measure, SelectionMeasure)
    meas = _as_measure(measure, y, g, rho, epsilon)
    if meas.f1_labels is not None:
        raise ValueError("GLRF with 1 - F1 has no formulation here")
    cw = meas.reward
    t0 = time.perf_counter()
    m = _model(time_limit, threads, verbose)
    w = [m.addVar(f"w{j}", lb=-coef_bound, ub=coef_bound) for j in range(d)]
    b = m.addVar("b", lb=-coef_bound, ub=coef_bound)
    ell = [m.addVar(f"l{i}", lb=0.0) for i in range(n)]
    s = [m.addVar(f"s{i}", lb=0.0) for i in range(n)]
    z = [m.addVar(f"z{i}", vtype="B") for i in range(n)]
    theta, phi = m.addVar("theta", lb=0.0), m.addVar("phi", lb=0.0)
    for i in range(n):
        marg = y[i] * (sum(X[i, j] * w[j] for j in range(d)) + b)
        m.addCons(ell[i] >= log(1 + exp(-marg)))
        m.addConsIndicator(s[i] - ell[i] >= 0, z[i])
    m.addCons(theta >= sum(wj * wj for wj in w))
    if goals:
        pen = meas.rho * _add_goal_rows(m, z, meas)[0]
    else:
        alpha, kappa = measure_form(measure, y, g).coef()
        _add_fairness(m, phi, z, alpha, kappa, epsilon)
        pen = rho * phi
    m.setObjective(sum(cw[i] * (s[i] + t * z[i]) for i in range(n)) + lam * theta + pen, "minimize")
    m.optimize()
    status, objv, bound, gap, secs = _finish(m, t0)
    if m.getNSols() == 0:
        return MIPResult(np.full(d, np.nan), np.nan, np.full(n, np.nan), objv, bound, gap, status, secs)
    zv = np.round([m.getVal(v) for v in z]).astype(float)
    return MIPResult(np.array([m.getVal(v) for v in w]), m.getVal(b), zv, objv, bound, gap, status, secs,
                     meas.fairness(zv))


def bruteforce_gsvmf(X, y, g=None, *, learner, measure="omr", t: float = 1.0, rho: float = 0.0,
                     epsilon: float | None = None, max_n: int = 12) -> MIPResult:
    """Ground truth by enumeration: for every ``z`` in {0,1}^N solve the exact w-step.

    ``min_z [min_w H(w, z)]`` with ``H`` the IRS objective of ``learner`` (a monotone w-step of
    :mod:`.wstep`, e.g. :class:`~.wstep.LinearSVMStep`): exact whenever the learner's w-step
    is. ``2^N`` convex solves, so ``N <= max_n``. ``measure`` is a named measure (with ``g``,
    ``rho``, ``epsilon``) or a SelectionMeasure.

    Raises
    ------
    ValueError
        ``N > max_n``, or a non-monotone learner (its w-step does not minimise H).
    """
    from .wstep import DegenerateSelection

    X = np.asarray(X, float)
    y = check_binary_pm1(y, "y")
    n = len(y)
    if n > max_n:
        raise ValueError(f"brute force solves 2^N problems; N = {n} > max_n = {max_n}")
    if not learner.monotone or learner.multiclass:
        raise ValueError("brute force needs a binary learner whose w-step minimises the objective")
    meas = _as_measure(measure, y, g, rho, epsilon)
    t0 = time.perf_counter()
    best: tuple[float, Any, np.ndarray | None] = (np.inf, None, None)  # (H, model, selection)
    for bits in itertools.product((0.0, 1.0), repeat=n):
        zv = np.array(bits)
        if not meas.feasible(zv, tol=1e-12 if meas.named is not None else None):
            continue
        F = meas.fairness(zv)
        try:
            model = learner.fit(X, y, meas.step_weights(zv))
        except DegenerateSelection:
            continue
        u = learner.outcomes(model, X, y)
        H = meas.costs(u, t, learner.kind) @ zv + learner.regularizer(model) + meas.rho * F
        if H < best[0]:
            best = (float(H), model, zv)
    H, model, z_best = best
    secs = time.perf_counter() - t0
    if model is None or z_best is None:
        return MIPResult(np.full(X.shape[1], np.nan), np.nan, np.full(n, np.nan), np.inf, np.inf, np.inf,
                         "infeasible", secs)
    return MIPResult(model.w, model.b, z_best, H, H, 0.0, "enumerated", secs, meas.fairness(z_best))
