"""The data of one black-box metric problem: a model on training data, its surrogates, and the
metric on a validation sample (Jiang et al., ICML 2020, §2 scenarios (a) and (b))."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .surrogates import DEFAULT_CHUNK_ELEMENTS, SurrogateSet, values_of_models

__all__ = ["BlackBoxProblem"]


@dataclass
class BlackBoxProblem:
    """A model family, K surrogates on the training data and a metric on validation data.

    Attributes
    ----------
    scorer : LinearScorer or TorchScorer
        The model on the training data.
    surrogates : SurrogateSet
        Bound to the training labels (+-1) and group masks.
    metric : BlackBoxMetric
        Loss, lower is better.
    val_scorer : scorer
        The model on the validation data (the training scorer itself in scenario (a)).
    y_val : array of shape (n_val,)
        Validation labels in {0, 1}.
    groups_val : array of shape (n_val,), optional
        Group codes the metric uses.
    same_sample : bool
        Whether the metric is measured on the training sample (finite differences, Alg. 2,
        and the two-point estimator need it).
    chunk_elements : int
        Scores held at once when evaluating many models.
    """

    scorer: object
    surrogates: SurrogateSet
    metric: object
    val_scorer: object
    y_val: np.ndarray
    groups_val: np.ndarray | None = None
    same_sample: bool = False
    chunk_elements: int = DEFAULT_CHUNK_ELEMENTS

    @property
    def n_params(self) -> int:
        return self.scorer.n_params

    def phi(self, theta) -> np.ndarray:
        """Surrogate profile ``phi(theta)``, shape (K,)."""
        return self.surrogates.values(self.scorer.scores(theta))

    def phi_many(self, Theta) -> np.ndarray:
        """Surrogate profiles of many models (m, d) -> (m, K), chunked."""
        return values_of_models(self.scorer.scores_many, Theta, lambda S: self.surrogates.values(S, overwrite=True),
                                n_examples=self.scorer.n, chunk_elements=self.chunk_elements)

    def metric_value(self, theta) -> float:
        """Validation metric ``M(theta)``."""
        return float(self.metric(self.y_val, self.val_scorer.scores(theta), self.groups_val))

    def metric_many(self, Theta) -> np.ndarray:
        """Validation metric of many models (m, d) -> (m,), chunked."""
        return values_of_models(self.val_scorer.scores_many, Theta,
                                lambda S: self.metric.evaluate_many(self.y_val, S, self.groups_val),
                                n_examples=self.val_scorer.n, chunk_elements=self.chunk_elements)

    def metric_of_train_scores(self, S) -> np.ndarray:
        """Metric of training-sample scores (m, n) -> (m,); only when ``same_sample``.

        Raises
        ------
        ValueError
            If the metric is measured on another sample than the surrogates.
        """
        if not self.same_sample:
            raise ValueError("this gradient estimator perturbs training scores, so the metric must be "
                             "measured on the training sample (no separate validation set); use "
                             "the linear-interpolation estimator (Alg. 3) instead")
        return self.metric.evaluate_many(self.y_val, S, self.groups_val)
