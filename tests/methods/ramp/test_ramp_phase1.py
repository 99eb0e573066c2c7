"""RampClassifier's certified feasible start (methods/ramp/phase1.py) against a cvxpy reference."""
import warnings

import numpy as np
import pytest

import goalfit as gf
from goalfit.methods.ramp.phase1 import hinge_feasibility

cp = pytest.importorskip("cvxpy")


def _problem(seed, n=240):
    rng = np.random.default_rng(seed)
    g = rng.integers(0, 2, n)
    X = np.column_stack([rng.normal(size=n) + 0.8 * g, rng.normal(size=n), rng.normal(size=n)])
    y = (X[:, 0] + X[:, 1] + 0.8 * rng.normal(size=n) > 0.3).astype(int)
    # the group appears only in the constraints; w = 0 (every ramp rate 1/2) misses the recall goal
    cons = [gf.true_positive_rate() >= 0.85,
            gf.false_positive_rate(group=0) - gf.false_positive_rate(group=1) <= 0.01,
            gf.false_positive_rate(group=1) - gf.false_positive_rate(group=0) <= 0.01]
    return X, y, g, cons


def _cvxpy_reference(program, X):
    """min over (w, b) of the largest all-hinge row, by cvxpy (Clarabel)."""
    w, b, s = cp.Variable(X.shape[1]), cp.Variable(), cp.Variable()
    z = X @ w + b
    rows = [program.A[j] @ cp.pos(0.5 + z) + program.C[j] @ cp.pos(0.5 - z) + program.k[j] <= s
            for j in range(program.n_rows)]
    cp.Problem(cp.Minimize(s), rows).solve(solver=cp.CLARABEL)
    return float(s.value)


@pytest.mark.parametrize("seed", [0, 7])
def test_ramp_finds_a_feasible_point_where_the_reference_says_one_exists(seed):
    X, y, g, cons = _problem(seed)
    for init, alpha in (("unconstrained", 1e-3), ("zeros", 1e-2), ("unconstrained", 1e-2)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = gf.RampClassifier("error", cons, alpha=alpha, method_params={"init": init}, random_state=0).fit(
                X, y, sensitive_features={"g": g})
        ref = _cvxpy_reference(m.program_, X)
        assert ref < 0  # a linear model meets every (hinge-restricted, hence ramp) goal
        coef, intercept, value = hinge_feasibility(m.program_, X)
        assert value == pytest.approx(ref, abs=1e-6)
        _, rows = m.program_.values(gf.methods.ramp.ramp(X @ coef + intercept))
        assert rows.max() <= value + 1e-9  # the LP point meets the ramp rows (hinge >= ramp)
        assert m.feasible_, (init, alpha, m.max_violation_)
        assert m.program_.values(m.randomized_classifier_.positive_probability(X))[1].max() <= 1e-6


def test_hinge_feasibility_reports_an_impossible_restriction():
    X, y, g, _ = _problem(1)
    cons = [gf.true_positive_rate() >= 0.99, gf.false_positive_rate() <= 0.01]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = gf.RampClassifier("error", cons, alpha=1e-2, random_state=0).fit(X, y, sensitive_features={"g": g})
    ref = _cvxpy_reference(m.program_, X)
    _, _, value = hinge_feasibility(m.program_, X)
    assert ref > 0 and value == pytest.approx(ref, abs=1e-6)
    assert not m.feasible_ and m.max_violation_ > 0


def test_best_threshold_equals_brute_force_over_every_threshold():
    from goalfit.methods.ramp import best_threshold

    X, y, g, cons = _problem(3, n=120)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = gf.RampClassifier("error", cons, alpha=1e-2, random_state=0).fit(X, y, sensitive_features={"g": g})
    f = np.round(m.decision_function(X), 2)  # ties: only positions between distinct scores are rules
    t, obj, viol = best_threshold(m.program_, f)
    cands = np.r_[f.max() + 1, np.unique(f) - 1e-9]  # every distinct rule 1[f > c]
    table = []
    for c in cands:
        o, rows = m.program_.values((f > c).astype(float))
        v = max(rows.max(), 0.0)
        table.append((0.0 if v <= 1e-9 else v, o))
    best = min(table)
    assert (viol, obj) == pytest.approx(best, abs=1e-12)
    o, rows = m.program_.values((f > t).astype(float))
    assert o == pytest.approx(obj) and max(rows.max(), 0.0) == pytest.approx(viol, abs=1e-9)


@pytest.mark.parametrize("seed", [0, 7])
def test_deterministic_predict_meets_the_goals_on_train_where_a_threshold_can(seed):
    X, y, g, cons = _problem(seed)
    for alpha, init in ((1e-2, "zeros"), (1e-3, "unconstrained")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = gf.RampClassifier("error", cons, alpha=alpha, method_params={"init": init}, random_state=0).fit(
                X, y, sensitive_features={"g": g})
            paper = gf.RampClassifier("error", cons, alpha=alpha, random_state=0,
                                      method_params={"init": init, "decision_threshold": 0.0}).fit(X, y, sensitive_features={"g": g})
        assert m.feasible_ and m.max_violation_ <= 1e-9
        ev = m.evaluate(X, y, sensitive_features={"g": g})
        assert max(c["violation"] for c in ev["constraints"]) <= 1e-9
        assert paper.threshold_ == 0.0 and np.allclose(paper.coef_, m.coef_)
        # the fitted threshold is never worse than 0 when the paper's rule already meets the goals
        if paper.max_violation_ <= 1e-9:
            assert ev["objective"]["value"] <= paper.evaluate(X, y, sensitive_features={"g": g})["objective"]["value"] + 1e-12
    with pytest.raises(ValueError, match="decision_threshold"):
        gf.RampClassifier("error", cons, method_params={"decision_threshold": "zero"}).fit(X, y, sensitive_features={"g": g})
