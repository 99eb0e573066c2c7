"""Every spelling of goalfit 0.1 that 0.2 renamed or moved warns FutureWarning naming the new
spelling and still works: the same parameters as the new spelling (so the same fit), clone /
get_params / set_params round trips, moved modules, removed attributes (CHANGELOG.md, Deprecated)."""
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression

import goalfit as gf

#: The keyword arguments of goalfit 0.1's estimator constructors with their 0.1 defaults (copied
#: from the 0.1 signatures, not from the code under test).
V01 = {
    "GoalClassifier": dict(estimator=None, objective="error", constraints=(), method="auto", oracle="plugin",
                           prefit=False, holdout=None, cv="auto", cv_model="average", confidence=None, margin=None,
                           safety_fraction=0.4, method_params=None, group_blind=False, joint_model="product",
                           random_state=None),
    "RampClassifier": dict(objective="error", constraints=(), alpha=None, feature_map=None, fit_intercept=True,
                           max_iter=10, max_feasibility_iter=None, feasibility_alpha=None, tol=1e-4,
                           multiplier_solver="cutting_plane", chooser="auto", max_cutting_plane_iter=30,
                           cutting_plane_tol=1e-4, cutting_plane_rel_tol=0.5, max_multiplier=1e4, inner_solver="dcd",
                           inner_tol=1e-4, intercept_scaling=1.0, init="zeros", deployed_model=None,
                           random_state=None, confidence=None, margin=None, safety_fraction=0.4,
                           decision_threshold="fit"),
    "FairSubdataClassifier": dict(model="svm", measure="omr", constraints=(), rho=1.0, epsilon=None, t=1.0, lam=0.01,
                                  w_solver="auto", solver="irs", kernel="rbf", C=1.0, gamma="scale", degree=3,
                                  max_iter=50, tol=1e-8, n_restarts=0, time_limit=60.0, random_state=None),
    "SpectralFairSVC": dict(d=0.1, mu=0.01, lam=0.01, max_iter=50, tol=1e-3),
    "AdaptiveSurrogateClassifier": dict(metric="gmean", surrogate_loss="hinge", module=None, device="cpu",
                                        gradient="interpolation", n_perturbations=100, sigma=1.0, gradient_params=None,
                                        step_size=1.0, n_iter=100, projection="lbfgs", projection_iter=100,
                                        projection_lr=1.0, projection_tol=1e-5, param_bound=None, eval_every=10,
                                        n_restarts=1, restart_scale=1.0, init="zeros", fit_intercept=True,
                                        dtype="float32", chunk_elements=4_000_000, random_state=None),
    "BlackBoxPostShiftClassifier": dict(metric="gmean", estimator=None, grid_size=1000),
    "RelaxedFMClassifier": dict(metric="macro_f1_over_groups", max_iter=200, init="logistic", fit_intercept=True),
    "LagrangianClassifier": dict(module=None, objective="error", constraints=(), formulation="proxy_lagrangian",
                                 proxy=None, hidden_layer_sizes=(), optimizer="adam", learning_rate=0.01,
                                 weight_decay=0.0, multiplier_optimizer="sgd", multiplier_learning_rate=0.1,
                                 multiplier_bound=None, batch_size=256, min_slice_rows=8, n_epochs=20,
                                 snapshots_per_epoch=1, prediction="stochastic", shrink_on="train",
                                 n_iter_no_change=None, tol=1e-3, device="cpu", checkpoint_path=None, progress=False,
                                 random_state=None),
}

#: 0.1 keywords renamed to another constructor parameter: old -> new (the value is kept).
RENAMED = {
    "FairSubdataClassifier": {"model": "estimator", "lam": "alpha", "solver": "method"},
    "SpectralFairSVC": {"lam": "alpha"},
    "AdaptiveSurrogateClassifier": {"metric": "objective", "surrogate_loss": "surrogates", "module": "estimator",
                                    "gradient": "method", "n_iter": "max_iter", "projection_tol": "tol"},
    "BlackBoxPostShiftClassifier": {"metric": "objective"},
    "RelaxedFMClassifier": {"metric": "objective"},
    "LagrangianClassifier": {"module": "estimator", "formulation": "method", "n_epochs": "max_iter",
                             "weight_decay": "alpha"},
}
#: 0.1 keywords whose new spelling is more than a rename (tested one by one below).
SPECIAL = {"GoalClassifier": {"holdout", "prefit"}, "FairSubdataClassifier": {"measure", "epsilon"},
           "LagrangianClassifier": {"progress"}}


def _cls(name):
    if name == "LagrangianClassifier":
        pytest.importorskip("torch")
        from goalfit.torch import LagrangianClassifier

        return LagrangianClassifier
    return getattr(gf, name)


def _build(cls, *args, **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = cls(*args, **kw)
    return model, [w for w in caught if issubclass(w.category, FutureWarning)]


def _same_params(a, b):
    pa, pb = a.get_params(deep=False), b.get_params(deep=False)
    assert pa.keys() == pb.keys()
    for k in pa:
        assert repr(pa[k]) == repr(pb[k]), k


def _old_keywords():
    for name, params in V01.items():
        for kw, default in params.items():
            yield pytest.param(name, kw, default, id=f"{name}-{kw}")


@pytest.mark.parametrize("name,kw,default", list(_old_keywords()))
def test_every_01_keyword_still_accepted(name, kw, default):
    """Each 0.1 constructor keyword (at its 0.1 default) constructs without TypeError; one that is
    no parameter any more warns FutureWarning once, naming its new spelling and the removal."""
    cls = _cls(name)
    _, caught = _build(cls, **{kw: default})
    if kw in cls().get_params(deep=False):
        assert caught == []
        return
    assert len(caught) == 1, [str(w.message) for w in caught]
    message = str(caught[0].message)
    assert f"{name}({kw}=...) is deprecated and will be removed in 0.3; use " in message
    new = RENAMED.get(name, {}).get(kw)
    if new is not None:
        assert f"use {new}=" in message
    elif kw not in SPECIAL.get(name, ()):
        assert f"use method_params={{{kw!r}: ...}}" in message


@pytest.mark.parametrize("name,kw,default", [p for p in _old_keywords()
                                             if p.values[1] not in SPECIAL.get(p.values[0], ())])
def test_old_keyword_lands_where_the_new_spelling_puts_it(name, kw, default):
    """cls(old=v) has the parameters of the new spelling (so it fits the same); clone keeps the
    value and set_params(old=v) sets it too."""
    cls = _cls(name)
    if kw in cls().get_params(deep=False):
        return
    value = "x-value" if default is None or isinstance(default, str) else default
    new = RENAMED.get(name, {}).get(kw)
    expected = cls(**({new: value} if new else {"method_params": {kw: value}}))
    model, _ = _build(cls, **{kw: value})
    _same_params(model, expected)
    _same_params(clone(model), expected)
    later = cls()
    with pytest.warns(FutureWarning, match=r"removed in 0\.3"):
        later.set_params(**{kw: value})
    _same_params(later, expected)


def test_goal_classifier_special_keywords():
    lr = LogisticRegression()
    model, caught = _build(gf.GoalClassifier, estimator=lr, prefit=True, holdout=0.25, oracle="threshold")
    assert isinstance(model.estimator, FrozenEstimator) and model.estimator.estimator is lr
    assert model.cv == 0.25 and model.method_params == {"oracle": "threshold"}
    assert any("FrozenEstimator" in str(w.message) for w in caught)
    assert any("use cv=<float>" in str(w.message) for w in caught)
    c = clone(model)
    assert isinstance(c.estimator, FrozenEstimator) and c.cv == 0.25 and c.method_params == {"oracle": "threshold"}
    # the 0.1 defaults change nothing
    model, caught = _build(gf.GoalClassifier, prefit=False, holdout=None)
    _same_params(model, gf.GoalClassifier())
    assert len(caught) == 2


def test_lagrangian_progress():
    cls = _cls("LagrangianClassifier")
    model, caught = _build(cls, progress=True)
    assert model.verbose == 1 and "use verbose=1" in str(caught[0].message)


def test_fair_subdata_measure_epsilon_and_positional_model():
    model, caught = _build(gf.FairSubdataClassifier, measure="dp", epsilon=0.05)
    assert [c.name for c in model.constraints] == ["demographic_parity_difference() <= 0.05"]
    assert "constraints=[demographic_parity_difference() <= 0.05]" in str(caught[0].message)
    model, _ = _build(gf.FairSubdataClassifier, measure="eo", rho=3.0)  # 0.1's penalty rho F(z)
    assert [c.name for c in model.constraints] == ["equal_opportunity_difference() <= 0"]
    assert model.method_params == {"form": "penalty", "rho": 3.0}
    model, caught = _build(gf.FairSubdataClassifier, "logistic")  # 0.1: the first positional was model
    assert model.estimator == "logistic" and model.objective == "error"
    assert "estimator='logistic'" in str(caught[0].message)
    model, _ = _build(gf.FairSubdataClassifier, measure="f1")
    assert repr(model.objective) == repr(gf.f1())
    with pytest.raises(ValueError, match="measure must be one of"):
        _build(gf.FairSubdataClassifier, measure="xyz")
    with pytest.raises(ValueError, match="give the fairness goal once"):
        _build(gf.FairSubdataClassifier, measure="dp", constraints=[gf.demographic_parity_difference() <= 0.1])


def test_unknown_and_doubled_keywords():
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'oracl'; did you mean 'oracle'"):
        gf.GoalClassifier(oracl="plugin")
    with pytest.raises(TypeError, match="not both"):
        _build(gf.GoalClassifier, oracle="threshold", method_params={"oracle": "plugin"})
    with pytest.raises(TypeError, match="not both"):
        _build(gf.FairSubdataClassifier, lam=0.1, alpha=0.2)
    with pytest.raises(ValueError, match="Invalid parameter"):
        gf.GoalClassifier().set_params(no_such_parameter=1)


# ---------------------------------------------------------------------------- the same fits


def _data(n=120, seed=0):
    rng = np.random.default_rng(seed)
    g = rng.integers(0, 2, n)
    X = np.column_stack([rng.normal(size=(n, 2)), g])
    y = (X[:, 0] + 0.8 * g + rng.normal(size=n) > 0.4).astype(int)
    return X, y, np.array(["a", "b"])[g]


def _torch_pair():
    cls = _cls("LagrangianClassifier")
    dp = [gf.demographic_parity_difference() <= 0.1]
    return (lambda: cls(formulation="lagrangian", n_epochs=2, learning_rate=0.05, weight_decay=0.01, batch_size=32,
                        random_state=0, constraints=dp),
            lambda: cls(method="lagrangian", max_iter=2, method_params={"learning_rate": 0.05}, alpha=0.01,
                        batch_size=32, random_state=0, constraints=dp))


DP01 = [gf.demographic_parity_difference() <= 0.1]
FITS = {
    "GoalClassifier": (lambda: gf.GoalClassifier(constraints=DP01, oracle="threshold", holdout=0.3, random_state=0),
                       lambda: gf.GoalClassifier(constraints=DP01, method_params={"oracle": "threshold"}, cv=0.3,
                                                 random_state=0)),
    "RampClassifier": (lambda: gf.RampClassifier(constraints=DP01, max_iter=2, init="unconstrained",
                                                 inner_solver="liblinear", random_state=0),
                       lambda: gf.RampClassifier(constraints=DP01, max_iter=2, random_state=0, method_params={
                           "init": "unconstrained", "inner_solver": "liblinear"})),
    "FairSubdataClassifier": (lambda: gf.FairSubdataClassifier(model="logistic", lam=0.1, measure="dp", epsilon=0.1,
                                                               random_state=0),
                              lambda: gf.FairSubdataClassifier(estimator="logistic", alpha=0.1, constraints=DP01,
                                                               random_state=0)),
    "SpectralFairSVC": (lambda: gf.SpectralFairSVC(lam=0.1), lambda: gf.SpectralFairSVC(alpha=0.1)),
    "AdaptiveSurrogateClassifier": (
        lambda: gf.AdaptiveSurrogateClassifier(metric="hmean", n_iter=3, n_perturbations=20, random_state=0),
        lambda: gf.AdaptiveSurrogateClassifier(objective="hmean", max_iter=3, method_params={"n_perturbations": 20},
                                               random_state=0)),
    "BlackBoxPostShiftClassifier": (lambda: gf.BlackBoxPostShiftClassifier(metric="hmean", grid_size=20),
                                    lambda: gf.BlackBoxPostShiftClassifier(objective="hmean",
                                                                           method_params={"grid_size": 20})),
    "RelaxedFMClassifier": (lambda: gf.RelaxedFMClassifier(metric="hmean", max_iter=5),
                            lambda: gf.RelaxedFMClassifier(objective="hmean", max_iter=5)),
    "LagrangianClassifier": None,
}


@pytest.mark.parametrize("name", list(FITS))
def test_old_spelling_fits_as_the_new_one(name):
    """A tiny fit with the 0.1 spelling equals the fit with the new spelling (training result and
    predictions)."""
    old, new = _torch_pair() if FITS[name] is None else FITS[name]
    X, y, s = _data()
    with pytest.warns(FutureWarning, match=r"removed in 0\.3"):
        a = old()
    b = new()
    _same_params(a, b)
    a.fit(X, y, sensitive_features=s)
    b.fit(X, y, sensitive_features=s)
    np.testing.assert_allclose(a.result_.confusion, b.result_.confusion, atol=1e-12)
    np.testing.assert_array_equal(a.predict(X, sensitive_features=s), b.predict(X, sensitive_features=s))
    assert a.max_violation_ == b.max_violation_


def test_goal_classifier_prefit_fits_as_frozen():
    X, y, s = _data()
    lr = LogisticRegression().fit(X, y)
    with pytest.warns(FutureWarning, match="FrozenEstimator"):
        a = gf.GoalClassifier(lr, prefit=True, constraints=DP01).fit(X, y, sensitive_features=s)
    b = gf.GoalClassifier(FrozenEstimator(lr), constraints=DP01).fit(X, y, sensitive_features=s)
    np.testing.assert_allclose(a.predict_proba(X, sensitive_features=s), b.predict_proba(X, sensitive_features=s))
    assert a.estimator_.estimator is lr  # not refitted


# ---------------------------------------------------------------------------- RampClassifier


@pytest.fixture(scope="module")
def ramp():
    X, y, s = _data(n=200, seed=1)
    return gf.RampClassifier(constraints=DP01, max_iter=2, random_state=0).fit(X, y, sensitive_features=s), X, y, s


def test_ramp_max_violation_deterministic(ramp):
    model, X, y, s = ramp
    with pytest.warns(FutureWarning, match=r"max_violation_deterministic_ is deprecated.*use max_violation_"):
        value = model.max_violation_deterministic_
    assert value == model.max_violation_
    # 0.1's definition: the largest violation of the deterministic rule f(x) > threshold_ on train
    assert value == pytest.approx(max([c["violation"] for c in model.evaluate(X, y, sensitive_features=s)["constraints"]]
                                      + [0.0]), abs=1e-12)
    with pytest.raises(AttributeError):
        gf.RampClassifier().max_violation_deterministic_  # noqa: B018 (unfitted: as max_violation_)


def test_ramp_randomized_rule_under_old_and_new_names(ramp):
    model, X, y, s = ramp
    f = model.decision_function(X) + model.threshold_  # 0.1's decision_function: the unshifted score
    expected = np.clip(0.5 + f, 0.0, 1.0)  # 0.1's predict_proba: the ramp sigma (Goh et al. Eq. 2-3)
    P = model.predict_randomized_proba(X)
    np.testing.assert_allclose(P[:, 1], expected, atol=1e-12)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    # predict_proba is now the deployed deterministic rule: one-hot rows agreeing with predict
    D = model.predict_proba(X)
    np.testing.assert_array_equal(D[:, 1], (model.predict(X) == model.classes_[1]).astype(float))
    with pytest.warns(FutureWarning, match=r"randomized_classifier_\.predict"):
        labels = model.predict(X, randomized=True, random_state=3)
    np.testing.assert_array_equal(labels, model.randomized_classifier_.predict(X, random_state=3))
    with pytest.warns(FutureWarning, match=r"classifier=model\.randomized_classifier_"):
        old = model.evaluate(X, y, sensitive_features=s, randomized=True)
    new = model.evaluate(X, y, sensitive_features=s, classifier=model.randomized_classifier_)
    assert old["accuracy"] == new["accuracy"]
    assert [c["value"] for c in old["constraints"]] == [c["value"] for c in new["constraints"]]
    with pytest.warns(FutureWarning):
        det = model.evaluate(X, y, sensitive_features=s, randomized=False)
    assert det["accuracy"] == model.evaluate(X, y, sensitive_features=s)["accuracy"]


# ---------------------------------------------------------------------------- moved modules and names


@pytest.mark.parametrize("old_module,name,new", [
    ("goalfit.methods.baselines", "post_shift", "goalfit.methods.plugin.baselines:post_shift"),
    ("goalfit.methods.baselines", "BASELINES", "goalfit.methods.plugin.baselines:BASELINES"),
    ("goalfit.estimators.certification", "split_rows", "goalfit.fit.certification:split_rows"),
    ("goalfit.distributed.estimator", "predict", "goalfit.distributed.backend:predict"),
    ("goalfit.distributed.estimator", "fit", "goalfit.distributed.backend:fit"),
    ("goalfit.report.surrogate", "build_surrogate_report", "goalfit.report:build_report"),
    ("goalfit.torch.report", "build_lagrangian_report", "goalfit.report:build_report"),
    ("goalfit.methods.plugin", "SolverResult", "goalfit.fit:FitResult"),
])
def test_moved_names_warn_and_forward(old_module, name, new):
    import importlib

    if old_module.startswith("goalfit.torch"):
        pytest.importorskip("torch")
    module = importlib.import_module(old_module)
    where, attr = new.split(":")
    with pytest.warns(FutureWarning, match=rf"{old_module}\.{name} is deprecated.*use {where.replace('.', '[.]')}"):
        value = getattr(module, name)
    assert value is getattr(importlib.import_module(where), attr)


def test_moved_module_unknown_name():
    import goalfit.estimators.certification as old

    with pytest.raises(AttributeError, match="moved to 'goalfit.fit.certification'"):
        old.safety_test  # noqa: B018 (replaced by safety_rows; no forward)


def test_report_builders_of_01():
    from goalfit import report

    built = report.build_ramp_report
    assert built.__wrapped__ is report.build_report
    X, y, s = _data()
    model = gf.RampClassifier(constraints=DP01, max_iter=2, random_state=0).fit(X, y, sensitive_features=s)
    with pytest.warns(FutureWarning, match=r"build_ramp_report is deprecated.*goalfit\.report\.build_report"):
        old = built(model, X, y, sensitive_features_train=s, confidence=None)
    new = report.build_report(model, X, y, sensitive_features_train=s, confidence=None)
    assert old.data["objective"] == new.data["objective"]
    assert old.data["constraints"] == new.data["constraints"]


def test_cli_models_make_estimator():
    from goalfit.cli import models
    from goalfit.estimators import make_estimator

    with pytest.warns(FutureWarning, match=r"goalfit\.estimators\.make_estimator\(name, random_state=seed\)"):
        old = models.make_estimator("gradient_boosting", np.zeros((3, 2)), 7)
    new = make_estimator("gradient_boosting", random_state=7)
    assert repr(old) == repr(new) and old[-1].random_state == 7
    with pytest.warns(FutureWarning, match="MODELS"):
        factories = models.ESTIMATORS
    assert factories["gradient_boosting"](5).random_state == 5  # 0.1's name -> seed -> model


def test_cli_spec_method_params_of_01():
    """0.1 specs gave the ramp / lagrangian / subdata estimators' constructor parameters in
    [goals] method_params; they still reach the constructor, with a FutureWarning."""
    from goalfit.cli.spec import build_estimator, spec_from_dict

    raw = {"data": {"dataset": "adult"}, "goals": {"method": "ramp", "method_params": {
        "alpha": 0.01, "max_iter": 3, "init": "unconstrained"}}}
    with pytest.warns(FutureWarning, match=r"method_params keys \['alpha', 'max_iter'\].*estimator_params"):
        model = build_estimator(spec_from_dict(raw))
    assert (model.alpha, model.max_iter, model.method_params) == (0.01, 3, {"init": "unconstrained"})
    raw["goals"]["method"], raw["goals"]["method_params"] = "subdata", {"lam": 0.1, "rho": 2.0}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = build_estimator(spec_from_dict(raw))
    messages = {str(w.message) for w in caught if issubclass(w.category, FutureWarning)}
    assert any("method_params keys ['lam']" in m for m in messages)
    assert any("FairSubdataClassifier(lam=...) is deprecated" in m and "use alpha=" in m for m in messages)
    assert (model.alpha, model.method_params) == (0.1, {"rho": 2.0})
    raw["goals"]["method"], raw["goals"]["method_params"] = "frank_wolfe", {"max_iter": 50}
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)  # the plug-in methods' knobs are unchanged
        assert build_estimator(spec_from_dict(raw)).method_params == {"max_iter": 50}


def test_fair_subdata_fitted_attributes_of_01():
    """0.1's README: ``(sub.measure_, sub.epsilon_) == ("omr", 0.02)`` after a fit with that goal."""
    X, y, s = _data()
    sub = gf.FairSubdataClassifier(estimator="logistic", max_iter=5,
                                   constraints=[gf.error_rate_difference() <= 0.02]).fit(X, y, sensitive_features=s)
    with pytest.warns(FutureWarning, match=r"measure_ is deprecated"):
        assert sub.measure_ == "omr"
    with pytest.warns(FutureWarning, match=r"epsilon_ is deprecated.*constraints\[0\]\.bound"):
        assert sub.epsilon_ == 0.02
    with pytest.warns(FutureWarning, match=r"sensitive_column_ is deprecated"):
        assert sub.sensitive_column_ is None
    with pytest.warns(FutureWarning, match=r"train_fairness_ is deprecated.*evaluate"):
        gap = sub.train_fairness_
    assert gap == pytest.approx(sub.evaluate(X, y, sensitive_features=s)["constraints"][0]["value"], abs=1e-12)
    with pytest.raises(AttributeError):
        gf.FairSubdataClassifier().measure_  # noqa: B018 (unfitted)
    two = gf.FairSubdataClassifier(max_iter=2, constraints=[gf.error_rate_difference() <= 0.1, gf.coverage() >= 0.2])
    two.fit(X, y, sensitive_features=s)
    with pytest.raises(AttributeError, match="none or several"):
        two.epsilon_  # noqa: B018


def test_surrogate_metric_attribute_of_01():
    X, y, s = _data()
    model = gf.AdaptiveSurrogateClassifier("hmean", max_iter=2, method_params={"n_perturbations": 10},
                                           random_state=0).fit(X, y)
    with pytest.warns(FutureWarning, match=r"metric_ is deprecated.*as_blackbox_metric"):
        metric = model.metric_
    pred = (model.predict(X) == model.classes_[1]).astype(int)
    # the H-mean loss of the deployed (deterministic) rule's predictions, as evaluate measures it
    assert metric(y, pred) == pytest.approx(model.evaluate(X, y)["objective"]["value"], abs=1e-12)


#: A self-contained example of goalfit 0.1's README, verbatim (a script written against 0.1).
README_01_EXAMPLE = """
import numpy as np
import pandas as pd
import goalfit as gf

rng = np.random.default_rng(0)
X = rng.normal(size=(600, 3))
S = pd.DataFrame({"sex": rng.choice(["Female", "Male"], 600), "race": rng.choice(["a", "b"], 600)})
y = (X[:, 0] + 0.5 * (S["sex"] == "Male") + rng.logistic(size=600) > 0).astype(int)

# fairness goals users asked for: average odds, coverage equal to the class prior (no priors by hand),
# and overlapping groups (a group={...} dict names cells of some columns only: all Females, any race)
m = gf.GoalClassifier(constraints=[
    gf.average_odds_difference("sex") <= 0.02,
    gf.coverage(1) <= gf.prior(1) + 0.01, gf.coverage(1) >= gf.prior(1) - 0.01,
    gf.true_positive_rate(group={"sex": "Female"}) >= 0.6,
]).fit(X, y, sensitive_features=S)
assert all(c["met"] for c in m.evaluate(X, y, sensitive_features=S)["constraints"])

# Ye & Xie's fair subdata selection with the same goal expressions (measure= strings stay as shorthand)
sub = gf.FairSubdataClassifier("logistic", t=np.log(0.5), max_iter=10,
                               constraints=[gf.error_rate_difference("sex") <= 0.02])
sub.fit(X, y, sensitive_features=S)                 # the goal's column is picked from the frame
assert (sub.measure_, sub.epsilon_) == ("omr", 0.02)

# Jiang et al.'s adaptive surrogates take a known-form goal as the black-box metric
bb = gf.AdaptiveSurrogateClassifier(gf.macro_f1_over_groups("sex"), n_iter=5, n_perturbations=30,
                                    random_state=0).fit(X, y, sensitive_features=S["sex"])
loss = bb.evaluate(X, y, sensitive_features=S["sex"])["objective"]["value"]   # 1 - macro-F1 over groups
print(round(loss, 3), gf.metrics.average_odds_difference(y, m.predict(X, sensitive_features=S, random_state=0),
                                                         sensitive_features=S["sex"]))
"""


def test_01_readme_example_still_runs():
    namespace = {}
    with warnings.catch_warnings(record=True) as caught:  # also the fit's own warnings (small slices)
        warnings.simplefilter("always")
        exec(compile(README_01_EXAMPLE, "goalfit-0.1-README", "exec"), namespace)  # noqa: S102
    spelled = {str(w.message).split(" is deprecated")[0] for w in caught if issubclass(w.category, FutureWarning)}
    assert {"FairSubdataClassifier(t=...)", "FairSubdataClassifier.measure_", "FairSubdataClassifier.epsilon_",
            "AdaptiveSurrogateClassifier(n_iter=...)"} <= spelled
    assert 0 < namespace["loss"] < 1
