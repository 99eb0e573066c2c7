"""Black-box metrics with adaptive surrogates (Jiang et al., ICML 2020).

* :mod:`.surrogates` -- rate surrogates per (label, group) slice, vectorized over (m, n) scores;
* :mod:`.models` -- linear (numpy) and PyTorch score functions with flat parameters;
* :mod:`.gradients` -- estimates of grad psi: Alg. 2, Alg. 3, the §5.3 two-point estimator;
* :mod:`.projection` -- the over-constrained projection (4) (scipy L-BFGS-B, torch Adagrad/L-BFGS);
* :mod:`.spgd` -- Algorithm 1 with restarts and best-on-validation selection;
* :mod:`.problem` -- the data of one problem (model, surrogates, validation metric);
* :mod:`.baselines` -- post-shift on a black-box metric and Relaxed-FM.
"""
from .gradients import FiniteDifference, GradientEstimate, LinearInterpolation, SmoothedTwoPoint
from .models import LinearScorer, TorchScorer
from .problem import BlackBoxProblem
from .projection import Projector, ProjectionResult
from .spgd import SPGDPath, SPGDResult, surrogate_pgd
from .surrogates import QuantilePrecisionSurrogate, SliceSurrogate, SurrogateSet, make_rate_surrogates

__all__ = [
    "FiniteDifference", "GradientEstimate", "LinearInterpolation", "SmoothedTwoPoint", "LinearScorer",
    "TorchScorer", "BlackBoxProblem", "Projector", "ProjectionResult", "SPGDPath", "SPGDResult",
    "surrogate_pgd", "QuantilePrecisionSurrogate", "SliceSurrogate", "SurrogateSet", "make_rate_surrogates",
]
