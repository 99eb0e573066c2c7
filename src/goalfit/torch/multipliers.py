"""Lagrange multipliers of the two formulations, with their own optimizer and step size.

* :class:`LagrangeMultipliers` — the Lagrangian ``L(theta, lambda) = psi(theta) + <lambda, g(theta)>``
  on the proxy rates, ``lambda >= 0``. The model descends and the multipliers ascend the same
  Lagrangian, so one forward/backward pass per batch gives both gradients; the multipliers are
  a tensor stepped by any ``torch.optim`` optimizer with ``maximize=True`` and projected onto
  ``[0, bound]`` after each step (TFCO's ``LagrangianFormulation``; Cotter, Jiang & Sridharan, ALT
  2019, Alg. 1).
* :class:`ProxyLagrangeMultipliers` — the proxy-Lagrangian game (Cotter, Jiang & Sridharan, ALT
  2019, Def. 2 and Alg. 4): ``lambda`` lies in the simplex of dimension ``m + 1`` (coordinate 0
  weighs the objective). The model minimizes ``lambda_0 psi + sum_k lambda_k g~_k`` on the proxy
  rates; the multipliers are the stationary distribution of a column-stochastic matrix ``M``
  updated by the multiplicative (swap-regret) rule ``M <- M * exp(eta * (0, g) lambda^T)``,
  columns renormalized, where ``g`` holds the **exact 0-1** constraint rows of the same batch.
  So the multipliers follow the true rates, not the proxies.

Why our own code and not ``cooper-optim``: cooper 1.0's Lagrangian with ``strict_violation`` is
the dual half of what :class:`LagrangeMultipliers` does in a dozen lines on top of
``torch.optim``, but it has no proxy-Lagrangian (swap-regret) formulation, no rates, no
snapshots and no shrinking; wrapping our rows into its ``CMPState`` objects would add a
dependency and an indirection without removing any of our code.
"""
from __future__ import annotations

import math

import numpy as np
import torch


def make_optimizer(spec, params, lr: float, **kw):
    """A torch optimizer from a name (``"sgd"``, ``"adam"``, ``"adagrad"``, ``"adamw"``, ``"rmsprop"``)
    or a callable ``params -> Optimizer`` (e.g. ``functools.partial(torch.optim.SGD, lr=0.1)``).

    Raises
    ------
    ValueError
        For an unknown name.
    """
    names = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam, "adagrad": torch.optim.Adagrad,
             "adamw": torch.optim.AdamW, "rmsprop": torch.optim.RMSprop}
    if callable(spec) and not isinstance(spec, str):
        return spec(params)
    if spec not in names:
        raise ValueError(f"unknown optimizer {spec!r}; known: {sorted(names)} or a callable params -> Optimizer")
    return names[spec](params, lr=lr, **kw)


class LagrangeMultipliers:
    """Non-negative multipliers of the Lagrangian, one per constraint row.

    Parameters
    ----------
    n_rows : int
    optimizer : str or callable
        See :func:`make_optimizer`; created with ``maximize=True`` when given by name.
    lr : float
        Step size of the multipliers (their own, independent of the model's).
    bound : float or None
        Upper bound on every multiplier (TFCO's ``maximum_multiplier_radius``); None: unbounded.
    device, dtype : torch device and dtype

    Notes
    -----
    The multipliers' gradient is the rows ``g(C~)`` of the batch (their proxies), handed to
    :meth:`step` by the training loop; the model's loss reads the multipliers detached. With
    ``optimizer="sgd"`` the ascent step ``lambda + lr g`` is applied in place (what
    ``torch.optim.SGD(maximize=True)`` computes, without its per-call overhead).
    """

    kind = "lagrangian"
    reads = "proxy"

    def __init__(self, n_rows, optimizer="sgd", lr=0.1, bound=None, device="cpu", dtype=torch.float32):
        self._full = torch.zeros(n_rows + 1, dtype=dtype, device=device)
        self._full[0] = 1.0
        self.value = self._full[1:]  # the multipliers: a view of (1, lambda)
        self.bound = bound
        self.lr = float(lr)
        kw = {"maximize": True} if isinstance(optimizer, str) else {}
        self.optimizer = make_optimizer(optimizer, [self.value], lr, **kw)
        self._inline_sgd = optimizer == "sgd"

    def weights(self):
        """``(objective weight, row weights)`` the model's loss uses: ``1`` and ``lambda``."""
        return 1.0, self.value

    def full(self) -> torch.Tensor:
        """``(1, lambda_1, ..., lambda_m)``, shape (m + 1,): the weights of the objective and the rows."""
        return self._full

    def step(self, rows):
        """Ascend along ``rows`` (the proxy rows of the batch, shape (n_rows,)), then project
        onto ``[0, bound]``."""
        if self.value.numel() == 0:
            return
        if self._inline_sgd:
            self.value.add_(rows, alpha=self.lr)
        else:
            self.value.grad = rows.detach().to(self.value.dtype)
            self.optimizer.step()
        self.value.clamp_(min=0.0, max=self.bound)

    def current(self) -> torch.Tensor:
        """Multipliers as a detached tensor of shape (n_rows,)."""
        return self.value.detach().clone()

    def state_dict(self):
        return {"value": self.value.detach().clone(), "optimizer": self.optimizer.state_dict()}

    def load_state_dict(self, state):
        with torch.no_grad():
            self.value.copy_(state["value"])
        self.optimizer.load_state_dict(state["optimizer"])


class ProxyLagrangeMultipliers:
    """Proxy-Lagrangian multipliers from the swap-regret matrix (Cotter et al., ALT 2019, Alg. 4).

    Parameters
    ----------
    n_rows : int
        ``m``; the multipliers have ``m + 1`` coordinates (coordinate 0 weighs the objective).
    lr : float
        Step size ``eta`` of the multiplicative update.
    device, dtype : torch device and dtype of :meth:`weights`

    Notes
    -----
    ``M`` is kept in float64, initialized with every column putting weight ``1/2`` on the
    objective and the rest spread over the constraints; each step multiplies it entrywise by
    ``exp(eta (0, g) lambda^T)`` and renormalizes its columns (TFCO's multiplicative update),
    and its entries are kept above ``1e-300`` so that ``M`` stays positive. ``M`` is then
    column-stochastic with positive entries, so its stationary distribution (the fixed point
    ``M lambda = lambda`` in the simplex) is unique: it solves ``(M - I + J) lambda = 1`` (``J``
    the all-ones matrix: summing the rows gives ``sum(lambda) = 1``, and then
    ``(M - I) lambda = 0``), one small dense solve per step.

    The update runs where the rows are: on an accelerator, as torch operations on the device
    (no transfer to the host per step); on the CPU, on numpy views of the same float64
    buffers, with LAPACK's ``gesv`` called directly (for an ``(m + 1) x (m + 1)`` matrix a
    torch call costs several times the arithmetic). Both compute the same quantities.
    """

    kind = "proxy_lagrangian"
    reads = "01"
    _FLOOR = 1e-300

    def __init__(self, n_rows, lr=0.1, device="cpu", dtype=torch.float32):
        self.m = int(n_rows)
        self.lr = float(lr)
        self.device, self.dtype = torch.device(device), dtype
        self.host = self.device.type == "cpu"
        k = self.m + 1
        M = np.full((k, k), 0.5 / max(self.m, 1))
        M[0] = 0.5 if self.m else 1.0
        f64, dev = torch.float64, self.device
        self._shift = torch.ones((k, k), dtype=f64, device=dev) - torch.eye(k, dtype=f64, device=dev)
        self._ones = torch.ones(k, dtype=f64, device=dev)
        self.M = torch.empty((k, k), dtype=f64, device=dev)
        if self.host:  # numpy views of the buffers, and scratch space
            from scipy.linalg.lapack import dgesv

            self._gesv = dgesv
            self._M, self._S, self._one_np = self.M.numpy(), self._shift.numpy(), self._ones.numpy()
            self._M1, self._F, self._A = self._M[1:], np.empty((self.m, k)), np.empty((k, k))
            self._lam = torch.empty(k, dtype=dtype)
            self._lam_np, self._lam_lr = self._lam.numpy(), np.empty(k)
        self._load(M, None)

    @property
    def log_M(self) -> torch.Tensor:
        """``log M``, shape (m + 1, m + 1)."""
        return torch.log(self.M)

    def _load(self, M, lam):
        with torch.no_grad():
            self.M.copy_(torch.as_tensor(np.asarray(M, dtype=float)))
        if lam is None:
            self._set(self._stationary())
        else:
            self._set(torch.as_tensor(np.asarray(lam, dtype=float), dtype=torch.float64, device=self.device).clone())

    def _stationary(self) -> torch.Tensor:
        if self.host:
            A = np.add(self._M, self._S, out=self._A)
            return torch.from_numpy(self._gesv(A, self._one_np, overwrite_a=1)[2])
        return torch.linalg.solve_ex(self.M + self._shift, self._ones)[0]

    def _set(self, lam64):
        self._lam64 = lam64
        if self.host:  # the float32 weights are written in place, into the tensor :meth:`full` returns
            lam = lam64.numpy()
            np.multiply(lam, self.lr, out=self._lam_lr)
            self._lam_np[:] = lam
        else:
            self._lam = lam64.to(self.dtype)

    def weights(self):
        return self._lam[0], self._lam[1:]

    def full(self) -> torch.Tensor:
        """``(lambda_0, lambda_1, ..., lambda_m)``: the weights of the objective and the rows."""
        return self._lam

    def step(self, rows_01):
        """Multiplicative swap-regret step on the exact 0-1 rows ``g`` (shape (m,); a float64
        tensor, or a numpy array on the CPU): ``M <- M * exp(eta (0, g) lambda^T)``, columns
        renormalized."""
        if self.m == 0:
            return
        if self.host:
            g = rows_01 if isinstance(rows_01, np.ndarray) else rows_01.detach().numpy()
            F = np.multiply.outer(g, self._lam_lr, out=self._F)
            self._M1 *= np.exp(F, out=F)
            M = self._M
            M /= M.sum(axis=0)
            np.maximum(M, self._FLOOR, out=M)
        else:
            Mt = self.M
            Mt[1:].mul_(torch.outer(rows_01.to(torch.float64), self._lam64).mul_(self.lr).exp_())
            Mt.div_(Mt.sum(dim=0)).clamp_(min=self._FLOOR)
        self._set(self._stationary())

    def current(self) -> torch.Tensor:
        """The full distribution ``(lambda_0, lambda_1, ..., lambda_m)``, shape (m + 1,) (rounding
        errors below zero clipped)."""
        return self._lam.clamp(min=0.0)

    def state_dict(self):
        return {"log_M": np.log(self.M.cpu().numpy()), "lam": self._lam64.cpu().numpy().copy()}

    def load_state_dict(self, state):
        self._load(np.exp(np.asarray(state["log_M"], dtype=float)), state["lam"])
