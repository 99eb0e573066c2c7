"""Randomized classifiers: mixtures of deterministic members (Narasimhan et al. JMLR 2024, §1).

A randomized classifier ``h = sum_t w_t h_t`` predicts, for each example independently, the
prediction of member ``t`` with probability ``w_t``. Its *expected* confusion matrix
``sum_t w_t C[h_t]`` is exact; sampled predictions are reproducible for a given
``random_state``.
"""
from __future__ import annotations

import numpy as np
from sklearn.utils import check_random_state

from ..confusion import confusion_tensor


class ProbabilityModel:
    """The class-probability estimate the plug-in members read.

    Parameters
    ----------
    estimator : fitted classifier with ``predict_proba``, or None
        ``None`` means the features *are* the probabilities (``estimator="precomputed"``).
    class_index : ndarray of int, shape (n_classes,)
        Column of ``estimator.predict_proba`` that holds each class code.
    """

    def __init__(self, estimator, class_index):
        self.estimator = estimator
        self.class_index = np.asarray(class_index, dtype=np.intp)

    def predict_proba(self, X) -> np.ndarray:
        if self.estimator is None:
            P = np.asarray(X, dtype=float)
        else:
            P = np.asarray(self.estimator.predict_proba(X), dtype=float)[:, self.class_index]
        return P


class RandomizedClassifier:
    """A mixture of deterministic members with weights.

    Parameters
    ----------
    members : list
        Objects with ``predict_codes(X, proba, cell_ids)`` (see :mod:`.members`).
    weights : array-like of shape (n_members,)
        Non-negative, summing to 1.
    classes : ndarray of shape (n_classes,)
        Labels of the class codes.
    cell_encoder : CellEncoder
        Maps sensitive features to cells (the members' cost matrices depend on the cell).
    probability_model : ProbabilityModel

    Raises
    ------
    ValueError
        If weights are negative, do not sum to 1, or do not match the members.
    """

    def __init__(self, members, weights, classes, cell_encoder, probability_model):
        w = np.asarray(weights, dtype=float)
        if len(w) != len(members) or len(members) == 0:
            raise ValueError(f"{len(members)} members but {len(w)} weights")
        if (w < -1e-12).any() or abs(w.sum() - 1) > 1e-8:
            raise ValueError(f"weights must lie in the simplex, got sum {w.sum():.6g}")
        self.members = list(members)
        self.weights = np.clip(w, 0, None) / np.clip(w, 0, None).sum()
        self.classes = np.asarray(classes)
        self.cell_encoder = cell_encoder
        self.probability_model = probability_model

    @property
    def is_deterministic(self) -> bool:
        return len(self.members) == 1

    def member_predictions(self, X, *, sensitive_features=None, cell_ids=None) -> np.ndarray:
        """Class codes predicted by every member, shape (n_members, n_samples).

        ``cell_ids`` (already encoded cells) may replace ``sensitive_features``.
        """
        needs_proba = any(m.needs == "proba" for m in self.members)
        P = self.probability_model.predict_proba(X) if needs_proba else None
        n = len(P) if P is not None else _num_rows(X)
        if cell_ids is None:
            cells = self.cell_encoder.transform(sensitive_features, n)
        else:
            cells = np.asarray(cell_ids, dtype=np.intp)
        return np.stack([m.predict_codes(X, P, cells) for m in self.members])

    def predict_proba(self, X, *, sensitive_features=None) -> np.ndarray:
        """Class distribution of the randomized rule per example, shape (n_samples, n_classes).

        ``out[l, j]`` is the probability that this classifier predicts ``classes[j]`` on
        example ``l`` (the total weight of the members that predict it). This is **not** an
        estimate of ``P(y | x)``; it is what :meth:`predict` samples from.
        """
        return self._distribution(self.member_predictions(X, sensitive_features=sensitive_features))

    def _distribution(self, preds) -> np.ndarray:
        out = np.zeros((preds.shape[1], len(self.classes)))
        for w, p in zip(self.weights, preds):
            out[np.arange(len(p)), p] += w
        return out

    def predict(self, X, *, sensitive_features=None, random_state=None) -> np.ndarray:
        """Sample a prediction per example (one member drawn independently per example).

        Reproducible: the same ``random_state`` (int) gives the same predictions. A single
        member predicts deterministically.
        """
        preds = self.member_predictions(X, sensitive_features=sensitive_features)
        if len(self.members) == 1:
            return self.classes[preds[0]]
        rng = check_random_state(random_state)
        pick = rng.choice(len(self.members), size=preds.shape[1], p=self.weights)
        return self.classes[preds[pick, np.arange(preds.shape[1])]]

    def expected_confusion_tensor(self, X, y_codes, cell_ids=None, *, sensitive_features=None,
                                  sample_weight=None) -> np.ndarray:
        """Exact expected per-cell confusion tensor, shape (n_cells, n_classes, n_classes).

        The cells come from ``cell_ids`` when given (then ``sensitive_features`` is not needed),
        else from ``sensitive_features``; the members predict with the same cells.
        """
        if cell_ids is None:
            cell_ids = self.cell_encoder.transform(sensitive_features, _num_rows(X))
        dist = self._distribution(self.member_predictions(X, cell_ids=cell_ids))
        return confusion_tensor(y_codes, dist, cell_ids, len(self.classes), self.cell_encoder.n_cells,
                                sample_weight)

    def expected_confusion_matrix(self, X, y, *, sensitive_features=None, sample_weight=None,
                                  per_group: bool = False) -> np.ndarray:
        """Exact expected confusion matrix on labelled data.

        Parameters
        ----------
        X : features (or probabilities when precomputed)
        y : array-like of shape (n_samples,), labels among ``classes``
        sensitive_features : optional
        sample_weight : optional
        per_group : bool, default False
            Return the per-cell tensor (n_cells, n, n) instead of the (n, n) total.

        Returns
        -------
        ndarray; entries are fractions of the total weight (sum 1).

        Raises
        ------
        ValueError
            If ``y`` holds labels that are not among ``classes``.
        """
        codes = encode_labels(y, self.classes)
        T = self.expected_confusion_tensor(X, codes, sensitive_features=sensitive_features,
                                           sample_weight=sample_weight)
        return T if per_group else T.sum(axis=0)

    def to_deterministic(self, strategy: str = "max_weight") -> "RandomizedClassifier":
        """A deterministic classifier derived from the mixture.

        Parameters
        ----------
        strategy : {"max_weight"}
            ``"max_weight"``: the member with the largest weight. It is deterministic and
            simple to deploy, but may break constraints that only the mixture meets (check it
            with a report). Per-example voting is not offered: its confusion matrix is not a
            mixture of the members' and carries no guarantee.
        """
        if strategy != "max_weight":
            raise ValueError(f"unknown strategy {strategy!r}; known: ['max_weight']")
        k = int(np.argmax(self.weights))
        return RandomizedClassifier([self.members[k]], [1.0], self.classes, self.cell_encoder,
                                    self.probability_model)


class PluginClassifier(RandomizedClassifier):
    """A deterministic plug-in classifier: one cost tensor ``L`` (shape (n_cells, n, n)).

    ``h(x) = argmin*_j sum_i eta_i(x) L^{cell(x)}_ij`` (Narasimhan et al. Alg. 9/10). The
    baselines are plug-in classifiers: argmax (``L = 1 - I``) and balanced argmax
    (``L_ij = 1(i != j) / pi_i``).
    """

    def __init__(self, cost, classes, cell_encoder, probability_model):
        from .members import PluginRule

        super().__init__([PluginRule(cost)], [1.0], classes, cell_encoder, probability_model)

    @property
    def cost(self) -> np.ndarray:
        return self.members[0].cost


def class_labels(y) -> np.ndarray:
    """Sorted distinct labels of ``y`` (``np.unique``), by one ``bincount`` for small
    non-negative integer labels (no copy and no hashing of the whole array)."""
    y = np.asarray(y)
    if y.dtype.kind in "iu" and y.size and y.ndim == 1:
        lo, hi = y.min(), y.max()
        if lo >= 0 and hi < 2**20:
            return np.flatnonzero(np.bincount(y)).astype(y.dtype)
    return np.unique(y)


def encode_labels(y, classes) -> np.ndarray:
    """Codes of labels ``y`` in ``classes``.

    Raises
    ------
    ValueError
        Naming the labels that are not among the classes.
    """
    y = np.asarray(y)
    classes = np.asarray(classes)
    if len(classes) <= 16 and y.dtype.kind in "iub" and classes.dtype.kind in "iub":
        # few integer classes: one vectorized comparison per class (no sort, no search)
        codes = np.full(len(y), -1, dtype=np.intp)
        mask = np.empty(len(y), dtype=bool)
        for k, c in enumerate(classes):
            np.equal(y, c, out=mask)
            np.copyto(codes, k, where=mask)
        if codes.min(initial=0) < 0:
            bad = codes < 0
            raise ValueError(
                f"labels {sorted(set(y[bad].tolist()))[:5]} do not match the classes "
                f"{classes.tolist()} seen at fit time"
            )
        return codes
    sorter = np.argsort(classes)
    pos = np.searchsorted(classes, y, sorter=sorter)
    pos = np.clip(pos, 0, len(classes) - 1)
    codes = sorter[pos]
    bad = classes[codes] != y
    if np.any(bad):
        raise ValueError(
            f"labels {sorted(set(np.asarray(y)[bad].tolist()))[:5]} do not match the classes "
            f"{classes.tolist()} seen at fit time"
        )
    return codes.astype(np.intp)


def _num_rows(X) -> int:
    return X.shape[0] if hasattr(X, "shape") else len(X)
