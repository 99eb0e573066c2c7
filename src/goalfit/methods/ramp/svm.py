"""The inner problem: for fixed Lagrange multipliers, Problem 3 is a weighted SVM.

With combined weights ``a_x`` (on the positive prediction) and ``c_x`` (negative) and anchor
scores ``z'``, the Lagrangian of Problem 3 (Goh et al., NIPS 2016, Eq. 6-7) is, up to constants,

    sum_x a_x [z'_x <= 1/2] max(0, 1/2 + f(x)) + c_x [z'_x >= -1/2] max(0, 1/2 - f(x)) + lam/2 |w|^2

(``f(x) = <w, x> + intercept``): a hinge loss with margin 1/2 on examples labelled -1 (weight
``a_x``) and +1 (weight ``c_x``); an example in the ramp's linear zone appears twice, with both
labels. Rescaling ``w~ = 2 w`` gives the standard SVM ``1/2 |w~|^2 + (2 / lam) sum_k omega_k
max(0, 1 - y_k f~(x_k))`` (Appendix F is missing from the paper text; the reduction is derived in
the notes and checked against cvxpy in the tests).

Solvers: ``"dcd"`` (the default: dual coordinate descent, :mod:`.dcd`, warm-started from the
previous solve's dual variables through a :class:`~goalfit.methods.ramp.dcd.DualState`; exact
unregularized intercept; its dual value is a certified lower bound and it stops on the duality
gap ``tol``), ``"liblinear"`` (scikit-learn ``LinearSVC``, fast, sparse-friendly; its intercept is a
regularized feature of value ``intercept_scaling``, so it is almost, not exactly, unregularized;
no dual variables, so no certified lower bound), ``"svc"`` (``SVC(kernel="linear")``: exact
unregularized intercept and dual variables, hence an exact lower bound; O(n^2), small data) and
``"cvxpy"`` (the reference).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ...utils.extras import optional_import

INNER_SOLVERS = ("dcd", "liblinear", "svc", "cvxpy")


@dataclass
class SVMSolution:
    """Minimizer of the weighted-hinge problem.

    Attributes
    ----------
    coef : ndarray of shape (d,)
    intercept : float
    lower : float or None
        A lower bound on the optimal value of the hinge + regularizer part (from dual
        variables), or None when the solver exposes none.
    epochs : int or None
        Coordinate-descent epochs (``"dcd"`` only).
    gap : float or None
        Certified duality gap of the returned point (``"dcd"`` only).
    """

    coef: np.ndarray
    intercept: float
    lower: float | None = None
    epochs: int | None = None
    gap: float | None = None


def hinge_training_set(a, c, z_anchor):
    """Rows, labels (+-1) and weights of the weighted SVM; constants of the dropped terms.

    Parameters
    ----------
    a, c : ndarray of shape (n,), non-negative
    z_anchor : ndarray of shape (n,)

    Returns
    -------
    rows : ndarray of int, y : ndarray of +-1, omega : ndarray, constant : float
    """
    neg = np.flatnonzero((a > 0) & (z_anchor <= 0.5))
    pos = np.flatnonzero((c > 0) & (z_anchor >= -0.5))
    constant = float(a[(a > 0) & (z_anchor > 0.5)].sum() + c[(c > 0) & (z_anchor < -0.5)].sum())
    rows = np.concatenate([neg, pos])
    y = np.concatenate([-np.ones(len(neg)), np.ones(len(pos))])
    omega = np.concatenate([a[neg], c[pos]])
    return rows, y, omega, constant


def _dual_value(X, y, alpha, lam):
    """``1/2 sum alpha - |sum alpha y x|^2 / (2 lam)`` (dual of the margin-1/2 weighted SVM)."""
    v = X.T @ (alpha * y)
    v = np.asarray(v).ravel()
    return 0.5 * float(alpha.sum()) - float(v @ v) / (2 * lam)


def solve_weighted_svm(X, a, c, z_anchor, lam, *, solver="dcd", fit_intercept=True,
                       tol=1e-4, max_iter=1000, intercept_scaling=1.0, random_state=None,
                       warm_start=None) -> SVMSolution:
    """Minimize the Lagrangian of Problem 3 for fixed multipliers (the inner problem).

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, d)
    a, c : ndarray of shape (n,)
        Non-negative combined weights on the positive / negative prediction.
    z_anchor : ndarray of shape (n,)
        Scores of the MM anchor.
    lam : float
        l2 regularization (``lam/2 |w|^2``), > 0.
    solver : {"dcd", "liblinear", "svc", "cvxpy"}
    fit_intercept : bool
    tol, max_iter, intercept_scaling : solver settings. For ``"dcd"``, ``tol`` is the certified
        duality gap (absolute) and ``max_iter`` the most epochs; for liblinear / SVC their own
        stopping tolerances and iteration limits.
    random_state : seed for the coordinate order (dcd, liblinear)
    warm_start : DualState, optional
        ``"dcd"`` only: start from (and store) these dual variables; default a cold start.

    Returns
    -------
    SVMSolution

    Raises
    ------
    ValueError
        For an unknown solver, ``lam <= 0``, or a ``warm_start`` built for another matrix (other
        shape or entries).
    """
    if solver not in INNER_SOLVERS:
        raise ValueError(f"inner solver must be one of {INNER_SOLVERS}, got {solver!r}")
    if not lam > 0:
        raise ValueError(f"the regularization lam must be positive, got {lam!r}")
    d = X.shape[1]
    rows, y, omega, _ = hinge_training_set(a, c, z_anchor)
    if len(rows) == 0:
        return SVMSolution(np.zeros(d), 0.0, 0.0)
    if len(np.unique(y)) == 1:
        # every hinge is met by w = 0 and an intercept of y/2: the minimum (zero) is attained
        return SVMSolution(np.zeros(d), 0.5 * float(y[0]) if fit_intercept else 0.0,
                           0.0 if fit_intercept else None)
    if solver == "dcd":
        from .dcd import DualState, solve_dcd

        seed = 0 if random_state is None else random_state
        state = DualState(X, seed) if warm_start is None else warm_start
        if not state.matches(X):
            raise ValueError(f"warm_start was built for another matrix (shape {state.shape}) than X "
                             f"(shape {X.shape}): the dcd solver works on the warm start's copy of X")
        a_r, c_r = np.zeros(len(a)), np.zeros(len(a))
        a_r[rows[y < 0]], c_r[rows[y > 0]] = omega[y < 0], omega[y > 0]
        rr = np.flatnonzero((a_r > 0) | (c_r > 0))
        coef, intercept, dual, primal, epochs = solve_dcd(state, rr, a_r[rr], c_r[rr], lam, fit_intercept=fit_intercept,
                                                     intercept_scaling=intercept_scaling, tol=tol,
                                                     max_epochs=max_iter, random_state=seed)
        return SVMSolution(coef, intercept, dual, epochs, primal - dual)
    Xs = X[rows]
    if solver == "cvxpy":
        return _solve_cvxpy(Xs, y, omega, lam, fit_intercept)
    if solver == "svc":
        from sklearn.svm import SVC

        if not fit_intercept:
            raise ValueError("solver='svc' always fits an intercept; use 'liblinear' or 'cvxpy'")
        m = SVC(kernel="linear", C=2.0 / lam, tol=min(tol, 1e-3), max_iter=-1)
        m.fit(Xs, y, sample_weight=omega)
        coef = np.asarray(m.coef_.todense() if sp.issparse(m.coef_) else m.coef_).ravel() / 2
        alpha = np.zeros(len(rows))
        alpha[m.support_] = (lam / 2) * np.abs(m.dual_coef_).ravel()
        alpha = np.minimum(alpha, omega)
        return SVMSolution(coef, float(m.intercept_[0]) / 2, _dual_value(Xs, y, alpha, lam))
    from sklearn.svm import LinearSVC

    m = LinearSVC(C=2.0 / lam, loss="hinge", dual=True, tol=tol, max_iter=max_iter,
                  fit_intercept=fit_intercept, intercept_scaling=intercept_scaling,
                  random_state=random_state)
    import warnings
    from sklearn.exceptions import ConvergenceWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        m.fit(Xs, y, sample_weight=omega)
    return SVMSolution(np.asarray(m.coef_).ravel() / 2, float(m.intercept_[0]) / 2 if fit_intercept else 0.0)


def _solve_cvxpy(Xs, y, omega, lam, fit_intercept):
    cp = optional_import("cvxpy", "inner_solver='cvxpy'")

    Xd = Xs.toarray() if sp.issparse(Xs) else np.asarray(Xs, dtype=float)
    w = cp.Variable(Xd.shape[1])
    b = cp.Variable() if fit_intercept else 0.0
    f = Xd @ w + b
    obj = cp.sum(cp.multiply(omega, cp.pos(0.5 - cp.multiply(y, f)))) + lam / 2 * cp.sum_squares(w)
    prob = cp.Problem(cp.Minimize(obj))
    prob.solve(solver=cp.CLARABEL)
    return SVMSolution(np.asarray(w.value).ravel(), 0.0 if isinstance(b, float) else float(b.value),
                       float(prob.value))
