"""Randomized and plug-in classifiers: sampling, distributions, derandomization, errors."""
import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

from goalfit.classifiers import (ConstantMember, FittedMember, PluginClassifier, PluginRule, ProbabilityModel,
                                 RandomizedClassifier, encode_labels, plugin_predict)
from goalfit.confusion import CellEncoder, confusion_tensor

pytestmark = pytest.mark.quick  # in the quick subset (README: python -m pytest -m quick)

CLASSES = np.array(["cat", "dog", "eel"])


def mixture(seed=0, n=300, weights=(0.5, 0.3, 0.2)):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(3), size=n)
    y = np.array([rng.choice(3, p=p) for p in P])
    sf = pd.Series(rng.choice(["F", "M"], size=n), name="sex")
    enc = CellEncoder().fit(sf)
    cells = enc.transform(sf)
    costs = [np.broadcast_to(1 - np.eye(3), (2, 3, 3)).copy()]  # argmax
    costs += [rng.normal(size=(2, 3, 3)) for _ in range(len(weights) - 1)]
    members = [PluginRule(c) for c in costs]
    clf = RandomizedClassifier(members, weights, CLASSES, enc, ProbabilityModel(None, np.arange(3)))
    return clf, P, CLASSES[y], y, sf, cells


def test_predict_reproducible_and_seed_dependent():
    clf, P, y, _, sf, _ = mixture()
    a = clf.predict(P, sensitive_features=sf, random_state=0)
    b = clf.predict(P, sensitive_features=sf, random_state=0)
    c = clf.predict(P, sensitive_features=sf, random_state=1)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert set(a) <= set(CLASSES)
    # a RandomState object works too, and advances between calls
    rs = np.random.RandomState(5)
    d1, d2 = clf.predict(P, sensitive_features=sf, random_state=rs), clf.predict(P, sensitive_features=sf, random_state=rs)
    assert not np.array_equal(d1, d2)
    # every sampled prediction is one of the members' predictions for that example
    preds = CLASSES[clf.member_predictions(P, sensitive_features=sf)]
    assert np.all((preds == a[None, :]).any(axis=0))


def test_sampling_frequencies_follow_weights():
    clf, P, y, _, sf, _ = mixture(weights=(0.6, 0.3, 0.1))
    preds = clf.member_predictions(P, sensitive_features=sf)
    # examples where all three members disagree: the sampled member is identifiable
    idx = np.flatnonzero((preds[0] != preds[1]) & (preds[0] != preds[2]) & (preds[1] != preds[2]))
    assert len(idx) > 20
    counts = np.zeros(3)
    for r in range(200):
        s = clf.predict(P, sensitive_features=sf, random_state=r)
        codes = encode_labels(s[idx], CLASSES)
        counts += [(codes == preds[k, idx]).sum() for k in range(3)]
    freq = counts / counts.sum()
    np.testing.assert_allclose(freq, [0.6, 0.3, 0.1], atol=0.02)


def test_predict_proba_is_member_weights():
    clf, P, y, _, sf, _ = mixture()
    D = clf.predict_proba(P, sensitive_features=sf)
    assert D.shape == (len(P), 3)
    np.testing.assert_allclose(D.sum(axis=1), 1.0, atol=1e-12)
    preds = clf.member_predictions(P, sensitive_features=sf)
    for l in range(len(P)):
        expected = np.zeros(3)
        for w, p in zip(clf.weights, preds[:, l]):
            expected[p] += w
        np.testing.assert_allclose(D[l], expected, atol=1e-15)
    # members agree somewhere (probability 1 on a class) and disagree elsewhere
    assert np.isclose(D.max(axis=1), 1).any()
    assert (D.max(axis=1) < 1 - 1e-9).any()


def test_member_rules_are_plugin_argmin_with_cell_costs():
    clf, P, y, _, sf, cells = mixture()
    preds = clf.member_predictions(P, sensitive_features=sf)
    np.testing.assert_array_equal(preds[0], 2 - np.argmax(P[:, ::-1], axis=1))  # argmax, ties high
    for k, m in enumerate(clf.members):
        ref = np.array([2 - np.argmin((P[l] @ m.cost[cells[l]])[::-1]) for l in range(len(P))])
        np.testing.assert_array_equal(preds[k], ref)


def test_expected_confusion_matrix_matches_members():
    clf, P, y, ycodes, sf, cells = mixture()
    sw = np.random.default_rng(1).uniform(0.5, 2, len(y))
    preds = clf.member_predictions(P, sensitive_features=sf)
    per_member = np.array([confusion_tensor(ycodes, p, cells, 3, 2, sw) for p in preds])
    expected = np.tensordot(clf.weights, per_member, axes=1)
    got = clf.expected_confusion_matrix(P, y, sensitive_features=sf, sample_weight=sw, per_group=True)
    np.testing.assert_allclose(got, expected, atol=1e-14)
    np.testing.assert_allclose(clf.expected_confusion_matrix(P, y, sensitive_features=sf, sample_weight=sw),
                               expected.sum(axis=0), atol=1e-14)
    # with encoded cells instead of the sensitive features
    unweighted = np.tensordot(clf.weights, np.array([confusion_tensor(ycodes, p, cells, 3, 2) for p in preds]),
                              axes=1)
    np.testing.assert_allclose(clf.expected_confusion_tensor(P, ycodes, cells), unweighted, atol=1e-14)
    assert got.sum() == pytest.approx(1.0)


def test_to_deterministic_picks_max_weight_member():
    clf, P, y, _, sf, _ = mixture(weights=(0.2, 0.5, 0.3))
    det = clf.to_deterministic()
    assert det.is_deterministic and not clf.is_deterministic
    assert det.members == [clf.members[1]]
    np.testing.assert_array_equal(det.weights, [1.0])
    expected = CLASSES[clf.member_predictions(P, sensitive_features=sf)[1]]
    # deterministic: the seed does not matter
    np.testing.assert_array_equal(det.predict(P, sensitive_features=sf, random_state=0), expected)
    np.testing.assert_array_equal(det.predict(P, sensitive_features=sf, random_state=9), expected)
    D = det.predict_proba(P, sensitive_features=sf)
    assert set(np.unique(D)) <= {0.0, 1.0}
    with pytest.raises(ValueError, match="unknown strategy"):
        clf.to_deterministic("vote")


def test_unseen_or_missing_sensitive_value_raises():
    clf, P, y, _, sf, _ = mixture()
    bad = sf.copy()
    bad.iloc[3] = "Z"
    with pytest.raises(ValueError, match="'Z' was not seen"):
        clf.predict(P, sensitive_features=bad, random_state=0)
    with pytest.raises(ValueError, match="'Z' was not seen"):
        clf.predict_proba(P, sensitive_features=bad)
    with pytest.raises(ValueError, match="pass sensitive_features"):
        clf.predict(P)
    with pytest.raises(ValueError, match="rows"):
        clf.predict(P, sensitive_features=sf[:10])
    with pytest.raises(ValueError, match="missing values"):
        clf.predict(P, sensitive_features=sf.where(np.arange(len(sf)) != 0, None))
    with pytest.raises(ValueError, match="lacks column"):
        clf.predict(P, sensitive_features=pd.DataFrame({"race": sf, "age": sf}))


def test_unseen_combination_of_values_raises():
    sf = pd.DataFrame({"sex": ["F", "F", "M"], "race": ["A", "B", "A"]})
    enc = CellEncoder().fit(sf)
    assert enc.n_cells == 3
    with pytest.raises(ValueError, match="not seen together"):
        enc.transform(pd.DataFrame({"sex": ["M"], "race": ["B"]}))


def test_encode_labels():
    np.testing.assert_array_equal(encode_labels(["dog", "cat", "eel", "dog"], CLASSES), [1, 0, 2, 1])
    np.testing.assert_array_equal(encode_labels(["b", "a", "c"], np.array(["c", "a", "b"])), [2, 1, 0])
    np.testing.assert_array_equal(encode_labels([1.0, 0.0], np.array([0, 1])), [1, 0])
    with pytest.raises(ValueError, match=r"labels \['fox'\] do not match the classes"):
        encode_labels(["cat", "fox"], CLASSES)
    with pytest.raises(ValueError, match=r"labels \[5, 7\]"):
        encode_labels([0, 5, 7], np.array([0, 1]))
    with pytest.raises(ValueError, match="do not match"):
        encode_labels([0.5], np.array([0, 1]))
    clf, P, y, _, sf, _ = mixture()
    with pytest.raises(ValueError, match="do not match the classes"):
        clf.expected_confusion_matrix(P, np.full(len(P), "fox"), sensitive_features=sf)


@pytest.mark.parametrize("weights,match", [
    ([0.5, 0.6], "simplex"), ([1.2, -0.2], "simplex"), ([1.0], "members but"), ([], "members but")])
def test_weights_validation(weights, match):
    enc = CellEncoder().fit(None, 3)
    members = [ConstantMember(0), ConstantMember(1)] if len(weights) != 0 else []
    with pytest.raises(ValueError, match=match):
        RandomizedClassifier(members, weights, np.array([0, 1]), enc, ProbabilityModel(None, [0, 1]))


def test_plugin_classifier_and_probability_model_column_order():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    y = np.where(X[:, 0] > 0.3, "pos", "neg")
    est = LogisticRegression().fit(X, y)  # classes_ = ["neg", "pos"]
    # the goal's class order is reversed: column index maps codes to the estimator's columns
    classes = np.array(["pos", "neg"])
    prob = ProbabilityModel(est, [1, 0])
    np.testing.assert_allclose(prob.predict_proba(X), est.predict_proba(X)[:, ::-1])
    enc = CellEncoder().fit(None, 200)
    L = np.broadcast_to(1 - np.eye(2), (1, 2, 2))
    clf = PluginClassifier(L, classes, enc, prob)
    assert clf.is_deterministic
    np.testing.assert_array_equal(clf.cost, L)
    np.testing.assert_array_equal(clf.predict(X), est.predict(X))
    # no sensitive features needed when there is one cell
    D = clf.predict_proba(X)
    np.testing.assert_array_equal(classes[D.argmax(axis=1)], est.predict(X))
    # pickles
    clf2 = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(clf2.predict(X), clf.predict(X))


def test_mixture_of_fitted_and_plugin_members():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(150, 2))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    est = LogisticRegression().fit(X, y)
    enc = CellEncoder().fit(None, 150)
    prob = ProbabilityModel(est, [0, 1])
    refit = LogisticRegression().fit(X, 1 - y)
    members = [FittedMember(refit, {0: 0, 1: 1}), PluginRule(np.broadcast_to(1 - np.eye(2), (1, 2, 2))),
               ConstantMember(1)]
    clf = RandomizedClassifier(members, [0.25, 0.25, 0.5], np.array([0, 1]), enc, prob)
    preds = clf.member_predictions(X)
    np.testing.assert_array_equal(preds[0], refit.predict(X))
    np.testing.assert_array_equal(preds[1], est.predict(X))
    np.testing.assert_array_equal(preds[2], np.ones(150))
    D = clf.predict_proba(X)
    np.testing.assert_allclose(D[:, 1], 0.5 + 0.25 * preds[0] + 0.25 * preds[1])


def test_plugin_predict_binary_threshold_and_ties():
    eta = np.array([0.0, 0.25, 0.5, 0.75, 1.0])
    P = np.column_stack([1 - eta, eta])
    cells = np.zeros(5, dtype=np.intp)
    for t in eta:
        cost = np.array([[[0.0, t], [1 - t, 0.0]]])  # predict 1 iff eta >= t
        np.testing.assert_array_equal(plugin_predict(P, cells, cost), (eta >= t).astype(int))
    # a negative cost slope: predict 1 iff eta <= 0.5 (ties to 1)
    cost = np.array([[[1.0, 0.0], [0.0, 1.0]]])
    np.testing.assert_array_equal(plugin_predict(P, cells, cost), (eta <= 0.5).astype(int))


@pytest.mark.parametrize("n_classes", [3, 7, 300])
def test_plugin_predict_multiclass_is_argmin_star_ties_high(n_classes):
    # brute force: the largest j among the minimal scores sum_i eta_i L[i, j]; costs on a coarse
    # grid and one-hot probabilities make exact ties common (300 classes: indices above one byte)
    rng = np.random.default_rng(n_classes)
    m, n_cells = 400, 2
    P = rng.dirichlet(np.ones(n_classes), size=m)
    P[: m // 4] = np.eye(n_classes)[rng.integers(0, n_classes, m // 4)]
    cells = rng.integers(0, n_cells, m)
    cost = rng.integers(0, 3, size=(n_cells, n_classes, n_classes)).astype(float)
    scores = np.einsum("ri,rij->rj", P, cost[cells])
    ties = scores == scores.min(axis=1, keepdims=True)
    expected = n_classes - 1 - np.argmax(ties[:, ::-1], axis=1)
    assert (ties.sum(axis=1) > 1).sum() > 20  # the ties are exercised
    np.testing.assert_array_equal(plugin_predict(P, cells, cost), expected)
    # the group-blind rule stacks the per-group costs: with the joint probability of the row's
    # group only (the others zero), its decisions are the per-cell ones
    from goalfit.classifiers.members import group_blind_predict

    joint = np.zeros((m, n_cells, n_classes))
    joint[np.arange(m), cells] = P
    np.testing.assert_array_equal(group_blind_predict(joint, cost), expected)
