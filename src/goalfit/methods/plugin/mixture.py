"""The final-mixture convex program (Narasimhan et al., Alg. 3 line 14 / Alg. 7 line 16).

``min_{alpha in simplex} psi(sum_t alpha_t C_t)`` s.t. ``phi(sum_t alpha_t C_t) <= 0``: no data
is needed, only the members' confusion tensors. Solved with SLSQP (scipy) from the LP-pruned
weights of §8.2; linear and piecewise-linear objectives (min-max recall) are solved exactly by
the pruning LP, which is returned as is. Falls back to the pruned weights when SLSQP fails or
does not improve, so the result is never worse than pruning.
"""
from __future__ import annotations

import numpy as np
from scipy.optimize import minimize

from ._common import _support, prune, unique_members

MAX_MEMBERS = 400


def mixture_program(problem, members, confusions, weights=None, *, max_members: int = MAX_MEMBERS):
    """Best mixture of the given members for the true objective, subject to the constraints.

    Parameters
    ----------
    problem : CompiledProblem
    members : list
    confusions : ndarray of shape (T, n_cells, n, n)
    weights : ndarray of shape (T,), optional
        Input mixture (kept by pruning when it is better).
    max_members : int, default 400
        Above this many distinct members only the LP is solved.

    Returns
    -------
    members, confusions, weights, feasible (bool), max_row_violation (float)
        As :func:`~goalfit.methods.plugin._common.prune`.
    """
    mu, Cu, wu = unique_members(members, np.asarray(confusions), weights)
    pruned = prune(problem, mu, Cu, wu)
    if problem.objective.kind == "linear" or hasattr(problem.objective, "coefs") or len(mu) > max_members:
        return pruned
    pm, pC, pw, feasible, viol = pruned
    T = len(mu)
    index = {id(m): t for t, m in enumerate(mu)}
    x0 = np.zeros(T)
    for m, w in zip(pm, pw):
        x0[index[id(m)]] = w
    flat = Cu.reshape(T, -1)
    limit = 0.0 if feasible else viol
    cons = [{"type": "eq", "fun": lambda a: a.sum() - 1.0, "jac": lambda a: np.ones(T)}]
    if problem.A is not None:
        G = flat @ problem.A.T - problem.b  # (T, K)
        cons.append({"type": "ineq", "fun": lambda a: limit - a @ G, "jac": lambda a: -G.T})
    for cc in problem.nonlinear:
        cons.append({
            "type": "ineq",
            "fun": lambda a, cc=cc: limit - (cc.function.value(np.tensordot(a, Cu, axes=1)) - cc.bound),
            "jac": lambda a, cc=cc: -(flat @ cc.function.gradient(np.tensordot(a, Cu, axes=1)).ravel()),
        })

    def fun(a):
        C = np.tensordot(a, Cu, axes=1)
        return problem.objective.value(C), flat @ problem.objective.gradient(C).ravel()

    res = minimize(fun, x0, jac=True, method="SLSQP", bounds=[(0.0, 1.0)] * T, constraints=cons,
                   options={"maxiter": 300, "ftol": 1e-12})
    if not res.success:
        return pruned
    a = np.clip(res.x, 0, None)
    a /= a.sum()
    C = np.tensordot(a, Cu, axes=1)
    viol_new = problem.max_violation(C)
    if problem.objective.value(C) < problem.objective.value(np.tensordot(pw, pC, axes=1)) - 1e-12 and \
            viol_new <= max(limit, 0.0) + 1e-9:
        m2, C2, w2 = _support(mu, Cu, a)
        return m2, C2, w2, feasible, float(viol_new)
    return pruned
