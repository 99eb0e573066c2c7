"""A method's output for a maximum of linear pieces (min-max recall) breaks a tied maximum.

References: the sum of the two largest pieces as an independent LP (one row per pair of pieces,
``p_i + p_j <= z``) on random pools; a hand-built pool whose best maximum ties three classes while
a member a hair above it keeps two well clear; and SplitFW and ConGDA with and without the
allowance (``mixture.TIE_SLACK``) on the same rows, whose pools are the same; binary min-max
recall (two pieces) keeps the brute-force optimum either way.
"""
import itertools

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import linprog

import goalfit as gf
import goalfit.methods.plugin.mixture as mixture
from goalfit.confusion import ConfusionSpace
from goalfit.methods.plugin import PluginOracle, ThresholdOracle, con_gda, split_frank_wolfe
from goalfit.methods.plugin._common import epigraph_lp, prune, second_largest_lp
from tests.methods.plugin.test_coarse_to_fine import _multiclass
from tests.methods.plugin.test_solvers import calibrated, cell_rules, minmax, recall_optimum


def _top_two(pieces):
    return float(np.sort(pieces)[-2:].sum())


@pytest.mark.parametrize("seed", range(5))
def test_second_largest_lp_is_the_pairwise_lp(seed):
    """Random pools (4 pieces, 9 members, 2 rows): the returned weights' two largest pieces sum to
    the optimum of the LP with one row per pair of pieces, every piece at most ``level`` and the
    rows at most ``limit``."""
    rng = np.random.default_rng(seed)
    P, T, K = 4, 9, 2
    M, consts, G = rng.uniform(0, 1, (P, T)), rng.uniform(-0.1, 0.1, P), rng.uniform(-1, 1, (K, T))
    limit = 0.1
    best = epigraph_lp(M, consts, G, limit)
    assert best.status == 0
    level = float(best.x[T]) + 0.05
    x = second_largest_lp(M, consts, G, limit, level)
    pieces = M @ x + consts
    assert abs(x.sum() - 1) < 1e-9 and x.min() >= 0
    assert pieces.max() <= level + 1e-9 and (G @ x).max() <= limit + 1e-9
    pairs = list(itertools.combinations(range(P), 2))
    # variables (alpha, z): min z s.t. p_i + p_j <= z, pieces <= level, rows <= limit, simplex
    A_ub = np.vstack([np.c_[M[[i for i, _ in pairs]] + M[[j for _, j in pairs]], -np.ones(len(pairs))],
                      np.c_[M, np.zeros(P)], np.c_[G, np.zeros(K)]])
    b_ub = np.r_[[-(consts[i] + consts[j]) for i, j in pairs], level - consts, np.full(K, limit)]
    ref = linprog(np.r_[np.zeros(T), 1.0], A_ub=A_ub, b_ub=b_ub, A_eq=np.r_[np.ones(T), 0.0][None], b_eq=[1.0],
                  bounds=[(0, None)] * T + [(None, None)], method="highs")
    assert ref.status == 0
    assert _top_two(pieces) == pytest.approx(ref.fun, abs=1e-8)
    # two pieces (binary min-max recall) are the whole objective: nothing to break
    assert second_largest_lp(M[:2], consts[:2], G, limit, level) is None


def _member(recalls):
    """A one-cell confusion matrix of three equally frequent classes with these recalls (the
    errors spread evenly over the other two classes)."""
    C = np.zeros((1, 3, 3))
    for i, r in enumerate(recalls):
        C[0, i] = (1 - r) / 2 / 3
        C[0, i, i] = r / 3
    return C


def test_prune_breaks_a_tied_maximum_within_the_slack():
    """Member A ties the three recalls at 0.6 (max error 0.4); member B has max error 0.40005 with
    the other two classes at 0.2 and 0.3. The epigraph LP returns A; with a slack of 1e-4 the
    output is B (its max 5e-5 higher, its two largest errors 0.70005 against 0.8); with a slack
    of 1e-5, the mixture with a fifth of B (its max 1e-5 higher)."""
    y = np.repeat(np.arange(3), 10)
    space = ConfusionSpace.from_codes(y, np.zeros(30, int), np.arange(3), pd.DataFrame(index=range(1)))
    problem = gf.Problem("minmax_recall").compile(space)
    Cs = np.stack([_member([0.6, 0.6, 0.6]), _member([0.59995, 0.8, 0.7])])
    members = ["A", "B"]
    assert problem.objective.value(Cs[0]) == pytest.approx(0.4)
    for slack, expect in ((None, {"A": 1.0}), (1e-5, {"A": 0.8, "B": 0.2}), (1e-4, {"B": 1.0})):
        out_members, out_C, w, feasible, _ = prune(problem, members, Cs, slack=slack)
        assert feasible and out_members == list(expect), (slack, out_members, w)
        np.testing.assert_allclose(w, list(expect.values()), atol=1e-9)
    pieces = problem.objective.coefs @ Cs[1].ravel() + problem.objective.consts
    assert _top_two(pieces) == pytest.approx(0.70005)


@pytest.mark.parametrize("method", [split_frank_wolfe, con_gda], ids=["split_frank_wolfe", "con_gda"])
def test_methods_break_a_tied_maximum_within_the_slack(method, monkeypatch):
    """3 classes x 2 groups, 6,000 rows, coverage of the last class at most 3/4 of its rate: the
    sample optimum ties the three recalls (SplitFW: three errors at 0.2638). With the allowance
    the output's maximum is at most 1e-4 higher, the two largest errors sum no higher (SplitFW:
    0.4531 against 0.5276, a second-worst class 0.075 clear), and the coverage bound holds."""
    P, y, cells, space = _multiclass(6_000, seed=0, n_classes=3)
    problem = gf.Problem("minmax_recall", [gf.coverage(2) <= round(0.75 * np.mean(y == 2), 4)]).compile(space)
    out = {}
    for slack in (None, 1e-4):
        monkeypatch.setattr(mixture, "TIE_SLACK", slack)
        res = method(problem, PluginOracle(P, y, cells, space))
        assert res.feasible and problem.max_violation(res.confusion) <= 1e-7
        out[slack] = problem.objective.coefs @ res.confusion.ravel() + problem.objective.consts
    tied, broken = out[None], out[1e-4]
    assert broken.max() <= tied.max() + 1e-4 + 1e-9
    assert _top_two(broken) <= _top_two(tied) + 1e-9
    if method is split_frank_wolfe:
        assert np.ptp(tied) < 1e-6  # the three classes tie at the sample optimum
        assert _top_two(broken) <= _top_two(tied) - 0.05


@pytest.mark.parametrize("seed", range(3))
def test_binary_min_max_recall_keeps_the_certified_optimum(seed, monkeypatch):
    """Two classes: the two pieces are the whole objective (a tie at the optimum is the objective's
    own), so the output is the same with and without the allowance: ConGDA on the exact threshold
    oracle ends on the brute-force optimum over mixtures of threshold rules with a certified gap
    of at most ``tol``, either way."""

    P, y, cells, space = calibrated(seed, groups=("F", "M"), n_buckets=8)
    problem = gf.Problem("minmax_recall", [gf.demographic_parity_difference() <= 0.02]).compile(space)
    ref = recall_optimum(cell_rules(P, y, cells, space), space, minmax, problem.A, problem.b)
    out = {}
    for slack in (None, 1e-4):
        monkeypatch.setattr(mixture, "TIE_SLACK", slack)
        res = con_gda(problem, ThresholdOracle(P, y, cells, space), tol=1e-4)
        out[slack] = res.confusion
        assert ref - 1e-7 <= problem.objective.value(res.confusion) <= ref + 1e-4
    np.testing.assert_allclose(out[None], out[1e-4], atol=1e-12)
