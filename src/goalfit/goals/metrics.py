"""Named performance metrics as functions of the confusion tensor (loss form: lower is better).

A goal is what a method minimizes (or bounds from above), so a metric whose name is a score
(F1, G-mean, H-mean, the worst-class recall) is the goal ``1 - score``: ``Problem("f1")``
minimizes 1 - F1. Compared with a number it bounds the score its name says (:func:`compare`:
``f1() >= 0.7`` asks F1 >= 0.7, enforced as 1 - F1 <= 0.3). Called on labels (``goalfit.f1(y_true, y_pred)``, :mod:`goalfit.metrics`) a
builder returns the score its name says, as scikit-learn does. :data:`SCORES` lists the
metrics that are ``1 - score``; the others (error, balanced error, Q-mean loss, KL
quantification, cost-sensitive loss, coverage deviation) are losses by definition and are the
same number in both uses. :func:`loss_label` and :func:`score_label` name both for reports.

Definitions follow Narasimhan et al. (JMLR 2024), §2 Table 1 and Examples 1-6, with
``r_k = C_kk / pi_k`` the recall of class ``k`` (summed over cells) and ``pi`` the class
priors of the data the metric is bound to (a constant, as in the paper). Errata followed:
binary balanced error is ``(FN/(TP+FN) + FP/(TN+FP)) / 2`` (Ex. 2 prints it swapped); the
micro-F1 default class is a parameter (Table 1, Ex. 4 and §8.4 disagree) whose default is the
most frequent class (the authors' code).

Gradients treat ``pi`` as constant; where a recall is 0 the gradient uses ``max(r_k, EPS)``
with ``EPS = 1e-7`` (documented numerical floor, Narasimhan §10.2 note 3).
"""
from __future__ import annotations

import re
import warnings
from functools import partial
from numbers import Real

import numpy as np

from .expressions import Constraint, Expression, LinearExpression
from .functions import FeatureFunction, LinearFunction, MaxOfLinear, RatioFunction
from .rates import error_rate, false_negative_rate, positive_prediction_rate

EPS = 1e-7

__all__ = [
    "ErrorRate", "BalancedErrorRate", "CostSensitiveLoss", "FBetaLoss", "MicroF1Loss",
    "MacroF1Loss", "MacroF1OverGroupsLoss", "HMeanLoss", "GMeanLoss", "QMeanLoss", "MinMaxRecallLoss",
    "KLQuantification", "CoverageDeviation", "SCORES", "LOSSES", "score_label", "loss_label",
    "score_from_loss", "compare",
]

#: Goals whose value is the loss ``1 - score``, by the head of their name (what the name says;
#: the black-box metrics of :mod:`goalfit.goals.blackbox` are named as losses, ``gmean_loss``).
SCORES = {
    "f1": "F1", "fbeta": "F-beta", "micro_f1": "micro-F1", "macro_f1": "macro-F1",
    "macro_f1_over_groups": "macro-F1 over groups", "gmean": "G-mean", "hmean": "H-mean",
    "minmax_recall": "min recall",
    "gmean_loss": "G-mean", "macro_f1_over_groups_loss": "macro-F1 over groups", "prbep_loss": "PRBEP",
}

#: Goals that are losses by definition (the metric call returns the same value): readable names.
LOSSES = {
    "error": "error rate", "error_loss": "error rate", "balanced_error": "balanced error rate",
    "qmean": "Q-mean loss", "kl_quantification": "KL quantification loss",
}


def _head(name: str):
    """``("f1", "(group='F')")`` for ``"f1(group='F')"``; None for a name that is not one call."""
    m = re.fullmatch(r"([a-z0-9_]+)(\(.*\))?", name.strip())
    if not m:
        return None
    return m.group(1), m.group(2) or ""


def score_label(name: str) -> str | None:
    """The score a goal's value is one minus, or None when the goal is not ``1 - score``.

    Parameters
    ----------
    name : str
        A goal's name (``Expression.name``, ``BlackBoxMetric.name``).

    Returns
    -------
    str or None
        ``"f1"`` -> ``"F1"``, ``"f1(group='F')"`` -> ``"F1(group='F')"``,
        ``"precision_at_5_loss"`` -> ``"precision@5"``; None for losses by definition
        (``"error"``, ``"qmean"``), rates and expressions.

    Examples
    --------
    >>> score_label("gmean"), score_label("error")
    ('G-mean', None)
    """
    parts = _head(name)
    if parts is None:
        return None
    head, args = parts
    if head in SCORES:
        return SCORES[head] + args
    k = re.fullmatch(r"precision_at_(\d+)_loss", head)
    return f"precision@{k.group(1)}" + args if k else None


def loss_label(name: str) -> str:
    """Readable name of what a goal's value measures (the minimized value of an objective).

    ``"f1"`` -> ``"1 - F1"``, ``"error"`` -> ``"error rate"``, ``"qmean"`` -> ``"Q-mean
    loss"``; rates, disparities and expressions keep their name.

    Examples
    --------
    >>> loss_label("hmean"), loss_label("demographic_parity_difference('sex')")
    ('1 - H-mean', "demographic_parity_difference('sex')")
    """
    score = score_label(name)
    if score is not None:
        return f"1 - {score}"
    parts = _head(name)
    if parts is not None and parts[0] in LOSSES:
        return LOSSES[parts[0]] + parts[1]
    return name


def score_from_loss(name: str, loss: float) -> float | None:
    """The score of a goal named ``name`` whose (loss) value is ``loss``: ``1 - loss``, or None
    when the goal is not ``1 - score`` (:func:`score_label`)."""
    return None if score_label(name) is None else 1.0 - float(loss)


def compare(expr, sense: str, rhs, *, spelling: str = "gf.", stacklevel: int = 3) -> Constraint:
    """The constraint ``expr <sense> rhs`` as it reads: on the score where ``expr`` is named by one.

    A metric whose name is a score (:data:`SCORES`: ``f1``, ``gmean``, ``minmax_recall``, ...)
    is the goal ``1 - score``; compared with a number it bounds the score its name says:
    ``f1() >= 0.7`` asks F1 >= 0.7 and is enforced as ``1 - F1 <= 0.3`` (a bound from above
    on a ratio or convex loss, the form the methods take). ``f1() <= 0.3`` keeps its goalfit
    0.1 meaning for one release, ``1 - F1 <= 0.3`` (F1 >= 0.7, the same constraint as
    ``f1() >= 0.7``), and warns; from 0.3 it will bound the score (F1 <= 0.3). Every other
    expression (rates, disparities, losses such as ``error`` or ``qmean``) compares its own
    value, as before.

    Parameters
    ----------
    expr : Expression
    sense : {"<=", ">="}
    rhs : float or Expression
    spelling : str, default "gf."
        How the warning spells the call (``""`` for goal text such as a CLI spec).
    stacklevel : int
        Of the FutureWarning, counted from this function.

    Returns
    -------
    Constraint
        With ``name`` ``"F1 >= 0.7"`` and ``score_label`` / ``score_sense`` / ``score_bound``
        for a score comparison.

    Warns
    -----
    FutureWarning
        For ``<=`` on a score-named metric (write ``>= 1 - bound``).

    Examples
    --------
    >>> from goalfit.goals import gmean
    >>> c = gmean() >= 0.6
    >>> c.name, c.sense, round(c.bound, 12)
    ('G-mean >= 0.6', '<=', 0.4)
    """
    label = score_label(expr.name) if isinstance(expr, _Named) and isinstance(rhs, Real) else None
    if label is None:
        return Constraint(expr, sense, rhs)
    if sense == "<=":
        b = float(rhs)
        call = spelling + (expr.name if expr.name.endswith(")") else expr.name + "()")
        warnings.warn(
            f"{call} <= {b:g} bounds 1 - {label} ({label} >= {1.0 - b:g}); write {call} >= {1.0 - b:g}. "
            f"A metric named by a score now compares the score; in goalfit 0.3 {call} <= {b:g} will "
            f"mean {label} <= {b:g}", FutureWarning, stacklevel=stacklevel)
        return Constraint(expr, ">=", 1.0 - b, score_label=label)
    return Constraint(expr, sense, rhs, score_label=label)


class _Named(Expression):
    """A named metric that expands into rates when bound.

    Comparisons go through :func:`compare`: a metric named by a score (``f1() >= 0.7``)
    bounds that score."""

    def __repr__(self):
        return self.name

    def __le__(self, other):
        return compare(self, "<=", other)

    def __ge__(self, other):
        return compare(self, ">=", other)


class ErrorRate(_Named):
    """0-1 loss ``1 - sum_k C_kk`` (linear; Narasimhan Table 1)."""

    tangent_exact = True  # reads the row masses through its rates only (Expression.tangent_exact)

    is_linear = is_convex = is_smooth = True
    name = "error"

    def bind(self, space):
        f = error_rate().bind(space)
        f.name = self.name
        return f


class BalancedErrorRate(_Named):
    """Balanced 0-1 loss ``1 - (1/n) sum_k r_k`` (linear since pi is constant; Ex. 2 corrected)."""

    tangent_exact = True  # reads the row masses through its rates only (Expression.tangent_exact)

    is_linear = is_convex = is_smooth = True
    name = "balanced_error"

    def bind(self, space):
        n = space.n_classes
        expr = LinearExpression(tuple((1.0 / n, false_negative_rate(c)) for c in space.classes))
        f = expr.bind(space)
        f.name = self.name
        return f


class CostSensitiveLoss(_Named):
    """``sum_ij L_ij C_ij`` for a cost matrix ``L`` (rows true class, columns prediction; Ex. 1).

    Parameters
    ----------
    cost_matrix : array-like of shape (n_classes, n_classes)
        Cost of predicting class j (column) when the truth is class i (row), in class order.
    """

    tangent_exact = True  # reads the row masses through its rates only (Expression.tangent_exact)

    is_linear = is_convex = is_smooth = True

    def __init__(self, cost_matrix):
        self.cost_matrix = np.asarray(cost_matrix, dtype=float)
        if self.cost_matrix.ndim != 2 or self.cost_matrix.shape[0] != self.cost_matrix.shape[1]:
            raise ValueError(f"cost_matrix must be square, got shape {self.cost_matrix.shape}")
        if not np.isfinite(self.cost_matrix).all():
            raise ValueError("cost_matrix contains NaN or infinite values")
        self.name = "cost_sensitive_loss"
        self.value_range = (float(self.cost_matrix.min()), float(self.cost_matrix.max()))

    def bind(self, space):
        if self.cost_matrix.shape != (space.n_classes,) * 2:
            raise ValueError(
                f"cost_matrix has shape {self.cost_matrix.shape} but the problem has "
                f"{space.n_classes} classes"
            )
        return LinearFunction(np.broadcast_to(self.cost_matrix, space.shape).copy(), 0.0, self.name)


def _group_weights(space, group):
    return space.cell_mask(group).astype(float)[:, None, None]


class FBetaLoss(_Named):
    """``1 - F_beta`` of one class: ``(beta^2 FN + FP) / ((1+beta^2) TP + beta^2 FN + FP)``.

    A ratio of linear forms (Narasimhan Ex. 2), optimized by bisection. Value 1 when the class
    is neither present nor predicted (scikit-learn's zero_division=0 for the F-score). As a goal
    it is this loss (``Problem("f1")`` minimizes 1 - F1; ``f1() >= 0.7`` asks F1 >= 0.7); the
    metric call ``goalfit.f1(y_true, y_pred)`` returns F_beta itself, equal to scikit-learn's
    ``fbeta_score(y_true, y_pred, beta=beta, pos_label=label)``.

    Parameters
    ----------
    beta : float, default 1
    label : class label, default None (positive class of a binary problem)
    group : optional slice
    """

    tangent_exact = True  # reads the row masses through its rates only (Expression.tangent_exact)

    is_ratio = is_smooth = True

    def __init__(self, beta: float = 1.0, label=None, *, group=None):
        if not beta > 0:
            raise ValueError(f"beta must be positive, got {beta}")
        self.beta, self.label, self.group = float(beta), label, group
        label_txt = repr(label.item() if isinstance(label, np.generic) else label)
        self.name = "f1" if beta == 1 and label is None else f"fbeta(beta={beta:g}, label={label_txt})"
        if group is not None:
            self.name = (f"f1(group={group!r})" if beta == 1 and label is None
                         else self.name[:-1] + f", group={group!r})")

    def bind(self, space):
        k = space.default_positive() if self.label is None else space.class_code(self.label)
        b2 = self.beta**2
        n = space.n_classes
        tp = np.zeros((n, n)); tp[k, k] = 1
        fn = np.zeros((n, n)); fn[k, :] = 1; fn[k, k] = 0
        fp = np.zeros((n, n)); fp[:, k] = 1; fp[k, k] = 0
        g = _group_weights(space, self.group)
        num = LinearFunction(g * (b2 * fn + fp))
        den = LinearFunction(g * ((1 + b2) * tp + b2 * fn + fp))
        return RatioFunction(num, den, self.name, empty_value=1.0)


class MicroF1Loss(_Named):
    """Micro-F1 loss with a default class ``d`` left out (Narasimhan Ex. 4, BioNLP variant).

    ``1 - 2 sum_{i != d} C_ii / (2 - sum_i C_di - sum_i C_id)``; equals scikit-learn's
    ``1 - f1_score(y, p, labels=[all but d], average="micro")``. A ratio of linear forms. The
    metric call ``goalfit.micro_f1(y_true, y_pred)`` returns the micro-F1 itself.

    Parameters
    ----------
    default_class : class label, optional
        Default: the most frequent class of the data bound to (the authors' code); a fitted
        estimator fixes it on its training rows (``goals_``, :meth:`resolved`) and evaluates
        held-out rows with the same class left out.
    """

    tangent_exact = True  # reads the row masses through its rates only (Expression.tangent_exact)

    is_ratio = is_smooth = True

    def __init__(self, default_class=None):
        self.default_class = default_class
        self.name = "micro_f1" if default_class is None else f"micro_f1(default_class={default_class!r})"

    def resolved(self, space):
        """The default class fixed: the most frequent class of ``space`` when none was given.

        A fit keeps its goal resolved on the training rows, so a held-out evaluation leaves out
        the class the fit left out even where another class is the most frequent there (the
        classes' frequencies are often nearly tied). The name stays as written.
        """
        if self.default_class is not None:
            return self
        out = MicroF1Loss(np.asarray(space.classes).tolist()[int(np.argmax(space.priors))])
        out.name = self.name
        return out

    def bind(self, space):
        d = int(np.argmax(space.priors)) if self.default_class is None else space.class_code(self.default_class)
        n = space.n_classes
        B = 2.0 - (np.arange(n)[:, None] == d) - (np.arange(n)[None, :] == d)
        A = 2.0 * np.eye(n)
        A[d, d] = 0.0
        ones = np.ones((space.n_cells, 1, 1))
        return RatioFunction(LinearFunction(ones * (B - A)), LinearFunction(ones * B), self.name,
                             empty_value=1.0)


class _RecallMetric(_Named):
    """A function of the per-class recalls ``r`` (summed over cells)."""

    def _psi_rows(self, R):  # pragma: no cover - abstract
        """Values at many recall vectors, the rows of ``R`` (T, n); shape (T,)."""
        raise NotImplementedError

    def _psi(self, r):
        return float(self._psi_rows(np.asarray(r, dtype=float)[None, :])[0])

    def _dpsi(self, r):  # pragma: no cover - abstract
        raise NotImplementedError

    def bind(self, space):
        pi = space.priors
        if (pi <= 0).any():
            missing = [space.classes[k] for k in np.flatnonzero(pi <= 0)]
            raise ValueError(f"{self.name}: class(es) {missing} have no examples, so their recall is undefined")
        U = _diag_features(space) / pi[:, None]  # normalized diagonal r_k = sum_c C_ckk / pi_k
        return FeatureFunction(space.shape, U, self._psi, self._dpsi, kind="convex",
                               smooth=self.is_smooth, name=self.name, value_rows=self._psi_rows)


def _diag_features(space):
    """Rows selecting sum_c C[c, k, k], shape (n, D)."""
    n = space.n_classes
    U = np.zeros((n,) + space.shape)
    k = np.arange(n)
    U[k, :, k, k] = 1.0
    return U.reshape(n, -1)


def _row_col_features(space):
    """Rows selecting the row sums and column sums of sum_c C[c], each shape (n, D)."""
    n = space.n_classes
    R = np.zeros((n,) + space.shape)
    Q = np.zeros((n,) + space.shape)
    for k in range(n):
        R[k, :, k, :] = 1.0
        Q[k, :, :, k] = 1.0
    return R.reshape(n, -1), Q.reshape(n, -1)


class HMeanLoss(_RecallMetric):
    """``1 - n / sum_k (1 / r_k)``: one minus the harmonic mean of recalls (convex, smooth).

    Value 1 when some recall is 0. The metric call ``goalfit.hmean(y_true, y_pred)`` returns
    the H-mean ``n / sum_k (1 / r_k)`` (0 when some recall is 0).
    """

    is_convex = is_smooth = True
    name = "hmean"

    def _psi_rows(self, R):
        zero = (R <= 0).any(axis=1)
        return np.where(zero, 1.0, 1.0 - R.shape[1] / np.sum(1.0 / np.where(zero[:, None], 1.0, R), axis=1))

    def _dpsi(self, r):
        r = np.maximum(r, EPS)
        s = np.sum(1.0 / r)
        return -len(r) / (s**2 * r**2)


class GMeanLoss(_RecallMetric):
    """``1 - (prod_k r_k)^(1/n)``: one minus the geometric mean of recalls (convex; non-smooth at 0).

    The metric call ``goalfit.gmean(y_true, y_pred)`` returns the G-mean ``(prod_k r_k)^(1/n)``
    (imbalanced-learn's ``geometric_mean_score`` with its default ``average="multiclass"``).
    """

    is_convex = True
    is_smooth = False
    #: differentiable wherever its value is below this (every recall positive): a constraint
    #: ``gmean() >= g`` with ``g > 0`` is a smooth convex bound for the plug-in methods
    smooth_below = 1.0
    name = "gmean"

    def _psi_rows(self, R):
        return 1.0 - np.prod(np.clip(R, 0, None), axis=1) ** (1.0 / R.shape[1])

    def _dpsi(self, r):
        r = np.maximum(r, EPS)
        g = np.prod(r) ** (1.0 / len(r))
        return -g / (len(r) * r)


class QMeanLoss(_RecallMetric):
    """``sqrt((1/n) sum_k (1 - r_k)^2)``: quadratic mean of per-class errors (convex, smooth off r = 1).

    A loss by definition (Narasimhan Table 1 and §10.1, "the Q-mean loss"; Lawrence et al.
    1998), so the goal and the metric call ``goalfit.qmean(y_true, y_pred)`` are the same number.
    """

    is_convex = is_smooth = True
    name = "qmean"

    def _psi_rows(self, R):
        return np.sqrt(np.mean((1.0 - R) ** 2, axis=1))

    def _dpsi(self, r):
        q = self._psi(r)
        if q <= 0:
            return np.zeros_like(r)
        return -(1.0 - r) / (len(r) * q)


class MinMaxRecallLoss(_Named):
    """``max_k (1 - r_k) = 1 - min_k r_k``: worst per-class error (convex, piecewise linear, non-smooth).

    The goal is the min-max loss of Narasimhan (Table 1, Fig. 10); the score its name says is
    the worst-class recall ``min_k r_k``, which the metric call
    ``goalfit.minmax_recall(y_true, y_pred)`` returns.
    """

    tangent_exact = True  # reads the row masses through its rates only (Expression.tangent_exact)

    is_convex = True
    name = "minmax_recall"

    def bind(self, space):
        pieces = [false_negative_rate(c).bind(space) for c in space.classes]
        return MaxOfLinear(pieces, self.name, labels=list(space.classes))


class MacroF1Loss(_Named):
    """``1 - (1/n) sum_k 2 C_kk / (sum_j C_kj + sum_j C_jk)`` (neither convex nor ratio-of-linear).

    Evaluation only for the plug-in methods (no guarantee in the paper); a class neither present
    nor predicted contributes F1 = 0 (scikit-learn's zero_division=0). The metric call
    ``goalfit.macro_f1(y_true, y_pred)`` returns the macro-F1, scikit-learn's
    ``f1_score(y_true, y_pred, average="macro")``.
    """

    tangent_exact = True  # reads the row masses through its rates only (Expression.tangent_exact)

    name = "macro_f1"

    def bind(self, space):
        n = space.n_classes
        R, Q = _row_col_features(space)
        U = np.vstack([_diag_features(space), R, Q])  # (3n, D): tp, row sums, column sums
        # module-level functions (not closures): a fitted estimator keeps its bound objective and
        # must pickle
        return FeatureFunction(space.shape, U, partial(_macro_f1_value, n), partial(_macro_f1_gradient, n),
                               kind="nonconvex", smooth=True, name=self.name)


def _macro_f1_value(n, z):
    """``1 - macro-F1`` from the features ``z = (tp, row sums, column sums)`` of ``n`` classes."""
    tp, den = z[:n], z[n:2 * n] + z[2 * n:]
    f = np.where(den > 0, 2 * tp / np.where(den > 0, den, 1), 0.0)
    return float(1.0 - f.mean())


def _macro_f1_gradient(n, z):
    """The gradient of :func:`_macro_f1_value` in ``z``."""
    tp, den = z[:n], np.maximum(z[n:2 * n] + z[2 * n:], EPS)
    g_tp = -2.0 / (n * den)
    g_den = 2.0 * tp / (n * den**2)
    return np.concatenate([g_tp, g_den, g_den])


class MacroF1OverGroupsLoss(_Named):
    """``1 - (1/G) sum_G F1_G``: one minus the F1 of one class averaged over the groups of a column.

    ``F1_G = 2 TP_G / (2 TP_G + FN_G + FP_G)`` on the cells of group G (the macro F-measure
    across protected groups of Jiang et al., ICML 2020, §6.2, with the notes' I.2.4 formula);
    a group with neither an example of the class nor a prediction of it has F1_G = 0
    (scikit-learn's zero_division=0, as :class:`FBetaLoss`). Each group's F1 is a ratio of
    linear forms in its own cells, but their average is not pseudo-convex (a sum of ratios,
    Narasimhan, Cotter & Gupta 2019), so the bound function is ``kind="nonconvex"`` and smooth:
    the plug-in methods do not choose it automatically; ``method="frank_wolfe"`` runs Frank-Wolfe
    on it as a heuristic (each group's F1 is maximized by a threshold on that group's class
    probability, which the plug-in oracle's per-cell costs can express). The metric call
    ``goalfit.macro_f1_over_groups(y_true, y_pred, sensitive_features=s)`` returns the
    average F1 itself.

    Parameters
    ----------
    column : str, optional
        The slicing column whose values are the groups. Default: the only slicing column of
        the space; with no slicing column the whole data is one group (the loss is ``1 - F1``).
    label : class label, optional
        The class whose F1 is averaged (default the positive class of a binary problem).

    Raises
    ------
    ValueError
        At bind: ``column`` is None while the space has several slicing columns, or it is
        unknown.
    """

    tangent_exact = True  # reads the row masses through its rates only (Expression.tangent_exact)

    is_smooth = True

    def __init__(self, column=None, label=None):
        self.column, self.label = column, label
        args = ([] if column is None else [f"column={column!r}"]) + ([] if label is None else [f"label={label!r}"])
        self.name = "macro_f1_over_groups" + (f"({', '.join(args)})" if args else "")

    def _groups(self, space):
        cols = list(space.cells.columns)
        if self.column is None and len(cols) > 1:
            raise ValueError(f"{self.name}: the space has several slicing columns {cols}; name the groups' "
                             "column, e.g. macro_f1_over_groups('sex')")
        column = self.column if self.column is not None else (cols[0] if cols else None)
        if column is None:
            return [None]
        return [{str(column): v} for v in space.column_values(column)]

    def bind(self, space):
        k = space.default_positive() if self.label is None else space.class_code(self.label)
        n = space.n_classes
        tp = np.zeros((n, n)); tp[k, k] = 1
        fn = np.zeros((n, n)); fn[k, :] = 1; fn[k, k] = 0
        fp = np.zeros((n, n)); fp[:, k] = 1; fp[k, k] = 0
        rows = []
        for group in self._groups(space):
            g = _group_weights(space, group)
            rows += [(g * tp).ravel(), (g * fn).ravel(), (g * fp).ravel()]
        # bound methods (not closures) so that functions bound to this metric pickle
        return FeatureFunction(space.shape, np.vstack(rows), self._value, self._gradient, kind="nonconvex",
                               smooth=True, name=self.name)

    @staticmethod
    def _split(z):
        z = np.asarray(z, dtype=float).reshape(-1, 3)
        return z[:, 0], z[:, 1], z[:, 2]

    def _value(self, z):
        tp, fn, fp = self._split(z)
        den = 2 * tp + fn + fp
        f = np.where(den > 1e-15, 2 * tp / np.where(den > 1e-15, den, 1.0), 0.0)
        return float(1.0 - f.mean())

    def _gradient(self, z):
        tp, fn, fp = self._split(z)
        G = len(tp)
        den = np.maximum(2 * tp + fn + fp, EPS)
        # dF/dTP = 2 (FN + FP) / den^2, dF/dFN = dF/dFP = -2 TP / den^2; the loss is 1 - mean F
        d_tp = -2.0 * (fn + fp) / den**2 / G
        d_err = 2.0 * tp / den**2 / G
        return np.column_stack([d_tp, d_err, d_err]).ravel()


class KLQuantification(_Named):
    """``sum_k pi_k log(pi_k / q_k)`` with ``q_k`` the coverage of class k (Narasimhan Ex. 6).

    Convex and smooth in the column sums; ``+inf`` when a class with ``pi_k > 0`` is never
    predicted (the gradient floors ``q_k`` at ``EPS``).
    """

    is_convex = is_smooth = True
    name = "kl_quantification"
    value_range = (0.0, float("inf"))

    def bind(self, space):
        pi = space.priors
        pos = pi > 0
        _, Q = _row_col_features(space)
        # module-level functions (not closures): a fitted estimator keeps its bound objective and
        # must pickle
        return FeatureFunction(space.shape, Q, partial(_kl_value, pi, pos), partial(_kl_gradient, pi),
                               kind="convex", smooth=True, name=self.name)


def _kl_value(pi, pos, q):
    """``KL(pi || q)`` over the classes ``pos`` with a positive prior; ``inf`` where ``q`` is 0 there."""
    if (q[pos] <= 0).any():
        return float("inf")
    return float(np.sum(pi[pos] * np.log(pi[pos] / q[pos])))


def _kl_gradient(pi, q):
    """The gradient of :func:`_kl_value` in ``q`` (``q`` floored at a tiny positive value)."""
    return -pi / np.maximum(q, EPS)


class CoverageDeviation(_Named):
    """``max_k |cov_k - tau_k|``: distance of the predicted class distribution from a target.

    Narasimhan Ex. 6 (coverage); ``<= eps`` expands into 2n linear constraints.

    Parameters
    ----------
    target : array-like of shape (n_classes,), optional
        Target class distribution; default the class priors of the data (the paper's choice).
    group : optional slice
    """

    is_convex = True

    def __init__(self, target=None, *, group=None):
        self.target = None if target is None else np.asarray(target, dtype=float)
        self.group = group
        args = [] if self.target is None else [f"target={self.target.tolist()}"]
        if group is not None:
            args.append(f"group={group!r}")
        self.name = "coverage_deviation" + (f"({', '.join(args)})" if args else "")

    def bind(self, space):
        target = space.priors if self.target is None else self.target
        if target.shape != (space.n_classes,):
            raise ValueError(f"coverage target needs {space.n_classes} entries, got {target.shape}")
        pieces = []
        for k, c in enumerate(space.classes):
            cov = positive_prediction_rate(c, group=self.group).bind(space)
            assert isinstance(cov, LinearFunction)  # a prediction rate is linear in the confusion
            pieces.append(LinearFunction(cov.coef, cov.const - target[k]))
            pieces.append(LinearFunction(-cov.coef, target[k] - cov.const))
        return MaxOfLinear(pieces, self.name)
