"""Spectral fair SVM (SSVM) of Olfat & Aswani (2018), the baseline of Ye & Xie's Table 6.

Olfat & Aswani, "Spectral Algorithms for Computing Fair Support Vector Machines" (AISTATS
2018), re-implemented from the paper's description (the authors' MATLAB/MOSEK code was read as
a reference only, nothing copied). A linear SVM with two fairness constraints on the
decision function's distribution across groups:

* first moment: ``|B' w| <= d`` with ``B`` the unit-normalised difference of the group means;
* second moment: ``|w' (S+ - S-) w| <= tau`` with ``S+-`` the group covariances, penalised by
  ``mu tau``. ``S+ - S- = P - N`` (PSD parts) makes it a difference of convex functions; each
  DC (convex-concave) iteration linearises the concave part at the previous ``w`` and solves a
  convex QCQP with cvxpy + Clarabel, until ``||w - w_prev|| / ||w_prev|| < tol``.

Objective: ``(1/n) sum_i hinge_i + lam ||w||^2 + mu tau``.
"""
from __future__ import annotations

import numpy as np

from ...utils.extras import optional_import
from ...utils.solvers import solve_cvxpy

from .framework import check_binary_pm1
from .wstep import LinearModel

__all__ = ["fit_ssvm"]


def _psd_factor(S):
    vals, vecs = np.linalg.eigh((S + S.T) / 2)
    Rp = vecs * np.sqrt(np.clip(vals, 0, None))
    Rn = vecs * np.sqrt(np.clip(-vals, 0, None))
    return Rp, Rn  # S = Rp Rp' - Rn Rn'


def _weighted_moments(X, w):
    """Mean and covariance of rows ``X`` weighted as repeated rows (``sum w - 1`` in the denominator)."""
    m = np.average(X, axis=0, weights=w)
    D = X - m
    return m, (D * w[:, None]).T @ D / max(w.sum() - 1.0, 1e-12)


def fit_ssvm(X, y, g, *, d: float = 0.1, mu: float = 0.01, lam: float = 0.01, max_iter: int = 50,
             tol: float = 1e-3, solver: str = "CLARABEL", sample_weight=None) -> LinearModel:
    """Fit the spectral fair SVM by the convex-concave procedure.

    Parameters
    ----------
    X : ndarray of shape (n, p)
    y : ndarray of shape (n,), values in {-1, +1}
    g : ndarray of shape (n,), values in {-1, +1}, or None
        The two groups; None (one group): the fairness constraints are vacuous and the fit is
        the plain hinge SVM of the same objective.
    d : float >= 0
        Bound on the first-moment gap ``|B' w|``.
    mu : float >= 0
        Penalty on the second-moment gap bound ``tau``.
    lam : float >= 0
        Weight of ``||w||^2``.
    max_iter : int
        DC iterations (the authors' code allows 500).
    tol : float
        Relative change of ``w`` that stops the DC loop (1e-3 as in the authors' code).
    sample_weight : ndarray of shape (n,), optional
        Example weights, as repeated rows: the hinge average, the group means and the group
        covariances (``sum w (x - m)(x - m)' / (sum w - 1)``) are weighted.

    Returns
    -------
    LinearModel
        ``extra`` holds ``n_iter`` and ``converged``.

    Raises
    ------
    ValueError
        Labels/groups not in {-1, +1}, a group with fewer than two points, negative parameters.
    """
    cp = optional_import("cvxpy", "SpectralFairSVC")

    X = np.asarray(X, float)
    y = check_binary_pm1(y, "y")
    if d < 0 or mu < 0 or lam < 0:
        raise ValueError("d, mu and lam must be >= 0")
    n, p = X.shape
    sw = None if sample_weight is None else np.asarray(sample_weight, float)

    def hinge_mean(s):
        return cp.sum(s) / n if sw is None else cp.sum(cp.multiply(sw, s)) / sw.sum()

    if g is None:  # one group: the hinge SVM
        w, b, s = cp.Variable(p), cp.Variable(), cp.Variable(n, nonneg=True)
        prob = cp.Problem(cp.Minimize(hinge_mean(s) + lam * cp.sum_squares(w)),
                          [s >= 1 - cp.multiply(y, X @ w + b)])
        solve_cvxpy(prob, solver)
        if w.value is None:
            raise RuntimeError(f"SVM QP failed ({prob.status})")
        return LinearModel(np.asarray(w.value, float).copy(), float(b.value), {"n_iter": 1, "converged": True})
    g = check_binary_pm1(g, "sensitive group g")
    if min(np.sum(g == 1), np.sum(g == -1)) < 2:
        raise ValueError("SSVM needs at least two points in each group")
    Xp, Xm = X[g == 1], X[g == -1]
    if sw is None:
        B = Xp.mean(0) - Xm.mean(0)
        S = np.cov(Xp, rowvar=False) - np.cov(Xm, rowvar=False)
    else:
        (mp, Sp), (mm, Sm) = (_weighted_moments(X[g == k], sw[g == k]) for k in (1, -1))
        B, S = mp - mm, Sp - Sm
    B = B / max(np.linalg.norm(B), 1e-12)
    Rp, Rn = _psd_factor(S)
    P, N = Rp @ Rp.T, Rn @ Rn.T
    w, b, s, tau = cp.Variable(p), cp.Variable(), cp.Variable(n, nonneg=True), cp.Variable()
    cN, kN = cp.Parameter(p), cp.Parameter()
    cP, kP = cp.Parameter(p), cp.Parameter()
    cons = [s >= 1 - cp.multiply(y, X @ w + b), cp.abs(B @ w) <= d,
            cp.sum_squares(Rp.T @ w) - cN @ w + kN <= tau,
            cp.sum_squares(Rn.T @ w) - cP @ w + kP <= tau]
    prob = cp.Problem(cp.Minimize(hinge_mean(s) + lam * cp.sum_squares(w) + mu * tau), cons)
    wk = np.zeros(p)
    converged, it = False, 0
    for it in range(1, max_iter + 1):
        cN.value, kN.value = 2 * N @ wk, float(wk @ N @ wk)
        cP.value, kP.value = 2 * P @ wk, float(wk @ P @ wk)
        solve_cvxpy(prob, solver)
        if w.value is None:
            raise RuntimeError(f"SSVM QCQP failed ({prob.status})")
        wn = np.asarray(w.value, float).copy()
        change = np.linalg.norm(wn - wk) / max(float(np.linalg.norm(wk)), 1e-12)
        wk = wn
        if change < tol:
            converged = True
            break
    return LinearModel(wk, float(b.value), {"n_iter": it, "converged": converged})
