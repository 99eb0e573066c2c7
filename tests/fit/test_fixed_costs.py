"""The fit's shared steps that read what the fit already has: the same answers as the passes they replace."""
import inspect
import warnings

import numpy as np
import pandas as pd
import pytest

import goalfit as gf
from goalfit.fit import prepare
from goalfit.fit.method import keyword_names
from goalfit.fit.slices import _row_counts, _space_counts


@pytest.mark.parametrize("n, n_groups, n_classes", [(7, 2, 2), (1000, 3, 5), (99_991, 5, 3)])
def test_slice_counts_from_the_space_equal_a_pass_over_the_rows(n, n_groups, n_classes):
    rng = np.random.default_rng(n)
    y = rng.integers(0, n_classes, n)
    y[:n_classes] = np.arange(n_classes)
    g = rng.integers(0, n_groups, n).astype(str)
    data = prepare(np.zeros((n, 1)), y, sensitive_features=g)
    n_cells, K = data.space.shape[:2]
    direct = _row_counts(data.cells, data.y_codes, None, n_cells, K)
    counts = _space_counts(data, n)
    assert counts is not None and counts.dtype == direct.dtype
    np.testing.assert_array_equal(counts, direct)  # exact: integers read back from the row masses
    assert counts.sum() == n


def test_slice_counts_fall_back_for_another_row_count():
    data = prepare(np.zeros((10, 1)), np.r_[np.zeros(5), np.ones(5)].astype(int))
    assert _space_counts(data, 11) is None  # a space of other rows: the pass over the rows decides


P_OK = np.c_[np.full(6, 0.25), np.full(6, 0.75)]
Y6 = np.array([0, 1, 0, 1, 0, 1])


@pytest.mark.parametrize("bad, message", [
    (np.nan, "contain NaN, infinite or negative values"),
    (np.inf, "contain NaN, infinite or negative values"),
    (-np.inf, "contain NaN, infinite or negative values"),
    (-0.25, "contain NaN, infinite or negative values"),
])
def test_precomputed_probabilities_refused_with_the_same_messages(bad, message):
    for K in (2, 3):
        P = np.c_[P_OK, np.zeros(6)] if K == 3 else P_OK.copy()
        P[4, 0] = bad
        y = Y6 if K == 2 else np.r_[Y6[:5], 2]
        with pytest.raises(ValueError, match=message):
            gf.GoalClassifier("precomputed").fit(P, y)


def test_precomputed_rows_off_one_named_with_their_sum():
    P = P_OK.copy()
    P[3] = [0.5, 0.502]  # off by 2e-3 (over the 1e-3 tolerance); row 5 below sums to 0.995
    P[5] = [0.5, 0.495]
    with pytest.raises(ValueError, match=r"row 5 sums to 0\.995\)"):
        gf.GoalClassifier("precomputed").fit(P, Y6)
    # finite values whose sum overflows: a sum error (as before), not a NaN one
    P = P_OK.copy()
    P[2] = [1e308, 1e308]
    with pytest.raises(ValueError, match=r"row 2 sums to inf\)"):
        gf.GoalClassifier("precomputed").fit(P, Y6)
    P = P_OK.copy()
    P[1] = [0.5, 0.5009]  # within the tolerance: accepted
    gf.GoalClassifier("precomputed").fit(P, Y6)


def test_keyword_names_read_once_and_unchanged(monkeypatch):
    def solver(a, b=1, *, c=2, callback=None, **kw):
        pass

    assert keyword_names(solver) == ["b", "c", "callback"]
    assert keyword_names(solver, exclude=("callback",)) == ["b", "c"]
    calls = []
    real = inspect.signature
    monkeypatch.setattr(inspect, "signature", lambda f: calls.append(f) or real(f))
    out = keyword_names(solver, exclude=("c",))
    assert out == ["b", "callback"] and calls == []  # the signature was read at the first call
    out.append("x")  # callers own the list they get
    assert keyword_names(solver) == ["b", "c", "callback"]


@pytest.mark.parametrize("n_values, warns", [(20, False), (21, True)])
def test_many_groups_warning_at_the_same_count(n_values, warns):
    n = 420
    g = np.arange(n) % n_values
    y = (np.arange(n) // n_values) % 2
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        prepare(np.zeros((n, 1)), y, sensitive_features=pd.Series(g, name="age"))
    hit = [w for w in rec if "distinct values" in str(w.message)]
    assert bool(hit) == warns
    if warns:
        assert f"'age' has {n_values} distinct values" in str(hit[0].message)
