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
    """

    kind = "lagrangian"

    def __init__(self, n_rows, optimizer="sgd", lr=0.1, bound=None, device="cpu", dtype=torch.float32):
        self.value = torch.zeros(n_rows, dtype=dtype, device=device, requires_grad=True)
        self.bound = bound
        kw = {"maximize": True} if isinstance(optimizer, str) else {}
        self.optimizer = make_optimizer(optimizer, [self.value], lr, **kw)

    def weights(self):
        """``(objective weight, row weights)`` the model's loss uses: ``1`` and ``lambda``."""
        return 1.0, self.value

    def zero_grad(self):
        self.optimizer.zero_grad(set_to_none=True)

    def set_gradient(self, rows):
        """Use ``rows`` (shape (n_rows,)) as the ascent direction of the next :meth:`step` (for a
        model loss that is not the Lagrangian itself, e.g. the cross-entropy bound)."""
        self.value.grad = rows.detach().to(self.value.dtype).clone()

    def step(self, rows_01=None):
        """Ascend (the gradient ``g`` came with the model's backward pass), then project."""
        if self.value.grad is None:
            return
        self.optimizer.step()
        with torch.no_grad():
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
    ``log M`` is kept in float64 numpy (TFCO's multiplicative implementation), initialized with
    every column putting weight ``1/2`` on the objective and the rest spread over the
    constraints. ``M`` has positive entries, so its stationary distribution (the fixed point
    ``M lambda = lambda`` in the simplex) is unique; it is the solution of the linear system
    ``(M - I) lambda = 0``, ``sum(lambda) = 1`` (one small dense solve per step).
    """

    kind = "proxy_lagrangian"

    def __init__(self, n_rows, lr=0.1, device="cpu", dtype=torch.float32):
        self.m = int(n_rows)
        self.lr = float(lr)
        M = np.full((self.m + 1, self.m + 1), 0.5 / max(self.m, 1))
        M[0] = 0.5 if self.m else 1.0
        self.log_M = np.log(M)
        self.device, self.dtype = device, dtype
        self._set(self._stationary())

    def _stationary(self) -> np.ndarray:
        M = np.exp(self.log_M)
        k = self.m + 1
        if getattr(self, "_eye", None) is None:
            self._eye = np.eye(k)
            self._rhs = np.zeros(k)
            self._rhs[-1] = 1.0
        S = M - self._eye
        S[-1] = 1.0
        rhs = self._rhs
        try:
            lam = np.linalg.solve(S, rhs)
        except np.linalg.LinAlgError:  # pragma: no cover - M > 0 makes S non-singular
            lam = np.full(k, 1.0 / k)
            for _ in range(1000):
                lam = M @ lam
                lam /= lam.sum()
        lam = np.clip(lam, 0.0, None)
        return lam / lam.sum()

    def _set(self, lam):
        self._lam = lam
        t = torch.from_numpy(lam).to(self.dtype)
        self._lam_t = t if str(self.device) == "cpu" else t.to(self.device)

    def weights(self):
        return self._lam_t[0], self._lam_t[1:]

    def zero_grad(self):
        pass

    def set_gradient(self, rows):
        pass  # the swap-regret step reads the 0-1 rows

    def step(self, rows_01):
        """Multiplicative swap-regret step on the exact 0-1 rows ``g`` (tensor of shape (m,))."""
        if self.m == 0:
            return
        grad = np.empty(self.m + 1)
        grad[0] = 0.0
        grad[1:] = rows_01.detach().cpu().numpy()
        L = self.log_M + (self.lr * grad)[:, None] * self._lam[None, :]
        top = L.max(axis=0, keepdims=True)  # columns renormalized in log space
        self.log_M = L - (top + np.log(np.exp(L - top).sum(axis=0, keepdims=True)))
        self._set(self._stationary())

    def current(self) -> torch.Tensor:
        """The full distribution ``(lambda_0, lambda_1, ..., lambda_m)``, shape (m + 1,)."""
        return self._lam_t.clone()

    def state_dict(self):
        return {"log_M": self.log_M.copy(), "lam": self._lam.copy()}

    def load_state_dict(self, state):
        self.log_M = np.asarray(state["log_M"], dtype=float).copy()
        self._set(np.asarray(state["lam"], dtype=float).copy())
