"""The scikit-learn meta-estimator: a base class-probability model plus a goal-driven method."""
from __future__ import annotations

import time

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils import _safe_indexing
from sklearn.utils.validation import _check_sample_weight, _num_samples, check_is_fitted, column_or_1d

from ..classifiers import ProbabilityModel, RandomizedClassifier, class_labels, encode_labels
from ..confusion import CellEncoder, ConfusionSpace
from ..goals import Problem
from ..methods.baselines import BASELINES
from ..methods.plugin import METHODS, PluginOracle, RefitOracle, ThresholdOracle, choose_method, solve


class GoalClassifier(MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Classifier trained to minimize an objective subject to constraints (goals).

    Fits a class-probability model (any estimator with ``predict_proba``), then a plug-in
    method of Narasimhan et al. (JMLR 2024) turns it into a (randomized) classifier that meets
    the goals on the training sample.

    Parameters
    ----------
    estimator : estimator with ``predict_proba``, "precomputed", or None
        Base class-probability model (default ``LogisticRegression(max_iter=1000)``). With
        ``"precomputed"``, ``X`` holds the class probabilities themselves, shape
        (n_samples, n_classes), columns in sorted label order.
    objective : str or goal expression, default "error"
        What to minimize: a name (``"error"``, ``"balanced_error"``, ``"hmean"``, ``"gmean"``,
        ``"qmean"``, ``"minmax_recall"``, ``"f1"``, ``"micro_f1"``, ...) or an expression from
        :mod:`goalfit.goals`.
    constraints : sequence of Constraint, default ()
        E.g. ``[demographic_parity_difference("sex") <= 0.01]``.
    method : str, default "auto"
        ``"auto"`` (by the objective's class, §8.6; see :func:`goalfit.methods.plugin.choose_method`),
        a plug-in method (``"column_generation"``, ``"frank_wolfe"``, ``"split_frank_wolfe"``,
        ``"gda"``, ``"con_gda"``, ``"ellipsoid"``, ``"con_ellipsoid"``, ``"bisection"``,
        ``"con_bisection"``) or a baseline (``"argmax"``, ``"balanced"``, ``"post_shift"``,
        ``"post_shift_groups"``), which ignore the constraints. Step sizes can be chosen with
        :func:`goalfit.estimators.select_method_params`.
    oracle : {"plugin", "threshold", "refit"}, default "plugin"
        Linear minimization oracle: plug-in rule on the fitted probabilities (Alg. 9/10);
        ``"threshold"`` (binary only): the exact minimizer of the training cost over per-group
        thresholds on the probabilities, robust to miscalibrated probabilities; or a refit of
        the base estimator with example weights per call (§8.7; slow, needs ``sample_weight``).
    prefit : bool, default False
        Use ``estimator`` as already fitted.
    holdout : float in (0, 1), optional
        Sample splitting (Narasimhan et al. §6.6): fit the base model on a stratified
        ``1 - holdout`` share of the data and run the method (oracle, goals) on the rest, which
        makes the probability estimates independent of the outer loop as Theorem 20 assumes.
        Default None: both use the whole sample (the paper's practice, which it reports "does
        not hurt").
    method_params : dict, optional
        Passed to the method (e.g. ``{"max_iter": 500}``).
    random_state : int, RandomState or None
        Default seed for :meth:`predict`'s sampling.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    estimator_ : fitted base estimator (None when precomputed)
    classifier_ : RandomizedClassifier
        The fitted (randomized) classifier.
    result_ : SolverResult
        Members, weights, training confusion tensors, history, oracle calls, feasibility.
    problem_ : CompiledProblem
        The goals bound to the training sample.
    method_ : str
        The method that ran.
    history_ : list of dict
        Per-iteration objective, max violation, oracle calls and seconds.
    base_fit_seconds_, fit_seconds_ : float
        Time to fit the base estimator and compute its training probabilities, and the whole
        ``fit``.
    n_outer_samples_ : int
        Examples the method ran on (all, or the ``holdout`` share).
    feasible_ : bool
        Whether the constraints hold on the training sample (expected over the randomization).

    Raises
    ------
    ValueError
        At fit time for unknown classes or groups named by a goal, empty groups, labels that
        do not match precomputed probabilities, an objective/constraint combination no method
        supports; infeasible goals do **not** raise: the least-violating classifier is returned,
        ``feasible_`` is False and a warning is issued.

    Notes
    -----
    Group-dependent goals make the classifier depend on the group: pass the same
    ``sensitive_features`` columns to :meth:`predict`.
    """

    def __init__(self, estimator=None, *, objective="error", constraints=(), method="auto",
                 oracle="plugin", prefit=False, holdout=None, method_params=None, random_state=None):
        self.estimator = estimator
        self.objective = objective
        self.constraints = constraints
        self.method = method
        self.oracle = oracle
        self.prefit = prefit
        self.holdout = holdout
        self.method_params = method_params
        self.random_state = random_state

    # ------------------------------------------------------------------ fitting
    def _base(self):
        if self.estimator is None:
            return LogisticRegression(max_iter=1000)
        return self.estimator

    def fit(self, X, y, *, sensitive_features=None, sample_weight=None):
        """Fit the base model and solve the goals on ``(X, y)``.

        Parameters
        ----------
        X : array-like, DataFrame or sparse matrix of shape (n_samples, n_features)
            (class probabilities of shape (n_samples, n_classes) when ``estimator="precomputed"``)
        y : array-like of shape (n_samples,)
        sensitive_features : array-like, Series, DataFrame or dict, optional
            Group columns the goals refer to (and, e.g., a deployed model's predictions for
            churn goals).
        sample_weight : array-like of shape (n_samples,), optional

        Returns
        -------
        self
        """
        t_start = time.perf_counter()
        if y is None:
            raise ValueError("GoalClassifier requires y to be passed, but the target y is None")
        n = _num_samples(X)
        y = column_or_1d(y, warn=True)
        if len(y) != n:
            raise ValueError(f"X has {n} rows but y has {len(y)}")
        if y.dtype.kind not in "iub":  # 1-D integer or boolean labels are always classes
            check_classification_targets(y)
        self.classes_ = class_labels(y)
        if len(self.classes_) < 2:
            raise ValueError(f"y has one class {self.classes_.tolist()}: need at least two")
        y_codes = encode_labels(y, self.classes_)
        sw = None if sample_weight is None else _check_sample_weight(sample_weight, X)
        encoder = CellEncoder()
        cells = encoder.fit_transform(sensitive_features, n)
        fit_rows, out_rows = self._split_rows(y_codes, n)
        if out_rows is not None:  # sample splitting (§6.6): the outer loop sees only out_rows
            y_out, cells_out = y_codes[out_rows], cells[out_rows]
            sw_out = None if sw is None else sw[out_rows]
        else:
            y_out, cells_out, sw_out = y_codes, cells, sw
        space = ConfusionSpace.from_codes(y_out, cells_out, self.classes_, encoder.cells_, sw_out)
        self.n_outer_samples_ = len(y_out)
        self.problem_ = Problem(self.objective, self.constraints).compile(space)
        method = self.method
        if method == "auto":
            method = choose_method(self.problem_)
        if method not in METHODS and method not in BASELINES:
            raise ValueError(f"unknown method {self.method!r}; known: ['auto'] + "
                             f"{sorted(METHODS) + sorted(BASELINES)}")
        self.method_ = method

        t0 = time.perf_counter()
        if isinstance(self.estimator, str):
            if self.estimator != "precomputed":
                raise ValueError(f"estimator must be an estimator or 'precomputed', got {self.estimator!r}")
            P = np.asarray(X, dtype=float)
            if P.ndim != 2 or P.shape[1] != len(self.classes_):
                raise ValueError(
                    f"precomputed probabilities must have shape (n_samples, {len(self.classes_)}) "
                    f"(one column per class of y), got {P.shape}"
                )
            if not np.isfinite(P).all() or (P < 0).any():
                raise ValueError("precomputed probabilities contain NaN, infinite or negative values")
            self.estimator_ = None
            prob = ProbabilityModel(None, np.arange(len(self.classes_)))
        else:
            base = self._base()
            if self.prefit:
                check_is_fitted(base)
                self.estimator_ = base
                P_train = None
            elif out_rows is not None:
                self.estimator_ = clone(base)
                _fit_base(self.estimator_, _safe_indexing(X, fit_rows), y[fit_rows],
                          None if sw is None else sw[fit_rows])
                P_train = np.asarray(self.estimator_.predict_proba(_safe_indexing(X, out_rows)), dtype=float)
            else:
                self.estimator_ = clone(base)
                P_train = _fit_base(self.estimator_, X, y, sw)
            est_classes = np.asarray(getattr(self.estimator_, "classes_", self.classes_))
            missing = [c for c in self.classes_ if c not in set(est_classes.tolist())]
            if missing:
                raise ValueError(f"the base estimator does not know the classes {missing} of y")
            index = [int(np.flatnonzero(est_classes == c)[0]) for c in self.classes_]
            prob = ProbabilityModel(self.estimator_, index)
            if self.oracle != "refit" or method in BASELINES:
                P = P_train[:, prob.class_index] if P_train is not None else prob.predict_proba(X)
            else:
                P = None
        self.base_fit_seconds_ = time.perf_counter() - t0

        if self.oracle == "threshold" and method not in BASELINES:
            oracle = ThresholdOracle(P, y_out, cells_out, space, sw_out)
        elif self.oracle == "plugin" or method in BASELINES:
            oracle = PluginOracle(P, y_out, cells_out, space, sw_out)
        elif self.oracle == "refit":
            if self.estimator_ is None:
                raise ValueError("the refit oracle needs an estimator, not precomputed probabilities")
            oracle = RefitOracle(self._base(), X, y_codes, cells, space, sw)
        else:
            raise ValueError(f"oracle must be 'plugin', 'threshold' or 'refit', got {self.oracle!r}")
        params = dict(self.method_params or {})
        if method in BASELINES:
            result = BASELINES[method](self.problem_, oracle, **params)
        else:
            result = solve(self.problem_, oracle, method, **params)
        self.result_ = result
        self.history_ = result.history
        self.classifier_ = RandomizedClassifier(result.members, result.weights, self.classes_,
                                                encoder, prob)
        C = result.confusion
        self.feasible_ = self.problem_.max_violation(C) <= 1e-7
        if self.problem_.constraints and not self.feasible_ and method not in BASELINES:
            import warnings

            warnings.warn(
                "the goals cannot all be met on the training data: returning the least-violating "
                f"classifier (max violation {self.problem_.max_violation(C):.4g})",
                RuntimeWarning, stacklevel=2,
            )
        if hasattr(self.estimator_, "n_features_in_"):
            self.n_features_in_ = self.estimator_.n_features_in_
        if hasattr(self.estimator_, "feature_names_in_"):
            self.feature_names_in_ = self.estimator_.feature_names_in_
        self.fit_seconds_ = time.perf_counter() - t_start
        return self

    def _split_rows(self, y_codes, n):
        """Rows for the base model and rows for the outer loop (``holdout``), or (None, None)."""
        if self.holdout is None:
            return None, None
        if not (isinstance(self.holdout, float) and 0 < self.holdout < 1):
            raise ValueError(f"holdout must be None or a float in (0, 1), got {self.holdout!r}")
        if isinstance(self.estimator, str) or self.prefit or self.oracle == "refit":
            raise ValueError("holdout splits the sample between fitting the base model and the outer "
                             "loop: it needs a base model to fit (not 'precomputed', prefit or the refit oracle)")
        from sklearn.model_selection import train_test_split

        rows = np.arange(n)
        try:
            return train_test_split(rows, test_size=self.holdout, stratify=y_codes,
                                    random_state=self.random_state)
        except ValueError:
            return train_test_split(rows, test_size=self.holdout, random_state=self.random_state)

    # ------------------------------------------------------------------ predicting
    def predict(self, X, *, sensitive_features=None, random_state=None):
        """Predicted labels, shape (n_samples,); randomized classifiers sample per example.

        ``random_state`` defaults to the estimator's ``random_state``; the same seed gives the
        same predictions.
        """
        check_is_fitted(self, "classifier_")
        rs = self.random_state if random_state is None else random_state
        return self.classifier_.predict(X, sensitive_features=sensitive_features, random_state=rs)

    def predict_proba(self, X, *, sensitive_features=None):
        """The randomized rule's class distribution per example, shape (n_samples, n_classes).

        Not an estimate of ``P(y | x)``: entry ``[l, j]`` is the probability that
        :meth:`predict` outputs ``classes_[j]`` for example ``l``. For the base model's
        probabilities use ``estimator_.predict_proba``.
        """
        check_is_fitted(self, "classifier_")
        return self.classifier_.predict_proba(X, sensitive_features=sensitive_features)

    def expected_confusion_matrix(self, X, y, *, sensitive_features=None, sample_weight=None,
                                  per_group=False):
        """Exact expected confusion matrix (see :meth:`RandomizedClassifier.expected_confusion_matrix`)."""
        check_is_fitted(self, "classifier_")
        return self.classifier_.expected_confusion_matrix(
            X, y, sensitive_features=sensitive_features, sample_weight=sample_weight, per_group=per_group)

    def evaluate(self, X, y, *, sensitive_features=None, sample_weight=None):
        """Objective and constraint values on labelled data (expected over the randomization).

        Returns
        -------
        dict with ``objective`` (float), ``constraints`` (list of dicts name/value/bound/
        violation/met) and ``accuracy`` (float).
        """
        from ..metrics import evaluate_problem

        check_is_fitted(self, "classifier_")
        dist = self.predict_proba(X, sensitive_features=sensitive_features)
        return evaluate_problem(Problem(self.objective, self.constraints), y, dist,
                                sensitive_features=sensitive_features, sample_weight=sample_weight,
                                classes=self.classes_)

    def score(self, X, y, sample_weight=None, *, sensitive_features=None):
        """Expected accuracy of the (randomized) classifier, in [0, 1]."""
        C = self.expected_confusion_matrix(X, y, sensitive_features=sensitive_features,
                                           sample_weight=sample_weight)
        return float(np.trace(C))

    def to_deterministic(self, strategy="max_weight"):
        """The deterministic classifier of :meth:`RandomizedClassifier.to_deterministic`."""
        check_is_fitted(self, "classifier_")
        return self.classifier_.to_deterministic(strategy)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.allow_nan = False
        tags.non_deterministic = False
        return tags


def _fit_base(estimator, X, y, sample_weight):
    """Fit the base model and return its class probabilities on ``X`` (its own column order).

    A :class:`~sklearn.pipeline.Pipeline` is fitted step by step so the training features are
    transformed once (not again for ``predict_proba``) and ``sample_weight`` reaches the final
    step (``Pipeline.fit`` does not accept it directly).
    """
    if isinstance(estimator, Pipeline) and len(estimator.steps) > 1:
        Xt = estimator[:-1].fit_transform(X, y)
        final = estimator.steps[-1][1]
        if sample_weight is None:
            final.fit(Xt, y)
        else:
            final.fit(Xt, y, sample_weight=sample_weight)
        return np.asarray(final.predict_proba(Xt), dtype=float)
    if sample_weight is None:
        estimator.fit(X, y)
    else:
        estimator.fit(X, y, sample_weight=sample_weight)
    return np.asarray(estimator.predict_proba(X), dtype=float)
