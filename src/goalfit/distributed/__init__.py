"""Fitting and predicting on Dask collections (``pip install 'goalfit[dask]'``).

:class:`~goalfit.GoalClassifier` hands Dask arrays and Dask DataFrames to this package:
``fit``, ``predict``, ``predict_proba`` and ``evaluate`` (and :func:`goalfit.report.build_report`)
run on whatever Dask scheduler is active — a ``dask.distributed.Client`` on a ``LocalCluster``
or on an existing scheduler, or Dask's default (threads) when no client is connected.

The plug-in's structure is a map then a small reduce: one pass computes the base model's class
probabilities per partition, and the outer loop (Narasimhan et al., JMLR 2024, Alg. 9/10 behind
every method) reads only sufficient statistics of them:

* **binary** problems: per-(cell, class) score distributions of ``eta_1`` — the exact sorted
  scores gathered on the client when they fit (``statistics="exact"``; the fit is then the
  in-memory fit on the same numbers), otherwise fine histograms reduced over the partitions
  (``statistics="histogram"``; each rate within the bound ``statistics_["rate_error_bound"]``,
  see :mod:`goalfit.distributed.statistics`);
* **multiclass** problems: the probabilities stay on the workers (persisted) and every oracle
  call is one map-reduce of the confusion tensors of the plug-in rule.

Base models: a fitted scikit-learn model wrapped in :class:`sklearn.frozen.FrozenEstimator`
(applied per partition), an incremental learner trained with ``partial_fit`` over the
partitions (e.g. ``SGDClassifier(loss="log_loss")``), or ``estimator="precomputed"`` (``X``
holds the probabilities). dask-ml is not a dependency (see the README section "Beyond one machine").

Options are Dask config keys (``dask.config.set`` or :func:`options`): ``goalfit.statistics``
(``"auto"``, ``"exact"``, ``"histogram"``), ``goalfit.n_bins`` (a power of two),
``goalfit.max_exact_rows`` and ``goalfit.partial_fit_epochs``.
"""
from ..utils.lazy import lazy_attributes
from ._detect import is_dask_collection

__all__ = ["is_dask_collection", "options", "fit", "predict", "predict_proba", "evaluate"]


#: Loaded on first use (importing goalfit must not import dask): name -> module of this package.
_LAZY = {"fit": "backend", "predict": "backend", "predict_proba": "backend", "evaluate": "backend",
         "options": "statistics"}

__getattr__ = lazy_attributes(__name__, _LAZY)
