"""Exact z-steps ("unbiased subdata selection") of Ye & Xie, penalty and constraint forms.

With the classifier fixed, the selection problem is::

    min_{z in {0,1}^N}  sum_i c_i z_i + rho F(z)      [s.t. F(z) <= epsilon]

for a fairness measure ``F`` (:mod:`.framework`). Solvers here, all exact:

* :func:`select` - the unified ``O(N log N)`` solver for OMR, FPR, equal opportunity and
  demographic parity (notes on Ye & Xie §3.7, derived for this library; the paper gives a
  z-step for OMR only), penalty and/or constraint form; ``measure="f1"`` dispatches to
  :func:`select_f1`.
* :func:`select_omr` - Algorithm 1 (OMR, penalty form) with the paper's erratum corrected.
* :func:`select_f1` - Algorithm 6 (``1 - F1``) with the paper's errata corrected.
* :func:`select_multiclass` - Algorithm 3 (multiclass, OMR).
* :func:`select_bruteforce` - enumeration of all ``2^N`` selections (reference, ``N <= 20``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .framework import check_binary_pm1, f1_loss_value, measure_form

__all__ = ["Selection", "select", "select_omr", "select_f1", "select_multiclass",
           "select_bruteforce", "InfeasibleSelectionError"]

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
    """

    z: np.ndarray
    value: float
    fairness: float


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


def select_multiclass(U, y, g, *, t: float, rho: float = 0.0, epsilon: float | None = None) -> Selection:
    """Algorithm 3 of Ye & Xie (multiclass GMSVMF z-step, OMR), constant erratum corrected.

    Parameters
    ----------
    U : array-like of shape (n, K)
        Pairwise violation margins ``u_ij`` (Eq. 27b); the entries ``u_{i, y_i}`` are ignored.
    y : array-like of shape (n,)
        Class codes in ``0..K-1``.
    g : array-like of shape (n,), values in {-1, +1}
    t : float
    rho : float >= 0
    epsilon : float, optional
        OMR constraint.

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
    Complexity ``O(max(NK, N log N))`` (Proposition 13).
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
    c1 = np.where(other, U - t, 0.0).sum(axis=1) / n
    chat = (U[np.arange(n), jstar] - t) / n
    c0 = c1 - chat
    sel = select(chat, np.ones(n, int), g, measure="omr", rho=rho, epsilon=epsilon)
    Z = np.zeros((n, Kc))
    pick = sel.z > 0.5
    Z[np.arange(n), np.where(pick, y, jstar)] = 1.0
    return Selection(Z, float(sel.value + c0.sum()), sel.fairness)


def select_bruteforce(costs, y, g=None, *, measure: str = "omr", rho: float = 0.0,
                      epsilon: float | None = None) -> Selection:
    """Reference z-step: enumerate all ``2^N`` selections (``N <= 20``).

    Same problem and return value as :func:`select`. Raises ValueError for ``N > 20``,
    :class:`InfeasibleSelectionError` when no selection meets ``epsilon``.
    """
    _check_rho_eps(rho, epsilon)
    c = _check_costs(costs)
    n = len(c)
    if n > 20:
        raise ValueError(f"brute force enumerates 2^N selections; N = {n} > 20 is too large")
    Z = ((np.arange(2 ** n)[:, None] >> np.arange(n)) & 1).astype(float)
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
    return Selection(Z[k], float(val[k]), float(F[k]))
