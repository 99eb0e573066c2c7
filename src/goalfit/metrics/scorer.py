"""A scikit-learn scorer that knows the goals: model selection that never prefers a violator.

``GridSearchCV(GoalClassifier(...), {"constraints": [...]}, scoring=goal_scorer())`` scores each
candidate on the validation fold by its objective *when its constraints hold there* and ranks
violators last; with ``confidence`` a constraint "holds" unless its confidence interval on the
fold lies entirely on the wrong side of the bound (the fold cannot show a violation), which keeps
noise on small folds from discarding good models.
"""
from __future__ import annotations

from sklearn.utils.metadata_routing import MetadataRequest

__all__ = ["GoalScorer", "goal_scorer", "VIOLATION_PENALTY"]

#: Offset subtracted from the score of a model that violates a constraint on the fold.
VIOLATION_PENALTY = 1000.0


class GoalScorer:
    """Scorer ``scorer(estimator, X, y, *, sensitive_features=None, sample_weight=None)``.

    Greater is better (scikit-learn's convention):

    * every constraint holds on the fold: ``-objective``, minus the minimized loss (objectives
      are losses). For an objective named by a score this is ``score - 1``: with
      ``objective="f1"`` a fold with F1 = 0.8 scores ``-(1 - 0.8) = -0.2``, and
      ``GridSearchCV.best_score_ + 1`` is the mean F1 of the best candidate. It ranks
      candidates as F1 itself would; it is kept as ``-loss`` (not F1) so that every objective,
      a loss such as ``"error"`` included, is scored on one scale and scores printed by earlier
      versions do not change;
    * otherwise: ``-VIOLATION_PENALTY * (1 + max_violation) - objective``, below every
      feasible score, and lower the larger the violation (``max_violation`` in the units of
      the goals: a constraint ``f1() >= 0.7`` met at F1 = 0.65 violates by 0.05).

    Parameters
    ----------
    objective, constraints : optional
        The goals to score by. Default: the estimator's own (``estimator.objective`` /
        ``estimator.constraints``, e.g. a :class:`~goalfit.GoalClassifier`, or the last step of
        a pipeline ending in one).
    confidence : float in [0.5, 1), optional
        Judge each constraint with its two-sided interval at this level on the fold
        (:mod:`goalfit.metrics.intervals`): violated only when the whole interval breaks the
        bound; the violation is then the distance from the interval to the bound.
    tolerance : float, default 0
        Violations up to ``tolerance`` count as met.

    Notes
    -----
    Metadata routing: with ``sklearn.set_config(enable_metadata_routing=True)`` the scorer
    requests ``sensitive_features`` and ``sample_weight`` for ``score``, so
    ``GridSearchCV(...).fit(X, y, sensitive_features=s)`` routes the fold's groups to it (the
    estimator must also request them: ``set_fit_request(sensitive_features=True)``).
    Predictions are the expected class distribution (``predict_proba`` of a goalfit
    randomized classifier, alone or as the last step of a pipeline: exact expectation), else
    the estimator's ``predict``.

    Raises
    ------
    ValueError
        When called, if the goals need groups and no ``sensitive_features`` reached the scorer (the message
        says how to route them).
    """

    def __init__(self, objective=None, constraints=None, *, confidence=None, tolerance=0.0):
        if confidence is not None:
            from ..utils.validation import check_confidence

            confidence = check_confidence(confidence)
        if tolerance < 0:
            raise ValueError(f"tolerance must be non-negative, got {tolerance!r}")
        self.objective, self.constraints = objective, constraints
        self.confidence, self.tolerance = confidence, tolerance

    def get_metadata_routing(self):
        req = MetadataRequest(owner=type(self).__name__)
        req.score.add_request(param="sensitive_features", alias=True)
        req.score.add_request(param="sample_weight", alias=True)
        return req

    def _goals(self, estimator):
        final = estimator.steps[-1][1] if hasattr(estimator, "steps") else estimator
        objective = self.objective if self.objective is not None else getattr(final, "objective", None)
        constraints = self.constraints if self.constraints is not None else getattr(final, "constraints", None)
        if objective is None or constraints is None:
            raise ValueError(f"goal_scorer: {type(final).__name__} has no objective/constraints; "
                             "pass them to goal_scorer(objective=..., constraints=[...])")
        return final, objective, constraints

    def __call__(self, estimator, X, y, *, sensitive_features=None, sample_weight=None) -> float:
        """Minus the objective's loss on ``(X, y)`` where the constraints hold, else below
        ``-VIOLATION_PENALTY`` (see the class docstring); greater is better."""
        from ..goals import Problem
        from . import evaluate_problem

        final, objective, constraints = self._goals(estimator)
        problem = Problem(objective, constraints)
        try:
            if hasattr(final, "classifier_"):  # a goalfit classifier, alone or ending a pipeline
                Xt = X if final is estimator else estimator[:-1].transform(X)
                pred = final.predict_proba(Xt, sensitive_features=sensitive_features)
                classes = final.classes_
            else:
                pred, classes = estimator.predict(X), None
            ev = evaluate_problem(problem, y, pred, sensitive_features=sensitive_features,
                                  sample_weight=sample_weight, classes=classes, confidence=self.confidence)
        except ValueError as err:
            if sensitive_features is None:
                raise ValueError(
                    f"goal_scorer got no sensitive_features ({err}). Route them: "
                    "sklearn.set_config(enable_metadata_routing=True), estimator.set_fit_request("
                    "sensitive_features=True), and pass sensitive_features=... to fit / cross_val_score(params=...)"
                ) from err
            raise
        worst = 0.0
        for c in ev["constraints"]:
            v = c["violation"]
            if self.confidence is not None:
                lo, hi = c["interval"]
                v = max(0.0, lo - c["bound"]) if c["sense"] == "<=" else max(0.0, c["bound"] - hi)
            worst = max(worst, v)
        obj = float(ev["objective"]["value"])
        if worst <= self.tolerance:
            return -obj
        return -VIOLATION_PENALTY * (1.0 + worst) - obj


def goal_scorer(objective=None, constraints=None, *, confidence=None, tolerance=0.0) -> GoalScorer:
    """A :class:`GoalScorer` for ``GridSearchCV`` / ``cross_val_score`` (see its docstring).

    Greater is better: a candidate meeting its constraints scores minus its objective's loss
    (``-(1 - F1)`` for ``objective="f1"``, ``-error`` for ``"error"``); one breaking them scores
    below ``-VIOLATION_PENALTY``.

    Examples
    --------
    >>> from sklearn.model_selection import GridSearchCV
    >>> import goalfit as gf
    >>> search = GridSearchCV(gf.GoalClassifier(objective="f1"),
    ...                       {"constraints": [[gf.gmean() >= 0.6], [gf.gmean() >= 0.7]]},
    ...                       scoring=gf.metrics.goal_scorer())
    """
    return GoalScorer(objective, constraints, confidence=confidence, tolerance=tolerance)
