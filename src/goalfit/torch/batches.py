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

    def _plan(self, s: int, n_batches: int):
        """When small stream ``s`` runs out over the next ``n_batches`` batches.

        Returns the batch index at which each new permutation of the stream is first needed and
        the number of new permutations (the stream goes on where it stopped and is reshuffled
        whenever it runs out).
        """
        k, L = self.per_batch[s], len(self.strata[s])
        rest, need = len(self._perm[s]) - self._pos[s], n_batches * self.per_batch[s]
        n_new = 0 if need <= rest else -(-(need - rest) // L)
        return (rest + L * np.arange(n_new)) // k, n_new

    def epoch_arrays(self):
        """The batches of one epoch as three arrays: rows, importance weights, batch sizes.

        ``rows[offsets[t]: offsets[t + 1]]`` (``offsets = [0, cumsum(sizes)]``) is batch ``t``:
        its main-stream rows, then ``min_slice_rows`` rows of each small stream in order. The
        main stream is reshuffled at the start of every epoch and each of its rows is used
        once; the small streams go on where they stopped and are reshuffled whenever they run
        out (the permutations are drawn from the one generator in the order the batches need
        them). Everything is drawn at once, with no Python loop over batches or strata.
        """
        rng, S = self.rng, len(self.strata)
        self._perm[0] = rng.permutation(self.strata[0])
        self._pos[0] = len(self._perm[0])
        n_b, m0 = self.n_batches, self.per_batch[0]
        main = self._perm[0]
        main_sizes = np.full(n_b, m0, dtype=np.intp)
        main_sizes[-1] = len(main) - m0 * (n_b - 1)
        # small streams: which new permutations each needs, drawn in (batch, stream) order
        plans = [self._plan(s, n_b) for s in range(1, S)]
        events = sorted((int(t), s, j) for s, (first, _) in enumerate(plans, start=1) for j, t in enumerate(first))
        drawn = {(s, j): rng.permutation(self.strata[s]) for _, s, j in events}
        small = []
        for s, (_, n_new) in enumerate(plans, start=1):
            k = self.per_batch[s]
            parts = [self._perm[s][self._pos[s]:]] + [drawn[(s, j)] for j in range(n_new)]
            stream = np.concatenate(parts)[: n_b * k]
            if n_new:
                self._perm[s] = drawn[(s, n_new - 1)]
                self._pos[s] = len(self._perm[s]) - (len(parts[0]) + len(self._perm[s]) * n_new - n_b * k)
            else:
                self._pos[s] += n_b * k
            small.append(stream.reshape(n_b, k))
        # importance weights: stratum s of a batch carries its share, spread over its rows' weights
        starts = np.r_[0, np.cumsum(main_sizes)[:-1]]
        w_main = self.w[main]
        tot = np.add.reduceat(w_main, starts)
        scale = np.divide(self.shares[0], tot, out=np.zeros_like(tot), where=tot > 0)
        w_main = w_main * np.repeat(scale, main_sizes)
        w_small = []
        for s, rows in enumerate(small, start=1):
            w = self.w[rows]
            tot = w.sum(axis=1, keepdims=True)
            w_small.append(w * np.divide(self.shares[s], tot, out=np.zeros_like(tot), where=tot > 0))
        # interleave: batch t = its main rows, then each small stream's rows
        k_small = sum(self.per_batch[1:])
        sizes = main_sizes + k_small
        if not small:
            return main.astype(np.int64), w_main, sizes
        offsets = np.r_[0, np.cumsum(sizes)]
        rows, weights = np.empty(offsets[-1], dtype=np.int64), np.empty(offsets[-1])
        t_main = np.repeat(np.arange(n_b), main_sizes)
        pos_main = np.arange(len(main)) + t_main * k_small
        rows[pos_main], weights[pos_main] = main, w_main
        col = 0
        for rs, ws in zip(small, w_small):
            k = rs.shape[1]
            pos = (offsets[:-1] + main_sizes + col)[:, None] + np.arange(k)[None, :]
            rows[pos], weights[pos] = rs, ws
            col += k
        return rows, weights, sizes

    def epoch(self):
        """The batches of one epoch: a list of ``(rows, weights)`` numpy arrays (see
        :meth:`epoch_arrays`, which the training loop uses)."""
        rows, weights, sizes = self.epoch_arrays()
        cut = np.cumsum(sizes)[:-1]
        return list(zip(np.split(rows, cut), np.split(weights, cut)))

    def state_dict(self) -> dict:
        """RNG and stream positions, for checkpoints."""
        return {"rng": self.rng.bit_generator.state, "perm": [p.copy() for p in self._perm], "pos": list(self._pos)}

    def load_state_dict(self, state: dict) -> None:
        self.rng.bit_generator.state = state["rng"]
        self._perm = [np.asarray(p) for p in state["perm"]]
        self._pos = list(state["pos"])
