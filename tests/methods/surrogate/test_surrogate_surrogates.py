"""Rate surrogates: closed forms, score Jacobians, chunking, the quantile surrogate, errors."""
import numpy as np
import pytest

from goalfit.methods.surrogate import (
    LinearScorer, QuantilePrecisionSurrogate, SliceSurrogate, SurrogateSet, make_rate_surrogates,
)
from goalfit.methods.surrogate.surrogates import LpLoss, SigmoidLoss, values_of_models


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    n = 400
    y = np.where(rng.random(n) < 0.3, 1, -1)
    g = rng.random(n) < 0.5
    return rng, y, {"g1": g, "g0": ~g}


def test_hinge_values_closed_form(data):
    rng, y, masks = data
    s = rng.normal(size=len(y))
    sur = SurrogateSet(make_rate_surrogates("hinge", ["g1", "g0"]), y, masks)
    v = sur.values(s)
    assert sur.names == ["hinge_pos[g1]", "hinge_neg[g1]", "hinge_pos[g0]", "hinge_neg[g0]"]
    pos1 = (y == 1) & masks["g1"]
    neg0 = (y == -1) & masks["g0"]
    assert v[0] == pytest.approx(np.mean(np.maximum(0, 1 - s[pos1])))
    assert v[3] == pytest.approx(np.mean(np.maximum(0, 1 + s[neg0])))


@pytest.mark.parametrize("loss", ["logistic", SigmoidLoss(1.5), LpLoss(2.0), LpLoss(3.0)])
def test_score_jacobian_matches_finite_differences(data, loss):
    rng, y, masks = data
    s = rng.normal(size=len(y))
    sur = SurrogateSet(make_rate_surrogates(loss, ["g1", "g0"]), y, masks)
    J = sur.score_jacobian(s)
    eps = 1e-6
    for i in rng.choice(len(y), 5, replace=False):
        e = np.zeros(len(y)); e[i] = eps
        num = (sur.values(s + e) - sur.values(s - e)) / (2 * eps)
        np.testing.assert_allclose(J[:, i], num, atol=1e-7)


def test_many_models_and_chunking_agree(data):
    rng, y, masks = data
    X = rng.normal(size=(len(y), 4))
    sc = LinearScorer(X)
    sur = SurrogateSet(make_rate_surrogates("logistic"), y)
    Theta = rng.normal(size=(9, 5))
    full = sur.values(sc.scores_many(Theta))
    chunked = values_of_models(sc.scores_many, Theta, sur.values, n_examples=len(y), chunk_elements=2 * len(y))
    # float32 batches (batch_dtype): the averages of a chunk are BLAS matrix-vector products whose
    # summation order may depend on the number of models in the chunk: float32 rounding
    np.testing.assert_allclose(chunked, full, rtol=1e-6)
    np.testing.assert_allclose(full[4], sur.values(sc.scores(Theta[4])), rtol=1e-6)


def test_quantile_surrogate_value_and_recall(data):
    rng, y, _ = data
    s = rng.normal(size=len(y)) + y
    tau = 0.5
    q_sur = QuantilePrecisionSurrogate(tau)
    sur = SurrogateSet([q_sur], y)
    pos, neg = s[y == 1], s[y == -1]
    a = 1 - tau
    ts = np.linspace(s.min() - 1, s.max() + 1, 20001)
    q_brute = np.max(ts - np.maximum(ts[:, None] - pos, 0).sum(axis=1) / (a * len(pos)))
    q_ours = np.sort(pos)[int(np.ceil(a * len(pos))) - 1]
    q_ours = q_ours - np.maximum(q_ours - pos, 0).sum() / (a * len(pos))
    assert q_ours == pytest.approx(q_brute, abs=1e-3)
    assert np.mean(pos >= q_ours) >= tau  # the threshold q keeps recall >= tau
    assert sur.values(s)[0] == pytest.approx(np.mean(np.maximum(0, 1 + neg - q_ours)))
    # subgradient: directional derivative along a random direction matches for a small step
    d = rng.normal(size=len(y))
    h = 1e-7
    num = (sur.values(s + h * d)[0] - sur.values(s)[0]) / h
    assert sur.score_jacobian(s)[0] @ d == pytest.approx(num, rel=1e-4, abs=1e-6)


def test_errors(data):
    _, y, masks = data
    with pytest.raises(ValueError, match="empty slice"):
        SurrogateSet([SliceSurrogate("hinge", 1, "none")], y, {"none": np.zeros(len(y), bool)})
    with pytest.raises(ValueError, match="unknown group"):
        SurrogateSet([SliceSurrogate("hinge", 1, "zzz")], y, masks)
    with pytest.raises(ValueError, match="-1 / \\+1"):
        SurrogateSet(make_rate_surrogates(), (y > 0).astype(int))
    with pytest.raises(ValueError, match="unknown surrogate loss"):
        make_rate_surrogates("squared")
    sur = SurrogateSet(make_rate_surrogates(), y)
    with pytest.raises(ValueError, match="NaN"):
        sur.values(np.full(len(y), np.nan))
    with pytest.raises(ValueError, match="shape"):
        sur.values(np.zeros(3))


# ------------------------------------------------------------------ Relaxed-FM (§6.2 baseline)
def test_relaxed_f_measure_is_a_finite_lower_bound_with_correct_derivatives():
    """F~ <= F for hinge counts, a positive denominator even when the hinge count of false
    negatives exceeds n+ (positives scored far below 0), and derivatives by finite differences."""
    from goalfit.methods.surrogate.baselines import relaxed_f_measure

    rng = np.random.default_rng(0)
    y = np.where(rng.random(200) < 0.3, 1, -1)
    for shift in (0.0, -3.0, -10.0):  # -10: every positive far on the wrong side, FN~ >> n+
        s = rng.normal(size=200) + 0.8 * y + shift
        pos, neg = y == 1, y == -1
        fn_h, fp_h = np.maximum(0, 1 - s[pos]).sum(), np.maximum(0, 1 + s[neg]).sum()
        tp, fn, fp = np.sum(s[pos] > 0), np.sum(s[pos] <= 0), np.sum(s[neg] > 0)
        f, d_fn, d_fp = relaxed_f_measure([fn_h], [fp_h], [pos.sum()])
        assert np.isfinite(f).all() and f[0] <= 2 * tp / (2 * tp + fn + fp) + 1e-12
        if shift == -10.0:
            assert 2 * pos.sum() - fn_h + fp_h < 0  # the plain formula's denominator would be negative
            assert f[0] < 0 and d_fn[0] < 0  # still a lower bound, still pushing FN~ down
    # both branches (FN~ <= n+ and the tangent past it) against the formula and finite differences
    fn_h, fp_h, n = np.array([10.0, 3.0, 40.0]), np.array([7.0, 2.0, 5.0]), np.array([30.0, 12.0, 25.0])
    f, d_fn, d_fp = relaxed_f_measure(fn_h, fp_h, n)
    np.testing.assert_allclose(f[:2], 2 * (n - fn_h)[:2] / (2 * n - fn_h + fp_h)[:2])
    np.testing.assert_allclose(f[2], -2 * (40 - 25) / (25 + 5))
    at, _, _ = relaxed_f_measure([25.0 - 1e-9, 25.0 + 1e-9], [5.0, 5.0], [25.0, 25.0])
    np.testing.assert_allclose(at, 0.0, atol=1e-9)  # continuous at FN~ = n+
    h = 1e-6
    np.testing.assert_allclose(d_fn, (relaxed_f_measure(fn_h + h, fp_h, n)[0] - relaxed_f_measure(fn_h - h, fp_h, n)[0])
                               / (2 * h), rtol=1e-6)
    np.testing.assert_allclose(d_fp, (relaxed_f_measure(fn_h, fp_h + h, n)[0] - relaxed_f_measure(fn_h, fp_h - h, n)[0])
                               / (2 * h), rtol=1e-6)
    with pytest.raises(ValueError, match="examples of the positive class"):
        relaxed_f_measure([0.0], [1.0], [0])
    with pytest.raises(ValueError, match="non-negative"):
        relaxed_f_measure([-1.0], [1.0], [3])
