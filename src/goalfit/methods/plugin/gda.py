"""Constrained gradient descent-ascent (ConGDA, Alg. 6 of Narasimhan et al., JMLR 2024).

With no constraint it is GDA (Alg. 2); :func:`gda` is that case with the paper's budget.
"""
from __future__ import annotations

import numpy as np

from . import coarse_to_fine
from ._common import FitResult, GapStop, Recorder, RowNormalizer, StopReason, plugin_result
from .mixture import check_prune_output, final_mixture, tie_break


def con_gda(problem, oracle, *, max_iter: int = 2000, step_xi: float = 1.0, step_lambda: float = 0.1,
            step_mu: float = 0.1, lambda_radius: float = 1e3, tol: float = 1e-4, check_every: int = 10,
            subsample=None, random_state=0, prune_output: bool | str = True, record_every: int = 10,
            callback=None) -> FitResult:
    """ConGDA: saddle point of ``psi(xi) + <lam, C - xi> + <mu, phi(xi)>`` (Alg. 6).

    Each iteration calls the oracle with ``lam`` (the ``C``-player's best response), takes a
    projected gradient step on the slack ``xi`` and ascent steps on ``lam`` and ``mu >= 0``,
    all simultaneously (the paper's indices are sloppy; this is the intended update). Works in
    the row-normalized representation where ``xi`` has rows in the simplex (tighter than the
    paper's box ``[0,1]^d``; both contain the achievable set). The output is the uniform mixture
    of the oracle's members re-weighted by the LP of §8.2 when ``prune_output`` (the paper's
    practice, App. B.1); when that keeps more than 60 members, by the convex program over at
    most 60 of them (:func:`~goalfit.methods.plugin.mixture.final_mixture`, an addition;
    ``prune_output="lp"``: the LP alone).

    Parameters
    ----------
    problem : CompiledProblem
        Convex objective; polyhedral and/or smooth convex constraints.
    oracle : linear minimization oracle
    max_iter : int, default 2000
        Oracle calls (the paper uses 10000 with steps tuned over {0.001, 0.01, 0.1}).
    step_xi, step_lambda, step_mu : float, default 1.0, 0.1, 0.1
        Step sizes (Theorem 17 sets them from the Lipschitz constants; tune in practice). The
        defaults were the best of the grid {0.01, 0.1, 1}^2 on H-mean with and without a
        coverage constraint on Abalone and PageBlocks (row-normalized representation).
    lambda_radius : float
        ``lam`` is projected onto the l2 ball of this radius (the set Lambda).
    tol : float, default 1e-4
        Stopping rule (:class:`~goalfit.methods.plugin._common.GapStop`, objective units),
        checked at geometrically spaced iterations (``check_every``, ``t // 4``) on the pruned
        mixture of the members so far: a certified gap ``<= tol`` (exact oracles, smooth
        objective, polyhedral constraints), or quadrupling the iterations changed the objective
        (either way) and reduced the largest violation by less than ``tol`` while the mixture
        meets the constraints, and the method's own uniform average of the iterates is within
        ``tol`` of that mixture (``GapStop(agree=True)``; on the Narasimhan tables GDA and ConGDA
        therefore run their budget, ``benchmarks/stopping_check.py``). ``0`` runs the full budget.
    check_every : int, default 10
    subsample : "auto", int or None, default None
        With the plug-in oracle on at least ``4 * subsample`` rows, an objective that
        :func:`~goalfit.methods.plugin.coarse_to_fine.corrective_polish` optimizes (linear, smooth
        convex, or a maximum of linear pieces such as min-max recall) and polyhedral constraints
        (or none): run the ``max_iter`` iterations on a random subsample of this many rows, then
        polish on the full sample by fully-corrective column generation from the subsample's
        members (:func:`~goalfit.methods.plugin.coarse_to_fine.coarse_to_fine`, as SplitFW
        does); ``"auto"``: a tenth of the rows, between 10,000 and 50,000. Several times faster,
        but not the default: on multiclass min-max recall its mixture ends above the
        full-sample run's, as the subsample's iterates explore other group-wise rules than the
        full sample's (benchmarks/README.md, "Measurements behind the library's choices").
        ``None``: the full sample (the paper's method).
    random_state : int, Generator or None, default 0
        Seeds the subsample.
    prune_output : True, False or "lp", default True
        The output mixture (:func:`~goalfit.methods.plugin.mixture.final_mixture`).

    Returns
    -------
    FitResult

    Raises
    ------
    ValueError
        For a ``prune_output`` other than True, False or ``"lp"``.
    """
    check_prune_output(prune_output)
    rows = coarse_to_fine.coarse_rows(subsample, oracle)
    if (coarse_to_fine.applies(oracle, rows) and coarse_to_fine.polishes(problem.objective)
            and not problem.nonlinear):
        return coarse_to_fine.coarse_to_fine(
            con_gda, problem, oracle, subsample=rows, random_state=random_state, tol=tol, record_every=record_every,
            callback=callback, max_iter=max_iter, step_xi=step_xi, step_lambda=step_lambda, step_mu=step_mu,
            lambda_radius=lambda_radius, check_every=check_every, prune_output=prune_output)
    space = problem.space
    norm = RowNormalizer(space)
    rec = Recorder(problem, oracle, record_every, callback)
    mass = np.broadcast_to(space.row_mass[:, :, None], space.shape).ravel()
    A_R = None if problem.A is None else problem.A * mass[None, :]
    nonlin = problem.nonlinear

    def grad_psi(xi):
        return norm.grad_to_rates(problem.objective.gradient(norm.to_confusion(xi)))

    def phi(xi):
        out = []
        if A_R is not None:
            out.append(A_R @ xi.ravel() - problem.b)
        out += [np.array([cc.function.value(norm.to_confusion(xi)) - cc.bound]) for cc in nonlin]
        return np.concatenate(out) if out else np.zeros(0)

    def phi_grad_term(xi, mu):
        g = np.zeros(space.shape)
        k = 0
        if A_R is not None:
            g += (mu[: len(problem.b)] @ A_R).reshape(space.shape)
            k = len(problem.b)
        for j, cc in enumerate(nonlin):
            g += mu[k + j] * norm.grad_to_rates(cc.function.gradient(norm.to_confusion(xi)))
        return g

    member, C = oracle(problem.objective.gradient(np.full(space.shape, 1.0 / space.size)))
    xi = norm.to_rates(C)
    lam = grad_psi(xi)
    mu = np.zeros(len(phi(xi)))
    members, Cs = [], []
    total = np.zeros(space.shape)  # running sum of the members' confusions (uniform mixture)
    stop = GapStop(problem, oracle, tol, check_every, agree=True)
    msg = f"{max_iter} iterations"
    for t in range(1, max_iter + 1):
        member, C = oracle(norm.cost(lam))
        members.append(member)
        Cs.append(C)
        total += C
        R = norm.to_rates(C)
        ph = phi(xi)
        g_xi = grad_psi(xi) - lam + phi_grad_term(xi, mu)
        xi_new = norm.project(xi - step_xi * g_xi)
        lam = lam + step_lambda * (R - xi)
        nrm = np.linalg.norm(lam)
        if nrm > lambda_radius:
            lam *= lambda_radius / nrm
        mu = np.maximum(0.0, mu + step_mu * ph)
        xi = xi_new
        if rec.every and t % rec.every == 0:
            rec(t, total / t)
        if stop.due(t):
            _, why = stop.check(t, members, Cs)
            if why:
                msg = why
                break
    members, Cs, weights = stop.pool(members, Cs)
    members, Cs, w, feasible = final_mixture(problem, members, Cs, weights, prune_output,
                                             **tie_break(tol, stop.lower_bound, stop.exact))
    rec(t, np.tensordot(w, Cs, axes=1), force=True)
    msg += "" if feasible else "; no mixture of the iterates meets the constraints (least violation returned)"
    return plugin_result(problem, oracle, members, w, Cs, "con_gda", rec.rows, feasible, msg,
                         stop=stop.reason or StopReason.MAX_ITER, iterations=t, tol=tol,
                         lower_bound=stop.lower_bound)


def gda(problem, oracle, *, max_iter: int = 5000, **params) -> FitResult:
    """Gradient descent-ascent (Alg. 2) for a convex, possibly non-smooth objective.

    ConGDA without constraints: oracle calls with ``lam``, projected gradient steps on the
    slack ``xi``, ascent on ``lam``; uniform average of the members, re-weighted by the final
    LP (which never makes it worse; see :func:`~goalfit.methods.plugin._common.prune`).
    Default budget 5000 oracle calls (App. B.1); tune the steps with
    :func:`goalfit.estimators.select_method_params` (the paper's grid {0.001, 0.01, 0.1}).

    Raises
    ------
    ValueError
        If the problem has constraints (use :func:`con_gda`).
    """
    if problem.constraints:
        raise ValueError("gda is unconstrained; use con_gda")
    res = con_gda(problem, oracle, max_iter=max_iter, **params)
    res.method = "gda"
    return res
