"""Coarse-to-fine runs of a plug-in method and a fully-corrective polish on the full sample.

A method's path depends on the data only through the confusion tensors of the oracle's
members, which a random subsample of a large sample estimates to ``O(1/sqrt(n))``. So a large
problem is first solved on a subsample (the **coarse** run: the method's own iterations, each
oracle call on ``subsample`` rows instead of all of them), and then **polished** on the full
sample: the coarse run's output members and its latest members (rules that apply to any rows)
are evaluated on the full sample, and fully-corrective column generation takes over there:

1. the best mixture of the members for the true objective and constraints (the convex program
   of :func:`~goalfit.methods.plugin.mixture.master_program`, started from the previous
   round's mixture once one meets the constraints; from then on over that mixture's support
   and the members priced since: the members of weight 0 leave the program, restricted
   simplicial decomposition, Hearn, Lawphongpanich and Ventura, Math. Prog. Study 31, 1987);
2. one oracle call with the Lagrangian cost at that mixture
   (:func:`~goalfit.methods.plugin._common.lagrangian_prices`, the constraint rows priced by
   the program's own Lagrange multipliers when SciPy reports them, else by the LP over the
   members; for a maximum of linear pieces
   such as min-max recall, the epigraph LP's duals:
   :func:`~goalfit.methods.plugin._common.epigraph_prices`); its member joins the pool; with
   more than two classes on the plug-in oracle, the rules for the same cost on the
   probabilities recalibrated within the cells are priced too, as column generation does
   (:func:`~goalfit.methods.plugin._common.lagrangian_prices`, ``epigraph_prices``), and each
   that improves the linearized problem joins;

until the oracle returns no member that improves the linearized problem by more than ``tol``
(the Frank-Wolfe gap with the constraints priced in; a certified gap for an exact oracle) or
returns a member already seen. While no mixture meets the constraints, the oracle is
priced with the violated rows instead. This is the fully-corrective Frank-Wolfe of Holloway
(1974) / simplicial decomposition (von Hohenbalken, Math. Prog. 1977) with the constraints in
the master, started from the coarse run's members. Not in Narasimhan et al.; an addition for
large samples, where each oracle call costs a pass over the data.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import mixture
from ._common import (FitResult, Recorder, StopReason, epigraph_prices, in_pool, is_exact, lagrangian_prices,
                      piecewise_linear, plugin_result)
from .mixture import master_program
from .oracle import RECALIBRATION, is_plugin, recalibration_strengths

#: the coarse run is used only when the sample has at least this many times ``subsample`` rows:
#: below it a coarse pass costs more than a quarter of a full one while the polish still adds its
#: tens of full passes
MIN_RATIO = 4
#: the subsample of ``subsample="auto"``: a tenth of the rows, within these bounds
AUTO_SUBSAMPLE = (10_000, 50_000)


def auto_subsample(n: int) -> int:
    """The coarse run's rows for a sample of ``n`` rows: ``n // 10`` clipped to :data:`AUTO_SUBSAMPLE`.

    The coarse iterations cost a tenth of full ones (the polished objective's distance to a
    full-sample run: see benchmarks/README.md, section "Measurements behind the library's choices").
    """
    lo, hi = AUTO_SUBSAMPLE
    return int(min(max(n // 10, lo), hi))


class _Recording:
    """An oracle that remembers the members it returned (the coarse run's pool)."""

    def __init__(self, oracle):
        self.oracle = oracle
        self.space = oracle.space
        self.exact = is_exact(oracle)
        self.members = []

    @property
    def n_calls(self):
        return self.oracle.n_calls

    @property
    def name(self):
        return getattr(self.oracle, "name", type(self.oracle).__name__)

    def __call__(self, cost):
        member, C = self.oracle(cost)
        self.members.append(member)
        return member, C


def coarse_rows(subsample, oracle) -> int:
    """The rows of a method's coarse run for its ``subsample`` argument; 0 for none.

    ``"auto"``: :func:`auto_subsample` with the plug-in oracle (a coarse run needs the oracle's
    rows in memory, which Dask's map-reduce oracle does not hold), else 0; ``None``: 0; an int
    as given. Whether the run happens is :func:`applies`.
    """
    if subsample is None:
        return 0
    if isinstance(subsample, str) and subsample == "auto":
        return auto_subsample(len(oracle.y)) if is_plugin(oracle) else 0
    return int(subsample)


def applies(oracle, subsample) -> bool:
    """Whether a coarse run on ``subsample`` rows applies: the plug-in oracle on at least
    ``MIN_RATIO * subsample`` rows."""
    return bool(subsample) and is_plugin(oracle) and len(oracle.y) >= MIN_RATIO * int(subsample)


def polishes(objective) -> bool:
    """Whether :func:`corrective_polish` optimizes this objective: a linear or a smooth convex one
    (the mixture program and the Lagrangian pricing need a gradient and convexity), or a maximum
    of linear pieces such as min-max recall (the mixture program is its epigraph LP, priced by
    that LP's duals). A ratio such as the F-measure, or a non-smooth objective with no epigraph
    LP such as G-mean, is out of its scope."""
    return (objective.kind == "linear" or piecewise_linear(objective)
            or (objective.kind == "convex" and bool(getattr(objective, "smooth", False))))


@dataclass
class Polished:
    """What :func:`corrective_polish` returns: the final mixture and why the polish stopped.

    Attributes
    ----------
    members, confusions, weights, feasible
        The mixture of :func:`~goalfit.methods.plugin.mixture.master_program` over the final
        pool, as in its :class:`~goalfit.methods.plugin.mixture.Master`.
    message : str
        Why the polish stopped, in words.
    stop : StopReason
        ``CONVERGED`` (gap at most ``tol``), ``STALLED`` (no new member), ``MAX_ITER``
        (``max_rounds``) or ``FAILED`` (the pricing LP).
    rounds : int
        Oracle calls of the polish.
    lower_bound : float
        The best Lagrangian bound of its pricing calls (:func:`lagrangian_prices`; ``-inf`` when
        none was priced): a lower bound on the optimum when the oracle is exact.
    """

    members: list
    confusions: np.ndarray
    weights: np.ndarray
    feasible: bool
    message: str
    stop: StopReason
    rounds: int
    lower_bound: float


def corrective_polish(problem, oracle, members, confusions, *, tol: float = 1e-4, max_rounds: int = 50,
                      strengths: tuple[float, ...] = ()) -> Polished:
    """Fully-corrective column generation from the given members (see the module docstring).

    Parameters
    ----------
    problem : CompiledProblem
        Linear, smooth convex or piecewise-linear convex objective (:func:`polishes`); polyhedral
        constraints.
    oracle : linear minimization oracle
        Called as ``oracle(cost)`` with ``cost`` of shape ``space.shape``; returns
        ``(member, C)``. With ``oracle.exact`` the stopping gap is certified.
    members : list of length T
        Starting columns (T >= 1), e.g. the coarse run's members evaluated on this sample.
    confusions : ndarray of shape (T, *space.shape)
        The members' confusion tensors on the oracle's sample.
    tol : float, default 1e-4
        Stop when the oracle's answer improves the linearized problem by at most ``tol``
        (objective units).
    max_rounds : int, default 50
        Pricing rounds at most.
    strengths : tuple of float, default ()
        Each round also prices the rules for the same Lagrangian cost on the probabilities
        recalibrated within the cells at these strengths (:func:`lagrangian_prices`, and for a
        maximum of linear pieces :func:`epigraph_prices`; an oracle that
        :func:`~goalfit.methods.plugin.oracle.recalibrates`), as column generation does:
        every one that improves the linearized problem by more than ``tol`` joins the pool, and
        the round's gap is the best of them.

    Returns
    -------
    Polished
        The mixture (members, confusions, weights), whether it meets the constraints, why the
        polish stopped (in words and as a :class:`StopReason`), its rounds and its best lower bound.
    """
    members, Cs = list(members), [np.asarray(C) for C in confusions]
    why = f"{max_rounds} polishing rounds"
    stop, rounds, best_lower = StopReason.MAX_ITER, max_rounds, -np.inf
    previous = None  # the last feasible mixture: the next program starts from it (one more member)

    def price(master, C_bar, upper):
        """(member, C, Lagrangian value) of the plug-in rule, and the recalibrated rules' entries."""
        # the program's own multipliers price the rows (its KKT point: the LP over the members
        # would return the same ones) when SLSQP reports them
        columns = np.array(program[1])  # the LP over the program's members, where the multipliers come from
        priced = lagrangian_prices(problem, oracle, C_bar, upper, columns, mu=master.row_multipliers,
                                   strengths=strengths)
        if master.row_multipliers is not None and upper - priced[0][2] > tol and in_pool(priced[0][1], Cs):
            # an inexact multiplier can price a member already in the pool: the LP's decide
            # before the polish stops as stalled
            priced = lagrangian_prices(problem, oracle, C_bar, upper, columns, strengths=strengths)
        return priced[0], priced[1:]

    # the mixture program's columns: all members until a mixture meets the constraints, then the
    # last mixture's support and the members priced since (restricted simplicial decomposition:
    # dropping the columns of weight 0 keeps each program small, about a quarter of the time per
    # round on 5-group goals; the stopping test reads every member seen)
    program = (list(members), list(Cs))
    for r in range(max_rounds):
        master = master_program(problem, program[0], np.array(program[1]), start=previous)
        C_bar = np.tensordot(master.weights, master.confusions, axes=1)
        extra: list = []  # the recalibrated rules' (member, C, Lagrangian value)
        if master.feasible:
            previous = (master.members, master.confusions, master.weights)
            upper = float(problem.objective.value(C_bar))
            if piecewise_linear(problem.objective):
                (member, Co, lower), *extra = epigraph_prices(problem, oracle, np.array(program[1]),
                                                              strengths=strengths)
            else:
                (member, Co, lower), extra = price(master, C_bar, upper)
            lower = min([lower] + [low for _, _, low in extra])
            if member is None:  # pragma: no cover - a feasible mixture exists, so the LP is feasible
                why = "pricing LP failed"
                stop, rounds = StopReason.FAILED, r
                break
            best_lower = max(best_lower, lower)
            if upper - lower <= tol:
                why = f"gap {upper - lower:.1e} <= tol={tol:g} after {r + 1} polishing rounds"
                stop, rounds = StopReason.CONVERGED, r + 1
                break
        else:  # price the violated rows (gradient of half their squared violations)
            rows = np.maximum(problem.row_violations(C_bar), 0.0)
            member, Co = oracle((rows @ problem.A).reshape(C_bar.shape))
        # the recalibrated rules that improve the linearized problem join with the plug-in rule
        new = [(m, C) for m, C, low in extra if upper - low > tol and not in_pool(C, Cs)]
        if not in_pool(Co, Cs):
            new.insert(0, (member, Co))
        if not new:
            why = f"no new member after {r + 1} polishing rounds"
            stop, rounds = StopReason.STALLED, r + 1
            break
        if master.feasible:  # the next program: this mixture's support and the new members
            program = (list(master.members), [np.asarray(C) for C in master.confusions])
        for m, C in new:
            if not in_pool(C, Cs):  # rules of different strengths may coincide
                members.append(m)
                Cs.append(C)
                program[0].append(m)
                program[1].append(C)
    else:  # the budget ran out with a member the last mixture program has not seen
        if not piecewise_linear(problem.objective):  # (solved below for a maximum of linear pieces)
            master = master_program(problem, program[0], np.array(program[1]), start=previous)
    if piecewise_linear(problem.objective):  # the output: the best maximum's ties broken within tol
        master = master_program(problem, program[0], np.array(program[1]),
                                **mixture.tie_break(tol, best_lower, is_exact(oracle)))
    # on a break the pool is the one the last mixture program solved: its mixture is the answer
    return Polished(master.members, master.confusions, master.weights, master.feasible, why, stop, rounds,
                    best_lower)


def certifies(problem, oracle) -> bool:
    """Whether :func:`corrective_polish` run on ``oracle`` itself certifies its result: an exact oracle
    (``oracle.exact``: the threshold oracle minimizes every linear cost on the sample),
    polyhedral constraints only, and an objective it optimizes (:func:`polishes`) or a convex
    one of a few linear features that is not piecewise linear (G-mean), whose certificate holds
    where it is differentiable (checked at the result: :func:`differentiable_at`).

    Its stopping gap is then a certified bound on the distance to the best mixture of the
    oracle's rules (the Frank-Wolfe gap with the constraints priced in, weak duality), so no
    iterative method needs to run first: see :func:`exact_column_generation`.
    """
    obj = problem.objective
    # (a convex objective with pieces is piecewise linear, which polishes() already covers)
    smooth_enough = polishes(obj) or (obj.kind == "convex" and hasattr(obj, "features"))
    return is_exact(oracle) and smooth_enough and not problem.nonlinear


def differentiable_at(objective, C, *, step: float = 1e-7, rtol: float = 1e-3) -> bool:
    """Whether a convex objective ``g(U vec(C))`` is differentiable at ``C`` (numerically).

    A convex function is differentiable at a point where its partial derivatives exist
    (Rockafellar, *Convex Analysis*, Thm. 25.2), so each feature's one-sided difference
    quotients (step ``step``) must agree to ``rtol`` (relative, at least 1 in absolute). Its
    gradient there is then its only subgradient, and the Frank-Wolfe gap computed from it is a
    certified bound; at a kink (G-mean where a recall is 0) the quotients differ by the jump.
    A smooth objective is differentiable everywhere (``True`` without evaluating).

    Parameters
    ----------
    objective : BoundFunction
        With ``features()`` (:class:`~goalfit.goals.functions.Features`).
    C : ndarray of shape ``space.shape``

    Returns
    -------
    bool
    """
    if getattr(objective, "smooth", False):
        return True
    f = objective.features()
    z = f.U @ np.asarray(C, float).ravel()
    here = float(f.value(z))
    if not np.isfinite(here):
        return False
    for i in range(len(z)):
        e = np.zeros(len(z))
        e[i] = step
        up, down = (float(f.value(z + e)) - here) / step, (here - float(f.value(z - e))) / step
        if not (np.isfinite(up) and np.isfinite(down)) or abs(up - down) > rtol * max(1.0, abs(up), abs(down)):
            return False
    return True


def exact_column_generation(problem, oracle, start, *, method: str, tol: float = 1e-4, max_rounds: int = 2000,
                            record_every: int = 10, callback=None) -> FitResult | None:
    """Fully-corrective column generation from ``start`` with an exact oracle (:func:`certifies`).

    The polish of :func:`corrective_polish` run from the first member instead of after an iterative
    method: each round solves the mixture program over the pool and prices one member with the
    Lagrangian cost, until the certified gap is at most ``tol``, the oracle returns a member
    already in the pool (optimal over the oracle's rules) or ``max_rounds`` oracle calls. With
    an exact oracle each round is a Frank-Wolfe step with a certificate, so it needs a few
    rounds where an iterative method such as SplitFW needs tens to hundreds of iterations to
    certify the same gap (simplicial decomposition, von Hohenbalken, Math. Prog. 1977). Not in
    Narasimhan et al.; an addition.

    Parameters
    ----------
    problem : CompiledProblem
        Linear or convex objective, polyhedral constraints (:func:`certifies`).
    oracle : linear minimization oracle with ``exact = True``
    start : tuple (member, C)
        The first member and its confusion tensor of shape ``space.shape``.
    method : str
        The method name the result carries (the caller's).
    tol : float, default 1e-4
        Certified gap at which to stop (objective units).
    max_rounds : int, default 2000
        Oracle calls at most (the caller's ``max_iter``).
    record_every, callback
        As for the methods (:class:`~goalfit.methods.plugin._common.Recorder`); one history row.

    Returns
    -------
    FitResult or None
        ``feasible=False`` with the least-violating mixture when no mixture of the members
        priced meets the constraints; ``None`` when a non-smooth objective is not
        differentiable at the result (:func:`differentiable_at`: its gap certifies nothing).

    Examples
    --------
    >>> import numpy as np, pandas as pd, goalfit as gf
    >>> from goalfit.confusion import CellEncoder, ConfusionSpace
    >>> from goalfit.methods.plugin import ThresholdOracle
    >>> from goalfit.methods.plugin.coarse_to_fine import exact_column_generation
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 400)
    >>> p1 = np.clip(0.5 + 0.3 * (y - 0.5) + 0.2 * rng.standard_normal(400), 0.01, 0.99)
    >>> enc = CellEncoder()
    >>> cells = enc.fit_transform(pd.Series(rng.choice(["a", "b"], 400), name="group"))
    >>> space = ConfusionSpace.from_codes(y, cells, np.arange(2), enc.cells_)
    >>> problem = gf.Problem("hmean", [gf.demographic_parity_difference("group") <= 0.05]).compile(space)
    >>> oracle = ThresholdOracle(np.c_[1 - p1, p1], y, cells, space)
    >>> start = oracle(-np.eye(2)[None].repeat(2, 0))  # the balanced rule in each group
    >>> res = exact_column_generation(problem, oracle, start, method="split_frank_wolfe")
    >>> res.feasible, bool(problem.max_violation(res.confusion) <= 1e-7)
    (True, True)
    """
    rec = Recorder(problem, oracle, record_every, callback)
    member, C = start
    p = corrective_polish(problem, oracle, [member], np.asarray(C)[None], tol=tol, max_rounds=max(1, int(max_rounds)))
    C_bar = np.tensordot(p.weights, p.confusions, axes=1)
    # no gradient certificate at a kink: the caller iterates (a maximum of linear pieces is priced
    # by its epigraph LP's duals, a certificate at every point)
    if not piecewise_linear(problem.objective) and not differentiable_at(problem.objective, C_bar):
        return None
    rec(1, C_bar, force=True)
    msg = f"exact column generation: {oracle.n_calls} oracle calls ({p.message})"
    msg += "" if p.feasible else "; no mixture meets the constraints (least violation returned)"
    return plugin_result(problem, oracle, p.members, p.weights, p.confusions, method, rec.rows, p.feasible, msg,
                         stop=p.stop, iterations=p.rounds, tol=tol, lower_bound=p.lower_bound)


#: Coarse iterations of SplitFW (``coarse_iter="auto"``) with constraints or a piecewise-linear
#: objective, and without either (:func:`coarse_budget`).
COARSE_ITER = 1000
COARSE_ITER_UNCONSTRAINED = 300


def coarse_budget(problem) -> int:
    """The coarse run's iterations for ``problem`` (SplitFW's ``coarse_iter="auto"``).

    With constraints the coarse run also finds where the constraints bind, and a
    piecewise-linear objective (min-max recall) is iterated on its smoothing: 1000 iterations
    (:data:`COARSE_ITER`). Without constraints, on a smooth, non-smooth or non-convex objective,
    the polish on every row (fully corrective, pricing the recalibrated rules) finishes what 300
    coarse iterations leave (:data:`COARSE_ITER_UNCONSTRAINED`): measured in
    ``benchmarks/coarse_budget.py``, over 6 shapes x 3 seeds at 10^5 rows and 2 x 2 at 10^6, the
    mean objectives within 2e-4 (training rows) and 4e-4 (held-out rows) of the 1000-iteration
    run's, in either direction, at 0.6-0.9x its time, where min-max recall ended 1e-3 to 3.9e-3
    above it on average.

    Parameters
    ----------
    problem : CompiledProblem

    Returns
    -------
    int
    """
    if problem.constraints or piecewise_linear(problem.objective):
        return COARSE_ITER
    return COARSE_ITER_UNCONSTRAINED


def coarse_to_fine(method, problem, oracle, *, subsample: int, random_state=0, n_candidates: int = 60,
                   tol: float = 1e-4, recalibration: tuple[float, ...] = RECALIBRATION, record_every: int = 10,
                   callback=None, **params) -> FitResult:
    """Run ``method`` on a random subsample of ``subsample`` rows, then polish on the full sample.

    Parameters
    ----------
    method : callable
        The plug-in method (e.g. :func:`~goalfit.methods.plugin.split_frank_wolfe`), called as
        ``method(problem, sub_oracle, tol=tol, **params)`` with ``subsample=None``.
    problem : CompiledProblem
    oracle : PluginOracle
        On the full sample; see :func:`applies`.
    subsample : int
        Rows of the coarse run (drawn without replacement).
    random_state : int, Generator or None, default 0
        Seeds the subsample.
    n_candidates : int, default 60
        The coarse run's latest distinct members evaluated on the full sample besides its
        output members (one oracle call each), and the most output members evaluated (the
        heaviest in the coarse mixture; the others join when no mixture of those meets the
        constraints on the full sample).
    tol : float, default 1e-4
        The polish's stopping tolerance (objective units). The coarse run takes its whole
        budget (``tol=0``).
    recalibration : tuple of float, default (0.5, 1.0, 1.5)
        More than two classes on the plug-in oracle: the polish also prices the rules
        recalibrated within the cells at these strengths (:func:`corrective_polish`'s
        ``strengths``, as :func:`~goalfit.methods.plugin.column_generation.column_generation`);
        ``()``: the plug-in rule alone.
    record_every, callback
        As for the method (:class:`~goalfit.methods.plugin._common.Recorder`).
    **params
        Passed on to ``method`` for the coarse run.

    Returns
    -------
    FitResult
        ``n_oracle_calls`` counts the calls on the full sample and on the subsample.
    """
    rec = Recorder(problem, oracle, record_every, callback)
    n = len(oracle.y)
    rows = np.sort(np.random.default_rng(random_state).choice(n, int(subsample), replace=False))
    sub = _Recording(oracle.restricted(rows))
    # the coarse run takes its whole budget: its stopping test prices with an inexact oracle on
    # the subsample, so it certifies nothing about the full sample (the polish does that), and
    # on the 5-class problem of benchmarks/speed.py it never stopped the run while costing about
    # a fifth of it
    # its output mixture only ranks candidates: the LP of §8.2 re-weights it, no convex program
    if params.get("prune_output", True) is True:
        params["prune_output"] = "lp"
    coarse = method(problem, sub, tol=0.0, subsample=None, record_every=record_every, **params)
    # the output members (the n_candidates heaviest, in their order: a mixture program that keeps
    # hundreds of tiny weights, as KL quantification's can, would cost a full pass each), then the
    # latest distinct ones (rules compared by their key, the cost)
    heaviest = np.sort(np.argsort(-np.asarray(coarse.weights), kind="stable")[:n_candidates])
    chosen = [coarse.members[i] for i in heaviest]
    keys = {m.key() for m in chosen}
    for m in reversed(sub.members):
        if len(chosen) >= len(heaviest) + n_candidates:
            break
        if m.key() not in keys:
            chosen.append(m)
            keys.add(m.key())
    evaluated = [oracle(m.cost) for m in chosen]
    strengths = recalibration_strengths(oracle, recalibration)
    p = corrective_polish(problem, oracle, [e[0] for e in evaluated], np.array([e[1] for e in evaluated]), tol=tol,
                          strengths=strengths)
    rest = [m for m in coarse.members if m.key() not in keys]  # the lighter output members not evaluated yet
    if not p.feasible and rest:
        # the heaviest members admit no feasible mixture on all rows (a mixture program that drops
        # members of infinite objective, such as KL quantification's, can need the light ones):
        # the rest of the coarse mixture joins the members already evaluated (and the polish's)
        # before the least violation is reported; duplicates merge in the mixture program
        pool = evaluated + list(zip(p.members, p.confusions)) + [oracle(m.cost) for m in rest]
        p = corrective_polish(problem, oracle, [e[0] for e in pool], np.array([e[1] for e in pool]), tol=tol,
                              strengths=strengths)
    rec(1, np.tensordot(p.weights, p.confusions, axes=1), force=True)
    msg = (f"coarse-to-fine: {coarse.n_oracle_calls} oracle calls on a {len(rows)}-row subsample "
           f"({coarse.message}), then {oracle.n_calls} on all {n} rows ({p.message})")
    msg += "" if p.feasible else "; no mixture meets the constraints (least violation returned)"
    return plugin_result(problem, oracle, p.members, p.weights, p.confusions, coarse.method, rec.rows, p.feasible,
                         msg, stop=p.stop, iterations=coarse.details.iterations, tol=tol,
                         lower_bound=p.lower_bound, n_oracle_calls=oracle.n_calls + coarse.n_oracle_calls,
                         coarse_subsample=len(rows), polish_rounds=p.rounds)
