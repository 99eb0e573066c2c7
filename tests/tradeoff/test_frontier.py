"""goalfit.frontier: trade-off curves on one fitted base model (issue 17, §4)."""
from __future__ import annotations

import json
import warnings

import numpy as np
from sklearn.base import clone
from sklearn.frozen import FrozenEstimator
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

import goalfit as gf

rng = np.random.default_rng(7)
N = 1500
X = rng.normal(size=(N, 4))
G = rng.choice(["a", "b", "c"], N, p=[0.5, 0.3, 0.2])
Y = (X[:, 0] + 0.8 * (G == "a") - 0.5 * (G == "c") + rng.logistic(size=N) > 0.2).astype(int)
XV, GV = X[:700] + 0.1, G[:700]
YV = Y[:700]
BOUNDS = [0.0, 0.02, 0.05, 0.1, 0.2]


def _template(c=None):
    # the threshold oracle is an exact linear minimizer on the sample, so column generation reaches
    # the same LP optimum from any start (with the plug-in oracle, optimal up to the oracle's error:
    # the columns pooled along a sweep can then give a slightly different, often lower, value)
    c = c if c is not None else gf.demographic_parity_difference() <= 0.05
    return gf.GoalClassifier(LogisticRegression(max_iter=1000), constraints=[c], method_params={"oracle": "threshold"})


@pytest.mark.parametrize("goal", [gf.demographic_parity_difference() <= 0.05,
                                  gf.equalized_odds_difference() <= 0.05])
def test_each_point_is_the_fit_at_its_bound(goal):
    f = gf.frontier(_template(goal), X, Y, sensitive_features=G, bounds=BOUNDS, X_val=XV, y_val=YV,
                    sensitive_features_val=GV)
    t = f.table
    assert list(t["bound"]) == sorted(BOUNDS, reverse=True)  # loose to tight, own bound 0.05 included once
    assert t["bound"].iloc[f.chosen] == 0.05
    name = goal.expression.name
    for i, row in t.iterrows():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            ref = gf.GoalClassifier(LogisticRegression(max_iter=1000), method_params={"oracle": "threshold"},
                                    constraints=[gf.goals.Constraint(goal.expression, "<=", row.bound)]).fit(
                X, Y, sensitive_features=G)
        ev = ref.evaluate(X, Y, sensitive_features=G)
        # the same LP optimum (column generation is exact on the sample), reached from other columns
        assert row.objective_train == pytest.approx(ev["objective"]["value"], abs=1e-7)
        assert row[f"{name}_train"] <= row.bound + 1e-7
        # the table's validation values are the point's model evaluated on raw validation features
        evv = f.model(i).evaluate(XV, YV, sensitive_features=GV)
        assert row.objective_val == pytest.approx(evv["objective"]["value"], abs=1e-10)
        assert row[f"{name}_val"] == pytest.approx(evv["constraints"][0]["value"], abs=1e-10)
    # tighter bounds cost error on the training sample (LP optimum is monotone in the bound)
    assert np.all(np.diff(t["objective_train"].to_numpy()) >= -1e-9)
    assert t["objective_train"].iloc[-1] > t["objective_train"].iloc[0] + 0.005


def test_warm_start_changes_the_path_not_the_answer():
    # column generation's pricing (exact_binary=False) takes the warm columns; the default binary
    # path, the LP over the groups' ROC hulls, needs no oracle call and reaches the same optimum
    priced = _template()
    priced.method_params = {**priced.method_params, "exact_binary": False}
    bounds = np.linspace(0, 0.2, 12)
    a = gf.frontier(priced, X, Y, sensitive_features=G, bounds=bounds, warm_start=True)
    b = gf.frontier(clone(priced), X, Y, sensitive_features=G, bounds=bounds, warm_start=False)
    np.testing.assert_allclose(a.table["objective_train"], b.table["objective_train"], atol=1e-8)
    assert a.table["oracle_calls"].sum() < b.table["oracle_calls"].sum()
    hulls = gf.frontier(_template(), X, Y, sensitive_features=G, bounds=bounds)
    np.testing.assert_allclose(hulls.table["objective_train"], a.table["objective_train"], atol=1e-8)
    assert hulls.table["oracle_calls"].sum() == 0


def test_goal_sets_prefit_precomputed_and_plot(tmp_path):
    base = LogisticRegression(max_iter=1000).fit(X, Y)
    tpr = gf.true_positive_rate(group="c")
    sets = [[gf.demographic_parity_difference() <= 0.1, tpr >= 0.0],
            [gf.demographic_parity_difference() <= 0.02, tpr >= 0.6]]
    f = gf.frontier(gf.GoalClassifier(FrozenEstimator(base), constraints=sets[0]), X, Y, sensitive_features=G,
                    goal_sets=sets)
    assert len(f.table) == 2 and np.isnan(f.table["bound"]).all()
    assert f.table["true_positive_rate(group='c')_train"].iloc[1] >= 0.6 - 1e-7
    P = base.predict_proba(X)
    g = gf.frontier(gf.GoalClassifier("precomputed", constraints=sets[0]), P, Y, sensitive_features=G,
                    goal_sets=sets)
    np.testing.assert_allclose(g.table["objective_train"], f.table["objective_train"], atol=1e-10)
    ax = f.plot(tmp_path / "f.png")
    assert (tmp_path / "f.png").stat().st_size > 0 and ax is not None


def test_frontier_refuses_what_it_cannot_sweep():
    with pytest.raises(ValueError, match="exactly one of"):
        gf.frontier(_template(), X, Y, sensitive_features=G)
    with pytest.raises(TypeError, match="objective and constraints"):
        gf.frontier(LogisticRegression(), X, Y, bounds=[0.1])
    with pytest.raises(ValueError, match="no constraint"):
        gf.frontier(gf.GoalClassifier(), X, Y, bounds=[0.1])
    with pytest.raises(ValueError, match="does not sweep with confidence"):
        gf.frontier(gf.GoalClassifier(constraints=[gf.demographic_parity_difference() <= 0.1], confidence=0.9),
                    X, Y, sensitive_features=G, bounds=[0.1])
    with pytest.raises(ValueError, match="takes no constraints"):
        gf.frontier(gf.GoalClassifier(constraints=[gf.demographic_parity_difference() <= 0.1], method="argmax"),
                    X, Y, sensitive_features=G, bounds=[0.1])
    with pytest.raises(ValueError, match="same expressions"):
        gf.frontier(_template(), X, Y, sensitive_features=G,
                    goal_sets=[[gf.demographic_parity_difference() <= 0.1], [gf.true_positive_rate() >= 0.5]])


def test_cli_frontier_writes_table_and_plot(tmp_path):
    from typer.testing import CliRunner

    from goalfit.cli.app import app

    df = pd.DataFrame({"x1": X[:, 0], "x2": X[:, 1], "grp": G, "label": Y})
    csv = tmp_path / "d.csv"
    df.to_csv(csv, index=False)
    spec = tmp_path / "s.toml"
    spec.write_text(f'[data]\ncsv = "{csv}"\nlabel = "label"\nsensitive = ["grp"]\n'
                    '[goals]\nconstraints = ["demographic_parity_difference(\'grp\') <= 0.05"]\n')
    res = CliRunner().invoke(app, ["frontier", str(spec), "--bounds", "0:0.2:5", "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
    data = json.loads((tmp_path / "o" / "frontier.json").read_text())
    assert len(data["points"]) == 5 and data["points"][data["chosen"]]["bound"] == 0.05  # 0.05 is on the grid
    assert (tmp_path / "o" / "frontier.png").stat().st_size > 0
    assert pd.read_csv(tmp_path / "o" / "frontier.csv").shape[0] == 5
    res = CliRunner().invoke(app, ["frontier", str(spec), "--bounds", "a,b", "--out", str(tmp_path / "o2")])
    assert res.exit_code == 2 and "--bounds" in res.output


def test_validation_intervals_match_evaluate_with_confidence():
    goal = gf.demographic_parity_difference() <= 0.05
    f = gf.frontier(_template(goal), X, Y, sensitive_features=G, bounds=[0.02, 0.1], X_val=XV, y_val=YV,
                    sensitive_features_val=GV, confidence=0.9)
    name = goal.expression.name
    for i, row in f.table.iterrows():
        ev = f.model(i).evaluate(XV, YV, sensitive_features=GV, confidence=0.9)
        assert [row[f"{name}_val_low"], row[f"{name}_val_high"]] == pytest.approx(ev["constraints"][0]["interval"])
        assert [row.objective_val_low, row.objective_val_high] == pytest.approx(ev["objective"]["interval"])
        assert row.met_with_confidence_val == ev["constraints"][0]["met_with_confidence"]


def _fresh(goal, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return gf.GoalClassifier(LogisticRegression(max_iter=1000), constraints=[goal], method_params={"oracle": "threshold"},
                                 **options).fit(X, Y, sensitive_features=G)


@pytest.mark.parametrize("options", [{"cv": 3, "random_state": 0}, {"group_blind": True},
                                     {"margin": 0.01}])
def test_with_goals_equals_a_fresh_fit_and_leaves_the_original(options):
    dp = gf.demographic_parity_difference()
    m = _fresh(dp <= 0.1, **options)
    before = m.evaluate(XV, YV, sensitive_features=GV)
    m2 = m.with_goals([dp <= 0.02])
    ref = _fresh(dp <= 0.02, **options)
    assert m2.base_fit_seconds_ == 0.0 and m2.estimator_ is m.estimator_
    for split in ((X, Y, G), (XV, YV, GV)):
        a = m2.evaluate(*split[:2], sensitive_features=split[2])
        b = ref.evaluate(*split[:2], sensitive_features=split[2])
        assert a["objective"]["value"] == pytest.approx(b["objective"]["value"], abs=1e-7)
        assert a["constraints"][0]["value"] == pytest.approx(b["constraints"][0]["value"], abs=1e-7)
    # the training values the method certified hold at the new bound (less the margin)
    assert m2.problem_.constraints[0].value(m2.result_.confusion) <= 0.02 - options.get("margin", 0) + 1e-7
    assert m.evaluate(XV, YV, sensitive_features=GV) == before  # the original is unchanged
    if options.get("group_blind"):
        np.testing.assert_array_equal(m2.predict(XV, random_state=0), ref.predict(XV, random_state=0))


def test_frontier_sweeps_group_blind_and_margin_fits():
    dp = gf.demographic_parity_difference()
    f = gf.frontier(gf.GoalClassifier(LogisticRegression(max_iter=1000), constraints=[dp <= 0.05],
                                      method_params={"oracle": "threshold"}, group_blind=True, margin=0.01),
                    X, Y, sensitive_features=G, bounds=[0.03, 0.1], X_val=XV, y_val=YV, sensitive_features_val=GV)
    for i, row in f.table.iterrows():
        assert row[f"{dp.name}_train"] <= row.bound - 0.01 + 1e-7
        # the cached validation values are the group-blind model's own evaluation
        ev = f.model(i).evaluate(XV, YV, sensitive_features=GV)
        assert row[f"{dp.name}_val"] == pytest.approx(ev["constraints"][0]["value"], abs=1e-10)
        assert row.objective_val == pytest.approx(ev["objective"]["value"], abs=1e-10)
        ref = _fresh(gf.goals.Constraint(dp, "<=", row.bound), group_blind=True, margin=0.01)
        assert row.objective_train == pytest.approx(ref.evaluate(X, Y, sensitive_features=G)["objective"]["value"],
                                                    abs=1e-7)
        assert f.model(i).predict(XV).shape == (len(XV),)  # group-blind: no sensitive features


def test_with_goals_refuses_what_it_cannot_resolve():
    dp = gf.demographic_parity_difference()
    with pytest.raises(ValueError, match="fresh safety part"):
        _fresh(dp <= 0.1, confidence=0.9).with_goals([dp <= 0.05])
    with pytest.raises(ValueError, match="warm_start starts column generation"):
        _fresh(dp <= 0.1, method="split_frank_wolfe").with_goals([dp <= 0.05], warm_start=([], []))
    with pytest.raises(ValueError, match="refit oracle"):
        m = gf.GoalClassifier(LogisticRegression(max_iter=200), constraints=[dp <= 0.1],
                              method_params={"oracle": "refit", "max_iter": 3}).fit(X[:300], Y[:300], sensitive_features=G[:300])
        m.with_goals([dp <= 0.05])
