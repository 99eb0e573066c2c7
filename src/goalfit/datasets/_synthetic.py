"""Synthetic data sets with a known generator."""
from __future__ import annotations

import numpy as np

__all__ = ["make_jiang_simulated"]


def make_jiang_simulated(n_samples: int = 5000, *, random_state=None):
    """The 2-D imbalanced data of Jiang et al. (ICML 2020), §6.1.

    10% positives from ``N([0, 0], 0.2 I)``; 90% negatives from an equal mixture of
    ``N([-1, -1], 0.1 I)`` and ``N([1, 1], 0.1 I)`` (covariances; the minus signs of the centres
    are lost in the paper text, and only this symmetric reading makes logistic regression predict
    all-negative, G-mean loss 1.000 as in Table 2 -- the notes' I.4 §6.1).

    Parameters
    ----------
    n_samples : int, default 5000
    random_state : int, Generator or None

    Returns
    -------
    X : ndarray of shape (n_samples, 2)
    y : ndarray of int of shape (n_samples,), 1 = positive

    Raises
    ------
    ValueError
        If ``n_samples < 10`` (no positive example).
    """
    if n_samples < 10:
        raise ValueError(f"n_samples must be >= 10 (10% positives), got {n_samples}")
    rng = np.random.default_rng(random_state)
    n_pos = int(round(0.1 * n_samples))
    n_neg = n_samples - n_pos
    Xp = rng.normal(0.0, np.sqrt(0.2), (n_pos, 2))
    centres = np.where(rng.random(n_neg)[:, None] < 0.5, -1.0, 1.0) * np.ones(2)
    Xn = centres + rng.normal(0.0, np.sqrt(0.1), (n_neg, 2))
    X = np.vstack([Xp, Xn])
    y = np.r_[np.ones(n_pos, dtype=int), np.zeros(n_neg, dtype=int)]
    order = rng.permutation(n_samples)
    return X[order], y[order]
