"""Property-based tests (hypothesis) of goalfit's metrics and goal values against scikit-learn
and fairlearn, on random labels, predictions, groups, weights and class counts (issue 17, §5)."""
from __future__ import annotations

import fairlearn.metrics as flm
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from sklearn import metrics as skm

import goalfit as gf
import goalfit.metrics as gm

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def problems(draw, n_classes=None, weighted=None):
    """(y, pred, groups, weights or None, n_classes): every class and every group present in y."""
    k = draw(st.integers(2, 4)) if n_classes is None else n_classes
    n_groups = draw(st.integers(2, 3))
    n = draw(st.integers(4 * k * n_groups, 120))
    y = np.array(draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n)))
    p = np.array(draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n)))
    g = np.array(draw(st.lists(st.sampled_from(["a", "b", "c"][:n_groups]), min_size=n, max_size=n)))
    # every (group, class) cell of y non-empty, so every rate a goal uses is defined
    for a in np.unique(g):
        assume(len(np.unique(y[g == a])) == k)
    assume(len(np.unique(g)) == n_groups)
    use_w = draw(st.booleans()) if weighted is None else weighted
    w = np.array(draw(st.lists(st.floats(0.1, 5.0), min_size=n, max_size=n))) if use_w else None
    return y, p, g, w, k


@SETTINGS
@given(problems())
def test_error_balanced_error_and_macro_f1_match_sklearn(prob):
    y, p, g, w, k = prob
    assert gm.score("error", y, p, sample_weight=w) == pytest.approx(1 - skm.accuracy_score(y, p, sample_weight=w))
    assert gm.score("balanced_error", y, p, sample_weight=w) == pytest.approx(
        1 - skm.balanced_accuracy_score(y, p, sample_weight=w))
    assert gm.score("macro_f1", y, p, sample_weight=w) == pytest.approx(
        1 - skm.f1_score(y, p, average="macro", labels=np.arange(k), sample_weight=w, zero_division=0))
    rec = skm.recall_score(y, p, average=None, labels=np.arange(k), sample_weight=w, zero_division=0)
    assert gm.score("gmean", y, p, sample_weight=w) == pytest.approx(1 - np.prod(rec) ** (1 / k), abs=1e-12)
    assert gm.score("minmax_recall", y, p, sample_weight=w) == pytest.approx(1 - rec.min())


# fairlearn's metrics build a MetricFrame per call (about 40 ms): fewer examples than SETTINGS'
@settings(SETTINGS, max_examples=12)
@given(problems(n_classes=2), st.sampled_from(["between_groups", "to_overall"]))
def test_binary_fairness_matches_fairlearn(prob, method):
    y, p, g, w, _ = prob
    for ours, theirs in [(gm.demographic_parity_difference, flm.demographic_parity_difference),
                         (gm.demographic_parity_ratio, flm.demographic_parity_ratio),
                         (gm.equalized_odds_difference, flm.equalized_odds_difference),
                         (gm.equalized_odds_ratio, flm.equalized_odds_ratio),
                         (gm.equal_opportunity_difference, flm.equal_opportunity_difference),
                         (gm.equal_opportunity_ratio, flm.equal_opportunity_ratio)]:
        exp = theirs(y, p, sensitive_features=g, method=method, sample_weight=w)
        assert ours(y, p, sensitive_features=g, method=method, sample_weight=w) == pytest.approx(exp, abs=1e-12), \
            ours.__name__


@SETTINGS
@given(problems(n_classes=2))
def test_f1_pos_label_and_average_odds(prob):
    y, p, g, w, _ = prob
    names = np.array(["neg", "pos"])
    ys, ps = names[y], names[p]
    for pos, k in (("pos", 1), ("neg", 0)):
        exp = skm.f1_score(ys, ps, pos_label=pos, sample_weight=w, zero_division=0)
        assert gm.score(gf.f1(), ys, ps, sample_weight=w, pos_label=pos) == pytest.approx(1 - exp)
        # pos_label is the same as recoding the labels 0/1
        assert gm.equal_opportunity_difference(ys, ps, sensitive_features=g, sample_weight=w, pos_label=pos) == \
            pytest.approx(gm.equal_opportunity_difference((y == k).astype(int), (p == k).astype(int),
                                                          sensitive_features=g, sample_weight=w))
    ww = np.ones(len(y)) if w is None else w

    def rate(mask):
        return np.sum(ww[mask] * p[mask]) / np.sum(ww[mask])

    groups = np.unique(g)
    tpr = {a: rate((g == a) & (y == 1)) for a in groups}
    fpr = {a: rate((g == a) & (y == 0)) for a in groups}
    exp = max(0.5 * (abs(tpr[a] - tpr[b]) + abs(fpr[a] - fpr[b])) for a in groups for b in groups)
    assert gm.average_odds_difference(y, p, sensitive_features=g, sample_weight=w) == pytest.approx(exp)


@SETTINGS
@given(problems(weighted=True))
def test_multiclass_demographic_parity_and_permutation_invariance(prob):
    y, p, g, w, k = prob
    groups = np.unique(g)
    exp = 0.0
    for c in range(k):
        r = [np.sum(w[(g == a)] * (p[g == a] == c)) / np.sum(w[g == a]) for a in groups]
        exp = max(exp, max(r) - min(r))
    assert gm.demographic_parity_difference(y, p, sensitive_features=g, sample_weight=w) == pytest.approx(exp)
    perm = np.random.default_rng(len(y)).permutation(len(y))
    for goal in ("error", "balanced_error", "macro_f1", gf.demographic_parity_difference()):
        a = gm.score(goal, y, p, sensitive_features=g, sample_weight=w)
        b = gm.score(goal, y[perm], p[perm], sensitive_features=g[perm], sample_weight=w[perm])
        assert a == pytest.approx(b, abs=1e-12)


@SETTINGS
@given(problems(n_classes=2, weighted=False), st.floats(0.0, 1.0))
def test_expected_value_of_a_distribution_is_linear(prob, t):
    """A per-example class distribution mixing two label vectors gives the mixture of their values
    for every linear goal (the exact expectation of a randomized classifier)."""
    y, p, g, _, _ = prob
    q = 1 - p
    dist = np.zeros((len(y), 2))
    dist[np.arange(len(y)), p] += t
    dist[np.arange(len(y)), q] += 1 - t
    for goal in (gf.error_rate(), gf.true_positive_rate(group="a"), gf.positive_prediction_rate()):
        mixed = gm.score(goal, y, dist, sensitive_features=g, classes=[0, 1])
        assert mixed == pytest.approx(t * gm.score(goal, y, p, sensitive_features=g)
                                      + (1 - t) * gm.score(goal, y, q, sensitive_features=g, classes=[0, 1]))
