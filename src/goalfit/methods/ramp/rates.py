"""The ramp (Goh et al., NIPS 2016, Eq. 2), its convex upper bounds (Eq. 4-5) and the best deterministic threshold.

The goals reach this module as per-example weights (:class:`goalfit.goals.RateProgram`,
Problem 1). Replacing the positive-prediction indicator ``p_x`` by the ramp ``sigma(f(x))`` of
the score gives the expected rates of the randomized classifier (Eq. 3, Problem 2); replacing
the ramps by the hinge/constant upper bounds anchored at the current scores (Eq. 4-5) gives the
convex Problem 3.
"""
from __future__ import annotations

import numpy as np

from .._scan import ScoreScan


def ramp(z):
    """Ramp ``sigma(z) = max(0, min(1, 1/2 + z))`` (Goh et al. Eq. 2), elementwise, in [0, 1]."""
    return np.clip(0.5 + np.asarray(z, dtype=float), 0.0, 1.0)


def ramp_upper_bounds(z, z_anchor):
    """Convex upper bounds of ``sigma(z)`` and ``sigma(-z)`` tight at ``z_anchor`` (Eq. 4-5).

    ``sigma_p(z; z') = max(0, 1/2 + z)`` if ``z' <= 1/2`` else 1, and
    ``sigma_n(z; z') = max(0, 1/2 - z)`` if ``z' >= -1/2`` else 1.

    Parameters
    ----------
    z, z_anchor : ndarray of shape (n,)

    Returns
    -------
    (upper_p, upper_n) : ndarrays of shape (n,)
    """
    z = np.asarray(z, dtype=float)
    z_anchor = np.asarray(z_anchor, dtype=float)
    up = np.where(z_anchor <= 0.5, np.maximum(0.0, 0.5 + z), 1.0)
    un = np.where(z_anchor >= -0.5, np.maximum(0.0, 0.5 - z), 1.0)
    return up, un


def best_threshold(program, scores, tol=1e-9):
    """Best deterministic rule ``1[f(x) > t]`` over the threshold ``t`` (exact on the sample).

    Problem 1 itself (the indicator rates, Goh et al. Eq. 1) for the one-parameter family of
    rules that shift the score's threshold: the examples sorted by decreasing score, predicting
    positive on the first ``k`` of them changes the objective and every row by the cumulative
    sums of ``a - c`` and ``A - C`` (``p`` enters linearly), so every ``k`` between distinct
    scores is evaluated in ``O(n m)`` after one sort (:class:`~goalfit.methods._scan.ScoreScan`).
    Among the rules meeting every row (up to ``tol``) it returns the lowest objective; when
    none does, the smallest largest violation, then the lowest objective. Ties in the objective
    go to the threshold nearest to 0.

    Parameters
    ----------
    program : RateProgram
    scores : ndarray of shape (n,)
        ``f(x)`` on the program's examples.
    tol : float
        Rows at most ``tol`` count as met.

    Returns
    -------
    threshold : float
        A value between the scores at the chosen position (``min - 1`` / ``max + 1`` at the ends).
    objective : float
    max_violation : float
        Of the chosen rule's rows (0 when all are met).
    """
    f = np.asarray(scores, dtype=float)
    scan = ScoreScan(-f)  # the first k of the ascending scan of -f: the k largest scores
    m = program.n_rows
    gains = np.empty((len(f), 1 + m))
    gains[:, 0] = program.a0 - program.c0
    if m:
        gains[:, 1:] = (program.A - program.C).T
    base = np.concatenate([[program.c0.sum() + program.k0], program.C.sum(axis=1) + program.k])
    vals = base + scan.cumulative(gains)  # (n + 1, 1 + m)
    valid = scan.valid
    thresholds = -scan.threshold(valid)  # the first k (the k largest f) are those with f > t
    viol = np.maximum(vals[valid, 1:].max(axis=1), 0.0) if m else np.zeros(len(valid))
    viol = np.where(viol <= tol, 0.0, viol)
    obj = vals[valid, 0]
    best = np.lexsort((np.abs(thresholds), np.round(obj, 12), viol))[0]
    return float(thresholds[best]), float(obj[best]), float(viol[best])
