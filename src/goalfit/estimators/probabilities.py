"""How :class:`~goalfit.GoalClassifier` gets the class probabilities its plug-in methods read.

In-sample (the base model's probabilities on its own training rows, Narasimhan et al.'s
practice), held out (sample splitting, §6.6), or cross-fitted (out-of-fold probabilities, as
:func:`sklearn.model_selection.cross_val_predict`); the deployed probability model is the base
model, or the average of the fold models (:class:`FoldAverage`).
"""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.pipeline import Pipeline

from ..classifiers import probability_model
from ..utils.fitting import final_step, fit_weighted
from ..utils.rows import num_samples, take_rows

def is_linear(estimator) -> bool:
    """Whether the (final step of the) base estimator is a scikit-learn linear model."""
    final = estimator.steps[-1][1] if isinstance(estimator, Pipeline) else estimator
    return type(final).__module__.startswith("sklearn.linear_model")


def aligned_proba(estimator, X, classes) -> np.ndarray:
    """``estimator.predict_proba(X)`` with columns in the order of ``classes`` (0 for unseen classes)."""
    return probability_model(estimator, classes, allow_missing=True).predict_proba(X)


def fit_base(estimator, X, y, sample_weight) -> np.ndarray:
    """Fit the base model and return its class probabilities on ``X`` (its own column order).

    A pipeline's training features are transformed once (not again for ``predict_proba``) and
    ``sample_weight`` reaches its final step (:func:`goalfit.utils.fitting.fit_weighted`).
    """
    Xt = fit_weighted(estimator, X, y, sample_weight)
    return np.asarray(final_step(estimator).predict_proba(Xt), dtype=float)


def cross_fit(base, X, y, sample_weight, folds, classes, progress=None):
    """Out-of-fold class probabilities (columns in ``classes`` order) and the fold models.

    Each row's probabilities come from the model fitted on the folds that do not contain it
    (as :func:`sklearn.model_selection.cross_val_predict`); ``sample_weight`` and pipelines as
    in :func:`fit_base`. A fold model is scored on its held-out rows only (not on the rows it
    was fitted on).

    Returns
    -------
    (P, models) : ndarray of shape (n_samples, n_classes), list of fitted estimators

    Raises
    ------
    ValueError
        If the splitter does not put every row in exactly one test fold.
    """
    n = num_samples(X)
    P = np.full((n, len(classes)), np.nan)
    seen = np.zeros(n, dtype=int)
    models = []
    for k, (train, test) in enumerate(folds.split(np.zeros((n, 1)), y)):
        if progress is not None:
            progress.update(k + 1, force=True)
        m = clone(base)
        fit_weighted(m, take_rows(X, train), y[train], None if sample_weight is None else sample_weight[train])
        P[test] = aligned_proba(m, take_rows(X, test), classes)
        seen[test] += 1
        models.append(m)
    if not (seen == 1).all():
        raise ValueError("cv must be a partition: every row in exactly one test fold "
                         f"({int((seen == 0).sum())} rows in none, {int((seen > 1).sum())} in several)")
    return P, models


class FoldAverage(ClassifierMixin, BaseEstimator):
    """The deployed probability model of cross-fitting: the average of the fold models.

    ``predict_proba(X)`` is the mean over the fold models of their class probabilities
    (columns in ``classes_`` order), the model whose probabilities resemble the out-of-fold
    ones the goals were solved on (each fold model saw ``(K-1)/K`` of the rows).

    Parameters
    ----------
    estimators : list of fitted estimators
    classes : ndarray of shape (n_classes,)
    """

    def __init__(self, estimators, classes):
        self.estimators = estimators
        self.classes = classes
        self.estimators_ = estimators
        self.classes_ = np.asarray(classes)
        first = estimators[0]
        for attr in ("n_features_in_", "feature_names_in_"):
            if hasattr(first, attr):
                setattr(self, attr, getattr(first, attr))

    def predict_proba(self, X) -> np.ndarray:
        return np.mean([aligned_proba(m, X, self.classes_) for m in self.estimators_], axis=0)

    def predict(self, X):
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]
