"""Bisection for ratio-of-linear objectives (Alg. 4 of Narasimhan et al., JMLR 2024)."""
from __future__ import annotations

import numpy as np

from ._common import Recorder, SolverResult


def bisection(problem, oracle, *, max_iter: int = 40, tol: float = 1e-9, bounds=(0.0, 1.0),
              callback=None) -> SolverResult:
    """Minimize ``psi = <A, C> / <B, C>`` by bisection on its value (Alg. 4).

    Uses ``min psi <= gamma  <=>  min <A - gamma B, C> <= 0`` (Lemma 25): at each step the
    oracle minimizes ``<A - gamma B, C>``; if the member it returns has ``psi <= gamma`` the
    upper end moves to ``gamma`` and the member is kept. The output is one deterministic plug-in
    rule. Besides the paper's rule this keeps the best member seen (never worse).

    Parameters
    ----------
    problem : CompiledProblem
        Unconstrained, ratio objective (``objective.kind == "ratio"``).
    oracle : linear minimization oracle
    max_iter : int, default 40
    tol : float, default 1e-9
        Stop when the bracket is shorter.
    bounds : (float, float), default (0, 1)
        Initial bracket containing the optimum (losses in [0, 1]).

    Returns
    -------
    SolverResult
    """
    if problem.objective.kind != "ratio":
        raise ValueError("bisection needs a ratio-of-linear objective")
    if problem.constraints:
        raise ValueError("bisection is unconstrained (ConBisection comes with the full plug-in family)")
    rec = Recorder(problem, oracle, 1, callback)
    num, den = problem.objective.num, problem.objective.den
    lo, hi = map(float, bounds)
    best = None
    t = 0
    for t in range(1, max_iter + 1):
        gamma = 0.5 * (lo + hi)
        member, C = oracle(num.coef - gamma * den.coef)
        val = problem.objective.value(C)
        if best is None or val < best[2]:
            best = (member, C, val)
        if val <= gamma:
            hi = gamma
        else:
            lo = gamma
        rec(t, best[1])
        if hi - lo <= tol:
            break
    return SolverResult([best[0]], np.ones(1), best[1][None], "bisection", rec.rows, oracle.n_calls,
                        True, f"bracket [{lo:.6g}, {hi:.6g}] after {t} iterations")
