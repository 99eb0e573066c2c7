"""One vocabulary for every method (issue 17, §3): goal expressions in FairSubdataClassifier and
AdaptiveSurrogateClassifier, the goals users could not state, readable report names."""
from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

import goalfit as gf
from goalfit import metrics as gm

rng = np.random.default_rng(3)
N = 600
X = rng.normal(size=(N, 3))
SEX = rng.choice(["F", "M"], N)
RACE = rng.choice(["a", "b", "c"], N)
Y = (X[:, 0] + 0.6 * (SEX == "M") + rng.logistic(size=N) > 0.3).astype(int)
P = (X[:, 0] + 0.3 * (RACE == "a") > 0).astype(int)


def _rates(y, p, mask):
    return p[mask & (y == 1)].mean(), p[mask & (y == 0)].mean()


@pytest.mark.parametrize("method", ["between_groups", "to_overall"])
def test_average_odds_difference_by_hand(method):
    tpr_all, fpr_all = _rates(Y, P, np.ones(N, bool))
    per = {g: _rates(Y, P, RACE == g) for g in "abc"}
    if method == "between_groups":
        exp = max(0.5 * (abs(per[a][0] - per[b][0]) + abs(per[a][1] - per[b][1])) for a in "abc" for b in "abc")
    else:
        exp = max(0.5 * (abs(t - tpr_all) + abs(f - fpr_all)) for t, f in per.values())
    assert gm.average_odds_difference(Y, P, sensitive_features=RACE, method=method) == pytest.approx(exp)
    assert exp > 0.02  # a real gap, not a vacuous check


def test_average_odds_constraint_is_met_and_parsed():
    c = gf.parse_constraint("average_odds_difference('race') <= 0.02")
    m = gf.GoalClassifier(constraints=[c]).fit(X, Y, sensitive_features=pd.DataFrame({"race": RACE}))
    ev = m.evaluate(X, Y, sensitive_features=pd.DataFrame({"race": RACE}))
    assert ev["constraints"][0]["value"] <= 0.02 + 1e-7
    with pytest.raises(ValueError, match="difference form only"):
        gf.goals.GroupDisparity("average_odds", form="ratio")


def test_coverage_equal_to_the_class_prior_within_eps():
    eps = 0.01
    goals = [gf.coverage(1) <= gf.prior(1) + eps, gf.coverage(1) >= gf.prior(1) - eps,
             gf.coverage(1, group="F") <= gf.prior(1, group="F") + eps,
             gf.coverage(1, group="F") >= gf.prior(1, group="F") - eps]
    m = gf.GoalClassifier(objective="error", constraints=goals).fit(X, Y, sensitive_features=SEX)
    dist = m.predict_proba(X, sensitive_features=SEX)[:, 1]
    assert abs(dist.mean() - Y.mean()) <= eps + 1e-7
    assert abs(dist[SEX == "F"].mean() - Y[SEX == "F"].mean()) <= eps + 1e-7
    # prior is a constant of the data: its value is the class share whatever the predictions
    assert gm.score(gf.prior(1, group="F"), Y, P, sensitive_features=SEX) == pytest.approx(Y[SEX == "F"].mean())
    assert gf.parse_constraint("coverage(1) <= prior(1) + 0.01").name == "coverage(1) <= prior(1) + 0.01"


def test_overlapping_groups_by_one_column_of_several():
    S = pd.DataFrame({"sex": SEX, "race": RACE})
    v = gm.score(gf.true_positive_rate(group={"sex": "F"}), Y, P, sensitive_features=S)
    assert v == pytest.approx(P[(SEX == "F") & (Y == 1)].mean())
    v = gm.score(gf.positive_prediction_rate(group={"sex": "F", "race": "a"}), Y, P, sensitive_features=S)
    assert v == pytest.approx(P[(SEX == "F") & (RACE == "a")].mean())


def test_fair_subdata_takes_goal_expressions():
    """FairSubdataClassifier states its goals in the one vocabulary: a goal names its column
    (picked from a frame of several, as every estimator does), the paper's measures are goal
    objects, and goals outside them (a recall gap, a group coverage) are accepted."""
    S = pd.DataFrame({"race": RACE, "sex": SEX})
    kw = dict(max_iter=10, random_state=0)
    for goal in [gf.error_rate_difference("sex") <= 0.02, gf.demographic_parity_difference("sex") <= 0.02,
                 gf.true_positive_rate(group={"sex": "F"}) >= gf.true_positive_rate(group={"sex": "M"}) - 0.02]:
        a = gf.FairSubdataClassifier(constraints=[goal], **kw).fit(X, Y, sensitive_features=S)
        b = gf.FairSubdataClassifier(constraints=[goal], **kw).fit(X, Y, sensitive_features=pd.Series(SEX, name="sex"))
        np.testing.assert_allclose(a.coef_, b.coef_)
        ev = a.evaluate(X, Y, sensitive_features=S)
        pred = a.predict(X)
        assert ev["constraints"][0]["value"] == pytest.approx(
            gm.score(goal.expression, Y, pred, sensitive_features=pd.DataFrame({"sex": SEX})))
        assert a.feasible_ and a.fairness_ == pytest.approx(0.0, abs=1e-12)
        assert a.result_.details.zstep_solvers == ["structured"]
    # race has three groups: pairwise rows, the exact MILP z-step
    c = gf.FairSubdataClassifier(constraints=[gf.demographic_parity_difference("race") <= 0.05], **kw).fit(
        X, Y, sensitive_features=S)
    assert c.result_.details.zstep_solvers == ["milp"] and c.result_.details.zstep_exact
    assert gm.demographic_parity_difference(Y, c.predict(X), sensitive_features=RACE) <= 0.05 + 1e-9
    with pytest.warns(FutureWarning, match=r"measure=\.\.\.\) is deprecated.*constraints="):
        gf.FairSubdataClassifier(measure="omr")  # 0.1's spelling: kept until 0.3
    with pytest.raises(TypeError, match="unexpected keyword argument 'measur'"):
        gf.FairSubdataClassifier(measur="omr")
    with pytest.raises(ValueError, match="unknown sensitive feature"):
        gf.FairSubdataClassifier(constraints=[gf.error_rate_difference("age") <= 0.02]).fit(X, Y, sensitive_features=S)


def test_surrogate_takes_goal_expressions():
    kw = dict(max_iter=3, method_params={"n_perturbations": 30}, random_state=0)
    a = gf.AdaptiveSurrogateClassifier(gf.gmean(), **kw).fit(X, Y)
    b = gf.AdaptiveSurrogateClassifier("gmean", **kw).fit(X, Y)
    c = gf.AdaptiveSurrogateClassifier(gf.gmean_loss(), **kw).fit(X, Y)  # the black-box wrapper's goal
    np.testing.assert_allclose(a.theta_, b.theta_)
    np.testing.assert_allclose(a.theta_, c.theta_)
    p = a.predict(X)
    gmean = np.sqrt(p[Y == 1].mean() * (1 - p[Y == 0]).mean())
    assert a.evaluate(X, Y)["objective"]["value"] == pytest.approx(1 - gmean)
    # a fairness disparity of the core vocabulary as the objective, groups named by its column
    d = gf.AdaptiveSurrogateClassifier(gf.demographic_parity_difference("sex"), **kw).fit(
        X, Y, sensitive_features=pd.Series(SEX, name="sex"))
    pd_ = d.predict(X)
    assert d.evaluate(X, Y, sensitive_features=pd.Series(SEX, name="sex"))["objective"]["value"] == pytest.approx(
        abs(pd_[SEX == "F"].mean() - pd_[SEX == "M"].mean()))
    # the goal's column is picked from a frame of several (the other column's cells merge)
    S = pd.DataFrame({"race": RACE, "sex": SEX})
    e = gf.AdaptiveSurrogateClassifier(gf.macro_f1_over_groups("sex"), **kw).fit(X, Y, sensitive_features=S)
    f = gf.AdaptiveSurrogateClassifier(gf.macro_f1_over_groups("sex"), **kw).fit(
        X, Y, sensitive_features=pd.DataFrame({"sex": SEX}))
    assert e.surrogate_names_ == f.surrogate_names_ == ["hinge_pos[sex='F']", "hinge_neg[sex='F']",
                                                        "hinge_pos[sex='M']", "hinge_neg[sex='M']"]
    np.testing.assert_allclose(e.theta_, f.theta_)
    assert e.evaluate(X, Y, sensitive_features=S)["objective"]["value"] == pytest.approx(
        f.evaluate(X, Y, sensitive_features=pd.DataFrame({"sex": SEX}))["objective"]["value"])
    # and constraints in the same vocabulary
    g = gf.AdaptiveSurrogateClassifier("gmean", [gf.demographic_parity_difference("sex") <= 0.05], **kw).fit(
        X, Y, sensitive_features=S)
    assert g.evaluate(X, Y, sensitive_features=S)["constraints"][0]["value"] == pytest.approx(
        gm.demographic_parity_difference(Y, g.predict(X), sensitive_features=SEX))


def test_report_names_goals_in_full_and_losses_as_losses():
    from rich.console import Console

    from goalfit.report import build_report
    from goalfit.report.names import display_name

    assert display_name("gmean") == "1 - G-mean"
    assert display_name("f1(group='F')") == "1 - F1(group='F')"
    assert display_name("precision_at_5_loss") == "1 - precision@5"
    assert display_name("demographic_parity_difference('sex')") == "demographic_parity_difference('sex')"
    S = pd.DataFrame({"sex": SEX})
    m = gf.GoalClassifier(objective="gmean", constraints=[
        gf.demographic_parity_difference("sex") <= 0.05,
        gf.demographic_parity_difference("sex", method="to_overall") <= 0.03]).fit(X, Y, sensitive_features=S)
    console = Console(width=60, record=True)
    build_report(m, X, Y, sensitive_features_train=S).print(console)
    text = console.export_text()
    goal_column = "".join(line.split("│")[1].replace(" ", "") for line in text.splitlines()
                          if line.startswith("│"))  # the first column, folded lines joined
    # the minimized value is named as a loss, the score it is one minus on the next row
    assert goal_column.startswith("1-G-mean(minimized)G-mean(score)demographic_parity")
    assert "demographic_parity_difference('sex')demographic_parity_difference('sex',method='to_overall')" \
        in goal_column
    assert "…" not in text
    assert "x the base model fit" in " ".join(text.split())


def test_cli_runs_a_surrogate_spec_with_a_goal_expression(tmp_path, need_data, cli_fit):
    need_data("german")

    # the fixture also checks that the saved preprocessing + AdaptiveSurrogateClassifier predicts raw rows
    r, _ = cli_fit('[data]\ndataset = "german"\nsensitive = ["sex"]\ntest_size = 0.3\nseed = 1\n'
                   '[goals]\nobjective = "macro_f1_over_groups(\'sex\')"\nmethod = "surrogate"\n'
                   'method_params = {n_perturbations = 30}\n'
                   'estimator_params = {max_iter = 5, init = "logistic"}\n', out="o")
    assert r["objective"]["name"] == "macro_f1_over_groups(column='sex')" and r["constraints"] == []
    assert r["baseline_name"] == "post-shift" and 0 < r["objective"]["test"] < 1
    # constraints in the same spec: G-mean s.t. demographic parity
    r, _ = cli_fit('[data]\ndataset = "german"\nsensitive = ["sex"]\ntest_size = 0.3\nseed = 1\n'
                   '[goals]\nobjective = "gmean"\nconstraints = ["demographic_parity_difference(\'sex\') <= 0.1"]\n'
                   'method = "interpolation"\nmethod_params = {n_perturbations = 30}\n'
                   'estimator_params = {max_iter = 5, init = "logistic"}\n', out="o2")
    assert r["constraints"][0]["train"] <= 0.1 and r["method"].startswith("adaptive surrogates (interpolation")
