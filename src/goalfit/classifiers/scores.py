"""Rules on a real-valued score: the classifiers the in-training families deploy.

A binary rule predicts the positive class ``classes[1]`` where the score ``s(x)`` exceeds a
threshold; a randomized one predicts it with probability ``link(s(x))`` (the ramp of Goh et al.
Eq. 3). They expose the interface of :class:`~goalfit.classifiers.RandomizedClassifier` that
the estimators' result protocol reads: ``predict(X, sensitive_features=, random_state=)`` and
``predict_proba(X, sensitive_features=)`` (the distribution of what ``predict`` outputs). They
never read the sensitive features.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state


class LinearScorer:
    """``s(x) = <coef, Phi(x)> + intercept``, ``Phi`` a fitted feature map (or the identity).

    Parameters
    ----------
    coef : ndarray of shape (n_features_out,)
    intercept : float
    feature_map : fitted transformer or None
    """

    def __init__(self, coef, intercept, feature_map=None):
        self.coef = np.asarray(coef, dtype=float).ravel()
        self.intercept = float(intercept)
        self.feature_map = feature_map

    def features(self, X):
        """The (mapped) features as a float array or CSR matrix."""
        Z = X if self.feature_map is None else self.feature_map.transform(X)
        if hasattr(Z, "to_numpy"):
            Z = Z.to_numpy(dtype=float)
        return Z.tocsr().astype(float) if sp.issparse(Z) else np.asarray(Z, dtype=float)

    def __call__(self, X) -> np.ndarray:
        return np.asarray(self.features(X) @ self.coef).ravel() + self.intercept


class ScoreClassifier:
    """A binary rule on a score: deterministic ``s(x) > threshold``, or randomized by a link.

    Parameters
    ----------
    scorer : callable
        ``scorer(X)`` returns the scores, shape (n_samples,) (a :class:`LinearScorer`, a fitted
        model's ``decision_function``, ...).
    classes : ndarray of shape (2,)
    threshold : float, default 0.0
    link : callable or None
        None: deterministic. Otherwise ``link(s - threshold)`` in [0, 1] is the probability of
        the positive class (e.g. the ramp ``max(0, min(1, 1/2 + s))``).
    """

    def __init__(self, scorer, classes, threshold: float = 0.0, link=None):
        self.scorer = scorer
        self.classes = np.asarray(classes)
        self.threshold = float(threshold)
        self.link = link

    @property
    def is_deterministic(self) -> bool:
        return self.link is None

    def decision_function(self, X) -> np.ndarray:
        """``s(x) - threshold``, shape (n_samples,): positive where the rule predicts ``classes[1]``."""
        return np.asarray(self.scorer(X), dtype=float).ravel() - self.threshold

    def positive_probability(self, X) -> np.ndarray:
        """Probability of the positive class, shape (n_samples,)."""
        f = self.decision_function(X)
        return (f > 0).astype(float) if self.link is None else np.asarray(self.link(f), dtype=float)

    def predict_proba(self, X, *, sensitive_features=None) -> np.ndarray:
        """Class distribution of :meth:`predict`, shape (n_samples, 2) (one-hot when deterministic)."""
        p = self.positive_probability(X)
        return np.column_stack([1.0 - p, p])

    def predict(self, X, *, sensitive_features=None, random_state=None) -> np.ndarray:
        """Labels, shape (n_samples,); a randomized rule samples per example (seeded)."""
        p = self.positive_probability(X)
        pos = p > 0.5 if self.link is None else check_random_state(random_state).random_sample(len(p)) < p
        return self.classes[pos.astype(int)]


class ModelClassifier:
    """The deterministic rule of a fitted scikit-learn classifier (its ``predict``).

    Parameters
    ----------
    model : fitted classifier
    classes : ndarray of shape (n_classes,)
        The estimator's classes; ``model.predict`` must return labels among them.
    """

    def __init__(self, model, classes):
        self.model = model
        self.classes = np.asarray(classes)

    is_deterministic = True

    def predict(self, X, *, sensitive_features=None, random_state=None) -> np.ndarray:
        return np.asarray(self.model.predict(X))

    def predict_proba(self, X, *, sensitive_features=None) -> np.ndarray:
        """One-hot rows of :meth:`predict`, shape (n_samples, n_classes)."""
        pred = self.predict(X)
        out = np.zeros((len(pred), len(self.classes)))
        out[np.arange(len(pred)), np.searchsorted(self.classes, pred)] = 1.0
        return out
