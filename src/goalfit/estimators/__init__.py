"""scikit-learn estimators and their model selection."""
from .goal_classifier import GoalClassifier
from .selection import default_grid, select_method_params
from .surrogate_classifier import AdaptiveSurrogateClassifier, BlackBoxPostShiftClassifier, RelaxedFMClassifier

__all__ = ["GoalClassifier", "default_grid", "select_method_params"]
__all__ += ["AdaptiveSurrogateClassifier", "BlackBoxPostShiftClassifier", "RelaxedFMClassifier"]
