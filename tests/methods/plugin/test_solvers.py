"""Plug-in methods on small problems with known optima.

The references enumerate every rule the binary plug-in oracle can produce: in each cell the
rule is a threshold on eta_1, i.e. class 1 on a suffix {eta >= u} or (for costs with the
margin increasing in eta) a prefix {eta <= u} of the sorted probabilities, or on nothing.
Mixtures of per-cell rules across cells are exactly the product of per-cell mixtures
(the convex hull of a Cartesian product is the product of the hulls), so the reference programs
use one simplex per cell; :func:`test_per_cell_hull_equals_product_hull` checks this once
against the full product enumeration.

**Calibrated data.** The plug-in oracle minimizes the *expected* cost under eta-hat, which is
the cost on the sample only when eta-hat is calibrated on the sample. The main fixtures are
calibrated: every (cell, eta) bucket holds examples whose fraction of positives is exactly
eta. Then the plug-in oracle is an exact linear minimization oracle on the sample (its outputs'
convex hull is the hull of all bucket-measurable classifiers), and exact methods must reach
the exact optimum over the hull of threshold rules. With uncalibrated probabilities the oracle
is only approximate (the rho of Def. 11), and column generation is exact only over the hull of
the members it found; :func:`test_column_generation_uncalibrated_is_master_optimal` checks that.
"""
import itertools
import re

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import linprog, minimize_scalar

import goalfit as gf
from goalfit.confusion import CellEncoder, ConfusionSpace, confusion_tensor
from goalfit.methods.plugin.baselines import argmax_plugin, balanced_plugin, post_shift
from goalfit.methods.plugin import (PluginOracle, StopReason, choose_method, column_generation, con_gda, frank_wolfe,
                                    prune, solve, split_frank_wolfe)
from goalfit.methods.plugin._common import project_simplex_rows, unique_members


# ------------------------------------------------------------------ fixtures and references
def _space(eta, y, g, w=None):
    P = np.column_stack([1 - eta, eta])
    enc = CellEncoder()
    cells = enc.fit_transform(pd.Series(g, name="sex"))
    space = ConfusionSpace.from_codes(y, cells, np.arange(2), enc.cells_, w)
    return P, y, cells, space


def calibrated(seed, groups=("F", "M"), n_buckets=8, sizes=(4, 5, 6, 7)):
    """Binary data whose probabilities are calibrated on the sample (see module docstring)."""
    rng = np.random.default_rng(seed)
    eta, y, g = [], [], []
    for gi, grp in enumerate(groups):
        for _ in range(n_buckets):
            m = int(rng.choice(sizes))
            k = int(rng.integers(0, m + 1))
            if gi:  # the second group has more positives: group constraints bind
                k = min(m, k + int(rng.integers(0, 2)))
            eta += [k / m] * m
            y += [1] * k + [0] * (m - k)
            g += [grp] * m
    return _space(np.array(eta), np.array(y), np.array(g))


def uncalibrated(seed, n=60, groups=("F", "M")):
    rng = np.random.default_rng(seed)
    g = rng.choice(np.array(groups), n)
    eta = np.clip(rng.beta(2, 2, n) + 0.15 * (g == groups[-1]), 0.01, 0.99)
    y = (rng.random(n) < eta).astype(int)
    return _space(eta, y, g)


def cell_rules(P, y, cells, space, suffix_only=False):
    """Per cell, the distinct confusion tensors (flattened, zero outside the cell) of every
    threshold rule the binary plug-in oracle can produce there."""
    eta = P[:, 1]
    N = len(y)
    out = []
    for c in range(space.n_cells):
        idx = np.flatnonzero(cells == c)
        u = np.unique(eta[idx])
        sets = [np.zeros(len(idx), bool)] + [eta[idx] >= t for t in u]
        if not suffix_only:
            sets += [eta[idx] <= t for t in u]
        Cs = [confusion_tensor(y[idx], s.astype(int), cells[idx], 2, space.n_cells) * len(idx) / N
              for s in sets]
        out.append(np.unique(np.array(Cs).reshape(len(Cs), -1), axis=0))
    return out


def _per_cell_lp(sets, cost, A_ub_rows=None, b_ub=None):
    X = np.vstack(sets)
    A_eq = np.zeros((len(sets), len(X)))
    k = 0
    for i, s in enumerate(sets):
        A_eq[i, k:k + len(s)] = 1
        k += len(s)
    A_ub = None if A_ub_rows is None else A_ub_rows @ X.T
    res = linprog(cost @ X.T, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=np.ones(len(sets)),
                  bounds=(0, None), method="highs")
    assert res.status == 0
    return res, X


def linear_optimum(sets, problem):
    res, _ = _per_cell_lp(sets, problem.objective.coef.ravel(), problem.A, problem.b)
    return res.fun + problem.objective.const


def recall_optimum(sets, space, psi, A=None, b=None):
    """min psi(r_0, r_1) over mixtures of the rules (s.t. A vec(C) <= b), for psi convex and
    non-increasing in each recall (H-mean, Q-mean, G-mean, min-max).

    With g(v) = max {r_1 : r_0 >= v, feasible} (concave, an LP), h(v) = psi(v, g(v)) is convex
    and min_v h(v) is the optimum (monotonicity), so a bounded scalar search is exact up to its
    tolerance."""
    X = np.vstack(sets)
    R = len(X)
    Xr = X.reshape(R, *space.shape)
    pi = space.priors
    r0 = Xr[:, :, 0, 0].sum(axis=1) / pi[0]
    r1 = Xr[:, :, 1, 1].sum(axis=1) / pi[1]
    A_eq = np.zeros((len(sets), R))
    k = 0
    for i, s in enumerate(sets):
        A_eq[i, k:k + len(s)] = 1
        k += len(s)
    G = np.zeros((0, R)) if A is None else A @ X.T
    bb = np.zeros(0) if A is None else np.asarray(b)

    def lp(c, row=None, rhs=None):
        Au = G if row is None else np.vstack([G, row])
        bu = bb if row is None else np.concatenate([bb, [rhs]])
        res = linprog(c, A_ub=Au if len(Au) else None, b_ub=bu if len(Au) else None, A_eq=A_eq,
                      b_eq=np.ones(len(sets)), bounds=(0, None), method="highs")
        assert res.status == 0
        return res.fun

    vmax = -lp(-r0)

    def h(v):
        return psi(np.array([v, -lp(-r1, -r0, -v)]))

    out = minimize_scalar(h, bounds=(0.0, vmax), method="bounded", options={"xatol": 1e-10})
    return min(out.fun, h(vmax), h(0.0))


def hmean(r):
    return 1 - len(r) / np.sum(1 / r) if (r > 0).all() else 1.0


def qmean(r):
    return float(np.sqrt(np.mean((1 - r) ** 2)))


def gmean(r):
    return float(1 - np.prod(r) ** (1 / len(r)))


def minmax(r):
    return float(np.max(1 - r))


# ------------------------------------------------------------------ (a) column generation
def test_per_cell_hull_equals_product_hull():
    P, y, cells, space = calibrated(0)
    cp = gf.Problem("error", [gf.demographic_parity_difference() <= 0.02]).compile(space)
    sets = cell_rules(P, y, cells, space)
    X = np.array([a + b for a in sets[0] for b in sets[1]])
    res = linprog(X @ cp.objective.coef.ravel(), A_ub=cp.A @ X.T, b_ub=cp.b,
                  A_eq=np.ones((1, len(X))), b_eq=[1.0], method="highs")
    assert res.fun + cp.objective.const == pytest.approx(linear_optimum(sets, cp), abs=1e-12)


CG_GOALS = [
    ("error", [gf.demographic_parity_difference() <= 0.02]),
    ("error", [gf.demographic_parity_difference() <= 0.02, gf.equal_opportunity_difference() <= 0.05]),
    ("balanced_error", [gf.equal_opportunity_difference(method="to_overall") <= 0.01]),
    (gf.cost_sensitive_loss([[0.0, 1.0], [3.0, 0.0]]), [gf.demographic_parity_ratio() >= 0.9,
                                                       gf.precision(1) >= 0.6]),
    ("error", [gf.true_positive_rate(group="F") >= gf.true_positive_rate(group="M") - 0.02,
               gf.coverage(1) <= 0.4]),
]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("objective,constraints", CG_GOALS, ids=range(len(CG_GOALS)))
def test_column_generation_reaches_exact_lp(seed, objective, constraints):
    """Calibrated probabilities: pricing with the plug-in oracle (``exact_binary=False``) and the
    ROC hulls' LP (the default) both reach the LP optimum over every threshold rule."""
    P, y, cells, space = calibrated(seed)
    cp = gf.Problem(objective, constraints).compile(space)
    ref = linear_optimum(cell_rules(P, y, cells, space), cp)
    for exact_binary, message in ((False, "optimal"), (True, "exact: linear program")):
        res = column_generation(cp, PluginOracle(P, y, cells, space), exact_binary=exact_binary)
        assert res.feasible and res.message.startswith(message)
        assert cp.objective.value(res.confusion) == pytest.approx(ref, abs=1e-9)
        assert cp.max_violation(res.confusion) <= 1e-9
        assert res.n_oracle_calls < 40
        np.testing.assert_allclose(res.weights.sum(), 1.0)
    # constraints never help, and on seeds 0 and 3 they bind for every goal set
    free = linear_optimum(cell_rules(P, y, cells, space), gf.Problem(objective).compile(space))
    assert free <= ref + 1e-12
    if seed in (0, 3):
        assert free < ref - 1e-3
    # the members' confusion tensors are those of their plug-in rules
    for m, C in zip(res.members, res.confusions):
        pred = m.predict_codes(None, P, cells)
        np.testing.assert_allclose(C, confusion_tensor(y, pred, cells, 2, space.n_cells), atol=1e-15)


def test_column_generation_uncalibrated_is_master_optimal():
    """Approximate oracle, pricing (not the ROC hulls' LP): the result is the exact optimum over
    the hull of the members found (and never below the optimum over all threshold rules)."""
    for seed in range(3):
        P, y, cells, space = uncalibrated(seed)
        cp = gf.Problem("error", [gf.demographic_parity_difference() <= 0.02]).compile(space)
        res = column_generation(cp, PluginOracle(P, y, cells, space), exact_binary=False)
        ref_all = linear_optimum(cell_rules(P, y, cells, space), cp)
        val = cp.objective.value(res.confusion)
        assert val >= ref_all - 1e-12
        X = res.confusions.reshape(len(res.confusions), -1)
        master = linprog(X @ cp.objective.coef.ravel(), A_ub=cp.A @ X.T, b_ub=cp.b,
                         A_eq=np.ones((1, len(X))), b_eq=[1.0], method="highs")
        assert val == pytest.approx(master.fun + cp.objective.const, abs=1e-12)


def test_column_generation_unconstrained_is_one_call():
    P, y, cells, space = calibrated(1)
    cp = gf.Problem("error").compile(space)
    res = solve(cp, PluginOracle(P, y, cells, space))
    assert res.method == "column_generation" and res.n_oracle_calls == 1
    assert cp.objective.value(res.confusion) == pytest.approx(
        linear_optimum(cell_rules(P, y, cells, space), cp), abs=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_lagrangian_price_at_given_multipliers_is_the_lagrangian_dual_function(seed):
    # column generation prices through lagrangian_price at its elastic master's duals (mu=...):
    # with an exact oracle, L(mu) = min over rules of <c0, C> + const + mu (A C - b), separable
    # over cells; weak duality for every mu >= 0, strong duality at the LP's own duals
    from goalfit.methods.plugin._common import lagrangian_price

    P, y, cells, space = calibrated(seed)
    cp = gf.Problem("error", [gf.demographic_parity_difference() <= 0.02, gf.coverage(1) <= 0.4]).compile(space)
    oracle = PluginOracle(P, y, cells, space)
    sets = cell_rules(P, y, cells, space)
    res, _ = _per_cell_lp(sets, cp.objective.coef.ravel(), cp.A, cp.b)
    optimum = res.fun + cp.objective.const
    K = cp.A.shape[0]
    _, C_bar = oracle(cp.objective.coef)
    rng = np.random.default_rng(seed)
    for mu in (np.zeros(K), rng.random(K), 5 * rng.random(K), -np.asarray(res.ineqlin.marginals)):
        member, C, L = lagrangian_price(cp, oracle, C_bar, cp.objective.value(C_bar), mu=mu)
        cost = cp.objective.coef.ravel() + mu @ cp.A
        brute = sum(float((S @ cost).min()) for S in sets) + cp.objective.const - float(mu @ cp.b)
        assert L == pytest.approx(brute, abs=1e-12)
        assert L <= optimum + 1e-12
        np.testing.assert_allclose(C, confusion_tensor(y, member.predict_codes(None, P, cells), cells, 2,
                                                       space.n_cells), atol=1e-15)
    assert L == pytest.approx(optimum, abs=1e-9)  # at the LP's duals
    with pytest.raises(ValueError, match="one multiplier per constraint row"):
        lagrangian_price(cp, oracle, C_bar, 0.0, mu=np.zeros(K + 1))
    with pytest.raises(ValueError, match="confusions"):
        lagrangian_price(cp, oracle, C_bar, 0.0)


# ------------------------------------------------------------------ (b) Frank-Wolfe
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("name,psi", [("hmean", hmean), ("qmean", qmean)])
def test_frank_wolfe_reaches_optimum_over_threshold_mixtures(seed, name, psi):
    P, y, cells, space = calibrated(seed, groups=("A",), n_buckets=10)  # ~55 examples
    cp = gf.Problem(name).compile(space)
    res = solve(cp, PluginOracle(P, y, cells, space), method="frank_wolfe", max_iter=1000)
    assert res.method == "frank_wolfe"
    ref = recall_optimum(cell_rules(P, y, cells, space), space, psi)
    val = cp.objective.value(res.confusion)
    assert ref - 1e-7 <= val <= ref + 1e-3
    # closed-form weights w_t = 2t / (T(T+1)) before merging duplicates: they sum to one and the
    # expected matrix is the mixture of the members
    np.testing.assert_allclose(res.weights.sum(), 1.0)
    np.testing.assert_allclose(res.confusion, np.tensordot(res.weights, res.confusions, axes=1))


def test_frank_wolfe_weights_closed_form():
    P, y, cells, space = uncalibrated(0, groups=("A",))
    cp = gf.Problem("hmean").compile(space)

    class Distinct:
        """Wraps the oracle and shifts each call's tensor by a distinct 1e-9 multiple, so that
        no two members merge and every closed-form weight is visible."""

        def __init__(self, o):
            self.o, self.n_calls, self.k = o, 0, 0

        def __call__(self, cost):
            self.n_calls += 1
            m, C = self.o(cost)
            self.k += 1
            return m, C + self.k * 1e-9  # unique tensors: no merging

    T = 25
    res = frank_wolfe(cp, Distinct(PluginOracle(P, y, cells, space)), max_iter=T, tol=0.0)  # rule off
    t = np.arange(1, T + 1)
    w = np.sort(res.weights)
    np.testing.assert_allclose(w, np.sort(2 * t / (T * (T + 1))), rtol=1e-10)


# ------------------------------------------------------------------ (c) SplitFW and ConGDA
C_CASES = [
    (("A",), gf.coverage(1) <= 0.3, [0, 1, 2, 3]),
    (("F", "M"), gf.demographic_parity_difference() <= 0.02, [0, 2, 3]),
    (("A",), gf.coverage_deviation() <= 0.02, [1, 3]),
]


@pytest.mark.parametrize("groups,constraint,seeds", C_CASES, ids=["coverage", "dp", "coverage_dev"])
@pytest.mark.parametrize("method", ["split_frank_wolfe", "con_gda"])
def test_constrained_hmean_near_optimum_and_feasible(groups, constraint, seeds, method):
    for seed in seeds:
        P, y, cells, space = calibrated(seed, groups=groups, n_buckets=10 if len(groups) == 1 else 8)
        cp = gf.Problem("hmean", [constraint]).compile(space)
        sets = cell_rules(P, y, cells, space)
        ref = recall_optimum(sets, space, hmean, cp.A, cp.b)
        free = recall_optimum(sets, space, hmean)
        assert ref > free + 2e-3  # the constraint binds
        res = solve(cp, PluginOracle(P, y, cells, space), method=method, max_iter=1500)
        assert res.method == method and res.feasible
        assert cp.max_violation(res.confusion) <= 1e-7
        val = cp.objective.value(res.confusion)
        # a feasible mixture of threshold rules cannot beat the reference optimum
        assert ref - 1e-7 <= val <= ref + 1e-2


def test_auto_follows_section_8_6():
    # few dimensions (binary): the ellipsoid family, except smooth convex objectives and G-mean,
    # which get (Split)FW's exact binary program; ratio objectives: (con)bisection
    P, y, cells, space = calibrated(0)
    cases = [("hmean", [], "frank_wolfe"), ("hmean", [gf.coverage(1) <= 0.3], "split_frank_wolfe"),
             ("qmean", [gf.coverage(1) <= 0.3], "split_frank_wolfe"),
             ("gmean", [], "split_frank_wolfe"), ("minmax_recall", [], "ellipsoid"),
             ("minmax_recall", [gf.coverage(1) <= 0.3], "con_gda"),
             ("error", [], "column_generation"), ("error", [gf.kl_quantification() <= 0.01], "con_gda"),
             ("f1", [], "bisection"), ("f1", [gf.coverage(1) <= 0.3], "con_bisection")]
    for obj, cons, method in cases:
        assert choose_method(gf.Problem(obj, cons).compile(space)) == method, (obj, cons)
    # many classes: SplitFW (the sample's mixture; min-max recall on its smoothing) but with nonlinear constraints
    rng = np.random.default_rng(0)
    n = 8
    yk = rng.integers(0, n, 400)
    from goalfit.confusion import CellEncoder as _CE, ConfusionSpace as _CS
    enc = _CE().fit(None, len(yk))
    big = _CS.from_codes(yk, np.zeros(len(yk), int), np.arange(n), enc.cells_)
    cases = [("hmean", [], "split_frank_wolfe"), ("hmean", [gf.coverage_deviation() <= 0.05], "split_frank_wolfe"),
             ("hmean", [gf.kl_quantification() <= 0.01], "con_gda"), ("gmean", [], "split_frank_wolfe"),
             ("minmax_recall", [], "split_frank_wolfe"),
             ("minmax_recall", [gf.coverage_deviation() <= 0.05], "split_frank_wolfe")]
    for obj, cons, method in cases:
        assert choose_method(gf.Problem(obj, cons).compile(big)) == method, (obj, cons)
    with pytest.warns(RuntimeWarning, match="heuristic"):
        assert choose_method(gf.Problem("macro_f1").compile(space)) == "frank_wolfe"
    with pytest.warns(RuntimeWarning, match="runs con_gda as a heuristic"):  # binary, with constraints
        assert choose_method(gf.Problem("macro_f1", [gf.coverage_deviation() <= 0.05]).compile(space)) == "con_gda"
    with pytest.warns(RuntimeWarning, match="runs split_frank_wolfe as a heuristic"):  # several classes
        assert choose_method(gf.Problem("macro_f1", [gf.coverage_deviation() <= 0.05]).compile(big)) == "split_frank_wolfe"
    import dataclasses

    from goalfit.goals.functions import BoundFunction

    rough = dataclasses.replace(gf.Problem("error").compile(space), objective=BoundFunction(space.shape, "rough"))
    with pytest.raises(ValueError, match="neither convex nor ratio-of-linear nor smooth"):
        choose_method(rough)
    with pytest.raises(ValueError, match="unknown method"):
        solve(gf.Problem("error").compile(space), PluginOracle(P, y, cells, space), method="ellipse")


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("name,psi", [("gmean", gmean), ("minmax_recall", minmax)])
@pytest.mark.parametrize("method,budget", [("gda", 1500), ("ellipsoid", 300)])
def test_gda_and_ellipsoid_non_smooth_objectives(seed, name, psi, method, budget):
    P, y, cells, space = calibrated(seed, groups=("A",), n_buckets=10)
    cp = gf.Problem(name).compile(space)
    res = solve(cp, PluginOracle(P, y, cells, space), method=method, max_iter=budget)
    assert res.method == method
    ref = recall_optimum(cell_rules(P, y, cells, space), space, psi)
    val = cp.objective.value(res.confusion)
    assert ref - 1e-7 <= val <= ref + 1e-3


def test_con_gda_with_kl_constraint_meets_it():
    P, y, cells, space = calibrated(2, groups=("A",), n_buckets=10)
    cp = gf.Problem("error", [gf.kl_quantification() <= 0.002]).compile(space)
    res = solve(cp, PluginOracle(P, y, cells, space), max_iter=1500)
    assert res.method == "con_gda" and res.feasible
    assert cp.constraints[0].value(res.confusion) <= 0.002 + 1e-9
    free = gf.Problem("error").compile(space)
    # the constraint costs accuracy, and the result is no worse than the best single feasible rule
    assert cp.objective.value(res.confusion) >= linear_optimum(cell_rules(P, y, cells, space), free) - 1e-12


# ------------------------------------------------------------------ (d) bisection
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("goal", [gf.f1(), gf.fbeta(2.0, 1), gf.fbeta(0.5, 0)], ids=["f1", "f2", "f05_0"])
def test_bisection_equals_best_threshold_rule(seed, goal):
    P, y, cells, space = calibrated(seed)
    cp = gf.Problem(goal).compile(space)
    res = solve(cp, PluginOracle(P, y, cells, space))
    assert res.method == "bisection" and len(res.members) == 1
    # the cost A - gamma B has a margin decreasing in eta: suffix rules per group
    sets = cell_rules(P, y, cells, space, suffix_only=True)
    best = min(cp.objective.value((a + b).reshape(space.shape)) for a in sets[0] for b in sets[1])
    assert cp.objective.value(res.confusion) == pytest.approx(best, abs=1e-12)
    # and by hand with scikit-learn for the member's predictions
    from sklearn.metrics import fbeta_score
    pred = res.members[0].predict_codes(None, P, cells)
    k = goal.label if goal.label is not None else 1
    ref = fbeta_score(y, pred, beta=goal.beta, labels=[k], average=None)[0]
    assert cp.objective.value(res.confusion) == pytest.approx(1 - ref, abs=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_dinkelbach_and_midpoint_searches_reach_the_same_rule(seed):
    """Both searches end on the best threshold rule (the brute force above; the plug-in oracle's
    rules here are the calibrated model's, optimal on the sample) with a bracket at most ``tol``
    wide; the paper's midpoints take 14 steps from [0, 1], Dinkelbach's at most 5."""
    from goalfit.methods.plugin import bisection

    P, y, cells, space = calibrated(seed)
    cp = gf.Problem("f1").compile(space)
    sets = cell_rules(P, y, cells, space, suffix_only=True)
    best = min(cp.objective.value((a + b).reshape(space.shape)) for a in sets[0] for b in sets[1])
    steps = {}
    for search in ("midpoint", "dinkelbach"):
        res = bisection(cp, PluginOracle(P, y, cells, space), search=search)
        assert cp.objective.value(res.confusion) == pytest.approx(best, abs=1e-12)
        lo, hi = map(float, re.search(r"bracket \[(.*), (.*)\]", res.message).groups())
        assert res.details.stop is StopReason.CONVERGED and lo - 1e-6 <= best <= hi + 1e-6 and hi - lo <= 1e-4
        steps[search] = res.details.iterations
    assert steps["midpoint"] == 14 and steps["dinkelbach"] <= 5, steps


def test_default_search_is_dinkelbach_on_every_path():
    """Both bisections test Dinkelbach's values by default: with the threshold oracle (exact),
    the plug-in oracle, ConBisection over the binary hulls and with several classes; the paper's
    midpoints on request; another name is refused."""
    from goalfit.methods.plugin import ThresholdOracle, bisection, con_bisection
    from tests.methods.plugin.test_coarse_to_fine import _multiclass

    P, y, cells, space = calibrated(0)
    free = gf.Problem("f1").compile(space)
    fair = gf.Problem("f1", [gf.demographic_parity_difference() <= 0.02]).compile(space)
    assert "(dinkelbach)" in bisection(free, ThresholdOracle(P, y, cells, space)).message
    assert "(dinkelbach)" in bisection(free, PluginOracle(P, y, cells, space)).message
    assert "(dinkelbach," in con_bisection(fair, PluginOracle(P, y, cells, space)).message
    P3, y3, cells3, space3 = _multiclass(3_000, n_classes=3)
    cp3 = gf.Problem("micro_f1", [gf.demographic_parity_difference() <= 0.05]).compile(space3)
    assert "(dinkelbach," in con_bisection(cp3, PluginOracle(P3, y3, cells3, space3)).message
    assert "(midpoint," in con_bisection(cp3, PluginOracle(P3, y3, cells3, space3), search="midpoint").message
    with pytest.raises(ValueError, match="search"):
        bisection(free, PluginOracle(P, y, cells, space), search="golden")


@pytest.mark.parametrize("rate", [0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99, 0.999])
def test_dinkelbach_search_is_safeguarded_by_midpoints(rate):
    """A step that tests ``gamma`` above the optimum ``v`` returns a value ``v + rate (gamma - v)``
    (``rate=0``: an exact oracle; near 1: an oracle whose answers barely improve), one below it a
    value above ``gamma``. For optima across [0, 1] the search closes a bracket of width ``tol``
    around ``v``: in 2-3 steps when exact, and in at most 26 (the module docstring's number;
    the midpoints take 14, pure Dinkelbach ``log(tol) / log(rate)``: 9,200 at 0.999)."""
    from goalfit.methods.plugin.bisection import _Bracket

    tol = 1e-4
    for v in (0.01, 0.2345678, 0.49, 0.51, 0.9):
        bracket, steps = _Bracket((0.0, 1.0), tol, "dinkelbach"), 0
        while not bracket.closed:
            steps += 1
            gamma = bracket.gamma()
            value = v + rate * (gamma - v) if gamma > v else v + 0.5 * tol + (v - gamma)
            bracket.update(gamma, value, True)
            assert bracket.lo <= v <= bracket.hi
            assert steps <= 26, (v, rate)
        assert bracket.hi - bracket.lo <= tol
        if rate == 0.0:  # the first step finds the optimum (or brackets it), the last certifies it
            assert steps <= 3
    with pytest.raises(ValueError, match="search"):
        _Bracket((0.0, 1.0), tol, "golden")


def test_bisection_multiclass_micro_f1_brute_force():
    # 3 classes, tiny: every labeling of the (cell-free) buckets is brute forced
    rng = np.random.default_rng(0)
    buckets = [(np.array([2, 1, 1]) / 4), np.array([1, 2, 1]) / 4, np.array([0, 1, 3]) / 4,
               np.array([3, 0, 1]) / 4, np.array([1, 1, 2]) / 4]
    P, y = [], []
    for b in buckets:
        counts = (b * 4).astype(int)
        for k, c in enumerate(counts):
            P += [b] * c
            y += [k] * c
    P, y = np.array(P), np.array(y)
    cells = np.zeros(len(y), dtype=np.intp)
    space = ConfusionSpace.from_codes(y, cells, np.arange(3), pd.DataFrame(index=range(1)))
    cp = gf.Problem(gf.micro_f1(0)).compile(space)
    res = solve(cp, PluginOracle(P, y, cells, space))
    # calibrated buckets: brute force over all 3^5 bucket labelings
    bucket_of = np.repeat(np.arange(len(buckets)), 4)
    best = min(cp.objective.value(confusion_tensor(y, np.array(lab)[bucket_of], cells, 3, 1))
               for lab in itertools.product(range(3), repeat=len(buckets)))
    assert cp.objective.value(res.confusion) == pytest.approx(best, abs=1e-12)


# ------------------------------------------------------------------ (e) prune
def candidates(seed, n_members=12):
    """``n_members`` plug-in rules for random linear costs on ``calibrated(seed)``: (space, members, confusions)."""
    P, y, cells, space = calibrated(seed)
    oracle = PluginOracle(P, y, cells, space)
    rng = np.random.default_rng(seed)
    members, Cs = [], []
    for _ in range(n_members):
        m, C = oracle(rng.normal(size=space.shape))
        members.append(m)
        Cs.append(C)
    return space, members, np.array(Cs)


@pytest.mark.parametrize("seed", range(3))
def test_prune_feasible_is_lp_optimum(seed):
    space, members, Cs = candidates(seed)
    cp = gf.Problem("error", [gf.demographic_parity_difference() <= 0.03]).compile(space)
    ms, Cp, w, feasible, viol = prune(cp, members, Cs)
    u_members, u_Cs, _ = unique_members(members, Cs)
    X = u_Cs.reshape(len(u_Cs), -1)
    ref = linprog(X @ cp.objective.coef.ravel(), A_ub=cp.A @ X.T, b_ub=cp.b,
                  A_eq=np.ones((1, len(X))), b_eq=[1.0], method="highs")
    assert ref.status == 0 and feasible
    mix = np.tensordot(w, Cp, axes=1)
    assert cp.objective.value(mix) == pytest.approx(ref.fun + cp.objective.const, abs=1e-10)
    assert cp.max_violation(mix) <= 1e-9 and viol <= 1e-9
    assert np.all(w > 0) and w.sum() == pytest.approx(1.0)
    assert len(w) <= cp.n_rows + 1  # a basic solution: support at most K + 1


@pytest.mark.parametrize("seed", range(3))
def test_prune_infeasible_returns_least_violation(seed):
    space, members, Cs = candidates(seed)
    cp = gf.Problem("error", [gf.demographic_parity_difference() <= 0.0, gf.coverage(1) >= 0.5,
                              gf.error_rate() <= 0.2]).compile(space)
    ms, Cp, w, feasible, viol = prune(cp, members, Cs)
    _, u_Cs, _ = unique_members(members, Cs)
    T = len(u_Cs)
    X = u_Cs.reshape(T, -1)
    G = cp.A @ X.T - cp.b[:, None]
    # min s s.t. G alpha <= s
    lp = linprog(np.r_[np.zeros(T), 1.0], A_ub=np.hstack([G, -np.ones((len(G), 1))]), b_ub=np.zeros(len(G)),
                 A_eq=np.r_[np.ones(T), 0.0][None], b_eq=[1.0], bounds=[(0, None)] * T + [(None, None)],
                 method="highs")
    s = lp.fun
    assert s > 1e-3 and not feasible
    mix = np.tensordot(w, Cp, axes=1)
    assert viol == pytest.approx(s, abs=1e-8)
    assert cp.row_violations(mix).max() == pytest.approx(s, abs=1e-8)
    # and the best objective among the least-violating mixtures
    best = linprog(X @ cp.objective.coef.ravel(), A_ub=G, b_ub=np.full(len(G), s + 1e-9),
                   A_eq=np.ones((1, T)), b_eq=[1.0], method="highs")
    assert cp.objective.value(mix) == pytest.approx(best.fun + cp.objective.const, abs=1e-7)


def test_prune_minmax_objective_is_exact_epigraph():
    space, members, Cs = candidates(4, n_members=20)
    cp = gf.Problem("minmax_recall").compile(space)
    ms, Cp, w, feasible, viol = prune(cp, members, Cs)
    _, u_Cs, _ = unique_members(members, Cs)
    T = len(u_Cs)
    pi = space.priors
    R = np.stack([u_Cs[:, :, k, k].sum(axis=1) / pi[k] for k in range(2)])  # (2, T) recalls
    # min v s.t. 1 - R alpha <= v
    lp = linprog(np.r_[np.zeros(T), 1.0], A_ub=np.hstack([-R, -np.ones((2, 1))]), b_ub=-np.ones(2),
                 A_eq=np.r_[np.ones(T), 0.0][None], b_eq=[1.0], bounds=[(0, None)] * T + [(None, None)],
                 method="highs")
    assert cp.objective.value(np.tensordot(w, Cp, axes=1)) == pytest.approx(lp.fun, abs=1e-9)
    assert lp.fun < min(cp.objective.value(C) for C in u_Cs) - 1e-3  # mixing helps here


def test_prune_nonlinear_objective_never_worse_than_input_mixture():
    space, members, Cs = candidates(5, n_members=15)
    cp = gf.Problem("hmean", [gf.coverage(1) <= 0.6]).compile(space)
    _, u_Cs, w_u = unique_members(members, Cs)
    w0 = w_u / w_u.sum()
    ms, Cp, w, feasible, viol = prune(cp, members, Cs)
    mix = np.tensordot(w, Cp, axes=1)
    assert feasible and cp.max_violation(mix) <= 1e-9
    mix0 = np.tensordot(w0, u_Cs, axes=1)
    if cp.max_violation(mix0) <= 1e-9:
        assert cp.objective.value(mix) <= cp.objective.value(mix0) + 1e-12


def test_unique_members_merges_weights():
    space, members, Cs = candidates(0, n_members=3)
    ms, Cu, w = unique_members(members + members[:2], np.concatenate([Cs, Cs[:2]]), [1, 2, 3, 4, 5])
    assert len(ms) == len(np.unique(Cs.reshape(3, -1).round(12), axis=0))
    assert w.sum() == pytest.approx(15)


@pytest.mark.parametrize("method,objective", [
    ("column_generation", "error"), ("split_frank_wolfe", "error"), ("con_gda", "error"),
    ("split_frank_wolfe", "hmean"), ("con_gda", "hmean"), ("con_gda", "minmax_recall")])
def test_infeasible_goal_set_returns_least_violating(method, objective):
    """coverage(1) <= 0.1 and coverage(1) >= 0.2 cannot both hold: every method returns the
    least-violating mixture (coverage 0.15, violation 0.05) with feasible=False, as
    GoalClassifier documents, instead of raising."""
    P, y, cells, space = calibrated(0)
    cp = gf.Problem(objective, [gf.coverage(1) <= 0.1, gf.coverage(1) >= 0.2]).compile(space)
    res = solve(cp, PluginOracle(P, y, cells, space), method=method, max_iter=300)
    assert not res.feasible
    vals = cp.constraint_values(res.confusion)
    assert vals[0] == pytest.approx(0.15, abs=1e-6) and vals[1] == pytest.approx(0.15, abs=1e-6)
    assert cp.max_violation(res.confusion) == pytest.approx(0.05, abs=1e-6)
    assert "least violat" in res.message


def test_infeasible_goals_through_goal_classifier_warn_not_raise():
    P, y, cells, space = calibrated(1, groups=("A",))
    cons = [gf.coverage(1) <= 0.1, gf.coverage(1) >= 0.2]
    with pytest.warns(RuntimeWarning, match="least-violating"):
        m = gf.GoalClassifier("precomputed", objective="hmean", constraints=cons).fit(P, y)
    assert not m.feasible_ and m.method_ == "split_frank_wolfe"


# ------------------------------------------------------------------ helpers and baselines
def test_project_simplex_rows_is_euclidean_projection():
    rng = np.random.default_rng(0)
    V = rng.normal(scale=2.0, size=(200, 5))
    X = project_simplex_rows(V)
    np.testing.assert_allclose(X.sum(axis=1), 1.0, atol=1e-12)
    assert (X >= 0).all()
    # KKT: x = max(v - theta, 0) with one theta per row, and no point of the simplex is closer
    for v, x in zip(V[:20], X[:20]):
        theta = np.mean((v - x)[x > 0])
        np.testing.assert_allclose(x, np.maximum(v - theta, 0), atol=1e-12)
        for _ in range(20):
            z = rng.dirichlet(np.ones(5))
            assert np.sum((v - x) ** 2) <= np.sum((v - z) ** 2) + 1e-12
    # points of the simplex are fixed
    Z = rng.dirichlet(np.ones(5), size=10)
    np.testing.assert_allclose(project_simplex_rows(Z), Z, atol=1e-12)


def test_baselines():
    P, y, cells, space = uncalibrated(3, n=80)
    oracle = PluginOracle(P, y, cells, space)
    cp = gf.Problem("hmean").compile(space)
    res = argmax_plugin(cp, oracle)
    pred = res.members[0].predict_codes(None, P, cells)
    np.testing.assert_array_equal(pred, (P[:, 1] >= P[:, 0]).astype(int))  # ties to class 1
    pi = space.priors
    res = balanced_plugin(cp, oracle)
    pred = res.members[0].predict_codes(None, P, cells)
    np.testing.assert_array_equal(pred, (P[:, 1] / pi[1] >= P[:, 0] / pi[0]).astype(int))
    # post-shift: one threshold minimizing the objective = brute force over suffix rules
    P, y, cells, space = calibrated(2, groups=("A",), n_buckets=10)
    cp = gf.Problem("hmean").compile(space)
    res = post_shift(cp, PluginOracle(P, y, cells, space))
    best = min(cp.objective.value(C.reshape(space.shape))
               for C in cell_rules(P, y, cells, space, suffix_only=True)[0])
    assert cp.objective.value(res.confusion) == pytest.approx(best, abs=1e-12)
    with pytest.raises(ValueError, match="binary"):
        rng = np.random.default_rng(0)
        P3 = rng.dirichlet(np.ones(3), 30)
        y3 = rng.integers(0, 3, 30)
        c3 = np.zeros(30, dtype=np.intp)
        sp3 = ConfusionSpace.from_codes(y3, c3, np.arange(3), pd.DataFrame(index=range(1)))
        post_shift(gf.Problem("error").compile(sp3), PluginOracle(P3, y3, c3, sp3))
