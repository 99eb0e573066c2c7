"""Sufficient statistics of the outer loop, computed per partition and reduced.

The plug-in oracle (Narasimhan et al., JMLR 2024, Alg. 9/10) reads data only through the
confusion tensor of a rule ``h(x) = argmin*_j sum_i eta_i(x) L^{cell(x)}_ij`` on the training
sample. What it needs of the data:

* **Binary, exact** (:func:`gather_scores`): per example ``(eta_1, class, cell, weight)``, 8 + 1 +
  4 (+ 8) bytes a row, gathered on the client; the in-memory :class:`~goalfit.methods.plugin.PluginOracle`
  / :class:`~goalfit.methods.plugin.ThresholdOracle` then sort each cell once. The fit is the
  in-memory fit on the same probabilities.
* **Binary, histogram** (:func:`score_histograms`): per (cell, class) the total weight of the
  examples in each of ``n_bins`` equal bins of ``eta_1`` on [0, 1] (bin ``b`` holds
  ``b / n_bins <= eta_1 < (b + 1) / n_bins``; ``n_bins`` is a power of two, so the bin of a
  float is exact). Each non-empty bin becomes one weighted example at its lower edge
  (:func:`histogram_sample`) and the in-memory oracles run on that compressed sample. A
  threshold rule (every member of a binary plug-in fit is one per cell) classifies all
  examples of a bin alike except in the one bin holding its threshold, so for every member
  the oracle returns, and hence for every mixture of them,

      | C_hist[c, i, j] - C_true[c, i, j] | / m[c, i]  <=  eps = max_{c, i, b} h[c, i, b] / m[c, i]

  where ``h[c, i, b]`` is the weight of bin ``b`` of (cell ``c``, class ``i``) and ``m[c, i]``
  the weight of that row. Every rate over a fixed slice (a union of (cell, class) rows: true
  and false positive rates, selection rate, error, coverage, per group or overall) is a
  mass-weighted average of such entries, so it is within ``eps`` of its value on the data.
  Rates conditioned on the prediction (precision) are not covered by this bound. ``eps`` is
  measured on the data and reported as ``statistics_["rate_error_bound"]``.
* **Multiclass** (:class:`MapReduceOracle`): the probabilities stay on the workers and each
  oracle call is one map-reduce of the plug-in rule's confusion counts (column generation and
  Frank-Wolfe make tens of calls).
"""
from __future__ import annotations

import contextlib

import numpy as np

from ..classifiers.members import PluginRule, plugin_predict
from ..confusion import confusion_tensor
from ..methods.plugin.oracle import Recalibrating, recalibrated_mass

DEFAULTS = {"statistics": "auto", "n_bins": 2 ** 16, "max_exact_rows": 20_000_000, "partial_fit_epochs": 1}


def get_option(name):
    """The value of the Dask config key ``goalfit.<name>`` (defaults: :data:`DEFAULTS`)."""
    import dask

    return dask.config.get(f"goalfit.{name}", DEFAULTS[name])


@contextlib.contextmanager
def options(*, statistics=None, n_bins=None, max_exact_rows=None, partial_fit_epochs=None):
    """Set the options of Dask fits for a ``with`` block (Dask config keys ``goalfit.*``).

    Parameters
    ----------
    statistics : {"auto", "exact", "histogram"}
        Binary problems: gather the exact scores (``"exact"``), reduce histograms
        (``"histogram"``), or exact up to ``max_exact_rows`` rows (``"auto"``, default).
    n_bins : int, power of two, default 65536
        Histogram bins of ``eta_1`` on [0, 1].
    max_exact_rows : int, default 20_000_000
        Largest sample gathered exactly by ``"auto"`` (13 bytes a row gathered, about 85 bytes a
        row on the client once the oracle has sorted them: 0.84 GB at 10^7).
    partial_fit_epochs : int, default 1
        Passes of ``partial_fit`` over the partitions (in a shuffled order per pass).

    Raises
    ------
    ValueError
        For an unknown ``statistics``, ``n_bins`` not a power of two >= 2, or non-positive counts.
    """
    import dask

    new = {}
    if statistics is not None:
        if statistics not in ("auto", "exact", "histogram"):
            raise ValueError(f"statistics must be 'auto', 'exact' or 'histogram', got {statistics!r}")
        new["goalfit.statistics"] = statistics
    if n_bins is not None:
        n_bins = int(n_bins)
        if n_bins < 2 or n_bins & (n_bins - 1):
            raise ValueError(f"n_bins must be a power of two >= 2, got {n_bins}")
        new["goalfit.n_bins"] = n_bins
    for key, v in (("max_exact_rows", max_exact_rows), ("partial_fit_epochs", partial_fit_epochs)):
        if v is not None:
            if int(v) < 1:
                raise ValueError(f"{key} must be a positive integer, got {v!r}")
            new[f"goalfit.{key}"] = int(v)
    with dask.config.set(new):
        yield


# ---------------------------------------------------------------------------- per partition
def partition_scores(prep):
    """Binary exact path, one partition: ``(eta_1, class codes, cells, weights)`` compactly, rows
    sorted by (cell, eta_1) on the worker, so each cell of the gathered sample is a few sorted
    runs that the oracle's stable sort (timsort) merges in O(n log(#partitions))."""
    P, y, cells, w = prep
    order = np.lexsort((P[:, 1], cells))
    return (np.ascontiguousarray(P[order, 1], dtype=float), y[order].astype(np.int8),
            cells[order].astype(np.int32), None if w is None else np.asarray(w, float)[order])


def partition_histogram(prep, n_cells, n_bins):
    """Binary histogram path, one partition: weights per (cell, class, bin), shape (n_cells, 2, n_bins)."""
    P, y, cells, w = prep
    eta = np.clip(P[:, 1], 0.0, 1.0)
    b = np.minimum((eta * n_bins).astype(np.int64), n_bins - 1)  # exact: n_bins is a power of two
    key = (cells.astype(np.int64) * 2 + y) * n_bins + b
    return np.bincount(key, weights=w, minlength=n_cells * 2 * n_bins).reshape(n_cells, 2, n_bins)


def partition_recalibrated_mass(prep, S, n_classes, n_cells):
    """Multiclass path, one partition: per (cell, class) the mass of the probabilities scaled by
    the cells' scales ``S`` and the count of the label (:func:`cell_prior_scales`)."""
    P, y, cells, w = prep
    out = np.zeros((n_cells, n_classes, 2))
    for c in np.unique(cells):
        m = cells == c
        out[c] = recalibrated_mass(np.ascontiguousarray(P[m].T), y[m], None if w is None else w[m], S[c], n_classes)
    return out


def partition_confusion(prep, cost, n_classes, n_cells):
    """Multiclass path, one partition: confusion counts of the plug-in rule with ``cost``."""
    P, y, cells, w = prep
    pred = plugin_predict(P, cells, cost)
    return confusion_tensor(y, pred, cells, n_classes, n_cells, w, normalize=False)


# ---------------------------------------------------------------------------- reductions
def gather_scores(preps):
    """Concatenate the per-partition scores: ``(P (n, 2), y, cells, w or None)`` in memory."""
    import dask

    parts = dask.compute(*[dask.delayed(partition_scores)(p) for p in preps])
    eta = np.concatenate([p[0] for p in parts])
    P = np.empty((len(eta), 2))
    P[:, 1] = eta
    P[:, 0] = 1.0 - eta
    y = np.concatenate([p[1] for p in parts]).astype(np.intp)
    cells = np.concatenate([p[2] for p in parts]).astype(np.intp)
    w = None if parts[0][3] is None else np.concatenate([p[3] for p in parts])
    return P, y, cells, w


def score_histograms(preps, n_cells, n_bins):
    """Sum of the partitions' histograms (a tree reduction), shape (n_cells, 2, n_bins)."""
    import dask
    from dask.delayed import delayed

    level = [delayed(partition_histogram)(p, n_cells, n_bins) for p in preps]
    while len(level) > 1:  # pairwise tree: the client never holds more than one histogram
        level = [delayed(np.add)(level[i], level[i + 1]) if i + 1 < len(level) else level[i]
                 for i in range(0, len(level), 2)]
    return dask.compute(level[0])[0]


def histogram_sample(hist):
    """The compressed weighted sample of a histogram and its rate error bound ``eps``.

    Returns
    -------
    P : ndarray of shape (m, 2)
        ``[1 - e, e]`` with ``e`` the lower edge of each non-empty bin.
    y, cells : ndarray of int, shape (m,)
    w : ndarray of shape (m,)
        Bin weights.
    eps : float
        ``max_{c,i,b} h[c,i,b] / m[c,i]`` over non-empty rows (see the module docstring).
    """
    n_cells, _, n_bins = hist.shape
    c, i, b = np.nonzero(hist)
    w = hist[c, i, b]
    e = b / n_bins
    P = np.column_stack([1.0 - e, e])
    mass = hist.sum(axis=2)
    live = mass > 0
    eps = float((hist.max(axis=2)[live] / mass[live]).max()) if live.any() else 0.0
    return P, i.astype(np.intp), c.astype(np.intp), w, eps


class MapReduceOracle(Recalibrating):
    """Plug-in LMO whose every call is one map-reduce over the partitions (Alg. 9/10).

    With more than two classes its rules can be recalibrated within the cells like the in-memory
    plug-in oracle's (``cell_scales()``: one map-reduce per pass of the fixed point).

    Parameters
    ----------
    preps : list of Dask delayed (persisted where a distributed client is active)
        Per partition ``(P, y_codes, cells, w)``: probabilities of shape (n_k, n_classes) in
        class-code order, codes, cell ids, weights or None.
    space : ConfusionSpace
    total : float
        Total weight (the confusion tensors are fractions of it).

    Attributes
    ----------
    n_calls : int
    name : str
        ``"map_reduce"``.
    """

    name = "map_reduce"

    def __init__(self, preps, space, total):
        self.preps, self.space, self.total = preps, space, float(total)
        self.n_calls = 0

    def recalibration_masses(self, S) -> np.ndarray:
        """Per cell and class, ``[sum_x w q_i(x), count_i]`` for the scales ``S`` of shape
        (n_cells, n_classes): one map-reduce over the partitions, shape (n_cells, n_classes, 2)."""
        import dask

        n, k = self.space.n_classes, self.space.n_cells
        return np.sum(dask.compute(*[dask.delayed(partition_recalibrated_mass)(p, S, n, k) for p in self.preps]),
                      axis=0)

    def __call__(self, cost):
        import dask

        cost = np.broadcast_to(np.asarray(cost, dtype=float), self.space.shape)
        if not np.isfinite(cost).all():
            raise ValueError("the oracle got a cost tensor with NaN or infinite entries")
        self.n_calls += 1
        cost = np.array(cost)
        n, k = self.space.n_classes, self.space.n_cells
        parts = dask.compute(*[dask.delayed(partition_confusion)(p, cost, n, k) for p in self.preps])
        return PluginRule(cost), np.sum(parts, axis=0) / self.total
