"""The one fit template: every family runs GoalEstimator.fit, so confidence= and margin= reach all five."""
import warnings

import numpy as np
import pytest

import goalfit as gf
from goalfit.fit import GoalEstimator, as_seed, split_rows

pytestmark = pytest.mark.quick  # in the quick subset (README: python -m pytest -m quick)

N_ROWS = 600


def _problem(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N_ROWS, 4))
    g = rng.integers(0, 2, N_ROWS)
    y = (X[:, 0] + 0.8 * g + 0.5 * rng.normal(size=N_ROWS) > 0.3).astype(int)
    return X, y, g


def _family(name, **kw):
    """One estimator of each family, on a budget of a few iterations."""
    dp = [gf.demographic_parity_difference() <= 0.15]
    if name == "plugin":
        # column generation priced by the plug-in oracle: its mixture stays inside the bound on the
        # candidate rows, so 600 rows leave room to certify; the exact programs over the ROC hulls
        # (the binary default, threshold or plug-in oracle) sit on the bound, and the DP of 240 safety
        # rows moves by up to 0.08 from it, past the 0.15 the most cautious candidate can use
        return gf.GoalClassifier(constraints=dp, random_state=0,
                                 method_params={"oracle": "plugin", "exact_binary": False}, **kw)
    if name == "ramp":
        return gf.RampClassifier(constraints=dp, max_iter=3, random_state=0, **kw)
    if name == "subdata":
        return gf.FairSubdataClassifier(constraints=dp, max_iter=5, random_state=0, **kw)
    if name == "surrogate":
        return gf.AdaptiveSurrogateClassifier("error", constraints=dp, max_iter=10, random_state=0, **kw)
    torch = pytest.importorskip("goalfit.torch")
    return torch.LagrangianClassifier(constraints=dp, max_iter=5, batch_size=100, random_state=0, **kw)


FAMILIES = ["plugin", "ramp", "subdata", "surrogate", "lagrangian"]


def _dp_on(est, X, g):
    """Demographic parity difference of the deployed rule's expected predictions, computed by hand."""
    p1 = est.predict_proba(X, sensitive_features=g)[:, 1]
    return abs(p1[g == 0].mean() - p1[g == 1].mean())


@pytest.mark.parametrize("family", FAMILIES)
def test_confidence_certifies_the_goal_in_every_family(family):
    X, y, g = _problem()
    est = _family(family, confidence=0.9)
    assert "fit" not in type(est).__dict__  # the template's fit, not the family's own
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a safety test that no candidate passes says so
        est.fit(X, y, sensitive_features=g)
    assert isinstance(est, GoalEstimator)
    (row,) = est.certification_
    assert est.certified_ is row["passed"] is True  # 600 rows leave room to certify DP <= 0.15 in every family
    assert est.score(X, y, sensitive_features=g) > 0.6  # and not by a constant rule (majority: 0.525)
    assert len(est.safety_path_) >= 1 and est.margins_ is not None and est.margins_[0] >= 0
    # the safety rows, split as the template splits them: stratified by (group, class), seeded by random_state
    _, safe = split_rows(g * 2 + y, 0.4, as_seed(0))
    value = _dp_on(est, X[safe], g[safe])
    assert row["safety_value"] == pytest.approx(value, abs=1e-9)
    # the one-sided upper bound holds above the value measured on the safety rows, and decides the test
    assert row["certified_bound"] >= value - 1e-12
    assert row["passed"] == (row["certified_bound"] <= 0.15 + 1e-12)
    assert row["confidence"] == 0.9
    # evaluate carries the same certified bound
    (c,) = est.evaluate(X, y, sensitive_features=g)["constraints"]
    assert c["certified_bound"] == pytest.approx(row["certified_bound"])


@pytest.mark.parametrize("family", FAMILIES)
def test_margin_tightens_the_goal_in_every_family(family):
    X, y, g = _problem()
    est = _family(family, margin=0.03)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        est.fit(X, y, sensitive_features=g)
    assert est.margins_ == [0.03]
    assert est.problem_.constraints[0].bound == pytest.approx(0.12)
    assert est.certified_ is None and est.certification_ is None


def test_the_template_refuses_a_keyword_the_family_does_not_take():
    X, y, g = _problem()
    with pytest.raises(TypeError, match="unexpected keyword argument 'X_val'.*datasets"):
        gf.RampClassifier(max_iter=1).fit(X, y, X_val=X)
    with pytest.raises(TypeError, match="unexpected keyword argument 'datasets'"):
        gf.GoalClassifier().fit(X, y, datasets={})


@pytest.mark.parametrize("family", ["ramp", "subdata", "surrogate"])
def test_families_that_need_rows_in_memory_refuse_dask_by_name(family):
    da = pytest.importorskip("dask.array")
    X, y, g = _problem()
    est = _family(family)
    with pytest.raises(ValueError, match=f"{type(est).__name__} cannot read a Dask collection.*compute"):
        est.fit(da.from_array(X, chunks=100), y, sensitive_features=g)


def test_typed_details_and_the_read_only_certificates_view():
    from goalfit.methods.ramp.method import RampDetails, RandomizedRule

    X, y, g = _problem()
    m = gf.RampClassifier(constraints=[gf.demographic_parity_difference() <= 0.15], max_iter=2,
                          random_state=0).fit(X, y, sensitive_features=g)
    d = m.result_.details
    assert isinstance(d, RampDetails) and isinstance(d.randomized, RandomizedRule)
    assert m.threshold_ == d.threshold and m.n_iter_ == d.n_iter and list(d.multipliers) == m.constraint_rows_
    # the 0.1 mapping reads the same objects, nested dataclasses included, warns naming the attribute
    # to read instead, and cannot be written
    with pytest.warns(FutureWarning, match=r"certificates\['randomized'\]\['feasible'\].*details\.randomized\.feasible"):
        assert m.result_.certificates["randomized"]["feasible"] == d.randomized.feasible
    with pytest.warns(FutureWarning, match=r"certificates\['coef'\].*use FitResult\.details\.coef"):
        assert m.result_.certificates["coef"] is d.coef
    with pytest.warns(FutureWarning, match="iterating FitResult.certificates"):
        assert set(m.result_.certificates) >= {"threshold", "program"}
    with pytest.raises(TypeError):
        m.result_.certificates["threshold"] = 0.0
    with pytest.raises(KeyError):
        m.result_.certificates["warn_infeasible"]


def test_settings_dataclasses_validate_method_params_once_by_key():
    import dataclasses

    from goalfit.fit import MethodSettings
    from goalfit.methods.ramp.method import RAMP_PARAMS, RampSettings
    from goalfit.methods.surrogate.method import SurrogateSettings

    s = RampSettings.from_params({"inner_solver": "liblinear", "safety_fraction": 0.3}, "ramp")
    assert isinstance(s, MethodSettings) and s.inner_solver == "liblinear" and s.safety_fraction == 0.3
    assert s.params() == dict(RAMP_PARAMS, inner_solver="liblinear")  # every key, defaults filled, no template key
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.inner_solver = "dcd"
    with pytest.raises(ValueError, match=r"method_params\['chooser'\]"):
        RampSettings.from_params({"chooser": "newton"}, "ramp")
    with pytest.raises(ValueError, match="did you mean 'n_perturbations'"):
        SurrogateSettings.from_params({"n_perturbation": 3}, "interpolation")
    with pytest.raises(ValueError, match="safety_fraction"):
        SurrogateSettings.from_params({"safety_fraction": 1.5}, "interpolation")
    # the estimators build them at check_params, before reading any data
    with pytest.raises(ValueError, match="did you mean 'max_multiplier'"):
        gf.RampClassifier(method_params={"max_multipler": 1.0}).check_params()
    m = gf.RampClassifier(max_iter=1, method_params={"safety_fraction": 0.3})
    assert m._settings().safety_fraction == 0.3


def test_spectral_fair_svc_reads_sample_weight_as_repeated_rows():
    pytest.importorskip("cvxpy")
    X, y, g = _problem()
    X, y, g = X[:120], y[:120], g[:120]
    w = np.random.default_rng(1).integers(1, 4, len(y))
    rep = np.repeat(np.arange(len(y)), w)
    a = gf.SpectralFairSVC(max_iter=3).fit(X, y, sensitive_features=g, sample_weight=w)
    b = gf.SpectralFairSVC(max_iter=3).fit(X[rep], y[rep], sensitive_features=g[rep])
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), atol=1e-5)
    c = gf.SpectralFairSVC(max_iter=3).fit(X, y, sensitive_features=g)
    assert np.abs(a.decision_function(X) - c.decision_function(X)).max() > 1e-3  # the weights matter


@pytest.mark.parametrize("family", ["surrogate", "lagrangian"])
def test_half_a_validation_sample_is_refused_not_ignored(family):
    # the template checks the validation keywords of every family that takes them, before fitting
    X, y, g = _problem()
    est = _family(family)
    with pytest.raises(ValueError, match=r"pass both X_val and y_val, or neither \(y_val alone"):
        est.fit(X, y, sensitive_features=g, y_val=y)
    with pytest.raises(ValueError, match=r"pass both X_val and y_val, or neither \(X_val alone"):
        est.fit(X, y, sensitive_features=g, X_val=X)
    with pytest.raises(ValueError, match="sensitive_features_val given without X_val"):
        est.fit(X, y, sensitive_features=g, sensitive_features_val=g)
    with pytest.raises(ValueError, match=f"X_val has {N_ROWS} rows but y_val has {N_ROWS - 1}"):
        est.fit(X, y, sensitive_features=g, X_val=X, y_val=y[:-1])
