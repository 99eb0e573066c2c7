"""Evaluate goals on labels and predictions (the functional side of :mod:`goalfit.goals`).

``score(goal, y_true, y_pred, sensitive_features=...)`` evaluates any goal expression;
``y_pred`` may be labels or, for randomized classifiers, per-example class distributions
(exact expected values). The fairlearn-style functions below are thin wrappers.
"""
from __future__ import annotations

import numpy as np

from ..confusion import CellEncoder, ConfusionSpace, confusion_tensor
from ..goals import Problem, as_objective
from ..goals import fairness as _fair


def _encoded(y_true, y_pred, sensitive_features, sample_weight, classes):
    """Codes, cells, space and confusion tensor of labelled predictions."""
    y_true = np.asarray(y_true)
    y_pred = np.asarray(y_pred)
    if classes is None:
        classes = np.unique(np.concatenate([y_true, y_pred]) if y_pred.ndim == 1 else y_true)
    from ..classifiers import encode_labels

    yc = encode_labels(y_true, classes)
    pc = encode_labels(y_pred, classes) if y_pred.ndim == 1 else y_pred
    enc = CellEncoder().fit(sensitive_features, len(yc))
    cells = enc.transform(sensitive_features, len(yc))
    space = ConfusionSpace.from_codes(yc, cells, classes, enc.cells_, sample_weight)
    C = confusion_tensor(yc, pc, cells, len(classes), enc.n_cells, sample_weight)
    return yc, pc, cells, space, C


def _space_and_tensor(y_true, y_pred, sensitive_features, sample_weight, classes):
    return _encoded(y_true, y_pred, sensitive_features, sample_weight, classes)[3:]


def score(goal, y_true, y_pred, *, sensitive_features=None, sample_weight=None, classes=None) -> float:
    """Value of a goal expression (or objective name) on labels and predictions.

    Parameters
    ----------
    goal : str or Expression
    y_true : array-like of shape (n_samples,)
    y_pred : array-like of shape (n_samples,) or (n_samples, n_classes)
        Labels, or per-example predicted-class distributions (exact expectation).
    sensitive_features : optional
    sample_weight : optional
    classes : array-like, optional
        Class order (required when ``y_pred`` is a distribution over classes absent from y).
    """
    space, C = _space_and_tensor(y_true, y_pred, sensitive_features, sample_weight, classes)
    return as_objective(goal).bind(space).value(C)


def evaluate_problem(problem: Problem, y_true, y_pred, *, sensitive_features=None, sample_weight=None,
                     classes=None, confidence=None, interval_method="auto", n_bootstrap=1000,
                     random_state=None) -> dict:
    """Objective, constraints and accuracy of predictions on labelled data.

    Parameters
    ----------
    problem : Problem
    y_true : array-like of shape (n_samples,)
    y_pred : array-like of shape (n_samples,) or (n_samples, n_classes)
        Labels, or per-example predicted-class distributions (exact expectation).
    sensitive_features, sample_weight, classes : optional
        As in :func:`score`.
    confidence : float in (0, 1), optional
        Add a ``confidence`` interval to the objective, every constraint and the accuracy
        (:mod:`goalfit.metrics.intervals`: Clopper-Pearson for a single rate, delta method
        otherwise, Bonferroni over the pieces of a max/min). The interval covers the
        population value of the goal for this (fixed) classifier.
    interval_method : {"auto", "clopper_pearson", "delta", "bootstrap"}
    n_bootstrap : int
        Replicates for ``interval_method="bootstrap"``.
    random_state : int, optional
        Seed of the bootstrap.

    Returns
    -------
    dict: ``objective`` {name, value}, ``constraints`` [{name, value, bound, sense, violation,
    met}], ``accuracy``. With ``confidence``: ``objective["interval"]``, each constraint's
    ``interval`` ([low, high]), ``interval_method`` and ``met_with_confidence`` (the whole
    interval on the right side of the bound: the data show the goal holds at that level, one
    sided at ``(1 + confidence) / 2``), and ``accuracy_interval``.
    """
    yc, pc, cells, space, C = _encoded(y_true, y_pred, sensitive_features, sample_weight, classes)
    out = evaluate_compiled(problem, problem.compile(space), C)
    if confidence is None:
        return out
    from .intervals import GoalSample

    return add_intervals(out, problem, GoalSample(yc, pc, cells, space, sample_weight), confidence,
                         method=interval_method, n_bootstrap=n_bootstrap, random_state=random_state)


def add_intervals(out: dict, problem: Problem, sample, confidence: float, *, method="auto", n_bootstrap=1000,
                  random_state=None, accuracy: bool = True) -> dict:
    """Add confidence intervals to an evaluation dict (see :func:`evaluate_problem`), in place.

    ``sample`` is the evaluated :class:`~goalfit.metrics.intervals.GoalSample`; ``accuracy``
    adds ``accuracy_interval`` (over the whole sample).
    """
    from ..goals import accuracy as accuracy_rate
    from .intervals import goal_interval

    kw = dict(method=method, n_bootstrap=n_bootstrap, random_state=random_state)
    iv = goal_interval(problem.objective, sample, confidence, **kw)
    out["objective"]["interval"] = iv.as_list()
    out["objective"]["interval_method"] = iv.method
    for c, row in zip(problem.constraints, out["constraints"]):
        iv = goal_interval(c.expression, sample, confidence, **kw)
        row["interval"] = iv.as_list()
        row["interval_method"] = iv.method
        row["met_with_confidence"] = bool(iv.high <= c.bound + 1e-12 if c.sense == "<=" else iv.low >= c.bound - 1e-12)
    if accuracy:
        out["accuracy_interval"] = goal_interval(accuracy_rate(), sample, confidence, **kw).as_list()
    out["confidence"] = confidence
    return out


def evaluate_compiled(problem: Problem, cp, C) -> dict:
    """:func:`evaluate_problem` from a problem already bound to a space and a tensor ``C``."""
    cons = []
    for c in cp.constraints:
        v = c.value(C)
        viol = c.violation(C)
        cons.append({"name": c.name, "expression": c.constraint.expression.name, "value": v, "bound": c.bound, "sense": c.sense,
                     "violation": viol, "met": viol <= 1e-7})
    return {
        "objective": {"name": problem.objective.name, "value": cp.objective.value(C)},
        "constraints": cons,
        "accuracy": float(np.trace(C.sum(axis=0))),
    }


def _wrap(maker):
    def metric(y_true, y_pred, *, sensitive_features, method="between_groups", sample_weight=None):
        return score(maker(None, method=method), y_true, y_pred,
                     sensitive_features=sensitive_features, sample_weight=sample_weight)

    metric.__name__ = maker.__name__
    metric.__doc__ = (f"``{maker.__name__}`` of predictions (same definition and defaults as "
                      "fairlearn.metrics). See :mod:`goalfit.goals.fairness`.")
    return metric


demographic_parity_difference = _wrap(_fair.demographic_parity_difference)
demographic_parity_ratio = _wrap(_fair.demographic_parity_ratio)
equal_opportunity_difference = _wrap(_fair.equal_opportunity_difference)
equal_opportunity_ratio = _wrap(_fair.equal_opportunity_ratio)
equalized_odds_difference = _wrap(_fair.equalized_odds_difference)
equalized_odds_ratio = _wrap(_fair.equalized_odds_ratio)
error_rate_difference = _wrap(_fair.error_rate_difference)
error_rate_ratio = _wrap(_fair.error_rate_ratio)
false_positive_rate_difference = _wrap(_fair.false_positive_rate_difference)
false_positive_rate_ratio = _wrap(_fair.false_positive_rate_ratio)

from .scorer import GoalScorer, goal_scorer  # noqa: E402

__all__ = ["score", "evaluate_problem", "add_intervals", "goal_scorer", "GoalScorer", "evaluate_compiled", "demographic_parity_difference", "demographic_parity_ratio",
           "equal_opportunity_difference", "equal_opportunity_ratio", "equalized_odds_difference",
           "equalized_odds_ratio", "error_rate_difference", "error_rate_ratio",
           "false_positive_rate_difference", "false_positive_rate_ratio"]
