"""Every threshold of one score on a sample: one sort, the cuts, cumulative sums.

The exact one-parameter searches of the methods share this scan: the ramp method's fitted
threshold (:func:`goalfit.methods.ramp.best_threshold`, Goh et al. Problem 1 over the rules
``1[f(x) > t]``), the binary group-blind threshold oracle and the deterministic searches over
the rules ``1[<eta(x), d> <= t]`` (:class:`goalfit.methods.plugin.group_blind.OffsetScan`,
:mod:`goalfit.methods.derandomize`), and the per-cell split positions of the threshold oracle
(:func:`split_positions`). A linear goal changes by a fixed amount per example moved from one
predicted class to the other, so every threshold's value is a cumulative sum over the sorted
examples, and only the cuts between distinct scores are rules (equal scores are treated alike).

This module depends on numpy only, so the algorithm layers (``methods.plugin``,
``methods.ramp``, ``methods.derandomize``) import it without cycles.
"""
from __future__ import annotations

import numpy as np

__all__ = ["GRID_SIZE", "ScoreScan", "split_positions"]

#: The default largest number of threshold candidates of the post-shift searches (the plug-in
#: family's :func:`~goalfit.methods.plugin.baselines.post_shift` and the surrogate family's
#: :func:`~goalfit.methods.surrogate.baselines.best_threshold`): evenly spaced quantiles of
#: the score when it has more distinct values than this.
GRID_SIZE = 1000


def split_positions(sorted_scores) -> np.ndarray:
    """The cut positions of a threshold rule on sorted scores.

    Parameters
    ----------
    sorted_scores : ndarray of shape (n,)
        Scores sorted ascending (e.g. ``eta_1`` of one cell).

    Returns
    -------
    ndarray of int, shape (m,)
        ``0``, ``n`` and every ``k`` with ``sorted_scores[k-1] < sorted_scores[k]``, ascending
        (``[0]`` when ``n = 0``): the rules "one class on the first ``k``, the other on the rest"
        that treat equal scores alike (Narasimhan et al. JMLR 2024, Alg. 10).
    """
    s = np.asarray(sorted_scores)
    if len(s) == 0:
        return np.zeros(1, dtype=int)
    return np.flatnonzero(np.r_[True, s[1:] > s[:-1], True]).astype(int)


def hull_candidates(x, y) -> np.ndarray:
    """Indices of the points ``(x, y)`` (a chain non-decreasing in both coordinates) that can be
    vertices of its convex hull: the candidates of its upper and of its lower hull.

    For each side, vectorized passes drop every point on the wrong side of the chord between its
    current neighbours (such a point is no hull vertex of that side) until none is left; the
    ends stay. Of repeated points (a run of zero-weight examples between two cuts) the first
    stands for all. Every vertex of the convex hull is among the result, so a linear function of
    the points reaches its minimum over all of them at one of these: the per-cell ROC hulls of
    :mod:`~goalfit.methods.plugin.binary_hull` and the threshold oracle's candidate cuts. A chain
    whose non-vertices must go one per pass (a smooth convex arc ending in a long straight run)
    is the slow case, O(m^2) (see benchmarks/README.md, section "Measurements behind the library's choices").

    Parameters
    ----------
    x, y : ndarray of shape (m,)
        The chain, in order (e.g. the counts of each label before every split position).

    Returns
    -------
    ndarray of int, shape (k,), ascending, ``k <= m``
        Empty for an empty chain.
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) == 0:
        return np.zeros(0, dtype=int)
    dx, dy = x[1:] - x[:-1], y[1:] - y[:-1]
    # repeated points would each see a zero cross product and drop together: keep the first
    moved = (dx != 0) | (dy != 0)
    if moved.all():
        first = np.arange(len(x))
    else:
        first = np.flatnonzero(np.r_[True, moved])
        x, y = x[first], y[first]
        dx, dy = x[1:] - x[:-1], y[1:] - y[:-1]
    if len(first) <= 2:
        return first
    # the first pass of both sides at once (the longest one): one cross product per point
    cross = dx[:-1] * dy[1:] - dy[:-1] * dx[1:]
    sides = []
    for side in (+1, -1):
        keep = np.empty(len(first), bool)
        keep[0] = keep[-1] = True
        np.less(side * cross, 0, out=keep[1:-1])
        if keep.all():
            sides.append(first)
            continue
        sides.append(_chain_side(first[keep], x[keep], y[keep], side))
    return np.union1d(*sides)


def _chain_side(idx, x, y, side):
    """The points of ``idx`` left by the passes of :func:`hull_candidates` on one side (``+1``
    upper, ``-1`` lower)."""
    while len(idx) > 2:
        dx, dy = x[1:] - x[:-1], y[1:] - y[:-1]
        # cross product of (b - a) and (c - b), a b c consecutive
        good = side * (dx[:-1] * dy[1:] - dy[:-1] * dx[1:]) < 0
        if good.all():
            break
        keep = np.empty(len(idx), bool)
        keep[0] = keep[-1] = True
        keep[1:-1] = good
        idx, x, y = idx[keep], x[keep], y[keep]
    return idx


class ScoreScan:
    """Every cut of a score on a sample, after one stable sort (ascending).

    Position ``k`` (``0 <= k <= n``) puts the first ``k`` sorted examples (the ``k`` lowest
    scores) on one side of the threshold; only the positions in :attr:`valid` (between distinct
    scores, and both ends) are rules. For a goal that changes by ``gains[l]`` when example ``l``
    moves to the "first ``k``" side, its value at every position is one row of
    :meth:`cumulative`. A descending scan is the scan of the negated score.

    Parameters
    ----------
    score : ndarray of shape (n,)

    Attributes
    ----------
    score : ndarray of shape (n,)
    order : ndarray of int, shape (n,)
        Stable ascending order of ``score``.
    sorted_score : ndarray of shape (n,)
    valid : ndarray of int, shape (m,)
        The valid positions (:func:`split_positions` of :attr:`sorted_score`).
    """

    def __init__(self, score):
        self.score = np.asarray(score, dtype=float)
        self.order = np.argsort(self.score, kind="stable")
        self.sorted_score = self.score[self.order]
        self.valid = split_positions(self.sorted_score)

    def cumulative(self, gains) -> np.ndarray:
        """Cumulative sums of per-example ``gains`` over the sorted examples.

        Parameters
        ----------
        gains : ndarray of shape (n, m)
            Per example (original order), the change of ``m`` quantities when it is among the
            first ``k``.

        Returns
        -------
        ndarray of shape (n + 1, m)
            ``out[k]``: the sum of ``gains`` over the first ``k`` sorted examples (``out[0] = 0``).
        """
        g = np.asarray(gains, dtype=float)[self.order]
        return np.vstack([np.zeros((1, g.shape[1])), np.cumsum(g, axis=0)])

    def threshold(self, k):
        """A threshold ``t`` with the first ``k`` sorted examples at ``score <= t``, the rest above.

        The midpoint of the scores at the cut; ``min - 1`` at ``k = 0`` and ``max + 1`` at
        ``k = n`` (beyond the extreme score, not at it, so that a score recomputed with a
        different rounding stays on its side); ``-1`` when ``n = 0``.

        Parameters
        ----------
        k : int or ndarray of int
            Valid positions.

        Returns
        -------
        float or ndarray of float (the shape of ``k``)
        """
        sc, n = self.sorted_score, len(self.sorted_score)
        k = np.asarray(k)
        if n == 0:
            t = np.full(k.shape, -1.0)
        else:
            t = 0.5 * (sc[np.clip(k - 1, 0, n - 1)] + sc[np.clip(k, 0, n - 1)])
            t = np.where(k == 0, sc[0] - 1.0, np.where(k == n, sc[-1] + 1.0, t))
        return float(t) if t.ndim == 0 else t
