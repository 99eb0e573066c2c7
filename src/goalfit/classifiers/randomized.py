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
        Column of ``estimator.predict_proba`` that holds each class code (-1: a class the
        estimator never saw, probability 0; used for joint labels (group, class) absent from
        the training data).
    """

    def __init__(self, estimator, class_index):
        self.estimator = estimator
        self.class_index = np.asarray(class_index, dtype=np.intp)

    def columns(self, P) -> np.ndarray:
        """The estimator's probabilities ``P`` in class-code order (index -1: a zero column)."""
        P = np.asarray(P, dtype=float)
        out = P[:, np.maximum(self.class_index, 0)]
        out[:, self.class_index < 0] = 0.0
        return out

    def predict_proba(self, X) -> np.ndarray:
        if self.estimator is None:
            return np.asarray(X, dtype=float)
        return self.columns(self.estimator.predict_proba(X))


def probability_model(estimator, classes, *, allow_missing=False) -> "ProbabilityModel":
    """The :class:`ProbabilityModel` reading the columns of ``classes`` from ``estimator.predict_proba``.

    Parameters
    ----------
    estimator : fitted estimator with ``classes_`` and ``predict_proba``, or None (precomputed)
    classes : array-like of shape (n_classes,)
        The classes in code order.
    allow_missing : bool, default False
        Give a class the estimator never saw (e.g. a fold without it) a zero column.

    Raises
    ------
    ValueError
        If a class is unknown to the estimator and ``allow_missing`` is False.
    """
    if estimator is None:
        return ProbabilityModel(None, np.arange(len(classes)))
    est_classes = list(np.asarray(getattr(estimator, "classes_", classes)).tolist())
    missing = [c for c in np.asarray(classes).tolist() if c not in est_classes]
    if missing and not allow_missing:
        raise ValueError(f"the base estimator does not know the classes {missing} of y")
    return ProbabilityModel(estimator, [est_classes.index(c) if c in est_classes else -1
                                        for c in np.asarray(classes).tolist()])


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
    hash_seed : int, optional
        Derandomize by hashing (Cotter, Narasimhan & Gupta, NeurIPS 2019, §4): example ``x`` gets
        the prediction of the member that :func:`~goalfit.classifiers.hashing.hash_choice` picks
        from a hash of its feature row and this seed, so the classifier is a deterministic
        function of the row (the same in any batch) whose rates match the mixture's up to
        hashing noise. Default None: :meth:`predict` samples.

    Raises
    ------
    ValueError
        If weights are negative, do not sum to 1, or do not match the members.
    """

    def __init__(self, members, weights, classes, cell_encoder, probability_model, hash_seed=None):
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
        self.hash_seed = hash_seed

    @property
    def is_deterministic(self) -> bool:
        return len(self.members) == 1 or self.hash_seed is not None

    def _hashed(self, X, preds) -> np.ndarray:
        """Class codes of the hash-derandomized classifier, shape (n_samples,)."""
        from .hashing import hash_predictions, row_hash

        return hash_predictions(row_hash(X), self.weights, preds, self.hash_seed)

    def distribution_of_codes(self, X, preds) -> np.ndarray:
        """Per-example class distribution, shape (n_samples, n_classes), from the members'
        predicted codes ``preds`` of shape (n_members, n_samples) (one-hot when derandomized by
        hashing, which reads the rows ``X``)."""
        if self.hash_seed is None or len(self.members) == 1:
            return self._distribution(preds)
        out = np.zeros((preds.shape[1], len(self.classes)))
        out[np.arange(preds.shape[1]), self._hashed(X, preds)] = 1.0
        return out

    def _proba(self, X):
        """(probabilities when a member reads them else None, number of rows)."""
        needs_proba = any(m.needs == "proba" for m in self.members)
        P = self.probability_model.predict_proba(X) if needs_proba else None
        return P, (len(P) if P is not None else _num_rows(X))

    def member_predictions(self, X, *, sensitive_features=None, cell_ids=None) -> np.ndarray:
        """Class codes predicted by every member, shape (n_members, n_samples).

        ``cell_ids`` (already encoded cells) may replace ``sensitive_features``.
        """
        P, n = self._proba(X)
        cells = self.prediction_cells(n, sensitive_features, cell_ids)
        return np.stack([m.predict_codes(X, P, cells) for m in self.members])

    def prediction_cells(self, n, sensitive_features=None, cell_ids=None) -> np.ndarray:
        """The cells the members predict with, shape (n,): the examples' own."""
        if cell_ids is None:
            return self.cell_encoder.transform(sensitive_features, n)
        return np.asarray(cell_ids, dtype=np.intp)

    def predict_proba(self, X, *, sensitive_features=None) -> np.ndarray:
        """Class distribution of the randomized rule per example, shape (n_samples, n_classes).

        ``out[l, j]`` is the probability that this classifier predicts ``classes[j]`` on
        example ``l`` (the total weight of the members that predict it). This is **not** an
        estimate of ``P(y | x)``; it is what :meth:`predict` samples from.
        """
        return self.distribution_of_codes(X, self.member_predictions(X, sensitive_features=sensitive_features))

    def _distribution(self, preds) -> np.ndarray:
        out = np.zeros((preds.shape[1], len(self.classes)))
        for w, p in zip(self.weights, preds):
            out[np.arange(len(p)), p] += w
        return out

    def predict(self, X, *, sensitive_features=None, random_state=None, stratified=False) -> np.ndarray:
        """Sample a prediction per example.

        Reproducible: the same ``random_state`` (int) gives the same predictions on the same rows;
        the seed is mixed with the rows of the batch (:func:`goalfit.classifiers.sampling.batch_seed`),
        so batches predicted one after another with one seed draw independently. A single
        member (or a hash-derandomized mixture) predicts deterministically.

        Parameters
        ----------
        X, sensitive_features :
            As at fit time.
        random_state : int, RandomState or None
        stratified : bool, default False
            False: one member drawn independently per example. True: the batch's labels are
            drawn together, within each group of ``sensitive_features`` (the whole batch when
            none are given), so that every example keeps its label distribution and each
            group's class counts stay within one of their expectation
            (:func:`goalfit.classifiers.sampling.stratified_choice`): the rates of the batch
            then follow the expected classifier's instead of adding binomial noise.
        """
        preds = self.member_predictions(X, sensitive_features=sensitive_features)
        if len(self.members) == 1:
            return self.classes[preds[0]]
        if self.hash_seed is not None:
            return self.classes[self._hashed(X, preds)]
        from .hashing import row_hash
        from .sampling import batch_seed, stratified_choice

        seed = batch_seed(random_state, row_hash(X))  # batches drawn with one seed stay independent
        if stratified:
            n = preds.shape[1]
            strata = np.zeros(n, dtype=np.intp) if sensitive_features is None else self._strata(X, sensitive_features)
            return self.classes[stratified_choice(self._distribution(preds), strata, seed)]
        rng = check_random_state(seed)
        pick = rng.choice(len(self.members), size=preds.shape[1], p=self.weights)
        return self.classes[preds[pick, np.arange(preds.shape[1])]]

    def expected_confusion_tensor(self, X, y_codes, cell_ids=None, *, sensitive_features=None,
                                  sample_weight=None) -> np.ndarray:
        """Exact expected per-cell confusion tensor, shape (n_cells, n_classes, n_classes).

        The cells come from ``cell_ids`` when given (then ``sensitive_features`` is not needed),
        else from ``sensitive_features``; the members predict with the same cells.
        """
        if cell_ids is None:
            cell_ids = self._audit_cells(X, sensitive_features)
        dist = self.distribution_of_codes(X, self.member_predictions(X, cell_ids=cell_ids))
        return confusion_tensor(y_codes, dist, cell_ids, len(self.classes), self.cell_encoder.n_cells,
                                sample_weight)

    def _audit_cells(self, X, sensitive_features) -> np.ndarray:
        """Cells of the rows of ``X`` for :meth:`expected_confusion_tensor` (no ``cell_ids`` given)."""
        return self.cell_encoder.transform(sensitive_features, _num_rows(X))

    def _strata(self, X, sensitive_features) -> np.ndarray:
        """Groups of the rows of ``X`` that ``predict(stratified=True)`` draws within: their cells."""
        return self._audit_cells(X, sensitive_features)

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

    def with_members(self, members, weights, hash_seed=None) -> "RandomizedClassifier":
        """A classifier of the same kind (group-aware or group-blind) with other members."""
        return type(self)(members, weights, self.classes, self.cell_encoder, self.probability_model,
                          hash_seed=hash_seed)

    def to_deterministic(self, strategy: str = "max_weight", *, random_state=0) -> "RandomizedClassifier":
        """A deterministic classifier derived from the mixture alone (no training data).

        Parameters
        ----------
        strategy : {"max_weight", "hash"}
            ``"max_weight"``: the member with the largest weight; it may break constraints that
            only the mixture meets. ``"hash"``: the hash-derandomized mixture (see ``hash_seed``;
            Cotter et al. 2019): on any sample whose row hashes behave as independent uniforms,
            each rate is the mixture's expected rate plus the noise of one sampled prediction
            per example, O(sqrt(1/n_slice)) and only from examples where members disagree.
            :meth:`GoalClassifier.to_deterministic <goalfit.GoalClassifier.to_deterministic>`
            adds the best single rule and checks the goals on the training data.
            Per-example voting is not offered: its confusion matrix is not a mixture of the
            members' and carries no guarantee.
        random_state : int, default 0
            Seed of the hash (``"hash"`` only).
        """
        if strategy == "hash":
            return self.with_members(self.members, self.weights, hash_seed=int(random_state))
        if strategy != "max_weight":
            raise ValueError(f"unknown strategy {strategy!r}; known: ['max_weight', 'hash']")
        k = int(np.argmax(self.weights))
        return self.with_members([self.members[k]], [1.0])


class GroupBlindClassifier(RandomizedClassifier):
    """A mixture of group-blind members: predictions never read the sensitive features.

    The members (e.g. :class:`~goalfit.classifiers.members.GroupBlindRule`) read the joint
    probabilities ``P(A = a, Y = y | x)`` of ``probability_model``. ``cell_encoder`` is kept to
    *audit* the goals: :meth:`expected_confusion_tensor` puts each example in its true group
    when ``sensitive_features`` (or ``cell_ids``) are given; :meth:`predict` and
    :meth:`predict_proba` ignore them.
    """

    def prediction_cells(self, n, sensitive_features=None, cell_ids=None) -> np.ndarray:
        """All examples in one cell: the members never read the groups."""
        return np.zeros(n, dtype=np.intp)

    def _audit_cells(self, X, sensitive_features) -> np.ndarray:
        """The true groups' cells; all examples in the first cell when ``sensitive_features`` is
        None (:meth:`expected_confusion_tensor` then means only its sum over cells)."""
        n = _num_rows(X)
        if sensitive_features is None:
            return np.zeros(n, dtype=np.intp)
        return self.cell_encoder.transform(sensitive_features, n)

    def _strata(self, X, sensitive_features) -> np.ndarray:
        """The groups as given, any values (groups unseen at fit included: the members never read
        them, only the stratified draw does)."""
        from ..confusion.cells import as_frame

        frame = as_frame(sensitive_features, _num_rows(X))
        if frame.shape[1] == 0:
            return np.zeros(len(frame), dtype=np.intp)
        return frame.groupby(list(frame.columns), sort=False).ngroup().to_numpy(dtype=np.intp)


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

    def with_members(self, members, weights, hash_seed=None) -> RandomizedClassifier:
        return RandomizedClassifier(members, weights, self.classes, self.cell_encoder,
                                    self.probability_model, hash_seed=hash_seed)


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
