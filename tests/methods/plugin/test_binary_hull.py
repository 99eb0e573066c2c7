"""The binary fast path of Frank-Wolfe / SplitFW (``binary_hull``): the exact optimum over the
per-cell ROC hulls of the plug-in rules.

Reference: ``recall_optimum`` of ``tests/methods/plugin/test_solvers.py`` enumerates every threshold rule the
plug-in oracle can produce in each cell and minimizes the objective over their mixtures (LPs and
a scalar search). The fast path must reach it on calibrated data (where the plug-in oracle is
exact) and on uncalibrated data (where it is not, and the iterations stop short of it), return a
mixture of plug-in rules meeting the goals, and never end above the paper's fixed budget.
"""
import highspy
import numpy as np
import pandas as pd
import pytest

import goalfit as gf
from scipy.optimize import linprog

from goalfit.classifiers.members import ThresholdRule
from goalfit.confusion import CellEncoder, ConfusionSpace
from goalfit.methods.plugin import (PluginOracle, ThresholdOracle, choose_method, column_generation, con_gda,
                                   frank_wolfe, split_frank_wolfe)
from goalfit.methods.plugin import binary_hull
from tests.methods.plugin.test_solvers import (calibrated, cell_rules, gmean, hmean, linear_optimum, qmean,
                                               recall_optimum, uncalibrated)

GOALS = [
    [],
    [gf.demographic_parity_difference() <= 0.02],
    [gf.equalized_odds_difference() <= 0.01],
    [gf.equal_opportunity_difference() <= 0.0, gf.coverage(1) <= 0.4],
]


def _sample_confusion(member, P, y, cells, space):
    """The member's confusion tensor from its own predictions on the sample."""
    pred = member.predict_codes(None, P, cells)
    C = np.zeros(space.shape)
    np.add.at(C, (cells, y, pred), 1.0)
    return C / len(y)


def _check(P, y, cells, space, objective, psi, goals):
    cp = gf.Problem(objective, goals).compile(space)
    ref = recall_optimum(cell_rules(P, y, cells, space), space, psi, cp.A, cp.b)
    fn = split_frank_wolfe if goals else frank_wolfe
    oracle = PluginOracle(P, y, cells, space)
    res = fn(cp, oracle, tol=1e-4)
    assert res.message.startswith("exact"), res.message
    assert len(res.members) <= 2 * space.n_cells + 1  # sum_c (k_c - 1) + 1 product rules, k_c <= 3
    assert all(isinstance(m, ThresholdRule) for m in res.members)
    # the members' own predictions on the sample give the confusions the mixture is built from
    for m, C in zip(res.members, res.confusions):
        np.testing.assert_allclose(_sample_confusion(m, P, y, cells, space), C, atol=1e-15)
    assert res.feasible and cp.max_violation(res.confusion) <= 1e-9
    val = cp.objective.value(res.confusion)
    assert val == pytest.approx(ref, abs=1e-6)
    return cp, val


@pytest.mark.parametrize("goals", GOALS, ids=["none", "dp", "eo", "eopp+coverage"])
@pytest.mark.parametrize("seed", [0, 1])
def test_fast_path_reaches_the_brute_force_optimum_calibrated(seed, goals):
    P, y, cells, space = calibrated(seed, groups=("F", "M"), n_buckets=8)
    _check(P, y, cells, space, "hmean", hmean, goals)


@pytest.mark.parametrize("goals", GOALS[:3], ids=["none", "dp", "eo"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fast_path_reaches_the_optimum_the_iterations_approach_uncalibrated(seed, goals):
    """Uncalibrated: the plug-in oracle is inexact, the fast path still finds the optimum over
    all its rules, at or below the paper's fixed-budget result (tol=0, 600 iterations)."""
    P, y, cells, space = uncalibrated(seed, n=80)
    cp, val = _check(P, y, cells, space, "qmean", qmean, goals)
    fn = split_frank_wolfe if goals else frank_wolfe
    full = fn(cp, PluginOracle(P, y, cells, space), max_iter=600, tol=0.0, exact_binary=False)
    assert val <= cp.objective.value(full.confusion) + 1e-9


def test_three_groups_and_degenerate_cells():
    """A cell with one label only and a cell with one probability value: their hulls are
    segments; the optimum still matches the reference."""
    rng = np.random.default_rng(5)
    n = 90
    g = np.repeat(["a", "b", "c"], n // 3)
    eta = np.clip(rng.beta(2, 2, n), 0.01, 0.99)
    y = (rng.random(n) < eta).astype(int)
    y[g == "b"] = 0  # one label only
    eta[g == "c"] = 0.4  # one probability value
    P = np.column_stack([1 - eta, eta])
    enc = CellEncoder()
    cells = enc.fit_transform(pd.Series(g, name="grp"))
    space = ConfusionSpace.from_codes(y, cells, np.arange(2), enc.cells_, None)
    _check(P, y, cells, space, "hmean", hmean, [gf.demographic_parity_difference() <= 0.05])


def test_infeasible_goals_fall_back_to_the_iterations():
    """No point of the hulls meets the goals: the fast path declines and SplitFW returns the
    least-violating mixture, as without it."""
    P, y, cells, space = calibrated(0, groups=("F", "M"), n_buckets=8)
    cp = gf.Problem("hmean", [gf.coverage(1) <= 0.3, gf.coverage(1) >= 0.5]).compile(space)
    assert binary_hull.solve(cp, PluginOracle(P, y, cells, space), 1e-4) is None
    res = split_frank_wolfe(cp, PluginOracle(P, y, cells, space), max_iter=200)
    assert not res.feasible and not res.message.startswith("exact")


def test_fast_path_scope():
    """Binary, the plug-in or threshold oracle, linear, convex (smooth, piecewise-linear or of a
    few features) or smooth non-convex objectives with polyhedral goals; not other oracles, not
    a non-polyhedral constraint."""
    P, y, cells, space = calibrated(0, groups=("F", "M"), n_buckets=8)
    cp = gf.Problem("hmean", [gf.demographic_parity_difference() <= 0.02]).compile(space)
    plugin, threshold = PluginOracle(P, y, cells, space), ThresholdOracle(P, y, cells, space)
    for objective in ("hmean", "error", "minmax_recall", "kl_quantification", "gmean"):
        goal = gf.Problem(objective, [gf.demographic_parity_difference() <= 0.02]).compile(space)
        assert binary_hull.applies(goal, plugin) and binary_hull.applies(goal, threshold), objective
    assert binary_hull.applies(gf.Problem("macro_f1", []).compile(space), plugin)
    kl = gf.Problem("error", [gf.kl_quantification() <= 0.01]).compile(space)  # a non-polyhedral constraint
    assert not binary_hull.applies(kl, plugin)
    assert not binary_hull.applies(cp, object())
    res = split_frank_wolfe(cp, PluginOracle(P, y, cells, space), max_iter=300, exact_binary=False)
    assert not res.message.startswith("exact")


@pytest.mark.parametrize("goals", GOALS[1:3], ids=["dp", "eo"])
@pytest.mark.parametrize("seed", [0, 1])
def test_threshold_oracle_takes_the_hulls_with_threshold_rules(seed, goals):
    """With the threshold oracle (the binary default) the hulls are the same (per-cell thresholds
    on eta_1): the same optimum as the brute-force reference and as exact column generation
    over its calls, written as ThresholdRules whose own predictions give the confusions."""
    P, y, cells, space = uncalibrated(seed, n=80)
    cp = gf.Problem("qmean", goals).compile(space)
    ref = recall_optimum(cell_rules(P, y, cells, space), space, qmean, cp.A, cp.b)
    oracle = ThresholdOracle(P, y, cells, space)
    res = split_frank_wolfe(cp, oracle, tol=1e-6)
    assert res.message.startswith("exact"), res.message
    assert all(isinstance(m, ThresholdRule) for m in res.members)
    for m, C in zip(res.members, res.confusions):
        np.testing.assert_allclose(_sample_confusion(m, P, y, cells, space), C, atol=1e-12)
    assert res.feasible and cp.max_violation(res.confusion) <= 1e-9
    assert cp.objective.value(res.confusion) == pytest.approx(ref, abs=1e-6)
    cg = split_frank_wolfe(cp, ThresholdOracle(P, y, cells, space), tol=1e-6, exact_binary=False)
    assert cp.objective.value(res.confusion) <= cp.objective.value(cg.confusion) + 1e-6


LINEAR_GOALS = [[gf.demographic_parity_difference() <= 0.02], [gf.equalized_odds_difference() <= 0.01],
                [gf.coverage(1) <= 0.3]]


@pytest.mark.parametrize("goals", LINEAR_GOALS, ids=["dp", "eo", "coverage"])
@pytest.mark.parametrize("objective", ["error", "balanced_error"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_column_generation_reaches_the_lp_optimum_over_all_threshold_rules(seed, objective, goals):
    """Uncalibrated probabilities: pricing with the plug-in oracle stops where no rule has a
    negative *expected* reduced cost; the hulls' LP reaches the sample's optimum over every
    threshold rule, with either oracle."""
    P, y, cells, space = uncalibrated(seed, n=80)
    cp = gf.Problem(objective, goals).compile(space)
    ref = linear_optimum(cell_rules(P, y, cells, space), cp)
    for oracle in (PluginOracle(P, y, cells, space), ThresholdOracle(P, y, cells, space)):
        res = column_generation(cp, oracle)
        assert res.message.startswith("exact: linear program"), res.message
        assert res.feasible and cp.max_violation(res.confusion) <= 1e-9
        assert cp.objective.value(res.confusion) == pytest.approx(ref, abs=1e-9)
        priced = column_generation(cp, oracle, exact_binary=False)
        assert cp.objective.value(res.confusion) <= cp.objective.value(priced.confusion) + 1e-9


def minmax(r):
    return float(np.max(1 - r))


@pytest.mark.parametrize("goals", GOALS[:3], ids=["none", "dp", "eo"])
@pytest.mark.parametrize("seed", [0, 1])
def test_min_max_recall_takes_the_epigraph_lp(seed, goals):
    """Binary min-max recall: method="auto" resolves to SplitFW, whose exact path solves the
    epigraph LP over the hulls: the brute-force optimum, never above ConGDA's iterations."""
    P, y, cells, space = uncalibrated(seed, n=80)
    cp = gf.Problem("minmax_recall", goals).compile(space)
    ref = recall_optimum(cell_rules(P, y, cells, space), space, minmax, cp.A, cp.b)
    for oracle in (PluginOracle(P, y, cells, space), ThresholdOracle(P, y, cells, space)):
        assert choose_method(cp, oracle) == "split_frank_wolfe"
        res = split_frank_wolfe(cp, oracle)
        assert res.message.startswith("exact: linear program"), res.message
        assert res.feasible and cp.max_violation(res.confusion) <= 1e-9
        assert cp.objective.value(res.confusion) == pytest.approx(ref, abs=1e-6)
        it = con_gda(cp, type(oracle)(P, y, cells, space), max_iter=500)
        assert cp.objective.value(res.confusion) <= cp.objective.value(it.confusion) + 1e-9


@pytest.mark.parametrize("goals", GOALS[:3], ids=["none", "dp", "eo"])
@pytest.mark.parametrize("seed", [0, 1])
def test_g_mean_takes_the_convex_program_where_it_is_differentiable(seed, goals):
    """G-mean is convex but not smooth (a kink where a recall is 0): away from it the convex
    program over the hulls is certified by the same LP and reaches the brute-force optimum."""
    P, y, cells, space = uncalibrated(seed, n=80)
    cp = gf.Problem("gmean", goals).compile(space)
    ref = recall_optimum(cell_rules(P, y, cells, space), space, gmean, cp.A, cp.b)
    for oracle in (PluginOracle(P, y, cells, space), ThresholdOracle(P, y, cells, space)):
        res = split_frank_wolfe(cp, oracle, tol=1e-6)
        assert res.message.startswith("exact: convex program"), res.message
        assert res.feasible and cp.max_violation(res.confusion) <= 1e-9
        assert cp.objective.value(res.confusion) == pytest.approx(ref, abs=1e-6)


def _macro_f1_grid_optimum(sets, space, A, b, points=301):
    """Binary macro-F1 over mixtures of each cell's rules, by brute force: at a fixed total of
    false positives both classes' F1 grow with the true positives, so the optimum lies on
    ``g(v) = max TP s.t. FP = v`` (one LP per ``v``); the best of a fine grid of ``v``."""
    X = np.vstack(sets)
    Xr = X.reshape(len(X), *space.shape)
    fp, tp = Xr[:, :, 0, 1].sum(axis=1), Xr[:, :, 1, 1].sum(axis=1)
    n0, n1 = space.row_mass[:, 0].sum(), space.row_mass[:, 1].sum()
    A_eq = np.zeros((len(sets), len(X)))
    k = 0
    for i, rules in enumerate(sets):
        A_eq[i, k:k + len(rules)] = 1.0
        k += len(rules)
    G = A @ X.T if A is not None else np.zeros((0, len(X)))
    bb = b if A is not None else np.zeros(0)

    lo = linprog(fp, A_ub=G if len(G) else None, b_ub=bb if len(G) else None, A_eq=A_eq,
                 b_eq=np.ones(len(sets)), bounds=(0, None)).fun
    hi = -linprog(-fp, A_ub=G if len(G) else None, b_ub=bb if len(G) else None, A_eq=A_eq,
                  b_eq=np.ones(len(sets)), bounds=(0, None)).fun
    # g(v) on the grid: one HiGHS model, the row FP = v moved from point to point (warm started;
    # a fresh linprog per point costs 5 ms, three hundred per goal)
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    inf = highspy.kHighsInf
    h.addVars(len(X), np.zeros(len(X)), np.full(len(X), inf))
    h.changeColsCost(len(X), np.arange(len(X), dtype=np.int32), -tp)
    for rows, lower, upper in ((G, np.full(len(bb), -inf), bb), (A_eq, np.ones(len(sets)), np.ones(len(sets))),
                               (fp[None, :], [lo], [lo])):
        for r, lw, up in zip(rows, lower, upper):
            nz = np.flatnonzero(r).astype(np.int32)
            h.addRow(float(lw), float(up), len(nz), nz, r[nz])
    last = h.getNumRow() - 1
    best = np.inf
    for v in np.linspace(lo, hi, points):
        h.changeRowBounds(last, float(v), float(v))
        h.run()
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            continue
        t = -h.getInfo().objective_function_value
        f1 = 2 * t / (t + v + n1) if t + v + n1 > 0 else 0.0
        tn = n0 - v
        f0 = 2 * tn / (2 * tn + (n1 - t) + v) if tn > 0 else 0.0
        best = min(best, 1 - (f0 + f1) / 2)
    return best


@pytest.mark.parametrize("goals", GOALS[:3] + [[gf.coverage(1) <= 0.3]], ids=["none", "dp", "eo", "coverage"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_macro_f1_takes_the_best_local_optimum_over_the_hulls(seed, goals):
    """Binary macro-F1 (not convex): auto runs SplitFW, whose exact path runs SLSQP over the
    hulls from the balanced random rule (a stationary point) and from the linearization's vertex
    there; its local optimum reaches the brute-force optimum here (at least as low as every
    point of a 301-point grid along the frontier) and ConGDA's iterations, with no certificate."""
    P, y, cells, space = uncalibrated(seed, n=80)
    cp = gf.Problem("macro_f1", goals).compile(space)
    ref = _macro_f1_grid_optimum(cell_rules(P, y, cells, space), space, cp.A, cp.b)
    oracle = ThresholdOracle(P, y, cells, space)
    with pytest.warns(RuntimeWarning, match="heuristic"):
        assert choose_method(cp, oracle) == "split_frank_wolfe"
    res = split_frank_wolfe(cp, oracle)
    assert res.message.startswith("converged: local optimum"), res.message
    assert res.details.gap is None and res.details.lower_bound is None
    assert res.feasible and cp.max_violation(res.confusion) <= 1e-9
    val = cp.objective.value(res.confusion)
    assert val <= ref + 1e-9
    it = con_gda(cp, ThresholdOracle(P, y, cells, space), max_iter=500)
    assert val <= cp.objective.value(it.confusion) + 1e-9


def test_adjacent_doubles_keep_the_hulls_vertices_exact():
    """Two probabilities one ulp apart: a threshold halfway between them rounds onto one of them,
    so a plug-in rule built from a cost would not be the hull's vertex. The members are
    threshold rules at sample values, so with either oracle the returned mixture is the
    program's, at the brute-force optimum, and certified."""
    eta = np.array([0.1, 0.3, np.nextafter(0.3, 1.0), 0.8])
    y = np.array([1, 1, 0, 0])
    enc = CellEncoder()
    cells = enc.fit_transform(pd.Series(["a"] * 4, name="g"))
    space = ConfusionSpace.from_codes(y, cells, np.arange(2), enc.cells_)
    P = np.column_stack([1 - eta, eta])
    cp = gf.Problem("error", [gf.coverage(1) <= 0.5]).compile(space)
    ref = linear_optimum(cell_rules(P, y, cells, space), cp)
    for oracle in (PluginOracle(P, y, cells, space), ThresholdOracle(P, y, cells, space)):
        res = column_generation(cp, oracle)
        assert res.message.startswith("exact") and res.feasible
        assert cp.objective.value(res.confusion) == pytest.approx(ref, abs=1e-12)
        assert res.details.lower_bound == pytest.approx(ref, abs=1e-12)
        for m, C in zip(res.members, res.confusions):
            np.testing.assert_allclose(_sample_confusion(m, P, y, cells, space), C, atol=1e-15)


def test_a_cell_qhull_cannot_describe_makes_the_path_decline(monkeypatch):
    """Qhull's failure is read as collinear points (a segment) only when they are: a cell whose
    points leave the segment is not described, and the hulls' path declines instead of solving
    over a smaller set (here Qhull is made to fail on every cell)."""
    from scipy.spatial import QhullError

    P, y, cells, space = uncalibrated(0, n=80)
    cp = gf.Problem("hmean", [gf.demographic_parity_difference() <= 0.02]).compile(space)

    def fail(points):
        raise QhullError("forced")

    monkeypatch.setattr(binary_hull, "ConvexHull", fail)
    assert binary_hull.solve(cp, PluginOracle(P, y, cells, space), 1e-4) is None
    res = split_frank_wolfe(cp, PluginOracle(P, y, cells, space), max_iter=200)
    assert not res.message.startswith("exact") and res.feasible
