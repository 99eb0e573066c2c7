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
    for _ in range(60):
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
    assert checked > 40


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
