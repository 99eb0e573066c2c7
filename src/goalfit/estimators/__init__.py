"""scikit-learn estimators and their model selection."""
from .fair_subdata import FairSubdataClassifier, SpectralFairSVC
from .goal_classifier import GoalClassifier
from .ramp_classifier import RampClassifier
from .selection import default_grid, select_method_params, select_ramp_params
from .surrogate_classifier import AdaptiveSurrogateClassifier, BlackBoxPostShiftClassifier, RelaxedFMClassifier

__all__ = ["GoalClassifier", "RampClassifier", "FairSubdataClassifier", "SpectralFairSVC",
           "AdaptiveSurrogateClassifier", "BlackBoxPostShiftClassifier", "RelaxedFMClassifier", "default_grid",
           "select_method_params", "select_ramp_params"]
