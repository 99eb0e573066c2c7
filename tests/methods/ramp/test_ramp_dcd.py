"""The warm-started dual coordinate descent inner solver of RampClassifier (methods/ramp/dcd.py)
against cvxpy and liblinear references on small weighted hinge problems."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import goalfit as gf
from goalfit.methods.ramp import Majorizer, solve_problem3, solve_problem3_cvxpy, solve_weighted_svm
from goalfit.methods.ramp.dcd import DualState, solve_dcd

cp = pytest.importorskip("cvxpy")
pytest.importorskip("numba")


def _weighted(seed, n=150, d=4):
    """Rows with a weight on the label -1 hinge (a), the +1 hinge (c), or both (the ramp's linear zone)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    score = X[:, 0] - 0.5 * X[:, 1] + 0.7 * rng.normal(size=n)
    a = rng.uniform(0.2, 1.0, n) * (score < 0.4) / n
    c = rng.uniform(0.2, 1.0, n) * (score > -0.4) / n
    return X, a, c


def _cvxpy_value(X, a, c, lam, fit_intercept):
    w = cp.Variable(X.shape[1])
    b = cp.Variable() if fit_intercept else 0.0
    f = X @ w + b
    prob = cp.Problem(cp.Minimize(a @ cp.pos(0.5 + f) + c @ cp.pos(0.5 - f) + lam / 2 * cp.sum_squares(w)))
    prob.solve(solver=cp.CLARABEL)
    return prob.value, np.asarray(w.value)


def _primal(X, a, c, lam, coef, intercept):
    f = X @ coef + intercept
    return float(a @ np.maximum(0, 0.5 + f) + c @ np.maximum(0, 0.5 - f) + lam / 2 * coef @ coef)


def _dual(X, a, c, lam, beta):
    """The dual value (dcd.py's module docstring) of ``beta`` balanced for ``sum beta = 0``."""
    beta = beta.copy()
    pos, neg = beta[beta > 0].sum(), -beta[beta < 0].sum()
    if pos > neg:
        beta[beta > 0] *= neg / pos
    elif neg > pos:
        beta[beta < 0] *= pos / neg
    v = X.T @ beta
    return float(0.5 * np.minimum(2 * a + beta, 2 * c - beta).sum() - v @ v / (2 * lam))


@pytest.mark.parametrize("seed,lam,fit_intercept", [(0, 0.05, True), (1, 0.01, True), (2, 0.05, False)])
def test_dcd_equals_cvxpy_and_its_dual_value_is_a_lower_bound(seed, lam, fit_intercept):
    X, a, c = _weighted(seed)
    ref, w_ref = _cvxpy_value(X, a, c, lam, fit_intercept)
    rows = np.flatnonzero((a > 0) | (c > 0))
    coef, intercept, dual, primal, _ = solve_dcd(DualState(X), rows, a[rows], c[rows], lam,
                                                 fit_intercept=fit_intercept, tol=1e-7, max_epochs=200000)
    assert primal == pytest.approx(_primal(X, a, c, lam, coef, intercept), abs=1e-12)  # the reported primal
    assert primal - dual <= 1e-7  # the certified gap it stopped at
    assert dual <= ref + 1e-7  # weak duality: a lower bound on the optimum (Clarabel's ~1e-8 accuracy)
    assert primal == pytest.approx(ref, abs=2e-7)
    np.testing.assert_allclose(coef, w_ref, atol=1e-2 * max(1.0, np.abs(w_ref).max()))
    if not fit_intercept:
        assert intercept == 0.0


def test_dcd_dual_bound_holds_at_every_tolerance():
    X, a, c = _weighted(3, n=200)
    lam = 0.02
    ref, _ = _cvxpy_value(X, a, c, lam, True)
    rows = np.flatnonzero((a > 0) | (c > 0))
    for tol in (1e-2, 1e-3, 1e-5):
        for epochs in (1, 3, 10, 10000):
            coef, b, dual, primal, _ = solve_dcd(DualState(X), rows, a[rows], c[rows], lam, tol=tol, max_epochs=epochs)
            assert dual <= ref + 1e-8 <= primal + 2e-8
            assert primal == pytest.approx(_primal(X, a, c, lam, coef, b), abs=1e-12)  # the point returned
            if epochs == 10000:  # ran to its stopping rule: the certified gap it stopped at
                assert primal - dual <= tol


@pytest.mark.parametrize("block_bytes,cache_bytes", [(1, 0), (8 * 96, 0), (8 * 96, 30 * 96), (10 ** 18, 10 ** 18)])
def test_dcd_block_order_reaches_the_same_optimum(monkeypatch, block_bytes, cache_bytes):
    """The cache-friendly epoch order (blocks of stored rows; a random order once the active rows
    are few) changes the path, not the answer: forced here on a small problem (rows of 4 dense
    entries read 96 bytes a visit: 1-row and 8-row blocks, with and without the random tail, and
    blocks and cache far above the data's size: one random order)."""
    from goalfit.methods.ramp import dcd

    X, a, c = _weighted(7, n=300)
    X[::2] = X[::2][np.argsort(X[::2, 0])]  # an ordered X: the storage order must not matter
    lam = 0.02
    ref, _ = _cvxpy_value(X, a, c, lam, True)
    rows = np.flatnonzero((a > 0) | (c > 0))
    monkeypatch.setattr(dcd, "BLOCK_BYTES", block_bytes)
    monkeypatch.setattr(dcd, "CACHE_BYTES", cache_bytes)
    state = DualState(X, random_state=3)
    coef, intercept, dual, primal, _ = solve_dcd(state, rows, a[rows], c[rows], lam, tol=1e-8, max_epochs=200000)
    assert primal - dual <= 1e-8
    assert dual <= ref + 1e-8 and primal == pytest.approx(ref, abs=2e-8)
    # the dual variables are kept per row of X (not per stored position): they certify the optimum
    # (rows of X sorted by their first column; a mix-up of stored positions would not)
    assert ref - 2e-8 <= _dual(X, a, c, lam, state.beta) <= ref + 1e-8
    assert (state.position[state.storage_order] == np.arange(len(X))).all()
    # no seed is seed 0, not a fresh random order: solves stay reproducible
    assert (DualState(X, random_state=None).storage_order == DualState(X).storage_order).all()


def test_dcd_without_intercept_equals_liblinear():
    """Without an intercept the problem is exactly liblinear's (C = 2 / lam, weights, labels +-1)."""
    from sklearn.svm import LinearSVC

    X, a, c = _weighted(4)
    lam = 0.05
    only = (a > 0) != (c > 0)  # one hinge per row: a plain weighted SVM
    a, c = a * only, c * only
    rows = np.flatnonzero(only)
    y = np.where(c[rows] > 0, 1, -1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = LinearSVC(C=2 / lam, loss="hinge", fit_intercept=False, tol=1e-10, max_iter=1000000).fit(
            X[rows], y, sample_weight=(a + c)[rows])
    ref = _primal(X, a, c, lam, m.coef_.ravel() / 2, 0.0)
    _, _, dual, primal, _ = solve_dcd(DualState(X), rows, a[rows], c[rows], lam, fit_intercept=False, tol=1e-9,
                                      max_epochs=200000)
    assert primal == pytest.approx(ref, abs=1e-7)
    assert dual <= ref + 1e-9


def test_warm_start_gives_the_cold_answer_across_changed_weights_and_rows():
    X, a, c = _weighted(5, n=200)
    lam = 0.02
    state = DualState(X)
    rows = np.flatnonzero((a > 0) | (c > 0))
    solve_dcd(state, rows, a[rows], c[rows], lam, tol=1e-8, max_epochs=100000)
    # new multipliers (weights) and a new anchor (some rows leave, some change sides)
    rng = np.random.default_rng(0)
    a2, c2 = a * rng.uniform(0.5, 2.0, len(a)), c * rng.uniform(0.5, 2.0, len(c))
    a2[:20], c2[20:40] = 0.0, 0.0
    rows2 = np.flatnonzero((a2 > 0) | (c2 > 0))
    warm = solve_dcd(state, rows2, a2[rows2], c2[rows2], lam, tol=1e-8, max_epochs=100000)
    cold = solve_dcd(DualState(X), rows2, a2[rows2], c2[rows2], lam, tol=1e-8, max_epochs=100000)
    assert warm[3] == pytest.approx(cold[3], abs=2e-8)  # the same optimum
    np.testing.assert_allclose(warm[0], cold[0], atol=1e-3)
    assert (state.beta[np.setdiff1d(np.arange(len(a)), rows2)] == 0).all()  # rows that left are reset
    assert (state.beta[rows2] >= -a2[rows2] - 1e-15).all() and (state.beta[rows2] <= c2[rows2] + 1e-15).all()


def test_dcd_through_solve_weighted_svm_on_sparse_input_matches_dense():
    X, a, c = _weighted(6)
    z0 = np.random.default_rng(1).normal(scale=0.8, size=len(a))
    dense = solve_weighted_svm(X, a, c, z0, 0.05, solver="dcd", tol=1e-9, max_iter=100000)
    sparse = solve_weighted_svm(sp.csr_matrix(X), a, c, z0, 0.05, solver="dcd", tol=1e-9, max_iter=100000)
    np.testing.assert_allclose(dense.coef, sparse.coef, atol=1e-6)
    assert dense.lower == pytest.approx(sparse.lower, abs=1e-9) and dense.gap <= 1e-9
    with pytest.raises(ValueError, match="warm_start"):
        solve_weighted_svm(X, a, c, z0, 0.05, solver="dcd", warm_start=DualState(X[:10]))
    # same shape, other entries: the kernel would solve on the state's copy, so it must refuse
    with pytest.raises(ValueError, match="warm_start"):
        solve_weighted_svm(X, a, c, z0, 0.05, solver="dcd", warm_start=DualState(2.0 * X))
    # an equal matrix in another container is accepted and gives the same solution
    other = solve_weighted_svm(X, a, c, z0, 0.05, solver="dcd", tol=1e-9, max_iter=100000,
                               warm_start=DualState(sp.csc_matrix(X)))
    np.testing.assert_allclose(other.coef, dense.coef, atol=1e-6)
    with pytest.raises(ValueError, match="non-negative"):
        solve_dcd(DualState(X), np.arange(3), -np.ones(3), np.ones(3), 0.1)
    for rows in ([0, 1, 1], np.r_[np.arange(len(X)), 5]):  # few rows (a sort), most rows (a scatter)
        with pytest.raises(ValueError, match="distinct"):
            solve_dcd(DualState(X), np.asarray(rows), np.ones(len(rows)), np.ones(len(rows)), 0.1)


def test_binary_features_skip_their_values_with_the_same_path():
    """One-hot / binary X (every stored entry 1): the kernel does not read the values; multiplying
    by 1 is exact, so the path is the same as reading them, bit for bit."""
    rng = np.random.default_rng(5)
    X = sp.csr_matrix((rng.random((300, 12)) < 0.3).astype(float))
    y = np.asarray(X[:, 0].toarray()).ravel() - np.asarray(X[:, 1].toarray()).ravel() + 0.5 * rng.normal(size=300)
    a, c = (y < 0.3) / 300.0, (y > -0.3) / 300.0
    rows = np.flatnonzero((a > 0) | (c > 0))
    fast = DualState(X, random_state=1)
    slow = DualState(X, random_state=1)
    assert fast.ones
    slow.ones = False
    r_fast = solve_dcd(fast, rows, a[rows], c[rows], 0.02, tol=1e-9, max_epochs=100000)
    r_slow = solve_dcd(slow, rows, a[rows], c[rows], 0.02, tol=1e-9, max_epochs=100000)
    np.testing.assert_array_equal(r_fast[0], r_slow[0])
    assert r_fast[1:] == r_slow[1:] and fast.n_visits == slow.n_visits
    ref, _ = _cvxpy_value(X.toarray(), a, c, 0.02, True)
    assert r_fast[2] <= ref + 1e-8 and r_fast[3] == pytest.approx(ref, abs=2e-8)
    assert not DualState(2.0 * X).ones


def test_cold_state_shares_the_stored_rows_and_starts_from_zero():
    X, a, c = _weighted(4, n=120)
    rows = np.flatnonzero((a > 0) | (c > 0))
    state = DualState(X, random_state=2)
    first = solve_dcd(state, rows, a[rows], c[rows], 0.05, tol=1e-9, max_epochs=100000)
    cold = state.cold()
    assert cold.data is state.data and cold.indices is state.indices  # no second copy of X
    assert not cold.beta.any() and cold.intercept_centre == 0.0 and cold.n_solves == 0
    assert state.beta.any() and state.n_solves == 1  # the original is untouched
    again = solve_dcd(cold, rows, a[rows], c[rows], 0.05, tol=1e-9, max_epochs=100000)
    fresh = solve_dcd(DualState(X, random_state=2), rows, a[rows], c[rows], 0.05, tol=1e-9, max_epochs=100000)
    np.testing.assert_array_equal(again[0], fresh[0])  # the same path as a new state
    assert again[2] == pytest.approx(first[2], abs=1e-9)


def _toy(n=300, seed=0):
    rng = np.random.default_rng(seed)
    g = rng.integers(0, 2, n)
    X = rng.normal(size=(n, 3))
    X[:, 0] += g
    y = (X[:, 0] + 0.5 * X[:, 1] + 0.5 * rng.normal(size=n) > 0.6).astype(int)
    return X, y, np.where(g == 1, "B", "A")


@pytest.mark.parametrize("chooser", ["chebyshev", "bisection"])
def test_cutting_plane_with_dcd_agrees_with_cvxpy_from_cold_and_warm_multipliers(chooser):
    X, y, g = _toy(250, seed=5)
    cons = [gf.positive_prediction_rate(group="A") >= 0.8 * gf.positive_prediction_rate(group="B")]
    if chooser == "chebyshev":
        cons.append(gf.true_positive_rate(group="A") >= 0.6)
    m = gf.RampClassifier("error", cons, alpha=0.01, max_iter=2, random_state=0).fit(X, y, sensitive_features={"g": g})
    maj = Majorizer(m.program_, X, X @ m.coef_ + m.intercept_, 0.01)
    _, _, ref = solve_problem3_cvxpy(maj)
    cold = solve_problem3(maj, m.coef_, m.intercept_, chooser=chooser, inner_solver="dcd", tol=1e-6, max_iter=80,
                          warm_start=DualState(X))
    assert cold.objective == pytest.approx(ref, abs=2e-5)
    assert cold.lower <= ref + 1e-6  # certified
    assert (cold.rows <= 1e-7).all()
    warm = solve_problem3(maj, m.coef_, m.intercept_, chooser=chooser, inner_solver="dcd", tol=1e-6, max_iter=80,
                          warm_start=DualState(X), v0=cold.multipliers)
    assert warm.objective == pytest.approx(ref, abs=2e-5)
    assert warm.lower <= ref + 1e-6 and (warm.rows <= 1e-7).all()


def test_ramp_classifier_dcd_matches_the_svc_reference():
    X, y, g = _toy(400, seed=7)
    cons = [gf.positive_prediction_rate(group="A") >= 0.8 * gf.positive_prediction_rate(group="B")]
    fits = {s: gf.RampClassifier("error", cons, alpha=1e-2, max_iter=8, method_params={"inner_solver": s, "cutting_plane_rel_tol": 0.0},
                                 random_state=0).fit(X, y, sensitive_features={"g": g}) for s in ("dcd", "svc")}
    assert fits["dcd"].feasible_ and fits["svc"].feasible_
    assert fits["dcd"].objective_ == pytest.approx(fits["svc"].objective_, abs=2e-3)


@pytest.mark.parametrize("rel_tol", [0.5, 2.0])
def test_inexact_step_secures_its_share_of_the_exact_decrease(rel_tol):
    """``rel_tol`` (the RampClassifier default 0.5) stops a Problem-3 solve once its certified gap
    is at most ``rel_tol`` x its certified decrease; the step then achieves at least
    ``1 / (1 + rel_tol)`` of the exact step's decrease of the majorizer (checked against the
    cvxpy optimum), stays feasible, and needs no more solves than the exact one."""
    X, y, g = _toy(300, seed=11)
    cons = [gf.positive_prediction_rate(group="A") >= 0.8 * gf.positive_prediction_rate(group="B")]
    m = gf.RampClassifier("error", cons, alpha=0.01, max_iter=1, random_state=0).fit(X, y, sensitive_features={"g": g})
    maj = Majorizer(m.program_, X, X @ m.coef_ + m.intercept_, 0.01)
    _, _, ref = solve_problem3_cvxpy(maj)
    anchor = maj.evaluate(m.coef_, m.intercept_)[0]
    assert anchor - ref > 1e-3  # the exact step still has something to gain here
    exact = solve_problem3(maj, m.coef_, m.intercept_, inner_solver="dcd", tol=1e-7, max_iter=80, warm_start=DualState(X))
    loose = solve_problem3(maj, m.coef_, m.intercept_, inner_solver="dcd", tol=1e-7, max_iter=80, rel_tol=rel_tol,
                           warm_start=DualState(X))
    assert exact.objective == pytest.approx(ref, abs=1e-5)
    assert anchor - loose.objective >= (anchor - ref) / (1 + rel_tol) - 1e-7
    assert (loose.rows <= 1e-7).all() and loose.n_inner <= exact.n_inner
