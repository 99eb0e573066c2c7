"""The scikit-learn estimators (thin fronts over :mod:`goalfit.fit`), built-in base models and model selection.

Each name loads its module on first use, so that ``gf.GoalClassifier`` does not import the other
families (subdata selection, the ramp, surrogates) and their solvers.
"""
from ..utils.lazy import lazy_attributes

_WHERE = {
    "GoalClassifier": "goal_classifier",
    "RampClassifier": "ramp_classifier",
    "FairSubdataClassifier": "fair_subdata",
    "SpectralFairSVC": "fair_subdata",
    "AdaptiveSurrogateClassifier": "surrogate_classifier",
    "BlackBoxPostShiftClassifier": "surrogate_classifier",
    "RelaxedFMClassifier": "surrogate_classifier",
    "FoldAverage": "probabilities",
    "TableEncoder": "models",
    "make_estimator": "models",
    "default_grid": "selection",
    "select_method_params": "selection",
    "select_ramp_params": "selection",
}

__all__ = [
    "AdaptiveSurrogateClassifier",
    "BlackBoxPostShiftClassifier",
    "FairSubdataClassifier",
    "FoldAverage",
    "GoalClassifier",
    "RampClassifier",
    "RelaxedFMClassifier",
    "SpectralFairSVC",
    "TableEncoder",
    "default_grid",
    "make_estimator",
    "select_method_params",
    "select_ramp_params",
]

__getattr__ = lazy_attributes(__name__, _WHERE)


def __dir__():
    return sorted(set(globals()) | set(__all__))
