"""Classifier steps ("w-steps") of the iterative refining strategy: train on the selected subdata.

Each learner implements ``fit(X, y, weights) -> model`` (``weights = z``, or the class-weighted
selection of GSVM-F1, :func:`~.framework.step_weights`; points with weight 0 are left out), ``outcomes(model, X, y) -> u``,
``regularizer(model) -> float`` and ``decision_function(model, X)``; ``kind`` says how outcomes
become selection costs (``"margin"``: ``(u - t)/N``; ``"score"``: ``(t - u)/N``) and
``monotone`` whether the step minimises the same objective as the z-step (so the IRS objective
cannot increase; Ye & Xie Prop. 9).

Labels are ``y in {-1, +1}`` (multiclass: codes ``0..K-1``); ``z`` is the 0/1 selection.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...utils.extras import optional_import
from ...utils.solvers import solve_cvxpy
from sklearn.base import clone

__all__ = ["DegenerateSelection", "LinearModel", "LinearSVMStep", "LogisticStep", "KernelSVMStep",
           "EstimatorStep", "MulticlassSVMStep", "PositiveProbabilityScore", "LinearArgmaxRule"]


class DegenerateSelection(RuntimeError):
    """The selected subdata cannot train the model (e.g. a single class is selected)."""


@dataclass
class LinearModel:
    """Linear scores ``X @ w + b`` (``w`` of shape (d,) or (d, K), ``b`` scalar or (K,))."""

    w: np.ndarray
    b: np.ndarray | float
    extra: dict = field(default_factory=dict)


def _check_lam(lam):
    if not (np.isfinite(lam) and lam >= 0):
        raise ValueError(f"lam must be a finite number >= 0, got {lam!r}")


class _CachedQP:
    """A cvxpy problem compiled once per data set (``_build``), re-solved with new parameters."""

    def __init__(self, lam: float, solver: str):
        _check_lam(lam)
        self.lam, self.solver = float(lam), solver
        self._cache: tuple | None = None  # (data key, *what _build returns)

    def _build(self, X, y) -> tuple:  # pragma: no cover - abstract
        """The compiled problem of data ``(X, y)``: its cvxpy objects, as a tuple."""
        raise NotImplementedError

    def _problem(self, X, y):
        key = (id(X), id(y), X.shape)
        if self._cache is None or self._cache[0] != key:
            self._cache = (key, *self._build(X, y))
        return self._cache[1:]

    def __getstate__(self):  # the compiled problem holds solver objects: not picklable
        return {**self.__dict__, "_cache": None}


class LinearSVMStep(_CachedQP):
    """GSVM w-step: ``min (1/N) sum_i z_i hinge_i + lam ||w||^2`` (a convex QP).

    Ye & Xie Alg. 2 step 5 (the paper uses gradient descent). Two backends:

    * ``"liblinear"``: the same problem scaled by ``1/(2 lam)`` is
      scikit-learn's ``LinearSVC(C = 1/(2 lam N), loss="hinge")`` with ``sample_weight = z``,
      solved by liblinear's dual coordinate descent to ``tol``. liblinear's intercept is a
      penalized feature (``intercept_scaling`` 10), so the intercept is then re-optimized
      exactly for the returned ``w`` (a weighted quantile of the hinge breakpoints): the pair
      is near, not at, the joint optimum (within 1e-5 relative in the tests; up to a few
      percent of the objective with ``lam = 1`` on 55 points).
    * ``"cvxpy"``: the exact QP with cvxpy + Clarabel (an LP on HiGHS when ``lam = 0``),
      compiled once per data set with the selection as a parameter; the reference in tests and
      the only backend for ``lam = 0``.

    ``"auto"`` (default) takes the exact QP up to ``exact_max_rows`` rows (2,000: exact
    comparisons such as Ye & Xie's Table 4 need it) and liblinear above, where the QP is much
    slower
    (see benchmarks/README.md, section "Measurements behind the library's choices").
    The IRS keeps its best iterate, so
    an inexact w-step cannot make its result worse than a previous iterate.

    Parameters
    ----------
    lam : float >= 0
    solver : str, optional
        cvxpy solver; default "HIGHS" when ``lam = 0`` (LP), else "CLARABEL" (QP).
    backend : {"auto", "liblinear", "cvxpy"}, default "auto"
        "auto": cvxpy when ``lam = 0`` or at most ``exact_max_rows`` rows, else liblinear.
    tol : float, default 1e-6
        liblinear's stopping tolerance.
    exact_max_rows : int, default 2000
    """

    kind = "margin"
    monotone = True
    multiclass = False

    def __init__(self, lam: float = 1.0, solver: str | None = None, backend: str = "auto",
                 tol: float = 1e-6, exact_max_rows: int = 2000):
        super().__init__(lam, solver or ("HIGHS" if lam == 0 else "CLARABEL"))
        if backend not in ("auto", "liblinear", "cvxpy"):
            raise ValueError(f"backend must be 'auto', 'liblinear' or 'cvxpy', got {backend!r}")
        if backend == "liblinear" and not lam > 0:
            raise ValueError("the liblinear backend needs lam > 0 (lam = 0 is an LP: backend='cvxpy')")
        self.backend, self.tol, self.exact_max_rows = backend, float(tol), int(exact_max_rows)

    def _backend(self, n_rows):
        if self.backend != "auto":
            return self.backend
        return "cvxpy" if self.lam == 0 or n_rows <= self.exact_max_rows else "liblinear"

    def _build(self, X, y):
        cp = optional_import("cvxpy", "FairSubdataClassifier(model='svm') (its exact SVM w-step)")

        n, d = X.shape
        w, b, s = cp.Variable(d), cp.Variable(), cp.Variable(n, nonneg=True)
        zp = cp.Parameter(n, nonneg=True)
        obj = cp.sum(cp.multiply(zp, s)) / n + self.lam * cp.sum_squares(w)
        prob = cp.Problem(cp.Minimize(obj), [s >= 1 - cp.multiply(y, X @ w + b)])
        return prob, w, b, zp

    def fit(self, X, y, weights) -> LinearModel:
        if self._backend(len(y)) == "liblinear":
            return self._fit_liblinear(X, y, np.asarray(weights, float))
        prob, w, b, zp = self._problem(X, y)
        zp.value = np.asarray(weights, float)
        solve_cvxpy(prob, self.solver)
        if w.value is None:
            raise RuntimeError(f"the SVM w-step failed ({prob.status})")
        return LinearModel(np.asarray(w.value, float).copy(), float(b.value))

    def _fit_liblinear(self, X, y, z):
        import warnings

        from sklearn.exceptions import ConvergenceWarning
        from sklearn.svm import LinearSVC

        sel = z > 0
        if len(np.unique(y[sel])) < 2:  # w = 0 and b = the selected class meet every hinge
            return LinearModel(np.zeros(X.shape[1]), float(y[sel][0]) if sel.any() else 0.0)
        m = LinearSVC(C=1.0 / (2 * self.lam * len(y)), loss="hinge", dual=True, tol=self.tol,
                      max_iter=10000, intercept_scaling=10.0, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            m.fit(X[sel], y[sel], sample_weight=z[sel])
        w = np.asarray(m.coef_, float).ravel().copy()
        # liblinear penalizes the intercept; the w-step does not: re-optimize it exactly for w
        return LinearModel(w, _best_intercept(X[sel] @ w, y[sel], z[sel]))

    @staticmethod
    def decision_function(model, X):
        return X @ model.w + model.b

    def outcomes(self, model, X, y):
        return np.maximum(0.0, 1.0 - y * self.decision_function(model, X))

    def regularizer(self, model) -> float:
        return self.lam * float(model.w @ model.w)


def _best_intercept(scores, y, weights) -> float:
    """``argmin_b sum_i weights_i max(0, 1 - y_i (scores_i + b))``, exactly (``y`` in {-1, +1}).

    The objective is convex and piecewise linear in ``b`` with one breakpoint per example
    (``1 - s_i`` for ``y_i = +1``, ``-1 - s_i`` for ``y_i = -1``); its slope starts at minus the
    positives' weight and rises by ``weights_i`` at each breakpoint, so the minimizer is the
    first breakpoint where the cumulative weight reaches the positives' weight (a weighted
    quantile, O(n log n)).
    """
    t = np.where(y > 0, 1.0 - scores, -1.0 - scores)
    order = np.argsort(t, kind="stable")
    cum = np.cumsum(weights[order])
    k = int(np.searchsorted(cum, weights[y > 0].sum() - 1e-12 * cum[-1]))
    return float(t[order[min(k, len(t) - 1)]])


class LogisticStep:
    """GLRF w-step: L2 logistic regression on the selected points (Ye & Xie Eq. 31).

    ``min (1/N) sum_{z_i = 1} -log P(y_i | x_i) + lam ||w||^2`` is scikit-learn's
    ``LogisticRegression(C = 1/(2 lam N))`` on the subset (``C = inf`` when ``lam = 0``);
    outcomes are the log-likelihoods ``u_i = log P(y_i | x_i) <= 0``. Successive w-steps
    warm-start L-BFGS from the previous step's coefficients (the selections of consecutive IRS
    iterations differ in few points).

    Parameters
    ----------
    lam : float >= 0
    """

    kind = "score"
    monotone = True
    multiclass = False

    def __init__(self, lam: float = 0.0):
        _check_lam(lam)
        self.lam = float(lam)
        self._lr = None

    def fit(self, X, y, weights) -> LinearModel:
        from sklearn.linear_model import LogisticRegression

        sw = np.asarray(weights, float)
        sel = sw > 0
        if len(np.unique(y[sel])) < 2:
            raise DegenerateSelection("logistic regression needs both classes among the selected points")
        C = np.inf if self.lam == 0 else 1.0 / (2 * self.lam * len(y))
        lr = self._lr
        prev = getattr(lr, "coef_", None)
        if lr is None or prev is None or prev.shape[1] != X.shape[1]:
            lr = self._lr = LogisticRegression(C=C, tol=1e-9, max_iter=10000, warm_start=True)
        lr = lr.set_params(C=C).fit(X[sel], y[sel], sample_weight=sw[sel])
        return LinearModel(lr.coef_[0].copy(), float(lr.intercept_[0]))

    @staticmethod
    def decision_function(model, X):
        return X @ model.w + model.b

    def outcomes(self, model, X, y):
        return -np.logaddexp(0.0, -y * self.decision_function(model, X))

    def regularizer(self, model) -> float:
        return self.lam * float(model.w @ model.w)


class EstimatorStep:
    """Black-box w-step (Ye & Xie Alg. 5): refit any estimator with ``sample_weight = z``.

    Outcomes are the predicted probabilities of the true label (``kind="score"``, threshold
    ``t`` in (0, 1)); the regulariser is 0 and the step does not minimise the IRS objective, so
    the IRS keeps its best iterate instead of relying on monotonicity.

    Parameters
    ----------
    estimator : classifier with ``fit(X, y, sample_weight=...)`` and ``predict_proba``
    """

    kind = "score"
    monotone = False
    multiclass = False

    def __init__(self, estimator):
        if not hasattr(estimator, "fit") or not hasattr(estimator, "predict_proba"):
            raise ValueError("the estimator needs fit(X, y, sample_weight=...) and predict_proba")
        self.estimator = estimator

    def fit(self, X, y, weights):
        zf = np.asarray(weights, float)
        if len(np.unique(y[zf > 0])) < 2:
            raise DegenerateSelection("the estimator needs both classes among the selected points")
        est = clone(self.estimator)
        est.fit(X, y, sample_weight=zf)
        return est

    @staticmethod
    def decision_function(model, X):
        P = model.predict_proba(X)
        return P[:, list(model.classes_).index(1)] - 0.5

    def outcomes(self, model, X, y):
        P = model.predict_proba(X)
        cols = np.searchsorted(model.classes_, y)
        return P[np.arange(len(y)), cols]

    def regularizer(self, model) -> float:
        return 0.0


class KernelSVMStep(EstimatorStep):
    """GKSVMF w-step (Ye & Xie Alg. 4): ``sklearn.svm.SVC`` retrained on the selected points.

    Outcomes are hinge margins ``max(0, 1 - y f(x))`` (``kind="margin"``); the regulariser is 0
    (Eq. 32). Not monotone (SVC minimises its own objective): the IRS keeps the best iterate.

    Parameters
    ----------
    kernel : {"rbf", "poly", ...}
    C, gamma, degree : SVC parameters (scikit-learn defaults; the paper does not give them)
    """

    kind = "margin"

    def __init__(self, kernel: str = "rbf", C: float = 1.0, gamma="scale", degree: int = 3):
        from sklearn.svm import SVC

        self.estimator = SVC(kernel=kernel, C=C, gamma=gamma, degree=degree)

    def fit(self, X, y, weights):
        sw = np.asarray(weights, float)
        sel = sw > 0
        if len(np.unique(y[sel])) < 2:
            raise DegenerateSelection("the kernel SVM needs both classes among the selected points")
        return clone(self.estimator).fit(X[sel], y[sel], sample_weight=sw[sel])

    @staticmethod
    def decision_function(model, X):
        return model.decision_function(X)

    def outcomes(self, model, X, y):
        return np.maximum(0.0, 1.0 - y * model.decision_function(X))


class MulticlassSVMStep(_CachedQP):
    """GMSVMF w-step: Weston-Watkins multiclass SVM QP (Ye & Xie Eq. 27b) on the kept terms.

    ``min (1/N) sum_i sum_{j != y_i} (1 - z_ij) u_ij + lam sum_j ||w_j||^2`` with
    ``u_ij >= max(0, 1 - (w_{y_i} - w_j)'x_i - (b_{y_i} - b_j))``, solved exactly with cvxpy +
    Clarabel. ``z`` is the (n, K) assignment of Algorithm 3.

    Parameters
    ----------
    lam : float >= 0
    n_classes : int
    """

    kind = "margin"
    monotone = True
    multiclass = True

    def __init__(self, lam: float = 1.0, n_classes: int = 3, solver: str = "CLARABEL"):
        super().__init__(lam, solver)
        self.n_classes = int(n_classes)

    def _build(self, X, y):
        cp = optional_import("cvxpy", "FairSubdataClassifier(model='svm') (its exact SVM w-step)")

        n, d = X.shape
        K = self.n_classes
        W, b = cp.Variable((d, K)), cp.Variable(K)
        U = cp.Variable((n, K), nonneg=True)
        onehot = np.eye(K)[y]
        S = X @ W + np.ones((n, 1)) @ cp.reshape(b, (1, K), order="C")
        true = cp.sum(cp.multiply(onehot, S), axis=1)
        M = cp.Parameter((n, K), nonneg=True)
        cons = [U >= 1 - (cp.reshape(true, (n, 1), order="C") @ np.ones((1, K)) - S)]
        prob = cp.Problem(cp.Minimize(cp.sum(cp.multiply(M, U)) / n + self.lam * cp.sum_squares(W)), cons)
        return prob, W, b, M

    def fit(self, X, y, weights, scale=None) -> LinearModel:
        """``weights``: the (n, K) assignment ``z`` of Algorithm 3; ``scale`` (n,), optional,
        multiplies each point's terms (``N reward_i`` for compiled goals, :mod:`.measure`)."""
        prob, W, b, M = self._problem(X, y)
        mask = 1.0 - np.asarray(weights, float)
        mask[np.arange(len(y)), y] = 0.0
        if scale is not None:
            mask *= np.asarray(scale, float)[:, None]
        M.value = mask
        solve_cvxpy(prob, self.solver)
        if W.value is None:
            raise RuntimeError(f"the multiclass SVM w-step failed ({prob.status})")
        return LinearModel(np.asarray(W.value, float).copy(), np.asarray(b.value, float).copy())

    @staticmethod
    def decision_function(model, X):
        return X @ model.w + model.b

    def outcomes(self, model, X, y):
        S = self.decision_function(model, X)
        U = np.maximum(0.0, 1.0 - (S[np.arange(len(y)), y][:, None] - S))
        U[np.arange(len(y)), y] = 0.0
        return U

    def regularizer(self, model) -> float:
        return self.lam * float(np.sum(model.w ** 2))


class PositiveProbabilityScore:
    """Score ``P(y = +1 | x) - 1/2`` of a fitted probabilistic model (an :class:`EstimatorStep`'s
    model, trained on labels in {-1, +1}): positive where the model predicts +1.

    Parameters
    ----------
    model : fitted classifier with ``predict_proba`` and ``classes_`` holding +1
    """

    def __init__(self, model):
        self.model = model

    def __call__(self, X) -> np.ndarray:
        return EstimatorStep.decision_function(self.model, X)


class LinearArgmaxRule:
    """The multiclass rule ``argmax_k (X W + b)_k`` of a GMSVMF model (Ye & Xie Eq. 27).

    Parameters
    ----------
    w : ndarray of shape (d, K)
    b : ndarray of shape (K,)
    classes : ndarray of shape (K,)
        The label of each column.
    """

    def __init__(self, w, b, classes):
        self.w = np.asarray(w, float)
        self.b = np.asarray(b, float)
        self.classes = np.asarray(classes)

    def decision_function(self, X) -> np.ndarray:
        """Scores, shape (n_samples, K)."""
        return np.asarray(X, float) @ self.w + self.b

    def predict(self, X) -> np.ndarray:
        """Labels, shape (n_samples,)."""
        return self.classes[np.argmax(self.decision_function(X), axis=1)]
