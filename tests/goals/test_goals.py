"""Goal algebra: compiled constraint rows against directly computed values, error messages,
and parse_constraint round trips."""
import itertools

import numpy as np
import pandas as pd
import pytest

import goalfit as gf
from goalfit.confusion import CellEncoder, ConfusionSpace, confusion_tensor
from goalfit.goals.parse import GoalSyntaxError

pytestmark = pytest.mark.quick  # in the quick subset (README: python -m pytest -m quick)


def data(seed=0, n=400, n_classes=2, groups=("F", "M"), weighted=True):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    p = np.where(rng.random(n) < 0.5, y, rng.integers(0, n_classes, n))
    g = rng.choice(np.array(groups), n)
    w = rng.uniform(0.3, 2.0, n) if weighted else np.ones(n)
    enc = CellEncoder()
    cells = enc.fit_transform(pd.Series(g, name="sex"))
    space = ConfusionSpace.from_codes(y, cells, np.arange(n_classes), enc.cells_, w)
    C = confusion_tensor(y, p, cells, n_classes, enc.n_cells, w)
    return y, p, g, w, space, C


def avg(x, w, m):
    return np.average(x[m], weights=w[m])


def rows(constraint, space):
    cp = gf.Problem("error", [constraint]).compile(space)
    return cp, cp.A, cp.b


@pytest.mark.parametrize("seed", range(4))
def test_tpr_gap_constraint_row(seed):
    y, p, g, w, space, C = data(seed)
    c = gf.true_positive_rate(group="F") >= gf.true_positive_rate() - 0.05
    assert (c.sense, c.bound) == (">=", -0.05)
    cp, A, b = rows(c, space)
    assert A.shape == (1, space.size)
    tpr_f = avg(p == 1, w, (g == "F") & (y == 1))
    tpr = avg(p == 1, w, y == 1)
    # A C - b <= 0  <=>  tpr_F - tpr + 0.05 >= 0; the row is exactly its negation
    assert (A @ C.ravel() - b)[0] == pytest.approx(tpr - 0.05 - tpr_f, abs=1e-12)
    assert cp.constraints[0].value(C) == pytest.approx(tpr_f - tpr, abs=1e-12)
    assert cp.max_violation(C) == pytest.approx(max(0.0, tpr - 0.05 - tpr_f), abs=1e-12)
    np.testing.assert_allclose(cp.row_violations(C), A @ C.ravel() - b)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("tau", [0.3, 0.5, 0.8])
def test_precision_linearization(seed, tau):
    y, p, g, w, space, C = data(seed)
    cp, A, b = rows(gf.precision(1) >= tau, space)
    prec = avg(y == 1, w, p == 1)
    sel = avg(p == 1, w, np.ones(len(y), bool))
    row = (A @ C.ravel() - b)[0]
    # C_11 - tau * sum_i C_i1 >= 0 multiplied out: row = (tau - precision) * P(h = 1)
    assert row == pytest.approx((tau - prec) * sel, abs=1e-12)
    assert np.sign(row) == -np.sign(prec - tau)
    # a group's precision: the denominator is the group's predicted positives
    cp, A, b = rows(gf.precision(1, group="M") >= tau, space)
    m = g == "M"
    prec_m = avg(y == 1, w, m & (p == 1))
    mass = w[m & (p == 1)].sum() / w.sum()
    assert (A @ C.ravel() - b)[0] == pytest.approx((tau - prec_m) * mass, abs=1e-12)
    # <= works too: precision <= tau  <=>  (precision - tau) * P(h=1) <= 0
    cp, A, b = rows(gf.precision(1) <= tau, space)
    assert (A @ C.ravel() - b)[0] == pytest.approx((prec - tau) * sel, abs=1e-12)


def test_precision_with_offset_and_scale():
    """Equivalent ways of writing precision >= 0.7 give rows proportional to (0.7 - prec) P(h=1)."""
    y, p, g, w, space, C = data(1)
    prec = avg(y == 1, w, p == 1)
    sel = avg(p == 1, w, np.ones(len(y), bool))
    for c, factor in [(gf.precision(1) - 0.1 >= 0.6, 1.0), (0.5 * gf.precision(1) >= 0.35, 0.5),
                      (-gf.precision(1) <= -0.7, 1.0)]:
        cp, A, b = rows(c, space)
        assert cp.constraints[0].function.kind == "ratio"
        assert (A @ C.ravel() - b)[0] == pytest.approx(factor * (0.7 - prec) * sel, abs=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_selection_rate_ratio_goal(seed):
    y, p, g, w, space, C = data(seed)
    c = gf.positive_prediction_rate(group="F") >= 0.8 * gf.positive_prediction_rate(group="M")
    cp, A, b = rows(c, space)
    assert A.shape[0] == 1
    ones = np.ones(len(y), bool)
    sf, sm = avg(p == 1, w, g == "F"), avg(p == 1, w, g == "M")
    assert (A @ C.ravel() - b)[0] == pytest.approx(0.8 * sm - sf, abs=1e-12)
    assert cp.constraints[0].value(C) == pytest.approx(sf - 0.8 * sm, abs=1e-12)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("method", ["between_groups", "to_overall"])
@pytest.mark.parametrize("groups", [("F", "M"), ("F", "M", "X")])
def test_demographic_parity_ratio_rows(seed, method, groups):
    y, p, g, w, space, C = data(seed, groups=groups)
    cp, A, b = rows(gf.demographic_parity_ratio("sex", method=method) >= 0.8, space)
    ones = np.ones(len(y), bool)
    sel = {a: avg(p == 1, w, g == a) for a in groups}
    overall = avg(p == 1, w, ones)
    if method == "between_groups":
        expected = [0.8 * sel[b_] - sel[a] for a, b_ in itertools.permutations(groups, 2)]
    else:
        expected = []
        for a in groups:
            expected += [0.8 * overall - sel[a], 0.8 * sel[a] - overall]
    np.testing.assert_allclose(A @ C.ravel() - b, expected, atol=1e-12)
    # every row met  <=>  the ratio value is >= 0.8
    ratio = cp.constraints[0].value(C)
    assert ((A @ C.ravel() - b).max() <= 0) == (ratio >= 0.8)
    assert cp.max_violation(C) == pytest.approx(max(0.0, 0.8 - ratio), abs=1e-12)


@pytest.mark.parametrize("method", ["between_groups", "to_overall"])
def test_difference_disparity_rows(method):
    y, p, g, w, space, C = data(2, groups=("F", "M", "X"))
    groups = ["F", "M", "X"]
    ones = np.ones(len(y), bool)
    for goal, ev, given in [
        (gf.demographic_parity_difference("sex", method=method), p == 1, ones),
        (gf.equal_opportunity_difference("sex", method=method), p == 1, y == 1),
    ]:
        cp, A, b = rows(goal <= 0.07, space)
        r = {a: avg(ev, w, (g == a) & given) for a in groups}
        overall = avg(ev, w, given)
        if method == "between_groups":
            expected = [r[a] - r[b_] - 0.07 for a, b_ in itertools.permutations(groups, 2)]
        else:
            expected = []
            for a in groups:
                expected += [r[a] - overall - 0.07, overall - r[a] - 0.07]
        np.testing.assert_allclose(A @ C.ravel() - b, expected, atol=1e-12)
    # equalized odds: the TPR and the FPR families
    cp, A, b = rows(gf.equalized_odds_difference("sex", method=method) <= 0.07, space)
    assert A.shape[0] == 2 * (6 if method == "between_groups" else 6)


def test_multiclass_coverage_and_rows_count():
    y, p, g, w, space, C = data(3, n_classes=3)
    cp, A, b = rows(gf.coverage_deviation() <= 0.05, space)
    assert A.shape == (6, space.size)
    pi = np.bincount(y, weights=w, minlength=3) / w.sum()
    q = np.bincount(p, weights=w, minlength=3) / w.sum()
    expected = np.ravel([[q[k] - pi[k] - 0.05, pi[k] - q[k] - 0.05] for k in range(3)])
    np.testing.assert_allclose(A @ C.ravel() - b, expected, atol=1e-12)
    # multiclass demographic parity: one family per class, 2 ordered pairs each
    cp, A, b = rows(gf.demographic_parity_difference() <= 0.1, space)
    assert A.shape[0] == 3 * 2


def test_several_constraints_stack_rows_in_order():
    y, p, g, w, space, C = data(0)
    cons = [gf.precision(1) >= 0.6, gf.demographic_parity_difference() <= 0.1,
            gf.kl_quantification() <= 0.05, gf.coverage(1) <= 0.7]
    cp = gf.Problem("hmean", cons).compile(space)
    assert [c.rows for c in cp.constraints] == [slice(0, 1), slice(1, 3), None, slice(3, 4)]
    assert cp.n_rows == 4 and len(cp.nonlinear) == 1
    sel = avg(p == 1, w, np.ones(len(y), bool))
    assert (cp.row_violations(C))[3] == pytest.approx(sel - 0.7, abs=1e-12)
    vals = cp.constraint_values(C)
    assert vals[3] == pytest.approx(sel, abs=1e-12)
    assert vals[0] == pytest.approx(avg(y == 1, w, p == 1), abs=1e-12)


# ------------------------------------------------------------------ errors
def _space3():
    return data(0, n_classes=3)[4]


@pytest.mark.parametrize("goal,match", [
    (gf.true_positive_rate(1, group="Z") >= 0.1, r"'Z'.*empty group"),
    (gf.true_positive_rate(1, group={"race": "B"}) >= 0.1, r"unknown sensitive feature 'race'"),
    (gf.selection_rate(1, group={"sex": ["Q"]}) >= 0.1, r"sex='Q'.*empty group"),
    (gf.demographic_parity_difference("race") <= 0.1, r"unknown sensitive feature 'race'"),
    (gf.precision(7) >= 0.5, r"label 7 is not one of the classes \[0, 1, 2\]"),
    (gf.fbeta(2.0, "cat") >= 0.5, r"label 'cat' is not one of the classes"),
    (gf.true_positive_rate() >= 0.1, r"3 classes: name the class"),
    (gf.precision() >= 0.1, r"3 classes: name the class"),
    (gf.f1() >= 0.5, r"3 classes: name the class"),
    (gf.churn_rate("baseline") <= 0.1, r"unknown sensitive feature 'baseline'"),
    (gf.demographic_parity_ratio() <= 0.9, r"neither polyhedral"),
    (gf.precision(1, group="F") - gf.precision(1, group="M") <= 0.1, r"neither polyhedral"),
])
def test_compile_errors_name_the_problem(goal, match):
    with pytest.raises(ValueError, match=match):
        gf.Problem("error", [goal]).compile(_space3())


def test_empty_slice_and_single_group():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 100)
    g = np.where(y == 1, "M", rng.choice(["F", "M"], 100))  # no positive example in F
    enc = CellEncoder()
    cells = enc.fit_transform(pd.Series(g, name="sex"))
    space = ConfusionSpace.from_codes(y, cells, np.arange(2), enc.cells_)
    # the message names the group and what it lacks
    with pytest.raises(ValueError, match=r"group 'F' has no positive examples \(true class 1\)"):
        gf.Problem("error", [gf.true_positive_rate(group="F") >= 0.5]).compile(space)
    with pytest.raises(ValueError, match="group sex='F' has no positive examples"):
        gf.Problem("error", [gf.equal_opportunity_difference() <= 0.1]).compile(space)
    # zero weight on a group is an empty slice too
    w = np.where(g == "F", 0.0, 1.0)
    space = ConfusionSpace.from_codes(y, cells, np.arange(2), enc.cells_, w)
    with pytest.raises(ValueError, match="group 'F' has no examples, so this rate is undefined"):
        gf.Problem("error", [gf.selection_rate(group="F") >= 0.2]).compile(space)
    # a single group has no disparity
    one = CellEncoder()
    cells1 = one.fit_transform(pd.Series(np.full(100, "F"), name="sex"))
    space = ConfusionSpace.from_codes(y, cells1, np.arange(2), one.cells_)
    with pytest.raises(ValueError, match="single group"):
        gf.Problem("error", [gf.demographic_parity_difference() <= 0.1]).compile(space)
    # no sensitive feature at all
    none = CellEncoder()
    cells0 = none.fit_transform(None, 100)
    space = ConfusionSpace.from_codes(y, cells0, np.arange(2), none.cells_)
    with pytest.raises(ValueError, match="no sensitive features: pass sensitive_features"):
        gf.Problem("error", [gf.demographic_parity_difference() <= 0.1]).compile(space)


@pytest.mark.parametrize("make,match", [
    (lambda: gf.true_positive_rate() <= 1.5, "bound out of range"),
    (lambda: gf.true_positive_rate() >= 1.01, "bound out of range"),
    (lambda: gf.true_positive_rate() >= -0.5, "bound out of range"),
    (lambda: gf.demographic_parity_difference() <= -0.1, "bound out of range"),
    (lambda: gf.demographic_parity_ratio() >= 1.2, "bound out of range"),
    (lambda: gf.precision(1) >= 1.2, "bound out of range"),
    (lambda: gf.true_positive_rate(group="F") - gf.true_positive_rate() <= -1.5, "bound out of range"),
    (lambda: gf.error_rate() <= float("nan"), "must be finite"),
    (lambda: gf.fbeta(0.0), "beta must be positive"),
    (lambda: gf.cost_sensitive_loss(np.ones((2, 3))), "must be square"),
    (lambda: gf.Problem("nope"), "unknown objective 'nope'"),
    (lambda: gf.GroupDisparity("parity"), "kind must be one of"),
    (lambda: gf.demographic_parity_difference(method="pairs"), "method must be"),
])
def test_construction_errors(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_bounds_at_the_edge_are_allowed():
    assert (gf.true_positive_rate() <= 1.0).bound == 1.0
    assert (gf.demographic_parity_difference() <= 0.0).bound == 0.0
    assert (gf.demographic_parity_ratio() >= 1.0).bound == 1.0


def test_type_errors():
    with pytest.raises(TypeError, match="only rate expressions"):
        gf.hmean() >= gf.error_rate()
    with pytest.raises(TypeError, match="constraints must be comparisons"):
        gf.Problem("error", [gf.error_rate()])
    with pytest.raises(TypeError, match="no truth value"):
        bool(gf.error_rate() <= 0.2)
    with pytest.raises(TypeError, match="cannot combine"):
        gf.error_rate() + gf.hmean()


@pytest.mark.parametrize("text,match", [
    ("foo() <= 0.1", "unknown metric 'foo'"),
    ("tpr <= 0.1", "unknown metric 'tpr'"),
    ("__import__('os') <= 1", "unknown metric '__import__'"),
    ("error_rate() < 0.1", "exactly one '<=' or '>='"),
    ("0.1 <= error_rate() <= 0.2", "exactly one"),
    ("error_rate()", "is not a constraint"),
    ("error_rate(foo=1) <= 0.2", "bad arguments"),
    ("error_rate( <= 0.2", "cannot parse goal"),
    ("error_rate().x <= 0.2", "unsupported syntax"),
    ("true_positive_rate() <= 1.5", "bound out of range"),
])
def test_parse_errors(text, match):
    with pytest.raises(ValueError, match=match):
        gf.parse_constraint(text)
    if "unknown metric" in match:
        with pytest.raises(GoalSyntaxError):
            gf.parse_constraint(text)


ROUND_TRIP = [
    gf.true_positive_rate(group="F") >= gf.true_positive_rate() - 0.05,
    gf.precision(1) >= 0.8,
    gf.positive_prediction_rate(group="F") >= 0.8 * gf.positive_prediction_rate(group="M"),
    gf.demographic_parity_ratio("sex") >= 0.8,
    gf.demographic_parity_difference("sex", method="to_overall") <= 0.1,
    gf.equal_opportunity_ratio("sex", label=1) >= 0.9,
    gf.equalized_odds_difference("sex") <= 0.05,
    gf.coverage(1, group={"sex": "F"}) <= 0.3,
    gf.true_positive_rate(group=("sex", "F")) >= 0.2,
    gf.rate(y=1, pred=0, given_y=[0, 1], group=("sex", "F")) <= 0.4,
    gf.rate(correct=False, group="M") <= 0.45,
    gf.false_positive_rate(1, group="M") <= 0.3,
    gf.error_rate() <= 0.3,
    gf.selection_rate() >= 0.2,
    gf.accuracy(group="F") >= 0.4,
    gf.fbeta(2.0, 1) >= 0.1,
    gf.f1(group="F") >= 0.1,
    gf.coverage_deviation([0.5, 0.5]) <= 0.1,
    gf.coverage_deviation(group="M") <= 0.1,
    gf.hmean() >= 0.4,
    gf.kl_quantification() <= 0.1,
    gf.error_rate(group="F") - gf.error_rate(group="M") <= 0.1,
]


@pytest.mark.parametrize("c", ROUND_TRIP, ids=[c.name for c in ROUND_TRIP])
def test_parse_constraint_round_trip(c):
    y, p, g, w, space, C = data(0)
    c2 = gf.parse_constraint(c.text)  # the name, or the call for a score ("F1 >= 0.1" is "f1 >= 0.1")
    assert c2.name == c.name
    assert (c2.sense, c2.bound) == (c.sense, c.bound)
    f1, f2 = c.expression.bind(space), c2.expression.bind(space)
    assert f2.value(C) == pytest.approx(f1.value(C), abs=1e-15)
    r1, r2 = f1.constraint_rows(c.sense, c.bound), f2.constraint_rows(c2.sense, c2.bound)
    assert (r1 is None) == (r2 is None)
    if r1 is not None:
        np.testing.assert_array_equal(r1[0], r2[0])
        np.testing.assert_array_equal(r1[1], r2[1])


def test_parse_number_on_the_left_and_objective():
    c = gf.parse_constraint("0.2 <= selection_rate()")
    assert (c.sense, c.bound) == (">=", 0.2)
    assert gf.parse_objective(" HMean ").name == "hmean"
    assert gf.parse_objective("minmax-recall").name == "minmax_recall"
    assert gf.parse_objective("error_rate(group='F')").name == "error_rate(group='F')"
    with pytest.raises(ValueError):
        gf.parse_objective("error_rate() <= 0.1")


def _space(y, n_classes=3):
    from goalfit.confusion import ConfusionSpace

    y = np.asarray(y)
    return ConfusionSpace.from_codes(y, np.zeros(len(y), dtype=int), np.arange(n_classes), pd.DataFrame(index=range(1)))


def test_micro_f1_resolved_fixes_the_most_frequent_class_and_keeps_its_name():
    train, held_out = _space([0, 1, 1, 2]), _space([0, 2, 2, 1])
    goal = gf.micro_f1()
    fixed = goal.resolved(train)
    assert fixed.default_class == 1 and type(fixed.default_class) is int and fixed.name == "micro_f1"
    # bound on other rows it still leaves out class 1 (unresolved it would leave out class 2 there)
    C = np.zeros((1, 3, 3))
    C[0, 0, 0], C[0, 2, 2], C[0, 1, 2] = 0.25, 0.25, 0.5  # rows: true class; columns: predicted
    from sklearn.metrics import f1_score

    yt, yp, w = [0, 2, 1], [0, 2, 2], [0.25, 0.25, 0.5]  # the rows of C
    ref1 = 1 - f1_score(yt, yp, labels=[0, 2], average="micro", sample_weight=w)  # 1 - 1 / 1.5
    ref2 = 1 - f1_score(yt, yp, labels=[0, 1], average="micro", sample_weight=w)  # 1 - 0.5 / 1
    assert fixed.bind(held_out).value(C) == pytest.approx(ref1, abs=1e-12)
    assert goal.bind(held_out).value(C) == pytest.approx(ref2, abs=1e-12)
    assert gf.micro_f1(default_class=0).resolved(train).default_class == 0


def test_problem_resolved_is_the_same_problem_when_no_goal_makes_a_choice():
    space = _space([0, 1, 1, 2])
    p = gf.Problem("gmean", [gf.coverage(1) <= 0.4])
    assert p.resolved(space) is p
    q = gf.Problem("error", [gf.micro_f1() >= 0.2])
    r = q.resolved(space)
    assert r is not q and r.constraints[0].expression.default_class == 1 and q.constraints[0].expression.default_class is None
    assert r.constraints[0].bound == q.constraints[0].bound and r.constraints[0].name == q.constraints[0].name
