"""Frank-Wolfe (Alg. 1) and Split Frank-Wolfe (Alg. 5) of Narasimhan et al. (JMLR 2024)."""
from __future__ import annotations

import numpy as np

from ._common import (FitResult, GapStop, Recorder, RowNormalizer, StopReason, frank_wolfe_weights,
                      piecewise_linear, plugin_result, prune, unique_members)
from . import binary_hull, coarse_to_fine
from .lp import RepeatedLP
from .mixture import check_prune_output, final_mixture, tie_break
from .oracle import RECALIBRATION


def _start(problem, oracle):
    """First member: the balanced plug-in (cost -1/pi on the diagonal), nonzero recalls."""
    space = problem.space
    norm = RowNormalizer(space)
    lam = np.zeros(space.shape)
    idx = np.arange(space.n_classes)
    lam[:, idx, idx] = -1.0
    return oracle(norm.cost(lam))


def frank_wolfe(problem, oracle, *, max_iter: int = 5000, tol: float = 1e-4, check_every: int = 10,
                exact_binary: bool = True, record_every: int = 10, callback=None) -> FitResult:
    """Frank-Wolfe over the achievable confusion set (Alg. 1) for a smooth convex objective.

    ``L^t = grad psi(C^{t-1})``, ``C^t = (1 - g) C^{t-1} + g C~^t`` with ``g = 2/(t+1)``; the
    output mixture has the closed-form weights ``w_t = 2t / (T(T+1))`` (the first step erases
    the start), computed once at the end from the steps.

    Parameters
    ----------
    problem : CompiledProblem
        Unconstrained; convex smooth objective (Theorem 12). Non-smooth objectives stall
        (Fig. 10) but run.
    oracle : linear minimization oracle
    max_iter : int, default 5000 (the paper's budget, App. B.1)
    tol : float, default 1e-4
        Stopping rule (objective units), checked at geometrically spaced iterations: with an
        exact oracle, stop when the Frank-Wolfe gap ``<grad psi(C), C - C~>`` of the current
        iterate is at most ``tol`` (a certified bound on ``psi(C) - min psi``); with any
        oracle, stop when quadrupling the iterations changed the objective by less than ``tol``
        (see :class:`~goalfit.methods.plugin._common.GapStop`; the plug-in oracle is
        approximate, its gap can be negative). The output is then the iterate's mixture or,
        when better, the best mixture of the members (LP of §8.2). ``0``: the full budget.
        Ignored for non-smooth objectives (min-max recall), where Frank-Wolfe stalls anyway
        (Fig. 10) and a stall is no sign of convergence.
    check_every : int, default 10
    exact_binary : bool, default True
        Two classes with the plug-in or the threshold oracle: solve the problem exactly over
        the per-cell ROC hulls of the threshold rules (:mod:`~goalfit.methods.plugin.binary_hull`,
        a certified optimum in a few oracle calls, the limit the iterations approach; the best
        of two local optima, uncertified, for a smooth non-convex objective such as macro-F1)
        instead of iterating; the iterations run when it does not apply or is not certified.
        ``False``: Alg. 1 as in the paper.

    Returns
    -------
    FitResult
    """
    if problem.constraints:
        raise ValueError("frank_wolfe is unconstrained; use split_frank_wolfe or con_gda")
    rec = Recorder(problem, oracle, record_every, callback)
    if exact_binary and binary_hull.applies(problem, oracle):
        result = binary_hull.fit(problem, oracle, tol, rec, "frank_wolfe")
        if result is not None:
            return result
    _, C = _start(problem, oracle)
    members, Cs, steps = [], [], []
    # a non-smooth objective (min-max recall) makes Frank-Wolfe stall short of the optimum
    # (Fig. 10): a stall there says nothing about convergence, so the budget runs
    stop = GapStop(problem, oracle, tol if problem.objective.smooth else 0.0, check_every, price_inexact=True)
    message = f"reached max_iter={max_iter}"
    fw_lower = None  # psi(C) minus the Frank-Wolfe gap at C (Jaggi, ICML 2013, Eq. 2): a bound for an exact oracle
    for t in range(1, max_iter + 1):
        grad = problem.objective.gradient(C)
        member, Ct = oracle(grad)
        gap = float(np.vdot(grad, C - Ct))
        if stop.exact and tol > 0 and t > 1 and gap <= tol:
            message = f"converged: Frank-Wolfe gap {gap:.2e} <= tol={tol:g} after {t - 1} iterations"
            stop.reason = StopReason.CONVERGED
            fw_lower = float(problem.objective.value(C)) - gap
            t -= 1
            break
        g = 2.0 / (t + 1)
        C = (1 - g) * C + g * Ct
        steps.append(g)
        members.append(member)
        Cs.append(Ct)
        rec(t, C)
        if stop.due(t):
            _, why = stop.check(t, members, Cs, frank_wolfe_weights(steps))
            if why:
                message = why
                break
    weights = frank_wolfe_weights(steps)
    if stop.extra_members:  # the stopping test's members: keep the better of the two mixtures
        members, Cs, w, _, _ = prune(problem, *stop.pool(members, Cs, weights))
    else:
        members, Cs, w = unique_members(members, np.array(Cs), weights)
    rec(t, np.tensordot(w / w.sum(), Cs, axes=1), force=True)
    lower = max((b for b in (fw_lower, stop.lower_bound) if b is not None), default=None)
    return plugin_result(problem, oracle, members, w / w.sum(), Cs, "frank_wolfe", rec.rows, True, message,
                         stop=stop.reason or StopReason.MAX_ITER, iterations=t, tol=tol, lower_bound=lower)


def split_frank_wolfe(problem, oracle, *, max_iter: int = 2000, zeta: float = 10.0,
                      eta=(0.5, 0.1, 0.001), tol: float = 1e-4, check_every: int = 10,
                      exact_binary: bool = True, subsample="auto", coarse_iter="auto", random_state=0,
                      smoothing: float = 3e-3, prune_output: bool | str = True,
                      recalibration: tuple[float, ...] = RECALIBRATION, record_every: int = 10,
                      callback=None) -> FitResult:
    """Split Frank-Wolfe (Alg. 5) for a smooth convex objective with polyhedral constraints.

    Splits ``C`` (achievable, moved by the oracle) from ``F`` (in the explicit polytope
    ``{rows in the simplex, A vec(F) <= b}``, moved by an LP on HiGHS) and runs Frank-Wolfe on
    the augmented Lagrangian ``psi(C) + psi(F) + <lam, C - F> + zeta/2 ||C - F||^2`` with
    ``gamma_t = 2/(t+2)`` and the dual step ``lam += eta_t (C - F)``, ``eta_t`` piecewise
    constant by thirds (App. B.1: zeta = 10, eta = 0.5 / 0.1 / 0.001; no 1/t, as the experiments
    and the authors' code). Works in the row-normalized representation (see
    :class:`~goalfit.methods.plugin._common.RowNormalizer`). The output mixture is re-weighted by
    the LP of §8.2 (``prune_output``), not ``t*``; when that keeps more than 60 members (the
    iterates' own weights of a strongly curved objective), by the convex program over at most 60
    of them (:func:`~goalfit.methods.plugin.mixture.final_mixture`, an addition;
    ``prune_output="lp"``: the LP alone).

    A maximum of linear pieces (min-max recall), on which the linearization stalls at a vertex
    (one piece's gradient), is iterated on its log-sum-exp smoothing at temperature
    ``smoothing`` (:class:`~goalfit.goals.functions.SmoothMaxOfLinear`; Nesterov, Math. Program.
    2005), while the stopping test, the output mixture and the polish fit the true maximum (its
    epigraph LP); with three or more pieces, among the output mixtures within ``min(tol, 1e-4)``
    of the best maximum, the one whose two largest pieces sum least (a tied worst recall carries
    worse to new rows: :data:`~goalfit.methods.plugin.mixture.TIE_SLACK`). Not in Narasimhan et
    al., who run GDA / ConGDA there; additions.

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
    tol : float, default 1e-4
        Stopping rule (:class:`~goalfit.methods.plugin._common.GapStop`, objective units),
        checked at geometrically spaced iterations (``check_every``, ``t // 4``): stop when the
        pruned mixture's gap is certified below ``tol`` (exact oracles), or when quadrupling the
        iterations changed its objective (either way) and reduced its violation by less than
        ``tol`` while it meets the constraints. Without constraints that re-fit is the best
        single member so far, so a stall there also needs the iterates' own mixture to agree
        with it (``GapStop(agree=True)``, as GDA's: it had stopped multiclass G-mean at 0.418
        where the budget reaches 0.218). Each check costs
        two small LPs and one oracle call, whose member joins the candidates. ``0`` runs the
        full budget (the paper's practice).
    check_every : int, default 10
        Smallest spacing of the checks.
    exact_binary : bool, default True
        Two classes with the plug-in or the threshold oracle: solve the problem exactly over
        the per-cell ROC hulls of the threshold rules (:mod:`~goalfit.methods.plugin.binary_hull`:
        a program in ``2 * n_cells`` variables, a linear one for linear objectives and maxima
        of linear pieces, a convex one certified by one LP for smooth objectives, the best of
        two local optima, uncertified, for a smooth non-convex one such as macro-F1; the limit
        the iterations approach) instead of iterating. Where it does not apply (G-mean), the goals
        admit no point of the hulls (least violation) or the gap is not certified below
        ``tol``, an exact oracle (the threshold oracle, binary only) with a linear or convex
        objective runs fully-corrective column generation from the first member instead of
        the iterations
        (:func:`~goalfit.methods.plugin.coarse_to_fine.exact_column_generation`: each round
        prices one member with a certified gap, so it stops on the gap ``tol`` after a few
        rounds where the iterations take tens to hundreds; ``max_iter`` bounds its oracle
        calls; the iterations run when it ends with no feasible mixture, or at a point where a
        non-smooth objective is not differentiable). ``False``: Alg. 5 as in the paper.
    subsample : "auto", int or None, default "auto"
        With the plug-in oracle on at least ``4 * subsample`` rows, run on a random subsample
        of this many rows first, then polish on the full sample by fully-corrective column
        generation from the subsample's members
        (:func:`~goalfit.methods.plugin.coarse_to_fine.coarse_to_fine`): each of the
        ``coarse_iter`` oracle calls (the coarse run takes its whole budget; ``tol`` stops the
        polish) then costs a pass over ``subsample`` rows, and some tens of
        calls on the full sample follow (``benchmarks/speed.py`` measures it against 2000
        iterations on the full sample). ``"auto"``: a tenth of the rows, between 10,000 and
        50,000 (:func:`~goalfit.methods.plugin.coarse_to_fine.auto_subsample`: from 40,000
        rows on). ``None``: always the full sample.
    coarse_iter : "auto" or int, default "auto"
        Iterations of the coarse run. ``"auto"``: ``min(max_iter, coarse_budget(problem))``
        (:func:`~goalfit.methods.plugin.coarse_to_fine.coarse_budget`: 1000 with constraints or
        a piecewise-linear objective, 300 otherwise; a smaller budget is kept whole; the
        measurements behind the choices: see benchmarks/README.md, section "Measurements behind
        the library's choices").
    random_state : int, Generator or None, default 0
        Seeds the subsample.
    smoothing : float, default 3e-3
        Temperature of the log-sum-exp smoothing of a maximum of linear pieces (objective
        units; it overestimates the maximum by at most ``smoothing * log(pieces)``); not read
        for other objectives. Chosen on multiclass min-max recall against ConGDA and other
        temperatures (benchmarks/README.md, "Measurements behind the library's choices").
    prune_output : True, False or "lp", default True
        The output mixture (:func:`~goalfit.methods.plugin.mixture.final_mixture`).
    recalibration : tuple of float, default (0.5, 1.0, 1.5)
        More than two classes on the plug-in oracle, when the polish runs (``subsample``): each
        polishing round also prices the rules recalibrated within the cells at these strengths
        (:func:`~goalfit.methods.plugin.coarse_to_fine.corrective_polish`, as column generation
        does); ``()``: the plug-in rule alone.

    Returns
    -------
    FitResult

    Raises
    ------
    ValueError
        If a constraint is not polyhedral, ``smoothing`` is not positive for a maximum of
        linear pieces, or ``prune_output`` is not True, False or ``"lp"``. (When no confusion matrix at all meets the
        constraints, the F-step uses the least-relaxed polytope and the least-violating mixture
        is returned with ``feasible=False``.)
    """
    if problem.nonlinear:
        raise ValueError("split_frank_wolfe needs polyhedral constraints (its F-step is an LP)")
    check_prune_output(prune_output)
    space = problem.space
    norm = RowNormalizer(space)
    rec = Recorder(problem, oracle, record_every, callback)
    if exact_binary and binary_hull.applies(problem, oracle):
        result = binary_hull.fit(problem, oracle, tol, rec, "split_frank_wolfe")
        if result is not None:
            return result
    if exact_binary and coarse_to_fine.certifies(problem, oracle):
        result = coarse_to_fine.exact_column_generation(problem, oracle, _start(problem, oracle),
                                                        method="split_frank_wolfe", tol=tol, max_rounds=max_iter,
                                                        record_every=record_every, callback=callback)
        # no feasible mixture of its members: the iterations' F-step searches the explicit
        # polytope instead (a member of infinite objective, such as a constant classifier under
        # KL quantification, can leave the mixture program short of the least violation); None:
        # a non-smooth objective ended at a kink, where its gap certifies nothing
        if result is not None and result.feasible:
            return result
    subsample = coarse_to_fine.coarse_rows(subsample, oracle)
    if coarse_to_fine.applies(oracle, subsample):
        if isinstance(coarse_iter, str) and coarse_iter == "auto":
            coarse_iter = min(max_iter, coarse_to_fine.coarse_budget(problem))
        elif isinstance(coarse_iter, str) or int(coarse_iter) < 1:
            raise ValueError(f"coarse_iter must be 'auto' or a positive int, got {coarse_iter!r}")
        return coarse_to_fine.coarse_to_fine(
            split_frank_wolfe, problem, oracle, subsample=subsample, random_state=random_state, tol=tol,
            recalibration=recalibration, record_every=record_every, callback=callback, max_iter=int(coarse_iter),
            zeta=zeta, eta=eta, check_every=check_every, exact_binary=exact_binary, smoothing=smoothing,
            prune_output=prune_output)
    # the iterations' objective: a maximum of linear pieces is smoothed (the stopping test and the
    # output mixture keep the true one)
    psi = problem.objective.smoothed(smoothing) if piecewise_linear(problem.objective) else problem.objective
    try:
        lp = RepeatedLP.rows_in_simplex(space, problem.A, problem.b)
    except ValueError:
        # no confusion matrix at all meets the constraints: split against the polytope relaxed by
        # the smallest uniform slack; pruning then returns the least-violating mixture
        # (feasible=False), as the other methods do for infeasible goals
        s = RepeatedLP.least_slack(space, problem.A, problem.b)
        lp = RepeatedLP.rows_in_simplex(space, problem.A, problem.b + s + max(1e-9, 1e-9 * abs(s)))

    def grad_R(R):
        return norm.grad_to_rates(psi.gradient(norm.to_confusion(R)))

    _, C0 = _start(problem, oracle)
    R = norm.to_rates(C0)
    F = lp.solve(np.zeros(space.shape))
    lam = np.zeros(space.shape)
    members: list = []
    Cs: list = []
    steps: list = []
    # without constraints the re-fit (the LP of §8.2 over the members' own values) is the best
    # single member so far, which can plateau while the iterates still find better rules
    # (multiclass G-mean on small real data sets): a stall then also needs the iterates' own
    # mixture to agree with it, as GDA's; with constraint rows the LP mixes members
    stop = GapStop(problem, oracle, tol, check_every, agree=not problem.constraints)
    msg = f"{max_iter} iterations"
    for t in range(1, max_iter + 1):
        a = grad_R(R) + lam + zeta * (R - F)
        member, Ct = oracle(norm.cost(a))
        bvec = grad_R(F) - lam + zeta * (F - R)
        Ft = lp.solve(bvec)
        g = 2.0 / (t + 2) if members else 1.0
        R = (1 - g) * R + g * norm.to_rates(Ct)
        F = (1 - g) * F + g * Ft
        steps.append(g)
        members.append(member)
        Cs.append(Ct)
        step = eta[min(len(eta) - 1, (3 * (t - 1)) // max_iter)]
        lam = lam + step * (R - F)
        rec(t, norm.to_confusion(R))
        if stop.due(t):
            _, why = stop.check(t, members, Cs, frank_wolfe_weights(steps))
            if why:
                msg = why
                break
    members, pooled, weights = stop.pool(members, Cs, frank_wolfe_weights(steps))
    members, confusions, w, feasible = final_mixture(problem, members, pooled, weights, prune_output,
                                                     **tie_break(tol, stop.lower_bound, stop.exact))
    rec(t, np.tensordot(w, confusions, axes=1), force=True)
    msg += "" if feasible else "; no mixture of the iterates meets the constraints (least violation returned)"
    return plugin_result(problem, oracle, members, w, confusions, "split_frank_wolfe", rec.rows, feasible, msg,
                         stop=stop.reason or StopReason.MAX_ITER, iterations=t, tol=tol,
                         lower_bound=stop.lower_bound)
