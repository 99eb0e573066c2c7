"""The fit template compiles the goals once and hands that compile to the solve."""
import warnings

import numpy as np
import pytest

import goalfit as gf
from goalfit.fit import GoalEstimator
from goalfit.goals import Problem


def _data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    g = np.where(rng.random(n) < 0.4, "a", "b")
    y = (X[:, 0] + 0.5 * (g == "a") + 0.5 * rng.normal(size=n) > 0).astype(int)
    return X, y, g


@pytest.fixture
def compiles(monkeypatch):
    """The number of ``Problem.compile`` calls (a list, one space per call)."""
    seen = []
    original = Problem.compile

    def counting(self, space):
        seen.append(space)
        return original(self, space)

    monkeypatch.setattr(Problem, "compile", counting)
    return seen


def _fit(est, X, y, g):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # small slices of 400 rows
        return est.fit(X, y, sensitive_features=g)


@pytest.mark.parametrize("margin, expected", [(None, 1), (0.01, 2)])
def test_one_compile_per_fit(compiles, margin, expected):
    """Once for the check and the solve; with a margin once more, untightened, for the
    identities check (check_tightenable)."""
    X, y, g = _data()
    DP = gf.demographic_parity_difference() <= 0.1
    _fit(gf.RampClassifier("error", [DP], max_iter=2, margin=margin, random_state=0), X, y, g)
    assert len(compiles) == expected
    del compiles[:]
    _fit(gf.BlackBoxPostShiftClassifier("gmean", [DP]), X, y, g)
    assert len(compiles) == 1


@pytest.mark.parametrize("kw, expected", [({}, 1), ({"cv": 3}, 1), ({"margin": 0.01}, 2)])
def test_goal_classifier_compiles_once(compiles, kw, expected):
    """GoalClassifier has its own candidate hook (_fit_candidate): in-sample and cross-fitted outer rows
    share the training space, so the template's compile is the solve's; a margin adds the untightened one."""
    X, y, g = _data()
    _fit(gf.GoalClassifier(constraints=[gf.demographic_parity_difference() <= 0.1], random_state=0, **kw), X, y, g)
    assert len(compiles) == expected


def test_the_reused_compile_fits_what_a_fresh_one_fits(monkeypatch):
    """The same rule, bounds and training values as compiling anew for the solve (the template's
    behaviour before it compiled once)."""
    X, y, g = _data(seed=1)
    make = lambda: gf.RampClassifier("error", [gf.demographic_parity_difference() <= 0.05], max_iter=3,  # noqa: E731
                                     margin=0.02, random_state=0)
    once = _fit(make(), X, y, g)

    def fresh(self, ctx, constraints, space):
        compiled = type(ctx.problem)(ctx.problem.objective, constraints).compile(space)
        ctx.method.check(compiled)
        return compiled

    monkeypatch.setattr(GoalEstimator, "_compile_goals", fresh)
    again = _fit(make(), X, y, g)
    np.testing.assert_array_equal(once.problem_.b, again.problem_.b)
    np.testing.assert_array_equal(once.problem_.A, again.problem_.A)
    np.testing.assert_array_equal(once.predict(X), again.predict(X))
    np.testing.assert_array_equal(once.result_.confusion, again.result_.confusion)
    assert once.max_violation_ == again.max_violation_
    # the margin tightened the bound the solve saw: b = 0.05 - 0.02 on every DP row
    np.testing.assert_allclose(once.problem_.b, 0.03, atol=1e-15)
