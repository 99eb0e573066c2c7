"""Hashes of feature rows, for derandomizing a mixture as a deterministic function of ``x``.

Cotter, Narasimhan & Gupta ("On Making Stochastic Classifiers Deterministic", NeurIPS 2019, §4)
replace the per-example coin of a stochastic classifier by a hash of the example: member ``t``
is used on ``x`` iff ``u(x)`` falls in the ``t``-th interval of the cumulative weights, with
``u(x)`` a pseudo-random number in ``[0, 1)`` computed from ``x`` alone. The prediction is then
a deterministic function of the row, the same whatever batch the row comes in.

:func:`row_hash` gives every row a 64-bit hash of its values: DataFrames through
:func:`pandas.util.hash_pandas_object` (column values and dtypes, not the index); numeric arrays
and sparse matrices as the wrapping sum of one hash per non-zero entry ``(column, value)``, so a
row hashes the same dense or sparse, and explicit zeros do not count. :func:`hash_uniform` mixes
the hash with a seed through the SplitMix64 finalizer (Steele, Lea & Flood, OOPSLA 2014).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import scipy.sparse as sp

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_BLOCK_ROWS = 1 << 16


def _mix(h) -> np.ndarray:
    """SplitMix64 finalizer (a bijection of uint64 with good avalanche)."""
    z = np.asarray(h, dtype=np.uint64)
    with np.errstate(over="ignore"):
        z = z + _GOLDEN
        z = (z ^ (z >> np.uint64(30))) * _M1
        z = (z ^ (z >> np.uint64(27))) * _M2
        return z ^ (z >> np.uint64(31))


def _entry_hashes(cols, values) -> np.ndarray:
    """Hashes of the entries ``values`` in columns ``cols`` (an array, or one column index)."""
    vals = pd.util.hash_array(np.ascontiguousarray(values, dtype=np.float64) + 0.0)  # -0.0 -> 0.0
    with np.errstate(over="ignore"):
        return _mix(vals ^ _mix(np.asarray(cols, dtype=np.uint64)))


def row_hash(X) -> np.ndarray:
    """A 64-bit hash of every row of ``X``, shape (n_samples,), dtype uint64.

    Parameters
    ----------
    X : DataFrame, ndarray of shape (n_samples, n_features), or scipy.sparse matrix

    Raises
    ------
    ValueError
        For a 1-D or 3-D array.
    """
    if isinstance(X, pd.DataFrame):
        return pd.util.hash_pandas_object(X, index=False).to_numpy(dtype=np.uint64)
    if sp.issparse(X):
        M = sp.csr_matrix(X, dtype=np.float64, copy=True)
        M.eliminate_zeros()
        h = _entry_hashes(M.indices, M.data)
        rows = np.repeat(np.arange(M.shape[0]), np.diff(M.indptr))
        out = np.zeros(M.shape[0], dtype=np.uint64)
        with np.errstate(over="ignore"):
            np.add.at(out, rows, h)
        return out
    A = np.asarray(X)
    if A.ndim != 2:
        raise ValueError(f"cannot hash the rows of a {A.ndim}-D array: expected 2-D features")
    if A.dtype.kind not in "biuf":
        return pd.util.hash_pandas_object(pd.DataFrame(A), index=False).to_numpy(dtype=np.uint64)
    # column by column over blocks of rows: O(block) temporaries, no index arrays of the
    # non-zeros (the same sum of entry hashes as the sparse branch)
    n, d = A.shape
    out = np.zeros(n, dtype=np.uint64)
    zero = np.uint64(0)
    for start in range(0, n, _BLOCK_ROWS):
        block = A[start:start + _BLOCK_ROWS]
        acc = out[start:start + _BLOCK_ROWS]
        for j in range(d):
            v = block[:, j]
            with np.errstate(over="ignore"):
                acc += np.where(v != 0, _entry_hashes(j, v), zero)
    return out


def hashes_as_array(X) -> bool:
    """Whether :func:`row_hash` hashes ``X``'s rows by their numeric values, as it hashes the
    float64 array ``np.asarray(X, dtype=float)`` (not a DataFrame, a sparse matrix, an array of
    objects or strings, which hash by their own rules, or of floats wider than float64, whose
    non-zero entries can round to zero).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> hashes_as_array(np.eye(2, dtype=np.float32)), hashes_as_array(pd.DataFrame(np.eye(2)))
    (True, False)
    """
    if isinstance(X, pd.DataFrame) or sp.issparse(X):
        return False
    dtype = np.asarray(X).dtype
    return dtype.kind in "biu" or (dtype.kind == "f" and dtype.itemsize <= 8)


def array_fingerprint(A) -> int:
    """A 64-bit fingerprint of a numeric 2-D array's values and their positions.

    A wrapping sum of every entry's float64 bit pattern times an odd 64-bit multiplier of its
    position (odd: multiplying by it is a bijection of 64-bit words, so a change of any single
    entry, its sign or exponent bits included, always changes the sum). Equal arrays give equal
    fingerprints; moving entries (a permutation of the rows, say) changes the multipliers they
    meet. One pass over blocks of rows, with no temporary larger than a block.

    Parameters
    ----------
    A : ndarray of shape (n_rows, n_columns)

    Returns
    -------
    int

    Examples
    --------
    >>> import numpy as np
    >>> A = np.arange(6.0).reshape(3, 2)
    >>> array_fingerprint(A) == array_fingerprint(A.copy()), array_fingerprint(A) == array_fingerprint(A[::-1])
    (True, False)
    """
    A = np.asarray(A)
    out = _mix(np.uint64(A.shape[0]) ^ _mix(np.uint64(A.shape[1] if A.ndim > 1 else 0)))
    weights = _mix(np.arange(1, _BLOCK_ROWS * max(1, A.shape[1] if A.ndim > 1 else 1) + 1, dtype=np.uint64))
    weights |= np.uint64(1)  # odd
    with np.errstate(over="ignore"):
        for start in range(0, A.shape[0], _BLOCK_ROWS):
            block = np.ascontiguousarray(A[start:start + _BLOCK_ROWS], dtype=np.float64).reshape(-1) + 0.0
            words = block.view(np.uint64)
            out = _mix(out ^ (words * weights[:len(words)]).sum(dtype=np.uint64) ^ np.uint64(start))
    return int(out)


def hash_uniform(hashes, seed: int = 0) -> np.ndarray:
    """Pseudo-uniform numbers in ``[0, 1)`` from row hashes and a seed, shape (n_samples,)."""
    with np.errstate(over="ignore"):
        z = _mix(np.asarray(hashes, dtype=np.uint64) ^ _mix(np.uint64(int(seed) % 2**64)))
    return (z >> np.uint64(11)).astype(np.float64) / float(2**53)


def hash_choice(hashes, weights, seed: int = 0) -> np.ndarray:
    """Member index per row: ``t`` with ``cumw[t-1] <= u(x) < cumw[t]`` (Cotter et al. 2019, §4).

    Parameters
    ----------
    hashes : ndarray of uint64, shape (n_samples,)
    weights : ndarray of shape (n_members,), in the simplex
    seed : int

    Returns
    -------
    ndarray of int, shape (n_samples,)
    """
    cum = np.cumsum(np.asarray(weights, dtype=float))
    cum[-1] = 1.0
    u = hash_uniform(hashes, seed)
    return np.minimum(np.searchsorted(cum, u, side="right"), len(cum) - 1)


def hash_predictions(hashes, weights, member_codes, seed: int = 0) -> np.ndarray:
    """Predictions of the hash-derandomized mixture: row ``l`` gets member ``hash_choice(...)[l]``'s.

    Parameters
    ----------
    hashes : ndarray of uint64, shape (n_samples,)
        :func:`row_hash` of the feature rows.
    weights : ndarray of shape (n_members,), in the simplex
    member_codes : ndarray of int, shape (n_members, n_samples)
        Every member's predicted class codes.
    seed : int

    Returns
    -------
    ndarray of int, shape (n_samples,)
    """
    codes = np.asarray(member_codes)
    return codes[hash_choice(hashes, weights, seed), np.arange(codes.shape[1])]
