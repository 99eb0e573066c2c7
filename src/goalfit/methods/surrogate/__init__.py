"""Black-box goals with adaptive surrogates (Jiang et al., ICML 2020).

* :mod:`.method` -- :class:`SurrogateMethod`, the family's methods on the compiled problem
  (``"interpolation"``, ``"finite_difference"``, ``"two_point"``);
* :mod:`.slices` -- the surrogates' slices from the compiled goals' linear features;
* :mod:`.surrogates` -- rate surrogates per (label, group) slice, vectorized over (m, n) scores;
* :mod:`.models` -- linear (numpy) and PyTorch score functions with flat parameters;
* :mod:`.gradients` -- estimates of grad psi (and of the constraint rows' gradients): Alg. 2,
  Alg. 3, the §5.3 two-point estimator;
* :mod:`.projection` -- the over-constrained projection (4) (scipy L-BFGS-B, torch Adagrad/L-BFGS);
* :mod:`.spgd` -- Algorithm 1 with multipliers for constraints, restarts and feasible-first selection;
* :mod:`.problem` -- the goals on a sample from scores, and the data of one problem;
* :mod:`.baselines` -- post-shift (one threshold, feasible first) and Relaxed-FM.
"""
from .gradients import FiniteDifference, GradientEstimate, LinearInterpolation, SmoothedTwoPoint
from .method import SURROGATE_PARAMS, SurrogateMethod
from .models import LinearScorer, ModuleScorer, TorchScorer
from .problem import Assessment, BlackBoxProblem, SampleGoals
from .projection import Projector, ProjectionResult
from .slices import build_surrogates, error_mass_weights, goal_slices
from .spgd import SPGDPath, SPGDResult, surrogate_pgd
from .surrogates import QuantilePrecisionSurrogate, SliceSurrogate, SurrogateSet, make_rate_surrogates

__all__ = [
    "FiniteDifference", "GradientEstimate", "LinearInterpolation", "SmoothedTwoPoint", "SURROGATE_PARAMS",
    "SurrogateMethod", "LinearScorer", "ModuleScorer", "TorchScorer", "Assessment", "BlackBoxProblem",
    "SampleGoals", "Projector", "ProjectionResult", "build_surrogates", "error_mass_weights", "goal_slices",
    "SPGDPath", "SPGDResult", "surrogate_pgd", "QuantilePrecisionSurrogate", "SliceSurrogate", "SurrogateSet",
    "make_rate_surrogates",
]
