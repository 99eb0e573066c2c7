"""Choosing among the snapshots: the shrinking LP and the rank-based best iterate.

* :func:`shrink` — Cotter, Jiang & Sridharan (ALT 2019), §2.3 and Lemma 2 / Thm. 2: the linear
  program ``min_{p in simplex} sum_t p_t psi(C_t)`` s.t. ``sum_t p_t g_k(C_t) <= 0`` over the
  snapshots' exact rates has a basic optimal solution with at most ``m + 1`` non-zeros (``m``
  constraint rows plus the simplex equality). It is the core's final-mixture LP
  (:func:`goalfit.methods.plugin.prune`, HiGHS), which also returns the least-violating mixture
  when no mixture of the snapshots is feasible.
* :func:`best_iterate` — TFCO's ``find_best_candidate_index`` (Cotter et al., ALT 2019, §5.1 and
  the TFCO implementation): rank the snapshots by each constraint's violation ``max(0, g_k)``
  and by the objective, take for each snapshot the worst (largest) of its ranks, and return the
  snapshot with the smallest worst rank, ties broken by the lower objective (the later snapshot
  on equal objectives).
"""
from __future__ import annotations

import numpy as np
from scipy.stats import rankdata

from ..methods.plugin import prune


def shrink(problem, confusions):
    """Weights of the shrunk stochastic classifier over snapshots.

    Parameters
    ----------
    problem : CompiledProblem
        The core's compiled goals on the sample the confusion tensors come from.
    confusions : ndarray of shape (T, n_cells, n, n)
        Exact confusion tensors of the snapshots.

    Returns
    -------
    index : ndarray of int
        Snapshots in the support (at most ``K + 1`` of them, ``K`` the constraint rows).
    weights : ndarray of float, summing to 1
    feasible : bool
        Whether the mixture meets every row on these confusion tensors.
    max_violation : float
        Largest row violation of the mixture (0 when feasible).
    """
    confusions = np.asarray(confusions, dtype=float)
    members, _, weights, feasible, viol = prune(problem, list(range(len(confusions))), confusions)
    return np.asarray(members, dtype=np.intp), np.asarray(weights, float), bool(feasible), float(max(viol, 0.0))


def best_iterate(problem, confusions) -> int:
    """Index of TFCO's rank-based best deterministic snapshot (see the module docstring).

    Parameters
    ----------
    problem : CompiledProblem
    confusions : ndarray of shape (T, n_cells, n, n)

    Returns
    -------
    int
    """
    confusions = np.asarray(confusions, dtype=float)
    objective = np.array([problem.objective.value(C) for C in confusions])
    G = np.maximum(np.array([problem.row_violations(C) for C in confusions]).reshape(len(confusions), -1), 0.0)
    worst = rankdata(objective, method="min")
    for k in range(G.shape[1]):
        worst = np.maximum(worst, rankdata(G[:, k], method="min"))
    best, best_rank, best_obj = 0, np.inf, np.inf
    for t in range(len(confusions)):
        if worst[t] < best_rank or (worst[t] == best_rank and objective[t] <= best_obj):
            best, best_rank, best_obj = t, worst[t], objective[t]
    return int(best)
