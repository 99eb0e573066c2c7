"""The top-level goal builders also compute their metric when called as fairlearn's metrics are
(scores where the name is a score: tests/metrics/test_metric_scores.py)."""
import numpy as np
import pytest

import goalfit as gf
from goalfit.goals import BUILDERS, Expression
from goalfit.goals.metrics import score_label
from goalfit.metrics import score

fm = pytest.importorskip("fairlearn.metrics")

rng = np.random.default_rng(0)
N = 600
Y = rng.integers(0, 2, N)
P = np.where(rng.random(N) < 0.7, Y, 1 - Y)
S = rng.choice(["a", "b", "c"], N, p=[0.5, 0.3, 0.2])
W = rng.uniform(0.5, 2.0, N)

FAIRNESS = ["demographic_parity_difference", "demographic_parity_ratio", "equalized_odds_difference",
            "equalized_odds_ratio", "equal_opportunity_difference", "equal_opportunity_ratio"]
RATES = ["selection_rate", "true_positive_rate", "false_positive_rate", "true_negative_rate", "false_negative_rate"]


@pytest.mark.parametrize("name", FAIRNESS)
@pytest.mark.parametrize("method", ["between_groups", "to_overall"])
def test_fairness_builders_equal_fairlearn(name, method):
    ours = getattr(gf, name)(Y, P, sensitive_features=S, method=method, sample_weight=W)
    theirs = getattr(fm, name)(Y, P, sensitive_features=S, method=method, sample_weight=W)
    assert ours == pytest.approx(theirs, abs=1e-12)
    assert 0 <= ours <= 1


@pytest.mark.parametrize("name", RATES)
def test_rate_builders_equal_fairlearn(name):
    assert getattr(gf, name)(Y, P) == pytest.approx(getattr(fm, name)(Y, P), abs=1e-12)
    assert getattr(gf, name)(Y, P, sample_weight=W) == pytest.approx(getattr(fm, name)(Y, P, sample_weight=W),
                                                                     abs=1e-12)


def test_keywords_lists_and_string_labels():
    yl, pl = Y.tolist(), P.tolist()
    assert gf.demographic_parity_difference(y_true=yl, y_pred=pl, sensitive_features=S) == pytest.approx(
        fm.demographic_parity_difference(yl, pl, sensitive_features=S), abs=1e-12)
    ys, ps = np.where(Y == 1, "good", "bad"), np.where(P == 1, "good", "bad")
    with pytest.raises(ValueError, match="pos_label"):
        gf.true_positive_rate(ys, ps)
    assert gf.true_positive_rate(ys, ps, pos_label="good") == pytest.approx(fm.true_positive_rate(Y, P))


@pytest.mark.parametrize("name", sorted(set(BUILDERS) - set(FAIRNESS) - set(RATES) - {"rate", "churn_rate",
                                                                                         "cost_sensitive_loss"}))
def test_every_other_builder_equals_goalfit_metrics(name):
    builder = getattr(gf, name)
    goal = builder()
    assert isinstance(goal, Expression)
    needs_groups = name in ("average_odds_difference", "error_rate_difference", "error_rate_ratio",
                            "false_positive_rate_difference", "false_positive_rate_ratio",
                            "overall_misclassification_rate_difference", "macro_f1_over_groups")
    sf = S if needs_groups else None
    value = builder(Y, P, sensitive_features=sf)
    loss = score(goal, Y, P, sensitive_features=sf)  # the goal's own value, what an objective minimizes
    # a metric named as a score (F1, G-mean...) returns the score; its goal is the loss 1 - score
    assert value == pytest.approx(loss if score_label(goal.name) is None else 1 - loss, abs=1e-12)


def test_goal_building_is_unchanged():
    goal = gf.demographic_parity_difference("sex")
    assert isinstance(goal, Expression) and goal.name == "demographic_parity_difference('sex')"
    assert isinstance(gf.true_positive_rate(1, group="a"), Expression)
    c = gf.demographic_parity_difference() <= 0.01
    assert c.bound == 0.01
