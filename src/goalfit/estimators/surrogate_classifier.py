"""Estimators for black-box goals (Jiang et al., ICML 2020) on the fit core.

* :class:`AdaptiveSurrogateClassifier` -- the paper's method (Alg. 1 with Alg. 2 / 3 / §5.3):
  a linear model in numpy or any PyTorch module trained to minimize an objective that it only
  evaluates, optionally subject to rate constraints, measured on the training sample or on a
  validation sample (which may come from another distribution than the training data: noisy
  or proxy labels, noisy features).
* :class:`BlackBoxPostShiftClassifier` -- the required post-shift baseline: logistic
  regression (or any estimator with ``decision_function``) plus one threshold, the best for the
  goals on the validation sample (feasible first).
* :class:`RelaxedFMClassifier` -- the Relaxed-FM baseline for macro-F over groups (§6.2).

All take ``fit(X, y, *, sensitive_features=None, sample_weight=None, X_val=None, y_val=None,
sensitive_features_val=None)``. The data go through :func:`goalfit.fit.prepare` (the one reader
of ``sensitive_features``); the models never read the groups, so the validation and
evaluation data may hold groups the training data lack. The objective is a goal of the core
vocabulary (a name such as ``"gmean"`` or an expression), compiled on the prepared data like
every goal, or a metric known only by evaluation (``"prbep"``, a
:class:`~goalfit.goals.BlackBoxMetric`, a callable; :func:`goalfit.goals.blackbox.resolve_objective`).
Binary labels; ``classes_[1]`` is the positive class.
"""
from __future__ import annotations

import time
import warnings

import numpy as np
# scikit-learn has no public module for parameter constraints: _param_validation is what its own
# estimators and scikit-learn-compatible libraries use for _parameter_constraints
from sklearn.utils._param_validation import HasMethods, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ..fit import GOAL_PARAMETERS, GoalEstimator, UnsupportedGoal, prepare
from ..goals import Problem
from ..goals.blackbox import group_columns, resolve_objective
from ..methods.surrogate.baselines import PostShiftMethod, PostShiftSettings, RelaxedFMMethod
from ..methods.surrogate.method import SurrogateMethod, SurrogateSettings
from ..methods.surrogate.problem import metric_groups
from ..methods.surrogate.spgd import PROJECTION_TOL
from ..methods.surrogate.surrogates import LOSSES, PointwiseLoss
from ..utils.deprecation import DeprecatedParams

__all__ = ["AdaptiveSurrogateClassifier", "BlackBoxPostShiftClassifier", "RelaxedFMClassifier"]

#: ``objective`` of these estimators: a goal (a name or an expression) or a metric known only by evaluation.
_OBJECTIVE = [str, HasMethods(["bind"]), HasMethods(["evaluate_many"]), callable]


class _ScoreEstimator(DeprecatedParams, GoalEstimator):
    """Shared by the black-box estimators: objective, the validation sample, evaluation, scores.

    The fit is the template's (:meth:`goalfit.fit.GoalEstimator.fit`); the hooks here read the
    features (``validate_data``), check binary labels and prepare the validation sample that
    selects the rule (``X_val, y_val, sensitive_features_val``), which each method receives with
    the objective known only by evaluation (:meth:`_sample_params`).
    """

    _fit_inputs = ("X_val", "y_val", "sensitive_features_val")

    def _goal_problem(self) -> Problem:
        """The goals; an objective known only by evaluation stands as ``"error"`` in the compiled
        problem (its constraints are what the result protocol reads) and is evaluated apart."""
        goal, _ = resolve_objective(self.objective)
        return Problem("error" if goal is None else goal, self.constraints)

    def check_params(self) -> None:
        """Validate every constructor parameter without data (see :meth:`goalfit.fit.GoalEstimator.check_params`).

        Raises
        ------
        ValueError, TypeError
            A constraint given as the objective (it belongs in ``constraints``), an unknown
            objective name, a parameter of the wrong type or range, an unknown ``method_params``
            key or a bad value.
        """
        resolve_objective(self.objective)  # before the type table: a constraint gets its own message
        super().check_params()

    def _fit_features(self, X):
        return validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=True)

    def _before_solve(self, ctx) -> None:
        """Binary labels; the validation sample (``X_val, y_val``) that selects the rule."""
        data = ctx.backend.data
        self.group_columns_ = list(data.encoder.columns_)
        self._check_binary(data)
        ctx.state["metric"] = resolve_objective(self.objective)[1]
        ctx.state["selection"] = self._selection(data, ctx.problem, ctx.inputs["X_val"], ctx.inputs["y_val"],
                                                 ctx.inputs["sensitive_features_val"])

    @staticmethod
    def _sample_params(ctx) -> dict:
        """What every method of these estimators reads beside its own knobs: ``metric`` (the
        objective when it is known only by evaluation, else None) and ``selection``."""
        return {"metric": ctx.state["metric"], "selection": ctx.state["selection"]}

    def _check_binary(self, data) -> None:
        if data.n_classes != 2:
            raise UnsupportedGoal(f"Only binary classification is supported by {type(self).__name__}; y has "
                                  f"{data.n_classes} classes {data.classes.tolist()}")

    def _selection(self, data, problem, X_val, y_val, sensitive_features_val):
        """The validation sample and the goals compiled on it, or None (the training sample selects);
        its arguments were checked with the training ones (:func:`goalfit.fit.data.check_validation_inputs`)."""
        if X_val is None:
            return None
        dv = prepare(self._check_predict_X(X_val), y_val, sensitive_features=sensitive_features_val,
                     classes=data.classes, who=type(self).__name__, warn_groups=False, suffix="_val")
        return dv, problem.compile(dv.space)

    def _check_predict_X(self, X):
        return validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)

    def decision_function(self, X):
        """Scores of the deployed rule, shape (n_samples,): positive where :meth:`predict` gives ``classes_[1]``."""
        check_is_fitted(self, "classifier_")
        return self.classifier_.decision_function(self._check_predict_X(X))

    def evaluate(self, X, y=None, *, sensitive_features=None, sample_weight=None, datasets=None, confidence=None,
                 interval_method="auto", classifier=None) -> dict:
        """Objective and constraint values of the deployed rule (or ``classifier``) on labelled data.

        As :meth:`goalfit.fit.GoalEstimator.evaluate`. An objective known only by evaluation
        (PRBEP, a callable) is computed by the metric from the labels, the scores and (when it
        reads groups) the one slicing column, unweighted and without an interval.

        Raises
        ------
        ValueError
            As :meth:`goalfit.fit.GoalEstimator.evaluate`; also when the objective is measured
            over groups, the model was fitted with ``sensitive_features`` and none are given
            (without them it would be a different metric).
        """
        check_is_fitted(self, "classifier_")
        goal, metric = resolve_objective(self.objective)
        reads = metric.uses_groups if metric is not None else group_columns(goal)[0]
        if sensitive_features is None and self.group_columns_ and reads:
            name = metric.name if metric is not None else goal.name
            raise ValueError(f"the objective {name!r} is measured over groups and the model was fitted with "
                             "sensitive_features: pass sensitive_features=... (without them it would be a "
                             "different metric)")
        out = super().evaluate(X, y, sensitive_features=sensitive_features, sample_weight=sample_weight,
                               datasets=datasets, confidence=confidence, interval_method=interval_method,
                               classifier=classifier)
        if metric is not None:
            data = prepare(X, y, sensitive_features=sensitive_features, classes=self.classes_,
                           who=type(self).__name__, warn_groups=False)
            clf = self.classifier_ if classifier is None else classifier
            s = np.asarray(clf.decision_function(self._check_predict_X(data.X)), dtype=float)
            y01 = np.asarray(data.y_codes == 1, dtype=int)
            value = metric(y01, s, metric_groups(data) if metric.uses_groups else None)
            from ..goals.blackbox import BlackBoxMetric
            from ..metrics.evaluation import objective_entry

            # a user's callable names no score of goalfit's (its name may be anything)
            out["objective"] = objective_entry(metric.name, value, named=type(metric) is not BlackBoxMetric)
        return out

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.classifier_tags.multi_class = False
        return tags


class AdaptiveSurrogateClassifier(_ScoreEstimator):
    """Minimize a black-box objective, subject to rate constraints, by adaptively combining
    surrogates (Jiang et al., ICML 2020, Alg. 1).

    Projected gradient descent in the K-dimensional space of rate surrogates: estimate the
    gradient of the unknown monotone psi in ``M = psi(phi) + eps`` (Alg. 3 by default, as in
    all the paper's experiments), step the surrogate profile, and project back with problem
    (4), i.e. train the model on an adaptively re-weighted sum of the surrogates
    (:class:`goalfit.methods.surrogate.SurrogateMethod`). The surrogates' slices are read from
    the compiled goals (:mod:`goalfit.methods.surrogate.slices`): positives and negatives for
    G-mean, per group for macro-F over groups, refined by the constraints' groups.

    Constraints (an extension of the paper, whose Theorem 2 covers the unconstrained case
    only) are followed by a Lagrangian in surrogate space: their exact values on the selection
    sample drive multipliers, their gradients in surrogate space come from the same
    perturbations as the objective's, and the returned iterate is chosen feasible first on the
    selection sample (:mod:`goalfit.methods.surrogate.spgd`). Guarantee: if any assessed
    iterate meets every constraint on the selection sample (the validation data, else the
    training data), the returned rule does, with the lowest objective among those; otherwise
    it is the least violating and a RuntimeWarning says so. Nothing is guaranteed on other data.

    Parameters
    ----------
    objective : str, goal expression, BlackBoxMetric or callable, default "gmean"
        The loss to minimize (lower is better): a goal of the core vocabulary (``"gmean"``,
        ``"macro_f1_over_groups"``, ``"error"``, ``gf.f1()``,
        ``gf.macro_f1_over_groups("sex")``, ...: compiled on the data, evaluated on the
        predictions), or a metric known only by evaluation: ``"prbep"``,
        ``gf.precision_at_k_loss(k)``, any :class:`~goalfit.goals.BlackBoxMetric` or callable
        ``func(y_true, y_pred) -> loss`` on 0/1 labels.
    constraints : sequence of Constraint, default ()
        Polyhedral rate goals, e.g. ``[gf.demographic_parity_difference("sex") <= 0.02]``.
    estimator : torch.nn.Module, optional
        A PyTorch model with one output per example (its current parameters are the start);
        default a linear model in numpy.
    surrogates : "auto", loss name, PointwiseLoss or list, default "auto"
        ``"auto"``: hinge surrogates over the goals' slices; ``"hinge"``, ``"logistic"``,
        ``"sigmoid"`` (non-convex, §6.4-6.5), ``"lp"`` or a
        :class:`~goalfit.methods.surrogate.surrogates.PointwiseLoss`: the same slices with that
        loss; a list of :class:`~goalfit.methods.surrogate.SliceSurrogate` /
        :class:`~goalfit.methods.surrogate.QuantilePrecisionSurrogate` whose ``group`` is a goal
        group (``{"race": "Black"}``; groups may overlap, §6.5), to which the constraints'
        slices are added.
    method : {"interpolation", "finite_difference", "two_point"}, default "interpolation"
        Alg. 3, Alg. 2 or the §5.3 estimator (the last two need the goals on the training
        sample, no ``X_val``, and disjoint slices).
    method_params : dict, optional
        :data:`goalfit.methods.surrogate.SURROGATE_PARAMS`: ``n_perturbations`` (m, default
        100; the paper 1000), ``sigma`` (perturbation scale, default 1.0: in parameter space for
        Alg. 3, surrogate space for Alg. 2, sigma1 of §5.3 with sigma2 = sigma / 4),
        ``gradient_params`` (e.g. ``{"mode": "one_sided", "ridge": 1e-3}``), ``step_size``
        (eta in surrogate space, 1.0), ``eval_every`` (selection checks without constraints,
        10), ``n_restarts`` (1), ``restart_scale`` (1.0), ``multiplier_step`` (10.0) and
        ``multiplier_decay`` (10.0) of the multipliers' ascent, ``projection`` ("lbfgs",
        "adagrad", "torch_lbfgs"), ``projection_iter`` (100), ``projection_lr`` (1.0),
        ``param_bound`` (a box on the parameters, advisable with sigmoid surrogates), ``dtype``
        ("float32": precision of the products with X of a linear model), ``chunk_elements``,
        ``device`` (torch).
    alpha : float, optional
        l2 weight ``alpha / 2 ||w||^2`` added to every projection (the weights, not the
        intercept, of a linear model; every parameter of a torch module). None: no penalty,
        the paper's projection.
    max_iter : int, default 100
        T, outer steps per run (the paper: 250).
    tol : float, default 1e-5
        Stopping tolerance of each projection: L-BFGS-B stops once an iteration lowers
        ``||(phi - u~)_+||^2`` by less than ``tol`` times its value at the warm start (the
        squared surrogate-space step). Theorem 2 needs the projection only to O(1/(beta^2 T));
        0 runs every projection to 100 iterations.
    init : {"zeros", "logistic"} or array, default "zeros"
        Start of a linear model: theta = 0 (the colab), a logistic-regression fit, or
        ``[w, b]``; a torch module starts from its parameters (or an array).
    fit_intercept : bool, default True
    random_state : int, RandomState or None
        Seeds the perturbations and the restarts.
    verbose : int, default 0
        0: silent; 1: the assessed iterates (objective, worst violation) every second; 2: each.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    theta_ : ndarray of shape (d,)
        Selected parameters.
    coef_, intercept_ : linear models only
    module_ : torch.nn.Module, torch models only (a copy with ``theta_`` loaded)
    surrogates_ : list of dict
        Per surrogate: ``name``, ``label``, ``group``, ``n_examples``.
    surrogate_names_ : list of str, length K
    surrogate_path_ : ndarray of shape (T + 1, K)
        Surrogate profiles u_t of the selected run.
    target_path_, gradient_path_ : ndarray of shape (T, K)
    condition_numbers_, residuals_ : ndarray of shape (T,)
        Alg. 3 diagnostics (``cond(H)`` and ``||Hg - M|| / ||M||``; NaN for Alg. 2 / §5.3).
    metric_path_ : ndarray of shape (E, 2)
        (iteration, selection objective) at each assessment of the selected run.
    best_iteration_, best_restart_ : int
    validation_metric_, selection_max_violation_ : float
        The selected iterate's objective and largest violation on the selection sample (the
        validation data when given, else the training data).
    multipliers_ : ndarray of shape (R,)
        The selected run's last multipliers, one per constraint row (``constraint_rows_``).
    constraint_rows_ : list of str
    n_metric_calls_ : int
        Models evaluated on the selection sample.
    n_iter_ : int
        Outer steps run (``max_iter`` per run).
    problem_, result_, history_, classifier_, feasible_, max_violation_, method_, margins_,
    certified_, certification_, fit_seconds_
        The result protocol (:class:`goalfit.fit.GoalEstimator`); ``classifier_`` is the
        deterministic rule ``f(x) > 0`` (:class:`~goalfit.classifiers.ScoreClassifier`;
        ``predict_proba`` is one-hot), ``feasible_`` is on the training data.

    Raises
    ------
    ValueError
        At fit, before any solving: non-binary labels, a constraint given as the objective,
        a constraint without polyhedral form, an unknown ``method_params`` key or a bad value,
        mismatched lengths, labels of ``y_val`` not in ``y``, groups a goal names that the data
        lack, an empty surrogate slice, too few perturbations for the regression (m < K + 1),
        score-space estimators with a validation sample or overlapping slices.

    Notes
    -----
    Standardize the features: sigma is one scale for every parameter. An ill-conditioned H
    raises an ``IllConditionedWarning`` and is recorded in ``condition_numbers_``.

    Examples
    --------
    >>> import numpy as np
    >>> import goalfit as gf
    >>> rng = np.random.default_rng(0)
    >>> X, s = rng.normal(size=(300, 3)), rng.choice(["a", "b"], 300)
    >>> y = (X[:, 0] + 0.5 * (s == "b") + 0.5 * rng.normal(size=300) > 0).astype(int)
    >>> model = gf.AdaptiveSurrogateClassifier("gmean", max_iter=10, random_state=0).fit(X, y)
    >>> print(f"G-mean loss {model.evaluate(X, y)['objective']['value']:.3f}")
    G-mean loss 0.165
    """

    _parameter_constraints = {
        **GOAL_PARAMETERS,
        "objective": _OBJECTIVE,
        "estimator": [None, HasMethods(["parameters", "forward"])],
        "surrogates": [StrOptions({"auto"} | set(LOSSES)), PointwiseLoss, list, tuple],
        "method": [StrOptions({"interpolation", "finite_difference", "two_point"})],
        "init": [StrOptions({"zeros", "logistic"}), "array-like"],
        "fit_intercept": ["boolean"],
    }

    def __init__(self, objective="gmean", constraints=(), *, estimator=None, surrogates="auto",
                 method="interpolation", method_params=None, alpha=None, max_iter=100, tol=PROJECTION_TOL,
                 init="zeros", fit_intercept=True, confidence=None, margin=None, random_state=None, verbose=0,
                 **deprecated_params):
        self.objective = objective
        self.constraints = constraints
        self.estimator = estimator
        self.surrogates = surrogates
        self.method = method
        self.method_params = method_params
        self.alpha = alpha
        self.max_iter = max_iter
        self.tol = tol
        self.init = init
        self.fit_intercept = fit_intercept
        self.confidence = confidence
        self.margin = margin
        self.random_state = random_state
        self.verbose = verbose
        self._fold_deprecated(deprecated_params)

    #: Constructor keywords of goalfit 0.1 (accepted with a FutureWarning until 0.3): where each now lives.
    _deprecated_params = {
        "metric": "objective", "surrogate_loss": "surrogates", "module": "estimator", "gradient": "method",
        "n_iter": "max_iter", "projection_tol": "tol",
        **{name: f"method_params.{name}" for name in (
            "device", "n_perturbations", "sigma", "gradient_params", "step_size", "projection", "projection_iter",
            "projection_lr", "param_bound", "eval_every", "n_restarts", "restart_scale", "dtype", "chunk_elements")},
    }

    @property
    def metric_(self):
        """Deprecated (removed in 0.3): the objective as a :class:`~goalfit.goals.BlackBoxMetric`
        ``metric(y_true, y_pred, groups) -> loss`` (0.1's fitted attribute)."""
        from ..goals.blackbox import as_blackbox_metric
        from ..utils.deprecation import warn_deprecated

        check_is_fitted(self, "classifier_")
        warn_deprecated("AdaptiveSurrogateClassifier.metric_",
                        "goalfit.goals.as_blackbox_metric(goal) (a goal name: goalfit.goals.as_objective(name))")
        goal, metric = resolve_objective(self.objective)
        return metric if metric is not None else as_blackbox_metric(goal)

    # ------------------------------------------------------------------ the fit template's hooks
    def _method(self):
        return SurrogateMethod(self.method)

    def _settings(self):
        return SurrogateSettings.from_params(self.method_params, self.method, self)

    def _run_params(self, ctx, data):
        return data, dict(ctx.settings.params(), alpha=self.alpha, max_iter=self.max_iter, tol=self.tol,
                          fit_intercept=self.fit_intercept, random_state=ctx.seed, init=self.init,
                          estimator=self.estimator, surrogates=self.surrogates, **self._sample_params(ctx))

    def _adopt_details(self, ctx, result, compiled, certification) -> None:
        d = result.details
        res_paths = d.paths
        sel = d.selection
        path = res_paths[sel.restart]
        self.theta_ = d.theta
        if self.estimator is None:
            self.coef_, self.intercept_ = d.coef, d.intercept
        else:
            self.module_ = d.module
        self.surrogates_ = d.surrogates
        self.surrogate_names_ = [s["name"] for s in self.surrogates_]
        self.surrogate_path_, self.target_path_, self.gradient_path_ = path.surrogates, path.targets, path.gradients
        self.condition_numbers_, self.residuals_ = path.condition_numbers, path.residuals
        self.metric_path_ = np.column_stack([path.metric_iterations, path.metric_values])
        self.best_iteration_, self.best_restart_ = sel.iteration, sel.restart
        self.validation_metric_, self.selection_max_violation_ = sel.objective, sel.max_violation
        self.multipliers_ = np.asarray(list(d.multipliers.values()), dtype=float)
        self.constraint_rows_ = list(d.multipliers)
        self.n_metric_calls_ = int(result.n_oracle_calls)
        self.n_iter_ = int(self.max_iter * len(res_paths))

    # ------------------------------------------------------------------ report
    def fit_baseline(self, X, y, *, sensitive_features=None, sample_weight=None, datasets=None):
        """Post-shift on logistic regression for the same goals (Jiang et al.'s required baseline)."""
        check_is_fitted(self, "classifier_")
        if datasets:
            raise ValueError("AdaptiveSurrogateClassifier takes no extra datasets")
        from ..fit import SmallSliceWarning

        t0 = time.perf_counter()
        with warnings.catch_warnings():  # the same goals' slices on the same rows: this fit warned already
            warnings.simplefilter("ignore", SmallSliceWarning)
            ps = BlackBoxPostShiftClassifier(self.objective, self.constraints).fit(
                X, y, sensitive_features=sensitive_features, sample_weight=sample_weight)
        return "post-shift", ps.classifier_, time.perf_counter() - t0

    def report_fields(self) -> dict:
        return {"method": f"adaptive surrogates ({self.method_}, Jiang et al. 2020)", "n_members": 1,
                "n_oracle_calls": int(self.n_metric_calls_), "message": self.result_.message,
                "multipliers": dict(zip(self.constraint_rows_, self.multipliers_.tolist())),
                "surrogates": self.surrogate_names_,
                "timing": {"total_fit_seconds": self.fit_seconds_},
                "history_objective_name": f"{self.result_.details.objective_name} (assessed iterates)",
                "note": ("values of the deterministic rule f(x) > 0 (predict); the objective is a loss (lower is "
                         "better); post-shift = logistic regression with one threshold chosen for the same goals, "
                         "feasible first (Jiang et al.'s required baseline)")}


class BlackBoxPostShiftClassifier(_ScoreEstimator):
    """Post-shift: a fitted model's scores with one threshold chosen for the goals.

    Jiang et al. §6 ("post-shift should be a required baseline"; Koyejo et al. 2014): fit the
    estimator on the training data, then choose the threshold on its ``decision_function``
    that is best for the goals on the validation sample (the training sample without one):
    among the thresholds meeting every constraint, the lowest objective; when none does, the
    least violating (:func:`goalfit.methods.surrogate.baselines.best_threshold`).

    Parameters
    ----------
    objective : str, goal expression, BlackBoxMetric or callable, default "gmean"
        As :class:`AdaptiveSurrogateClassifier`.
    constraints : sequence of Constraint, default ()
        Polyhedral rate goals.
    estimator : estimator with ``decision_function``, optional
        Default ``LogisticRegression(max_iter=1000)``, fitted on the class codes (1: the
        positive class) with the sample weights.
    method_params : dict, optional
        ``{"grid_size": 1000}``: largest number of threshold candidates (the distinct validation
        scores, evenly spaced in rank when there are more).

    Attributes
    ----------
    classes_, estimator_, threshold_ (float), validation_metric_ (float: the objective on the
    selection sample), selection_max_violation_, fit_seconds_, and the result protocol of
    :class:`goalfit.fit.GoalEstimator` (``method_`` is ``"post_shift"``).

    Raises
    ------
    ValueError
        At fit: non-binary labels, a constraint without polyhedral form, an unknown
        ``method_params`` key, mismatched lengths.

    Examples
    --------
    >>> import numpy as np
    >>> import goalfit as gf
    >>> rng = np.random.default_rng(0)
    >>> X, s = rng.normal(size=(300, 3)), rng.choice(["a", "b"], 300)
    >>> y = (X[:, 0] + 0.5 * (s == "b") + 0.5 * rng.normal(size=300) > 0).astype(int)
    >>> model = gf.BlackBoxPostShiftClassifier("gmean").fit(X[:200], y[:200], X_val=X[200:], y_val=y[200:])
    >>> print(f"G-mean loss {model.evaluate(X, y)['objective']['value']:.3f}")
    G-mean loss 0.142
    """

    _parameter_constraints = {
        **GOAL_PARAMETERS,
        "objective": _OBJECTIVE,
        "estimator": [None, HasMethods(["fit", "decision_function"])],
    }

    def __init__(self, objective="gmean", constraints=(), *, estimator=None, method_params=None,
                 **deprecated_params):
        self.objective = objective
        self.constraints = constraints
        self.estimator = estimator
        self.method_params = method_params
        self._fold_deprecated(deprecated_params)

    #: Constructor keywords of goalfit 0.1 (accepted with a FutureWarning until 0.3).
    _deprecated_params = {"metric": "objective", "grid_size": "method_params.grid_size"}

    # ------------------------------------------------------------------ the fit template's hooks
    def _method(self):
        return PostShiftMethod()

    def _settings(self):
        return PostShiftSettings.from_params(self.method_params, "post_shift", self)

    def _run_params(self, ctx, data):
        return data, dict(ctx.settings.params(), estimator=self.estimator, **self._sample_params(ctx))

    def _adopt_details(self, ctx, result, compiled, certification) -> None:
        d = result.details
        self.estimator_, self.threshold_ = d.estimator, d.threshold
        self.validation_metric_, self.selection_max_violation_ = d.selection.objective, d.selection.max_violation

    def report_fields(self) -> dict:
        return {"method": "post-shift (one threshold on a fitted model's scores)", "n_members": 1,
                "timing": {"total_fit_seconds": self.fit_seconds_}}


class RelaxedFMClassifier(_ScoreEstimator):
    """Relaxed-FM (Jiang et al. §6.2 baseline): maximize a hinge relaxation of macro-F over groups.

    Linear model trained by L-BFGS-B on the relaxed macro-F over the groups of the training data
    (those of ``macro_f1_over_groups``: the column the objective names, else the one slicing
    column; one group without), keeping the iterate with the best objective on the validation
    data (see :func:`goalfit.methods.surrogate.baselines.relaxed_macro_f1`).

    Parameters
    ----------
    objective : default "macro_f1_over_groups"
        The goal used to choose the iterate.
    constraints : sequence of Constraint, default ()
        Not supported: a non-empty sequence raises ValueError before fitting.
    max_iter : int, default 200
    init : {"zeros", "logistic"} or array, default "logistic"
    fit_intercept : bool, default True

    Attributes
    ----------
    classes_, coef_, intercept_, theta_, validation_metric_, metric_path_ (list of (iteration,
    value)), n_iter_ (L-BFGS-B iterations, at least 1), fit_seconds_, and the result protocol of
    :class:`goalfit.fit.GoalEstimator`.

    Examples
    --------
    >>> import numpy as np
    >>> import goalfit as gf
    >>> rng = np.random.default_rng(0)
    >>> X, s = rng.normal(size=(300, 3)), rng.choice(["a", "b"], 300)
    >>> y = (X[:, 0] + 0.5 * (s == "b") + 0.5 * rng.normal(size=300) > 0).astype(int)
    >>> model = gf.RelaxedFMClassifier().fit(X[:200], y[:200], X_val=X[200:], y_val=y[200:])
    >>> model.predict(X[:5])
    array([1, 1, 1, 0, 0])
    """

    _parameter_constraints = {
        **GOAL_PARAMETERS,
        "objective": _OBJECTIVE,
        "init": [StrOptions({"zeros", "logistic"}), "array-like"],
        "fit_intercept": ["boolean"],
    }

    def __init__(self, objective="macro_f1_over_groups", constraints=(), *, max_iter=200, init="logistic",
                 fit_intercept=True, **deprecated_params):
        self.objective = objective
        self.constraints = constraints
        self.max_iter = max_iter
        self.init = init
        self.fit_intercept = fit_intercept
        self._fold_deprecated(deprecated_params)

    #: Constructor keywords of goalfit 0.1 (accepted with a FutureWarning until 0.3).
    _deprecated_params = {"metric": "objective"}

    # ------------------------------------------------------------------ the fit template's hooks
    def _method(self):
        return RelaxedFMMethod()

    def _run_params(self, ctx, data):
        from ..goals import MacroF1OverGroupsLoss

        goal, _ = resolve_objective(self.objective)
        relaxed = goal if isinstance(goal, MacroF1OverGroupsLoss) else MacroF1OverGroupsLoss()
        return data, dict(relaxed=relaxed, max_iter=self.max_iter, init=self.init, fit_intercept=self.fit_intercept,
                          **self._sample_params(ctx))

    def _adopt_details(self, ctx, result, compiled, certification) -> None:
        d = result.details
        self.theta_, self.coef_, self.intercept_ = d.theta, d.coef, d.intercept
        self.validation_metric_, self.metric_path_ = d.selection.objective, d.metric_path
        self.n_iter_ = max(1, len(self.metric_path_) - 1)

    def _check_method_params(self) -> None:
        n_constraints = 1 if hasattr(self.constraints, "violation") else len(self.constraints)
        if n_constraints:
            raise ValueError("RelaxedFMClassifier takes no constraints (it maximizes the relaxed macro-F alone): "
                             "use AdaptiveSurrogateClassifier or BlackBoxPostShiftClassifier for constrained goals")

    def report_fields(self) -> dict:
        return {"method": "Relaxed-FM (hinge-relaxed macro-F over groups)", "n_members": 1,
                "timing": {"total_fit_seconds": self.fit_seconds_}}
