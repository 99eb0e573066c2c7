"""Confidence intervals for goal values: what a goal measured on a sample says about the population.

Every goal of :mod:`goalfit.goals` is a function of the stacked confusion tensor ``C`` (shape
``(n_cells, n_classes, n_classes)``), and ``C`` measured on a sample is a weighted mean of one
vector per example: example ``l`` in cell ``c`` with true class ``y`` and predicted-class
distribution ``p_l`` contributes ``p_l`` to row ``(c, y)``. The *plug-in estimate* of a goal is
``h(C_hat)`` where the row masses (the denominators of every conditional rate, and the class priors)
are themselves read off ``C_hat``. What is uncertain is the sample: the classifier is held fixed.

Methods (``method=``):

``"clopper_pearson"``
    A goal that is one rate ``a * P(event | slice) + b``: the exact binomial interval of
    Clopper & Pearson (1934) on the slice, with ``k = rate * N`` successes out of ``N`` slice
    members. Exact for deterministic predictions and unit weights (for a rate whose slice
    depends on the prediction, such as precision, exact conditionally on the slice size). For a
    randomized classifier ``k`` is an expected count (the beta quantiles extend to non-integer
    ``k``); for weighted data ``N`` is Kish's effective sample size of the slice.
``"delta"``
    The delta method with the influence function of the plug-in estimator: ``se^2 =
    sum_l IF_l^2 / n^2``, ``IF_l = (w_l / mean(w)) * J (z_l - C_hat)``, with ``J`` the Jacobian of
    ``h`` (row masses re-read from ``C``, so the variance of every denominator counts), in closed
    form from two binds of the goal (:func:`jacobian`; central differences for the goals that
    read the class priors themselves). Goals that are a maximum (max-abs disparities, min-max
    recall) or a minimum (ratio disparities, the 80% rule) of several pieces take the max (min) of the
    pieces' bounds, which never relies on the normal approximation at a kink. The upper bound
    of a maximum needs no multiplicity correction: if ``max_j d_j > max_j U_j`` then the
    population's largest piece ``j*`` (a fixed index) has ``d_j* > U_j*``, which happens with
    probability at most ``alpha`` (Berger's intersection-union argument, Statist. Sci. 1996;
    the lower bound of a minimum likewise). The other side (the lower bound of a maximum, the
    upper bound of a minimum) takes each piece at level ``1 - alpha / m`` (Bonferroni over its
    ``m`` pieces).
``"bootstrap"``
    Percentile bootstrap over examples (Poisson(1) weights, ``n_bootstrap`` replicates, seeded).
``"auto"`` (default)
    Clopper-Pearson for a single rate, the delta method otherwise.

What the interval covers: the population value of the goal *for this classifier*, i.e. the
expectation over new examples drawn like the evaluated ones (and, for a randomized classifier,
over its randomization): the value :meth:`GoalClassifier.evaluate` would converge to on
unlimited data. It does not cover the variability of training.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy import sparse, stats

from ..confusion import ConfusionSpace
from ..utils.validation import check_confidence

__all__ = ["Interval", "GoalSample", "goal_interval", "one_sided_bound"]


@dataclass
class Interval:
    """A confidence interval for one goal value.

    Attributes
    ----------
    value : float
        The plug-in estimate on the evaluated sample.
    low, high : float
        Interval bounds (``low <= high``), clipped to the goal's range where it is known.
    confidence : float
        Nominal coverage (e.g. 0.95).
    method : str
        ``"clopper_pearson"``, ``"delta"``, ``"delta_bonferroni"`` or ``"bootstrap"``.
    se : float or None
        Standard error of the largest (smallest) piece for the delta method, else None.
    """

    value: float
    low: float
    high: float
    confidence: float
    method: str
    se: float | None = None

    def as_list(self) -> list[float]:
        return [float(self.low), float(self.high)]


class GoalSample:
    """The evaluated sample in the form intervals need: one confusion vector per example.

    Parameters
    ----------
    y_codes : ndarray of int, shape (n_samples,)
        True class codes.
    pred : ndarray of shape (n_samples,) (predicted class codes) or (n_samples, n_classes)
        Predictions, or per-example predicted-class distributions (randomized classifiers).
    cell_ids : ndarray of int, shape (n_samples,)
    space : ConfusionSpace
        The space of the sample (classes and cells).
    sample_weight : ndarray of shape (n_samples,), optional

    Raises
    ------
    ValueError
        If the sample is empty or weights are negative.
    """

    def __init__(self, y_codes, pred, cell_ids, space: ConfusionSpace, sample_weight=None):
        y_codes = np.asarray(y_codes, dtype=np.int64)
        n = len(y_codes)
        if n == 0:
            raise ValueError("cannot compute intervals on an empty sample")
        K = space.n_classes
        pred = np.asarray(pred)
        if pred.ndim == 1:
            P = np.zeros((n, K))
            P[np.arange(n), pred.astype(np.int64)] = 1.0
        else:
            P = np.asarray(pred, dtype=float)
        w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=float)
        if (w < 0).any():
            raise ValueError("sample weights must be non-negative")
        self.space, self.n, self.K = space, n, K
        self.cells = np.asarray(cell_ids, dtype=np.int64)
        self.y = y_codes
        self.P = P
        self.w = w / w.mean()
        self.row = self.cells * K + y_codes  # row (cell, y) of each example, in 0..n_cells*K-1
        C = np.zeros(space.n_cells * K * K)
        np.add.at(C, (self.row[:, None] * K + np.arange(K)[None, :]).ravel(), (self.w[:, None] * P).ravel())
        self.C = (C / self.w.sum()).reshape(space.shape)

    def bound(self, expression, C=None):
        """``expression`` bound with the row masses of ``C`` (default: the sample's own)."""
        C = self.C if C is None else C
        return expression.bind(replace(self.space, row_mass=np.asarray(C).sum(axis=2)))

    def per_example(self, J) -> np.ndarray:
        """``J z_l`` for every example, shape (m, n), for ``J`` of shape (m, n_cells, K, K)."""
        J = np.asarray(J).reshape(len(J), -1, self.K)  # (m, n_cells*K, K)
        return np.einsum("mnk,nk->mn", J[:, self.row, :], self.P)

    def bootstrap_tensors(self, n_bootstrap: int, random_state=None, chunk: int = 200):
        """Poisson(1)-bootstrap confusion tensors, shape (n_bootstrap, n_cells, K, K)."""
        rng = np.random.default_rng(random_state)
        K, n = self.K, self.n
        D = self.space.size
        cols = (self.row[:, None] * K + np.arange(K)[None, :]).ravel()
        Z = sparse.csr_matrix(((self.w[:, None] * self.P).ravel(), (np.repeat(np.arange(n), K), cols)),
                              shape=(n, D))
        out = []
        for start in range(0, n_bootstrap, chunk):
            W = rng.poisson(1.0, size=(min(chunk, n_bootstrap - start), n)).astype(float)
            S = np.asarray((Z.T @ W.T).T)
            out.append(S / S.sum(axis=1, keepdims=True))
        return np.concatenate(out).reshape((n_bootstrap,) + self.space.shape)


# ----------------------------------------------------------------------------- pieces of a goal
def _pieces(f, C) -> tuple[np.ndarray, str]:
    """Component values of a bound goal and how they combine: ``"max"``, ``"min1"`` or ``"one"``."""
    from ..goals.fairness import MinRatio
    from ..goals.functions import MaxOfLinear

    if isinstance(f, MaxOfLinear):
        return f.piece_values(C), "max"
    if isinstance(f, MinRatio):
        return f._ratios(C)[0], "min1"
    return np.array([f.value(C)]), "one"


def combine(v, how):
    """A goal's value from its pieces' values (last axis of ``v``): their maximum (``"max"``),
    their minimum capped at 1 (``"min1"``) or the one piece (``"one"``); a float for a 1-d
    ``v``, an array of the leading shape otherwise."""
    v = np.asarray(v, dtype=float)
    if how == "max":
        out = v.max(axis=-1)
    elif how == "min1":
        out = np.minimum(1.0, v.min(axis=-1))
    else:
        out = v[..., 0]
    return float(out) if out.ndim == 0 else out


def _single_rate(expression):
    """``(a, rate, b)`` when ``expression`` is ``a * rate + b`` for one rate, else None."""
    from ..goals.expressions import LinearExpression, Rate

    if isinstance(expression, Rate):
        return 1.0, expression, 0.0
    if isinstance(expression, LinearExpression) and len(expression.terms) == 1:
        a, r = expression.terms[0]
        return a, r, expression.const
    return None


def _through_rates(expression) -> bool:
    """Whether ``expression``'s own class declares :attr:`~goalfit.goals.expressions.Expression.tangent_exact`
    (its bind reads the row masses only through its rates' denominators, so
    :func:`goalfit.goals.expressions.tangent_bind` gives its total derivative). Goals that read
    the class priors themselves and user-defined ones take the finite-difference Jacobian."""
    return bool(vars(type(expression)).get("tangent_exact", False))


def _total_gradient(f, t, c):
    """Gradient at ``c`` (flat) of a bound function ``f`` whose linear forms' total derivatives are
    those of ``t`` (the same goal bound under ``tangent_bind``), flat; None for an unknown type."""
    from ..goals.functions import (
        FeatureFunction,
        LinearFunction,
        RatioFunction,
        SumFunction,
    )

    if type(f) is not type(t):
        return None
    if isinstance(f, LinearFunction):
        return t.coef.ravel()
    if isinstance(f, RatioFunction):
        d = f.den.value(c.reshape(f.shape))
        if d <= 1e-15:  # the empty value, a constant
            return np.zeros(c.size)
        return (t.num.coef.ravel() * d - f.num.value(c.reshape(f.shape)) * t.den.coef.ravel()) / d ** 2
    if isinstance(f, FeatureFunction):
        ff, tf = f.features(), t.features()
        return tf.U.T @ np.asarray(ff.gradient(ff.U @ c), dtype=float)
    if isinstance(f, SumFunction) and len(f.parts) == len(t.parts):
        parts = [_total_gradient(a, b, c) for a, b in zip(f.parts, t.parts)]
        return None if any(g is None for g in parts) else np.sum(parts, axis=0)
    return None


def _analytic_jacobian(sample: GoalSample, expression, f):
    """The Jacobian of :func:`jacobian` from two binds (the goal and its tangent), or None."""
    from ..goals.expressions import tangent_bind
    from ..goals.fairness import MinRatio
    from ..goals.functions import MaxOfLinear

    if not _through_rates(expression):
        return None
    c = sample.C.ravel()
    with tangent_bind(sample.C):
        t = sample.bound(expression)
    if type(f) is not type(t):
        return None
    if isinstance(f, MaxOfLinear):
        return t.coefs if t.coefs.shape == f.coefs.shape else None
    if isinstance(f, MinRatio):
        if t.num.shape != f.num.shape:
            return None
        _, a, b = f._ratios(sample.C)
        ok = b > 0
        bb = np.where(ok, b, 1.0)[:, None]
        return np.where(ok[:, None], (t.num * bb - a[:, None] * t.den) / bb ** 2, 0.0)
    g = _total_gradient(f, t, c)
    return None if g is None else g[None, :]


def jacobian(sample: GoalSample, expression, eps: float = 1e-6):
    """Jacobian of the self-normalized pieces, shape (m, n_cells, K, K), with their values and rule.

    The pieces of ``h(C)``, with every rate's denominator re-read from ``C`` (the row masses of
    ``C``), differentiated at the sample's ``C``. For goals whose row masses enter only through
    their rates (rates, rate expressions, disparities, error, F-beta, macro-F1, min-max recall)
    it is exact and costs two binds: the goal and its tangent
    (:func:`goalfit.goals.expressions.tangent_bind`, the gradient of each self-normalized rate
    ``(num - r * given) / M``) combined with the bound function's own gradient (a ratio's
    quotient rule, a feature function's outer gradient, a max's pieces, a min-ratio's pairs).
    Other goals (the H/G/Q-means, KL quantification, coverage deviation, user-defined goals)
    take central differences of step ``eps``, two binds per entry of a non-empty row.

    Returns
    -------
    v0 : ndarray of shape (m,)
    how : {"one", "max", "min1"}
    J : ndarray of shape (m, n_cells, K, K)
    """
    shape = sample.space.shape
    f0 = sample.bound(expression)
    v0, how = _pieces(f0, sample.C)
    J = _analytic_jacobian(sample, expression, f0)
    if J is not None:
        return v0, how, np.asarray(J, dtype=float).reshape((len(v0),) + shape)
    C0 = sample.C.ravel()
    J = np.zeros((len(v0), C0.size))
    row_mass = sample.C.sum(axis=2).ravel()
    for d in range(C0.size):
        if row_mass[d // sample.K] <= 0:  # an empty (cell, class) row: no example moves it
            continue
        Cp, Cm = C0.copy(), C0.copy()
        Cp[d] += eps
        Cm[d] -= eps
        vp = _pieces(sample.bound(expression, Cp.reshape(shape)), Cp.reshape(shape))[0]
        vm = _pieces(sample.bound(expression, Cm.reshape(shape)), Cm.reshape(shape))[0]
        J[:, d] = (vp - vm) / (2 * eps)
    return v0, how, J.reshape((len(v0),) + shape)


def _plain(v):
    return v.item() if isinstance(v, np.generic) else v


def smallest_slice(expression, sample: GoalSample, classes, *, counts=None, jac=None) -> tuple[str, int]:
    """``(description, count)`` of the smallest (cell, true class) row of ``sample`` whose
    examples move ``expression``'s value (e.g. ``"sex='Female', y=1"``): the slice whose size
    limits a bound's width. ``("the whole sample", n)`` when every row moves it. ``counts``
    (shape ``(n_cells, n_classes)``): the rows of each (cell, class), when ``sample`` holds
    weighted stand-ins for them (:func:`goalfit.fit.slices.check_slice_sizes`). ``jac``: the
    Jacobian :func:`jacobian` already gave for this goal and sample (not computed again)."""
    J = jacobian(sample, expression)[2] if jac is None else jac
    moved = np.abs(J).sum(axis=(0, 3)) > 1e-9  # (n_cells, K)
    if counts is None:
        counts = np.zeros(moved.shape)
        np.add.at(counts, (sample.cells, sample.y), 1)
    # the true classes of a cell whose rows move the goal alike (a rate that does not read the
    # label, such as a group's selection rate) form one slice: the cell's rows of those classes
    K = moved.shape[1]
    label_free = np.array([moved[c].any() and all(
        np.allclose(J[:, c, k], J[:, c, j], rtol=1e-6, atol=1e-12) for j in range(K) for k in range(K)
        if moved[c, k] and moved[c, j]) and moved[c].all() for c in range(moved.shape[0])])
    slice_rows = np.where(label_free[:, None], counts.sum(axis=1, keepdims=True), counts)
    slice_rows = np.where(moved & (counts > 0), slice_rows, np.inf)
    if not np.isfinite(slice_rows).any():
        return "the whole sample", sample.n
    cell, k = np.unravel_index(int(np.argmin(slice_rows)), slice_rows.shape)
    cells = sample.space.cells
    parts = [f"{col}={_plain(cells.iloc[cell][col])!r}" for col in cells.columns]
    if not label_free[cell]:
        parts.append(f"y={_plain(classes[k])!r}")
    if not parts:
        return "the whole sample", sample.n
    return ", ".join(parts), int(slice_rows[cell, k])


def influence(sample: GoalSample, expression, *, jac=None):
    """Plug-in piece values, combination rule and the pieces' influence functions.

    ``jac``: the ``(v0, how, J)`` that :func:`jacobian` already gave for this goal and sample
    (not computed again).

    Returns
    -------
    v0 : ndarray of shape (m,)
        The value of each piece of the goal (one for a goal that is not a max / min).
    how : {"one", "max", "min1"}
    IF : ndarray of shape (m, n_samples)
        ``IF_l = (w_l / mean(w)) J (z_l - C_hat)``: the pieces' estimate on ``n`` rows is
        ``v0 + sum_l IF_l / n`` to first order, so their covariance is ``IF IF' / n^2``.
    """
    v0, how, J = jacobian(sample, expression) if jac is None else jac
    Jz = sample.per_example(J)                       # (m, n)
    JC = np.tensordot(J, sample.C, axes=([1, 2, 3], [0, 1, 2]))  # (m,)
    return v0, how, sample.w[None, :] * (Jz - JC[:, None])


def _delta_se(sample: GoalSample, expression):
    """Plug-in piece values, combination rule and delta-method standard errors of each piece."""
    v0, how, IF = influence(sample, expression)
    se = np.sqrt((IF ** 2).sum(axis=1)) / sample.n
    finite = np.isfinite(v0)
    se = np.where(finite, se, 0.0)
    return v0, how, se


def corrections(how: str, m: int) -> tuple[int, int]:
    """Bonferroni divisors ``(lower side, upper side)`` of a goal's ``m`` pieces combined by ``how``.

    Only the side where a piece other than the population's extreme one can miss is corrected:
    the lower bound of a maximum and the upper bound of a minimum (module docstring).
    """
    return (m, 1) if how == "max" else ((1, m) if how == "min1" else (1, 1))


def _range(expression):
    lo, hi = getattr(expression, "value_range", (-np.inf, np.inf))
    return lo, hi


def _clopper_pearson(sample: GoalSample, rate, alpha_low, alpha_high):
    """Clopper-Pearson bounds of a rate on its slice (``alpha_*`` one-sided tail levels)."""
    num, given = rate.masks(sample.space)
    K = sample.K
    num = num.reshape(-1, K)[sample.row] * sample.P       # (n, K): mass in the event
    giv = given.reshape(-1, K)[sample.row] * sample.P     # (n, K): mass in the slice
    g = giv.sum(axis=1)
    wg = sample.w * g
    if wg.sum() <= 0:
        raise ValueError(f"{rate.name}: no example of the evaluated data falls in its slice (an empty slice)")
    r = float((sample.w * num.sum(axis=1)).sum() / wg.sum())
    N = float(wg.sum() ** 2 / (sample.w ** 2 * g).sum())  # Kish's effective size (= count, unit weights)
    low, high = clopper_pearson(r, N, alpha_low, alpha_high)
    return r, float(low), float(high), N


def clopper_pearson(r, N, alpha_low, alpha_high):
    """Clopper-Pearson ``(low, high)`` of a rate ``r`` measured on ``N`` examples (arrays broadcast).

    ``k = r N`` need not be an integer (expected counts of a randomized classifier, Kish's
    effective size): the beta quantiles extend to it. A tail level of 0 gives the trivial side.
    """
    r, N = np.broadcast_arrays(np.asarray(r, dtype=float), np.asarray(N, dtype=float))
    k = np.clip(r, 0.0, 1.0) * N
    with np.errstate(invalid="ignore", divide="ignore"):
        low = np.where((k <= 0) | (alpha_low <= 0), 0.0,
                       stats.beta.ppf(alpha_low, np.maximum(k, 1e-300), N - k + 1) if alpha_low > 0 else 0.0)
        high = np.where((k >= N) | (alpha_high <= 0), 1.0,
                        stats.beta.ppf(1 - alpha_high, k + 1, np.maximum(N - k, 1e-300)) if alpha_high > 0 else 1.0)
    return low, high


def goal_interval(expression, sample: GoalSample, confidence: float = 0.95, *, method: str = "auto",
                  alternative: str = "two-sided", n_bootstrap: int = 1000, random_state=None) -> Interval:
    """Confidence interval of one goal on a sample (see the module docstring for the methods).

    Parameters
    ----------
    expression : Expression
        A goal (rate expression, named metric, fairness disparity).
    sample : GoalSample
    confidence : float in [0.5, 1)
        The probability that the interval covers the population value (e.g. 0.95, not the
        alpha 0.05).
    method : {"auto", "clopper_pearson", "delta", "bootstrap"}
    alternative : {"two-sided", "upper", "lower"}
        ``"upper"`` returns ``low = -inf`` (clipped to the range) and a one-sided upper bound at
        level ``confidence``; ``"lower"`` the mirror image.
    n_bootstrap : int
    random_state : int or None
        Seed of the bootstrap.

    Returns
    -------
    Interval

    Raises
    ------
    ValueError
        For a confidence outside [0.5, 1), an unknown method or alternative, ``"clopper_pearson"``
        for a goal that is not a single rate, or an empty slice.
    """
    confidence = check_confidence(confidence)
    if method not in ("auto", "clopper_pearson", "delta", "bootstrap"):
        raise ValueError(f"unknown interval method {method!r}; use 'auto', 'clopper_pearson', 'delta' or 'bootstrap'")
    if alternative not in ("two-sided", "upper", "lower"):
        raise ValueError(f"alternative must be 'two-sided', 'upper' or 'lower', got {alternative!r}")
    alpha = 1 - confidence
    a_low = alpha / 2 if alternative == "two-sided" else (alpha if alternative == "lower" else 0.0)
    a_high = alpha / 2 if alternative == "two-sided" else (alpha if alternative == "upper" else 0.0)
    lo_r, hi_r = _range(expression)
    single = _single_rate(expression)
    if method == "clopper_pearson" and single is None:
        raise ValueError(f"{expression.name} is not a single rate: Clopper-Pearson does not apply "
                         "(use 'delta' or 'bootstrap')")
    if method in ("auto", "clopper_pearson") and single is not None:
        a, rate, b = single
        r, low, high, _ = _clopper_pearson(sample, rate, a_low if a >= 0 else a_high, a_high if a >= 0 else a_low)
        lo, hi = sorted((a * low + b, a * high + b))
        return Interval(a * r + b, max(lo, lo_r), min(hi, hi_r), confidence, "clopper_pearson")
    if method == "bootstrap":
        f0 = sample.bound(expression)
        value = combine(*_pieces(f0, sample.C))
        Cs = sample.bootstrap_tensors(n_bootstrap, random_state)
        reps = []
        for Cb in Cs:
            try:
                reps.append(combine(*_pieces(sample.bound(expression, Cb), Cb)))
            except ValueError:  # a replicate with an empty slice
                continue
        replicates = np.asarray(reps, dtype=float)
        low = float(np.quantile(replicates, a_low)) if a_low > 0 else -np.inf
        high = float(np.quantile(replicates, 1 - a_high)) if a_high > 0 else np.inf
        return Interval(value, max(low, lo_r), min(high, hi_r), confidence, "bootstrap")
    v0, how, se = _delta_se(sample, expression)
    m = len(v0)
    m_low, m_high = corrections(how, m)
    z_low = stats.norm.ppf(1 - a_low / m_low) if a_low > 0 else np.inf
    z_high = stats.norm.ppf(1 - a_high / m_high) if a_high > 0 else np.inf
    with np.errstate(invalid="ignore"):
        lows, highs = v0 - z_low * se, v0 + z_high * se
    low, high = combine(lows, how), combine(highs, how)
    k = int(np.argmax(v0)) if how == "max" else int(np.argmin(v0))
    return Interval(combine(v0, how), max(low, lo_r), min(high, hi_r), confidence,
                    "delta" if m == 1 or (a_low == 0 and m_high == 1) or (a_high == 0 and m_low == 1)
                    else "delta_bonferroni", float(se[k]))


def one_sided_bound(expression, sense: str, sample: GoalSample, confidence: float, **kw) -> float:
    """High-confidence bound on the population value in the direction that can break ``sense``.

    The upper confidence bound for a ``<=`` constraint, the lower one for ``>=``.
    """
    alt = "upper" if sense == "<=" else "lower"
    iv = goal_interval(expression, sample, confidence, alternative=alt, **kw)
    return iv.high if sense == "<=" else iv.low
