"""Goh et al. (NIPS 2016): ramp bounds, weighted-SVM reduction, cutting plane, MM, datasets."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import goalfit as gf
from goalfit.confusion import CellEncoder, ConfusionSpace, confusion_tensor
from goalfit.confusion.datasets import Dataset, stack_datasets
from goalfit.goals import Problem
from goalfit.methods.ramp import (Majorizer, compile_rate_program, hinge_training_set,
                                  majorization_minimization, ramp, ramp_upper_bounds, ramp_values,
                                  recover_primal, solve_problem3, solve_problem3_cvxpy, solve_weighted_svm)

cp = pytest.importorskip("cvxpy")


def _toy(n=300, seed=0, shift=1.0):
    rng = np.random.default_rng(seed)
    g = rng.integers(0, 2, n)
    X = rng.normal(size=(n, 3))
    X[:, 0] += shift * g
    y = (X[:, 0] + 0.5 * X[:, 1] + 0.5 * rng.normal(size=n) > 0.6).astype(int)
    return X, y, np.where(g == 1, "B", "A")


def _program(problem, y, groups, w=None):
    enc = CellEncoder().fit({"g": groups})
    cells = enc.transform({"g": groups})
    space = ConfusionSpace.from_codes(y, cells, np.array([0, 1]), enc.cells_, w)
    compiled = problem.compile(space)
    return compile_rate_program(compiled, y, cells, w), compiled, space, cells


# ---------------------------------------------------------------- ramp and its bounds
def test_ramp_bounds_are_upper_bounds_tight_at_anchor():
    z = np.linspace(-3, 3, 601)
    for z0 in np.linspace(-2, 2, 81):
        up, un = ramp_upper_bounds(z, np.full_like(z, z0))
        assert (up >= ramp(z) - 1e-15).all() and (un >= ramp(-z) - 1e-15).all()
        up0, un0 = ramp_upper_bounds(np.array([z0]), np.array([z0]))
        assert up0[0] == pytest.approx(ramp(z0)) and un0[0] == pytest.approx(ramp(-z0))
    # convex in z for a fixed anchor: second differences are non-negative
    for z0 in (-1.0, 0.0, 0.3, 1.0):
        up, un = ramp_upper_bounds(z, np.full_like(z, z0))
        assert (np.diff(up, 2) >= -1e-12).all() and (np.diff(un, 2) >= -1e-12).all()
    assert ramp(0.0) == 0.5 and ramp(2.0) == 1.0 and ramp(-0.7) == 0.0
    np.testing.assert_allclose(ramp(z) + ramp(-z), 1.0)


# ---------------------------------------------------------------- goals -> per-example weights
def test_rate_program_reproduces_the_core_goal_values():
    X, y, g = _toy(200, seed=1)
    w = np.random.default_rng(2).uniform(0.5, 2.0, len(y))
    cons = [gf.positive_prediction_rate(group="A") >= 0.8 * gf.positive_prediction_rate(group="B"),
            gf.true_positive_rate() - gf.false_positive_rate(group="B") >= 0.1,
            gf.demographic_parity_difference("g") <= 0.05]
    prob = Problem(gf.error_rate() + 0.3 * gf.false_negative_rate(group="A"), cons)
    program, compiled, space, cells = _program(prob, y, g, w)
    assert (program.a0 >= 0).all() and (program.c0 >= 0).all() and (program.A >= 0).all() and (program.C >= 0).all()
    assert (np.minimum(program.A, program.C) == 0).all()  # one side per example and row
    p = np.random.default_rng(3).uniform(size=len(y))
    C = confusion_tensor(y, np.column_stack([1 - p, p]), cells, 2, space.n_cells, w)
    obj, rows = program.values(p)
    assert obj == pytest.approx(compiled.objective.value(C), abs=1e-12)
    np.testing.assert_allclose(rows, compiled.row_violations(C), atol=1e-12)


def test_rate_program_rejects_nonlinear_and_multiclass_goals():
    X, y, g = _toy(100)
    with pytest.raises(ValueError, match="need a linear objective"):
        _program(Problem("gmean"), y, g)
    with pytest.raises(ValueError, match="need a linear objective"):
        _program(Problem(gf.precision()), y, g)
    y3 = np.arange(len(y)) % 3
    enc = CellEncoder().fit(None, len(y3))
    space = ConfusionSpace.from_codes(y3, np.zeros(len(y3), int), np.array([0, 1, 2]), enc.cells_)
    with pytest.raises(ValueError, match="binary"):
        compile_rate_program(Problem("error").compile(space), y3, np.zeros(len(y3), int))


# ---------------------------------------------------------------- inner problem
@pytest.mark.parametrize("solver", ["svc", "cvxpy", "liblinear"])
def test_weighted_svm_reduction_matches_cvxpy(solver):
    rng = np.random.default_rng(4)
    n = 120
    X = rng.normal(size=(n, 4))
    a, c = rng.uniform(0, 1, n) * (rng.uniform(size=n) < 0.7), rng.uniform(0, 1, n) * (rng.uniform(size=n) < 0.7)
    z0 = rng.normal(scale=0.8, size=n)
    lam = 0.05
    # reference: the Lagrangian's hinge part minimized directly
    w, b = cp.Variable(4), cp.Variable()
    z = X @ w + b
    hp, hn = z0 <= 0.5, z0 >= -0.5
    ref = cp.Problem(cp.Minimize(a[hp] @ cp.pos(0.5 + z[hp]) + c[hn] @ cp.pos(0.5 - z[hn]) + lam / 2 * cp.sum_squares(w)))
    ref.solve(solver=cp.CLARABEL)
    sol = solve_weighted_svm(X, a, c, z0, lam, solver=solver, tol=1e-8, max_iter=100000)
    zz = X @ sol.coef + sol.intercept
    val = a[hp] @ np.maximum(0, 0.5 + zz[hp]) + c[hn] @ np.maximum(0, 0.5 - zz[hn]) + lam / 2 * sol.coef @ sol.coef
    tol = 2e-3 if solver == "liblinear" else 1e-5  # liblinear regularizes its intercept slightly
    assert val == pytest.approx(ref.value, rel=tol, abs=tol)
    if solver == "svc":  # the dual bound is a lower bound and tight
        assert sol.lower <= val + 1e-9
        assert sol.lower == pytest.approx(ref.value, rel=1e-4)
    rows, yy, om, const = hinge_training_set(a, c, z0)
    assert const == pytest.approx(a[(a > 0) & ~hp].sum() + c[(c > 0) & ~hn].sum())
    assert len(rows) == ((a > 0) & hp).sum() + ((c > 0) & hn).sum()


def test_weighted_svm_one_label_and_empty_cases():
    X = np.ones((3, 2))
    sol = solve_weighted_svm(X, np.zeros(3), np.ones(3), np.zeros(3), 0.1)
    assert sol.intercept == 0.5 and (sol.coef == 0).all()  # all hinges met at zero norm
    sol = solve_weighted_svm(X, np.zeros(3), np.zeros(3), np.zeros(3), 0.1)
    assert (sol.coef == 0).all()
    with pytest.raises(ValueError, match="positive"):
        solve_weighted_svm(X, np.ones(3), np.ones(3), np.zeros(3), 0.0)
    with pytest.raises(ValueError, match="inner solver"):
        solve_weighted_svm(X, np.ones(3), np.ones(3), np.zeros(3), 1.0, solver="sgd")


# ---------------------------------------------------------------- cutting plane vs cvxpy
@pytest.mark.parametrize("chooser", ["kelley", "chebyshev"])
def test_cutting_plane_agrees_with_cvxpy_on_problem3(chooser):
    X, y, g = _toy(250, seed=5)
    cons = [gf.positive_prediction_rate(group="A") >= 0.8 * gf.positive_prediction_rate(group="B"),
            gf.true_positive_rate(group="A") >= 0.6]
    program, *_ = _program(Problem("error", cons), y, g)
    lam = 0.01
    # anchor: a few MM steps in, so that the anchor is not the trivial w = 0
    start = majorization_minimization(program, X, lam, max_iter=2, solver_params={"multiplier_solver": "cvxpy"})
    assert start.feasible
    z0 = X @ start.coef + start.intercept
    maj = Majorizer(program, X, z0, lam)
    _, _, ref = solve_problem3_cvxpy(maj)
    res = solve_problem3(maj, start.coef, start.intercept, chooser=chooser, inner_solver="svc",
                         tol=1e-6, max_iter=60)
    assert res.objective == pytest.approx(ref, abs=2e-4)
    assert res.lower <= ref + 1e-6  # a dual bound
    assert (res.rows <= 1e-7).all()  # the recovered point is feasible for Problem 3
    assert res.objective <= maj.evaluate(start.coef, start.intercept)[0] + 1e-12


def test_bisection_chooser_single_constraint_agrees_with_cvxpy():
    X, y, g = _toy(250, seed=6)
    program, *_ = _program(Problem("error", [gf.positive_prediction_rate(group="A")
                                             >= 0.9 * gf.positive_prediction_rate(group="B")]), y, g)
    lam = 0.01
    maj = Majorizer(program, X, np.zeros(len(y)), lam)
    _, _, ref = solve_problem3_cvxpy(maj)
    res = solve_problem3(maj, np.zeros(3), 0.0, chooser="bisection", inner_solver="svc", tol=1e-6, max_iter=60)
    assert res.objective == pytest.approx(ref, abs=2e-4)
    assert res.multipliers[0] > 0  # the constraint is active here
    with pytest.raises(ValueError, match="one constraint row"):
        two, *_ = _program(Problem("error", [gf.coverage() <= 0.5, gf.coverage() >= 0.1]), y, g)
        solve_problem3(Majorizer(two, X, np.zeros(len(y)), lam), np.zeros(3), 0.0, chooser="bisection")


def test_recover_primal_mixes_points_to_meet_the_rows():
    F0 = np.array([1.0, 0.0])
    G = np.array([[-1.0], [1.0]])
    val, theta = recover_primal(F0, G)
    np.testing.assert_allclose(theta, [0.5, 0.5], atol=1e-9)
    assert val == pytest.approx(0.5)
    assert recover_primal(F0, np.array([[1.0], [2.0]]))[0] is None


@pytest.mark.parametrize("seed", range(6))
def test_one_row_cutting_plane_lps_in_closed_form_equal_highs(seed):
    """One multiplier (the bisection chooser's case): Kelley's point and the primal recovery are
    computed in closed form; HiGHS solves the same LPs as the reference (random cuts, ties and
    parallel cuts included)."""
    from scipy.optimize import linprog

    from goalfit.methods.ramp.cutting_plane import _kelley

    rng = np.random.default_rng(seed)
    T = [1, 2, 5, 12, 30, 31][seed]
    F0, g = rng.normal(size=T), rng.normal(size=T)
    if T > 3:
        g[1], F0[2] = g[0], F0[0]  # parallel cuts, equal values
    v_max = 10.0
    val, v = _kelley(F0, g[:, None], v_max)
    ref = linprog([0.0, -1.0], A_ub=np.column_stack([-g, np.ones(T)]), b_ub=F0, bounds=[(0, v_max), (None, None)],
                  method="highs")
    assert val == pytest.approx(-ref.fun, abs=1e-9) and 0 <= v[0] <= v_max
    assert (F0 + g * v[0]).min() == pytest.approx(val, abs=1e-12)  # v attains it
    for feas in (0.0, 0.3):
        val, theta = recover_primal(F0, g[:, None], feas)
        ref = linprog(F0, A_ub=g[None, :], b_ub=[feas], A_eq=np.ones((1, T)), b_eq=[1.0], bounds=[(0, None)] * T,
                      method="highs")
        if ref.status == 2:  # infeasible: every point violates the row
            assert val is None and (g > feas).all()
            continue
        assert val == pytest.approx(ref.fun, abs=1e-9) and theta @ F0 == pytest.approx(val, abs=1e-12)
        assert theta.min() >= 0 and theta.sum() == pytest.approx(1.0) and theta @ g <= feas + 1e-12
    val, theta = recover_primal(F0, np.zeros((T, 0)))  # no rows: the best point
    assert val == F0.min() and theta[np.argmin(F0)] == 1.0


# ---------------------------------------------------------------- MM
@pytest.mark.parametrize("solver", ["cutting_plane", "cvxpy"])
def test_mm_never_increases_objective_and_keeps_iterates_feasible(solver):
    X, y, g = _toy(400, seed=7)
    cons = [gf.positive_prediction_rate(group="A") >= 0.8 * gf.positive_prediction_rate(group="B")]
    program, *_ = _program(Problem("error", cons), y, g)
    res = majorization_minimization(program, X, 1e-3, max_iter=8, tol=0.0,
                                    solver_params={"multiplier_solver": solver})
    objs = [h["objective"] for h in res.history]
    assert objs[0] == pytest.approx(0.5)  # w = 0: every ramp is 1/2
    assert all(b <= a + 1e-10 for a, b in zip(objs, objs[1:]))
    assert objs[-1] < 0.35
    assert all(h["max_violation"] <= 1e-6 for h in res.history)
    obj, rows = ramp_values(program, X, res.coef, res.intercept, 1e-3)
    assert obj == pytest.approx(res.objective) and (rows <= 1e-6).all()
    # the unconstrained SVM-like solution violates the 80% rule here: the constraint matters
    free = majorization_minimization(compile_rate_program(*_program(Problem("error"), y, g)[1:2], y,
                                                          CellEncoder().fit_transform({"g": g})), X, 1e-3, max_iter=8)
    p = ramp(X @ free.coef + free.intercept)
    assert p[g == "A"].mean() < 0.8 * p[g == "B"].mean()


def test_feasibility_phase_reaches_an_infeasible_start():
    X, y, g = _toy(300, seed=8)
    # at w = 0 every rate is 1/2: recall >= 0.9 is violated at the start
    program, *_ = _program(Problem("error", [gf.true_positive_rate() >= 0.9]), y, g)
    res = majorization_minimization(program, X, 1e-3, max_iter=10)
    phases = [h["phase"] for h in res.history]
    assert "feasibility" in phases and res.feasible
    p = ramp(X @ res.coef + res.intercept)
    assert p[y == 1].mean() >= 0.9 - 1e-6


# ---------------------------------------------------------------- estimator
def test_estimator_fairness_ratio_randomized_and_deterministic():
    X, y, g = _toy(600, seed=9)
    cons = [gf.positive_prediction_rate(group="A") >= 0.8 * gf.positive_prediction_rate(group="B")]
    m = gf.RampClassifier("error", cons, alpha=1e-3, random_state=0).fit(X, y, sensitive_features={"g": g})
    assert m.feasible_ and m.classes_.tolist() == [0, 1]
    ev = m.evaluate(X, y, sensitive_features={"g": g}, classifier=m.randomized_classifier_)
    assert ev["constraints"][0]["met"]
    p = m.randomized_classifier_.predict_proba(X)[:, 1]
    assert p[g == "A"].mean() >= 0.8 * p[g == "B"].mean() - 1e-6
    assert ev["accuracy"] == pytest.approx(1 - np.mean(np.where(y == 1, 1 - p, p)))
    det = m.evaluate(X, y, sensitive_features={"g": g})
    assert det["accuracy"] == pytest.approx(np.mean(m.predict(X) == y))
    r1 = m.randomized_classifier_.predict(X, random_state=3)
    assert (r1 == m.randomized_classifier_.predict(X, random_state=3)).all()
    assert set(np.unique(r1)) <= {0, 1}
    assert len(m.history_) >= 2 and m.history_[-1]["objective"] <= m.history_[0]["objective"]


def test_egregious_examples_hold_on_the_egregious_set():
    X, y, g = _toy(500, seed=10)
    rng = np.random.default_rng(11)
    XE = rng.normal(size=(30, 3)) - np.array([1.0, 1.0, 0.0])  # look negative, labelled positive
    yE = np.ones(30, dtype=int)
    base = gf.RampClassifier("error", alpha=1e-3).fit(X, y)
    assert (base.decision_function(XE) > 0).mean() < 0.5
    m = gf.RampClassifier(gf.error_rate(dataset="train"), [gf.true_positive_rate(dataset="egregious") >= 0.8], alpha=1e-3).fit(
        X, y, datasets={"egregious": Dataset(XE, yE)})
    assert m.feasible_
    assert m.randomized_classifier_.positive_probability(XE).mean() >= 0.8 - 1e-6
    ev = m.evaluate(X, y, datasets={"egregious": (XE, yE)}, classifier=m.randomized_classifier_)
    assert ev["constraints"][0]["met"] and ev["constraints"][0]["value"] == pytest.approx(m.randomized_classifier_.positive_probability(XE).mean())


def test_churn_and_coverage_on_unlabelled_datasets_with_a_deployed_model():
    from sklearn.linear_model import LogisticRegression

    X, y, g = _toy(500, seed=12)
    Xold, yold, _ = _toy(300, seed=13, shift=0.2)
    deployed = LogisticRegression().fit(Xold, yold)
    Xpool = _toy(400, seed=14)[0]
    cons = [gf.churn_rate(dataset="pool") <= 0.05, gf.coverage(dataset="pool") <= 0.45]
    m = gf.RampClassifier(gf.error_rate(dataset="train"), cons, alpha=1e-3, deployed_model=deployed).fit(X, y, datasets={"pool": (Xpool,)})
    assert m.feasible_
    p = m.randomized_classifier_.positive_probability(Xpool)
    b = deployed.predict(Xpool)
    churn = np.mean(np.where(b == 1, 1 - p, p))
    assert churn <= 0.05 + 1e-6 and p.mean() <= 0.45 + 1e-6
    ev = m.evaluate(X, y, datasets={"pool": (Xpool,)}, classifier=m.randomized_classifier_)
    assert ev["constraints"][0]["value"] == pytest.approx(churn)


def test_feasibility_phase_uses_its_own_weaker_regularization():
    """Phase 1's violation-only steps with the objective's l2 weight stall short of a tight churn
    goal (the ramp rates of a small-norm model stay inside the band); with alpha / 100 (the
    default) they reach it, and the estimator ends feasible."""
    from sklearn.linear_model import LogisticRegression

    X, y, g = _toy(500, seed=12)
    Xold, yold, _ = _toy(300, seed=13, shift=0.2)
    deployed = LogisticRegression().fit(Xold, yold)
    Xpool = _toy(400, seed=14)[0]
    b = deployed.predict(Xpool)
    kw = dict(objective=gf.error_rate(dataset="train"), constraints=[gf.churn_rate(dataset="pool") <= 0.02],
              alpha=1e-2, deployed_model=deployed)
    stalled = gf.RampClassifier(**kw, method_params={"feasibility_alpha": 1e-2}).fit(X, y, datasets={"pool": (Xpool,)})
    # the MM steps of phase 1 stall short of the goal; the certified LP start (phase1.py) rescues it
    phase1 = [h for h in stalled.history_ if h["phase"] == "feasibility"]
    assert phase1 and phase1[-1]["max_violation"] > 0.01
    assert [h["phase"] for h in stalled.history_].count("feasibility_lp") == 1
    p = stalled.randomized_classifier_.positive_probability(Xpool)
    assert stalled.feasible_ and np.mean(np.where(b == 1, 1 - p, p)) <= 0.02 + 1e-6
    m = gf.RampClassifier(**kw).fit(X, y, datasets={"pool": (Xpool,)})
    p = m.randomized_classifier_.positive_probability(Xpool)
    assert m.feasible_ and np.mean(np.where(b == 1, 1 - p, p)) <= 0.02 + 1e-6
    phases = [h["phase"] for h in m.history_]
    assert phases[0] == "start" and "feasibility" in phases and phases[-1] == "mm"
    objs = [h["objective"] for h in m.history_ if h["phase"] == "mm"]
    assert all(b_ <= a + 1e-10 for a, b_ in zip(objs, objs[1:]))
    # the violation-only MM of phase 1 on the same program, from w = 0
    Z = np.vstack([X, Xpool])
    program = m.program_
    sub = program.subproblem(np.array([0]), np.array([], dtype=int))

    def violation_mm(lam, steps=6):
        coef, b0 = np.zeros(Z.shape[1]), 0.0
        for _ in range(steps):
            r = solve_problem3(Majorizer(sub, Z, Z @ coef + b0, lam), coef, b0, tol=1e-6, max_iter=60)
            coef, b0 = r.coef, r.intercept
        return ramp_values(program, Z, coef, b0, lam)[1][0]

    assert violation_mm(1e-2) > 0.01  # stalls: churn stays above 0.03
    assert violation_mm(1e-4) <= 1e-6
    with pytest.raises(ValueError, match="feasibility_alpha"):
        gf.RampClassifier(**kw, method_params={"feasibility_alpha": 0.0}).fit(X, y, datasets={"pool": (Xpool,)})


def test_infeasible_goals_report_the_least_violation():
    X, y, g = _toy(300, seed=15)
    cons = [gf.coverage() >= 0.7, gf.coverage() <= 0.3]
    with pytest.warns(RuntimeWarning, match="cannot all be met"):
        m = gf.RampClassifier("error", cons, alpha=1e-3, max_iter=5).fit(X, y)
    assert not m.feasible_
    # any classifier violates one of the two by at least 0.2 on average; the reported violation is real
    rand = m.result_.details.randomized
    p = m.randomized_classifier_.positive_probability(X).mean()
    assert not rand.feasible and rand.max_violation == pytest.approx(max(0.7 - p, p - 0.3), abs=1e-9)
    assert m.max_violation_ >= 0.2 - 1e-9 and rand.max_violation >= 0.2 - 1e-9


def test_goals_on_unlabelled_data_need_labels_error():
    X, y, g = _toy(200, seed=16)
    with pytest.raises(ValueError, match="depends on true labels.*pool"):
        gf.RampClassifier(gf.error_rate(), [gf.true_positive_rate(dataset="pool") >= 0.5]).fit(
            X, y, datasets={"pool": (X[:50],)})
    with pytest.raises(ValueError, match="depends on true labels"):  # error over train + pool
        gf.RampClassifier("error").fit(X, y, datasets={"pool": (X[:50],)})
    m = gf.RampClassifier(gf.error_rate(dataset="train"), alpha=1e-2, max_iter=2).fit(X, y, datasets={"pool": (X[:50],)})
    assert m.dataset_names_ == ["train", "pool"]
    with pytest.raises(ValueError, match="dataset=\\['nope'\\]|no example has dataset"):
        gf.RampClassifier(gf.error_rate(dataset="train"), [gf.coverage(dataset="nope") <= 0.5]).fit(X, y, datasets={"pool": (X[:50],)})
    with pytest.raises(ValueError, match="binary"):
        gf.RampClassifier().fit(X, np.arange(len(y)) % 3)


def test_stack_datasets_validation():
    X = np.ones((4, 2))
    st = stack_datasets(X, [0, 1, 0, 1], {"g": list("abab")}, None,
                        {"pool": Dataset(np.zeros((3, 2))), "eg": (np.zeros((2, 2)), [1, 1], {"g": ["a", "b"]})})
    assert st.names == ["train", "pool", "eg"]
    assert st.labelled.tolist() == [True] * 4 + [False] * 3 + [True] * 2
    assert st.sensitive_features["dataset"].tolist() == ["train"] * 4 + ["pool"] * 3 + ["eg"] * 2
    assert st.sensitive_features["g"].tolist()[4:7] == ["<not given>"] * 3
    with pytest.raises(ValueError, match="other names"):
        stack_datasets(X, [0, 1, 0, 1], datasets={"train": (X,)})
    with pytest.raises(ValueError, match="empty"):
        stack_datasets(X, [0, 1, 0, 1], datasets={"p": (np.zeros((0, 2)),)})
    for missing in (None, np.nan, float("nan")):
        with pytest.raises(ValueError, match="missing labels"):
            stack_datasets(X, np.array([0, 1, missing, 1], dtype=object), datasets={"p": (X,)})
    stack_datasets(X, ["a", "b", "a", "b"], datasets={"p": (X,)})  # strings are labels, not missing
    with pytest.raises(ValueError, match="reserved"):
        stack_datasets(X, [0, 1, 0, 1], {"dataset": list("abab")}, datasets={"p": (X,)})
    with pytest.raises(ValueError, match="no 'baseline' column"):
        # churn over datasets where only one has the deployed model's predictions
        y = np.array([0, 1, 0, 1])
        gf.RampClassifier("error", [gf.churn_rate() <= 0.1]).fit(
            X + np.arange(4)[:, None], y, sensitive_features={"baseline": y}, datasets={"p": (X,)})


def test_rates_name_their_dataset():
    r = gf.true_positive_rate(group="Female", dataset="D2")
    assert r.name == "true_positive_rate(group='Female', dataset='D2')"
    assert gf.churn_rate(dataset="D3").name == "churn_rate(column='baseline', dataset='D3')"
    assert gf.rate(pred=1, dataset="E").name == "rate(pred=1, dataset='E')"


def test_cutting_plane_on_sparse_features_matches_dense():
    import scipy.sparse as sp

    X, y, g = _toy(300, seed=17)
    Xb = (X > 0.3).astype(float)
    cons = [gf.positive_prediction_rate(group="A") >= 0.8 * gf.positive_prediction_rate(group="B")]
    kw = dict(alpha=1e-2, max_iter=3, random_state=0)
    d = gf.RampClassifier("error", cons, **kw).fit(Xb, y, sensitive_features={"g": g})
    s = gf.RampClassifier("error", cons, **kw).fit(sp.csr_matrix(Xb), y, sensitive_features={"g": g})
    np.testing.assert_allclose(d.coef_, s.coef_, atol=1e-6)
    assert d.objective_ == pytest.approx(s.objective_, abs=1e-9)


def test_ramp_report_prints_saves_and_plots(tmp_path):
    from goalfit.report import build_report

    X, y, g = _toy(300, seed=18)
    cons = [gf.positive_prediction_rate(group="A") >= 0.8 * gf.positive_prediction_rate(group="B")]
    m = gf.RampClassifier("error", cons, alpha=1e-2, max_iter=3).fit(X[:200], y[:200], sensitive_features={"g": g[:200]})
    rep = build_report(m, X[:200], y[:200], sensitive_features_train={"g": g[:200]},
                       X_test=X[200:], y_test=y[200:], sensitive_features_test={"g": g[200:]})
    d = rep.data
    # the main columns are the deployed rule f(x) > threshold_, the baseline the ramp-randomized rule
    assert d["objective"]["test"] == pytest.approx(np.mean(m.predict(X[200:]) != y[200:]))
    p = m.randomized_classifier_.predict_proba(X[200:])[:, 1]
    assert d["baseline_name"] == "randomized"
    assert d["baseline"]["objective"]["test"] == pytest.approx(np.mean(np.where(y[200:] == 1, 1 - p, p)))
    assert f"{m.threshold_:.4g}" in d["note"]
    assert d["constraints"][0]["met_train"] == d["constraints_met_train"]
    assert d["history"][-1]["oracle_calls"] == sum(h["n_inner"] for h in m.history_)
    rep.print()
    assert (tmp_path / "r.json").exists() is False
    rep.to_json(tmp_path / "r.json")
    assert [p.name for p in rep.plot(tmp_path)] == ["convergence.png", "group_rates.png"]


def test_deployed_model_sees_the_features_as_given():
    import pandas as pd
    from sklearn.compose import make_column_transformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y, g = _toy(300, seed=19)
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    deployed = make_pipeline(make_column_transformer((StandardScaler(), ["a", "b"])), LogisticRegression()).fit(df, y)
    m = gf.RampClassifier(gf.error_rate(dataset="train"), [gf.churn_rate(dataset="pool") <= 0.1], alpha=1e-2,
                          max_iter=3, deployed_model=deployed).fit(df, y, datasets={"pool": (df.iloc[:100],)})
    assert m.feasible_ and m.n_features_in_ == 3 and list(m.feature_names_in_) == ["a", "b", "c"]
    p = m.randomized_classifier_.positive_probability(df.iloc[:100])
    b = deployed.predict(df.iloc[:100])
    assert np.mean(np.where(b == 1, 1 - p, p)) <= 0.1 + 1e-6


def test_build_report_refuses_an_unfitted_estimator():
    from goalfit.report import build_report

    X, y, g = _toy(200, seed=19)
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        build_report(gf.GoalClassifier(), X, y)


def test_select_ramp_params_applies_the_feasible_then_lowest_objective_rule_on_validation():
    from goalfit.estimators import select_ramp_params

    X, y, g = _toy(600, seed=20)
    tr, va = np.arange(400), np.arange(400, 600)
    cons = [gf.positive_prediction_rate(group="A") >= 0.8 * gf.positive_prediction_rate(group="B"),
            gf.coverage() <= 0.45]
    model = gf.RampClassifier("error", cons, max_iter=4, random_state=0)
    grid = {"alpha": [1e-1, 1e-2, 1e-3]}
    sf, sf_va = {"g": g[tr]}, {"g": g[va]}
    # the rule, recomputed from independent fits evaluated on the validation rows
    ref = []
    for a in grid["alpha"]:
        m = gf.RampClassifier("error", cons, max_iter=4, random_state=0, alpha=a).fit(X[tr], y[tr], sensitive_features=sf)
        ev = m.evaluate(X[va], y[va], sensitive_features=sf_va)
        ref.append((ev["objective"]["value"], [c["violation"] for c in ev["constraints"]]))
    # a tolerance between the settings' first violations: it admits some and excludes others
    first = sorted(v[0] for _, v in ref)
    assert first[0] < first[-1]
    t0 = 0.5 * (first[0] + first[-1])
    best, table = select_ramp_params(model, grid, X[tr], y[tr], sensitive_features=sf, X_val=X[va], y_val=y[va],
                                     sensitive_features_val=sf_va, tol=[t0, 0.02])
    for row, (obj, viol) in zip(table, ref):
        assert row["objective"] == pytest.approx(obj) and row["violations"] == pytest.approx(viol)
        assert row["feasible"] == (viol[0] <= t0 and viol[1] <= 0.02)
    ok = [i for i, (_, v) in enumerate(ref) if v[0] <= t0 and v[1] <= 0.02]
    assert 0 < len(ok) < 3  # the tolerance admits some settings and excludes others
    k = min(ok, key=lambda i: ref[i][0])
    assert [r["selected"] for r in table] == [i == k for i in range(3)]
    assert best.alpha == grid["alpha"][k]
    assert best.evaluate(X[va], y[va], sensitive_features=sf_va)["objective"]["value"] == pytest.approx(ref[k][0])
    # contradictory goals (no rule meets both): least violation, with a warning
    tight = gf.RampClassifier("error", [gf.coverage() <= 0.3, gf.coverage() >= 0.6], max_iter=2, random_state=0)
    with pytest.warns(RuntimeWarning, match="least violation"):
        _, t2 = select_ramp_params(tight, [{"alpha": 1e-1}, {"alpha": 1e-2}], X[tr], y[tr], X_val=X[va], y_val=y[va],
                                   tol=0.0)
    assert sum(r["selected"] for r in t2) == 1 and not any(r["feasible"] for r in t2)
    sel = next(r for r in t2 if r["selected"])
    assert sel["max_violation"] == min(r["max_violation"] for r in t2)
    with pytest.raises(ValueError, match="one per constraint"):
        select_ramp_params(model, grid, X[tr], y[tr], sensitive_features=sf, X_val=X[va], y_val=y[va],
                           sensitive_features_val=sf_va, tol=[0.1, 0.1, 0.1])
    with pytest.raises(ValueError, match="empty"):
        select_ramp_params(model, [], X[tr], y[tr], X_val=X[va], y_val=y[va])



def test_feasibility_phase_strengthens_a_weight_too_weak_for_the_inner_solver(need_data, monkeypatch):
    """COMPAS, FPR parity <= 0.01 from the unconstrained SVM (the benchmarks/ramp_robustness.py
    fit that collapsed to the constant classifier when, at alpha / 100, the phase-1 SVM did not
    finish and its step returned the anchor). With the default weight the phase reaches the goal
    in two MM steps. The inner solver no longer stalls here even at weights 10^-10 / n, so the
    stall is simulated: below alpha / 2 every phase-1 step returns its anchor (what an unfinished
    inner solve did). The phase then multiplies the weight by 10 (up to alpha) instead of counting
    as stalled, and reaches the goal by MM steps, not by the LP fallback (whose point here is a
    constant classifier, from which MM cannot move)."""
    from sklearn.model_selection import train_test_split

    from goalfit.estimators.models import make_estimator
    from goalfit.datasets import load_dataset
    from goalfit.methods.ramp import mm

    need_data("compas")
    d = load_dataset("compas")
    race = d.sensitive_features["race"].astype(str)
    keep = race.isin(["African-American", "Caucasian"]).to_numpy()
    X = d.data[keep].drop(columns=["race"]).reset_index(drop=True)
    y, g = np.asarray(d.target)[keep], race[keep].to_numpy()
    tr, _ = train_test_split(np.arange(len(y)), test_size=0.3, random_state=1, stratify=g + y.astype(str))
    A = make_estimator("logistic_regression")[:-1].fit_transform(X.iloc[tr])
    A = np.asarray(A.toarray() if hasattr(A, "toarray") else A, dtype=float)
    alpha = 1.0 / len(tr)
    real_step = mm._step
    weights = []

    def stalling_step(program, X, lam, coef, intercept, *args, **kwargs):
        weights.append(lam)
        if lam < 0.5 * alpha:  # an inner solve that cannot finish returns the anchor
            return coef, intercept, np.inf, np.inf, np.zeros(program.n_rows), 0
        return real_step(program, X, lam, coef, intercept, *args, **kwargs)

    for stall in (False, True):
        if stall:
            monkeypatch.setattr(mm, "_step", stalling_step)
        m = gf.RampClassifier("error", [gf.false_positive_rate_difference("race") <= 0.01], method_params={"init": "unconstrained"},
                              random_state=1).fit(A, y[tr], sensitive_features={"race": g[tr]})
        phases = [h["phase"] for h in m.history_]
        assert m.feasible_ and "feasibility_lp" not in phases
        steps = [h["max_violation"] for h in m.history_ if h["phase"] == "feasibility"]
        assert steps[-1] <= gf.goals.FEASIBLE_TOL
        if stall:  # two steps without progress (alpha / 100, alpha / 10), then progress at alpha
            start = m.history_[0]["max_violation"]  # the unconstrained SVM's FPR gap minus 0.01
            assert steps[0] == steps[1] == start > 0.1
            assert weights[:3] == pytest.approx([alpha / 100, alpha / 10, alpha])
        acc = np.mean(m.predict(A) == y[tr])
        assert acc > max(y[tr].mean(), 1 - y[tr].mean()) + 0.05  # not the constant classifier (0.530)
