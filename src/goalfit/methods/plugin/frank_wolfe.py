"""Frank-Wolfe (Alg. 1) and Split Frank-Wolfe (Alg. 5) of Narasimhan et al. (JMLR 2024)."""
from __future__ import annotations

import numpy as np

from ._common import Recorder, RowNormalizer, SolverResult, prune, unique_members
from .lp import RepeatedLP


def _start(problem, oracle):
    """First member: the balanced plug-in (cost -1/pi on the diagonal), nonzero recalls."""
    space = problem.space
    norm = RowNormalizer(space)
    lam = np.zeros(space.shape)
    idx = np.arange(space.n_classes)
    lam[:, idx, idx] = -1.0
    return oracle(norm.cost(lam))


def frank_wolfe(problem, oracle, *, max_iter: int = 5000, tol: float = 0.0, record_every: int = 10,
                callback=None) -> SolverResult:
    """Frank-Wolfe over the achievable confusion set (Alg. 1) for a smooth convex objective.

    ``L^t = grad psi(C^{t-1})``, ``C^t = (1 - g) C^{t-1} + g C~^t`` with ``g = 2/(t+1)``; the
    output mixture has the closed-form weights ``w_t = 2t / (T(T+1))`` (the first step erases
    the start). Stops early when the Frank-Wolfe gap ``<grad, C - C~>`` is below ``tol``.

    Parameters
    ----------
    problem : CompiledProblem
        Unconstrained; convex smooth objective (Theorem 12). Non-smooth objectives stall
        (Fig. 10) but run.
    oracle : linear minimization oracle
    max_iter : int, default 5000 (the paper's budget, App. B.1)
    tol : float, default 0
        Stop when ``|gap| <= tol``. The plug-in oracle is approximate (its gap can be negative),
        so the default runs the paper's full budget.

    Returns
    -------
    SolverResult
    """
    if problem.constraints:
        raise ValueError("frank_wolfe is unconstrained; use split_frank_wolfe or con_gda")
    rec = Recorder(problem, oracle, record_every, callback)
    _, C = _start(problem, oracle)
    members, Cs, weights = [], [], []
    message = f"reached max_iter={max_iter}"
    for t in range(1, max_iter + 1):
        grad = problem.objective.gradient(C)
        member, Ct = oracle(grad)
        gap = float(np.vdot(grad, C - Ct))
        g = 2.0 / (t + 1)
        C = (1 - g) * C + g * Ct
        weights = [w * (1 - g) for w in weights] + [g]
        members.append(member)
        Cs.append(Ct)
        rec(t, C)
        if tol > 0 and t > 1 and abs(gap) <= tol:
            message = f"converged: Frank-Wolfe gap {gap:.2e} <= tol after {t} iterations"
            break
    rec(t, C, force=True)
    members, Cs, w = unique_members(members, np.array(Cs), weights)
    return SolverResult(members, w / w.sum(), Cs, "frank_wolfe", rec.rows, oracle.n_calls, True, message)


def split_frank_wolfe(problem, oracle, *, max_iter: int = 2000, zeta: float = 10.0,
                      eta=(0.5, 0.1, 0.001), prune_output: bool = True, record_every: int = 10,
                      callback=None) -> SolverResult:
    """Split Frank-Wolfe (Alg. 5) for a smooth convex objective with polyhedral constraints.

    Splits ``C`` (achievable, moved by the oracle) from ``F`` (in the explicit polytope
    ``{rows in the simplex, A vec(F) <= b}``, moved by an LP on HiGHS) and runs Frank-Wolfe on
    the augmented Lagrangian ``psi(C) + psi(F) + <lam, C - F> + zeta/2 ||C - F||^2`` with
    ``gamma_t = 2/(t+2)`` and the dual step ``lam += eta_t (C - F)``, ``eta_t`` piecewise
    constant by thirds (App. B.1: zeta = 10, eta = 0.5 / 0.1 / 0.001; no 1/t, as the experiments
    and the authors' code). Works in the row-normalized representation (see
    :class:`~goalfit.methods.plugin._common.RowNormalizer`). The output mixture is re-weighted by
    the LP of §8.2 (``prune_output``), not ``t*``.

    Parameters
    ----------
    problem : CompiledProblem
        Smooth convex objective, polyhedral constraints.
    oracle : linear minimization oracle
    max_iter : int, default 2000
        Oracle calls (the paper uses 10000).
    zeta : float, default 10
    eta : tuple of float
        Dual step sizes for the three thirds of the run.

    Returns
    -------
    SolverResult

    Raises
    ------
    ValueError
        If a constraint is not polyhedral. (When no confusion matrix at all meets the
        constraints, the F-step uses the least-relaxed polytope and the least-violating mixture
        is returned with ``feasible=False``.)
    """
    if problem.nonlinear:
        raise ValueError("split_frank_wolfe needs polyhedral constraints (its F-step is an LP)")
    space = problem.space
    norm = RowNormalizer(space)
    rec = Recorder(problem, oracle, record_every, callback)
    try:
        lp = RepeatedLP.rows_in_simplex(space, problem.A, problem.b)
    except ValueError:
        # no confusion matrix at all meets the constraints: split against the polytope relaxed by
        # the smallest uniform slack; pruning then returns the least-violating mixture
        # (feasible=False), as the other methods do for infeasible goals
        s = RepeatedLP.least_slack(space, problem.A, problem.b)
        lp = RepeatedLP.rows_in_simplex(space, problem.A, problem.b + s + max(1e-9, 1e-9 * abs(s)))

    def grad_R(R):
        return norm.grad_to_rates(problem.objective.gradient(norm.to_confusion(R)))

    _, C0 = _start(problem, oracle)
    R = norm.to_rates(C0)
    F = lp.solve(np.zeros(space.shape))
    lam = np.zeros(space.shape)
    members, Cs, weights = [], [], []
    for t in range(1, max_iter + 1):
        a = grad_R(R) + lam + zeta * (R - F)
        member, Ct = oracle(norm.cost(a))
        bvec = grad_R(F) - lam + zeta * (F - R)
        Ft = lp.solve(bvec)
        g = 2.0 / (t + 2) if members else 1.0
        R = (1 - g) * R + g * norm.to_rates(Ct)
        F = (1 - g) * F + g * Ft
        weights = [w * (1 - g) for w in weights] + [g]
        members.append(member)
        Cs.append(Ct)
        step = eta[min(len(eta) - 1, (3 * (t - 1)) // max_iter)]
        lam = lam + step * (R - F)
        rec(t, norm.to_confusion(R))
    Cs = np.array(Cs)
    if prune_output:
        members, Cs, w, feasible, viol = prune(problem, members, Cs, weights)
    else:
        members, Cs, w = unique_members(members, Cs, weights)
        w = w / w.sum()
        feasible = problem.max_violation(np.tensordot(w, Cs, axes=1)) <= 1e-7
    rec(max_iter, np.tensordot(w, Cs, axes=1), force=True)
    msg = f"{max_iter} iterations" + ("" if feasible else "; no mixture of the iterates meets the constraints (least violation returned)")
    return SolverResult(members, w, Cs, "split_frank_wolfe", rec.rows, oracle.n_calls, feasible, msg)
