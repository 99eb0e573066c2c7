"""Members of (randomized) classifiers: deterministic rules that map examples to class codes.

* :class:`PluginRule` — the plug-in classifier of Narasimhan et al. (JMLR 2024), Alg. 9/10:
  ``h(x) = argmin*_j sum_i eta_i(x) L^{A(x)}_ij`` with one cost matrix per cell ``A(x)`` and ties
  broken toward the **larger** class index (the paper's ``argmin*``). For two classes the rule is
  computed as ``a + eta_1 (b - a) <= 0`` with ``a = L_01 - L_00`` and ``b = L_11 - L_10``, the
  same inequality the sorted-threshold oracle evaluates, so training predictions and the
  oracle's confusion matrices agree exactly.
* :class:`GroupBlindRule` — the group-blind plug-in rule on a joint model
  ``eta_{y,a}(x) = P(Y = y, A = a | x)``: ``h(x) = argmin*_j sum_{y,a} eta_{y,a}(x) L_a[y, j]``
  (see :mod:`goalfit.methods.plugin.group_blind`); it never reads the group.
* :class:`FittedMember` — an estimator refitted with example weights (the weighted-refit oracle,
  §8.7); it predicts from the features.
"""
from __future__ import annotations

import numpy as np


def binary_margin(eta1, L2):
    """``a + eta1 (b - a)`` for a 2x2 cost matrix; predict class 1 where it is ``<= 0``."""
    a = L2[0, 1] - L2[0, 0]
    b = L2[1, 1] - L2[1, 0]
    return a + eta1 * (b - a)


def codes_work(n_classes: int, m: int) -> tuple:
    """Work buffers of :func:`plugin_codes_block` for a block of ``m`` rows and ``n_classes`` classes.

    Returns
    -------
    tuple
        ``(scores, best, ties, index, classes, top)``: the scores (float, shape (n_classes, m)),
        their column minima (shape (m,)), the ties with the minimum (bool, shape (n_classes, m)),
        the tied class indices (the smallest unsigned integer type that holds them, shape
        (n_classes, m)), the class indices as a column of that type and the decisions in that
        type (shape (m,)).
    """
    dtype = np.min_scalar_type(max(n_classes - 1, 0))
    return (np.empty((n_classes, m)), np.empty(m), np.empty((n_classes, m), dtype=bool),
            np.empty((n_classes, m), dtype=dtype), np.arange(n_classes, dtype=dtype)[:, None],
            np.empty(m, dtype=dtype))


def plugin_codes_block(PT, cost_c, work, out):
    """Plug-in decisions of one cell, written into preallocated buffers (no allocation).

    Parameters
    ----------
    PT : ndarray of shape (n_rows, m), C-contiguous
        The cell's class probabilities, transposed (one contiguous row per class; ``n_rows =
        n_classes``), or joint (group, class) probabilities for the group-blind rule
        (``n_rows = n_cells * n_classes``, :func:`group_blind_predict`).
    cost_c : ndarray of shape (n_rows, n_classes)
        The cell's cost matrix ``L[i, j]`` (true i, predicted j), or the stacked per-group ones.
    work : tuple
        Work buffers for ``m`` rows from :func:`codes_work`.
    out : ndarray of int, shape (m,)
        Receives the decisions ``argmin_j scores[j]`` with ``scores[j] = sum_i eta_i L[i, j]``,
        ties toward the larger index (the paper's ``argmin*``).

    Notes
    -----
    The decision is the largest ``j`` whose score equals the column minimum: a minimum and an
    equality test over contiguous rows and a maximum of the tied indices in the smallest unsigned
    type that holds them (one byte up to 256 classes),
    several times faster than an ``argmin`` along a short axis and about twice as fast as a
    running comparison per class (whose masked copies dominate); the same decisions, ties
    included, since both compare the same floats exactly.
    """
    scores, best, ties, index, classes, top = work
    np.matmul(cost_c.T, PT, out=scores)
    np.minimum.reduce(scores, axis=0, out=best)
    np.equal(scores, best, out=ties)
    # one type per ufunc call: a mixed-type call would cast through a buffer of thousands of rows
    np.multiply(ties.view(np.uint8) if index.dtype == np.uint8 else ties, classes, out=index)
    np.maximum.reduce(index, axis=0, out=top)
    out[...] = top
    return out


def plugin_predict(proba, cell_ids, cost) -> np.ndarray:
    """Plug-in decisions for per-cell cost matrices.

    Parameters
    ----------
    proba : ndarray of shape (n_samples, n_classes)
        Class-probability estimates eta-hat(x).
    cell_ids : ndarray of int, shape (n_samples,)
    cost : ndarray of shape (n_cells, n_classes, n_classes)
        ``cost[c, i, j]``: cost of predicting j for true class i in cell c.

    Returns
    -------
    ndarray of int, shape (n_samples,): predicted class codes.
    """
    proba = np.asarray(proba, dtype=float)
    n = proba.shape[1]
    pred = np.empty(len(proba), dtype=np.intp)
    for c in range(cost.shape[0]):
        idx = np.flatnonzero(cell_ids == c)
        if idx.size == 0:
            continue
        if n == 2:
            pred[idx] = (binary_margin(proba[idx, 1], cost[c]) <= 0).astype(np.intp)
        else:
            PT = np.ascontiguousarray(proba[idx].T)
            out = np.empty(idx.size, dtype=np.intp)
            plugin_codes_block(PT, np.asarray(cost[c], float), codes_work(n, idx.size), out)
            pred[idx] = out
    return pred


class PluginRule:
    """A plug-in rule given by its per-cell cost tensor (shape (n_cells, n, n))."""

    needs = "proba"

    def __init__(self, cost):
        self.cost = np.array(cost, dtype=float)

    def predict_codes(self, X, proba, cell_ids) -> np.ndarray:
        return plugin_predict(proba, cell_ids, self.cost)

    def key(self):
        return self.cost.tobytes()


def group_blind_predict(joint, cost) -> np.ndarray:
    """Group-blind plug-in decisions ``argmin*_j sum_{a,y} joint[l, a, y] cost[a, y, j]``.

    Parameters
    ----------
    joint : ndarray of shape (n_samples, n_cells, n_classes) or (n_samples, n_cells * n_classes)
        Joint probabilities ``P(A = a, Y = y | x)`` (cell-major when flattened).
    cost : ndarray of shape (n_cells, n_classes, n_classes)

    Returns
    -------
    ndarray of int, shape (n_samples,): predicted class codes; ties go to the larger index, and
    for two classes class 1 wins where ``score_1 - score_0 <= 0`` (as :func:`binary_margin`).
    """
    cost = np.asarray(cost, dtype=float)
    G, n, _ = cost.shape
    J = np.asarray(joint, dtype=float).reshape(-1, G * n)
    if n == 2:
        d = (cost[:, :, 1] - cost[:, :, 0]).ravel()
        return (J @ d <= 0).astype(np.intp)
    m = len(J)
    out = np.empty(m, dtype=np.intp)
    return plugin_codes_block(np.ascontiguousarray(J.T), cost.reshape(G * n, n), codes_work(n, m), out)


class GroupBlindRule:
    """A group-blind plug-in rule given by a per-group cost tensor (shape (n_cells, n, n)).

    Reads the joint probabilities ``P(A = a, Y = y | x)`` (the ``proba`` argument, shape
    (n_samples, n_cells * n)) and ignores ``cell_ids``.
    """

    needs = "proba"

    def __init__(self, cost):
        self.cost = np.array(cost, dtype=float)

    def predict_codes(self, X, proba, cell_ids) -> np.ndarray:
        return group_blind_predict(proba, self.cost)

    def key(self):
        return ("blind", self.cost.tobytes())


class ThresholdRule:
    """Binary rule with one threshold per cell: class 1 iff ``eta_1 >= t_c`` (``upper[c]``) or
    iff ``eta_1 <= t_c`` (not ``upper[c]``). Compared directly, so no rounding can move an
    example across the threshold.

    Parameters
    ----------
    thresholds : array of shape (n_cells,)
    upper : array of bool, shape (n_cells,)
    """

    needs = "proba"

    def __init__(self, thresholds, upper):
        self.thresholds = np.asarray(thresholds, dtype=float)
        self.upper = np.asarray(upper, dtype=bool)

    def predict_codes(self, X, proba, cell_ids) -> np.ndarray:
        eta = np.asarray(proba, dtype=float)[:, 1]
        t = self.thresholds[cell_ids]
        return np.where(self.upper[cell_ids], eta >= t, eta <= t).astype(np.intp)

    def key(self):
        return (self.thresholds.tobytes(), self.upper.tobytes())


class FittedMember:
    """A fitted estimator used as a member; ``class_codes`` maps its ``classes_`` to codes."""

    needs = "X"

    def __init__(self, estimator, class_codes):
        self.estimator = estimator
        self.class_codes = dict(class_codes)

    def predict_codes(self, X, proba, cell_ids) -> np.ndarray:
        raw = self.estimator.predict(X)
        return np.array([self.class_codes[v.item() if isinstance(v, np.generic) else v] for v in raw],
                        dtype=np.intp)

    def key(self):
        return id(self)


class ConstantMember:
    """Member predicting one class code everywhere (a degenerate refit)."""

    needs = "X"

    def __init__(self, code):
        self.code = int(code)

    def predict_codes(self, X, proba, cell_ids) -> np.ndarray:
        return np.full(len(cell_ids), self.code, dtype=np.intp)

    def key(self):
        return ("const", self.code)
