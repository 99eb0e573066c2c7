"""Trade-off curves: sweep a constraint's bound reusing one fitted base model.

A plug-in classifier of :class:`~goalfit.GoalClassifier` is a post-processing of a class-
probability model (Narasimhan et al., JMLR 2024, §4): the base model does not depend on the
goals. A frontier therefore fits the base model once, computes its probabilities on the
training (and validation) data once, and solves the goals for each bound on those
probabilities (``estimator="precomputed"``); column generation starts each point from the
columns found at the previous points (``warm_start``), so a point costs a few pricing rounds.
The peers' versions: OxonFair's ``compute_frontier`` / ``plot_frontier``, error-parity's
``compute_postprocessing_curve`` / ``plot_postprocessing_frontier``.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.utils.validation import check_is_fitted

from ..goals import Constraint, Problem
from ..metrics import evaluate_compiled
from ..utils.validation import check_consistent_rows

__all__ = ["Frontier", "frontier"]


@dataclass
class Frontier:
    """The result of :func:`frontier`.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per point: ``point``, ``bound`` (NaN for goal sets), ``objective_train``,
        ``<constraint expression>_train`` for every constraint, ``max_violation_train``,
        ``feasible_train``, ``accuracy_train``, the same with ``_val`` when validation data was
        given, ``n_members``, ``oracle_calls`` and ``seconds`` (the point's solve; the base model
        is fitted once, in ``base_fit_seconds``).
    models : list of GoalClassifier
        The fitted classifier of each point, on precomputed probabilities: call them on
        ``base_estimator.predict_proba(X)``, or use :meth:`model` for raw features.
    chosen : int
        The point at the estimator's own bound (for ``goal_sets``: the first set).
    objective, swept : str
        Names of the objective and of the swept constraint's expression.
    base_estimator : fitted estimator or None
    base_fit_seconds, total_seconds : float
    """

    table: pd.DataFrame
    models: list
    chosen: int
    objective: str
    swept: str
    base_estimator: object = None
    base_fit_seconds: float = 0.0
    total_seconds: float = 0.0
    meta: dict = field(default_factory=dict)

    def model(self, i: int | None = None):
        """Point ``i``'s classifier on raw features: a GoalClassifier with the prefit base model.

        Parameters
        ----------
        i : int, optional
            Row of :attr:`table` (default :attr:`chosen`).
        """
        import copy

        from ..classifiers import ProbabilityModel, RandomizedClassifier

        if self.base_estimator is None:
            raise ValueError("the frontier was computed on precomputed probabilities: use models[i]")
        m = copy.copy(self.models[self.chosen if i is None else i])
        est_classes = np.asarray(self.base_estimator.classes_)
        index = [int(np.flatnonzero(est_classes == c)[0]) for c in m.classes_]
        clf = m.classifier_
        m.classifier_ = RandomizedClassifier(clf.members, clf.weights, m.classes_, clf.cell_encoder,
                                             ProbabilityModel(self.base_estimator, index))
        m.estimator, m.estimator_, m.prefit = self.base_estimator, self.base_estimator, True
        return m

    def plot(self, path=None, *, ax=None, split=None):
        """Objective against the swept goal's value, train and validation, the chosen point marked.

        Parameters
        ----------
        path : str or Path, optional
            Write a PNG (dpi 100) there.
        ax : matplotlib Axes, optional
        split : {"train", "val"}, optional
            Draw one split only (default: both when validation data was given).

        Returns
        -------
        matplotlib Axes
        """
        import matplotlib

        if ax is None and path is not None:
            matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots(figsize=(6, 4.2))
        splits = [split] if split else [s for s in ("train", "val") if f"objective_{s}" in self.table]
        t = self.table
        for k, s in enumerate(splits):
            x, y = t[f"{self.swept}_{s}"].to_numpy(), t[f"objective_{s}"].to_numpy()
            order = np.argsort(x)
            ax.plot(x[order], y[order], marker=".", color=f"C{k}", label="train" if s == "train" else "validation")
            ax.scatter([x[self.chosen]], [y[self.chosen]], s=120, facecolors="none", edgecolors="k", zorder=3,
                       label="chosen" if k == 0 else None)
        if not np.isnan(t["bound"].iloc[self.chosen]):
            ax.axvline(t["bound"].iloc[self.chosen], color="0.6", ls="--", lw=1, label="bound")
        from ..report.names import display_name

        ax.set_xlabel(self.swept)
        ax.set_ylabel(display_name(self.objective))
        ax.set_title(f"trade-off: {display_name(self.objective)} vs {self.swept}")
        ax.legend(frameon=False)
        if path is not None:
            ax.figure.tight_layout()
            ax.figure.savefig(path, dpi=100)
            plt.close(ax.figure)
        return ax


def _probabilities(est, X, classes):
    """``est.predict_proba(X)`` with columns in the order of ``classes``."""
    P = np.asarray(est.predict_proba(X), dtype=float)
    est_classes = np.asarray(getattr(est, "classes_", classes))
    missing = [c for c in classes if c not in set(est_classes.tolist())]
    if missing:
        raise ValueError(f"the base estimator does not know the classes {missing} of y")
    return P[:, [int(np.flatnonzero(est_classes == c)[0]) for c in classes]]


class _Sweep:
    """Solve the goals for one goal set after another on fixed probabilities.

    The first point is a plain ``GoalClassifier("precomputed").fit``; the others reuse its
    confusion space, cells and oracle (the data do not change along the sweep) and run the
    method on the new goals only, starting column generation from every column found so far.
    """

    def __init__(self, template, P, y, sensitive_features, sample_weight, warm_start):
        self.template, self.P, self.y = template, P, y
        self.sf, self.sw, self.warm_start = sensitive_features, sample_weight, warm_start
        self.first = None
        self.pool_members, self.pool_C = [], []

    def fit(self, constraints):
        import copy
        import warnings

        from ..classifiers import RandomizedClassifier, encode_labels
        from ..estimators import GoalClassifier
        from ..methods.baselines import BASELINES
        from ..methods.plugin import PluginOracle, ThresholdOracle, solve

        t = self.template
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # infeasible points are rows with violations
            if self.first is None:
                m = GoalClassifier("precomputed", objective=t.objective, constraints=constraints, method=t.method,
                                   oracle=t.oracle, method_params=t.method_params, random_state=t.random_state)
                m.fit(self.P, self.y, sensitive_features=self.sf, sample_weight=self.sw)
                if m.method_ in BASELINES:
                    raise ValueError(f"method {m.method_!r} ignores the constraints: no trade-off to sweep")
                self.first, self.method = m, m.method_
                enc, space = m.classifier_.cell_encoder, m.problem_.space
                cells = enc.transform(self.sf, len(self.y))
                oracle_cls = ThresholdOracle if t.oracle == "threshold" else PluginOracle
                sw = None if self.sw is None else np.asarray(self.sw, dtype=float)
                self.oracle = oracle_cls(self.P, encode_labels(self.y, m.classes_), cells, space, sw)
            else:
                m = copy.copy(self.first)
                m.constraints = constraints
                m.problem_ = Problem(t.objective, constraints).compile(self.first.problem_.space)
                params = dict(t.method_params or {})
                if self.warm_start and self.method == "column_generation":
                    params["warm_start"] = (self.pool_members, np.array(self.pool_C))
                self.oracle.n_calls = 0
                m.result_ = solve(m.problem_, self.oracle, self.method, **params)
                m.history_ = m.result_.history
                m.classifier_ = RandomizedClassifier(m.result_.members, m.result_.weights, m.classes_,
                                                     self.first.classifier_.cell_encoder,
                                                     self.first.classifier_.probability_model)
                m.feasible_ = m.problem_.max_violation(m.result_.confusion) <= 1e-7
        if self.method == "column_generation":
            self.pool_members += list(m.result_.members)
            self.pool_C += list(m.result_.confusions)
        return m


class _Validation:
    """Goal values of sweep points on validation data, as :meth:`GoalClassifier.evaluate`
    (:func:`goalfit.metrics.evaluate_problem` on the expected predictions); each member's
    predictions are computed once (members recur along a warm-started sweep)."""

    def __init__(self, P, y, sensitive_features, confidence=None):
        self.P, self.y, self.sf = P, np.asarray(y), sensitive_features
        self.confidence = confidence
        self.cache = {}
        self.cells = None

    def evaluate(self, m, constraints):
        from ..metrics import evaluate_problem

        clf = m.classifier_
        if self.cells is None:
            self.cells = clf.cell_encoder.transform(self.sf, len(self.y))
        for member in clf.members:
            if id(member) not in self.cache:  # the member is kept alive with its predictions
                self.cache[id(member)] = (member, member.predict_codes(self.P, self.P, self.cells))
        dist = clf._distribution(np.stack([self.cache[id(mb)][1] for mb in clf.members]))
        return evaluate_problem(Problem(m.objective, constraints), self.y, dist, sensitive_features=self.sf,
                                classes=m.classes_, confidence=self.confidence)


def frontier(estimator, X, y, *, sensitive_features=None, bounds=None, constraint: int = 0, goal_sets=None,
             X_val=None, y_val=None, sensitive_features_val=None, sample_weight=None,
             warm_start: bool = True, confidence: float | None = None) -> Frontier:
    """Trade-off curve: refit the goals for a sweep of one constraint's bound (or of goal sets).

    Parameters
    ----------
    estimator : GoalClassifier
        The template: its objective, constraints, method, oracle and base estimator. Its base
        estimator is fitted once on ``(X, y)`` (or used as is when ``prefit=True``, when the
        template is already fitted, or with ``estimator="precomputed"``, where ``X`` holds
        the class probabilities). ``holdout`` and ``oracle="refit"`` are not supported (they
        refit the base model).
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    sensitive_features : optional
    bounds : array-like of float, optional
        Values for ``estimator.constraints[constraint].bound`` (the number the expression is
        compared with, rates moved to the left). The estimator's own bound is added when absent
        and becomes the chosen point.
    constraint : int, default 0
        Which constraint ``bounds`` sweeps.
    goal_sets : list of lists of Constraint, optional
        Instead of ``bounds``: one point per list of constraints (same expressions in each).
    X_val, y_val, sensitive_features_val : optional
        Validation data: every goal is also measured there (``*_val`` columns).
    sample_weight : array-like of shape (n_samples,), optional
    warm_start : bool, default True
        Start column generation at each point from the columns of the points before.
    confidence : float in (0, 1), optional
        With validation data: confidence intervals of every validation value (columns
        ``<goal>_val_low`` / ``_val_high``, ``objective_val_low`` / ``_high``, and
        ``met_with_confidence_val``: every constraint's interval on the right side of its bound),
        as :meth:`GoalClassifier.evaluate` (:mod:`goalfit.metrics.intervals`).

    Returns
    -------
    Frontier
        ``table`` (pandas DataFrame), ``models``, ``chosen`` and ``plot``.

    Raises
    ------
    TypeError
        ``estimator`` is not a GoalClassifier.
    ValueError
        Neither or both of ``bounds`` / ``goal_sets``, no constraint to sweep, ``constraint``
        out of range, ``holdout`` or the refit oracle, ``group_blind``, ``confidence`` or
        ``margin`` set on ``estimator`` (the sweep's later points would drop them), row-count
        mismatches.
    """
    from ..estimators import GoalClassifier
    from ..estimators.goal_classifier import _fit_base

    t_start = time.perf_counter()
    if not isinstance(estimator, GoalClassifier):
        raise TypeError(f"frontier sweeps a GoalClassifier's goals, got {type(estimator).__name__}")
    if (bounds is None) == (goal_sets is None):
        raise ValueError("give exactly one of bounds=[...] (sweep one constraint's bound) or goal_sets=[[...], ...]")
    if estimator.holdout is not None or estimator.oracle == "refit":
        raise ValueError("frontier reuses one fitted base model: holdout and oracle='refit' refit it per point")
    unsupported = [name for name, off in (("group_blind", False), ("confidence", None), ("margin", None))
                   if getattr(estimator, name) != off]
    if unsupported:
        raise ValueError(f"frontier does not sweep with {unsupported}: fit GoalClassifier per goal set instead")
    check_consistent_rows(X=X, y=y, sensitive_features=sensitive_features, sample_weight=sample_weight)
    if X_val is not None:
        check_consistent_rows(X_val=X_val, y_val=y_val, sensitive_features_val=sensitive_features_val)
    y = np.asarray(y)
    classes = np.unique(y)
    constraints = list(estimator.constraints)
    if goal_sets is None:
        if not constraints:
            raise ValueError("the estimator has no constraint whose bound could be swept; add one or use goal_sets")
        if not -len(constraints) <= constraint < len(constraints):
            raise ValueError(f"constraint={constraint} but the estimator has {len(constraints)} constraint(s)")
        swept_c = constraints[constraint]
        own = float(swept_c.bound)
        grid = np.unique(np.append(np.asarray(bounds, dtype=float), own))
        grid = grid[::-1] if swept_c.sense == "<=" else grid  # loose to tight
        sets = []
        for b in grid:
            cons = list(constraints)
            cons[constraint] = Constraint(swept_c.expression, swept_c.sense, float(b))
            sets.append(cons)
        chosen = int(np.flatnonzero(grid == own)[0])
        swept = swept_c.expression.name
    else:
        sets = [list(s) for s in goal_sets]
        if not sets or not sets[0]:
            raise ValueError("goal_sets must be a non-empty list of non-empty constraint lists")
        grid = np.full(len(sets), np.nan)
        chosen = 0
        swept = sets[0][0].expression.name

    t0 = time.perf_counter()
    base = None
    if isinstance(estimator.estimator, str):
        if estimator.estimator != "precomputed":
            raise ValueError(f"estimator must be an estimator or 'precomputed', got {estimator.estimator!r}")
        P, P_val = np.asarray(X, dtype=float), None if X_val is None else np.asarray(X_val, dtype=float)
    else:
        if estimator.prefit:
            base = estimator._base()
            check_is_fitted(base)
        elif getattr(estimator, "estimator_", None) is not None:
            base = estimator.estimator_
        else:
            base = clone(estimator._base())
            _fit_base(base, X, y, None if sample_weight is None else np.asarray(sample_weight, dtype=float))
        P = _probabilities(base, X, classes)
        P_val = None if X_val is None else _probabilities(base, X_val, classes)
    base_fit_seconds = time.perf_counter() - t0

    rows, models = [], []
    sweep = _Sweep(estimator, P, y, sensitive_features, sample_weight, warm_start)
    val = None if P_val is None else _Validation(P_val, y_val, sensitive_features_val, confidence)
    for i, cons in enumerate(sets):
        t1 = time.perf_counter()
        m = sweep.fit(cons)
        seconds = time.perf_counter() - t1
        row = {"point": i, "bound": float(grid[i])}
        evals = {"train": evaluate_compiled(Problem(estimator.objective, cons), m.problem_, m.result_.confusion)}
        if val is not None:
            evals["val"] = val.evaluate(m, cons)
        for split, ev in evals.items():
            row[f"objective_{split}"] = ev["objective"]["value"]
            if "interval" in ev["objective"]:
                row[f"objective_{split}_low"], row[f"objective_{split}_high"] = ev["objective"]["interval"]
                row[f"met_with_confidence_{split}"] = all(c["met_with_confidence"] for c in ev["constraints"])
            for c in ev["constraints"]:
                row[f"{c['expression']}_{split}"] = c["value"]
                if "interval" in c:
                    row[f"{c['expression']}_{split}_low"], row[f"{c['expression']}_{split}_high"] = c["interval"]
            row[f"max_violation_{split}"] = max([c["violation"] for c in ev["constraints"]], default=0.0)
            row[f"feasible_{split}"] = row[f"max_violation_{split}"] <= 1e-7
            row[f"accuracy_{split}"] = ev["accuracy"]
        row.update({"n_members": len(m.result_.members), "oracle_calls": int(m.result_.n_oracle_calls),
                    "seconds": seconds})
        rows.append(row)
        models.append(m)
    method = sweep.method
    objective_name = Problem(estimator.objective, []).objective.name
    return Frontier(pd.DataFrame(rows), models, chosen, objective_name, swept, base, base_fit_seconds,
                    time.perf_counter() - t_start, {"method": method, "warm_start": bool(warm_start)})
