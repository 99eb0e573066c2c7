"""Linear minimization oracles (LMOs) over classifiers (Narasimhan et al., JMLR 2024, §4).

An oracle takes a cost tensor ``L`` of shape ``(n_cells, n, n)`` and returns a member whose
confusion tensor ``C`` (approximately) minimizes ``<L, C>`` over all classifiers, together with
``C`` on the sample. Every method of :mod:`goalfit.methods.plugin` talks to data only through
an oracle.

* :class:`PluginOracle` — Alg. 9 (no groups) and Alg. 10 (groups): the plug-in rule on a fixed
  class-probability estimate. For **two classes** the rule in each cell is a threshold on
  ``eta_1(x)``, so the examples of each cell are sorted by ``eta_1`` once and every call is a
  binary search plus cumulative sums: ``O(n_cells log N)`` per call instead of a pass over the
  data. For more classes the rows of each cell are gathered once into a contiguous
  ``(n, N_c)`` block with preallocated work buffers, and a call costs one ``(n x n) @ (n x N_c)``
  product, ``n - 1`` vectorized comparisons and one ``bincount`` per cell, with no allocation
  proportional to ``N``.
* :class:`ThresholdOracle` — two classes only: the exact minimizer of the cost **on the
  sample** over per-cell threshold rules on ``eta_1`` (both directions), found by one
  vectorized scan of the sorted cell per call (``O(N)``, no refit). The plug-in oracle is
  optimal for the cost *expected under the estimates*, so its error grows with their
  miscalibration; this one needs only that ``eta_1`` ranks examples well within each cell
  (the ERM-over-thresholds of Hardt et al. 2016 / fairlearn's ThresholdOptimizer, here as an
  LMO for every method). Not in Narasimhan et al.; an addition.
* :class:`RefitOracle` — §8.7: refit the base estimator with example weights derived from ``L``
  (exact reduction for two classes; for more classes ``L`` must be a weighted 0-1 cost in each
  row, as the gradients of diagonal metrics such as H-mean are).
"""
from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import clone

from ...classifiers.members import (ConstantMember, FittedMember, PluginRule, ThresholdRule,
                                    binary_margin, codes_work, plugin_codes_block)
from ...confusion import confusion_tensor, int_codes
from ...utils.fitting import fit_weighted
from ...utils.rows import take_rows
from .._scan import hull_candidates, split_positions


class _ZerosBefore:
    """Unweighted cumulative count of label 0 in a sorted cell, ``k - cum1[k]``, without storing it.

    Indexable like the array it stands for (an int or an int array of positions).
    """

    def __init__(self, cum1):
        self.cum1 = cum1

    def __getitem__(self, k):
        return np.asarray(k, dtype=float) - self.cum1[k] if np.ndim(k) else float(k) - float(self.cum1[k])

    def __len__(self):
        return len(self.cum1)


def recalibrated_mass(PT, y, w, s, n_classes):
    """One cell's ``[sum_x w q_i(x), count_i]`` per class, the step of :func:`cell_prior_scales`.

    Parameters
    ----------
    PT : ndarray of shape (n_classes, m)
        The cell's class probabilities, transposed.
    y : ndarray of int, shape (m,)
        Label codes.
    w : ndarray of shape (m,) or None
        Weights (None: ones).
    s : ndarray of shape (n_classes,)
        The cell's scales; ``q`` is ``s * eta`` renormalized over the classes.
    n_classes : int

    Returns
    -------
    ndarray of shape (n_classes, 2)

    Notes
    -----
    ``sum_x w q_i(x) = s_i sum_x eta_i(x) w(x) / (s . eta(x))``: two matrix-vector products over
    the cell, without forming ``q``.
    """
    d = s @ PT
    np.maximum(d, 1e-300, out=d)
    r = np.divide(1.0, d, out=d) if w is None else np.divide(w, d, out=d)
    mass = s * (PT @ r)
    return np.column_stack([mass, np.bincount(y, weights=w, minlength=n_classes)])


def cell_prior_scales(masses, n_cells, n_classes, max_iter=100, tol=1e-6) -> np.ndarray:
    """Per-cell class scales ``s[c]`` that recalibrate class probabilities to each cell's labels.

    In cell ``c`` the recalibrated probabilities ``q_i(x) = s[c, i] eta_i(x) / sum_j s[c, j]
    eta_j(x)`` sum, over the cell's rows, to the cell's (weighted) count of each label. This is
    the stationarity condition of the cell's log-likelihood in ``log s`` (concave), so ``log s``
    are the maximum-likelihood offsets of the log-probabilities per class: the bias part of
    vector scaling (Guo et al., ICML 2017, §4.2), one per cell. A model that does not see the
    group is calibrated over all rows but not within a group, whose shift moves its class
    priors; the plug-in rule for cost ``L`` on the recalibrated probabilities is the plug-in rule
    for the cost with row ``i`` of each cell's matrix multiplied by ``s[c, i]``
    (:meth:`Recalibrating.recalibrated`), so its members are ordinary plug-in rules that apply to
    new rows of the cell.

    Found by iterative proportional fitting, ``s_i <- s_i * count_i / sum_x q_i(x)``, until the
    largest relative change of a class's mass is below ``tol`` (at most ``max_iter`` passes over
    the sample). A label absent from a cell gets scale 0 there; an empty cell keeps scales of one.

    Parameters
    ----------
    masses : callable
        ``masses(S)`` with ``S`` of shape (n_cells, n_classes) returns, shape (n_cells,
        n_classes, 2), each cell's recalibrated mass ``sum_x w q_i(x)`` and count of label ``i``
        (one pass over the rows: in memory, or one map-reduce over partitions).
    n_cells, n_classes : int

    Returns
    -------
    ndarray of shape (n_cells, n_classes)
        The scales, the largest of each non-empty cell 1.
    """
    S = np.ones((n_cells, n_classes))
    first = masses(S)
    counts = first[:, :, 1]
    present = counts > 0
    S = present.astype(float)
    S[~present.any(axis=1)] = 1.0  # empty cells
    for _ in range(max_iter):
        mass = masses(S)[:, :, 0]
        ratio = np.divide(counts, mass, out=np.zeros_like(counts), where=mass > 0)
        S *= ratio
        S /= np.maximum(S.max(axis=1, keepdims=True), 1e-300)
        S[~present.any(axis=1)] = 1.0
        if not present.any() or np.max(np.abs(ratio[present] - 1.0)) < tol:
            break
    return S


class Recalibrating:
    """Mixin of the oracles whose multiclass plug-in rules can be recalibrated within the cells.

    A subclass has ``space`` and defines :meth:`recalibration_masses` (one pass over its rows);
    the mixin computes the scales once (:func:`cell_prior_scales`) and scales cost tensors.
    """

    space: Any
    _scales: np.ndarray | None = None

    def recalibration_masses(self, S) -> np.ndarray:  # pragma: no cover - every subclass defines it
        """Per cell and class, ``[sum_x w q_i(x), count_i]`` for the scales ``S`` (n_cells,
        n_classes): shape (n_cells, n_classes, 2) (:func:`recalibrated_mass` per cell)."""
        raise NotImplementedError

    def cell_scales(self) -> np.ndarray:
        """Per-cell class scales that recalibrate the probabilities to each cell's label
        frequencies (:func:`cell_prior_scales`), computed once and kept.

        Returns
        -------
        ndarray of shape (n_cells, n_classes)

        Raises
        ------
        ValueError
            For two classes (binary problems price over the cells' ROC hulls instead).
        """
        if self.space.n_classes == 2:
            raise ValueError("cell_scales is defined for more than two classes")
        if self._scales is None:
            self._scales = cell_prior_scales(self.recalibration_masses, self.space.n_cells, self.space.n_classes)
        return self._scales

    def recalibrated(self, cost, strength: float = 1.0) -> np.ndarray:
        """The cost tensor whose plug-in rule is the plug-in rule for ``cost`` on the probabilities
        recalibrated within each cell (:meth:`cell_scales`): ``cost[c, i, j] * s[c, i] ** strength``.

        Parameters
        ----------
        cost : ndarray of shape ``space.shape``
        strength : float, default 1.0
            The power of the scales: 1 the maximum-likelihood recalibration, 0 none (``cost``
            itself), in between or beyond a rule on the path through both.

        Returns
        -------
        ndarray of shape ``space.shape``
        """
        return np.asarray(cost, dtype=float) * self.cell_scales()[:, :, None] ** strength


class PluginOracle(Recalibrating):
    """Plug-in LMO on fixed class probabilities (Alg. 9/10; ties toward the larger index).

    Parameters
    ----------
    proba : ndarray of shape (n_samples, n_classes)
        Class-probability estimates on the sample the outer loop uses.
    y_codes : ndarray of int, shape (n_samples,)
    cell_ids : ndarray of int, shape (n_samples,)
    space : ConfusionSpace
    sample_weight : ndarray of shape (n_samples,), optional

    Attributes
    ----------
    n_calls : int
        Number of calls so far.
    exact : bool
        False: the rule minimizes the cost expected under ``proba``, not the cost on the sample.
    name : str
        ``"plugin"`` (as ``method_params["oracle"]`` names it).
    """

    exact = False
    name = "plugin"

    def __init__(self, proba, y_codes, cell_ids, space, sample_weight=None):
        self.proba = np.asarray(proba, dtype=float)
        # integer codes are kept as given (a fit passes them one byte per row), not widened
        self.y, self.cells = int_codes(y_codes), int_codes(cell_ids)
        self.space = space
        # None: unit weights (no array of ones kept)
        self.w = None if sample_weight is None else np.asarray(sample_weight, float)
        self.total = float(len(self.y)) if self.w is None else self.w.sum()
        self.n_calls = 0
        if space.n_classes == 2:
            self._prepare_binary()
        else:
            self._prepare_multiclass()

    def _prepare_multiclass(self):
        """Per-cell contiguous probability blocks, label offsets and work buffers (once)."""
        n = self.space.n_classes
        order = np.argsort(self.cells, kind="stable")
        bounds = np.searchsorted(self.cells[order], np.arange(self.space.n_cells + 1))
        self._blocks = []
        for c in range(self.space.n_cells):
            idx = order[bounds[c]:bounds[c + 1]]
            m = idx.size
            PT = np.ascontiguousarray(self.proba[idx].T)
            ybase = self.y[idx].astype(np.intp) * n  # code of (true i, predicted j) is i * n + j
            w = None if self.w is None else np.ascontiguousarray(self.w[idx])
            self._blocks.append((PT, ybase, w, codes_work(n, m), np.empty(m, dtype=np.intp)))

    def _multiclass_confusion(self, cost):
        n = self.space.n_classes
        out = np.empty((self.space.n_cells, n * n))
        for c, (PT, ybase, w, work, pred) in enumerate(self._blocks):
            if PT.shape[1] == 0:
                out[c] = 0.0
                continue
            plugin_codes_block(PT, cost[c], work, pred)
            pred += ybase
            out[c] = np.bincount(pred, weights=w, minlength=n * n)
        return out.reshape(self.space.shape) / self.total

    def recalibration_masses(self, S) -> np.ndarray:
        """Per cell and class, ``[sum_x w q_i(x), count_i]`` for the scales ``S`` of shape
        (n_cells, n_classes): shape (n_cells, n_classes, 2) (multiclass; one pass over the rows)."""
        n = self.space.n_classes
        out = np.zeros((self.space.n_cells, n, 2))
        for c, (PT, ybase, w, _, _) in enumerate(self._blocks):
            if PT.shape[1]:
                out[c] = recalibrated_mass(PT, ybase // n, w, S[c], n)
        return out

    def _prepare_binary(self):
        """Per cell: ``eta_1`` sorted ascending and the cumulative weights of each label.

        The sort need not be stable: every rule the oracles consider treats equal ``eta_1``
        alike, so its split positions fall between runs of equal values, where the cumulative
        sums do not depend on the order inside a run.

        Memory (unweighted): the cells keep 12 bytes per row (the sorted ``eta_1``, float64,
        and the count of ones before each position, int32 below 2^31 rows, which every user
        reads as exact integers). The cells are prepared largest first, and a cell's
        temporaries (its ``eta_1``, the sort order, its labels; about 26 bytes per row of the
        cell; its index array is freed before the sort) are released before the next one, so
        the peak is about 1 byte per row (a cell mask; one more for the labels as int8 unless
        given so) plus ``max_c (12 * rows before c + 26 * rows of c)``.
        """
        n_rows = len(self.y)
        single = self.space.n_cells == 1
        y_all = self.y.astype(np.int8, copy=False)  # binary codes: 1-byte gathers
        count = np.int32 if n_rows < 2**31 - 1 else np.int64
        # (eta_1 sorted, cum0, cum1) of each cell, filled below (largest cell first)
        self._sorted: list[Any] = [None] * self.space.n_cells
        # largest cell first (by its mass: the order changes nothing but the peak)
        for c in np.argsort(-self.space.row_mass.sum(axis=1), kind="stable"):
            if single:
                eta, y, w = self.proba[:, 1], y_all, self.w
            else:
                idx = np.flatnonzero(self.cells == c)  # faster gathers than by the boolean mask
                eta, y, w = self.proba[idx, 1], y_all[idx], None if self.w is None else self.w[idx]
                del idx  # before the sort: one cell's index array and order never coexist
            local = np.argsort(eta)  # positions in the cell by increasing eta_1
            eta = eta[local]
            y = y[local]
            cum0: np.ndarray | _ZerosBefore
            if w is None:  # unweighted: the zeros' counts follow from the ones'
                del local
                cum1 = np.empty(len(y) + 1, dtype=count)
                cum1[0] = 0
                np.cumsum(y, out=cum1[1:])
                cum0 = _ZerosBefore(cum1)
            else:
                w = w[local]
                del local
                cum0 = np.concatenate([[0.0], np.cumsum(w * (y == 0))])
                cum1 = np.concatenate([[0.0], np.cumsum(w * (y == 1))])
            self._sorted[c] = (eta, cum0, cum1)
            del y, w
        del y_all

    def _binary_cell(self, c, L2):
        """Confusion counts of the plug-in rule in cell c (predict 1 where margin <= 0)."""
        eta, cum0, cum1 = self._sorted[c]
        n = len(eta)
        a = L2[0, 1] - L2[0, 0]
        s = (L2[1, 1] - L2[1, 0]) - a
        if n == 0:
            return np.zeros((2, 2))

        def positive(k):
            return binary_margin(eta[k], L2) <= 0

        if s > 0:  # margin increasing in eta: class 1 on a prefix [0, k)
            k = int(np.searchsorted(eta, -a / s, side="right"))
            while k < n and positive(k):
                k += 1
            while k > 0 and not positive(k - 1):
                k -= 1
            fp, tp = cum0[k], cum1[k]
        elif s < 0:  # margin decreasing: class 1 on a suffix [k, n)
            k = int(np.searchsorted(eta, -a / s, side="left"))
            while k > 0 and positive(k - 1):
                k -= 1
            while k < n and not positive(k):
                k += 1
            fp, tp = cum0[n] - cum0[k], cum1[n] - cum1[k]
        else:
            everyone = a <= 0
            fp, tp = (cum0[n], cum1[n]) if everyone else (0.0, 0.0)
        return np.array([[cum0[n] - fp, fp], [cum1[n] - tp, tp]])

    def confusion_of(self, cost) -> np.ndarray:
        """Confusion tensor of the plug-in rule with this cost tensor (does not count as a call)."""
        cost = np.asarray(cost, dtype=float)
        if self.space.n_classes == 2:
            return np.stack([self._binary_cell(c, cost[c]) for c in range(self.space.n_cells)]) / self.total
        return self._multiclass_confusion(cost)

    def confusion_of_thresholds(self, thresholds, upper) -> np.ndarray:
        """Confusion tensor of a :class:`~goalfit.classifiers.ThresholdRule` on the sample (binary;
        exact, by binary search in each cell's sorted ``eta_1``; not counted as a call).

        Parameters
        ----------
        thresholds : array of shape (n_cells,)
        upper : array of bool, shape (n_cells,)
            Class 1 iff ``eta_1 >= t`` (True) or ``eta_1 <= t`` (False) in each cell.

        Returns
        -------
        ndarray of shape (n_cells, 2, 2)
            Fractions of the sample's weight.
        """
        out = []
        for c, (eta, cum0, cum1) in enumerate(self._sorted):
            n = len(eta)
            if upper[c]:
                k = int(np.searchsorted(eta, thresholds[c], side="left"))
                fp, tp = cum0[n] - cum0[k], cum1[n] - cum1[k]
            else:
                k = int(np.searchsorted(eta, thresholds[c], side="right"))
                fp, tp = cum0[k], cum1[k]
            out.append([[cum0[n] - fp, fp], [cum1[n] - tp, tp]])
        return np.array(out, dtype=float) / self.total

    def restricted(self, rows):
        """The same kind of oracle on a subset of the rows (indices), e.g. a random subsample.

        Its confusion tensors are normalized by the subset's own total weight, so they estimate
        the full sample's; its members (rules given by their cost) apply to any rows.
        """
        rows = np.asarray(rows)
        w = None if self.w is None else self.w[rows]
        return type(self)(self.proba[rows], self.y[rows], self.cells[rows], self.space, w)

    def __call__(self, cost):
        """Return ``(PluginRule(cost), C)`` with C the rule's confusion tensor on the sample."""
        cost = np.broadcast_to(np.asarray(cost, dtype=float), self.space.shape)
        if not np.isfinite(cost).all():
            raise ValueError("the oracle got a cost tensor with NaN or infinite entries")
        self.n_calls += 1
        return PluginRule(cost), self.confusion_of(cost)


#: Strengths of the recalibration within the cells that the pricing of column generation and of
#: the coarse-to-fine polish adds beside the plug-in rule (more than two classes, an oracle that
#: :func:`recalibrates`): the scales to these powers, 1 the maximum-likelihood recalibration.
RECALIBRATION = (0.5, 1.0, 1.5)


def recalibrates(oracle) -> bool:
    """Whether ``oracle`` prices multiclass plug-in rules it can recalibrate within the cells
    (``oracle.recalibrated(cost, strength)``): the plug-in oracle and the map-reduce oracle on
    more than two classes."""
    return isinstance(oracle, Recalibrating) and oracle.space.n_classes > 2


def recalibration_strengths(oracle, recalibration) -> tuple[float, ...]:
    """The strengths a method prices on ``oracle``: ``recalibration`` as floats where the oracle
    :func:`recalibrates` (more than two classes), else ``()`` (the plug-in rule alone)."""
    return tuple(float(t) for t in recalibration) if recalibrates(oracle) else ()


def is_plugin(oracle) -> bool:
    """Whether ``oracle`` is the plug-in oracle itself (its members are :class:`PluginRule`
    objects given by their cost tensor), not the threshold or refit oracle."""
    return isinstance(oracle, PluginOracle) and not isinstance(oracle, ThresholdOracle)


#: Split positions scanned at once when the threshold oracle finds a cell's candidate cuts.
CUT_BLOCK = 1 << 16


class ThresholdOracle(PluginOracle):
    """Exact sample-cost minimizer over per-cell thresholds on ``eta_1`` (binary problems).

    For a cost tensor ``L`` it picks, in every cell independently, the rule "predict 1 iff
    ``eta_1 >= t``" or "predict 1 iff ``eta_1 <= t``" (``t`` at a distinct value of ``eta_1``,
    or one class everywhere) minimizing ``sum_l w_l L[c, y_l, h(x_l)]`` on the sample, by one
    vectorized scan over the split positions of the sorted cell. Members are
    :class:`~goalfit.classifiers.ThresholdRule` objects.

    Parameters
    ----------
    As :class:`PluginOracle`.

    Raises
    ------
    ValueError
        For more than two classes.

    Attributes
    ----------
    exact : bool
        True: a call returns the sample minimizer over threshold rules (stopping rules may
        certify gaps with it).
    name : str
        ``"threshold"``.
    """

    exact = True
    name = "threshold"

    def __init__(self, proba, y_codes, cell_ids, space, sample_weight=None):
        if space.n_classes != 2:
            raise ValueError("the threshold oracle is defined for binary problems only")
        super().__init__(proba, y_codes, cell_ids, space, sample_weight)
        self._cuts = [self._candidate_cuts(*cell) for cell in self._sorted]

    @staticmethod
    def _candidate_cuts(eta, cum0, cum1):
        """The split positions of a cell whose points ``(cum0[k], cum1[k])`` can be vertices of
        its convex hull (:func:`~goalfit.methods._scan.hull_candidates`).

        A call's two costs (class 1 on ``[k, n)`` or on ``[0, k)``) are linear in that point,
        so their minima over every split position are reached at one of these: a call then
        scans a few hundred candidates instead of every distinct ``eta_1`` (ties between
        equally good positions may resolve to another one of them).

        Parameters
        ----------
        eta : ndarray of shape (n,)
            The cell's ``eta_1``, sorted ascending.
        cum0, cum1 : indexable by an int array, length n + 1
            Weight of label 0 / 1 among the first ``k`` sorted examples.

        Returns
        -------
        ndarray of int, shape (m,), ascending
            Positions in ``0..n`` (both ends included).

        Notes
        -----
        A cell of more than :data:`CUT_BLOCK` positions is scanned block by block: a vertex of
        the whole chain's hull is a vertex of the hull of every block that holds it, so the
        candidates of the blocks hold every vertex, and one more pass over their union keeps
        the result small. The temporaries are then a block's, not the cell's (the oracle's peak
        memory stays that of the plug-in oracle's preparation).
        """
        n = len(eta)
        if n + 1 <= CUT_BLOCK:
            cuts = split_positions(eta)
            return cuts if len(cuts) <= 2 else cuts[hull_candidates(cum0[cuts], cum1[cuts])]
        kept = []
        for lo in range(0, n + 1, CUT_BLOCK):
            hi = min(lo + CUT_BLOCK, n + 1)  # the block's positions lo..hi-1
            start = max(lo - 1, 0)  # position k is a split iff eta[k-1] < eta[k] (0 and n always)
            k = split_positions(eta[start:min(hi, n)]) + start
            k = k[(k >= lo) & (k < hi)]
            kept.append(k if len(k) <= 2 else k[hull_candidates(cum0[k], cum1[k])])
        cuts = np.concatenate(kept)
        return cuts if len(cuts) <= 2 else cuts[hull_candidates(cum0[cuts], cum1[cuts])]

    def _split(self, c, L2):
        """Best (threshold, upper, counts) in cell c for the 2x2 cost ``L2``."""
        eta, cum0, cum1 = self._sorted[c]
        n = len(eta)
        if n == 0:
            return np.inf, True, np.zeros((2, 2))
        k = self._cuts[c]
        tot0, tot1 = cum0[n], cum1[n]
        b0, b1 = cum0[k], cum1[k]
        suffix = L2[0, 0] * b0 + L2[1, 0] * b1 + L2[0, 1] * (tot0 - b0) + L2[1, 1] * (tot1 - b1)
        prefix = L2[0, 1] * b0 + L2[1, 1] * b1 + L2[0, 0] * (tot0 - b0) + L2[1, 0] * (tot1 - b1)
        i, j = int(np.argmin(suffix)), int(np.argmin(prefix))
        if suffix[i] <= prefix[j]:  # class 1 on [k, n): eta >= eta[k]
            kk = int(k[i])
            t = float(eta[kk]) if kk < n else np.inf
            fp, tp = tot0 - cum0[kk], tot1 - cum1[kk]
            return t, True, np.array([[tot0 - fp, fp], [tot1 - tp, tp]])
        kk = int(k[j])  # class 1 on [0, k): eta <= eta[k-1]
        t = float(eta[kk - 1]) if kk > 0 else -np.inf
        fp, tp = cum0[kk], cum1[kk]
        return t, False, np.array([[tot0 - fp, fp], [tot1 - tp, tp]])

    def __call__(self, cost):
        cost = np.broadcast_to(np.asarray(cost, dtype=float), self.space.shape)
        if not np.isfinite(cost).all():
            raise ValueError("the oracle got a cost tensor with NaN or infinite entries")
        self.n_calls += 1
        parts = [self._split(c, cost[c]) for c in range(self.space.n_cells)]
        rule = ThresholdRule([p[0] for p in parts], [p[1] for p in parts])
        return rule, np.stack([p[2] for p in parts]) / self.total


class RefitOracle:
    """Weighted-refit LMO (Narasimhan et al. §8.7, "WLR"): one fit of the base estimator per call.

    For two classes, example ``l`` in cell ``c`` with label ``i`` gets target ``argmin_j
    L[c, i, j]`` and weight ``w_l |L[c,i,1] - L[c,i,0]|``: an exact reduction of cost-sensitive
    to weighted classification. For more classes each row ``L[c, i]`` must be constant off the
    diagonal with a diagonal no larger (a weighted 0-1 cost, after the row shift that does not
    change the minimizer); the weight is then ``w_l (L[c,i,k] - L[c,i,i])`` for ``k != i``.

    Parameters
    ----------
    estimator : scikit-learn classifier supporting ``sample_weight``
    X : array-like or sparse matrix of shape (n_samples, n_features)
    y_codes, cell_ids, space, sample_weight : as :class:`PluginOracle`

    Raises
    ------
    ValueError
        When a multiclass cost tensor is not of the weighted 0-1 form.
    """

    exact = False
    name = "refit"

    def __init__(self, estimator, X, y_codes, cell_ids, space, sample_weight=None):
        self.estimator = estimator
        self.X = X
        self.y = np.asarray(y_codes, dtype=np.intp)
        self.cells = np.asarray(cell_ids, dtype=np.intp)
        self.space = space
        self.w = np.ones(len(self.y)) if sample_weight is None else np.asarray(sample_weight, float)
        self.n_calls = 0

    def _targets(self, cost):
        rows = cost[self.cells, self.y]  # (N, n): costs of each prediction for each example
        if self.space.n_classes == 2:
            target = (rows[:, 1] <= rows[:, 0]).astype(np.intp)
            weight = self.w * np.abs(rows[:, 1] - rows[:, 0])
            return target, weight
        n = self.space.n_classes
        off = rows.copy()
        off[np.arange(len(rows)), self.y] = np.nan
        lo, hi = np.nanmin(off, axis=1), np.nanmax(off, axis=1)
        diag = rows[np.arange(len(rows)), self.y]
        if not np.allclose(lo, hi) or (diag > lo + 1e-12).any():
            raise ValueError(
                f"the refit oracle needs weighted 0-1 costs for {n} classes (constant off the "
                "diagonal, diagonal below it); use the plug-in oracle for this problem"
            )
        return self.y.copy(), self.w * (lo - diag)

    def __call__(self, cost):
        cost = np.broadcast_to(np.asarray(cost, dtype=float), self.space.shape)
        self.n_calls += 1
        target, weight = self._targets(cost)
        keep = weight > 0
        model = clone(self.estimator)
        if len(np.unique(target[keep])) < 2:
            # degenerate: one class is best for every weighted example
            const = int(target[keep][0]) if keep.any() else int(np.argmin(cost.sum(axis=(0, 1))))
            pred = np.full(len(self.y), const, dtype=np.intp)
            member: ConstantMember | FittedMember = ConstantMember(const)
        else:
            rows = np.flatnonzero(keep)
            fit_weighted(model, self.X if len(rows) == len(keep) else take_rows(self.X, rows), target[keep],
                         weight[keep])
            member = FittedMember(model, {c: c for c in range(self.space.n_classes)})
            pred = member.predict_codes(self.X, None, self.cells)
        C = confusion_tensor(self.y, pred, self.cells, self.space.n_classes, self.space.n_cells, self.w)
        return member, C

