"""Trade-off curves: sweep a constraint's bound reusing one fitted base model.

A plug-in classifier of :class:`~goalfit.GoalClassifier` is a post-processing of a class-
probability model (Narasimhan et al., JMLR 2024, §4): the base model does not depend on the
goals. A frontier therefore fits the template once (base model, cross-fitting, joint model when
group-blind) and solves the goals for each other bound on the probabilities that fit kept
(:meth:`GoalClassifier.with_goals`); column generation starts each point from the columns found
at the previous points (``warm_start``), so a point costs a few pricing rounds.
The peers' versions: OxonFair's ``compute_frontier`` / ``plot_frontier``, error-parity's
``compute_postprocessing_curve`` / ``plot_postprocessing_frontier``.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.frozen import FrozenEstimator

from ..fit import Progress, as_seed
from ..goals import FEASIBLE_TOL, Problem
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
        The fitted classifier of each point (on raw features; on probabilities for a
        ``"precomputed"`` template). They share one base model.
    chosen : int
        The point at the estimator's own bound (for ``goal_sets``: the first set).
    objective, swept : str
        Names of the objective and of the swept constraint's expression.
    base_estimator : fitted estimator or None
        The shared base model (``estimator_`` of the models; None for ``"precomputed"``).
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
        """Point ``i``'s fitted GoalClassifier (default :attr:`chosen`).

        Parameters
        ----------
        i : int, optional
            Row of :attr:`table`.
        """
        return self.models[self.chosen if i is None else i]

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
        from ..goals.metrics import loss_label  # "1 - F1": what the objective column holds

        ax.set_xlabel(self.swept)
        ax.set_ylabel(f"{loss_label(self.objective)} (minimized)")
        ax.set_title(f"trade-off: {loss_label(self.objective)} vs {self.swept}")
        ax.legend(frameon=False)
        if path is not None:
            ax.figure.tight_layout()
            ax.figure.savefig(path, dpi=100)
            plt.close(ax.figure)
        return ax


class _Validation:
    """Goal values of the sweep's points on validation data, as :meth:`GoalClassifier.evaluate`
    computes them, with the probabilities, the cells and each member's predictions computed
    once (the points share one probability model; members recur along a warm-started sweep)."""

    def __init__(self, first, X, y, sensitive_features, confidence):
        clf = first.classifier_
        self.X, self.y, self.sf, self.confidence = X, y, sensitive_features, confidence
        self.P = clf.probability_model.predict_proba(X)
        self.cells = clf.prediction_cells(len(self.P), sensitive_features)
        self.codes = {}  # id(member) -> (member, its predictions); the member keeps the id alive

    @staticmethod
    def applies(m) -> bool:
        """Whether the fit's rule is a mixture of members on one probability model (the plug-in's)."""
        clf = m.classifier_
        return all(hasattr(clf, a) for a in ("probability_model", "prediction_cells", "distribution_of_codes")) \
            and clf.probability_model is not None

    def evaluate(self, m, constraints):
        from ..metrics import evaluate_problem

        clf = m.classifier_
        for member in clf.members:
            if id(member) not in self.codes:
                self.codes[id(member)] = (member, member.predict_codes(self.X, self.P, self.cells))
        dist = clf.distribution_of_codes(self.X, np.stack([self.codes[id(mb)][1] for mb in clf.members]))
        goals = Problem(m.objective, constraints).resolved(m.problem_.space)  # as fitted (micro-F1's class)
        return evaluate_problem(goals, self.y, dist, sensitive_features=self.sf,
                                classes=m.classes_, confidence=self.confidence, random_state=as_seed(m.random_state))


def frontier(estimator, X, y, *, sensitive_features=None, bounds=None, constraint: int = 0, goal_sets=None,
             X_val=None, y_val=None, sensitive_features_val=None, sample_weight=None,
             warm_start: bool = True, confidence: float | None = None, verbose: int = 0) -> Frontier:
    """Trade-off curve: refit the goals for a sweep of one constraint's bound (or of goal sets).

    Parameters
    ----------
    estimator : a goalfit estimator
        The template: its objective, constraints, method and options. It is fitted on
        ``(X, y)`` at the first point (a template that is already fitted lends its fitted base
        model ``estimator_``, frozen); the other points re-solve on that fit's state when the
        estimator can (:meth:`GoalClassifier.with_goals`: no refit of the base model), and are
        fitted afresh otherwise (every other estimator). ``confidence`` is not supported (each
        point would need its own certification).
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    sensitive_features : optional
    bounds : array-like of float, optional
        Bounds for ``estimator.constraints[constraint]``, as it is written (the number the
        expression is compared with, rates moved to the left; the score for a metric named by
        one: ``[0.5, 0.6, 0.7]`` sweeps ``gmean() >= 0.6``). The estimator's own bound is added
        when absent and becomes the chosen point.
    constraint : int, default 0
        Which constraint ``bounds`` sweeps.
    goal_sets : list of lists of Constraint, optional
        Instead of ``bounds``: one point per list of constraints (same expressions in each).
    X_val, y_val, sensitive_features_val : optional
        Validation data: every goal is also measured there (``*_val`` columns).
    sample_weight : array-like of shape (n_samples,), optional
    warm_start : bool, default True
        Start column generation at each point from the columns of the points before.
    verbose : int, default 0
        0: silent; 1: a line per point (its bound, training objective and worst violation).
    confidence : float in [0.5, 1), optional
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
        ``estimator`` is not a goalfit estimator (no ``objective`` and ``constraints``).
    ValueError
        Neither or both of ``bounds`` / ``goal_sets``, no constraint to sweep, ``constraint``
        out of range, ``confidence`` set on ``estimator``, goal sets that state different
        expressions, a method that takes no constraints, row-count mismatches.
    """
    import warnings

    t_start = time.perf_counter()
    params = estimator.get_params(deep=False) if hasattr(estimator, "get_params") else {}
    if not {"objective", "constraints"} <= set(params):
        raise TypeError(f"frontier sweeps the goals of a goalfit estimator (with objective and constraints), got "
                        f"{type(estimator).__name__}")
    if (bounds is None) == (goal_sets is None):
        raise ValueError("give exactly one of bounds=[...] (sweep one constraint's bound) or goal_sets=[[...], ...]")
    if params.get("confidence") is not None:
        raise ValueError("frontier does not sweep with confidence (each point needs its own certification): "
                         "fit the estimator with confidence=... at the bound you choose")
    check_consistent_rows(X=X, y=y, sensitive_features=sensitive_features, sample_weight=sample_weight)
    if X_val is not None:
        check_consistent_rows(X_val=X_val, y_val=y_val, sensitive_features_val=sensitive_features_val)
    constraints = list(estimator.constraints)
    if goal_sets is None:
        if not constraints:
            raise ValueError("the estimator has no constraint whose bound could be swept; add one or use goal_sets")
        if not -len(constraints) <= constraint < len(constraints):
            raise ValueError(f"constraint={constraint} but the estimator has {len(constraints)} constraint(s)")
        swept_c = constraints[constraint]
        sense, own = swept_c.shown  # as written: the score's bound for gmean() >= 0.6
        grid = np.unique(np.append(np.asarray(bounds, dtype=float), float(own)))
        grid = grid[::-1] if sense == "<=" else grid  # loose to tight
        sets = []
        for b in grid:
            cons = list(constraints)
            cons[constraint] = swept_c.with_bound(float(b))
            sets.append(cons)
        chosen = int(np.flatnonzero(grid == own)[0])
        swept = swept_c.expression.name
    else:
        sets = [list(s) for s in goal_sets]
        if not sets or not sets[0]:
            raise ValueError("goal_sets must be a non-empty list of non-empty constraint lists")
        first_names = [c.expression.name for c in sets[0]]
        for k, cons in enumerate(sets[1:], start=1):
            names = [c.expression.name for c in cons]
            if names != first_names:
                raise ValueError(f"goal_sets[{k}] states {names}, goal_sets[0] {first_names}: every set must bound the "
                                 "same expressions, in the same order (a frontier is one curve)")
        grid = np.full(len(sets), np.nan)
        chosen = 0
        swept = sets[0][0].expression.name

    template = clone(estimator).set_params(constraints=sets[0])
    lent = getattr(estimator, "estimator_", None)
    if lent is not None and "estimator" in params and not isinstance(params["estimator"], str):
        template.set_params(estimator=FrozenEstimator(lent))  # a fitted template lends its base model
    rows, models = [], []
    pool: tuple[list, list] = ([], [])  # (members, confusions) of the fitted points
    val = None
    progress = Progress(verbose, who="frontier")
    progress.phase(f"sweeping {swept}", len(sets), unit="point")
    for i, cons in enumerate(sets):
        t1 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # infeasible points are rows with violations
            if i == 0:
                m = first = template.fit(X, y, sensitive_features=sensitive_features, sample_weight=sample_weight)
            elif hasattr(first, "with_goals"):
                warm = pool if warm_start and first.method_ == "column_generation" else None
                m = first.with_goals(cons, warm_start=warm)
            else:
                m = clone(template).set_params(constraints=cons).fit(X, y, sensitive_features=sensitive_features,
                                                                      sample_weight=sample_weight)
        seconds = time.perf_counter() - t1 - getattr(m, "base_fit_seconds_", 0.0)
        if m.method_ == "column_generation":
            pool[0].extend(m.result_.members)
            pool[1].extend(m.result_.confusions)
        row = {"point": i, "bound": float(grid[i])}
        goals = Problem(estimator.objective, cons)  # the stated bounds (m.problem_ holds them less a margin)
        evals = {"train": evaluate_compiled(goals, goals.compile(m.problem_.space), m.result_.confusion)}
        if X_val is not None and hasattr(first, "with_goals") and _Validation.applies(m):
            val = val or _Validation(m, X_val, y_val, sensitive_features_val, confidence)
            evals["val"] = val.evaluate(m, cons)
        elif X_val is not None:
            evals["val"] = m.evaluate(X_val, y_val, sensitive_features=sensitive_features_val, confidence=confidence)
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
            row[f"feasible_{split}"] = row[f"max_violation_{split}"] <= FEASIBLE_TOL
            row[f"accuracy_{split}"] = ev["accuracy"]
        row.update({"n_members": len(m.result_.members), "oracle_calls": int(m.result_.n_oracle_calls),
                    "seconds": seconds})
        rows.append(row)
        models.append(m)
        progress.update(i + 1, objective=row["objective_train"], max_violation=row["max_violation_train"],
                        bound=float(grid[i]), force=True)
    progress.done(f"{len(sets)} points")  # the sweep's own duration, then the total
    objective_name = Problem(estimator.objective, []).objective.name
    base = getattr(first, "estimator_", None)
    return Frontier(pd.DataFrame(rows), models, chosen, objective_name, swept, base,
                    getattr(first, "base_fit_seconds_", first.fit_seconds_),
                    time.perf_counter() - t_start, {"method": first.method_, "warm_start": bool(warm_start)})
