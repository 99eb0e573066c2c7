"""Ellipsoid (Alg. 3), constrained ellipsoid (Alg. 7), their cut (Alg. 3(a)), the feasibility
phase and GDA, on tiny binary problems with known optima.

The references are those of :mod:`tests.test_solvers`: on *calibrated* data the plug-in
oracle is an exact linear minimization oracle over the hull of all per-cell threshold rules,
so the optimum over that hull (``recall_optimum``: an LP plus an exact scalar search) is the
optimum of the sample problem, and the ellipsoid's dual values are lower bounds on it (weak
duality), which the tests check.
"""
import importlib

import numpy as np
import pytest
from scipy.optimize import linprog

import goalfit as gf
from goalfit.methods.plugin import (PluginOracle, con_ellipsoid, con_gda, ellipsoid, gda, jle_update,
                                    min_max_violation, solve)
from tests.methods.plugin.test_mixture_and_features import kl_coverage_rows
from tests.methods.plugin.test_solvers import calibrated, cell_rules, gmean, hmean, minmax, qmean, recall_optimum

pytestmark = pytest.mark.usefixtures("one_thread")  # tests/conftest.py

ell_module = importlib.import_module("goalfit.methods.plugin.ellipsoid")


# ------------------------------------------------------------------ helpers
def _spd(rng, D):
    Q, _ = np.linalg.qr(rng.normal(size=(D, D)))
    return Q @ np.diag(np.exp(rng.normal(scale=1.0, size=D))) @ Q.T


def _sqrtm(A):
    vals, vecs = np.linalg.eigh(A)
    return vecs @ np.diag(np.sqrt(vals)) @ vecs.T


def _quad(A, c, X):
    """(x - c)^T A^{-1} (x - c) for every row x of X."""
    Z = X - c
    return np.einsum("ij,ij->i", Z, np.linalg.solve(A, Z.T).T)


def _lp_min_max_row(sets, cp):
    """min over mixtures of all threshold rules (one simplex per cell) of max_k (A C - b)_k."""
    X = np.vstack(sets)
    R = len(X)
    A_eq = np.zeros((len(sets), R + 1))
    k = 0
    for i, s in enumerate(sets):
        A_eq[i, k:k + len(s)] = 1
        k += len(s)
    res = linprog(np.r_[np.zeros(R), 1.0], A_ub=np.hstack([cp.A @ X.T, -np.ones((cp.n_rows, 1))]),
                  b_ub=cp.b, A_eq=A_eq, b_eq=np.ones(len(sets)),
                  bounds=[(0, None)] * R + [(None, None)], method="highs")
    assert res.status == 0
    return res.fun


# ------------------------------------------------------------------ (1) the cut, Alg. 3(a)
@pytest.mark.parametrize("D", range(2, 9))
def test_jle_update_contains_kept_half_and_is_tight(D):
    rng = np.random.default_rng(D)
    for _ in range(3):
        A = _spd(rng, D)
        c = rng.normal(size=D)
        w = rng.normal(size=D)
        A2, c2 = jle_update(A, c, w)
        np.testing.assert_allclose(A2, A2.T, atol=0)
        assert np.linalg.eigvalsh(A2).min() > 0
        S = _sqrtm(A)
        # points of the old ellipsoid (boundary and inside) in the kept half (x - c).w >= 0
        U = rng.normal(size=(4000, D))
        U /= np.linalg.norm(U, axis=1, keepdims=True)
        U[2000:] *= rng.random((2000, 1)) ** (1.0 / D)
        X = c + U @ S
        kept = (X - c) @ w >= 0
        assert kept.sum() > 1000
        assert _quad(A2, c2, X[kept]).max() <= 1 + 1e-9
        # and the dropped half's far points are cut off (the new ellipsoid is smaller)
        assert _quad(A2, c2, X[~kept & (np.linalg.norm(U, axis=1) > 0.999)]).max() > 1.05
        # tightness (Loewner-John): the old boundary on the cutting hyperplane and the deepest
        # point of the kept half lie on the new boundary
        g = S @ w / np.linalg.norm(S @ w)
        V = rng.normal(size=(50, D))
        V -= np.outer(V @ g, g)
        V /= np.linalg.norm(V, axis=1, keepdims=True)
        np.testing.assert_allclose(_quad(A2, c2, c + V @ S), 1.0, atol=1e-9)
        np.testing.assert_allclose(_quad(A2, c2, (c + S @ g)[None]), 1.0, atol=1e-9)
        # the rank-one closed form of the notes (Alg. 3(a))
        gg = A @ w / np.sqrt(w @ A @ w)
        np.testing.assert_allclose(c2, c + gg / (D + 1), atol=1e-12)
        np.testing.assert_allclose(A2, D**2 / (D**2 - 1.0) * (A - 2.0 / (D + 1) * np.outer(gg, gg)),
                                   rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("D", range(2, 9))
def test_jle_update_volume_ratio(D):
    rng = np.random.default_rng(10 + D)
    A = _spd(rng, D)
    c = rng.normal(size=D)
    expected = D / (D + 1.0) * (D**2 / (D**2 - 1.0)) ** ((D - 1) / 2.0)
    assert expected < np.exp(-1.0 / (2 * (D + 1)))
    for _ in range(5):
        w = rng.normal(size=D)
        A2, c = jle_update(A, c, w)
        ratio = np.sqrt(np.linalg.det(A2) / np.linalg.det(A))
        assert ratio == pytest.approx(expected, rel=1e-10)
        A = A2
    # scale of w is irrelevant
    w = rng.normal(size=D)
    Aa, ca = jle_update(A, c, w)
    Ab, cb = jle_update(A, c, 123.0 * w)
    np.testing.assert_allclose(Aa, Ab, rtol=1e-12)
    np.testing.assert_allclose(ca, cb, rtol=1e-12)


def test_jle_update_one_dimension_halves_the_interval():
    # [c - a, c + a] with a = sqrt(A): keep [c, c + a] for w > 0, [c - a, c] for w < 0
    A, c = np.array([[9.0]]), np.array([1.0])
    A2, c2 = jle_update(A, c, np.array([0.3]))
    assert c2[0] == pytest.approx(2.5) and np.sqrt(A2[0, 0]) == pytest.approx(1.5)
    A2, c2 = jle_update(A, c, np.array([-7.0]))
    assert c2[0] == pytest.approx(-0.5) and np.sqrt(A2[0, 0]) == pytest.approx(1.5)


def test_jle_update_degenerate_cut_raises():
    with pytest.raises(ValueError, match="degenerate"):
        jle_update(np.eye(3), np.zeros(3), np.zeros(3))
    with pytest.raises(ValueError, match="degenerate"):  # w in the null space of a flat A
        jle_update(np.diag([1.0, 0.0]), np.zeros(2), np.array([0.0, 2.0]))
    with pytest.raises(ValueError, match="degenerate"):
        jle_update(np.eye(2), np.zeros(2), np.array([np.nan, 1.0]))


# ------------------------------------------------------------------ (2) ellipsoid, Alg. 3
@pytest.mark.parametrize("name,psi", [("hmean", hmean), ("gmean", gmean), ("qmean", qmean),
                                      ("minmax_recall", minmax)])
@pytest.mark.parametrize("seed", [0, 1])
def test_ellipsoid_reaches_optimum_and_duals_are_lower_bounds(name, psi, seed):
    P, y, cells, space = calibrated(seed, groups=("A",), n_buckets=10)
    cp = gf.Problem(name).compile(space)
    res = ellipsoid(cp, PluginOracle(P, y, cells, space), max_iter=200)
    ref = recall_optimum(cell_rules(P, y, cells, space), space, psi)
    val = cp.objective.value(res.confusion)
    assert res.method == "ellipsoid" and res.feasible
    assert ref - 1e-7 <= val <= ref + 1e-4
    np.testing.assert_allclose(res.weights.sum(), 1.0)
    np.testing.assert_allclose(res.confusion, np.tensordot(res.weights, res.confusions, axes=1))
    duals = np.array([r["dual"] for r in res.history])
    # weak duality: the oracle is exact on calibrated data, so every dual value is a lower
    # bound on the optimum (up to the xi-subproblem's solver tolerance) ...
    assert duals.max() <= ref + 1e-6
    # ... the recorded value is the best so far, and the cuts close the gap (strong duality)
    assert np.all(np.diff(duals) >= 0)
    assert duals[-1] >= ref - 1e-4
    assert res.history[-1]["objective"] == pytest.approx(val)
    # the final row is recorded at the cut the run stopped at, not at max_iter
    assert res.history[-1]["iteration"] == res.details.iterations <= 200


def test_ellipsoid_rejects_constraints_and_flat_cut_message(monkeypatch):
    P, y, cells, space = calibrated(0, groups=("A",), n_buckets=10)
    with pytest.raises(ValueError, match="con_ellipsoid"):
        ellipsoid(gf.Problem("hmean", [gf.coverage(1) <= 0.3]).compile(space), PluginOracle(P, y, cells, space))
    with pytest.raises(ValueError, match="convex objective"):
        ellipsoid(gf.Problem("f1").compile(space), PluginOracle(P, y, cells, space))
    # a cut that fails although the supergradient is not zero is not reported as optimality
    calls = []

    def flaky(A, c, w):
        calls.append(1)
        if len(calls) == 7:
            raise ValueError("degenerate cut: w^T A w must be positive")
        return jle_update(A, c, w)

    monkeypatch.setattr(ell_module, "jle_update", flaky)
    res = ellipsoid(gf.Problem("hmean").compile(space), PluginOracle(P, y, cells, space), max_iter=50)
    assert "after 7 cuts" in res.message and "optimal" not in res.message


# ------------------------------------------------------------------ ConEllipsoid, Alg. 7
CON_CASES = [
    (("A",), "hmean", hmean, gf.coverage(1) <= 0.3, [0, 1]),
    (("A",), "gmean", gmean, gf.coverage(1) <= 0.3, [2]),
    (("F", "M"), "gmean", gmean, gf.equal_opportunity_difference() <= 0.02, [0, 3]),
    (("F", "M"), "hmean", hmean, gf.equal_opportunity_difference() <= 0.02, [0]),
    (("F", "M"), "minmax_recall", minmax, gf.demographic_parity_difference() <= 0.02, [3]),
]


@pytest.mark.parametrize("groups,name,psi,constraint,seeds", CON_CASES,
                         ids=["hmean-cov", "gmean-cov", "gmean-eopp", "hmean-eopp", "minmax-dp"])
def test_con_ellipsoid_reaches_constrained_optimum(groups, name, psi, constraint, seeds):
    for seed in seeds:
        P, y, cells, space = calibrated(seed, groups=groups, n_buckets=10 if len(groups) == 1 else 8)
        cp = gf.Problem(name, [constraint]).compile(space)
        sets = cell_rules(P, y, cells, space)
        ref = recall_optimum(sets, space, psi, cp.A, cp.b)
        assert ref > recall_optimum(sets, space, psi) + 1e-3  # the constraint binds
        res = con_ellipsoid(cp, PluginOracle(P, y, cells, space), max_iter=300, tol=0.0)  # full budget: the dual bound converges
        assert res.method == "con_ellipsoid" and res.feasible
        assert cp.max_violation(res.confusion) <= 1e-7
        val = cp.objective.value(res.confusion)
        assert ref - 1e-7 <= val <= ref + 1e-4
        duals = [r["dual"] for r in res.history]
        assert max(duals) <= ref + 1e-6  # weak duality with the multipliers mu >= 0
        assert duals[-1] >= ref - 5e-3


@pytest.mark.parametrize("seed,c", [(1, 0.0005), (3, 0.002)])
@pytest.mark.parametrize("name,psi", [("hmean", hmean), ("gmean", gmean)])
def test_con_ellipsoid_kl_quantification(seed, c, name, psi):
    """A smooth nonlinear constraint (no feasibility phase; the first member answers the zero
    cost and predicts one class, KL = inf). Reference: in the binary case KL <= c is an interval
    of the coverage of class 1."""
    P, y, cells, space = calibrated(seed, groups=("A",), n_buckets=10)
    cp = gf.Problem(name, [gf.kl_quantification() <= c]).compile(space)
    sets = cell_rules(P, y, cells, space)
    A, b = kl_coverage_rows(space, c)
    ref = recall_optimum(sets, space, psi, A, b)
    assert ref > recall_optimum(sets, space, psi) + 1e-3
    # the LP final (feasible, never below the optimum) on one seed: each run is 200 cuts
    for final in ("convex", "lp") if seed == 1 else ("convex",):
        res = con_ellipsoid(cp, PluginOracle(P, y, cells, space), max_iter=200, final=final, tol=0.0)  # full budget: the dual bound converges
        assert res.feasible and cp.max_violation(res.confusion) <= 1e-9
        val = cp.objective.value(res.confusion)
        assert ref - 1e-7 <= val
        if final == "convex":
            assert val <= ref + 1e-4
            duals = [r["dual"] for r in res.history]
            assert ref - 5e-3 <= max(duals) <= ref + 1e-6


def test_con_ellipsoid_dimension_and_auto_choice():
    P, y, cells, space = calibrated(0)
    cp = gf.Problem("gmean", [gf.equal_opportunity_difference() <= 0.02]).compile(space)
    from goalfit.methods.plugin.representation import FeatureSpace
    fs = FeatureSpace(cp)
    # two recalls plus one TPR gap (the other TPR is a combination), two rows +-gap <= eps
    assert (fs.dim, fs.n_constraints) == (3, 2)
    res = solve(cp, PluginOracle(P, y, cells, space), method="con_ellipsoid", max_iter=150)
    assert res.method == "con_ellipsoid" and res.feasible
    # auto runs SplitFW on a convex objective under polyhedral constraints (benchmarks/atlas.py)
    from goalfit.methods.plugin import choose_method
    assert choose_method(cp) == "split_frank_wolfe"


def test_con_ellipsoid_infeasible_returns_least_violation():
    P, y, cells, space = calibrated(0, groups=("A",), n_buckets=10)
    cp = gf.Problem("hmean", [gf.coverage(1) <= 0.1, gf.coverage(1) >= 0.2]).compile(space)
    res = con_ellipsoid(cp, PluginOracle(P, y, cells, space), max_iter=100)
    assert not res.feasible and "least violation" in res.message
    assert cp.max_violation(res.confusion) == pytest.approx(0.05, abs=1e-7)


# ------------------------------------------------------------------ feasibility phase
FEAS_CASES = [
    [gf.coverage(1) >= 0.35, gf.coverage(1) <= 0.45, gf.precision(1) >= 0.6,
     gf.demographic_parity_difference() <= 0.02],
    [gf.precision(1) >= 0.75, gf.coverage(1) >= 0.3],
    [gf.coverage(1) <= 0.1, gf.coverage(1) >= 0.2],
    [gf.precision(1) >= 0.95, gf.coverage(1) >= 0.4, gf.demographic_parity_difference() <= 0.0],
]


@pytest.mark.parametrize("seed", range(3))
def test_min_max_violation_matches_lp_over_all_rules(seed):
    P, y, cells, space = calibrated(seed)
    signs = []
    for cons in FEAS_CASES:
        cp = gf.Problem("hmean", cons).compile(space)
        res = min_max_violation(cp, PluginOracle(P, y, cells, space))
        s = _lp_min_max_row(cell_rules(P, y, cells, space), cp)
        got = cp.row_violations(res.confusion).max()
        assert got == pytest.approx(s, abs=1e-9)
        assert res.feasible == (s <= 1e-9)
        np.testing.assert_allclose(res.weights.sum(), 1.0)
        signs.append(np.sign(s))
    # strictly feasible (Assumption 1) for the first two, infeasible for the last two
    assert signs == [-1, -1, 1, 1]


def test_min_max_violation_needs_polyhedral_constraints():
    P, y, cells, space = calibrated(0)
    with pytest.raises(ValueError, match="polyhedral"):
        min_max_violation(gf.Problem("hmean").compile(space), PluginOracle(P, y, cells, space))


# ------------------------------------------------------------------ (6) GDA = ConGDA without constraints
def test_gda_is_con_gda_without_constraints():
    P, y, cells, space = calibrated(1, groups=("A",), n_buckets=10)
    cp = gf.Problem("gmean").compile(space)
    params = dict(max_iter=300, step_xi=0.5, step_lambda=0.05, tol=0.0)
    a = gda(cp, PluginOracle(P, y, cells, space), **params)
    b = con_gda(cp, PluginOracle(P, y, cells, space), **params)
    assert a.method == "gda" and b.method == "con_gda"
    np.testing.assert_array_equal(a.weights, b.weights)
    np.testing.assert_array_equal(a.confusions, b.confusions)
    assert a.n_oracle_calls == b.n_oracle_calls == 301
    ref = recall_optimum(cell_rules(P, y, cells, space), space, gmean)
    assert ref - 1e-7 <= cp.objective.value(a.confusion) <= ref + 1e-2
    with pytest.raises(ValueError, match="con_gda"):
        gda(gf.Problem("gmean", [gf.coverage(1) <= 0.3]).compile(space), PluginOracle(P, y, cells, space))


# ------------------------------------------------------------------ an interrupt while the members merge
class _Interrupt(Exception):
    """Stands for KeyboardInterrupt or a benchmark's time-limit alarm (benchmarks/atlas.py)."""


def _interrupt_in_structured_comparisons(frame, event, arg):
    """Profile hook: raise where numpy promotes two structured dtypes to compare structured arrays
    (``numpy._core._internal._promote_fields``, Python code that a signal handler can run in)."""
    if event == "call" and frame.f_code.co_name == "_promote_fields":
        raise _Interrupt


def _four_class_minmax_recall_dp(n=600, seed=0):
    rng = np.random.default_rng(seed)
    g = rng.choice(np.array(["a", "b"]), n)
    logits = rng.normal(size=(n, 4)) + 0.8 * (g == "b")[:, None] * np.arange(4)
    P = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    y = np.array([rng.choice(4, p=p) for p in P])
    return P, y, g


@pytest.mark.filterwarnings("ignore::goalfit.fit.SmallSliceWarning")  # 600 rows, DP <= 0.02
def test_con_ellipsoid_4_class_minmax_recall_dp_survives_an_interrupt_hook_in_member_merging():
    """benchmarks/atlas.py's 4-class min-max recall + demographic parity cell at 10^5 rows reported
    ``TypeError: Cannot compare structured arrays`` from con_ellipsoid: the cell's time-limit alarm
    landed in ``np.unique(axis=0)`` (merging members with equal confusion tensors), whose
    structured-array comparison replaced the alarm's exception by its own TypeError. Raising right
    there reproduces it (the old code raised that TypeError here); the members now merge without
    structured arrays, so the fit never gets there and returns the undisturbed fit's result."""
    import sys

    P, y, g = _four_class_minmax_recall_dp()
    goals = {"objective": "minmax_recall", "constraints": [gf.demographic_parity_difference("group") <= 0.02],
             "method": "con_ellipsoid", "method_params": {"max_iter": 60}}
    ref = gf.GoalClassifier("precomputed", **goals).fit(P, y, sensitive_features={"group": g})
    sys.setprofile(_interrupt_in_structured_comparisons)
    try:
        est = gf.GoalClassifier("precomputed", **goals).fit(P, y, sensitive_features={"group": g})
    finally:
        sys.setprofile(None)
    assert est.result_.method == "con_ellipsoid" and est.result_.feasible and est.max_violation_ <= 1e-9
    np.testing.assert_array_equal(est.result_.weights, ref.result_.weights)
    np.testing.assert_array_equal(est.result_.confusion, ref.result_.confusion)
    ev = est.evaluate(P, y, sensitive_features={"group": g})
    assert ev["constraints"][0]["value"] <= 0.02 + 1e-9


def test_unique_members_merges_equal_tensors_as_np_unique_rows():
    """The groups of np.unique(axis=0) on the tensors rounded to 12 decimals, in the order they
    first appear, with summed weights; -0.0 and 0.0 are one value."""
    from goalfit.methods.plugin._common import unique_members

    rng = np.random.default_rng(5)
    base = rng.integers(0, 3, size=(7, 2, 2, 2)) / 4.0
    pick = rng.integers(0, 7, size=40)
    confusions = base[pick] + rng.choice([0.0, 1e-14], size=(40, 2, 2, 2))  # equal once rounded to 12 decimals
    sel = np.flatnonzero(pick == pick[0])[1::2]  # every other member of the first group: -0.0 for 0.0
    confusions[sel] = np.where(confusions[sel] == 0, -0.0, confusions[sel])
    assert np.signbit(confusions[sel]).any()
    weights = rng.random(40)
    members = [f"m{i}" for i in range(40)]
    flat = np.round(confusions.reshape(40, -1), 12)
    _, first, inverse = np.unique(flat, axis=0, return_index=True, return_inverse=True)
    order = np.argsort(first)
    want_w = np.bincount(inverse.ravel(), weights=weights)[order]
    assert first[order][0] == 0 and len(first) == len(np.unique(pick))
    got_m, got_C, got_w = unique_members(members, confusions, weights)
    assert got_m == [members[i] for i in first[order]]
    np.testing.assert_array_equal(got_C, confusions[first[order]])
    np.testing.assert_allclose(got_w, want_w, rtol=1e-15)
    # float32 tensors group as their float64 values; no members, no groups
    odd = base[pick].reshape(40, 8)[:, :3]
    m32, C32, _ = unique_members(members, odd.astype(np.float32), weights)
    assert m32 == [members[i] for i in np.sort(np.unique(odd, axis=0, return_index=True)[1])]
    assert C32.dtype == np.float32
    m0, C0, w0 = unique_members([], np.zeros((0, 2, 2, 2)))
    assert m0 == [] and C0.shape == (0, 2, 2, 2) and w0.shape == (0,) and w0.dtype == float
    m1, _, w1 = unique_members(["a"], confusions[:1])
    assert m1 == ["a"] and w1.tolist() == [1.0]


def test_member_merge_grown_in_pieces_equals_unique_members_of_the_prefix():
    """The stopping checks merge the members as they arrive (MemberMerge, GapStop._merged):
    after every piece, exactly unique_members of the list so far, with the pricing calls'
    members pooled after the method's, as GapStop.pool orders them."""
    from goalfit.methods.plugin._common import GapStop, MemberMerge, unique_members

    rng = np.random.default_rng(11)
    base = rng.integers(0, 3, size=(9, 2, 2, 2)) / 4.0
    pick = rng.integers(0, 9, size=60)
    Cs = list(base[pick] + rng.choice([0.0, 1e-14, -0.0], size=(60, 2, 2, 2)))
    members = [f"m{i}" for i in range(60)]
    weights = rng.random(60)
    merge = MemberMerge()
    for end in (0, 1, 7, 8, 30, 60):
        merge.extend(Cs[len(merge):end])
        got = merge.merged(members[:end], Cs[:end], weights[:end])
        want = unique_members(members[:end], np.asarray(Cs[:end]).reshape(end, 2, 2, 2), weights[:end])
        assert got[0] == want[0] and len(got[0]) < max(end, 1) + 1
        np.testing.assert_array_equal(got[1].reshape(want[1].shape), want[1])
        np.testing.assert_array_equal(got[2], want[2])
    assert len(merge.first) < 60  # duplicates were merged

    class _Space:
        shape = (2, 2, 2)

    class _Problem:
        space = _Space()

    stop = GapStop.__new__(GapStop)  # only the merge's state is read
    stop.problem, stop._merge = _Problem(), MemberMerge()
    stop.extra_members, stop.extra_confusions = [], []
    for end in (10, 25, 60):
        # a pricing member equal to one of the method's, and a new one, after each check
        stop.extra_members += [f"x{end}a", f"x{end}b"]
        stop.extra_confusions += [Cs[3], base[0] + 0.5]
        got = stop._merged(members[:end], Cs[:end], weights[:end])
        want = unique_members(*stop.pool(members[:end], Cs[:end], weights[:end]))
        assert got[0] == want[0]
        np.testing.assert_array_equal(got[1], want[1])
        np.testing.assert_array_equal(got[2], want[2])
