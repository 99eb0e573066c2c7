"""scikit-learn estimators and their model selection."""
from .fair_subdata import FairSubdataClassifier, SpectralFairSVC
from .goal_classifier import GoalClassifier
from .selection import default_grid, select_method_params

__all__ = ["GoalClassifier", "default_grid", "select_method_params", "FairSubdataClassifier",
           "SpectralFairSVC"]
