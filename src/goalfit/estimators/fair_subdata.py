"""Fair classifiers by unbiased subdata selection (Ye & Xie, arXiv 2012.12356), and the SSVM baseline."""
from __future__ import annotations

import copy
import time
import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
# scikit-learn has no public module for parameter constraints: _param_validation is what its own
# estimators and scikit-learn-compatible libraries use for _parameter_constraints
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ..fit import GOAL_PARAMETERS, TEMPLATE_OPTIONS, GoalEstimator, UnsupportedGoal, prepare
from ..goals import ErrorRate, Problem, as_objective
from ..methods.subdata.measure import SelectionMeasure
from ..methods.subdata.method import (ESTIMATORS, SSVMMethod, SubdataMethod, SubdataSettings,
                                      deployed_rule, make_learner)
from ..methods.subdata.wstep import LinearModel
from ..utils.deprecation import DeprecatedParams, warn_deprecated

__all__ = ["FairSubdataClassifier", "SpectralFairSVC"]

#: ``method_params`` keys of the fit (not of the subdata method) and their defaults.
FIT_OPTIONS = TEMPLATE_OPTIONS


class FairSubdataClassifier(DeprecatedParams, GoalEstimator):
    """Classifier trained for exact goals by unbiased subdata selection (Ye & Xie, arXiv 2012.12356).

    Minimizes ``A(z, te - u) + alpha R(w) + rho F(z)`` (Eq. 1) over a classifier and a 0/1
    selection ``z`` (``z_i = 1``: example i counts as right at threshold ``t``; the classifier is
    trained on the selected examples only), for **any linear rate goal**: the objective gives
    each example a weight of being right (``1/N`` for the error, as in Eq. 12; ``1 / (2 N_y)``
    for the balanced error, the class weighting of Eq. 35) and each constraint is an affine
    function of ``z`` (:mod:`goalfit.methods.subdata.measure`); ``F(z)`` is the selection's
    total violation of the constraints (for a two-group difference bounded by 0 the paper's
    ``|gap|``, Table 3). The method (:class:`goalfit.methods.subdata.method.SubdataMethod`)
    alternates exact z-steps and w-steps (the iterative refining strategy, Alg. 2 / 4 / 5) or
    solves the mixed-integer program (Props. 2, 5, 11, 14).

    Exactness: the z-step is exact in ``O(N log N)`` for one constraint made of one affine form
    or a +/- pair with at most two distinct per-example weights (two-group differences of rates
    without sample weights: OMR, FPR, equal opportunity, demographic parity, a recall gap; a
    one-sided rate bound such as ``coverage(group=g) >= c``; ``f1() <= b``) and for the
    ``f1()`` objective (Alg. 6); any other linear goals (several constraints, more than two
    groups, sample weights) use an exact binary program on HiGHS with a time limit (the
    history's ``zstep_exact`` says whether optimality was proven). ``method="mip"`` is exact
    (to SCIP's tolerances, within ``time_limit``) for every accepted goal with the "svm" and
    "logistic" estimators.

    Parameters
    ----------
    objective : str or goal expression, default "error"
        A linear goal that never rewards a mistake (``"error"``, ``"balanced_error"``, a class or
        group error rate, a weighted sum of them), or ``f1()`` (GSVM-F1, Eq. 35, with the
        class-weighted accuracy term and ``rho (1 - F1(z))``; no constraints).
    constraints : sequence of Constraint, default ()
        Linear goals: ``demographic_parity_difference("sex") <= 0.02`` (the paper's epsilon
        form, §3), ``error_rate_difference(...)``, ``equal_opportunity_difference(...)``,
        ``true_positive_rate(group="F") >= true_positive_rate(group="M") - 0.05``,
        ``coverage(group="F") >= 0.3``, ``f1() <= 0.4``, several groups or columns.
    estimator : {"svm", "logistic", "kernel_svm"} or classifier, default "svm"
        ``"svm"``: linear GSVMF (Eq. 12; multiclass targets give GMSVMF, Eq. 27);
        ``"logistic"``: GLRF (Eq. 31); ``"kernel_svm"``: GKSVMF (Eq. 32, Alg. 4, scikit-learn's
        SVC; ``kernel``, ``C``, ``gamma``, ``degree`` in ``method_params``); a classifier with
        ``fit(X, y, sample_weight=)`` and ``predict_proba``: Alg. 5.
    alpha : float >= 0, default 0.01
        Weight of ``||w||^2`` (the paper's ``lambda``: ``R(w) = ||w||^2`` with the accuracy term a
        weighted average, Eq. 12; linear models only). ``alpha = 0`` makes the SVM w-step an LP
        (HiGHS).
    method : {"irs", "mip", "bruteforce"}, default "irs"
        The iterative refining strategy (Alg. 2 / 4 / 5), the mixed-integer program on SCIP
        (``estimator`` "svm" or "logistic"; started from the IRS solution), or enumeration of
        ``2^N`` selections (binary linear models, ``N <= 12``).
    method_params : dict, optional
        ``decision_threshold`` ("fit", default: the deployed rule is ``f(x) > threshold`` with the
        threshold that meets the goals on the training data with the lowest objective, chosen
        exactly at every IRS iterate, as RampClassifier does; a number fixes it, 0 being the
        paper's ``sign f(x)``), ``form`` ("constraint", default: every z-step keeps ``z`` within the goals; "penalty":
        ``rho F(z)`` only, the paper's Eq. 12 / 22 / 24 / 26 with the goal's bound), ``rho``
        (penalty weight, default 1; also the weight of ``1 - F1`` for the ``f1()`` objective),
        ``t`` (threshold: margin for SVMs, default 1; log-likelihood for logistic, default
        ``log 0.5``; probability for estimators, default 0.5), ``w_solver`` ("auto",
        "liblinear", "cvxpy"), ``n_restarts``, ``iterate`` ("goals", default: the IRS iterate
        whose training predictions meet the goals with the lowest objective, else the least
        violating; "objective": the lowest IRS objective ``H``, the paper's output),
        ``zstep`` ("auto", "structured", "milp"), ``zstep_time_limit`` (seconds per MILP
        z-step, 60), ``time_limit`` (MIP seconds, 60), ``big_m`` (a margin bound: the HiGHS MILP
        for ``alpha = 0``), ``warm_start`` (MIP from the IRS solution, True), ``kernel``, ``C``,
        ``gamma``, ``degree``; and ``safety_fraction`` (with ``confidence``, default 0.4).
    max_iter : int, default 50
        IRS iterations per start.
    tol : float, default 1e-8
        Stop the IRS when its objective decreases by at most this (the paper's delta).
    confidence : float in [0.5, 1), optional
        High-confidence goals (:mod:`goalfit.fit.certification`): candidates trained on a
        candidate part with the constraints tightened by a grid of predicted margins, tested
        in fixed sequence on the rest; ``certified_`` and ``certification_`` (each constraint's
        ``certified_bound``) report the result.
    margin : float or sequence of float, optional
        Tighten every constraint (or each by its own amount) by hand.
    random_state : int, RandomState or None
        Seeds the restarts and the certification split.
    verbose : int, default 0
        0: silent; 1: the IRS iterations every second; 2: each.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Linear models only; scores are ``X @ coef_.T + intercept_``.
    intercept_ : ndarray of shape (1,) or (n_classes,)
    threshold_ : float
        The deployed rule's threshold (two classes): :meth:`predict` is ``decision_function(X) >
        0`` with ``decision_function = f(x) - threshold_``.
    model_ : the fitted w-step model (a ``LinearModel``, an SVC or the estimator)
    selected_ : ndarray of bool, shape (n_samples,)
        The training selection ``z`` the returned model was trained on (multiclass:
        ``z_{i, y_i}``).
    fairness_ : float
        ``F(z)`` of the training selection (rate units; 0 when it meets every constraint).
    objective_ : float
        The IRS objective ``H`` (Eq. 1) at the returned iterate.
    n_iter_ : int
    converged_ : bool
    stop_reason_ : str
    mip_ : MIPResult or None
        Exact solve details (``gap``, ``bound``, ``status``) with ``method="mip"``.
    history_ : list of dict
        Per start (``iteration`` 0) and IRS iteration: ``objective`` and ``max_violation`` of
        the training predictions (the goals), ``irs_objective`` (``H``), ``fairness``
        (``F(z)``), ``n_selected``, ``zstep`` and ``zstep_exact``, ``restart``, ``iteration``,
        ``oracle_calls`` (w-steps so far), ``seconds``.
    classifier_ : ScoreClassifier or ModelClassifier
        The deployed deterministic rule.
    problem_, result_, feasible_, max_violation_, method_, margins_, certified_, certification_, fit_seconds_
        The result protocol (:class:`goalfit.fit.GoalEstimator`).

    Raises
    ------
    UnsupportedGoal (a ValueError)
        At fit, before any solving: a non-linear objective other than ``f1()``, an objective
        that rewards mistakes, a non-polyhedral constraint, multiclass goals that weigh wrong
        classes differently, multiclass targets with an estimator other than "svm".
    ValueError
        Bad data (NaN features, mismatched rows, one class, missing groups), an unknown
        ``method_params`` key or value, a goal naming an unknown group or column.

    Notes
    -----
    The goals are exact on ``z``, the threshold-``t`` correctness indicator (Ye & Xie §2). It
    equals the correctness of the predictions only when ``z`` agrees with the retrained model,
    which the z-step does not enforce (the w-step ignores unselected examples instead of
    pushing them to the other side), so the model's training predictions can miss a goal that
    the selection meets. The default ``decision_threshold="fit"`` and ``iterate="goals"``
    choose, among the IRS iterates, the model and threshold whose training predictions meet the
    goals with the lowest objective (a one-parameter post-selection that is not in the paper);
    ``feasible_`` and ``max_violation_`` are those of the predictions (a RuntimeWarning says when
    they miss a goal), ``fairness_`` that of the selection. :meth:`evaluate` reports
    prediction-based values.

    Examples
    --------
    >>> import numpy as np
    >>> import goalfit as gf
    >>> rng = np.random.default_rng(0)
    >>> X, s = rng.normal(size=(300, 3)), rng.choice(["a", "b"], 300)
    >>> y = (X[:, 0] + 0.5 * (s == "b") + 0.5 * rng.normal(size=300) > 0).astype(int)
    >>> model = gf.FairSubdataClassifier(constraints=[gf.demographic_parity_difference() <= 0.05], random_state=0)
    >>> model = model.fit(X, y, sensitive_features=s)
    >>> res = model.evaluate(X, y, sensitive_features=s)
    >>> print(f"error {res['objective']['value']:.3f}, DP difference {res['constraints'][0]['value']:.3f}")
    error 0.160, DP difference 0.048
    """

    _parameter_constraints = {
        **GOAL_PARAMETERS,
        "estimator": [StrOptions(set(ESTIMATORS)), HasMethods(["fit", "predict_proba"])],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "method": [StrOptions({"irs", "mip", "bruteforce"})],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, objective="error", constraints=(), *, estimator="svm", alpha=0.01, method="irs",
                 method_params=None, max_iter=50, tol=1e-8, confidence=None, margin=None, random_state=None,
                 verbose=0, **deprecated_params):
        self.objective = objective
        self.constraints = constraints
        self.estimator = estimator
        self.alpha = alpha
        self.method = method
        self.method_params = method_params
        self.max_iter = max_iter
        self.tol = tol
        self.confidence = confidence
        self.margin = margin
        self.random_state = random_state
        self.verbose = verbose
        self._fold_deprecated(deprecated_params)

    #: Constructor keywords of goalfit 0.1 (accepted with a FutureWarning until 0.3): where each now lives.
    _deprecated_params = {
        "model": "estimator", "lam": "alpha", "solver": "method",
        **{name: f"method_params.{name}" for name in ("rho", "t", "w_solver", "n_restarts", "time_limit", "kernel",
                                                      "C", "gamma", "degree")},
        "measure": None, "epsilon": None,  # together: _translate_deprecated
    }

    def _legacy_goal(self, attribute: str):
        """0.1's ``(measure, epsilon, sensitive column, constraint index)`` of the fitted goals, for
        the deprecated ``measure_``, ``epsilon_``, ``sensitive_column_`` and ``train_fairness_``."""
        check_is_fitted(self, "classifier_")
        kinds = {"error_rate": "omr", "false_positive_rate": "fpr", "equal_opportunity": "eo",
                 "demographic_parity": "dp"}
        constraints = list(self.constraints or ())
        if not constraints:
            return ("f1" if "f1" in str(getattr(self.objective, "name", self.objective)) else "omr"), None, None, None
        found = [(j, c) for j, c in enumerate(constraints)
                 if getattr(c.expression, "kind", None) in kinds and getattr(c.expression, "form", None) == "difference"
                 and c.sense == "<="]
        if len(constraints) > 1 or not found:
            raise AttributeError(f"FairSubdataClassifier.{attribute} (0.1) describes one '<disparity>_difference() "
                                 "<= epsilon' constraint; these goals have none or several: read constraints, "
                                 "problem_ and evaluate(...)['constraints']")
        j, c = found[0]
        return kinds[c.expression.kind], float(c.bound), c.expression.sensitive, j

    def _legacy_attribute(self, attribute: str, value, new: str):
        warn_deprecated(f"FairSubdataClassifier.{attribute}", new, stacklevel=4)
        return value

    @property
    def measure_(self):
        """Deprecated (removed in 0.3): the Ye & Xie measure name of the constraint (0.1)."""
        return self._legacy_attribute("measure_", self._legacy_goal("measure_")[0], "the constraints parameter")

    @property
    def epsilon_(self):
        """Deprecated (removed in 0.3): the constraint's bound (0.1)."""
        return self._legacy_attribute("epsilon_", self._legacy_goal("epsilon_")[1],
                                      "constraints[0].bound (problem_ holds the tightened goals)")

    @property
    def sensitive_column_(self):
        """Deprecated (removed in 0.3): the constraint's sensitive column (0.1)."""
        return self._legacy_attribute("sensitive_column_", self._legacy_goal("sensitive_column_")[2],
                                      "constraints[0].expression.sensitive")

    @property
    def train_fairness_(self):
        """Deprecated (removed in 0.3): the constraint's value for the deployed rule on the training
        data (0.1)."""
        j = self._legacy_goal("train_fairness_")[3]
        if j is None:
            raise AttributeError("FairSubdataClassifier.train_fairness_ needs a fairness constraint")
        value = float(self.problem_.constraints[j].value(self.result_.confusion))
        return self._legacy_attribute("train_fairness_", value,
                                      "evaluate(X, y, sensitive_features=...)['constraints'][0]['value']")

    def _translate_deprecated(self, given: dict, *, in_init: bool) -> dict:
        """The 0.1 spellings that need more than a rename, each with a FutureWarning.

        * ``FairSubdataClassifier("logistic")`` (0.1's first positional was ``model``): a
          built-in model's name or a classifier given as ``objective`` becomes ``estimator``;
        * ``measure="omr" | "fpr" | "eo" | "dp"`` (or a ``<disparity>_difference`` goal) with
          ``epsilon=e``: ``constraints=[<disparity>_difference() <= e]``; without ``epsilon`` the
          0.1 penalty ``rho F(z)``: the same constraint with bound 0 and
          ``method_params={"form": "penalty"}``; ``measure="f1"``: ``objective=f1()`` (GSVM-F1).

        Raises
        ------
        ValueError
            An unknown ``measure``; ``measure`` or ``epsilon`` given with ``constraints``.
        """
        from ..goals import (demographic_parity_difference, equal_opportunity_difference, error_rate_difference, f1,
                             false_positive_rate_difference)

        if in_init and (isinstance(self.objective, str) and self.objective in ESTIMATORS
                        or hasattr(self.objective, "predict_proba")):
            warn_deprecated("FairSubdataClassifier(model) as the first positional argument",
                            f"FairSubdataClassifier(estimator={self.objective!r}) (the first positional is the "
                            "objective since 0.2)", stacklevel=5)
            self.estimator, self.objective = self.objective, "error"
        if "measure" not in given and "epsilon" not in given:
            return given
        spelled = ", ".join(f"{k}=..." for k in ("measure", "epsilon") if k in given)
        measure, epsilon = given.pop("measure", "omr"), given.pop("epsilon", None)
        goals = {"omr": error_rate_difference, "fpr": false_positive_rate_difference,
                 "eo": equal_opportunity_difference, "dp": demographic_parity_difference}
        if in_init and list(self.constraints or ()):
            raise ValueError("FairSubdataClassifier: give the fairness goal once, as constraints=[...], not also as "
                             "measure= / epsilon=")
        if isinstance(measure, str) and measure == "f1":
            warn_deprecated("FairSubdataClassifier(measure='f1')", "objective=goalfit.f1() (GSVM-F1)", stacklevel=5)
            self.objective = f1()
            return given
        if isinstance(measure, str):
            if measure not in goals:
                raise ValueError(f"measure must be one of {sorted(goals) + ['f1']}, got {measure!r}")
            goal = goals[measure]()
        else:
            goal = measure  # a goal expression, as 0.1 accepted
        bound = 0.0 if epsilon is None else float(epsilon)
        use = f"constraints=[{goal.name} <= {bound:g}]" + (
            " with method_params={'form': 'penalty'} (the penalty rho F(z))" if epsilon is None else "")
        warn_deprecated(f"FairSubdataClassifier({spelled})", use, stacklevel=5)
        self.constraints = [goal <= bound]
        if epsilon is None:
            self.method_params = {**(self.method_params or {}), "form": "penalty"}
        return given

    # ------------------------------------------------------------------ parameters
    def _settings(self):
        """The subdata method's validated settings (``method_params``), without data.

        Raises
        ------
        ValueError
            An unknown key (with the closest one), a value outside its range, a threshold
            ``t`` the estimator cannot use.
        """
        settings = SubdataSettings.from_params(self.method_params, self.method, self)
        make_learner(self.estimator, float(self.alpha), 2, settings.params())  # the threshold's range
        return settings

    # ------------------------------------------------------------------ data
    def _features(self, X, reset: bool):
        """Numeric features as a dense float64 array (a sparse matrix is densified: the
        selection methods solve dense problems)."""
        X = validate_data(self, X, accept_sparse=True, dtype=np.float64, reset=reset)
        return X.toarray() if sp.issparse(X) else X

    def _check_predict_X(self, X):
        return self._features(X, reset=False)

    def _estimator_name(self) -> str:
        return self.estimator if isinstance(self.estimator, str) else type(self.estimator).__name__

    # ------------------------------------------------------------------ the fit template's hooks
    def _method(self):
        return SubdataMethod(self.method)

    def _fit_features(self, X):
        return self._features(X, reset=True)

    def _before_solve(self, ctx) -> None:
        """The learner for the number of classes (the threshold's range, an exact method's estimator)."""
        make_learner(self.estimator, float(self.alpha), ctx.backend.data.n_classes, ctx.settings.params(),
                     exact=self.method != "irs")

    def _run_params(self, ctx, data):
        return data, dict(ctx.settings.params(), alpha=float(self.alpha), estimator=self.estimator, max_iter=self.max_iter,
                          tol=self.tol, random_state=ctx.seed)

    def _adopt_details(self, ctx, result, compiled, certification) -> None:
        d = result.details
        if compiled.constraints and not self.feasible_:
            where = ("the selection meets them (F(z) = 0) but the model's training predictions do not"
                     if d.selection_feasible else f"neither the selection (F(z) = {d.fairness:.4g}) nor "
                     "the model's training predictions meet them")
            warnings.warn(f"the goals are not met on the training data: {where} "
                          f"({self.violation_summary(result.confusion)})", RuntimeWarning, stacklevel=4)
        self.model_ = d.model
        self.selected_ = np.asarray(d.selection, dtype=bool)
        self.fairness_ = float(d.fairness)
        self.objective_ = float(d.irs_objective)
        self.n_iter_, self.converged_, self.stop_reason_ = d.n_iter, d.converged, d.stop_reason
        self.mip_ = d.mip
        self.threshold_ = float(d.threshold)
        if isinstance(self.model_, LinearModel):
            w, b = np.asarray(self.model_.w, float), np.atleast_1d(np.asarray(self.model_.b, float))
            self.coef_ = w.T.copy() if w.ndim == 2 else w[None, :].copy()
            self.intercept_ = b.copy()

    # ------------------------------------------------------------------ predict
    def decision_function(self, X):
        """Scores: shape (n_samples,) for two classes (> 0 predicts ``classes_[1]``), else
        (n_samples, n_classes) (the argmax is predicted)."""
        check_is_fitted(self, "classifier_")
        X = self._check_predict_X(X)
        clf = self.classifier_
        return clf.model.decision_function(X) if hasattr(clf, "model") else clf.decision_function(X)

    # ------------------------------------------------------------------ report
    def fit_baseline(self, X, y, *, sensitive_features=None, sample_weight=None, datasets=None):
        """The same model trained on all of ``(X, y)``: no selection, no fairness term.

        The vanilla classifier Ye & Xie compare with (the SVM / LR / SVC / estimator on all
        data, with the objective's example weights: the IRS's starting point, Alg. 2 step 1).

        Returns
        -------
        ("unconstrained", classifier, seconds)

        Raises
        ------
        ValueError
            ``datasets`` given, labels outside ``classes_``, the wrong number of features.
        """
        check_is_fitted(self, "classifier_")
        if datasets:
            raise ValueError("FairSubdataClassifier takes no extra datasets")
        t0 = time.perf_counter()
        X = self._check_predict_X(X)
        data = prepare(X, y, sensitive_features=sensitive_features, sample_weight=sample_weight,
                       classes=self.classes_, who=type(self).__name__, warn_groups=False)
        learner = copy.deepcopy(self.result_.details.learner)
        compiled = self._fitted_goals().compile(data.space)
        meas = SelectionMeasure.from_compiled(compiled, data.y_codes, data.cells, data.sample_weight)
        K, n = data.n_classes, data.n_samples
        if K > 2:
            codes = np.asarray(data.y_codes, dtype=np.intp)
            model = learner.fit(X, codes, np.eye(K)[codes], scale=meas.reward * n)
        else:
            model = learner.fit(X, np.where(data.y_codes == 1, 1, -1), meas.step_weights(np.ones(n)))
        return "unconstrained", deployed_rule(learner, model, self.classes_), time.perf_counter() - t0

    def report_fields(self) -> dict:
        d = self.result_.details
        return {
            "method": f"fair subdata selection ({self.method_}, {self._estimator_name()}, Ye & Xie 2020)",
            "n_members": 1,
            "timing": {"total_fit_seconds": self.fit_seconds_},
            "note": (f"values: the deployed rule (predicted labels); the goals are exact on the training selection "
                     f"z (F(z) = {self.fairness_:.4g}, {int(self.selected_.sum())} of {len(self.selected_)} "
                     "selected); unconstrained = the same model trained on all training data (Ye & Xie Alg. 2 "
                     "step 1)"),
            "selection": {"fairness_z_train": self.fairness_, "n_selected": int(self.selected_.sum()),
                          "n_train": int(len(self.selected_)), "objective_train": self.objective_,
                          "constraint_values_z": d.selection_values, "form": d.form, "rho": d.rho,
                          "t": d.t, "n_iter": int(self.n_iter_), "stop_reason": self.stop_reason_,
                          "zstep_exact": d.zstep_exact, "zstep_solvers": d.zstep_solvers},
            "history_objective_name": "objective of the training predictions",
            "history_violation_name": "max violation of the training predictions",
        }

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.classifier_tags.multi_class = self.estimator == "svm"
        return tags


class SpectralFairSVC(DeprecatedParams, GoalEstimator):
    """Spectral fair linear SVM of Olfat & Aswani (2018): the SSVM baseline of Ye & Xie Table 6.

    A linear SVM ``(1/n) sum_i hinge_i + alpha ||w||^2 + mu tau`` with the first-moment
    constraint ``|B' w| <= d`` (``B`` the unit difference of the two groups' feature means)
    and the second-moment gap bound ``tau`` (a DC program, one convex QCQP per iteration with
    cvxpy + Clarabel; :func:`goalfit.methods.subdata.ssvm.fit_ssvm`). Binary labels, one
    sensitive column with two groups.

    Parameters
    ----------
    objective : {"error"}, default "error"
        The SVM minimizes the hinge surrogate of the error; other objectives are refused.
    d : float >= 0, default 0.1
        First-moment (mean score) gap bound.
    mu : float >= 0, default 0.01
        Penalty on the second-moment gap.
    alpha : float >= 0, default 0.01
        Weight of ``||w||^2`` (Olfat & Aswani's ``L``; the hinge term is an average).
    max_iter : int, default 50
        DC iterations.
    tol : float, default 1e-3
        Relative change of ``w`` that stops the DC loop.

    Attributes
    ----------
    classes_, coef_ (1, n_features), intercept_ (1,), groups_ (the two sensitive values; the
    second is the paper's ``g = +1``), n_iter_, converged_, fit_seconds_, and the result
    protocol of :class:`goalfit.fit.GoalEstimator` (``classifier_``, ``history_``, ...).

    Raises
    ------
    ValueError
        At fit: another objective, more than two classes, a sensitive feature without exactly
        two groups (or several columns), NaN features, mismatched rows.

    Examples
    --------
    >>> import numpy as np
    >>> import goalfit as gf
    >>> rng = np.random.default_rng(0)
    >>> X, s = rng.normal(size=(300, 3)), rng.choice(["a", "b"], 300)
    >>> y = (X[:, 0] + 0.5 * (s == "b") + 0.5 * rng.normal(size=300) > 0).astype(int)
    >>> model = gf.SpectralFairSVC(d=0.05).fit(X, y, sensitive_features=s)
    >>> print(f"error {model.evaluate(X, y)['objective']['value']:.3f}")
    error 0.403
    """

    _parameter_constraints = {
        "objective": [StrOptions({"error"}), HasMethods(["bind"])],
        "d": [Interval(Real, 0, None, closed="left")],
        "mu": [Interval(Real, 0, None, closed="left")],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(self, objective="error", *, d=0.1, mu=0.01, alpha=0.01, max_iter=50, tol=1e-3, **deprecated_params):
        self.objective = objective
        self.d = d
        self.mu = mu
        self.alpha = alpha
        self.max_iter = max_iter
        self.tol = tol
        self._fold_deprecated(deprecated_params)

    #: Constructor keywords of goalfit 0.1 (accepted with a FutureWarning until 0.3).
    _deprecated_params = {"lam": "alpha"}

    def _goal_problem(self) -> Problem:
        return Problem(self.objective)

    def _check_predict_X(self, X):
        return validate_data(self, X, dtype=np.float64, reset=False)

    # ------------------------------------------------------------------ the fit template's hooks
    def _check_method_params(self) -> None:
        if not isinstance(as_objective(self.objective), ErrorRate):
            raise UnsupportedGoal(f"SpectralFairSVC minimizes the (hinge surrogate of the) error; objective "
                                  f"{getattr(self.objective, 'name', self.objective)!r} is not supported")

    def _method(self):
        return SSVMMethod()

    def _settings(self):
        return {"d": self.d, "mu": self.mu, "alpha": self.alpha, "max_iter": self.max_iter, "tol": self.tol}

    def _fit_features(self, X):
        return validate_data(self, X, dtype=np.float64, reset=True)

    def _before_solve(self, ctx) -> None:
        """Binary labels and one sensitive column of two groups (the paper's ``g = +-1``), or none."""
        data = ctx.backend.data
        if data.n_classes != 2:
            raise ValueError(f"Only binary classification is supported by SpectralFairSVC; y has classes "
                             f"{self.classes_.tolist()}")
        cells = data.encoder.cells_
        if data.encoder.columns_ and (cells.shape[1] != 1 or len(cells) != 2):
            raise ValueError(f"SpectralFairSVC needs one sensitive column with exactly two groups, got "
                             f"{cells.shape[1]} column(s) and {len(cells)} group(s)")
        # without sensitive features (one group) the fairness constraints are vacuous: the hinge SVM
        self.groups_ = cells.iloc[:, 0].to_numpy() if data.encoder.columns_ else None

    def _adopt_details(self, ctx, result, compiled, certification) -> None:
        d = result.details
        self.coef_, self.intercept_ = np.asarray(d.w)[None, :].copy(), np.array([d.b])
        self.n_iter_, self.converged_ = d.n_iter, d.converged

    def decision_function(self, X):
        """Scores ``X @ coef_[0] + intercept_[0]``, shape (n_samples,); > 0 predicts ``classes_[1]``."""
        check_is_fitted(self, "classifier_")
        return self.classifier_.decision_function(self._check_predict_X(X))

    def report_fields(self) -> dict:
        return {"method": "spectral fair SVM (Olfat & Aswani 2018)", "n_members": 1,
                "timing": {"total_fit_seconds": self.fit_seconds_}}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags
