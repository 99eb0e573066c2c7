"""Data preparation: the one place where user data becomes classes, cells and a confusion space.

Every estimator calls :func:`prepare` on what it is given (``X, y, sensitive_features,
sample_weight`` and extra named ``datasets``); it is the only reader of ``sensitive_features``
above :mod:`goalfit.confusion` (whose :class:`~goalfit.confusion.CellEncoder` turns group columns
into cells).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import column_or_1d

from ..classifiers import class_labels, encode_labels
from ..confusion import CellEncoder, ConfusionSpace, compact_codes
from ..confusion.datasets import DATASET_COLUMN, TRAIN, space_with_unlabelled, stack_datasets
from ..confusion.space import AMBIGUOUS_IN_GOALS
from ..utils.rows import num_samples, take_rows
from ..utils.validation import (check_aligned_indexes, check_consistent_rows, check_sample_weight, n_rows,
                                resolve_pos_label)

#: A sensitive-feature column with more distinct values than this is named in a warning before
#: fitting (a numeric column given as a group: every value becomes a group of its own).
MANY_GROUPS = 20


@dataclass
class PreparedData:
    """A sample ready for a method.

    Attributes
    ----------
    X : array-like, DataFrame or sparse matrix of shape (n_samples, ...)
        The features as the estimator passed them (stacked over the datasets when there are
        several).
    y_codes : ndarray of int, shape (n_samples,)
        Class codes (index into ``classes``), in the smallest integer type that holds them;
        0 on unlabelled rows (see ``labelled``).
    cells : ndarray of int, shape (n_samples,)
        Cell id of each row (index into ``encoder.cells_``).
    classes : ndarray of shape (n_classes,)
    encoder : CellEncoder
        The slicing columns (sensitive features, ``"dataset"``, a deployed model's predictions).
    space : ConfusionSpace
        The goals' space on this sample (unlabelled rows count equally in every class).
    sample_weight : ndarray of shape (n_samples,) or None
    labelled : ndarray of bool, shape (n_samples,), or None
        None: every row is labelled.
    sensitive_features : object
        The slicing columns as given (or the stacked DataFrame), for group-aware classifiers.
    dataset_names : list of str
        ``["train"]``, then the extra datasets in stacking order.
    scores : ndarray of shape (n_samples, n_columns) or None
        Class probabilities (joint ones for group-blind fits) that the plug-in methods read.
    y : ndarray of shape (n_samples,) or None
        The labels as given (for methods that refit a model).
    """

    X: object
    y_codes: np.ndarray
    cells: np.ndarray
    classes: np.ndarray
    encoder: CellEncoder
    space: ConfusionSpace
    sample_weight: np.ndarray | None = None
    labelled: np.ndarray | None = None
    sensitive_features: object = None
    dataset_names: list = field(default_factory=lambda: [TRAIN])
    scores: np.ndarray | None = None
    y: np.ndarray | None = None

    @property
    def n_samples(self) -> int:
        return len(self.y_codes)

    @property
    def n_classes(self) -> int:
        return len(self.classes)

    @property
    def unlabelled_cells(self) -> np.ndarray:
        """Cells holding unlabelled rows, shape (n_cells,) of bool."""
        out = np.zeros(self.encoder.n_cells, dtype=bool)
        if self.labelled is not None:
            out[np.unique(self.cells[~self.labelled])] = True
        return out

    @property
    def train_rows(self) -> np.ndarray | None:
        """Labelled rows of the dataset ``"train"`` (bool mask), or None when that is every row."""
        if len(self.dataset_names) == 1 and self.labelled is None:
            return None
        rows = np.ones(self.n_samples, dtype=bool) if self.labelled is None else self.labelled.copy()
        if DATASET_COLUMN in self.encoder.columns_:
            rows &= (self.encoder.cells_[DATASET_COLUMN].to_numpy() == TRAIN)[self.cells]
        return rows

    def weights(self) -> np.ndarray:
        """Sample weights, ones when none were given, shape (n_samples,)."""
        return np.ones(self.n_samples) if self.sample_weight is None else self.sample_weight

    def subset(self, rows) -> "PreparedData":
        """The rows ``rows`` (indices) as a sample of their own: the same classes and cells, the
        space rebuilt on them, ``X``, ``scores`` and the sensitive features indexed. An empty
        slice is reported when goals are compiled on the subset.
        """
        rows = np.asarray(rows)
        sw = None if self.sample_weight is None else self.sample_weight[rows]
        lab = None if self.labelled is None else self.labelled[rows]
        y_codes, cells = self.y_codes[rows], self.cells[rows]
        X = None if self.X is None else take_rows(self.X, rows)
        sf = self.sensitive_features
        if isinstance(sf, (pd.DataFrame, pd.Series)):
            sf = sf.iloc[rows].reset_index(drop=True)
        elif isinstance(sf, dict):
            sf = {k: np.asarray(v)[rows] for k, v in sf.items()}
        elif sf is not None:
            sf = np.asarray(sf)[rows]
        return replace(self, X=X, y_codes=y_codes, cells=cells, sample_weight=sw, labelled=lab,
                       sensitive_features=sf, space=_space(y_codes, cells, lab, self.classes, self.encoder, sw),
                       scores=None if self.scores is None else self.scores[rows],
                       y=None if self.y is None else self.y[rows])

    def with_scores(self, scores, rows=None) -> "PreparedData":
        """This sample (or its ``rows``) with the class probabilities ``scores`` of those rows."""
        out = self if rows is None else self.subset(rows)
        return replace(out, scores=scores)


def _space(y_codes, cells, labelled, classes, encoder, sample_weight) -> ConfusionSpace:
    if labelled is None or labelled.all():
        return _positive(ConfusionSpace.from_codes(y_codes, cells, classes, encoder.cells_, sample_weight))
    w = np.ones(len(y_codes)) if sample_weight is None else sample_weight
    return _positive(space_with_unlabelled(np.asarray(y_codes, dtype=np.intp), labelled, cells, classes,
                                           encoder.cells_, w))


def _positive(space: ConfusionSpace) -> ConfusionSpace:
    """The space, told that binary labels other than 0/1, -1/1 and False/True do not say which
    class is positive (the metric functions refuse them without ``pos_label``): a goal that
    means "the positive class" (``true_positive_rate()``, ``demographic_parity_difference()``,
    ``f1()``) takes the last label in sorted order with a UserWarning asking for ``label=`` in
    the goal; goals that need no positive class (error, error-rate parity, a goal naming its
    class) are unaffected."""
    if space.n_classes == 2 and resolve_pos_label(space.classes, None) is None:
        return replace(space, pos_label=AMBIGUOUS_IN_GOALS)
    return space


def _labels(y, n, who, suffix=""):
    """``y`` as a 1-D array of ``n`` labels (the arguments named ``X<suffix>``, ``y<suffix>``).

    Raises
    ------
    ValueError
        None, a wrong shape or length, missing values, or continuous targets.
    """
    Xn, yn = "X" + suffix, "y" + suffix
    if y is None:
        raise ValueError(f"{who} requires {yn} to be passed, but the target {yn} is None")
    y = column_or_1d(y, warn=True)
    if len(y) != n:
        raise ValueError(f"{Xn} has {n} rows but {yn} has {len(y)}")
    if y.dtype.kind not in "iub":  # 1-D integer or boolean labels are always classes
        if y.dtype.kind in "fc" or y.dtype == object:
            missing = pd.isna(y)
            if np.any(missing):
                raise ValueError(f"{yn} has {int(np.sum(missing))} missing label(s) (NaN/None), e.g. at row "
                                 f"{int(np.flatnonzero(missing)[0])}")
        try:
            check_classification_targets(y)
        except ValueError as err:
            raise ValueError(f"{yn}: {err}") from None
    return y


def check_inputs(X, y=None, sensitive_features=None, sample_weight=None, suffix: str = "") -> None:
    """Row counts and pandas indexes of the arguments as the user gave them agree.

    :func:`prepare` runs it; a family that converts its features first (to a numpy array, which
    drops a DataFrame's index) runs it on the raw arguments before.

    Parameters
    ----------
    X, y, sensitive_features, sample_weight
        The arguments (None: not given).
    suffix : str, default ""
        Appended to their names in messages (``"_val"``: ``X_val``, ``y_val``, ...).

    Raises
    ------
    ValueError
        ``"X_val has 300 rows but y_val has 299"``; pandas arguments whose indexes differ
        (:func:`goalfit.utils.validation.check_aligned_indexes`).
    """
    named = {"X" + suffix: X, "y" + suffix: y, "sensitive_features" + suffix: sensitive_features,
             "sample_weight" + suffix: sample_weight}
    named = {k: v for k, v in named.items() if v is not None}
    if not named:
        return
    sf_name = "sensitive_features" + suffix
    if isinstance(sensitive_features, str):
        raise TypeError(f"{sf_name}={sensitive_features!r} is a string: pass the column's values (e.g. "
                         f"X[{sensitive_features!r}], and drop it from X if the model must not read it); columns "
                         "are not selected by name")
    if isinstance(sensitive_features, dict):  # a dict of columns: each column's length
        n = n_rows(X)
        for key, column in sensitive_features.items():
            m = n_rows(column) if np.ndim(column) else 1
            if n is not None and m != n:
                raise ValueError(f"X{suffix} has {n} rows but {sf_name}[{key!r}] has {m}")
        named.pop(sf_name)
    check_consistent_rows(**named)
    check_aligned_indexes(**named)


def check_validation_inputs(X_val, y_val, sensitive_features_val=None) -> None:
    """A validation sample is given whole or not at all, and its arguments agree
    (:func:`check_inputs` with the ``_val`` names).

    Parameters
    ----------
    X_val, y_val, sensitive_features_val
        The ``fit`` keywords of a family that selects or stops early on a validation sample
        (None: not given).

    Raises
    ------
    ValueError
        ``X_val`` without ``y_val`` or the reverse, ``sensitive_features_val`` without
        ``X_val`` (any of these would otherwise be ignored), or the row and index mismatches of
        :func:`check_inputs` (``"X_val has 300 rows but y_val has 299"``).
    """
    if (X_val is None) != (y_val is None):
        raise ValueError("pass both X_val and y_val, or neither (" + ("y_val" if X_val is None else "X_val")
                         + " alone is not a validation sample)")
    if X_val is None and sensitive_features_val is not None:
        raise ValueError("sensitive_features_val given without X_val, y_val")
    check_inputs(X_val, y_val, sensitive_features_val, suffix="_val")


def _encode(y, classes, suffix):
    try:
        return encode_labels(y, classes)
    except ValueError as err:
        raise ValueError(f"y{suffix}: {err}") from None


def warn_many_groups(encoder: CellEncoder, cells, stacklevel: int = 3) -> None:
    """Warn, before fitting, about each slicing column with more than :data:`MANY_GROUPS` values."""
    if encoder.n_cells <= MANY_GROUPS:  # a column has at most one value per cell: nothing to count
        return
    for col in encoder.columns_:
        values = encoder.cells_[col]
        count = values.nunique()
        if count <= MANY_GROUPS or col == DATASET_COLUMN:
            continue
        sizes = pd.Series(np.bincount(np.asarray(cells, dtype=np.intp), minlength=encoder.n_cells)).groupby(
            values.to_numpy()).sum()
        warnings.warn(
            f"sensitive feature {col!r} has {count} distinct values, each a group of its own (the smallest "
            f"has {int(sizes.min())} row(s)): if it is numeric (an age, an income), bin it first, e.g. "
            f"pd.cut(values, 4) or pd.qcut(values, 4); goals and predictions need every value seen here",
            UserWarning, stacklevel=stacklevel)


def prepare(X, y, *, sensitive_features=None, sample_weight=None, datasets=None, extra_columns=None,
            classes=None, encoder=None, who: str = "this estimator", warn_groups: bool = True,
            suffix: str = "") -> PreparedData:
    """Turn user data into a :class:`PreparedData`: labels to class codes, groups to cells, the space.

    Parameters
    ----------
    X : array-like, DataFrame or sparse matrix of shape (n_samples, ...)
        Kept as given (features are the estimator's business); only its row count is read.
    y : array-like of shape (n_samples,)
        Labels; may be None only when ``datasets`` are given (an unlabelled training set).
    sensitive_features : array-like, Series, DataFrame or dict, optional
        Slicing columns (groups, a deployed model's predictions for churn goals); several columns
        give intersection cells.
    sample_weight : array-like of shape (n_samples,), optional
        Non-negative; a weight of 2 counts as a repeated row in every rate.
    datasets : dict of str -> Dataset or tuple, optional
        Extra named datasets (unlabelled pools, egregious examples; Goh et al. 2016, §2):
        stacked below the training data with the slicing column ``"dataset"``
        (:func:`goalfit.confusion.datasets.stack_datasets`).
    extra_columns : dict of str -> callable, optional
        Slicing columns computed from the (stacked) features, e.g. ``{"baseline":
        deployed_model.predict}`` for churn goals.
    classes : array-like, optional
        The fitted classes (evaluation data): labels must be among them. Default: the labels
        of ``y`` (at least two).
    encoder : CellEncoder, optional
        A fitted encoder (more data for a fitted model: ``partial_fit``): its cells, and an error
        naming any group value it has not seen. Default: the cells of ``sensitive_features``.
    who : str
        The estimator's name, for messages.
    warn_groups : bool, default True
        Warn about a slicing column with many distinct values (:func:`warn_many_groups`).
    suffix : str, default ""
        Appended to the argument names in messages: ``"_val"`` for a validation sample
        (``X_val``, ``y_val``, ``sensitive_features_val``).

    Returns
    -------
    PreparedData

    Raises
    ------
    ValueError
        y missing or of the wrong length, missing or continuous labels, one class, labels not
        among ``classes``, bad sample weights, sensitive features with missing values or the
        wrong number of rows, pandas arguments whose indexes differ (rows would be paired by
        position: reset or align them), an empty or mis-shaped dataset.
    """
    check_inputs(X, y, sensitive_features, sample_weight, suffix)
    if datasets or extra_columns:
        if encoder is not None:
            raise ValueError("a fitted encoder applies to one dataset without computed columns")
        return _prepare_stacked(X, y, sensitive_features, sample_weight, datasets, extra_columns, classes, who,
                                warn_groups)
    n = n_rows(X)
    if n is None:
        n = num_samples(X)  # array-likes without len (an __array__ object); raises for the rest
    if n == 0:
        raise ValueError(f"X{suffix} has 0 rows: {who} needs labelled rows")
    y = _labels(y, n, who, suffix)
    classes = _classes(y, classes)
    y_codes = compact_codes(_encode(y, classes, suffix), len(classes))
    sw = check_sample_weight(sample_weight, n)
    if encoder is None:
        encoder = CellEncoder()
        cells = compact_codes(encoder.fit_transform(sensitive_features, n), encoder.n_cells)
        if warn_groups:
            warn_many_groups(encoder, cells, stacklevel=4)
    else:
        cells = compact_codes(encoder.transform(sensitive_features, n), encoder.n_cells)
    space = _positive(ConfusionSpace.from_codes(y_codes, cells, classes, encoder.cells_, sw))
    return PreparedData(X, y_codes, cells, classes, encoder, space, sw, None, sensitive_features, [TRAIN], None, y)


def _classes(y, classes):
    if classes is None:
        classes = class_labels(y)
        if len(classes) < 2:
            raise ValueError(f"y has one class {classes.tolist()}: need at least two")
        return classes
    return np.asarray(classes)  # labels outside them: encode_labels names them


def _prepare_stacked(X, y, sensitive_features, sample_weight, datasets, extra_columns, classes, who, warn_groups):
    if y is None and not datasets:
        raise ValueError(f"{who} requires y to be passed, but the target y is None")
    if y is not None:
        y = _labels(y, n_rows(X), who)
    st = stack_datasets(X, y, sensitive_features, sample_weight, datasets)
    frame = st.sensitive_features
    for name, column in (extra_columns or {}).items():
        if name in frame.columns:
            raise ValueError(f"a sensitive-feature column {name!r} is given and also computed ({name!r} is "
                             "reserved for it here): pass one")
        frame[name] = np.asarray(column(st.X))
    labels = st.y[st.labelled]
    if len(labels) == 0:
        raise ValueError("no dataset has labels: goals need labelled data (give y)")
    dtype = None if y is None else np.asarray(y).dtype
    try:
        labels = labels.astype(dtype) if dtype is not None else np.asarray(labels.tolist())
    except (TypeError, ValueError):
        labels = np.asarray(labels.tolist(), dtype=object)
    classes = _classes(labels, classes)
    y_codes = np.zeros(len(st.y), dtype=np.intp)
    y_codes[st.labelled] = encode_labels(labels, classes)
    y_codes = compact_codes(y_codes, len(classes))
    encoder = CellEncoder()
    cells = compact_codes(encoder.fit_transform(frame, len(st.y)), encoder.n_cells)
    if warn_groups:
        warn_many_groups(encoder, cells, stacklevel=5)
    sw = st.sample_weight
    labelled = None if st.labelled.all() else st.labelled
    space = _space(y_codes, cells, labelled, classes, encoder, sw)
    return PreparedData(st.X, y_codes, cells, classes, encoder, space, sw, labelled, frame, st.names, None, st.y)
