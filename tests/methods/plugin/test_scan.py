"""The shared score scan (goalfit.methods._scan) against brute force on tiny samples."""
import numpy as np
import pytest

from goalfit.methods._scan import ScoreScan, split_positions


@pytest.mark.parametrize("seed", range(6))
def test_score_scan_equals_every_threshold_enumerated(seed):
    rng = np.random.default_rng(seed)
    for _ in range(20):
        n = int(rng.integers(1, 9))
        score = rng.integers(0, 4, n).astype(float)  # few values: many ties
        G = 2
        cells, y, w = rng.integers(0, G, n), rng.integers(0, 2, n), rng.random(n)
        onehot = np.zeros((n, G * 2))
        onehot[np.arange(n), cells * 2 + y] = w  # per-cell positive/negative weights
        gains = np.hstack([onehot, rng.normal(size=(n, 2))])
        scan = ScoreScan(score)
        cum = scan.cumulative(gains)
        assert cum.shape == (n + 1, gains.shape[1])
        # every threshold: below everything, at each distinct score (score <= t), above everything
        rules = {}
        for t in np.r_[score.min() - 0.5, np.unique(score)]:
            side = score <= t
            rules[int(side.sum())] = side
        assert sorted(rules) == list(scan.valid)  # one valid position per distinct rule, no other
        for k in scan.valid:
            side = rules[int(k)]
            np.testing.assert_allclose(cum[k], gains[side].sum(axis=0), rtol=0, atol=1e-12)
            counts = np.zeros((G, 2))
            np.add.at(counts, (cells[side], y[side]), w[side])
            np.testing.assert_allclose(cum[k, :4].reshape(G, 2), counts, rtol=0, atol=1e-12)
            t = scan.threshold(k)
            np.testing.assert_array_equal(score <= t, side)  # the threshold realizes the rule
            # a threshold strictly between the scores (not at one): robust to rounding
            assert not np.any(np.isclose(score, t))
        np.testing.assert_array_equal(scan.threshold(scan.valid),
                                      [scan.threshold(int(k)) for k in scan.valid])


def test_split_positions_closed_form():
    np.testing.assert_array_equal(split_positions(np.array([0.1, 0.1, 0.3, 0.5, 0.5, 0.5])), [0, 2, 3, 6])
    np.testing.assert_array_equal(split_positions(np.array([0.2])), [0, 1])
    np.testing.assert_array_equal(split_positions(np.zeros(0)), [0])
    np.testing.assert_array_equal(split_positions(np.full(4, 0.7)), [0, 4])
    scan = ScoreScan(np.array([2.0, -1.0, 2.0, 0.5]))
    np.testing.assert_array_equal(scan.order, [1, 3, 0, 2])  # stable
    assert scan.threshold(0) == -2.0 and scan.threshold(1) == -0.25 and scan.threshold(4) == 3.0
    assert ScoreScan(np.zeros(0)).threshold(0) == -1.0


@pytest.mark.parametrize("seed", range(5))
def test_hull_candidates_keep_every_vertex_of_the_convex_hull(seed):
    """Both sides of a monotone chain's hull hold every vertex of its convex hull (scipy's
    Qhull as reference), so a linear function's minimum over the chain is reached among them."""
    from scipy.spatial import ConvexHull

    from goalfit.methods._scan import hull_candidates

    rng = np.random.default_rng(seed)
    x = np.cumsum(rng.integers(0, 3, 400)).astype(float)
    y = np.cumsum(rng.integers(0, 3, 400)).astype(float)
    keep = hull_candidates(x, y)
    assert hull_candidates([], []).size == 0
    pts = np.column_stack([x, y])
    vertices = {tuple(p) for p in pts[ConvexHull(pts).vertices]}
    assert vertices <= {tuple(p) for p in pts[keep]}
    for _ in range(50):
        d = rng.standard_normal(2)
        assert (pts[keep] @ d).min() == pytest.approx((pts @ d).min(), abs=1e-9)


@pytest.mark.parametrize("chain", [
    [(0, 0)], [(0, 0), (1, 2)], [(0, 0), (0, 0), (0, 0)], [(0, 0), (1, 1), (2, 2), (3, 3)],
    [(0, 0), (0, 0), (1, 0), (1, 0), (1, 3), (2, 3), (2, 3)], [(0, 0), (2, 0), (2, 1), (3, 3), (3, 4)]],
    ids=["point", "segment", "repeated", "collinear", "repeats-and-turns", "turns"])
def test_hull_candidates_on_short_and_degenerate_chains(chain):
    """Short chains, repeated points and straight runs: the first of each repeat stands for it,
    the ends stay, and every linear function's minimum over the chain is reached among the
    candidates (brute force over all points)."""
    from goalfit.methods._scan import hull_candidates

    pts = np.array(chain, dtype=float)
    keep = hull_candidates(pts[:, 0], pts[:, 1])
    assert keep[0] == 0 and np.all(np.diff(keep) > 0)
    firsts = [i for i in range(len(pts)) if i == 0 or not np.array_equal(pts[i], pts[i - 1])]
    assert set(keep) <= set(firsts) and firsts[-1] in keep
    for d in np.random.default_rng(0).standard_normal((50, 2)):
        assert (pts[keep] @ d).min() == pytest.approx((pts @ d).min(), abs=1e-12)
