"""Zeroth-order estimates of the gradient of the unknown monotone psi (Jiang et al. 2020, §5).

The metric is modelled as ``M(theta) = psi(phi(theta)) + eps(theta)`` with phi the K
surrogates; these estimators return ``g ~ grad psi(phi(theta))`` in R^K.

* :class:`LinearInterpolation` -- Algorithm 3 (used in all the paper's experiments): perturb
  theta in parameter space, regress metric differences on surrogate differences,
  ``g = argmin ||H g - M||^2``. ``mode="two_point"`` is the paper's (two independent
  perturbation sets, no intercept); ``mode="one_sided"`` is the authors' colab (differences
  against the unperturbed model, regression with an intercept; the notes' I.3.5).
* :class:`FiniteDifference` -- Algorithm 2: perturb the training *scores* so that the
  surrogates move by exactly ``sigma Z`` (Z ~ N(0, I_K)) and average
  ``(M(f + delta) - M(f)) / sigma * Z`` (Gaussian smoothing of psi).
* :class:`SmoothedTwoPoint` -- §5.3, for Lipschitz but non-smooth psi (Duchi et al. 2015):
  ``mean [psi(u + s1 Z1 + s2 Z2) - psi(u + s1 Z1)] / s2 * Z2``, the gradient of the
  s1-smoothed psi.

Score perturbations (Alg. 2 and §5.3) follow the paragraph after Alg. 2: each surrogate is an
average of a pointwise loss over its own slice, and the slices must be disjoint; we move every
margin of slice k by one common shift ``c_k`` found by bisection on the monotone map
``c -> mean_{i in S_k} l(y_i s_i - c)`` (the notes' alternative [O], which also works for the
hinge loss, not invertible pointwise). Targets the loss cannot reach (e.g. a hinge average below
0) are dropped and counted in ``n_dropped``; the metric must then be measured on the training
sample.

With constraints, the problem's selection sample gives, beside the objective, the constraint
rows ``A vec(C) - b`` of every perturbed model (:meth:`BlackBoxProblem.values_many`); the same
perturbations then estimate their gradients in surrogate space: Alg. 3 regresses the (m, 1 + R)
matrix of differences on H at once (H and its conditioning are unchanged), Alg. 2 and §5.3
average the differences of every column. The objective's estimate is :attr:`GradientEstimate.gradient`,
the constraint rows' are the columns of :attr:`GradientEstimate.jacobian`.

Every estimate carries diagnostics: the condition number of H (Alg. 3), the relative residual
``||H g - M|| / ||M||`` (of the objective's column), the number of metric evaluations.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

__all__ = ["GradientEstimate", "IllConditionedWarning", "LinearInterpolation", "FiniteDifference", "SmoothedTwoPoint",
           "shift_scores_to_targets", "ESTIMATORS", "make_gradient_estimator"]


@dataclass
class GradientEstimate:
    """A gradient estimate of psi with its diagnostics.

    Attributes
    ----------
    gradient : ndarray of shape (K,)
        Of the objective's psi.
    jacobian : ndarray of shape (K, R)
        Of the R constraint rows (``A vec(C) - b`` on the selection sample) in surrogate space;
        shape (K, 0) without constraints.
    condition_number : float or None
        ``cond(H)`` of the regression (Alg. 3; None for the averaging estimators).
    residual : float or None
        ``||H g - M|| / ||M||`` (Alg. 3), None otherwise.
    n_metric_calls : int
        Models evaluated by the metric.
    n_dropped : int
        Perturbations whose surrogate targets could not be reached (Alg. 2, §5.3).
    """

    gradient: np.ndarray
    condition_number: float | None = None
    residual: float | None = None
    n_metric_calls: int = 0
    n_dropped: int = 0
    jacobian: np.ndarray | None = None

    def __post_init__(self):
        if self.jacobian is None:
            self.jacobian = np.zeros((len(self.gradient), 0))


def _split(G, cond=None, resid=None, calls=0, dropped=0) -> GradientEstimate:
    """A :class:`GradientEstimate` from the (K, 1 + R) estimate of the objective and the rows."""
    G = np.asarray(G, dtype=float)
    if G.ndim == 1:
        G = G[:, None]
    return GradientEstimate(G[:, 0].copy(), cond, resid, calls, dropped, G[:, 1:].copy())


class IllConditionedWarning(RuntimeWarning):
    """The regression matrix H of Alg. 3 is ill-conditioned: the estimate is unreliable."""


def _check_m(m, K, extra, what):
    if int(m) < K + extra:
        raise ValueError(f"{what} needs at least K + {extra} = {K + extra} perturbations for K = {K} "
                         f"surrogates, got n_perturbations={m}")


class LinearInterpolation:
    """Algorithm 3: local linear interpolation of the metric on the surrogates.

    Parameters
    ----------
    n_perturbations : int, default 100
        m (the paper: 1000, the authors' colab: 100).
    sigma : float, default 1.0
        Perturbation scale in parameter space (standardize the features so one sigma suits all).
    mode : {"two_point", "one_sided"}, default "two_point"
        ``"two_point"``: ``H_j = phi(theta + s Z1_j) - phi(theta + s Z2_j)`` (Alg. 3 as printed);
        ``"one_sided"``: ``H_j = phi(theta + s Z_j) - phi(theta)`` (the colab).
    fit_intercept : bool, optional
        Regress with an intercept; default False for two_point, True for one_sided (the colab
        uses scikit-learn's ``LinearRegression``).
    ridge : float, default 0
        Tikhonov term ``ridge * m * ||g||^2`` for ill-conditioned H (0: plain least squares,
        ``numpy.linalg.lstsq``).
    perturb : array of bool of shape (d,), optional
        Which parameters to perturb (the colab perturbs the weights, not the bias); default all.
    max_condition : float, default 1e8
        Above this ``cond(H)`` an :class:`IllConditionedWarning` is issued.

    Raises
    ------
    ValueError
        At estimation, for fewer than ``K + 1`` perturbations (``K + 2`` with an intercept),
        or non-finite metric values.
    """

    def __init__(self, n_perturbations=100, sigma=1.0, *, mode="two_point", fit_intercept=None, ridge=0.0,
                 perturb=None, max_condition=1e8):
        if mode not in ("two_point", "one_sided"):
            raise ValueError(f"mode must be 'two_point' or 'one_sided', got {mode!r}")
        if not sigma > 0:
            raise ValueError(f"sigma must be positive, got {sigma}")
        if ridge < 0:
            raise ValueError(f"ridge must be >= 0, got {ridge}")
        self.n_perturbations, self.sigma, self.mode = int(n_perturbations), float(sigma), mode
        self.fit_intercept = (mode == "one_sided") if fit_intercept is None else bool(fit_intercept)
        self.ridge, self.perturb, self.max_condition = float(ridge), perturb, float(max_condition)

    def estimate(self, problem, theta, rng) -> GradientEstimate:
        """Estimate ``grad psi(phi(theta))`` for a :class:`BlackBoxProblem`."""
        theta = np.asarray(theta, dtype=float)
        K, m, d = len(problem.surrogates), self.n_perturbations, len(theta)
        _check_m(m, K, 1 + int(self.fit_intercept), "linear interpolation (Alg. 3)")
        mask = np.ones(d) if self.perturb is None else np.asarray(self.perturb, dtype=float)
        if mask.shape != (d,):
            raise ValueError(f"perturb must have shape ({d},), got {mask.shape}")
        Z1 = rng.standard_normal((m, d)) * mask
        T1 = theta + self.sigma * Z1
        if self.mode == "two_point":
            T2 = theta + self.sigma * rng.standard_normal((m, d)) * mask
            H = problem.phi_many(T1) - problem.phi_many(T2)
            M = problem.values_many(T1) - problem.values_many(T2)
            calls = 2 * m
        else:
            H = problem.phi_many(T1) - problem.phi(theta)
            M = problem.values_many(T1) - problem.values_many(theta[None, :])
            calls = m + 1
        if not np.isfinite(M).all():
            raise ValueError("the metric returned non-finite values")
        G, cond, resid = regress(H, M, fit_intercept=self.fit_intercept, ridge=self.ridge)
        if cond > self.max_condition:
            warnings.warn(f"Alg. 3: ill-conditioned H (cond = {cond:.3g} > {self.max_condition:.3g}); the "
                          "surrogates barely vary or move together: raise sigma or m, or set ridge",
                          IllConditionedWarning, stacklevel=2)
        return _split(G, cond, resid, calls)


def regress(H, M, *, fit_intercept=False, ridge=0.0):
    """Least squares ``g = argmin ||H g (+ b) - M||^2 (+ ridge m ||g||^2)``, one column of M at a time.

    Parameters
    ----------
    H : ndarray of shape (m, K)
    M : ndarray of shape (m,) or (m, 1 + R)
        Metric differences (objective first, then the constraint rows).

    Returns
    -------
    (g of shape (K,) or (K, 1 + R), cond(H) after centering, relative residual
    ``||H g + b - M|| / ||M||`` of the first column)
    """
    Hc, Mc = H, M
    if fit_intercept:
        Hc, Mc = H - H.mean(axis=0), M - M.mean(axis=0)
    sv = np.linalg.svd(Hc, compute_uv=False)
    cond = float(sv[0] / sv[-1]) if sv[-1] > 0 else float("inf")
    if ridge > 0:
        m, K = Hc.shape
        g = np.linalg.solve(Hc.T @ Hc + ridge * m * np.eye(K), Hc.T @ Mc)
    else:
        g = np.linalg.lstsq(Hc, Mc, rcond=None)[0]
    first = (Mc if Mc.ndim == 1 else Mc[:, 0]), (g if g.ndim == 1 else g[:, 0])
    norm = np.linalg.norm(first[0])
    resid = float(np.linalg.norm(Hc @ first[1] - first[0]) / norm) if norm > 0 else 0.0
    return g, cond, resid


def shift_scores_to_targets(problem, scores, offsets, *, n_bisect=40):
    """Scores whose surrogates equal ``phi(scores) + offsets`` (Alg. 2 step 2).

    Parameters
    ----------
    problem : BlackBoxProblem
    scores : array of shape (n,)
        Training scores ``f0``.
    offsets : array of shape (m, K)
        Wanted surrogate changes.
    n_bisect : int

    Returns
    -------
    S : ndarray of shape (m, n)
        Perturbed scores (rows whose target is unreachable hold ``f0``).
    ok : ndarray of bool, shape (m,)
        Rows whose targets were all reachable.

    Raises
    ------
    ValueError
        If the slices overlap or a surrogate is not a pointwise average.
    """
    sur = problem.surrogates
    if not sur.disjoint():
        raise ValueError("score perturbations (Alg. 2, §5.3) need disjoint slices; these surrogates "
                         "overlap (e.g. overlapping groups): use LinearInterpolation (Alg. 3)")
    if any(loss is None for loss in sur.losses):
        raise ValueError("score perturbations need pointwise-average surrogates (not quantile ones)")
    f0 = np.asarray(scores, dtype=float)
    m, K = offsets.shape
    S = np.repeat(f0[None, :], m, axis=0)
    ok = np.ones(m, dtype=bool)
    base = sur.values(f0)
    for k, (idx, loss) in enumerate(zip(sur.index, sur.losses)):
        z = sur.y[idx] * f0[idx]
        target = base[k] + offsets[:, k]
        wk = sur.slice_weights(k)

        def h(c):  # (weighted) mean loss after shifting every margin by -c; non-decreasing in c
            return loss.value(z[None, :] - c[:, None]) @ wk

        lo, hi = np.full(m, -1.0), np.full(m, 1.0)
        for _ in range(30):  # grow the bracket (up to shifts of 2^30)
            grow_lo, grow_hi = h(lo) > target, h(hi) < target
            if not (grow_lo.any() or grow_hi.any()):
                break
            lo = np.where(grow_lo, 2 * lo, lo)
            hi = np.where(grow_hi, 2 * hi, hi)
        reach = (h(lo) <= target) & (h(hi) >= target)
        for _ in range(n_bisect):
            mid = 0.5 * (lo + hi)
            above = h(mid) > target
            hi, lo = np.where(above, mid, hi), np.where(above, lo, mid)
        c = 0.5 * (lo + hi)
        ok &= reach
        S[:, idx] = f0[idx][None, :] - sur.y[idx][None, :] * c[:, None]
    S[~ok] = f0
    return S, ok


class _ScoreSpaceEstimator:
    def _prepare(self, problem, theta):
        f0 = problem.scorer.scores(theta)
        return f0, problem.values_of_train_scores(f0[None, :])[0]


class FiniteDifference(_ScoreSpaceEstimator):
    """Algorithm 2: Gaussian-smoothing finite differences of psi through score perturbations.

    ``g = (1/m) sum_j (M(f + delta_j) - M(f)) / sigma * Z_j`` with ``phi(f + delta_j) =
    phi(f) + sigma Z_j``. Needs the metric on the training sample and disjoint slices.

    Parameters
    ----------
    n_perturbations : int, default 100
    sigma : float, default 0.01
        Step in surrogate space.

    Raises
    ------
    ValueError
        At estimation: overlapping slices, a metric on another sample, fewer than K + 1
        reachable perturbations.
    """

    def __init__(self, n_perturbations=100, sigma=0.01):
        if not sigma > 0:
            raise ValueError(f"sigma must be positive, got {sigma}")
        self.n_perturbations, self.sigma = int(n_perturbations), float(sigma)

    def estimate(self, problem, theta, rng) -> GradientEstimate:
        K = len(problem.surrogates)
        _check_m(self.n_perturbations, K, 1, "finite differences (Alg. 2)")
        f0, M0 = self._prepare(problem, theta)
        Z = rng.standard_normal((self.n_perturbations, K))
        S, ok = shift_scores_to_targets(problem, f0, self.sigma * Z)
        if ok.sum() < K + 1:
            raise ValueError(f"only {ok.sum()} of {len(ok)} surrogate targets were reachable: lower sigma")
        dM = problem.values_of_train_scores(S[ok]) - M0
        G = Z[ok].T @ (dM / self.sigma) / ok.sum()
        return _split(G, None, None, int(ok.sum()) + 1, int((~ok).sum()))


class SmoothedTwoPoint(_ScoreSpaceEstimator):
    """§5.3: two-point estimate of the gradient of the sigma1-smoothed psi (non-smooth psi).

    ``g = (1/m) sum_j [psi(u + s1 Z1_j + s2 Z2_j) - psi(u + s1 Z1_j)] / s2 * Z2_j``, each psi
    realized as the metric at scores whose surrogates hit the perturbed profile (as Alg. 2).

    Parameters
    ----------
    n_perturbations : int, default 100
    sigma1 : float, default 0.02
        Smoothing scale (the estimate targets ``E psi(u + sigma1 Z)``).
    sigma2 : float, default 0.005
        Difference step, ``sigma2 << sigma1``.

    Raises
    ------
    ValueError
        As :class:`FiniteDifference`.
    """

    def __init__(self, n_perturbations=100, sigma1=0.02, sigma2=0.005):
        if not (sigma1 > 0 and sigma2 > 0):
            raise ValueError(f"sigma1 and sigma2 must be positive, got {sigma1}, {sigma2}")
        self.n_perturbations, self.sigma1, self.sigma2 = int(n_perturbations), float(sigma1), float(sigma2)

    def estimate(self, problem, theta, rng) -> GradientEstimate:
        K = len(problem.surrogates)
        _check_m(self.n_perturbations, K, 1, "the two-point estimator (§5.3)")
        f0, _ = self._prepare(problem, theta)
        Z1 = rng.standard_normal((self.n_perturbations, K))
        Z2 = rng.standard_normal((self.n_perturbations, K))
        Sa, oka = shift_scores_to_targets(problem, f0, self.sigma1 * Z1 + self.sigma2 * Z2)
        Sb, okb = shift_scores_to_targets(problem, f0, self.sigma1 * Z1)
        ok = oka & okb
        if ok.sum() < K + 1:
            raise ValueError(f"only {ok.sum()} of {len(ok)} surrogate targets were reachable: lower sigma1")
        dM = problem.values_of_train_scores(Sa[ok]) - problem.values_of_train_scores(Sb[ok])
        G = Z2[ok].T @ (dM / self.sigma2) / ok.sum()
        return _split(G, None, None, 2 * int(ok.sum()) + 1, int((~ok).sum()))


ESTIMATORS = {"interpolation": LinearInterpolation, "finite_difference": FiniteDifference,
              "two_point": SmoothedTwoPoint}


def make_gradient_estimator(spec, **params):
    """An estimator from an instance or a name in :data:`ESTIMATORS` with ``params``.

    Raises
    ------
    ValueError
        For an unknown name.
    """
    if hasattr(spec, "estimate"):
        return spec
    if spec not in ESTIMATORS:
        raise ValueError(f"unknown gradient estimator {spec!r}; known: {sorted(ESTIMATORS)}")
    return ESTIMATORS[spec](**params)
