"""Baselines as methods: deterministic plug-ins and post-shift thresholds.

* ``argmax`` — Plugin[0-1] of Narasimhan et al. (§8.1): ``argmax_i eta_i(x)``.
* ``balanced`` — Plugin(bal): ``argmax_i eta_i(x) / pi_i``.
* ``post_shift`` / ``post_shift_groups`` — binary only: predict 1 iff ``eta_1(x) >= t`` with one
  threshold, or one per cell, chosen on the training sample to minimize the objective (the
  post-shift baseline of Jiang et al. ICML 2020 and Hardt et al.'s threshold post-processing
  without constraints). Thresholds are searched over at most ``grid_size`` quantiles of
  ``eta_1`` (the per-cell version by coordinate descent, ``n_sweeps`` passes).
"""
from __future__ import annotations

import numpy as np

from ...goals.problem import FEASIBLE_TOL
from ...classifiers.members import ThresholdRule
from .._scan import GRID_SIZE
from ._common import FitResult, Recorder, StopReason, plugin_result
from .oracle import ThresholdOracle


def _single(problem, oracle, cost, name, message):
    rec = Recorder(problem, oracle)
    member, C = oracle(cost)
    rec(0, C, force=True)
    return plugin_result(problem, oracle, [member], np.ones(1), C[None], name, rec.rows,
                         problem.max_violation(C) <= FEASIBLE_TOL, message, stop=StopReason.BASELINE, iterations=0)


def argmax_plugin(problem, oracle) -> FitResult:
    """Unconstrained plug-in ``argmax_i eta_i(x)`` (cost ``1 - I``), ignoring the goals."""
    n = problem.space.n_classes
    cost = np.broadcast_to(1.0 - np.eye(n), problem.space.shape)
    return _single(problem, oracle, cost, "argmax", "plug-in argmax (baseline)")


def balanced_plugin(problem, oracle) -> FitResult:
    """Balanced plug-in ``argmax_i eta_i(x) / pi_i`` (cost ``1(i != j) / pi_i``)."""
    space = problem.space
    pi = space.priors
    cost = np.broadcast_to(1.0 - np.eye(space.n_classes), space.shape) / np.where(pi > 0, pi, 1.0)[None, :, None]
    return _single(problem, oracle, cost, "balanced", "plug-in balanced argmax (baseline)")


def post_shift(problem, oracle, *, per_group: bool = False, grid_size: int = GRID_SIZE,
               n_sweeps: int = 3) -> FitResult:
    """Threshold(s) on ``eta_1`` minimizing the objective on the sample (binary only).

    Raises
    ------
    ValueError
        For more than two classes.
    """
    space = problem.space
    if space.n_classes != 2:
        raise ValueError("post-shift thresholds are defined for binary problems only")
    thr = ThresholdOracle(oracle.proba, oracle.y, oracle.cells, space, oracle.w)
    eta = oracle.proba[:, 1]
    grid = np.unique(np.concatenate([np.quantile(eta, np.linspace(0, 1, grid_size)), [np.inf]]))
    n_cells = space.n_cells
    upper = np.ones(n_cells, dtype=bool)
    t = np.full(n_cells, 0.5)

    def best_for(cells):
        vals = []
        for g in grid:
            ts = t.copy()
            ts[cells] = g
            vals.append(problem.objective.value(thr.confusion_of_thresholds(ts, upper)))
        return grid[int(np.argmin(vals))]

    t[:] = best_for(np.arange(n_cells))
    if per_group:
        for _ in range(n_sweeps):
            for c in range(n_cells):
                t[c] = best_for(np.array([c]))
    rule = ThresholdRule(t, upper)
    C = thr.confusion_of_thresholds(t, upper)
    rec = Recorder(problem, oracle)
    rec(0, C, force=True)
    name = "post_shift_groups" if per_group else "post_shift"
    return plugin_result(problem, oracle, [rule], np.ones(1), C[None], name, rec.rows,
                         problem.max_violation(C) <= FEASIBLE_TOL, f"thresholds {np.round(t, 4).tolist()}",
                         stop=StopReason.BASELINE, iterations=0, n_oracle_calls=0)


BASELINES = {
    "argmax": argmax_plugin,
    "balanced": balanced_plugin,
    "post_shift": post_shift,
    "post_shift_groups": lambda problem, oracle, **kw: post_shift(problem, oracle, per_group=True, **kw),
}
