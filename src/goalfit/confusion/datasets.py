"""Several datasets in one problem (Goh et al., NIPS 2016, §2 and Table 1).

A problem may state goals on several datasets: the labelled training data, an unlabelled pool
(coverage, churn), small unbiased labelled sets (recall per country), a set of egregious examples.
goalfit stacks them into one sample and adds the slicing column ``"dataset"`` (the training data
passed as ``X, y`` is named ``"train"``), so a rate on a dataset is a rate on a slice:
``coverage(dataset="pool")`` is ``coverage(group={"dataset": "pool"})``. A rate that names no
dataset is over the union of all of them, exactly as a rate that names no group is over all groups.

Unlabelled datasets get a placeholder class in the stacked sample;
:func:`goalfit.goals.program.check_label_free` rejects any goal whose value would depend on that placeholder (a true-positive rate on an
unlabelled pool, an error rate over the union of labelled and unlabelled data), so the
placeholder can never leak into a result.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp

from .cells import as_frame
from .names import ABSENT, DATASET_COLUMN, TRAIN  # noqa: F401  (the names of stacked datasets)


@dataclass
class Dataset:
    """One named dataset of a multi-dataset problem.

    Parameters
    ----------
    X : array-like, DataFrame or sparse matrix of shape (n_samples, n_features)
        Same features as the training data.
    y : array-like of shape (n_samples,), optional
        Labels; ``None`` for an unlabelled dataset (only goals on predictions may refer to it:
        coverage, churn).
    sensitive_features : optional
        Slicing columns of this dataset (groups, a deployed model's predictions for churn).
        Columns other datasets have and this one lacks hold the value ``"<not given>"``.
    sample_weight : array-like of shape (n_samples,), optional
    """

    X: object
    y: object = None
    sensitive_features: object = None
    sample_weight: object = None


@dataclass
class StackedData:
    """The union of the datasets of a problem, in one sample.

    Attributes
    ----------
    X : stacked features, shape (N, n_features) (sparse if any part is sparse; a DataFrame if
        every part is one)
    y : ndarray of shape (N,), object
        Labels, with ``None`` for unlabelled rows.
    labelled : ndarray of bool, shape (N,)
    sensitive_features : DataFrame of shape (N, k)
        Every slicing column plus ``"dataset"`` (only when there are several datasets).
    sample_weight : ndarray of shape (N,)
    names : list of str
        Dataset names in stacking order (``"train"`` first).
    """

    X: object
    y: np.ndarray
    labelled: np.ndarray
    sensitive_features: pd.DataFrame
    sample_weight: np.ndarray
    names: list


def _n_rows(X) -> int:
    return X.shape[0] if hasattr(X, "shape") else len(X)


def _vstack(parts):
    if len(parts) == 1:
        return parts[0]
    if any(sp.issparse(p) for p in parts):
        return sp.vstack([sp.csr_matrix(p) for p in parts], format="csr")
    if all(isinstance(p, pd.DataFrame) for p in parts):
        return pd.concat(parts, ignore_index=True)
    return np.vstack([np.asarray(p) for p in parts])


def stack_datasets(X, y, sensitive_features=None, sample_weight=None, datasets=None) -> StackedData:
    """Stack the training data and named extra datasets into one sample.

    Parameters
    ----------
    X, y, sensitive_features, sample_weight
        The training data (dataset ``"train"``); ``y`` may be None only when extra datasets
        are given.
    datasets : dict of str -> Dataset or tuple, optional
        Extra datasets; a tuple ``(X,)``, ``(X, y)`` or ``(X, y, sensitive_features)`` is
        accepted in place of a :class:`Dataset`.

    Returns
    -------
    StackedData

    Raises
    ------
    ValueError
        For a dataset named ``"train"``, an empty dataset, lengths that do not match, a
        sensitive-feature column named ``"dataset"`` (reserved), labels containing None, or
        negative weights.
    """
    parts = [(TRAIN, Dataset(X, y, sensitive_features, sample_weight))]
    for name, d in (datasets or {}).items():
        name = str(name)
        if name == TRAIN:
            raise ValueError("'train' names the data passed as X, y: give other datasets other names")
        if not isinstance(d, Dataset):
            d = Dataset(*d) if isinstance(d, tuple) else Dataset(d)
        parts.append((name, d))
    frames, ys, labelled, weights, Xs = [], [], [], [], []
    for name, d in parts:
        n = _n_rows(d.X)
        if n == 0:
            raise ValueError(f"dataset {name!r} is empty")
        frame = as_frame(d.sensitive_features, n)
        if DATASET_COLUMN in frame.columns and len(parts) > 1:
            raise ValueError(f"the sensitive-feature column name {DATASET_COLUMN!r} is reserved for "
                             "naming datasets")
        frames.append(frame)
        if d.y is None:
            ys.append(np.full(n, None, dtype=object))
            labelled.append(np.zeros(n, dtype=bool))
        else:
            yy = np.asarray(d.y, dtype=object).ravel()
            if len(yy) != n:
                raise ValueError(f"dataset {name!r}: X has {n} rows but y has {len(yy)}")
            if pd.isna(yy).any():  # None, NaN (float or pd.NA) in an object array
                raise ValueError(f"dataset {name!r}: y contains missing labels; pass y=None for an "
                                 "unlabelled dataset")
            ys.append(yy)
            labelled.append(np.ones(n, dtype=bool))
        w = np.ones(n) if d.sample_weight is None else np.asarray(d.sample_weight, dtype=float).ravel()
        if len(w) != n or (w < 0).any() or not np.isfinite(w).all():
            raise ValueError(f"dataset {name!r}: sample_weight must be {n} finite non-negative numbers")
        weights.append(w)
        Xs.append(d.X)
    columns = list(dict.fromkeys(c for f in frames for c in f.columns))
    frame = pd.concat([f.reindex(columns=columns).astype(object).fillna(ABSENT) for f in frames],
                      ignore_index=True) if columns else pd.DataFrame(index=pd.RangeIndex(sum(map(len, frames))))
    if len(parts) > 1:
        frame[DATASET_COLUMN] = np.concatenate([[name] * len(f) for (name, _), f in zip(parts, frames)])
    return StackedData(_vstack(Xs), np.concatenate(ys), np.concatenate(labelled), frame,
                       np.concatenate(weights), [name for name, _ in parts])


def space_with_unlabelled(y_codes, labelled, cell_ids, classes, cells, sample_weight):
    """Confusion space of a sample whose unlabelled rows count equally in every class.

    Splitting an unlabelled row's weight over the classes keeps every slice non-empty, so a goal
    that asks for labels on an unlabelled dataset reaches :func:`check_label_free` (which names
    the problem) instead of failing as an "empty slice"; goals that do not involve labels (the
    only ones allowed there) see the row's full weight either way.

    Parameters
    ----------
    y_codes : ndarray of int, shape (n,)
        Class codes (ignored on unlabelled rows).
    labelled : ndarray of bool, shape (n,)
    cell_ids : ndarray of int, shape (n,)
    classes : ndarray of shape (n_classes,)
    cells : DataFrame of shape (n_cells, k)
    sample_weight : ndarray of shape (n,)

    Returns
    -------
    ConfusionSpace
    """
    from .space import ConfusionSpace

    k = len(classes)
    ul = ~np.asarray(labelled, dtype=bool)
    w = np.asarray(sample_weight, dtype=float)
    ys = [y_codes[~ul]] + [np.full(ul.sum(), j, dtype=np.intp) for j in range(k)]
    cs = [cell_ids[~ul]] + [cell_ids[ul]] * k
    ws = [w[~ul]] + [w[ul] / k] * k
    return ConfusionSpace.from_codes(np.concatenate(ys), np.concatenate(cs), classes, cells, np.concatenate(ws))
