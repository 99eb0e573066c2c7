"""The fit core every estimator stands on.

One goal pipeline::

    data + goals  ->  prepare (classes, cells, confusion space)  ->  Problem.compile
                  ->  method.check / method.solve  ->  FitResult  ->  the estimator's result protocol

* :func:`prepare` / :class:`PreparedData`: the one preparation of ``X, y, sensitive_features,
  sample_weight`` and extra datasets (:mod:`goalfit.fit.data`);
* :func:`resolve_margins` / :func:`tighten`: ``margin=`` and ``confidence=`` move constraint
  bounds inwards (:mod:`goalfit.fit.problem`); :func:`as_seed` turns ``random_state`` into a seed;
* :class:`Method`: the interface every family implements (``check(compiled)`` refuses a goal
  with a one-line reason, ``solve(data, compiled, params)`` returns a :class:`FitResult`); the
  registry of methods is :mod:`goalfit.methods`;
* :func:`certify` / :class:`Certification`: ``confidence=``, candidates with predicted margins
  tested in fixed sequence on a held-out safety part (:mod:`goalfit.fit.certification`);
* :func:`data_backend` / :class:`DataBackend`: where the rows live (:class:`InMemoryData`, Dask's
  ``DaskData``), asked by the estimators and the report (:mod:`goalfit.fit.backends`);
* :class:`GoalEstimator`: the base of every estimator (``fit`` is the one template; families
  supply hooks, :class:`FitContext`) (parameter validation, the result protocol,
  ``evaluate``, ``score``, ``plan_certification``); :class:`Progress`: ``verbose=`` output.
"""
from .certification import MARGIN_GRID, Certification, certify, goal_sample, predicted_widths, safety_rows, split_rows
from .backends import DataBackend, InMemoryData, data_backend, is_dask_collection
from .data import MANY_GROUPS, PreparedData, prepare, warn_many_groups
from .estimator import GOAL_PARAMETERS, FitContext, GoalEstimator, check_goals_label_free
from .method import (TEMPLATE_OPTIONS, Method, MethodSettings, UnsupportedGoal, fit_options, settings_dataclass, check_method_params, keyword_names, refuse_constraints,
                     require_binary, require_linear)
from .problem import as_seed, check_tightenable, resolve_margins, tighten
from .progress import SILENT, Progress
from .result import DetailsView, FitResult
from .slices import SmallSliceWarning, check_slice_sizes

__all__ = ["SmallSliceWarning", "check_slice_sizes", "MethodSettings", "settings_dataclass", "DetailsView", "DataBackend", "FitContext", "TEMPLATE_OPTIONS", "fit_options", "InMemoryData", "data_backend", "is_dask_collection", "MARGIN_GRID", "Certification", "certify", "goal_sample", "predicted_widths", "safety_rows", "split_rows",
           "FitResult", "GOAL_PARAMETERS", "GoalEstimator", "MANY_GROUPS", "Method", "PreparedData", "Progress", "SILENT",
           "UnsupportedGoal", "as_seed", "check_tightenable", "check_goals_label_free", "check_method_params", "keyword_names",
           "prepare", "refuse_constraints", "require_binary", "require_linear", "resolve_margins", "tighten",
           "warn_many_groups"]
