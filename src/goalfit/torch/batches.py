"""Minibatches with one stream per small slice (TFCO's recommendation for rare groups).

A rate on a slice that holds a few examples per batch has a noisy minibatch estimate, and a
slice absent from a batch has none. TFCO's documentation (README, "rare groups") recommends a
separate dataset per small slice so that every batch holds some of its examples. Here the
slices are the rows of the confusion tensor, ``(cell, true class)``: every slice whose expected
count in a batch of ``batch_size`` is below ``min_slice_rows`` and that carries at least
``min_share`` of some goal (:meth:`goalfit.torch.rates.RateProblem.slice_shares`) gets its own
stream, from which each batch draws ``min_slice_rows`` examples (reshuffled whenever it is exhausted); the other
examples form the main stream, which defines the epoch. Each example's importance weight makes
the batch an unbiased estimate of the whole sample: a stratum ``s`` with weight share ``p_s``
whose batch rows weigh ``W_s`` in total gives its rows ``p_s * w_r / W_s``, so the weights sum
to 1 as the entries of the core's confusion tensors do.
"""
from __future__ import annotations

import numpy as np


class StratifiedBatches:
    """Seeded minibatch index streams over strata.

    Parameters
    ----------
    y_codes, cell_ids : int arrays of shape (n_samples,)
    n_classes : int
    sample_weight : float array of shape (n_samples,) or None
    batch_size : int
        Rows drawn from the main stream per batch.
    min_slice_rows : int
        Slices with fewer expected rows per batch get their own stream of this many rows per
        batch (0 disables the separate streams).
    seed : int
    shares : ndarray of shape (n_cells * n_classes,), optional
        Share of a goal each slice carries; slices below ``min_share`` stay in the main stream.
    min_share : float, default 0.05

    Attributes
    ----------
    strata : list of int arrays
        Row indices of each stratum; ``strata[0]`` is the main stream (may be empty when all
        slices are small).
    shares : ndarray of shape (n_strata,)
        Weight share of each stratum (sums to 1).
    n_batches : int
        Batches per epoch.

    Raises
    ------
    ValueError
        For a non-positive batch size or total weight.
    """

    def __init__(self, y_codes, cell_ids, n_classes, sample_weight, batch_size, min_slice_rows, seed, shares=None,
                 min_share=0.05):
        if int(batch_size) < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        n = len(y_codes)
        self.w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, float)
        total = self.w.sum()
        if total <= 0:
            raise ValueError("the sample weights sum to zero")
        self.batch_size, self.min_slice_rows = int(batch_size), int(min_slice_rows)
        slice_of = np.asarray(cell_ids) * n_classes + np.asarray(y_codes)
        counts = np.bincount(slice_of, minlength=1 if shares is None else len(shares))
        rare = (counts > 0) & (counts * min(self.batch_size, n) / n < self.min_slice_rows)
        if shares is not None:
            rare &= np.asarray(shares) >= min_share
        small = np.flatnonzero(rare)
        is_small = np.isin(slice_of, small)
        self.strata = [np.flatnonzero(~is_small)] + [np.flatnonzero(slice_of == s) for s in small]
        if len(self.strata[0]) == 0:
            self.strata = self.strata[1:]
            self.main_is_slice = True
        else:
            self.main_is_slice = False
        self.shares = np.array([self.w[s].sum() / total for s in self.strata])
        self.per_batch = [min(self.batch_size, len(self.strata[0]))] + [self.min_slice_rows] * (len(self.strata) - 1)
        if self.main_is_slice:
            self.per_batch[0] = self.min_slice_rows
        self.n_batches = int(np.ceil(len(self.strata[0]) / self.per_batch[0]))
        self.rng = np.random.default_rng(seed)
        self._perm = [self.rng.permutation(s) for s in self.strata]
        self._pos = [0] * len(self.strata)

    @property
    def n_small_slices(self) -> int:
        """Number of separate small-slice streams."""
        return len(self.strata) - (0 if self.main_is_slice else 1)

    def _take(self, s: int, k: int) -> np.ndarray:
        out = []
        while k > 0:
            if self._pos[s] >= len(self._perm[s]):
                self._perm[s] = self.rng.permutation(self.strata[s])
                self._pos[s] = 0
            part = self._perm[s][self._pos[s]: self._pos[s] + k]
            self._pos[s] += len(part)
            out.append(part)
            k -= len(part)
        return np.concatenate(out)

    def epoch(self):
        """The batches of one epoch: a list of ``(rows, weights)`` numpy arrays.

        The main stream is reshuffled at the start of every epoch and each of its rows is used
        once; the small-slice streams continue where they stopped. The whole epoch is drawn at
        once (the caller converts it to tensors once, not per batch).
        """
        self._perm[0] = self.rng.permutation(self.strata[0])
        self._pos[0] = 0
        out = []
        for t in range(self.n_batches):
            start = t * self.per_batch[0]
            main = self._perm[0][start: start + self.per_batch[0]]
            self._pos[0] = start + len(main)
            parts = [main] + [self._take(s, k) for s, k in enumerate(self.per_batch) if s > 0]
            weights = []
            for s, rows in enumerate(parts):
                w = self.w[rows]
                tot = w.sum()
                weights.append(w * (self.shares[s] / tot) if tot > 0 else np.zeros(len(rows)))
            out.append((np.concatenate(parts), np.concatenate(weights)))
        return out

    def state_dict(self) -> dict:
        """RNG and stream positions, for checkpoints."""
        return {"rng": self.rng.bit_generator.state, "perm": [p.copy() for p in self._perm], "pos": list(self._pos)}

    def load_state_dict(self, state: dict) -> None:
        self.rng.bit_generator.state = state["rng"]
        self._perm = [np.asarray(p) for p in state["perm"]]
        self._pos = list(state["pos"])
