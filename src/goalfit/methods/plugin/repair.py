"""Feasibility repair: the constant classifiers join a pool that meets no constraint set.

A method that ends with no feasible mixture of its members may still be wrong about the
goals: its members come from oracle calls at the costs its path visited, and an inexact oracle
(the plug-in oracle minimizes the cost *expected* under probability estimates, not the
sample's; the group-blind oracle reads estimated joint probabilities while the confusion
tensors use the true groups) can miss every feasible rule on the way. The constant
classifiers ("predict class ``j`` everywhere") are rules every plug-in oracle returns for the
cost ``L[:, :, j] = -1`` (zero elsewhere), and they meet every parity goal (demographic
parity, equal opportunity, equalized odds: each group's rate is 0 or 1). So before reporting
infeasibility, :func:`repair_infeasible` evaluates them and solves the mixture program over the
enlarged pool. When that meets the constraints and the objective is linear, smooth convex or a
maximum of linear pieces (min-max recall), fully-corrective column generation continues from it
(:func:`~goalfit.methods.plugin.coarse_to_fine.corrective_polish`) for as long as the oracle
prices an improving member (with an inexact oracle it can stop early: the result is feasible,
optimized as far as the oracle's members allow). For other objectives (ratios such as the
F-measure, non-smooth ones such as G-mean) the feasible mixture of the pool is returned
as it is, with a ``RuntimeWarning``: it is feasible, not optimized. Not in Narasimhan et al.
(their Assumption 1 takes a strictly feasible classifier as given); an addition against
silent infeasibility reports.

A feasible result is compared with the constants too (:func:`compare_constants`): a rule read
from poor probability estimates can be feasible and still worse than predicting one class
everywhere (a group-blind model whose joint probabilities point the wrong way), so a feasible
constant that beats it on the objective joins the pool and the best mixture is returned, never
worse than that constant. A result of infinite objective (KL quantification of a rule that never
predicts some class) is compared with the best feasible mixture of the constants as well, which
can be finite where each constant is not.
"""
from __future__ import annotations

import warnings

import numpy as np

from ...goals.problem import FEASIBLE_TOL
from ._common import Recorder, certified_gap, is_exact
from .coarse_to_fine import corrective_polish, polishes
from .mixture import mixture_program
from .oracle import RefitOracle


def constant_costs(space) -> list[np.ndarray]:
    """One cost tensor per class whose plug-in rule predicts that class on every example.

    Parameters
    ----------
    space : ConfusionSpace

    Returns
    -------
    list of ndarray of shape ``space.shape``, one per class ``j``
        ``-1`` on column ``j``, 0 elsewhere: the expected cost of ``j`` is ``-1``, of any other
        class 0, whatever the probabilities.
    """
    return _one_column(space, -1.0)


def constant_confusions(space) -> list[np.ndarray]:
    """The confusion tensor of each constant classifier, without an oracle call.

    Parameters
    ----------
    space : ConfusionSpace

    Returns
    -------
    list of ndarray of shape ``space.shape``, one per class ``j``
        ``C[c, i, j] = row_mass[c, i]`` (every example predicted ``j``), zero elsewhere.
    """
    return _one_column(space, space.row_mass)


def _one_column(space, fill) -> list[np.ndarray]:
    """For each class ``j``, a tensor of shape ``space.shape`` holding ``fill`` (a scalar or an
    array of shape ``space.shape[:2]``) on column ``j`` and 0 elsewhere."""
    out = []
    for j in range(space.n_classes):
        T = np.zeros(space.shape)
        T[:, :, j] = fill
        out.append(T)
    return out


def _pool_with_constants(problem, oracle, result):
    """The constants' oracle answers (``n_classes`` calls, counted in ``result.n_oracle_calls``)
    and the pool of ``result``'s members and them: ``(evaluated, members, confusions)``."""
    calls0 = oracle.n_calls
    evaluated = [oracle(L) for L in constant_costs(problem.space)]
    result.n_oracle_calls += oracle.n_calls - calls0
    members = list(result.members) + [m for m, _ in evaluated]
    Cs = np.concatenate([np.asarray(result.confusions), np.array([C for _, C in evaluated])])
    return evaluated, members, Cs


def _record(problem, oracle, result) -> None:
    """Append a history row for ``result``'s (new) mixture and give ``details.gap`` its value
    there (:func:`~goalfit.methods.plugin._common.certified_gap`; its only writer after
    :func:`~goalfit.methods.plugin._common.plugin_result`)."""
    rec = Recorder(problem, oracle)
    rec(result.history[-1]["iteration"] + 1 if result.history else 0, result.confusion, force=True)
    result.history = list(result.history) + rec.rows
    if result.details is not None:
        result.details.gap = certified_gap(problem, result)


def applies(problem, oracle, result) -> bool:
    """Whether :func:`repair_infeasible` runs.

    Parameters
    ----------
    problem : CompiledProblem
    oracle : linear minimization oracle
    result : FitResult

    Returns
    -------
    bool
        True for an infeasible result under polyhedral constraints only, with an oracle whose
        members are rules of a cost (plug-in, threshold, group-blind, map-reduce on Dask), not
        the refit oracle (its members are refitted models and a constant cost has no model).
    """
    return (not result.feasible and problem.A is not None and not problem.nonlinear
            and not isinstance(oracle, RefitOracle))


def repair_infeasible(problem, oracle, result, *, tol: float = 1e-4):
    """The result, or a feasible one found with the constant classifiers (module docstring).

    Parameters
    ----------
    problem : CompiledProblem
        Polyhedral constraints (see :func:`applies`).
    oracle : linear minimization oracle
        The oracle the method ran on; ``n_classes`` calls for the constants, and the polish's.
    result : FitResult
        A method's result.
    tol : float, default 1e-4
        The polish's stopping gap (objective units; the method's ``tol`` when it has one).

    Returns
    -------
    FitResult
        ``result`` itself when the repair does not apply. Otherwise ``result`` updated in place:
        when a mixture of its members and the constants meets the constraints, the members,
        weights and confusions of that (polished) mixture, ``feasible=True``, a history row and
        the repair appended to ``message``; else the less violating of the method's mixture and
        the pool's (still ``feasible=False``). ``n_oracle_calls`` counts the extra calls.

    Warns
    -----
    RuntimeWarning
        When the repaired mixture is feasible but not optimized (an objective the polish does
        not handle: a ratio, a non-smooth or a non-convex one).
    """
    if not applies(problem, oracle, result):
        return result
    _, members, Cs = _pool_with_constants(problem, oracle, result)
    pm, pC, pw, feasible, _ = mixture_program(problem, members, Cs)
    if not feasible:
        if problem.max_violation(np.tensordot(pw, pC, axes=1)) < problem.max_violation(result.confusion) - 1e-12:
            result.members, result.weights, result.confusions = pm, pw, pC
            result.message += (f"; with the constant classifiers the least violation is "
                               f"{problem.max_violation(result.confusion):.3g}")
        return result
    if polishes(problem.objective):
        calls0 = oracle.n_calls
        polished = corrective_polish(problem, oracle, pm, pC, tol=tol)
        pm, pC, pw, feasible = polished.members, polished.confusions, polished.weights, polished.feasible
        result.n_oracle_calls += oracle.n_calls - calls0
        _adopt_polish(result, oracle, polished)
        how = f"fully-corrective column generation continued from it ({polished.message})"
    else:
        how = (f"not optimized further (the polish needs a linear, smooth convex or piecewise-linear objective; "
               f"{problem.objective.name!r} is {problem.objective.kind}"
               + ("" if problem.objective.kind != "convex" else ", non-smooth") + ")")
        warnings.warn(f"the method found no mixture meeting the goals; with the constant classifiers a feasible "
                      f"mixture exists and is returned, {how}", RuntimeWarning, stacklevel=3)
    result.members, result.weights, result.confusions, result.feasible = pm, pw, pC, bool(feasible)
    _record(problem, oracle, result)
    result.message += (f"; repaired: with the constant classifiers added to its members a mixture meets the "
                       f"constraints, {how}")
    return result


def compare_constants(problem, oracle, result, *, tol: float = 1e-4):
    """A feasible result, or a better mixture with a feasible constant classifier that beats it
    (for a result of infinite objective, with the best feasible mixture of the constants).

    Parameters
    ----------
    problem : CompiledProblem
    oracle : linear minimization oracle
        Any but the refit one (whose members are refitted models); called for the constants
        (``n_classes`` calls) only when one of them beats the result (their confusion tensors
        come from the space's row masses, :func:`constant_confusions`).
    result : FitResult
        A method's result.
    tol : float, default 1e-4
        A constant must beat the result's objective by more than this (objective units).

    Returns
    -------
    FitResult
        ``result`` itself when it is infeasible (:func:`repair_infeasible`'s case), the oracle
        is the refit one, or no feasible constant (nor, for an infinite objective, mixture of
        the constants) beats it by more than ``tol``. Otherwise
        ``result`` updated in place: the best mixture of its members and the constants
        (polished by :func:`~goalfit.methods.plugin.coarse_to_fine.corrective_polish` for a
        linear or smooth convex objective under polyhedral constraints), or the best feasible
        constant (or constants' mixture) alone when that mixture is not better; a history row and a note in
        ``message``. ``n_oracle_calls`` counts the extra calls.

    Warns
    -----
    RuntimeWarning
        When a constant beat the method's rule: the class probabilities are likely poor.
    """
    if not result.feasible or isinstance(oracle, RefitOracle):
        return result
    f = problem.objective
    value = float(f.value(result.confusion))
    consts = np.array(constant_confusions(problem.space))
    best = None  # (weights over the constants, value): no oracle call unless they beat the result
    for j, C in enumerate(consts):
        v = float(f.value(C))
        if problem.max_violation(C) <= FEASIBLE_TOL and np.isfinite(v) and v < value - tol and (
                best is None or v < best[1]):
            best = (np.eye(len(consts))[j], v)
    if not np.isfinite(value):
        # an infinite objective (KL quantification of rules that never predict some class): a
        # mixture of the constants can be finite where each of them is not
        idx, cC, cw, c_ok, _ = mixture_program(problem, list(range(len(consts))), consts)  # members: the indices
        v = float(f.value(np.tensordot(cw, cC, axes=1)))
        if c_ok and np.isfinite(v) and (best is None or v < best[1]):
            best = (np.bincount(idx, weights=cw, minlength=len(consts)), v)
    if best is None:
        return result
    evaluated, members, Cs = _pool_with_constants(problem, oracle, result)
    cw, v = best
    mixture, polished = None, None
    if not problem.nonlinear:
        pm, pC, pw, feasible, _ = mixture_program(problem, members, Cs)
        if feasible and polishes(f) and problem.A is not None:
            calls1 = oracle.n_calls
            polished = corrective_polish(problem, oracle, pm, pC, tol=tol)
            pm, pC, pw, feasible = polished.members, polished.confusions, polished.weights, polished.feasible
            result.n_oracle_calls += oracle.n_calls - calls1
        if feasible and float(f.value(np.tensordot(pw, pC, axes=1))) <= v:
            mixture = (pm, pC, pw)
    if polished is not None:  # its bound holds either way; its stop and rounds only if its mixture is kept
        _adopt_polish(result, oracle, polished, produced=mixture is not None)
    if mixture is None:  # the constants' own mixture
        on = np.flatnonzero(cw > 0)
        mixture = ([evaluated[i][0] for i in on], np.array([evaluated[i][1] for i in on]), cw[on] / cw[on].sum())
    result.members, result.confusions, result.weights = mixture
    new = float(f.value(result.confusion))
    names = [c.item() if hasattr(c, "item") else c for c in np.asarray(problem.space.classes)[cw > 0]]
    what = f"predicting {names[0]!r} everywhere" if len(names) == 1 else f"a mixture of the constant rules {names}"
    warnings.warn(f"the method's rule ({f.name} {value:.4g}) was worse than {what} ({v:.4g}), which meets the "
                  f"constraints: the returned mixture includes the constant rules ({f.name} {new:.4g}); the class "
                  "probabilities may be poor (check the base model, or its calibration)", RuntimeWarning, stacklevel=3)
    _record(problem, oracle, result)
    result.message += (f"; {what} beat it ({v:.4g} < {value:.4g}): the best mixture with the constant rules is "
                       f"returned ({new:.4g})")
    return result


def _adopt_polish(result, oracle, polished, produced: bool = True) -> None:
    """``result.details`` after a polish: its stop reason and rounds when it ``produced`` the
    returned mixture, and its lower bound (on the optimum, whatever mixture is returned) when the
    oracle certifies it and it is better (``details.gap`` follows in :func:`_record`, on the
    returned mixture)."""
    d = result.details
    if d is None:  # a result built without details (by hand)
        return
    if produced:
        d.stop, d.polish_rounds = polished.stop, polished.rounds
    if is_exact(oracle) and np.isfinite(polished.lower_bound):
        d.lower_bound = polished.lower_bound if d.lower_bound is None else max(d.lower_bound, polished.lower_bound)
