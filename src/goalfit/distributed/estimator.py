"""``GoalClassifier`` on Dask collections: fit, predict, predict_proba, evaluate.

:class:`~goalfit.GoalClassifier` calls these functions when ``X`` is a Dask collection (see
:mod:`goalfit.distributed` for the design and the error bound of the histogram path). They set
the same fitted attributes as the in-memory ``fit`` plus ``statistics_``.
"""
from __future__ import annotations

import time

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from ..classifiers import RandomizedClassifier, encode_labels, probability_model
from ..confusion import CellEncoder, ConfusionSpace, confusion_tensor
from ..confusion.cells import as_frame
from ..goals import Problem
from ..methods.baselines import BASELINES
from ..methods.plugin import PluginOracle, ThresholdOracle
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
    if estimator is None and (P.ndim != 2 or not np.isfinite(P).all() or (P < 0).any()):
        raise ValueError(f"partition {k}: precomputed probabilities must be a 2-D array without NaN, "
                         "infinite or negative values")
    return P, to_1d(y), s, block_weights(k, w)


def _prepare(k, raw, index, encoder, classes, precomputed):
    """One partition as ``(P, y_codes, cells, w)`` for the outer loop (P in class-code order)."""
    P, y, s, w = raw
    if precomputed and P.shape[1] != len(classes):
        raise ValueError(f"partition {k}: probabilities must have shape (n_samples, {len(classes)}) "
                         f"(one column per class of y), got {P.shape}")
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
def _check_supported(clf):
    clf._check_options()
    unsupported = []
    if clf.holdout is not None:
        unsupported.append("holdout")
    if not (clf.cv is None or (isinstance(clf.cv, str) and clf.cv == "auto")):
        unsupported.append("cv")
    if clf.confidence is not None:
        unsupported.append("confidence")
    if clf.oracle == "refit":
        unsupported.append("oracle='refit'")
    if clf.group_blind:  # its joint (group, class) base model is fitted in memory only
        unsupported.append("group_blind=True")
    if unsupported:
        raise ValueError(f"{', '.join(unsupported)} is not available on Dask collections: fit on "
                         "in-memory data for it")


def _needs_training(clf):
    if isinstance(clf.estimator, str):
        if clf.estimator != "precomputed":
            raise ValueError(f"estimator must be an estimator or 'precomputed', got {clf.estimator!r}")
        return False
    if clf.prefit:
        check_is_fitted(clf._base())
        return False
    if not hasattr(clf._base(), "partial_fit"):
        raise ValueError(f"on Dask collections the base model must be prefit (prefit=True), learn "
                         f"incrementally (have partial_fit, e.g. SGDClassifier(loss='log_loss')) or be "
                         f"'precomputed'; {type(clf._base()).__name__} has no partial_fit")
    return True


def _train(clf, data, classes):
    """The base estimator: None (precomputed), the prefit one, or trained by ``partial_fit``
    over the partitions (``goalfit.partial_fit_epochs`` passes in shuffled orders)."""
    import dask

    if isinstance(clf.estimator, str):
        return None
    base = clf._base()
    if clf.prefit:
        return base
    epochs = int(get_option("partial_fit_epochs"))
    rng = check_random_state(clf.random_state if not isinstance(clf.random_state, np.random.RandomState)
                             else clf.random_state.randint(2 ** 31 - 1))
    model = dask.delayed(clone(base))
    for _ in range(epochs):
        for k in rng.permutation(len(data.blocks)):
            Xk, yk, _, wk = data.blocks[k]
            model = dask.delayed(_partial_fit_step)(model, int(k), Xk, yk, wk, classes)
    return model.compute()


def fit(clf, X, y, *, sensitive_features=None, sample_weight=None):
    """:meth:`GoalClassifier.fit` on a Dask ``X`` (see :mod:`goalfit.distributed`).

    Passes over ``X``: one, computing the base model's probabilities, persisted on the workers
    with the labels and groups (labels, groups and the statistics are then read from there),
    after the ``partial_fit`` epochs (and a first pass over ``y`` for the classes) when the base
    model learns incrementally; multiclass problems then run one map-reduce over the persisted
    probabilities per oracle call.

    Raises
    ------
    ValueError
        Misaligned partitions (naming the partition), a base model that is neither prefit,
        incremental nor precomputed, options that need the in-memory sample (``holdout``,
        ``cv``, ``confidence``, the refit oracle, ``group_blind``), and everything the
        in-memory fit raises.
    """
    import dask

    from ..estimators.goal_classifier import _adopt_result, _resolve_method, _run_method, _tightened, _user_margins

    t_start = time.perf_counter()
    if y is None:
        raise ValueError("GoalClassifier requires y to be passed, but the target y is None")
    _check_supported(clf)
    data = Partitions(X, y, sensitive_features, sample_weight)

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
    clf.estimators_, clf.cv_ = None, None
    if _needs_training(clf):  # labels first (partial_fit needs the classes), then the epochs
        classes, encoder, n_total = labels_and_groups([b[1:] for b in data.blocks])
        est = _train(clf, data, classes)
    else:
        est = _train(clf, data, None)
    raw = list(dask.persist(*[dask.delayed(_raw)(k, *blk, est) for k, blk in enumerate(data.blocks)]))
    if not _needs_training(clf):  # from the persisted pass: X is read (or generated) once
        classes, encoder, n_total = labels_and_groups([(r[1], r[2], r[3]) for r in raw])
    clf.classes_, clf.estimator_ = classes, est
    prob = probability_model(est, classes)
    preps = [dask.delayed(_prepare)(k, r, prob.class_index, encoder, classes, est is None)
             for k, r in enumerate(raw)]
    K = len(classes)
    stats = {"n_partitions": data.n_partitions, "n_samples": n_total}
    if K == 2:
        kind = get_option("statistics")
        if kind == "auto":
            kind = "exact" if n_total <= int(get_option("max_exact_rows")) else "histogram"
        if kind == "exact":
            P, yc, cells, w = gather_scores(preps)
            stats.update(kind="exact", rate_error_bound=0.0)
        else:
            n_bins = int(get_option("n_bins"))
            P, yc, cells, w, eps = histogram_sample(score_histograms(preps, encoder.n_cells, n_bins))
            stats.update(kind="histogram", n_bins=n_bins, rate_error_bound=eps)
        space = ConfusionSpace.from_codes(yc, cells, classes, encoder.cells_, w)

        def make_oracle(method):
            cls = ThresholdOracle if clf.oracle == "threshold" and method not in BASELINES else PluginOracle
            return cls(P, yc, cells, space, w)
    else:
        if clf.oracle == "threshold":
            raise ValueError("the threshold oracle is defined for binary problems only")
        preps = list(dask.persist(*preps))  # the probabilities stay on the workers
        del raw
        mass = np.sum(dask.compute(*[dask.delayed(_row_mass)(p, K, encoder.n_cells) for p in preps]), axis=0)
        if mass.sum() <= 0:
            raise ValueError("sample_weight sums to zero: at least one example needs a positive weight")
        space = ConfusionSpace(classes=classes, cells=encoder.cells_, row_mass=mass / mass.sum())
        stats.update(kind="map_reduce", rate_error_bound=0.0)

        def make_oracle(method):
            return MapReduceOracle(preps, space, mass.sum())
    clf.base_fit_seconds_ = time.perf_counter() - t0
    clf.statistics_ = stats
    clf.n_outer_samples_ = n_total

    problem = Problem(clf.objective, clf.constraints)
    method = clf.method_ = _resolve_method(clf.method, problem.compile(space))
    margins = _user_margins(clf.margin, problem)
    clf.margins_ = None if margins is None else list(margins)
    clf.problem_ = Problem(clf.objective, _tightened(problem, margins)).compile(space)
    result = _run_method(method, clf.problem_, make_oracle(method), clf.method_params)
    clf.certified_, clf.certification_ = None, None
    _adopt_result(clf, result, RandomizedClassifier(result.members, result.weights, classes, encoder, prob),
                  stacklevel=4)
    clf.fit_seconds_ = time.perf_counter() - t_start
    return clf


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
    from ..estimators.goal_classifier import _seed

    data = Partitions(X, sensitive_features=sensitive_features)
    seed = _seed(clf.random_state if random_state is None else random_state)
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


def evaluate(clf, X, y, *, sensitive_features=None, sample_weight=None, confidence=None):
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
    return evaluate_classifier(Problem(clf.objective, clf.constraints), clf.classifier_, clf.classes_,
                               X, y, sensitive_features, sample_weight)


__all__ = ["fit", "predict", "predict_proba", "evaluate", "evaluate_classifier", "expected_confusion"]
