"""Joint models ``P(A = a, Y = y | x)`` for the group-blind plug-in (``GoalClassifier(group_blind=True)``).

The joint label of an example in cell ``a`` with class code ``y`` is ``a * n_classes + y``
(cell-major, the order of :class:`~goalfit.methods.plugin.group_blind.GroupBlindOracle`'s
``(n_cells, n_classes)`` blocks). Two ways to estimate it (``benchmarks/group_blind.py``
measures both):

* ``"factored"`` (the default): :class:`FactoredJointClassifier`,
  ``P(Y = y | x) * P(A = a | x, Y = y)`` with one model of ``Y`` on all rows (the base model's
  own task, at its own accuracy) and, per class ``y``, one model of ``A`` on the rows of class
  ``y``; about two base fits in all;
* ``"product"``: one multiclass model on the joint label (``n_cells * n_classes`` classes; for
  a boosted model, ``n_cells * n_classes`` trees per round).

With logistic regression the two are within noise of each other; with a boosted model the
factored one was more accurate on test and faster to fit, with no detectable difference in the
test violation (see benchmarks/README.md, section "Measurements behind the library's choices").
"""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone

from ..methods.plugin import JOINT_MODELS  # noqa: F401 (the joint models of method_params["joint_model"])
from ..utils.fitting import fit_weighted
from ..utils.rows import take_rows
from .probabilities import aligned_proba


class FactoredJointClassifier(ClassifierMixin, BaseEstimator):
    """``P(A = a, Y = y | x) = P(Y = y | x) P(A = a | x, Y = y)`` from one base estimator.

    Parameters
    ----------
    estimator : classifier with ``predict_proba``
        Cloned for ``P(Y | x)`` and for each ``P(A | x, Y = y)``.
    n_classes : int
        Number of classes ``K`` of ``Y``; the joint label is ``a * K + y``.
    n_cells : int
        Number of groups (cells) ``G``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_cells * n_classes,)
        ``arange(G * K)``.
    label_model_ : fitted estimator of ``P(Y | x)``
    group_models_ : list of length K
        Fitted estimator of ``P(A | x, Y = y)`` per class, or an int (the only cell seen with
        that class, probability 1), or None (class absent).
    n_features_in_, feature_names_in_
        Those of ``label_model_``, when it has them.
    """

    def __init__(self, estimator, n_classes, n_cells):
        self.estimator = estimator
        self.n_classes = n_classes
        self.n_cells = n_cells

    def fit(self, X, y, sample_weight=None):
        """Fit on joint labels ``y = a * n_classes + class`` (shape (n_samples,))."""
        z = np.asarray(y, dtype=np.intp)
        K, G = int(self.n_classes), int(self.n_cells)
        if z.min() < 0 or z.max() >= G * K:
            raise ValueError(f"joint labels must lie in [0, {G * K}), got [{z.min()}, {z.max()}]")
        yy, aa = z % K, z // K
        sw = None if sample_weight is None else np.asarray(sample_weight, float)
        self.label_model_ = clone(self.estimator)
        fit_weighted(self.label_model_, X, yy, sw)
        self.group_models_: list = []  # per class: None (no rows), the one group seen, or a fitted model
        for k in range(K):
            rows = np.flatnonzero(yy == k)
            seen = np.unique(aa[rows])
            if len(seen) == 0:
                self.group_models_.append(None)
            elif len(seen) == 1:
                self.group_models_.append(int(seen[0]))
            else:
                m = clone(self.estimator)
                fit_weighted(m, take_rows(X, rows), aa[rows], None if sw is None else sw[rows])
                self.group_models_.append(m)
        self.classes_ = np.arange(G * K)
        for attr in ("n_features_in_", "feature_names_in_"):  # what the base model saw
            if hasattr(self.label_model_, attr):
                setattr(self, attr, getattr(self.label_model_, attr))
        return self

    def predict_proba(self, X) -> np.ndarray:
        """Joint probabilities, shape (n_samples, n_cells * n_classes), cell-major."""
        K, G = int(self.n_classes), int(self.n_cells)
        Py = aligned_proba(self.label_model_, X, np.arange(K))
        out = np.zeros((Py.shape[0], G, K))
        for k, m in enumerate(self.group_models_):
            if m is None:
                continue
            if isinstance(m, int):
                out[:, m, k] = Py[:, k]
            else:
                out[:, :, k] = Py[:, [k]] * aligned_proba(m, X, np.arange(G))
        return out.reshape(len(Py), G * K)

    def predict(self, X):
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]
