"""A metric named by a score, compared with a number, bounds that score.

``gf.f1() >= 0.7`` asks F1 >= 0.7 and is enforced as the loss bound 1 - F1 <= 0.3;
``gf.f1() <= 0.3`` keeps its 0.1 meaning (the same constraint) for one release with a
FutureWarning. Names, the parser, evaluate(), the report and a fit all read in the score's units.
"""
from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import make_classification
from sklearn.metrics import f1_score, fbeta_score, recall_score

import goalfit as gf
from goalfit.confusion import ConfusionSpace, confusion_tensor
from goalfit.metrics import evaluate_problem

# builder, its score label, the score computed on labels by an independent reference
SCORE_BUILDERS = [
    (gf.f1, "F1", lambda y, p: f1_score(y, p)),
    (lambda: gf.fbeta(2.0, 1), "F-beta(beta=2, label=1)", lambda y, p: fbeta_score(y, p, beta=2.0)),
    (gf.gmean, "G-mean", lambda y, p: np.sqrt(recall_score(y, p) * recall_score(1 - y, 1 - p))),
    (gf.hmean, "H-mean", lambda y, p: 2 / (1 / recall_score(y, p) + 1 / recall_score(1 - y, 1 - p))),
    (gf.minmax_recall, "min recall", lambda y, p: min(recall_score(y, p), recall_score(1 - y, 1 - p))),
]

Y = np.array([0] * 10 + [1] * 10)
P = np.array([0] * 8 + [1] * 2 + [1] * 7 + [0] * 3)  # recalls 0.8 (class 0) and 0.7 (class 1)


def _space_and_tensor(y, p):
    space = ConfusionSpace.from_codes(y, np.zeros(len(y), dtype=int), np.array([0, 1]), pd.DataFrame(index=[0]))
    return space, confusion_tensor(y, p, np.zeros(len(y), dtype=int), 2, 1)


def _quiet():
    """A context in which any FutureWarning fails the test (the new spelling never warns)."""
    ctx = warnings.catch_warnings()
    ctx.__enter__()
    warnings.simplefilter("error", FutureWarning)
    return ctx


@pytest.mark.parametrize("build,label,ref", SCORE_BUILDERS, ids=[s[1] for s in SCORE_BUILDERS])
def test_ge_and_deprecated_le_compile_to_the_same_constraint(build, label, ref):
    ctx = _quiet()
    try:
        new = build() >= 0.7
        flipped = 0.7 <= build()  # Python reflects it to build() >= 0.7
    finally:
        ctx.__exit__(None, None, None)
    call = build().name if build().name.endswith(")") else build().name + "()"
    message = f"gf.{call} <= 0.3 bounds 1 - {label} ({label} >= 0.7); write gf.{call} >= 0.7"
    with pytest.warns(FutureWarning, match=re.escape(message)):
        old = build() <= 0.3
    for c in (new, flipped, old):
        assert c.name == repr(c) == f"{label} >= 0.7"
        assert (c.score_label, c.score_sense, c.score_bound) == (label, ">=", 0.7)
        # what the methods enforce: the loss bounded from above
        assert c.expression.name == build().name and c.sense == "<="
        assert c.bound == 1.0 - 0.7
    space, C = _space_and_tensor(Y, P)
    problems = [gf.Problem("error", [c]).compile(space) for c in (new, old)]
    for a, b in zip(problems[0].constraints, problems[1].constraints):
        assert (a.sense, a.bound) == (b.sense, b.bound)
        assert a.value(C) == b.value(C) == pytest.approx(1.0 - ref(Y, P), abs=1e-12)
        assert (a.rows is None) == (b.rows is None)
    if problems[0].A is not None:
        np.testing.assert_array_equal(problems[0].A, problems[1].A)
        np.testing.assert_array_equal(problems[0].b, problems[1].b)


@pytest.mark.parametrize("build,label,ref", SCORE_BUILDERS, ids=[s[1] for s in SCORE_BUILDERS])
def test_evaluate_reports_the_score_and_bound_as_written(build, label, ref):
    score = ref(Y, P)  # F1 = 0.7368..., G-mean = 0.7483..., H-mean = 0.7467..., min recall 0.7
    for bound in (0.6, 0.75):
        ctx = _quiet()
        try:
            ev = evaluate_problem(gf.Problem("error", [build() >= bound]), Y, P)
        finally:
            ctx.__exit__(None, None, None)
        e = ev["constraints"][0]
        assert e["name"] == f"{label} >= {bound:g}"
        assert (e["label"], e["sense"], e["bound"]) == (label, ">=", bound)
        assert e["value"] == pytest.approx(score, abs=1e-12)
        assert e["score"] == pytest.approx(score, abs=1e-12)
        assert e["loss"] == pytest.approx(1.0 - score, abs=1e-12)
        assert e["violation"] == pytest.approx(max(0.0, bound - score), abs=1e-12)
        assert e["met"] == (score >= bound)
    assert 0.6 < score < 0.75  # both sides of the bound were exercised


def test_evaluate_interval_is_on_the_score():
    ev = evaluate_problem(gf.Problem("error", [gf.f1() >= 0.7]), Y, P, confidence=0.9)
    e = ev["constraints"][0]
    lo, hi = e["interval"]
    llo, lhi = e["loss_interval"]
    assert lo == pytest.approx(1.0 - lhi) and hi == pytest.approx(1.0 - llo)
    assert lo < e["value"] < hi
    assert e["met_with_confidence"] == (lo >= 0.7)


def test_other_goals_compare_their_own_value_without_warning():
    ctx = _quiet()
    try:
        for c, name, sense, bound in [(gf.error() <= 0.2, "error <= 0.2", "<=", 0.2),
                                      (gf.qmean() <= 0.3, "qmean <= 0.3", "<=", 0.3),
                                      (gf.balanced_error() <= 0.25, "balanced_error <= 0.25", "<=", 0.25),
                                      (gf.true_positive_rate() >= 0.8, "true_positive_rate() >= 0.8", ">=", 0.8)]:
            assert (c.name, c.sense, c.bound, c.score_label) == (name, sense, bound, None)
            assert c.shown == (sense, bound)
    finally:
        ctx.__exit__(None, None, None)
    e = evaluate_problem(gf.Problem("error", [gf.error() <= 0.2]), Y, P)["constraints"][0]
    assert (e["value"], e["sense"], e["bound"], e["score"]) == (pytest.approx(0.25), "<=", 0.2, None)


def test_out_of_range_bounds_are_named_in_the_score():
    with pytest.raises(ValueError, match=r"F1 >= 1\.5 asks F1 >= 1\.5, but its values lie in \[0, 1\]"):
        _ = gf.f1() >= 1.5
    with pytest.raises(ValueError, match=r"G-mean >= -0\.1 bounds G-mean by -0\.1.*probably a typo"):
        _ = gf.gmean() >= -0.1
    with pytest.raises(TypeError, match=r"cannot compare f1 with error_rate\(\)"):
        _ = gf.f1() >= gf.error_rate()


@pytest.mark.parametrize("text,builder", [
    ("f1 >= 0.7", lambda: gf.f1() >= 0.7),
    ("f1() >= 0.7", lambda: gf.f1() >= 0.7),
    ("0.7 <= f1()", lambda: gf.f1() >= 0.7),
    ("gmean() >= 0.6", lambda: gf.gmean() >= 0.6),
    ("minmax_recall >= 0.55", lambda: gf.minmax_recall() >= 0.55),
    ("fbeta(2.0, 1) >= 0.5", lambda: gf.fbeta(2.0, 1) >= 0.5),
    ("f1(group='F') >= 0.6", lambda: gf.f1(group="F") >= 0.6),
    ("macro_f1_over_groups('sex') >= 0.5", lambda: gf.macro_f1_over_groups("sex") >= 0.5),
])
def test_parsed_text_equals_the_builder(text, builder):
    ctx = _quiet()
    try:
        parsed, built = gf.parse_constraint(text), builder()
    finally:
        ctx.__exit__(None, None, None)
    key = (lambda c: (c.name, c.expression.name, c.sense, c.bound, c.score_label, c.score_sense, c.score_bound))
    assert key(parsed) == key(built)
    assert key(gf.parse_constraint(built.text)) == key(built)  # the text form reads back


def test_parsed_deprecated_text_warns_in_its_own_spelling():
    with pytest.warns(FutureWarning, match=re.escape("f1() <= 0.3 bounds 1 - F1 (F1 >= 0.7); write f1() >= 0.7")):
        c = gf.parse_constraint("f1 <= 0.3")
    assert (c.name, c.sense, c.bound) == ("F1 >= 0.7", "<=", 1.0 - 0.7)


def test_cli_spec_reads_score_constraints_as_written():
    from goalfit.cli.spec import Spec

    ctx = _quiet()
    try:
        objective, constraints = Spec(dataset="adult", objective="f1",
                                      constraints=["gmean() >= 0.6", "f1 >= 0.7"]).goals()
    finally:
        ctx.__exit__(None, None, None)
    assert objective.name == "f1"
    assert [c.name for c in constraints] == ["G-mean >= 0.6", "F1 >= 0.7"]
    assert [(c.sense, round(c.bound, 12)) for c in constraints] == [("<=", 0.4), ("<=", 0.3)]


def test_problem_mixes_an_objective_with_a_score_constraint():
    problem = gf.Problem("f1", [gf.gmean() >= 0.6])
    assert repr(problem) == "minimize f1 (1 - F1)\n  s.t. G-mean >= 0.6"
    ev = evaluate_problem(problem, Y, P)
    assert ev["objective"]["score"] == pytest.approx(f1_score(Y, P))
    assert ev["objective"]["value"] == pytest.approx(1 - f1_score(Y, P))
    assert ev["constraints"][0]["value"] == pytest.approx(np.sqrt(0.8 * 0.7))
    assert ev["constraints"][0]["met"]


# ----------------------------------------------------------------------------- fits
@pytest.fixture(scope="module")
def binary():
    X, y = make_classification(600, 5, weights=[0.85], flip_y=0.1, random_state=0)
    base = gf.GoalClassifier(random_state=0).fit(X, y)
    return X, y, base


def _expected_gmean(model, X, y):
    """G-mean of the expected confusion, by hand: sqrt(TPR * TNR) of the predicted probabilities."""
    q = model.predict_proba(X)[:, 1]
    return float(np.sqrt(q[y == 1].mean() * (1 - q[y == 0]).mean()))


@pytest.mark.parametrize("g", [0.7, 0.85])
def test_gmean_constraint_fit_meets_the_bound(binary, g):
    X, y, base = binary
    base_g = _expected_gmean(base, X, y)  # about 0.83: 0.7 is slack, 0.85 binds
    clf = gf.GoalClassifier(objective="error", constraints=[gf.gmean() >= g], random_state=0).fit(X, y)
    got = _expected_gmean(clf, X, y)
    assert got >= g - 1e-7
    assert gf.gmean(y, clf.predict_proba(X)) == pytest.approx(got, abs=1e-12)
    e = clf.evaluate(X, y)["constraints"][0]
    assert (e["name"], e["label"], e["sense"], e["bound"]) == (f"G-mean >= {g:g}", "G-mean", ">=", g)
    assert e["value"] == pytest.approx(got, abs=1e-12) and e["met"]
    base_error = base.evaluate(X, y)["objective"]["value"]
    error = clf.evaluate(X, y)["objective"]["value"]
    if g < base_g:  # slack: the unconstrained rule already meets it
        assert error == pytest.approx(base_error, abs=2e-3)
    else:  # binds: G-mean pushed up to the bound, at a cost in error
        assert base_g < g <= got < g + 0.005
        assert error > base_error


def test_report_rows_read_in_the_score(binary):
    from rich.console import Console

    from goalfit.report.report import build_report

    X, y, _ = binary
    clf = gf.GoalClassifier(objective="error", constraints=[gf.gmean() >= 0.85], random_state=0).fit(X, y)
    report = build_report(clf, X, y)
    row = report.data["constraints"][0]
    assert (row["label"], row["sense"], row["bound"]) == ("G-mean", ">=", 0.85)
    assert row["train"] == pytest.approx(_expected_gmean(clf, X, y), abs=1e-12)
    console = Console(record=True, width=160)
    report.print(console)
    text = console.export_text()
    line = next(t for t in text.splitlines() if "G-mean" in t)
    assert ">= 0.85" in line and f"{row['train']:.4f}" in line, text
    assert "1 - G-mean" not in text


def test_frontier_sweeps_bounds_on_the_score(binary):
    X, y, _ = binary
    est = gf.GoalClassifier(objective="error", constraints=[gf.minmax_recall() >= 0.8], random_state=0)
    f = gf.frontier(est, X, y, bounds=[0.7, 0.75])  # bounds on the worst-class recall
    t = f.table
    assert list(t["bound"]) == [0.7, 0.75, 0.8]  # loose to tight for a >= bound
    assert f.chosen == 2
    # the swept column holds the worst-class recall, met at each bound (and binding: the
    # unconstrained rule's is below 0.7), and the error grows as the bound tightens
    assert (t["minmax_recall_train"] >= t["bound"] - 1e-7).all() and t["feasible_train"].all()
    assert t["minmax_recall_train"].to_numpy() == pytest.approx([0.7, 0.75, 0.8], abs=1e-3)
    assert np.all(np.diff(t["objective_train"].to_numpy()) > 0)
