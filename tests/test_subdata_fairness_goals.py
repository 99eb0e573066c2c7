"""The OMR (error-rate) and FPR disparities added to the core goal vocabulary."""
import numpy as np
import pytest

from goalfit import GoalClassifier, error_rate_difference, false_positive_rate_difference
from goalfit import metrics
from goalfit.goals import overall_misclassification_rate_difference


def _data(seed=0, n=300):
    rng = np.random.default_rng(seed)
    a = rng.choice(["A", "B", "C"], n)
    y = rng.integers(0, 2, n)
    p = rng.integers(0, 2, n)
    return y, p, a


def test_error_rate_difference_matches_direct_computation():
    y, p, a = _data()
    err = {k: np.mean(y[a == k] != p[a == k]) for k in "ABC"}
    want = max(err.values()) - min(err.values())
    assert metrics.error_rate_difference(y, p, sensitive_features=a) == pytest.approx(want)
    assert metrics.score(overall_misclassification_rate_difference(), y, p,
                         sensitive_features=a) == pytest.approx(want)
    ratio = min(err.values()) / max(err.values())
    assert metrics.error_rate_ratio(y, p, sensitive_features=a) == pytest.approx(ratio)


def test_false_positive_rate_difference_matches_fairlearn():
    from fairlearn.metrics import MetricFrame, false_positive_rate

    y, p, a = _data(1)
    mf = MetricFrame(metrics=false_positive_rate, y_true=y, y_pred=p, sensitive_features=a)
    assert metrics.false_positive_rate_difference(y, p, sensitive_features=a) == pytest.approx(
        mf.difference())


def test_plugin_method_meets_an_error_rate_parity_constraint():
    from sklearn.datasets import make_classification

    X, y = make_classification(600, 5, random_state=0)
    a = np.where(X[:, 0] + np.random.default_rng(0).normal(size=600) > 0, "g1", "g2")
    base = GoalClassifier(random_state=0).fit(X, y, sensitive_features=a)
    gap0 = metrics.error_rate_difference(y, base.predict(X, sensitive_features=a), sensitive_features=a)
    clf = GoalClassifier(constraints=[error_rate_difference() <= 0.01], random_state=0)
    clf.fit(X, y, sensitive_features=a)
    ev = clf.evaluate(X, y, sensitive_features=a)
    assert ev["constraints"][0]["value"] <= 0.01 + 1e-6
    assert gap0 > 0.02  # the constraint was active
