"""Gradient estimates of psi (Alg. 2, Alg. 3, §5.3) on metrics with a known psi."""
import numpy as np
import pytest

from goalfit.goals.blackbox import BlackBoxMetric, gmean_loss
from goalfit.methods.surrogate import (
    BlackBoxProblem, FiniteDifference, LinearInterpolation, LinearScorer, SliceSurrogate, SmoothedTwoPoint,
    SurrogateSet, make_rate_surrogates,
)
from goalfit.methods.surrogate.gradients import IllConditionedWarning

A = np.array([0.7, -0.3, 1.2, 0.4])
B = np.array([2.0, 1.0, -1.5, 3.0])


def _problem(loss="logistic", n=1500, same_sample=True, specs=None):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(n, 3))
    y01 = (X[:, 0] + 0.5 * rng.normal(size=n) > 0.3).astype(int)
    g = X[:, 2] > 0
    sur = SurrogateSet(specs or make_rate_surrogates(loss, ["a", "b"]), 2 * y01 - 1, {"a": g, "b": ~g})
    # a metric whose psi is known: psi(u) = A.u + B.u^2 / 2 (evaluated through the scores)
    a, b = A[:len(sur)], B[:len(sur)]
    metric = BlackBoxMetric(lambda yt, s: float(a @ sur.values(s) + 0.5 * b @ sur.values(s) ** 2),
                            response="score")
    sc = LinearScorer(X)
    theta = np.array([0.8, -0.4, 0.3, -0.2])
    return BlackBoxProblem(sc, sur, metric, sc, y01, same_sample=same_sample), theta


def _error(est, problem, theta, seed):
    g = est.estimate(problem, theta, np.random.default_rng(seed))
    true = A + B * problem.phi(theta)
    return np.linalg.norm(g.gradient - true) / np.linalg.norm(true), g


def test_interpolation_recovers_known_gradient_as_m_grows():
    problem, theta = _problem()
    # the local fit estimates the gradient of psi smoothed at scale sigma: small sigma, small bias
    errs = {m: np.mean([_error(LinearInterpolation(m, sigma=0.01), problem, theta, s)[0] for s in range(4)])
            for m in (6, 50, 1500)}
    assert errs[1500] < 0.005
    assert errs[1500] < errs[50] < errs[6]


def test_interpolation_one_sided_with_intercept_and_diagnostics():
    problem, theta = _problem()
    err, g = _error(LinearInterpolation(1500, sigma=0.01, mode="one_sided"), problem, theta, 0)
    assert err < 0.01
    assert g.condition_number > 1 and np.isfinite(g.condition_number)
    assert 0 <= g.residual < 0.02  # psi is nearly linear at this scale
    assert g.n_metric_calls == 1501


def test_finite_difference_recovers_known_gradient():
    problem, theta = _problem(n=800)
    err, g = _error(FiniteDifference(2000, sigma=0.005), problem, theta, 1)
    assert err < 0.1
    assert g.n_dropped == 0


def test_two_point_recovers_known_gradient():
    problem, theta = _problem(n=800)
    err, _ = _error(SmoothedTwoPoint(1500, sigma1=0.005, sigma2=0.001), problem, theta, 2)
    assert err < 0.1


def test_finite_difference_with_hinge_shifts_hit_targets():
    problem, theta = _problem("hinge")
    from goalfit.methods.surrogate.gradients import shift_scores_to_targets

    f0 = problem.scorer.scores(theta)
    offsets = 0.01 * np.random.default_rng(0).standard_normal((20, 4))
    S, ok = shift_scores_to_targets(problem, f0, offsets)
    assert ok.all()
    np.testing.assert_allclose(problem.surrogates.values(S), problem.phi(theta) + offsets, atol=1e-9)


def test_errors_and_warnings():
    problem, theta = _problem()
    with pytest.raises(ValueError, match="at least K \\+ 1"):
        LinearInterpolation(4, sigma=0.1).estimate(problem, theta, np.random.default_rng(0))
    dup = _problem(specs=[SliceSurrogate("logistic", 1, "a"), SliceSurrogate("logistic", 1, "a")])[0]
    with pytest.warns(IllConditionedWarning, match="ill-conditioned"):
        LinearInterpolation(30, sigma=0.1).estimate(dup, theta, np.random.default_rng(0))
    other = _problem(same_sample=False)[0]
    with pytest.raises(ValueError, match="training sample"):
        FiniteDifference(20).estimate(other, theta, np.random.default_rng(0))
    overlap = _problem(specs=[SliceSurrogate("logistic", 1, "a"), SliceSurrogate("logistic", None, None)])[0]
    with pytest.raises(ValueError, match="disjoint"):
        FiniteDifference(20).estimate(overlap, theta, np.random.default_rng(0))
    g = problem.surrogates
    bad = BlackBoxProblem(problem.scorer, g, gmean_loss(), problem.scorer, problem.y_val, same_sample=True)
    with pytest.raises(ValueError, match="reachable"):  # hinge/logistic targets far below 0
        FiniteDifference(20, sigma=50.0).estimate(bad, theta, np.random.default_rng(0))
