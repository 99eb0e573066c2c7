"""The exact threshold oracle (binary): optimal over per-cell thresholds on the sample."""
import numpy as np
import pandas as pd
import pytest
from scipy.optimize import linprog

import goalfit as gf
from goalfit.classifiers import ThresholdRule
from goalfit.confusion import CellEncoder, ConfusionSpace, confusion_tensor
from goalfit.methods.plugin import PluginOracle, ThresholdOracle, column_generation


def problem_data(seed, n=80):
    rng = np.random.default_rng(seed)
    g = rng.choice(["F", "M"], n)
    eta = np.round(np.clip(rng.beta(2, 2, n) + 0.15 * (g == "M"), 0.01, 0.99), 2)  # ties on purpose
    y = (rng.random(n) < np.clip(1.3 * eta - 0.2, 0, 1)).astype(int)  # miscalibrated on purpose
    enc = CellEncoder()
    cells = enc.fit_transform(pd.Series(g, name="sex"))
    space = ConfusionSpace.from_codes(y, cells, [0, 1], enc.cells_)
    return np.c_[1 - eta, eta], y, cells, space


def all_threshold_rules(P, y, cells, space, w=None):
    """Per cell, the confusion tensors (flattened, normalized by the whole sample's weight) of
    every threshold rule on ``eta_1``: both directions at every distinct value, and both constants."""
    eta = P[:, 1]
    w = np.ones(len(y)) if w is None else np.asarray(w, float)
    per_cell = []
    for c in range(space.n_cells):
        idx = np.flatnonzero(cells == c)
        rules = [np.zeros(len(idx), bool), np.ones(len(idx), bool)]
        for t in np.unique(eta[idx]):
            rules += [eta[idx] >= t, eta[idx] <= t]
        Cs = [confusion_tensor(y[idx], r.astype(int), cells[idx], 2, space.n_cells, w[idx]) * w[idx].sum() / w.sum()
              for r in rules]
        per_cell.append(np.unique(np.array(Cs).reshape(len(Cs), -1), axis=0))
    return per_cell


@pytest.mark.parametrize("seed", range(4))
def test_oracle_minimizes_sample_cost_over_all_thresholds(seed):
    P, y, cells, space = problem_data(seed)
    orc = ThresholdOracle(P, y, cells, space)
    rules = all_threshold_rules(P, y, cells, space)
    rng = np.random.default_rng(seed)
    for _ in range(20):
        L = rng.normal(size=space.shape)
        member, C = orc(L)
        best = sum((R @ L.ravel()).min() for R in rules)
        assert np.vdot(L, C) == pytest.approx(best, abs=1e-12)
        # the member predicts exactly the split the oracle counted
        pred = member.predict_codes(None, P, cells)
        assert np.allclose(confusion_tensor(y, pred, cells, 2, space.n_cells), C)


@pytest.mark.parametrize("seed", range(4))
def test_oracle_with_zero_weights_minimizes_weighted_sample_cost(seed):
    """Sample weights with zeros (runs of ties that weigh nothing repeat hull points): the
    oracle's candidate cuts still reach the brute-force minimum over every threshold rule."""
    P, y, cells, space0 = problem_data(seed, n=120)
    rng = np.random.default_rng(100 + seed)
    w = rng.choice([0.0, 0.5, 1.0, 2.0], len(y), p=[0.4, 0.2, 0.2, 0.2])
    space = ConfusionSpace.from_codes(y, cells, [0, 1], space0.cells, w)
    orc = ThresholdOracle(P, y, cells, space, w)
    per_cell = all_threshold_rules(P, y, cells, space, w)
    for _ in range(30):
        L = rng.normal(size=space.shape)
        _, C = orc(L)
        assert np.vdot(L, C) == pytest.approx(sum((R @ L.ravel()).min() for R in per_cell), abs=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_column_generation_with_threshold_oracle_is_exact(seed):
    """With miscalibrated probabilities the plug-in oracle stops short; this one does not."""
    P, y, cells, space = problem_data(seed)
    cp = gf.Problem("error", [gf.demographic_parity_difference("sex") <= 0.02]).compile(space)
    rules = all_threshold_rules(P, y, cells, space)
    # exact LP: one convex combination of rules per cell
    sizes = [len(R) for R in rules]
    Cmat = np.vstack(rules)  # (sum sizes, D)
    c = Cmat @ cp.objective.coef.ravel()
    A_ub = cp.A @ Cmat.T
    A_eq = np.zeros((len(rules), len(Cmat)))
    start = 0
    for k, s in enumerate(sizes):
        A_eq[k, start:start + s] = 1
        start += s
    lp = linprog(c, A_ub=A_ub, b_ub=cp.b, A_eq=A_eq, b_eq=np.ones(len(rules)), bounds=(0, None), method="highs")
    exact = lp.fun + cp.objective.const
    res = column_generation(cp, ThresholdOracle(P, y, cells, space))
    assert cp.objective.value(res.confusion) == pytest.approx(exact, abs=1e-9)
    assert cp.max_violation(res.confusion) <= 1e-9
    plug = column_generation(cp, PluginOracle(P, y, cells, space))
    assert cp.objective.value(plug.confusion) >= exact - 1e-9


def test_threshold_rule_is_exact_at_the_threshold():
    rule = ThresholdRule([0.3, 0.7], [True, False])
    P = np.array([[0.7, 0.3], [0.3, 0.7], [0.7, 0.3], [0.3, 0.7]])
    cells = np.array([0, 0, 1, 1])
    assert rule.predict_codes(None, P, cells).tolist() == [1, 1, 1, 1]
    assert rule.predict_codes(None, P + [[1e-12, -1e-12]] * 4, cells).tolist() == [0, 1, 1, 1]


def test_estimator_threshold_oracle_and_multiclass_error():
    P, y, cells, space = problem_data(0, n=400)
    g = np.where(cells == 0, "F", "M")
    m = gf.GoalClassifier("precomputed", method_params={"oracle": "threshold"},
                          constraints=[gf.demographic_parity_difference("sex") <= 0.02])
    m.fit(P, y, sensitive_features=pd.Series(g, name="sex"))
    assert m.evaluate(P, y, sensitive_features=pd.Series(g, name="sex"))["constraints"][0]["value"] <= 0.02 + 1e-9
    with pytest.raises(ValueError, match="binary"):
        gf.GoalClassifier("precomputed", method_params={"oracle": "threshold"}).fit(np.full((6, 3), 1 / 3), [0, 1, 2, 0, 1, 2])
