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
    cells_ : pandas.DataFrame of shape (n_cells, len(columns_))
        The attribute values of each cell.
    """

    def fit(self, sensitive_features, n_samples: int | None = None) -> "CellEncoder":
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
        return self

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
            codes = frame[col].map(values)
            if codes.isna().any():
                bad = frame[col][codes.isna()].iloc[0]
                raise ValueError(
                    f"sensitive feature {col}={bad!r} was not seen when the model was fitted"
                )
            key = key * len(values) + codes.to_numpy(dtype=np.int64)
        pos = np.searchsorted(self._keys, key)
        pos = np.clip(pos, 0, len(self._keys) - 1)
        if (self._keys[pos] != key).any():
            row = frame.iloc[int(np.flatnonzero(self._keys[pos] != key)[0])]
            raise ValueError(
                f"sensitive feature values {dict(row)} were not seen together when the model was fitted"
            )
        return self._ids[pos]

    def fit_transform(self, sensitive_features, n_samples: int | None = None) -> np.ndarray:
        return self.fit(sensitive_features, n_samples).transform(sensitive_features, n_samples)


def _normal(value):
    """Hashable normal form so that 1, 1.0 and np.int64(1) name the same cell."""
    if isinstance(value, (np.generic,)):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value
