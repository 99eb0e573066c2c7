"""Feasibility repair (``goalfit.methods.plugin.repair``): the constant classifiers join a pool
that meets no constraint set.

References: the constant classifiers' own values (each meets every parity goal exactly) and
column generation run from the start on the same problem.
"""
import numpy as np
import pytest

import goalfit as gf
from goalfit.fit import FitResult
from goalfit.methods.plugin import PluginDetails, PluginOracle, StopReason, column_generation, solve
from goalfit.methods.plugin.repair import applies, constant_costs, repair_infeasible
from tests.methods.plugin.test_coarse_to_fine import _multiclass


def _argmax_result(cp, oracle, space):
    """A method's result that meets no constraint: the argmax rule alone."""
    member, C = oracle(-np.broadcast_to(np.eye(space.n_classes), space.shape))
    return FitResult([member], np.ones(1), C[None], "column_generation", feasible=False, message="stub path")


@pytest.mark.parametrize("objective", ["error", "hmean"])
def test_repair_finds_a_feasible_optimized_mixture(objective):
    P, y, cells, space = _multiclass(6000, seed=3, n_classes=3)
    cp = gf.Problem(objective, [gf.demographic_parity_difference() <= 0.01]).compile(space)
    oracle = PluginOracle(P, y, cells, space)
    start = _argmax_result(cp, oracle, space)
    start.details = PluginDetails("plugin", StopReason.FAILED, 0)
    assert cp.max_violation(start.confusion) > 0.05  # the argmax rule breaks the goal
    out = repair_infeasible(cp, oracle, start)
    assert out.feasible and cp.max_violation(out.confusion) <= 1e-7
    # the details describe the polish that made the returned mixture (no bound: inexact oracle)
    assert out.details.stop in (StopReason.CONVERGED, StopReason.STALLED, StopReason.MAX_ITER)
    assert out.details.polish_rounds >= 1 and out.details.lower_bound is None
    assert "repaired" in out.message and "fully-corrective" in out.message
    assert out.history and out.history[-1]["max_violation"] <= 1e-7  # the record says what is returned
    assert out.n_oracle_calls >= space.n_classes  # the constants' calls are counted
    # every constant classifier has demographic parity difference exactly 0
    consts = [oracle(L)[1] for L in constant_costs(space)]
    assert all(cp.max_violation(C) <= 1e-12 for C in consts)
    best_constant = min(cp.objective.value(C) for C in consts)
    value = cp.objective.value(out.confusion)
    # the polish optimizes: far better than any constant (error 2/3 or more for 3 balanced classes)
    assert value < best_constant - 0.15
    if objective == "error":  # the same program column generation solves from its own start (with the
        # plug-in rule's pricing, the polish's; its recalibrated pricing finds other columns)
        ref = column_generation(cp, PluginOracle(P, y, cells, space), recalibration=())
        assert ref.feasible
        # the same optimum of the same master program (equal to the last digit here and on seeds 4-5; the
        # tolerance leaves room for another path of the inexact oracle's pricing)
        assert abs(value - cp.objective.value(ref.confusion)) <= 1e-4


def test_repair_leaves_feasible_results_and_refit_oracles_alone():
    from sklearn.linear_model import LogisticRegression

    from goalfit.methods.plugin import RefitOracle

    P, y, cells, space = _multiclass(3000, seed=1, n_classes=3)
    cp = gf.Problem("error", [gf.demographic_parity_difference() <= 0.02]).compile(space)
    oracle = PluginOracle(P, y, cells, space)
    res = solve(cp, oracle)
    assert res.feasible and "repaired" not in res.message
    assert not applies(cp, oracle, res)
    refit = RefitOracle(LogisticRegression(max_iter=200), P, y, cells, space)  # members are refitted models
    start = _argmax_result(cp, oracle, space)
    assert not applies(cp, refit, start) and applies(cp, oracle, start)
    assert repair_infeasible(cp, refit, start) is start and not start.feasible and refit.n_calls == 0


def test_repair_of_a_non_smooth_objective_is_feasible_and_says_it_is_not_optimized():
    """G-mean (non-smooth, no epigraph LP): the polish does not apply, the feasible mixture of
    the pool is returned with a warning and a message that says so."""
    P, y, cells, space = _multiclass(4000, seed=4, n_classes=3)
    cp = gf.Problem("gmean", [gf.demographic_parity_difference() <= 0.01]).compile(space)
    oracle = PluginOracle(P, y, cells, space)
    with pytest.warns(RuntimeWarning, match="not optimized"):
        out = repair_infeasible(cp, oracle, _argmax_result(cp, oracle, space))
    assert out.feasible and cp.max_violation(out.confusion) <= 1e-7
    assert "not optimized further" in out.message


def test_repair_polishes_min_max_recall_by_its_epigraph_duals():
    """Min-max recall (a maximum of linear pieces): the repair's column generation prices it with
    the epigraph LP's duals, so the repaired mixture is feasible and no worse than the feasible
    mixture of the pool and the constants alone (the mixture program over them), with no warning."""
    import warnings

    from goalfit.methods.plugin.mixture import mixture_program

    P, y, cells, space = _multiclass(4000, seed=4, n_classes=3)
    cp = gf.Problem("minmax_recall", [gf.demographic_parity_difference() <= 0.01]).compile(space)
    oracle = PluginOracle(P, y, cells, space)
    start = _argmax_result(cp, oracle, space)
    consts = [PluginOracle(P, y, cells, space)(L) for L in constant_costs(space)]
    pool = mixture_program(cp, list(start.members) + [m for m, _ in consts],
                           np.concatenate([start.confusions, np.array([C for _, C in consts])]))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        out = repair_infeasible(cp, oracle, start)
    assert out.feasible and cp.max_violation(out.confusion) <= 1e-7
    assert "column generation continued" in out.message
    assert cp.objective.value(out.confusion) <= cp.objective.value(np.tensordot(pool[2], pool[1], axes=1)) + 1e-9


def test_repair_with_the_group_blind_oracle():
    """Group-blind oracle (joint probabilities; rates on the true groups): the constants are
    group-blind rules too, and the repaired mixture meets the goal on the true groups."""
    from goalfit.methods.plugin.group_blind import GroupBlindOracle

    P, y, cells, space = _multiclass(4000, seed=5, n_classes=3)
    rng = np.random.default_rng(5)
    pa = np.clip(0.5 + 0.2 * rng.standard_normal(len(y)), 0.05, 0.95)  # a weak guess of the group
    joint = np.stack([P * pa[:, None], P * (1 - pa)[:, None]], axis=1)  # (n, cells, classes)
    oracle = GroupBlindOracle(joint, y, cells, space)
    cp = gf.Problem("error", [gf.demographic_parity_difference() <= 0.005]).compile(space)
    member, C = oracle(-np.broadcast_to(np.eye(3), space.shape))
    start = FitResult([member], np.ones(1), C[None], "column_generation", feasible=False)
    assert cp.max_violation(C) > 0.01
    out = repair_infeasible(cp, oracle, start)
    assert out.feasible and cp.max_violation(out.confusion) <= 1e-7


def test_goals_no_classifier_meets_keep_the_least_violation():
    """Recall >= 0.99 for every one of three classes at once is out of reach: the repair cannot
    make it feasible and reports the least violation, never larger than the method's."""
    P, y, cells, space = _multiclass(3000, seed=2, n_classes=3)
    goals = [gf.recall(k) >= 0.99 for k in range(3)]
    cp = gf.Problem("error", goals).compile(space)
    oracle = PluginOracle(P, y, cells, space)
    start = _argmax_result(cp, oracle, space)
    before = cp.max_violation(start.confusion)
    out = repair_infeasible(cp, oracle, start)
    assert not out.feasible
    assert 0 < cp.max_violation(out.confusion) <= before


def test_compare_constants_replaces_a_feasible_rule_a_constant_beats():
    """A feasible result worse than a feasible constant (here: the rarest class everywhere) gets
    the constants in its pool: the returned mixture meets the goal, is no worse than the best
    constant, and the polish takes it to column generation's optimum on the same problem."""
    from goalfit.methods.plugin.repair import compare_constants, constant_confusions

    P, y, cells, space = _multiclass(6000, seed=3, n_classes=3)
    cp = gf.Problem("error", [gf.demographic_parity_difference() <= 0.01]).compile(space)
    oracle = PluginOracle(P, y, cells, space)
    consts = [oracle(L) for L in constant_costs(space)]
    # the oracle's constants are the row masses' tensors, which compare_constants checks
    assert all(np.allclose(C, D) for (_, C), D in zip(consts, constant_confusions(space)))
    values = [cp.objective.value(C) for _, C in consts]
    worst = int(np.argmax(values))
    start = FitResult([consts[worst][0]], np.ones(1), consts[worst][1][None], "column_generation",
                      feasible=True, message="stub path")
    with pytest.warns(RuntimeWarning, match="worse than predicting"):
        out = compare_constants(cp, oracle, start)
    assert out.feasible and cp.max_violation(out.confusion) <= 1e-7
    value = cp.objective.value(out.confusion)
    assert value <= min(values) + 1e-12
    ref = column_generation(cp, PluginOracle(P, y, cells, space), recalibration=())
    assert abs(value - cp.objective.value(ref.confusion)) <= 1e-4  # equal to the last digit here and on seeds 4-5
    assert out.history and abs(out.history[-1]["objective"] - value) <= 1e-12
    # a result no constant beats is returned as it is, with no oracle call
    calls = oracle.n_calls
    assert compare_constants(cp, oracle, ref) is ref and oracle.n_calls == calls


def _predicting(space, classes, weights):
    """The confusion tensor of a rule that predicts ``classes`` with probabilities ``weights``
    whatever the example (each (cell, class) row spread as the row mass)."""
    r = np.zeros(space.n_classes)
    r[list(classes)] = weights
    return space.row_mass[:, :, None] * r[None, None, :]


def test_prune_keeps_a_feasible_mixture_of_members_whose_values_are_all_infinite():
    """KL quantification is infinite for a rule that never predicts some class, finite for a
    mixture of such rules that together predict every class: the LP of §8.2 on the members'
    values cannot run, which is not infeasibility. The input mixture, which meets the slack
    constraint, is returned as feasible with its finite objective (it was reported infeasible,
    with an infinite-objective vertex, before)."""
    from goalfit.methods.plugin import prune

    _, _, _, space = _multiclass(600, seed=1, n_classes=3)
    cp = gf.Problem("kl_quantification", [gf.coverage(0) <= 0.9]).compile(space)
    Cs = np.array([_predicting(space, pair, [0.5, 0.5]) for pair in ((0, 1), (1, 2), (0, 2))])
    assert np.isinf(cp.objective.values(Cs)).all()
    members, C, w, feasible, viol = prune(cp, ["01", "12", "02"], Cs, np.ones(3))
    mix = np.tensordot(w, C, axes=1)
    assert feasible and viol <= 0 and cp.max_violation(mix) == 0
    uniform = cp.objective.value(Cs.mean(axis=0))  # every class predicted a third of the time
    assert np.isfinite(uniform) and cp.objective.value(mix) == pytest.approx(uniform, abs=1e-12)


def test_compare_constants_replaces_an_infinite_objective_by_a_mixture_of_the_constants():
    """A feasible result of infinite KL quantification (its rule predicts one class only) is not
    beaten by any single constant rule (each infinite too), but by their mixture in the classes'
    prior proportions (KL 0): the returned mixture is that, with a warning that says so."""
    from goalfit.methods.plugin.repair import compare_constants

    P, y, cells, space = _multiclass(3000, seed=2, n_classes=3)
    cp = gf.Problem("kl_quantification", [gf.demographic_parity_difference() <= 0.05]).compile(space)
    oracle = PluginOracle(P, y, cells, space)
    member, C = oracle(constant_costs(space)[1])
    start = FitResult([member], np.ones(1), C[None], "con_gda", feasible=True, message="stub")
    start.details = PluginDetails("plugin", StopReason.MAX_ITER, 0)
    assert np.isinf(cp.objective.value(start.confusion)) and cp.max_violation(start.confusion) == 0
    with pytest.warns(RuntimeWarning, match="a mixture of the constant rules"):
        out = compare_constants(cp, oracle, start)
    assert cp.objective.value(out.confusion) <= 1e-9 and cp.max_violation(out.confusion) <= 1e-9
    assert "a mixture of the constant rules" in out.message


def test_compare_constants_gives_the_returned_mixture_its_gap():
    """The mixture compare_constants returns carries its own certified gap (value minus the
    lower bound, the polish's when better), not the replaced rule's: ``details.gap`` is written
    where the mixture changes."""
    from goalfit.methods.plugin import ThresholdOracle
    from goalfit.methods.plugin.repair import compare_constants
    from tests.methods.plugin.test_solvers import calibrated

    P, y, cells, space = calibrated(0)
    cp = gf.Problem("error", [gf.demographic_parity_difference() <= 0.02]).compile(space)
    oracle = ThresholdOracle(P, y, cells, space)
    consts = [oracle(L) for L in constant_costs(space)]
    values = [cp.objective.value(C) for _, C in consts]
    worst = int(np.argmax(values))
    start = FitResult([consts[worst][0]], np.ones(1), consts[worst][1][None], "column_generation",
                      feasible=True, message="stub path")
    start.details = PluginDetails("threshold", StopReason.CONVERGED, 0, lower_bound=0.0, gap=values[worst])
    with pytest.warns(RuntimeWarning, match="worse than predicting"):
        out = compare_constants(cp, oracle, start)
    value = cp.objective.value(out.confusion)
    assert value < values[worst] - 1e-3
    assert out.details.lower_bound > 0.0  # the polish's certified bound replaced the stub's
    assert out.details.gap == pytest.approx(value - out.details.lower_bound, abs=1e-12)
    assert 0.0 <= out.details.gap <= 1e-4  # certified optimal over the threshold rules
