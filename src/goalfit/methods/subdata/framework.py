"""The unified framework of Ye & Xie: selection ``z``, accuracy term, regulariser, fairness ``F(z)``.

Ye & Xie, "Unbiased Subdata Selection for Fair Classification: A Unified Framework and Scalable
Algorithms" (arXiv 2012.12356), Eq. (1)::

    min_{(w,b,u) in U, z in {0,1}^N}  A(z, t e - u) + lambda R(w, b, u) + rho F(z)

``z_i = 1`` means "point i counts as correctly classified at threshold t"; it is also the
subdata selection (the classifier is trained on ``{i : z_i = 1}``). With the classifier fixed,
``A`` is linear in ``z``: ``A = sum_i c_i z_i`` with per-point *selection costs* ``c`` (see
:func:`selection_costs`). Every fairness measure of the paper (Table 3) is the absolute value of
an affine function of ``z``; this module holds their exact integer structure
(:class:`MeasureForm`), used by the z-steps (:mod:`.zstep`), the mixed-integer programs
(:mod:`.mip`) and the objective evaluation (:func:`objective`).

Labels here are ``y in {-1, +1}`` and groups ``g in {-1, +1}`` (``D+ = {g = +1}``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["MEASURES", "MeasureForm", "measure_form", "fairness_value", "f1_loss_value",
           "selection_costs", "objective", "multiclass_costs", "step_weights",
           "check_binary_pm1"]

MEASURES = ("omr", "fpr", "eo", "dp", "f1")
"""Fairness / unbalanced-data measures: overall misclassification rate difference (Eq. 11a),
false positive rate difference (21a), equal opportunity (23a), demographic parity (25) and
``1 - F1`` (34a)."""


def check_binary_pm1(v, name: str) -> np.ndarray:
    """``v`` as an int array with values in {-1, +1}; ValueError naming ``name`` otherwise."""
    a = np.asarray(v)
    if a.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {a.shape}")
    if a.dtype.kind == "f" and not np.isfinite(a).all():
        raise ValueError(f"{name} contains NaN or infinite values")
    vals = set(np.unique(a).tolist())
    if not vals <= {-1, 1}:
        raise ValueError(f"{name} must take values in {{-1, +1}}, got {sorted(vals)}")
    return a.astype(int)


@dataclass(frozen=True)
class MeasureForm:
    """A fairness measure as ``F(z) = | K / (Da Db) + P(z) / Da - Q(z) / Db |``.

    ``P = sum_{i in A} a_i z_i`` and ``Q = sum_{i in B} b_i z_i`` with weights in {-1, +1};
    points outside ``A u B`` do not enter ``F`` ("free" points). This integer form lets the
    z-step compare ``Da Q`` with ``K + Db P`` exactly (notes on Ye & Xie, §3.7).

    Attributes
    ----------
    name : str
    A, B : ndarray of int
        Indices of the two blocks.
    a, b : ndarray of int, values in {-1, +1}
        Weights of the block members.
    Da, Db : int
        Block denominators (group or group-and-class sizes), both > 0.
    K : int
        Integer constant (non-zero only for demographic parity).
    n : int
        Number of points.
    """

    name: str
    A: np.ndarray
    a: np.ndarray
    B: np.ndarray
    b: np.ndarray
    Da: int
    Db: int
    K: int
    n: int

    @property
    def free(self) -> np.ndarray:
        """Indices outside both blocks."""
        mask = np.ones(self.n, bool)
        mask[self.A] = False
        mask[self.B] = False
        return np.flatnonzero(mask)

    def coef(self) -> tuple[np.ndarray, float]:
        """``(alpha, kappa)`` with ``F(z) = |alpha @ z + kappa|``, alpha of shape (n,)."""
        alpha = np.zeros(self.n)
        alpha[self.A] = self.a / self.Da
        alpha[self.B] = -self.b / self.Db
        return alpha, self.K / (self.Da * self.Db)

    def signed(self, z) -> float:
        """The affine value ``K/(Da Db) + P/Da - Q/Db`` (before the absolute value)."""
        alpha, kappa = self.coef()
        return float(alpha @ np.asarray(z, float) + kappa)

    def value(self, z) -> float:
        """``F(z)``, a rate gap in [0, 1]."""
        return abs(self.signed(z))


def measure_form(measure: str, y, g) -> MeasureForm:
    """Integer form of a group-fairness measure (Ye & Xie Table 3).

    Parameters
    ----------
    measure : {"omr", "fpr", "eo", "dp"}
        OMR (Eq. 11a): correct-rate gap over all points; FPR (21a): over negatives; EO (23a):
        over positives; DP (25): gap of predicted-positive rates, where a positive prediction
        is ``z_i = 1`` for ``y_i = +1`` and ``z_i = 0`` for ``y_i = -1``.
    y, g : array-like of shape (n,), values in {-1, +1}
        Labels and sensitive groups.

    Returns
    -------
    MeasureForm

    Raises
    ------
    ValueError
        For an unknown measure, labels/groups not in {-1, +1}, mismatched lengths, or an
        empty block (e.g. no negatives in group +1 for FPR).
    """
    y = check_binary_pm1(y, "y")
    g = check_binary_pm1(g, "sensitive group g")
    if len(y) != len(g):
        raise ValueError(f"y has {len(y)} entries but g has {len(g)}")
    n = len(y)
    if measure == "omr":
        A, B = np.flatnonzero(g == 1), np.flatnonzero(g == -1)
        a, b, K = np.ones(len(A), int), np.ones(len(B), int), 0
        what = "group"
    elif measure in ("fpr", "eo"):
        cls = -1 if measure == "fpr" else 1
        A, B = np.flatnonzero((g == 1) & (y == cls)), np.flatnonzero((g == -1) & (y == cls))
        a, b, K = np.ones(len(A), int), np.ones(len(B), int), 0
        what = f"group with y = {cls:+d}"
    elif measure == "dp":
        A, B = np.flatnonzero(g == 1), np.flatnonzero(g == -1)
        a, b = y[A], y[B]
        Dpm, Dmm = int(np.sum(a == -1)), int(np.sum(b == -1))
        K = Dpm * len(B) - Dmm * len(A)
        what = "group"
    elif measure == "f1":
        raise ValueError("'f1' is not a group-fairness measure; use f1_loss_value / select_f1")
    else:
        raise ValueError(f"measure must be one of {MEASURES[:4]}, got {measure!r}")
    if len(A) == 0 or len(B) == 0:
        side = "+1" if len(A) == 0 else "-1"
        raise ValueError(f"measure {measure!r}: the {what} for g = {side} is empty; "
                         "the disparity is undefined")
    return MeasureForm(measure, A, a, B, b, len(A), len(B), int(K), n)


def f1_loss_value(z, y) -> float:
    """``1 - F1`` of the selection (Ye & Xie Eq. 34a): ``sum(1 - z) / (N + k+ - k-)``.

    ``k+`` (``k-``) counts selected positives (negatives). With ``z`` read as "correct", a
    positive with ``z = 1`` is a true positive and a negative with ``z = 0`` a false positive.

    Raises
    ------
    ValueError
        When ``y`` has no positive point (F1 undefined).
    """
    y = check_binary_pm1(y, "y")
    z = np.asarray(z, float)
    if not (y == 1).any():
        raise ValueError("1 - F1 needs at least one positive point (y = +1)")
    kp, km = z[y == 1].sum(), z[y == -1].sum()
    return float((len(y) - kp - km) / (len(y) + kp - km))


def fairness_value(measure: str, z, y, g=None) -> float:
    """``F(z)`` for any measure of :data:`MEASURES` (``g`` unused for ``"f1"``)."""
    if measure == "f1":
        return f1_loss_value(z, y)
    return measure_form(measure, y, g).value(z)


def selection_costs(u, t: float, y=None, *, kind: str = "margin", class_weighted: bool = False) -> np.ndarray:
    """Per-point costs ``c`` of ``A(z, te - u) = sum_i c_i z_i`` (Ye & Xie Table 2).

    Parameters
    ----------
    u : array-like of shape (n,)
        Outcomes: violation margins (hinge values, ``kind="margin"``: SVM, kernel SVM) or
        log-likelihoods / probabilities of the true label (``kind="score"``: logistic
        regression, black-box models).
    t : float
        Threshold (margin units, log-likelihood or probability).
    y : array-like of shape (n,), optional
        Labels in {-1, +1}; needed with ``class_weighted``.
    kind : {"margin", "score"}
        ``"margin"``: ``c_i = (u_i - t)/N`` (Eq. 12); ``"score"``: ``c_i = (t - u_i)/N``
        (Eq. 31, 33).
    class_weighted : bool
        Divide by the class size ``N+`` / ``N-`` instead of ``N`` (GSVM-F1, Eq. 35).

    Returns
    -------
    ndarray of shape (n,)
    """
    u = np.asarray(u, float)
    if not np.isfinite(u).all():
        raise ValueError("outcomes u contain NaN or infinite values")
    if kind == "margin":
        c = u - t
    elif kind == "score":
        c = t - u
    else:
        raise ValueError(f"kind must be 'margin' or 'score', got {kind!r}")
    if not class_weighted:
        return c / len(u)
    y = check_binary_pm1(y, "y")
    npos, nneg = int((y == 1).sum()), int((y == -1).sum())
    if npos == 0 or nneg == 0:
        raise ValueError("class-weighted costs need both classes in y")
    return np.where(y == 1, c / npos, c / nneg)


def objective(costs, z, rho: float, measure: str, y, g=None, *, regularizer: float = 0.0) -> float:
    """The unified objective ``sum c_i z_i + regularizer + rho F(z)`` (Ye & Xie Eq. 1)."""
    z = np.asarray(z, float)
    return float(np.asarray(costs, float) @ z + regularizer + rho * fairness_value(measure, z, y, g))


def multiclass_costs(U, y, Z, t: float, weights=None) -> float:
    """Accuracy term of GMSVMF (Ye & Xie Eq. 27a): ``(1/N) sum_i sum_{j != y_i} (1 - z_ij)(u_ij - t)``.

    ``U``, ``Z`` of shape (n, K); ``y`` class codes ``0..K-1``; ``weights`` of shape (n,)
    replaces ``1/N`` per point (the reward of compiled goals, :mod:`.measure`).
    """
    U, Z = np.asarray(U, float), np.asarray(Z, float)
    n = len(y)
    keep = 1.0 - Z
    keep[np.arange(n), y] = 0.0
    w = np.full(n, 1.0 / n) if weights is None else np.asarray(weights, float)
    return float(np.sum(w[:, None] * keep * (U - t)))


def step_weights(z, y, measure: str) -> np.ndarray:
    """Per-point weights of the w-step for selection ``z``: ``z`` itself, or for GSVM-F1 (Eq. 35)
    ``z_i N / N+-`` so that ``(1/N) sum_i weight_i loss_i`` is the class-weighted accuracy term."""
    z = np.asarray(z, float)
    if measure != "f1":
        return z
    y = check_binary_pm1(y, "y")
    n, npos = len(y), int((y == 1).sum())
    return np.where(y == 1, z * n / max(npos, 1), z * n / max(n - npos, 1))
