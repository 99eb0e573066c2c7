"""The scikit-learn meta-estimator: a base class-probability model plus a goal-driven method."""
from __future__ import annotations

import numbers
import time

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils import _safe_indexing
from sklearn.utils.validation import _check_sample_weight, _num_samples, check_is_fitted, column_or_1d

from ..classifiers import (GroupBlindClassifier, ProbabilityModel, RandomizedClassifier, class_labels, encode_labels,
                           probability_model)
from ..confusion import CellEncoder, ConfusionSpace, compact_codes
from ..distributed import is_dask_collection
from ..goals import FEASIBLE_TOL, Problem
from ..methods.baselines import BASELINES
from ..methods.plugin import METHODS, PluginOracle, RefitOracle, ThresholdOracle, choose_method, solve
from ..utils.validation import check_consistent_rows, check_has_predict_proba, check_sample_weight
from ..methods.plugin.group_blind import GroupBlindOracle, GroupBlindThresholdOracle
from .deterministic import TrainingSample, to_deterministic as _to_deterministic


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
    cv : "auto", None, int, splitter or iterable of (train, test), default "auto"
        Cross-fitting: the method runs on out-of-fold class probabilities (each row scored by
        the model fitted on the folds that do not contain it, as
        :func:`sklearn.model_selection.cross_val_predict`), so a flexible base model that
        memorized its training rows does not fool the goals. An int gives a shuffled
        ``StratifiedKFold`` seeded by ``random_state``. ``"auto"``: in-sample (``None``) for
        scikit-learn linear models (and a pipeline ending in one), ``"precomputed"``, ``prefit``,
        ``holdout`` and the refit oracle; 5 folds otherwise. Measured in
        ``benchmarks/generalization.py`` (20 re-splits, 5 problems): ``cv=5`` moves logistic
        regression's test accuracy by <= 0.001, and lowers HistGradientBoosting's mean test
        violation from 0.021 to 0.013.
    cv_model : {"average", "refit"}, default "average"
        The deployed probability model under cross-fitting: the mean of the fold models'
        probabilities (:class:`FoldAverage`; beat or tied the refit on 4 of 5 problems in the
        benchmark above) or a refit on all rows (better for memorizing models, whose refit
        probabilities have the 0/1 shape of the out-of-fold ones).
    confidence : float in (0, 1), optional
        High-confidence goals (:mod:`goalfit.estimators.certification`; Thomas et al., Science
        2019): choose the classifier on ``1 - safety_fraction`` of the rows with tightened
        constraints, then certify every constraint on the rest with a one-sided bound at level
        ``1 - (1 - confidence) / m``. Under i.i.d. sampling a classifier with
        ``certified_ = True`` meets every constraint on the population with probability at
        least ``confidence`` (exact bounds for single rates, delta method otherwise).
    margin : float or sequence of float, optional
        Tighten every constraint (or each by its own amount, in the goal's units) before
        solving; with ``confidence`` it replaces the predicted margins.
    safety_fraction : float in (0, 1), default 0.4
        Share of the rows held out for the safety test (``confidence`` only).
    method_params : dict, optional
        Passed to the method (e.g. ``{"max_iter": 500}``).
    group_blind : bool, default False
        Use the sensitive features only to state and measure the goals, never to decide: the
        base model estimates the joint ``P(Y = y, A = a | x)`` over the classes and the cells
        (groups, or their intersections with several columns), the group-blind plug-in oracle
        (:mod:`goalfit.methods.plugin.group_blind`) predicts ``argmin_j sum_{y,a}
        eta_{y,a}(x) L_a[y, j]``, and every plug-in method runs unchanged on it; the training
        values of the goals are measured with the true groups. :meth:`predict` then needs no
        ``sensitive_features``. This extends Narasimhan et al.'s Def. 2 (which assumes the group
        is a function of ``x``) as in Menon & Williamson (FAT* 2018) and Yang, Cisse & Koyejo
        (NeurIPS 2020). Cross-fitting (``cv``), ``holdout``, ``confidence`` and
        ``"precomputed"`` (``X`` then holds the joint probabilities, shape (n_samples,
        n_cells * n_classes), cell-major in the order of the fitted cells) apply as usual;
        ``oracle="threshold"`` (binary) keeps the plug-in direction and picks each rule's
        threshold exactly on the sample (:class:`~goalfit.methods.plugin.group_blind.GroupBlindThresholdOracle`);
        the ``"refit"`` oracle, ``prefit`` and the post-shift baselines do not apply.
    joint_model : {"product", "factored"}, default "product"
        How ``group_blind`` estimates the joint: one multiclass model on the (cell, class)
        label, or ``P(Y | x) P(A | x, Y)`` (:class:`goalfit.estimators.joint.FactoredJointClassifier`).
    random_state : int, RandomState or None
        Default seed for :meth:`predict`'s sampling.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    estimator_ : fitted base estimator (None when precomputed; a :class:`FoldAverage` with
        ``cv`` and ``cv_model="average"``)
    estimators_ : list of fitted estimators or None
        The fold models under cross-fitting.
    cv_ : splitter or None
        The cross-fitting splitter that ran (None: in-sample).
    certified_ : bool or None
        With ``confidence``: whether every constraint passed the safety test.
    certification_ : list of dict or None
        Per constraint: margin, candidate and safety values, the one-sided safety bound, passed,
        and for a failure the safety-part size it would need and its smallest slice
        (:func:`goalfit.estimators.certification.safety_test`).
    margins_ : list of float or None
        The tightening applied to each constraint (``margin`` or the predicted margins).
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
        Examples the method ran on (all, the ``holdout`` share, or the candidate part with
        ``confidence``).
    feasible_ : bool
        Whether the constraints hold on the training sample (expected over the randomization).
    train_sample_ : TrainingSample
        What :meth:`to_deterministic` needs to check a deterministic classifier on the training
        rows the method ran on: their probabilities (joint ones when ``group_blind``), labels,
        true cells, weights, row hashes and every member's predictions. With
        ``estimator="precomputed"`` (float64) and every row in the outer loop the probabilities
        are the input array itself (no copy); labels, cells and hashes take 10 bytes per row
        (up to 127 classes and cells), the members' predictions one byte per member and row.

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
    ``sensitive_features`` columns to :meth:`predict`, or fit with ``group_blind=True``.
    """

    def __init__(self, estimator=None, *, objective="error", constraints=(), method="auto",
                 oracle="plugin", prefit=False, holdout=None, cv="auto", cv_model="average",
                 confidence=None, margin=None, safety_fraction=0.4, method_params=None,
                 group_blind=False, joint_model="product", random_state=None):
        self.estimator = estimator
        self.objective = objective
        self.constraints = constraints
        self.method = method
        self.oracle = oracle
        self.prefit = prefit
        self.holdout = holdout
        self.cv = cv
        self.cv_model = cv_model
        self.confidence = confidence
        self.margin = margin
        self.safety_fraction = safety_fraction
        self.method_params = method_params
        self.group_blind = group_blind
        self.joint_model = joint_model
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
            (class probabilities of shape (n_samples, n_classes) when ``estimator="precomputed"``),
            or a Dask array / DataFrame: see :mod:`goalfit.distributed`
        y : array-like of shape (n_samples,)
        sensitive_features : array-like, Series, DataFrame or dict, optional
            Group columns the goals refer to (and, e.g., a deployed model's predictions for
            churn goals).
        sample_weight : array-like of shape (n_samples,), optional

        Returns
        -------
        self
        """
        if is_dask_collection(X):  # Dask arrays / DataFrames: goalfit.distributed
            from ..distributed import estimator as dist
            return dist.fit(self, X, y, sensitive_features=sensitive_features, sample_weight=sample_weight)
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
        # class codes and cell ids live through the solve and in train_sample_: one byte per row
        y_codes = compact_codes(encode_labels(y, self.classes_), len(self.classes_))
        sw = None if sample_weight is None else _check_sample_weight(check_sample_weight(sample_weight, n), X)
        if not isinstance(self.estimator, str):
            check_has_predict_proba(self._base())  # before any fitting
        encoder = CellEncoder()
        cells = compact_codes(encoder.fit_transform(sensitive_features, n), encoder.n_cells)
        self._check_options()
        problem = Problem(self.objective, self.constraints)
        if self.confidence is not None:  # Seldonian split: choose on one part, certify on the other
            rows, safety_rows = self._safety_split(y_codes, cells, n)
        else:
            rows, safety_rows = None, None  # every row (no index array: 8 bytes per row less)

        t0 = time.perf_counter()
        if self.group_blind:
            K, G = len(self.classes_), encoder.n_cells
            if not encoder.columns_:
                raise ValueError("group_blind=True states the goals on groups it never sees at predict "
                                 "time: pass sensitive_features to fit")
            joint = cells.astype(np.intp) * K + y_codes  # cell-major joint label
            prob, P, out_rows = self._probabilities(X, joint, joint, sw, rows, classes=np.arange(G * K))
        else:
            prob, P, out_rows = self._probabilities(X, y, y_codes, sw, rows)
        self.base_fit_seconds_ = time.perf_counter() - t0
        if out_rows is None:  # the outer loop runs on every row: no copies
            y_out, cells_out, sw_out = y_codes, cells, sw
        else:
            y_out, cells_out = y_codes[out_rows], cells[out_rows]
            sw_out = None if sw is None else sw[out_rows]
        space = ConfusionSpace.from_codes(y_out, cells_out, self.classes_, encoder.cells_, sw_out)
        self.n_outer_samples_ = len(y_out)
        try:
            compiled0 = problem.compile(space)
        except ValueError as err:
            if self.holdout is None:
                raise
            raise ValueError(f"holdout={self.holdout} leaves {len(y_out)} of {n} examples for the goals, "
                             f"too few: {err}. Use a smaller holdout or more data") from None
        method = self.method_ = _resolve_method(self.method, compiled0)

        def solve_with(constraints):
            compiled = Problem(self.objective, constraints).compile(space)
            if self.oracle == "refit" and method not in BASELINES:  # checked in _check_options
                oracle = RefitOracle(self._base(), X, y_codes, cells, space, sw)
            else:
                oracle = _probability_oracle(self, method, P, y_out, cells_out, space, sw_out)
            return compiled, _run_method(method, compiled, oracle, self.method_params)

        kind = GroupBlindClassifier if self.group_blind else RandomizedClassifier

        def classifier_of(result):
            return kind(result.members, result.weights, self.classes_, encoder, prob)

        margins = _user_margins(self.margin, problem)
        if self.confidence is not None:
            from .certification import certify

            (self.problem_, result), self.certification_, self.certified_ = certify(
                self, problem, solve_with, classifier_of, margins, X, y_codes, cells, sw, encoder,
                rows, safety_rows)
        else:
            self.problem_, result = solve_with(_tightened(problem, margins))
            self.certified_ = None
            self.certification_ = None
        self.margins_ = None if margins is None else list(margins)
        _adopt_result(self, result, classifier_of(result), stacklevel=3)
        self.train_sample_ = TrainingSample.build(self.classifier_, X, out_rows, P, y_out, cells_out,
                                                   sw_out, self.problem_)
        self.fit_seconds_ = time.perf_counter() - t_start
        return self

    # ------------------------------------------------------------------ fitting: pieces
    def _cv_folds(self):
        """The cross-fitting splitter, or None for in-sample probabilities."""
        cv = self.cv
        if isinstance(cv, str):
            if cv != "auto":
                raise ValueError(f"cv must be 'auto', None, an int >= 2 or a scikit-learn splitter, got {cv!r}")
            if isinstance(self.estimator, str) or self.prefit or self.holdout is not None \
                    or self.oracle == "refit" or _is_linear(self._base()):
                return None
            cv = 5
        if cv is None:
            return None
        if isinstance(cv, numbers.Integral) and not isinstance(cv, bool):
            if cv < 2:
                raise ValueError(f"cv must be at least 2 folds, got {cv}")
            from sklearn.model_selection import StratifiedKFold

            return StratifiedKFold(int(cv), shuffle=True, random_state=_seed(self.random_state))
        if hasattr(cv, "split") or hasattr(cv, "__iter__"):
            from sklearn.model_selection import check_cv

            return check_cv(cv, classifier=True)  # a splitter, or an iterable of (train, test)
        raise ValueError(f"cv must be 'auto', None, an int >= 2, a scikit-learn splitter or an iterable "
                         f"of (train, test) index arrays, got {cv!r}")

    def _check_options(self):
        if self.oracle not in ("plugin", "threshold", "refit"):
            raise ValueError(f"oracle must be 'plugin', 'threshold' or 'refit', got {self.oracle!r}")
        if self.joint_model not in ("product", "factored"):
            raise ValueError(f"joint_model must be 'product' or 'factored', got {self.joint_model!r}")
        if self.group_blind:
            if self.oracle == "refit":
                raise ValueError("group_blind=True runs the group-blind plug-in oracle: oracle must be "
                                 "'plugin' or 'threshold' (binary), got 'refit'")
            if self.prefit:
                raise ValueError("group_blind=True fits a joint model of (group, class): prefit is not "
                                 "supported (give the estimator unfitted, or 'precomputed' joint probabilities)")
            if self.method in ("post_shift", "post_shift_groups"):
                raise ValueError(f"method {self.method!r} thresholds per group: it is not group-blind")
        if self.cv_model not in ("average", "refit"):
            raise ValueError(f"cv_model must be 'average' or 'refit', got {self.cv_model!r}")
        if self.holdout is not None and (isinstance(self.estimator, str) or self.prefit or self.oracle == "refit"):
            raise ValueError("holdout splits the sample between fitting the base model and the outer "
                             "loop: it needs a base model to fit (not 'precomputed', prefit or the refit oracle)")
        explicit_cv = self.cv is not None and not (isinstance(self.cv, str) and self.cv == "auto")
        if explicit_cv:
            if isinstance(self.estimator, str) or self.prefit:
                raise ValueError("cv cross-fits the base model: it needs a base model to fit "
                                 "(not 'precomputed' or prefit)")
            if self.holdout is not None:
                raise ValueError("holdout and cv are two ways of separating the base model from the "
                                 "outer loop: give one of them")
            if self.oracle == "refit":
                raise ValueError("the refit oracle refits the base model inside the outer loop: "
                                 "cv does not apply to it")
        if self.confidence is not None:
            if not (isinstance(self.confidence, numbers.Real) and 0 < self.confidence < 1):
                raise ValueError(f"confidence must be a float in (0, 1), got {self.confidence!r}")
            if not (isinstance(self.safety_fraction, numbers.Real) and 0 < self.safety_fraction < 1):
                raise ValueError(f"safety_fraction must be a float in (0, 1), got {self.safety_fraction!r}")
            if self.oracle == "refit":
                raise ValueError("confidence needs the classifier chosen on one part of the data: "
                                 "use the plugin or threshold oracle")

    def _safety_split(self, y_codes, cells, n):
        """Candidate rows and safety rows, stratified by (cell, class)."""
        from .certification import split_rows

        return split_rows(cells.astype(np.int64) * len(self.classes_) + y_codes, self.safety_fraction,
                          _seed(self.random_state))

    def _probabilities(self, X, y, y_codes, sw, rows, classes=None):
        """Fit the base model on ``rows`` and return (deployed model, outer-loop probabilities, outer rows).

        ``rows`` (indices, or None for every row) are the rows the method may use. The outer
        loop runs on ``out_rows`` (all of ``rows``, or the ``holdout`` share; None for every row
        of ``X``) with the probabilities ``P`` of shape (number of outer rows, n_classes) in
        class-code order: in-sample, held out, or out-of-fold (``cv``). ``classes`` (default
        ``classes_``) are the labels the base model learns: the joint (cell, class) codes for
        ``group_blind``, where a code absent from the data gets probability 0.
        """
        joint = classes is not None
        classes = self.classes_ if classes is None else classes
        K = len(classes)
        if rows is None:  # views, no copies
            Xr, yr, swr, y_codes_r, n_rows = X, y, sw, y_codes, _num_samples(X)
        else:
            Xr, yr, y_codes_r, n_rows = _safe_indexing(X, rows), y[rows], y_codes[rows], len(rows)
            swr = None if sw is None else sw[rows]
        self.estimators_ = None
        if isinstance(self.estimator, str):
            if self.estimator != "precomputed":
                raise ValueError(f"estimator must be an estimator or 'precomputed', got {self.estimator!r}")
            P = np.asarray(Xr, dtype=float)
            if P.ndim != 2 or P.shape[1] != K:
                what = ("one column per (group, class) pair, cell-major" if joint
                        else "one column per class of y")
                raise ValueError(
                    f"precomputed probabilities must have shape (n_samples, {K}) "
                    f"({what}), got {P.shape}"
                )
            if not np.isfinite(P).all() or (P < 0).any():
                raise ValueError("precomputed probabilities contain NaN, infinite or negative values")
            self.estimator_ = None
            return ProbabilityModel(None, np.arange(K)), P, rows
        base = self._base()
        if joint and self.joint_model == "factored":
            from .joint import FactoredJointClassifier

            base = FactoredJointClassifier(base, len(self.classes_), K // len(self.classes_))
        folds = self._cv_folds()
        self.cv_ = None if folds is None else folds
        fit_rows, hold_rows = self._split_rows(y_codes_r, n_rows)
        if self.prefit:
            check_is_fitted(base)
            self.estimator_ = base
            P_out, out = None, rows
        elif hold_rows is not None:
            self.estimator_ = clone(base)
            _fit_base(self.estimator_, _safe_indexing(Xr, fit_rows), yr[fit_rows],
                      None if swr is None else swr[fit_rows])
            P_out = _aligned(self.estimator_, _safe_indexing(Xr, hold_rows), classes)
            out = hold_rows if rows is None else rows[hold_rows]
        elif folds is not None:
            P_out, models = _cross_fit(base, Xr, yr, swr, folds, classes)
            self.estimators_ = models
            if self.cv_model == "average":
                self.estimator_ = FoldAverage(models, classes)
            else:
                self.estimator_ = clone(base)
                _fit_base(self.estimator_, Xr, yr, swr)
            out = rows
        else:
            self.estimator_ = clone(base)
            P_fit = _fit_base(self.estimator_, Xr, yr, swr)
            P_out, out = None, rows
        prob = probability_model(self.estimator_, classes, allow_missing=joint)
        if P_out is None:
            P_out = prob.predict_proba(Xr) if self.prefit else prob.columns(P_fit)
        return prob, P_out, out

    def _split_rows(self, y_codes, n):
        """Rows for the base model and rows for the outer loop (``holdout``), or (None, None)."""
        if self.holdout is None:
            return None, None
        if not (isinstance(self.holdout, float) and 0 < self.holdout < 1):
            raise ValueError(f"holdout must be None or a float in (0, 1), got {self.holdout!r}")
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
        if is_dask_collection(X):
            from ..distributed import estimator as dist
            return dist.predict(self, X, sensitive_features=sensitive_features, random_state=random_state)
        rs = self.random_state if random_state is None else random_state
        return self.classifier_.predict(X, sensitive_features=sensitive_features, random_state=rs)

    def predict_proba(self, X, *, sensitive_features=None):
        """The randomized rule's class distribution per example, shape (n_samples, n_classes).

        Not an estimate of ``P(y | x)``: entry ``[l, j]`` is the probability that
        :meth:`predict` outputs ``classes_[j]`` for example ``l``. For the base model's
        probabilities use ``estimator_.predict_proba``.
        """
        check_is_fitted(self, "classifier_")
        if is_dask_collection(X):
            from ..distributed import estimator as dist
            return dist.predict_proba(self, X, sensitive_features=sensitive_features)
        return self.classifier_.predict_proba(X, sensitive_features=sensitive_features)

    def expected_confusion_matrix(self, X, y, *, sensitive_features=None, sample_weight=None,
                                  per_group=False):
        """Exact expected confusion matrix (see :meth:`RandomizedClassifier.expected_confusion_matrix`)."""
        check_is_fitted(self, "classifier_")
        check_consistent_rows(X=X, y=y, sensitive_features=sensitive_features, sample_weight=sample_weight)
        return self.classifier_.expected_confusion_matrix(
            X, y, sensitive_features=sensitive_features, sample_weight=sample_weight, per_group=per_group)

    def evaluate(self, X, y, *, sensitive_features=None, sample_weight=None, confidence=None,
                 interval_method="auto"):
        """Objective and constraint values on labelled data (expected over the randomization).

        Parameters
        ----------
        X, y, sensitive_features, sample_weight
            Labelled data (``sensitive_features`` as at fit time).
        confidence : float in (0, 1), optional
            Add confidence intervals (see :func:`goalfit.metrics.evaluate_problem`): each covers
            the population value of the goal for this fitted classifier (the expectation over
            new examples and over the classifier's randomization), given ``(X, y)`` drawn i.i.d.
            from that population.
        interval_method : {"auto", "clopper_pearson", "delta", "bootstrap"}

        Returns
        -------
        dict with ``objective`` (dict name/value), ``constraints`` (list of dicts name/value/
        bound/violation/met) and ``accuracy`` (float); with ``confidence`` also ``interval``
        entries, ``met_with_confidence`` and ``accuracy_interval``.
        """
        from ..metrics import evaluate_problem

        check_is_fitted(self, "classifier_")
        if is_dask_collection(X):
            from ..distributed import estimator as dist
            return dist.evaluate(self, X, y, sensitive_features=sensitive_features,
                                 sample_weight=sample_weight, confidence=confidence)
        check_consistent_rows(X=X, y=y, sensitive_features=sensitive_features, sample_weight=sample_weight)
        dist = self.predict_proba(X, sensitive_features=sensitive_features)
        return evaluate_problem(Problem(self.objective, self.constraints), y, dist,
                                sensitive_features=sensitive_features, sample_weight=sample_weight,
                                classes=self.classes_, confidence=confidence,
                                interval_method=interval_method, random_state=_seed(self.random_state))

    def score(self, X, y, sample_weight=None, *, sensitive_features=None):
        """Expected accuracy of the (randomized) classifier, in [0, 1]."""
        C = self.expected_confusion_matrix(X, y, sensitive_features=sensitive_features,
                                           sample_weight=sample_weight)
        return float(np.trace(C))

    def with_goals(self, constraints=None, *, objective=None, warm_start=None):
        """The classifier for other goals on this fit's training state, without refitting.

        The plug-in methods post-process fixed class probabilities (Narasimhan et al., JMLR
        2024, §4), so new goals only need the method re-run on the probabilities this fit
        kept (out-of-fold with ``cv``, joint ones with ``group_blind``), its cells and labels:
        no base-model fit, no encoding pass. ``margin`` is applied to the new constraints;
        :func:`goalfit.frontier` sweeps a bound this way.

        Parameters
        ----------
        constraints : sequence of Constraint, optional
            The new constraints (default: this fit's). Goals may name only the groups and
            classes the fit saw.
        objective : str or goal expression, optional
            The new objective (default: this fit's).
        warm_start : tuple (members, confusions), optional
            Columns to start column generation from (``method_="column_generation"`` only),
            e.g. the members and ``result_.confusions`` of earlier fits on the same state.

        Returns
        -------
        GoalClassifier
            A new fitted classifier sharing this one's base model (``estimator_``) and
            probability model; ``self`` is unchanged. Its ``fit_seconds_`` is the re-solve's
            time; ``base_fit_seconds_`` is 0.

        Raises
        ------
        ValueError
            A fit on Dask input (its training state is not in memory), the refit oracle (its
            members are refits of the base model), ``confidence`` (certification needs a
            fresh candidate/safety split: fit again), ``warm_start`` with a method other than
            column generation, or goals the training sample cannot state (unknown groups or
            classes).

        Warns
        -----
        RuntimeWarning
            When the new goals cannot all be met on the training sample (the least-violating
            classifier is returned, as by :meth:`fit`).
        """
        import copy

        check_is_fitted(self, "classifier_")
        ts = getattr(self, "train_sample_", None)
        if ts is None:
            raise ValueError("with_goals re-solves on the training state an in-memory fit keeps; a fit on "
                             "Dask input does not keep it: fit again with the new goals")
        if self.oracle == "refit":
            raise ValueError("with_goals re-solves on fixed probabilities: the refit oracle refits the base "
                             "model per call, fit again with the new goals")
        if self.confidence is not None:
            raise ValueError("confidence certifies the goals on a fresh safety part: fit again with the new goals")
        t0 = time.perf_counter()
        new = copy.copy(self)
        if constraints is not None:
            new.constraints = list(constraints)
        if objective is not None:
            new.objective = objective
        problem = Problem(new.objective, new.constraints)
        margins = _user_margins(new.margin, problem)
        space = self.problem_.space
        new.problem_ = Problem(new.objective, _tightened(problem, margins)).compile(space)
        method = new.method_ = _resolve_method(self.method, new.problem_)
        params = dict(self.method_params or {})
        if warm_start is not None:
            if method != "column_generation":
                raise ValueError(f"warm_start starts column generation, but the method is {method!r}")
            params["warm_start"] = warm_start
        oracle = _probability_oracle(self, method, ts.proba, ts.y, ts.cells, space, ts.sample_weight)
        result = _run_method(method, new.problem_, oracle, params)
        clf = self.classifier_
        new.margins_ = None if margins is None else list(margins)
        _adopt_result(new, result, type(clf)(result.members, result.weights, clf.classes, clf.cell_encoder,
                                             clf.probability_model))
        new.train_sample_ = ts.with_members(new.classifier_)
        new.base_fit_seconds_ = 0.0
        new.fit_seconds_ = time.perf_counter() - t0
        return new

    def to_deterministic(self, strategy="hash", *, random_state=0):
        """A deterministic classifier that keeps the goals, checked on the training data.

        Parameters
        ----------
        strategy : {"hash", "best_rule", "max_weight"}, default "hash"
            * ``"hash"``: hash-based derandomization (Cotter, Narasimhan & Gupta, "On making
              stochastic classifiers deterministic", NeurIPS 2019, §4): example ``x`` gets the
              prediction of the member picked by a hash of its feature row (see
              :mod:`goalfit.classifiers.hashing`), a deterministic function of ``x`` that does
              not depend on the batch. Guarantee: if the row hashes behave as independent
              uniforms, on any sample each rate equals the randomized classifier's expected
              rate plus zero-mean noise with standard deviation at most
              ``sqrt(f / (4 n_slice))``, ``f`` the share of the slice's ``n_slice`` examples on
              which the members disagree (they differ only near the decision boundary), so the goals
              hold up to that noise; duplicated rows share one draw.
            * ``"best_rule"``: the single deterministic rule with the lowest training objective
              among those that meet every goal on the training data (else the least violating),
              found by :mod:`goalfit.methods.derandomize`: for binary group-aware problems with
              a linear objective and polyhedral constraints, a search over per-group thresholds
              ``1[eta_1(x) >= t_a]``, exact (every combination) for one or two groups,
              coordinate descent for more; otherwise (multiclass, ``group_blind``, nonlinear goals) the best of the members
              and of the plug-in rules between pairs of members (meets the goals on the training
              data whenever one of these candidates does; no optimality over all rules); for
              binary ``group_blind`` fits with linear goals also the group-blind linear rules
              over a grid of Lagrangian directions, each with its exact threshold
              (:func:`goalfit.methods.derandomize.best_direction_rule`).
              The members themselves stay candidates. It is chosen on the training sample, so its
              training values are optimistic as the randomized classifier's are: measure it on
              held-out data (``evaluate(..., confidence=)``).
            * ``"max_weight"``: the member with the largest weight (no guarantee; often breaks
              goals that only the mixture meets).
        random_state : int, default 0
            Seed of the hash (``"hash"``).

        Returns
        -------
        RandomizedClassifier
            Deterministic (``is_deterministic``), with ``train_objective_``,
            ``train_constraint_values_``, ``train_max_violation_`` (on the outer-loop training
            rows, the randomized classifier's basis; out-of-fold with ``cv``) and
            ``derandomization_`` (the search's details). Group-blind fits give a group-blind
            classifier.

        Warns
        -----
        RuntimeWarning
            Whenever the deterministic classifier violates a goal on the training data.

        Raises
        ------
        ValueError
            For an unknown strategy.
        """
        check_is_fitted(self, "classifier_")
        return _to_deterministic(self, strategy, random_state=random_state)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.allow_nan = False
        tags.non_deterministic = False
        return tags


def _seed(random_state):
    """An int seed (or None) from an int, None or a RandomState."""
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(2**31 - 1))
    return random_state


def _is_linear(estimator) -> bool:
    """Whether the (final step of the) base estimator is a scikit-learn linear model."""
    final = estimator.steps[-1][1] if isinstance(estimator, Pipeline) else estimator
    return type(final).__module__.startswith("sklearn.linear_model")


def _resolve_method(method, compiled):
    """The method to run: ``"auto"`` resolved by the compiled problem's structure (§8.6).

    Raises
    ------
    ValueError
        For an unknown method name.
    """
    if method == "auto":
        method = choose_method(compiled)
    if method not in METHODS and method not in BASELINES:
        raise ValueError(f"unknown method {method!r}; known: ['auto'] + {sorted(METHODS) + sorted(BASELINES)}")
    return method


def _probability_oracle(est, method, P, y, cells, space, sample_weight):
    """The linear minimization oracle on fixed probabilities ``P`` (shape (n, n_columns)): the
    plug-in rule, the exact per-group thresholds (``oracle="threshold"``, binary), or their
    group-blind versions on joint probabilities (``group_blind``); baselines get the plug-in."""
    threshold = est.oracle == "threshold" and method not in BASELINES
    if est.group_blind:
        kind = GroupBlindThresholdOracle if threshold else GroupBlindOracle
        return kind(P.reshape(-1, space.n_cells, space.n_classes), y, cells, space, sample_weight)
    return (ThresholdOracle if threshold else PluginOracle)(P, y, cells, space, sample_weight)


def _run_method(method, compiled, oracle, method_params):
    """Run a plug-in method or a baseline on a compiled problem; returns its SolverResult."""
    params = dict(method_params or {})
    if method in BASELINES:
        return BASELINES[method](compiled, oracle, **params)
    return solve(compiled, oracle, method, **params)


def _adopt_result(est, result, classifier, stacklevel=2):
    """Store a solver result on a fitted GoalClassifier (in memory or on Dask): ``result_``,
    ``history_``, ``classifier_``, ``feasible_`` (with the least-violation warning), and the
    base model's ``n_features_in_`` / ``feature_names_in_``. ``est.problem_`` must be set."""
    import warnings

    est.result_, est.history_, est.classifier_ = result, result.history, classifier
    violation = est.problem_.max_violation(result.confusion)
    est.feasible_ = violation <= FEASIBLE_TOL
    if est.problem_.constraints and not est.feasible_ and est.method_ not in BASELINES:
        warnings.warn("the goals cannot all be met on the training data: returning the least-violating "
                      f"classifier (max violation {violation:.4g})", RuntimeWarning, stacklevel=stacklevel + 1)
    for attr in ("n_features_in_", "feature_names_in_"):
        if hasattr(est.estimator_, attr):
            setattr(est, attr, getattr(est.estimator_, attr))


def _user_margins(margin, problem):
    """Absolute tightening per constraint from ``margin=`` (None when not given).

    Raises
    ------
    ValueError
        For a wrong number of margins or a negative / non-finite one.
    """
    if margin is None:
        return None
    m = margin
    k = len(problem.constraints)
    if isinstance(m, numbers.Real):
        m = [float(m)] * k
    m = [float(v) for v in m]
    if len(m) != k:
        raise ValueError(f"margin has {len(m)} entries for {k} constraints")
    if any(not np.isfinite(v) or v < 0 for v in m):
        raise ValueError(f"margins must be finite and non-negative, got {m}")
    return m


def _tightened(problem, margins):
    """The problem's constraints with bounds moved inwards by ``margins`` (clipped to the range)."""
    from ..goals.expressions import Constraint

    if margins is None:
        return problem.constraints
    out = []
    for c, m in zip(problem.constraints, margins):
        lo, hi = c.expression.value_range
        b = c.bound - m if c.sense == "<=" else c.bound + m
        b = min(max(b, lo), hi)
        out.append(Constraint(c.expression, c.sense, b))
    return out


def _aligned(estimator, X, classes) -> np.ndarray:
    """``estimator.predict_proba(X)`` with columns in the order of ``classes`` (0 for unseen classes)."""
    return probability_model(estimator, classes, allow_missing=True).predict_proba(X)


def _cross_fit(base, X, y, sample_weight, folds, classes):
    """Out-of-fold class probabilities (columns in ``classes`` order) and the fold models.

    Each row's probabilities come from the model fitted on the folds that do not contain it
    (as :func:`sklearn.model_selection.cross_val_predict`); ``sample_weight`` and pipelines as
    in :func:`_fit_base`.

    Raises
    ------
    ValueError
        If the splitter does not put every row in exactly one test fold.
    """
    n = _num_samples(X)
    P = np.full((n, len(classes)), np.nan)
    seen = np.zeros(n, dtype=int)
    models = []
    for train, test in folds.split(np.zeros((n, 1)), y):
        m = clone(base)
        _fit_base(m, _safe_indexing(X, train), y[train], None if sample_weight is None else sample_weight[train])
        P[test] = _aligned(m, _safe_indexing(X, test), classes)
        seen[test] += 1
        models.append(m)
    if not (seen == 1).all():
        raise ValueError("cv must be a partition: every row in exactly one test fold "
                         f"({int((seen == 0).sum())} rows in none, {int((seen > 1).sum())} in several)")
    return P, models


class FoldAverage(ClassifierMixin, BaseEstimator):
    """The deployed probability model of cross-fitting: the average of the fold models.

    ``predict_proba(X)`` is the mean over the fold models of their class probabilities
    (columns in ``classes_`` order), the model whose probabilities resemble the out-of-fold
    ones the goals were solved on (each fold model saw ``(K-1)/K`` of the rows).

    Parameters
    ----------
    estimators : list of fitted estimators
    classes : ndarray of shape (n_classes,)
    """

    def __init__(self, estimators, classes):
        self.estimators = estimators
        self.classes = classes
        self.estimators_ = estimators
        self.classes_ = np.asarray(classes)
        first = estimators[0]
        for attr in ("n_features_in_", "feature_names_in_"):
            if hasattr(first, attr):
                setattr(self, attr, getattr(first, attr))

    def predict_proba(self, X) -> np.ndarray:
        return np.mean([_aligned(m, X, self.classes_) for m in self.estimators_], axis=0)

    def predict(self, X):
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]


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
