"""Feasibility repair: the constant classifiers join a pool that meets no constraint set.

A method that ends with no feasible mixture of its members may still be wrong about the
goals: its members come from oracle calls at the costs its path visited, and an inexact oracle
(the plug-in oracle minimizes the cost *expected* under probability estimates, not the
sample's; the group-blind oracle reads estimated joint probabilities while the confusion
tensors use the true groups) can miss every feasible rule on the way. The constant
classifiers ("predict class ``j`` everywhere") are rules every plug-in oracle returns for the
cost ``L[:, :, j] = -1`` (zero elsewhere), and they meet every parity goal (demographic
parity, equal opportunity, equalized odds: each group's rate is 0 or 1). So before reporting
infeasibility, :func:`repair_infeasible` evaluates them, solves the mixture program over the
enlarged pool, and, when that meets the constraints, continues with fully-corrective column
generation from it (:func:`~goalfit.methods.plugin.coarse_to_fine.corrective_polish`) so the
answer is optimized, not just feasible. Not in Narasimhan et al. (their Assumption 1 takes a
strictly feasible classifier as given); an addition against silent infeasibility reports.
"""
from __future__ import annotations

import numpy as np

from .coarse_to_fine import corrective_polish
from .group_blind import GroupBlindOracle
from .mixture import mixture_program
from .oracle import PluginOracle


def constant_costs(space) -> list[np.ndarray]:
    """One cost tensor per class ``j``, shape ``space.shape``: ``-1`` on column ``j``, else 0.

    Every plug-in rule for it predicts ``j`` on every example (the expected cost of ``j`` is
    ``-1``, of any other class ``0``).
    """
    out = []
    for j in range(space.n_classes):
        L = np.zeros(space.shape)
        L[:, :, j] = -1.0
        out.append(L)
    return out


def applies(problem, oracle, result) -> bool:
    """Whether the repair runs: an infeasible result of a plug-in-type oracle (plug-in,
    threshold or group-blind; not the refit oracle, whose members are refitted models) under
    polyhedral constraints."""
    return (not result.feasible and problem.A is not None and not problem.nonlinear
            and isinstance(oracle, (PluginOracle, GroupBlindOracle)))


def repair_infeasible(problem, oracle, result, *, tol: float = 1e-4):
    """The result, or a feasible one found with the constant classifiers (module docstring).

    Parameters
    ----------
    problem : CompiledProblem
        Polyhedral constraints (see :func:`applies`).
    oracle : PluginOracle, ThresholdOracle or GroupBlindOracle
        The oracle the method ran on; ``n_classes`` calls for the constants, and the polish's.
    result : FitResult
        A method's result with ``feasible=False``.
    tol : float, default 1e-4
        The polish's stopping gap (objective units).

    Returns
    -------
    FitResult
        ``result`` itself when the repair does not apply or the enlarged pool still meets no
        constraint set (the least violation is then the method's own or the pool's, whichever
        is smaller); otherwise ``result`` with the new members, weights and confusions,
        ``feasible=True`` and the repair appended to ``message``.
    """
    if not applies(problem, oracle, result):
        return result
    calls0 = oracle.n_calls
    evaluated = [oracle(L) for L in constant_costs(problem.space)]
    members = list(result.members) + [m for m, _ in evaluated]
    Cs = np.concatenate([np.asarray(result.confusions), np.array([C for _, C in evaluated])])
    pm, pC, pw, feasible, viol = mixture_program(problem, members, Cs)
    if not feasible:
        if viol < float(problem.max_violation(result.confusion)) - 1e-12:
            result.members, result.weights, result.confusions = pm, pw, pC
            result.message += f"; with the constant classifiers the least violation is {viol:.3g}"
        result.n_oracle_calls += oracle.n_calls - calls0
        return result
    why = "mixture program"
    if problem.objective.kind in ("linear", "convex") and hasattr(problem.objective, "gradient"):
        pm, pC, pw, feasible, why = corrective_polish(problem, oracle, pm, pC, tol=tol)
    result.members, result.weights, result.confusions, result.feasible = pm, pw, pC, bool(feasible)
    result.n_oracle_calls += oracle.n_calls - calls0
    result.message += (f"; repaired: with the constant classifiers added to its members, fully-corrective "
                       f"column generation found a feasible mixture ({why})")
    return result
