"""Evaluate goals on labels and predictions (the functional side of :mod:`goalfit.goals`).

``score(goal, y_true, y_pred, sensitive_features=...)`` evaluates any goal expression;
``y_pred`` may be labels or, for randomized classifiers, per-example class distributions
(exact expected values). The fairlearn-style functions below are thin wrappers.
"""
from __future__ import annotations

import functools

import numpy as np

from .. import goals as _goals
from ..utils.lazy import lazy_attributes


def _on_labels(args, kwargs) -> bool:
    """Whether a goal builder was called as fairlearn's metrics are: ``(y_true, y_pred, ...)``."""
    if "y_true" in kwargs or "y_pred" in kwargs:
        return True
    return len(args) >= 2 and all(np.ndim(a) >= 1 and not isinstance(a, (str, bytes, dict)) for a in args[:2])


def goal_or_value(builder):
    """A goal builder that also computes the metric when called as scikit-learn's and fairlearn's are.

    ``builder(...)`` with names of classes, groups or datasets returns the goal expression, as
    :mod:`goalfit.goals` does; ``builder(y_true, y_pred, *, sensitive_features=None,
    sample_weight=None, pos_label=None, **options)`` returns the value its name says on those
    labels and predictions: a score where the name is a score (``f1`` is F1 as
    ``sklearn.metrics.f1_score``, ``gmean`` / ``hmean`` the G-/H-mean of the recalls,
    ``minmax_recall`` the worst-class recall: :data:`goalfit.goals.metrics.SCORES`), while the
    goal expression, what an objective minimizes, is ``1 - score``; a loss where the name is a
    loss (``error``, ``balanced_error``, ``qmean``, ``kl_quantification``); rates and the
    fairness measures with the same definition and defaults as ``fairlearn.metrics``, e.g.
    ``demographic_parity_difference(y_true, y_pred, sensitive_features=s)``,
    ``method="between_groups"``. :func:`score` gives a goal expression's own value (the loss).

    Parameters
    ----------
    builder : callable
        A goal builder of :mod:`goalfit.goals`.

    Returns
    -------
    callable
        With the builder's name and docstring.
    """
    @functools.wraps(builder)
    def dual(*args, **kwargs):
        if not _on_labels(args, kwargs):
            return builder(*args, **kwargs)
        rest = list(args)
        y_true = kwargs.pop("y_true") if "y_true" in kwargs else rest.pop(0)
        y_pred = kwargs.pop("y_pred") if "y_pred" in kwargs else rest.pop(0)
        sf = kwargs.pop("sensitive_features", None)
        sw = kwargs.pop("sample_weight", None)
        pos_label = kwargs.pop("pos_label", None)
        if kwargs.pop("agg", "worst_case") != "worst_case":
            raise ValueError("agg: only 'worst_case' (fairlearn's default) is computed")
        from .evaluation import score

        goal = builder(*rest, **kwargs)
        value = score(goal, y_true, y_pred, sensitive_features=sf, sample_weight=sw, pos_label=pos_label)
        as_score = _goals.metrics.score_from_loss(goal.name, value)  # F1 where the goal is 1 - F1
        return value if as_score is None else as_score

    dual.__doc__ = (builder.__doc__ or "") + (
        "\n\n    Also computes the metric on labels when called as ``f(y_true, y_pred, *, "
        "sensitive_features=, sample_weight=, pos_label=)``: the value its name says, a score for "
        "a score (:func:`goalfit.metrics.goal_or_value`).\n")
    return dual


#: Every goal builder of :mod:`goalfit.goals`, also computing values on labels (``goalfit.<name>``).
BUILDERS = {name: goal_or_value(getattr(_goals, name)) for name in _goals.BUILDERS}
globals().update(BUILDERS)


#: Loaded on first use: name -> module of this package.
_LAZY = {"score": "evaluation", "evaluate_problem": "evaluation", "evaluate_compiled": "evaluation",
         "objective_entry": "evaluation", "constraint_entry": "evaluation",
         "add_intervals": "evaluation", "goal_scorer": "scorer", "GoalScorer": "scorer",
         "plan_certification": "planning", "CertificationPlan": "planning"}


__getattr__ = lazy_attributes(__name__, _LAZY)  # the evaluation loads pandas, the scorer scikit-learn


__all__ = ["score", "evaluate_problem", "evaluate_compiled", "objective_entry", "constraint_entry", "add_intervals",
           "goal_scorer",
           "GoalScorer", "plan_certification", "CertificationPlan",
           "goal_or_value", *BUILDERS]
