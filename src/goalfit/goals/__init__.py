"""The goal vocabulary: rates, named metrics, fairness disparities, constraints and problems.

Goals are symbolic: they name classes and groups, not data, and bind to a
:class:`goalfit.confusion.ConfusionSpace` when a method fits them. Example::

    from goalfit.goals import *
    problem = Problem("error", [
        demographic_parity_difference("sex") <= 0.01,
        true_positive_rate(group="Female") >= true_positive_rate() - 0.05,
        precision(1) >= 0.8,
    ])
"""
from .expressions import Constraint, Expression, LinearExpression, Rate
from .fairness import (
    GroupDisparity,
    average_odds_difference,
    demographic_parity_difference,
    demographic_parity_ratio,
    equal_opportunity_difference,
    equal_opportunity_ratio,
    equalized_odds_difference,
    equalized_odds_ratio,
    error_rate_difference,
    error_rate_ratio,
    false_positive_rate_difference,
    false_positive_rate_ratio,
    overall_misclassification_rate_difference,
)
from .metrics import (
    BalancedErrorRate, CostSensitiveLoss, CoverageDeviation, ErrorRate, FBetaLoss, GMeanLoss,
    HMeanLoss, KLQuantification, MacroF1Loss, MacroF1OverGroupsLoss, MicroF1Loss, MinMaxRecallLoss, QMeanLoss,
)
from .parse import parse_constraint, parse_objective
from .problem import FEASIBLE_TOL, OBJECTIVES, CompiledProblem, Problem, as_objective
from .rates import (
    accuracy, churn_rate, coverage, error_rate, false_negative_rate, false_positive_rate, per_group_rates,
    positive_prediction_rate, precision, prior, rate, recall, selection_rate, true_negative_rate,
    true_positive_rate,
)


def hmean():
    """H-mean of the per-class recalls; as a goal, its loss 1 - H-mean (see :class:`HMeanLoss`).

    ``Problem("hmean")`` minimizes 1 - H-mean; called on labels, ``goalfit.hmean(y_true,
    y_pred)`` returns the H-mean ``n / sum_k (1 / recall_k)`` (Narasimhan et al., Table 1).

    Examples
    --------
    >>> import goalfit as gf
    >>> round(gf.hmean([0, 0, 1, 1], [0, 1, 1, 1]), 4)  # recalls 0.5 and 1
    0.6667
    """
    return HMeanLoss()


def gmean():
    """G-mean of the per-class recalls; as a goal, its loss 1 - G-mean (see :class:`GMeanLoss`).

    ``Problem("gmean")`` minimizes 1 - G-mean; called on labels, ``goalfit.gmean(y_true,
    y_pred)`` returns the G-mean ``(prod_k recall_k)^(1/n)`` (imbalanced-learn's
    ``geometric_mean_score``; Narasimhan et al., Ex. 3).

    Examples
    --------
    >>> import goalfit as gf
    >>> round(gf.gmean([0, 0, 1, 1], [0, 1, 1, 1]), 4)  # recalls 0.5 and 1
    0.7071
    """
    return GMeanLoss()


def qmean():
    """Q-mean loss ``sqrt(mean_k (1 - recall_k)^2)``, a loss in both uses (see :class:`QMeanLoss`).

    ``Problem("qmean")`` minimizes it and ``goalfit.qmean(y_true, y_pred)`` returns it
    (Narasimhan et al., Table 1).

    Examples
    --------
    >>> import goalfit as gf
    >>> gf.Problem("qmean", [gf.coverage(1) <= 0.3]).objective
    qmean
    >>> y_true, y_pred = [0, 0, 1, 1, 2, 2], [0, 1, 1, 1, 2, 0]
    >>> round(gf.qmean(y_true, y_pred), 4)
    0.4082
    """
    return QMeanLoss()


def minmax_recall():
    """Worst-class recall; as a goal, the min-max loss 1 - min recall (see :class:`MinMaxRecallLoss`).

    ``Problem("minmax_recall")`` minimizes ``max_k (1 - recall_k)`` (Narasimhan et al.'s min-max
    loss); called on labels, ``goalfit.minmax_recall(y_true, y_pred)`` returns
    ``min_k recall_k``.

    Examples
    --------
    >>> import goalfit as gf
    >>> y_true, y_pred = [0, 0, 1, 1, 2, 2], [0, 1, 1, 1, 2, 0]
    >>> gf.minmax_recall(y_true, y_pred)
    0.5
    """
    return MinMaxRecallLoss()


def balanced_error():
    """Balanced error ``1 - mean_k recall_k``, a loss in both uses (see :class:`BalancedErrorRate`).

    Called on labels it is ``1 - sklearn.metrics.balanced_accuracy_score(y_true, y_pred)``.

    Examples
    --------
    >>> import goalfit as gf
    >>> y_true, y_pred = [0, 0, 1, 1, 2, 2], [0, 1, 1, 1, 2, 0]
    >>> round(gf.balanced_error(y_true, y_pred), 4)
    0.3333
    """
    return BalancedErrorRate()


def fbeta(beta=1.0, label=None, *, group=None):
    """F-beta of a class; as a goal, its loss 1 - F-beta (see :class:`FBetaLoss`).

    Called on labels, ``goalfit.fbeta(y_true, y_pred, beta)`` returns scikit-learn's
    ``fbeta_score(y_true, y_pred, beta=beta)``.

    Examples
    --------
    >>> import goalfit as gf
    >>> gf.fbeta(2.0) >= 0.6
    F-beta(beta=2, label=None) >= 0.6
    >>> y_true, y_pred = [1, 1, 0, 0, 1, 0], [1, 0, 0, 1, 1, 0]
    >>> round(gf.fbeta(y_true, y_pred, 2.0), 4)
    0.6667
    """
    return FBetaLoss(beta, label, group=group)


def f1(label=None, *, group=None):
    """F1 of a class; as a goal, its loss 1 - F1 (see :class:`FBetaLoss`).

    ``Problem("f1")`` minimizes 1 - F1 and ``f1() >= 0.7`` asks F1 >= 0.7 (enforced as
    1 - F1 <= 0.3; :func:`goalfit.goals.metrics.compare`); called on labels,
    ``goalfit.f1(y_true, y_pred)`` returns F1, equal to ``sklearn.metrics.f1_score``.

    Examples
    --------
    >>> import goalfit as gf
    >>> gf.f1([0, 1, 1, 1], [0, 1, 1, 0])  # precision 1, recall 2/3
    0.8
    """
    return FBetaLoss(1.0, label, group=group)


def micro_f1(default_class=None):
    """Micro-F1 without a default class; as a goal, its loss 1 - micro-F1 (see :class:`MicroF1Loss`).

    Called on labels it is ``f1_score(y_true, y_pred, labels=[every class but the default],
    average="micro")``.

    Examples
    --------
    >>> import goalfit as gf
    >>> y_true, y_pred = [0, 0, 1, 1, 2, 2], [0, 1, 1, 1, 2, 0]
    >>> round(gf.micro_f1(y_true, y_pred, 0), 4)
    0.75
    """
    return MicroF1Loss(default_class)


def macro_f1():
    """Macro-F1; as a goal, its loss 1 - macro-F1 (see :class:`MacroF1Loss`).

    Called on labels it is ``f1_score(y_true, y_pred, average="macro")``.

    Examples
    --------
    >>> import goalfit as gf
    >>> y_true, y_pred = [0, 0, 1, 1, 2, 2], [0, 1, 1, 1, 2, 0]
    >>> round(gf.macro_f1(y_true, y_pred), 4)
    0.6556
    """
    return MacroF1Loss()


def macro_f1_over_groups(column=None, label=None):
    """F1 averaged over the groups of a column; as a goal, 1 minus it (see :class:`MacroF1OverGroupsLoss`).

    Called on labels (with ``sensitive_features``) it returns the average of the groups' F1.

    Examples
    --------
    >>> import goalfit as gf
    >>> gf.macro_f1_over_groups("sex")
    macro_f1_over_groups(column='sex')
    >>> y_true, y_pred = [1, 1, 0, 0, 1, 0], [1, 0, 0, 1, 1, 0]
    >>> round(gf.macro_f1_over_groups(y_true, y_pred, sensitive_features=["a", "a", "a", "b", "b", "b"]), 4)
    0.6667
    """
    return MacroF1OverGroupsLoss(column, label)


def kl_quantification():
    """KL quantification loss, a loss in both uses (see :class:`KLQuantification`).

    Examples
    --------
    >>> import goalfit as gf
    >>> y_true, y_pred = [0, 0, 1, 1, 2, 2], [0, 1, 1, 1, 2, 0]
    >>> round(gf.kl_quantification(y_true, y_pred), 4)
    0.0959
    """
    return KLQuantification()


def coverage_deviation(target=None, *, group=None):
    """Max-abs coverage deviation (see :class:`CoverageDeviation`).

    Examples
    --------
    >>> import goalfit as gf
    >>> gf.coverage_deviation() <= 0.05
    coverage_deviation <= 0.05
    """
    return CoverageDeviation(target, group=group)


def cost_sensitive_loss(cost_matrix):
    """Linear cost-sensitive loss (see :class:`CostSensitiveLoss`).

    Examples
    --------
    >>> import goalfit as gf
    >>> gf.Problem(gf.cost_sensitive_loss([[0, 1], [5, 0]])).objective
    cost_sensitive_loss
    >>> y_true, y_pred = [1, 1, 0, 0, 1, 0], [1, 0, 0, 1, 1, 0]
    >>> round(gf.cost_sensitive_loss(y_true, y_pred, [[0, 1], [5, 0]]), 4)
    1.0
    """
    return CostSensitiveLoss(cost_matrix)


def error():
    """0-1 loss, in both uses: called on labels, ``1 - accuracy_score`` (see :class:`ErrorRate`).

    Examples
    --------
    >>> import goalfit as gf
    >>> y_true, y_pred = [1, 1, 0, 0, 1, 0], [1, 0, 0, 1, 1, 0]
    >>> round(gf.error(y_true, y_pred), 4)
    0.3333
    """
    return ErrorRate()


from ..utils.lazy import lazy_attributes as _lazy_attributes

#: Loaded on first use: name -> module of this package (black-box metrics read data through
#: goalfit.confusion; per-example weights are for the in-training methods).
LAZY = {name: "blackbox" for name in ("BlackBoxMetric", "ConfusionMetric", "as_blackbox_metric", "error_loss",
                                      "gmean_loss", "goal_metric", "macro_f1_over_groups_loss", "prbep_loss",
                                      "precision_at_k_loss")}
LAZY.update(RateProgram="program", compile_rate_program="program", check_label_free="program")


__getattr__ = _lazy_attributes(__name__, LAZY)


#: The goal builders: functions returning a goal expression from names of classes, groups and
#: datasets (``goalfit.metrics.goal_or_value`` makes each also compute its value on labels).
BUILDERS = [
    "accuracy", "churn_rate", "coverage", "error_rate", "false_negative_rate", "false_positive_rate",
    "positive_prediction_rate", "precision", "prior", "rate", "recall", "selection_rate", "true_negative_rate",
    "true_positive_rate",
    "average_odds_difference", "demographic_parity_difference", "demographic_parity_ratio",
    "equal_opportunity_difference", "equal_opportunity_ratio", "equalized_odds_difference", "equalized_odds_ratio",
    "error_rate_difference", "error_rate_ratio", "false_positive_rate_difference", "false_positive_rate_ratio",
    "overall_misclassification_rate_difference",
    "balanced_error", "cost_sensitive_loss", "coverage_deviation", "error", "f1", "fbeta", "gmean", "hmean",
    "kl_quantification", "macro_f1", "macro_f1_over_groups", "micro_f1", "minmax_recall", "qmean",
]

__all__ = BUILDERS + [
    "Constraint", "Expression", "LinearExpression", "Rate", "GroupDisparity", "Problem", "CompiledProblem",
    "FEASIBLE_TOL", "OBJECTIVES", "as_objective", "parse_constraint", "parse_objective",
    "BalancedErrorRate", "CostSensitiveLoss", "CoverageDeviation", "ErrorRate", "FBetaLoss", "GMeanLoss",
    "HMeanLoss", "KLQuantification", "MacroF1Loss", "MacroF1OverGroupsLoss", "MicroF1Loss", "MinMaxRecallLoss",
    "QMeanLoss",
    "BlackBoxMetric", "ConfusionMetric", "as_blackbox_metric", "error_loss", "gmean_loss", "goal_metric",
    "macro_f1_over_groups_loss", "prbep_loss", "precision_at_k_loss",
]
