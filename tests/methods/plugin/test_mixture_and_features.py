"""The succinct representation (FeatureSpace, Narasimhan §7.2) and the final-mixture program
(Alg. 3 line 14 / Alg. 7 line 16), against independent references."""
import itertools

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import brentq, linprog, minimize

import goalfit as gf
from goalfit.confusion import CellEncoder, ConfusionSpace
from goalfit.methods.plugin import PluginOracle, mixture_program, prune
from goalfit.methods.plugin._common import unique_members
from tests.methods.plugin.test_solvers import candidates
from goalfit.methods.plugin.representation import FeatureSpace
from tests.methods.plugin.test_solvers import calibrated, cell_rules, gmean, hmean, qmean, recall_optimum

pytestmark = pytest.mark.usefixtures("one_thread")  # tests/conftest.py


# ------------------------------------------------------------------ helpers
def space3(seed, groups=("F", "M"), N=300):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, N)
    g = rng.choice(np.array(groups), N)
    enc = CellEncoder()
    cells = enc.fit_transform(pd.Series(g, name="sex"))
    return ConfusionSpace.from_codes(y, cells, np.arange(3), enc.cells_)


def random_tensors(space, k, rng):
    """Confusion tensors of the space: each (cell, class) row has the sample's row mass."""
    D = rng.dirichlet(np.ones(space.n_classes), size=(k,) + space.row_mass.shape)
    return D * space.row_mass[None, :, :, None]


def kl_coverage_rows(space, c):
    """Binary: KL quantification <= c  <=>  coverage of class 1 in an interval [q_lo, q_hi]
    (KL is convex in that coverage), as two linear rows A vec(C) <= b."""
    pi = space.priors

    def kl(q):
        return pi[0] * np.log(pi[0] / (1 - q)) + pi[1] * np.log(pi[1] / q) - c

    q_lo, q_hi = brentq(kl, 1e-12, pi[1]), brentq(kl, pi[1], 1 - 1e-12)
    row = np.zeros(space.shape)
    row[:, :, 1] = 1.0
    return np.vstack([row.ravel(), -row.ravel()]), np.array([q_hi, -q_lo])


SPACE2 = calibrated(0)[3]
SPACE3 = space3(0)
FS_CASES = [
    # (space, objective, constraints, expected dim, expected number of constraint functions)
    (SPACE2, "hmean", [], 2, 0),
    (SPACE2, "hmean", [gf.coverage(1) <= 0.3], 3, 1),
    (SPACE2, "hmean", [gf.coverage_deviation() <= 0.05], 4, 4),  # cov_0, cov_1 both independent rows
    (SPACE2, "gmean", [gf.equal_opportunity_difference() <= 0.02], 3, 2),
    # recalls, one DP gap, the coverage of class 1 (precision's row is 0.6 cov_1 - pi_1 r_1)
    (SPACE2, "minmax_recall", [gf.demographic_parity_difference() <= 0.02, gf.precision(1) >= 0.6], 4, 3),
    (SPACE2, "qmean", [gf.kl_quantification() <= 0.01], 4, 1),
    (SPACE2, "error", [gf.coverage(1) <= 0.3], 2, 1),
    (SPACE3, "hmean", [], 3, 0),
    (SPACE3, "hmean", [gf.coverage(2) <= 0.2], 4, 1),
    (SPACE3, "qmean", [gf.coverage_deviation() <= 0.05], 6, 6),
]


# ------------------------------------------------------------------ features() of bound functions
FEATURE_GOALS = {
    2: ["error", "balanced_error", "hmean", "gmean", "qmean", "minmax_recall", "f1", "micro_f1", "macro_f1",
        "kl_quantification", gf.fbeta(2.0, 1), gf.cost_sensitive_loss([[0, 1], [3, 0]]), gf.coverage_deviation(),
        gf.demographic_parity_difference(), gf.equal_opportunity_difference(method="to_overall"),
        gf.demographic_parity_ratio(), gf.precision(1), gf.precision(1, group="F") - gf.precision(1, group="M"),
        gf.true_positive_rate(group="F") - 0.5 * gf.coverage(1), gf.macro_f1_over_groups()],
    3: ["error", "hmean", "gmean", "qmean", "minmax_recall", "micro_f1", "macro_f1", "kl_quantification",
        gf.coverage_deviation(), gf.demographic_parity_difference(), gf.fbeta(1.0, 2)],
}


@pytest.mark.parametrize("n", [2, 3])
def test_features_reproduce_value_gradient_and_pieces(n):
    """f(C) = g(U vec(C)) for every bound function exposing its features: values, gradients
    (chain rule U^T grad g) and, for piecewise-linear g, its pieces; structure flags agree."""
    from goalfit.goals.problem import as_objective

    space = SPACE2 if n == 2 else SPACE3
    rng = np.random.default_rng(n)
    kinds = set()
    for goal in FEATURE_GOALS[n]:
        f = (as_objective(goal) if isinstance(goal, str) else goal).bind(space)
        feats = f.features()
        assert feats.U.shape[1] == space.size
        assert (feats.kind, feats.smooth) == (f.kind, f.smooth), f.name
        kinds.add(type(f).__name__)
        for C in random_tensors(space, 15, rng):
            z = feats.U @ C.ravel()
            assert feats.value(z) == pytest.approx(f.value(C), abs=1e-12), f.name
            np.testing.assert_allclose((feats.U.T @ feats.gradient(z)).reshape(space.shape), f.gradient(C),
                                       atol=1e-10, err_msg=f.name)
            if feats.pieces is not None:
                P, Pc = feats.pieces
                assert np.max(P @ z + Pc) == pytest.approx(f.value(C), abs=1e-12)
    if n == 2:
        assert kinds == {"LinearFunction", "RatioFunction", "FeatureFunction", "MaxOfLinear", "SumFunction",
                         "MinRatio"}


# ------------------------------------------------------------------ (3) FeatureSpace
@pytest.mark.parametrize("space,obj,cons,dim,K", FS_CASES, ids=range(len(FS_CASES)))
def test_feature_space_maps(space, obj, cons, dim, K):
    cp = gf.Problem(obj, cons).compile(space)
    fs = FeatureSpace(cp)
    assert (fs.dim, fs.n_constraints) == (dim, K)
    assert fs.B.shape == (dim, space.size)
    rng = np.random.default_rng(dim * 10 + K)
    for C in random_tensors(space, 20, rng):
        xi = fs.xi(C)
        # psi(xi(C)) is the objective, phi(xi(C)) the constraint functions
        assert fs.psi(xi) == pytest.approx(cp.objective.value(C), abs=1e-12)
        expected = list(cp.row_violations(C)) + [cc.function.value(C) - cc.bound for cc in cp.nonlinear]
        np.testing.assert_allclose(fs.phi(xi), expected, atol=1e-12)
        # the cost tensor is the adjoint: <cost(lam), C> = lam . xi(C)
        lam = rng.normal(size=dim)
        assert np.vdot(fs.cost(lam), C) == pytest.approx(lam @ xi, abs=1e-12)
        # the gradients are those of the compositions (finite differences)
        mu = rng.random(K)
        z = np.clip(xi, fs.lo + 1e-3, fs.hi - 1e-3)
        d = rng.normal(size=dim) * 1e-6
        if cp.objective.smooth:
            num = (fs.psi(z + d) - fs.psi(z - d)) / 2
            assert num == pytest.approx(fs.psi_grad(z) @ d, rel=1e-4, abs=1e-12)
        if K and all(cc.function.smooth for cc in cp.nonlinear):
            num = mu @ (fs.phi(z + d) - fs.phi(z - d)) / 2
            assert num == pytest.approx(fs.phi_grad_dot(z, mu) @ d, rel=1e-4, abs=1e-12)
        # the box holds every tensor with the sample's row masses
        assert np.all(xi >= fs.lo - 1e-12) and np.all(xi <= fs.hi + 1e-12)
    # the box is the exact range: each end is reached by putting every row's mass on the
    # cheapest / dearest column of that coordinate
    Bt = fs.B.reshape((dim,) + space.shape)
    for k in range(dim):
        for end, pick in ((fs.lo, np.argmin), (fs.hi, np.argmax)):
            C = np.zeros(space.shape)
            j = pick(Bt[k], axis=2)
            c_idx, i_idx = np.indices(j.shape)
            C[c_idx, i_idx, j] = space.row_mass
            assert fs.xi(C)[k] == pytest.approx(end[k], abs=1e-12)


def test_feature_space_box_holds_every_threshold_rule():
    P, y, cells, space = calibrated(1)
    cp = gf.Problem("gmean", [gf.equal_opportunity_difference() <= 0.02, gf.coverage(1) <= 0.4]).compile(space)
    fs = FeatureSpace(cp)
    sets = cell_rules(P, y, cells, space)
    X = np.array([a + b for a, b in itertools.product(*sets)])
    Xi = X @ fs.B.T
    assert np.all(Xi >= fs.lo - 1e-12) and np.all(Xi <= fs.hi + 1e-12)
    # the recall coordinates reach both ends on the rules (predict nothing / everything)
    assert Xi.min(axis=0)[:2] == pytest.approx([0, 0]) and Xi.max(axis=0)[:2] == pytest.approx([1, 1])


def test_feature_space_rejects_non_convex_objectives():
    for obj in ("f1", "macro_f1"):
        with pytest.raises(ValueError, match="convex objective"):
            FeatureSpace(gf.Problem(obj).compile(SPACE2))


def _grid_min(f, lo, hi, n=401):
    g0, g1 = np.meshgrid(np.linspace(lo[0], hi[0], n), np.linspace(lo[1], hi[1], n))
    Z = np.column_stack([g0.ravel(), g1.ravel()])
    vals = f(Z)
    starts = Z[np.argsort(vals)[:5]]
    best = vals.min()
    for x0 in starts:  # polish
        r = minimize(lambda x: f(x[None])[0], x0, method="Nelder-Mead", bounds=list(zip(lo, hi)),
                     options={"xatol": 1e-10, "fatol": 1e-13, "maxiter": 4000})
        best = min(best, r.fun)
    return best


def _recall_psi(name):
    return {"hmean": lambda R: np.where((R > 0).all(axis=1), 1 - 2 / np.sum(1 / np.maximum(R, 1e-300), axis=1), 1.0),
            "gmean": lambda R: 1 - np.sqrt(np.clip(R, 0, None).prod(axis=1)),
            "qmean": lambda R: np.sqrt(np.mean((1 - R) ** 2, axis=1))}[name]


@pytest.mark.parametrize("name", ["hmean", "gmean", "qmean"])
def test_argmin_xi_matches_brute_force_along_a_sequence(name):
    """The xi-subproblem min_{xi in box} psi(xi) - lam.xi, called in sequence as the ellipsoid
    does (warm starts). The sequence includes lams whose answer is a kink on the box's face
    (r = 0 or r = 1), after which a warm start used to stay stuck there (e.g. H-mean at (0, 0)
    for lam = (-0.632, -0.167): value 1 instead of 0.784)."""
    cp = gf.Problem(name).compile(calibrated(2, groups=("A",), n_buckets=10)[3])
    fs = FeatureSpace(cp)
    psi = _recall_psi(name)
    rng = np.random.default_rng(1)
    lams = [np.array([-3.0, -4.0]), np.array([-0.632, -0.167]), np.array([2.5, 2.0]),
            np.array([0.377, -0.396]), np.array([-1.6, 1.08]), np.array([3.0, 3.0]),
            np.array([-0.5253, -0.6217])] + list(rng.normal(scale=1.5, size=(5, 2)))
    for lam in lams:
        xi = fs.argmin_xi(lam)
        assert np.all(xi >= fs.lo) and np.all(xi <= fs.hi)
        got = fs.psi(xi) - lam @ xi
        ref = _grid_min(lambda Z: psi(Z) - Z @ lam, fs.lo, fs.hi)
        assert ref - 1e-7 <= got <= ref + 1e-7, (lam, xi, got, ref)


def test_argmin_xi_with_multipliers_matches_reference():
    # H-mean with a coverage constraint: psi(xi) - lam.xi + mu.phi(xi) over the 3-dim box
    cp = gf.Problem("hmean", [gf.coverage(1) <= 0.3]).compile(SPACE2)
    fs = FeatureSpace(cp)
    rng = np.random.default_rng(2)
    for _ in range(6):
        lam, mu = rng.normal(size=3), rng.random(1) * 2
        xi = fs.argmin_xi(lam, mu)
        got = fs.psi(xi) - lam @ xi + mu @ fs.phi(xi)
        best = np.inf
        for x0 in rng.uniform(fs.lo, fs.hi, size=(8, 3)):
            r = minimize(lambda x: fs.psi(x) - lam @ x + mu @ fs.phi(x), x0, method="Nelder-Mead",
                         bounds=list(zip(fs.lo, fs.hi)), options={"xatol": 1e-10, "fatol": 1e-13, "maxiter": 6000})
            best = min(best, r.fun)
        assert got <= best + 1e-7


def test_argmin_xi_min_max_recall_is_the_lp():
    """min-max recall (piecewise linear) with a polyhedral constraint: the subproblem is an LP;
    compared with one written by hand in the recalls and the DP gap."""
    P, y, cells, space = calibrated(3)
    cp = gf.Problem("minmax_recall", [gf.demographic_parity_difference() <= 0.02]).compile(space)
    fs = FeatureSpace(cp)
    rng = np.random.default_rng(3)
    Mz = np.linalg.lstsq(fs.B.T, cp.objective.coefs.T, rcond=None)[0].T  # pieces in xi
    Ma = np.linalg.lstsq(fs.B.T, cp.A.T, rcond=None)[0].T  # constraint rows in xi
    np.testing.assert_allclose(Mz @ fs.B, cp.objective.coefs, atol=1e-12)
    for _ in range(8):
        lam, mu = rng.normal(size=fs.dim), rng.random(fs.n_constraints)
        xi = fs.argmin_xi(lam, mu)
        # variables (xi, t): min t - lam.xi + mu.(Ma xi - b)  s.t.  Mz xi + consts <= t
        c = np.r_[-lam + mu @ Ma, 1.0]
        res = linprog(c, A_ub=np.hstack([Mz, -np.ones((len(Mz), 1))]), b_ub=-cp.objective.consts,
                      bounds=list(zip(fs.lo, fs.hi)) + [(None, None)], method="highs")
        ref = res.fun - mu @ cp.b
        got = fs.psi(xi) - lam @ xi + mu @ fs.phi(xi)
        assert got == pytest.approx(ref, abs=1e-9)


# ------------------------------------------------------------------ (4) mixture program
MIX_CASES = [("hmean", hmean, []), ("hmean", hmean, [gf.coverage(1) <= 0.45]),
             ("gmean", gmean, [gf.demographic_parity_difference() <= 0.03]), ("qmean", qmean, [gf.coverage(1) <= 0.45])]


@pytest.mark.parametrize("seed", range(4))
def test_mixture_program_is_the_optimum_over_mixtures(seed):
    space, members, Cs = candidates(seed)
    _, uC, _ = unique_members(members, Cs)
    gains = []
    for obj, psi, cons in MIX_CASES:
        cp = gf.Problem(obj, cons).compile(space)
        ms, C2, w, feasible, viol = mixture_program(cp, members, Cs)
        mix = np.tensordot(w, C2, axes=1)
        val = cp.objective.value(mix)
        # reference: exact LP + scalar search over the members' hull (one simplex)
        ref = recall_optimum([uC.reshape(len(uC), -1)], space, psi, cp.A, cp.b)
        assert feasible and cp.max_violation(mix) <= 1e-9
        assert ref - 1e-9 <= val <= ref + 1e-6
        assert np.all(w > 0) and w.sum() == pytest.approx(1.0)
        pm, pC, pw, pf, pv = prune(cp, members, Cs)
        pval = cp.objective.value(np.tensordot(pw, pC, axes=1))
        assert val <= pval + 1e-12  # never worse than pruning
        gains.append(pval - val)
    if seed in (0, 1):
        assert max(gains) > 1e-2  # and here strictly better than the LP's upper bound


def test_mixture_program_three_members_brute_force():
    """Three members at a time: the program against a fine grid over the 2-simplex (H-mean and
    the coverage row vectorized in the recalls)."""
    space, members, Cs = candidates(5, n_members=40)
    _, uC, _ = unique_members(members, Cs)
    cp = gf.Problem("hmean", [gf.coverage(1) <= 0.5]).compile(space)
    pi = space.priors
    n = 300
    grid = np.array([(i, j, n - i - j) for i in range(n + 1) for j in range(n + 1 - i)]) / n
    rng = np.random.default_rng(0)
    tried = mixing_helps = 0
    for _ in range(40):
        C3 = uC[rng.choice(len(uC), 3, replace=False)]
        R = np.stack([C3[:, :, k, k].sum(axis=1) / pi[k] for k in range(2)], axis=1)  # (3, 2)
        cov = C3[:, :, :, 1].sum(axis=(1, 2))
        Rg, covg = grid @ R, grid @ cov
        ok = covg <= 0.5
        if not ok.any():
            continue
        tried += 1
        brute = hmean_rows(Rg[ok]).min()
        ms, C2, w, feasible, _ = mixture_program(cp, [object() for _ in range(3)], C3)
        mix = np.tensordot(w, C2, axes=1)
        val = cp.objective.value(mix)
        assert feasible and cp.max_violation(mix) <= 1e-9
        # at least as good as every grid point, and at most a grid step better
        assert brute - 2e-3 <= val <= brute + 1e-9
        vertices = hmean_rows(R)[cov <= 0.5]
        mixing_helps += bool(len(vertices)) and val < vertices.min() - 1e-3
    assert tried >= 10 and mixing_helps >= 3


def hmean_rows(R):
    return np.where((R > 0).all(axis=1), 1 - R.shape[1] / np.sum(1 / np.maximum(R, 1e-300), axis=1), 1.0)


@pytest.mark.parametrize("seed", range(3))
def test_mixture_program_linear_objective_is_the_lp(seed):
    space, members, Cs = candidates(seed)
    cp = gf.Problem("balanced_error", [gf.demographic_parity_difference() <= 0.03, gf.coverage(1) >= 0.3]).compile(space)
    ms, C2, w, feasible, viol = mixture_program(cp, members, Cs)
    _, uC, _ = unique_members(members, Cs)
    X = uC.reshape(len(uC), -1)
    ref = linprog(X @ cp.objective.coef.ravel(), A_ub=cp.A @ X.T, b_ub=cp.b, A_eq=np.ones((1, len(X))),
                  b_eq=[1.0], method="highs")
    assert ref.status == 0 and feasible
    mix = np.tensordot(w, C2, axes=1)
    assert cp.objective.value(mix) == pytest.approx(ref.fun + cp.objective.const, abs=1e-10)
    assert cp.max_violation(mix) <= 1e-9


def test_mixture_program_infeasible_members_least_violation():
    space, members, Cs = candidates(1)
    cp = gf.Problem("hmean", [gf.coverage(1) <= 0.1, gf.coverage(1) >= 0.2]).compile(space)
    ms, C2, w, feasible, viol = mixture_program(cp, members, Cs)
    mix = np.tensordot(w, C2, axes=1)
    assert not feasible
    assert cp.max_violation(mix) == pytest.approx(0.05, abs=1e-8) and viol == pytest.approx(0.05, abs=1e-8)
    pm, pC, pw, _, _ = prune(cp, members, Cs)
    assert cp.objective.value(mix) <= cp.objective.value(np.tensordot(pw, pC, axes=1)) + 1e-12
    # the best H-mean among mixtures with coverage exactly 0.15 (up to prune's 1e-9 slack)
    _, uC, _ = unique_members(members, Cs)
    ref = recall_optimum([uC.reshape(len(uC), -1)], space, hmean, cp.A, cp.b + 0.05 + 1e-9)
    assert cp.objective.value(mix) == pytest.approx(ref, abs=1e-6)


@pytest.mark.parametrize("seed", range(3))
def test_mixture_program_nonlinear_constraint_met_by_mixing_infeasible_members(seed):
    """KL quantification <= 1e-4: no member meets it (several predict one class only: KL is
    infinite), so the pruning LP, which bounds the mixture's KL by the members' values, finds
    nothing, but mixtures do. The program must not crash on the infinite values, must report
    the mixture feasible, and reach the optimum over the members' hull (KL <= c is an interval
    of the coverage in the binary case)."""
    P, y, cells, space = calibrated(seed, groups=("A",), n_buckets=10)
    oracle = PluginOracle(P, y, cells, space)
    rng = np.random.default_rng(seed)
    costs = [np.array([[[0.0, 1.0], [0.0, 1.0]]]), np.array([[[1.0, 0.0], [1.0, 0.0]]])]
    costs += list(rng.normal(size=(10,) + space.shape))
    members, Cs = zip(*[oracle(c) for c in costs])
    Cs = np.array(Cs)
    c = 1e-4
    cp = gf.Problem("hmean", [gf.kl_quantification() <= c]).compile(space)
    kl = cp.constraints[0].function.values(Cs)
    keep = kl > c
    members, Cs = [m for m, k in zip(members, keep) if k], Cs[keep]
    assert np.isinf(kl).sum() >= 2 and len(members) >= 4
    ms, C2, w, feasible, viol = mixture_program(cp, members, Cs)
    mix = np.tensordot(w, C2, axes=1)
    assert feasible and cp.max_violation(mix) <= 1e-9
    _, uC, _ = unique_members(members, Cs)
    A, b = kl_coverage_rows(space, c)
    ref = recall_optimum([uC.reshape(len(uC), -1)], space, hmean, A, b)
    assert ref - 1e-9 <= cp.objective.value(mix) <= ref + 1e-6


def test_final_mixture_keeps_the_iterates_mixture_on_a_few_of_its_members():
    """Split Frank-Wolfe on KL quantification (3 classes, 2 groups, 2000 iterations, no stopping):
    the LP of §8.2 loses to the iterates' own weights on this strongly curved objective, which
    kept hundreds of members; the output is the same confusion tensor (Carathéodory) on at most
    D + 1 of them, and ``prune_output="lp"`` is the LP alone (the iterates' mixture here)."""
    from goalfit.methods.plugin import split_frank_wolfe
    from goalfit.methods.plugin.mixture import MAX_MEMBERS

    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.full(3, 0.8), 3000)
    y = (P.cumsum(axis=1) < rng.random((3000, 1))).sum(axis=1)  # drawn from P: calibrated
    enc = CellEncoder()
    cells = enc.fit_transform(pd.Series(rng.choice(["F", "M"], 3000), name="g"))
    space = ConfusionSpace.from_codes(y, cells, np.arange(3), enc.cells_)
    cp = gf.Problem("kl_quantification", [gf.demographic_parity_difference() <= 0.02]).compile(space)

    def run(prune_output):
        return split_frank_wolfe(cp, PluginOracle(P, y, cells, space), max_iter=2000, tol=0.0,
                                 exact_binary=False, prune_output=prune_output)

    compact, lp, own = run(True), run("lp"), run(False)
    assert len(own.members) > MAX_MEMBERS and len(lp.members) == len(own.members)
    assert len(compact.members) <= space.size + 1 and len(compact.members) <= MAX_MEMBERS
    np.testing.assert_allclose(compact.confusion, own.confusion, atol=1e-7)
    assert compact.feasible and cp.max_violation(compact.confusion) <= 1e-9
    assert cp.objective.value(compact.confusion) == pytest.approx(cp.objective.value(own.confusion), abs=1e-9)


def test_caratheodory_keeps_the_mixture_on_at_most_d_plus_one_members():
    """200 random members of a 2 x 3 x 3 space: the same confusion tensor (to 1e-7) on at most
    D + 1 of them, D the entries that differ between members."""
    from goalfit.methods.plugin.mixture import caratheodory

    space = space3(4)
    rng = np.random.default_rng(4)
    Cs = random_tensors(space, 200, rng)
    w = rng.dirichlet(np.ones(200))
    cp = gf.Problem("hmean", [gf.demographic_parity_difference() <= 0.5]).compile(space)
    members = [f"m{i}" for i in range(200)]
    m, C, w2, feasible, viol = caratheodory(cp, members, Cs, w, True, 0.0)
    assert len(m) <= space.size + 1 and feasible and viol == 0.0
    np.testing.assert_allclose(np.tensordot(w2, C, axes=1), np.tensordot(w, Cs, axes=1), atol=1e-7)
    assert np.all(w2 > 0) and w2.sum() == pytest.approx(1.0)
    assert all(mm in members for mm in m)


@pytest.mark.parametrize("value", ["LP", "paper", 2, None])
def test_prune_output_other_than_true_false_or_lp_is_refused_before_the_run(value):
    """A misspelt ``prune_output`` would have run as True (any truthy value): SplitFW and ConGDA
    refuse it before their first oracle call."""
    from goalfit.methods.plugin import con_gda, split_frank_wolfe

    P, y, cells, space = calibrated(0, groups=("F", "M"), n_buckets=8)
    cp = gf.Problem("hmean", [gf.demographic_parity_difference() <= 0.05]).compile(space)
    for method in (split_frank_wolfe, con_gda):
        oracle = PluginOracle(P, y, cells, space)
        with pytest.raises(ValueError, match="prune_output must be True, False or 'lp'"):
            method(cp, oracle, prune_output=value)
        assert oracle.n_calls == 0
