"""Bisection for ratio-of-linear objectives (Algs. 4 and 8 of Narasimhan et al., JMLR 2024).

Both methods test values ``gamma`` of the objective with Lemma 25 (``min psi <= gamma`` iff
``min <A - gamma B, C> <= 0``) and keep a bracket ``[lo, hi]`` that holds the optimum's value.
The paper tests the bracket's midpoint (``search="midpoint"``). The default,
``search="dinkelbach"``, tests just below the best value found so far: Dinkelbach's iteration
for linear-fractional programs (Dinkelbach, Management Science 13(7), 1967). A step that
succeeds returns a classifier with a lower value, which becomes the new upper end. A step that
fails certifies the lower end within ``tol / 2`` of the upper one (with an exact oracle), so it
is the last step. The stopping rule and its guarantee are the paper's: the bracket is at most
``tol`` wide. A step whose gain is more than half the previous step's (linear, not superlinear
progress) is followed by a midpoint step: on a simulated oracle whose answers close only a fixed
fraction (0.1-0.999) of the gap to the optimum, the search closed a bracket of 1e-4 in at most
26 steps, where pure Dinkelbach takes ``log(tol) / log(fraction)`` (9,200 at 0.999) and the
midpoints 14 (``tests/methods/plugin/test_solvers.py``).

Measured: where each step is exact on the sample (the threshold oracle; ConBisection's linear
program over the binary ROC hulls), Dinkelbach's search ends on the midpoints' objective in 2-4
steps instead of 14 (``benchmarks/atlas.py``, every F1 and micro-F1 cell). Where the steps are
inexact (the plug-in rule of the model's probabilities, several classes or the binary plug-in
oracle), fewer steps visit fewer rules: on ``benchmarks/ratio_search.py``'s 24 cases x 3 seeds the
training objective is up to 9e-4 higher on average (4 classes at 10^4 rows; at most 1e-4 at
10^5), the held-out objective even (case means -8e-4 to +6e-4), and ConBisection takes 0.28-0.6x
the midpoints' time.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from ...goals.functions import LinearFunction
from ...goals.problem import FEASIBLE_TOL
from ._common import FitResult, PluginDetails, Recorder, StopReason, in_pool, plugin_result, priced_rules
from .oracle import RECALIBRATION, recalibration_strengths

SEARCHES = ("dinkelbach", "midpoint")


class _Bracket:
    """The interval ``[lo, hi]`` that holds the optimum's value, and the next value to test.

    ``search="midpoint"`` is the paper's bisection: test the midpoint; a success moves ``hi`` to
    the tested value. ``search="dinkelbach"``: test ``tol / 2`` below the best (feasible) value
    seen, which is ``hi``; a success moves ``hi`` to the new classifier's value; a gain more than
    half the previous one makes the next test a midpoint (the safeguard).
    """

    def __init__(self, bounds, tol: float, search: str):
        if search not in SEARCHES:
            raise ValueError(f"search must be one of {SEARCHES}, got {search!r}")
        self.lo, self.hi = map(float, bounds)
        self.tol, self.search = float(tol), search
        self._gain: float | None = None  # the last Dinkelbach step's decrease of hi
        self._bisect = True  # the first test is the midpoint (no classifier seen yet)

    @property
    def closed(self) -> bool:
        return self.hi - self.lo <= self.tol

    def gamma(self) -> float:
        if self.search == "midpoint" or self._bisect:
            return 0.5 * (self.lo + self.hi)
        return max(self.lo, self.hi - 0.5 * self.tol)

    def update(self, gamma: float, value: float, feasible: bool) -> None:
        """Record a step that tested ``gamma`` and returned a classifier of ``value``."""
        bisected = self.search == "midpoint" or self._bisect
        if value <= gamma and feasible:
            if self.search == "midpoint":
                self.hi = gamma
                return
            gain = self.hi - value
            self._bisect = not bisected and self._gain is not None and gain > 0.5 * self._gain
            self._gain = None if bisected else gain
            self.hi = value
            return
        self.lo = gamma
        if self.search == "dinkelbach":
            if feasible:  # a feasible classifier's value bounds the optimum from above
                self.hi = min(self.hi, value)
            self._bisect = False


def bisection(problem, oracle, *, max_iter: int = 40, tol: float = 1e-4, bounds=(0.0, 1.0),
              search: str = "dinkelbach", recalibration: tuple[float, ...] = RECALIBRATION,
              callback=None) -> FitResult:
    """Minimize ``psi = <A, C> / <B, C>`` by a search on its value (Alg. 4).

    Uses ``min psi <= gamma  <=>  min <A - gamma B, C> <= 0`` (Lemma 25): at each step the
    oracle minimizes ``<A - gamma B, C>``; if the member it returns has ``psi <= gamma`` the
    upper end moves down and the member is kept. The output is one deterministic plug-in
    rule. Besides the paper's rule this keeps the best member seen (never worse). With several
    classes on the plug-in oracle each step also prices the rules for the same cost on the
    probabilities recalibrated within the cells (``recalibration``, as column generation and
    ConBisection do) and takes the one with the lowest ``psi``; an addition.

    Parameters
    ----------
    problem : CompiledProblem
        Unconstrained, ratio objective (``objective.kind == "ratio"``).
    oracle : linear minimization oracle
    max_iter : int, default 40
    tol : float, default 1e-4
        Stop when the bracket on the objective's value is at most this wide (objective units,
        as the other plug-in methods' ``tol``: 14 steps from ``[0, 1]``). The steps of a
        narrower bracket did not change the returned classifier (benchmarks/README.md,
        ``bisection_tol.py``).
    bounds : (float, float), default (0, 1)
        Initial bracket containing the optimum (losses in [0, 1]).
    search : {"dinkelbach", "midpoint"}, default "dinkelbach"
        The value each step tests: just below the best value found (Dinkelbach's iteration,
        the module docstring) or the bracket's midpoint (the paper's Alg. 4).
    recalibration : tuple of float, default (0.5, 1.0, 1.5)
        More than two classes on the plug-in oracle: the strengths of the recalibrated rules
        each step prices beside the plug-in rule
        (:func:`~goalfit.methods.plugin._common.priced_rules`); ``()``: the plug-in rule alone
        (the paper's Alg. 4). Without them the plug-in rule of a model that does not see the
        group stopped 1.2e-3 to 9.4e-3 above the best training objective in three of the four
        multiclass micro-F1 cells of ``benchmarks/atlas.py`` from 10^5 rows up.

    Returns
    -------
    FitResult

    Raises
    ------
    ValueError
        For a non-ratio objective, constraints, ``max_iter < 1`` or an unknown ``search``.
    """
    if problem.objective.kind != "ratio":
        raise ValueError("bisection needs a ratio-of-linear objective")
    if problem.constraints:
        raise ValueError("bisection is unconstrained (ConBisection comes with the full plug-in family)")
    rec = Recorder(problem, oracle, 1, callback)
    num, den = problem.objective.num, problem.objective.den
    bracket = _Bracket(bounds, tol, search)
    strengths = recalibration_strengths(oracle, recalibration)
    best: tuple | None = None  # (member, confusion, value)
    t = 0
    certified_lo = None  # the largest gamma with min_C <A - gamma B, C> > 0 (Lemma 25): psi > gamma everywhere
    for t in range(1, max_iter + 1):
        gamma = bracket.gamma()
        priced = priced_rules(oracle, (num.coef - gamma * den.coef).reshape(problem.space.shape), strengths)
        member, C = min(priced, key=lambda mC: problem.objective.value(mC[1]))
        val = problem.objective.value(C)
        if best is None or val < best[2]:
            best = (member, C, val)
        if val > gamma:
            certified_lo = gamma
        bracket.update(gamma, val, True)
        assert best is not None  # set at the first iteration
        rec(t, best[1])
        if bracket.closed:
            break
    if best is None:
        raise ValueError(f"max_iter must be >= 1, got {max_iter}")
    return plugin_result(problem, oracle, [best[0]], np.ones(1), best[1][None], "bisection", rec.rows, True,
                         f"bracket [{bracket.lo:.6g}, {bracket.hi:.6g}] after {t} iterations ({search})",
                         stop=StopReason.CONVERGED if bracket.closed else StopReason.MAX_ITER, iterations=t,
                         tol=tol, lower_bound=certified_lo)


def con_bisection(problem, oracle, *, max_iter: int = 30, tol: float = 1e-4, bounds=(0.0, 1.0),
                  search: str = "dinkelbach", inner: str = "auto", inner_params=None, callback=None) -> FitResult:
    """Constrained bisection (Alg. 8) for a ratio objective ``<A, C>/<B, C>`` with constraints.

    Each step solves the constrained problem with the linear objective ``<A - gamma B, C>``
    (ConGDA in the paper; here column generation when the constraints are polyhedral, whose
    answer is optimal up to the oracle's error, each step warm-started with the columns of the
    steps before, and with several classes on the plug-in oracle also pricing the rules
    recalibrated within the cells, ``column_generation(recalibration=...)``, which
    ``inner_params`` may set; else ConGDA) and keeps its classifier when its
    ratio is ``<= gamma`` and it meets the constraints — the **corrected** branch of the
    erratum (the printed Alg. 8 keeps the wrong classifier; Lemmas 47-48 use Alg. 4's logic).
    The best feasible classifier seen is returned (a randomized mixture).

    Parameters
    ----------
    problem : CompiledProblem
        Ratio objective (F-beta, micro-F1), any constraints the inner method supports.
    oracle : linear minimization oracle
    max_iter : int, default 30
    tol : float, default 1e-4
        Stop when the bracket on the objective's value is at most this wide (objective units,
        as the other plug-in methods' ``tol``: 14 steps from ``[0, 1]``). The steps of a
        narrower bracket did not change the returned classifier (benchmarks/README.md,
        ``bisection_tol.py``).
    bounds : (float, float), default (0, 1)
    search : {"dinkelbach", "midpoint"}, default "dinkelbach"
        The value each step tests: just below the best feasible value found (Dinkelbach's
        iteration, the module docstring) or the bracket's midpoint (the paper's Alg. 8).
    inner : {"auto", "column_generation", "con_gda"}
    inner_params : dict, optional

    Returns
    -------
    FitResult
    """
    from .column_generation import column_generation
    from .gda import con_gda

    if problem.objective.kind != "ratio":
        raise ValueError("con_bisection needs a ratio-of-linear objective")
    if inner == "auto":
        inner = "con_gda" if problem.nonlinear else "column_generation"
    runs: dict[str, Callable[..., FitResult]] = {"column_generation": column_generation, "con_gda": con_gda}
    run = runs[inner]
    rec = Recorder(problem, oracle, 1, callback)
    num, den = problem.objective.num, problem.objective.den
    bracket = _Bracket(bounds, tol, search)
    best: tuple | None = None  # (value, violation, result)
    fallback: tuple | None = None
    t = 0
    certified_lo = None  # the largest gamma whose sub-problem has a certified positive lower bound
    # column generation starts each step from the supports of the steps before (the optimal
    # columns of nearby gammas): the same optimum in fewer pricing rounds
    pool_members: list = []
    pool_C: list = []
    for t in range(1, max_iter + 1):
        gamma = bracket.gamma()
        sub = dataclasses.replace(problem, objective=LinearFunction(num.coef - gamma * den.coef))
        kw = dict(inner_params or {})
        if inner == "column_generation" and pool_members and "warm_start" not in kw:
            kw["warm_start"] = (pool_members, np.array(pool_C))
        res = run(sub, oracle, **kw)
        if inner == "column_generation":
            for m, Cm in zip(res.members, res.confusions):
                if not in_pool(Cm, pool_C):
                    pool_members.append(m)
                    pool_C.append(np.asarray(Cm))
        sub_lower = res.details.lower_bound if isinstance(res.details, PluginDetails) else None
        if sub_lower is not None and sub_lower > 0:  # no feasible classifier has psi <= gamma
            certified_lo = gamma if certified_lo is None else max(certified_lo, gamma)
        C = res.confusion
        val = problem.objective.value(C)
        viol = problem.max_violation(C)
        if viol <= FEASIBLE_TOL:
            if best is None or val < best[0]:
                best = (val, viol, res)
        elif fallback is None or viol < fallback[1]:
            fallback = (val, viol, res)
        bracket.update(gamma, val, viol <= FEASIBLE_TOL)
        chosen = best or fallback
        assert chosen is not None  # one of them is set at each iteration
        rec(t, chosen[2].confusion)
        if bracket.closed:
            break
    chosen = best or fallback
    if chosen is None:
        raise ValueError(f"max_iter must be >= 1, got {max_iter}")
    res = chosen[2]
    return plugin_result(problem, oracle, res.members, res.weights, res.confusions, "con_bisection", rec.rows,
                         best is not None,
                         f"bracket [{bracket.lo:.6g}, {bracket.hi:.6g}] after {t} steps ({search}, {inner} inside)",
                         stop=StopReason.CONVERGED if bracket.closed else StopReason.MAX_ITER, iterations=t,
                         tol=tol, lower_bound=certified_lo)
