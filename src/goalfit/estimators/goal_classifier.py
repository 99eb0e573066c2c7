"""The scikit-learn meta-estimator: a base class-probability model plus a plug-in method."""
from __future__ import annotations

import numbers
import time

import numpy as np
from sklearn.base import MetaEstimatorMixin, clone
from sklearn.frozen import FrozenEstimator
from sklearn.model_selection import StratifiedKFold, check_cv, train_test_split
# scikit-learn has no public module for parameter constraints: _param_validation is what its own
# estimators and scikit-learn-compatible libraries use for _parameter_constraints
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..classifiers import GroupBlindClassifier, ProbabilityModel, RandomizedClassifier, probability_model
from ..classifiers.members import GroupBlindRule
from ..classifiers.randomized import PluginClassifier
from ..fit import (GOAL_PARAMETERS, GoalEstimator, InMemoryData, as_seed, prepare, resolve_margins,
                   tighten)
from ..methods.plugin import (BASELINES, FIT_OPTIONS, PLUGIN_NAMES, PluginMethod, PluginSettings, RefitOracle,
                              make_oracle)
from ..utils.deprecation import NOTHING, DeprecatedParams, Renamed
from ..utils.rows import take_rows
from ..utils.validation import check_has_predict_proba, check_probabilities
from .deterministic import TrainingSample, to_deterministic as _to_deterministic
from .models import resolve_estimator
from .probabilities import FoldAverage, aligned_proba, cross_fit, fit_base, is_linear

#: ``cv="auto"`` with ``group_blind``: 2 folds instead of 5 from this many rows
#: (``benchmarks/group_blind.py --part lightgbm`` and ``--part folds``)
GROUP_BLIND_TWO_FOLDS_FROM = 20_000


class GoalClassifier(DeprecatedParams, MetaEstimatorMixin, GoalEstimator):
    """Classifier trained to minimize an objective subject to constraints (goals).

    Fits a class-probability model, then a plug-in method of Narasimhan et al. (JMLR 2024)
    turns its probabilities into a (randomized) classifier that meets the goals on the training
    sample.

    Parameters
    ----------
    estimator : estimator with ``predict_proba``, a built-in model's name, "precomputed", or None
        The base class-probability model. None: ``make_estimator("logistic_regression")`` (takes
        a pandas DataFrame with categorical and numeric columns: :func:`goalfit.make_estimator`);
        a name: that built-in model; an already fitted model wrapped in
        :class:`sklearn.frozen.FrozenEstimator` is used as it is. ``"precomputed"``: ``X`` holds
        the class probabilities themselves, shape (n_samples, n_classes), columns in sorted
        label order (joint ones with ``group_blind``, see there).
    objective : str or goal expression, default "error"
        What to minimize: a name (``"error"``, ``"balanced_error"``, ``"hmean"``, ``"gmean"``,
        ``"qmean"``, ``"minmax_recall"``, ``"f1"``, ``"micro_f1"``, ...) or an expression from
        :mod:`goalfit.goals`.
    constraints : sequence of Constraint, default ()
        E.g. ``[demographic_parity_difference("sex") <= 0.01]``.
    method : str, default "auto"
        ``"auto"`` (by the objective's class and whether the oracle is exact, §8.6;
        :func:`goalfit.methods.plugin.choose_method`),
        a plug-in method (``"column_generation"``, ``"frank_wolfe"``, ``"split_frank_wolfe"``,
        ``"gda"``, ``"con_gda"``, ``"ellipsoid"``, ``"con_ellipsoid"``, ``"bisection"``,
        ``"con_bisection"``) or an unconstrained baseline (``"argmax"``, ``"balanced"``,
        ``"post_shift"``, ``"post_shift_groups"``; they refuse constraints).
    method_params : dict, optional
        The method's knobs (e.g. ``{"max_iter": 500, "tol": 1e-4}``; an unknown key is an error
        naming the known ones) and four of the fit's:

        * ``"oracle"``: ``"auto"`` (default: ``"threshold"`` for binary problems, ``"plugin"``
          for more classes and with ``group_blind``;
          :func:`~goalfit.methods.plugin.resolve_oracle`), ``"plugin"`` (the plug-in rule on
          the probabilities, Alg. 9/10; exact only when they are calibrated within each
          group), ``"threshold"`` (binary: the exact best per-group thresholds on the sample,
          robust to miscalibration within the groups, as fairlearn's ThresholdOptimizer; the
          comparison over five datasets is ``benchmarks/oracle_choice.py --part default``) or
          ``"refit"`` (refit the base model with example weights per call, §8.7; slow);
        * ``"cv_model"``: the deployed probability model under cross-fitting, ``"average"``
          (default; the mean of the fold models, :class:`FoldAverage`) or ``"refit"`` (one model
          on all rows);
        * ``"joint_model"``: with ``group_blind``, ``"factored"`` (default;
          :class:`~goalfit.estimators.joint.FactoredJointClassifier`, ``P(Y | x)`` from one
          model of the labels times ``P(A | x, Y)``) or ``"product"`` (one model of the
          (group, class) label); see :mod:`goalfit.estimators.joint`;
        * ``"safety_fraction"``: with ``confidence``, the share of rows held out for the safety
          test (default 0.4).
    cv : "auto", None, int, float, splitter or iterable of (train, test), default "auto"
        How the probabilities the method reads are kept apart from the base model's fit.
        An int (>= 2) or a splitter: cross-fitting (out-of-fold probabilities, as
        :func:`sklearn.model_selection.cross_val_predict`; an int gives a shuffled
        ``StratifiedKFold`` seeded by ``random_state``), so a flexible model that memorized its
        rows does not fool the goals. A float in (0, 1): sample splitting (Narasimhan et al.
        §6.6): the base model on ``1 - cv`` of the rows, the goals on the rest. None: in-sample.
        ``"auto"``: in-sample for scikit-learn linear models (and pipelines ending in one), a
        frozen or precomputed model and the refit oracle, otherwise cross-fitting with 5 folds,
        or 2 with ``group_blind`` from 20,000 rows on (:data:`GROUP_BLIND_TWO_FOLDS_FROM`: the
        joint model costs about two base fits per fold; what 2 folds instead of 5 cost in
        accuracy and violation:
        see benchmarks/README.md, section "Measurements behind the library's choices").
    confidence : float in [0.5, 1), optional
        High-confidence goals (:mod:`goalfit.fit.certification`; Thomas et al., Science 2019;
        fixed-sequence testing as in Learn-then-Test): fit candidates on ``1 - safety_fraction``
        of the rows with the constraints tightened by multiples of their predicted bound width,
        most conservative first, test them in that order on the rest with one-sided bounds at
        level ``confidence`` (each constraint; a candidate passes when all do) and deploy the
        best that passed. Under i.i.d.
        sampling a classifier with ``certified_ = True`` meets every constraint on the
        population with probability at least ``confidence``; otherwise the most conservative
        candidate is returned with the bounds that do hold (``certified_bound``). A value below
        0.5 is refused (0.05 is an alpha: pass 0.95); without constraints there is nothing to
        certify: ``confidence`` is ignored with a warning and every row is used.
    margin : float or sequence of float, optional
        Tighten every constraint (or each by its own amount, in the goal's units) before
        solving; with ``confidence`` it replaces the grid of predicted margins by one candidate.
        Raises ValueError when margins on constraints that average one another cannot all hold.
    group_blind : bool, default False
        Use the sensitive features only to state and measure the goals, never to decide: the
        base model estimates the joint ``P(Y = y, A = a | x)`` over the classes and the cells,
        the group-blind plug-in oracle (:mod:`goalfit.methods.plugin.group_blind`) predicts
        ``argmin_j sum_{y,a} eta_{y,a}(x) L_a[y, j]``, and :meth:`predict` needs no
        ``sensitive_features`` (extends Narasimhan et al.'s Def. 2 as in Menon & Williamson,
        FAT* 2018). With ``"precomputed"``, ``X`` holds the joint probabilities, shape
        (n_samples, n_cells * n_classes), cell-major in the order of the fitted cells.
    random_state : int, RandomState or None
        Seeds the folds, the splits and :meth:`predict`'s sampling.
    verbose : int, default 0
        0: silent; 1: a line per phase (base model, folds, method) and the method's iteration,
        objective and worst violation every second; 2: every iteration.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    estimator_ : fitted base estimator (None when precomputed; a :class:`FoldAverage` with
        ``cv`` and ``cv_model="average"``)
    estimators_ : list of fitted estimators or None
        The fold models under cross-fitting.
    cv_ : splitter or None
        The cross-fitting splitter that ran (None: in-sample or held out).
    classifier_ : RandomizedClassifier
        The fitted (randomized) classifier.
    result_ : FitResult
        Members, weights, training confusion tensors, history, oracle calls, feasibility.
    goals_ : Problem
        The goals as fitted: ``objective`` and ``constraints`` with the choices they make from
        the data (micro-F1's default class) fixed on the training rows; :meth:`evaluate` and
        the report measure these on any rows.
    problem_ : CompiledProblem
        The goals (tightened by the margins) bound to the training sample.
    method_ : str
        The method that ran.
    history_ : list of dict
        Per-iteration objective, max violation, oracle calls and seconds.
    feasible_ : bool
        Whether the constraints hold on the training sample (expected over the randomization).
    max_violation_ : float
    margins_ : list of float or None
    certified_ : bool or None
        With ``confidence``: whether every constraint passed the safety test.
    certification_ : list of dict or None
        Per constraint: margin, candidate and safety values, the one-sided safety bound
        (``certified_bound``: what holds at ``confidence`` for the deployed rule), passed, and
        for a failure the safety-part size it would need (:func:`goalfit.fit.safety_rows`).
    safety_path_ : list of dict or None
        With ``confidence``: every candidate tested, in order (margins, safety bounds,
        objective on the safety part, passed).
    base_fit_seconds_, fit_seconds_ : float
        Time to fit the base estimator and compute its training probabilities, and the whole
        ``fit``.
    n_outer_samples_ : int
        Examples the method ran on (all, the held-out share, or the candidate part).
    n_iter_ : int
        The method's iterations (:class:`~goalfit.methods.plugin.PluginDetails`; all of it is
        in ``result_.details``).
    stop_reason_ : StopReason
        Why the method stopped (``"converged"``, ``"stalled"``, ``"max_iter"``, ``"exact"``, ...;
        :class:`~goalfit.methods.plugin.StopReason`).
    optimality_gap_ : float or None
        The certified gap of the classifier to the optimum on the method's training rows
        (objective units), when the oracle is exact (the threshold oracle, the binary default, or
        the plug-in oracle's exact binary program) and the mixture meets the goals; None
        otherwise (the plug-in oracle on several classes, an infeasible goal).
    oracle_ : str
        The oracle that ran (``"threshold"``, ``"plugin"``, ``"refit"``, ...: ``"auto"`` resolved).
    train_sample_ : TrainingSample
        What :meth:`to_deterministic` needs to check a deterministic classifier on the rows the
        method ran on: their probabilities, labels, true cells, weights, row hashes and every
        member's predictions: per row, the probabilities (8 bytes per column; shared with the
        caller's array, not copied, for float64 precomputed probabilities), 2 bytes of codes, 8 of
        weight when given, 8 of hash and one per member. The hashes and the predictions are
        computed on first use wherever they need no feature rows (precomputed numeric
        probabilities; members that read only the probabilities).

    Raises
    ------
    ValueError
        At fit time for unknown classes or groups named by a goal, empty groups, labels that
        do not match precomputed probabilities, a method that cannot express the goals (before
        any fitting, with the reason), an unknown ``method_params`` key; infeasible goals do
        **not** raise: the least-violating classifier is returned, ``feasible_`` is False and a
        warning names the worst goal.

    Notes
    -----
    Group-dependent goals make the classifier depend on the group: pass the same
    ``sensitive_features`` columns to :meth:`predict`, or fit with ``group_blind=True``.

    Examples
    --------
    >>> import numpy as np
    >>> import goalfit as gf
    >>> rng = np.random.default_rng(0)
    >>> X, s = rng.normal(size=(300, 3)), rng.choice(["a", "b"], 300)
    >>> y = (X[:, 0] + 0.5 * (s == "b") + 0.5 * rng.normal(size=300) > 0).astype(int)
    >>> model = gf.GoalClassifier(constraints=[gf.demographic_parity_difference() <= 0.05], random_state=0)
    >>> model = model.fit(X, y, sensitive_features=s)
    >>> res = model.evaluate(X, y, sensitive_features=s)
    >>> print(f"error {res['objective']['value']:.3f}, DP difference {res['constraints'][0]['value']:.3f}")
    error 0.121, DP difference 0.050
    """

    _parameter_constraints = {
        **GOAL_PARAMETERS,
        "estimator": [None, HasMethods(["fit"]), str],  # predict_proba: checked with a way out
        "method": [StrOptions(set(PLUGIN_NAMES))],
        "cv": [StrOptions({"auto"}), None, Interval(numbers.Integral, 2, None, closed="left"),
               Interval(numbers.Real, 0, 1, closed="neither"), "cv_object"],
        "group_blind": ["boolean"],
    }

    #: Constructor keywords of goalfit 0.1 (accepted with a FutureWarning until 0.3): where each now lives.
    _deprecated_params = {
        "oracle": "method_params.oracle", "cv_model": "method_params.cv_model",
        "joint_model": "method_params.joint_model", "safety_fraction": "method_params.safety_fraction",
        "holdout": Renamed("cv", convert=lambda v, est: NOTHING if v is None else v, use="cv=<float> (sample splitting)"),
        "prefit": Renamed("estimator", convert=lambda v, est: _frozen(est.estimator) if v else NOTHING,
                          use="estimator=sklearn.frozen.FrozenEstimator(estimator)"),
    }

    def __init__(self, estimator=None, *, objective="error", constraints=(), method="auto", method_params=None,
                 cv="auto", confidence=None, margin=None, group_blind=False, random_state=None, verbose=0,
                 **deprecated_params):
        self.estimator = estimator
        self.objective = objective
        self.constraints = constraints
        self.method = method
        self.method_params = method_params
        self.cv = cv
        self.confidence = confidence
        self.margin = margin
        self.group_blind = group_blind
        self.random_state = random_state
        self.verbose = verbose
        self._fold_deprecated(deprecated_params)

    # ------------------------------------------------------------------ options
    def _precomputed(self) -> bool:
        return isinstance(self.estimator, str) and self.estimator == "precomputed"

    def _frozen(self) -> bool:
        return isinstance(self.estimator, FrozenEstimator)

    def _base(self):
        """The base model to fit (a fresh one for None or a name; the estimator itself otherwise)."""
        if self.estimator is None or isinstance(self.estimator, str):
            return resolve_estimator(self.estimator, random_state=as_seed(self.random_state))
        return self.estimator

    def _settings(self) -> PluginSettings:
        """The validated ``method_params``: the fit options and the method's knobs (:class:`PluginSettings`).

        Raises
        ------
        ValueError
            Unknown keys (with the closest known one) or a bad fit option.
        """
        return PluginSettings.from_params(self.method_params, self.method, self)

    def _check_method_params(self) -> None:
        """The method's keys, the fit options, and combinations of options that cannot work."""
        oracle = self._settings().oracle
        if isinstance(self.estimator, str) and self.estimator != "precomputed":
            resolve_estimator(self.estimator)  # an unknown name raises here
        elif not isinstance(self.estimator, str):
            check_has_predict_proba(self._base())
        holdout = self._holdout()
        if self.group_blind:
            if oracle == "refit":
                raise ValueError("group_blind=True runs the group-blind plug-in oracle: method_params['oracle'] must "
                                 "be 'plugin' or 'threshold', got 'refit'")
            if self._frozen():
                raise ValueError("group_blind=True fits a joint model of (group, class): a frozen (prefit) estimator "
                                 "cannot be used (give it unfitted, or 'precomputed' joint probabilities)")
            if self.method in ("post_shift", "post_shift_groups"):
                raise ValueError(f"method {self.method!r} thresholds per group: it is not group-blind")
        explicit_cv = self.cv is not None and not (isinstance(self.cv, str) and self.cv == "auto")
        if explicit_cv:
            what = "sample splitting (a float cv)" if holdout is not None else "cross-fitting"
            if self._precomputed() or self._frozen():
                raise ValueError(f"cv={self.cv!r} asks for {what} of the base model: it needs a base model to fit "
                                 "(not 'precomputed' or a FrozenEstimator)")
            if oracle == "refit":
                raise ValueError("the refit oracle refits the base model inside the outer loop: cv does not apply")
        if self.confidence is not None and oracle == "refit":
            raise ValueError("confidence needs the classifier chosen on one part of the data: use the plugin or "
                             "threshold oracle")

    def _holdout(self):
        """The held-out share of a float ``cv``, else None."""
        cv = self.cv
        if isinstance(cv, numbers.Real) and not isinstance(cv, (bool, numbers.Integral)):
            return float(cv)
        return None

    def _cv_folds(self, oracle, n_samples):
        """The cross-fitting splitter, or None for in-sample (or held-out) probabilities
        (``cv="auto"``: 5 folds for a flexible model, 2 for a group-blind one on at least
        :data:`GROUP_BLIND_TWO_FOLDS_FROM` rows)."""
        cv = self.cv
        if self._holdout() is not None or cv is None:
            return None
        if isinstance(cv, str):  # "auto"
            if self._precomputed() or self._frozen() or oracle == "refit" or is_linear(self._base()):
                return None
            cv = 2 if self.group_blind and n_samples >= GROUP_BLIND_TWO_FOLDS_FROM else 5
        if isinstance(cv, numbers.Integral) and not isinstance(cv, bool):
            return StratifiedKFold(int(cv), shuffle=True, random_state=as_seed(self.random_state))
        return check_cv(cv, classifier=True)  # a splitter, or an iterable of (train, test)

    # ------------------------------------------------------------------ the fit template's hooks
    _dask_support = True

    def _method(self):
        return PluginMethod(self.method)

    def _fit_data(self, backend, X, y, sensitive_features, sample_weight, ctx):
        """The plug-in's rows: in memory (:class:`PluginData`) or on Dask (``DaskData``)."""
        kind = PluginData if backend is InMemoryData else backend
        return kind(self, X, y, sensitive_features, sample_weight, ctx.settings, ctx.progress)

    def _fit_seed(self):
        return None  # the folds, splits and the safety test draw from random_state where they are made

    def _before_solve(self, ctx) -> None:
        self.base_fit_seconds_ = 0.0

    def _fit_candidate(self, ctx, constraints, data):
        """Base-model probabilities on ``data`` (shared by the candidates of a safety test), then the
        plug-in method on them."""
        backend, method = ctx.backend, ctx.method
        t0 = time.perf_counter()
        outer, prob = backend.probabilities(data)
        self.base_fit_seconds_ = max(self.base_fit_seconds_, backend.base_seconds + time.perf_counter() - t0)
        try:
            compiled = self._compile_goals(ctx, constraints, outer.space)  # the template's compile on its space
        except ValueError as err:
            if self._holdout() is None:
                raise
            raise ValueError(f"cv={self.cv} (sample splitting) leaves {outer.n_samples} of {data.n_samples} "
                             f"examples for the goals, too few: {err}. Use a smaller share or more data") from None
        # the oracle depends on whether the method is a baseline, which no oracle changes; "auto"
        # itself is resolved by method.solve with the oracle (the template adopts result.method)
        run = dict(ctx.settings.params(), oracle=backend.oracle(method.resolve(compiled), outer))
        result = method.solve(outer, compiled, run, ctx.progress)
        kind = GroupBlindClassifier if self.group_blind else RandomizedClassifier
        ctx.state["outer"] = outer
        return compiled, result, kind(result.members, result.weights, self.classes_, backend.encoder, prob)

    def _adopt_details(self, ctx, result, compiled, certification) -> None:
        self._adopt_method_details(result)
        outer, clf = ctx.state["outer"], self.classifier_
        self.n_outer_samples_ = ctx.backend.n_outer_samples(outer)
        for attr in ("n_features_in_", "feature_names_in_"):
            if hasattr(self.estimator_, attr):
                setattr(self, attr, getattr(self.estimator_, attr))
        self.train_sample_ = ctx.backend.training_sample(clf, outer)
        self.safety_sample_ = None
        if certification is not None:  # the safety rows, to re-test a deterministic rule
            safe = certification.safety
            self.safety_sample_ = TrainingSample.build(clf, safe.X, clf.probability_model.predict_proba(safe.X),
                                                       safe.y_codes, safe.cells, safe.sample_weight)

    def _adopt_method_details(self, result) -> None:
        """The method's :class:`~goalfit.methods.plugin.PluginDetails` as fitted attributes."""
        d = result.details
        self.n_iter_, self.stop_reason_, self.optimality_gap_, self.oracle_ = d.iterations, d.stop, d.gap, d.oracle

    # ------------------------------------------------------------------ predicting
    def _check_predict_X(self, X):
        """Features at predict time. After a fit on a DataFrame, an array without column names
        (numpy, a list) is read by position, as scikit-learn does, with its warning: it becomes a
        DataFrame with the fitted column names (the base model may select columns by name).

        Raises
        ------
        ValueError
            Another number of columns than at fit time.
        """
        if self._precomputed():
            K = len(self.classes_) * (self.classifier_.cell_encoder.n_cells if self.group_blind else 1)
            if getattr(X, "ndim", 2) != 2 or np.shape(X)[1] != K:
                raise ValueError(f"X has {np.shape(X)[1] if np.ndim(X) == 2 else np.shape(X)} columns, but "
                                 f"GoalClassifier fitted on precomputed probabilities expects {K}")
            return X
        import warnings

        import pandas as pd
        import scipy.sparse as sp

        names = getattr(self, "feature_names_in_", None)
        if (names is not None and not hasattr(X, "columns") and not hasattr(X, "__dask_graph__")
                and not sp.issparse(X)):
            shape = np.shape(X)
            if len(shape) != 2 or shape[1] != len(names):
                width = shape[1] if len(shape) == 2 else f"shape {shape}"
                raise ValueError(f"X has {width} features, but GoalClassifier is expecting {len(names)} features "
                                 f"as input (the columns {list(names)[:5]}{'...' if len(names) > 5 else ''})")
            warnings.warn("X does not have valid feature names, but GoalClassifier was fitted with feature names: "
                          "its columns are read in the fitted order; pass a DataFrame with the columns "
                          f"{list(names)[:5]}{'...' if len(names) > 5 else ''} to be safe", UserWarning, stacklevel=3)
            X = pd.DataFrame(X, columns=names).infer_objects()
        return X

    def expected_confusion_matrix(self, X, y, *, sensitive_features=None, sample_weight=None, per_group=False):
        """Exact expected confusion matrix (see :meth:`RandomizedClassifier.expected_confusion_matrix`)."""
        check_is_fitted(self, "classifier_")
        prepare(X, y, sensitive_features=sensitive_features, sample_weight=sample_weight, classes=self.classes_,
                who="GoalClassifier", warn_groups=False)  # rows, labels and weights checked
        return self.classifier_.expected_confusion_matrix(
            self._check_predict_X(X), y, sensitive_features=sensitive_features, sample_weight=sample_weight,
            per_group=per_group)

    def fit_baseline(self, X, y, *, sensitive_features=None, sample_weight=None, datasets=None):
        """The unconstrained plug-in argmax on the same fitted base model (no refit)."""
        check_is_fitted(self, "classifier_")
        clf = self.classifier_
        n = len(self.classes_)
        cost = np.broadcast_to(1.0 - np.eye(n), (clf.cell_encoder.n_cells, n, n))
        if isinstance(clf, GroupBlindClassifier):  # argmax of the marginal P(Y | x), group-blind too
            return "baseline", clf.with_members([GroupBlindRule(cost)], [1.0]), 0.0
        return "baseline", PluginClassifier(cost, self.classes_, clf.cell_encoder, clf.probability_model), 0.0

    def report_fields(self) -> dict:
        return {"method": self.method_, "n_members": len(self.result_.members),
                "timing": {"base_fit_seconds": self.base_fit_seconds_, "total_fit_seconds": self.fit_seconds_},
                "cross_fitting": None if getattr(self, "cv_", None) is None else {
                    "folds": _n_splits(self.cv_), "deployed_model": self._settings().cv_model}}

    # ------------------------------------------------------------------ new goals, derandomization
    def with_goals(self, constraints=None, *, objective=None, method_params=None, warm_start=None):
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
        method_params : dict, optional
            Other knobs of the method (default: this fit's), e.g. step sizes of a grid
            (:func:`goalfit.estimators.select_method_params`).
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
            column generation, goals the training sample cannot state (unknown groups or
            classes), or precomputed probabilities modified in place since fit.

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
        ts.check_unchanged()
        new = copy.copy(self)
        if method_params is not None:
            new.method_params = dict(method_params)
        settings = new._settings()
        if settings.options != self._settings().options:
            raise ValueError("with_goals re-solves on this fit's probabilities: method_params may change the "
                             f"method's knobs, not the fit's options {sorted(FIT_OPTIONS)}")
        params = settings.params()
        if settings.oracle == "refit":
            raise ValueError("with_goals re-solves on fixed probabilities: the refit oracle refits the base "
                             "model per call, fit again with the new goals")
        if self.confidence is not None:
            raise ValueError("confidence certifies the goals on a fresh safety part: fit again with the new goals")
        t0 = time.perf_counter()
        if constraints is not None:
            new.constraints = list(constraints)
        if objective is not None:
            new.objective = objective
        space = self.problem_.space
        new.goals_ = problem = new._goal_problem().resolved(space)
        margins = resolve_margins(new.margin, problem)
        compiled = type(problem)(problem.objective, tighten(problem, margins)).compile(space)
        method = PluginMethod(self.method)
        method.check(compiled)
        outer = self._training_data(ts, space)
        params["oracle"] = make_oracle(outer, settings.oracle, group_blind=self.group_blind)
        name = method.resolve(compiled, params["oracle"])  # as solve resolves "auto": with the oracle
        if warm_start is not None:
            if name != "column_generation":
                raise ValueError(f"warm_start starts column generation, but the method is {name!r}")
            params["warm_start"] = warm_start
        result = method.solve(outer, compiled, params)
        clf = self.classifier_
        new._adopt(result, type(clf)(result.members, result.weights, clf.classes, clf.cell_encoder,
                                     clf.probability_model), compiled, method=name, margins=margins)
        new._adopt_method_details(result)
        new.train_sample_ = ts.with_members(new.classifier_)
        new.base_fit_seconds_ = 0.0
        new.fit_seconds_ = time.perf_counter() - t0
        return new

    def _training_data(self, ts, space):
        """The method's training rows (kept in ``train_sample_``) as prepared data."""
        from ..fit import PreparedData

        clf = self.classifier_
        return PreparedData(None, ts.y, ts.cells, self.classes_, clf.cell_encoder, space, ts.sample_weight,
                            scores=ts.proba)

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
              which the members disagree, so the goals hold up to that noise; duplicated rows
              share one draw.
            * ``"best_rule"``: the single deterministic rule with the lowest training objective
              among those that meet every goal on the training data (else the least violating),
              found by :mod:`goalfit.methods.derandomize`: for binary group-aware problems with
              a linear objective and polyhedral constraints, a search over per-group thresholds
              ``1[eta_1(x) >= t_a]``, exact (every combination) for one or two groups,
              coordinate descent for more; otherwise the best of the members and of the
              plug-in rules between pairs of its 60 heaviest members (meets the goals on the training data
              whenever one of these candidates does); for binary ``group_blind`` fits with
              linear goals also the group-blind linear rules over a grid of Lagrangian
              directions (:func:`goalfit.methods.derandomize.best_direction_rule`). Chosen on
              the training sample, so its training values are optimistic: measure it on
              held-out data (``evaluate(..., classifier=det, confidence=)``).
            * ``"max_weight"``: the member with the largest weight (no guarantee; often breaks
              goals that only the mixture meets).
        random_state : int, default 0
            Seed of the hash (``"hash"``).

        Returns
        -------
        RandomizedClassifier
            Deterministic (``is_deterministic``), with ``train_objective_``,
            ``train_constraint_values_``, ``train_max_violation_`` (on the method's training
            rows; out-of-fold with ``cv``) and ``derandomization_`` (the search's details).
            Group-blind fits give a group-blind classifier.

        Warns
        -----
        RuntimeWarning
            Whenever the deterministic classifier violates a goal on the training data.

        Raises
        ------
        ValueError
            For an unknown strategy, a fit on Dask input (its training rows are not in memory),
            or precomputed probabilities modified in place since fit.
        """
        check_is_fitted(self, "classifier_")
        return _to_deterministic(self, strategy, random_state=random_state)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.allow_nan = False
        tags.non_deterministic = False
        return tags


class PluginData(InMemoryData):
    """GoalClassifier's rows in memory: one preparation, then the base model's probabilities on any rows.

    Parameters
    ----------
    est : GoalClassifier
    X, y, sensitive_features, sample_weight : the training data
    settings : PluginSettings
        The validated ``method_params`` (the fit options oracle, cv_model, joint_model are read).
    progress : Progress
    """

    def __init__(self, est, X, y, sensitive_features, sample_weight, settings, progress):
        self.est, self.settings, self.progress = est, settings, progress
        super().__init__(prepare(X, y, sensitive_features=sensitive_features, sample_weight=sample_weight,
                                 who="GoalClassifier"))
        if est.group_blind and not self.encoder.columns_:
            raise ValueError("group_blind=True states the goals on groups it never sees at predict time: pass "
                             "sensitive_features to fit")

    def oracle(self, method, outer):
        """The linear minimization oracle of the method on the outer-loop rows."""
        kind = self.settings.oracle
        if kind == "refit" and method not in BASELINES:
            base = self.est._base()
            return RefitOracle(base, outer.X, outer.y_codes, outer.cells, outer.space, outer.sample_weight)
        if kind == "refit":
            kind = "plugin"
        if kind in ("threshold", "auto") and method in BASELINES:
            kind = "plugin"
        return make_oracle(outer, kind, group_blind=self.est.group_blind)

    def probabilities(self, data):
        """Fit the base model on ``data`` and return (outer-loop data with its probabilities,
        deployed probability model).

        The outer loop runs on all of ``data`` (or the held-out share of a float ``cv``) with the
        probabilities in class-code order (joint (cell, class) codes for ``group_blind``):
        in-sample, held out, or out-of-fold.

        Raises
        ------
        ValueError
            Precomputed probabilities of the wrong shape or with NaN / negative values.
        """
        cached = getattr(self, "_cached", None)
        if cached is not None and cached[0] is data:  # candidates of a safety test share one base fit
            est = self.est
            est.estimator_, est.estimators_, est.cv_ = cached[2]
            return cached[1]
        out = self._probabilities(data)
        self._cached = (data, out, (self.est.estimator_, self.est.estimators_, self.est.cv_))
        return out

    def _probabilities(self, data):
        est, progress = self.est, self.progress
        K = len(self.classes)
        joint = est.group_blind
        classes = np.arange(self.encoder.n_cells * K) if joint else self.classes
        codes = (np.asarray(data.cells, dtype=np.intp) * K + data.y_codes) if joint else data.y_codes
        labels = codes if joint else data.y
        est.estimators_ = est.cv_ = None
        X, sw = data.X, data.sample_weight
        if est._precomputed():
            P = np.asarray(X, dtype=float)
            if P.ndim != 2 or P.shape[1] != len(classes):
                what = "one column per (group, class) pair, cell-major" if joint else "one column per class of y"
                raise ValueError(f"precomputed probabilities must have shape (n_samples, {len(classes)}) ({what}), "
                                 f"got {P.shape}")
            check_probabilities(P)
            est.estimator_ = None
            return data.with_scores(P), ProbabilityModel(None, np.arange(len(classes)))
        base = est._base()
        folds = est._cv_folds(self.settings.oracle, data.n_samples)
        if joint and self.settings.joint_model == "factored":
            from .joint import FactoredJointClassifier

            base = FactoredJointClassifier(base, K, len(classes) // K)
        holdout = est._holdout()
        out_rows, P_fit = None, None
        if est._frozen():
            progress.phase("scoring with the frozen base model")
            est.estimator_ = base
            prob = probability_model(base, classes, allow_missing=joint)
            P_out = prob.predict_proba(X)
        elif holdout is not None:
            progress.phase(f"fitting the base model on {1 - holdout:.0%} of the rows (sample splitting)")
            fit_rows, out_rows = _split(codes, holdout, est.random_state)
            est.estimator_ = clone(base)
            fit_base(est.estimator_, take_rows(X, fit_rows), labels[fit_rows],
                     None if sw is None else sw[fit_rows])
            P_out = aligned_proba(est.estimator_, take_rows(X, out_rows), classes)
            prob = probability_model(est.estimator_, classes, allow_missing=joint)
        elif folds is not None:
            progress.phase("cross-fitting the base model", _n_splits(folds), unit="fold")
            P_out, models = cross_fit(base, X, labels, sw, folds, classes, progress)
            est.estimators_, est.cv_ = models, folds
            if self.settings.cv_model == "average":
                est.estimator_ = FoldAverage(models, classes)
            else:
                progress.phase("refitting the base model on every row")
                est.estimator_ = clone(base)
                fit_base(est.estimator_, X, labels, sw)
            prob = probability_model(est.estimator_, classes, allow_missing=joint)
        else:
            progress.phase("fitting the base model")
            est.estimator_ = clone(base)
            P_fit = fit_base(est.estimator_, X, labels, sw)
            prob = probability_model(est.estimator_, classes, allow_missing=joint)
            P_out = prob.columns(P_fit)
        return data.with_scores(P_out, rows=out_rows), prob

    def training_sample(self, clf, outer):
        return TrainingSample.build(clf, outer.X if outer.X is not None else self.data.X, outer.scores,
                                    outer.y_codes, outer.cells, outer.sample_weight,
                                    rows_are_proba=self.est._precomputed())


def _frozen(estimator):
    """``estimator`` wrapped in :class:`~sklearn.frozen.FrozenEstimator` (the old ``prefit=True``)."""
    return estimator if isinstance(estimator, FrozenEstimator) else FrozenEstimator(estimator)


def _split(codes, holdout, random_state):
    """Rows for the base model and rows for the outer loop (stratified when possible)."""
    rows = np.arange(len(codes))
    try:
        fit_rows, out_rows = train_test_split(rows, test_size=holdout, stratify=codes, random_state=random_state)
    except ValueError:
        fit_rows, out_rows = train_test_split(rows, test_size=holdout, random_state=random_state)
    return np.sort(fit_rows), np.sort(out_rows)


def _n_splits(cv):
    try:
        return int(cv.get_n_splits())
    except (TypeError, ValueError):  # splitters whose count depends on the data
        return None
