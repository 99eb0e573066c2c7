"""``GoalClassifier`` on Dask collections: the data backend of ``fit``, and predict, predict_proba, evaluate.

:class:`~goalfit.GoalClassifier` runs its one pipeline (prepare, probabilities, compile, method)
with :class:`DaskData` as the data backend when ``X`` is a Dask collection (see
:mod:`goalfit.distributed` for the design and the error bound of the histogram path); the fit
sets the same fitted attributes as the in-memory one plus ``statistics_``.
"""
from __future__ import annotations

import time

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets

from ..classifiers import encode_labels, probability_model
from ..confusion import CellEncoder, ConfusionSpace, confusion_tensor
from ..confusion.cells import as_frame
from ..goals import Problem
from ..fit import as_seed
from ..methods.plugin import BASELINES, make_oracle
from ..utils.validation import check_probabilities
from .partitions import Partitions, block_weights, check_block, encode_cells, to_1d
from .statistics import (MapReduceOracle, gather_scores, get_option, histogram_sample,
                         score_histograms)


# ---------------------------------------------------------------------------- per partition
def _summary(k, y, s, w):
    """Pass 1, one partition: distinct labels, distinct sensitive rows, rows, weight sum."""
    check_block(k, y, None, s, w)
    y = to_1d(y)
    frame = None if s is None else as_frame(s).drop_duplicates()
    return np.unique(y), frame, len(y)


def _raw(k, X, y, s, w, estimator):
    """The one pass over ``X``: ``(P, y, s, w)`` with P in the estimator's column order (or X
    itself when precomputed); persisted, so later passes do not read or generate X again."""
    check_block(k, X, y, s, w)
    P = np.asarray(X if estimator is None else estimator.predict_proba(X), dtype=float)
    if estimator is None and P.ndim != 2:
        raise ValueError(f"partition {k}: precomputed probabilities must be a 2-D array, got {P.ndim} dimensions")
    return P, to_1d(y), s, block_weights(k, w)


def _prepare(k, raw, index, encoder, classes, precomputed):
    """One partition as ``(P, y_codes, cells, w)`` for the outer loop (P in class-code order)."""
    P, y, s, w = raw
    if precomputed and P.shape[1] != len(classes):
        raise ValueError(f"partition {k}: probabilities must have shape (n_samples, {len(classes)}) "
                         f"(one column per class of y), got {P.shape}")
    if precomputed:  # as the in-memory fit checks them (after their shape)
        check_probabilities(P, where=f"partition {k}: ")
    return P[:, index], encode_labels(y, classes), encode_cells(encoder, s, len(y)), w


def _partial_fit_step(model, k, X, y, w, classes):
    check_block(k, X, y, None, w)
    kw = {} if w is None else {"sample_weight": block_weights(k, w)}
    model.partial_fit(X, to_1d(y), classes=classes, **kw)
    return model


def _row_mass(prep, n_classes, n_cells):
    P, y, cells, w = prep
    return confusion_tensor(y, y, cells, n_classes, n_cells, w, normalize=False).sum(axis=2)


def _expected_counts(k, X, y, s, w, classifiers, classes):
    """Expected confusion counts of each classifier on one partition, shape (m, n_cells, n, n)."""
    n = check_block(k, X, y, s, w)
    codes = encode_labels(to_1d(y), classes)
    w = block_weights(k, w)
    total = n if w is None else float(w.sum())
    out = []
    for clf in classifiers:
        cells = encode_cells(clf.cell_encoder, s, n)
        out.append(clf.expected_confusion_tensor(X, codes, cells, sample_weight=w) * total)
    return np.stack(out)


def _proba_block(k, X, s, classifier):
    check_block(k, X, None, s)
    return classifier.predict_proba(X, sensitive_features=s)


def _predict_block(k, X, s, classifier, seed):
    check_block(k, X, None, s)
    rs = None if seed is None else np.random.RandomState(np.random.SeedSequence([seed, k]).generate_state(1)[0])
    return classifier.predict(X, sensitive_features=s, random_state=rs)


# ---------------------------------------------------------------------------- fit
_IN_MEMORY_ONLY = "is not available on Dask collections: fit on in-memory data for it"


class DaskData:
    """:class:`~goalfit.GoalClassifier`'s data on Dask collections: the fit's data backend.

    The same interface as the in-memory one (``classes``, ``encoder``, ``data``,
    ``probabilities``, ``oracle``, ``training_sample``): passes over ``X``: one, computing the
    base model's probabilities, persisted on the workers with the labels and groups (labels,
    groups and the statistics are then read from there), after the ``partial_fit`` epochs (and
    a first pass over ``y`` for the classes) when the base model learns incrementally;
    multiclass problems then run one map-reduce over the persisted probabilities per oracle call.

    Raises
    ------
    ValueError
        Misaligned partitions (naming the partition), a base model that is neither frozen
        (prefit), incremental nor precomputed, options that need the in-memory sample (a float
        or explicit ``cv``, ``confidence``, the refit oracle, ``group_blind``), and everything
        the in-memory fit raises.
    """

    def __init__(self, est, X, y, sensitive_features, sample_weight, settings, progress):
        import dask

        if y is None:
            raise ValueError("GoalClassifier requires y to be passed, but the target y is None")
        unsupported = []
        if not (est.cv is None or (isinstance(est.cv, str) and est.cv == "auto")):
            unsupported.append(f"cv={est.cv!r}")
        if est.confidence is not None:
            unsupported.append("confidence")
        if settings.oracle == "refit":
            unsupported.append("the refit oracle")
        if est.group_blind:  # its joint (group, class) base model is fitted in memory only
            unsupported.append("group_blind=True")
        if unsupported:
            raise ValueError(f"{', '.join(unsupported)} {_IN_MEMORY_ONLY}")
        self.est, self.settings, self.progress = est, settings, progress
        self.parts = data = Partitions(X, y, sensitive_features, sample_weight)

        def labels_and_groups(blocks):  # classes, cells and rows from (y, s, w) blocks
            out = dask.compute(*[dask.delayed(_summary)(k, yk, sk, wk) for k, (yk, sk, wk) in enumerate(blocks)])
            classes = np.unique(np.concatenate([o[0] for o in out]))
            check_classification_targets(classes)
            if len(classes) < 2:
                raise ValueError(f"y has one class {classes.tolist()}: need at least two")
            encoder = CellEncoder().fit(None, 1) if sensitive_features is None else \
                CellEncoder().fit(pd.concat([o[1] for o in out], ignore_index=True).drop_duplicates())
            return classes, encoder, int(sum(o[2] for o in out))

        t0 = time.perf_counter()
        est.estimators_, est.cv_ = None, None
        progress.phase("reading the partitions")
        if _needs_training(est):  # labels first (partial_fit needs the classes), then the epochs
            classes, encoder, n_total = labels_and_groups([b[1:] for b in data.blocks])
            model = _train(est, data, classes)
        else:
            model = _train(est, data, None)
        raw = list(dask.persist(*[dask.delayed(_raw)(k, *blk, model) for k, blk in enumerate(data.blocks)]))
        if not _needs_training(est):  # from the persisted pass: X is read (or generated) once
            classes, encoder, n_total = labels_and_groups([(r[1], r[2], r[3]) for r in raw])
        self.classes, self.encoder, self.model, self.n_total = classes, encoder, model, n_total
        est.estimator_ = model
        self.prob = probability_model(model, classes)
        self.preps = [dask.delayed(_prepare)(k, r, self.prob.class_index, encoder, classes, model is None)
                      for k, r in enumerate(raw)]
        self.raw: list | None = raw  # dropped once the probabilities are persisted
        self.base_seconds = time.perf_counter() - t0
        self.data = None  # the rows stay on the workers

    in_memory = False

    def require_in_memory(self, what):
        raise ValueError(f"{what} {_IN_MEMORY_ONLY}")

    # the evaluation side of the backend protocol (goalfit.fit.backends.DataBackend)
    @staticmethod
    def predict(est, X, *, sensitive_features=None, random_state=None, stratified=None):
        """Sampled labels as a lazy Dask array (independent draws: ``stratified=True`` is refused)."""
        if stratified:
            raise ValueError("stratified=True draws a batch's labels together: compute the Dask collection "
                             "(or a partition) into memory first")
        return predict(est, X, sensitive_features=sensitive_features, random_state=random_state)

    @staticmethod
    def predict_proba(est, X, *, sensitive_features=None):
        return predict_proba(est, X, sensitive_features=sensitive_features)

    @staticmethod
    def evaluate(est, X, y, *, sensitive_features=None, sample_weight=None, datasets=None, confidence=None,
                 interval_method="auto", classifier=None) -> dict:
        """Expected values on Dask rows (``interval_method`` is read only with ``confidence``, which is refused)."""
        if datasets:
            raise ValueError("datasets= is not read on Dask collections (the extra datasets are stacked in memory): "
                             "evaluate an in-memory sample of the rows with them")
        return evaluate(est, X, y, sensitive_features=sensitive_features, sample_weight=sample_weight,
                        confidence=confidence, classifier=classifier)

    @staticmethod
    def group_rates(classes, classifiers, X, y, sensitive_features, split) -> dict:
        from .report import group_rates

        return group_rates(classes, classifiers, X, y, sensitive_features, split)

    def n_outer_samples(self, outer) -> int:
        return self.n_total

    def probabilities(self, data):
        """The outer loop's sample statistics (see :mod:`goalfit.distributed`) and the probability model."""
        import dask

        from ..fit import PreparedData

        est, classes, encoder = self.est, self.classes, self.encoder
        K = len(classes)
        stats = {"n_partitions": self.parts.n_partitions, "n_samples": self.n_total}
        if K == 2:
            kind = get_option("statistics")
            if kind == "auto":
                kind = "exact" if self.n_total <= int(get_option("max_exact_rows")) else "histogram"
            if kind == "exact":
                P, yc, cells, w = gather_scores(self.preps)
                stats.update(kind="exact", rate_error_bound=0.0)
            else:
                n_bins = int(get_option("n_bins"))
                P, yc, cells, w, eps = histogram_sample(score_histograms(self.preps, encoder.n_cells, n_bins))
                stats.update(kind="histogram", n_bins=n_bins, rate_error_bound=eps)
            space = ConfusionSpace.from_codes(yc, cells, classes, encoder.cells_, w)
            outer = PreparedData(None, yc, cells, classes, encoder, space, w, scores=P)
            self.map_reduce = None
        else:
            if self.settings.oracle == "threshold":
                raise ValueError("the threshold oracle is defined for binary problems only")
            self.preps = list(dask.persist(*self.preps))  # the probabilities stay on the workers
            self.raw = None
            mass = np.sum(dask.compute(*[dask.delayed(_row_mass)(p, K, encoder.n_cells) for p in self.preps]), axis=0)
            if mass.sum() <= 0:
                raise ValueError("sample_weight sums to zero: at least one example needs a positive weight")
            space = ConfusionSpace(classes=classes, cells=encoder.cells_, row_mass=mass / mass.sum())
            stats.update(kind="map_reduce", rate_error_bound=0.0)
            outer = PreparedData(None, np.zeros(0, dtype=np.int8), np.zeros(0, dtype=np.int8), classes, encoder,
                                 space, None)
            self.map_reduce = MapReduceOracle(self.preps, space, mass.sum())
        est.statistics_ = stats
        return outer, self.prob

    def oracle(self, method, outer):
        if self.map_reduce is not None:
            return self.map_reduce
        kind = self.settings.oracle if self.settings.oracle in ("auto", "threshold") and method not in BASELINES else "plugin"
        return make_oracle(outer, kind)

    def training_sample(self, clf, outer):
        """None: the rows stay on the workers (``to_deterministic`` and ``with_goals`` need an in-memory fit)."""
        return None


def _needs_training(est):
    if est._precomputed():
        return False
    if est._frozen():
        return False
    base = est._base()
    if not hasattr(base, "partial_fit"):
        raise ValueError(f"on Dask collections the base model must be frozen (sklearn.frozen.FrozenEstimator of a "
                         f"fitted model), learn incrementally (have partial_fit, e.g. "
                         f"gf.make_estimator('sgd_logistic')) or be 'precomputed'; {type(base).__name__} has no "
                         "partial_fit")
    return True


def _train(est, data, classes):
    """The base estimator: None (precomputed), the frozen one, or trained by ``partial_fit``
    over the partitions (``goalfit.partial_fit_epochs`` passes in shuffled orders)."""
    import dask

    if est._precomputed():
        return None
    base = est._base()
    if est._frozen():
        return base
    epochs = int(get_option("partial_fit_epochs"))
    rng = check_random_state(as_seed(est.random_state))
    model = dask.delayed(clone(base))
    for _ in range(epochs):
        for k in rng.permutation(len(data.blocks)):
            Xk, yk, _, wk = data.blocks[k]
            model = dask.delayed(_partial_fit_step)(model, int(k), Xk, yk, wk, classes)
    return model.compute()


# ---------------------------------------------------------------------------- predict
def _rows_map(func, data, width, dtype, *args):
    """Concatenate ``func(k, X_k, s_k, *args)`` over the partitions as one lazy Dask array."""
    import dask
    import dask.array as da

    blocks = []
    for k, (xk, _, sk, _) in enumerate(data.blocks):
        n = data.sizes[k] if data.sizes is not None else np.nan
        shape = (n,) if width is None else (n, width)
        blocks.append(da.from_delayed(dask.delayed(func)(k, xk, sk, *args), shape=shape, dtype=dtype))
    return da.concatenate(blocks)


def fit(clf, X, y, *, sensitive_features=None, sample_weight=None):
    """:meth:`GoalClassifier.fit <goalfit.GoalClassifier.fit>` on a Dask ``X`` (see :mod:`goalfit.distributed`).

    Parameters
    ----------
    clf : goalfit.GoalClassifier
        Unfitted (or to refit) classifier; its base model is prefit (a
        :class:`~sklearn.frozen.FrozenEstimator`), incremental (``partial_fit``) or
        ``"precomputed"``.
    X : dask.array.Array or dask.dataframe.DataFrame
    y, sensitive_features, sample_weight : Dask collections partitioned as ``X``, optional

    Returns
    -------
    goalfit.GoalClassifier
        ``clf``, fitted (the same as ``clf.fit(X, y, ...)``, which hands Dask input here).

    Raises
    ------
    TypeError
        ``clf`` is not a :class:`~goalfit.GoalClassifier`.
    ValueError
        As ``clf.fit``: misaligned partitions, options that need the in-memory sample.
    """
    from ..estimators import GoalClassifier

    if not isinstance(clf, GoalClassifier):
        raise TypeError(f"goalfit.distributed.fit fits a GoalClassifier, got {type(clf).__name__}")
    return clf.fit(X, y, sensitive_features=sensitive_features, sample_weight=sample_weight)


def predict_proba(clf, X, *, sensitive_features=None):
    """The randomized rule's class distribution as a lazy Dask array, one chunk per partition of
    ``X``, shape (n_samples, n_classes) (chunk sizes unknown, ``nan``, for DataFrame input)."""
    data = Partitions(X, sensitive_features=sensitive_features)
    return _rows_map(_proba_block, data, len(clf.classes_), float, clf.classifier_)


def predict(clf, X, *, sensitive_features=None, random_state=None):
    """Sampled labels as a lazy Dask array, one chunk per partition of ``X``.

    Partition ``k`` samples with the seed ``SeedSequence([random_state, k])``: reproducible for
    an int ``random_state`` whatever the scheduler, but not the same draws as the in-memory
    :meth:`GoalClassifier.predict` on the same rows.
    """
    data = Partitions(X, sensitive_features=sensitive_features)
    seed = as_seed(clf.random_state if random_state is None else random_state)
    return _rows_map(_predict_block, data, None, clf.classes_.dtype, clf.classifier_, seed)


def expected_confusion(classifiers, classes, X, y, sensitive_features=None, sample_weight=None):
    """Exact expected confusion tensors of ``classifiers`` on Dask data, reduced per partition.

    Returns
    -------
    list of (C, space)
        ``C`` of shape (n_live_cells, n, n) summing to 1 over the cells that hold examples and
        the :class:`~goalfit.confusion.ConfusionSpace` of those cells, as
        :func:`goalfit.metrics.evaluate_problem` builds from in-memory data.
    """
    import dask

    data = Partitions(X, y, sensitive_features, sample_weight)
    parts = dask.compute(*[dask.delayed(_expected_counts)(k, *blk, classifiers, classes)
                           for k, blk in enumerate(data.blocks)])
    T = np.sum(parts, axis=0)
    out = []
    for t, clf in zip(T, classifiers):
        mass = t.sum(axis=2)
        live = mass.sum(axis=1) > 0
        cells = clf.cell_encoder.cells_.iloc[np.flatnonzero(live)].reset_index(drop=True)
        total = mass.sum()
        out.append((t[live] / total, ConfusionSpace(classes=np.asarray(classes), cells=cells,
                                                    row_mass=mass[live] / total)))
    return out


def evaluate_classifier(problem, classifier, classes, X, y, sensitive_features=None, sample_weight=None):
    """:func:`goalfit.metrics.evaluate_problem` of a fitted classifier on Dask data (no intervals)."""
    from ..metrics import evaluate_compiled

    (C, space), = expected_confusion([classifier], classes, X, y, sensitive_features, sample_weight)
    return evaluate_compiled(problem, problem.compile(space), C)


def evaluate(clf, X, y, *, sensitive_features=None, sample_weight=None, confidence=None, classifier=None):
    """:meth:`GoalClassifier.evaluate` on Dask data: expected values, reduced per partition.

    Raises
    ------
    ValueError
        With ``confidence``: the intervals need the per-example sample (evaluate a sample of
        rows in memory for them).
    """
    if confidence is not None:
        raise ValueError("confidence intervals are not computed on Dask collections: evaluate an "
                         "in-memory sample of the rows for them")
    return evaluate_classifier(clf._fitted_goals(),
                               clf.classifier_ if classifier is None else classifier, clf.classes_,
                               X, y, sensitive_features, sample_weight)


__all__ = ["DaskData", "predict", "predict_proba", "evaluate", "evaluate_classifier", "expected_confusion"]
