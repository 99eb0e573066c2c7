"""Confusion matrices of deterministic and randomized classifiers, per cell.

Convention (Narasimhan et al., JMLR 2024, Def. 1): rows index the **true** class, columns the
**predicted** class, and entries are fractions of the whole (weighted) sample, so a tensor sums
to 1. A randomized classifier is given by its per-example class distribution (an
``(n_samples, n_classes)`` array with rows in the simplex); its *expected* confusion matrix is
exact, with no sampling noise.
"""
from __future__ import annotations

import numpy as np

from .cells import CellEncoder, int_codes


def confusion_tensor(y_codes, pred, cell_ids, n_classes: int, n_cells: int, sample_weight=None,
                     normalize: bool = True) -> np.ndarray:
    """Stacked per-cell confusion matrices from integer codes.

    Parameters
    ----------
    y_codes : array of int, shape (n_samples,)
        True class codes in ``0..n_classes-1``.
    pred : array of int, shape (n_samples,), or array of float, shape (n_samples, n_classes)
        Predicted class codes, or per-example predicted-class distributions (rows in the
        simplex) for the expected confusion matrix of a randomized classifier.
    cell_ids : array of int, shape (n_samples,), or None
        Cell of each example (``None``: one cell).
    n_classes, n_cells : int
    sample_weight : array of shape (n_samples,), optional
        Non-negative example weights.
    normalize : bool, default True
        Divide by the total weight, so the tensor sums to 1 (the paper's convention); else counts.

    Returns
    -------
    ndarray of shape (n_cells, n_classes, n_classes)

    Raises
    ------
    ValueError
        On an empty sample or zero total weight.
    """
    y_codes = int_codes(y_codes)  # narrow codes are widened only in ``row`` (one n-sized array)
    n = y_codes.shape[0]
    if n == 0:
        raise ValueError("cannot compute a confusion matrix of zero examples")
    w = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
    if cell_ids is None:
        row = y_codes.astype(np.intp)
    else:
        row = np.multiply(int_codes(cell_ids), n_classes, dtype=np.intp)
        row += y_codes
    pred = np.asarray(pred)
    if pred.ndim == 1:
        row *= n_classes
        row += int_codes(pred)
        flat = np.bincount(row, weights=w, minlength=n_cells * n_classes * n_classes)
        out: np.ndarray = flat.reshape(n_cells, n_classes, n_classes)
    else:
        if pred.shape != (n, n_classes):
            raise ValueError(f"predicted distributions must have shape ({n}, {n_classes}), got {pred.shape}")
        size = n_cells * n_classes
        # one weighted bincount per predicted class (several times faster than ``np.add.at``)
        out = np.column_stack([np.bincount(row, weights=pred[:, j] if w is None else pred[:, j] * w, minlength=size)
                               for j in range(n_classes)]).reshape(n_cells, n_classes, n_classes)
    if normalize:
        total = float(n) if w is None else w.sum()
        if total <= 0:
            raise ValueError("the sample weights sum to zero")
        out = out / total
    return out


def _encode(y_true, y_pred, labels):
    y_true = np.asarray(y_true)
    y_pred = np.asarray(y_pred)
    if labels is None:
        labels = np.unique(np.concatenate([y_true.ravel(), y_pred.ravel()]) if y_pred.ndim == 1 else y_true)
    labels = np.asarray(labels)
    index = {v.item() if isinstance(v, np.generic) else v: k for k, v in enumerate(labels)}

    def codes(values):
        try:
            return np.array([index[v.item() if isinstance(v, np.generic) else v] for v in values],
                            dtype=np.intp)
        except KeyError as err:
            raise ValueError(f"label {err.args[0]!r} is not in labels {list(labels)}") from None

    yt = codes(y_true)
    yp = codes(y_pred) if y_pred.ndim == 1 else y_pred
    return yt, yp, labels


def confusion_matrix(y_true, y_pred, *, labels=None, sample_weight=None, normalize: bool = True):
    """Confusion matrix of one slice (the whole sample).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,)
    labels : array-like of shape (n_classes,), optional
        Class order; default: sorted union of the labels seen.
    sample_weight : array-like of shape (n_samples,), optional
    normalize : bool, default True
        Fractions of the total weight (sum 1) or counts (``False``, as scikit-learn's
        ``confusion_matrix``).

    Returns
    -------
    ndarray of shape (n_classes, n_classes); rows true class, columns predicted class.
    """
    yt, yp, labels = _encode(y_true, y_pred, labels)
    return confusion_tensor(yt, yp, None, len(labels), 1, sample_weight, normalize)[0]


def expected_confusion_matrix(y_true, pred_distribution, *, labels=None, sensitive_features=None,
                              sample_weight=None):
    """Exact expected confusion matrix of a randomized classifier.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
    pred_distribution : array of shape (n_samples, n_classes)
        ``pred_distribution[l, j]`` is the probability that the classifier predicts class
        ``labels[j]`` on example ``l`` (e.g. ``RandomizedClassifier.predict_proba``).
    labels : array-like of shape (n_classes,), optional
        Column order of ``pred_distribution``; default: sorted labels of ``y_true``.
    sensitive_features : optional
        If given, return the per-group matrices as :func:`group_confusion_matrices` does.
    sample_weight : array-like of shape (n_samples,), optional

    Returns
    -------
    ndarray of shape (n_classes, n_classes); with ``sensitive_features``, the pair
    ``(matrices of shape (n_groups, n_classes, n_classes), groups DataFrame)``.
    """
    yt, _, labels = _encode(y_true, np.asarray(y_true), labels)
    dist = np.asarray(pred_distribution, dtype=float)
    if sensitive_features is None:
        return confusion_tensor(yt, dist, None, len(labels), 1, sample_weight)[0]
    enc = CellEncoder()
    cells = enc.fit_transform(sensitive_features, len(yt))
    return confusion_tensor(yt, dist, cells, len(labels), enc.n_cells, sample_weight), enc.cells_


def group_confusion_matrices(y_true, y_pred, sensitive_features, *, labels=None, sample_weight=None):
    """Group-specific confusion matrices (Narasimhan et al., JMLR 2024, Def. 2).

    ``C[a, i, j]`` is the fraction of **all** examples that are in group ``a``, of true class
    ``i`` and predicted ``j``; so ``C.sum(axis=0)`` is the overall confusion matrix.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,)
    sensitive_features : array-like, Series, DataFrame or dict
        Group membership; several columns give their intersections.
    labels : array-like of shape (n_classes,), optional
    sample_weight : array-like of shape (n_samples,), optional

    Returns
    -------
    matrices : ndarray of shape (n_groups, n_classes, n_classes)
    groups : pandas.DataFrame of shape (n_groups, n_columns)
        The sensitive values of each group, in the order of ``matrices``.
    """
    yt, yp, labels = _encode(y_true, y_pred, labels)
    enc = CellEncoder()
    cells = enc.fit_transform(sensitive_features, len(yt))
    return confusion_tensor(yt, yp, cells, len(labels), enc.n_cells, sample_weight), enc.cells_


class BatchConfusion:
    """Confusion tensors of many binary rules on one labelled sample, all at once.

    The methods that evaluate many perturbed models per step (Jiang et al., ICML 2020, Alg. 2
    and 3; a grid of thresholds) need the stacked per-cell confusion matrices of every model:
    ``C[r, c, i, 1]`` is the (weighted) mass of the examples of cell ``c`` and true class ``i``
    that model ``r`` predicts positive, divided by the total weight; ``C[r, c, i, 0]`` the rest
    of that (cell, class) row. One sparse product with the (cell, class) indicator matrix
    counts every model's positive predictions per row.

    Parameters
    ----------
    y_codes : array of int, shape (n_samples,)
        True class codes in {0, 1} (code 1: the positive class ``classes[1]``).
    cell_ids : array of int, shape (n_samples,), or None
        Cell of each example (None: one cell).
    n_cells : int
    sample_weight : array of shape (n_samples,), optional

    Raises
    ------
    ValueError
        On an empty sample, class codes outside {0, 1}, or zero total weight.
    """

    def __init__(self, y_codes, cell_ids, n_cells: int, sample_weight=None):
        import scipy.sparse as sp

        y = int_codes(y_codes)
        n = y.shape[0]
        if n == 0:
            raise ValueError("cannot compute a confusion matrix of zero examples")
        if y.min() < 0 or y.max() > 1:
            raise ValueError("BatchConfusion is for binary problems: class codes must be 0 or 1")
        row = y.astype(np.intp) if cell_ids is None else np.multiply(int_codes(cell_ids), 2, dtype=np.intp) + y
        w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=float)
        total = float(w.sum())
        if total <= 0:
            raise ValueError("the sample weights sum to zero")
        self.n_samples, self.n_cells = n, int(n_cells)
        # (2 n_cells, n): row (cell, class) holds the weights of its examples
        self._rows = sp.csr_matrix((w / total, (row, np.arange(n))), shape=(2 * self.n_cells, n))
        self.row_mass = np.bincount(row, weights=w / total, minlength=2 * self.n_cells).reshape(self.n_cells, 2)

    def tensors(self, positive) -> np.ndarray:
        """Stacked confusion tensors of the rules, shape (m, n_cells, 2, 2).

        Parameters
        ----------
        positive : array of shape (n_samples,) or (m, n_samples)
            Predicted positive (bool, or the probability of the positive class for the
            expected confusion matrix of a randomized rule), one row per rule.

        Raises
        ------
        ValueError
            For a wrong number of columns.
        """
        P = np.atleast_2d(np.asarray(positive))
        if P.shape[1] != self.n_samples:
            raise ValueError(f"predictions have {P.shape[1]} columns but the sample has {self.n_samples} rows")
        if P.dtype.kind == "b":
            P = P.view(np.uint8)
        pos = np.asarray(self._rows @ P.T, dtype=float).T.reshape(len(P), self.n_cells, 2)  # (m, cells, class)
        out = np.empty((len(P), self.n_cells, 2, 2))
        out[..., 1] = pos
        out[..., 0] = self.row_mass[None] - pos
        return out


def binary_confusion_tensors(y_codes, positive, cell_ids, n_cells: int, sample_weight=None) -> np.ndarray:
    """Confusion tensors of many binary rules on one sample, shape (m, n_cells, 2, 2).

    A one-off :meth:`BatchConfusion.tensors` (see there for the parameters); build a
    :class:`BatchConfusion` once to evaluate many batches on the same sample.
    """
    return BatchConfusion(y_codes, cell_ids, n_cells, sample_weight).tensors(positive)
