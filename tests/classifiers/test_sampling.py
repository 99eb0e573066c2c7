"""Stratified sampling of a randomized classifier's labels: exact per-row distributions, group
counts within one of their expectation, and rates that follow the expected classifier's."""
import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

import goalfit as gf
from goalfit.classifiers.sampling import stratified_choice


def test_each_row_keeps_its_distribution():
    dist = np.array([[0.2, 0.5, 0.3], [0.0, 0.4, 0.6], [0.7, 0.0, 0.3], [1.0, 0.0, 0.0], [0.1, 0.1, 0.8]])
    strata = np.array([0, 0, 0, 1, 1])
    draws = np.array([stratified_choice(dist, strata, seed) for seed in range(6000)])
    freq = np.stack([(draws == k).mean(axis=0) for k in range(3)], axis=1)
    # binomial sd at 6000 draws is at most 0.0065: 4 sd
    np.testing.assert_allclose(freq, dist, atol=0.026)
    assert (draws[:, 3] == 0).all()                 # a sure row gets its class
    assert not (draws[:, 1] == 0).any() and not (draws[:, 2] == 1).any()  # never a class of probability 0


@pytest.mark.parametrize("seed", range(20))
def test_group_counts_within_one_of_their_expectation(seed):
    rng = np.random.default_rng(seed)
    n = 500
    p1 = rng.uniform(size=n)
    dist2 = np.column_stack([1 - p1, p1])
    strata = rng.integers(0, 7, n)
    codes = stratified_choice(dist2, strata, seed)
    for s in range(7):
        rows = strata == s
        expected = p1[rows].sum()
        assert np.floor(expected) - 1e-9 <= (codes[rows] == 1).sum() <= np.ceil(expected) + 1e-9
    dist3 = rng.dirichlet(np.ones(3), size=n)
    codes = stratified_choice(dist3, strata, seed)
    for s in range(7):
        rows = strata == s
        assert abs((codes[rows] == 0).sum() - dist3[rows, 0].sum()) < 1 + 1e-9


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="distribution"):
        stratified_choice(np.array([[0.5, 0.6]]), np.array([0]))
    with pytest.raises(ValueError, match="shape"):
        stratified_choice(np.array([[0.5, 0.5]]), np.array([0, 1]))


def _small_groups(n, seed):
    rng = np.random.default_rng(seed)
    g = rng.choice(6, size=n, p=[0.4, 0.3, 0.15, 0.07, 0.05, 0.03])
    X = np.column_stack([rng.normal(size=n) + 0.4 * g, rng.normal(size=n)])
    y = np.digitize(X[:, 0] + X[:, 1] + rng.normal(size=n), [-0.5, 1.0])  # 3 classes
    return X, y, g


def test_stratified_predictions_follow_the_expected_rates_on_small_groups():
    X, y, g = _small_groups(4000, 0)
    Xt, yt, gt = _small_groups(600, 1)  # test groups of ~18-240 rows
    goal = gf.demographic_parity_difference() <= 0.02
    m = gf.GoalClassifier(LogisticRegression(), constraints=[goal], random_state=0).fit(X, y, sensitive_features=g)
    assert len(m.classifier_.members) > 1
    q = m.predict_proba(Xt, sensitive_features=gt)
    shares = lambda labels: np.array([[np.mean(labels[gt == s] == c) for c in m.classes_] for s in range(6)])
    exp_shares = np.array([q[gt == s].mean(axis=0) for s in range(6)])
    err_strat, err_indep = [], []
    for seed in range(30):
        ls = m.predict(Xt, sensitive_features=gt, random_state=seed, stratified=True)
        li = m.predict(Xt, sensitive_features=gt, random_state=seed, stratified=False)
        err_strat.append(np.abs(shares(ls) - exp_shares).max())
        err_indep.append(np.abs(shares(li) - exp_shares).max())
        counts0 = np.array([np.sum(ls[gt == s] == m.classes_[0]) for s in range(6)])
        assert np.all(np.abs(counts0 - np.array([q[gt == s, 0].sum() for s in range(6)])) < 1 + 1e-9)
    # the independent draws' largest share error is several binomial sds (0.125 on average here);
    # the stratified draws control class 0 within one count and the other classes through the
    # rows left free, which leaves about half of it (0.068)
    assert np.mean(err_strat) < 0.7 * np.mean(err_indep)
    # every example keeps its distribution: the mean of many stratified draws is the expected rule
    many = np.mean([m.predict(Xt, sensitive_features=gt, random_state=s, stratified=True) == m.classes_[1]
                    for s in range(400)], axis=0)
    assert np.abs(many - q[:, 1]).max() < 0.1 and abs(many.mean() - q[:, 1].mean()) < 0.01


def test_stratified_on_a_deterministic_rule_is_the_rule():
    X, y, g = _small_groups(1000, 2)
    m = gf.GoalClassifier(LogisticRegression(), random_state=0).fit(X, y, sensitive_features=g)
    np.testing.assert_array_equal(m.predict(X, sensitive_features=g, stratified=True),
                                  m.predict(X, sensitive_features=g))
    with pytest.raises(ValueError, match="stratified"):
        m.predict(X, sensitive_features=g, stratified="yes")


@pytest.mark.parametrize("stratified", [False, True])
def test_one_seed_over_many_batches_still_samples_the_mixture(stratified):
    X, y, g = _small_groups(3000, 3)
    m = gf.GoalClassifier(LogisticRegression(), constraints=[gf.demographic_parity_difference() <= 0.02],
                          random_state=0).fit(X, y, sensitive_features=g)
    clf = m.classifier_
    preds = clf.member_predictions(X, sensitive_features=g)
    heavy = int(np.argmax(clf.weights))
    split = np.flatnonzero((preds != preds[heavy]).any(axis=0))[:300]  # rows where the members disagree
    assert len(split) >= 100
    one_by_one = np.array([m.predict(X[i:i + 1], sensitive_features=g[i:i + 1], stratified=stratified)[0]
                           for i in split])
    # with one seed reused as is, every one-row batch would take the same member
    assert max(np.mean(one_by_one == m.classes_[p[split]]) for p in preds) < 0.97
    took_heavy = np.mean(one_by_one == m.classes_[preds[heavy, split]])
    # P(heaviest member's label) = its weight plus the weight of the others that agree with it there
    q = m.predict_proba(X[split], sensitive_features=g[split])
    expected = np.mean(q[np.arange(len(split)), preds[heavy, split]])
    assert abs(took_heavy - expected) < 4 * np.sqrt(expected * (1 - expected) / len(split))
    # the same batch with the same seed gives the same labels
    a = m.predict(X[:50], sensitive_features=g[:50], stratified=stratified)
    np.testing.assert_array_equal(a, m.predict(X[:50], sensitive_features=g[:50], stratified=stratified))


def test_predict_is_stratified_by_default():
    X, y, g = _small_groups(2000, 4)
    m = gf.GoalClassifier(LogisticRegression(), constraints=[gf.demographic_parity_difference() <= 0.02],
                          random_state=0).fit(X, y, sensitive_features=g)
    np.testing.assert_array_equal(m.predict(X, sensitive_features=g),
                                  m.predict(X, sensitive_features=g, stratified=True))
    q = m.predict_proba(X, sensitive_features=g)
    labels = m.predict(X, sensitive_features=g)
    for s in range(6):
        assert abs(np.sum(labels[g == s] == m.classes_[0]) - q[g == s, 0].sum()) < 1 + 1e-9
