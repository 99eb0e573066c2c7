"""Ellipsoid (Alg. 3) and constrained ellipsoid (Alg. 7) of Narasimhan et al. (JMLR 2024).

Both maximize the concave dual function by central cuts of the minimum-volume ellipsoid
(``jle_update``, Alg. 3(a)), using as supergradient ``xi(C^t) - xi^t`` (Danskin), where
``C^t`` is the oracle's answer for the cost ``lam`` and ``xi^t`` solves the small
``xi``-subproblem. They run in the succinct representation of
:class:`~goalfit.methods.plugin.representation.FeatureSpace` (dimension ``r``, e.g. the number of
classes for H-mean), because the number of cuts grows with the square of the dimension. The
output mixture solves the final convex program over the iterates
(:func:`~goalfit.methods.plugin.mixture.mixture_program`).
"""
from __future__ import annotations

import numpy as np

from ._common import FitResult, GapStop, Recorder, StopReason, plugin_result
from .column_generation import min_max_violation
from .frank_wolfe import _start
from .mixture import mixture_program, prune_finite, tie_break
from .representation import FeatureSpace


def jle_update(A, center, w):
    """Minimum-volume ellipsoid containing ``E(center, A) ∩ {x : (x - center) @ w >= 0}``.

    ``E(c, A) = {x : (x - c)^T A^{-1} (x - c) <= 1}``. Central cut (Alg. 3(a) in the rank-one
    form): with ``g = A w / sqrt(w^T A w)`` and dimension ``D >= 2``,
    ``c' = c + g / (D + 1)`` and ``A' = D^2 / (D^2 - 1) (A - 2/(D+1) g g^T)``; the volume shrinks
    by ``D/(D+1) * (D^2/(D^2-1))^((D-1)/2) < exp(-1/(2(D+1)))``. For ``D = 1`` the "ellipsoid"
    is an interval and the cut halves it (bisection, footnote 4).

    Parameters
    ----------
    A : ndarray of shape (D, D), symmetric positive definite
    center : ndarray of shape (D,)
    w : ndarray of shape (D,)
        Direction of the kept half-space.

    Returns
    -------
    A_new, center_new

    Raises
    ------
    ValueError
        If ``w^T A w`` is not positive (a zero or degenerate cut).
    """
    A = np.asarray(A, float)
    w = np.asarray(w, float)
    D = len(center)
    Aw = A @ w
    q = float(w @ Aw)
    if not q > 0:
        raise ValueError("degenerate cut: w^T A w must be positive")
    g = Aw / np.sqrt(q)
    if D == 1:
        return A / 4.0, center + g / 2.0
    new_center = center + g / (D + 1)
    new_A = (D * D / (D * D - 1.0)) * (A - (2.0 / (D + 1)) * np.outer(g, g))
    return 0.5 * (new_A + new_A.T), new_center


def ellipsoid(problem, oracle, *, max_iter: int = 1000, radius: float = np.sqrt(1000.0),
              final: str = "convex", tol: float = 1e-3, check_every: int = 10, record_every: int = 50,
              callback=None) -> FitResult:
    """Ellipsoid method over the Lagrange multipliers (Alg. 3) for a convex objective.

    Parameters
    ----------
    problem : CompiledProblem
        Unconstrained, convex objective exposing its features.
    oracle : linear minimization oracle
    max_iter : int, default 1000 (App. B.1)
    radius : float, default sqrt(1000)
        Radius ``a`` of the initial ball (App. B.1 says 1000; the authors' code uses the shape
        matrix 1000 I, i.e. radius sqrt(1000) — the erratum followed here). Theorem 14 asks
        ``a >= 2L``.
    final : {"convex", "lp"}
        Final weights by the convex program (Alg. 3 line 14) or the LP of §8.2.
    tol : float, default 1e-3
        Stopping rule (objective units), checked at geometrically spaced cuts
        (``check_every``, ``t // 4``) with an exact oracle (``oracle.exact``, e.g. the
        threshold oracle): stop when the LP-pruned mixture's objective minus the best dual
        value (a lower bound on the sample optimum) is at most ``tol`` (the duality gap). No
        stall test: the pruned objective of an H-mean is a loose LP bound that can stall while
        the final convex program still gains (1e-2 on the Narasimhan tables), so with the
        plug-in oracle the run takes its budget. It also stops when the ellipsoid collapses
        (volume: trace of its matrix below 1e-18). ``0``: the full budget.
    check_every : int, default 10

    Returns
    -------
    FitResult
        ``history`` rows also carry ``dual`` (the dual function's value: a lower bound on the
        optimum of the sample problem when the oracle is exact).
    """
    if problem.constraints:
        raise ValueError("ellipsoid is unconstrained; use con_ellipsoid")
    fs = FeatureSpace(problem, with_constraints=False)
    with _one_blas_thread():
        return _run(problem, oracle, fs, max_iter, radius, final, record_every, callback, constrained=False,
                    tol=tol, check_every=check_every)


def con_ellipsoid(problem, oracle, *, max_iter: int = 1000, radius: float = np.sqrt(1000.0),
                  final: str = "convex", tol: float = 1e-3, check_every: int = 10, record_every: int = 50,
                  callback=None) -> FitResult:
    """Constrained ellipsoid (Alg. 7) over ``(lam, mu)`` in ``R^(r+K)``.

    Needs a strictly feasible start ``h^0``: a **feasibility phase** first minimizes the
    largest constraint violation over mixtures by column generation
    (:func:`~goalfit.methods.plugin.column_generation.min_max_violation`); its members join the
    candidates of the final program. Cuts at centers outside the ball or with ``mu < 0`` reuse
    ``h^0`` (Alg. 7 lines 3-6). The final weights solve the convex program with the constraints
    (line 16); if no mixture meets them, the least-violating mixture is returned.

    Parameters
    ----------
    As :func:`ellipsoid`.

    Returns
    -------
    FitResult
    """
    fs = FeatureSpace(problem, with_constraints=True)
    with _one_blas_thread():
        return _run(problem, oracle, fs, max_iter, radius, final, record_every, callback, constrained=True,
                    tol=tol, check_every=check_every)


def _one_blas_thread():
    """The cuts solve hundreds of tiny L-BFGS-B subproblems; multithreaded BLAS only adds
    overhead there, much more when its threads compete with another busy process
    (see benchmarks/README.md, section "Measurements behind the library's choices")."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")


def _run(problem, oracle, fs, max_iter, radius, final, record_every, callback, constrained, tol=0.0,
         check_every=10):
    rec = Recorder(problem, oracle, record_every, callback)
    r, K = fs.dim, (fs.n_constraints if constrained else 0)
    D = r + K
    members, Cs = [], []
    if constrained and problem.A is not None and not problem.nonlinear:
        feas = min_max_violation(problem, oracle)
        members += list(feas.members)
        Cs += list(feas.confusions)
        C0 = feas.confusion
    else:
        m0, C0 = _start(problem, oracle)
        members.append(m0)
        Cs.append(C0)
    A = radius**2 * np.eye(D)
    center = np.zeros(D)
    best_dual = -np.inf
    message = f"{max_iter} cuts"
    reason, cuts = StopReason.MAX_ITER, max_iter
    stop = GapStop(problem, oracle, tol, check_every, lower_bound=False)  # the dual value is the bound
    for t in range(1, max_iter + 1):
        lam, mu = center[:r], center[r:]
        if np.linalg.norm(center) > radius:
            w = -center
            C = C0
        elif K and (mu < 0).any():
            w = np.concatenate([np.zeros(r), np.maximum(-mu, 0.0)])
            C = C0
        else:
            member, C = oracle(fs.cost(lam))
            members.append(member)
            Cs.append(C)
            xi = fs.argmin_xi(lam, mu if K else None)
            phi = fs.phi(xi) if K else np.zeros(0)
            w = np.concatenate([fs.xi(C) - xi, phi])
            dual = lam @ fs.xi(C) + fs.psi(xi) - lam @ xi + (mu @ phi if K else 0.0)
            best_dual = max(best_dual, dual)
        if t % rec.every == 0 or t == max_iter:
            # the classifier after t cuts is the LP-weighted mixture of the iterates (§8.2)
            _, Cm, wm, _, _ = prune_finite(problem, members, np.array(Cs))
            rec(t, np.tensordot(wm, Cm, axes=1))
            rec.rows[-1]["dual"] = float(best_dual)
        if stop.exact and stop.due(t):  # the duality gap needs an exact oracle (no stall test here)
            cert, _ = stop.check(t, members, Cs)
            if cert.feasible and cert.upper - best_dual <= tol:
                message = f"converged: duality gap {cert.upper - best_dual:.2e} <= tol={tol:g} after {t} cuts"
                reason, cuts = StopReason.CONVERGED, t
                break
        try:
            A, center = jle_update(A, center, w)
        except ValueError:
            if np.any(w):  # w^T A w <= 0 in floating point: the ellipsoid is numerically flat
                message = f"stopped after {t} cuts: degenerate cut (ellipsoid numerically flat)"
                reason = StopReason.COLLAPSED
            else:
                message = f"stopped after {t} cuts: zero supergradient (optimal for the sample problem)"
                reason = StopReason.CONVERGED
            cuts = t
            break
        if np.trace(A) < 1e-18:
            message = f"stopped after {t} cuts: ellipsoid collapsed"
            reason, cuts = StopReason.COLLAPSED, t
            break
    solver = mixture_program if final == "convex" else _prune_only
    members, Cs, w, feasible, viol = solver(problem, members, np.array(Cs), **tie_break(tol, best_dual, stop.exact))
    rec(cuts, np.tensordot(w, Cs, axes=1), force=True)
    rec.rows[-1]["dual"] = float(best_dual)
    if not feasible:
        message += "; no mixture of the iterates meets the constraints (least violation returned)"
    name = "con_ellipsoid" if constrained else "ellipsoid"
    # the best dual value bounds the sample optimum from below when the oracle is exact (weak duality)
    return plugin_result(problem, oracle, members, w, Cs, name, rec.rows, feasible, message, stop=reason,
                         iterations=cuts, tol=tol, lower_bound=best_dual)


def _prune_only(problem, members, confusions, slack=None, ceiling=None):
    from .mixture import prune_finite

    return prune_finite(problem, members, confusions, slack=slack, ceiling=ceiling)
