"""Problem 3 by Lagrange multipliers: a cutting-plane method over the multipliers (Alg. 2).

Problem 3 (Goh et al., NIPS 2016, §2.2) is convex: the ramp's hinge/constant upper bounds at the
MM anchor, plus ``lam/2 |w|^2``. Its dual function ``F(v) = min_{w,b} Psi(w, b, v)`` (Eq. 6-7) is
concave in the multipliers ``v >= 0``; evaluating it is a weighted SVM (:mod:`.svm`). Any primal
point ``(w_t, b_t)`` gives the cut ``F(v) <= F0_t + <G_t, v>`` (its objective ``F0_t`` and
constraint values ``G_t``), so the cuts collected so far give a piecewise-linear upper model of
``F`` whose maximum ``U`` bounds the optimum from above, and the best dual value ``L`` from below.

The paper's cut chooser is in its missing Appendix E; here (documented departures):

* ``"kelley"``: the next multipliers maximize the cut model (one HiGHS LP; in closed form for
  one multiplier);
* ``"chebyshev"``: the centre of the largest ball in the localization set
  ``{(v, z): L <= z <= cuts, 0 <= v <= v_max}`` (one HiGHS LP; steadier than Kelley);
* ``"bisection"``: the one-dimensional variant for a single constraint (§4.1): ``v = 0`` if the
  constraint is inactive there, else bracket the sign change of the supergradient, then take the
  1-D Kelley point safeguarded by bisection (regula falsi's safeguard).

Warm start across MM iterations (our addition): the first multipliers evaluated are the previous
MM step's (``v0``), and the dcd inner solver starts from the previous solve's dual variables
(``warm_start``); the bracket then grows by factors 1.1, 1.2, 1.4, ... instead of x4.

Shallow cuts (Bland, Goldfarb & Todd 1981): the inner solver's tolerance follows the current gap
``U - L`` (loose early, tight near the end); with the dcd solver, a cut so shallow that the
chooser proposes the same multipliers again is refined in place (the same multipliers, warm, a
10x tighter inner gap) instead of ending the loop; when the inner solver ran out of epochs there
(huge multipliers), the next multipliers are half-way back to the best dual point.

Dual values: with ``inner_solver="dcd"`` (the default, :mod:`.dcd`) or ``"svc"`` the SVM's dual
variables give a certified lower bound on ``F(v)``, so the loop stops on a certified gap;
liblinear exposes none, so its Lagrangian value at the returned point stands in for
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
# the dcd inner solves' duality gap as a fraction of the outer gap still to close (shallow cuts):
# speed.py's fits, seeds 0-5, took 6-14% fewer passes at 1/2 than at 1/4 (first solve of a step)
# and 1/10 (later solves), for 10-15% more (cheaper) solves; 1/10 and 1/20 took 6-12% more
# than 1/4 and 1/10
INNER_GAP_FRACTION = 0.5


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
    if m == 1:
        return _kelley_1d(F0, G[:, 0], v_max)
    c = np.zeros(m + 1)
    c[-1] = -1.0
    A = np.hstack([-G, np.ones((T, 1))])
    bounds = [(0.0, v_max)] * m + [(None, None)]
    res = linprog(c, A_ub=A, b_ub=F0, bounds=bounds, method="highs")
    return -res.fun, res.x[:m]


def _kelley_1d(F0, g, v_max):
    """:func:`_kelley` for one multiplier, in closed form (an LP per call cost a noticeable share
    of a fit; see benchmarks/README.md, section "Measurements behind the library's choices").

    The cut model ``min_t F0_t + g_t v`` is concave and piecewise linear, so its maximum over
    ``[0, v_max]`` is at an end or where two cuts cross: the smallest maximizing candidate.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        cross = (F0[None, :] - F0[:, None]) / (g[:, None] - g[None, :])
    cand = np.concatenate([[0.0, v_max], cross[np.isfinite(cross) & (cross > 0) & (cross < v_max)]])
    values = (F0[:, None] + g[:, None] * cand[None, :]).min(axis=0)
    best = values.max()
    v = cand[values >= best - 1e-12 * max(1.0, abs(best))].min()
    return float((F0 + g * v).min()), np.array([v])


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


def _bisection_step(v, g, lo, hi, kelley, v_max, warm, moved):
    """Next multiplier of the one-row chooser: ``(v_next or None to stop, lo, hi)``.

    Bracket the sign change of the supergradient ``G(v)`` (the constraint value at the inner
    solution): grow ``v`` while ``G > 0`` (from a warm start by factors 1.1, 1.2, 1.4, 1.8, ...,
    since the previous MM step's multiplier is near; from zero to 1, then x4), shrink it (the same
    factors, or /2 cold; then 0) while ``G <= 0`` with no point of ``G > 0`` yet. Inside the bracket take the 1-D Kelley
    point (the maximum of the cut model, which lies in the bracket because the cuts at its ends
    slope towards each other), bisecting instead when it falls in the outer 1% of the bracket or
    when the same end moved twice in a row (the safeguard of regula falsi).
    """
    if g > 0:
        lo = v if lo is None else max(lo, v)
        moved.append("lo")
    else:
        hi = v if hi is None else min(hi, v)
        moved.append("hi")
    step = 1.0 + 0.1 * 2.0 ** (len(moved) - 1)  # warm: 1.1, 1.2, 1.4, ... (the start is near)
    if hi is None:
        if v >= v_max:
            return None, lo, hi
        return min(v_max, step * v if warm and v > 0 else max(1.0, 4.0 * v)), lo, hi
    if lo is None:
        if hi == 0.0:  # the constraint is inactive at v = 0: v = 0 is optimal
            return None, lo, hi
        return ((hi / step if warm else 0.5 * hi) if hi > 1e-8 else 0.0), lo, hi
    width = hi - lo
    if lo + 0.01 * width < kelley < hi - 0.01 * width and moved[-2:] != [moved[-1]] * 2:
        return kelley, lo, hi
    return 0.5 * (lo + hi), lo, hi


def recover_primal(F0, G, feasibility=0.0):
    """Convex combination of evaluated points minimizing the objective subject to the rows.

    One HiGHS LP; for at most one row, its closed form (:func:`_recover_primal_1d`).

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
    if m <= 1:
        return _recover_primal_1d(F0, G[:, 0] if m else np.zeros(T), feasibility)
    kw = {"A_ub": G.T, "b_ub": np.full(m, feasibility)}
    res = linprog(F0, A_eq=np.ones((1, T)), b_eq=[1.0], bounds=[(0.0, None)] * T, method="highs", **kw)
    if res.status != 0:
        return None, None
    theta = np.clip(res.x, 0.0, None)
    return float(res.fun), theta / theta.sum()


def _recover_primal_1d(F0, g, feasibility):
    """:func:`recover_primal` for at most one row, in closed form.

    The LP has two constraints besides ``theta >= 0``, so a vertex mixes at most two points: the
    best point whose row is met, or the mix of a met point ``i`` and a violating one ``j`` that
    puts the row at ``feasibility`` exactly.
    """
    T = len(F0)
    met = g <= feasibility
    if not met.any():
        return None, None
    theta = np.zeros(T)
    i = np.flatnonzero(met)[np.argmin(F0[met])]
    theta[i], value = 1.0, float(F0[i])
    I, J = np.flatnonzero(met), np.flatnonzero(~met)
    if len(J):
        tj = (feasibility - g[I][:, None]) / (g[J][None, :] - g[I][:, None])  # the weight on j
        mix = F0[I][:, None] + tj * (F0[J][None, :] - F0[I][:, None])
        k = np.unravel_index(np.argmin(mix), mix.shape)
        if mix[k] < value:
            theta[i] = 0.0
            theta[I[k[0]]], theta[J[k[1]]] = 1.0 - tj[k], tj[k]
            value = float(theta @ F0)
    return value, theta


def solve_problem3(majorizer, coef0, intercept0, *, chooser="auto", tol=1e-4, max_iter=30,
                   v_max=1e4, inner_solver="dcd", inner_tol=1e-4, fit_intercept=True,
                   intercept_scaling=1.0, random_state=None, v0=None, warm_start=None,
                   rel_tol=0.0, expected_decrease=None) -> LagrangianResult:
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
    rel_tol : float, default 0
        Also stop when the certified gap is at most ``rel_tol`` times the certified decrease
        ``F0(anchor) - P`` (an inexact MM step, our addition): since the optimum is at least
        ``L = P - gap``, the step then achieves at least ``1 / (1 + rel_tol)`` of the exact
        step's decrease of the majorizer, and stays feasible (primal recovery). Early MM steps,
        whose decrease is large, stop after a few solves; late ones still stop at ``tol``.
    expected_decrease : float, optional
        A guess of the step's decrease (the previous MM step's), which sets the first dcd solve's
        tolerance to ``max(tol, rel_tol * expected_decrease) / 2`` instead of ``inner_tol``
        (efficiency only: the stopping rule is unchanged).
    max_iter : int
        Weighted-SVM solves at most.
    v_max : float
        Box on the multipliers.
    inner_solver, inner_tol, fit_intercept, intercept_scaling, random_state
        Passed to :func:`~goalfit.methods.ramp.svm.solve_weighted_svm`; the tolerance is
        loosened to ``0.1 (U - L)`` early on (shallow cuts). With ``"dcd"`` the tolerance is the
        inner duality gap, half the smaller of the current gap and the gap the step stops at
        (``INNER_GAP_FRACTION``), never below ``min(inner_tol, tol / 2)``, so that the certified
        gap can close, nor above 1e-2.
    v0 : ndarray of shape (m,), optional
        First multipliers to evaluate (warm start: the previous MM step's); default zero.
    warm_start : DualState, optional
        Dual variables of the ``"dcd"`` inner solver, carried from solve to solve (and from one
        call to the next).

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
    v = np.zeros(m) if v0 is None else np.clip(np.asarray(v0, dtype=float).reshape(m), 0.0, v_max)
    warm = bool(v.any())
    lo, hi = None, None  # bisection bracket: multipliers evaluated with G > 0 / G <= 0
    moved: list[str] = []  # bisection: which end each step moved
    gap = np.inf
    trace = []
    n_inner = 0
    floor = min(inner_tol, 0.5 * tol) if inner_solver == "dcd" else inner_tol
    target = tol
    refine = None
    for it in range(max_iter):
        a, c = majorizer.weights(v)
        if inner_solver == "dcd":  # the inner gap must stay below the gap the step stops at
            first = (inner_tol if expected_decrease is None
                     else INNER_GAP_FRACTION * max(tol, rel_tol * expected_decrease))
            tol_t = float(np.clip(first if not np.isfinite(gap) else INNER_GAP_FRACTION * min(gap, target), floor,
                                  1e-2))
            if refine is not None:
                tol_t = refine
        else:
            tol_t = floor if not np.isfinite(gap) else float(np.clip(0.1 * gap, floor, 1e-2))
        sol = solve_weighted_svm(majorizer.X, a, c, majorizer.z_anchor, majorizer.lam,
                                 solver=inner_solver, fit_intercept=fit_intercept, tol=tol_t,
                                 intercept_scaling=intercept_scaling, random_state=random_state,
                                 warm_start=warm_start)
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
        # inexact step: a gap below rel_tol x the certified decrease already secures at least
        # 1 / (1 + rel_tol) of the exact step's decrease of the majorizer
        target = max(tol, rel_tol * (F0a - P)) if P is not None else tol
        trace.append({"v": v.tolist(), "dual": lower, "U": U, "P": P, "gap": gap})
        if gap <= target or m == 0:
            break
        if chooser == "chebyshev":
            centre = _chebyshev(np.array(F0s), Garr, L, v_max)
            if centre is not None:
                v_next = centre
        elif chooser == "bisection":
            v_next, lo, hi = _bisection_step(float(v[0]), float(G[0]), lo, hi, float(v_next[0]), v_max, warm,
                                             moved)
            if v_next is None:
                break
        v_next = np.atleast_1d(np.asarray(v_next, dtype=float))
        refine = None
        if np.allclose(v_next, v, rtol=1e-10, atol=1e-12):
            if sol.gap is None or sol.gap <= floor:
                break
            if sol.gap <= 2 * tol_t:
                # a shallow cut that moved nothing: re-solve here, warm, to a tighter inner gap
                refine = max(floor, 0.1 * sol.gap)
            elif not np.allclose(best_v, v, rtol=1e-10, atol=1e-12):
                # the inner solver ran out of epochs (huge multipliers make it ill-conditioned):
                # step half-way back to the best dual point, which the localization set contains
                v_next = 0.5 * (v + best_v)
            else:
                break
        v = v_next
    coef = np.tensordot(theta, np.array(coefs), axes=1)
    intercept = float(theta @ np.array(intercepts))
    F0, G = majorizer.evaluate(coef, intercept)
    return LagrangianResult(coef, intercept, F0, G, best_v, L, n_inner, trace)
