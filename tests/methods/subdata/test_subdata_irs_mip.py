"""IRS and the exact mixed-integer formulations of Ye & Xie on small instances."""
import itertools

import numpy as np
import pytest

from goalfit.methods.subdata.framework import multiclass_costs, fairness_value
from goalfit.methods.subdata.irs import irs, irs_path
from goalfit.methods.subdata.mip import (
    big_m, bruteforce_gsvmf, solve_glrf, solve_gmsvmf, solve_gsvmf, solve_gsvmf_milp,
)
from goalfit.methods.subdata.wstep import (
    EstimatorStep, KernelSVMStep, LinearSVMStep, LogisticStep, MulticlassSVMStep,
)

pytest.importorskip("pyscipopt")
pytest.importorskip("cvxpy")


def _data(seed, n=8, d=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] + 0.8 * rng.normal(size=n) > 0, 1, -1)
    g = np.where(rng.random(n) < 0.5, 1, -1)
    g[:2] = [1, -1]
    y[2:4] = [1, -1]
    return X, y, g


@pytest.mark.parametrize("measure,rho,eps", [("omr", 0.5, None), ("dp", 2.0, None), ("fpr", 1.0, None),
                                             ("omr", 0.0, 0.1), ("f1", 0.5, None), ("eo", 0.3, 0.2)])
def test_mip_equals_bruteforce_and_is_below_irs(measure, rho, eps):
    X, y, g = _data(2, n=7)
    lam, t = 0.5, 1.0
    learner = LinearSVMStep(lam=lam)
    ref = bruteforce_gsvmf(X, y, g, learner=learner, measure=measure, t=t, rho=rho, epsilon=eps)
    mip = solve_gsvmf(X, y, g, measure=measure, lam=lam, t=t, rho=rho, epsilon=eps, time_limit=60)
    assert mip.optimal
    assert mip.objective == pytest.approx(ref.objective, abs=1e-5)
    res = irs(learner, X, y, g, measure=measure, rho=rho, epsilon=eps, t=t, n_restarts=2, random_state=0)
    assert mip.objective <= res.objective + 1e-5
    if eps is not None:
        assert mip.fairness <= eps + 1e-9 and res.fairness <= eps + 1e-9


def test_big_m_and_indicator_formulations_agree():
    X, y, g = _data(2, n=10)
    a = solve_gsvmf(X, y, g, measure="omr", lam=1.0, t=1.0, rho=1.0, time_limit=60)
    b = solve_gsvmf(X, y, g, measure="omr", lam=1.0, t=1.0, rho=1.0, time_limit=60, formulation="indicator")
    assert a.optimal and b.optimal
    assert a.objective == pytest.approx(b.objective, abs=1e-5)
    # Prop. 3: every margin at the optimum is below the closed-form M
    M = big_m(X, lam=1.0, t=1.0)
    assert np.all(np.maximum(0, 1 - y * (X @ b.w + b.b)) <= M)
    with pytest.raises(ValueError, match="lam > 0"):
        solve_gsvmf(X, y, g, lam=0.0)


def test_warm_start_gives_an_incumbent_at_least_as_good_as_irs():
    X, y, g = _data(3, n=30, d=3)
    res = irs(LinearSVMStep(lam=1.0), X, y, g, rho=1.0, t=1.0)
    mip = solve_gsvmf(X, y, g, lam=1.0, t=1.0, rho=1.0, time_limit=1,
                      warm_start=(res.model.w, res.model.b, res.z))
    assert mip.start == "accepted"
    assert mip.objective <= res.objective + 1e-6
    assert mip.bound <= mip.objective + 1e-9 and mip.gap >= 0
    assert solve_gsvmf(X, y, g, lam=1.0, t=1.0, rho=1.0, time_limit=0.5).start is None


def test_a_rejected_warm_start_is_reported_not_dropped_silently():
    X, y, g = _data(4, n=8)
    M = big_m(X, lam=1.0, t=1.0)
    w_far = np.full(2, 10 * M)  # margins far beyond the closed-form big-M: infeasible for the model
    with pytest.warns(RuntimeWarning, match="exceeds the big-M"):
        mip = solve_gsvmf(X, y, g, lam=1.0, t=1.0, rho=1.0, time_limit=30, big_m_value=M,
                          warm_start=(w_far, 0.0, np.ones(8)))
    assert mip.start.startswith("rejected") and mip.optimal  # solved cold
    ref = bruteforce_gsvmf(X, y, g, learner=LinearSVMStep(lam=1.0), t=1.0, rho=1.0)
    assert mip.objective == pytest.approx(ref.objective, abs=1e-5)
    z_unfair = (g == 1).astype(float)  # OMR gap 1 > epsilon
    with pytest.warns(RuntimeWarning, match="epsilon"):
        mip = solve_gsvmf(X, y, g, lam=1.0, t=1.0, epsilon=0.3, time_limit=30,
                          warm_start=(np.zeros(2), 0.0, z_unfair))
    assert mip.start.startswith("rejected: F(z)")
    with pytest.raises(ValueError, match="warm_start"):
        solve_gsvmf(X, y, g, lam=1.0, warm_start=(np.zeros(3), 0.0, np.ones(8)))


@pytest.mark.parametrize("make,t", [(lambda: LinearSVMStep(lam=0.2), 1.0), (lambda: LinearSVMStep(lam=0.0), 0.5),
                                    (lambda: LogisticStep(lam=0.01), np.log(0.6))])
@pytest.mark.parametrize("measure", ["omr", "dp", "f1"])
def test_irs_objective_never_increases(make, t, measure):
    rng = np.random.default_rng(4)
    n = 120
    X = rng.normal(size=(n, 3))
    g = np.where(rng.random(n) < 0.4, 1, -1)
    y = np.where(X[:, 0] + 0.7 * g + rng.normal(size=n) > 0, 1, -1)
    res = irs(make(), X, y, g, measure=measure, rho=0.5, t=t, n_restarts=2, random_state=1, max_iter=30)
    for r in {h["restart"] for h in res.history}:
        hs = [h for h in res.history if h["restart"] == r]
        for a, b in zip(hs, hs[1:]):
            assert b["objective_after_zstep"] <= a["objective"] + 1e-7
            assert b["objective"] <= b["objective_after_zstep"] + 1e-6
    assert res.n_iter < 30  # finite termination well before the cap


def test_rho_zero_is_the_ramp_loss_svm():
    X, y, g = _data(5, n=60, d=3)
    lam, t = 0.1, 0.8
    L = LinearSVMStep(lam=lam)
    res = irs(L, X, y, g, rho=0.0, t=t)
    hinge = L.outcomes(res.model, X, y)
    ramp = np.mean(np.minimum(hinge, t)) - t + lam * res.model.w @ res.model.w
    assert res.objective == pytest.approx(ramp, abs=1e-9)
    # the selection is "hinge below t" (points exactly at t may go either way)
    assert np.all(res.z[hinge < t - 1e-9] == 1) and np.all(res.z[hinge > t + 1e-9] == 0)


def test_multiclass_mip_equals_enumeration_and_is_below_irs():
    rng = np.random.default_rng(6)
    n, K = 5, 3
    X, y = rng.normal(size=(n, 2)), np.array([0, 1, 2, 0, 1])
    g = np.array([1, -1, 1, -1, 1])
    lam, t, rho = 0.5, 1.0, 0.5
    L = MulticlassSVMStep(lam=lam, n_classes=K)
    best = np.inf
    for assign in itertools.product(range(K), repeat=n):
        Z = np.eye(K)[list(assign)]
        model = L.fit(X, y, Z)
        H = multiclass_costs(L.outcomes(model, X, y), y, Z, t) + L.regularizer(model) \
            + rho * fairness_value("omr", Z[np.arange(n), y], np.ones(n, int), g)
        best = min(best, H)
    mip = solve_gmsvmf(X, y, g, lam=lam, t=t, rho=rho, time_limit=60)
    assert mip.optimal
    assert mip.objective == pytest.approx(best, abs=1e-5)
    res = irs(L, X, y, g, rho=rho, t=t)
    assert mip.objective <= res.objective + 1e-5
    hs = [h["objective"] for h in res.history]
    assert all(b <= a + 1e-7 for a, b in zip(hs, hs[1:]))


def test_glrf_mip_incumbent_below_irs():
    X, y, g = _data(7, n=8)
    t = np.log(0.6)
    res = irs(LogisticStep(lam=0.2), X, y, g, rho=0.5, t=t)
    mip = solve_glrf(X, y, g, lam=0.2, t=t, rho=0.5, time_limit=2)
    assert np.all(np.abs(res.model.w) <= 10) and abs(res.model.b) <= 10
    assert mip.objective <= res.objective + 1e-4
    assert mip.bound <= mip.objective + 1e-6


@pytest.mark.parametrize("learner,t", [(KernelSVMStep(kernel="rbf"), 0.5),
                                       (EstimatorStep(__import__("sklearn.tree", fromlist=["x"]).DecisionTreeClassifier(
                                           max_depth=2, random_state=0)), 0.6),
                                       (EstimatorStep(__import__("sklearn.neural_network", fromlist=["x"]).MLPClassifier(
                                           hidden_layer_sizes=(8,), max_iter=300, random_state=0)), 0.6)])
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_black_box_irs_returns_its_best_iterate(learner, t):
    """Alg. 4 (kernel SVM) and Alg. 5 (any estimator with sample_weight, here a tree and a neural net)."""
    rng = np.random.default_rng(8)
    n = 150
    X = rng.normal(size=(n, 2))
    g = np.where(rng.random(n) < 0.5, 1, -1)
    y = np.where(X[:, 0] + 0.8 * g + 0.5 * rng.normal(size=n) > 0, 1, -1)
    res = irs(learner, X, y, g, rho=1.0, t=t, max_iter=6)
    assert res.objective == pytest.approx(min(h["objective"] for h in res.history))


def test_irs_path_keeps_the_better_run_and_its_warm_run_descends_from_the_previous_solution():
    from goalfit.methods.subdata.framework import selection_costs
    from goalfit.methods.subdata.zstep import select

    X, y, g = _data(9, n=50, d=3)
    rhos = [0.1, 1.0, 5.0]
    L = LinearSVMStep(lam=0.1)
    path = irs_path(L, X, y, g, rhos, t=1.0)
    cold_path = irs_path(L, X, y, g, rhos, t=1.0, warm_start=False)
    improved = 0
    for k, rho in enumerate(rhos):
        cold = irs(L, X, y, g, rho=rho, t=1.0)  # independent cold run
        assert cold_path[k].objective == pytest.approx(cold.objective, abs=1e-9)
        # wall-clock of the whole call(s): initial fits included, so above the iterations' times
        assert path[k].seconds > sum(h["seconds"] for h in path[k].history) > 0
        assert cold.seconds > sum(h["seconds"] for h in cold.history)
        if k == 0:
            assert path[0].objective == pytest.approx(cold.objective, abs=1e-9)
            continue
        prev = path[k - 1].model
        warm = irs(L, X, y, g, rho=rho, t=1.0, init_model=prev)
        assert path[k].objective == pytest.approx(min(cold.objective, warm.objective), abs=1e-9)
        # the warm run starts at the previous solution with its best selection for this rho ...
        sel = select(selection_costs(L.outcomes(prev, X, y), 1.0, y), y, g, measure="omr", rho=rho)
        H_start = sel.value + L.regularizer(prev)
        assert warm.history[0]["objective_after_zstep"] == pytest.approx(H_start, abs=1e-9)
        # ... and never ends above it (Prop. 9 from a warm start)
        assert warm.objective <= H_start + 1e-9
        improved += warm.objective < cold.objective - 1e-9
    assert improved == 2  # on this instance the warm start beats the cold run at rho = 1 and 5 (by 0.055)


@pytest.mark.parametrize("measure,eps", [("omr", None), ("dp", 0.1)])
def test_highs_milp_for_lambda_zero_matches_scip_and_bruteforce(measure, eps):
    X, y, g = _data(10, n=8)
    kw = dict(measure=measure, t=1.0, rho=0.7, epsilon=eps)
    h = solve_gsvmf_milp(X, y, g, big_m_value=1e3, **kw)
    s = solve_gsvmf(X, y, g, lam=0.0, formulation="indicator", time_limit=60, **kw)
    ref = bruteforce_gsvmf(X, y, g, learner=LinearSVMStep(lam=0.0), **kw)
    assert h.optimal and s.optimal
    assert h.objective == pytest.approx(ref.objective, abs=1e-6)
    assert s.objective == pytest.approx(ref.objective, abs=1e-5)


# ---------------------------------------------------------------------------------------------
# compiled goals (SelectionMeasure): the MICP, the big-M reference, multiclass, monotone IRS

import goalfit as gf  # noqa: E402
from goalfit.fit import prepare  # noqa: E402
from goalfit.goals import Problem  # noqa: E402
from goalfit.methods.subdata.measure import SelectionMeasure  # noqa: E402
from goalfit.methods.subdata.mip import reference_value  # noqa: E402
from goalfit.methods.subdata.zstep import select_multiclass  # noqa: E402


def _goal_measure(y, groups, constraints, *, objective="error", form="constraint", rho=1.0):
    d = prepare(np.zeros((len(y), 1)), (np.asarray(y) == 1).astype(int), sensitive_features=groups)
    cp = Problem(objective, constraints).compile(d.space)
    return SelectionMeasure.from_compiled(cp, d.y_codes, d.cells, form=form, rho=rho)


@pytest.mark.parametrize("constraints,form", [
    ([gf.coverage(group="a") >= 0.6], "constraint"),
    ([gf.true_positive_rate(group="a") >= gf.true_positive_rate(group="b") + 0.2], "constraint"),
    ([gf.coverage() >= 0.6, gf.equal_opportunity_difference() <= 0.0], "penalty"),
])
def test_mip_on_compiled_goals_equals_bruteforce_and_is_below_irs(constraints, form):
    X, y, g = _data(11, n=8)
    M = _goal_measure(y, np.where(g == 1, "a", "b"), constraints, form=form, rho=0.8)
    lam, t = 0.5, 1.0
    learner = LinearSVMStep(lam=lam)
    ref = bruteforce_gsvmf(X, y, learner=learner, measure=M, t=t)
    mip = solve_gsvmf(X, y, measure=M, lam=lam, t=t, time_limit=60)
    assert mip.optimal and mip.objective == pytest.approx(ref.objective, abs=1e-5)
    res = irs(learner, X, y, measure=M, t=t, n_restarts=2, random_state=0)
    assert mip.objective <= res.objective + 1e-5
    if form == "constraint":
        assert M.feasible(mip.z) and M.feasible(res.z) and mip.fairness == pytest.approx(0.0, abs=1e-12)
    ind = solve_gsvmf(X, y, measure=M, lam=lam, t=t, time_limit=60, formulation="indicator")
    assert ind.objective == pytest.approx(ref.objective, abs=1e-5)


def test_big_m_reference_comes_from_a_feasible_selection():
    """Prop. 3's reference point must be feasible: with 0.2 <= coverage <= 0.3 none of z = 0,
    z = 1, z = 1[y = +] is (their coverage is the prior 0.5, or 1), so the reference is the exact
    z-step at w = 0 and the big-M model stays exact."""
    X, y, _ = _data(12, n=10)
    y = np.array([1, -1] * 5)
    M = _goal_measure(y, None, [gf.coverage() >= 0.2, gf.coverage() <= 0.3])
    for zc in (np.zeros(10), np.ones(10), (y == 1).astype(float)):
        assert not M.feasible(zc)
    lam, t = 1.0, 1.0
    ref = reference_value(X, y, M, lam=lam, t=t)
    # w = 0, b = 0: every hinge is 1, so H = (1 - t) sum(reward z) = 0 at any feasible z
    assert ref == pytest.approx(0.0, abs=1e-12)
    a = solve_gsvmf(X, y, measure=M, lam=lam, t=t, time_limit=60)
    b = solve_gsvmf(X, y, measure=M, lam=lam, t=t, time_limit=60, formulation="indicator")
    assert a.optimal and b.optimal and a.objective == pytest.approx(b.objective, abs=1e-5)
    assert 0.2 - 1e-9 <= np.mean(np.where(a.z > 0, y == 1, y == -1)) <= 0.3 + 1e-9  # coverage of z
    M_big = big_m(X, lam=lam, t=t, ref_value=ref, cost_mass=float(M.reward.sum()))
    assert np.all(np.maximum(0, 1 - y * (X @ b.w + b.b)) <= M_big)


def test_multiclass_zstep_on_compiled_goals_equals_the_named_omr_zstep():
    """Alg. 3 on compiled correctness-only goals (the multiclass error and its group gap)."""
    rng = np.random.default_rng(13)
    for _ in range(30):
        n, K = int(rng.integers(4, 9)), 3
        U, y = rng.uniform(0, 3, (n, K)), rng.integers(0, K, n)
        g = rng.choice([-1, 1], n)
        if len(set(g.tolist())) < 2 or len(set(y.tolist())) < 2:
            continue
        d = prepare(np.zeros((n, 1)), y, sensitive_features=np.where(g == 1, "p", "m"))
        for eps, form in ((0.2, "constraint"), (0.0, "penalty")):
            cp = Problem("error", [gf.error_rate_difference() <= eps]).compile(d.space)
            M = SelectionMeasure.from_compiled(cp, d.y_codes, d.cells, form=form, rho=0.7)
            codes = np.asarray(d.y_codes, dtype=np.intp)
            Uc = U[:, np.argsort(np.unique(y))]  # columns in code order (codes = y here)
            got = select_multiclass(Uc, codes, t=1.0, measure=M)
            want = select_multiclass(Uc, codes, g, t=1.0, rho=0.7 if form == "penalty" else 0.0,
                                     epsilon=eps if form == "constraint" else None)
            assert got.value == pytest.approx(want.value, abs=1e-12)


@pytest.mark.parametrize("form", ["constraint", "penalty"])
def test_irs_on_compiled_goals_never_increases_its_objective(form):
    rng = np.random.default_rng(14)
    n = 150
    X = rng.normal(size=(n, 3))
    grp = np.where(rng.random(n) < 0.4, "a", "b")
    y = np.where(X[:, 0] + 0.7 * (grp == "a") + rng.normal(size=n) > 0, 1, -1)
    M = _goal_measure(y, grp, [gf.true_positive_rate(group="a") <= gf.true_positive_rate(group="b"),
                               gf.coverage() >= 0.45], form=form, rho=2.0)
    res = irs(LinearSVMStep(lam=0.05), X, y, measure=M, t=1.0, n_restarts=1, random_state=0, max_iter=30)
    hs = res.history
    assert all(h["zstep"] == "milp" and h["zstep_exact"] for h in hs)
    for a, b in zip(hs, hs[1:]):
        if a["restart"] == b["restart"]:
            assert b["objective_after_zstep"] <= a["objective"] + 1e-7
            assert b["objective"] <= b["objective_after_zstep"] + 1e-6
    if form == "constraint":
        assert M.feasible(res.z) and res.fairness == pytest.approx(0.0, abs=1e-12)
