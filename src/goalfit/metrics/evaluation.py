"""Goals evaluated on labels and predictions (the functions behind :mod:`goalfit.metrics`)."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..confusion import CellEncoder, ConfusionSpace, confusion_tensor
from ..confusion.space import AMBIGUOUS
from ..utils.validation import (check_consistent_rows, check_labels_in_classes, check_sample_weight,
                                resolve_pos_label)
from ..goals import FEASIBLE_TOL, Problem, as_objective


def _encoded(y_true, y_pred, sensitive_features, sample_weight, classes, pos_label=None):
    """Codes, cells, space and confusion tensor of labelled predictions (inputs checked)."""
    y_true = np.asarray(y_true)
    y_pred = np.asarray(y_pred)
    if y_true.ndim != 1:
        raise ValueError(f"y_true must be 1-D labels, got shape {y_true.shape}")
    if y_pred.ndim not in (1, 2):
        raise ValueError(f"y_pred must be labels (n_samples,) or class distributions (n_samples, n_classes), "
                         f"got shape {y_pred.shape}")
    check_consistent_rows(y_true=y_true, y_pred=y_pred, sensitive_features=sensitive_features,
                          sample_weight=sample_weight)
    sample_weight = check_sample_weight(sample_weight, len(y_true))
    strict = classes is None
    if classes is None:
        classes = np.unique(y_true)
    if y_pred.ndim == 1:
        check_labels_in_classes(y_pred, classes, "y_pred")
    pos = resolve_pos_label(classes, pos_label)
    if pos is None and len(classes) == 2:
        # classes given by the caller (an estimator's classes_): classes[1] is positive, as in
        # scikit-learn; labels read from y_true: refuse to guess
        pos = AMBIGUOUS if strict else np.asarray(classes)[1]
    from ..classifiers import encode_labels

    yc = encode_labels(y_true, classes)
    pc = encode_labels(y_pred, classes) if y_pred.ndim == 1 else y_pred
    enc = CellEncoder().fit(sensitive_features, len(yc))
    cells = enc.transform(sensitive_features, len(yc))
    space = ConfusionSpace.from_codes(yc, cells, classes, enc.cells_, sample_weight)
    if len(classes) == 2:
        space = replace(space, pos_label=pos)
    C = confusion_tensor(yc, pc, cells, len(classes), enc.n_cells, sample_weight)
    return yc, pc, cells, space, C, sample_weight


def _space_and_tensor(y_true, y_pred, sensitive_features, sample_weight, classes, pos_label=None):
    return _encoded(y_true, y_pred, sensitive_features, sample_weight, classes, pos_label)[3:5]


def score(goal, y_true, y_pred, *, sensitive_features=None, sample_weight=None, classes=None,
          pos_label=None) -> float:
    """Value of a goal expression (or objective name) on labels and predictions.

    The goal's own value, the number an objective minimizes or a constraint bounds: for a
    metric whose name is a score this is the loss ``score("f1", y, p) == 1 - F1``; the
    builders called on labels (``goalfit.f1(y_true, y_pred)``) return the score itself.

    Parameters
    ----------
    goal : str or Expression
    y_true : array-like of shape (n_samples,)
    y_pred : array-like of shape (n_samples,) or (n_samples, n_classes)
        Labels, or per-example predicted-class distributions (exact expectation).
    sensitive_features : optional
    sample_weight : optional
    classes : array-like, optional
        Class order (required when ``y_pred`` is a distribution over classes absent from y, or
        predicts a class absent from ``y_true``). Default: the labels of ``y_true``.
    pos_label : class label, optional
        Positive class of a binary problem (the class of ``true_positive_rate()``,
        ``demographic_parity_difference``, ``f1``... without ``label=``), scikit-learn's
        convention: optional for labels {0, 1}, {-1, 1}, {False, True} (then 1 / True); for
        other labels it must be given, unless ``classes`` is (then ``classes[1]``, the
        estimators' ``classes_[1]``).

    Raises
    ------
    ValueError
        ``y_pred`` holds values that are not class labels (probabilities passed as labels),
        lengths differ, negative sample weights, an ambiguous positive class, a group or class
        a rate is conditioned on is empty (named in the message).
    """
    space, C = _space_and_tensor(y_true, y_pred, sensitive_features, sample_weight, classes, pos_label)
    return as_objective(goal).bind(space).value(C)


def evaluate_problem(problem: Problem, y_true, y_pred, *, sensitive_features=None, sample_weight=None,
                     classes=None, pos_label=None, confidence=None, interval_method="auto", n_bootstrap=1000,
                     random_state=None) -> dict:
    """Objective, constraints and accuracy of predictions on labelled data.

    Parameters
    ----------
    problem : Problem
    y_true : array-like of shape (n_samples,)
    y_pred : array-like of shape (n_samples,) or (n_samples, n_classes)
        Labels, or per-example predicted-class distributions (exact expectation).
    sensitive_features, sample_weight, classes, pos_label : optional
        As in :func:`score`.
    confidence : float in [0.5, 1), optional
        Add a ``confidence`` interval to the objective, every constraint and the accuracy
        (:mod:`goalfit.metrics.intervals`: Clopper-Pearson for a single rate, delta method
        otherwise, the max/min of the pieces' bounds). The interval covers the
        population value of the goal for this (fixed) classifier.
    interval_method : {"auto", "clopper_pearson", "delta", "bootstrap"}
    n_bootstrap : int
        Replicates for ``interval_method="bootstrap"``.
    random_state : int, optional
        Seed of the bootstrap.

    Returns
    -------
    dict: ``objective`` (:func:`objective_entry`: ``name``, ``value`` = ``loss`` the minimized
    value, ``score`` or None, ``loss_label``, ``score_label``), ``constraints``
    (:func:`constraint_entry`: {name, expression, label, value, bound, sense, loss, score,
    violation, met}, ``value`` / ``sense`` / ``bound`` as the constraint was written: F1 0.73
    ``>=`` 0.7 for ``f1() >= 0.7``), ``accuracy``. With ``confidence``: ``objective["interval"]``
    (of the loss; ``objective["score_interval"]`` where a score exists), each constraint's
    ``interval`` ([low, high], in the units of its ``value``; ``loss_interval`` beside it for a
    score), ``interval_method`` and ``met_with_confidence`` (the whole
    interval on the right side of the bound: the data show the goal holds at that level, one
    sided at ``(1 + confidence) / 2``), and ``accuracy_interval``.
    """
    yc, pc, cells, space, C, sample_weight = _encoded(y_true, y_pred, sensitive_features, sample_weight, classes,
                                                      pos_label)
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
    if out["objective"].get("score") is not None:  # score = 1 - loss: the interval flips
        out["objective"]["score_interval"] = [1.0 - iv.high, 1.0 - iv.low]
    for c, row in zip(problem.constraints, out["constraints"]):
        iv = goal_interval(c.expression, sample, confidence, **kw)
        row["interval"] = sorted([c.as_shown(iv.low), c.as_shown(iv.high)])  # F1's for F1 >= 0.7
        if c.score_label is not None:
            row["loss_interval"] = iv.as_list()
        row["interval_method"] = iv.method
        row["met_with_confidence"] = bool(iv.high <= c.bound + 1e-12 if c.sense == "<=" else iv.low >= c.bound - 1e-12)
    if accuracy:
        out["accuracy_interval"] = goal_interval(accuracy_rate(), sample, confidence, **kw).as_list()
    out["confidence"] = confidence
    return out


def objective_entry(name: str, loss: float, *, named: bool = True) -> dict:
    """An evaluation's ``objective`` entry: what is minimized and, where one exists, the score.

    Parameters
    ----------
    name : str
        The objective's name (``"f1"``, ``"error"``, ``"demographic_parity_difference('sex')"``).
    loss : float
        Its value, the minimized quantity (lower is better).
    named : bool, default True
        Whether ``name`` is goalfit's (a goal or built-in metric); False for a user's
        black-box callable, whose name says nothing about a score.

    Returns
    -------
    dict
        ``name``; ``value`` and ``loss``: the minimized value (the same number: ``value`` is the
        key every reader has used); ``score``: ``1 - loss`` where the name is a score whose goal
        is ``1 - score`` (F1, G-mean, H-mean, min recall, :data:`goalfit.goals.metrics.SCORES`),
        else None; ``loss_label`` (``"1 - F1"``, ``"error rate"``) and ``score_label``
        (``"F1"`` or None) for display.

    Examples
    --------
    >>> e = objective_entry("f1", 0.25)
    >>> e["loss"], e["score"], e["loss_label"], e["score_label"]
    (0.25, 0.75, '1 - F1', 'F1')
    """
    from ..goals.metrics import loss_label, score_from_loss, score_label

    loss = float(loss)
    if not named:
        return {"name": name, "value": loss, "loss": loss, "score": None, "loss_label": name, "score_label": None}
    return {"name": name, "value": loss, "loss": loss, "score": score_from_loss(name, loss),
            "loss_label": loss_label(name), "score_label": score_label(name)}


def constraint_entry(constraint, loss: float) -> dict:
    """An evaluation's entry for one constraint, in the units it was written in.

    Parameters
    ----------
    constraint : Constraint
    loss : float
        The value of ``constraint.expression`` (for ``f1() >= 0.7`` the goal 1 - F1).

    Returns
    -------
    dict
        ``name`` (``"F1 >= 0.7"``), ``expression`` (the goal's name, ``"f1"``), ``label`` (what
        ``value`` and ``bound`` measure: ``"F1"``; ``"1 - G-mean"`` style names for a loss,
        the expression otherwise), ``value``, ``sense`` and ``bound`` as written (F1 0.73, ``">="``,
        0.7), ``loss`` (the goal's value the methods bound: 1 - F1), ``score`` (F1, or None
        for a constraint not on a score), ``violation`` (the same number in both units) and
        ``met``.

    Examples
    --------
    >>> from goalfit.goals import f1
    >>> e = constraint_entry(f1() >= 0.7, 0.27)
    >>> e["label"], round(e["value"], 12), e["sense"], e["bound"], e["met"]
    ('F1', 0.73, '>=', 0.7, True)
    """
    loss = float(loss)
    viol = constraint.violation(loss)
    sense, bound = constraint.shown
    score = constraint.as_shown(loss) if constraint.score_label is not None else None
    return {"name": constraint.name, "expression": constraint.expression.name,
            "label": measured_label(constraint),
            "value": constraint.as_shown(loss), "bound": bound, "sense": sense, "loss": loss, "score": score,
            "violation": viol, "met": viol <= FEASIBLE_TOL}


def measured_label(constraint) -> str:
    """What a constraint's reported values measure, as written: ``"F1"`` for ``f1() >= 0.7``, the
    expression's label (``"true_positive_rate(group='F') - true_positive_rate()"``) otherwise."""
    from ..goals.metrics import loss_label

    return constraint.score_label or loss_label(constraint.expression.name)


def evaluate_compiled(problem: Problem, cp, C) -> dict:
    """:func:`evaluate_problem` from a problem already bound to a space and a tensor ``C``."""
    cons = [constraint_entry(c.constraint, c.value(C)) for c in cp.constraints]
    return {
        "objective": objective_entry(problem.objective.name, cp.objective.value(C)),
        "constraints": cons,
        "accuracy": float(np.trace(C.sum(axis=0))),
    }
