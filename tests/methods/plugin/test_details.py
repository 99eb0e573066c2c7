"""The plug-in family's typed seam: ``PluginSettings`` in, ``PluginDetails`` out.

References: the exact optima over mixtures of every per-cell threshold rule (the class the
threshold oracle minimizes over exactly), by LP (``linear_optimum``), by the exact scalar search
of ``recall_optimum`` (H-mean) and by enumeration of the rule combinations (the F-measure, a
ratio, is minimized at a vertex); all from ``tests/methods/plugin/test_solvers.py``.
"""
import itertools
import warnings

import numpy as np
import pytest

import goalfit as gf
from goalfit.fit import DetailsView
from goalfit.methods.plugin import (BASELINES, METHODS, PluginDetails, PluginMethod, PluginOracle, PluginSettings,
                                    StopReason, ThresholdOracle, solve, split_frank_wolfe)
from tests.methods.plugin.test_solvers import (calibrated, cell_rules, hmean, linear_optimum, recall_optimum,
                                               uncalibrated)

DP = gf.demographic_parity_difference() <= 0.02


# ------------------------------------------------------------------ certified gaps
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("method,kw", [("column_generation", {"tol": 1e-7}), ("split_frank_wolfe", {"tol": 1e-4}),
                                       ("column_generation", {"tol": 1e-7, "exact_binary": False}),
                                       ("split_frank_wolfe", {"tol": 1e-4, "exact_binary": False}),
                                       ("con_gda", {"tol": 1e-4, "max_iter": 3000})])
def test_certified_gap_bounds_the_suboptimality_of_a_linear_goal(seed, method, kw):
    """Threshold oracle (exact over per-cell threshold rules): the lower bound is below the LP
    optimum over all mixtures of those rules, the gap above the true suboptimality, and at most
    ``tol`` when the method says it converged or solved the ROC hulls' program (the default
    with two classes; ``exact_binary=False``: pricing or Alg. 5's iterations)."""
    P, y, cells, space = uncalibrated(seed)
    cp = gf.Problem("error", [DP]).compile(space)
    res = solve(cp, ThresholdOracle(P, y, cells, space), method, **kw)
    ref = linear_optimum(cell_rules(P, y, cells, space), cp)
    d = res.details
    value = cp.objective.value(res.confusion)
    assert isinstance(d, PluginDetails) and d.oracle == "threshold" and res.feasible
    assert d.lower_bound is not None and d.lower_bound <= ref + 1e-9
    assert d.gap == pytest.approx(value - d.lower_bound, abs=1e-15)
    assert d.gap >= value - ref - 1e-9 >= -2e-9
    if d.stop in (StopReason.CONVERGED, StopReason.EXACT):
        assert d.gap <= kw["tol"] * max(1.0, abs(value)) + 1e-9
    exact = kw.get("exact_binary", True) and method != "con_gda"
    assert d.stop in ((StopReason.EXACT,) if exact else (StopReason.CONVERGED, StopReason.STALLED, StopReason.MAX_ITER))


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("method,goals", [("frank_wolfe", []), ("ellipsoid", []), ("split_frank_wolfe", [DP])])
def test_certified_gap_bounds_the_suboptimality_of_hmean(seed, method, goals):
    """H-mean (convex): the certified lower bound is below the exact optimum over the mixtures
    of threshold rules and the reported gap at least the returned rule's distance to it."""
    P, y, cells, space = calibrated(seed)
    cp = gf.Problem("hmean", goals).compile(space)
    tol = 1e-3 if method == "ellipsoid" else 1e-4
    res = solve(cp, ThresholdOracle(P, y, cells, space), method, tol=tol)
    ref = recall_optimum(cell_rules(P, y, cells, space), space, hmean, cp.A, cp.b)
    d, value = res.details, cp.objective.value(res.confusion)
    assert d.lower_bound is not None and d.lower_bound <= ref + 1e-7
    assert d.gap is not None and d.gap >= value - ref - 1e-7
    if d.stop == StopReason.CONVERGED:
        assert d.gap <= tol + 1e-9


@pytest.mark.parametrize("seed", range(3))
def test_bisection_lower_bound_is_below_the_best_rule(seed):
    """F1 loss (a ratio, minimized at a combination of one threshold rule per cell): the
    bisection's certified level is below the enumerated optimum, and its gap (at most the
    bracket's length when it converged) above the returned rule's suboptimality."""
    P, y, cells, space = uncalibrated(seed)
    cp = gf.Problem("f1").compile(space)
    res = solve(cp, ThresholdOracle(P, y, cells, space), "bisection", tol=1e-6)
    sets = cell_rules(P, y, cells, space)
    ref = min(cp.objective.value((a + b).reshape(space.shape)) for a, b in itertools.product(*sets))
    d, value = res.details, cp.objective.value(res.confusion)
    assert d.stop == StopReason.CONVERGED and d.iterations == int(res.message.split("after ")[1].split()[0])
    assert d.lower_bound <= ref + 1e-12 and d.gap >= value - ref - 1e-12
    assert d.gap <= 1e-6 + 1e-12


def test_an_inexact_oracle_certifies_nothing():
    """The plug-in oracle on uncalibrated probabilities, pricing or iterating
    (``exact_binary=False``): no lower bound, no gap, whatever the stop. The ROC hulls' LP (the
    default with two classes) reads the sample's labels, not the oracle's minimization: its
    bound holds over every mixture of threshold rules (the LP reference)."""
    P, y, cells, space = uncalibrated(0)
    cp = gf.Problem("error", [DP]).compile(space)
    ref = linear_optimum(cell_rules(P, y, cells, space), cp)
    for method in ("column_generation", "split_frank_wolfe"):
        d = solve(cp, PluginOracle(P, y, cells, space), method, exact_binary=False).details
        assert d.oracle == "plugin" and d.lower_bound is None and d.gap is None
        d = solve(cp, PluginOracle(P, y, cells, space), method).details
        assert d.stop == StopReason.EXACT and d.lower_bound == pytest.approx(ref, abs=1e-9) and d.gap <= 1e-9


# ------------------------------------------------------------------ details of every method
def _goals(name):
    if name in ("bisection",):
        return "f1", []
    if name == "con_bisection":
        return "f1", [DP]
    if name in ("frank_wolfe", "gda", "ellipsoid"):
        return "hmean", []
    if name == "con_ellipsoid":
        return "hmean", [DP]
    if name in BASELINES:
        return "error", []
    return "error", [DP]


@pytest.mark.parametrize("name", [*METHODS, *BASELINES])
def test_every_plugin_method_returns_typed_details(name):
    P, y, cells, space = calibrated(1)
    objective, goals = _goals(name)
    cp = gf.Problem(objective, goals).compile(space)
    oracle = ThresholdOracle(P, y, cells, space)
    budget = {"max_iter": 60} if name in ("gda", "ellipsoid", "con_ellipsoid") else {}
    res = PluginMethod(name).solve(None, cp, {"oracle": oracle, **budget})
    d = res.details
    assert isinstance(d, PluginDetails) and isinstance(d.stop, StopReason)
    assert d.oracle == "threshold" and isinstance(d.iterations, int) and d.iterations >= 0
    if name in BASELINES:
        assert d.stop == "baseline" and d.iterations == 0 and d.gap is None
    else:
        assert d.stop != "baseline" and d.tol is not None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        assert isinstance(res.certificates, DetailsView) and res.certificates["iterations"] == d.iterations


def test_stop_reasons_and_iterations_match_the_run():
    P, y, cells, space = calibrated(0)
    cp = gf.Problem("error", [DP]).compile(space)
    full = solve(cp, ThresholdOracle(P, y, cells, space), "con_gda", max_iter=20, tol=0.0)
    assert full.details.stop == StopReason.MAX_ITER and full.details.iterations == 20
    assert full.message == "20 iterations"
    cg = solve(cp, ThresholdOracle(P, y, cells, space), "column_generation", exact_binary=False)
    assert cg.details.stop == "converged" and f"after {cg.details.iterations} rounds" in cg.message
    hulls = solve(cp, ThresholdOracle(P, y, cells, space), "column_generation")
    assert hulls.details.stop == "exact" and hulls.details.iterations == 0 and hulls.message.startswith("exact")
    free = solve(gf.Problem("error").compile(space), ThresholdOracle(P, y, cells, space), "column_generation")
    assert free.details.stop == "exact" and free.details.iterations == 0 and free.details.gap == pytest.approx(0, abs=1e-15)


def test_coarse_to_fine_reports_its_subsample_and_polish():
    from tests.methods.plugin.test_coarse_to_fine import _multiclass

    P, y, cells, space = _multiclass(2400)
    cp = gf.Problem("hmean", [DP]).compile(space)
    res = split_frank_wolfe(cp, PluginOracle(P, y, cells, space), subsample=400, coarse_iter=30)
    d = res.details
    assert d.coarse_subsample == 400 and d.iterations == 30 and d.polish_rounds >= 1
    if d.stop == StopReason.MAX_ITER:
        assert d.polish_rounds == 50 and "(50 polishing rounds)" in res.message
    else:
        assert d.stop in (StopReason.CONVERGED, StopReason.STALLED)
        assert f"after {d.polish_rounds} polishing rounds)" in res.message
    assert d.gap is None and d.lower_bound is None  # the plug-in oracle certifies nothing


# ------------------------------------------------------------------ settings
def test_plugin_settings_defaults_and_knobs():
    s = PluginSettings.from_params(None, "auto")
    assert (s.oracle, s.cv_model, s.joint_model, s.safety_fraction, s.params()) == (
        "auto", "average", "factored", 0.4, {})
    s = PluginSettings.from_params({"oracle": "plugin", "max_iter": 50, "safety_fraction": 0.25,
                                    "cv_model": "refit"}, "split_frank_wolfe")
    assert s.oracle == "plugin" and s.cv_model == "refit" and s.safety_fraction == 0.25
    assert s.params() == {"max_iter": 50}
    assert s.options == {"oracle": "plugin", "cv_model": "refit", "joint_model": "factored", "safety_fraction": 0.25}
    from goalfit.estimators.goal_classifier import FIT_OPTIONS
    from goalfit.estimators.joint import JOINT_MODELS

    assert set(FIT_OPTIONS) == {"oracle", "cv_model", "joint_model", "safety_fraction"}
    assert JOINT_MODELS == ("product", "factored")


@pytest.mark.parametrize("params,method,error,match", [
    ({"max_iters": 5}, "con_gda", ValueError, r"unknown method_params key 'max_iters'.*did you mean 'max_iter'"),
    ({"zeta": 1.0}, "con_gda", ValueError, r"unknown method_params key 'zeta' for method 'con_gda'"),
    ({"oracle": "exact"}, "auto", ValueError,
     r"method_params\['oracle'\] must be one of \['auto', 'plugin', 'threshold', 'refit'\], got 'exact'"),
    ({"cv_model": "mean"}, "auto", ValueError, r"method_params\['cv_model'\] must be one of \['average', 'refit'\]"),
    ({"joint_model": "joint"}, "auto", ValueError, r"method_params\['joint_model'\] must be one of"),
    ({"safety_fraction": 1.5}, "auto", ValueError, r"method_params\['safety_fraction'\]"),
    ([("max_iter", 3)], "auto", TypeError, "method_params must be a dict"),
])
def test_plugin_settings_refuse_bad_params(params, method, error, match):
    with pytest.raises(error, match=match):
        PluginSettings.from_params(params, method)


def test_the_estimator_checks_its_settings_before_any_data():
    with pytest.raises(ValueError, match=r"did you mean the parameter 'group_blind' of GoalClassifier"):
        gf.GoalClassifier(method_params={"groupblind": True}).check_params()
    with pytest.raises(ValueError, match=r"method_params\['oracle'\] must be one of"):
        gf.GoalClassifier(method_params={"oracle": "exact"}).check_params()
    assert isinstance(gf.GoalClassifier(method_params={"tol": 1e-3})._settings(), PluginSettings)


# ------------------------------------------------------------------ the estimator's attributes
def test_goal_classifier_exposes_the_details():
    rng = np.random.default_rng(0)
    X, s = rng.normal(size=(300, 3)), rng.choice(["a", "b"], 300)
    y = (X[:, 0] + 0.5 * (s == "b") + 0.5 * rng.normal(size=300) > 0).astype(int)
    m = gf.GoalClassifier(constraints=[gf.demographic_parity_difference() <= 0.05], random_state=0)
    m.fit(X, y, sensitive_features=s)
    d = m.result_.details
    assert m.oracle_ == d.oracle == "threshold"  # "auto" on a binary problem
    assert (m.n_iter_, m.stop_reason_, m.optimality_gap_) == (d.iterations, d.stop, d.gap)
    assert m.stop_reason_ == "exact" and -1e-12 <= m.optimality_gap_ <= 1e-9  # the ROC hulls' LP
    new = m.with_goals([gf.demographic_parity_difference() <= 0.01])
    assert new.n_iter_ == new.result_.details.iterations and new.optimality_gap_ == new.result_.details.gap
    assert m.result_.details is d and new.result_ is not m.result_  # the original is unchanged
    # auto resolves with the oracle in fit and in with_goals alike, and method_ names the method that
    # ran: min-max recall without constraints is SplitFW (the ROC hulls' epigraph LP) with the threshold
    # oracle, the ellipsoid without an oracle
    mm = m.with_goals([], objective="minmax_recall")
    fresh = gf.GoalClassifier(objective="minmax_recall", random_state=0).fit(X, y, sensitive_features=s)
    assert mm.method_ == mm.result_.method == fresh.method_ == "split_frank_wolfe"
    plug = gf.GoalClassifier(constraints=[gf.demographic_parity_difference() <= 0.05],
                             method_params={"oracle": "plugin", "exact_binary": False},
                             random_state=0).fit(X, y, sensitive_features=s)
    assert plug.oracle_ == "plugin" and plug.optimality_gap_ is None
