"""Stratified sampling of a randomized classifier's predictions on a batch.

Drawing one member per example independently (:meth:`RandomizedClassifier.predict`'s default)
adds binomial noise to every rate: on a group of ``n_g`` examples a class share moves by about
``sqrt(sum_i q_ik (1 - q_ik)) / n_g`` around the randomized classifier's expected share, which
on small groups exceeds the disparity the goals allow (the measurements on law school's small
groups are in benchmarks/README.md, section "derandomization.py").

:func:`stratified_choice` draws the labels of a whole batch at once by *sequential systematic
sampling* within each stratum (a group of the goals): the rows are put in a random order; for
class ``k = 0, ..., K - 2`` the rows not yet labelled get class ``k`` by systematic sampling
(Madow, Ann. Math. Stat. 1949) with inclusion probabilities ``q_ik / (q_ik + ... + q_i,K-1)``,
the rest get class ``K - 1``. Each row's label has exactly the distribution ``q_i`` (a row is
free before stage ``k`` with probability ``q_ik + ... + q_i,K-1``, and systematic sampling
includes it with its probability whatever the other rows), so every expected rate equals the
randomized classifier's; and a stratum's count of class 0 (binary problems: of every class) is
within 1 of its expectation ``sum_i q_i0``. The labels depend on the batch (the other rows of
the stratum), as a cohort's labels do when a quota is shared.

:func:`batch_seed` mixes a fixed seed with the rows of the batch: predicting batch after batch
(or row after row) with one integer ``random_state`` would otherwise reuse the same random
numbers in every batch, so that the batches' draws agree with one another (one row at a time,
every row would take the same member) and the sampled rates would not average out.
"""
from __future__ import annotations

import numpy as np
from sklearn.utils import check_random_state

_SURE = 1e-12


def batch_seed(random_state, hashes):
    """The seed of one batch's draws: ``random_state`` mixed with the batch's rows.

    Parameters
    ----------
    random_state : None, int or RandomState
        None gives None (fresh randomness); an int or a RandomState gives a seed that depends on
        it and on the set of rows (not their order), so the same batch gets the same labels and
        different batches independent ones.
    hashes : ndarray of uint64, shape (n_samples,)
        :func:`goalfit.classifiers.hashing.row_hash` of the batch's rows.

    Returns
    -------
    int or None
    """
    if random_state is None:
        return None
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
        base = int(random_state) % 2**32
    else:
        base = int(check_random_state(random_state).randint(2**31 - 1))
    key = int(np.bitwise_xor.reduce(np.asarray(hashes, dtype=np.uint64))) if len(hashes) else 0
    return int(np.random.SeedSequence([base, key, len(hashes)]).generate_state(1)[0])


def stratified_choice(dist, strata, random_state=None) -> np.ndarray:
    """Class codes drawn from per-row distributions with each stratum's counts controlled.

    Parameters
    ----------
    dist : ndarray of shape (n_samples, n_classes)
        Each row's class distribution (rows sum to 1).
    strata : ndarray of int, shape (n_samples,)
        Stratum of each row (e.g. the goals' group); the counts are controlled within each.
    random_state : int, RandomState or None

    Returns
    -------
    ndarray of int, shape (n_samples,)
        ``P(code_i = k) = dist[i, k]`` exactly; per stratum, the count of code 0 is the floor or
        the ceiling of ``sum_i dist[i, 0]`` (every code's, with two classes).

    Raises
    ------
    ValueError
        If the shapes do not match or a row is not a distribution.
    """
    dist = np.asarray(dist, dtype=float)
    strata = np.asarray(strata)
    if dist.ndim != 2 or strata.shape != (dist.shape[0],):
        raise ValueError(f"dist of shape (n, K) and strata of shape (n,) expected, got {dist.shape} and {strata.shape}")
    if (dist < -1e-9).any() or not np.allclose(dist.sum(axis=1), 1.0, atol=1e-6):
        raise ValueError("every row of dist must be a distribution over the classes (non-negative, summing to 1)")
    n, K = dist.shape
    rng = check_random_state(random_state)
    out = np.full(n, K - 1, dtype=np.intp)
    if n == 0:
        return out
    order = rng.permutation(n)
    order = order[np.argsort(strata[order], kind="stable")]  # random order within each stratum
    _, first, stratum_of = np.unique(strata[order], return_index=True, return_inverse=True)
    q = np.clip(dist[order], 0.0, None)
    rest = q[:, ::-1].cumsum(axis=1)[:, ::-1]          # rest[:, k] = q_k + ... + q_{K-1}
    free = np.ones(n, dtype=bool)
    for k in range(K - 1):
        with np.errstate(invalid="ignore", divide="ignore"):
            p = np.where(free & (rest[:, k] > 0), q[:, k] / rest[:, k], 0.0)
        p = np.clip(p, 0.0, 1.0)
        c = np.cumsum(p)
        prev = c - p
        u = rng.random(len(first))[stratum_of]        # one start per stratum
        chosen = (np.floor(c - u) > np.floor(prev - u)) | (p >= 1 - _SURE)
        chosen &= p > _SURE
        out[order[chosen]] = k
        free &= ~chosen
    return out
