"""What the plug-in methods share: results, histories, the row-normalized representation,
simplex projections and the final-mixture LP ("pruning", Narasimhan et al. JMLR 2024, §8.2)."""
from __future__ import annotations

import time
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from ...fit import FitResult, Progress
from ...goals.problem import FEASIBLE_TOL
from .lp import highs_linprog as linprog
from .lp import parity_blocks


class StopReason(StrEnum):
    """Why a plug-in method stopped (:attr:`PluginDetails.stop`); each compares equal to its string.

    * ``EXACT``: solved without iterating (one oracle call for an unconstrained linear objective;
      the linear or convex program over the per-cell ROC hulls, :mod:`~goalfit.methods.plugin.binary_hull`).
    * ``CONVERGED``: the method's optimality test passed within ``tol``: a certified gap
      (:class:`GapStop`; the Frank-Wolfe gap; the ellipsoid's duality gap), no member with a
      negative reduced cost (column generation), the bisection bracket, the polish's gap, or a
      local optimum of the non-convex program over the per-cell ROC hulls (binary macro-F1). It
      is a certificate only when :attr:`PluginDetails.gap` is not None (an exact oracle).
    * ``STALLED``: the stall test of :class:`GapStop`, or the polish's oracle returned no new member.
    * ``MAX_ITER``: the iteration budget ran out.
    * ``COLLAPSED``: the ellipsoid became numerically flat or collapsed, or a supergradient was zero.
    * ``FAILED``: an LP of the method failed.
    * ``BASELINE``: a baseline rule (argmax, balanced, post-shift): the goals are not optimized.
    """

    EXACT = "exact"
    CONVERGED = "converged"
    STALLED = "stalled"
    MAX_ITER = "max_iter"
    COLLAPSED = "collapsed"
    FAILED = "failed"
    BASELINE = "baseline"


@dataclass
class PluginDetails:
    """What a plug-in method certified about its result (``FitResult.details`` of the plug-in family).

    The ``message`` of the result says the same in words; these are the numbers. A lower bound
    and a gap are **certified** when the oracle minimizes linear costs exactly on the sample
    (``oracle.exact``: the threshold oracle, over per-cell threshold rules), or for the exact
    binary program over the ROC hulls of the plug-in rules (the same class of rules): the
    bound is then on the optimum over mixtures of those rules on the training sample. With
    the plug-in oracle (exact only for calibrated probabilities, Narasimhan et al. JMLR 2024,
    Def. 11) they are None.

    Attributes
    ----------
    oracle : str
        The oracle that ran: ``"plugin"``, ``"threshold"``, ``"refit"``, ``"group_blind"``,
        ``"group_blind_threshold"`` or ``"map_reduce"`` (Dask).
    stop : StopReason
        Why the method stopped.
    iterations : int
        The method's iterations: Frank-Wolfe / GDA steps, ellipsoid cuts, pricing rounds of
        column generation, bisection steps (with a coarse-to-fine run: the coarse run's); 0
        when solved without iterating (``EXACT``, ``BASELINE``).
    tol : float or None
        The tolerance the stopping test used (objective units; column generation's reduced
        costs are relative to ``max(1, |master optimum|)``); None for the baselines.
    lower_bound : float or None
        A certified lower bound on the optimum of the training problem (objective units): the
        best Lagrangian bound of :func:`lagrangian_price` (the Frank-Wolfe duality gap of Jaggi,
        ICML 2013, Eq. 2, with the constraints priced in; weak LP duality for column
        generation), the ellipsoid's best dual value (Alg. 3 / 7), or the largest bisection
        level ``gamma`` at which the exact oracle found no classifier with ``psi <= gamma``
        (Lemma 25). None when not certified.
    gap : float or None
        ``psi(returned mixture) - lower_bound`` when the mixture meets the constraints and the
        bound is certified: the returned classifier is at most ``gap`` above the optimum on the
        training sample (up to the solvers' round-off). None otherwise.
    coarse_subsample : int or None
        Rows of the coarse run of a coarse-to-fine solve
        (:mod:`~goalfit.methods.plugin.coarse_to_fine`); None without one.
    polish_rounds : int or None
        Oracle calls of the fully-corrective polish on the full sample after a coarse run.
    """

    oracle: str
    stop: StopReason
    iterations: int
    tol: float | None = None
    lower_bound: float | None = None
    gap: float | None = None
    coarse_subsample: int | None = None
    polish_rounds: int | None = None


def piecewise_linear(objective) -> bool:
    """Whether a compiled objective is a convex maximum of linear pieces (min-max recall): it has
    ``coefs`` and ``consts`` (:class:`~goalfit.goals.functions.MaxOfLinear`)."""
    return objective.kind == "convex" and getattr(objective, "coefs", None) is not None


def is_exact(oracle) -> bool:
    """Whether ``oracle`` minimizes linear costs exactly on its sample (its bounds are certified)."""
    return bool(getattr(oracle, "exact", False))


def certified_gap(problem, result) -> float | None:
    """``psi(result's mixture) - details.lower_bound`` for a feasible result with a certified bound, else None."""
    lower = result.details.lower_bound
    if lower is None or not result.feasible:
        return None
    return float(problem.objective.value(result.confusion)) - lower


def plugin_result(problem, oracle, members, weights, confusions, method: str, history, feasible, message: str, *,
                  stop, iterations: int, tol=None, lower_bound=None, certified=None, n_oracle_calls=None,
                  **extra) -> FitResult:
    """A plug-in method's :class:`FitResult` with its :class:`PluginDetails`.

    Parameters
    ----------
    problem : CompiledProblem
    oracle : linear minimization oracle
        The oracle the method ran on (its ``name``, ``exact`` and, by default, ``n_calls``).
    members, weights, confusions, method, history, feasible, message
        As :class:`FitResult`.
    stop : StopReason or str
    iterations : int
    tol : float, optional
    lower_bound : float, optional
        The method's best lower bound on the optimum (objective units); kept only when
        ``certified`` and finite.
    certified : bool, optional
        Whether ``lower_bound`` is a certified bound; default :func:`is_exact` of ``oracle``.
    n_oracle_calls : int, optional
        Default ``oracle.n_calls``.
    **extra
        Other fields of :class:`PluginDetails` (``coarse_subsample``, ``polish_rounds``).

    Returns
    -------
    FitResult
        With ``details.gap`` from :func:`certified_gap`.
    """
    certified = is_exact(oracle) if certified is None else certified
    keep = certified and lower_bound is not None and bool(np.isfinite(lower_bound))
    details = PluginDetails(getattr(oracle, "name", type(oracle).__name__), StopReason(stop), int(iterations),
                            None if tol is None else float(tol), float(lower_bound) if keep else None, **extra)
    result = FitResult(members, weights, confusions, method, history,
                       oracle.n_calls if n_oracle_calls is None else n_oracle_calls, feasible, message,
                       details=details)
    details.gap = certified_gap(problem, result)
    return result


class Recorder:
    """Collects the per-iteration history of a method.

    ``callback`` is called with the iteration number after each iteration; a
    :class:`~goalfit.fit.Progress` there gets the objective and the max violation as well
    (when it is due to print).
    """

    def __init__(self, problem, oracle, every: int = 1, callback=None):
        self.problem, self.oracle, self.every = problem, oracle, max(1, int(every))
        self.start = time.perf_counter()
        self.rows: list[dict] = []
        self.callback = callback

    def __call__(self, iteration: int, C, force: bool = False):
        if force or iteration % self.every == 0:
            self.rows.append({
                "iteration": int(iteration),
                "oracle_calls": int(self.oracle.n_calls),
                "objective": float(self.problem.objective.value(C)),
                "max_violation": float(self.problem.max_violation(C)),
                "seconds": time.perf_counter() - self.start,
            })
        if isinstance(self.callback, Progress):
            if self.callback.due():
                self.callback.update(iteration, objective=float(self.problem.objective.value(C)),
                                     max_violation=float(self.problem.max_violation(C)))
        elif self.callback is not None:
            self.callback(iteration)


class RowNormalizer:
    """The row-normalized representation ``R = C / row_mass`` (each (cell, class) row sums to 1).

    Generalizes the paper's normalized diagonal (§7.2, §8.2): entries are conditional rates in
    [0, 1] whatever the group sizes, so step sizes and penalties have one scale. A linear
    objective ``<lam, R>`` is the cost ``lam / row_mass`` on ``C`` (the adjoint). Rows of zero
    mass are pinned to 0.
    """

    def __init__(self, space):
        self.mass = space.row_mass[:, :, None]
        self.live = np.broadcast_to(self.mass > 0, space.shape)
        self.safe = np.where(self.mass > 0, self.mass, 1.0)

    def to_rates(self, C):
        return np.where(self.live, C / self.safe, 0.0)

    def to_confusion(self, R):
        return R * self.mass

    def cost(self, lam):
        """Cost tensor on C for the linear function ``<lam, R>``."""
        return np.where(self.live, lam / self.safe, 0.0)

    def grad_to_rates(self, g):
        """Gradient w.r.t. R of a function given by its gradient w.r.t. C."""
        return g * self.mass

    def project(self, R):
        """Euclidean projection of every row onto the probability simplex."""
        shape = R.shape
        flat = project_simplex_rows(R.reshape(-1, shape[-1]))
        return np.where(self.live, flat.reshape(shape), 0.0)


def project_simplex_rows(V):
    """Project each row of ``V`` (shape (m, n)) onto the probability simplex (sort-based)."""
    m, n = V.shape
    U = -np.sort(-V, axis=1)
    css = np.cumsum(U, axis=1) - 1.0
    ind = np.arange(1, n + 1)
    cond = U - css / ind > 0
    rho = n - 1 - np.argmax(cond[:, ::-1], axis=1)
    theta = css[np.arange(m), rho] / (rho + 1)
    return np.maximum(V - theta[:, None], 0.0)


def in_pool(C, confusions) -> bool:
    """Whether the confusion tensor ``C`` (shape ``space.shape``) equals one of ``confusions``
    (an iterable of tensors of that shape) exactly: a priced member the column generations
    already hold adds nothing to their LPs."""
    return any(np.array_equal(C, Ck) for Ck in confusions)


def unique_members(members, confusions, weights=None):
    """Merge members with identical confusion tensors on the sample (weights add up).

    Tensors are equal when they agree to 12 decimals (-0.0 and 0.0 alike). The members are kept
    in the order they first appear (each merged group at its first member), the order in which
    the method found them; the groups come from a dictionary keyed by each rounded tensor's bytes.

    Parameters
    ----------
    members : list of length n
    confusions : array-like of shape (n, *space.shape)
    weights : array-like of shape (n,), optional
        Default: one per member.

    Returns
    -------
    members : list of length u
    confusions : ndarray of shape (u, *space.shape)
    weights : ndarray of shape (u,)
        The summed weights of each group.
    """
    confusions = np.asarray(confusions)
    merge = MemberMerge()
    merge.extend(confusions)
    return merge.merged(members, confusions, weights)


class MemberMerge:
    """:func:`unique_members` of a list that only grows, kept up to date one member at a time.

    A stopping test that merges the members so far at each of its checks would otherwise key
    every member again at every check; :meth:`extend` keys only the new ones, and
    :meth:`merged` returns exactly what :func:`unique_members` returns for the list so far.
    """

    def __init__(self):
        self.group: dict[bytes, int] = {}
        self.inverse: list[int] = []  # the group of each member so far
        self.first: list[int] = []  # each group's first member

    def __len__(self) -> int:
        return len(self.inverse)

    def extend(self, confusions) -> None:
        """Key the members that follow the ones so far (``confusions``: their tensors)."""
        confusions = np.asarray(confusions)
        n = len(confusions)
        if not n:
            return
        flat = np.round(confusions.reshape(n, -1).astype(np.float64), 12)
        flat += 0.0  # -0.0 and 0.0 are one value
        for i, row in enumerate(flat, start=len(self.inverse)):
            g = self.group.setdefault(row.tobytes(), len(self.group))
            if g == len(self.first):
                self.first.append(i)
            self.inverse.append(g)

    def copy(self) -> MemberMerge:
        other = MemberMerge()
        other.group, other.inverse, other.first = dict(self.group), list(self.inverse), list(self.first)
        return other

    def merged(self, members, confusions, weights=None):
        """:func:`unique_members` ``(members, confusions, weights)`` of the members keyed so far
        (``members`` and ``confusions`` index them: ``len(self)`` of each)."""
        n = len(self.inverse)
        w = np.ones(n) if weights is None else np.asarray(weights, float)
        merged_w = np.bincount(np.asarray(self.inverse, dtype=np.intp), weights=w,
                               minlength=len(self.first)).astype(float)
        first = np.asarray(self.first, dtype=np.intp)
        C = (np.asarray(confusions)[first] if isinstance(confusions, np.ndarray) or not self.first
             else np.stack([np.asarray(confusions[i]) for i in self.first]))
        return [members[i] for i in self.first], C, merged_w


def prune(problem, members, confusions, weights=None, tol: float = 0.0, warm=None, distinct: bool = False,
          slack: float | None = None, ceiling: float | None = None):
    """Re-weight candidate members so the mixture meets the constraints (§8.2, LP on HiGHS).

    Solves ``min_alpha sum_t alpha_t psi(C_t)`` s.t. ``sum_t alpha_t (A C_t - b) <= 0``,
    ``alpha`` in the simplex (exact for linear ``psi``, a convex upper bound otherwise; the
    paper's "(1/T)" is a typo). A maximum of linear pieces (``coefs``/``consts``, e.g. min-max
    recall) is minimized exactly by its epigraph LP instead. Nonlinear convex constraints enter through their values at the
    members (conservative by convexity). For a nonlinear objective the input mixture (``weights``,
    default uniform) is kept instead when it is feasible and truly better, so pruning never
    makes a method's output worse. When no mixture is feasible, returns the
    **least-violating** mixture: ``min s`` s.t. every row ``<= s``, then the best objective at
    that violation. When the LP fails although a mixture meets the rows (every member's value
    infinite, as for KL quantification of rules that each never predict some class, while
    their mixture predicts every class), the input mixture is kept if it meets them, else that
    feasible least-violation mixture, and ``feasible`` says which.

    ``warm`` (optional, members): columns to start the LP from (:func:`_members_lp`: column
    generation over the others, the same optimum at a fraction of the cost when they hold most
    of the support, e.g. the previous stopping check's re-fit members). Without it, a pool of
    more than :data:`PRICED_ABOVE` distinct members starts from its :data:`PRICED_START`
    heaviest (``weights``). Every LP here (the members' LP, the least violation, min-max
    recall's epigraph) then prices the others in: the same optimal value as over every member,
    though a degenerate LP can end at another optimal vertex.

    ``distinct=True``: the members are already merged (:func:`unique_members`' output), so they
    are not merged again.

    ``slack`` (a maximum of linear pieces, a method's output): among the mixtures whose maximum
    is within ``slack`` of the epigraph LP's, the one whose two largest pieces sum least
    (:func:`second_largest_lp`; the methods pass
    :func:`~goalfit.methods.plugin.mixture.tie_break`'s), and at most ``ceiling`` (a certified
    lower bound plus the method's ``tol``: a certified gap stays within ``tol``). None: the
    epigraph LP's vertex.

    Returns
    -------
    members, confusions, weights, feasible (bool), max_row_violation (float)
    """
    start = None if warm is None else {id(m) for m in warm}
    if distinct:
        confusions = np.asarray(confusions)
        w0 = np.ones(len(members)) if weights is None else np.asarray(weights, float)
    else:
        members, confusions, w0 = unique_members(members, confusions, weights)
    w0 = w0 / w0.sum()
    T = len(members)
    psi = np.asarray(problem.objective.values(confusions), dtype=float)
    rows = []
    if problem.A is not None:
        rows.append(confusions.reshape(T, -1) @ problem.A.T - problem.b)  # (T, K)
    for cc in problem.nonlinear:
        rows.append((np.asarray(cc.function.values(confusions), dtype=float) - cc.bound)[:, None])
    G = np.hstack(rows).T if rows else np.zeros((0, T))  # (K, T)
    K = G.shape[0]
    blocks = row_blocks(problem)  # the rows of A come first in G

    def true_value(x):
        return problem.objective.value(np.tensordot(x, confusions, axes=1))

    def best_of(x_lp, limit, epigraph_x=False):
        # the LP optimizes an upper bound of a nonlinear psi: keep the input mixture when it is
        # allowed and truly better (the epigraph LP's mixture is exact, and with ``slack`` a
        # higher maximum is chosen on purpose)
        if epigraph_x:
            return x_lp
        if K == 0 or (G @ w0).max() <= limit:
            if true_value(w0) < true_value(x_lp) - 1e-12:
                return w0
        return x_lp

    # a max of linear pieces (min-max recall, a disparity as objective) is minimized exactly over
    # the mixtures by its epigraph LP (the paper's final step for min-max, §5.3 [code]); the LP on
    # the members' values would only minimize an upper bound
    M = problem.objective.coefs @ confusions.reshape(T, -1).T if piecewise_linear(problem.objective) else None
    if start is not None:
        start_mask = np.array([id(m) in start for m in members])
    elif T > PRICED_ABOVE and (K or M is not None):  # an LP to solve
        # the heaviest members of the input mixture start the column generation (a method's
        # latest iterates, near its output)
        start_mask = np.zeros(T, bool)
        start_mask[np.argsort(-w0, kind="stable")[:PRICED_START]] = True
    else:
        start_mask = None

    def epigraph(limit, start=None):
        assert M is not None  # called for an objective with linear pieces only
        blocks = row_blocks(problem, len(M))
        r = epigraph_lp(M, problem.objective.consts, G, limit, start, blocks=blocks)
        if r.status != 0:
            return None
        level = None if slack is None else float(r.x[T]) + slack
        if level is not None and ceiling is not None:
            level = min(level, ceiling)
        if level is None or level <= float(r.x[T]):
            return r.x[:T]
        refined = second_largest_lp(M, problem.objective.consts, G, limit, level, blocks=blocks)
        return r.x[:T] if refined is None else refined

    if K == 0:
        x = np.zeros(T)
        x[int(np.argmin(psi))] = 1.0
        x_epi = None if M is None else epigraph(0.0, start_mask)
        x = x if x_epi is None else x_epi
        return _support(members, confusions, best_of(x, 0.0, x_epi is not None)) + (True, 0.0)
    # a maximum of linear pieces: its epigraph LP is the re-fit and says whether the rows can be met
    # (the same constraints as the LP on the members' values, which it replaces)
    refit: np.ndarray | None
    found = None  # the least violation, when the members' LP computed it
    if M is not None:
        refit = epigraph(tol, start_mask)
    else:
        res = _members_lp(psi, G, tol, start_mask, blocks)
        refit, found = (res.x if res.status == 0 else None), res.least_violation
    if refit is not None:
        x = best_of(refit, tol + 1e-12, M is not None)
        return _support(members, confusions, x) + (True, float(max(0.0, (G @ x).max())))
    # least violation: the epigraph LP of the largest row violation (the rows as its pieces)
    s, x_viol = found if found is not None else least_violation_lp(G, start_mask, blocks)
    limit = s + max(1e-9, 1e-9 * abs(s))
    near = None if start_mask is None else start_mask | (x_viol > 0)
    res2 = _members_lp(psi, G, limit, near, blocks)
    x = res2.x if res2.status == 0 else x_viol
    x_epi = epigraph(limit, near) if M is not None and res2.status == 0 else None
    x = x if x_epi is None else x_epi
    # s <= 0: a mixture meets the rows and the LP on the members' values failed for another
    # reason (every member's value infinite, e.g. KL quantification of rules that each miss a
    # class): the input mixture competes at the rows' own limit, and feasibility is measured
    x = best_of(x, max(limit, tol), x_epi is not None)
    viol = float((G @ x).max())
    return _support(members, confusions, x) + (viol <= tol + 1e-12, viol)


#: a pool of more members than this is re-weighted by column generation (:func:`_priced`) from
#: its heaviest members: the same optimum as the LP over every member, at a fraction of its cost
#: (a coarse run's 1000 iterates against a few hundred constraint rows: a third of the time)
PRICED_ABOVE = 200
#: ... starting from this many of them
PRICED_START = 50

#: the last problem rows' parity blocks (:func:`row_blocks`): ``(A, b, blocks)``
_LAST_BLOCKS: tuple = (None, None, [])


def row_blocks(problem, offset: int = 0) -> list:
    """:func:`~goalfit.methods.plugin.lp.parity_blocks` of the problem's rows ``A vec(C) <= b``
    (shifted by ``offset`` rows): the LPs over mixtures of members state each block of ``k``
    rates as ``2 k`` rows instead of ``k (k - 1)`` (:func:`~goalfit.methods.plugin.lp.highs_linprog`'s
    ``blocks``); only blocks of at least 4 rates (at 3, ``2 k = k (k - 1)``: nothing to gain). The
    last problem's blocks are kept (a fit solves many such LPs)."""
    global _LAST_BLOCKS
    A, b = problem.A, problem.b
    if A is None or not A.shape[0]:
        return []
    last = _LAST_BLOCKS
    if last[0] is not A or last[1] is not b:
        last = (A, b, [P for P in parity_blocks(A, b)[1] if len(P) >= 4])
        _LAST_BLOCKS = last
    return [np.where(P >= 0, P + offset, -1) for P in last[2]] if offset else last[2]  # -1: the diagonal


def _priced(solve, reduced, start, rows, scale):
    """Column generation over an explicit list of ``T`` columns (Dantzig-Wolfe pricing).

    ``solve(S)`` solves the LP restricted to the columns of the bool mask ``S`` (a
    :func:`highs_linprog` result, the columns first in ``x``); ``reduced(res)`` gives every
    column's reduced cost under its duals. Columns of reduced cost below ``-1e-9 * scale`` (the
    LP's cost scale, e.g. the largest finite cost) join, the most negative ones first (at most ``max(8, rows + 1)`` a round: a basis of the restricted LP,
    ``rows`` rows and the simplex's, has no more columns), until none is left: the optimum is
    the full LP's.

    Returns
    -------
    ``(res, S)``: the last restricted result (``status != 0``: the restricted LP failed, e.g.
    infeasible) and its columns; ``res.x`` keeps the restricted layout.
    """
    S = np.asarray(start, bool).copy()
    while True:
        res = solve(S)
        if res.status != 0:
            return res, S
        r = np.asarray(reduced(res), float)
        r[S] = 0.0
        enter = np.flatnonzero(r < -1e-9 * scale)
        if not enter.size:
            return res, S
        m = max(8, rows + 1)
        S[enter if enter.size <= m else enter[np.argpartition(r[enter], m)[:m]]] = True


def _finite_scale(values) -> float:
    """``max(1, largest finite |value|)``: the cost scale of a pricing tolerance."""
    v = np.abs(np.asarray(values, float))
    v = v[np.isfinite(v)]
    return max(1.0, float(v.max())) if v.size else 1.0


def _spread(x_S, S):
    """Weights over the restricted columns ``S`` spread back onto all of them (zeros elsewhere)."""
    x = np.zeros(S.size)
    x[S] = x_S[: int(S.sum())]
    return x


def _members_lp(psi, G, limit, start=None, blocks=None):
    """``min psi . alpha`` s.t. ``G alpha <= limit``, ``alpha`` in the simplex (the LP of :func:`prune`).

    With ``start`` (bool mask of the columns), by column generation (:func:`_priced`) from the
    started columns, so the optimum is the full LP's; when the restricted LP is infeasible, the
    least violation over every column decides (:func:`least_violation_lp`, priced too): above
    ``limit`` the LP is infeasible (``status=2``), else it restarts from that mixture's support.
    ``blocks``: parity blocks of the rows ``G`` (:func:`row_blocks`), solved in their banded form.

    Returns
    -------
    types.SimpleNamespace
        ``status`` (0: optimal) and ``x`` of shape (T,), as :func:`highs_linprog`, and
        ``least_violation``: :func:`least_violation_lp`'s ``(s, alpha)`` when the pricing
        computed it to show the LP infeasible, else None.
    """
    from types import SimpleNamespace

    T, K = len(psi), G.shape[0]

    def solve(S):
        return linprog(psi[S], A_ub=G[:, S], b_ub=np.full(K, limit), A_eq=np.ones((1, int(S.sum()))),
                       b_eq=[1.0], bounds=(0, None), method="highs", blocks=blocks)

    full = np.ones(T, bool)
    if start is None or start.all() or not start.any():
        res = solve(full)
        return SimpleNamespace(status=res.status, x=res.x, least_violation=None)

    def reduced(res):  # psi - G^T y - y0 (scipy's marginals: d fun / d b, y <= 0)
        return psi - np.asarray(res.ineqlin.marginals, float) @ G - float(res.eqlin.marginals[0])

    scale = _finite_scale(psi)
    res, S = _priced(solve, reduced, start, K, scale)
    if res.status != 0:
        s, x_viol = least_violation_lp(G, start, blocks)
        if s > limit + 1e-9 * max(1.0, abs(limit)):  # clearly above: no mixture meets the rows
            return SimpleNamespace(status=2, x=None, least_violation=(s, x_viol))
        res, S = _priced(solve, reduced, start | (x_viol > 0), K, scale)
        if res.status != 0:  # at the limit up to rounding: the full LP decides, as without a start
            res = solve(full)
            return SimpleNamespace(status=res.status, x=res.x, least_violation=None)
    return SimpleNamespace(status=0, x=_spread(res.x, S), least_violation=None)


def least_violation_lp(G, start=None, blocks=None):
    """The mixture of ``T`` members whose largest row ``G alpha`` is least: ``(s, alpha)``.

    :func:`epigraph_lp` with the rows as its pieces (priced from ``start`` when given).

    Parameters
    ----------
    G : ndarray of shape (K, T), ``K >= 1``
        Each row's value at each member.
    start : ndarray of bool, shape (T,), optional
    blocks : list, optional
        Parity blocks of the rows (:func:`row_blocks`).

    Returns
    -------
    s : float
        The least largest row.
    alpha : ndarray of shape (T,)
        A mixture that attains it (in the simplex).
    """
    K, T = G.shape
    res = epigraph_lp(G, np.zeros(K), np.zeros((0, T)), 0.0, start, blocks)
    return float(res.x[-1]), res.x[:T]


def prune_finite(problem, members, confusions, weights=None, warm=None, distinct: bool = False,
                 slack: float | None = None, ceiling: float | None = None):
    """:func:`prune` over the members whose objective and constraint values are finite.

    A member with an infinite value (e.g. KL quantification of a rule that never predicts some
    class, such as the ellipsoid's first member, the answer to the zero cost) cannot carry
    weight in the LP, whose coefficients must be finite; it stays a candidate of the convex
    program, where mixing it can be finite and optimal. When no member is finite the input
    mixture is returned as is. ``distinct``, ``slack`` and ``ceiling``: as :func:`prune`'s.
    """
    weights = np.ones(len(members)) if weights is None else np.asarray(weights, float)
    confusions = np.asarray(confusions)
    ok = np.isfinite(np.asarray(problem.objective.values(confusions), dtype=float))
    for cc in problem.nonlinear:
        ok &= np.isfinite(np.asarray(cc.function.values(confusions), dtype=float))
    if ok.all():
        return prune(problem, members, confusions, weights, warm=warm, distinct=distinct, slack=slack,
                     ceiling=ceiling)
    if ok.any():
        return prune(problem, [m for m, k in zip(members, ok) if k], confusions[ok], weights[ok], warm=warm,
                     distinct=distinct, slack=slack, ceiling=ceiling)
    w = weights / weights.sum()
    viol = problem.max_violation(np.tensordot(w, confusions, axes=1))
    return list(members), confusions, w, bool(viol <= 1e-9), float(viol)


def _support(members, confusions, weights, eps: float = 1e-10):
    w = np.clip(np.asarray(weights, float), 0, None)
    keep = w > eps
    w = w[keep] / w[keep].sum()
    return [m for m, k in zip(members, keep) if k], confusions[keep], w


def frank_wolfe_weights(steps) -> np.ndarray:
    """Mixture weights of the Frank-Wolfe iterates from their step sizes, in O(T) at the end.

    The iterate after ``T`` steps ``C = (1 - g_T) C + g_T C~_T`` is ``sum_t w_t C~_t`` with
    ``w_t = g_t prod_{k > t} (1 - g_k)``; keeping the steps and multiplying out once replaces
    rescaling every previous weight at each iteration (O(T^2)).
    """
    g = np.asarray(steps, float)
    keep = np.append(np.cumprod((1.0 - g[1:])[::-1])[::-1], 1.0)
    return g * keep


@dataclass
class Certificate:
    """A stopping test's verdict on the mixture of the members so far (see :class:`GapStop`)."""

    iteration: int
    upper: float
    lower: float
    feasible: bool
    violation: float

    @property
    def gap(self) -> float:
        return self.upper - self.lower


class GapStop:
    """Stopping rule shared by the plug-in methods: a certified gap, or a documented stall test.

    At checks spaced geometrically (every ``max(check_every, t // 4)`` iterations, so O(log T)
    checks), the members so far are re-weighted by the LP of §8.2 (:func:`prune`): its mixture
    ``C_bar`` is what the method would return, with objective ``U = psi(C_bar)`` and largest
    constraint violation ``v``. From ``min_iter`` on, the LP starts from the previous check's
    support and prices the other members in by their reduced costs (:func:`_members_lp`: the
    same optimum, small LPs).

    * **Lower bound** (convex objective with a gradient, polyhedral constraints ``A c <= b``):
      with ``g = grad psi(C_bar)`` and multipliers ``mu >= 0`` (the duals of
      ``min_alpha <g, sum alpha_t C_t>`` s.t. ``A sum alpha_t C_t <= b`` over the members),
      convexity and weak duality give, for every classifier meeting the constraints,
      ``psi(C) >= L = psi(C_bar) + min_C' [<g, C' - C_bar> + mu (A C' - b)]``; the inner
      minimum is one oracle call with cost ``g + A^T mu`` (the Frank-Wolfe duality gap of
      Jaggi, ICML 2013, Eq. 2, extended to the constraints by their multipliers, as the
      reduced cost of column generation), whose member joins the candidates. ``L`` is a certified lower bound when the oracle
      minimizes linear costs exactly on the sample (``oracle.exact``: the threshold oracle,
      over threshold rules); the method then stops once ``C_bar`` meets the constraints and
      ``U - L <= tol``. A maximum of linear pieces (min-max recall) has no gradient at its ties,
      where its optimum usually lies: it is priced by its epigraph LP's duals instead
      (:func:`epigraph_price`, the same bound). The plug-in oracle minimizes the cost expected
      under the probability estimates, not on the sample, so there ``L`` is no bound (it can
      exceed ``U``): it is not computed (no pricing LP, no oracle call; but see
      ``price_inexact``), and only the stall test applies, so a run that does not stall returns
      exactly the ``tol=0`` result.
    * **Stall test**: at a check ``t >= min_iter``, with ``t'`` the latest earlier check at or
      before ``t / 4``, stop when the mixture meets the constraints, ``|U(t') - U(t)| < tol`` and
      ``v(t') - v(t) < tol``: quadrupling the number of iterations changed the re-fit by less than
      ``tol``. Two sided because the re-fit is not monotone in ``t`` (for a nonlinear ``psi`` the
      LP minimizes the upper bound ``sum_t alpha_t psi(C_t)``, so more members can give a mixture
      whose true value is worse): a lucky early re-fit followed by worse ones is no plateau (SplitFW
      s.t. coverage on the Narasimhan tables' abalone split 8: 0.830 at 40 iterations, 0.840 at
      187, where the one-sided test stopped, 0.770 after the 10,000-call budget). While no
      mixture is feasible the run goes on (infeasible phases plateau, then jump), so an
      infeasible goal runs the full budget and returns the least-violating mixture.
      Frank-Wolfe-type methods gain ``O(1/t)``, so what further iterations could gain is of the
      order of ``tol``.
    * **Agreement** (``agree=True``; GDA and ConGDA): a stall also needs the method's own
      mixture (its weights; the uniform average of GDA's iterates) within ``tol`` of the re-fit,
      in objective and violation. GDA's re-fit plateaus for more than a quadrupling and then
      improves again when a rare useful member turns up, while its own average, the iterate its
      guarantee is about, stays well above. Without it the stall test stopped GDA runs early,
      well above their full-budget objective; with it GDA and ConGDA run their budget on the
      Narasimhan tables and stop early when the average has converged (small calibrated
      problems); see benchmarks/README.md, section "Measurements behind the library's choices".

    Parameters
    ----------
    problem : CompiledProblem
    oracle : linear minimization oracle
    tol : float
        ``0`` disables the rule (the paper's fixed budget).
    check_every : int, default 10
        Smallest spacing of the checks (iterations).
    min_iter : int, default 100
        No stall stop before this many iterations. Neither default was tuned on its own: they
        are validated together with the stall test by ``benchmarks/stopping_check.py`` (every
        default fit of the Narasimhan tables within 1e-3 of its ``tol=0`` fit).
    lower_bound : bool, default True
        Compute the lower bound ``L`` above where the problem allows it; ``False`` for a method
        with its own bound (the ellipsoid's dual value).
    agree : bool, default False
        Require the method's own mixture to agree with the re-fit for a stall (see above).
    price_inexact : bool, default False
        With an inexact oracle, still make the pricing call at each check of a smooth objective
        (no bound comes of it: it is not reported) and let its member join the re-fit, as one
        more Frank-Wolfe vertex. The unconstrained Frank-Wolfe sets it: without those members
        its stall test stops higher in training objective on the Narasimhan tables
        (benchmarks/README.md, "Paper benchmarks before and after the fit template").
    """

    def __init__(self, problem, oracle, tol, check_every=10, min_iter=100, lower_bound=True, agree=False,
                 price_inexact=False):
        self.problem, self.oracle, self.tol = problem, oracle, float(tol)
        self.check_every, self.min_iter, self.agree = max(1, int(check_every)), int(min_iter), bool(agree)
        self.next_check = self.check_every
        obj = problem.objective
        self.exact = is_exact(oracle)
        # with an inexact oracle the bound is no bound and cannot stop the run (only the stall
        # test can), and its pricing LP over all the members so far and its oracle call cost more
        # than the check's re-fit: no bound, no extra calls
        # a max of linear pieces (min-max recall) is priced with its epigraph LP's duals
        # (epigraph_price): one piece's gradient would bound it only far from a tie
        smooth = getattr(obj, "smooth", False)
        self.bounded = (lower_bound and obj.kind in ("linear", "convex") and not problem.nonlinear
                        and ((self.exact and (smooth or piecewise_linear(obj)))
                             or (smooth and bool(price_inexact))))
        self.trail: list[Certificate] = []
        self.extra_members: list = []
        self.extra_confusions: list = []
        #: the latest check's re-fit members (the next check's LP starts from them; the final
        #: pruning does not, so a run that does not stall returns exactly the ``tol=0`` mixture)
        self.support: list = []
        #: why :meth:`check` said stop (None while it has not)
        self.reason: StopReason | None = None
        self._merge = MemberMerge()  # the method's members so far, merged as they arrive

    @property
    def lower_bound(self) -> float | None:
        """The best lower bound ``L`` of the checks so far (certified with an exact oracle), or None."""
        finite = [c.lower for c in self.trail if np.isfinite(c.lower)]
        return max(finite) if finite else None

    def due(self, t: int) -> bool:
        return self.tol > 0 and t >= self.next_check

    def check(self, t, members, confusions, weights=None):
        """Test the members so far; returns the :class:`Certificate` and the reason to stop (or None)."""
        self.next_check = t + max(self.check_every, t // 4)
        problem = self.problem
        # duplicates merged first: prune does the same, but the per-member objective values of
        # prune_finite would otherwise cost O(t) Python calls per check (GDA repeats members)
        allm, allC, w = self._merged(members, confusions, weights)
        # from min_iter on, the re-fit starts from the previous check's support, the other members
        # priced in by their reduced costs (column generation, the same optimum): small LPs instead
        # of one over all the members. The early checks (few members, cheap) solve the full LP as
        # the final pruning does: where the LP has several optima (members of equal value, e.g.
        # early G-mean members) the two would return different re-fits of equal LP value, and the
        # early checks are the stall test's references
        warm = self.support + self.extra_members if t >= self.min_iter else None
        support, Cm, wm, feasible, _ = prune_finite(problem, allm, allC, w, warm=warm, distinct=True)
        self.support = list(support)
        C_bar = np.tensordot(wm, Cm, axes=1)
        upper = float(problem.objective.value(C_bar))
        viol = float(problem.max_violation(C_bar))
        lower = -np.inf
        if self.bounded and feasible:
            lower = self._lower_bound(C_bar, upper, allC)
        cert = Certificate(int(t), upper, lower, bool(feasible), viol)
        self.trail.append(cert)
        if self.exact and cert.feasible and cert.gap <= self.tol:
            self.reason = StopReason.CONVERGED
            return cert, f"converged: certified gap {cert.gap:.2e} <= tol={self.tol:g} after {t} iterations"
        if t >= self.min_iter:
            old = [c for c in self.trail[:-1] if c.iteration <= t / 4]
            # only a feasible mixture can stall: infeasible phases plateau, then jump (ConGDA); the
            # re-fit is not monotone in t (the LP is linearized at the input mixture), so a stall is a
            # change of less than tol either way: a re-fit worse than an earlier one is no plateau
            stalled = (cert.feasible and old and abs(old[-1].upper - upper) < self.tol
                       and old[-1].violation - viol < self.tol)
            if stalled and self._level(allC, upper):
                # every member has the re-fit's value (e.g. H-mean's worst, 1, while each member
                # leaves some class unpredicted): the re-fit, a mixture weighted by the members'
                # own values, cannot show progress there, so a plateau of it is no stall
                stalled = False
            if stalled and self.agree:
                stalled = self._agrees(members, confusions, weights, upper, viol)
            if stalled:
                self.reason = StopReason.STALLED
                return cert, (f"stalled: iterations {old[-1].iteration}-{t} changed the objective and the "
                              f"violation by less than tol={self.tol:g}"
                              + (" and the method's own mixture agrees with the re-fit" if self.agree else ""))
        return cert, None

    def _level(self, confusions, upper) -> bool:
        """Whether every member's objective equals ``upper`` to ``tol`` (a level set of members)."""
        values = np.asarray(self.problem.objective.values(confusions), dtype=float)
        return bool(np.isfinite(values).all() and np.abs(values - upper).max() < self.tol)

    def _agrees(self, members, confusions, weights, upper, viol):
        """The method's own mixture (its weights, uniform when ``None``) is within ``tol`` of the re-fit."""
        n = len(members)
        w = np.ones(n) if weights is None else np.asarray(weights, float)[:n]
        C_own = np.tensordot(w / w.sum(), np.asarray(confusions).reshape(n, *self.problem.space.shape), axes=1)
        return (float(self.problem.objective.value(C_own)) - upper < self.tol
                and float(self.problem.max_violation(C_own)) - viol < self.tol)

    def _merged(self, members, confusions, weights=None):
        """:func:`unique_members` of :meth:`pool`'s output, keying only the members new since the
        last check (the methods' lists of members only grow)."""
        self._merge.extend(confusions[len(self._merge):len(members)])
        merge, w = self._merge, np.ones(len(members)) if weights is None else np.asarray(weights, float)
        if self.extra_members:  # the pricing calls' members follow the method's, as in pool()
            merge = merge.copy()
            merge.extend(self.extra_confusions)
            members, confusions = list(members) + self.extra_members, list(confusions) + self.extra_confusions
            w = np.concatenate([w, np.zeros(len(self.extra_members))])
        allm, allC, merged_w = merge.merged(members, confusions, w)
        return allm, allC.reshape(len(allm), *self.problem.space.shape), merged_w

    def pool(self, members, confusions, weights=None):
        """The method's members followed by the members the lower bound's oracle calls added.

        Returns ``(members, confusions, weights)``: a list, an array of shape
        ``(n_members, *space.shape)`` and weights of shape ``(n_members,)`` (the given ones,
        uniform ones when ``None``, then zeros for the added members).
        """
        shape = self.problem.space.shape
        allC = np.concatenate([np.asarray(confusions).reshape(-1, *shape),
                               np.asarray(self.extra_confusions).reshape(-1, *shape)])
        w = np.ones(len(members)) if weights is None else np.asarray(weights, float)
        return list(members) + self.extra_members, allC, np.concatenate([w, np.zeros(len(self.extra_members))])

    def _lower_bound(self, C_bar, upper, confusions):
        if getattr(self.problem.objective, "smooth", False):
            member, Co, lower = lagrangian_price(self.problem, self.oracle, C_bar, upper, confusions)
        else:
            member, Co, lower = epigraph_price(self.problem, self.oracle, confusions)
        if member is None:
            return -np.inf
        self.extra_members.append(member)
        self.extra_confusions.append(Co)
        return lower


def epigraph_lp(M, consts, G, limit=0.0, start=None, blocks=None):
    """The best mixture of ``T`` members for a maximum of linear pieces: the epigraph LP.

    ``min s`` over ``(alpha, s)`` s.t. ``M alpha + consts <= s`` (each piece),
    ``G alpha <= limit`` (each constraint row), ``alpha >= 0``, ``sum alpha = 1`` (Narasimhan et
    al., the final step for min-max objectives, Sec. 5.3).

    Parameters
    ----------
    M : ndarray of shape (P, T)
        Each piece's linear part at each member's confusion tensor.
    consts : ndarray of shape (P,)
        The pieces' constants.
    G : ndarray of shape (K, T)
        Each constraint row's value (``A vec(C) - b``) at each member; ``K`` may be 0.
    limit : float, default 0.0
        The rows' allowance.
    start : ndarray of bool, shape (T,), optional
        Solve by column generation from these columns (:func:`_priced`: the same optimal
        value; the full LP when the restricted one fails, e.g. is infeasible).
    blocks : list, optional
        Parity blocks of the stacked rows ``(M; G)`` (:func:`row_blocks`, the pieces first),
        solved in their banded form (:func:`~goalfit.methods.plugin.lp.highs_linprog`).

    Returns
    -------
    scipy.optimize.OptimizeResult or types.SimpleNamespace
        HiGHS's result: ``x[:T]`` the weights, ``x[T]`` the objective, ``ineqlin.marginals`` the
        duals (the ``P`` pieces, then the ``K`` rows); ``status != 0`` when infeasible.
    """
    P, T = M.shape
    K = len(G)

    def solve(S):
        n = int(S.sum())
        c = np.zeros(n + 1)
        c[-1] = 1.0
        A_ub = np.vstack([np.hstack([M[:, S], -np.ones((P, 1))]), np.hstack([G[:, S], np.zeros((K, 1))])])
        b_ub = np.concatenate([-np.asarray(consts, float), np.full(K, float(limit))])
        return linprog(c, A_ub=A_ub, b_ub=b_ub, A_eq=np.r_[np.ones(n), 0.0][None], b_eq=[1.0],
                       bounds=[(0, None)] * n + [(None, None)], method="highs", blocks=blocks)

    full = np.ones(T, bool)
    if start is None or start.all() or not start.any():
        return solve(full)

    def reduced(res):  # 0 - y^T (M; G)_t - y0 (scipy's marginals: d fun / d b, y <= 0)
        y = np.asarray(res.ineqlin.marginals, float)
        return -(y[:P] @ M) - (y[P:] @ G if K else 0.0) - float(res.eqlin.marginals[0])

    res, S = _priced(solve, reduced, start, P + K, _finite_scale(np.vstack([M, G]) if K else M))
    if res.status != 0:
        return solve(full)
    res.x = np.r_[_spread(res.x, S), res.x[-1]]
    return res


def second_largest_lp(M, consts, G, limit, level, blocks=None):
    """Among the mixtures whose maximum is at most ``level``, one whose two largest pieces sum least.

    ``min 2 t + sum_p u_p`` over ``(alpha, t, u)`` s.t. ``M alpha + consts <= level`` (each
    piece), ``u_p >= (M alpha + consts)_p - t``, ``u >= 0``, ``G alpha <= limit``, ``alpha``
    in the simplex: the sum of the two largest pieces as an LP (Ogryczak & Tamir, Inf. Process.
    Lett. 85, 2003), a step toward the lexicographic min-max (leximin). Min-max recall's
    optimum on a sample is often a face where several classes tie at the worst recall, while
    mixtures a hair above it keep all but one class well clear; on new rows the maximum of
    several tied recalls is the largest of their sampling errors, so the tied vertex carries
    worse to new rows (a winner's curse). With ``level`` the epigraph LP's value plus a small
    allowance (:func:`~goalfit.methods.plugin.mixture.tie_break`), this keeps the maximum within
    it and lowers the sum of the two worst pieces: where lowering the second-worst would cost the
    worst as much, the result is the optimum itself.

    Parameters
    ----------
    M : ndarray of shape (P, T)
        Each piece's linear part at each member.
    consts : ndarray of shape (P,)
    G : ndarray of shape (K, T)
        Constraint rows at each member (``K`` may be 0).
    limit : float
        The rows' allowance.
    level : float
        Every piece at most this (objective units).
    blocks : list, optional
        Parity blocks of the stacked rows (:func:`row_blocks`, ``P`` rows first), as
        :func:`epigraph_lp`.

    Returns
    -------
    ndarray of shape (T,) or None
        The weights; None when the LP fails or there are fewer than three pieces (two pieces,
        binary min-max recall, are the whole objective's: the LP would trade the maximum for
        their sum, not break a tie).
    """
    P, T = M.shape
    if P < 3:
        return None
    K = len(G)
    consts = np.asarray(consts, float)
    # the variables: alpha (T), t, u (P); the rows: pieces <= level, the rows of G (as
    # epigraph_lp, so its parity blocks apply after the P pieces), pieces - t - u <= 0
    A_ub = np.vstack([np.hstack([M, np.zeros((P, 1 + P))]),
                      np.hstack([G, np.zeros((K, 1 + P))]),
                      np.hstack([M, -np.ones((P, 1)), -np.eye(P)])])
    b_ub = np.concatenate([level - consts, np.full(K, float(limit)), -consts])
    res = linprog(np.r_[np.zeros(T), 2.0, np.ones(P)], A_ub=A_ub, b_ub=b_ub,
                  A_eq=np.r_[np.ones(T), np.zeros(1 + P)][None], b_eq=[1.0],
                  bounds=[(0, None)] * T + [(None, None)] + [(0, None)] * P, method="highs", blocks=blocks)
    return np.clip(res.x[:T], 0.0, None) if res.status == 0 else None


def epigraph_prices(problem, oracle, confusions, *, strengths=()):
    """Pricing for a maximum of linear pieces (min-max recall) over the members ``confusions``.

    The best mixture of the members solves the epigraph LP ``min s`` s.t. ``coefs_p . C(alpha) +
    consts_p <= s`` for every piece ``p``, ``A vec(C(alpha)) <= b``, ``alpha`` in the simplex.
    With its duals ``nu >= 0`` (``sum nu = 1``) on the pieces and ``mu >= 0`` on the constraint
    rows, the oracle is called once with the cost ``sum_p nu_p coefs_p + A^T mu``; its answer
    ``C'`` gives ``L = sum_p nu_p (coefs_p . C' + consts_p) + mu (A vec(C') - b)``. For every
    classifier meeting the constraints, ``psi(C) >= sum_p nu_p (coefs_p . C + consts_p) >= L``
    when the oracle minimizes linear costs exactly (weak duality), and ``s - L`` is minus the
    reduced cost of column generation on the epigraph LP, so it reaches 0 at the optimum over
    the oracle's rules (a single piece's gradient, the one :func:`lagrangian_price` would use,
    bounds the objective only away from a tie between pieces, where its optimum usually is).

    Parameters
    ----------
    problem : CompiledProblem
        Objective with ``coefs`` of shape (P, D) and ``consts`` of shape (P,)
        (:class:`~goalfit.goals.functions.MaxOfLinear`); polyhedral constraints (or none).
    oracle : linear minimization oracle
        Called once.
    confusions : ndarray of shape (T, *space.shape)
        The members' confusion tensors (the LP's columns).
    strengths : tuple of float, default ()
        Also price the rules for the same cost on the probabilities recalibrated within the
        cells at these strengths (:func:`priced_rules`; an oracle that recalibrates); ``L`` of
        each is the same Lagrangian's value at its ``C'``.

    Returns
    -------
    list of (member, C' (ndarray, ``space.shape``), L (float))
        The plug-in rule's first, then one per strength; ``[(None, None, -inf)]`` when the LP
        over the members is infeasible (the oracle is then not called).

    Examples
    --------
    >>> import numpy as np, pandas as pd, goalfit as gf
    >>> from goalfit.confusion import CellEncoder, ConfusionSpace
    >>> from goalfit.methods.plugin import ThresholdOracle
    >>> from goalfit.methods.plugin._common import epigraph_prices
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 400)
    >>> p1 = np.clip(0.5 + 0.3 * (y - 0.5) + 0.2 * rng.standard_normal(400), 0.01, 0.99)
    >>> enc = CellEncoder()
    >>> cells = enc.fit_transform(pd.Series(rng.choice(["a", "b"], 400), name="group"))
    >>> space = ConfusionSpace.from_codes(y, cells, np.arange(2), enc.cells_)
    >>> problem = gf.Problem("minmax_recall").compile(space)
    >>> oracle = ThresholdOracle(np.c_[1 - p1, p1], y, cells, space)
    >>> _, C0 = oracle(-np.eye(2)[None].repeat(2, 0))
    >>> [(_, C1, lower)] = epigraph_prices(problem, oracle, C0[None])
    >>> bool(lower <= problem.objective.value(C0))
    True
    """
    obj = problem.objective
    T = len(confusions)
    flat = np.asarray(confusions, float).reshape(T, -1)
    M = obj.coefs @ flat.T  # (P, T)
    P = M.shape[0]
    G = np.zeros((0, T)) if problem.A is None else problem.A @ flat.T - problem.b[:, None]  # (K, T)
    res = epigraph_lp(M, obj.consts, G, blocks=row_blocks(problem, P))
    if res.status != 0:
        return [(None, None, -np.inf)]
    duals = np.maximum(-np.asarray(res.ineqlin.marginals, float), 0.0)
    nu, mu = duals[:P], duals[P:]
    nu = nu / nu.sum() if nu.sum() > 0 else np.full(P, 1.0 / P)  # sum nu = 1 up to round-off
    cost = nu @ obj.coefs
    if len(mu):
        cost = cost + mu @ problem.A
    out = []
    for member, Co in priced_rules(oracle, cost.reshape(problem.space.shape), strengths):
        lower = float(nu @ (obj.coefs @ Co.ravel() + obj.consts))
        if len(mu):
            lower += float(mu @ (problem.A @ Co.ravel() - problem.b))
        out.append((member, Co, lower))
    return out


def epigraph_price(problem, oracle, confusions):
    """One pricing step for a maximum of linear pieces: the plug-in rule's entry of
    :func:`epigraph_prices` (one oracle call), ``(member, C', L)``; ``(None, None, -inf)`` when
    the LP over the members is infeasible."""
    return epigraph_prices(problem, oracle, confusions)[0]


def lagrangian_prices(problem, oracle, C_bar, upper, confusions=None, *, mu=None, strengths=()):
    """Pricing at the mixture ``C_bar`` of the members ``confusions`` (column generation).

    With ``g = grad psi(C_bar)`` and ``mu >= 0`` the multipliers of ``A c <= b`` in
    ``min_alpha <g, sum_t alpha_t C_t>`` s.t. ``A sum_t alpha_t C_t <= b`` (an LP over the
    members), the oracle is called once with the Lagrangian cost ``g + A^T mu``; its answer
    ``C'`` gives ``L = upper + <g, C' - C_bar> + mu (A C' - b)``, a lower bound on the optimum
    when the oracle is exact (:class:`GapStop`), and ``upper - L`` is the Frank-Wolfe gap
    (Jaggi, ICML 2013) with the constraints priced in. A caller with its own master LP passes
    its multipliers as ``mu`` (:func:`~goalfit.methods.plugin.column_generation.column_generation`:
    the duals of the elastic master); ``L`` is then the Lagrangian bound at those ``mu``, valid
    for any ``mu >= 0`` (and for the elastic problem when ``sum(mu)`` is at most its penalty).

    Parameters
    ----------
    problem : CompiledProblem
        Objective with a gradient; constraints ``A vec(C) <= b`` (or none).
    oracle : linear minimization oracle
        Called as ``oracle(cost)`` with ``cost`` of shape ``space.shape``: once, and once per
        strength.
    C_bar : ndarray of shape ``space.shape``
        The current mixture's confusion tensor.
    upper : float
        ``psi(C_bar)`` (objective units).
    confusions : ndarray of shape (T, *space.shape), optional
        The members' confusion tensors (the LP's columns); not read when ``mu`` is given.
    mu : ndarray of shape (n_rows,), optional
        Non-negative multipliers of the constraint rows, instead of the LP's.
    strengths : tuple of float, default ()
        Also price the rules for the same cost on the probabilities recalibrated within the
        cells at these strengths (:func:`priced_rules`; an oracle that :func:`recalibrates`).

    Returns
    -------
    list of (member, C' (ndarray, ``space.shape``), L (float))
        The plug-in rule's first, then one per strength; ``[(None, None, -inf)]`` when the LP
        over the members is infeasible (the oracle is then not called).

    Raises
    ------
    ValueError
        When the problem has constraint rows and neither ``confusions`` nor ``mu`` is given, or
        ``mu`` does not have one entry per row.
    """
    g = np.asarray(problem.objective.gradient(C_bar), float)
    rows_A = problem.A is not None and problem.A.shape[0] > 0
    cost = g
    if mu is not None:
        mu = np.asarray(mu, float)
        if mu.shape != ((problem.A.shape[0],) if rows_A else (0,)):
            raise ValueError(f"mu must have one multiplier per constraint row "
                             f"({problem.A.shape[0] if rows_A else 0}), got shape {mu.shape}")
        if mu.size:
            cost = g + (mu @ problem.A).reshape(g.shape)
    elif rows_A:
        if confusions is None:
            raise ValueError("lagrangian_price needs the members' confusions (its LP's columns) or mu")
        flat = confusions.reshape(len(confusions), -1)
        res = linprog(flat @ g.ravel(), A_ub=(flat @ problem.A.T).T, b_ub=problem.b,
                      A_eq=np.ones((1, len(flat))), b_eq=[1.0], bounds=(0, None), method="highs",
                      blocks=row_blocks(problem))
        if res.status != 0:
            return [(None, None, -np.inf)]
        mu = np.maximum(-np.asarray(res.ineqlin.marginals, float), 0.0)
        cost = g + (mu @ problem.A).reshape(g.shape)
    else:
        mu = np.zeros(0)
    out = []
    for member, Co in priced_rules(oracle, cost, strengths):
        rows = problem.A @ Co.ravel() - problem.b if mu.size else np.zeros(0)
        out.append((member, Co, upper + float(np.vdot(g, Co - C_bar)) + float(mu @ rows)))
    return out


def lagrangian_price(problem, oracle, C_bar, upper, confusions=None, *, mu=None):
    """One pricing step at the mixture ``C_bar`` of the members ``confusions``: the plug-in
    rule's entry of :func:`lagrangian_prices` (one oracle call), ``(member, C', L)``."""
    return lagrangian_prices(problem, oracle, C_bar, upper, confusions, mu=mu)[0]


def priced_rules(oracle, cost, strengths=()):
    """``[oracle(cost)]`` followed by the oracle's answers for ``cost`` recalibrated within the cells
    at each strength (:meth:`~goalfit.methods.plugin.oracle.Recalibrating.recalibrated`).

    Parameters
    ----------
    oracle : linear minimization oracle
        With ``strengths``, one that :func:`~goalfit.methods.plugin.oracle.recalibrates`.
    cost : ndarray of shape ``space.shape``
    strengths : tuple of float, default ()

    Returns
    -------
    list of (member, ndarray of shape ``space.shape``)
        ``1 + len(strengths)`` entries.
    """
    return [oracle(cost)] + [oracle(oracle.recalibrated(cost, t)) for t in strengths]


