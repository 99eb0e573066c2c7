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
    with pytest.raises(ValueError, match="takes no groups"):
        prbep_loss().evaluate_many(y, S, g)
    with pytest.raises(ValueError, match="takes no groups"):
        precision_at_k_loss(5)(y, S[0], g)


# ------------------------------------------------ the named goal behind macro_f1_over_groups_loss
def test_macro_f1_over_groups_goal_value_gradient_and_columns(data):
    """The core metric: value against scikit-learn, gradient against finite differences, the
    group column resolved or required, one group without slicing columns, pickling."""
    import pickle

    import pandas as pd

    import goalfit as gf
    from goalfit.metrics import score

    y, g, S = data
    p = (S[0] > 0).astype(int)
    ref = 1 - np.mean([f1_score(y[g == k], p[g == k]) for k in ("a", "b", "c")])
    assert score(gf.macro_f1_over_groups(), y, p, sensitive_features=g) == pytest.approx(ref, abs=1e-12)
    assert score("macro_f1_over_groups", y, p, sensitive_features=g) == pytest.approx(ref, abs=1e-12)
    assert score(gf.macro_f1_over_groups(), y, p) == pytest.approx(1 - f1_score(y, p), abs=1e-12)
    two = pd.DataFrame({"g": g, "h": np.where(S[1] > 0, "u", "v")})
    assert score(gf.macro_f1_over_groups("g"), y, p, sensitive_features=two) == pytest.approx(ref, abs=1e-12)
    with pytest.raises(ValueError, match="several slicing columns"):
        score(gf.macro_f1_over_groups(), y, p, sensitive_features=two)
    # a group with neither a positive example nor a positive prediction has F1 = 0
    y0, p0 = y.copy(), p.copy()
    y0[g == "c"], p0[g == "c"] = 0, 0
    ref0 = 1 - (f1_score(y0[g == "a"], p0[g == "a"]) + f1_score(y0[g == "b"], p0[g == "b"])) / 3
    assert score(gf.macro_f1_over_groups(), y0, p0, sensitive_features=g) == pytest.approx(ref0, abs=1e-12)

    from goalfit.confusion import ConfusionSpace

    codes = np.searchsorted(["a", "b", "c"], g)
    space = ConfusionSpace.from_codes(y, codes, np.array([0, 1]), pd.DataFrame({"grp": ["a", "b", "c"]}))
    f = gf.macro_f1_over_groups().bind(space)
    assert (f.kind, f.smooth) == ("nonconvex", True)
    rng = np.random.default_rng(0)
    C = space.row_mass[:, :, None] * rng.dirichlet([2.0, 2.0], size=space.shape[:2])
    G = f.gradient(C)
    for idx in [(0, 1, 1), (1, 1, 0), (2, 0, 1), (2, 1, 1)]:
        E = np.zeros(space.shape); E[idx] = 1e-7
        assert G[idx] == pytest.approx((f.value(C + E) - f.value(C - E)) / 2e-7, rel=1e-5, abs=1e-8)
    np.testing.assert_allclose(f.values(np.stack([C, 0.5 * C])), [f.value(C), f.value(0.5 * C)])
    assert pickle.loads(pickle.dumps(f)).value(C) == pytest.approx(f.value(C))


def test_plugin_frank_wolfe_on_macro_f1_over_groups():
    """The core's plug-in (Frank-Wolfe heuristic on the nonconvex named goal) beats logistic
    regression's 0.5 threshold on imbalanced groups, measured by the black-box metric."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import f1_score

    import goalfit as gf

    rng = np.random.default_rng(4)
    n = 3000
    X = rng.normal(size=(n, 3))
    g = np.where(rng.random(n) < 0.3, "F", "M")
    y = (X[:, 0] + 0.8 * (g == "F") + rng.normal(size=n) > 1.6).astype(int)
    with pytest.warns(RuntimeWarning, match="heuristic"):  # method="auto": SplitFW, over the ROC hulls
        auto = gf.GoalClassifier(objective=gf.macro_f1_over_groups()).fit(X, y, sensitive_features=g)
    assert auto.method_ == "split_frank_wolfe"
    gc = gf.GoalClassifier(objective=gf.macro_f1_over_groups(), method="frank_wolfe",
                           method_params={"max_iter": 200, "exact_binary": False}).fit(X, y, sensitive_features=g)
    plug = gc.evaluate(X, y, sensitive_features=g)["objective"]["value"]
    p = LogisticRegression().fit(X, y).predict(X)
    lr = 1 - np.mean([f1_score(y[g == k], p[g == k]) for k in ("F", "M")])
    assert plug < lr - 0.03
    # the local optimum over the hulls: at least as good as Frank-Wolfe's 200 iterations
    assert auto.evaluate(X, y, sensitive_features=g)["objective"]["value"] <= plug + 1e-9
