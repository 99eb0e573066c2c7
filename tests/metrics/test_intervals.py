"""The delta method's Jacobian (goalfit.metrics.intervals.jacobian): two binds, equal to central differences."""
import itertools

import numpy as np
import pandas as pd
import pytest

import goalfit as gf
from goalfit.confusion import CellEncoder, ConfusionSpace
from goalfit.goals import metrics as gm
from goalfit.metrics import intervals as iv


def _sample(K, G, seed=0, n=3000):
    r = np.random.default_rng(seed)
    y, g = r.integers(0, K, n), r.integers(0, G, n).astype(str)
    enc = CellEncoder()
    cells = enc.fit_transform(pd.Series(g, name="g"))
    space = ConfusionSpace.from_codes(y, cells, np.arange(K), enc.cells_)
    return iv.GoalSample(y, r.dirichlet(np.ones(K), n), cells, space, r.random(n))


def _goals(K):
    out = [gf.demographic_parity_difference("g"), gf.demographic_parity_ratio("g"),
           gf.equalized_odds_difference("g"), gf.equalized_odds_difference("g", method="to_overall"),
           gf.true_positive_rate(1) - gf.false_positive_rate(1) + 0.1, gf.precision(1), gf.error_rate(),
           gf.precision(1) + gf.true_positive_rate(1, group={"g": "1"}), gm.BalancedErrorRate(),
           gm.MacroF1Loss(), gm.MinMaxRecallLoss(), gm.HMeanLoss(), gm.MicroF1Loss(),
           gm.CostSensitiveLoss(1.0 - np.eye(K) + np.arange(K)[:, None])]
    if K == 2:
        out += [gm.FBetaLoss(), gf.average_odds_difference("g"), gm.MacroF1OverGroupsLoss("g")]
    return out


def _central_differences(sample, expression, eps=1e-6):
    """The definition: every entry moved both ways, the goal re-bound with the row masses re-read."""
    C0, shape = sample.C.ravel(), sample.space.shape
    v0, _ = iv._pieces(sample.bound(expression), sample.C)
    J = np.zeros((len(v0), C0.size))
    for d in range(C0.size):
        Cp, Cm = C0.copy(), C0.copy()
        Cp[d] += eps
        Cm[d] -= eps
        vp = iv._pieces(sample.bound(expression, Cp.reshape(shape)), Cp.reshape(shape))[0]
        vm = iv._pieces(sample.bound(expression, Cm.reshape(shape)), Cm.reshape(shape))[0]
        J[:, d] = (vp - vm) / (2 * eps)
    return J.reshape((len(v0),) + shape)


@pytest.mark.parametrize("K,G", [(2, 3), (3, 4)])
def test_jacobian_is_the_central_difference_one_from_two_binds(K, G, monkeypatch):
    """The tangent bind gives every rate's denominator its derivative: the Jacobian equals the
    central differences of the self-normalized goal (weighted rows), with two binds a goal."""
    sample = _sample(K, G)
    orig = iv.GoalSample.bound
    binds: list = []
    monkeypatch.setattr(iv.GoalSample, "bound", lambda s, *a: binds.append(1) or orig(s, *a))
    for e in _goals(K):
        want = _central_differences(sample, e)
        binds.clear()
        _, _, J = iv.jacobian(sample, e)
        assert J.shape == want.shape, e.name
        np.testing.assert_allclose(J, want, atol=1e-7, err_msg=e.name)
        assert len(binds) == (2 if iv._through_rates(e) else 1 + 2 * sample.C.size), e.name


def test_tpr_jacobian_closed_form():
    """TPR = C[., 1, 1] / m_1: its gradient is (e_tp - TPR * row_1) / m_1, zero off the positives' row."""
    s = _sample(2, 1, seed=3)
    _, how, J = iv.jacobian(s, gf.true_positive_rate(1))
    m1 = s.C[0, 1].sum()
    tpr = s.C[0, 1, 1] / m1
    assert how == "one"
    np.testing.assert_allclose(J[0, 0, 1], [-tpr / m1, (1 - tpr) / m1], rtol=1e-12)
    assert not J[0, 0, 0].any()


@pytest.mark.parametrize("method", ["between_groups", "to_overall"])
def test_disparity_pieces_keep_their_order(method):
    """The disparity's difference pieces, built as arrays, are the pairwise (or to-overall)
    differences of the group rates in itertools.permutations' order (the pieces' labels)."""
    s = _sample(3, 5)
    e = gf.equalized_odds_difference("g", method=method)
    f = e.bind(s.space)
    _, overall, table = e.rate_table(s.space)
    want = []
    for fam, row in enumerate(table):
        if method == "between_groups":
            want += [(row[a].coef - row[b].coef).ravel() for a, b in itertools.permutations(range(len(row)), 2)]
        else:
            for r in row:
                d = (r.coef - overall[fam].coef).ravel()
                want += [d, -d]
    assert f.coefs.shape == (len(want), s.space.size) and f.shape == s.space.shape
    np.testing.assert_array_equal(f.coefs, np.stack(want))
    assert not f.consts.any()


def test_tangent_exact_is_declared_by_the_class_not_inherited():
    """A goal class declares tangent_exact itself: a subclass (whose bind may read the priors) and
    the goals that read the class priors take finite differences."""
    class MyF1(gm.FBetaLoss):
        pass

    assert iv._through_rates(gm.FBetaLoss()) and iv._through_rates(gf.demographic_parity_difference("g"))
    assert not iv._through_rates(MyF1())
    assert not any(iv._through_rates(e) for e in (gm.HMeanLoss(), gm.GMeanLoss(), gm.QMeanLoss(),
                                                   gm.KLQuantification(), gm.CoverageDeviation()))
