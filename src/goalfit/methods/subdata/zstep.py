"""Exact z-steps ("unbiased subdata selection") of Ye & Xie, penalty and constraint forms.

With the classifier fixed, the selection problem is::

    min_{z in {0,1}^N}  sum_i c_i z_i + rho F(z)      [s.t. the goals' rows of z]

for a fairness measure ``F`` (:mod:`.framework` for the paper's named measures,
:class:`~.measure.SelectionMeasure` for any linear rate goal). Solvers here:

* :func:`select` - the unified ``O(N log N)`` solver for OMR, FPR, equal opportunity and
  demographic parity (notes on Ye & Xie §3.7, derived for this library; the paper gives a
  z-step for OMR only), penalty and/or constraint form; ``measure="f1"`` dispatches to
  :func:`select_f1`.
* :func:`select_omr` - Algorithm 1 (OMR, penalty form) with the paper's erratum corrected.
* :func:`select_f1` - Algorithm 6 (``1 - F1``) with the paper's errata corrected.
* :func:`select_multiclass` - Algorithm 3 (multiclass, OMR or any correctness-only goal).
* :func:`select_structured` - exact ``O(N log N)`` z-step for compiled goals with the paper's
  structure: one constraint whose rows are one affine form or a +/- pair, with at most two
  distinct ``|alpha_i|`` (every two-group difference of rates, a one-sided rate bound such as
  ``coverage(group=...) >= c`` or ``TPR(a) - TPR(b) <= eps``).
* :func:`select_milp` - exact z-step for any other linear goals (several constraints, several
  weight magnitudes: sample weights, more than two groups) as a binary program on HiGHS
  (highspy) with a time limit; the result says whether it was proven optimal.
* :func:`select_goals` - the dispatcher the IRS uses for a :class:`~.measure.SelectionMeasure`.
* :func:`select_bruteforce` - enumeration of all ``2^N`` selections (reference, ``N <= 20``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...utils.solvers import quiet_highs
from .framework import check_binary_pm1, f1_loss_value, measure_form
from .measure import SelectionMeasure

__all__ = ["Selection", "select", "select_omr", "select_f1", "select_multiclass", "select_structured",
           "select_milp", "select_goals", "select_bruteforce", "InfeasibleSelectionError", "ZSTEP_SOLVERS"]

#: ``solver=`` of :func:`select_goals`.
ZSTEP_SOLVERS = ("auto", "structured", "milp")

_TOL = 1e-9


class InfeasibleSelectionError(ValueError):
    """No selection satisfies ``F(z) <= epsilon``."""


@dataclass
class Selection:
    """Result of a z-step.

    Attributes
    ----------
    z : ndarray of shape (n,) (or (n, K) for multiclass), values 0/1
    value : float
        ``sum c_i z_i + rho F(z)`` (plus Algorithm 3's constant for multiclass).
    fairness : float
        ``F(z)`` (``1 - F1`` for ``"f1"``).
    exact : bool
        Whether the selection is proven optimal (False only for a MILP stopped by its time
        limit).
    solver : str
        The z-step that ran: ``"unified"``, ``"alg1"``, ``"alg3"``, ``"alg6"``, ``"structured"``,
        ``"milp"``, ``"sort"`` (no constraint: ``z_i = 1[c_i < 0]``) or ``"bruteforce"``.
    """

    z: np.ndarray
    value: float
    fairness: float
    exact: bool = True
    solver: str = ""


def _check_costs(costs, n=None) -> np.ndarray:
    c = np.asarray(costs, float)
    if c.ndim != 1:
        raise ValueError(f"costs must be one-dimensional, got shape {c.shape}")
    if not np.isfinite(c).all():
        raise ValueError("costs contain NaN or infinite values")
    if n is not None and len(c) != n:
        raise ValueError(f"costs have {len(c)} entries but y has {n}")
    return c


def _check_rho_eps(rho, epsilon):
    if not (np.isfinite(rho) and rho >= 0):
        raise ValueError(f"rho must be a finite number >= 0, got {rho!r}")
    if epsilon is not None and not (np.isfinite(epsilon) and epsilon >= 0):
        raise ValueError(f"epsilon must be None or a finite number >= 0, got {epsilon!r}")


def _ceil_div(a, b):
    return -((-a) // b)


def _profile(c, w):
    """Convex profile ``f(P0 + k) = base + cum[k]`` of ``min sum c_i z_i s.t. sum w_i z_i = P``.

    Start from "all -1-weight items selected" (``P0 = -#{w = -1}``); each unit increase of P
    either selects a +1 item (cost ``c_i``) or drops a -1 item (cost ``-c_i``): take them in
    ascending order of that slope (a Minkowski sum of two sorted prefixes).
    """
    slopes = np.where(w == 1, c, -c)
    order = np.argsort(slopes, kind="stable")
    cum = np.concatenate([[0.0], np.cumsum(slopes[order])])
    base = float(c[w == -1].sum())
    return -int((w == -1).sum()), base, cum, order


def _profile_z(w, order, k):
    z = (w == -1).astype(float)
    z[order[:k]] = 1.0 - z[order[:k]]
    return z


def select(costs, y, g=None, *, measure: str = "omr", rho: float = 0.0, epsilon: float | None = None) -> Selection:
    """Exact z-step for OMR, FPR, EO, DP (and F1 via :func:`select_f1`).

    Solves ``min_z c'z + rho F(z)`` subject to ``F(z) <= epsilon`` when ``epsilon`` is given.
    Every measure is ``F = |(K + Db P - Da Q)/(Da Db)|`` with ``P``, ``Q`` signed counts over
    two blocks (:class:`~.framework.MeasureForm`). ``f_A(P)`` (best cost of block A with count
    P) is convex in P, and so is ``f_B``; for each P the best Q on either side of the kink
    ``Da Q = K + Db P`` is the global minimiser of ``f_B(Q) +- rho Q / Db`` clipped to that side
    (and to the epsilon band), so all P are scanned in O(1) each after sorting.

    Parameters
    ----------
    costs : array-like of shape (n,)
        Selection costs ``c`` (e.g. ``(u_i - t)/N``, :func:`~.framework.selection_costs`).
    y, g : array-like of shape (n,), values in {-1, +1}
        Labels and sensitive groups (``g`` unused for ``"f1"``).
    measure : {"omr", "fpr", "eo", "dp", "f1"}
    rho : float >= 0
        Penalty weight.
    epsilon : float >= 0, optional
        Constraint ``F(z) <= epsilon``.

    Returns
    -------
    Selection

    Raises
    ------
    ValueError
        Bad shapes, NaN costs, labels/groups not in {-1, +1}, empty groups, negative rho or
        epsilon. :class:`InfeasibleSelectionError` when no selection meets ``epsilon`` (not
        possible for OMR/FPR/EO/DP, where selecting nothing, or every positive, has F = 0).

    Notes
    -----
    Source: Ye & Xie (arXiv 2012.12356) Eqs. (12), (22), (24), (26) and the constraint form of
    §3 ("similar results hold"); the unified algorithm is the project's derivation (notes §3.7).
    Complexity O(N log N).
    """
    if measure == "f1":
        return select_f1(costs, y, rho=rho, epsilon=epsilon)
    _check_rho_eps(rho, epsilon)
    form = measure_form(measure, y, g)
    c = _check_costs(costs, form.n)
    Da, Db, K = form.Da, form.Db, form.K
    P0, baseA, cumA, ordA = _profile(c[form.A], form.a)
    Q0, baseB, cumB, ordB = _profile(c[form.B], form.b)
    nQ = len(cumB) - 1
    fB = baseB + cumB
    Qs = Q0 + np.arange(nQ + 1)
    q_hi = int(np.argmin(fB + rho * Qs / Db))  # side Da Q >= s: |F| = (Da Q - s)/(Da Db)
    q_lo = int(np.argmin(fB - rho * Qs / Db))  # side Da Q <= s
    Ps = P0 + np.arange(len(cumA))
    s = K + Db * Ps  # integer
    lo_all, hi_all = np.zeros_like(s), np.full_like(s, nQ)  # index ranges of Q - Q0
    if epsilon is not None:
        band = epsilon * Da * Db
        lo_all = np.maximum(lo_all, np.ceil((s - band) / Da - _TOL).astype(np.int64) - Q0)
        hi_all = np.minimum(hi_all, np.floor((s + band) / Da + _TOL).astype(np.int64) - Q0)
    kink_lo = _ceil_div(s, Da) - Q0   # smallest index with Da Q >= s
    kink_hi = s // Da - Q0            # largest index with Da Q <= s
    best_val = np.full(len(Ps), np.inf)
    best_q = np.zeros(len(Ps), np.int64)
    for L, U, q in ((np.maximum(lo_all, kink_lo), hi_all, q_hi),
                    (lo_all, np.minimum(hi_all, kink_hi), q_lo)):
        ok = L <= U
        qq = np.clip(q, L, np.maximum(U, L))
        val = fB[np.clip(qq, 0, nQ)] + rho * np.abs(s - Da * (Q0 + qq)) / (Da * Db)
        val = np.where(ok, val, np.inf)
        better = val < best_val
        best_val = np.where(better, val, best_val)
        best_q = np.where(better, qq, best_q)
    total = baseA + cumA + best_val
    p = int(np.argmin(total))
    if not np.isfinite(total[p]):
        raise InfeasibleSelectionError(f"no selection has {measure} <= epsilon = {epsilon}")
    z = (c < 0).astype(float)
    z[form.A] = _profile_z(form.a, ordA, p)
    z[form.B] = _profile_z(form.b, ordB, int(best_q[p]))
    F = form.value(z)
    return Selection(z, float(c @ z + rho * F), F)


def select_omr(costs, g, *, rho: float = 0.0) -> Selection:
    """Algorithm 1 of Ye & Xie (OMR subdata selection, penalty form), erratum corrected.

    For each count ``k-`` of selected points in ``D-`` (its cheapest ones), the best count in
    ``D+`` is ``min(floor(k- D+/D-), tau1)`` when group +1's correct-rate is the lower one and
    ``max(ceil(k- D+/D-), tau2)`` otherwise, with ``tau1 = #{c_(l) - rho/D+ < 0}`` and
    ``tau2 = #{c_(l) + rho/D+ < 0}`` over the **sorted D+ costs**. The paper's Algorithm 1
    indexes ``tau2`` over ``D-`` with ``sigma-``; that is an erratum (suboptimal on random
    instances) and the D+ list is used here (notes on Ye & Xie §3.1).

    Parameters
    ----------
    costs : array-like of shape (n,)
    g : array-like of shape (n,), values in {-1, +1}
    rho : float >= 0

    Returns
    -------
    Selection

    Raises
    ------
    ValueError
        NaN costs, groups not in {-1, +1}, an empty group, negative rho.
    """
    _check_rho_eps(rho, None)
    g = check_binary_pm1(g, "sensitive group g")
    c = _check_costs(costs, len(g))
    ip, im = np.flatnonzero(g == 1), np.flatnonzero(g == -1)
    if len(ip) == 0 or len(im) == 0:
        raise ValueError("OMR needs both groups g = +1 and g = -1 to be non-empty")
    Dp, Dm = len(ip), len(im)
    sp, sm = ip[np.argsort(c[ip], kind="stable")], im[np.argsort(c[im], kind="stable")]
    Up = np.concatenate([[0.0], np.cumsum(c[sp])])
    Um = np.concatenate([[0.0], np.cumsum(c[sm])])
    tau1 = int(np.sum(c[sp] - rho / Dp < 0))
    tau2 = int(np.sum(c[sp] + rho / Dp < 0))  # corrected: over D+ (paper: D-)
    km = np.arange(Dm + 1)
    k1 = np.minimum((km * Dp) // Dm, tau1)
    k2 = np.maximum(_ceil_div(km * Dp, Dm), tau2)
    v1 = Up[k1] - rho * k1 / Dp + Um[km] + rho * km / Dm
    v2 = Up[k2] + rho * k2 / Dp + Um[km] - rho * km / Dm
    v = np.minimum(v1, v2)
    j = int(np.argmin(v))
    kp = int(k1[j] if v1[j] <= v2[j] else k2[j])
    z = np.zeros(len(g))
    z[sp[:kp]] = 1.0
    z[sm[:j]] = 1.0
    F = abs(kp / Dp - j / Dm)
    return Selection(z, float(c @ z + rho * F), F)


def select_f1(costs, y, *, rho: float = 0.0, epsilon: float | None = None) -> Selection:
    """Algorithm 6 of Ye & Xie (the ``1 - F1`` z-step, GSVM-F1 / CNN-F1), errata corrected.

    Solves ``min_z sum c_i z_i + rho (N - k+ - k-)/(N + k+ - k-)`` (Eq. 35 with the classifier
    fixed; ``k+-`` = selected positives / negatives), optionally subject to ``1 - F1 <= epsilon``.
    For each ``k-`` the negatives take their cheapest items; with ``g(k) = rho (N - k - k-)/(N
    + k - k-)`` decreasing and convex in k, the positives' marginal ``c_(k) + g(k) - g(k-1)``
    is nondecreasing, and the best ``k+`` is the last k with a non-positive marginal, found by
    bisection (clipped up to the epsilon bound, also convexity-safe).

    Errata corrected (notes on Ye & Xie §3.6): the stray line "m = m" of step 6 is dropped;
    step 7's guard ``tau >= 1`` (which skips the search when no cost is negative although the
    F1 term can still favour selecting) is removed; the bisection uses the upper midpoint so it
    terminates when the bracket has width one (the paper's loop never does).

    Parameters
    ----------
    costs : array-like of shape (n,)
        E.g. ``(u_i - t)/N+-`` (:func:`~.framework.selection_costs` with ``class_weighted``).
    y : array-like of shape (n,), values in {-1, +1}
    rho : float >= 0
    epsilon : float in [0, 1], optional
        Constraint ``1 - F1 <= epsilon``.

    Returns
    -------
    Selection
        ``fairness`` holds ``1 - F1``.

    Raises
    ------
    ValueError
        No positive point, NaN costs, bad labels, negative rho or epsilon;
        :class:`InfeasibleSelectionError` when ``epsilon`` cannot be met.
    """
    _check_rho_eps(rho, epsilon)
    y = check_binary_pm1(y, "y")
    c = _check_costs(costs, len(y))
    ip, im = np.flatnonzero(y == 1), np.flatnonzero(y == -1)
    if len(ip) == 0:
        raise ValueError("1 - F1 needs at least one positive point (y = +1)")
    N, Np, Nm = len(y), len(ip), len(im)
    sp, sm = ip[np.argsort(c[ip], kind="stable")], im[np.argsort(c[im], kind="stable")]
    Up = np.concatenate([[0.0], np.cumsum(c[sp])])
    Um = np.concatenate([[0.0], np.cumsum(c[sm])])
    km = np.arange(Nm + 1)
    a = (N - km).astype(float)  # >= Np >= 1

    def gval(k):
        return rho * (a - k) / (a + k)

    def marginal(k):  # k in 1..Np
        return c[sp][k - 1] + gval(k) - gval(k - 1)

    lo, hi = np.zeros(Nm + 1, np.int64), np.full(Nm + 1, Np, np.int64)
    # upper-mid bisection: every pass at least halves each bracket [lo, hi] (width Np at most),
    # so Np.bit_length() + 1 passes suffice; the cap turns a regression into an error, not a hang
    for _ in range(int(Np).bit_length() + 1):
        active = lo < hi
        if not active.any():
            break
        mid = (lo + hi + 1) // 2
        ok = marginal(np.maximum(mid, 1)) <= 0
        lo = np.where(active & ok, mid, lo)
        hi = np.where(active & ~ok, mid - 1, hi)
    else:
        if (lo < hi).any():
            raise RuntimeError("select_f1: the bisection did not converge within its pass bound")
    kp = lo
    feasible = np.ones(Nm + 1, bool)
    if epsilon is not None:
        kmin = np.ceil(a * (1 - epsilon) / (1 + epsilon) - _TOL).astype(np.int64)
        kmin = np.maximum(kmin, 0)
        feasible = kmin <= Np
        kp = np.minimum(np.maximum(kp, kmin), Np)
    v = np.where(feasible, Up[kp] + Um[km] + gval(kp), np.inf)
    j = int(np.argmin(v))
    if not np.isfinite(v[j]):
        raise InfeasibleSelectionError(f"no selection has 1 - F1 <= epsilon = {epsilon}")
    z = np.zeros(N)
    z[sp[:kp[j]]] = 1.0
    z[sm[:j]] = 1.0
    F = f1_loss_value(z, y)
    return Selection(z, float(c @ z + rho * F), F)


def select_multiclass(U, y, g=None, *, t: float, rho: float = 0.0, epsilon: float | None = None,
                      measure: SelectionMeasure | None = None, solver: str = "auto",
                      time_limit: float = 60.0) -> Selection:
    """Algorithm 3 of Ye & Xie (multiclass GMSVMF z-step), constant erratum corrected.

    Parameters
    ----------
    U : array-like of shape (n, K)
        Pairwise violation margins ``u_ij`` (Eq. 27b); the entries ``u_{i, y_i}`` are ignored.
    y : array-like of shape (n,)
        Class codes in ``0..K-1``.
    g : array-like of shape (n,), values in {-1, +1}
        Groups of the OMR measure (Eq. 27a); unused with ``measure``.
    t : float
    rho : float >= 0
    epsilon : float, optional
        OMR constraint.
    measure : SelectionMeasure, optional
        Compiled correctness-only goals instead of OMR (:meth:`SelectionMeasure.from_compiled`):
        ``reward_i`` replaces the ``1/N`` of Eq. 27a and the binary selection of the correct
        class is :func:`select_goals` on the costs below (``rho``, ``epsilon`` unused).
    solver, time_limit :
        Passed to :func:`select_goals` with ``measure``.

    Returns
    -------
    Selection
        ``z`` of shape (n, K): ``z[i, y_i] = 1`` for selected points, otherwise
        ``z[i, j*_i] = 1`` with ``j*_i = argmax_{j != y_i} u_ij``. ``value`` is the full
        Eq. (27a) objective without the regulariser, i.e. the paper's ``v`` **plus** the
        constant ``sum_i c_bar_i0`` (Algorithm 3's step 3 initialises with it but never adds
        it to the reported value; it does not change the argmin).

    Notes
    -----
    Selecting point i changes its cost from ``c_bar_i0`` to ``c_bar_i1``, a difference of
    ``(u_{i j*} - t)/N``; the selection is Algorithm 1 / :func:`select` on those costs.
    Complexity ``O(max(NK, N log N))`` (Proposition 13) with a structured measure.
    """
    U = np.asarray(U, float)
    y = np.asarray(y)
    if U.ndim != 2 or U.shape[0] != len(y):
        raise ValueError(f"U must have shape (n, K) with n = len(y) = {len(y)}, got {U.shape}")
    n, Kc = U.shape
    if y.dtype.kind not in "iu" or y.min() < 0 or y.max() >= Kc:
        raise ValueError(f"y must hold class codes in 0..{Kc - 1}")
    if not np.isfinite(U).all():
        raise ValueError("U contains NaN or infinite values")
    Uo = U.copy()
    Uo[np.arange(n), y] = -np.inf
    jstar = np.argmax(Uo, axis=1)
    other = np.ones((n, Kc), bool)
    other[np.arange(n), y] = False
    weight = np.full(n, 1.0 / n) if measure is None else np.asarray(measure.reward, float)
    c1 = np.where(other, U - t, 0.0).sum(axis=1) * weight
    chat = (U[np.arange(n), jstar] - t) * weight
    c0 = c1 - chat
    if measure is None:
        sel = select(chat, np.ones(n, int), g, measure="omr", rho=rho, epsilon=epsilon)
        solver_name = "alg3"
    else:
        sel = select_goals(chat, measure, solver=solver, time_limit=time_limit)
        solver_name = f"alg3+{sel.solver}"
    Z = np.zeros((n, Kc))
    pick = sel.z > 0.5
    Z[np.arange(n), np.where(pick, y, jstar)] = 1.0
    return Selection(Z, float(sel.value + c0.sum()), sel.fairness, sel.exact, solver_name)


def _stack_fairness(measure, Z):
    """``F`` and feasibility of every row of ``Z`` (k, n) under a SelectionMeasure."""
    F = np.zeros(len(Z))
    if measure.n_constraints:
        F += measure.violations(Z).reshape(len(Z), -1).sum(axis=1)
    ok = np.ones(len(Z), bool)
    enf = measure.enforced
    if enf.any():
        lim = measure.bounds[measure.row_group[enf]]
        ok &= np.all(Z @ measure.alpha[enf].T + measure.kappa[enf] <= lim + measure.tolerance(), axis=1)
    if measure.f1_labels is not None:
        y = measure.f1_labels
        kp, km = Z[:, y == 1].sum(1), Z[:, y == -1].sum(1)
        f1 = (len(y) - kp - km) / (len(y) + kp - km)
        F += f1
        if not np.isnan(measure.f1_bound):
            ok &= f1 <= measure.f1_bound + 1e-12
    return F, ok


def select_structured(costs, measure: SelectionMeasure, structure: dict | None = None) -> Selection:
    """Exact ``O(N log N)`` z-step for compiled goals with the paper's structure.

    Solves ``min_z c'z + rho F(z)`` subject to the enforced rows, when the goals hold one
    constraint whose rows are ``kappa_k + s_k a'z`` (``s_k = +1``, or a +/- pair) and ``|a_i|``
    takes at most two non-zero values ``mu_1, mu_2`` (:meth:`SelectionMeasure.structure`).
    Then ``a'z = mu_1 P + mu_2 Q`` with signed counts ``P`` over block 1 and ``Q`` over block 2;
    ``f_1(P) = min {c'z on block 1 : count P}`` and ``f_2(Q)`` are convex (sorted slopes, as in
    :func:`select`), and for each ``P`` the function ``f_2(Q) + rho max(0, max_k kappa_k +
    s_k (mu_1 P + mu_2 Q))`` is convex in ``Q`` on the interval the enforced rows allow, so its
    minimum is found by bisection on the forward difference: ``O(N log N)`` in all. Examples
    with ``a_i = 0`` are selected when ``c_i < 0``.

    This is the unified z-step of the notes on Ye & Xie §3.7 (the paper's Alg. 1 for OMR)
    extended from ``mu = 1/D`` group sizes and a zero kink to any two magnitudes, one-sided rows
    (``coverage(group=g) >= c``, ``TPR(a) - TPR(b) <= eps``) and the goal's bound; exact, with
    a row counted as met within :data:`~.measure.ZTOL` of one example's weight.

    Parameters
    ----------
    costs : array-like of shape (n,)
    measure : SelectionMeasure
    structure : dict, optional
        ``measure.structure()`` when already computed.

    Returns
    -------
    Selection

    Raises
    ------
    ValueError
        The measure lacks the structure (use :func:`select_milp`), or bad costs.
    InfeasibleSelectionError
        No selection meets the enforced rows.
    """
    st = measure.structure() if structure is None else structure
    if st is None:
        raise ValueError("the goals lack the structure of the exact O(N log N) z-step (one constraint, one row or "
                         "a +/- pair, at most two weight magnitudes): use select_milp")
    c = _check_costs(costs, measure.n)
    rho = float(measure.rho)
    _check_rho_eps(rho, None)
    a, block, mags = st["a"], st["block"], st["mags"]
    kap, sg, e = st["kappas"], st["signs"], st["bound"]
    tol = measure.tolerance()
    z = (c < 0).astype(float)
    if len(mags) == 0:  # no row depends on z
        if not np.isnan(e) and np.any(kap > e + tol):
            raise InfeasibleSelectionError(f"no selection meets {measure.names}: the rows do not depend on z")
        return Selection(z, measure.value(c, z), measure.fairness(z), True, "sort")
    idx = [np.flatnonzero(block == k) for k in range(2)]
    sgn = [np.where(a[i] > 0, 1, -1) for i in idx]
    P0, baseA, cumA, ordA = _profile(c[idx[0]], sgn[0])
    Q0, baseB, cumB, ordB = _profile(c[idx[1]], sgn[1])
    mu1 = float(mags[0])
    mu2 = float(mags[1]) if len(mags) > 1 else 1.0  # block 2 empty: Q = 0 and mu2 plays no role
    fA, fB = baseA + cumA, baseB + cumB
    nB = len(cumB) - 1
    mA = mu1 * (P0 + np.arange(len(fA)))
    L = np.zeros(len(fA), np.int64)
    U = np.full(len(fA), nB, np.int64)
    if not np.isnan(e):
        for kk, s in zip(kap, sg):  # kk + s (mA + mu2 Q) <= e
            if s > 0:
                lim = np.floor((e - kk - mA + tol) / mu2) - Q0
                U = np.minimum(U, np.clip(lim, -1, nB + 1).astype(np.int64))
            else:
                lim = np.ceil((kk - e - mA - tol) / mu2) - Q0
                L = np.maximum(L, np.clip(lim, -1, nB + 1).astype(np.int64))

    def g(q):
        qq = np.clip(q, 0, nB)
        out = fB[qq]
        if rho > 0:
            m = mA + mu2 * (Q0 + qq)
            out = out + rho * np.maximum(0.0, np.max(kap[:, None] + sg[:, None] * m[None, :], axis=0))
        return out

    ok = L <= U
    lo, hi = np.where(ok, L, 0), np.where(ok, U, 0)
    for _ in range(int(nB).bit_length() + 2):
        active = lo < hi
        if not active.any():
            break
        mid = (lo + hi) // 2
        up = g(mid + 1) - g(mid) >= 0
        hi = np.where(active & up, mid, hi)
        lo = np.where(active & ~up, mid + 1, lo)
    total = np.where(ok, fA + g(lo), np.inf)
    p = int(np.argmin(total))
    if not np.isfinite(total[p]):
        raise InfeasibleSelectionError(f"no selection meets {measure.names}")
    z[idx[0]] = _profile_z(sgn[0], ordA, p)
    z[idx[1]] = _profile_z(sgn[1], ordB, int(lo[p]))
    return Selection(z, measure.value(c, z), measure.fairness(z), True, "structured")


def select_milp(costs, measure: SelectionMeasure, *, time_limit: float = 60.0,
                mip_rel_gap: float = 1e-9) -> Selection:
    """Exact z-step for any linear goals: a binary program on HiGHS (highspy).

    ``min c'z + rho sum_c v_c`` over ``z in {0,1}^N`` and ``v >= 0`` with ``v_c >= row_r(z)``
    for every row ``r`` of constraint ``c`` (when ``rho > 0``) and ``row_r(z) <= bound_c`` for the
    enforced rows (the constraint form). Examples no row depends on are fixed at
    ``z_i = 1[c_i < 0]`` first. Each row is scaled so one example weighs about 1 and the
    objective so its largest coefficient is 1 (HiGHS's absolute tolerances then mean a
    millionth of an example). Without the paper's structure this problem is a multi-dimensional
    knapsack (NP-hard), hence the time limit.

    Parameters
    ----------
    costs : array-like of shape (n,)
    measure : SelectionMeasure
        Linear goals (not ``1 - F1``).
    time_limit : float
        Seconds for HiGHS.
    mip_rel_gap : float
        HiGHS's relative optimality gap (its absolute gap is 1e-9 of the largest cost).

    Returns
    -------
    Selection
        ``exact`` is True when HiGHS proved optimality (within its gaps), False when the time
        limit stopped it with a feasible selection.

    Raises
    ------
    ValueError
        An F1 measure, bad costs.
    InfeasibleSelectionError
        No selection meets the enforced rows.
    RuntimeError
        HiGHS found no selection within the time limit.
    """
    if measure.f1_labels is not None:
        raise ValueError("1 - F1 is not linear in z: use select_f1 (Algorithm 6)")
    c = _check_costs(costs, measure.n)
    rho = float(measure.rho)
    _check_rho_eps(rho, None)
    z = (c < 0).astype(float)
    A = measure.alpha
    active = np.any(A != 0, axis=0) if measure.n_rows else np.zeros(measure.n, bool)
    idx = np.flatnonzero(active)
    k = len(idx)
    if k == 0:
        if not measure.feasible(z):
            raise InfeasibleSelectionError(f"no selection meets {measure.names}: the rows do not depend on z")
        return Selection(z, measure.value(c, z), measure.fairness(z), True, "sort")
    pen = [j for j in range(measure.n_constraints) if rho > 0]
    G = len(pen)
    obj = np.r_[c[idx], np.full(G, rho)]
    oscale = 1.0 / max(float(np.abs(obj).max()), 1e-300)
    rows, ubs = [], []
    tol = measure.tolerance()
    enf = measure.enforced
    for r in range(measure.n_rows):
        ar = A[r, idx]
        nz = np.abs(ar[ar != 0])
        rs = 1.0 / float(nz.min()) if nz.size else 1.0
        if enf[r]:
            rows.append(np.r_[ar, np.zeros(G)] * rs)
            ubs.append((measure.bounds[measure.row_group[r]] - measure.kappa[r] + tol) * rs)
        if G:
            v = np.zeros(G)
            v[pen.index(int(measure.row_group[r]))] = -1.0
            rows.append(np.r_[ar, v] * rs)
            ubs.append(-measure.kappa[r] * rs)
    import highspy

    H = quiet_highs()
    for key, val in (("time_limit", float(time_limit)), ("mip_rel_gap", float(mip_rel_gap)),
                     ("mip_abs_gap", 1e-9)):
        H.setOptionValue(key, val)
    lp = highspy.HighsLp()
    lp.num_col_ = k + G
    lp.col_cost_ = obj * oscale
    lp.col_lower_ = np.zeros(k + G)
    lp.col_upper_ = np.r_[np.ones(k), np.full(G, highspy.kHighsInf)]
    lp.integrality_ = [highspy.HighsVarType.kInteger] * k + [highspy.HighsVarType.kContinuous] * G
    if rows:
        from scipy.sparse import csc_matrix

        Am = csc_matrix(np.array(rows))
        lp.num_row_ = Am.shape[0]
        lp.row_lower_ = np.full(Am.shape[0], -highspy.kHighsInf)
        lp.row_upper_ = np.array(ubs, float)
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        lp.a_matrix_.start_ = Am.indptr.astype(np.int32)
        lp.a_matrix_.index_ = Am.indices.astype(np.int32)
        lp.a_matrix_.value_ = Am.data
    H.passModel(lp)
    H.run()
    status = H.getModelStatus()
    S = highspy.HighsModelStatus
    sol = H.getSolution()
    if status == S.kInfeasible:
        raise InfeasibleSelectionError(f"no selection meets {measure.names}")
    if status != S.kOptimal and not sol.value_valid:
        raise RuntimeError(f"the MILP z-step found no selection within {time_limit:g} s "
                           f"(HiGHS: {H.modelStatusToString(status)})")
    z[idx] = np.round(np.asarray(sol.col_value, float)[:k])
    return Selection(z, measure.value(c, z), measure.fairness(z), bool(status == S.kOptimal), "milp")


def select_goals(costs, measure: SelectionMeasure, *, solver: str = "auto", time_limit: float = 60.0) -> Selection:
    """The exact z-step for a :class:`~.measure.SelectionMeasure` (the dispatcher of the IRS).

    * the paper's named measures (:meth:`SelectionMeasure.from_named`): :func:`select` (the
      unified solver; OMR, FPR, EO, DP) or :func:`select_f1` (Alg. 6);
    * ``1 - F1`` (GSVM-F1, Eq. 35): :func:`select_f1`;
    * no constraint: ``z_i = 1[c_i < 0]``;
    * the structure of :meth:`SelectionMeasure.structure`: :func:`select_structured`;
    * anything else: :func:`select_milp`.

    Parameters
    ----------
    costs : array-like of shape (n,)
    measure : SelectionMeasure
    solver : {"auto", "structured", "milp"}
        ``"structured"`` refuses goals without the structure; ``"milp"`` forces HiGHS.
    time_limit : float
        Seconds, for the MILP.

    Returns
    -------
    Selection

    Raises
    ------
    ValueError
        An unknown solver, ``"structured"`` on goals without the structure, F1 with rows.
    InfeasibleSelectionError
        No selection meets the enforced rows.
    """
    if solver not in ZSTEP_SOLVERS:
        raise ValueError(f"solver must be one of {list(ZSTEP_SOLVERS)}, got {solver!r}")
    if measure.named is not None and solver == "auto":
        name, y, g, eps = measure.named
        sel = select(costs, y, g, measure=name, rho=measure.rho, epsilon=eps)
        sel.solver = "alg6" if name == "f1" else "unified"
        return sel
    if measure.f1_labels is not None:
        if measure.n_rows:
            raise ValueError("1 - F1 with linear rows has no exact z-step here")
        eps = None if np.isnan(measure.f1_bound) else measure.f1_bound
        sel = select_f1(costs, measure.f1_labels, rho=measure.rho, epsilon=eps)
        sel.solver = "alg6"
        return sel
    st = None if solver == "milp" else measure.structure()
    if st is not None:
        return select_structured(costs, measure, st)
    if solver == "structured":
        raise ValueError("the goals lack the structure of the exact O(N log N) z-step (one constraint, one row or "
                         "a +/- pair, at most two weight magnitudes); use solver='milp'")
    return select_milp(costs, measure, time_limit=time_limit)


def select_bruteforce(costs, y=None, g=None, *, measure="omr", rho: float = 0.0,
                      epsilon: float | None = None) -> Selection:
    """Reference z-step: enumerate all ``2^N`` selections (``N <= 20``).

    Same problem and return value as :func:`select` (a named ``measure`` on ``y``, ``g``), or as
    :func:`select_goals` when ``measure`` is a :class:`~.measure.SelectionMeasure` (then ``y``,
    ``g``, ``rho`` and ``epsilon`` are unused). Raises ValueError for ``N > 20``,
    :class:`InfeasibleSelectionError` when no selection meets ``epsilon`` (or the rows).
    """
    c = _check_costs(costs)
    n = len(c)
    if n > 20:
        raise ValueError(f"brute force enumerates 2^N selections; N = {n} > 20 is too large")
    Z = ((np.arange(2 ** n)[:, None] >> np.arange(n)) & 1).astype(float)
    if isinstance(measure, SelectionMeasure):
        if measure.n != n:
            raise ValueError(f"costs have {n} entries but the measure has {measure.n}")
        F, ok = _stack_fairness(measure, Z)
        val = np.where(ok, Z @ c + measure.rho * F, np.inf)
        k = int(np.argmin(val))
        if not np.isfinite(val[k]):
            raise InfeasibleSelectionError(f"no selection meets {measure.names}")
        return Selection(Z[k], float(val[k]), float(F[k]), True, "bruteforce")
    _check_rho_eps(rho, epsilon)
    if measure == "f1":
        y = check_binary_pm1(y, "y")
        if not (y == 1).any():
            raise ValueError("1 - F1 needs at least one positive point (y = +1)")
        kp, km = Z[:, y == 1].sum(1), Z[:, y == -1].sum(1)
        F = (n - kp - km) / (n + kp - km)
    else:
        alpha, kappa = measure_form(measure, y, g).coef()
        F = np.abs(Z @ alpha + kappa)
    val = Z @ c + rho * F
    if epsilon is not None:
        val = np.where(F <= epsilon + _TOL, val, np.inf)
    k = int(np.argmin(val))
    if not np.isfinite(val[k]):
        raise InfeasibleSelectionError(f"no selection has {measure} <= epsilon = {epsilon}")
    return Selection(Z[k], float(val[k]), float(F[k]), True, "bruteforce")
