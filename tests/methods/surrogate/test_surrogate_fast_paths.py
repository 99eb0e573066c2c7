"""The fast paths of the adaptive-surrogate method against the direct computations.

* batched scoring of many perturbed models (one float32 matrix product) == one model at a time
  in float64;
* surrogate values through the dense averaging matrix and in-place losses == the per-slice
  means of the pointwise losses; the score vector-Jacobian product == its explicit sum;
* confusion metrics counted in float32 == the float64 counts; the recall metrics (G-mean,
  H-mean, Q-mean) at many confusion tensors at once == one at a time;
* the sparse residual about the column modes (one-hot data): X exactly, and the perturbed
  models' scores and an Alg. 3 gradient estimate equal to the dense product's;
* the projection's reuse of the last model's scores: the same result as recomputing, in fewer
  products;
* the projection's step-size stopping rule (``rtol``): the same objective as the full
  L-BFGS-B run and the cvxpy optimum to a stated gap, in fewer iterations.
"""
import numpy as np
import pytest
import scipy.sparse as sp

from goalfit.goals.blackbox import gmean_loss, macro_f1_over_groups_loss
from goalfit.methods.surrogate import LinearScorer, Projector, SurrogateSet, make_rate_surrogates
from goalfit.methods.surrogate.models import column_modes, sparse_residual
from goalfit.methods.surrogate.surrogates import LOSSES, LpLoss, SigmoidLoss


@pytest.fixture
def data():
    rng = np.random.default_rng(7)
    n, p = 300, 6
    X = rng.normal(size=(n, p))
    y = np.where(X @ rng.normal(size=p) + rng.normal(size=n) > 0.3, 1, -1)
    g = rng.random(n) < 0.4
    h = rng.random(n) < 0.7  # overlaps g
    return rng, X, y, {"g": g, "h": h, "all": np.ones(n, bool)}


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_batched_scores_equal_per_model_scores(data, sparse, fit_intercept):
    rng, X, y, _ = data
    Xs = sp.csr_matrix(np.where(np.abs(X) > 0.8, X, 0.0)) if sparse else X
    Theta = rng.normal(size=(9, X.shape[1] + int(fit_intercept)))
    for dtype, rtol in ((np.float32, 2e-6), (np.float64, 1e-13)):
        sc = LinearScorer(Xs, fit_intercept, batch_dtype=dtype)
        S = sc.scores_many(Theta)
        ref = np.stack([sc.scores(t) for t in Theta])  # one model at a time, float64
        assert S.dtype == dtype and S.shape == (9, X.shape[0]) and (S.flags.c_contiguous or S.flags.f_contiguous)
        scale = np.abs(Xs).sum(axis=1).max() * np.abs(Theta).max() + 1
        np.testing.assert_allclose(S, ref, rtol=0, atol=rtol * scale)
        np.testing.assert_allclose(sc.with_data(Xs[:50]).scores_many(Theta), S[:, :50], rtol=0, atol=rtol * scale)


def test_batch_dtype_is_checked(data):
    _, X, _, _ = data
    with pytest.raises(ValueError, match="batch_dtype"):
        LinearScorer(X, batch_dtype=np.int64)


@pytest.mark.parametrize("loss", ["hinge", "logistic", SigmoidLoss(1.5), LpLoss(2.0), LpLoss(1.5)])
def test_in_place_loss_values_equal_values(data, loss):
    rng = data[0]
    loss = LOSSES[loss]() if isinstance(loss, str) else loss
    z = rng.normal(scale=3, size=(4, 50))
    for dtype in (np.float64, np.float32):
        zz = z.astype(dtype)
        ref = loss.value(zz.astype(float))
        out = loss.value_(zz)
        assert out is zz or np.shares_memory(out, zz)
        np.testing.assert_allclose(out, ref, rtol=1e-6 if dtype == np.float32 else 1e-15, atol=1e-7)


def _per_slice_values(sur, loss, s):
    """The definition: the mean of the pointwise loss of the margins over each slice."""
    return np.array([np.mean(loss.value(sur.y[idx] * s[idx])) for idx in sur.index])


@pytest.mark.parametrize("groups", [["g", "h", "all"], None])  # K = 6 (one GEMM), K = 2 (matrix-vector)
@pytest.mark.parametrize("loss", ["hinge", "logistic", SigmoidLoss(1.5), LpLoss(2.0)])
def test_surrogate_values_and_vjp_equal_per_slice_sums(data, loss, groups):
    rng, X, y, masks = data
    sur = SurrogateSet(make_rate_surrogates(loss, groups), y, masks)  # overlapping slices
    L = sur.losses[0]
    S = rng.normal(size=(5, len(y)))
    ref = np.stack([_per_slice_values(sur, L, s) for s in S])
    np.testing.assert_allclose(sur.values(S), ref, rtol=1e-13)
    np.testing.assert_allclose(sur.values(S[2]), ref[2], rtol=1e-13)
    np.testing.assert_allclose(sur.values(S.astype(np.float32)), ref, rtol=2e-5, atol=1e-6)
    # vector-Jacobian product: sum_k w_k / |S_k| * 1[i in S_k] * y_i * l'(y_i s_i)
    w = rng.normal(size=len(sur))
    s = S[0]
    ref_g = np.zeros(len(y))
    for wk, idx in zip(w, sur.index):
        ref_g[idx] += wk / len(idx) * y[idx] * L.derivative(y[idx] * s[idx])
    np.testing.assert_allclose(sur.score_vjp(s, w), ref_g, rtol=1e-12, atol=1e-15)


def test_non_finite_scores_raise(data):
    rng, X, y, masks = data
    sur = SurrogateSet(make_rate_surrogates("hinge", ["g"]), y, masks)
    S = rng.normal(size=(3, len(y))).astype(np.float32)
    S[1, np.flatnonzero(masks["g"])[0]] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        sur.values(S)


@pytest.mark.parametrize("metric", [gmean_loss, macro_f1_over_groups_loss])
def test_confusion_metric_float32_counts_equal_float64(data, metric):
    rng, X, y, masks = data
    y01 = (y > 0).astype(int)
    groups = masks["g"].astype(int)
    S = rng.normal(size=(7, len(y)))
    m = metric()
    ref = np.array([m(y01, s, groups) for s in S])  # one row at a time, float64
    np.testing.assert_allclose(m.evaluate_many(y01, S, groups), ref, rtol=1e-14)
    S32 = S.astype(np.float32)
    same_sign = np.all((S32 > 0) == (S > 0))
    assert same_sign
    np.testing.assert_allclose(m.evaluate_many(y01, S32, groups), ref, rtol=1e-14)
    tp = np.sum((S[0] > 0) & (y01 == 1)) / np.sum(y01 == 1)
    tn = np.sum((S[0] <= 0) & (y01 == 0)) / np.sum(y01 == 0)
    if metric is gmean_loss:
        assert ref[0] == pytest.approx(1 - np.sqrt(tp * tn), abs=1e-14)


cp = pytest.importorskip("cvxpy")


@pytest.mark.parametrize("seed", range(6))
def test_step_size_tolerance_projection_against_full_lbfgs_and_cvxpy(seed):
    """The algorithm's situation: start on the frontier of U, target one surrogate step below it.

    Against the cvxpy optimum of (4): the full L-BFGS-B run (``rtol=0``, the previous
    computation) is within 1e-4 of the squared step ``f0``; ``rtol=1e-5`` (the default of
    Alg. 1) within 2e-3 of ``f0``, its profile u within 2e-3 of the optimal one (steps here are
    0.025-0.1 per surrogate), in fewer iterations.
    """
    from tests.methods.surrogate.test_surrogate_projection import _cvxpy_projection, _hinge_problem

    X, y, sur, sc = _hinge_problem(seed, n=400, p=5)
    theta0 = np.r_[np.linalg.lstsq(X, y, rcond=None)[0], 0.0]
    start = Projector(sc, sur, max_iter=300)(theta0, 0.5 * sur.values(sc.scores(theta0)))  # on the frontier
    target = np.maximum(start.values - 0.05 * np.array([1.0, 2.0, 0.5, 1.5]), 0.0)
    ref, u_ref = _cvxpy_projection(X, y, sur, target, profile=True)
    f0 = np.sum(np.maximum(start.values - target, 0.0) ** 2)
    full = Projector(sc, sur)(start.theta, target)
    fast = Projector(sc, sur, rtol=1e-5)(start.theta, target)
    assert ref - 1e-9 <= full.objective <= ref + 1e-4 * f0
    assert ref - 1e-9 <= fast.objective <= ref + 2e-3 * f0
    assert fast.objective <= f0
    np.testing.assert_allclose(fast.values, u_ref, atol=2e-3)
    assert fast.n_iter < full.n_iter


def test_projection_tolerance_is_checked(data):
    rng, X, y, masks = data
    sur = SurrogateSet(make_rate_surrogates("hinge"), y)
    with pytest.raises(ValueError, match="rtol"):
        Projector(LinearScorer(X), sur, rtol=-1.0)


@pytest.mark.parametrize("sparse", [False, True])
def test_float32_single_model_products_match_float64(data, sparse):
    """``dtype=float32``: one model's scores and gradient from the float32 ``[X, 1]`` equal the
    float64 products to float32 rounding."""
    rng, X, y, _ = data
    Xs = sp.csr_matrix(np.where(np.abs(X) > 0.8, X, 0.0)) if sparse else X
    sc64, sc32 = LinearScorer(Xs), LinearScorer(Xs, dtype=np.float32)
    theta, g = rng.normal(size=sc64.n_params), rng.normal(size=len(y))
    s32, b32 = sc32.scores(theta), sc32.backprop(theta, g)
    assert s32.dtype == b32.dtype == np.float64
    np.testing.assert_allclose(s32, sc64.scores(theta), rtol=0, atol=2e-6 * (np.abs(theta).sum() + 1))
    np.testing.assert_allclose(b32, sc64.backprop(theta, g), rtol=0, atol=2e-6 * np.abs(g).sum())
    # the float64 gradient is X^T g and sum(g) (the intercept), twice in a row (X^T is built once)
    for _ in range(2):
        np.testing.assert_allclose(sc64.backprop(theta, g), np.r_[np.asarray(Xs.T @ g).ravel(), g.sum()],
                                   rtol=1e-12, atol=1e-12)


def test_classifier_dtype(data):
    from goalfit import AdaptiveSurrogateClassifier

    rng, X, y, _ = data
    kw = dict(max_iter=3, random_state=0)
    with pytest.raises(ValueError, match="dtype"):
        AdaptiveSurrogateClassifier(method_params={"dtype": "float16", "n_perturbations": 20}, **kw).fit(X, y)
    # only the precision differs (same projection stopping rule): the same path up to rounding,
    # which Alg. 1 amplifies through the gradient regression; equal metrics on seeds 0-2 here
    a = AdaptiveSurrogateClassifier(method_params={"dtype": "float64", "n_perturbations": 20}, **kw).fit(X, y)
    b = AdaptiveSurrogateClassifier(method_params={"dtype": "float32", "n_perturbations": 20}, **kw).fit(X, y)
    assert a.decision_function(X).dtype == b.decision_function(X).dtype == np.float64
    assert abs(a.validation_metric_ - b.validation_metric_) <= 0.01


def test_overwrite_gives_the_same_values(data):
    rng, X, y, masks = data
    for names in (None, ["g", "h"]):
        sur = SurrogateSet(make_rate_surrogates("hinge", names), y, masks if names else None)
        S = rng.normal(size=(4, len(y))).astype(np.float32)
        ref = sur.values(S.copy())
        np.testing.assert_array_equal(sur.values(S, overwrite=True), ref)


def _one_hot_data(rng, n=400):
    """Standardized one-hot categories plus two numeric columns (the shape of one-hot Adult)."""
    ks = (3, 5, 4, 6, 3)
    cats = [rng.choice(k, n, p=np.r_[0.85, np.full(k - 1, 0.15 / (k - 1))]) for k in ks]
    O = np.hstack([np.eye(k)[c] for k, c in zip(ks, cats)])
    O = (O - O.mean(axis=0)) / O.std(axis=0)
    X = np.hstack([O, rng.normal(size=(n, 1)), rng.integers(0, 3, (n, 1)) * (rng.random((n, 1)) < 0.1)])
    y = np.where(X @ rng.normal(size=X.shape[1]) + rng.normal(size=n) > 0, 1, -1)
    return X, y


def test_column_modes_and_sparse_residual():
    rng = np.random.default_rng(3)
    X, _ = _one_hot_data(rng)
    X[:, 0] = np.repeat([2.0, -1.0, 5.0, 7.0], 100)  # a four-way tie: the smallest value wins
    for n_sample in (1024, len(X)):  # every row sampled: the exact modes
        c = column_modes(X, n_sample=n_sample)
        for j in range(X.shape[1]):
            vals, counts = np.unique(X[:, j], return_counts=True)
            assert c[j] == vals[np.argmax(counts)]
    assert c[0] == -1.0
    R = sparse_residual(X, c)
    np.testing.assert_array_equal(R.toarray(), X - c)
    cols = np.array([1, 4, 5, X.shape[1] - 1])
    np.testing.assert_array_equal(sparse_residual(X, c, np.float32, cols).toarray(), (X - c)[:, cols].astype(np.float32))
    assert R.nnz == np.count_nonzero(X != c) < 0.15 * X.size
    # a strided sample finds the majority value of a large column
    big = np.where(rng.random(50_000) < 0.8, 0.25, rng.normal(size=50_000))[:, None]
    assert column_modes(big)[0] == 0.25


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_sparse_residual_scores_equal_dense_product(fit_intercept):
    """The residual form ``(X - 1 c^T) w + (c . w + b)`` == ``[X, 1] theta``, per model in float64."""
    rng = np.random.default_rng(11)
    X, _ = _one_hot_data(rng)
    d = X.shape[1] + int(fit_intercept)
    Theta = rng.normal(size=(7, d))
    plain = LinearScorer(X, fit_intercept, batch_dtype=np.float64, batch_sparse=False)
    assert plain.batch_form == "dense"
    ref = np.stack([plain.scores(t) for t in Theta])
    scale = np.abs(np.c_[X, np.ones(len(X))]).sum(axis=1).max() * np.abs(Theta).max()
    for dtype, tol in ((np.float64, 1e-14), (np.float32, 2e-7)):
        fast = LinearScorer(X, fit_intercept, batch_dtype=dtype)  # "auto": the data is sparse about its modes
        assert fast.batch_form == "residual"
        S = fast.scores_many(Theta)
        assert S.dtype == dtype and S.shape == ref.shape
        np.testing.assert_allclose(S, ref, rtol=0, atol=tol * scale)
        np.testing.assert_allclose(LinearScorer(X, fit_intercept, batch_dtype=dtype, batch_sparse=False)
                                   .scores_many(Theta), ref, rtol=0, atol=tol * scale)
        np.testing.assert_allclose(fast.with_data(X[:30]).scores_many(Theta), ref[:, :30], rtol=0, atol=tol * scale)
    op = fast.batch_operator
    assert list(op.dense_columns) == [X.shape[1] - 2] and op.dense.shape == (len(X), 2)  # the Gaussian column (+ offsets)
    assert list(op.sparse_columns) == [j for j in range(X.shape[1]) if j != X.shape[1] - 2]
    assert op.sparse.shape == (len(X), X.shape[1] - 1) and op.sparse.nnz < 0.15 * op.sparse.shape[0] * op.sparse.shape[1]
    np.testing.assert_array_equal(op.center, column_modes(X))
    # Gaussian features: the dense product ("auto"); forced residual form: all columns dense
    G = rng.normal(size=(50, 4))
    assert LinearScorer(G, fit_intercept).batch_form == "dense"
    forced = LinearScorer(G, fit_intercept, batch_dtype=np.float64, batch_sparse=True)
    assert forced.batch_form == "residual" and forced.batch_operator.sparse.shape == (50, 0)
    Tg = rng.normal(size=(3, 4 + int(fit_intercept)))
    np.testing.assert_allclose(forced.scores_many(Tg), np.stack([forced.scores(t) for t in Tg]), rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="batch_sparse"):
        LinearScorer(X, batch_sparse="yes")


def test_gradient_estimate_through_sparse_residual_equals_dense():
    """Alg. 3 on one-hot data, same random draws: the residual form gives the same H, M and g."""
    from goalfit.goals.blackbox import gmean_loss as metric
    from goalfit.methods.surrogate import BlackBoxProblem, LinearInterpolation

    rng = np.random.default_rng(5)
    X, y = _one_hot_data(rng, n=600)
    Xv, yv = _one_hot_data(rng, n=300)
    theta = rng.normal(scale=0.3, size=X.shape[1] + 1)
    sur = SurrogateSet(make_rate_surrogates("hinge"), y)
    est = {}
    for form in (False, "auto"):
        sc = LinearScorer(X, batch_dtype=np.float64, batch_sparse=form)
        problem = BlackBoxProblem(sc, sur, metric(), sc.with_data(Xv), (yv > 0).astype(int))
        est[form] = LinearInterpolation(40, sigma=0.5).estimate(problem, theta, np.random.default_rng(0))
        assert sc.batch_form == ("dense" if form is False else "residual")
    np.testing.assert_allclose(est["auto"].gradient, est[False].gradient, rtol=1e-9, atol=1e-12)
    assert est["auto"].residual == pytest.approx(est[False].residual, rel=1e-9)
    assert np.linalg.norm(est[False].gradient) > 0.1  # a real estimate, not zeros


def test_projection_reuses_the_last_model_exactly():
    """Warm-started projections in sequence (Alg. 1): the same thetas as recomputing every
    objective, with fewer score products."""
    from scipy.optimize import minimize

    from goalfit.methods.surrogate.projection import projection_objective
    from tests.methods.surrogate.test_surrogate_projection import _hinge_problem

    X, y, sur, sc = _hinge_problem(2, n=300, p=4)
    calls = {"n": 0}

    class Counting(LinearScorer):
        def scores(self, theta):
            calls["n"] += 1
            return super().scores(theta)

    proj = Projector(Counting(X), sur, rtol=1e-5)
    theta = np.zeros(sc.n_params)
    evals = 0
    for step in range(4):
        u = sur.values(sc.scores(theta))
        target = 0.3 * u  # outside U: L-BFGS-B runs several iterations
        out = proj(theta, target)
        # the plain computation: every objective evaluated from scratch
        f0 = projection_objective(sc, sur, theta, target)[0]
        ref = minimize(lambda th: projection_objective(sc, sur, th, target), theta, jac=True, method="L-BFGS-B",
                       options={"maxiter": 100, "ftol": max(1e-5 * f0 / max(f0, 1.0), 1e-12), "gtol": 1e-9})
        np.testing.assert_array_equal(out.theta, ref.x)
        np.testing.assert_array_equal(out.values, sur.values(sc.scores(ref.x)))
        assert out.objective > 0 and out.n_iter == ref.nit >= 2
        evals += ref.nfev + 2  # f0, L-BFGS-B's evaluations, the final profile
        theta = out.theta
    assert calls["n"] <= evals - 4 - 3  # L-BFGS-B's first point and, after the first, f0 reused


@pytest.mark.parametrize("name", ["GMeanLoss", "HMeanLoss", "QMeanLoss"])
def test_recall_metrics_at_many_tensors_equal_one_at_a_time(name):
    import pandas as pd

    from goalfit.confusion import ConfusionSpace
    from goalfit.goals import metrics

    rng = np.random.default_rng(1)
    y = rng.integers(0, 3, 200)
    space = ConfusionSpace.from_codes(y, np.zeros(200, dtype=int), np.arange(3), pd.DataFrame(index=pd.RangeIndex(1)))
    bound = getattr(metrics, name)().bind(space)
    Cs = rng.random((9,) + space.shape)
    Cs /= Cs.sum(axis=(1, 2, 3), keepdims=True)
    Cs[3, :, 1, 1] = 0.0  # a zero recall: G-mean loss 1, H-mean loss 1
    ref = np.array([bound.value(C) for C in Cs])
    np.testing.assert_allclose(bound.values(Cs), ref, rtol=1e-15, atol=1e-15)
    if name != "QMeanLoss":
        assert ref[3] == 1.0
    r = np.array([Cs[0, :, k, k].sum() / space.priors[k] for k in range(3)])
    expect = {"GMeanLoss": 1 - np.prod(r) ** (1 / 3), "HMeanLoss": 1 - 3 / np.sum(1 / r),
              "QMeanLoss": np.sqrt(np.mean((1 - r) ** 2))}[name]
    assert ref[0] == pytest.approx(expect, abs=1e-14)
