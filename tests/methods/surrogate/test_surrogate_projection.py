"""The over-constrained projection (4): u <= u~ inside U, cvxpy optimum outside, torch back ends."""
import numpy as np
import pytest

from goalfit.methods.surrogate import LinearScorer, Projector, SurrogateSet, make_rate_surrogates

cp = pytest.importorskip("cvxpy")


def _hinge_problem(seed, n=120, p=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = np.where(X @ rng.normal(size=p) + 0.8 * rng.normal(size=n) > 0, 1, -1)
    g = rng.random(n) < 0.5
    sur = SurrogateSet(make_rate_surrogates("hinge", ["a", "b"]), y, {"a": g, "b": ~g})
    return X, y, sur, LinearScorer(X)


def _cvxpy_projection(X, y, sur, target, *, profile=False):
    """Optimal value of (4) by cvxpy; with ``profile=True`` also the surrogate profile u there."""
    w, b = cp.Variable(X.shape[1]), cp.Variable()
    phis = [cp.sum(cp.pos(1 - cp.multiply(y[idx], X[idx] @ w + b))) / len(idx) for idx in sur.index]
    obj = cp.sum([cp.square(cp.pos(phi - t)) for phi, t in zip(phis, target)])
    prob = cp.Problem(cp.Minimize(obj))
    prob.solve(solver=cp.CLARABEL)
    if profile:
        return prob.value, np.array([float(phi.value) for phi in phis])
    return prob.value


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_cvxpy_when_target_is_outside_U(seed):
    X, y, sur, sc = _hinge_problem(seed)
    theta0 = np.zeros(sc.n_params)
    target = 0.1 * sur.values(sc.scores(np.r_[np.linalg.lstsq(X, y, rcond=None)[0], 0.0]))  # too low: outside U
    ref, u_ref = _cvxpy_projection(X, y, sur, target, profile=True)
    assert ref > 1e-4  # really outside U
    out = Projector(sc, sur, solver="lbfgs", max_iter=500)(theta0, target)
    assert out.objective == pytest.approx(ref, rel=1e-3, abs=1e-6)
    excess = np.maximum(out.values - target, 0)
    assert out.objective == pytest.approx(excess @ excess)
    _assert_same_profile(out, target, ref, u_ref)


def _assert_same_profile(out, target, ref, u_ref, slack=1e-6):
    """Compare the profiles u of two solutions of (4), not only their objective values.

    Over the convex set E = {e >= 0 : u~ + e in U} the objective is ||e||^2, so the optimal
    excess e* = (u* - u~)_+ is unique and, by first-order optimality, any feasible e has
    ||e - e*||^2 <= ||e||^2 - ||e*||^2. Hence u is unique (and checked) wherever e* > 0, and
    elsewhere only u <= u~ + |e - e*| holds.
    """
    excess, ref_excess = np.maximum(out.values - target, 0), np.maximum(u_ref - target, 0)
    active = ref_excess > 1e-3
    assert active.sum() >= 2  # most surrogates stay above their targets in these problems
    gap = max(out.objective - ref, 0.0) + slack
    assert np.sum((excess - ref_excess) ** 2) <= gap
    np.testing.assert_allclose(out.values[active], u_ref[active], atol=np.sqrt(gap))
    assert np.all(out.values[~active] <= target[~active] + np.sqrt(gap))


@pytest.mark.parametrize("seed", [0, 1])
def test_interior_target_returns_u_below_target(seed):
    X, y, sur, sc = _hinge_problem(seed)
    theta_a = np.r_[np.linalg.lstsq(X, y, rcond=None)[0], 0.1]
    theta_b = np.r_[0.5 * np.linalg.lstsq(X, y, rcond=None)[0], -0.2]
    # a convex combination of two feasible profiles plus slack lies in U (Observation 1)
    target = 0.5 * (sur.values(sc.scores(theta_a)) + sur.values(sc.scores(theta_b))) + 0.02
    assert _cvxpy_projection(X, y, sur, target) == pytest.approx(0, abs=1e-7)
    out = Projector(sc, sur, max_iter=500)(np.zeros(sc.n_params), target)
    assert out.objective < 1e-8
    assert np.all(out.values <= target + 1e-4)


def test_warm_start_at_a_feasible_point_does_not_move():
    X, y, sur, sc = _hinge_problem(3)
    theta = np.r_[np.linalg.lstsq(X, y, rcond=None)[0], 0.0]
    out = Projector(sc, sur)(theta, sur.values(sc.scores(theta)) + 0.1)
    np.testing.assert_array_equal(out.theta, theta)
    assert out.n_iter == 0


@pytest.mark.parametrize("solver", ["adagrad", "torch_lbfgs"])
def test_torch_solvers_reach_the_cvxpy_optimum(solver):
    pytest.importorskip("torch")
    X, y, sur, sc = _hinge_problem(4)
    target = 0.1 * sur.values(sc.scores(np.r_[np.linalg.lstsq(X, y, rcond=None)[0], 0.0]))
    ref, u_ref = _cvxpy_projection(X, y, sur, target, profile=True)
    max_iter = 3000 if solver == "adagrad" else 500
    proj = Projector(sc, sur, solver=solver, max_iter=max_iter, learning_rate=0.1 if solver == "adagrad" else 1.0)
    out = proj(np.zeros(sc.n_params), target)
    assert out.objective == pytest.approx(ref, rel=2e-2, abs=1e-5)
    _assert_same_profile(out, target, ref, u_ref)
    assert 0 < out.n_iter <= max_iter


@pytest.mark.parametrize("solver", ["adagrad", "torch_lbfgs"])
def test_torch_solvers_count_this_calls_iterations(solver):
    """n_iter is per call: 0 from a start that meets the target (no step taken), and L-BFGS
    does not report torch's running total, which persists across calls in its state."""
    pytest.importorskip("torch")
    X, y, sur, sc = _hinge_problem(3)
    theta = np.r_[np.linalg.lstsq(X, y, rcond=None)[0], 0.0]
    proj = Projector(sc, sur, solver=solver, max_iter=40, learning_rate=0.1 if solver == "adagrad" else 1.0)
    out = proj(theta, sur.values(sc.scores(theta)) + 0.1)
    assert out.n_iter == 0
    np.testing.assert_allclose(out.theta, theta, atol=1e-12)
    low = 0.5 * sur.values(sc.scores(theta))  # outside U: every call runs up to its budget
    first = proj(np.zeros(sc.n_params), low)
    second = proj(np.zeros(sc.n_params), low)
    assert 0 < first.n_iter <= 40 and 0 < second.n_iter <= 40
    if solver == "adagrad":
        assert first.n_iter == second.n_iter == 40


def test_torch_scorer_matches_linear_scorer():
    torch = pytest.importorskip("torch")
    from goalfit.methods.surrogate import TorchScorer

    X, y, sur, sc = _hinge_problem(5)
    ts = TorchScorer(torch.nn.Linear(X.shape[1], 1), X)
    rng = np.random.default_rng(0)
    Theta = rng.normal(size=(6, ts.n_params))
    sc64 = LinearScorer(X, batch_dtype=np.float64)  # the default batches in float32
    np.testing.assert_allclose(ts.scores_many(Theta), sc64.scores_many(Theta), atol=1e-12)
    np.testing.assert_allclose(ts.scores_many(Theta), sc.scores_many(Theta), rtol=0, atol=1e-5)
    g = rng.normal(size=len(y))
    np.testing.assert_allclose(ts.backprop(Theta[0], g), sc.backprop(Theta[0], g), atol=1e-10)
    np.testing.assert_allclose(sur.torch_values(torch.as_tensor(sc.scores(Theta[1]))).numpy(),
                               sur.values(sc.scores(Theta[1])), atol=1e-12)


def test_bad_target():
    X, y, sur, sc = _hinge_problem(0)
    with pytest.raises(ValueError, match="shape"):
        Projector(sc, sur)(np.zeros(sc.n_params), np.zeros(3))
    with pytest.raises(ValueError, match="NaN"):
        Projector(sc, sur)(np.zeros(sc.n_params), np.full(4, np.nan))
    with pytest.raises(ValueError, match="unknown projection solver"):
        Projector(sc, sur, solver="sgd")
