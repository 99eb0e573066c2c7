"""Metric calls on labels return what their names say, as scikit-learn, imbalanced-learn and
fairlearn define it; objectives name what is minimized; evaluate() and the report label both."""
import numpy as np
import pytest
from scipy.stats import entropy
from sklearn import metrics as skm
from sklearn.linear_model import LogisticRegression

import goalfit as gf
from goalfit.goals import BUILDERS, Problem
from goalfit.goals.metrics import LOSSES, SCORES, loss_label, score_label
from goalfit.metrics import objective_entry, score

pytestmark = pytest.mark.quick  # in the quick subset (README: python -m pytest -m quick)

fm = pytest.importorskip("fairlearn.metrics")


def _labels(n_classes, seed, n=400):
    """Random labels and predictions that agree 60% of the time, every class present in both."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    p = np.where(rng.random(n) < 0.6, y, rng.integers(0, n_classes, n))
    y[:n_classes] = p[n_classes:2 * n_classes] = np.arange(n_classes)
    return y, p, rng.uniform(0.2, 3.0, n), rng.choice(["a", "b", "c"], n)


def _recalls(y, p, w):
    return skm.recall_score(y, p, average=None, sample_weight=w)


def _gmean(y, p, w):
    """imbalanced-learn's geometric_mean_score(average="multiclass") written out: the geometric
    mean of the per-class recalls (sensitivity and specificity for two classes)."""
    r = _recalls(y, p, w)
    return float(np.prod(r) ** (1.0 / len(r)))


def _micro_f1(y, p, w):
    """Micro-F1 leaving the most frequent (weighted) class out (Narasimhan Ex. 4)."""
    classes = np.unique(y)
    mass = np.array([np.sum(np.where(y == c, 1.0 if w is None else w, 0.0)) for c in classes])
    d = classes[int(np.argmax(mass))]
    return skm.f1_score(y, p, labels=[c for c in classes if c != d], average="micro", sample_weight=w)


def _kl(y, p, w):
    classes = np.unique(y)
    w = np.ones(len(y)) if w is None else w
    prior = np.array([w[y == c].sum() for c in classes]) / w.sum()
    cover = np.array([w[p == c].sum() for c in classes]) / w.sum()
    return float(entropy(prior, cover))


#: builder name -> (reference on labels, is it a score whose goal is 1 - score)
REFERENCES = {
    "accuracy": (lambda y, p, w: skm.accuracy_score(y, p, sample_weight=w), False),
    "error": (lambda y, p, w: 1 - skm.accuracy_score(y, p, sample_weight=w), False),
    "error_rate": (lambda y, p, w: 1 - skm.accuracy_score(y, p, sample_weight=w), False),
    "balanced_error": (lambda y, p, w: 1 - skm.balanced_accuracy_score(y, p, sample_weight=w), False),
    "macro_f1": (lambda y, p, w: skm.f1_score(y, p, average="macro", sample_weight=w), True),
    "micro_f1": (_micro_f1, True),
    "gmean": (_gmean, True),
    "hmean": (lambda y, p, w: float(len(_recalls(y, p, w)) / np.sum(1 / _recalls(y, p, w))), True),
    "qmean": (lambda y, p, w: float(np.sqrt(np.mean((1 - _recalls(y, p, w)) ** 2))), False),
    "minmax_recall": (lambda y, p, w: float(np.min(_recalls(y, p, w))), True),
    "kl_quantification": (_kl, False),
}
BINARY_ONLY = {  # the positive class of a binary problem
    "f1": (lambda y, p, w: skm.f1_score(y, p, sample_weight=w), True),
    "precision": (lambda y, p, w: skm.precision_score(y, p, sample_weight=w), False),
    "recall": (lambda y, p, w: skm.recall_score(y, p, sample_weight=w), False),
    "true_positive_rate": (lambda y, p, w: skm.recall_score(y, p, sample_weight=w), False),
    "selection_rate": (lambda y, p, w: fm.selection_rate(y, p, sample_weight=w), False),
}


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("name, n_classes", [(name, k) for name in sorted(REFERENCES) for k in (2, 3, 5)]
                         + [(name, 2) for name in sorted(BINARY_ONLY)])
def test_builder_on_labels_equals_the_reference(name, n_classes, weighted):
    ref, is_score = {**REFERENCES, **BINARY_ONLY}[name]
    for seed in range(3):
        y, p, w, _ = _labels(n_classes, seed)
        w = w if weighted else None
        expected = ref(y, p, w)
        got = getattr(gf, name)(y, p, sample_weight=w)
        assert got == pytest.approx(expected, abs=1e-12)
        # the goal expression is what an objective minimizes: 1 - score for a score
        goal_value = score(getattr(gf, name)(), y, p, sample_weight=w)
        assert goal_value == pytest.approx(1 - expected if is_score else expected, abs=1e-12)
        assert (score_label(getattr(gf, name)().name) is not None) == is_score


def test_the_issue_numbers_f1_is_f1_not_its_loss():
    y = np.array([0, 1, 1, 1, 0, 1, 0, 0])
    p = np.array([0, 1, 1, 0, 0, 1, 1, 0])  # TP 3, FN 1, FP 1: F1 = 0.75
    assert gf.f1(y, p) == pytest.approx(0.75, abs=1e-15) == skm.f1_score(y, p)
    assert score("f1", y, p) == pytest.approx(0.25, abs=1e-15)  # the goal: 1 - F1
    assert gf.metrics.f1(y, p) == gf.f1(y, p)  # the same function in goalfit.metrics
    # recalls 3/4 and 3/4: G-mean = H-mean = min recall = 0.75, Q-mean loss = 0.25
    for name in ("gmean", "hmean", "minmax_recall"):
        assert getattr(gf, name)(y, p) == pytest.approx(0.75, abs=1e-15)
    assert gf.qmean(y, p) == pytest.approx(0.25, abs=1e-15)


@pytest.mark.parametrize("beta", [0.5, 1.0, 2.0])
@pytest.mark.parametrize("weighted", [False, True])
def test_fbeta_and_class_labels(beta, weighted):
    y, p, w, _ = _labels(3, 7)
    w = w if weighted else None
    for k in range(3):
        ref = skm.fbeta_score(y, p, beta=beta, labels=[k], average="macro", sample_weight=w)
        assert gf.fbeta(y, p, beta, k, sample_weight=w) == pytest.approx(ref, abs=1e-12)
        if beta == 1.0:
            assert gf.f1(y, p, k, sample_weight=w) == pytest.approx(ref, abs=1e-12)
    ys, ps = np.where(y[:50] == 1, "yes", "no"), np.where(p[:50] == 1, "yes", "no")
    assert gf.f1(ys, ps, pos_label="yes") == pytest.approx(skm.f1_score(ys, ps, pos_label="yes"), abs=1e-12)


def test_gmean_binary_is_sqrt_sensitivity_specificity():
    y, p, w, _ = _labels(2, 3)
    sens = skm.recall_score(y, p, pos_label=1, sample_weight=w)
    spec = skm.recall_score(y, p, pos_label=0, sample_weight=w)
    assert gf.gmean(y, p, sample_weight=w) == pytest.approx(np.sqrt(sens * spec), abs=1e-12)


def test_zero_recall_scores():
    y = np.array([0, 0, 1, 1, 2, 2])
    p = np.array([0, 0, 1, 1, 1, 1])  # class 2 never predicted: recall 0
    assert gf.gmean(y, p) == 0.0 and gf.hmean(y, p) == 0.0 and gf.minmax_recall(y, p) == 0.0
    assert gf.macro_f1(y, p) == pytest.approx(skm.f1_score(y, p, average="macro"), abs=1e-12)


@pytest.mark.parametrize("weighted", [False, True])
def test_group_scores_equal_fairlearn_metric_frame(weighted):
    y, p, w, s = _labels(2, 11)
    w = w if weighted else None
    frame = fm.MetricFrame(metrics=skm.f1_score, y_true=y, y_pred=p, sensitive_features=s,
                           sample_params=None if w is None else {"sample_weight": w})
    assert gf.macro_f1_over_groups(y, p, sensitive_features=s, sample_weight=w) == pytest.approx(
        float(frame.by_group.mean()), abs=1e-12)
    assert gf.f1(y, p, group="b", sensitive_features=s, sample_weight=w) == pytest.approx(
        float(frame.by_group["b"]), abs=1e-12)
    for name in ("demographic_parity_difference", "equalized_odds_difference", "equal_opportunity_ratio"):
        assert getattr(gf, name)(y, p, sensitive_features=s, sample_weight=w) == pytest.approx(
            getattr(fm, name)(y, p, sensitive_features=s, sample_weight=w), abs=1e-12)


def test_every_builder_is_classified():
    """Each named metric is either a score (goal = 1 - score) or a loss by its definition."""
    named = {"balanced_error", "error", "f1", "fbeta", "gmean", "hmean", "kl_quantification", "macro_f1",
             "macro_f1_over_groups", "micro_f1", "minmax_recall", "qmean"}
    assert named <= set(BUILDERS)
    assert {b for b in named if b in SCORES} == {"f1", "fbeta", "gmean", "hmean", "macro_f1",
                                                "macro_f1_over_groups", "micro_f1", "minmax_recall"}
    assert {b for b in named if b in LOSSES} == {"balanced_error", "error", "kl_quantification", "qmean"}
    assert loss_label("f1(group='F')") == "1 - F1(group='F')" and score_label("f1(group='F')") == "F1(group='F')"
    assert loss_label("qmean") == "Q-mean loss" and score_label("qmean") is None
    assert score_label("demographic_parity_difference('sex')") is None


def test_objective_entry_labels():
    e = objective_entry("hmean", 0.3)
    assert e == {"name": "hmean", "value": 0.3, "loss": 0.3, "score": pytest.approx(0.7, abs=1e-15),
                 "loss_label": "1 - H-mean", "score_label": "H-mean"}
    e = objective_entry("error", 0.2)
    assert e["score"] is None and e["loss_label"] == "error rate" and e["value"] == e["loss"] == 0.2
    e = objective_entry("f1", 0.2, named=False)  # a user's black-box callable named "f1"
    assert e["score"] is None and e["loss_label"] == "f1"
    assert repr(Problem("f1")) == "minimize f1 (1 - F1)"


def _fitted(objective, seed=1, n=500):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = (X[:, 0] + 0.7 * rng.normal(size=n) > 0.6).astype(int)
    s = rng.choice(["a", "b"], n)
    X[:, 1] += s == "a"
    m = gf.GoalClassifier(LogisticRegression(), objective=objective,
                          constraints=[gf.demographic_parity_difference() <= 0.05], random_state=0)
    return m.fit(X, y, sensitive_features=s), X, y, s


def _expected_confusion(model, X, y, s):
    """The 2 x 2 confusion matrix expected over the classifier's randomization (weights)."""
    dist = model.predict_proba(X, sensitive_features=s)  # the distribution predict samples from
    return np.array([[dist[y == i, j].sum() for j in range(2)] for i in range(2)])


def test_evaluate_f1_objective_loss_and_score():
    model, X, y, s = _fitted("f1")
    ev = model.evaluate(X, y, sensitive_features=s, confidence=0.9)
    C = _expected_confusion(model, X, y, s)
    tp, fn, fp = C[1, 1], C[1, 0], C[0, 1]
    f1 = 2 * tp / (2 * tp + fn + fp)
    assert len(model.result_.members) >= 2  # a randomized classifier: the value is an expectation
    assert C == pytest.approx(model.expected_confusion_matrix(X, y, sensitive_features=s) * len(y), abs=1e-9)
    obj = ev["objective"]
    assert obj["name"] == "f1" and obj["loss_label"] == "1 - F1" and obj["score_label"] == "F1"
    assert obj["loss"] == obj["value"] == pytest.approx(1 - f1, abs=1e-12)
    assert obj["score"] == pytest.approx(f1, abs=1e-12)
    lo, hi = obj["interval"]
    assert obj["score_interval"] == pytest.approx([1 - hi, 1 - lo], abs=1e-15)
    # deterministic predictions: the expected F1 is sklearn's F1 of the labels
    det = model.to_deterministic("best_rule")
    ev_det = model.evaluate(X, y, sensitive_features=s, classifier=det)
    dist = model.distribution(X, sensitive_features=s, classifier=det)
    assert set(np.unique(dist)) <= {0.0, 1.0}
    pred = model.classes_[dist.argmax(axis=1)]
    assert ev_det["objective"]["score"] == pytest.approx(skm.f1_score(y, pred), abs=1e-12)
    assert ev_det["objective"]["value"] == pytest.approx(1 - skm.f1_score(y, pred), abs=1e-12)


def test_evaluate_loss_objective_has_no_score():
    model, X, y, s = _fitted("error")
    obj = model.evaluate(X, y, sensitive_features=s)["objective"]
    assert obj["score"] is None and obj["score_label"] is None and obj["loss_label"] == "error rate"
    C = _expected_confusion(model, X, y, s)
    assert obj["value"] == pytest.approx(1 - np.trace(C) / len(y), abs=1e-12)


def test_report_labels_loss_and_score():
    from rich.console import Console

    model, X, y, s = _fitted("gmean")
    rep = gf.build_report(model, X, y, sensitive_features_train=s, X_test=X, y_test=y, sensitive_features_test=s,
                          confidence=None)
    d = rep.data["objective"]
    assert d["loss_label"] == "1 - G-mean" and d["score_label"] == "G-mean"
    assert d["score_train"] == pytest.approx(1 - d["train"], abs=1e-15)
    assert rep.data["baseline"]["objective"]["score_test"] == pytest.approx(
        1 - rep.data["baseline"]["objective"]["test"], abs=1e-15)
    console = Console(record=True, width=200)
    rep.print(console)
    text = console.export_text()
    assert "1 - G-mean (minimized)" in text and "G-mean (score)" in text
    assert f"{d['score_train']:.4f}" in text
