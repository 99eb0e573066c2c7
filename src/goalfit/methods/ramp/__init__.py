"""Dataset constraints with the ramp loss (Goh et al., NIPS 2016).

* :mod:`goalfit.goals.program`: goals as non-negative per-example weights (Problem 1);
* :mod:`.rates`: the ramp (Eq. 2), its hinge/constant upper bounds (Eq. 4-5), the best
  deterministic threshold;
* :mod:`.svm`: the inner weighted SVM (Lagrangian of Problem 3 for fixed multipliers);
* :mod:`.dcd`: its warm-started dual coordinate descent solver (numba);
* :mod:`.cutting_plane`: Alg. 2 over the multipliers (Kelley / Chebyshev / 1-D bisection cut
  choosers on HiGHS, shallow cuts, primal recovery);
* :mod:`.mm`: Alg. 1 (majorization-minimization) with a feasibility phase.
"""
from .cutting_plane import CHOOSERS, LagrangianResult, Majorizer, recover_primal, solve_problem3
from .mm import RampResult, majorization_minimization, ramp_values, solve_problem3_cvxpy
from ...goals.program import RateProgram, compile_rate_program
from .rates import best_threshold, ramp, ramp_upper_bounds
from .svm import INNER_SOLVERS, SVMSolution, hinge_training_set, solve_weighted_svm

__all__ = [
    "CHOOSERS", "INNER_SOLVERS", "LagrangianResult", "Majorizer", "RampResult", "RateProgram",
    "SVMSolution", "best_threshold", "compile_rate_program", "hinge_training_set", "majorization_minimization", "ramp",
    "ramp_upper_bounds", "ramp_values", "recover_primal", "solve_problem3", "solve_problem3_cvxpy",
    "solve_weighted_svm",
]
