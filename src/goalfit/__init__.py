"""goalfit: train classifiers that meet real-world goals.

Goals (fairness, coverage, churn, recall/precision, complex metrics) are stated once in the
vocabulary of :mod:`goalfit.goals` and handed to a method; the result is a (randomized)
classifier with a report.
"""
from .goals import *  # noqa: F401,F403
from .goals import __all__ as _goals_all

from . import metrics  # noqa: F401  (goalfit.metrics: evaluate goals on predictions)
from .metrics import goal_scorer
from .tradeoff import Frontier, frontier
from .estimators import (AdaptiveSurrogateClassifier, BlackBoxPostShiftClassifier, FairSubdataClassifier,
                         GoalClassifier, RampClassifier, RelaxedFMClassifier, SpectralFairSVC)

__version__ = "0.1.0"

__all__ = list(_goals_all) + ["GoalClassifier", "RampClassifier", "FairSubdataClassifier", "SpectralFairSVC",
                              "AdaptiveSurrogateClassifier", "BlackBoxPostShiftClassifier",
                              "RelaxedFMClassifier", "goal_scorer", "frontier", "Frontier", "__version__"]
