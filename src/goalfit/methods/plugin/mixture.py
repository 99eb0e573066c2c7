"""The final-mixture convex program (Narasimhan et al., Alg. 3 line 14 / Alg. 7 line 16).

``min_{alpha in simplex} psi(sum_t alpha_t C_t)`` s.t. ``phi(sum_t alpha_t C_t) <= 0``: no data
is needed, only the members' confusion tensors. Solved with SLSQP (scipy) from the LP-pruned
weights of §8.2; linear and piecewise-linear objectives (min-max recall) are solved exactly by
the pruning LP, which is returned as is (a method's output for a maximum of linear pieces breaks a
tied maximum within its ``tol``: :func:`tie_break`). Falls back to the pruned weights when SLSQP fails or
does not improve, so the result is never worse than pruning. Column generation, which re-solves
the program after adding one member to a feasible pool, starts it from the previous mixture
instead (:func:`master_program`: no pruning LP) and reads the constraint rows' multipliers off
SLSQP.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

from ...goals.problem import FEASIBLE_TOL
from ._common import _support, piecewise_linear, prune, prune_finite, row_blocks, unique_members  # noqa: F401 (prune_finite re-exported)
from .lp import BandedRows

MAX_MEMBERS = 60

#: The largest allowance, in objective units, within which a method's output for a maximum of
#: three or more linear pieces (min-max recall on three or more classes) trades its maximum on the
#: sample for a lower sum of its two largest pieces
#: (:func:`~goalfit.methods.plugin._common.second_largest_lp`); a method allows at most its own
#: ``tol`` (:func:`tie_break`), the accuracy to which it finds the maximum anyway. Read at each
#: fit; None: the epigraph LP's vertex, where several classes often tie at the worst recall,
#: which carries worse to new rows (benchmarks/README.md, ``minmax_multiclass.py``).
TIE_SLACK: float | None = 1e-4


def tie_break(tol: float, lower_bound: float | None = None, certified: bool = False) -> dict:
    """How a method with tolerance ``tol`` breaks a tied maximum in its output: the keyword
    arguments ``slack`` and ``ceiling`` of :func:`final_mixture`, :func:`master_program`,
    :func:`mixture_program` and :func:`~goalfit.methods.plugin._common.prune`.

    Parameters
    ----------
    tol : float
        The method's tolerance (objective units).
    lower_bound : float, optional
        The method's best lower bound on the optimum.
    certified : bool, default False
        Whether ``lower_bound`` is certified (an exact oracle).

    Returns
    -------
    dict
        ``slack``: ``min(TIE_SLACK, tol)`` (None when :data:`TIE_SLACK` is None: no tie-break);
        ``ceiling``: a certified, finite ``lower_bound`` plus ``tol`` less HiGHS's primal
        feasibility tolerance (1e-7), so that a certified gap stays within ``tol``; else None.
    """
    slack = None if TIE_SLACK is None else min(TIE_SLACK, float(tol))
    ceiling = None
    if certified and lower_bound is not None and np.isfinite(lower_bound):
        ceiling = float(lower_bound) + float(tol) - 1e-7
    return {"slack": slack, "ceiling": ceiling}


@dataclass
class Master:
    """What :func:`master_program` returns.

    Attributes
    ----------
    members : list of length S
    confusions : ndarray of shape (S, *space.shape)
    weights : ndarray of shape (S,)
        The mixture (sums to 1).
    feasible : bool
        It meets the constraints; else it is the least-violating mixture found.
    max_row_violation : float
        Its largest constraint violation (rate units).
    row_multipliers : ndarray of shape (n_rows,) or None
        Non-negative Lagrange multipliers of the linear constraint rows ``A vec(C) <= b`` at
        the mixture, from SLSQP's KKT system (SciPy >= 1.15 reports them); None when the mixture
        is not SLSQP's (the pruning LP's, or the start kept), when SciPy does not report them,
        or when the problem has other constraints.
    """

    members: list
    confusions: np.ndarray
    weights: np.ndarray
    feasible: bool
    max_row_violation: float
    row_multipliers: np.ndarray | None = None

    def as_tuple(self):
        """``(members, confusions, weights, feasible, max_row_violation)``, as :func:`mixture_program`."""
        return self.members, self.confusions, self.weights, self.feasible, self.max_row_violation


def mixture_program(problem, members, confusions, weights=None, *, max_members: int = MAX_MEMBERS,
                    slack: float | None = None, ceiling: float | None = None):
    """Best mixture of the given members for the true objective, subject to the constraints.

    Parameters
    ----------
    problem : CompiledProblem
    members : list
    confusions : ndarray of shape (T, n_cells, n, n)
    weights : ndarray of shape (T,), optional
        Input mixture (kept by pruning when it is better).
    max_members : int, default 60
        Above this many distinct members the program runs on a candidate subset: the LP's
        support, the support of 300 Frank-Wolfe steps on the simplex of all members (the
        authors' code re-weights this way), and the most recent members.
    slack, ceiling : float, optional
        A maximum of linear pieces: :func:`~goalfit.methods.plugin._common.prune`'s (a method's
        output passes :func:`tie_break`'s).

    Returns
    -------
    members, confusions, weights, feasible (bool), max_row_violation (float)
        As :func:`~goalfit.methods.plugin._common.prune`.
    """
    return master_program(problem, members, confusions, weights, max_members=max_members, slack=slack,
                          ceiling=ceiling).as_tuple()


def master_program(problem, members, confusions, weights=None, *, max_members: int = MAX_MEMBERS,
                   start=None, slack: float | None = None, ceiling: float | None = None) -> Master:
    """:func:`mixture_program` with its multipliers, optionally started from a feasible mixture.

    Parameters
    ----------
    problem, members, confusions, weights, max_members, slack, ceiling
        As :func:`mixture_program`.
    start : tuple (members, confusions, weights), optional
        A mixture of some of ``members`` that meets the constraints (e.g. the previous round's
        of column generation, whose pool gained a member since): SLSQP starts from it (the new
        members at weight 0) instead of the pruning LP's mixture, and it is the fallback, so the
        result is never worse than it. Not read for linear or piecewise-linear objectives
        (their program is the LP).

    Returns
    -------
    Master
    """
    mu, Cu, wu = unique_members(members, np.asarray(confusions), weights)
    exact_lp = problem.objective.kind == "linear" or piecewise_linear(problem.objective)
    if start is not None and not exact_lp:
        sm, sC, sw = start
        sC, sw = np.asarray(sC), np.asarray(sw, float)
        pruned = (list(sm), sC, sw, True, float(problem.max_violation(np.tensordot(sw, sC, axes=1))))
    else:
        pruned = prune_finite(problem, mu, Cu, wu, distinct=True, slack=slack, ceiling=ceiling)
    if exact_lp:
        return Master(*pruned)
    pm, pC, pw, feasible, viol = pruned
    if len(mu) > max_members:
        top = np.argsort(-np.asarray(pw))[: max_members // 4]  # the pruned mixture may be the uniform one
        mu, Cu = _candidates(problem, mu, Cu, [pm[i] for i in top], max_members)
    T = len(mu)
    index = {id(m): t for t, m in enumerate(mu)}
    x0 = np.zeros(T)
    for m, w in zip(pm, pw):
        if id(m) in index:
            x0[index[id(m)]] = w
    x0 = x0 / x0.sum() if x0.sum() > 0 else np.full(T, 1.0 / T)
    flat = Cu.reshape(T, -1)
    # the LP bounds a nonlinear constraint of the mixture by the members' values (convexity):
    # when it finds no feasible mixture, one may still exist, so aim at feasibility
    limit = 0.0 if feasible or problem.nonlinear else viol
    # the variables: the weights, then one free variable per parity block of the rows, whose
    # k (k - 1) pairwise rows SLSQP takes as 2 k (BandedRows: the same feasible weights)
    rows = None if problem.A is None else BandedRows((flat @ problem.A.T - problem.b).T, np.full(problem.A.shape[0], limit),
                                                     row_blocks(problem))
    pad = np.zeros(0 if rows is None else rows.B)
    cons = [{"type": "eq", "fun": lambda z: z[:T].sum() - 1.0, "jac": lambda z: np.r_[np.ones(T), pad]}]
    if rows is not None:
        cons.append(rows.constraint())
    for cc in problem.nonlinear:
        cons.append({
            "type": "ineq",
            "fun": lambda z, cc=cc: limit - (cc.function.value(np.tensordot(z[:T], Cu, axes=1)) - cc.bound),
            "jac": lambda z, cc=cc: -np.r_[flat @ cc.function.gradient(np.tensordot(z[:T], Cu, axes=1)).ravel(), pad],
        })

    def fun(z):
        C = np.tensordot(z[:T], Cu, axes=1)
        return problem.objective.value(C), np.r_[flat @ problem.objective.gradient(C).ravel(), pad]

    box = [(0.0, 1.0)] * T
    res = minimize(fun, x0 if rows is None else rows.start(x0), jac=True, method="SLSQP",
                   bounds=box if rows is None else rows.bounds(box), constraints=cons,
                   options={"maxiter": 300, "ftol": 1e-12})
    # SLSQP often ends at the optimum with "Positive directional derivative for linesearch"
    # (success False): its point is checked below like any other, and kept only when better
    if not np.isfinite(res.x).all() or res.x[:T].max() <= 0:
        return Master(*pruned)
    a = np.clip(res.x[:T], 0, None)
    a /= a.sum()
    C = np.tensordot(a, Cu, axes=1)
    viol_new = problem.max_violation(C)
    now_feasible = not feasible and viol_new <= 1e-9
    if now_feasible or (problem.objective.value(C) < problem.objective.value(np.tensordot(pw, pC, axes=1)) - 1e-12
                        and viol_new <= max(limit, 0.0) + 1e-9):
        m2, C2, w2 = _support(mu, Cu, a)
        return Master(m2, C2, w2, feasible or now_feasible, float(viol_new), _row_multipliers(problem, res, rows))
    return Master(*pruned)


def _row_multipliers(problem, res, rows=None):
    """The multipliers of the rows ``A vec(C) <= b`` in SLSQP's result ``res`` of the program
    above (its constraints: the simplex's equality, then the rows as ``rows``, a
    :class:`~goalfit.methods.plugin.lp.BandedRows`), or None (none reported, no rows, or other
    constraints as well)."""
    mult = getattr(res, "multipliers", None)  # SciPy >= 1.15
    if mult is None or rows is None or not rows.n_rows or problem.nonlinear or len(mult) != 1 + rows.G2.shape[0]:
        return None
    return rows.multipliers(mult[1:])


#: the values of the methods' ``prune_output`` (:func:`final_mixture`)
PRUNE_OUTPUTS = (True, False, "lp")


def check_prune_output(prune_output) -> None:
    """Refuse a ``prune_output`` other than True, False or ``"lp"`` (before a method runs).

    Raises
    ------
    ValueError
        Naming the value and the accepted ones.
    """
    if not any(prune_output is v or (isinstance(v, str) and prune_output == v) for v in PRUNE_OUTPUTS):
        raise ValueError(f"prune_output must be True, False or 'lp', got {prune_output!r}")


def final_mixture(problem, members, confusions, weights, prune_output: bool | str = True,
                  slack: float | None = None, ceiling: float | None = None):
    """The mixture an iterative method returns from its iterates (members and weights).

    With ``prune_output=True``: the LP of §8.2 (:func:`~goalfit.methods.plugin._common.prune`;
    for a nonlinear objective it keeps the iterates' own weights when they are better). When
    that leaves more than :data:`MAX_MEMBERS` members (the iterates' own weights of a strongly
    curved objective such as KL quantification: hundreds of members, each a pass over the rows
    at prediction), the same mixture on at most ``D + 1`` of them (:func:`caratheodory`: every
    value on the sample kept). When more than :data:`MAX_MEMBERS` remain or the objective is
    infinite, the convex program over the iterates (:func:`mixture_program`) if it ranks first
    (feasible, then lower objective). For a maximum of three or more linear pieces (min-max recall
    on three or more classes), among the mixtures within ``slack`` of the best maximum, the
    one whose two largest pieces sum least (:func:`~goalfit.methods.plugin._common.second_largest_lp`).
    Additions to Narasimhan et al.
    ``"lp"``: the LP alone (the paper's practice; a tied maximum kept). ``False``: the iterates'
    own weights.

    Parameters
    ----------
    problem : CompiledProblem
    members : list of length T
    confusions : ndarray of shape (T, *space.shape)
    weights : ndarray of shape (T,)
        Non-negative, not all zero (normalized here).
    prune_output : bool or "lp", default True
    slack, ceiling : float, optional
        How a tied maximum is broken (:func:`tie_break`; not read with ``prune_output="lp"``);
        None: not broken.

    Returns
    -------
    ``(members, confusions, weights, feasible)``: ``S <= T`` distinct members, their confusion
    tensors ``(S, *space.shape)``, weights ``(S,)`` summing to 1; ``feasible``: the mixture meets
    the constraints (to :data:`~goalfit.goals.problem.FEASIBLE_TOL` without ``prune_output``).

    Raises
    ------
    ValueError
        For another ``prune_output`` (:func:`check_prune_output`).
    """
    check_prune_output(prune_output)
    if prune_output:
        out = prune(problem, members, confusions, weights, slack=slack if prune_output is True else None,
                    ceiling=ceiling)
        if prune_output != "lp" and len(out[0]) > MAX_MEMBERS:
            out = caratheodory(problem, *out)
        if prune_output != "lp" and (len(out[0]) > MAX_MEMBERS or not np.isfinite(_value(problem, out))):
            out = min(out, mixture_program(problem, members, confusions, weights, slack=slack, ceiling=ceiling),
                      key=lambda o: _rank(problem, o))
        return out[:4]
    members, confusions, w = unique_members(members, confusions, weights)
    w = w / w.sum()
    return members, confusions, w, bool(problem.max_violation(np.tensordot(w, confusions, axes=1)) <= FEASIBLE_TOL)


def caratheodory(problem, members, confusions, weights, feasible, violation):
    """The same mixture on at most ``D + 1`` of its members (``D`` entries of the confusion
    tensor): Carathéodory's theorem, as a vertex of the LP ``{alpha >= 0, sum alpha = 1,
    sum_t alpha_t C_t = C_bar}`` (HiGHS). The confusion tensor, so every objective and
    constraint value on the sample, is kept (to HiGHS's 1e-7 feasibility tolerance), unlike a
    re-optimization, which moves an interior mixture to the constraints' boundary where its
    held-out violations grow. Returns the input when the vertex moves a value by more than 1e-9.

    Parameters
    ----------
    problem, members, confusions, weights
        As :func:`final_mixture` (``weights`` summing to 1).
    feasible, violation
        The mixture's, as :func:`~goalfit.methods.plugin._common.prune` returns them.

    Returns
    -------
    ``(members, confusions, weights, feasible, violation)`` with at most ``D + 1`` members.
    """
    from .lp import highs_linprog

    T = len(members)
    flat = np.asarray(confusions).reshape(T, -1)
    live = np.ptp(flat, axis=0) > 0  # entries equal in every member hold for any mixture
    target = np.asarray(weights, float) @ flat[:, live]
    res = highs_linprog(np.zeros(T), A_eq=np.vstack([flat[:, live].T, np.ones((1, T))]), b_eq=np.r_[target, 1.0])
    if res.status != 0:
        return members, confusions, weights, feasible, violation
    out = _support(members, np.asarray(confusions), res.x)
    C_old, C_new = np.tensordot(weights, confusions, axes=1), np.tensordot(out[2], out[1], axes=1)
    moved = (abs(problem.objective.value(C_new) - problem.objective.value(C_old)) > 1e-9
             or problem.max_violation(C_new) > max(problem.max_violation(C_old), 0.0) + 1e-9)
    if moved:
        return members, confusions, weights, feasible, violation
    return out + (feasible, float(violation))


def _value(problem, mixture) -> float:
    """The objective of a ``(members, confusions, weights, ...)`` mixture."""
    return float(problem.objective.value(np.tensordot(mixture[2], mixture[1], axes=1)))


def _rank(problem, mixture):
    """Sort key of a mixture: feasible first (by objective), else by its largest violation."""
    return (0.0, _value(problem, mixture)) if mixture[3] else (mixture[4], _value(problem, mixture))


def _candidates(problem, members, confusions, keep_members, size):
    """At most ``size`` members for the convex program (see :func:`mixture_program`)."""
    T = len(members)
    flat = confusions.reshape(T, -1)
    a = np.full(T, 1.0 / T)
    for t in range(300):  # Frank-Wolfe on the simplex: vertices are members
        g = flat @ problem.objective.gradient((a @ flat).reshape(confusions.shape[1:])).ravel()
        k = int(np.argmin(g))
        step = 2.0 / (t + 2)
        a *= 1 - step
        a[k] += step
    keep = {id(m) for m in keep_members}
    chosen = [i for i, m in enumerate(members) if id(m) in keep]
    chosen += [i for i in np.argsort(-a) if a[i] > 1e-9 and i not in chosen][: size // 2]
    rest = [i for i in range(T - 1, -1, -1) if i not in set(chosen)]
    chosen += rest[: max(0, size - len(chosen))]
    chosen = sorted(set(chosen))
    return [members[i] for i in chosen], confusions[chosen]
