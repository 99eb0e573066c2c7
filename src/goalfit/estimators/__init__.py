"""scikit-learn estimators."""
from .goal_classifier import GoalClassifier

__all__ = ["GoalClassifier"]
