"""Linear minimization oracles against brute force on tiny problems."""
import itertools

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

from goalfit.classifiers import ConstantMember, FittedMember, PluginRule, plugin_predict
from goalfit.confusion import CellEncoder, ConfusionSpace, confusion_tensor
from goalfit.methods.plugin import PluginOracle, RefitOracle


def problem(seed, n=60, n_classes=2, n_groups=2, grid=None, weighted=False):
    """Random probabilities (optionally on a coarse grid, so that ties are exact) and labels."""
    rng = np.random.default_rng(seed)
    if grid is None:
        P = rng.dirichlet(np.ones(n_classes), size=n)
    elif n_classes == 2:
        e1 = rng.choice(grid, size=n)
        P = np.column_stack([1 - e1, e1])
    else:
        # rows of multiples of 1/4 that sum to 1 exactly
        parts = [np.array(c) / 4 for c in itertools.product(range(5), repeat=n_classes) if sum(c) == 4]
        P = np.array(parts)[rng.integers(0, len(parts), n)]
    y = np.array([rng.choice(n_classes, p=row) for row in P])
    g = rng.choice(np.array(["F", "M", "X"][:n_groups]), n)
    enc = CellEncoder()
    cells = enc.fit_transform(pd.Series(g, name="sex"))
    w = rng.uniform(0.5, 2.0, n) if weighted else None
    space = ConfusionSpace.from_codes(y, cells, np.arange(n_classes), enc.cells_, w)
    return P, y, cells, space, w, rng


def argmin_star(P, cells, cost):
    """Reference plug-in rule: explicit loop, ties to the larger index."""
    pred = np.empty(len(P), dtype=int)
    for l in range(len(P)):
        scores = [sum(P[l, i] * cost[cells[l], i, j] for i in range(P.shape[1])) for j in range(P.shape[1])]
        m = min(scores)
        pred[l] = max(j for j, s in enumerate(scores) if s == m)
    return pred


def matmul_pred(P, cells, cost):
    """The general (matmul) path of Alg. 9/10, usable for two classes as well."""
    n = P.shape[1]
    pred = np.empty(len(P), dtype=np.intp)
    for c in range(cost.shape[0]):
        idx = np.flatnonzero(cells == c)
        scores = P[idx] @ cost[c]
        pred[idx] = n - 1 - np.argmin(scores[:, ::-1], axis=1)
    return pred


def random_costs(rng, space, k, integer=False):
    for _ in range(k):
        if integer:
            yield rng.integers(-3, 4, size=space.shape).astype(float)
        else:
            yield rng.normal(size=space.shape)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("weighted", [False, True])
def test_binary_oracle_equals_plugin_predict_and_matmul(seed, weighted):
    P, y, cells, space, w, rng = problem(seed, weighted=weighted)
    oracle = PluginOracle(P, y, cells, space, w)
    for cost in random_costs(rng, space, 30):
        member, C = oracle(cost)
        pred = plugin_predict(P, cells, cost)
        np.testing.assert_array_equal(pred, member.predict_codes(None, P, cells))
        np.testing.assert_array_equal(pred, matmul_pred(P, cells, cost))
        expected = confusion_tensor(y, pred, cells, 2, space.n_cells, w)
        np.testing.assert_allclose(C, expected, rtol=0, atol=1e-15)
        assert C.sum() == pytest.approx(1.0)
    assert oracle.n_calls == 30


@pytest.mark.parametrize("seed", range(5))
def test_binary_oracle_exact_ties_go_to_class_one(seed):
    # eta_1 on a grid of dyadic numbers and integer costs: margins are computed exactly, many
    # examples sit exactly on the threshold; argmin* sends them to the larger index (class 1)
    P, y, cells, space, w, rng = problem(seed, n=80, grid=np.array([0.0, 0.25, 0.5, 0.75, 1.0]))
    oracle = PluginOracle(P, y, cells, space)
    n_ties = 0
    costs = list(random_costs(rng, space, 40, integer=True))
    costs += [np.broadcast_to(np.array([[0.0, t], [1 - t, 0.0]]), space.shape).copy()
              for t in (0.0, 0.25, 0.5, 0.75, 1.0)]
    costs += [np.zeros(space.shape), np.ones(space.shape)]  # every example tied: all class 1
    for cost in costs:
        ref = argmin_star(P, cells, cost)
        np.testing.assert_array_equal(plugin_predict(P, cells, cost), ref)
        np.testing.assert_array_equal(matmul_pred(P, cells, cost), ref)
        np.testing.assert_array_equal(oracle.confusion_of(cost), confusion_tensor(y, ref, cells, 2, space.n_cells))
        s = P @ cost[0]
        n_ties += int(np.sum(s[:, 0] == s[:, 1]))
    assert n_ties > 50  # the test does exercise ties
    # all tied: everyone predicted 1
    C = oracle.confusion_of(np.zeros(space.shape))
    assert C[:, :, 0].sum() == 0


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("grid", [False, True])
def test_multiclass_oracle_equals_brute_force(seed, grid):
    P, y, cells, space, w, rng = problem(seed, n=50, n_classes=3, grid=grid or None, weighted=True)
    oracle = PluginOracle(P, y, cells, space, w)
    n_ties = 0
    for cost in random_costs(rng, space, 25, integer=grid):
        member, C = oracle(cost)
        ref = argmin_star(P, cells, cost)
        np.testing.assert_array_equal(member.predict_codes(None, P, cells), ref)
        np.testing.assert_allclose(C, confusion_tensor(y, ref, cells, 3, space.n_cells, w), rtol=0, atol=1e-15)
        for c in range(space.n_cells):
            s = P[cells == c] @ cost[c]
            n_ties += int(np.sum((s == s.min(axis=1, keepdims=True)).sum(axis=1) > 1))
    if grid:
        assert n_ties > 20


@pytest.mark.parametrize("n_classes,n", [(2, 8), (3, 6)])
@pytest.mark.parametrize("seed", range(4))
def test_plugin_rule_minimizes_expected_cost_over_all_labelings(n_classes, n, seed):
    """Among all n_classes**n deterministic labelings, the plug-in labeling minimizes the expected
    cost sum_l sum_i P[l, i] L[c_l, i, pred_l] under the probabilities (Prop. 5 on the sample)."""
    P, y, cells, space, w, rng = problem(seed, n=n, n_classes=n_classes)
    oracle = PluginOracle(P, y, cells, space)
    labelings = np.array(list(itertools.product(range(n_classes), repeat=n)))  # (K, n)
    for cost in random_costs(rng, space, 10):
        # E[l, j] = sum_i P[l, i] L[c_l, i, j]
        E = np.einsum("li,lij->lj", P, cost[cells])
        totals = E[np.arange(n)[None, :], labelings].sum(axis=1)
        member, _ = oracle(cost)
        pred = member.predict_codes(None, P, cells)
        ours = E[np.arange(n), pred].sum()
        assert ours == pytest.approx(totals.min(), abs=1e-12)
        assert ours <= totals.min() + 1e-12


def test_oracle_scale_and_row_shift_invariance():
    P, y, cells, space, w, rng = problem(7, n=200, n_classes=3)
    oracle = PluginOracle(P, y, cells, space)
    cost = rng.normal(size=space.shape)
    C = oracle.confusion_of(cost)
    shift = rng.normal(size=space.shape[:2])[:, :, None]  # adds c_i to row i of each cell
    np.testing.assert_allclose(oracle.confusion_of(3.7 * cost), C)
    np.testing.assert_allclose(oracle.confusion_of(cost + shift), C)


def test_oracle_rejects_non_finite_costs():
    P, y, cells, space, w, rng = problem(0)
    oracle = PluginOracle(P, y, cells, space)
    with pytest.raises(ValueError, match="NaN or infinite"):
        oracle(np.full(space.shape, np.nan))


def test_binary_oracle_with_empty_cell():
    # a cell with no example (rows of zero mass) must not break the sorted fast path
    P, y, cells, space, w, rng = problem(1, n=30)
    cells2 = np.zeros_like(cells)
    space2 = ConfusionSpace(space.classes, pd.DataFrame({"sex": ["F", "M"]}),
                            np.vstack([space.row_mass.sum(axis=0), np.zeros(2)]))
    oracle = PluginOracle(P, y, cells2, space2)
    cost = rng.normal(size=space2.shape)
    np.testing.assert_allclose(oracle.confusion_of(cost),
                               confusion_tensor(y, plugin_predict(P, cells2, cost), cells2, 2, 2))


# ------------------------------------------------------------------ refit oracle
def refit_problem(seed=0, n=300):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    g = rng.choice(["F", "M"], n)
    y = (X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.normal(size=n) > 0.3).astype(int)
    enc = CellEncoder()
    cells = enc.fit_transform(pd.Series(g, name="sex"))
    w = rng.uniform(0.5, 1.5, n)
    space = ConfusionSpace.from_codes(y, cells, np.arange(2), enc.cells_, w)
    return X, y, cells, space, w


@pytest.mark.parametrize("seed", range(3))
def test_refit_oracle_beats_constant_classifiers(seed):
    X, y, cells, space, w = refit_problem(seed)
    oracle = RefitOracle(LogisticRegression(), X, y, cells, space, w)
    rng = np.random.default_rng(100 + seed)
    for _ in range(4):
        # positive costs for errors, zero for correct predictions, group dependent
        cost = np.zeros(space.shape)
        cost[:, 0, 1] = rng.uniform(0.2, 2.0, space.n_cells)
        cost[:, 1, 0] = rng.uniform(0.2, 2.0, space.n_cells)
        member, C = oracle(cost)
        pred = member.predict_codes(X, None, cells)
        np.testing.assert_allclose(C, confusion_tensor(y, pred, cells, 2, space.n_cells, w))
        ours = np.sum(w * cost[cells, y, pred])
        for k in (0, 1):
            const = np.sum(w * cost[cells, y, k])
            assert ours <= const
        # and it is the weighted-cost view of the confusion tensor
        assert np.vdot(cost, C) == pytest.approx(ours / w.sum())
    assert oracle.n_calls == 4


def test_refit_oracle_reduction_targets_and_weights():
    X, y, cells, space, w = refit_problem(0, n=40)
    oracle = RefitOracle(LogisticRegression(), X, y, cells, space, w)
    cost = np.array([[[0.0, 2.0], [3.0, 0.5]], [[1.0, 0.0], [0.0, 4.0]]])
    target, weight = oracle._targets(cost)
    rows = cost[cells, y]
    np.testing.assert_array_equal(target, (rows[:, 1] <= rows[:, 0]).astype(int))
    np.testing.assert_allclose(weight, w * np.abs(rows[:, 1] - rows[:, 0]))
    # cell 1 (M) prefers class 0 for y=1 and class 1 for y=0: targets flip the labels there
    m = cells == 1
    np.testing.assert_array_equal(target[m], 1 - y[m])


def test_refit_oracle_degenerate_cost_gives_constant_member():
    X, y, cells, space, w = refit_problem(1)
    oracle = RefitOracle(LogisticRegression(), X, y, cells, space, w)
    cost = np.zeros(space.shape)
    cost[:, :, 0] = 1.0  # predicting 0 always costs 1, predicting 1 costs 0
    member, C = oracle(cost)
    assert isinstance(member, ConstantMember) and member.code == 1
    assert C[:, :, 0].sum() == 0 and C.sum() == pytest.approx(1.0)


def test_refit_oracle_multiclass_weighted_01_and_rejection():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 2))
    y = np.digitize(X[:, 0] + 0.2 * rng.normal(size=300), [-0.5, 0.5])
    cells = np.zeros(300, dtype=np.intp)
    space = ConfusionSpace.from_codes(y, cells, np.arange(3), pd.DataFrame(index=range(1)))
    oracle = RefitOracle(LogisticRegression(), X, y, cells, space)
    d = np.array([-1.0, -3.0, -0.5])  # diagonal cost (H-mean style gradient)
    cost = np.zeros(space.shape)
    cost[0, np.arange(3), np.arange(3)] = d
    member, C = oracle(cost)
    assert isinstance(member, FittedMember)
    target, weight = oracle._targets(cost)
    np.testing.assert_array_equal(target, y)
    np.testing.assert_allclose(weight, -d[y])
    # accuracy-weighted cost beats every constant classifier
    pred = member.predict_codes(X, None, cells)
    ours = np.mean(cost[0, y, pred])
    assert all(ours <= np.mean(cost[0, y, k]) for k in range(3))
    bad = rng.normal(size=space.shape)
    with pytest.raises(ValueError, match="weighted 0-1 costs"):
        oracle(bad)


@pytest.mark.parametrize("seed", range(3))
def test_binary_fast_path_at_floating_point_thresholds(seed):
    """Examples whose eta_1 is the floating-point threshold -a/s of a cost (or one or two ulps
    away): the sorted fast path must make the same decision as the margin a + eta (b - a) <= 0
    evaluated per example, including the rounding of that expression."""
    rng = np.random.default_rng(seed)
    costs = [rng.normal(size=(1, 2, 2)) for _ in range(60)]
    etas = []
    for L in costs:
        a = L[0, 0, 1] - L[0, 0, 0]
        s = (L[0, 1, 1] - L[0, 1, 0]) - a
        t = -a / s
        if 0 < t < 1:
            x = [t, np.nextafter(t, 0), np.nextafter(t, 1)]
            x += [np.nextafter(x[1], 0), np.nextafter(x[2], 1)]
            etas += x
    eta = np.array(etas)
    P = np.column_stack([1 - eta, eta])
    y = rng.integers(0, 2, len(eta))
    cells = np.zeros(len(eta), dtype=np.intp)
    space = ConfusionSpace.from_codes(y, cells, np.arange(2), pd.DataFrame(index=range(1)))
    oracle = PluginOracle(P, y, cells, space)
    for L in costs + [-L for L in costs]:
        pred = plugin_predict(P, cells, L)
        np.testing.assert_array_equal(oracle.confusion_of(L), confusion_tensor(y, pred, cells, 2, 1))
