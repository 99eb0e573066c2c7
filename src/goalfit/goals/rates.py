"""Rate constructors: the field's standard rates as symbolic :class:`Rate` objects.

Every constructor takes ``group=`` to restrict the rate to a slice: ``None`` (all examples), a
value of a sensitive feature (``"Female"``), a dict ``{"sex": "Female", "race": "Black"}`` or a
pair ``("sex", "Female")``. ``dataset=`` restricts it to one dataset of a multi-dataset
problem (Goh et al. NIPS 2016 §2; see :mod:`goalfit.confusion.datasets`): ``"train"`` for the
data passed as ``X, y``, or a name given in ``datasets=``. ``label`` names a class; ``None`` means the positive class of a binary
problem (the larger label, as in scikit-learn) and is an error for multiclass problems.

Sources: Goh et al. (NIPS 2016) Table 2 (coverage, TP/FP/TN/FN rates, recall, churn);
Narasimhan et al. (JMLR 2024) Table 1 (coverage as a column sum, precision, recalls).
"""
from __future__ import annotations

from ..confusion.names import DATASET_COLUMN
from .expressions import Cond, Rate, _fmt_group, _freeze

__all__ = [
    "rate", "positive_prediction_rate", "selection_rate", "coverage", "true_positive_rate",
    "recall", "false_positive_rate", "true_negative_rate", "false_negative_rate", "precision",
    "error_rate", "accuracy", "churn_rate",
]


def _labels(label):
    if label is None:
        return None
    if isinstance(label, (list, tuple, set, frozenset)):
        return tuple(label)
    return (label,)


def _group(group, dataset=None):
    conds: tuple[Cond, ...] = () if group is None else (Cond("group", group=_freeze(group)),)
    if dataset is not None:
        conds += (Cond("group", group=_freeze({DATASET_COLUMN: str(dataset)})),)
    return conds


def _plain(v):
    return v.item() if hasattr(v, "item") and not isinstance(v, (str, bytes)) else v


def _name(fn: str, label=None, group=None, dataset=None, **extra) -> str:
    args = [] if label is None else [repr(_plain(label))]
    args += [f"{k}={v!r}" for k, v in extra.items() if v is not None]
    if group is not None:
        args.append(f"group={_fmt_group(_freeze(group))}")
    if dataset is not None:
        args.append(f"dataset={str(dataset)!r}")
    return f"{fn}({', '.join(args)})"


def rate(*, y=None, pred=None, given_y=None, given_pred=None, correct=None, group=None,
         dataset=None, name: str | None = None) -> Rate:
    """General rate ``P(event | given, group)``.

    Parameters
    ----------
    y, pred : label or list of labels, optional
        Event conditions on the true and predicted class.
    given_y, given_pred : label or list of labels, optional
        Conditions on the true / predicted class in the conditioning event. A condition on the
        prediction makes the rate a ratio of linear forms.
    correct : bool, optional
        Event "prediction is right" (True) or "wrong" (False).
    group : optional
        Slice (see module docstring).
    name : str, optional

    Returns
    -------
    Rate

    Examples
    --------
    >>> import goalfit as gf
    >>> gf.rate(pred=1, given_y=0, group="a") <= 0.1
    rate(pred=1, given_y=0, group='a') <= 0.1
    """
    event = []
    if y is not None:
        event.append(Cond("y", _labels(y)))
    if pred is not None:
        event.append(Cond("pred", _labels(pred)))
    if correct is not None:
        event.append(Cond("correct", negate=not correct))
    given = list(_group(group, dataset))
    if given_y is not None:
        given.append(Cond("y", _labels(given_y)))
    if given_pred is not None:
        given.append(Cond("pred", _labels(given_pred)))
    if name is None:
        parts = [f"{k}={_plain_labels(v)!r}" for k, v in
                 (("y", y), ("pred", pred), ("given_y", given_y), ("given_pred", given_pred),
                  ("correct", correct)) if v is not None]
        if group is not None:
            parts.append(f"group={_fmt_group(_freeze(group))}")
        if dataset is not None:
            parts.append(f"dataset={str(dataset)!r}")
        name = f"rate({', '.join(parts)})"
    return Rate(event, given, name)


def _plain_labels(v):
    if isinstance(v, (list, tuple, set, frozenset)):
        return [_plain(x) for x in v]
    return _plain(v)


def positive_prediction_rate(label=None, *, group=None, dataset=None) -> Rate:
    """``P(h(x) = label | group)``: selection rate / coverage of a class, in [0, 1].

    Linear in the confusion tensor (a column sum, Narasimhan et al. Ex. 6; Goh et al.'s
    coverage s_p(D)).

    Examples
    --------
    >>> import goalfit as gf
    >>> gf.positive_prediction_rate(group="a") <= 0.3
    positive_prediction_rate(group='a') <= 0.3
    >>> y_true, y_pred = [1, 1, 0, 0, 1, 0], [1, 0, 0, 1, 1, 0]
    >>> gf.positive_prediction_rate(y_true, y_pred)
    0.5
    """
    return Rate((Cond("pred", _labels(label)),), _group(group, dataset),
                _name("positive_prediction_rate", label, group, dataset))


def selection_rate(label=None, *, group=None, dataset=None) -> Rate:
    """Alias of :func:`positive_prediction_rate` (fairlearn's name).

    Examples
    --------
    >>> import goalfit as gf
    >>> gf.selection_rate(1, group="a")
    selection_rate(1, group='a')
    >>> y_true, y_pred = [1, 1, 0, 0, 1, 0], [1, 0, 0, 1, 1, 0]
    >>> gf.selection_rate(y_true, y_pred)
    0.5
    """
    r = positive_prediction_rate(label, group=group, dataset=dataset)
    r.name = _name("selection_rate", label, group, dataset)
    return r


def coverage(label=None, *, group=None, dataset=None) -> Rate:
    """Coverage of a class: ``P(h(x) = label | group)`` (Narasimhan et al. Ex. 6; Goh et al. Table 2).

    Examples
    --------
    >>> import goalfit as gf
    >>> gf.coverage(dataset="pool") <= 0.45
    coverage(dataset='pool') <= 0.45
    >>> y_true, y_pred = [1, 1, 0, 0, 1, 0], [1, 0, 0, 1, 1, 0]
    >>> gf.coverage(y_true, y_pred)
    0.5
    """
    r = positive_prediction_rate(label, group=group, dataset=dataset)
    r.name = _name("coverage", label, group, dataset)
    return r


def prior(label=None, *, group=None, dataset=None) -> Rate:
    """Class prior ``P(y = label | group)`` of the data a goal is bound to (a constant of the data).

    It does not depend on the classifier (Narasimhan et al. §2: pi is a property of the
    distribution), so goals can refer to it without computing it by hand: coverage equal to
    the class prior within ``eps`` is ``[coverage(k) <= prior(k) + eps, coverage(k) >= prior(k) -
    eps]`` (per group with ``group=``); :func:`~goalfit.goals.coverage_deviation` ``<= eps``
    bounds every class at once.

    Examples
    --------
    >>> import goalfit as gf
    >>> gf.coverage(1) <= gf.prior(1) + 0.02
    coverage(1) <= prior(1) + 0.02
    >>> y_true, y_pred = [1, 1, 0, 0, 1, 0], [1, 0, 0, 1, 1, 0]
    >>> gf.prior(y_true, y_pred)
    0.5
    """
    return Rate((Cond("y", _labels(label)),), _group(group, dataset), _name("prior", label, group, dataset))


def true_positive_rate(label=None, *, group=None, dataset=None) -> Rate:
    """``P(h(x) = label | y = label, group)``: recall / TPR of a class (linear).

    Examples
    --------
    >>> import goalfit as gf
    >>> gf.true_positive_rate(group="a") >= gf.true_positive_rate() - 0.05
    true_positive_rate(group='a') >= true_positive_rate() - 0.05
    >>> y_true, y_pred = [1, 1, 0, 0, 1, 0], [1, 0, 0, 1, 1, 0]
    >>> round(gf.true_positive_rate(y_true, y_pred), 4)
    0.6667
    """
    return Rate((Cond("pred", _labels(label)),), _group(group, dataset) + (Cond("y", _labels(label)),),
                _name("true_positive_rate", label, group, dataset))


def recall(label=None, *, group=None, dataset=None) -> Rate:
    """Alias of :func:`true_positive_rate`.

    Examples
    --------
    >>> import goalfit as gf
    >>> gf.recall(1) >= 0.8
    recall(1) >= 0.8
    >>> y_true, y_pred = [1, 1, 0, 0, 1, 0], [1, 0, 0, 1, 1, 0]
    >>> round(gf.recall(y_true, y_pred), 4)
    0.6667
    """
    r = true_positive_rate(label, group=group, dataset=dataset)
    r.name = _name("recall", label, group, dataset)
    return r


def false_negative_rate(label=None, *, group=None, dataset=None) -> Rate:
    """``P(h(x) != label | y = label, group)`` (linear).

    Examples
    --------
    >>> import goalfit as gf
    >>> gf.false_negative_rate(group="a") <= 0.2
    false_negative_rate(group='a') <= 0.2
    >>> y_true, y_pred = [1, 1, 0, 0, 1, 0], [1, 0, 0, 1, 1, 0]
    >>> round(gf.false_negative_rate(y_true, y_pred), 4)
    0.3333
    """
    return Rate((Cond("pred", _labels(label), negate=True),), _group(group, dataset) + (Cond("y", _labels(label)),),
                _name("false_negative_rate", label, group, dataset))


def false_positive_rate(label=None, *, group=None, dataset=None) -> Rate:
    """``P(h(x) = label | y != label, group)`` (linear).

    Examples
    --------
    >>> import goalfit as gf
    >>> gf.false_positive_rate(group="a") <= 0.1
    false_positive_rate(group='a') <= 0.1
    >>> y_true, y_pred = [1, 1, 0, 0, 1, 0], [1, 0, 0, 1, 1, 0]
    >>> round(gf.false_positive_rate(y_true, y_pred), 4)
    0.3333
    """
    return Rate((Cond("pred", _labels(label)),),
                _group(group, dataset) + (Cond("y", _labels(label), negate=True),),
                _name("false_positive_rate", label, group, dataset))


def true_negative_rate(label=None, *, group=None, dataset=None) -> Rate:
    """``P(h(x) != label | y != label, group)`` (linear).

    Examples
    --------
    >>> import goalfit as gf
    >>> gf.true_negative_rate() >= 0.9
    true_negative_rate() >= 0.9
    >>> y_true, y_pred = [1, 1, 0, 0, 1, 0], [1, 0, 0, 1, 1, 0]
    >>> round(gf.true_negative_rate(y_true, y_pred), 4)
    0.6667
    """
    return Rate((Cond("pred", _labels(label), negate=True),),
                _group(group, dataset) + (Cond("y", _labels(label), negate=True),),
                _name("true_negative_rate", label, group, dataset))


def precision(label=None, *, group=None, dataset=None) -> Rate:
    """``P(y = label | h(x) = label, group)``: a ratio of linear forms.

    As a constraint ``precision(k) >= tau`` it is multiplied out into the linear constraint
    ``C_kk - tau * sum_i C_ik >= 0`` (Narasimhan et al. Ex. 5, with the erratum: the paper's
    formula enforces precision >= 1 - tau; here the bound is the precision itself). With no
    prediction of the class the value is taken as 0 (scikit-learn's ``zero_division=0``).

    Examples
    --------
    >>> import goalfit as gf
    >>> gf.precision(1) >= 0.8
    precision(1) >= 0.8
    >>> y_true, y_pred = [1, 1, 0, 0, 1, 0], [1, 0, 0, 1, 1, 0]
    >>> round(gf.precision(y_true, y_pred), 4)
    0.6667
    """
    return Rate((Cond("y", _labels(label)),), _group(group, dataset) + (Cond("pred", _labels(label)),),
                _name("precision", label, group, dataset))


def error_rate(*, group=None, dataset=None) -> Rate:
    """``P(h(x) != y | group)``: 0-1 loss (linear).

    Examples
    --------
    >>> import goalfit as gf
    >>> gf.error_rate(dataset="train")
    error_rate(dataset='train')
    >>> y_true, y_pred = [1, 1, 0, 0, 1, 0], [1, 0, 0, 1, 1, 0]
    >>> round(gf.error_rate(y_true, y_pred), 4)
    0.3333
    """
    return Rate((Cond("correct", negate=True),), _group(group, dataset), _name("error_rate", None, group, dataset))


def accuracy(*, group=None, dataset=None) -> Rate:
    """``P(h(x) = y | group)`` (linear; higher is better).

    Examples
    --------
    >>> import goalfit as gf
    >>> gf.accuracy(group="a") >= 0.7
    accuracy(group='a') >= 0.7
    >>> y_true, y_pred = [1, 1, 0, 0, 1, 0], [1, 0, 0, 1, 1, 0]
    >>> round(gf.accuracy(y_true, y_pred), 4)
    0.6667
    """
    r = Rate((Cond("correct"),), _group(group, dataset), _name("accuracy", None, group, dataset))
    r.lower_is_better = False
    return r


def churn_rate(column: str = "baseline", *, group=None, dataset=None) -> Rate:
    """``P(h(x) != b(x) | group)``: disagreement with a deployed model's prediction ``b``.

    ``b`` is a slicing column (pass the deployed model's predicted labels as the column
    ``column`` of ``sensitive_features``), so churn is linear in the per-cell confusion tensor
    (Goh et al., NIPS 2016, Table 2 "#Changes", with the extraction erratum corrected: the
    count is s_n on baseline-positive plus s_p on baseline-negative examples; labels play no
    role).

    Examples
    --------
    >>> import goalfit as gf
    >>> gf.churn_rate() <= 0.05
    churn_rate(column='baseline') <= 0.05
    """
    return Rate((Cond("agree", column=column, negate=True),), _group(group, dataset),
                _name("churn_rate", None, group, dataset, column=column))


def per_group_rates(classes, column: str) -> dict:
    """The per-group rates a report shows: name -> ``make(group value)`` returning the rate goal.

    Binary problems: the selection rate, TPR and FPR of each value of ``column``; multiclass
    ones: each class's prediction rate.

    Parameters
    ----------
    classes : array-like of shape (n_classes,)
    column : str
        A sensitive-feature column.
    """
    if len(classes) == 2:
        return {"selection": lambda grp, c=column: positive_prediction_rate(group={c: grp}),
                "TPR": lambda grp, c=column: true_positive_rate(group={c: grp}),
                "FPR": lambda grp, c=column: false_positive_rate(group={c: grp})}
    return {f"pred={k}": (lambda grp, c=column, k=k: positive_prediction_rate(k, group={c: grp})) for k in classes}
