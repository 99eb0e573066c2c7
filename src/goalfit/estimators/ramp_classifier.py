"""Linear classifiers trained under dataset constraints with the ramp loss (Goh et al., NIPS 2016)."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone
# scikit-learn has no public module for parameter constraints: _param_validation is what its own
# estimators and scikit-learn-compatible libraries use for _parameter_constraints
from sklearn.utils._param_validation import HasMethods
from sklearn.utils.validation import check_array, check_is_fitted, check_random_state, validate_data

from ..fit import GOAL_PARAMETERS, TEMPLATE_OPTIONS, GoalEstimator
from ..methods.ramp.method import RAMP_PARAMS, RampMethod, RampSettings
from ..utils.deprecation import DeprecatedParams, renamed_attribute, warn_deprecated

#: ``method_params`` keys of the fit (not of the ramp method) and their defaults.
FIT_OPTIONS = TEMPLATE_OPTIONS


class RampClassifier(DeprecatedParams, GoalEstimator):
    """Linear classifier minimizing a rate objective subject to dataset constraints.

    Goh et al. (NIPS 2016): goals are linear combinations of positive / negative prediction
    rates on several datasets (the training data, unlabelled pools, egregious examples, slices by
    group or by a deployed model's prediction). Rates are relaxed by the ramp ``sigma(f(x))``
    (Eq. 2-3; the expected rates of the randomized classifier that predicts positive with
    probability ``sigma(f(x))``) and optimized by majorization-minimization (Alg. 1), each step a
    convex problem solved by a cutting plane over the Lagrange multipliers (Alg. 2) whose inner
    problem is a weighted SVM (:class:`goalfit.methods.ramp.method.RampMethod`).

    Parameters
    ----------
    objective : str or goal expression, default "error"
        A linear goal: ``"error"``, a rate, or a weighted sum of rates (e.g.
        ``false_negative_rate()`` for Neyman-Pearson, or ``100 * error_rate(dataset="D1") +
        40 * false_positive_rate(dataset="D2")``).
    constraints : sequence of Constraint
        Linear goals: rates on datasets and groups, fairness ratios
        (``positive_prediction_rate(group="Male") <= positive_prediction_rate(group="Female") / kappa``),
        churn, coverage, recall, egregious examples (``true_positive_rate(dataset="egregious") >= 0.9``).
    alpha : float, optional
        The l2 weight lambda of Goh et al. Eq. 7 (``lambda/2 |w|^2``); default ``1 / W``, ``W``
        the total sample weight of the training dataset (its number of rows without weights):
        every rate is an average, so one example weighs ``1 / W`` and the regularizer weighs as
        much as one example whatever the size (Goh et al.'s Adult runs used LIBLINEAR's defaults,
        "most notably lambda = 1/n"). The ramp has a fixed width of 1 in score units, so
        ``alpha`` also sets how wide the band of uncertain randomized predictions is: select it
        on validation data (:func:`goalfit.estimators.select_ramp_params`) rather than reusing a
        hinge SVM's value.
    fit_intercept : bool, default True
        An unregularized intercept (the paper's Adult runs used none).
    feature_map : transformer, optional
        Fitted (unsupervised) on the features of all datasets, e.g. ``Nystroem`` or
        ``RBFSampler`` for the kernel-approximation map Phi of §4.2. Default: raw features.
    max_iter : int, default 10
        MM iterations from a feasible point (the paper's churn runs used 5).
    tol : float, default 1e-4
        Stop MM when an iteration lowers the ramp objective by less than this.
    method_params : dict, optional
        The ramp method's knobs (:data:`goalfit.methods.ramp.method.RAMP_PARAMS`):
        ``decision_threshold`` (``"fit"``, default: the exact best threshold ``t`` of the
        deterministic rule ``f(x) > t`` on the training datasets for Problem 1 itself, among the
        thresholds meeting every goal; a number fixes it, ``0.0`` being the paper's rule),
        ``init`` (``"zeros"``, the paper's ``w = 0``, or ``"unconstrained"``: the weighted SVM of
        the objective alone), ``multiplier_solver`` (``"cutting_plane"``, Alg. 2, or ``"cvxpy"``
        on small data), ``chooser``, ``max_cutting_plane_iter``, ``cutting_plane_tol``,
        ``cutting_plane_rel_tol``, ``max_multiplier``, ``inner_solver`` (``"dcd"``, default;
        ``"liblinear"``, ``"svc"``, ``"cvxpy"`` as references), ``inner_tol``,
        ``intercept_scaling``, ``max_feasibility_iter``, ``feasibility_alpha``; and
        ``safety_fraction`` (with ``confidence``, default 0.4).
    confidence : float in [0.5, 1), optional
        High-confidence goals (:mod:`goalfit.fit.certification`, Thomas et al. 2019): every
        dataset is split into a candidate part and a safety part; the model is trained on the
        candidate parts with the constraints tightened by multiples of the predicted width of
        the safety bound (most conservative first), and the safety test checks a one-sided
        bound at level ``confidence`` per constraint for each (deterministic) rule in that
        order, deploying the best that passed. ``certified_`` says whether one did;
        ``certification_`` gives each constraint's ``certified_bound``.
    margin : float or sequence of float, optional
        Tighten every constraint (or each by its own amount) by hand; with ``confidence`` it
        replaces the grid of predicted margins by one candidate.
    deployed_model : fitted classifier, optional
        When given, its predictions on every dataset become the slicing column ``"baseline"``
        that :func:`~goalfit.goals.churn_rate` compares with.
    random_state : int, RandomState or None
        Seeds the feature map and the inner solver's order.
    verbose : int, default 0
        0: silent; 1: the MM iterations (objective, worst violation) every second; 2: each.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    coef_ : ndarray of shape (n_features_out,)
        Weights on the (mapped) features; scores are ``f(x) = <coef_, Phi(x)> + intercept_``
        (Goh et al.'s ``b`` is ``-intercept_``).
    intercept_ : float
    threshold_ : float
        The deployed rule's threshold: :meth:`predict` is ``f(x) > threshold_``.
    classifier_ : ScoreClassifier
        The deployed deterministic rule.
    randomized_classifier_ : ScoreClassifier
        The ramp-randomized rule (positive with probability ``sigma(f(x))``, Eq. 3): the
        classifier whose rates the relaxation bounds; ``evaluate(..., classifier=
        model.randomized_classifier_)`` measures it.
    feasible_, max_violation_ : bool, float
        Of the deployed rule on the training datasets.
    multipliers_ : ndarray of shape (n_rows,)
        Lagrange multipliers of the constraint rows at the last MM step.
    constraint_rows_ : list of str
        The user constraint of each row.
    objective_ : float
        Ramp objective plus ``alpha/2 |w|^2`` at the solution.
    alpha_ : float
        The l2 weight used.
    program_ : RateProgram
        The goals as per-example weights on the training datasets (Problem 1).
    n_iter_ : int
        MM iterations run (both phases).
    history_ : list of dict
        Per MM iteration: phase ("start", "feasibility", "mm"), objective, max_violation (ramp
        rows), upper_bound, dual_bound, n_inner (weighted-SVM solves), multipliers, seconds.
    problem_, result_, method_, margins_, certified_, certification_, fit_seconds_
        The result protocol (:class:`goalfit.fit.GoalEstimator`).
    feature_map_ : fitted transformer or None
    dataset_names_ : list of str

    Raises
    ------
    ValueError
        At fit (before any solving): more than two classes, a non-linear objective or
        constraint, a goal on the labels of an unlabelled dataset, unknown groups or datasets,
        empty slices, an unknown ``method_params`` key. Infeasible goals do not raise: the
        least-violating iterate is kept, ``feasible_`` is False and a RuntimeWarning names the
        worst goal.

    Examples
    --------
    >>> import numpy as np
    >>> import goalfit as gf
    >>> rng = np.random.default_rng(0)
    >>> X, s = rng.normal(size=(300, 3)), rng.choice(["a", "b"], 300)
    >>> y = (X[:, 0] + 0.5 * (s == "b") + 0.5 * rng.normal(size=300) > 0).astype(int)
    >>> model = gf.RampClassifier(constraints=[gf.demographic_parity_difference() <= 0.05], random_state=0)
    >>> model = model.fit(X, y, sensitive_features=s)
    >>> res = model.evaluate(X, y, sensitive_features=s)
    >>> print(f"error {res['objective']['value']:.3f}, DP difference {res['constraints'][0]['value']:.3f}")
    error 0.183, DP difference 0.044
    """

    _parameter_constraints = {
        **GOAL_PARAMETERS,
        "fit_intercept": ["boolean"],
        "feature_map": [None, HasMethods(["fit", "transform"])],
        "deployed_model": [None, HasMethods(["predict"])],
    }

    def __init__(self, objective="error", constraints=(), *, alpha=None, fit_intercept=True, feature_map=None,
                 max_iter=10, tol=1e-4, method_params=None, confidence=None, margin=None, deployed_model=None,
                 random_state=None, verbose=0, **deprecated_params):
        self.objective = objective
        self.constraints = constraints
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.feature_map = feature_map
        self.max_iter = max_iter
        self.tol = tol
        self.method_params = method_params
        self.confidence = confidence
        self.margin = margin
        self.deployed_model = deployed_model
        self.random_state = random_state
        self.verbose = verbose
        self._fold_deprecated(deprecated_params)

    #: Constructor keywords of goalfit 0.1 (accepted with a FutureWarning until 0.3): the ramp
    #: method's knobs and ``safety_fraction`` now live in ``method_params`` under the same names.
    _deprecated_params = {name: f"method_params.{name}" for name in [*RAMP_PARAMS, *FIT_OPTIONS]}

    #: Deprecated (removed in 0.3): ``max_violation_`` is the deployed deterministic rule's since 0.2.
    max_violation_deterministic_ = renamed_attribute(
        "max_violation_deterministic_", "max_violation_",
        note=" (since 0.2 the deployed deterministic rule's; the ramp-randomized rule's is "
             "result_.details.randomized.max_violation)")

    # ------------------------------------------------------------------ parameters
    # ------------------------------------------------------------------ data
    def _extra_columns(self):
        if self.deployed_model is None:
            return None
        return {"baseline": self.deployed_model.predict}

    def _check_predict_X(self, X):
        if self.feature_map is None:
            return validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        validate_data(self, X, skip_check_array=True, reset=False)
        return X

    def _features(self, X, feature_map):
        """The (mapped) features as float64, CSR with 32-bit indices when sparse (liblinear's)."""
        Z = X if feature_map is None else feature_map.transform(X)
        if hasattr(Z, "to_numpy"):
            Z = Z.to_numpy(dtype=float)
        if sp.issparse(Z):
            Z = Z.tocsr().astype(float)
            if Z.nnz < 2 ** 31 - 1:
                Z.indices = Z.indices.astype(np.int32)
                Z.indptr = Z.indptr.astype(np.int32)
            return Z
        return check_array(Z, dtype=np.float64, ensure_min_samples=1)

    # ------------------------------------------------------------------ the fit template's hooks
    _fit_inputs = ("datasets",)

    def _method(self):
        return RampMethod()

    def _settings(self):
        return RampSettings.from_params(self.method_params, "ramp", self)

    def _fit_features(self, X):
        if self.feature_map is None:
            validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=True)
        else:
            validate_data(self, X, skip_check_array=True, reset=True)
        return X

    def _fit_seed(self):
        return int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max))

    def _run_params(self, ctx, d):
        """The feature map fitted on the candidate's rows, ``alpha`` from their weight, the MM budget."""
        feature_map = None
        if self.feature_map is not None:
            feature_map = clone(self.feature_map)
            if "random_state" in feature_map.get_params():
                feature_map.set_params(random_state=ctx.seed)
            feature_map.fit(d.X)
        rows = d.train_rows
        n_train = d.weights().sum() if rows is None else d.weights()[rows].sum()
        alpha = 1.0 / n_train if self.alpha is None else float(self.alpha)
        run = dict(ctx.settings.params(), alpha=alpha, max_iter=self.max_iter, tol=self.tol,
                   fit_intercept=self.fit_intercept, random_state=ctx.seed, feature_map=feature_map)
        self.feature_map_ = feature_map
        return replace(d, X=self._features(d.X, feature_map)), run

    def _adopt_details(self, ctx, result, compiled, certification) -> None:
        d = result.details
        self.coef_, self.intercept_ = d.coef, d.intercept
        self.threshold_ = d.threshold
        self.randomized_classifier_ = d.randomized.classifier
        self.multipliers_ = np.asarray(list(d.multipliers.values()), dtype=float)
        self.constraint_rows_ = list(d.multipliers)
        self.objective_ = d.ramp_objective
        self.alpha_ = d.alpha
        self.program_ = d.program
        self.n_iter_ = d.n_iter
        self.dataset_names_ = ctx.backend.data.dataset_names

    # ------------------------------------------------------------------ predict
    def decision_function(self, X):
        """Scores of the deployed rule ``f(x) - threshold_``, shape (n_samples,): positive where
        :meth:`predict` gives ``classes_[1]``.

        Changed in 0.2: goalfit 0.1 returned the unshifted ``f(x) = <coef_, Phi(x)> + intercept_``
        (add ``threshold_`` for it).
        """
        check_is_fitted(self, "classifier_")
        return self.classifier_.decision_function(self._check_predict_X(X))

    def predict(self, X, *, sensitive_features=None, random_state=None, stratified=None, randomized=None):
        """Labels of the deployed rule ``f(x) > threshold_``, shape (n_samples,).

        The ramp-randomized rule that the training relaxation bounds is
        ``randomized_classifier_.predict(X, random_state=...)``. ``randomized=True`` (deprecated,
        removed in 0.3) draws from it too, with a FutureWarning.
        """
        if randomized is not None:
            warn_deprecated("RampClassifier.predict(X, randomized=...)",
                            "model.randomized_classifier_.predict(X, random_state=...) for the randomized rule")
            if randomized:
                check_is_fitted(self, "classifier_")
                rs = self.random_state if random_state is None else random_state
                return self.randomized_classifier_.predict(self._check_predict_X(X), random_state=rs)
        return super().predict(X, sensitive_features=sensitive_features, random_state=random_state,
                               stratified=stratified)

    def predict_proba(self, X, *, sensitive_features=None):
        """Class distribution of what :meth:`predict` outputs, shape (n_samples, 2): one-hot
        rows of the deployed deterministic rule ``f(x) > threshold_``.

        Changed in 0.2: ``predict_proba`` described the ramp-randomized rule
        ``[1 - sigma(f), sigma(f)]`` (Goh et al. Eq. 3) in 0.1, whatever ``predict`` deployed;
        that distribution is :meth:`predict_randomized_proba`. Neither is an estimate of
        ``P(y | x)``.
        """
        return super().predict_proba(X, sensitive_features=sensitive_features)

    def predict_randomized_proba(self, X):
        """Class distribution of the ramp-randomized rule, shape (n_samples, 2).

        Row ``l`` is ``[1 - sigma(f(x_l)), sigma(f(x_l))]`` with ``sigma`` the ramp
        ``clip(1/2 + s, 0, 1)`` (Eq. 2) of the unshifted score ``f(x) = <coef_, Phi(x)> + intercept_``
        (Goh et al., NIPS 2016, Eq. 3): the probability that ``randomized_classifier_.predict``
        outputs each class, whose expected rates the training relaxation bounds. This is what
        ``predict_proba`` returned in goalfit 0.1. Not an estimate of ``P(y | x)``.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before ``fit``.

        Examples
        --------
        >>> import numpy as np
        >>> from goalfit import RampClassifier
        >>> X = np.array([[-2.0], [-1.0], [1.0], [2.0]]); y = np.array([0, 0, 1, 1])
        >>> P = RampClassifier(max_iter=2).fit(X, y).predict_randomized_proba(X)
        >>> P.shape, bool(np.allclose(P.sum(axis=1), 1))
        ((4, 2), True)
        """
        check_is_fitted(self, "classifier_")
        return self.distribution(X, classifier=self.randomized_classifier_)

    def evaluate(self, X, y=None, *, randomized=None, classifier=None, **kwargs):
        """:meth:`goalfit.fit.GoalEstimator.evaluate` (same parameters and returns).

        ``randomized=True`` (deprecated, removed in 0.3) evaluates the ramp-randomized rule, as
        ``classifier=model.randomized_classifier_`` does, with a FutureWarning.
        """
        if randomized is not None:
            warn_deprecated("RampClassifier.evaluate(..., randomized=...)",
                            "evaluate(..., classifier=model.randomized_classifier_) for the randomized rule")
            if randomized:
                check_is_fitted(self, "classifier_")
                classifier = self.randomized_classifier_
        return super().evaluate(X, y, classifier=classifier, **kwargs)

    # ------------------------------------------------------------------ report
    def fit_baseline(self, X, y, *, sensitive_features=None, sample_weight=None, datasets=None):
        """The ramp-randomized rule of this fit (what the relaxation bounds), for the report."""
        check_is_fitted(self, "classifier_")
        return "randomized", self.randomized_classifier_, 0.0

    def report_fields(self) -> dict:
        return {"method": "ramp majorization-minimization (Goh et al. 2016)", "n_members": 1,
                "multipliers": dict(zip(self.constraint_rows_, self.multipliers_.tolist())),
                "timing": {"total_fit_seconds": self.fit_seconds_},
                "note": (f"values: the deployed deterministic rule f(x) > {self.threshold_:.4g} (predict); "
                         "randomized = the ramp rule sigma(f(x)) whose expected rates the training "
                         "relaxation bounds (Goh et al. Eq. 3; randomized_classifier_)")}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.classifier_tags.multi_class = False
        return tags

