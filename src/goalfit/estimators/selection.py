"""Hyper-parameter selection following Narasimhan et al. (JMLR 2024), App. B.1.

"Among settings that satisfy the constraints on the training data, choose the lowest training
objective; if none does, the smallest violation." The base model is fitted once and shared
(``prefit``), so a grid costs one base fit plus the method runs.
"""
from __future__ import annotations

import itertools
import warnings

import numpy as np
from sklearn.base import clone

PAPER_STEPS = (0.001, 0.01, 0.1)


def default_grid(method: str) -> list[dict]:
    """The paper's grid for a method: step sizes over {0.001, 0.01, 0.1}^2 for (Con)GDA
    (``step_lambda = step_mu``, the paper's eta'), the SplitFW dual steps scaled by
    {0.1, 1, 10}; ``[{}]`` for methods without step sizes."""
    if method in ("gda", "con_gda"):
        return [{"step_xi": a, "step_lambda": b, "step_mu": b} for a, b in itertools.product(PAPER_STEPS, PAPER_STEPS)]
    if method == "split_frank_wolfe":
        return [{"eta": tuple(c * e for e in (0.5, 0.1, 0.001))} for c in (0.1, 1.0, 10.0)]
    return [{}]


def select_method_params(model, X, y, *, sensitive_features=None, sample_weight=None, param_grid=None,
                         tol: float = 1e-7):
    """Fit ``model`` for each setting of a grid and keep the best on the training sample.

    Parameters
    ----------
    model : GoalClassifier (unfitted)
        Its ``method`` must be a named method (not ``"auto"``) for the default grid.
    X, y, sensitive_features, sample_weight : training data
    param_grid : dict of lists or list of dicts, optional
        Settings merged into ``method_params``; default :func:`default_grid`.
    tol : float, default 1e-7
        Violation below which a setting counts as feasible.

    Returns
    -------
    best : GoalClassifier
        The selected fitted model.
    table : list of dict
        One row per setting: ``params``, ``objective`` and ``max_violation`` on the training
        sample (exact expectations), ``feasible``, ``selected``.

    Raises
    ------
    ValueError
        For ``method="auto"`` without an explicit grid.
    """
    if param_grid is None:
        if model.method == "auto":
            raise ValueError("pass method=... (e.g. 'con_gda') or an explicit param_grid")
        param_grid = default_grid(model.method)
    if isinstance(param_grid, dict):
        keys = list(param_grid)
        param_grid = [dict(zip(keys, vals)) for vals in itertools.product(*param_grid.values())]
    fitted, rows = [], []
    base_model = None
    for params in param_grid:
        m = clone(model)
        merged = dict(model.method_params or {})
        merged.update(params)
        m.set_params(method_params=merged)
        if base_model is not None and not isinstance(model.estimator, str):
            m.set_params(estimator=base_model.estimator_, prefit=True, holdout=None)
        with warnings.catch_warnings():  # infeasible settings are expected; reported in the table
            warnings.simplefilter("ignore", RuntimeWarning)
            m.fit(X, y, sensitive_features=sensitive_features, sample_weight=sample_weight)
        if base_model is None:
            base_model = m
        C = m.result_.confusion
        rows.append({"params": params, "objective": float(m.problem_.objective.value(C)),
                     "max_violation": float(m.problem_.max_violation(C))})
        fitted.append(m)
    viol = np.array([r["max_violation"] for r in rows])
    obj = np.array([r["objective"] for r in rows])
    feasible = viol <= tol
    k = int(np.argmin(np.where(feasible, obj, np.inf))) if feasible.any() else int(np.argmin(viol))
    for i, r in enumerate(rows):
        r["feasible"] = bool(feasible[i])
        r["selected"] = i == k
    if not feasible.any() and model.constraints:
        warnings.warn(f"no setting meets the constraints on the training data; selected the least "
                      f"violation {viol[k]:.4g}", RuntimeWarning, stacklevel=2)
    return fitted[k], rows
