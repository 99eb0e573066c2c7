"""The data of one black-box metric problem: a model on training data, its surrogates, and the
goals on a selection sample (Jiang et al., ICML 2020, §2 scenarios (a) and (b)).

* :class:`SampleGoals` -- the objective and the constraint rows of a compiled problem on one
  labelled sample, evaluated from the scores of many models at once (their confusion tensors
  come from one :class:`goalfit.confusion.BatchConfusion` product). The objective is the
  compiled goal, or a metric known only by evaluation (:class:`goalfit.goals.BlackBoxMetric`:
  PRBEP, precision@K, a callable).
* :class:`BlackBoxProblem` -- a model family, K surrogates on the training data and the goals
  on the selection sample (the training sample itself in scenario (a), a validation sample in
  scenario (b)).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...confusion import BatchConfusion
from ...goals import FEASIBLE_TOL
from ...goals.blackbox import BlackBoxMetric
from .models import LinearScorer, TorchScorer
from .surrogates import DEFAULT_CHUNK_ELEMENTS, SurrogateSet, values_of_models

__all__ = ["BlackBoxProblem", "SampleGoals", "Assessment", "metric_groups"]


def metric_groups(data):
    """The groups a black-box metric with ``uses_groups`` reads, from prepared data's cells.

    Returns
    -------
    ndarray of shape (n_samples,) or None
        The values of the one slicing column of each row; the cell ids when there are several
        columns; None without slicing columns.
    """
    columns = list(data.encoder.columns_)
    if not columns:
        return None
    cells = np.asarray(data.cells, dtype=np.intp)
    if len(columns) == 1:
        return data.encoder.cells_[columns[0]].to_numpy()[cells]
    return cells


@dataclass
class Assessment:
    """One model's goals on a sample.

    Attributes
    ----------
    objective : float
        The objective (a loss, lower is better).
    max_violation : float
        The largest constraint violation in each goal's units (0 when all are met).
    rows : ndarray of shape (R,)
        The constraint rows ``A vec(C) - b`` (positive entries are violated rows).
    confusion : ndarray of shape (n_cells, 2, 2), or None
        None for a bare metric (known by evaluation only, no confusion matrix).
    """

    objective: float
    max_violation: float
    rows: np.ndarray
    confusion: np.ndarray | None

    @property
    def feasible(self) -> bool:
        return self.max_violation <= FEASIBLE_TOL

    def key(self):
        """Feasible first (by objective), else by violation then objective (the order of
        :func:`goalfit.methods.derandomize.rank`)."""
        return (0.0 if self.feasible else self.max_violation, self.objective)


class SampleGoals:
    """The goals of a compiled binary problem on one labelled sample, evaluated from scores.

    A score ``s > 0`` predicts the positive class (code 1). For scores of m models, shape
    (m, n), :meth:`values` returns the objective and the R polyhedral constraint rows
    ``A vec(C) - b`` of each, shape (m, 1 + R); :meth:`evaluate_many` the objective alone (the
    black-box metric protocol).

    Parameters
    ----------
    data : PreparedData
        The sample: class codes, cells, sample weights (:func:`goalfit.fit.prepare`).
    compiled : CompiledProblem
        The goals bound to ``data.space``.
    metric : BlackBoxMetric, optional
        The objective when it is known only by evaluation (on 0/1 labels, scores and, when it
        ``uses_groups``, :func:`metric_groups`); default the compiled objective.

    Raises
    ------
    ValueError
        For a non-binary sample or a constraint without polyhedral form.
    """

    def __init__(self, data, compiled, metric=None):
        if data.n_classes != 2:
            raise ValueError(f"the surrogate goals are binary; the sample has {data.n_classes} classes")
        if compiled.nonlinear:
            raise ValueError(f"constraint {compiled.nonlinear[0].name!r} has no polyhedral form")
        self.compiled, self.metric = compiled, metric
        self.y = np.asarray(data.y_codes == 1, dtype=int)
        self.n = data.n_samples
        self.sample_weight = data.sample_weight
        self.confusion = BatchConfusion(data.y_codes, data.cells, data.encoder.n_cells, data.sample_weight)
        self.A, self.b = compiled.A, compiled.b
        self.groups = metric_groups(data) if metric is not None and metric.uses_groups else None
        self.name = compiled.objective.name if metric is None else metric.name

    @property
    def n_rows(self) -> int:
        return self.compiled.n_rows

    def _objective(self, S, Cs):
        if self.metric is None:
            return np.asarray(self.compiled.objective.values(Cs), dtype=float)
        return np.asarray(self.metric.evaluate_many(self.y, S, self.groups), dtype=float)

    def values(self, S) -> np.ndarray:
        """Objective and constraint rows of the models with scores ``S`` (m, n); shape (m, 1 + R)."""
        S = np.atleast_2d(S)
        Cs = self.confusion.tensors(S > 0)
        out = np.empty((len(S), 1 + self.n_rows))
        out[:, 0] = self._objective(S, Cs)
        if self.n_rows:
            out[:, 1:] = Cs.reshape(len(S), -1) @ self.A.T - self.b
        return out

    def assess_many(self, S):
        """Objective and largest constraint violation (in each goal's units) of the models with
        scores ``S`` (m, n); two arrays of shape (m,)."""
        S = np.atleast_2d(S)
        Cs = self.confusion.tensors(S > 0)
        viol = np.array([self.compiled.max_violation(C) for C in Cs]) if self.compiled.constraints else \
            np.zeros(len(S))
        return self._objective(S, Cs), viol

    def evaluate_many(self, y_true, S, groups=None) -> np.ndarray:
        """The objective of the models with scores ``S`` (m, n), shape (m,) (``y_true`` and
        ``groups`` are the sample's own and are not read)."""
        return self.values(S)[:, 0]

    def assess(self, scores) -> Assessment:
        """Objective, violation, rows and confusion tensor of one model's scores (n,)."""
        s = np.asarray(scores, dtype=float)[None, :]
        C = self.confusion.tensors(s > 0)[0]
        obj = float(self._objective(s, C[None])[0])
        rows = self.compiled.row_violations(C)
        return Assessment(obj, float(self.compiled.max_violation(C)), rows, C)


@dataclass
class BlackBoxProblem:
    """A model family, K surrogates on the training data and the goals on a selection sample.

    Attributes
    ----------
    scorer : LinearScorer or TorchScorer
        The model on the training data.
    surrogates : SurrogateSet
        Bound to the training labels (+-1) and slices.
    metric : SampleGoals or BlackBoxMetric
        The goals on the selection sample (:class:`SampleGoals`), or a bare metric (a loss,
        lower is better) evaluated on ``y_val`` and ``groups_val``.
    val_scorer : scorer
        The model on the selection sample (the training scorer itself in scenario (a)).
    y_val : array of shape (n_val,)
        Selection labels in {0, 1} (read by a bare metric only).
    groups_val : array of shape (n_val,), optional
        Groups a bare metric uses.
    same_sample : bool
        Whether the selection sample is the training sample (finite differences, Alg. 2,
        and the two-point estimator need it).
    chunk_elements : int
        Scores held at once when evaluating many models.
    """

    scorer: LinearScorer | TorchScorer
    surrogates: SurrogateSet
    metric: SampleGoals | BlackBoxMetric
    val_scorer: LinearScorer | TorchScorer
    y_val: np.ndarray | None = None
    groups_val: np.ndarray | None = None
    same_sample: bool = False
    chunk_elements: int = DEFAULT_CHUNK_ELEMENTS

    @property
    def n_params(self) -> int:
        return self.scorer.n_params

    @property
    def n_rows(self) -> int:
        """Constraint rows R of the goals (0 for a bare metric)."""
        return int(getattr(self.metric, "n_rows", 0))

    def phi(self, theta) -> np.ndarray:
        """Surrogate profile ``phi(theta)``, shape (K,)."""
        return self.surrogates.values(self.scorer.scores(theta))

    def phi_many(self, Theta) -> np.ndarray:
        """Surrogate profiles of many models (m, d) -> (m, K), chunked."""
        return values_of_models(self.scorer.scores_many, Theta, lambda S: self.surrogates.values(S, overwrite=True),
                                n_examples=self.scorer.n, chunk_elements=self.chunk_elements)

    def _values_of_scores(self, S):
        if hasattr(self.metric, "values"):
            return self.metric.values(S)
        return np.asarray(self.metric.evaluate_many(self.y_val, S, self.groups_val), dtype=float)[:, None]

    def values_many(self, Theta) -> np.ndarray:
        """Objective and constraint rows on the selection sample of many models (m, d) -> (m, 1 + R), chunked."""
        return values_of_models(self.val_scorer.scores_many, np.atleast_2d(Theta), self._values_of_scores,
                                n_examples=self.val_scorer.n, chunk_elements=self.chunk_elements)

    def assess(self, theta) -> Assessment:
        """One model's objective, violation and constraint rows on the selection sample."""
        s = self.val_scorer.scores(theta)
        if hasattr(self.metric, "assess"):
            return self.metric.assess(s)
        v = float(np.asarray(self.metric.evaluate_many(self.y_val, s[None, :], self.groups_val))[0])
        return Assessment(v, 0.0, np.zeros(0), None)

    def metric_value(self, theta) -> float:
        """Selection objective ``M(theta)``."""
        return float(self._values_of_scores(self.val_scorer.scores(theta)[None, :])[0, 0])

    def metric_many(self, Theta) -> np.ndarray:
        """Selection objective of many models (m, d) -> (m,), chunked."""
        return self.values_many(Theta)[:, 0]

    def values_of_train_scores(self, S) -> np.ndarray:
        """Objective and rows of training-sample scores (m, n) -> (m, 1 + R); only when ``same_sample``.

        Raises
        ------
        ValueError
            If the goals are measured on another sample than the surrogates.
        """
        if not self.same_sample:
            raise ValueError("this gradient estimator perturbs training scores, so the metric must be "
                             "measured on the training sample (no separate validation set); use "
                             "the linear-interpolation estimator (Alg. 3) instead")
        return self._values_of_scores(np.atleast_2d(S))

    def metric_of_train_scores(self, S) -> np.ndarray:
        """Objective of training-sample scores (m, n) -> (m,); only when ``same_sample``."""
        return self.values_of_train_scores(S)[:, 0]
