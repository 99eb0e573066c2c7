"""Data backends: where the rows of a fit, a prediction or an evaluation live.

Every estimator and the report ask :func:`data_backend` for the backend of their input and call
it; nothing else in goalfit tests what kind of collection it was given. Two implementations:

* :class:`InMemoryData` -- numpy, pandas and scipy.sparse input: one preparation
  (:func:`goalfit.fit.prepare`), evaluation with intervals;
* ``goalfit.distributed.backend.DaskData`` -- Dask arrays and DataFrames (``goalfit[dask]``),
  loaded on first use: the rows stay on the workers, the plug-in methods read sufficient
  statistics reduced over the partitions (:mod:`goalfit.distributed`).

A family whose method needs the rows in memory (ramp, subdata, surrogate, Lagrangian) declares
``_dask_support = False`` and gets one clear error from :func:`data_backend` instead.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ..utils.lazy import load
from .data import PreparedData

if TYPE_CHECKING:
    import numpy as np

    from ..confusion import CellEncoder

#: Where the Dask backend lives (imported on first Dask input only: Dask is an optional extra).
DASK_BACKEND = "goalfit.distributed.backend:DaskData"


def is_dask_collection(obj) -> bool:
    """Whether ``obj`` is a Dask collection (array, DataFrame, Series, ...).

    Cheap for every other input: Dask is imported only when the object's type comes from it.

    Examples
    --------
    >>> import numpy as np
    >>> is_dask_collection(np.zeros(3))
    False
    """
    if not type(obj).__module__.startswith("dask"):
        return False
    import dask

    return dask.is_dask_collection(obj)


class DataBackend(Protocol):
    """What a data backend provides (:class:`InMemoryData`, ``DaskData``).

    Attributes
    ----------
    in_memory : bool
        Whether the rows are in memory (intervals, ``confidence=``, derandomization need them).
    data : PreparedData or None
        The prepared training rows (None when they stay on Dask workers).
    classes : ndarray of shape (n_classes,)
    encoder : goalfit.confusion.CellEncoder
    base_seconds : float
        Seconds the backend spent fitting a base model while reading the data.
    """

    in_memory: bool
    data: PreparedData | None
    classes: np.ndarray
    encoder: CellEncoder
    base_seconds: float

    def require_in_memory(self, what: str) -> None:
        """Refuse an option that needs the rows in memory (ValueError naming ``what``)."""

    def n_outer_samples(self, outer) -> int:
        """The number of rows the method ran on."""

    @staticmethod
    def predict(est, X, *, sensitive_features=None, random_state=None, stratified=None):
        """Labels of ``est``'s deployed rule on ``X``."""

    @staticmethod
    def predict_proba(est, X, *, sensitive_features=None):
        """Class distribution of ``est``'s deployed rule on ``X``."""

    @staticmethod
    def evaluate(est, X, y, **kwargs) -> dict:
        """:meth:`goalfit.fit.GoalEstimator.evaluate` on this backend's rows."""

    @staticmethod
    def group_rates(classes, classifiers: dict, X, y, sensitive_features, split) -> dict:
        """The report's per-group rates of ``classifiers`` ({"goalfit": ..., "baseline": ...}),
        for a backend whose rows are not in memory (in memory the report computes them with
        intervals)."""


class InMemoryData:
    """The fit's rows in memory, prepared once (:func:`goalfit.fit.prepare`).

    Parameters
    ----------
    data : PreparedData

    Examples
    --------
    >>> import numpy as np
    >>> from goalfit.fit import prepare
    >>> backend = InMemoryData(prepare(np.zeros((4, 1)), [0, 1, 0, 1]))
    >>> backend.classes.tolist(), backend.in_memory
    ([0, 1], True)
    """

    in_memory = True
    base_seconds = 0.0

    def __init__(self, data: PreparedData):
        self.data = data
        self.classes, self.encoder = data.classes, data.encoder

    def require_in_memory(self, what: str) -> None:
        """Nothing to refuse in memory."""

    def n_outer_samples(self, outer) -> int:
        return outer.n_samples

    @staticmethod
    def predict(est, X, *, sensitive_features=None, random_state=None, stratified=None):
        return est._predict_rows(X, sensitive_features=sensitive_features, random_state=random_state,
                                 stratified=stratified)

    @staticmethod
    def predict_proba(est, X, *, sensitive_features=None):
        return est.distribution(X, sensitive_features=sensitive_features)

    @staticmethod
    def evaluate(est, X, y, **kwargs) -> dict:
        return est._evaluate_rows(X, y, **kwargs)


def data_backend(X, est=None):
    """The backend class for the collection ``X`` (:class:`InMemoryData` or ``DaskData``).

    Parameters
    ----------
    X : array-like, DataFrame, sparse matrix or Dask collection
    est : estimator, optional
        The estimator that will read ``X``: a family whose ``_dask_support`` is False refuses a
        Dask collection here.

    Raises
    ------
    ValueError
        A Dask collection for an estimator whose method needs the rows in memory, naming the
        estimator and the fix.
    ImportError
        A Dask collection without ``goalfit[dask]`` installed.
    """
    if not is_dask_collection(X):
        return InMemoryData
    if est is not None and not getattr(est, "_dask_support", False):
        name = type(est).__name__
        raise ValueError(f"{name} cannot read a Dask collection: its method needs the rows in memory. Compute "
                         f"it first (X.compute(), or a sample of the partitions), or use GoalClassifier, whose "
                         "plug-in methods run on Dask (goalfit.distributed)")
    return load(DASK_BACKEND)
