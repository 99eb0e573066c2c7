"""Row-aligned partitions of ``X``, ``y``, sensitive features and sample weights.

Every computation of :mod:`goalfit.distributed` maps a function over *aligned* partitions: the
``k``-th block of ``X`` (a Dask array's row chunk or a Dask DataFrame's partition) with the
``k``-th block of ``y``, ``sensitive_features`` and ``sample_weight``. Alignment is checked
eagerly where Dask knows the sizes (chunk sizes, divisions) and, where it does not (DataFrame
partitions), inside each task, which raises a :class:`ValueError` naming the partition.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..utils.validation import check_consistent_rows, check_sample_weight
from ._detect import is_dask_collection

ALIGN_HINT = ("X, y, sensitive_features and sample_weight must be partitioned alike (the same "
              "rows in the same partitions), e.g. columns of one Dask DataFrame "
              "(df[features], df['label'], df[['group']]) or arrays with the same row chunks")


def _dask_blocks(obj, name):
    """(delayed blocks, row counts or None, divisions or None) of a Dask collection."""
    import dask.array as da

    if isinstance(obj, da.Array):
        if obj.ndim == 0 or obj.ndim > 2:
            raise ValueError(f"{name} must be a 1-D or 2-D Dask array, got {obj.ndim}-D")
        if obj.ndim == 2 and obj.numblocks[1] > 1:
            obj = obj.rechunk({1: -1})  # one block per row chunk
        sizes = obj.chunks[0]
        known = None if any(np.isnan(s) for s in sizes) else tuple(int(s) for s in sizes)
        # unoptimized: optimizing each collection alone would fuse a task that X, y and the
        # sensitive features share (e.g. one that generates or reads the partition) into each
        return list(obj.to_delayed(optimize_graph=False).ravel()), known, None
    if hasattr(obj, "to_delayed") and hasattr(obj, "npartitions"):  # Dask DataFrame / Series
        divisions = tuple(obj.divisions) if obj.known_divisions else None
        return list(obj.to_delayed(optimize_graph=False)), None, divisions
    raise TypeError(f"{name}: unsupported Dask collection {type(obj).__name__} (use a Dask array, "
                    "DataFrame or Series)")


def _split_local(obj, name, sizes):
    """Blocks of an in-memory ``obj`` cut at X's known row counts."""
    if sizes is None:
        raise ValueError(f"{name} is in memory but X is a Dask collection with unknown partition "
                         f"sizes: pass {name} as a Dask collection partitioned like X")
    if isinstance(obj, dict):
        obj = pd.DataFrame({str(k): np.asarray(v) for k, v in obj.items()})
    n = len(obj)
    if n != sum(sizes):
        raise ValueError(f"X has {sum(sizes)} rows but {name} has {n}")
    cuts = np.cumsum((0,) + tuple(sizes))
    if hasattr(obj, "iloc"):
        return [obj.iloc[a:b] for a, b in zip(cuts[:-1], cuts[1:])]
    arr = np.asarray(obj)
    return [arr[a:b] for a, b in zip(cuts[:-1], cuts[1:])]


class Partitions:
    """Aligned partitions of a Dask ``X`` and the columns that go with it.

    Parameters
    ----------
    X : dask.array.Array of shape (n_samples, n_features) or dask.dataframe.DataFrame
    y, sensitive_features, sample_weight : Dask collections partitioned like ``X``, in-memory
        arrays / Series / DataFrames (cut at ``X``'s chunk sizes, which must then be known), or
        None

    Attributes
    ----------
    blocks : list of tuple
        ``(X_k, y_k, s_k, w_k)`` per partition: Dask delayed objects, in-memory blocks or None.
    sizes : tuple of int or None
        Rows per partition when Dask knows them.

    Raises
    ------
    ValueError
        When the number of partitions, the known row counts or the known divisions differ
        (:data:`ALIGN_HINT`).
    """

    def __init__(self, X, y=None, sensitive_features=None, sample_weight=None):
        if not is_dask_collection(X):
            raise TypeError("X must be a Dask collection here")
        xb, self.sizes, xdiv = _dask_blocks(X, "X")
        self.n_partitions = len(xb)
        cols = []
        for name, obj in (("y", y), ("sensitive_features", sensitive_features), ("sample_weight", sample_weight)):
            if obj is None:
                cols.append([None] * len(xb))
                continue
            if isinstance(obj, dict) and any(is_dask_collection(v) for v in obj.values()):
                raise ValueError(f"{name}: pass several Dask columns as one Dask DataFrame, not a dict")
            if not is_dask_collection(obj):
                cols.append(_split_local(obj, name, self.sizes))
                continue
            ob, osizes, odiv = _dask_blocks(obj, name)
            if len(ob) != len(xb):
                raise ValueError(f"X has {len(xb)} partitions but {name} has {len(ob)}: {ALIGN_HINT}")
            if self.sizes is not None and osizes is not None and osizes != self.sizes:
                k = next(i for i, (a, b) in enumerate(zip(self.sizes, osizes)) if a != b)
                raise ValueError(f"partition {k}: X has {self.sizes[k]} rows but {name} has {osizes[k]}: "
                                 f"{ALIGN_HINT}")
            if xdiv is not None and odiv is not None and xdiv != odiv:
                raise ValueError(f"X and {name} have different divisions (index ranges per partition): "
                                 f"{ALIGN_HINT}")
            cols.append(ob)
        self.blocks = list(zip(xb, *cols))


def check_block(k, X, y=None, s=None, w=None):
    """Rows of partition ``k`` (:func:`goalfit.utils.validation.check_consistent_rows` on its
    blocks).

    Raises
    ------
    ValueError
        ``"partition k: X has n rows but y has m: <ALIGN_HINT>"`` when the blocks differ.
    """
    try:
        return check_consistent_rows(X=X, y=y, sensitive_features=s, sample_weight=w)
    except ValueError as err:
        raise ValueError(f"partition {k}: {err}: {ALIGN_HINT}") from None


def to_1d(v):
    """A 1-D numpy array from a block of y / sample_weight (array, Series or one-column frame)."""
    if v is None:
        return None
    if isinstance(v, pd.DataFrame):
        if v.shape[1] != 1:
            raise ValueError(f"expected one column, got {v.shape[1]}")
        v = v.iloc[:, 0]
    return np.asarray(v).ravel()


def block_weights(k, w):
    """Sample weights of partition ``k`` as a float array (None for None), checked by
    :func:`goalfit.utils.validation.check_sample_weight`; a partition whose weights are all zero
    is allowed (only the total over the partitions must be positive).

    Raises
    ------
    ValueError
        ``"partition k: ..."`` for NaN, infinite or negative weights or a block that is not 1-D.
    """
    w = to_1d(w)
    if w is None:
        return None
    try:
        return check_sample_weight(w, len(w)) if w.any() else w.astype(float)
    except ValueError as err:
        raise ValueError(f"partition {k}: {err}") from None


def encode_cells(encoder, s, n):
    """``encoder.transform(s, n)`` computed on the distinct rows of ``s`` only (one
    ``pandas.factorize`` per partition instead of a dictionary look-up per row); same ids, same
    errors (missing values and unseen groups reach ``transform``)."""
    if s is None or not encoder.columns_:
        return encoder.transform(s, n)
    if isinstance(s, np.ndarray) and s.ndim == 1:
        codes, uniq = pd.factorize(s, use_na_sentinel=False)
        uniq = np.asarray(uniq)
    else:
        frame = s.to_frame() if isinstance(s, pd.Series) else s
        if not isinstance(frame, pd.DataFrame) or frame.shape[1] == 0:
            return encoder.transform(s, n)
        codes, uniq = pd.MultiIndex.from_frame(frame).factorize(use_na_sentinel=False)
        uniq = pd.DataFrame(list(uniq), columns=frame.columns)
    if len(codes) != n:
        raise ValueError(f"sensitive_features has {len(codes)} rows but X/y have {n}")
    return encoder.transform(uniq, len(uniq))[codes]
