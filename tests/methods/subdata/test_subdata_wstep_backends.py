"""Fast w-steps of the IRS (issue 15) against the exact cvxpy formulations."""
import numpy as np
import pytest

import goalfit as gf
from goalfit import FairSubdataClassifier
from goalfit.methods.subdata.wstep import LinearSVMStep, LogisticStep


def _data(seed, n, d):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X @ rng.normal(size=d) + 0.5 * rng.normal(size=n) + 0.3 > 0, 1, -1)
    z = (rng.random(n) < 0.8).astype(float)
    return X, y, z


@pytest.mark.parametrize("seed,n,d,lam", [(0, 60, 3, 0.01), (1, 200, 5, 0.1), (2, 400, 8, 0.01)])
def test_liblinear_wstep_equals_cvxpy_wstep(seed, n, d, lam):
    X, y, z = _data(seed, n, d)
    fast, exact = LinearSVMStep(lam, backend="liblinear"), LinearSVMStep(lam, backend="cvxpy")
    mf, me = fast.fit(X, y, z), exact.fit(X, y, z)

    def H(m):  # the w-step objective (1/N) sum z hinge + lam |w|^2
        return float(z @ exact.outcomes(m, X, y)) / n + exact.regularizer(m)

    assert H(me) <= H(mf) + 1e-9  # the exact QP is optimal
    assert H(mf) == pytest.approx(H(me), rel=2e-4)  # near the joint optimum
    np.testing.assert_allclose(mf.w, me.w, atol=2e-2)
    assert abs(mf.b - me.b) < 5e-2
    # the re-optimized intercept is exact for liblinear's w: no b does better
    grid = np.linspace(mf.b - 1, mf.b + 1, 2001)
    assert H(mf) <= min(H(type(mf)(mf.w, b)) for b in grid) + 1e-12


def test_liblinear_wstep_rejects_lam_zero_and_one_class():
    with pytest.raises(ValueError, match="lam > 0"):
        LinearSVMStep(0.0, backend="liblinear")
    assert LinearSVMStep(0.0)._backend(10**6) == "cvxpy"
    assert LinearSVMStep(0.1)._backend(2000) == "cvxpy" and LinearSVMStep(0.1)._backend(2001) == "liblinear"
    X, y, z = _data(3, 30, 2)
    z = (y > 0).astype(float)  # only positives selected: w = 0, b = +1 meets every hinge
    m = LinearSVMStep(0.1, backend="liblinear").fit(X, y, z)
    assert np.all(m.w == 0) and m.b == 1.0


def test_logistic_warm_start_equals_cold_fits():
    X, y, _ = _data(4, 300, 5)
    rng = np.random.default_rng(5)
    warm = LogisticStep(0.01)
    for _ in range(3):  # consecutive selections, as in the IRS
        z = (rng.random(len(y)) < 0.85).astype(float)
        mw, mc = warm.fit(X, y, z), LogisticStep(0.01).fit(X, y, z)
        np.testing.assert_allclose(mw.w, mc.w, atol=1e-5)
        assert mw.b == pytest.approx(mc.b, abs=1e-5)


@pytest.mark.filterwarnings("ignore:the goals are not met on the training data")  # the penalty form, paper's rule
def test_estimator_irs_with_both_backends_agrees():
    X, y, _ = _data(6, 300, 4)
    g = np.where(np.random.default_rng(7).random(300) < 0.5, "a", "b")
    kw = dict(constraints=[gf.error_rate_difference() <= 0], alpha=0.05, random_state=0)
    mp = {"form": "penalty", "rho": 1.0, "iterate": "objective", "decision_threshold": 0.0}
    a = FairSubdataClassifier(method_params={**mp, "w_solver": "liblinear"}, **kw).fit(X, y, sensitive_features=g)
    b = FairSubdataClassifier(method_params={**mp, "w_solver": "cvxpy"}, **kw).fit(X, y, sensitive_features=g)
    assert a.objective_ == pytest.approx(b.objective_, abs=2e-3)
    assert np.mean(a.predict(X) == b.predict(X)) > 0.97
    with pytest.raises(ValueError, match="w_solver"):
        FairSubdataClassifier(method_params={"w_solver": "sgd"}).fit(X, y, sensitive_features=g)
