"""Rows of any array-like scikit-learn accepts: arrays, DataFrames, sparse matrices, lists.

The one place goalfit imports scikit-learn's two row helpers whose names start with an
underscore. ``_safe_indexing`` is public despite it (it is in ``sklearn.utils.__all__`` and the
API reference); ``_num_samples`` is private, so a change to it in scikit-learn shows up here,
in one place.
"""
from __future__ import annotations

from sklearn.utils import _safe_indexing
from sklearn.utils.validation import _num_samples


def take_rows(X, rows):
    """The rows ``rows`` of ``X``, in the type of ``X``.

    Parameters
    ----------
    X : array-like of shape (n_samples, ...)
        A NumPy array, pandas DataFrame or Series, SciPy sparse matrix or list.
    rows : array-like of int or bool
        Row positions (or a mask of length ``n_samples``).

    Returns
    -------
    Same type as ``X``, with ``len(rows)`` rows (the mask's ``True`` count).

    Examples
    --------
    >>> import numpy as np
    >>> take_rows(np.arange(6).reshape(3, 2), [2, 0]).tolist()
    [[4, 5], [0, 1]]
    """
    return _safe_indexing(X, rows, axis=0)


def num_samples(X) -> int:
    """The number of rows (samples) of an array-like, as scikit-learn counts them.

    Unlike :func:`goalfit.utils.validation.n_rows` (None for what it cannot count), it counts
    array-likes without a length (an object with ``__array__``) and raises for the rest.

    Parameters
    ----------
    X : array-like of shape (n_samples, ...)

    Returns
    -------
    int

    Raises
    ------
    TypeError
        For a scalar or an object without a length (scikit-learn's message).

    Examples
    --------
    >>> num_samples([[1, 2], [3, 4], [5, 6]])
    3
    """
    return int(_num_samples(X))
