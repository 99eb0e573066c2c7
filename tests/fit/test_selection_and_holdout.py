"""Hyper-parameter selection (App. B.1 protocol), sample splitting (§6.6), convergence plots."""
import warnings

import numpy as np
import pandas as pd
import pytest

import goalfit as gf
from goalfit import GoalClassifier
from goalfit.estimators import default_grid, select_method_params
from goalfit.report import plot_convergence


def data(n=1500, seed=0, n_classes=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    score = X @ np.array([1.0, -0.5, 0.3]) + rng.normal(scale=0.8, size=n)
    y = np.digitize(score, np.quantile(score, [0.6, 0.85]))[:, None].ravel() if n_classes == 3 else (score > 0).astype(int)
    return X, y


def test_selection_picks_lowest_feasible_training_objective():
    X, y = data()
    cons = [gf.coverage_deviation() <= 0.02]
    model = GoalClassifier(objective="hmean", constraints=cons, method="con_gda", method_params={"max_iter": 300})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        best, table = select_method_params(model, X, y)
    assert len(table) == 9 and sum(r["selected"] for r in table) == 1
    feas = [r for r in table if r["feasible"]]
    chosen = next(r for r in table if r["selected"])
    if feas:
        assert chosen["objective"] == min(r["objective"] for r in feas)
    else:
        assert chosen["max_violation"] == min(r["max_violation"] for r in table)
    C = best.result_.confusion
    assert best.problem_.objective.value(C) == pytest.approx(chosen["objective"])
    # every setting shares the base model fitted once
    assert len({id(m) for m in [best.estimator_]}) == 1


def test_selection_grid_forms_and_errors():
    assert len(default_grid("gda")) == 9 and default_grid("frank_wolfe") == [{}]
    X, y = data(n=600)
    best, table = select_method_params(GoalClassifier(objective="hmean", method="gda"), X, y,
                                       param_grid={"step_xi": [0.1, 1.0], "max_iter": [50]})
    assert [r["params"]["step_xi"] for r in table] == [0.1, 1.0]
    with pytest.raises(ValueError, match="param_grid"):
        select_method_params(GoalClassifier(), X, y)


def test_holdout_fits_base_on_one_part_and_goals_on_the_other():
    X, y = data(n=2000, n_classes=2)
    g = pd.Series(np.where(X[:, 2] > 0, "a", "b"), name="g")
    m = GoalClassifier(constraints=[gf.demographic_parity_difference("g") <= 0.02], cv=0.4,
                       random_state=0).fit(X, y, sensitive_features=g)
    # the outer loop's sample is the stratified 40% holdout; the base model saw the other 60%
    assert m.n_outer_samples_ == 800
    assert m.problem_.space.priors[1] == pytest.approx(y.mean(), abs=1e-3)
    full = GoalClassifier().fit(X, y)
    assert full.n_outer_samples_ == 2000
    assert not np.allclose(m.estimator_[-1].coef_, full.estimator_[-1].coef_)
    with pytest.raises(ValueError, match="sample splitting"):
        GoalClassifier("precomputed", cv=0.3).fit(np.c_[1 - y * 0.5, y * 0.5], y)
    with pytest.raises(ValueError, match="'cv' parameter"):
        GoalClassifier(cv=1.5).fit(X, y)


def test_convergence_plot(tmp_path):
    X, y = data(n=800)
    hists = {}
    for method in ("frank_wolfe", "gda", "ellipsoid"):
        m = GoalClassifier(objective="minmax_recall", method=method,
                           method_params={"max_iter": 100, "record_every": 10}).fit(X, y)
        hists[method] = m.history_
        assert m.history_[-1]["oracle_calls"] >= 50
    p = plot_convergence(hists, tmp_path / "c.png", title="min-max")
    assert p.stat().st_size > 5000
