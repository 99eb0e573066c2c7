"""The scikit-learn estimators (thin fronts over :mod:`goalfit.fit`), built-in base models and model selection."""
from .fair_subdata import FairSubdataClassifier, SpectralFairSVC
from .goal_classifier import GoalClassifier
from .models import TableEncoder, make_estimator
from .probabilities import FoldAverage
from .ramp_classifier import RampClassifier
from .selection import default_grid, select_method_params, select_ramp_params
from .surrogate_classifier import AdaptiveSurrogateClassifier, BlackBoxPostShiftClassifier, RelaxedFMClassifier

__all__ = ["GoalClassifier", "RampClassifier", "FairSubdataClassifier", "SpectralFairSVC",
           "AdaptiveSurrogateClassifier", "BlackBoxPostShiftClassifier", "RelaxedFMClassifier", "FoldAverage",
           "TableEncoder", "default_grid", "make_estimator", "select_method_params", "select_ramp_params"]
