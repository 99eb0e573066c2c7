"""Hyper-parameter selection following Narasimhan et al. (JMLR 2024), App. B.1.

"Among settings that satisfy the constraints on the training data, choose the lowest training
objective; if none does, the smallest violation." The base model is fitted once and shared
(:meth:`GoalClassifier.with_goals` re-solves with each setting), so a grid costs one base fit
plus the method runs.
"""
from __future__ import annotations

import itertools
import warnings

import numpy as np
from sklearn.base import clone

from ..goals import FEASIBLE_TOL

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
                         tol: float = FEASIBLE_TOL):
    """Fit ``model`` for each setting of a grid and keep the best on the training sample.

    Parameters
    ----------
    model : GoalClassifier (unfitted)
        Its ``method`` must be a named method (not ``"auto"``) for the default grid.
    X, y, sensitive_features, sample_weight : training data
    param_grid : dict of lists or list of dicts, optional
        Settings merged into ``method_params``; default :func:`default_grid`.
    tol : float, default :data:`goalfit.goals.FEASIBLE_TOL` (1e-7)
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
    first = None
    for params in param_grid:
        merged = dict(model.method_params or {})
        merged.update(params)
        with warnings.catch_warnings():  # infeasible settings are expected; reported in the table
            warnings.simplefilter("ignore", RuntimeWarning)
            if first is None:
                m = first = clone(model).set_params(method_params=merged).fit(
                    X, y, sensitive_features=sensitive_features, sample_weight=sample_weight)
            else:
                m = first.with_goals(method_params=merged)
        C = m.result_.confusion
        rows.append({"params": params, "objective": float(m.problem_.objective.value(C)),
                     "max_violation": float(m.problem_.max_violation(C))})
        fitted.append(m)
    k = _select(rows, tol, bool(model.constraints), "the training data")
    return fitted[k], rows


def _select(rows, tol, constrained, where):
    """App. B.1's rule over the table ``rows`` (each with ``objective`` and ``violations``, one
    per constraint, or ``max_violation``): among the settings whose violations are all within
    ``tol`` the lowest objective, else the smallest largest violation in units of ``tol``
    (rate units when ``tol`` is a number). Marks ``feasible`` / ``selected``; returns the index."""
    def scaled(r):
        v = np.atleast_1d(np.asarray(r.get("violations", [r["max_violation"]]), dtype=float))
        t = np.broadcast_to(np.asarray(tol, dtype=float), v.shape)
        return float(np.max(np.maximum(v, 0.0) / np.maximum(t, 1e-300), initial=0.0))

    excess = np.array([scaled(r) for r in rows])
    obj = np.array([r["objective"] for r in rows])
    feasible = excess <= 1.0
    k = int(np.argmin(np.where(feasible, obj, np.inf))) if feasible.any() else int(np.argmin(excess))
    for i, r in enumerate(rows):
        r["feasible"] = bool(feasible[i])
        r["selected"] = i == k
    if not feasible.any() and constrained:
        warnings.warn(f"no setting meets the constraints on {where}; selected the least violation "
                      f"({excess[k]:.4g} x the tolerance)", RuntimeWarning, stacklevel=3)
    return k


def select_ramp_params(model, param_grid, X, y, *, sensitive_features=None, sample_weight=None,
                       datasets=None, X_val, y_val=None, sensitive_features_val=None, datasets_val=None,
                       randomized=False, tol=FEASIBLE_TOL):
    """Select a :class:`~goalfit.RampClassifier`'s parameters on validation datasets.

    Each setting is fitted on the training datasets and evaluated on the validation datasets
    (the same names, held-out rows); the rule is Narasimhan et al.'s App. B.1 (as in
    :func:`select_method_params`) measured on validation data: among the settings whose
    constraints hold there within ``tol``, the lowest validation objective, else the smallest
    violation. The usual grid is the l2 weight ``alpha``: the ramp (Goh et al., Eq. 2) has a
    fixed width of 1 in score units, so ``alpha`` sets how wide the band of uncertain
    randomized predictions is and a hinge SVM's best ``alpha`` is no guide (on Bank Marketing
    churn it was 10-100x too large; ``benchmarks/goh_churn.py``).

    Parameters
    ----------
    model : RampClassifier (unfitted)
    param_grid : dict of lists or list of dicts
        Constructor parameters, e.g. ``{"alpha": [1e-2, 1e-3, 1e-4]}``.
    X, y, sensitive_features, sample_weight, datasets
        Training data, as for :meth:`~goalfit.RampClassifier.fit`.
    X_val, y_val, sensitive_features_val, datasets_val
        Validation data with the same dataset names and slicing columns.
    randomized : bool, default False
        Judge the deployed deterministic rule ``f(x) > threshold_`` (default) or the
        ramp-randomized one's expectations (``randomized_classifier_``).
    tol : float or sequence of float, default :data:`goalfit.goals.FEASIBLE_TOL` (1e-7)
        Allowed violation of each constraint on validation (rate units), one number or one
        per constraint, e.g. two standard errors of each validation estimate.

    Returns
    -------
    best : RampClassifier
        The selected fitted model (fitted on the training data only).
    table : list of dict
        One row per setting: ``params``, validation ``objective``, ``violations`` (one per
        constraint, <= 0 when met), ``max_violation``, ``feasible``, ``selected``, ``feasible_train``.

    Raises
    ------
    ValueError
        An empty grid, or ``tol`` of the wrong length or negative.
    """
    if isinstance(param_grid, dict):
        keys = list(param_grid)
        param_grid = [dict(zip(keys, vals)) for vals in itertools.product(*param_grid.values())]
    param_grid = list(param_grid)
    if not param_grid:
        raise ValueError("param_grid is empty")
    n_cons = len(model.constraints)
    t = np.atleast_1d(np.asarray(tol, dtype=float))
    if (t < 0).any() or len(t) not in (1, max(n_cons, 1)):
        raise ValueError(f"tol must be one non-negative number or one per constraint ({n_cons}), got {tol!r}")
    fitted, rows = [], []
    for params in param_grid:
        m = clone(model).set_params(**params)
        with warnings.catch_warnings():  # infeasible settings are expected; reported in the table
            warnings.simplefilter("ignore", RuntimeWarning)
            m.fit(X, y, sensitive_features=sensitive_features, sample_weight=sample_weight, datasets=datasets)
        ev = m.evaluate(X_val, y_val, sensitive_features=sensitive_features_val, datasets=datasets_val,
                        classifier=m.randomized_classifier_ if randomized else None)
        v = [c["violation"] for c in ev["constraints"]]
        rows.append({"params": params, "objective": float(ev["objective"]["value"]), "violations": v,
                     "max_violation": float(max(v, default=0.0)), "feasible_train": bool(m.feasible_)})
        fitted.append(m)
    k = _select(rows, t, n_cons > 0, "the validation data")
    return fitted[k], rows
