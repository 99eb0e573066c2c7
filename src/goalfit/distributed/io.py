"""Read tables too large for memory as Dask DataFrames (Parquet or CSV files matched by a glob)."""
from __future__ import annotations

import glob
from pathlib import Path


def matching_files(pattern: str) -> list:
    """The sorted paths matching the glob ``pattern``.

    Raises
    ------
    ValueError
        When none does.
    """
    files = sorted(glob.glob(str(Path(pattern).expanduser())))
    if not files:
        raise ValueError(f"no file matches {pattern!r}")
    return files


def read_table(pattern: str, *, label: str, sensitive=(), features=None):
    """Features, label and sensitive columns of the files matching ``pattern``, partitioned alike.

    Parameters
    ----------
    pattern : str
        A glob (``"data/part-*.parquet"``, ``"logs/*.csv"``); all matches must be Parquet
        (``.parquet``, ``.pq``) or all CSV (``.csv``, ``.csv.gz``).
    label : str
        Label column.
    sensitive : sequence of str
        Sensitive-feature columns (kept among the features unless ``features`` says otherwise).
    features : sequence of str, optional
        Feature columns (default: every column but the label).

    Returns
    -------
    X : dask.dataframe.DataFrame
    y : dask.dataframe.Series
    S : dask.dataframe.DataFrame or None
        Columns of one Dask DataFrame, so their partitions hold the same rows.

    Raises
    ------
    ValueError
        No file matches, mixed or unknown file types, or an unknown column.
    """
    import dask.dataframe as dd

    files = matching_files(pattern)
    kinds = {"parquet" if f.endswith((".parquet", ".pq")) else "csv" if f.endswith((".csv", ".csv.gz")) else f
             for f in files}
    if len(kinds) != 1 or not kinds <= {"parquet", "csv"}:
        raise ValueError(f"{pattern!r} must match only Parquet (.parquet) or only CSV (.csv) files, got {sorted(kinds)[:3]}")
    df = dd.read_parquet(files) if kinds == {"parquet"} else dd.read_csv(files)
    columns = list(df.columns)
    features = [c for c in columns if c != label] if features is None else list(features)
    missing = [c for c in [label, *sensitive, *features] if c not in columns]
    if missing:
        raise ValueError(f"unknown column(s) {missing} in {pattern!r}; columns: {columns}")
    return df[features], df[label], (df[list(sensitive)] if sensitive else None)
