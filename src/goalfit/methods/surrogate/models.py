"""Score functions ``f_theta(X)`` with a flat parameter vector theta (Jiang et al. 2020, §2).

Surrogate projected gradient descent sees a model only through its parameter vector: scores of
one model, scores of many perturbed models at once (an ``(m, n)`` matrix), and the gradient of
``sum_i g_i f_theta(x_i)`` w.r.t. theta (to turn score gradients into parameter gradients).

* :class:`LinearScorer`: ``X w + b`` in numpy (the paper's experiments; theta = [w, b]).
* :class:`TorchScorer`: any ``torch.nn.Module`` with one output per example; scores of many
  parameter vectors by ``torch.func.vmap`` over ``functional_call``; gradients by autograd;
  CPU by default, any torch ``device`` (a GPU when present). torch is imported lazily.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["LinearScorer", "TorchScorer", "import_torch"]


def import_torch():
    """``torch``, or an ImportError saying how to install the optional back end."""
    try:
        import torch
    except ImportError as err:
        raise ImportError("the PyTorch back end needs torch: pip install 'goalfit[torch]'") from err
    return torch


class LinearScorer:
    """Scores ``X @ w + b`` of a linear model with ``theta = [w, b]`` (or ``w`` alone).

    Parameters
    ----------
    X : array or sparse matrix of shape (n, p)
    fit_intercept : bool, default True
    batch_dtype : {numpy.float32, numpy.float64}, default numpy.float32
        Precision of :meth:`scores_many` (the perturbed models of the gradient estimators); a
        copy of ``[X, 1]`` in this dtype is kept (``n (p + 1)`` numbers). One model's scores
        and gradients (the projection) are always float64.

    Raises
    ------
    ValueError
        For another ``batch_dtype``.
    """

    def __init__(self, X, fit_intercept: bool = True, batch_dtype=np.float32):
        self.X = X.tocsr() if sp.issparse(X) else np.asarray(X, dtype=float)
        self.fit_intercept = bool(fit_intercept)
        self.n, self.p = self.X.shape
        self.n_params = self.p + int(self.fit_intercept)
        self.batch_dtype = np.dtype(batch_dtype)
        if self.batch_dtype not in (np.float32, np.float64):
            raise ValueError(f"batch_dtype must be float32 or float64, got {self.batch_dtype}")
        self._Xb = None

    def with_data(self, X) -> "LinearScorer":
        """The same model family on other data (e.g. the validation set)."""
        return LinearScorer(X, self.fit_intercept, self.batch_dtype)

    def _batch_matrix(self):
        """``[X, 1]`` (dense) or ``X`` (sparse) in ``batch_dtype``, built once."""
        if self._Xb is None:
            if sp.issparse(self.X):
                self._Xb = self.X.astype(self.batch_dtype)
            else:
                Xb = np.empty((self.n, self.n_params), dtype=self.batch_dtype)
                Xb[:, :self.p] = self.X
                if self.fit_intercept:
                    Xb[:, self.p] = 1.0
                self._Xb = Xb
        return self._Xb

    def scores(self, theta) -> np.ndarray:
        """Scores of one model, shape (n,)."""
        theta = np.asarray(theta, dtype=float)
        s = self.X @ theta[:self.p]
        return np.asarray(s).ravel() + (theta[-1] if self.fit_intercept else 0.0)

    def scores_many(self, Theta) -> np.ndarray:
        """Scores of many models (rows of ``Theta``, shape (m, d)), shape (m, n), C-contiguous.

        One matrix product for all m models, in ``batch_dtype`` (float32 by default: twice the
        BLAS throughput of float64, and the perturbed models of Alg. 3 need scores only to
        about 1e-6 relative; pass ``batch_dtype=np.float64`` for full precision).
        """
        Theta = np.atleast_2d(np.asarray(Theta, dtype=float)).astype(self.batch_dtype)
        Xb = self._batch_matrix()
        if not sp.issparse(Xb):
            return Theta @ Xb.T
        S = np.ascontiguousarray((Xb @ Theta[:, :self.p].T).T)
        if self.fit_intercept:
            S += Theta[:, -1:]
        return S

    def backprop(self, theta, g) -> np.ndarray:
        """Gradient of ``sum_i g_i s_i(theta)`` w.r.t. theta, shape (d,)."""
        gw = np.asarray(self.X.T @ g).ravel()
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
