"""Exact z-steps of Ye & Xie against 2^N enumeration, and edge cases."""
import contextlib
import signal

import numpy as np
import pytest

from goalfit.methods.subdata.framework import fairness_value, measure_form, selection_costs
from goalfit.methods.subdata.zstep import (
    InfeasibleSelectionError, select, select_bruteforce, select_f1, select_multiclass, select_omr,
)


def _instances(seed, count):
    rng = np.random.default_rng(seed)
    for k in range(count):
        n = int(rng.integers(2, 11))
        y, g = rng.choice([-1, 1], n), rng.choice([-1, 1], n)
        c = rng.normal(size=n) / n
        if k % 4 == 0:  # ties
            c = np.round(c * n * 2) / (2 * n)
        yield y, g, c, float(rng.choice([0.0, 0.01, 0.1, 0.5, 1.0, 5.0]))


@pytest.mark.parametrize("measure", ["omr", "fpr", "eo", "dp", "f1"])
def test_penalty_zstep_equals_bruteforce(measure):
    checked = 0
    for y, g, c, rho in _instances(1, 300):
        try:
            ref = select_bruteforce(c, y, g, measure=measure, rho=rho)
        except ValueError:  # empty block for this measure
            continue
        got = select(c, y, g, measure=measure, rho=rho)
        assert got.value == pytest.approx(ref.value, abs=1e-12)
        # the returned z attains the reported value
        assert c @ got.z + rho * fairness_value(measure, got.z, y, g) == pytest.approx(got.value, abs=1e-12)
        checked += 1
    assert checked > 100


@pytest.mark.parametrize("measure", ["omr", "fpr", "eo", "dp", "f1"])
def test_constraint_zstep_equals_bruteforce(measure):
    checked = 0
    for k, (y, g, c, rho) in enumerate(_instances(2, 300)):
        eps = [0.0, 0.1, 0.25][k % 3] if measure != "f1" else [0.3, 0.6, 0.9][k % 3]
        try:
            ref = select_bruteforce(c, y, g, measure=measure, rho=rho, epsilon=eps)
        except InfeasibleSelectionError:
            with pytest.raises(InfeasibleSelectionError):
                select(c, y, g, measure=measure, rho=rho, epsilon=eps)
            continue
        except ValueError:
            continue
        got = select(c, y, g, measure=measure, rho=rho, epsilon=eps)
        assert got.fairness <= eps + 1e-9
        assert got.value == pytest.approx(ref.value, abs=1e-12)
        checked += 1
    assert checked > 100


def test_algorithm1_corrected_equals_bruteforce_and_paper_literal_is_not_always_optimal():
    worse = 0
    for y, g, c, rho in _instances(3, 400):
        if len(set(g.tolist())) < 2:
            continue
        ref = select_bruteforce(c, y, g, measure="omr", rho=rho)
        assert select_omr(c, g, rho=rho).value == pytest.approx(ref.value, abs=1e-12)
        # the paper's literal tau2 (counted over the sorted D- list) is an erratum
        ip, im = np.flatnonzero(g == 1), np.flatnonzero(g == -1)
        Dp, Dm = len(ip), len(im)
        cp, cm = np.sort(c[ip]), np.sort(c[im])
        Up, Um = np.r_[0, np.cumsum(cp)], np.r_[0, np.cumsum(cm)]
        tau1, tau2 = int(np.sum(cp - rho / Dp < 0)), int(np.sum(cm + rho / Dp < 0))
        best = np.inf
        for km in range(Dm + 1):
            k1 = min(km * Dp // Dm, tau1)
            k2 = min(max(-(-km * Dp // Dm), tau2), Dp)
            best = min(best, Up[k1] - rho * k1 / Dp + Um[km] + rho * km / Dm,
                       Up[k2] + rho * k2 / Dp + Um[km] - rho * km / Dm)
        worse += best > ref.value + 1e-12
    assert worse > 0


def test_dp_form_matches_predicted_positive_rates():
    rng = np.random.default_rng(4)
    y, g, z = rng.choice([-1, 1], 40), rng.choice([-1, 1], 40), rng.integers(0, 2, 40)
    pred_pos = np.where(y == 1, z == 1, z == 0)
    gap = abs(pred_pos[g == 1].mean() - pred_pos[g == -1].mean())
    assert measure_form("dp", y, g).value(z) == pytest.approx(gap)
    err = z == 0
    assert measure_form("omr", y, g).value(z) == pytest.approx(abs(err[g == 1].mean() - err[g == -1].mean()))


def test_f1_loss_matches_sklearn():
    from sklearn.metrics import f1_score

    rng = np.random.default_rng(5)
    y, z = rng.choice([-1, 1], 50), rng.integers(0, 2, 50)
    pred = np.where(z == 1, y, -y)
    assert fairness_value("f1", z, y) == pytest.approx(1 - f1_score(y, pred))


@contextlib.contextmanager
def _deadline(seconds):
    """Fail (instead of hanging) when the block runs longer than ``seconds`` (SIGALRM, Unix)."""
    if not hasattr(signal, "SIGALRM"):
        yield
        return

    def expired(signum, frame):
        raise TimeoutError(f"did not finish within {seconds} s (a non-terminating loop?)")

    old = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@pytest.mark.parametrize("c", [
    np.zeros(6), np.full(6, 1.0), np.full(6, -1.0), np.array([0.1, -0.1, 0.1, -0.1, 0.0, 0.0]),
])
@pytest.mark.parametrize("rho", [0.0, 1e-6, 1.0, 1e6])
@pytest.mark.parametrize("y", [np.array([1, -1, -1, -1, -1, -1]), np.array([1, 1, 1, 1, 1, 1]),
                               np.array([1, -1, 1, -1, 1, -1])])
def test_f1_zstep_terminates_on_edge_cases(c, rho, y):
    with _deadline(10):  # the paper's bisection loops forever on a width-one bracket (erratum)
        got = select_f1(c, y, rho=rho)
    ref = select_bruteforce(c, y, measure="f1", rho=rho)
    assert got.value == pytest.approx(ref.value, rel=1e-12, abs=1e-12)


def test_f1_zstep_terminates_on_large_inputs_within_its_pass_bound():
    rng = np.random.default_rng(11)
    for n in (1, 2, 3, 1000, 20001):
        y = np.where(rng.random(n) < 0.3, 1, -1)
        y[0] = 1
        c = rng.normal(size=n) / n
        with _deadline(20):
            got = select_f1(c, y, rho=float(rng.choice([0.0, 0.5, 50.0])))
        assert got.z.shape == (n,) and 0.0 <= got.fairness <= 1.0


def test_f1_zstep_selects_when_f1_term_favours_it_although_no_cost_is_negative():
    # the paper's guard tau >= 1 would skip the search here (erratum)
    y = np.array([1, 1, -1, -1])
    c = np.array([0.01, 0.02, 0.5, 0.5])
    got = select_f1(c, y, rho=1.0)
    assert got.z[:2].sum() == 2
    assert got.value == pytest.approx(select_bruteforce(c, y, measure="f1", rho=1.0).value)


def _multiclass_enumeration(U, y, g, t, rho, eps=None):
    """Minimum of Eq. (27a) over every assignment z (rows one-hot), optionally s.t. OMR <= eps."""
    n, K = U.shape
    best = np.inf
    for assign in np.ndindex(*([K] * n)):
        a = np.array(assign)
        corr = (a == y).astype(float)
        F = abs(corr[g == 1].mean() - corr[g == -1].mean())
        if eps is not None and F > eps + 1e-9:
            continue
        cost = sum((U[i, j] - t) for i in range(n) for j in range(K) if j != y[i] and a[i] != j) / n
        best = min(best, cost + rho * F)
    return best


@pytest.mark.parametrize("eps", [None, 0.0, 0.1, 0.3])
def test_multiclass_zstep_equals_enumeration(eps):
    """Penalty form and the epsilon (constraint) form of Algorithm 3 against enumeration."""
    rng = np.random.default_rng(6 if eps is None else int(100 * eps) + 12)
    checked = 0
    for _ in range(40):
        n, K = int(rng.integers(2, 7)), int(rng.integers(2, 5))
        U = rng.uniform(0, 3, (n, K))
        y = rng.integers(0, K, n)
        g = rng.choice([-1, 1], n)
        if len(set(g.tolist())) < 2:
            continue
        t, rho = 1.0, float(rng.choice([0.0, 0.3, 2.0]))
        got = select_multiclass(U, y, g, t=t, rho=rho, epsilon=eps)
        assert np.allclose(got.z.sum(1), 1)
        corr = got.z[np.arange(n), y]
        F = abs(corr[g == 1].mean() - corr[g == -1].mean())
        assert got.fairness == pytest.approx(F) and (eps is None or F <= eps + 1e-9)
        assert got.value == pytest.approx(_multiclass_enumeration(U, y, g, t, rho, eps), abs=1e-12)
        checked += 1
    assert checked > 25


def test_zstep_is_fast_enough_for_large_n_and_exact_against_alg1():
    rng = np.random.default_rng(7)
    n = 20000
    y, g = rng.choice([-1, 1], n), rng.choice([-1, 1], n, p=[0.3, 0.7])
    c = selection_costs(rng.uniform(0, 10, n), 1.0)
    a, b = select(c, y, g, measure="omr", rho=3.0), select_omr(c, g, rho=3.0)
    assert a.value == pytest.approx(b.value, abs=1e-12)


def test_bad_input_errors():
    y, g, c = np.array([1, -1, 1]), np.array([1, 1, 1]), np.zeros(3)
    with pytest.raises(ValueError, match="empty"):
        select(c, y, g, measure="omr")
    with pytest.raises(ValueError, match="NaN"):
        select(np.array([np.nan, 0, 0]), y, np.array([1, -1, 1]))
    with pytest.raises(ValueError, match="values in"):
        select(c, np.array([0, 1, 1]), np.array([1, -1, 1]))
    with pytest.raises(ValueError, match="rho"):
        select(c, y, np.array([1, -1, 1]), rho=-1)
    with pytest.raises(ValueError, match="positive"):
        select_f1(c, np.array([-1, -1, -1]))
    # epsilon = 0 is always attainable (select everything): F1 = 1 exactly
    got = select_f1(np.full(4, 0.3), np.array([1, -1, -1, -1]), epsilon=0.0)
    assert got.fairness == 0.0 and got.z.sum() == 4


# ---------------------------------------------------------------------------------------------
# F(z) built from compiled goals (goalfit.goals -> SelectionMeasure) and its exact z-steps

import goalfit as gf  # noqa: E402
from goalfit.confusion import confusion_tensor  # noqa: E402
from goalfit.fit import prepare  # noqa: E402
from goalfit.goals import Problem  # noqa: E402
from goalfit.methods.subdata.measure import SelectionMeasure  # noqa: E402
from goalfit.methods.subdata.zstep import select_goals, select_milp, select_structured  # noqa: E402

_NAMED = {"omr": gf.error_rate_difference, "fpr": gf.false_positive_rate_difference,
          "eo": gf.equal_opportunity_difference, "dp": gf.demographic_parity_difference}


def _all_selections(n):
    return ((np.arange(2 ** n)[:, None] >> np.arange(n)) & 1).astype(float)


def _compiled(objective, constraints, y01, groups, sample_weight=None):
    d = prepare(np.zeros((len(y01), 1)), y01, sensitive_features=groups, sample_weight=sample_weight)
    return d, Problem(objective, constraints).compile(d.space)


@pytest.mark.parametrize("name", ["omr", "fpr", "eo", "dp"])
def test_measure_from_compiled_goals_equals_the_papers_measure_form(name):
    """|D(z)| of Table 3 (MeasureForm, on y, g in {-1, +1}) is F(z) of the compiled goal
    ``<disparity>_difference() <= 0``, for every selection z of small random problems."""
    rng = np.random.default_rng(20)
    checked = 0
    for _ in range(40):
        n = int(rng.integers(4, 10))
        y, g = rng.choice([-1, 1], n), rng.choice([-1, 1], n)
        if len(set(y.tolist())) < 2:
            continue
        try:
            form = measure_form(name, y, g)
        except ValueError:  # an empty block
            continue
        d, cp = _compiled("error", [_NAMED[name]() <= 0], (y == 1).astype(int), np.where(g == 1, "p", "m"))
        M = SelectionMeasure.from_compiled(cp, d.y_codes, d.cells, form="penalty", rho=1.0)
        Z = _all_selections(n)
        np.testing.assert_allclose(M.fairness(Z), np.abs(Z @ form.coef()[0] + form.coef()[1]), atol=1e-12)
        # the +/- pair of rows is +-(alpha z + kappa), up to the orientation of the groups
        a, k = form.coef()
        assert np.allclose(M.alpha, [a, -a]) or np.allclose(M.alpha, [-a, a])
        np.testing.assert_allclose(np.sort(M.kappa), np.sort([k, -k]), atol=1e-12)
        np.testing.assert_allclose(M.reward, 1.0 / n)  # the 1/N of Eq. 12
        st = M.structure()
        assert st is not None and len(st["mags"]) <= 2
        checked += 1
    assert checked > 20


def test_f1_objective_is_gsvm_f1():
    """The f1() objective gives Eq. 34a's 1 - F1(z) and Eq. 35's class weights 1/N+-."""
    rng = np.random.default_rng(21)
    y = rng.choice([-1, 1], 9)
    y[:2] = [1, -1]
    d, cp = _compiled(gf.f1(), [], (y == 1).astype(int), None)
    M = SelectionMeasure.from_compiled(cp, d.y_codes, d.cells, rho=0.7)
    Z = _all_selections(9)
    np.testing.assert_allclose(M.fairness(Z), [fairness_value("f1", z, y) for z in Z], atol=1e-12)
    np.testing.assert_allclose(M.reward, np.where(y == 1, 1 / np.sum(y == 1), 1 / np.sum(y == -1)))
    c = rng.normal(size=9) / 9
    got = select_goals(c, M)
    assert got.solver == "alg6"
    assert got.value == pytest.approx(select_bruteforce(c, y, measure="f1", rho=0.7).value, abs=1e-12)


_GOALS = {
    "coverage": lambda: [gf.coverage(group="a") >= 0.4],
    "recall gap": lambda: [gf.true_positive_rate(group="a") >= gf.true_positive_rate(group="b") - 0.05],
    "dp 3 groups": lambda: [gf.demographic_parity_difference() <= 0.1],
    "coverage + recall gap": lambda: [gf.coverage() >= 0.5, gf.equal_opportunity_difference() <= 0.1],
    "error gap, balanced error": lambda: [gf.error_rate_difference() <= 0.05],
}


def _random_problems(seed, count, goal):
    rng = np.random.default_rng(seed)
    done = 0
    while done < count:
        n = int(rng.integers(5, 12))
        y01 = rng.integers(0, 2, n)
        groups = rng.choice(["a", "b", "c"] if goal == "dp 3 groups" else ["a", "b"], n)
        if len(set(groups.tolist())) < (3 if goal == "dp 3 groups" else 2):
            continue
        sw = rng.choice([1.0, 2.0, 0.5], n) if done % 3 == 1 else None
        try:
            d, cp = _compiled("balanced_error" if "balanced" in goal else "error", _GOALS[goal](), y01, groups, sw)
        except ValueError:  # one class, an empty slice
            continue
        done += 1
        yield rng, d, cp


@pytest.mark.parametrize("goal", sorted(_GOALS))
def test_measure_rows_are_the_compiled_rows_of_the_selections_predictions(goal):
    """row_r(z) = A_r vec(C_z) - b_r and objective(z) = f(C_z), C_z the confusion of the
    classifier whose correctness pattern is z (sample weights included)."""
    for rng, d, cp in _random_problems(22, 8, goal):
        M = SelectionMeasure.from_compiled(cp, d.y_codes, d.cells, d.sample_weight)
        for z in rng.integers(0, 2, (10, d.n_samples)).astype(float):
            pred = np.where(z > 0, d.y_codes, 1 - d.y_codes)
            C = confusion_tensor(d.y_codes, pred, d.cells, 2, d.encoder.n_cells, d.sample_weight)
            np.testing.assert_allclose(M.rows(z), cp.row_violations(C), atol=1e-12)
            assert M.objective(z) == pytest.approx(cp.objective.value(C), abs=1e-12)
            assert M.fairness(z) == pytest.approx(sum(c.violation(C) for c in cp.constraints), abs=1e-12) \
                or "ratio" in goal


@pytest.mark.parametrize("form", ["constraint", "penalty"])
@pytest.mark.parametrize("goal", sorted(_GOALS))
def test_milp_zstep_equals_bruteforce(goal, form):
    """The HiGHS z-step is exact on coverage, recall-gap, three-group and combined goals, with
    and without sample weights, in both forms; so is the O(N log N) one where it applies."""
    checked = structured = 0
    for rng, d, cp in _random_problems(23, 12, goal):
        M = SelectionMeasure.from_compiled(cp, d.y_codes, d.cells, d.sample_weight, form=form,
                                           rho=float(rng.choice([0.0, 0.5, 3.0])))
        c = rng.normal(size=d.n_samples) / d.n_samples
        try:
            ref = select_bruteforce(c, measure=M)
        except InfeasibleSelectionError:
            with pytest.raises(InfeasibleSelectionError):
                select_milp(c, M)
            continue
        got = select_milp(c, M)
        assert got.exact and got.solver == "milp"
        assert got.value == pytest.approx(ref.value, abs=1e-10)
        assert M.feasible(got.z)
        auto = select_goals(c, M)
        assert auto.value == pytest.approx(ref.value, abs=1e-10)
        structured += auto.solver == "structured"
        checked += 1
    assert checked >= 8
    # the paper's structure: one constraint, one row or a +/- pair, at most two weight magnitudes
    assert (structured > 0) == (goal in ("coverage", "recall gap", "error gap, balanced error"))


def test_structured_zstep_on_one_sided_and_two_magnitude_rows_at_scale():
    """select_structured agrees with the MILP on a 2,000-example recall-gap constraint."""
    rng = np.random.default_rng(24)
    n = 2000
    y01 = (rng.random(n) < 0.3).astype(int)
    groups = rng.choice(["F", "M"], n, p=[0.35, 0.65])
    d, cp = _compiled("error", [gf.true_positive_rate(group="F") >= gf.true_positive_rate(group="M") + 0.1],
                      y01, groups)
    M = SelectionMeasure.from_compiled(cp, d.y_codes, d.cells)
    st = M.structure()
    assert st is not None and len(st["mags"]) == 2 and len(st["signs"]) == 1
    c = M.costs(np.abs(rng.normal(1.0, 1.0, n)), 1.0)
    a, b = select_structured(c, M), select_milp(c, M)
    assert b.exact and a.value == pytest.approx(b.value, abs=1e-12)
    assert M.rows(a.z)[0] <= M.tolerance() and M.rows((c < 0).astype(float))[0] > 0  # the constraint binds


def test_infeasible_goals_and_structure_refusals():
    y01 = np.array([0, 1, 0, 1, 1, 0])
    d, cp = _compiled("error", [gf.coverage() >= 0.9, gf.coverage() <= 0.1], y01, None)
    M = SelectionMeasure.from_compiled(cp, d.y_codes, d.cells)
    assert M.structure() is None
    with pytest.raises(InfeasibleSelectionError):
        select_goals(np.zeros(6), M)
    with pytest.raises(ValueError, match="structure"):
        select_goals(np.zeros(6), M, solver="structured")
    with pytest.raises(ValueError, match="solver"):
        select_goals(np.zeros(6), M, solver="cplex")
    # in the penalty form the least total violation wins: coverage 0.5 violates both by 0.4
    P = M.with_form("penalty", rho=10.0)
    got = select_goals(np.zeros(6), P)
    assert got.solver == "milp" and got.fairness == pytest.approx(0.8, abs=1e-9)  # 0.9 - c + c - 0.1
