"""Black-box metrics (goalfit.goals.blackbox) against scikit-learn and brute force."""
import numpy as np
import pytest
from sklearn.metrics import f1_score, recall_score

from goalfit.goals.blackbox import (
    BlackBoxMetric, as_blackbox_metric, error_loss, gmean_loss, macro_f1_over_groups_loss, prbep_loss,
    precision_at_k_loss,
)


@pytest.fixture
def data():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 300)
    g = rng.choice(["a", "b", "c"], 300)
    S = rng.normal(size=(7, 300)) + 0.5 * y
    return y, g, S


def test_confusion_metrics_match_sklearn(data):
    y, g, S = data
    gm = gmean_loss().evaluate_many(y, S)
    mf = macro_f1_over_groups_loss().evaluate_many(y, S, g)
    er = error_loss().evaluate_many(y, S)
    for r, s in enumerate(S):
        p = (s > 0).astype(int)
        tpr, tnr = recall_score(y, p), recall_score(y, p, pos_label=0)
        assert gm[r] == pytest.approx(1 - np.sqrt(tpr * tnr), abs=1e-12)
        ref = 1 - np.mean([f1_score(y[g == k], p[g == k]) for k in ("a", "b", "c")])
        assert mf[r] == pytest.approx(ref, abs=1e-12)
        assert er[r] == pytest.approx(np.mean(p != y), abs=1e-12)


def test_ranking_metrics_brute_force(data):
    y, _, S = data
    k = int(y.sum())
    pr = prbep_loss().evaluate_many(y, S)
    p10 = precision_at_k_loss(10).evaluate_many(y, S)
    for r, s in enumerate(S):
        order = np.argsort(-s, kind="stable")
        assert pr[r] == pytest.approx(1 - y[order[:k]].mean())
        assert p10[r] == pytest.approx(1 - y[order[:10]].mean())


def test_callable_wrapper_and_single_row(data):
    y, g, S = data
    m = as_blackbox_metric(lambda yt, yp: np.mean(yt != yp))
    assert m(y, S[0]) == pytest.approx(error_loss()(y, S[0]))
    mg = BlackBoxMetric(lambda yt, yp, gr: float(np.mean(yp[gr == "a"])), uses_groups=True)
    assert mg(y, S[1], g) == pytest.approx(np.mean(S[1][g == "a"] > 0))
    higher = BlackBoxMetric(lambda yt, yp: np.mean(yt == yp), greater_is_better=True)
    assert higher(y, S[2]) == pytest.approx(-np.mean((S[2] > 0) == y))


def test_bad_input_raises(data):
    y, g, S = data
    with pytest.raises(ValueError, match="labels mismatch"):
        gmean_loss().evaluate_many(y[:-1], S)
    with pytest.raises(ValueError, match="NaN"):
        gmean_loss()(y, np.full(len(y), np.nan))
    with pytest.raises(ValueError, match="binary"):
        gmean_loss()(y + 1, S[0])
    with pytest.raises(ValueError, match="non-finite"):
        BlackBoxMetric(lambda a, b: float("nan"))(y, S[0])
    with pytest.raises(ValueError, match="unknown black-box metric"):
        as_blackbox_metric("nope")
    with pytest.raises(ValueError, match="exceeds"):
        precision_at_k_loss(1000)(y, S[0])
