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


def test_text_goals_reach_the_omr_and_fpr_disparities():
    """``parse_constraint`` knows the Ye & Xie disparities (CLI / TOML goals can use them)."""
    from goalfit.goals import parse_constraint

    y, p, a = _data(2)
    err = {k: np.mean(y[a == k] != p[a == k]) for k in "ABC"}
    neg = {k: np.mean(p[(a == k) & (y == 0)]) for k in "ABC"}
    cases = {
        "error_rate_difference() <= 0.01": max(err.values()) - min(err.values()),
        "overall_misclassification_rate_difference() <= 0.01": max(err.values()) - min(err.values()),
        "error_rate_ratio() >= 0.8": min(err.values()) / max(err.values()),
        "false_positive_rate_difference() <= 0.05": max(neg.values()) - min(neg.values()),
        "false_positive_rate_ratio() >= 0.8": min(neg.values()) / max(neg.values()),
    }
    for text, want in cases.items():
        c = parse_constraint(text)
        assert metrics.score(c.expression, y, p, sensitive_features=a) == pytest.approx(want), text
    assert parse_constraint("error_rate_difference('sex') <= 0.01").name == "error_rate_difference('sex') <= 0.01"


def test_every_public_goal_function_is_reachable_from_the_parser():
    import types

    import goalfit.goals as gg
    from goalfit.goals import Expression
    from goalfit.goals.parse import _functions, parse_goal

    funcs = _functions()
    args = {"cost_sensitive_loss": ([[0.0, 1.0], [2.0, 0.0]],), "precision_at_k_loss": (5,)}
    not_goals = {"parse_constraint", "parse_objective", "as_objective", "as_blackbox_metric", "goal_metric",
                 "compile_rate_program"}
    n_goals = 0
    for name in gg.__all__:
        obj = getattr(gg, name)
        if not isinstance(obj, types.FunctionType) or name in not_goals:
            continue
        made = obj(*args.get(name, ()))
        if isinstance(made, Expression):  # a goal: the text form builds the same goal
            n_goals += 1
            assert name in funcs, name
            text = f"{name}({', '.join(repr(v) for v in args.get(name, ()))})"
            assert parse_goal(text).name == made.name, name
        else:  # the black-box metrics are evaluated on predictions, not goals of the language
            assert name not in funcs, name
    assert n_goals >= 37


def test_fair_subdata_meets_text_fpr_and_omr_goals():
    """The Ye & Xie disparities as text goals reach FairSubdataClassifier (one vocabulary): the
    training predictions meet them and the reported values are goalfit.metrics on predict()."""
    from goalfit import FairSubdataClassifier
    from goalfit.goals import parse_constraint

    rng = np.random.default_rng(4)
    n = 400
    a = rng.choice(["A", "B"], n)
    X = rng.normal(size=(n, 3)) + 1.2 * (a == "A")[:, None]
    y = (X[:, 0] + rng.logistic(size=n) > 0.6).astype(int)
    for text, metric in [("false_positive_rate_difference() <= 0.03", metrics.false_positive_rate_difference),
                         ("error_rate_difference() <= 0.03", metrics.error_rate_difference)]:
        clf = FairSubdataClassifier(constraints=[parse_constraint(text)], alpha=0.01).fit(X, y, sensitive_features=a)
        pred = clf.predict(X)
        gap = metric(y, pred, sensitive_features=a)
        assert clf.evaluate(X, y, sensitive_features=a)["constraints"][0]["value"] == pytest.approx(gap)
        assert gap <= 0.03 + 1e-9 and clf.feasible_
        base = metric(y, clf.fit_baseline(X, y, sensitive_features=a)[1].predict(X), sensitive_features=a)
        assert base > 0.03  # the goal was active
        assert clf.fairness_ == pytest.approx(0.0, abs=1e-12)  # the selection meets it exactly
