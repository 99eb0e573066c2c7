"""Algorithm 1 of Jiang et al. (ICML 2020): surrogate projected gradient descent, with rate
constraints through a Lagrangian in surrogate space.

    u_1 = phi(theta_1), lambda_1 = 0
    for t = 1..T:
        g_t, J_t = estimates of grad psi(u_t) and of the constraint rows' gradients (Alg. 2, 3, §5.3)
        u~_{t+1} = u_t - eta (g_t + J_t lambda_t)        (step in the K-dim surrogate space)
        theta_{t+1} in argmin ||(phi(theta) - u~_{t+1})_+||^2,  u_{t+1} = phi(theta_{t+1})   (4)
        lambda_{t+1} = max(0, lambda_t + eta_lambda_t r(theta_{t+1}))   (exact rows on the selection sample)

Targets are clipped at 0 (U lies in R^K_+ for non-negative surrogates). Without constraints
(R = 0) this is Alg. 1 as published: as in all the paper's experiments (and the colab), the
output is the iterate with the best selection metric, checked every ``eval_every`` steps, and,
with restarts, the best over restarts.

**Constraints** (an extension: Jiang et al. treat an unconstrained metric, and their Theorem 2
covers only that case). The R polyhedral constraint rows ``r(theta) = A vec(C(theta)) - b`` are
computed exactly from the predictions on the selection sample; their gradients in surrogate
space come from the same perturbations as psi's (:mod:`.gradients`). The step follows the
Lagrangian ``psi(u) + lambda . r(u)``; the multipliers ascend on the exact rows with the step
``eta_lambda_t = multiplier_step / sqrt(1 + t / multiplier_decay)``; a restart starts from the
multipliers the previous run ended with. Every iterate is assessed on the selection sample and
the output is the best one *feasible first* (:meth:`Assessment.key`: among the iterates meeting
every constraint, the lowest objective; when none does, the smallest largest violation).
Guarantee: exact on the selection sample -- if any iterate meets every constraint there, the
returned one does; nothing is claimed about convergence (the primal-dual iteration is a
heuristic) or about other samples.

Every path is kept: surrogate profiles, targets, gradient estimates and their diagnostics,
projection residuals, multipliers and the selection values.
"""
from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from .gradients import IllConditionedWarning
from .projection import Projector

__all__ = ["SPGDPath", "SPGDResult", "surrogate_pgd", "PROJECTION_TOL"]

#: Default step-size stopping tolerance of the projection (``Projector(rtol=...)``): L-BFGS-B
#: stops once an iteration gains less than 1e-5 of the squared surrogate-space step (the
#: measurements behind the value:
#: see benchmarks/README.md, section "Measurements behind the library's choices").
PROJECTION_TOL = 1e-5


@dataclass
class SPGDPath:
    """The history of one run of Algorithm 1.

    Attributes
    ----------
    surrogates : ndarray of shape (T + 1, K)
        ``u_t = phi(theta_t)``, t = 1..T+1.
    targets : ndarray of shape (T, K)
        ``u~_{t+1}`` after clipping at 0.
    gradients : ndarray of shape (T, K)
        Estimates ``g_t`` of the objective's gradient.
    condition_numbers, residuals : ndarray of shape (T,)
        Diagnostics of the gradient estimates (NaN where the estimator has none).
    projection_objectives : ndarray of shape (T,)
        ``||(phi(theta_{t+1}) - u~_{t+1})_+||^2`` reached by the projection.
    metric_iterations : ndarray of int, shape (E,)
        Iterations t at which the iterate was assessed on the selection sample (0 = start).
    metric_values, violations : ndarray of shape (E,)
        Its objective and largest constraint violation there.
    multipliers : ndarray of shape (T + 1, R)
        ``lambda_t`` (R = 0 without constraints).
    best_iteration : int
    best_metric, best_violation : float
    best_theta : ndarray of shape (d,)
    n_metric_calls : int
        Models evaluated on the selection sample.
    seconds : float
    """

    surrogates: np.ndarray
    targets: np.ndarray
    gradients: np.ndarray
    condition_numbers: np.ndarray
    residuals: np.ndarray
    projection_objectives: np.ndarray
    metric_iterations: np.ndarray
    metric_values: np.ndarray
    best_iteration: int
    best_metric: float
    best_theta: np.ndarray
    n_metric_calls: int
    seconds: float
    violations: np.ndarray | None = None
    multipliers: np.ndarray | None = None
    best_violation: float = 0.0
    best_key: tuple = (0.0, np.inf)


@dataclass
class SPGDResult:
    """Best iterate over restarts (feasible first) and every restart's path.

    Attributes
    ----------
    theta : ndarray of shape (d,)
    metric : float
        Its objective on the selection sample.
    violation : float
        Its largest constraint violation there.
    best_restart : int
    paths : list of SPGDPath
    """

    theta: np.ndarray
    metric: float
    best_restart: int
    paths: list = field(default_factory=list)
    violation: float = 0.0


def _run(problem, theta0, lam0, *, n_iter, step_size, estimator, projector, eval_every, rng, multiplier_step,
         multiplier_decay, on_assess):
    t0 = time.perf_counter()
    theta = np.asarray(theta0, dtype=float).copy()
    u = problem.phi(theta)
    K, R = len(u), problem.n_rows
    lam = np.asarray(lam0, dtype=float).copy()
    us, tg, gs = [u], np.zeros((n_iter, K)), np.zeros((n_iter, K))
    lams = np.zeros((n_iter + 1, R))
    lams[0] = lam
    conds, res, proj = np.full(n_iter, np.nan), np.full(n_iter, np.nan), np.zeros(n_iter)
    a = problem.assess(theta)
    calls = 1
    on_assess(0, theta, a, lam, calls)
    best_key, best_a, best_it, best_theta = a.key(), a, 0, theta.copy()
    m_it, m_val, m_vio = [0], [a.objective], [a.max_violation]
    n_ill = 0
    for t in range(n_iter):
        with warnings.catch_warnings(record=True) as caught:  # summarized once per run below
            warnings.simplefilter("always", IllConditionedWarning)
            est = estimator.estimate(problem, theta, rng)
        for w in caught:
            if issubclass(w.category, IllConditionedWarning):
                n_ill += 1
            else:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        calls += est.n_metric_calls
        direction = est.gradient if R == 0 else est.gradient + est.jacobian @ lam
        target = np.maximum(u - step_size * direction, 0.0)
        out = projector(theta, target)
        theta, u = out.theta, out.values
        us.append(u)
        tg[t], gs[t], proj[t] = target, est.gradient, out.objective
        if est.condition_number is not None:
            conds[t], res[t] = est.condition_number, est.residual
        if R or (t + 1) % eval_every == 0 or t + 1 == n_iter:
            a = problem.assess(theta)
            calls += 1
            if R:
                eta = multiplier_step / np.sqrt(1.0 + t / multiplier_decay)
                lam = np.maximum(0.0, lam + eta * a.rows)
            on_assess(t + 1, theta, a, lam, calls)
            m_it.append(t + 1)
            m_val.append(a.objective)
            m_vio.append(a.max_violation)
            if a.key() < best_key:
                best_key, best_a, best_it, best_theta = a.key(), a, t + 1, theta.copy()
        lams[t + 1] = lam
    if n_ill:
        warnings.warn(f"Alg. 3: {n_ill} of {n_iter} gradient estimates had an ill-conditioned H (max cond "
                      f"{np.nanmax(conds):.3g}; see condition_numbers_): the surrogates barely vary or move "
                      "together; raise sigma or the number of perturbations, or set ridge",
                      IllConditionedWarning, stacklevel=3)
    return SPGDPath(np.array(us), tg, gs, conds, res, proj, np.array(m_it), np.array(m_val), best_it,
                    best_a.objective, best_theta, calls, time.perf_counter() - t0, np.array(m_vio), lams,
                    best_a.max_violation, best_key)


def surrogate_pgd(problem, theta0, *, n_iter=100, step_size=1.0, estimator, projection="lbfgs",
                  projection_iter=100, projection_lr=1.0, projection_tol=PROJECTION_TOL, param_bound=None,
                  alpha=0.0, eval_every=10, n_restarts=1, restart_scale=1.0, multiplier_step=10.0,
                  multiplier_decay=10.0, random_state=None, callback=None) -> SPGDResult:
    """Run Algorithm 1 (with restarts) and return the best iterate on the selection sample.

    Parameters
    ----------
    problem : BlackBoxProblem
        With :class:`~goalfit.methods.surrogate.problem.SampleGoals` as its metric, the
        constraint rows are followed by multipliers; with a bare metric there are none.
    theta0 : array of shape (d,)
        Start of the first run; restart r > 0 starts from
        ``theta0 + restart_scale * N(0, I)`` (theta = 0 is a symmetric saddle on the §6.1
        data, the notes' I.3.9).
    n_iter : int, default 100
        T (the paper: 250).
    step_size : float, default 1.0
        eta, the step in surrogate space (the colab's effective 1.0).
    estimator : gradient estimator
        With ``estimate(problem, theta, rng) -> GradientEstimate``.
    projection : {"lbfgs", "adagrad", "torch_lbfgs"}, default "lbfgs"
    projection_iter : int, default 100
    projection_lr : float, default 1.0
        Learning rate of the torch solvers.
    projection_tol : float, default PROJECTION_TOL (1e-5)
        ``rtol`` of :class:`Projector`: L-BFGS-B stops once an iteration gains less than
        ``projection_tol`` times the squared surrogate-space step (0: up to ``projection_iter``).
    param_bound : float, optional
        Box on the parameters in the projection (see :class:`Projector`).
    alpha : float, default 0
        l2 weight of the projection (see :class:`Projector`).
    eval_every : int, default 10
        Selection checks without constraints (the colab: every 10 steps); with constraints
        every iterate is assessed (the multipliers read its rows).
    n_restarts : int, default 1
    restart_scale : float, default 1.0
    multiplier_step : float, default 10.0
        ``eta_lambda`` of the multiplier ascent, in surrogate units per unit of row violation.
    multiplier_decay : float, default 10.0
        The ascent step decays as ``1 / sqrt(1 + t / multiplier_decay)``.
    random_state : int, Generator or None
    callback : callable, optional
        ``callback(restart, iteration, theta, assessment, multipliers, n_metric_calls)`` after
        every assessment.

    Returns
    -------
    SPGDResult

    Raises
    ------
    ValueError
        For ``n_iter``, ``eval_every`` or ``n_restarts`` below 1, a non-positive step size, or a
        start of the wrong length.
    """
    for name, v in (("n_iter", n_iter), ("eval_every", eval_every), ("n_restarts", n_restarts)):
        if int(v) < 1:
            raise ValueError(f"{name} must be >= 1, got {v}")
    if not step_size > 0:
        raise ValueError(f"step_size must be positive, got {step_size}")
    if not (multiplier_step >= 0 and multiplier_decay > 0):
        raise ValueError(f"multiplier_step must be >= 0 and multiplier_decay > 0, got {multiplier_step}, "
                         f"{multiplier_decay}")
    theta0 = np.asarray(theta0, dtype=float)
    if theta0.shape != (problem.n_params,):
        raise ValueError(f"theta0 must have shape ({problem.n_params},), got {theta0.shape}")
    rng = np.random.default_rng(random_state)
    paths = []
    lam = np.zeros(problem.n_rows)
    for r in range(int(n_restarts)):
        start = theta0 if r == 0 else theta0 + restart_scale * rng.standard_normal(theta0.shape)
        projector = Projector(problem.scorer, problem.surrogates, solver=projection, max_iter=projection_iter,
                              learning_rate=projection_lr, rtol=projection_tol, param_bound=param_bound,
                              alpha=alpha)

        def on_assess(t, theta, a, lam_t, calls, r=r):
            if callback is not None:
                callback(r, t, theta, a, lam_t, calls)

        path = _run(problem, start, lam, n_iter=int(n_iter), step_size=float(step_size), estimator=estimator,
                    projector=projector, eval_every=int(eval_every), rng=rng,
                    multiplier_step=float(multiplier_step), multiplier_decay=float(multiplier_decay),
                    on_assess=on_assess)
        paths.append(path)
        lam = path.multipliers[-1]
    best = min(range(len(paths)), key=lambda i: paths[i].best_key)
    return SPGDResult(paths[best].best_theta, paths[best].best_metric, best, paths, paths[best].best_violation)
