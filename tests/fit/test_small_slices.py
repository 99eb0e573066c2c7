"""The fit's check that a goal's smallest slice can carry its bound to new data (goalfit.fit.slices)."""
import warnings
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

import goalfit as gf
from goalfit.confusion import CellEncoder, ConfusionSpace
from goalfit.fit import SmallSliceWarning, check_slice_sizes


def _data(n_a, n_b, pos_a, pos_b):
    """Two groups of ``n_a`` and ``n_b`` rows with ``pos_a`` and ``pos_b`` positives."""
    y = np.r_[np.ones(pos_a), np.zeros(n_a - pos_a), np.ones(pos_b), np.zeros(n_b - pos_b)].astype(int)
    g = np.r_[["a"] * n_a, ["b"] * n_b]
    enc = CellEncoder()
    cells = enc.fit_transform(pd.Series(g, name="grp"))
    space = ConfusionSpace.from_codes(y, cells, np.arange(2), enc.cells_)
    return SimpleNamespace(y_codes=y, cells=cells, space=space, sample_weight=None)


def _tensor(data, rate):
    """Confusion tensor of a rule predicting 1 with probability ``rate[cell]`` in every row of the cell."""
    K = 2
    counts = np.bincount(data.cells * K + data.y_codes, minlength=2 * K).reshape(2, K) / len(data.y_codes)
    C = np.zeros((2, K, K))
    for c in range(2):
        C[c, :, 1] = counts[c] * rate[c]
        C[c, :, 0] = counts[c] * (1 - rate[c])
    return C


def test_tiny_slice_warns_with_the_delta_method_numbers():
    data = _data(80, 4920, 20, 1500)
    rate = [0.3, 0.32]
    problem = gf.Problem("error", [gf.demographic_parity_difference("grp") <= 0.03])
    with pytest.warns(SmallSliceWarning, match=r"slice \(grp='a'\) has 80 rows") as rec:
        out = check_slice_sizes(problem, _tensor(data, rate), data)
    assert len(rec) == 1 and len(out) == 1
    n, share = 5000, np.array([80, 4920]) / 5000
    r = np.array(rate)
    # the difference of two group rates: per-row variance r(1-r)/share summed over the groups
    half = 1.959963984540054 * np.sqrt((r * (1 - r) / share).sum() / n)
    assert out[0]["half_width"] == pytest.approx(half, rel=1e-4)
    assert out[0]["room"] == 0.03 and out[0]["rows"] == n
    # demographic parity reads the group's rows of both classes alike: the slice is the group
    assert out[0]["slice"] == "grp='a'" and out[0]["slice_rows"] == 80
    assert out[0]["rows_needed"] == pytest.approx(n * (out[0]["half_width"] / 0.03) ** 2, rel=1e-9)
    assert out[0]["slice_rows_needed"] == pytest.approx(out[0]["rows_needed"] * 80 / n, rel=1e-9)
    assert f"{out[0]['slice_rows_needed']:,.0f} rows of that slice" in str(rec[0].message)


def test_big_slices_do_not_warn():
    data = _data(20000, 30000, 6000, 9000)
    problem = gf.Problem("error", [gf.demographic_parity_difference("grp") <= 0.03,
                                   gf.demographic_parity_ratio("grp") >= 0.8])
    with warnings.catch_warnings():
        warnings.simplefilter("error", SmallSliceWarning)
        assert check_slice_sizes(problem, _tensor(data, [0.3, 0.32]), data) == []
    # the same goal on 50 times fewer rows: half-width 0.0297 * sqrt(50) > 0.03
    small = _data(400, 600, 120, 180)
    with pytest.warns(SmallSliceWarning, match="grp='a'"):
        assert len(check_slice_sizes(problem, _tensor(small, [0.3, 0.32]), small)) == 1


def test_fit_warns_and_report_names_the_slice():
    rng = np.random.default_rng(0)
    n = 3000
    g = np.where(np.arange(n) < 60, "young", "rest")
    P = rng.dirichlet([2, 2], n)
    y = (rng.random(n) < P[:, 1]).astype(int)
    sf = {"age": g}
    goal = [gf.equalized_odds_difference("age") <= 0.03]
    with pytest.warns(SmallSliceWarning, match=r"age='young', y=\d") as rec:
        m = gf.GoalClassifier("precomputed", constraints=goal).fit(P, y, sensitive_features=sf)
    assert rec[0].filename == __file__  # points at the user's fit call
    (entry,) = m.small_slices_
    young = np.bincount(y[:60], minlength=2)
    assert entry["slice_rows"] == young.min() and entry["rows"] == n
    assert entry["slice_rows_needed"] > entry["slice_rows"]
    rep = gf.build_report(m, P, y, sensitive_features_train=sf)
    assert rep.data["small_slices"] == [entry["line"]]
    # the same goal with 1500 young rows is not flagged
    g2 = np.where(np.arange(n) < 1500, "young", "rest")
    with warnings.catch_warnings():
        warnings.simplefilter("error", SmallSliceWarning)
        m2 = gf.GoalClassifier("precomputed", constraints=[gf.equalized_odds_difference("age") <= 0.1]).fit(
            P, y, sensitive_features={"age": g2})
    assert m2.small_slices_ == []
