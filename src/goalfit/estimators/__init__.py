"""scikit-learn estimators and their model selection."""
from .goal_classifier import GoalClassifier
from .ramp_classifier import RampClassifier
from .selection import default_grid, select_method_params

__all__ = ["GoalClassifier", "RampClassifier", "default_grid", "select_method_params"]
