"""One feasibility tolerance in the deterministic searches and their warnings (FEASIBLE_TOL)."""
import warnings

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

import goalfit as gf
from goalfit.confusion import confusion_tensor
from goalfit.goals import Problem
from goalfit.methods.derandomize import FEASIBLE_TOL, best_threshold_rule, rank


def _fit(seed=0, n=1000):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0.3).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = gf.GoalClassifier(LogisticRegression(), constraints=[gf.positive_prediction_rate() <= 1.0],
                              method_params={"oracle": "threshold"}).fit(X, y)
    return m


def _brute_force(problem, eta, y):
    """(violation, objective) of every rule 1[eta >= t] on one cell, t at each distinct eta or +inf."""
    out = []
    for t in np.r_[np.unique(eta), np.inf]:
        C = confusion_tensor(y, (eta >= t).astype(int), np.zeros(len(y), int), 2, 1, None)
        out.append((problem.max_violation(C), problem.objective.value(C), (eta >= t).mean()))
    return out


@pytest.mark.parametrize("excess", [5e-8, 2e-7])
def test_a_violation_of_5e_8_counts_as_met_in_the_search_as_in_the_warning(excess):
    assert FEASIBLE_TOL == 1e-7
    m = _fit()
    ts = m.train_sample_
    eta, y = ts.proba[:, 1], ts.y
    free = Problem("error", [gf.positive_prediction_rate() <= 1.0]).compile(m.problem_.space)
    _, best_err, best_rate = min(_brute_force(free, eta, y))  # the error-optimal threshold rule
    assert 0.2 < best_rate < 0.8 and best_err < 0.2
    # the bound below that rule's positive rate by `excess`: the rule violates by exactly `excess`
    m.problem_ = Problem("error", [gf.positive_prediction_rate() <= best_rate - excess]).compile(m.problem_.space)
    table = _brute_force(m.problem_, eta, y)
    viol, err = min((0.0 if v <= FEASIBLE_TOL else v, o) for v, o, _ in table)
    assert viol == 0.0
    # with the old 1e-9 in the search, 5e-8 would lose to a rule with fewer positives
    assert min((0.0 if v <= 1e-9 else v, o) for v, o, _ in table)[1] > best_err + 1e-4
    _, C, info = best_threshold_rule(m.problem_, eta, y, ts.cells)
    assert info["feasible"] and rank(m.problem_, C) == pytest.approx((0.0, err), abs=1e-12)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        det = m.to_deterministic("best_rule")
    assert not [w for w in caught if "deterministic classifier" in str(w.message)]
    assert det.derandomization_["feasible"] and det.train_objective_ == pytest.approx(err, abs=1e-12)
    if excess < FEASIBLE_TOL:  # the error-optimal rule is kept: its 5e-8 counts as met
        assert det.train_objective_ == pytest.approx(best_err, abs=1e-12)
        assert det.train_max_violation_ == pytest.approx(5e-8, rel=1e-6)
    else:  # 2e-7 is a violation: a rule with fewer positives and a higher error meets the bound
        assert det.train_max_violation_ == 0.0 and det.train_objective_ > best_err + 1e-4


@pytest.mark.parametrize("excess,met", [(5e-8, True), (2e-7, False)])
def test_the_least_violating_rule_is_warned_about_exactly_beyond_the_tolerance(excess, met):
    # "best_rate - excess <= positive rate <= best_rate - excess" has no solution on the sample
    # (rates are multiples of 1/n); the rule at best_rate violates it by `excess`, every other by
    # more than 1/n - excess
    m = _fit()
    ts = m.train_sample_
    eta, y = ts.proba[:, 1], ts.y
    free = Problem("error", [gf.positive_prediction_rate() <= 1.0]).compile(m.problem_.space)
    _, best_err, best_rate = min(_brute_force(free, eta, y))
    ppr = gf.positive_prediction_rate()
    m.problem_ = Problem("error", [ppr <= best_rate - excess, ppr >= best_rate - excess]).compile(m.problem_.space)
    _, C, info = best_threshold_rule(m.problem_, eta, y, ts.cells)
    assert C[:, :, 1].sum() == pytest.approx(best_rate, abs=1e-12) and info["feasible"] is met
    assert rank(m.problem_, C) == pytest.approx((0.0 if met else excess, best_err), abs=1e-12)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        det = m.to_deterministic("best_rule")
    warned = [w for w in caught if "deterministic classifier" in str(w.message)]
    assert det.train_max_violation_ == pytest.approx(excess, rel=1e-6)
    assert det.derandomization_["feasible"] is met and bool(warned) is not met


def test_best_candidate_rule_interpolates_only_the_heaviest_members():
    """Pairs are interpolated among the ``max_pair_members`` heaviest members only (their number
    of candidates grows as the square of the members); every member stays a candidate itself, so
    the search returns the better of the capped search and the lighter members."""
    from goalfit.classifiers import PluginRule
    from goalfit.confusion import CellEncoder, ConfusionSpace
    from goalfit.methods.derandomize import best_candidate_rule

    rng = np.random.default_rng(3)
    n, K = 600, 3
    P = rng.dirichlet(np.ones(K), n)
    y = np.array([rng.choice(K, p=p) for p in P])
    enc = CellEncoder()
    cells = enc.fit_transform(np.array(rng.choice(["a", "b"], n)))
    space = ConfusionSpace.from_codes(y, cells, np.arange(K), enc.cells_)
    problem = Problem("balanced_error", [gf.demographic_parity_difference() <= 0.05]).compile(space)
    members = [PluginRule(rng.normal(size=space.shape)) for _ in range(9)]
    weights = rng.dirichlet(np.ones(9))
    heavy = sorted(np.argsort(-weights, kind="stable")[:4])
    got, C, n_cand = best_candidate_rule(problem, members, P, y, cells, n_grid=3, weights=weights,
                                         max_pair_members=4)
    assert n_cand == 9 + 6 * 3  # every member, and the 3 grid points of the 6 pairs of the 4 heaviest
    _, C_heavy, n_heavy = best_candidate_rule(problem, [members[k] for k in heavy], P, y, cells, n_grid=3)
    assert n_heavy == 4 + 6 * 3
    best = min([rank(problem, C_heavy)] + [rank(problem, confusion_tensor(y, m.predict_codes(None, P, cells), cells,
                                                                          K, 2)) for m in members])
    assert rank(problem, C) == best
    # without the cap every pair is interpolated
    assert best_candidate_rule(problem, members, P, y, cells, n_grid=3, weights=weights)[2] == 9 + 36 * 3
