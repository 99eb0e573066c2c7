"""Score functions ``f_theta(X)`` with a flat parameter vector theta (Jiang et al. 2020, §2).

Surrogate projected gradient descent sees a model only through its parameter vector: scores of
one model, scores of many perturbed models at once (an ``(m, n)`` matrix), and the gradient of
``sum_i g_i f_theta(x_i)`` w.r.t. theta (to turn score gradients into parameter gradients).

* :class:`LinearScorer`: ``X w + b`` in numpy (the paper's experiments; theta = [w, b]). The
  scores of many perturbed models go through the residual of X about its column modes when that
  is sparse (one-hot data): :func:`column_modes`, :func:`sparse_residual`.
* :class:`TorchScorer`: any ``torch.nn.Module`` with one output per example; scores of many
  parameter vectors by ``torch.func.vmap`` over ``functional_call``; gradients by autograd;
  CPU by default, any torch ``device`` (a GPU when present). torch is imported lazily.
"""
from __future__ import annotations

from typing import Literal, NamedTuple

import numpy as np
import scipy.sparse as sp
from scipy import stats
from scipy.linalg import get_blas_funcs

__all__ = ["LinearScorer", "TorchScorer", "ModuleScorer", "import_torch", "column_modes", "sparse_residual", "BatchOperator",
           "SPARSE_COST", "DENSE_COLUMN_DENSITY"]

#: Cost of one non-zero of a CSR product with many vectors, in entries of a dense GEMM (the
#: estimate behind ``batch_sparse="auto"`` and :data:`DENSE_COLUMN_DENSITY`): scipy's
#: ``csr_matvecs`` does less work per row than OpenBLAS ``sgemm`` on one-hot data but more per
#: entry (measured ratios: see benchmarks/README.md, section "Measurements behind the library's choices").
#: 3 is the value the published benchmark fits used; any value in that range picks the residual
#: form for one-hot data.
SPARSE_COST = 3.0

#: Columns of the residual ``X - 1 c^T`` with a larger share of non-zeros than this are
#: multiplied densely (``1 / SPARSE_COST``: where a dense column costs less than its non-zeros).
DENSE_COLUMN_DENSITY = 1.0 / SPARSE_COST

def import_torch():
    """``torch``, or an ImportError saying how to install the optional back end."""
    try:
        import torch
    except ImportError as err:
        raise ImportError("the PyTorch back end needs torch: pip install 'goalfit[torch]'") from err
    return torch


def column_modes(X, n_sample=1024) -> np.ndarray:
    """The most frequent value of each column among ``n_sample`` evenly spaced rows.

    A cheap stand-in for the column modes: :func:`scipy.stats.mode` on the sample (ties go to
    the smallest value). On one-hot, binary or standardized one-hot columns it is the value of
    the majority category when the sample has that category most often.

    Parameters
    ----------
    X : ndarray of shape (n, p)
    n_sample : int, default 1024
        Rows sampled (all rows when ``n <= n_sample``).

    Returns
    -------
    ndarray of shape (p,), X's dtype
    """
    X = np.asarray(X)
    n = X.shape[0]
    if n == 0:
        return np.zeros(X.shape[1], dtype=X.dtype)
    rows = np.unique(np.linspace(0, n - 1, min(n, int(n_sample))).astype(np.intp))
    return np.asarray(stats.mode(X[rows], axis=0, keepdims=False).mode, dtype=X.dtype)


def sparse_residual(X, center, dtype=np.float64, columns=None):
    """``R = X[:, columns] - 1 center[columns]^T`` as a CSR matrix in ``dtype`` (exact zeros where
    ``X == center``), without copying the columns of X.

    Parameters
    ----------
    X : ndarray of shape (n, p)
    center : ndarray of shape (p,)
    dtype : numpy dtype
    columns : array of int, optional
        Increasing column indices (default all).

    Returns
    -------
    scipy.sparse.csr_matrix of shape (n, len(columns))
    """
    X = np.asarray(X)
    p = X.shape[1]
    mask = X != center
    keep = np.ones(p, dtype=bool)
    if columns is not None:
        keep[:] = False
        keep[columns] = True
        mask &= keep
    rows, cols = np.nonzero(mask)  # row-major order: CSR order
    indptr = np.zeros(X.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.count_nonzero(mask, axis=1), out=indptr[1:])
    data = (X[rows, cols] - center[cols]).astype(dtype)
    new_index = np.cumsum(keep) - 1  # column j of X -> its column in R
    return sp.csr_matrix((data, new_index[cols], indptr), shape=(X.shape[0], int(keep.sum())))


class BatchOperator(NamedTuple):
    """The residual form ``X = 1 center^T + R`` that :meth:`LinearScorer.scores_many` multiplies.

    The scores of models ``theta = [w, b]`` (rows of ``Theta``, shape (m, d)) are
    ``sparse @ w[sparse_columns] + dense @ [w[dense_columns], center . w + b]``, shape (n,) per
    model; all arrays in the scorer's ``batch_dtype``. For a sparse X, ``sparse`` is X itself
    (``center`` = 0, every column sparse).

    Attributes
    ----------
    sparse : scipy.sparse.csr_matrix of shape (n, len(sparse_columns))
        The columns of R with at most :data:`DENSE_COLUMN_DENSITY` non-zeros.
    sparse_columns : ndarray of int, shape (p_s,)
    dense : ndarray of shape (n, len(dense_columns) + 1), C-contiguous, or None
        ``[R[:, dense_columns], 1]``: the last column (ones) carries each model's offset
        ``center . w + b``. None for a sparse X without intercept.
    dense_columns : ndarray of int, shape (p_d,)
    center : ndarray of shape (p,), float64
        The column modes (:func:`column_modes`); zeros for a sparse X.
    """

    sparse: sp.csr_matrix
    sparse_columns: np.ndarray
    dense: "np.ndarray | None"
    dense_columns: np.ndarray
    center: np.ndarray


class LinearScorer:
    """Scores ``X @ w + b`` of a linear model with ``theta = [w, b]`` (or ``w`` alone).

    Parameters
    ----------
    X : array or sparse matrix of shape (n, p)
    fit_intercept : bool, default True
    batch_dtype : {numpy.float32, numpy.float64}, default numpy.float32
        Precision of the product in :meth:`scores_many` (the perturbed models of the gradient
        estimators: twice the BLAS throughput of float64; they need scores only to about 1e-6).
    dtype : {numpy.float32, numpy.float64}, default numpy.float64
        Precision of the products with X for one model (:meth:`scores`, :meth:`backprop`: the
        projection's objective and gradient). Results are float64 either way; with float32 only
        the n x d products are rounded to float32 (half the memory traffic of these
        memory-bound matrix-vector products). A float32 copy of ``[X, 1]`` is kept when either
        dtype is float32 (``n (p + 1)`` numbers).
    batch_sparse : {"auto", True, False}, default "auto"
        How :meth:`scores_many` multiplies a dense X. ``True``: write ``X = 1 c^T + R`` with
        ``c`` the column modes (:func:`column_modes`), split R's columns into the sparse ones
        (a CSR matrix, :func:`sparse_residual`) and those with more than
        :data:`DENSE_COLUMN_DENSITY` non-zeros (a dense block, which also carries each model's
        offset ``c . w + b`` in a column of ones), and compute ``R_s W_s^T`` (scipy) plus
        ``[R_d, 1] [W_d, offsets]^T`` accumulated in place by BLAS ``gemm``: work proportional to
        the non-zeros
        (see benchmarks/README.md, section "Measurements behind the library's choices").
        ``False``: one dense GEMM with ``[X, 1]``. ``"auto"``: the
        residual form when its estimated cost, ``SPARSE_COST`` x sparse non-zeros + n x dense
        columns, is at most half of the GEMM's ``n (p + 1)``. Both are the same sums in exact
        arithmetic; in ``batch_dtype`` they differ by rounding only (R is formed in float64 and
        rounded once). A sparse X is multiplied as it is.

    Raises
    ------
    ValueError
        For another ``batch_dtype``, ``dtype`` or ``batch_sparse``.
    """

    def __init__(self, X, fit_intercept: bool = True, batch_dtype=np.float32, dtype=np.float64,
                 batch_sparse="auto"):
        self.X = X.tocsr() if sp.issparse(X) else np.asarray(X, dtype=float)
        self.fit_intercept = bool(fit_intercept)
        self.n, self.p = self.X.shape
        self.n_params = self.p + int(self.fit_intercept)
        self.batch_dtype, self.dtype = np.dtype(batch_dtype), np.dtype(dtype)
        for name, dt in (("batch_dtype", self.batch_dtype), ("dtype", self.dtype)):
            if dt not in (np.float32, np.float64):
                raise ValueError(f"{name} must be float32 or float64, got {dt}")
        if not (isinstance(batch_sparse, str) and batch_sparse == "auto") and batch_sparse not in (True, False):
            raise ValueError(f"batch_sparse must be 'auto', True or False, got {batch_sparse!r}")
        self.batch_sparse = batch_sparse
        self._mats: dict = {}
        # the batch operator (see batch_operator), built once; False: decided, none (one dense GEMM)
        self._residual: BatchOperator | Literal[False] | None = None

    def with_data(self, X) -> "LinearScorer":
        """The same model family on other data (e.g. the validation set)."""
        return LinearScorer(X, self.fit_intercept, self.batch_dtype, self.dtype, self.batch_sparse)

    @property
    def batch_operator(self) -> "BatchOperator | None":
        """The residual form :meth:`scores_many` multiplies in ``batch_dtype``
        (:class:`BatchOperator`), or None when it uses one dense GEMM with ``[X, 1]``.

        Decided and built on first use, then kept (see ``batch_sparse``; a sparse X always gives
        an operator, X itself with ``center`` = 0).
        """
        if self._residual is None:
            dt = self.batch_dtype
            if sp.issparse(self.X):
                D = np.ones((self.n, 1), dtype=dt) if self.fit_intercept else None
                self._residual = BatchOperator(self._matrix(dt), np.arange(self.p), D, np.arange(0), np.zeros(self.p))
            elif self.batch_sparse is not False:
                c = column_modes(self.X)
                nnz = np.count_nonzero(self.X != c, axis=0)
                dense = nnz > DENSE_COLUMN_DENSITY * self.n
                cost = SPARSE_COST * nnz[~dense].sum() + self.n * (dense.sum() + 1)
                if self.batch_sparse is True or cost <= 0.5 * self.n * (self.p + 1):
                    cols_s, cols_d = np.flatnonzero(~dense), np.flatnonzero(dense)
                    D = np.empty((self.n, len(cols_d) + 1), dtype=dt)
                    D[:, :-1] = self.X[:, cols_d] - c[cols_d]
                    D[:, -1] = 1.0
                    self._residual = BatchOperator(sparse_residual(self.X, c, dt, cols_s), cols_s, D, cols_d, c)
            if self._residual is None:
                self._residual = False
        return self._residual or None

    @property
    def batch_form(self) -> str:
        """``"residual"`` or ``"dense"``: how :meth:`scores_many` multiplies (``batch_sparse``)."""
        return "dense" if self.batch_operator is None else "residual"

    def _matrix(self, dtype):
        """``[X, 1]`` (dense; ``X`` without intercept) or ``X`` (sparse) in ``dtype``, built once."""
        if dtype not in self._mats:
            if sp.issparse(self.X):
                self._mats[dtype] = self.X.astype(dtype)
            else:
                Xb = np.empty((self.n, self.n_params), dtype=dtype)
                Xb[:, :self.p] = self.X
                if self.fit_intercept:
                    Xb[:, self.p] = 1.0
                self._mats[dtype] = Xb
        return self._mats[dtype]

    def _transposed(self, dtype):
        """``X.T`` (``dtype`` None) or ``_matrix(dtype).T``; a sparse transpose is built once (as
        CSR: one per call cost as much as the product on small matrices)."""
        M = self.X if dtype is None else self._matrix(dtype)
        if not sp.issparse(M):
            return M.T
        key = ("T", dtype)
        if key not in self._mats:
            self._mats[key] = sp.csr_matrix(M.T)
        return self._mats[key]

    def scores(self, theta) -> np.ndarray:
        """Scores of one model, shape (n,), float64."""
        theta = np.asarray(theta, dtype=float)
        if self.dtype == np.float64:
            s = self.X @ theta[:self.p]
            return np.asarray(s).ravel() + (theta[-1] if self.fit_intercept else 0.0)
        return self._product(theta[None, :], self.dtype, residual=False)[0].astype(float)

    def scores_many(self, Theta, dtype=None) -> np.ndarray:
        """Scores of many models (rows of ``Theta``, shape (m, d)), shape (m, n), in ``dtype``.

        One matrix product for all m models, in ``dtype`` (default ``batch_dtype``). In
        ``batch_dtype`` with a sparse X or the residual form (``batch_sparse``), the result is
        the transpose of a C-contiguous (n, m) array (Fortran order: the sparse product's own
        layout; no transposed copy); otherwise C-contiguous.
        """
        dtype = self.batch_dtype if dtype is None else np.dtype(dtype)
        return self._product(np.atleast_2d(np.asarray(Theta, dtype=float)), dtype, dtype == self.batch_dtype)

    def _product(self, Theta, dtype, residual):
        """Scores (m, n) in ``dtype``; ``residual``: through :attr:`batch_operator` if there is one."""
        op = self.batch_operator if residual else None
        if op is None:
            Theta = Theta.astype(dtype)
            Xb = self._matrix(dtype)
            if not sp.issparse(Xb):
                return Theta @ Xb.T
            S = np.ascontiguousarray((Xb @ Theta[:, :self.p].T).T)
            if self.fit_intercept:
                S += Theta[:, -1:]
            return S
        Rs, cols_s, D, cols_d, c = op
        W = Theta[:, :self.p]
        St = Rs @ np.ascontiguousarray(W[:, cols_s].T, dtype=dtype)  # (n, m), C-contiguous
        if D is not None:
            # St += D [W_d, offsets]^T in place (gemm on the Fortran-ordered transpose); the offsets
            # X w + b - R w = c . w + b in float64, rounded once
            Td = np.empty((len(Theta), D.shape[1]), dtype=dtype, order="F")
            Td[:, :-1] = W[:, cols_d]
            Td[:, -1] = W @ c + (Theta[:, -1] if self.fit_intercept else 0.0)
            gemm = get_blas_funcs("gemm", dtype=dtype)
            St = gemm(1.0, Td, D.T, beta=1.0, c=St.T, overwrite_c=True).T
        return St.T

    def backprop(self, theta, g) -> np.ndarray:
        """Gradient of ``sum_i g_i s_i(theta)`` w.r.t. theta, shape (d,), float64."""
        g = np.asarray(g, dtype=float)
        if self.dtype == np.float64:
            gw = np.asarray(self._transposed(None) @ g).ravel()
        else:
            gw = np.asarray(self._transposed(self.dtype) @ g.astype(self.dtype)).ravel().astype(float)
            if not sp.issparse(self.X):
                return gw  # the column of ones gives sum(g) for the intercept
        return np.concatenate([gw, [g.sum()]]) if self.fit_intercept else gw

    def coef_intercept(self, theta):
        """``(coef, intercept)`` of a parameter vector."""
        theta = np.asarray(theta, dtype=float)
        return theta[:self.p].copy(), float(theta[-1]) if self.fit_intercept else 0.0


class TorchScorer:
    """Scores of a ``torch.nn.Module`` with its parameters given as one flat vector.

    Parameters
    ----------
    module : torch.nn.Module
        Maps a float tensor (n, p) to (n,) or (n, 1) scores (a positive score predicts the
        positive class).
    X : array of shape (n, p)
    device : str or torch.device, default "cpu"
    dtype : torch dtype, default torch.float64

    Raises
    ------
    ImportError
        Without torch (``pip install goalfit[torch]``).
    ValueError
        If the module has no parameters.
    """

    def __init__(self, module, X, device="cpu", dtype=None):
        torch = import_torch()
        self.torch = torch
        self.dtype = torch.float64 if dtype is None else dtype
        self.device = torch.device(device)
        self.module = module.to(device=self.device, dtype=self.dtype)
        self.names = [n for n, _ in self.module.named_parameters()]
        if not self.names:
            raise ValueError("the torch module has no parameters to train")
        self.shapes = [p.shape for _, p in self.module.named_parameters()]
        self.sizes = [int(np.prod(s)) for s in self.shapes]
        self.n_params = int(sum(self.sizes))
        Xd = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=float)
        self.Xt = torch.as_tensor(Xd, dtype=self.dtype, device=self.device)
        self.n = Xd.shape[0]

    def with_data(self, X) -> "TorchScorer":
        """The same module on other data (e.g. the validation set)."""
        return TorchScorer(self.module, X, self.device, self.dtype)

    def initial_theta(self) -> np.ndarray:
        """The module's current parameters as one flat vector, shape (d,)."""
        return self.torch.nn.utils.parameters_to_vector(self.module.parameters()).detach().cpu().numpy()

    def _unflatten(self, theta_t):
        out, i = {}, 0
        for name, shape, size in zip(self.names, self.shapes, self.sizes):
            out[name] = theta_t[i:i + size].reshape(shape)
            i += size
        return out

    def torch_scores(self, theta_t):
        """Scores as a torch tensor (n,) for a torch parameter vector (autograd flows)."""
        out = self.torch.func.functional_call(self.module, self._unflatten(theta_t), (self.Xt,))
        return out.reshape(self.n)

    def _tensor(self, theta):
        return self.torch.as_tensor(np.asarray(theta, dtype=float), dtype=self.dtype, device=self.device)

    def scores(self, theta) -> np.ndarray:
        """Scores of one model, shape (n,)."""
        with self.torch.no_grad():
            return self.torch_scores(self._tensor(theta)).cpu().numpy()

    def scores_many(self, Theta) -> np.ndarray:
        """Scores of many models (rows of ``Theta``, shape (m, d)), shape (m, n), by ``vmap``."""
        T = self._tensor(np.atleast_2d(Theta))
        with self.torch.no_grad():
            return self.torch.func.vmap(self.torch_scores)(T).cpu().numpy()

    def backprop(self, theta, g) -> np.ndarray:
        """Gradient of ``sum_i g_i s_i(theta)`` w.r.t. theta by autograd, shape (d,)."""
        t = self._tensor(theta).requires_grad_(True)
        s = self.torch_scores(t)
        (grad,) = self.torch.autograd.grad(s @ self.torch.as_tensor(g, dtype=self.dtype, device=self.device), t)
        return grad.detach().cpu().numpy()


class ModuleScorer:
    """The deployed scores of a fitted torch module: ``module(X)`` as float64, shape (n_samples,).

    A picklable callable for :class:`goalfit.classifiers.ScoreClassifier` (a positive score
    predicts the positive class).

    Parameters
    ----------
    module : torch.nn.Module
        Its parameters are the fitted ones.
    device : str, default "cpu"
    """

    def __init__(self, module, device="cpu"):
        self.module = module
        self.device = device

    def __call__(self, X) -> np.ndarray:
        torch = import_torch()
        Xd = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=float)
        dtype = next(self.module.parameters()).dtype
        with torch.no_grad():
            out = self.module(torch.as_tensor(Xd, dtype=dtype, device=self.device))
        return out.reshape(len(Xd)).cpu().numpy().astype(float)
