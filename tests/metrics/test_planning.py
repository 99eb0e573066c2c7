"""The sample-size planner: closed forms, and its predicted power against simulated safety tests."""
import numpy as np
import pytest
from scipy import stats

import goalfit as gf
from goalfit import GoalClassifier
from goalfit.metrics.evaluation import _encoded
from goalfit.metrics.intervals import GoalSample, one_sided_bound
from goalfit.metrics.planning import plan_certification

from tests.fit.test_generalization import ETA, P_A, P_X, RULE, _draw, make_data


def _population_sample(total=200_000):
    """The discrete world's population as a sample whose frequencies are its probabilities."""
    rows = [(a, x, y, P_A[a] * P_X[a, x] * (ETA[a, x] if y else 1 - ETA[a, x]))
            for a in (0, 1) for x in range(5) for y in (0, 1)]
    counts = [int(round(p * total)) for *_, p in rows]
    a, x, y = (np.repeat([r[i] for r in rows], counts) for i in range(3))
    return a, x, y


def _dist(a, x):
    return np.c_[1 - RULE[a, x], RULE[a, x]]


def _share_certified(constraints, n_safety, draws, seed=1000):
    """Share of safety parts of ``n_safety`` rows on which RULE passes every one-sided test at 95%."""
    ok = 0
    for r in range(draws):
        a, x, y = _draw(n_safety, np.random.default_rng(seed + r))
        yc, pc, cells, space, _, sw = _encoded(y, _dist(a, x), a, None, None)
        sample = GoalSample(yc, pc, cells, space, sw)
        ok += all((b <= c.bound) if c.sense == "<=" else (b >= c.bound)
                  for c in constraints for b in [one_sided_bound(c.expression, c.sense, sample, 0.95)])
    return ok / draws


@pytest.mark.slow  # 300 simulated safety tests per size: benchmarks/certification.py (kind "planner_check") on Adult
@pytest.mark.parametrize("goal", ["tpr", "dp"])
def test_planned_power_matches_simulated_safety_tests_at_three_sizes(goal):
    # TPR of group 1 (population 0.85) >= 0.8 is certified with Clopper-Pearson; DP (population 0.06)
    # <= 0.1 with the delta method on its two pieces. 300 simulated safety tests per size: three
    # standard errors of the simulated share, plus 0.02 for the planner's own Monte Carlo error
    cons = [gf.true_positive_rate(group=1) >= 0.8] if goal == "tpr" else [gf.demographic_parity_difference() <= 0.1]
    a, x, y = _population_sample()
    plan = plan_certification(cons, y, _dist(a, x), sensitive_features=a, safety_fraction=0.5, random_state=0)
    (row,) = plan.constraints
    assert row["value"] == pytest.approx(0.85 if goal == "tpr" else 0.06, abs=2e-4)
    n_need = row["safety_rows_needed"]
    for n_safety in (int(n_need / 4), int(n_need), int(n_need * 2)):
        planned = plan.power_at(n_safety / 0.5)
        tol = 3 * np.sqrt(planned * (1 - planned) / 300) + 0.02
        assert abs(planned - _share_certified(cons, n_safety, 300)) <= tol, n_safety
    assert plan.power_at(n_need / 0.5) == pytest.approx(0.8, abs=0.02)


def test_rows_needed_match_the_normal_closed_form_for_a_rate_difference():
    # deterministic predictions, TPR(A) - TPR(B) <= 0.1: the estimate on N rows is normal with
    # per-row variance r_A (1 - r_A) / pi_A + r_B (1 - r_B) / pi_B, so N = ((z_.95 + z_.8) sd / slack)^2
    rng = np.random.default_rng(0)
    n = 400_000
    g = rng.choice(["A", "B"], n, p=[0.3, 0.7])
    y = (rng.random(n) < 0.4).astype(int)
    pred = np.where(y == 1, rng.random(n) < np.where(g == "A", 0.7, 0.66), rng.random(n) < 0.2).astype(int)
    goal = gf.true_positive_rate(group="A") - gf.true_positive_rate(group="B")
    plan = plan_certification([goal <= 0.1], y, pred, sensitive_features=g, n_simulations=20000, safety_fraction=0.5)
    (row,) = plan.constraints
    pos = y == 1
    r = {s: pred[pos & (g == s)].mean() for s in "AB"}
    pi = {s: (pos & (g == s)).mean() for s in "AB"}
    sd = np.sqrt(sum(r[s] * (1 - r[s]) / pi[s] for s in "AB"))
    assert row["sd_per_row"] == pytest.approx(sd, rel=1e-3)
    slack = 0.1 - (r["A"] - r["B"])
    expected = ((stats.norm.ppf(0.95) + stats.norm.ppf(0.8)) * sd / slack) ** 2
    assert row["safety_rows_needed"] == pytest.approx(expected, rel=0.03)
    assert row["train_rows_needed"] == pytest.approx(2 * row["safety_rows_needed"])
    assert plan.train_rows_needed == pytest.approx(row["train_rows_needed"], rel=1e-6)
    assert row["smallest_slice"] == "sensitive_feature='A', y=1"
    assert row["smallest_slice_rows_needed"] == pytest.approx(row["safety_rows_needed"] * pi["A"], rel=1e-2)
    # the power curve rises through the target at the rows needed
    curve = plan.curve
    assert curve["power"].is_monotonic_increasing and curve["power"].iloc[0] < 0.1 and curve["power"].iloc[-1] > 0.99


def test_a_goal_whose_value_breaks_its_bound_needs_infinitely_many_rows():
    a, x, y = _population_sample(20_000)
    plan = plan_certification([gf.demographic_parity_difference() <= 0.05, gf.true_positive_rate(group=1) >= 0.8],
                              y, _dist(a, x), sensitive_features=a)
    dp, tpr = plan.constraints
    assert dp["train_rows_needed"] == np.inf and np.isfinite(tpr["train_rows_needed"])
    assert plan.train_rows_needed == np.inf and plan.power_at(1e7) == 0.0
    assert "never" in str(plan) and "all together: never" in str(plan)
    with pytest.raises(ValueError, match="at least one constraint"):
        plan_certification([], y, _dist(a, x), sensitive_features=a)
    with pytest.raises(ValueError, match="power must be in"):
        plan_certification([gf.demographic_parity_difference() <= 0.05], y, _dist(a, x), sensitive_features=a,
                           power=1.0)


def test_a_fitted_estimator_plans_with_its_own_confidence_and_goals():
    X, y, g = make_data(4000, 0)
    Xt, yt, gt = make_data(20000, 1)
    cons = [gf.true_positive_rate(group="A") >= 0.5]
    m = GoalClassifier(constraints=cons, confidence=0.9, margin=0.05, random_state=0,
                       method_params={"safety_fraction": 0.3}).fit(X, y, sensitive_features=g)
    plan = m.plan_certification(Xt, yt, sensitive_features=gt, n_train=4000)
    assert plan.confidence == 0.9 and plan.safety_fraction == 0.3 and plan.n_train == 4000
    (row,) = plan.constraints
    ev = m.evaluate(Xt, yt, sensitive_features=gt)["constraints"][0]
    assert row["value"] == pytest.approx(ev["value"]) and row["bound"] == 0.5  # the user's bound, not tightened
    same = gf.plan_certification(cons, yt, m.predict_proba(Xt, sensitive_features=gt), sensitive_features=gt,
                                 confidence=0.9, safety_fraction=0.3, n_train=4000, classes=m.classes_)
    assert same.constraints[0]["train_rows_needed"] == row["train_rows_needed"]
    with pytest.raises(ValueError, match="at least one constraint"):
        GoalClassifier().fit(X, y).plan_certification(Xt, yt)
