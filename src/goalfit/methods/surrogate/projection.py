"""The over-constrained projection, problem (4) of Jiang et al. (ICML 2020), §4.2.

Given a target surrogate profile ``u~`` (K,), find

    theta in argmin_theta || (phi(theta) - u~)_+ ||_2^2

where ``(z)_+ = max(0, z)`` elementwise. The objective is convex in theta for convex
surrogates and a linear model (a non-decreasing convex function of convex ``phi_k``); it
penalizes only the surrogates that exceed their targets, so its gradient is a re-weighted sum
of surrogate gradients, ``sum_k 2 (phi_k - u~_k)_+ grad phi_k`` (the notes' I.3.3). By
Lemma 1 any solution ``u = phi(theta)`` lies in the epigraph U and below the exact projection
of ``u~``; when ``u~`` is in U the optimum is 0 and ``u <= u~``.

Back ends (each warm-started from the current iterate):

* ``"lbfgs"``: scipy's L-BFGS-B on the objective and its (sub)gradient; any scorer with
  ``scores`` / ``backprop`` (numpy linear models, torch modules through autograd).
* ``"adagrad"``: torch Adagrad with its accumulator kept across calls (the authors' colab,
  100 steps per projection, §6 protocol), on any torch module (a linear model becomes a
  ``torch.nn.Linear`` with the same flat parameter layout ``[w, b]``).
* ``"torch_lbfgs"``: torch's L-BFGS on the same objective.

With ``alpha > 0`` every back end adds the l2 term ``alpha / 2 ||w||^2`` (the weights of a
linear model without its intercept; every parameter of a torch module), which keeps the
parameters bounded where the surrogates alone do not (non-convex sigmoid surrogates saturate
as the weights grow); the paper's projection has none (``alpha = 0``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

from .models import LinearScorer, TorchScorer, import_torch

__all__ = ["ProjectionResult", "Projector", "projection_objective", "SOLVERS"]

SOLVERS = ("lbfgs", "adagrad", "torch_lbfgs")


@dataclass
class ProjectionResult:
    """Outcome of one projection.

    Attributes
    ----------
    theta : ndarray of shape (d,)
    values : ndarray of shape (K,)
        ``phi(theta)``, the new surrogate profile.
    objective : float
        ``||(phi(theta) - u~)_+||^2`` at the end.
    n_iter : int
        Optimizer iterations (L-BFGS) or steps (Adagrad) taken by this projection; 0 when the
        start already meets the target (objective <= ``tol``).
    """

    theta: np.ndarray
    values: np.ndarray
    objective: float
    n_iter: int


def penalized_mask(scorer) -> np.ndarray:
    """Which parameters the l2 term weighs, shape (d,): a linear model's weights (not its
    intercept), every parameter of a torch module."""
    if isinstance(scorer, LinearScorer):
        return np.r_[np.ones(scorer.p), np.zeros(int(scorer.fit_intercept))]
    return np.ones(scorer.n_params)


def projection_objective(scorer, surrogates, theta, target, scores=None, values=None, alpha=0.0, mask=None):
    """Value and gradient w.r.t. theta of ``||(phi(theta) - target)_+||^2 + alpha/2 ||mask * theta||^2``.

    Parameters
    ----------
    scorer, surrogates
    theta : array of shape (d,)
    target : array of shape (K,)
    scores, values : arrays of shape (n,) and (K,), optional
        ``scorer.scores(theta)`` and ``phi(theta)`` when already known (not recomputed).
    alpha : float, default 0
        l2 weight.
    mask : array of shape (d,), optional
        The penalized parameters (default :func:`penalized_mask`).

    Returns
    -------
    (float, ndarray of shape (d,))
    """
    s = scorer.scores(theta) if scores is None else scores
    values = surrogates.values(s) if values is None else values
    excess = np.maximum(values - target, 0.0)
    g_scores = surrogates.score_vjp(s, 2.0 * excess)
    f, g = float(excess @ excess), scorer.backprop(theta, g_scores)
    if alpha > 0:
        wm = (penalized_mask(scorer) if mask is None else mask) * theta
        f += 0.5 * alpha * float(wm @ wm)
        g = g + alpha * wm
    return f, g


class Projector:
    """Solver of problem (4) for one scorer and surrogate set, with warm starts.

    Parameters
    ----------
    scorer : LinearScorer or TorchScorer
        The model on the training data.
    surrogates : SurrogateSet
    solver : {"lbfgs", "adagrad", "torch_lbfgs"}, default "lbfgs"
    max_iter : int, default 100
        L-BFGS iterations or Adagrad steps per projection (the paper: 100 Adagrad steps).
    learning_rate : float, default 1.0
        Adagrad / torch L-BFGS step (the colab's 1.0).
    tol : float, default 1e-10
        Stop when the objective falls below ``tol`` (the target is reached).
    rtol : float, default 0
        Stopping tolerance tied to the step size (``"lbfgs"`` only): L-BFGS-B stops after an
        iteration that lowers the objective by less than ``rtol * f0``, where ``f0`` is the
        objective at the warm start, ``||(phi(theta_t) - u~)_+||^2 <= eta^2 ||g_t||^2``, the
        squared length of the surrogate-space step (scipy's ``ftol = rtol * f0 / max(f0, 1)``).
        Theorem 2 of Jiang et al. needs the projection only to accuracy O(1/(beta^2 T)), and
        the paper takes 100 Adagrad steps; 0 runs L-BFGS-B to ``max_iter`` (``ftol = 1e-12``).
    param_bound : float, optional
        Keep every parameter in ``[-param_bound, param_bound]`` (L-BFGS-B bounds; the torch
        solvers clamp after each step). Non-convex sigmoid surrogates decrease without end as
        the parameters grow (saturation), which a bound prevents.
    alpha : float, default 0
        l2 weight ``alpha / 2 ||w||^2`` added to the objective (:func:`penalized_mask`).

    Raises
    ------
    ValueError
        For an unknown solver or a bad ``max_iter``.
    ImportError
        For a torch solver without torch.
    """

    def __init__(self, scorer, surrogates, *, solver="lbfgs", max_iter=100, learning_rate=1.0, tol=1e-10,
                 rtol=0.0, param_bound=None, alpha=0.0):
        if solver not in SOLVERS:
            raise ValueError(f"unknown projection solver {solver!r}; known: {list(SOLVERS)}")
        if int(max_iter) < 1:
            raise ValueError(f"max_iter must be >= 1, got {max_iter}")
        self.scorer, self.surrogates = scorer, surrogates
        self.solver, self.max_iter = solver, int(max_iter)
        self.learning_rate, self.tol = float(learning_rate), float(tol)
        if not rtol >= 0:
            raise ValueError(f"rtol must be >= 0, got {rtol}")
        self.rtol = float(rtol)
        if param_bound is not None and not param_bound > 0:
            raise ValueError(f"param_bound must be positive, got {param_bound}")
        self.param_bound = param_bound
        if not alpha >= 0:
            raise ValueError(f"alpha must be >= 0, got {alpha}")
        self.alpha = float(alpha)
        self._mask = penalized_mask(scorer) if self.alpha > 0 else None
        self._torch_scorer = None
        self._param = None
        self._opt = None
        self._last = None  # (theta bytes, scores, phi) of the last model scored by "lbfgs"
        self._last_objective = None  # (theta bytes, target bytes, value, gradient)

    def __call__(self, theta0, target) -> ProjectionResult:
        """Project ``target`` (K,) starting from ``theta0`` (d,).

        Raises
        ------
        ValueError
            If ``target`` has the wrong length or holds NaN.
        """
        target = np.asarray(target, dtype=float)
        if target.shape != (len(self.surrogates),):
            raise ValueError(f"target must have shape ({len(self.surrogates)},), got {target.shape}")
        if np.isnan(target).any():
            raise ValueError("projection target contains NaN")
        if self.solver == "lbfgs":
            theta, n_iter = self._scipy(np.asarray(theta0, dtype=float), target)
            values = self._scored(theta)[1]
        else:
            theta, n_iter = self._torch(np.asarray(theta0, dtype=float), target)
            values = self.surrogates.values(self.scorer.scores(theta))
        excess = np.maximum(values - target, 0.0)
        return ProjectionResult(theta, values, float(excess @ excess), n_iter)

    def _excess(self, theta, target) -> float:
        """``||(phi(theta) - target)_+||^2`` (without the l2 term)."""
        excess = np.maximum(self._scored(theta)[1] - target, 0.0)
        return float(excess @ excess)

    def _scored(self, theta):
        """``(scores, phi)`` of ``theta``, kept for the last model scored.

        Alg. 1 evaluates the same model several times in a row: the previous projection's
        result is the next one's start (its objective ``f0``), L-BFGS-B starts by evaluating its
        ``x0`` again, and the result's profile is that of the last model evaluated. The values
        are identical to a recomputation (the same arithmetic on the same theta).
        """
        key = theta.tobytes()
        if self._last is None or self._last[0] != key:
            s = self.scorer.scores(theta)
            self._last = (key, s, self.surrogates.values(s))
        return self._last[1], self._last[2]

    def _objective(self, theta, target):
        """:func:`projection_objective` with the last model's scores and value/gradient reused."""
        key = (theta.tobytes(), target.tobytes())
        if self._last_objective is None or self._last_objective[0] != key:
            s, values = self._scored(theta)
            f, g = projection_objective(self.scorer, self.surrogates, theta, target, s, values, self.alpha,
                                        self._mask)
            self._last_objective = (key, f, g)
        return self._last_objective[1], self._last_objective[2].copy()

    def _scipy(self, theta0, target):
        if self.param_bound is not None:
            theta0 = np.clip(theta0, -self.param_bound, self.param_bound)
        f0, _ = self._objective(theta0, target)
        if self._excess(theta0, target) <= self.tol and self.alpha == 0:
            return theta0, 0
        ftol = max(self.rtol * f0 / max(f0, 1.0), 1e-12)
        res = minimize(lambda th: self._objective(np.asarray(th, dtype=float), target), theta0,
                       jac=True, method="L-BFGS-B",
                       bounds=None if self.param_bound is None else [(-self.param_bound, self.param_bound)] * len(theta0),
                       options={"maxiter": self.max_iter, "ftol": ftol, "gtol": 1e-9})
        return res.x, int(res.nit)

    # ------------------------------------------------------------------ torch back ends
    def _as_torch(self):
        if self._torch_scorer is None:
            if isinstance(self.scorer, TorchScorer):
                self._torch_scorer = self.scorer
            elif isinstance(self.scorer, LinearScorer):
                torch = import_torch()
                lin = torch.nn.Linear(self.scorer.p, 1, bias=self.scorer.fit_intercept)
                self._torch_scorer = TorchScorer(lin, self.scorer.X)
            else:  # pragma: no cover - defensive
                raise TypeError(f"cannot run torch solvers on {type(self.scorer).__name__}")
        return self._torch_scorer

    def _torch(self, theta0, target):
        ts = self._as_torch()
        torch = ts.torch
        tgt = torch.as_tensor(target, dtype=ts.dtype, device=ts.device)
        if self._param is None:
            self._param = torch.nn.Parameter(ts._tensor(theta0))
            if self.solver == "adagrad":
                self._opt = torch.optim.Adagrad([self._param], lr=self.learning_rate)
            else:
                self._opt = torch.optim.LBFGS([self._param], lr=self.learning_rate, max_iter=self.max_iter,
                                              line_search_fn="strong_wolfe")
        param, opt = self._param, self._opt
        assert opt is not None  # made with the parameter
        with torch.no_grad():  # warm start from the current iterate; Adagrad state persists
            param.copy_(ts._tensor(theta0))
        mask = ts._tensor(self._mask) if self.alpha > 0 else None

        def objective():
            opt.zero_grad()
            excess = torch.clamp(self.surrogates.torch_values(ts.torch_scores(param)) - tgt, min=0.0)
            loss = (excess ** 2).sum()
            if mask is not None:  # alpha > 0
                wm = param * mask
                loss = loss + 0.5 * self.alpha * (wm ** 2).sum()
            loss.backward()
            return loss

        n_iter = 0  # steps taken in this call
        if self.solver == "adagrad":
            for _ in range(self.max_iter):
                if float(objective().detach()) <= self.tol:
                    break
                opt.step()
                self._clamp()
                n_iter += 1
        else:
            if float(objective().detach()) > self.tol:
                # torch keeps a running total of L-BFGS iterations in the optimizer state,
                # which persists across calls: count this call's iterations only
                before = int(opt.state[param].get("n_iter", 0))
                opt.step(objective)
                self._clamp()
                n_iter = int(opt.state[param].get("n_iter", 0)) - before
        return param.detach().cpu().numpy().copy(), n_iter

    def _clamp(self):
        if self.param_bound is not None and self._param is not None:
            import torch

            with torch.no_grad():
                self._param.clamp_(-self.param_bound, self.param_bound)
