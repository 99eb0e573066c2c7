"""Metrics of goalfit against scikit-learn, fairlearn and direct formulas; expected confusion
matrices of randomized mixtures; gradients against finite differences."""
import itertools

import numpy as np
import pandas as pd
import pytest
from sklearn import metrics as skm

import fairlearn.metrics as flm

import goalfit as gf
import goalfit.metrics as gm
from goalfit.classifiers import PluginRule, ProbabilityModel, RandomizedClassifier
from goalfit.confusion import CellEncoder, ConfusionSpace, confusion_tensor, expected_confusion_matrix
from goalfit.metrics import score

pytestmark = pytest.mark.quick  # in the quick subset (README: python -m pytest -m quick)

SEEDS = [0, 1, 2]


def labels(seed, n=300, n_classes=2, n_groups=3, weighted=True):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    # predictions correlated with y so that no rate is degenerate
    p = np.where(rng.random(n) < 0.55, y, rng.integers(0, n_classes, n))
    g = rng.choice(np.array(["a", "b", "c", "d"][:n_groups]), size=n)
    w = rng.uniform(0.2, 3.0, n) if weighted else None
    return y, p, g, w


# ------------------------------------------------------------------ against scikit-learn
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n_classes", [2, 4])
@pytest.mark.parametrize("weighted", [False, True])
def test_error_accuracy_balanced(seed, n_classes, weighted):
    y, p, _, w = labels(seed, n_classes=n_classes, weighted=weighted)
    acc = skm.accuracy_score(y, p, sample_weight=w)
    assert score("error", y, p, sample_weight=w) == pytest.approx(1 - acc, abs=1e-12)
    assert score(gf.error_rate(), y, p, sample_weight=w) == pytest.approx(1 - acc, abs=1e-12)
    assert score(gf.accuracy(), y, p, sample_weight=w) == pytest.approx(acc, abs=1e-12)
    bal = skm.balanced_accuracy_score(y, p, sample_weight=w)
    assert score("balanced_error", y, p, sample_weight=w) == pytest.approx(1 - bal, abs=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("beta", [1.0, 0.5, 2.0])
def test_fbeta_against_sklearn(seed, n_classes, beta):
    y, p, _, w = labels(seed, n_classes=n_classes)
    for k in range(n_classes):
        ref = skm.fbeta_score(y, p, beta=beta, labels=[k], average=None, sample_weight=w)[0]
        assert score(gf.fbeta(beta, k), y, p, sample_weight=w) == pytest.approx(1 - ref, abs=1e-12)
    if n_classes == 2:  # default label: positive class 1
        ref = skm.f1_score(y, p, sample_weight=w)
        assert score("f1", y, p, sample_weight=w) == pytest.approx(1 - ref, abs=1e-12)
        assert score(gf.f1(), y, p, sample_weight=w) == pytest.approx(1 - ref, abs=1e-12)


def test_fbeta_class_never_present_nor_predicted_is_loss_one():
    y = np.array([0, 1, 0, 1, 0])
    p = np.array([0, 1, 1, 1, 0])
    # class 2 exists in the class list but nowhere in the data: F = 0 (zero_division=0)
    assert score(gf.fbeta(1.0, 2), y, p, classes=[0, 1, 2]) == 1.0


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n_classes", [3, 5])
def test_micro_and_macro_f1_against_sklearn(seed, n_classes):
    y, p, _, w = labels(seed, n_classes=n_classes)
    # default class left out of micro-F1; default is the most frequent (weighted) class
    d_default = int(np.argmax(np.bincount(y, weights=w, minlength=n_classes)))
    for d in [None] + list(range(n_classes)):
        dd = d_default if d is None else d
        others = [k for k in range(n_classes) if k != dd]
        ref = skm.f1_score(y, p, labels=others, average="micro", sample_weight=w)
        assert score(gf.micro_f1(d), y, p, sample_weight=w) == pytest.approx(1 - ref, abs=1e-12)
    ref = skm.f1_score(y, p, average="macro", sample_weight=w)
    assert score(gf.macro_f1(), y, p, sample_weight=w) == pytest.approx(1 - ref, abs=1e-12)
    assert score("macro_f1", y, p, sample_weight=w) == pytest.approx(1 - ref, abs=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n_classes", [2, 4])
def test_per_class_rates_against_sklearn(seed, n_classes):
    y, p, _, w = labels(seed, n_classes=n_classes)
    prec = skm.precision_score(y, p, average=None, labels=list(range(n_classes)), sample_weight=w)
    rec = skm.recall_score(y, p, average=None, labels=list(range(n_classes)), sample_weight=w)
    for k in range(n_classes):
        assert score(gf.precision(k), y, p, sample_weight=w) == pytest.approx(prec[k], abs=1e-12)
        assert score(gf.recall(k), y, p, sample_weight=w) == pytest.approx(rec[k], abs=1e-12)
        assert score(gf.true_positive_rate(k), y, p, sample_weight=w) == pytest.approx(rec[k], abs=1e-12)
        assert score(gf.false_negative_rate(k), y, p, sample_weight=w) == pytest.approx(1 - rec[k], abs=1e-12)
        neg = y != k
        fpr = np.average(p[neg] == k, weights=w[neg])
        assert score(gf.false_positive_rate(k), y, p, sample_weight=w) == pytest.approx(fpr, abs=1e-12)
        assert score(gf.true_negative_rate(k), y, p, sample_weight=w) == pytest.approx(1 - fpr, abs=1e-12)
        cov = np.average(p == k, weights=w)
        assert score(gf.coverage(k), y, p, sample_weight=w) == pytest.approx(cov, abs=1e-12)
        assert score(gf.positive_prediction_rate(k), y, p, sample_weight=w) == pytest.approx(cov, abs=1e-12)


def test_group_restricted_rates_by_hand():
    y, p, g, w = labels(5, n_classes=2)
    s = pd.Series(g, name="grp")
    for a in ["a", "b", "c"]:
        m = g == a
        tpr = np.average(p[m & (y == 1)] == 1, weights=w[m & (y == 1)])
        sel = np.average(p[m] == 1, weights=w[m])
        err = np.average(p[m] != y[m], weights=w[m])
        prec = np.average(y[m & (p == 1)] == 1, weights=w[m & (p == 1)])
        kw = dict(sensitive_features=s, sample_weight=w)
        assert score(gf.true_positive_rate(group=a), y, p, **kw) == pytest.approx(tpr, abs=1e-12)
        assert score(gf.true_positive_rate(group=("grp", a)), y, p, **kw) == pytest.approx(tpr, abs=1e-12)
        assert score(gf.selection_rate(group={"grp": a}), y, p, **kw) == pytest.approx(sel, abs=1e-12)
        assert score(gf.error_rate(group=a), y, p, **kw) == pytest.approx(err, abs=1e-12)
        assert score(gf.precision(group=a), y, p, **kw) == pytest.approx(prec, abs=1e-12)
    # a list of values is the union of the groups
    m = np.isin(g, ["a", "c"])
    sel = np.average(p[m] == 1, weights=w[m])
    assert score(gf.selection_rate(group={"grp": ["a", "c"]}), y, p, sensitive_features=s,
                 sample_weight=w) == pytest.approx(sel, abs=1e-12)


# ------------------------------------------------------------------ against fairlearn
FAIR = [
    ("demographic_parity_difference", flm.demographic_parity_difference),
    ("demographic_parity_ratio", flm.demographic_parity_ratio),
    ("equal_opportunity_difference", flm.equal_opportunity_difference),
    ("equal_opportunity_ratio", flm.equal_opportunity_ratio),
    ("equalized_odds_difference", flm.equalized_odds_difference),
    ("equalized_odds_ratio", flm.equalized_odds_ratio),
]


@pytest.mark.parametrize("name,ref", FAIR, ids=[f[0] for f in FAIR])
@pytest.mark.parametrize("method", ["between_groups", "to_overall"])
@pytest.mark.parametrize("n_groups", [2, 3, 4])
@pytest.mark.parametrize("weighted", [False, True])
def test_fairness_against_fairlearn(name, ref, method, n_groups, weighted):
    for seed in SEEDS:
        y, p, g, w = labels(seed, n=400, n_classes=2, n_groups=n_groups, weighted=weighted)
        expected = ref(y, p, sensitive_features=g, method=method, sample_weight=w)
        # the functional wrappers
        got = getattr(gm, name)(y, p, sensitive_features=g, method=method, sample_weight=w)
        assert got == pytest.approx(expected, abs=1e-12)
        # the goal objects, with a named column
        goal = getattr(gf, name)("grp", method=method)
        got = score(goal, y, p, sensitive_features=pd.DataFrame({"grp": g}), sample_weight=w)
        assert got == pytest.approx(expected, abs=1e-12)


def test_fairness_string_labels_and_positive_class():
    # labels "no"/"yes": no default positive class (scikit-learn's convention); pos_label names it
    y, p, g, w = labels(3, n=400, n_classes=2, n_groups=3)
    ys, ps = np.array(["no", "yes"])[y], np.array(["no", "yes"])[p]
    with pytest.raises(ValueError, match="pos_label"):
        gm.demographic_parity_difference(ys, ps, sensitive_features=g, sample_weight=w)
    exp = flm.demographic_parity_difference(y, p, sensitive_features=g, sample_weight=w)
    assert gm.demographic_parity_difference(ys, ps, sensitive_features=g, sample_weight=w,
                                            pos_label="yes") == pytest.approx(exp)
    exp = flm.equal_opportunity_ratio(y, p, sensitive_features=g, method="to_overall")
    assert gm.equal_opportunity_ratio(ys, ps, sensitive_features=g, method="to_overall",
                                      pos_label="yes") == pytest.approx(exp)
    # "no" as the positive class is the same as flipping 0/1
    exp = flm.equal_opportunity_difference(1 - y, 1 - p, sensitive_features=g)
    assert gm.equal_opportunity_difference(ys, ps, sensitive_features=g, pos_label="no") == pytest.approx(exp)


def _rates_by_group(y, p, g, w, ev, given):
    out = {}
    for a in np.unique(g):
        m = (g == a) & given
        out[a] = np.average(ev[m], weights=w[m])
    allr = np.average(ev[given], weights=w[given])
    return out, allr


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("method", ["between_groups", "to_overall"])
def test_multiclass_fairness_by_hand(seed, method):
    """Multiclass: every class's rate family (fairlearn has no multiclass version)."""
    n_classes = 3
    y, p, g, w = labels(seed, n=600, n_classes=n_classes, n_groups=3)

    def disparity(fams):
        diffs, ratios = [], []
        for ev, given in fams:
            by, allr = _rates_by_group(y, p, g, w, ev, given)
            vals = np.array(list(by.values()))
            if method == "between_groups":
                diffs.append(vals.max() - vals.min())
                ratios.append(vals.min() / vals.max())
            else:
                diffs.append(np.abs(vals - allr).max())
                ratios.append(min(min(v / allr, allr / v) for v in vals))
        return max(diffs), min(ratios)

    ones = np.ones(len(y), dtype=bool)
    dp = disparity([(p == k, ones) for k in range(n_classes)])
    eo = disparity([(p == k, y == k) for k in range(n_classes)])
    eodds = disparity([(p == j, y == i) for i in range(n_classes) for j in range(n_classes)])
    kw = dict(sensitive_features=g, sample_weight=w)
    assert score(gf.demographic_parity_difference(method=method), y, p, **kw) == pytest.approx(dp[0], abs=1e-12)
    assert score(gf.demographic_parity_ratio(method=method), y, p, **kw) == pytest.approx(dp[1], abs=1e-12)
    assert score(gf.equal_opportunity_difference(method=method), y, p, **kw) == pytest.approx(eo[0], abs=1e-12)
    assert score(gf.equal_opportunity_ratio(method=method), y, p, **kw) == pytest.approx(eo[1], abs=1e-12)
    assert score(gf.equalized_odds_difference(method=method), y, p, **kw) == pytest.approx(eodds[0], abs=1e-12)
    assert score(gf.equalized_odds_ratio(method=method), y, p, **kw) == pytest.approx(eodds[1], abs=1e-12)
    # label= restricts the family to one class
    dp1 = disparity([(p == 1, ones)])
    assert score(gf.demographic_parity_difference(label=1, method=method), y, p, **kw) == pytest.approx(dp1[0], abs=1e-12)


# ------------------------------------------------------------------ recall-based metrics
def recalls(y, p, w, n_classes):
    return np.array([np.average(p[y == k] == k, weights=w[y == k]) for k in range(n_classes)])


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n_classes", [2, 3, 5])
def test_recall_metrics_by_formula(seed, n_classes):
    y, p, _, w = labels(seed, n_classes=n_classes)
    r = recalls(y, p, w, n_classes)
    assert score("hmean", y, p, sample_weight=w) == pytest.approx(1 - n_classes / np.sum(1 / r), abs=1e-12)
    assert score("gmean", y, p, sample_weight=w) == pytest.approx(1 - np.prod(r) ** (1 / n_classes), abs=1e-12)
    assert score("qmean", y, p, sample_weight=w) == pytest.approx(np.sqrt(np.mean((1 - r) ** 2)), abs=1e-12)
    assert score("minmax_recall", y, p, sample_weight=w) == pytest.approx(np.max(1 - r), abs=1e-12)
    # and with scipy's harmonic / geometric means of the recalls
    from scipy.stats import gmean, hmean
    assert score("hmean", y, p, sample_weight=w) == pytest.approx(1 - hmean(r), abs=1e-12)
    assert score("gmean", y, p, sample_weight=w) == pytest.approx(1 - gmean(r), abs=1e-12)


def test_hmean_with_zero_recall_is_one():
    y = np.array([0, 0, 1, 1, 2, 2])
    p = np.array([0, 0, 1, 1, 0, 1])
    assert score("hmean", y, p) == 1.0
    assert score("gmean", y, p) == pytest.approx(1.0)
    assert score("minmax_recall", y, p) == pytest.approx(1.0)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n_classes", [2, 4])
def test_kl_quantification_and_coverage_deviation_by_hand(seed, n_classes):
    y, p, _, w = labels(seed, n_classes=n_classes)
    pi = np.bincount(y, weights=w, minlength=n_classes) / w.sum()
    q = np.bincount(p, weights=w, minlength=n_classes) / w.sum()
    assert score("kl_quantification", y, p, sample_weight=w) == pytest.approx(np.sum(pi * np.log(pi / q)), abs=1e-12)
    assert score(gf.coverage_deviation(), y, p, sample_weight=w) == pytest.approx(np.abs(q - pi).max(), abs=1e-12)
    tau = np.full(n_classes, 1 / n_classes)
    assert score(gf.coverage_deviation(tau), y, p, sample_weight=w) == pytest.approx(np.abs(q - tau).max(), abs=1e-12)


def test_kl_quantification_infinite_when_class_never_predicted():
    y = np.array([0, 1, 2, 0, 1, 2])
    p = np.array([0, 1, 1, 0, 1, 0])
    assert score("kl_quantification", y, p) == np.inf


def test_cost_sensitive_loss_by_hand():
    y, p, _, w = labels(4, n_classes=3)
    L = np.arange(9.0).reshape(3, 3) / 10
    expected = np.average(L[y, p], weights=w)
    assert score(gf.cost_sensitive_loss(L), y, p, sample_weight=w) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
def test_churn_rate_against_disagreement(seed):
    rng = np.random.default_rng(seed)
    n = 250
    y = rng.integers(0, 3, n)
    p = rng.integers(0, 3, n)
    base = np.where(rng.random(n) < 0.6, p, rng.integers(0, 3, n))
    g = rng.choice(["u", "v"], n)
    w = rng.uniform(0.5, 2, n)
    sf = pd.DataFrame({"baseline": base, "grp": g})
    assert score(gf.churn_rate(), y, p, sensitive_features=sf) == pytest.approx(np.mean(p != base), abs=1e-12)
    assert score(gf.churn_rate("baseline"), y, p, sensitive_features=sf, sample_weight=w) == pytest.approx(
        np.average(p != base, weights=w), abs=1e-12)
    m = g == "u"
    assert score(gf.churn_rate(group="u"), y, p, sensitive_features=sf) == pytest.approx(
        np.mean(p[m] != base[m]), abs=1e-12)
    # baseline as the only column, with its default name
    assert score(gf.churn_rate(), y, p, sensitive_features=pd.Series(base, name="baseline")) == pytest.approx(
        np.mean(p != base), abs=1e-12)


# ------------------------------------------------------------------ expected confusion matrices
def _mixture(seed, n=400, n_classes=3, n_cells=2, n_members=4):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(n_classes), size=n)
    y = np.array([rng.choice(n_classes, p=row) for row in P])
    g = rng.choice(["F", "M", "X"][:n_cells], size=n)
    enc = CellEncoder()
    cells = enc.fit_transform(pd.Series(g, name="sex"))
    members = [PluginRule(rng.normal(size=(enc.n_cells, n_classes, n_classes))) for _ in range(n_members)]
    weights = rng.dirichlet(np.ones(n_members))
    clf = RandomizedClassifier(members, weights, np.arange(n_classes), enc,
                               ProbabilityModel(None, np.arange(n_classes)))
    return clf, P, y, g, cells, enc


@pytest.mark.parametrize("seed", [0, 1])
def test_expected_confusion_is_weighted_sum_of_members_and_sample_average(seed):
    clf, P, y, g, cells, enc = _mixture(seed)
    n_classes = 3
    sw = np.random.default_rng(seed + 10).uniform(0.5, 2, len(y))
    member_C = [confusion_tensor(y, m.predict_codes(P, P, cells), cells, n_classes, enc.n_cells, sw)
                for m in clf.members]
    expected = np.tensordot(clf.weights, np.array(member_C), axes=1)
    got = clf.expected_confusion_matrix(P, y, sensitive_features=g, sample_weight=sw, per_group=True)
    np.testing.assert_allclose(got, expected, atol=1e-12)
    np.testing.assert_allclose(clf.expected_confusion_matrix(P, y, sensitive_features=g, sample_weight=sw),
                               expected.sum(axis=0), atol=1e-12)
    # the functional form on the predicted distribution
    dist = clf.predict_proba(P, sensitive_features=g)
    np.testing.assert_allclose(expected_confusion_matrix(y, dist, sample_weight=sw), expected.sum(axis=0),
                               atol=1e-12)
    per_group, groups = expected_confusion_matrix(y, dist, sensitive_features=pd.Series(g, name="sex"),
                                                  sample_weight=sw)
    np.testing.assert_allclose(per_group, expected, atol=1e-12)
    assert list(groups["sex"]) == ["F", "M"]
    # Monte Carlo: the average confusion matrix of sampled predictions
    R = 300
    acc = np.zeros((n_classes, n_classes))
    for r in range(R):
        pred = clf.predict(P, sensitive_features=g, random_state=r)
        acc += confusion_tensor(y, pred, None, n_classes, 1, sw)[0]
    # each entry is an average over 400 * 300 Bernoulli draws: sd < 0.5 / sqrt(120000) ~ 1.5e-3
    np.testing.assert_allclose(acc / R, expected.sum(axis=0), atol=6e-3)


def test_score_on_distribution_equals_expected_value():
    clf, P, y, g, cells, enc = _mixture(3)
    dist = clf.predict_proba(P, sensitive_features=g)
    member_preds = clf.member_predictions(P, sensitive_features=g)
    sf = pd.Series(g, name="sex")
    linear = ["error", "balanced_error", gf.recall(2), gf.selection_rate(0, group="F"),
              gf.true_positive_rate(1, group="M") - gf.true_positive_rate(1)]
    for goal in linear:
        # linear goals: value at the expected matrix = weighted mean of the members' values
        vals = [score(goal, y, mp, sensitive_features=sf, classes=[0, 1, 2]) for mp in member_preds]
        assert score(goal, y, dist, sensitive_features=sf, classes=[0, 1, 2]) == pytest.approx(
            np.dot(clf.weights, vals), abs=1e-12)
    # a convex goal (max of linear pieces) is at most the weighted mean (Jensen), and not equal here
    goal = gf.demographic_parity_difference(label=0)
    vals = [score(goal, y, mp, sensitive_features=sf, classes=[0, 1, 2]) for mp in member_preds]
    assert score(goal, y, dist, sensitive_features=sf, classes=[0, 1, 2]) < np.dot(clf.weights, vals) - 1e-6


# ------------------------------------------------------------------ gradients
def _space(seed, n_classes, n_groups):
    rng = np.random.default_rng(seed)
    n = 500
    y = rng.integers(0, n_classes, n)
    g = rng.choice(["F", "M", "X"][:n_groups], n)
    base = rng.integers(0, n_classes, n)
    sf = pd.DataFrame({"sex": g, "baseline": base})
    enc = CellEncoder()
    cells = enc.fit_transform(sf)
    space = ConfusionSpace.from_codes(y, cells, np.arange(n_classes), enc.cells_,
                                      rng.uniform(0.5, 2.0, n))
    # an interior tensor with the space's row masses: rows = mass * (point of the open simplex)
    R = rng.dirichlet(np.full(n_classes, 3.0), size=space.shape[:2])
    C = space.row_mass[:, :, None] * R
    return space, C, rng


def _goals(n_classes):
    goals = [
        gf.error(), gf.balanced_error(), gf.hmean(), gf.gmean(), gf.qmean(), gf.minmax_recall(),
        gf.macro_f1(), gf.micro_f1(), gf.kl_quantification(), gf.coverage_deviation(),
        gf.fbeta(2.0, 1), gf.f1(0), gf.precision(1), gf.precision(0, group={"sex": "F"}),
        gf.true_positive_rate(1, group={"sex": "M"}) - gf.true_positive_rate(1),
        gf.churn_rate(), gf.cost_sensitive_loss(np.arange(n_classes**2).reshape(n_classes, n_classes) / 7),
    ]
    for kind in ["demographic_parity", "equal_opportunity", "equalized_odds"]:
        for form in ["difference", "ratio"]:
            for method in ["between_groups", "to_overall"]:
                goals.append(getattr(gf, f"{kind}_{form}")("sex", label=1, method=method))
    return goals


def _ref_recall_metric(name, C):
    """Independent formulas; pi recomputed from the row sums of C."""
    M = C.sum(axis=0)
    r = np.diag(M) / M.sum(axis=1)
    n = len(r)
    return {"hmean": 1 - n / np.sum(1 / r), "gmean": 1 - np.prod(r) ** (1 / n),
            "qmean": np.sqrt(np.mean((1 - r) ** 2)), "minmax_recall": np.max(1 - r),
            "balanced_error": 1 - r.mean(), "error": 1 - np.trace(M)}[name]


@pytest.mark.parametrize("n_classes,n_groups", [(2, 2), (3, 3)])
def test_gradients_against_finite_differences(n_classes, n_groups):
    """Gradients vs central differences.

    The metrics treat the priors pi (row masses of the (cell, true class) rows) as constants
    of the data: a bound function is defined on all tensors, with pi frozen at bind time, so
    (1) its partial derivatives in every entry must match its gradient; and (2) on the
    achievable set the row sums are fixed, so the directions that matter are those that keep
    every row sum fixed. Along such directions (rows summing to zero) pi does not move, so the
    directional derivative of an *independent* formula that recomputes pi from the row sums of
    C must match <grad, D> too. (2) is what the oracle-based methods rely on; (1) additionally
    checks the extension off the achievable set. Non-smooth metrics (max/min of pieces) are
    evaluated at random interior points, where the active piece is unique with probability 1
    and a step of 1e-7 does not switch it.
    """
    h = 1e-6
    for seed in range(3):
        space, C, rng = _space(seed, n_classes, n_groups)
        for goal in _goals(n_classes):
            f = goal.bind(space)
            G = f.gradient(C)
            assert G.shape == space.shape
            # (1) partials -- unless two pieces of a max tie structurally (binary coverage
            # deviation: |cov_0 - pi_0| = |cov_1 - pi_1| whenever C sums to 1, a kink in
            # directions that change the total mass, not along the achievable set)
            tied = False
            if hasattr(f, "piece_values"):
                top = np.sort(f.piece_values(C))[-2:]
                tied = top[1] - top[0] < 1e-9
            fd = np.zeros(space.size)
            for e in range(space.size):
                E = np.zeros(space.size)
                E[e] = h
                E = E.reshape(space.shape)
                fd[e] = (f.value(C + E) - f.value(C - E)) / (2 * h)
            scale = max(1.0, np.abs(G).max())
            if not tied:
                np.testing.assert_allclose(fd, G.ravel(), atol=2e-5 * scale, err_msg=f"{goal.name} partials")
            else:
                assert goal.name == "coverage_deviation" and n_classes == 2
            # (2) directional derivatives along row-sum-preserving directions
            for _ in range(3):
                D = rng.normal(size=space.shape)
                D -= D.mean(axis=2, keepdims=True)
                D *= 1e-1 * space.row_mass[:, :, None]
                dd = (f.value(C + h * D) - f.value(C - h * D)) / (2 * h)
                assert dd == pytest.approx(np.vdot(G, D), abs=2e-5 * scale * np.abs(D).sum() + 1e-9), goal.name
                if goal.name in ("hmean", "gmean", "qmean", "minmax_recall", "balanced_error", "error"):
                    ref = (_ref_recall_metric(goal.name, C + h * D) - _ref_recall_metric(goal.name, C - h * D)) / (2 * h)
                    assert ref == pytest.approx(np.vdot(G, D), rel=1e-5, abs=1e-8), goal.name


def test_recall_metric_values_at_interior_tensor_match_formulas():
    space, C, _ = _space(0, 3, 3)
    for name in ("hmean", "gmean", "qmean", "minmax_recall", "balanced_error", "error"):
        assert gf.as_objective(name).bind(space).value(C) == pytest.approx(_ref_recall_metric(name, C), abs=1e-12)
