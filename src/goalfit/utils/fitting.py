"""Fitting scikit-learn models with sample weights, pipelines included."""
from __future__ import annotations

from sklearn.pipeline import Pipeline


def fit_weighted(estimator, X, y, sample_weight=None):
    """Fit ``estimator`` on ``(X, y)`` with ``sample_weight``; returns the features its final step saw.

    A :class:`~sklearn.pipeline.Pipeline` is fitted step by step: its transformers on ``X``
    (unweighted, as ``Pipeline.fit`` does), its final estimator on the transformed features with
    the weights (``Pipeline.fit`` does not accept ``sample_weight`` directly).

    Parameters
    ----------
    estimator : scikit-learn estimator or Pipeline
        Fitted in place; its final step must accept ``sample_weight`` when weights are given.
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    sample_weight : array-like of shape (n_samples,), optional

    Returns
    -------
    array-like
        ``X`` transformed by the pipeline's transformers (``X`` itself for a plain estimator), so
        the caller can score the training rows without transforming them again.
    """
    if isinstance(estimator, Pipeline) and len(estimator.steps) > 1:
        Xt = estimator[:-1].fit_transform(X, y)
        final = estimator.steps[-1][1]
    else:
        Xt, final = X, estimator
    if sample_weight is None:
        final.fit(Xt, y)
    else:
        final.fit(Xt, y, sample_weight=sample_weight)
    return Xt


def final_step(estimator):
    """The last step of a pipeline (the estimator itself otherwise)."""
    return estimator.steps[-1][1] if isinstance(estimator, Pipeline) and len(estimator.steps) > 1 else estimator
