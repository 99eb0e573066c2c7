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
    """H-mean loss (see :class:`HMeanLoss`)."""
    return HMeanLoss()


def gmean():
    """G-mean loss (see :class:`GMeanLoss`)."""
    return GMeanLoss()


def qmean():
    """Q-mean loss (see :class:`QMeanLoss`)."""
    return QMeanLoss()


def minmax_recall():
    """Min-max recall loss (see :class:`MinMaxRecallLoss`)."""
    return MinMaxRecallLoss()


def balanced_error():
    """Balanced error (see :class:`BalancedErrorRate`)."""
    return BalancedErrorRate()


def fbeta(beta=1.0, label=None, *, group=None):
    """F-beta loss of a class (see :class:`FBetaLoss`)."""
    return FBetaLoss(beta, label, group=group)


def f1(label=None, *, group=None):
    """F1 loss of a class (see :class:`FBetaLoss`)."""
    return FBetaLoss(1.0, label, group=group)


def micro_f1(default_class=None):
    """Micro-F1 loss (see :class:`MicroF1Loss`)."""
    return MicroF1Loss(default_class)


def macro_f1():
    """Macro-F1 loss (see :class:`MacroF1Loss`)."""
    return MacroF1Loss()


def macro_f1_over_groups(column=None, label=None):
    """Macro F1 over the groups of a column, as a loss (see :class:`MacroF1OverGroupsLoss`)."""
    return MacroF1OverGroupsLoss(column, label)


def kl_quantification():
    """KL quantification (see :class:`KLQuantification`)."""
    return KLQuantification()


def coverage_deviation(target=None, *, group=None):
    """Max-abs coverage deviation (see :class:`CoverageDeviation`)."""
    return CoverageDeviation(target, group=group)


def cost_sensitive_loss(cost_matrix):
    """Linear cost-sensitive loss (see :class:`CostSensitiveLoss`)."""
    return CostSensitiveLoss(cost_matrix)


def error():
    """0-1 loss (see :class:`ErrorRate`)."""
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
