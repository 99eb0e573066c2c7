"""Estimators for black-box metrics (Jiang et al., ICML 2020), in the core's scikit-learn API.

* :class:`AdaptiveSurrogateClassifier` -- the paper's method (Alg. 1 with Alg. 2 / 3 / §5.3):
  a linear model in numpy or any PyTorch module trained to minimize a black-box metric
  measured on a validation set (which may come from another distribution than the training
  data: noisy or proxy labels, noisy features).
* :class:`BlackBoxPostShiftClassifier` -- the required post-shift baseline: logistic
  regression (or any estimator with ``decision_function``) plus one threshold tuned for the
  black-box metric on the validation set.
* :class:`RelaxedFMClassifier` -- the Relaxed-FM baseline for macro-F over groups (§6.2).

All take ``fit(X, y, *, sensitive_features=None, X_val=None, y_val=None,
sensitive_features_val=None)``: without a validation set the metric is measured on the
training sample (the paper's scenario (a)). ``sensitive_features`` (one column) are the groups
the metric sees (e.g. macro-F over gender) and, by default, the groups the surrogates are
sliced by. Binary labels; ``classes_[1]`` is the positive class.
"""
from __future__ import annotations

import copy
import time

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.linear_model import LogisticRegression
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_array, check_is_fitted, column_or_1d

from ..goals.blackbox import as_blackbox_metric
from ..methods.surrogate.baselines import best_threshold, relaxed_macro_f1
from ..methods.surrogate.gradients import make_gradient_estimator
from ..methods.surrogate.models import LinearScorer, TorchScorer
from ..methods.surrogate.problem import BlackBoxProblem
from ..methods.surrogate.spgd import PROJECTION_TOL, surrogate_pgd
from ..methods.surrogate.surrogates import DEFAULT_CHUNK_ELEMENTS, SurrogateSet, make_rate_surrogates

__all__ = ["AdaptiveSurrogateClassifier", "BlackBoxPostShiftClassifier", "RelaxedFMClassifier"]


def _one_column(sf, n, what, column=None):
    """One group column as an object array; ``column`` (the one a goal metric names) is picked
    from a DataFrame of several."""
    if sf is None:
        return None
    if isinstance(sf, pd.DataFrame) and column is not None and sf.shape[1] > 1 and column in sf.columns:
        sf = sf[[column]]
    if isinstance(sf, pd.DataFrame):
        if sf.shape[1] != 1:
            raise ValueError(f"{what} must be one column for a black-box metric, got {sf.shape[1]}")
        sf = sf.iloc[:, 0]
    arr = np.asarray(sf, dtype=object).ravel() if not isinstance(sf, pd.Series) else sf.to_numpy(dtype=object)
    if len(arr) != n:
        raise ValueError(f"{what} has {len(arr)} rows but X has {n}")
    if pd.isna(pd.Series(arr)).any():
        raise ValueError(f"{what} contains missing values")
    return arr


def _linear_start(init, X, y01, fit_intercept):
    """Start of a linear model: ``"zeros"``, ``"logistic"`` (a logistic-regression fit) or an array.

    Raises
    ------
    ValueError
        For another string or an array of the wrong length.
    """
    d = X.shape[1] + int(fit_intercept)
    if isinstance(init, str):
        if init == "zeros":
            return np.zeros(d)
        if init == "logistic":
            lr = LogisticRegression(max_iter=1000, fit_intercept=fit_intercept).fit(X, y01)
            return np.concatenate([lr.coef_.ravel(), lr.intercept_ if fit_intercept else []])
        raise ValueError(f"init must be 'zeros', 'logistic' or an array, got {init!r}")
    theta = np.asarray(init, dtype=float)
    if theta.shape != (d,):
        raise ValueError(f"init must have shape ({d},) (weights then intercept), got {theta.shape}")
    return theta


class _BlackBoxBase(ClassifierMixin, BaseEstimator):
    """Shared data handling: labels, groups, validation set, metric."""

    def _prepare(self, X, y, sensitive_features, X_val, y_val, sensitive_features_val):
        X = check_array(X, accept_sparse="csr", dtype=float)
        y = column_or_1d(y, warn=True)
        if len(y) != X.shape[0]:
            raise ValueError(f"X has {X.shape[0]} rows but y has {len(y)} (labels mismatch)")
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        if len(self.classes_) != 2:
            raise ValueError(f"black-box metric classifiers are binary; y has classes {self.classes_.tolist()}")
        yc = (y == self.classes_[1]).astype(int)
        self.metric_ = as_blackbox_metric(self.metric)
        g = _one_column(sensitive_features, X.shape[0], "sensitive_features", self._metric_column())
        if (X_val is None) != (y_val is None):
            raise ValueError("pass both X_val and y_val, or neither")
        if X_val is None:
            if sensitive_features_val is not None:
                raise ValueError("sensitive_features_val given without X_val")
            Xv, yv, gv = X, yc, g
        else:
            Xv = check_array(X_val, accept_sparse="csr", dtype=float)
            if Xv.shape[1] != X.shape[1]:
                raise ValueError(f"X_val has {Xv.shape[1]} features but X has {X.shape[1]}")
            yv_raw = column_or_1d(y_val)
            if len(yv_raw) != Xv.shape[0]:
                raise ValueError(f"X_val has {Xv.shape[0]} rows but y_val has {len(yv_raw)} (labels mismatch)")
            unknown = set(np.unique(yv_raw).tolist()) - set(self.classes_.tolist())
            if unknown:
                raise ValueError(f"y_val has labels {sorted(unknown)} not in y's classes {self.classes_.tolist()}")
            yv = (yv_raw == self.classes_[1]).astype(int)
            gv = _one_column(sensitive_features_val, Xv.shape[0], "sensitive_features_val", self._metric_column())
            if (g is None) != (gv is None):
                raise ValueError("pass sensitive_features_val together with sensitive_features")
        self.n_features_in_ = X.shape[1]
        self._group_values = None if gv is None else np.unique(np.concatenate([gv, g]).astype(str))
        return X, yc, g, Xv, yv, gv

    def _metric_column(self):
        """The sensitive column a goal-expression metric names (None for other metrics)."""
        column = getattr(self.metric_, "column", None)
        return None if column in (None, "group") else column

    def _codes(self, g):
        if g is None:
            return None
        if self._group_values is None:
            raise ValueError("sensitive_features given, but the model was fitted without them")
        codes = np.searchsorted(self._group_values, np.asarray(g).astype(str))
        codes = np.clip(codes, 0, len(self._group_values) - 1)
        if (self._group_values[codes] != np.asarray(g).astype(str)).any():
            raise ValueError("sensitive_features hold a group not seen at fit time")
        return codes

    def _linear_scores(self, X):
        check_is_fitted(self, "theta_")
        X = check_array(X, accept_sparse="csr", dtype=float)
        return LinearScorer(X, self.fit_intercept).scores(self.theta_)

    def _labels(self, s):
        return self.classes_[(np.asarray(s) > 0).astype(int)]

    def predict(self, X):
        """Predicted labels, ``classes_[1]`` where the score is positive; shape (n_samples,)."""
        return self._labels(self.decision_function(X))

    def evaluate(self, X, y, *, sensitive_features=None) -> dict:
        """The black-box metric and the accuracy of this classifier on ``(X, y)``.

        The same layout as :meth:`goalfit.GoalClassifier.evaluate` (the goal-vocabulary
        reports read it): the metric is the objective, there are no constraints.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Labels among ``classes_``.
        sensitive_features : array-like of shape (n_samples,), optional
            Groups, for metrics that use them (macro-F over groups); required if the model
            was fitted with them and the metric reads groups.

        Returns
        -------
        dict
            ``{"objective": {"name": metric_.name, "value": loss}, "constraints": [],
            "accuracy": float}``; the loss is lower-is-better (e.g. ``1 - macro-F``), the
            accuracy the share of ``predict(X) == y``, both in [0, 1].

        Raises
        ------
        ValueError
            If ``y`` holds labels outside ``classes_``, lengths differ, or a group was not
            seen at fit time.
        """
        check_is_fitted(self, "classes_")
        y = column_or_1d(y)
        unknown = set(np.unique(y).tolist()) - set(self.classes_.tolist())
        if unknown:
            raise ValueError(f"y has labels {sorted(unknown)} not in classes_ {self.classes_.tolist()}")
        s = self.decision_function(X)
        if len(s) != len(y):
            raise ValueError(f"X has {len(s)} rows but y has {len(y)} (labels mismatch)")
        if (sensitive_features is None and self._group_values is not None
                and getattr(self.metric_, "uses_groups", False)):
            raise ValueError(f"metric {self.metric_.name!r} is measured over groups and the model was fitted "
                             "with sensitive_features: pass sensitive_features=... (without them it would be "
                             "a different metric)")
        g = self._codes(_one_column(sensitive_features, len(y), "sensitive_features", self._metric_column()))
        value = self.metric_(np.asarray(y == self.classes_[1], dtype=int), s, g)
        return {"objective": {"name": self.metric_.name, "value": float(value)}, "constraints": [],
                "accuracy": float(np.mean(self._labels(s) == y))}


class AdaptiveSurrogateClassifier(_BlackBoxBase):
    """Minimize a black-box metric by adaptively combining surrogates (Jiang et al. 2020, Alg. 1).

    Projected gradient descent in the K-dimensional space of surrogate losses: estimate the
    gradient of the unknown monotone psi with ``M = psi(phi) + eps`` (Alg. 3 by default, as in
    all the paper's experiments), step the surrogate profile, and project back with problem (4),
    i.e. train the model on an adaptively re-weighted sum of the surrogates.

    Parameters
    ----------
    metric : str, goal expression, BlackBoxMetric or callable, default "gmean"
        The loss to minimize (lower is better): ``"gmean"``, ``"macro_f1_over_groups"``,
        ``"error"``, ``"prbep"``, a goal expression of the core vocabulary evaluated as a black
        box (``gf.gmean()``, ``gf.macro_f1_over_groups("sex")``, ``gf.f1()``,
        ``gf.demographic_parity_difference("sex")``...; :func:`goalfit.goals.blackbox.goal_metric`),
        or any callable on ``(y_true, y_pred)`` (see :func:`goalfit.goals.blackbox.as_blackbox_metric`).
    surrogate_loss : {"hinge", "logistic", "sigmoid", "lp"} or PointwiseLoss, default "hinge"
        Loss of the rate surrogates: one per (label, surrogate group), K = 2 x groups.
    surrogates : list of SliceSurrogate / QuantilePrecisionSurrogate, optional
        Explicit surrogates (overrides ``surrogate_loss``); their ``group`` names refer to the
        ``surrogate_groups`` passed to :meth:`fit`.
    module : torch.nn.Module, optional
        A PyTorch model with one output per example; default a linear model in numpy.
        Its current parameters are the start (unless ``init`` is an array).
    device : str, default "cpu"
        Torch device of ``module`` (e.g. ``"cuda"`` when a GPU is present).
    gradient : {"interpolation", "finite_difference", "two_point"} or estimator, default "interpolation"
        Alg. 3, Alg. 2 or the §5.3 estimator (the last two need the metric on the training
        sample: no ``X_val``).
    n_perturbations : int, default 100
        m (the paper: 1000; the colab: 100).
    sigma : float, default 1.0
        Perturbation scale: in parameter space for Alg. 3, in surrogate space for Alg. 2
        (sigma1 of §5.3, with sigma2 = sigma / 4).
    gradient_params : dict, optional
        Extra parameters of the estimator (e.g. ``{"mode": "one_sided", "ridge": 1e-3}``).
    step_size : float, default 1.0
        eta, in surrogate space.
    n_iter : int, default 100
        T (the paper: 250).
    projection : {"lbfgs", "adagrad", "torch_lbfgs"}, default "lbfgs"
        Solver of (4): scipy L-BFGS-B, or torch Adagrad (the paper) / L-BFGS.
    projection_iter : int, default 100
    projection_lr : float, default 1.0
    projection_tol : float, default 1e-5
        Stopping tolerance of the L-BFGS-B projection tied to the step size: stop once an
        iteration lowers ``||(phi - u~)_+||^2`` by less than ``projection_tol`` times its value
        at the warm start (the squared surrogate-space step, at most ``eta^2 ||g||^2``).
        Theorem 2 needs the projection only to O(1/(beta^2 T)); 0 runs every projection to
        ``projection_iter`` iterations (the behaviour before issue 15: on the speed.py Adult
        case 3.1x / 6.5x slower in two side-by-side pairs on a loaded VM, validation G-mean
        loss 0.1850 against 0.1849; benchmarks/README.md).
    param_bound : float, optional
        Keep each parameter in ``[-param_bound, param_bound]`` during projections (advisable
        with sigmoid surrogates, which otherwise favour ever larger weights).
    eval_every : int, default 10
        Validation checks for best-iterate selection.
    n_restarts : int, default 1
        Runs from perturbed starts; the best on validation is kept.
    restart_scale : float, default 1.0
    init : {"zeros", "logistic"} or array, default "zeros"
        Start of a linear model: theta = 0 (the colab), or a logistic regression fit.
    fit_intercept : bool, default True
    dtype : {"float32", "float64"}, default "float32"
        Precision of the products with X of a linear model (the m perturbed models of the
        gradient estimate and the projection's scores and gradients); everything else
        (surrogate averages, metric, optimizer, ``decision_function``) is float64. float32
        halves the memory traffic of these products and rounds scores to about 1e-7 relative;
        "float64" reproduces the computation before issue 15 up to summation order.
    chunk_elements : int
        Scores held in memory at once when evaluating many perturbed models.
    random_state : int, Generator or None

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    theta_ : ndarray of shape (d,)
        Selected parameters (best validation metric over iterations and restarts).
    coef_, intercept_ : linear models only
    module_ : torch.nn.Module, torch models only (a copy with ``theta_`` loaded)
    metric_ : BlackBoxMetric
    surrogate_names_ : list of str, length K
    result_ : SPGDResult
        Every restart's :class:`~goalfit.methods.surrogate.SPGDPath`.
    surrogate_path_ : ndarray of shape (T + 1, K)
        Surrogate profiles u_t of the selected restart.
    target_path_, gradient_path_ : ndarray of shape (T, K)
    condition_numbers_, residuals_ : ndarray of shape (T,)
        Alg. 3 diagnostics (``cond(H)`` and ``||Hg - M|| / ||M||``; NaN for Alg. 2 / §5.3).
    metric_path_ : ndarray of shape (E, 2)
        (iteration, validation metric) at each check.
    best_iteration_, best_restart_ : int
    validation_metric_ : float
    n_metric_calls_ : int
    fit_seconds_ : float

    Raises
    ------
    ValueError
        At fit: non-binary labels, labels mismatch between X and y or X_val and y_val,
        NaN, an empty surrogate slice, too few perturbations for the regression (m < K + 1),
        score-space estimators with a separate validation set or overlapping slices, a
        ``dtype`` other than "float32" / "float64", a negative ``projection_tol``.

    Notes
    -----
    Standardize the features: sigma is one scale for every parameter. An ill-conditioned H
    raises an ``IllConditionedWarning`` and is recorded in ``condition_numbers_``.
    """

    def __init__(self, metric="gmean", *, surrogate_loss="hinge", surrogates=None, module=None, device="cpu",
                 gradient="interpolation", n_perturbations=100, sigma=1.0, gradient_params=None, step_size=1.0,
                 n_iter=100, projection="lbfgs", projection_iter=100, projection_lr=1.0,
                 projection_tol=PROJECTION_TOL, param_bound=None, eval_every=10,
                 n_restarts=1, restart_scale=1.0, init="zeros", fit_intercept=True, dtype="float32",
                 chunk_elements=DEFAULT_CHUNK_ELEMENTS, random_state=None):
        self.metric = metric
        self.surrogate_loss = surrogate_loss
        self.surrogates = surrogates
        self.module = module
        self.device = device
        self.gradient = gradient
        self.n_perturbations = n_perturbations
        self.sigma = sigma
        self.gradient_params = gradient_params
        self.step_size = step_size
        self.n_iter = n_iter
        self.projection = projection
        self.projection_iter = projection_iter
        self.projection_lr = projection_lr
        self.projection_tol = projection_tol
        self.param_bound = param_bound
        self.eval_every = eval_every
        self.n_restarts = n_restarts
        self.restart_scale = restart_scale
        self.init = init
        self.fit_intercept = fit_intercept
        self.dtype = dtype
        self.chunk_elements = chunk_elements
        self.random_state = random_state

    def _estimator(self):
        params = dict(self.gradient_params or {})
        if self.gradient in ("interpolation", "finite_difference"):
            params = {"n_perturbations": self.n_perturbations, "sigma": self.sigma, **params}
        elif self.gradient == "two_point":
            params = {"n_perturbations": self.n_perturbations, "sigma1": self.sigma, "sigma2": self.sigma / 4,
                      **params}
        return make_gradient_estimator(self.gradient, **params)

    @staticmethod
    def _surrogate_masks(surrogate_groups, g, n):
        """Named boolean masks: a dict, a DataFrame of booleans, or categories (one mask each)."""
        if surrogate_groups is None:
            surrogate_groups = g
        if surrogate_groups is None:
            return None
        if isinstance(surrogate_groups, dict):
            return {str(k): np.asarray(v, dtype=bool) for k, v in surrogate_groups.items()}
        if isinstance(surrogate_groups, pd.DataFrame):
            return {str(c): surrogate_groups[c].to_numpy(dtype=bool) for c in surrogate_groups.columns}
        arr = np.asarray(surrogate_groups, dtype=object).ravel()
        if len(arr) != n:
            raise ValueError(f"surrogate_groups has {len(arr)} rows but X has {n}")
        return {str(v): arr == v for v in sorted(pd.unique(arr), key=str)}

    def fit(self, X, y, *, sensitive_features=None, surrogate_groups=None, X_val=None, y_val=None,
            sensitive_features_val=None):
        """Run Algorithm 1 on ``(X, y)`` with the metric measured on ``(X_val, y_val)``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,), two classes
        sensitive_features : array-like of shape (n_samples,), optional
            Groups the metric sees; by default also the surrogate slices.
        surrogate_groups : dict name -> bool mask, DataFrame of bools, or categories, optional
            Slices of the training data for the surrogates (may overlap, §6.5).
        X_val, y_val : validation data, optional (default: the training sample)
        sensitive_features_val : array-like of shape (n_val,), optional

        Returns
        -------
        self
        """
        t0 = time.perf_counter()
        X, yc, g, Xv, yv, gv = self._prepare(X, y, sensitive_features, X_val, y_val, sensitive_features_val)
        masks = self._surrogate_masks(surrogate_groups, g, X.shape[0])
        specs = self.surrogates if self.surrogates is not None else \
            make_rate_surrogates(self.surrogate_loss, None if masks is None else list(masks))
        surs = SurrogateSet(specs, 2 * yc - 1, masks)
        if self.module is not None:
            scorer = TorchScorer(copy.deepcopy(self.module), X, device=self.device)
            if isinstance(self.init, str) and self.init not in ("zeros",):
                raise ValueError("init='logistic' is for linear models; a torch module starts from its "
                                 "own parameters (or an array)")
            theta0 = scorer.initial_theta() if isinstance(self.init, str) else np.asarray(self.init, dtype=float)
        else:
            if self.dtype not in ("float32", "float64"):
                raise ValueError(f"dtype must be 'float32' or 'float64', got {self.dtype!r}")
            scorer = LinearScorer(X, self.fit_intercept, batch_dtype=self.dtype, dtype=self.dtype)
            theta0 = _linear_start(self.init, X, yc, self.fit_intercept)
        same = X_val is None
        problem = BlackBoxProblem(scorer, surs, self.metric_, scorer if same else scorer.with_data(Xv), yv,
                                  self._codes(gv), same_sample=same, chunk_elements=self.chunk_elements)
        res = surrogate_pgd(problem, theta0, n_iter=self.n_iter, step_size=self.step_size,
                            estimator=self._estimator(), projection=self.projection,
                            projection_iter=self.projection_iter, projection_lr=self.projection_lr,
                            projection_tol=self.projection_tol,
                            param_bound=self.param_bound,
                            eval_every=self.eval_every, n_restarts=self.n_restarts,
                            restart_scale=self.restart_scale, random_state=self.random_state)
        self.result_ = res
        path = res.paths[res.best_restart]
        self.theta_ = res.theta
        self.surrogate_names_ = surs.names
        self.surrogate_path_, self.target_path_, self.gradient_path_ = path.surrogates, path.targets, path.gradients
        self.condition_numbers_, self.residuals_ = path.condition_numbers, path.residuals
        self.metric_path_ = np.column_stack([path.metric_iterations, path.metric_values])
        self.best_iteration_, self.best_restart_ = path.best_iteration, res.best_restart
        self.validation_metric_ = res.metric
        self.n_metric_calls_ = sum(p.n_metric_calls for p in res.paths)
        if self.module is not None:
            import torch

            self.module_ = scorer.module
            torch.nn.utils.vector_to_parameters(scorer._tensor(self.theta_), self.module_.parameters())
        else:
            self.coef_, self.intercept_ = scorer.coef_intercept(self.theta_)
        self.fit_seconds_ = time.perf_counter() - t0
        return self

    def decision_function(self, X):
        """Scores ``f_theta(X)``, shape (n_samples,); positive predicts ``classes_[1]``."""
        if self.module is None:
            return self._linear_scores(X)
        check_is_fitted(self, "theta_")
        X = check_array(X, accept_sparse="csr", dtype=float)
        return TorchScorer(self.module_, X, device=self.device).scores(self.theta_)


class BlackBoxPostShiftClassifier(_BlackBoxBase):
    """Post-shift: a fitted model's scores with one threshold tuned for the black-box metric.

    Jiang et al. §6 ("post-shift should be a required baseline"; Koyejo et al. 2014): fit the
    estimator on the training data, then choose the threshold on its ``decision_function``
    that minimizes the metric on the validation set (the training sample without one).

    Parameters
    ----------
    metric : str, BlackBoxMetric or callable, default "gmean"
    estimator : estimator with ``decision_function``, optional
        Default ``LogisticRegression(max_iter=1000)``.
    grid_size : int, default 1000
        Threshold candidates (quantiles of the validation scores).

    Attributes
    ----------
    classes_, estimator_, threshold_ (float), validation_metric_ (float), fit_seconds_
    """

    def __init__(self, metric="gmean", *, estimator=None, grid_size=1000):
        self.metric = metric
        self.estimator = estimator
        self.grid_size = grid_size

    def fit(self, X, y, *, sensitive_features=None, X_val=None, y_val=None, sensitive_features_val=None):
        """Fit the estimator on ``(X, y)`` and the threshold on the validation data."""
        t0 = time.perf_counter()
        X, yc, g, Xv, yv, gv = self._prepare(X, y, sensitive_features, X_val, y_val, sensitive_features_val)
        self.estimator_ = clone(self.estimator if self.estimator is not None else LogisticRegression(max_iter=1000))
        self.estimator_.fit(X, yc)
        s = np.asarray(self.estimator_.decision_function(Xv), dtype=float)
        self.threshold_, self.validation_metric_ = best_threshold(s, yv, self.metric_, self._codes(gv),
                                                                  grid_size=self.grid_size)
        self.fit_seconds_ = time.perf_counter() - t0
        return self

    def decision_function(self, X):
        """Shifted scores ``f(X) - threshold_``, shape (n_samples,)."""
        check_is_fitted(self, "threshold_")
        X = check_array(X, accept_sparse="csr", dtype=float)
        return np.asarray(self.estimator_.decision_function(X), dtype=float) - self.threshold_


class RelaxedFMClassifier(_BlackBoxBase):
    """Relaxed-FM (Jiang et al. §6.2 baseline): maximize a hinge relaxation of macro-F over groups.

    Linear model trained by L-BFGS-B on the relaxed macro-F of the training data (groups from
    ``sensitive_features``; one group without), keeping the iterate with the best validation
    metric (see :func:`goalfit.methods.surrogate.baselines.relaxed_macro_f1`).

    Parameters
    ----------
    metric : default "macro_f1_over_groups"
        The metric used for iterate selection.
    max_iter : int, default 200
    init : {"zeros", "logistic"} or array, default "logistic"
    fit_intercept : bool, default True

    Attributes
    ----------
    classes_, coef_, intercept_, theta_, validation_metric_, metric_path_ (list of (iteration,
    value)), fit_seconds_
    """

    def __init__(self, metric="macro_f1_over_groups", *, max_iter=200, init="logistic", fit_intercept=True):
        self.metric = metric
        self.max_iter = max_iter
        self.init = init
        self.fit_intercept = fit_intercept

    def fit(self, X, y, *, sensitive_features=None, X_val=None, y_val=None, sensitive_features_val=None):
        """Fit on ``(X, y)``; select the iterate on the validation data."""
        t0 = time.perf_counter()
        X, yc, g, Xv, yv, gv = self._prepare(X, y, sensitive_features, X_val, y_val, sensitive_features_val)
        masks = AdaptiveSurrogateClassifier._surrogate_masks(None, g, X.shape[0])
        surs = SurrogateSet(make_rate_surrogates("hinge", None if masks is None else list(masks)), 2 * yc - 1, masks)
        scorer = LinearScorer(X, self.fit_intercept)
        theta0 = _linear_start(self.init, X, yc, self.fit_intercept)
        problem = BlackBoxProblem(scorer, surs, self.metric_, scorer.with_data(Xv), yv, self._codes(gv))
        self.theta_, self.validation_metric_, self.metric_path_ = relaxed_macro_f1(problem, theta0,
                                                                                  max_iter=self.max_iter)
        self.coef_, self.intercept_ = scorer.coef_intercept(self.theta_)
        self.fit_seconds_ = time.perf_counter() - t0
        return self

    def decision_function(self, X):
        """Scores ``X coef_ + intercept_``, shape (n_samples,)."""
        return self._linear_scores(X)
