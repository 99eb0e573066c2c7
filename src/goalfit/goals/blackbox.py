"""Metrics as black boxes: callables on labels and predictions (or scores), with groups.

Jiang et al. (ICML 2020) optimize a metric they can only *evaluate* (§2, problem (1)). Here a
black-box metric is a loss (lower is better) of binary labels ``y_true`` in {0, 1} and real
scores ``s`` (a positive score predicts class 1), optionally with integer group codes; it is
evaluated on one model or, vectorized, on an ``(m, n)`` matrix of scores of m perturbed models
(Alg. 2 and 3 need many evaluations per step).

Built-ins (§6, the notes' I.2.4 formulas):

* :func:`gmean_loss` -- ``1 - sqrt(TPR * TNR)`` (§6.1, §6.5), the core's :class:`GMeanLoss`;
* :func:`macro_f1_over_groups_loss` -- ``1 - (1/G) sum_G F1_G`` with F1 of the positive class
  on each group's examples (§6.2), the core's :class:`MacroF1OverGroupsLoss`;
* :func:`error_loss` -- the 0-1 error (§6.4), the core's :class:`ErrorRate`;
* :func:`precision_at_k_loss` and :func:`prbep_loss` -- ``1 - precision@K`` (top-K scores) and
  ``1 - PRBEP`` (precision@K with K = number of positives, §6.3), ranking metrics of scores.

The confusion-based built-ins reuse the goal vocabulary: the groups become cells through
:class:`goalfit.confusion.CellEncoder`, the per-cell confusion tensors of all m models come
from one :class:`goalfit.confusion.BatchConfusion` product, then the core's bound goal is
evaluated on each (:class:`ConfusionMetric`). Any other callable is wrapped by
:class:`BlackBoxMetric`. :func:`resolve_objective` splits what an estimator's ``objective=``
holds into a goal expression (compiled on the prepared data like every goal) or a metric
known only by evaluation.
"""
from __future__ import annotations

import numpy as np

from ..confusion import ConfusionSpace
from .expressions import _thaw
from .metrics import ErrorRate, GMeanLoss, MacroF1OverGroupsLoss

__all__ = [
    "BlackBoxMetric", "ConfusionMetric", "as_blackbox_metric", "gmean_loss", "macro_f1_over_groups_loss",
    "error_loss", "precision_at_k_loss", "prbep_loss", "goal_metric", "group_columns", "resolve_objective",
    "BLACKBOX_METRICS",
]


def _check(y_true, S, groups, keep_float32=False):
    y = np.asarray(y_true)
    if y.ndim != 1:
        raise ValueError(f"y_true must be 1-d, got shape {y.shape}")
    if not np.isin(y, (0, 1)).all():
        raise ValueError("black-box metrics take binary labels y_true in {0, 1}")
    S = np.asarray(S)
    if not (keep_float32 and S.dtype == np.float32):
        S = S.astype(float, copy=False)
    if S.shape[-1] != len(y):
        raise ValueError(f"scores have {S.shape[-1]} columns but y_true has {len(y)} labels (labels mismatch)")
    if S.size and np.isnan(S.min()):  # the minimum propagates NaN (one pass, no boolean temporary)
        raise ValueError("scores contain NaN")
    g = None
    if groups is not None:
        g = np.asarray(groups)
        if g.shape != y.shape:
            raise ValueError(f"groups has shape {g.shape} but y_true has {y.shape}")
    return y.astype(int), S, g


class BlackBoxMetric:
    """A loss known only by evaluation: ``func(y_true, y, groups) -> float``.

    Parameters
    ----------
    func : callable
        ``func(y_true, y_pred)`` or, with ``uses_groups=True``, ``func(y_true, y_pred, groups)``;
        ``y_true`` in {0, 1}; ``y_pred`` are 0/1 predictions (``response="predict"``) or real
        scores (``response="score"``); returns a float.
    response : {"predict", "score"}, default "predict"
    greater_is_better : bool, default False
        If True, the loss is ``-func`` (use ``1 - func`` for metrics in [0, 1] by wrapping).
    uses_groups : bool, default False
    name : str, optional

    Raises
    ------
    ValueError
        On evaluation: labels not in {0, 1}, a labels/scores length mismatch, NaN scores, or a
        non-finite metric value.
    """

    def __init__(self, func, *, response="predict", greater_is_better=False, uses_groups=False, name=None):
        if response not in ("predict", "score"):
            raise ValueError(f"response must be 'predict' or 'score', got {response!r}")
        self.func, self.response = func, response
        self.greater_is_better, self.uses_groups = bool(greater_is_better), bool(uses_groups)
        self.name = name or getattr(func, "__name__", "metric")

    def __repr__(self):
        return f"{type(self).__name__}({self.name})"

    def __call__(self, y_true, scores, groups=None) -> float:
        """Loss of one model's scores (n,)."""
        return float(self.evaluate_many(y_true, np.asarray(scores, dtype=float)[None, :], groups)[0])

    def evaluate_many(self, y_true, S, groups=None) -> np.ndarray:
        """Losses of m models' scores ``S`` (m, n), shape (m,)."""
        y, S, g = _check(y_true, S, groups)
        out = np.array([self._one(y, row, g) for row in np.atleast_2d(S)], dtype=float)
        if not np.isfinite(out).all():
            raise ValueError(f"metric {self.name} returned a non-finite value")
        return out

    def _one(self, y, s, g):
        arg = (s > 0).astype(int) if self.response == "predict" else s
        v = self.func(y, arg, g) if self.uses_groups else self.func(y, arg)
        return -v if self.greater_is_better else v


class ConfusionMetric(BlackBoxMetric):
    """A goal expression of the core vocabulary evaluated as a black box on labels, scores and groups.

    Parameters
    ----------
    goal : Expression
        The loss (lower is better), e.g. :class:`GMeanLoss` or
        ``demographic_parity_difference("sex")``.
    name : str, optional
        Default: the goal's name.
    column : str, default "group"
        Name of the slicing column the groups are bound as (goals name it, e.g.
        ``demographic_parity_difference("sex")``).
    uses_groups : bool, default False
        Whether the value depends on the groups.

    Notes
    -----
    The groups become cells through :class:`goalfit.confusion.CellEncoder` (the one encoder of
    slicing columns) and the confusion tensors of all m models come from one
    :class:`goalfit.confusion.BatchConfusion` product; the bound goal is then evaluated on each.
    The estimators do not go through this class: they compile the goal on the prepared data
    (:attr:`goal` is what they read).
    """

    def __init__(self, goal, name=None, *, column="group", uses_groups=False):
        super().__init__(None, response="predict", name=name or goal.name, uses_groups=uses_groups)
        self.goal = goal
        self.column = column
        self._cache = None

    def _bound(self, y, g):
        from ..confusion import BatchConfusion, CellEncoder

        key = (y.tobytes(), None if g is None else (g.dtype.str, g.tobytes() if g.dtype != object else tuple(g)))
        if self._cache is not None and self._cache[0] == key:
            return self._cache[1]
        encoder = CellEncoder()
        codes = encoder.fit_transform(None if g is None else {self.column: g}, len(y))
        space = ConfusionSpace.from_codes(y, codes, np.array([0, 1]), encoder.cells_)
        bound = self.goal.bind(space)
        self._cache = (key, (bound, BatchConfusion(y, codes, encoder.n_cells)))
        return self._cache[1]

    def evaluate_many(self, y_true, S, groups=None) -> np.ndarray:
        y, S, g = _check(y_true, S, groups, keep_float32=True)
        bound, confusion = self._bound(y, g)
        return np.asarray(bound.values(confusion.tensors(np.atleast_2d(S) > 0)), dtype=float)


def gmean_loss() -> ConfusionMetric:
    """``1 - sqrt(TPR * TNR)`` (Jiang et al. §6.1, §6.5; the core's :class:`GMeanLoss`).

    Examples
    --------
    >>> import goalfit as gf
    >>> metric = gf.gmean_loss()
    >>> round(metric([0, 1, 1, 0, 1], [-1.0, 2.0, -0.5, -0.3, 0.8]), 4)
    0.1835
    """
    return ConfusionMetric(GMeanLoss(), "gmean_loss")


def error_loss() -> ConfusionMetric:
    """0-1 error ``P(h(x) != y)`` (Jiang et al. §6.4; the core's :class:`ErrorRate`).

    Examples
    --------
    >>> import goalfit as gf
    >>> metric = gf.error_loss()
    >>> round(metric([0, 1, 1, 0, 1], [-1.0, 2.0, -0.5, -0.3, 0.8]), 4)
    0.2
    """
    return ConfusionMetric(ErrorRate(), "error")


def macro_f1_over_groups_loss() -> ConfusionMetric:
    """``1 - (1/G) sum_G F1_G``: one minus the macro F-measure across groups (§6.2).

    ``F1_G = 2 P_G R_G / (P_G + R_G)`` of the positive class on the examples of group G
    (the core's :class:`MacroF1OverGroupsLoss`, also a ``GoalClassifier`` objective; 0 when the
    group has neither a positive example nor a positive prediction). Needs ``groups``; without
    them it is ``1 - F1``.

    Examples
    --------
    >>> import goalfit as gf
    >>> metric = gf.macro_f1_over_groups_loss()
    >>> round(metric([0, 1, 1, 0, 1, 0], [-1.0, 2.0, -0.5, 0.3, 0.8, -0.2], ["a", "a", "a", "b", "b", "b"]), 4)
    0.3333
    """
    return ConfusionMetric(MacroF1OverGroupsLoss(), "macro_f1_over_groups_loss", uses_groups=True)


def _slice_columns(spec):
    """Columns a group specification of :meth:`ConfusionSpace.cell_mask` names (a frozen or plain
    dict: its keys; a pair ``(column, value)``: the column; a bare value: none, any column)."""
    spec = _thaw(spec)
    if isinstance(spec, dict):
        return {str(k) for k in spec}
    if isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[0], str):
        return {spec[0]}
    return set()


def group_columns(goal):
    """Whether a goal expression reads the groups, and the slicing columns it names.

    From the expression's structure (not its display name, which a user may choose freely):
    a disparity across the groups of a column (:class:`GroupDisparity`), the macro F1 over
    groups, a rate with a group condition or a churn condition (:class:`Cond` ``"group"`` /
    ``"agree"``), a linear expression with such a rate, or a named metric restricted to a group
    (its ``group`` attribute).

    Returns
    -------
    (uses_groups, columns) : bool, set of str

    Raises
    ------
    ValueError
        For a rate restricted to a dataset (``dataset=``): a black-box metric is evaluated on one
        sample.
    """
    from ..confusion.datasets import DATASET_COLUMN
    from .expressions import LinearExpression, Rate
    from .fairness import GroupDisparity

    if isinstance(goal, GroupDisparity):
        return True, set() if goal.sensitive is None else {str(goal.sensitive)}
    if isinstance(goal, MacroF1OverGroupsLoss):
        return True, set() if goal.column is None else {str(goal.column)}
    if isinstance(goal, LinearExpression):
        parts = [group_columns(r) for _, r in goal.terms]
        return any(u for u, _ in parts), set().union(*(c for _, c in parts))
    if isinstance(goal, Rate):
        uses, cols = False, set[str]()
        for c in goal.event + goal.given:
            if c.what == "group":
                named = _slice_columns(c.group)
                if DATASET_COLUMN in named:
                    raise ValueError(f"{goal.name}: a black-box metric is evaluated on one sample; a rate "
                                     "restricted to a dataset (dataset=...) has no meaning there")
                uses, cols = True, cols | named
            elif c.what == "agree":  # churn: agreement with the column's value (a deployed model)
                uses, cols = True, cols | ({str(c.column)} if c.column is not None else set())
        return uses, cols
    group = getattr(goal, "group", None)  # named metrics restricted to a slice (f1, coverage...)
    return (True, _slice_columns(group)) if group is not None else (False, set())


def goal_metric(goal) -> ConfusionMetric:
    """A goal expression of :mod:`goalfit.goals` evaluated as a black box (a loss: lower is better).

    Any objective a :class:`~goalfit.GoalClassifier` takes (``gf.gmean()``, ``gf.f1()``,
    ``gf.macro_f1_over_groups("sex")``, ``gf.demographic_parity_difference("sex")``,
    ``gf.error_rate() + 0.5 * gf.false_negative_rate()``, ...) becomes a metric of labels,
    predictions and groups for :class:`~goalfit.AdaptiveSurrogateClassifier`: its form is known,
    but Jiang et al.'s method only evaluates it. Whether it reads the groups
    (``uses_groups``) is read from the expression's structure (group disparities, the macro F1
    over groups, rates and metrics restricted to a group, churn); the groups are bound as the
    column the goal names (``"sex"`` in ``demographic_parity_difference("sex")`` or
    ``true_positive_rate(group={"sex": "F"})``), else ``"group"``.

    Raises
    ------
    ValueError
        For a constraint (``expr <= bound``): a metric is one expression to minimize; for a goal
        naming several slicing columns (a black-box metric takes one group array) or a dataset.

    Examples
    --------
    >>> import goalfit as gf
    >>> metric = gf.goal_metric(gf.hmean())
    >>> round(metric([0, 1, 1, 0, 1], [-1.0, 2.0, -0.5, -0.3, 0.8]), 4)
    0.2
    """
    from .expressions import Constraint, Expression

    if isinstance(goal, Constraint):
        raise ValueError(f"{goal.name!r} is a constraint; a black-box metric is one goal expression to "
                         "minimize (e.g. its left-hand side)")
    if not isinstance(goal, Expression):
        raise ValueError(f"not a goal expression: {goal!r}")
    uses_groups, columns = group_columns(goal)
    if len(columns) > 1:
        raise ValueError(f"{goal.name} reads the slicing columns {sorted(columns)}; a black-box metric "
                         "takes one group array (sensitive_features with one column)")
    column = columns.pop() if columns else "group"
    return ConfusionMetric(goal, goal.name, column=column, uses_groups=uses_groups)


class _TopKMetric(BlackBoxMetric):
    """``1 - precision@K`` of the top-K scores (ties broken by position), over all examples.

    Raises
    ------
    ValueError
        On evaluation with ``groups`` (a ranking over all examples has no per-group form
        here; slice the surrogates with ``surrogate_groups`` instead of ``sensitive_features``),
        with no positive example (PRBEP) or K above the number of examples.
    """

    def __init__(self, k=None, name="prbep_loss"):
        super().__init__(None, response="score", name=name)
        if k is not None and int(k) < 1:
            raise ValueError(f"K must be >= 1, got {k}")
        self.k = None if k is None else int(k)

    def evaluate_many(self, y_true, S, groups=None) -> np.ndarray:
        if groups is not None:
            raise ValueError(f"{self.name} ranks all examples together and takes no groups; pass the "
                             "surrogates' slices as surrogate_groups=..., not sensitive_features=...")
        y, S, _ = _check(y_true, S, None)
        S = np.atleast_2d(S)
        k = int(y.sum()) if self.k is None else self.k
        if k < 1:
            raise ValueError("PRBEP needs at least one positive example")
        if k > S.shape[1]:
            raise ValueError(f"K = {k} exceeds the number of examples {S.shape[1]}")
        top = np.argpartition(-S, k - 1, axis=1)[:, :k]
        return 1.0 - y[top].sum(axis=1) / k


def precision_at_k_loss(k: int) -> BlackBoxMetric:
    """``1 - precision@K``: share of negatives among the K highest scores (Example 4).

    Examples
    --------
    >>> import goalfit as gf
    >>> metric = gf.precision_at_k_loss(2)
    >>> round(metric([0, 1, 1, 0, 1], [0.1, 0.9, 0.4, 0.3, 0.8]), 4)
    0.0
    """
    return _TopKMetric(k, name=f"precision_at_{k}_loss")


def prbep_loss() -> BlackBoxMetric:
    """``1 - PRBEP``: precision@K with K = number of positives (precision = recall there, §6.3).

    Examples
    --------
    >>> import goalfit as gf
    >>> metric = gf.prbep_loss()
    >>> round(metric([0, 1, 1, 0, 1], [0.1, 0.9, 0.4, 0.3, 0.8]), 4)
    0.0
    """
    return _TopKMetric(None, name="prbep_loss")


BLACKBOX_METRICS = {
    "gmean": gmean_loss, "macro_f1_over_groups": macro_f1_over_groups_loss, "error": error_loss,
    "prbep": prbep_loss,
}


def as_blackbox_metric(metric) -> BlackBoxMetric:
    """A :class:`BlackBoxMetric` from a name in :data:`BLACKBOX_METRICS`, an instance or a callable.

    A plain callable is taken as ``func(y_true, y_pred) -> loss`` on 0/1 predictions; a goal
    expression of :mod:`goalfit.goals` goes through :func:`goal_metric`.

    Raises
    ------
    ValueError
        For an unknown name, a constraint or an object that is not callable.

    Examples
    --------
    >>> import goalfit as gf
    >>> metric = gf.as_blackbox_metric("gmean")
    >>> round(metric([0, 1, 1, 0, 1], [-1.0, 2.0, -0.5, -0.3, 0.8]), 4)
    0.1835
    """
    from .expressions import Constraint, Expression

    if isinstance(metric, BlackBoxMetric):
        return metric
    if isinstance(metric, (Expression, Constraint)):
        return goal_metric(metric)
    if isinstance(metric, str):
        if metric not in BLACKBOX_METRICS:
            raise ValueError(f"unknown black-box metric {metric!r}; known: {sorted(BLACKBOX_METRICS)}")
        return BLACKBOX_METRICS[metric]()
    if callable(metric):
        return BlackBoxMetric(metric)
    raise ValueError(f"metric must be a name, a BlackBoxMetric or a callable, got {type(metric).__name__}")


def resolve_objective(objective):
    """Split an ``objective=`` into a goal expression or a metric known only by evaluation.

    Parameters
    ----------
    objective : str, Expression, ConfusionMetric, BlackBoxMetric or callable
        A name of :data:`goalfit.goals.OBJECTIVES` (``"gmean"``, ``"error"``,
        ``"macro_f1_over_groups"``, ``"f1"``...) or a goal expression: a goal; a
        :class:`ConfusionMetric` (:func:`gmean_loss`, :func:`goal_metric`...): its goal; a name of
        :data:`BLACKBOX_METRICS` that is no goal (``"prbep"``), another :class:`BlackBoxMetric`
        (:func:`precision_at_k_loss`) or a callable ``func(y_true, y_pred) -> loss``: a metric.

    Returns
    -------
    (goal, metric) : (Expression, None) or (None, BlackBoxMetric)

    Raises
    ------
    ValueError
        For a constraint (``expr <= bound``: it belongs in ``constraints=``) or an unknown name.
    TypeError
        For anything else.
    """
    from .expressions import Constraint, Expression
    from .problem import OBJECTIVES, as_objective

    if isinstance(objective, Constraint):
        raise ValueError(f"{objective.name!r} is a constraint, not a metric to minimize: pass it in constraints=[...] "
                         "and give the objective as a goal expression or a metric")
    if isinstance(objective, ConfusionMetric):
        return objective.goal, None
    if isinstance(objective, BlackBoxMetric):
        return None, objective
    if isinstance(objective, Expression):
        return objective, None
    if isinstance(objective, str):
        key = objective.strip().lower().replace("-", "_")
        if key in OBJECTIVES:
            return as_objective(key), None
        if key in BLACKBOX_METRICS:
            return None, BLACKBOX_METRICS[key]()
        raise ValueError(f"unknown objective {objective!r}; known goals: {sorted(OBJECTIVES)}, metrics known only "
                         f"by evaluation: {sorted(set(BLACKBOX_METRICS) - set(OBJECTIVES))}")
    if callable(objective):
        return None, BlackBoxMetric(objective)
    raise TypeError(f"objective must be a name, a goal expression, a BlackBoxMetric or a callable, got "
                    f"{type(objective).__name__}")
