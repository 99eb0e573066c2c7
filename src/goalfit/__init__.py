"""goalfit: train classifiers that meet real-world goals.

Goals (fairness, coverage, churn, recall/precision, complex metrics) are stated once in the
vocabulary of :mod:`goalfit.goals` and handed to an estimator; every estimator runs the one
pipeline of :mod:`goalfit.fit` (prepare, compile, a method of :mod:`goalfit.methods`, one result
protocol) and the result is a (randomized) classifier with a report.

The goal vocabulary is imported with the package; the estimators, metrics and the trade-off
sweep load on first use (``import goalfit`` stays fast).
"""
from __future__ import annotations

from . import goals as _goals
from .metrics import BUILDERS as _BUILDERS
from .utils.lazy import lazy_attributes as _lazy_attributes

_goals_all = _goals.__all__
globals().update({name: getattr(_goals, name) for name in _goals_all if name not in _goals.LAZY})
globals().update(_BUILDERS)  # each goal builder also computes its metric on (y_true, y_pred): the score its name says

__version__ = "0.2.0"

#: Public names loaded on first use: name -> module.
_LAZY = {
    "GoalClassifier": "goalfit.estimators", "RampClassifier": "goalfit.estimators",
    "FairSubdataClassifier": "goalfit.estimators", "SpectralFairSVC": "goalfit.estimators",
    "AdaptiveSurrogateClassifier": "goalfit.estimators", "BlackBoxPostShiftClassifier": "goalfit.estimators",
    "RelaxedFMClassifier": "goalfit.estimators", "make_estimator": "goalfit.estimators",
    "select_method_params": "goalfit.estimators", "select_ramp_params": "goalfit.estimators",
    "goal_scorer": "goalfit.metrics", "score": "goalfit.metrics", "plan_certification": "goalfit.metrics",
    "frontier": "goalfit.tradeoff", "Frontier": "goalfit.tradeoff",
    "build_report": "goalfit.report", "Dataset": "goalfit.confusion.datasets",
    **{name: "goalfit.goals" for name in _goals.LAZY if name in _goals.__all__},
}
_SUBPACKAGES = {"metrics", "estimators", "methods", "fit", "report", "tradeoff", "datasets", "confusion",
                "classifiers", "distributed", "utils", "cli"}

__all__ = list(dict.fromkeys([*_goals_all, *sorted(_LAZY), "__version__"]))  # each name once


__getattr__ = _lazy_attributes(__name__, _LAZY, _SUBPACKAGES)  # PEP 562: the heavy parts load on first use


def __dir__():
    return sorted(set(globals()) | set(_LAZY) | _SUBPACKAGES)
