"""Cells: the slices of a dataset that confusion matrices are stacked over.

A *cell* is one combination of values of the slicing columns (sensitive features, a deployed
model's prediction for churn, ...). Narasimhan et al. (JMLR 2024, Def. 2) call the per-cell
matrices *group-specific confusion matrices*; fairlearn calls the columns ``sensitive_features``
and TFCO calls a slice a *context*.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

DEFAULT_COLUMN = "sensitive_feature"


def as_frame(sensitive_features, n_samples: int | None = None) -> pd.DataFrame:
    """Turn sensitive features into a DataFrame with string column names.

    Parameters
    ----------
    sensitive_features : None, array-like of shape (n_samples,) or (n_samples, k), Series,
        DataFrame or dict of column name -> array-like
        ``None`` means no slicing (a frame with zero columns). A 1-D unnamed array becomes
        the column ``"sensitive_feature"``; an unnamed 2-D array gets ``"sensitive_feature_<j>"``.
    n_samples : int, optional
        Expected number of rows.

    Returns
    -------
    pandas.DataFrame of shape (n_samples, k), index reset to ``0..n_samples-1``.

    Raises
    ------
    ValueError
        If the number of rows differs from ``n_samples`` or a value is missing (NaN/None).
    """
    if sensitive_features is None:
        if n_samples is None:
            raise ValueError("n_samples is required when sensitive_features is None")
        return pd.DataFrame(index=pd.RangeIndex(n_samples))
    if isinstance(sensitive_features, pd.DataFrame):
        frame = sensitive_features.copy()
        frame.columns = [str(c) for c in frame.columns]
    elif isinstance(sensitive_features, pd.Series):
        name = sensitive_features.name if sensitive_features.name is not None else DEFAULT_COLUMN
        frame = sensitive_features.to_frame(name=str(name))
    elif isinstance(sensitive_features, dict):
        frame = pd.DataFrame({str(k): np.asarray(v) for k, v in sensitive_features.items()})
    else:
        arr = np.asarray(sensitive_features, dtype=object)
        if arr.ndim == 1:
            frame = pd.DataFrame({DEFAULT_COLUMN: arr})
        elif arr.ndim == 2:
            frame = pd.DataFrame(arr, columns=[f"{DEFAULT_COLUMN}_{j}" for j in range(arr.shape[1])])
        else:
            raise ValueError(f"sensitive_features must be 1-D or 2-D, got {arr.ndim}-D")
    frame = frame.reset_index(drop=True)
    if n_samples is not None and len(frame) != n_samples:
        raise ValueError(
            f"sensitive_features has {len(frame)} rows but X/y have {n_samples}"
        )
    if frame.isna().to_numpy().any():
        bad = [c for c in frame.columns if frame[c].isna().any()]
        raise ValueError(f"sensitive_features column(s) {bad} contain missing values (NaN/None)")
    return frame


class CellEncoder:
    """Map rows of slicing columns to integer cell ids.

    Fitted on training data: every distinct combination of values becomes a cell (sorted, so
    the order is reproducible). Transforming data with a combination never seen in training
    raises, because a classifier whose decision depends on the cell cannot score it.

    Attributes
    ----------
    columns_ : list of str
        Slicing column names (possibly empty: one cell holding every example).
    cells_ : pandas.DataFrame of shape (n_cells, n_columns)
        The attribute values of each cell.
    """

    def fit(self, sensitive_features, n_samples: int | None = None) -> "CellEncoder":
        self._fit_transform(sensitive_features, n_samples)
        return self

    def _fit_transform(self, sensitive_features, n_samples):
        """Fit; returns the training cell ids when the numpy fast path computed them (else None)."""
        cols = _numpy_columns(sensitive_features, n_samples)
        if cols is not None:
            return self._fit_numpy(cols)
        frame = as_frame(sensitive_features, n_samples)
        self.columns_ = list(frame.columns)
        if not self.columns_:
            self.cells_ = pd.DataFrame(index=pd.RangeIndex(1))
        else:
            uniq = frame.drop_duplicates()
            try:
                uniq = uniq.sort_values(self.columns_)
            except TypeError:  # mixed types: sort by string form
                uniq = uniq.assign(**{c: uniq[c] for c in self.columns_}).iloc[
                    np.lexsort([uniq[c].astype(str).to_numpy() for c in reversed(self.columns_)])
                ]
            self.cells_ = uniq.reset_index(drop=True)
        self._values = [
            {v: k for k, v in enumerate(dict.fromkeys(_normal(x) for x in self.cells_[c]))}
            for c in self.columns_
        ]
        key = np.zeros(len(self.cells_), dtype=np.int64)
        for col, values in zip(self.columns_, self._values):
            key = key * len(values) + np.array([values[_normal(x)] for x in self.cells_[col]], dtype=np.int64)
        order = np.argsort(key)
        self._keys, self._ids = key[order], order.astype(np.intp)
        return None

    def _fit_numpy(self, cols):
        """Fast path for numpy columns of strings, integers or booleans (no missing values): one
        hash-based ``np.unique`` and one vectorized pass per column instead of pandas frames."""
        names = list(cols)
        uniques = [np.unique(cols[c]) for c in names]
        self.columns_ = names
        self._values = [{_normal(v): k for k, v in enumerate(u)} for u in uniques]
        key = None
        for c, values in zip(names, self._values):
            codes = _codes(cols[c], values, complete=True)
            if key is None:
                key = codes
            else:
                key *= len(values)
                key += codes
        assert key is not None  # _numpy_columns returns at least one column
        total = self._n_keys
        if total <= 2**20:
            present = np.flatnonzero(np.bincount(key, minlength=total))
        else:
            present = np.unique(key)
        # sorted keys: the cells in the order of sort_values(columns)
        digits, rest = [], present.copy()
        for values in reversed(self._values):
            digits.append(rest % len(values))
            rest //= len(values)
        digits.reverse()
        self.cells_ = pd.DataFrame({c: np.asarray(u, dtype=object if u.dtype.kind in "US" else u.dtype)[d]
                                    for c, u, d in zip(names, uniques, digits)})
        self._keys, self._ids = present, np.arange(len(present), dtype=np.intp)
        if len(present) == total:  # every combination occurs: the key is the cell id
            return key
        return self._lookup(key)

    @property
    def _n_keys(self) -> int:
        """Number of mixed-radix keys: the product of the columns' numbers of values."""
        return int(np.prod([len(v) for v in self._values]))

    def _lookup(self, key):
        """Cell ids of mixed-radix keys (-1 for unseen combinations)."""
        total = self._n_keys
        if total <= 2**20:
            table = np.full(total, -1, dtype=np.intp)
            table[self._keys] = self._ids
            return table[key]
        pos = np.clip(np.searchsorted(self._keys, key), 0, len(self._keys) - 1)
        return np.where(self._keys[pos] == key, self._ids[pos], -1)

    @property
    def n_cells(self) -> int:
        return len(self.cells_)

    def transform(self, sensitive_features, n_samples: int | None = None) -> np.ndarray:
        """Cell id of each row, shape (n_samples,), dtype intp.

        Raises
        ------
        ValueError
            If sensitive features are required but missing, have other columns than at fit
            time (a single named column must have the fitted name), or contain a combination of values not seen at fit time.
        """
        if not self.columns_:
            if n_samples is None:
                frame = as_frame(sensitive_features)
                n_samples = len(frame)
            return np.zeros(n_samples, dtype=np.intp)
        if sensitive_features is None:
            raise ValueError(
                f"this model depends on the sensitive feature(s) {self.columns_}: "
                "pass sensitive_features=..."
            )
        cols = _numpy_columns(sensitive_features, n_samples)
        if cols is not None and len(self.columns_) == 1 and len(cols) == 1:
            cols = {self.columns_[0]: next(iter(cols.values()))}
        if cols is not None and set(cols) >= set(self.columns_):
            ids = self._transform_numpy(cols)
            if ids is not None:
                return ids
        frame = as_frame(sensitive_features, n_samples)
        if len(self.columns_) == 1 and frame.shape[1] == 1 and frame.columns[0] != self.columns_[0]:
            # one unnamed column stands for the fitted one (and any one column for an unnamed fit);
            # two different names are two different features: refuse rather than guess
            if DEFAULT_COLUMN not in (frame.columns[0], self.columns_[0]):
                raise ValueError(
                    f"sensitive_features has column {frame.columns[0]!r} but the model was fitted on "
                    f"{self.columns_[0]!r}; pass the {self.columns_[0]!r} column (or an unnamed array)"
                )
            frame.columns = self.columns_
        missing = [c for c in self.columns_ if c not in frame.columns]
        if missing:
            raise ValueError(
                f"sensitive_features lacks column(s) {missing}; expected {self.columns_}"
            )
        frame = frame[self.columns_]
        # vectorized: per-column codes, then a mixed-radix key looked up in the cell table
        key = np.zeros(len(frame), dtype=np.int64)
        for col, values in zip(self.columns_, self._values):
            # a hash-table lookup (4x faster than Series.map(dict) on object columns)
            found = pd.Index(list(values)).get_indexer(frame[col])
            if found.min(initial=0) < 0:
                bad = frame[col].iloc[int(np.flatnonzero(found < 0)[0])]
                raise ValueError(
                    f"sensitive feature {col}={bad!r} was not seen when the model was fitted"
                )
            key = key * len(values) + np.fromiter(values.values(), np.int64, len(values))[found]
        ids = self._lookup(key)
        if ids.min(initial=0) < 0:
            row = frame.iloc[int(np.flatnonzero(ids < 0)[0])]
            raise ValueError(
                f"sensitive feature values {dict(row)} were not seen together when the model was fitted"
            )
        return ids

    def _transform_numpy(self, cols):
        """Cell ids of numpy columns, or None when a column's type differs from the fitted values."""
        key = None
        for c, values in zip(self.columns_, self._values):
            codes = _codes(cols[c], values)
            if codes is None:
                return None
            if codes.min(initial=0) < 0:
                bad = cols[c][int(np.flatnonzero(codes < 0)[0])]
                raise ValueError(f"sensitive feature {c}={_normal(bad)!r} was not seen when the model was fitted")
            if key is None:
                key = codes
            else:
                key *= len(values)
                key += codes
        if len(self._keys) == self._n_keys:
            return key  # every combination is a cell: the key is the cell id
        ids = self._lookup(key)
        if ids.min(initial=0) < 0:
            i = int(np.flatnonzero(ids < 0)[0])
            raise ValueError(f"sensitive feature values {({c: _normal(cols[c][i]) for c in self.columns_})} "
                             "were not seen together when the model was fitted")
        return ids

    def fit_transform(self, sensitive_features, n_samples: int | None = None) -> np.ndarray:
        """:meth:`fit` then :meth:`transform`, in one pass over numpy columns."""
        ids = self._fit_transform(sensitive_features, n_samples)
        return ids if ids is not None else self.transform(sensitive_features, n_samples)


def int_codes(codes) -> np.ndarray:
    """``codes`` as an integer array, without widening narrow integer codes.

    As given (no copy) when of a signed integer type or an unsigned one narrower than 64 bits
    (e.g. the one-byte codes of :func:`compact_codes`): each mixes with intp arithmetic without
    leaving the integers. Anything else (uint64, bool, a list) is converted to intp. The caller
    widens before arithmetic that can leave the narrow type's range (``np.multiply(codes, k,
    dtype=np.intp)``, as :func:`~goalfit.confusion.confusion_tensor` does).

    Parameters
    ----------
    codes : array-like of int, shape (n_samples,)
        Non-negative integer codes (classes, cells or predictions).

    Returns
    -------
    ndarray of int, shape (n_samples,)
        ``codes`` itself when already narrow or signed, else an intp copy.
    """
    codes = np.asarray(codes)
    narrow = codes.dtype.kind == "i" or (codes.dtype.kind == "u" and codes.dtype.itemsize < 8)
    return codes if narrow else codes.astype(np.intp)


def compact_codes(codes, n_values: int) -> np.ndarray:
    """Integer codes in ``0..n_values-1`` in the smallest signed integer type that holds them.

    A fit keeps its class codes and cell ids for the whole solve and in its training sample:
    one byte per row for up to 127 classes or cells instead of eight. Signed, so that
    differences of codes cannot wrap around; arithmetic that can leave the type's range (a
    joint code ``cell * n_classes + y``, a bincount key) must widen first, as
    :func:`~goalfit.confusion.confusion_tensor` and :meth:`ConfusionSpace.from_codes
    <goalfit.confusion.ConfusionSpace.from_codes>` do.

    Parameters
    ----------
    codes : ndarray of int, shape (n_samples,)
    n_values : int
        Number of distinct codes (classes or cells); every code is below it.

    Returns
    -------
    ndarray of int8, int16, int32 or the input's type, shape (n_samples,)
    """
    for dtype in (np.int8, np.int16, np.int32):
        if n_values <= np.iinfo(dtype).max + 1:
            return np.asarray(codes).astype(dtype, copy=False)
    return np.asarray(codes)


def _numpy_columns(sensitive_features, n_samples):
    """``{name: 1-D numpy array}`` when every column is a numpy array (or a Series backed by
    one) of strings, integers or booleans, which cannot hold missing values; else None."""
    if isinstance(sensitive_features, dict):
        items = [(str(k), v) for k, v in sensitive_features.items()]
    elif isinstance(sensitive_features, pd.Series):
        items = [(str(sensitive_features.name) if sensitive_features.name is not None else DEFAULT_COLUMN,
                  sensitive_features)]
    elif isinstance(sensitive_features, np.ndarray) and sensitive_features.ndim == 1:
        items = [(DEFAULT_COLUMN, sensitive_features)]
    else:
        return None
    if not items:
        return None
    out = {}
    for name, v in items:
        if isinstance(v, pd.Series):
            if not isinstance(v.dtype, np.dtype):
                return None
            v = v.to_numpy()
        if isinstance(v, np.ndarray) and v.ndim == 1 and v.dtype == object \
                and pd.api.types.infer_dtype(v, skipna=False) == "string":
            v = v.astype(str)  # object column of Python strings only (no None / NaN): fixed-width strings
        if not isinstance(v, np.ndarray) or v.ndim != 1 or v.dtype.kind not in "USiub":
            return None
        out[name] = v
    n = len(next(iter(out.values())))
    if any(len(v) != n for v in out.values()):
        return None  # the general path names the problem
    if n_samples is not None and n != n_samples:
        raise ValueError(f"sensitive_features has {n} rows but X/y have {n_samples}")
    return out


def _codes(arr, values, complete=False):
    """Index of each entry of ``arr`` in the dict ``values`` (-1 if absent), or None when the
    fitted values are of another kind (strings vs numbers) than ``arr``. ``complete``: every
    entry is known to be among the values (they were taken from ``arr``)."""
    keys = list(values)
    if arr.dtype.kind in "US":
        if not all(isinstance(k, (str, bytes)) for k in keys):
            return None
    elif not all(isinstance(k, (int, bool, np.integer, np.bool_)) for k in keys):
        return None
    if len(keys) <= 32:  # one vectorized comparison per value, no temporaries but one mask
        codes = np.zeros(len(arr), dtype=np.intp) if complete else np.full(len(arr), -1, dtype=np.intp)
        mask = np.empty(len(arr), dtype=bool)
        for k, i in values.items():
            if complete and i == 0:
                continue
            np.equal(arr, k, out=mask)
            np.copyto(codes, i, where=mask)
        return codes
    sorted_keys = np.array(sorted(keys))
    pos = np.clip(np.searchsorted(sorted_keys, arr), 0, len(keys) - 1)
    index = np.array([values[_normal(k)] for k in sorted_keys], dtype=np.int64)
    return np.where(sorted_keys[pos] == arr, index[pos], -1).astype(np.intp)


def _normal(value):
    """Hashable normal form so that 1, 1.0 and np.int64(1) name the same cell."""
    if isinstance(value, (np.generic,)):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value
