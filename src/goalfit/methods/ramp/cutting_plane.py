"""Problem 3 by Lagrange multipliers: a cutting-plane method over the multipliers (Alg. 2).

Problem 3 (Goh et al., NIPS 2016, §2.2) is convex: the ramp's hinge/constant upper bounds at the
MM anchor, plus ``lam/2 |w|^2``. Its dual function ``F(v) = min_{w,b} Psi(w, b, v)`` (Eq. 6-7) is
concave in the multipliers ``v >= 0``; evaluating it is a weighted SVM (:mod:`.svm`). Any primal
point ``(w_t, b_t)`` gives the cut ``F(v) <= F0_t + <G_t, v>`` (its objective ``F0_t`` and
constraint values ``G_t``), so the cuts collected so far give a piecewise-linear upper model of
``F`` whose maximum ``U`` bounds the optimum from above, and the best dual value ``L`` from below.

The paper's cut chooser is in its missing Appendix E; here (documented departures):

* ``"kelley"``: the next multipliers maximize the cut model (one HiGHS LP);
* ``"chebyshev"``: the centre of the largest ball in the localization set
  ``{(v, z): L <= z <= cuts, 0 <= v <= v_max}`` (one HiGHS LP; steadier than Kelley);
* ``"bisection"``: the one-dimensional variant for a single constraint (§4.1): ``v = 0`` if the
  constraint is inactive there, else bracket the sign change of the supergradient and bisect.

Shallow cuts (Bland, Goldfarb & Todd 1981): the inner solver's tolerance follows the current gap
``U - L`` (loose early, tight near the end).

Dual values: with ``inner_solver="svc"`` the SVM's dual variables give a certified lower bound
on ``F(v)``; liblinear exposes none, so its Lagrangian value at the returned point stands in for
``F(v)`` (an upper estimate: the gap may read smaller than it is, which only stops the loop
earlier; feasibility and monotonicity rest on the primal recovery, not on the bound).

Primal recovery (our addition, so that the MM step is feasible and monotone by construction): the
returned point is the convex combination of all evaluated points, the anchor included, that
minimizes the objective subject to the constraints (an LP over the combination weights). By
convexity the combination is feasible for Problem 3 with an objective no larger than the LP's;
since the anchor is feasible, the LP always is. The gap ``P - L`` between this feasible objective
``P`` and the dual bound certifies the step's accuracy.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import linprog

from .rates import ramp_upper_bounds
from .svm import hinge_training_set, solve_weighted_svm

CHOOSERS = ("auto", "kelley", "chebyshev", "bisection")


class Majorizer:
    """Problem 3 at an anchor: objective and constraint upper bounds of a linear model.

    Parameters
    ----------
    program : RateProgram
    X : ndarray or sparse matrix of shape (n, d)
    z_anchor : ndarray of shape (n,)
    lam : float
    """

    def __init__(self, program, X, z_anchor, lam):
        self.program, self.X, self.z_anchor, self.lam = program, X, np.asarray(z_anchor, dtype=float), lam

    def evaluate(self, coef, intercept):
        """``(F0, G)``: upper-bound objective (with ``lam/2 |w|^2``) and rows, shape (m,)."""
        z = np.asarray(self.X @ coef).ravel() + intercept
        up, un = ramp_upper_bounds(z, self.z_anchor)
        obj, rows = self.program.values(up, un)
        return obj + 0.5 * self.lam * float(coef @ coef), rows

    def weights(self, v):
        """Combined non-negative weights ``(a, c)`` of the Lagrangian at multipliers ``v``."""
        p = self.program
        return p.a0 + v @ p.A, p.c0 + v @ p.C


@dataclass
class LagrangianResult:
    """Outcome of one Problem-3 solve.

    Attributes
    ----------
    coef, intercept : the recovered primal point
    objective : float
        Its Problem-3 objective (upper bound of the ramp objective + regularizer).
    rows : ndarray of shape (m,)
        Its Problem-3 constraint rows (<= 0 up to rounding).
    multipliers : ndarray of shape (m,)
        Multipliers of the best dual value.
    lower : float
        Dual bound on Problem 3's optimum.
    n_inner : int
        Weighted-SVM solves.
    """

    coef: np.ndarray
    intercept: float
    objective: float
    rows: np.ndarray
    multipliers: np.ndarray
    lower: float
    n_inner: int
    trace: list = field(default_factory=list)


def _kelley(F0, G, v_max):
    """max_v min_t F0_t + G_t v over the box: (value, v)."""
    T, m = G.shape
    c = np.zeros(m + 1)
    c[-1] = -1.0
    A = np.hstack([-G, np.ones((T, 1))])
    bounds = [(0.0, v_max)] * m + [(None, None)]
    res = linprog(c, A_ub=A, b_ub=F0, bounds=bounds, method="highs")
    return -res.fun, res.x[:m]


def _chebyshev(F0, G, L, v_max):
    """Centre of the largest ball in {(v, z): z <= F0_t + G_t v, z >= L, 0 <= v <= v_max}."""
    T, m = G.shape
    # variables (v, z, r); maximize r
    c = np.zeros(m + 2)
    c[-1] = -1.0
    norms = np.sqrt(1.0 + (G ** 2).sum(axis=1))
    rows = [np.hstack([-G, np.ones((T, 1)), norms[:, None]])]
    rhs = [F0]
    rows.append(np.hstack([np.zeros((1, m)), -np.ones((1, 1)), np.ones((1, 1))]))
    rhs.append(np.array([-L]))
    eye = np.eye(m)
    rows.append(np.hstack([-eye, np.zeros((m, 1)), np.ones((m, 1))]))
    rhs.append(np.zeros(m))
    rows.append(np.hstack([eye, np.zeros((m, 1)), np.ones((m, 1))]))
    rhs.append(np.full(m, v_max))
    bounds = [(None, None)] * (m + 1) + [(0.0, None)]
    res = linprog(c, A_ub=np.vstack(rows), b_ub=np.concatenate(rhs), bounds=bounds, method="highs")
    if res.status != 0:
        return None
    return res.x[:m]


def recover_primal(F0, G, feasibility=0.0):
    """Convex combination of evaluated points minimizing the objective subject to the rows.

    Parameters
    ----------
    F0 : ndarray of shape (T,)
    G : ndarray of shape (T, m)
    feasibility : float
        Allowed value of the rows (>= 0; the anchor's own rounding).

    Returns
    -------
    (value, theta) or (None, None) when no combination is feasible.
    """
    T, m = G.shape
    kw = {}
    if m:
        kw = {"A_ub": G.T, "b_ub": np.full(m, feasibility)}
    res = linprog(F0, A_eq=np.ones((1, T)), b_eq=[1.0], bounds=[(0.0, None)] * T, method="highs", **kw)
    if res.status != 0:
        return None, None
    theta = np.clip(res.x, 0.0, None)
    return float(res.fun), theta / theta.sum()


def solve_problem3(majorizer, coef0, intercept0, *, chooser="auto", tol=1e-4, max_iter=30,
                   v_max=1e4, inner_solver="liblinear", inner_tol=1e-4, fit_intercept=True,
                   intercept_scaling=1.0, random_state=None) -> LagrangianResult:
    """Solve Problem 3 at the majorizer's anchor by Alg. 2 (cutting plane over the multipliers).

    Parameters
    ----------
    majorizer : Majorizer
    coef0, intercept0 : the anchor (feasible for Problem 3, as the MM iterate it comes from)
    chooser : {"auto", "kelley", "chebyshev", "bisection"}
        ``"auto"``: bisection for one constraint row, Chebyshev otherwise.
    tol : float
        Stop when the certified gap ``P - L`` or the model gap ``U - L`` is at most ``tol``
        (absolute, in rate units).
    max_iter : int
        Weighted-SVM solves at most.
    v_max : float
        Box on the multipliers.
    inner_solver, inner_tol, fit_intercept, intercept_scaling, random_state
        Passed to :func:`~goalfit.methods.ramp.svm.solve_weighted_svm`; the tolerance is
        loosened to ``0.1 (U - L)`` early on (shallow cuts).

    Returns
    -------
    LagrangianResult
    """
    if chooser not in CHOOSERS:
        raise ValueError(f"chooser must be one of {CHOOSERS}, got {chooser!r}")
    program = majorizer.program
    m = program.n_rows
    if chooser == "auto":
        chooser = "bisection" if m == 1 else "chebyshev"
    if chooser == "bisection" and m != 1:
        raise ValueError(f"the bisection chooser is for one constraint row; this problem has {m}")
    F0a, Ga = majorizer.evaluate(coef0, intercept0)
    coefs, intercepts = [np.asarray(coef0, dtype=float)], [float(intercept0)]
    F0s, Gs = [F0a], [Ga]
    feas = max(0.0, float(Ga.max()) if m else 0.0)
    L, best_v = -np.inf, np.zeros(m)
    v = np.zeros(m)
    lo, hi = 0.0, None  # bisection bracket
    gap = np.inf
    trace = []
    n_inner = 0
    for it in range(max_iter):
        a, c = majorizer.weights(v)
        tol_t = inner_tol if not np.isfinite(gap) else float(np.clip(0.1 * gap, inner_tol, 1e-2))
        sol = solve_weighted_svm(majorizer.X, a, c, majorizer.z_anchor, majorizer.lam,
                                 solver=inner_solver, fit_intercept=fit_intercept, tol=tol_t,
                                 intercept_scaling=intercept_scaling, random_state=random_state)
        n_inner += 1
        F0, G = majorizer.evaluate(sol.coef, sol.intercept)
        u = F0 + float(v @ G)
        if sol.lower is not None:
            const = hinge_training_set(a, c, majorizer.z_anchor)[3]
            lower = sol.lower + const + program.k0 + float(v @ program.k)
            lower = min(lower, u)
        else:
            lower = u
        coefs.append(sol.coef)
        intercepts.append(sol.intercept)
        F0s.append(F0)
        Gs.append(G)
        if lower > L:
            L, best_v = lower, v.copy()
        Garr = np.array(Gs).reshape(len(Gs), m)
        P, theta = recover_primal(np.array(F0s), Garr, feas)
        if m == 0:
            U, v_next = u, v
        else:
            U, v_next = _kelley(np.array(F0s), Garr, v_max)
        gap = min(U, P) - L
        trace.append({"v": v.tolist(), "dual": lower, "U": U, "P": P, "gap": gap})
        if gap <= tol or m == 0:
            break
        if chooser == "chebyshev":
            centre = _chebyshev(np.array(F0s), Garr, L, v_max)
            if centre is not None:
                v_next = centre
        elif chooser == "bisection":
            if G[0] > 0:
                lo = max(lo, float(v[0]))
            else:
                hi = float(v[0]) if hi is None else min(hi, float(v[0]))
            if hi is None:
                v_next = np.array([min(v_max, max(1.0, 4.0 * float(v[0])))])
                if v[0] >= v_max:
                    break
            else:
                v_next = np.array([0.5 * (lo + hi)])
        if np.allclose(v_next, v, rtol=1e-10, atol=1e-12):
            break
        v = np.asarray(v_next, dtype=float)
    coef = np.tensordot(theta, np.array(coefs), axes=1)
    intercept = float(theta @ np.array(intercepts))
    F0, G = majorizer.evaluate(coef, intercept)
    return LagrangianResult(coef, intercept, F0, G, best_v, L, n_inner, trace)
