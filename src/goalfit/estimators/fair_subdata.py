"""Fair classifiers by unbiased subdata selection (Ye & Xie, arXiv 2012.12356)."""
from __future__ import annotations

import time

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_array, check_is_fitted, column_or_1d

from ..goals import (
    Problem, demographic_parity_difference, equal_opportunity_difference, error_rate_difference,
    false_positive_rate_difference, f1,
)
from ..methods.subdata import irs as _irs
from ..methods.subdata import mip as _mip
from ..methods.subdata import wstep as _w
from ..utils.validation import check_consistent_rows, check_no_missing

__all__ = ["FairSubdataClassifier", "SpectralFairSVC", "fairness_goal", "subdata_params_from_goals"]

_GOALS = {"omr": error_rate_difference, "fpr": false_positive_rate_difference,
          "eo": equal_opportunity_difference, "dp": demographic_parity_difference}


def fairness_goal(measure: str):
    """The goal of :mod:`goalfit.goals` that a Ye & Xie measure corresponds to on predictions.

    ``"omr"`` -> :func:`~goalfit.goals.error_rate_difference`, ``"fpr"`` ->
    :func:`~goalfit.goals.false_positive_rate_difference`, ``"eo"`` ->
    :func:`~goalfit.goals.equal_opportunity_difference`, ``"dp"`` ->
    :func:`~goalfit.goals.demographic_parity_difference`, ``"f1"`` -> the F1 loss.
    """
    if measure == "f1":
        return f1()
    if measure not in _GOALS:
        raise ValueError(f"measure must be one of {sorted(_GOALS) + ['f1']}, got {measure!r}")
    return _GOALS[measure]()


_KIND_TO_MEASURE = {"error_rate": "omr", "false_positive_rate": "fpr", "equal_opportunity": "eo",
                    "demographic_parity": "dp"}


def measure_of_goal(goal):
    """``(measure name, sensitive column or None)`` of a Ye & Xie measure given by name or as a goal.

    Parameters
    ----------
    goal : {"omr", "fpr", "eo", "dp", "f1"} or Expression
        A name, or :func:`~goalfit.goals.error_rate_difference` /
        :func:`~goalfit.goals.false_positive_rate_difference` /
        :func:`~goalfit.goals.equal_opportunity_difference` /
        :func:`~goalfit.goals.demographic_parity_difference` (between groups, default class) or
        ``f1()`` (the inverse of :func:`fairness_goal`).

    Raises
    ------
    ValueError
        For another name or expression (ratio forms, ``method="to_overall"``, a ``label``,
        other metrics), naming the supported ones; a Constraint (pass it as ``constraints=``).
    """
    from ..goals import Constraint, FBetaLoss, GroupDisparity

    if isinstance(goal, str):
        fairness_goal(goal)  # validates the name
        return goal, None
    if isinstance(goal, Constraint):
        raise ValueError(f"measure={goal.name!r} is a constraint: pass it as constraints=[...]")
    if isinstance(goal, FBetaLoss) and goal.beta == 1 and goal.label is None and goal.group is None:
        return "f1", None
    if (isinstance(goal, GroupDisparity) and goal.kind in _KIND_TO_MEASURE and goal.form == "difference"
            and goal.method == "between_groups" and goal.label is None):
        return _KIND_TO_MEASURE[goal.kind], goal.sensitive
    raise ValueError(f"fair subdata selection measures are {sorted(_GOALS) + ['f1']} or the goals "
                     f"<disparity>_difference(...) with disparity in {sorted(_KIND_TO_MEASURE)} and f1(); "
                     f"got {getattr(goal, 'name', goal)!r}")


def _sensitive_column(sensitive_features, column):
    """One sensitive column as a 1-D array: ``column`` from a DataFrame / dict when named.

    Raises
    ------
    ValueError
        ``column`` is not among the given columns, or several columns and none named.
    """
    import pandas as pd

    if isinstance(sensitive_features, dict):
        sensitive_features = pd.DataFrame(sensitive_features)
    if isinstance(sensitive_features, pd.DataFrame):
        cols = [str(c) for c in sensitive_features.columns]
        if column is not None:
            if str(column) not in cols:
                raise ValueError(f"the goal names sensitive feature {column!r} but sensitive_features has "
                                 f"columns {cols}")
            return sensitive_features.iloc[:, cols.index(str(column))].to_numpy()
        if len(cols) != 1:
            raise ValueError(f"sensitive_features has columns {cols}: name one in the goal, e.g. "
                             f"error_rate_difference({cols[0]!r})")
        return sensitive_features.iloc[:, 0].to_numpy()
    if isinstance(sensitive_features, pd.Series):
        if column is not None and sensitive_features.name is not None and str(sensitive_features.name) != str(column):
            raise ValueError(f"the goal names sensitive feature {column!r} but sensitive_features is the "
                             f"column {sensitive_features.name!r}")
        return sensitive_features.to_numpy()
    s = np.asarray(sensitive_features)
    return s[:, 0] if s.ndim == 2 and s.shape[1] == 1 else s


def subdata_params_from_goals(objective="error", constraints=()) -> dict:
    """Map a goal problem onto :class:`FairSubdataClassifier` parameters (the inverse of
    :func:`fairness_goal`), for text specs and the command line.

    Ye & Xie's methods minimise the training error (the accuracy term ``A`` of Eq. 1) subject
    to one exact group-fairness measure of two groups, so the problem must be: objective
    ``"error"`` and at most one constraint ``<disparity>_difference(...) <= epsilon`` with
    ``<disparity>`` one of error_rate (OMR), false_positive_rate (FPR), equal_opportunity (EO),
    demographic_parity (DP), compared between groups, for the default class.

    Parameters
    ----------
    objective : str or Expression, default "error"
    constraints : sequence of Constraint

    Returns
    -------
    dict
        ``{"measure": ..., "epsilon": ..., "sensitive": column or None}``; without a constraint
        ``{}`` (the caller picks ``measure`` / ``rho``).

    Raises
    ------
    ValueError
        Another objective, several constraints, or a constraint this method cannot express
        (ratio form, ``>=``, another metric, ``method="to_overall"``, a ``label``).
    """
    from ..goals import ErrorRate, GroupDisparity, as_objective

    if not isinstance(as_objective(objective), ErrorRate):
        raise ValueError(f"fair subdata selection minimises the error (Ye & Xie Eq. 1); objective "
                         f"{getattr(objective, 'name', objective)!r} is not supported")
    constraints = list(constraints)
    if not constraints:
        return {}
    if len(constraints) > 1:
        raise ValueError(f"fair subdata selection takes one fairness constraint, got {len(constraints)}")
    c = constraints[0]
    e = c.expression
    if not (isinstance(e, GroupDisparity) and e.kind in _KIND_TO_MEASURE and e.form == "difference"
            and c.sense == "<=" and e.method == "between_groups" and e.label is None):
        raise ValueError(f"fair subdata selection supports '<disparity>_difference(...) <= epsilon' with "
                         f"disparity in {sorted(_KIND_TO_MEASURE)} (between groups, default class); got {c.name!r}")
    return {"measure": _KIND_TO_MEASURE[e.kind], "epsilon": float(c.bound), "sensitive": e.sensitive}


def _two_groups(sensitive_features, n, *, column=None, measure="dp"):
    """The two groups and the +-1 group code of each row (``g = +1`` for ``groups[1]``, the
    sensitive attribute ``g_i`` in {-1, +1} of Ye & Xie's notation, which ``D+`` / ``D-`` split on).

    Parameters
    ----------
    sensitive_features : array-like of shape (n,) or DataFrame, or None
    n : int
        Number of rows of ``X``.
    column : str, optional
        The column a goal names, picked from a DataFrame of several.
    measure : str, default "dp"
        The Ye & Xie measure; ``"f1"`` does without groups: then None gives ``(None, ones)``.

    Returns
    -------
    groups : ndarray of shape (2,) or None
    g : ndarray of int of shape (n,), entries +-1

    Raises
    ------
    ValueError
        Missing groups where the measure needs them, a length mismatch, missing values, or
        a number of groups other than two.
    """
    if sensitive_features is None:
        if measure == "f1":
            return None, np.ones(n, int)
        raise ValueError(f"measure {measure!r} needs sensitive_features (two groups)")
    s = _sensitive_column(sensitive_features, column)
    if s.ndim != 1 or len(s) != n:
        raise ValueError(f"sensitive_features must be one column with {n} entries, got shape {s.shape}")
    check_no_missing(s, "sensitive_features")
    groups = np.unique(s)
    if len(groups) != 2:
        raise ValueError(f"sensitive_features must have exactly two groups, got {len(groups)}: "
                         f"{groups[:10].tolist()}")
    return groups, np.where(s == groups[1], 1, -1)


class FairSubdataClassifier(ClassifierMixin, BaseEstimator):
    """Classifier trained for exact fairness by unbiased subdata selection (Ye & Xie).

    Minimises ``A(z, te - u) + lam R(w) + rho F(z)`` (Eq. 1) over a classifier and a 0/1
    selection ``z`` ("counts as correct at threshold t"; the classifier is trained on the
    selected points), with ``F`` an exact fairness measure of ``z``, as a penalty (``rho``)
    and/or a constraint ``F(z) <= epsilon``.

    Parameters
    ----------
    model : {"svm", "logistic", "kernel_svm"} or estimator, default "svm"
        ``"svm"``: linear GSVMF (Eq. 12; multiclass targets give GMSVMF, Eq. 27);
        ``"logistic"``: GLRF (Eq. 31, ``t`` a log-probability < 0); ``"kernel_svm"``: GKSVMF
        (Eq. 32, Alg. 4, scikit-learn's SVC); an estimator with ``fit(X, y, sample_weight=)``
        and ``predict_proba``: Alg. 5 (FCNN-style wrapper, ``t`` a probability in (0, 1)).
    measure : {"omr", "fpr", "eo", "dp", "f1"} or goal expression, default "omr"
        Overall misclassification rate difference (Eq. 11a), false-positive-rate difference
        (21a), equal opportunity (23a), demographic parity (25), or ``1 - F1`` for unbalanced
        data (34a; GSVM-F1 Eq. 35, class-weighted accuracy term, no sensitive feature needed).
        The same in the goal vocabulary: ``error_rate_difference("sex")``,
        ``false_positive_rate_difference(...)``, ``equal_opportunity_difference(...)``,
        ``demographic_parity_difference(...)``, ``f1()`` (the strings are shorthand); a named
        column picks it from a sensitive-feature DataFrame.
    constraints : sequence of Constraint, default ()
        At most one goal ``<disparity>_difference(...) <= epsilon`` (e.g.
        ``[error_rate_difference("sex") <= 0.02]``): sets ``measure`` and ``epsilon`` as the other
        estimators' ``constraints=`` do (:func:`subdata_params_from_goals`).
    rho : float >= 0, default 1.0
        Fairness penalty.
    epsilon : float >= 0, optional
        Fairness constraint on the training selection.
    t : float, default 1.0
        Threshold: margin units (SVMs), log-likelihood (logistic), probability (estimators).
    lam : float >= 0, default 0.01
        Weight of ``||w||^2`` (linear models; the accuracy term is an average over N).
    w_solver : {"auto", "liblinear", "cvxpy"}, default "auto"
        Linear SVM w-steps (``model="svm"``, two classes): liblinear's weighted hinge fit
        with the intercept re-optimized exactly (fast, near-optimal), the exact cvxpy QP (the
        reference), or "auto": the QP up to 2,000 rows, liblinear above; see
        :class:`~goalfit.methods.subdata.wstep.LinearSVMStep`. ``lam = 0`` (an LP) and the
        exact solvers ("mip", "bruteforce") always use cvxpy.
    solver : {"irs", "mip", "bruteforce"}, default "irs"
        The iterative refining strategy (Alg. 2/4/5), the exact mixed-integer program on SCIP
        (linear SVM, multiclass SVM, logistic), or enumeration (N <= 12, linear models).
    kernel, C, gamma, degree :
        SVC parameters for ``model="kernel_svm"`` (scikit-learn defaults; the paper gives none).
    max_iter : int, default 50
    tol : float, default 1e-8
        IRS stopping tolerance on the objective decrease.
    n_restarts : int, default 0
        Extra IRS runs from random subsets.
    time_limit : float, default 60
        Seconds, for ``solver="mip"``.
    random_state : int, optional

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    groups_ : ndarray of shape (2,)
        Sensitive values; ``groups_[1]`` is the paper's ``g = +1``.
    model_ : fitted model (:class:`~goalfit.methods.subdata.wstep.LinearModel` or estimator)
    coef_, intercept_ : linear models only
    selected_ : ndarray of bool, shape (n_samples,)
        The training selection ``z`` (multiclass: ``z_{i, y_i}``).
    objective_ : float
        Training objective at the solution.
    fairness_ : float
        ``F(z)`` on the training selection.
    train_fairness_ : float
        The prediction-based gap (``1 - F1`` for "f1") of the fitted model on the training data.
        With ``epsilon`` set and ``train_fairness_ > epsilon`` (the constraint holds on ``z``
        but not on the predictions) a RuntimeWarning reports the violation.
    history_ : list of dict
        Per IRS iteration: ``objective``, ``objective_after_zstep``, ``fairness``,
        ``n_selected``, ``seconds``, plus ``oracle_calls`` (w-steps so far) and
        ``max_violation`` (``max(0, F - epsilon)``) for :func:`goalfit.report.plot_convergence`.
    n_iter_ : int
    converged_ : bool
    stop_reason_ : str
    mip_ : MIPResult or None
        Exact solve details (``gap``, ``bound``, ``status``) with ``solver="mip"``.
    fit_seconds_ : float
    measure_, epsilon_, sensitive_column_ :
        The measure name, bound and sensitive column resolved from ``measure`` / ``constraints``.

    Raises
    ------
    ValueError
        At fit: NaN/inf features, label/row mismatch, one class, a sensitive feature without
        exactly two groups or with an empty group for the measure, unknown model/measure/solver,
        multiclass targets with a measure other than "omr" or a model other than "svm".

    Notes
    -----
    Fairness is exact on ``z``, the threshold-``t`` correctness indicator; it equals the
    prediction-based gap only when ``t`` is the decision threshold (``t = 1`` for SVMs,
    ``log 0.5`` / ``0.5`` for probabilistic models) **and** ``z`` agrees with the retrained
    model's correctness, which the z-step does not enforce: it can meet ``F(z) <= epsilon`` by
    selecting misclassified points or dropping correct ones (``F(z) = 0`` is always met by
    selecting every point, i.e. the unconstrained model). Tightening ``epsilon`` or moving
    ``t`` is therefore no lever on the prediction gap (on Adult the training gap stayed at
    7.8-9.7% for t in [0.3, 2] and epsilon in [0, 0.02]; benchmarks/README.md).
    :meth:`evaluate` and :func:`goalfit.report.build_report` report the prediction-based gap
    and ``train_fairness_`` holds it for the training data.
    """

    def __init__(self, model="svm", *, measure="omr", constraints=(), rho=1.0, epsilon=None, t=1.0, lam=0.01,
                 w_solver="auto", solver="irs", kernel="rbf", C=1.0, gamma="scale", degree=3, max_iter=50, tol=1e-8,
                 n_restarts=0, time_limit=60.0, random_state=None):
        self.model = model
        self.measure = measure
        self.constraints = constraints
        self.rho = rho
        self.epsilon = epsilon
        self.t = t
        self.lam = lam
        self.w_solver = w_solver
        self.solver = solver
        self.kernel = kernel
        self.C = C
        self.gamma = gamma
        self.degree = degree
        self.max_iter = max_iter
        self.tol = tol
        self.n_restarts = n_restarts
        self.time_limit = time_limit
        self.random_state = random_state

    # ------------------------------------------------------------------ fitting
    def _learner(self, n_classes):
        if isinstance(self.model, str):
            if self.model == "svm":
                if n_classes > 2:
                    return _w.MulticlassSVMStep(self.lam, n_classes)
                if self.w_solver not in ("auto", "liblinear", "cvxpy"):
                    raise ValueError(f"w_solver must be 'auto', 'liblinear' or 'cvxpy', got {self.w_solver!r}")
                # the exact solvers (enumeration) need the exact w-step
                exact = self.lam == 0 or self.solver != "irs"
                return _w.LinearSVMStep(self.lam, backend="cvxpy" if exact else self.w_solver)
            if n_classes > 2:
                raise ValueError("multiclass targets need model='svm' (GMSVMF)")
            if self.model == "logistic":
                if not self.t < 0:
                    raise ValueError(f"model='logistic' needs t < 0 (a log-likelihood threshold, e.g. "
                                     f"log(0.5)); got t = {self.t}: with t >= 0 no point can be selected")
                return _w.LogisticStep(self.lam)
            if self.model == "kernel_svm":
                return _w.KernelSVMStep(self.kernel, self.C, self.gamma, self.degree)
            raise ValueError(f"model must be 'svm', 'logistic', 'kernel_svm' or an estimator, got {self.model!r}")
        if n_classes > 2:
            raise ValueError("multiclass targets need model='svm' (GMSVMF)")
        if not 0 < self.t < 1:
            raise ValueError(f"an estimator model needs a probability threshold 0 < t < 1, got {self.t}")
        return _w.EstimatorStep(self.model)

    def fit(self, X, y, *, sensitive_features=None):
        """Fit on ``(X, y)`` with a binary sensitive feature.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sensitive_features : array-like of shape (n_samples,), optional for ``measure="f1"``

        Returns
        -------
        self
        """
        t0 = time.perf_counter()
        self.measure_, self.epsilon_, self.sensitive_column_ = self._resolve_goal()
        X = check_array(X, dtype=float)
        y = column_or_1d(y, warn=True)
        if len(y) != X.shape[0]:
            raise ValueError(f"X has {X.shape[0]} rows but y has {len(y)}")
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        K = len(self.classes_)
        if K < 2:
            raise ValueError(f"y has one class {self.classes_.tolist()}: need at least two")
        if K > 2 and self.measure_ != "omr":
            raise ValueError("multiclass targets support measure='omr' only (GMSVMF, Eq. 27)")
        self.groups_, g = _two_groups(sensitive_features, len(y), column=self.sensitive_column_,
                                      measure=self.measure_)
        yy = self._encode(y)
        learner = self._learner(K)
        self.n_features_in_ = X.shape[1]
        self.mip_ = None
        if self.solver == "irs":
            res = _irs.irs(learner, X, yy, g, measure=self.measure_, rho=self.rho, epsilon=self.epsilon_,
                           t=self.t, max_iter=self.max_iter, tol=self.tol, n_restarts=self.n_restarts,
                           random_state=self.random_state)
            model, z, self.objective_, self.fairness_ = res.model, res.z, res.objective, res.fairness
            self.history_, self.n_iter_ = res.history, res.n_iter
            self.converged_, self.stop_reason_ = res.converged, res.stop_reason
        elif self.solver in ("mip", "bruteforce"):
            model, z = self._fit_exact(learner, X, yy, g, K)
        else:
            raise ValueError(f"solver must be 'irs', 'mip' or 'bruteforce', got {self.solver!r}")
        calls = 0
        for row in self.history_:
            calls += 1
            row["oracle_calls"] = calls
            row["max_violation"] = max(0.0, row["fairness"] - self.epsilon_) if self.epsilon_ is not None else 0.0
        self._learner_ = learner
        self.selected_ = (z[np.arange(len(yy)), yy] if K > 2 else z) > 0.5
        self._set_model(model)
        sf = None if self.groups_ is None else _sensitive_column(sensitive_features, self.sensitive_column_)
        self.train_fairness_ = self.evaluate(X, y, sensitive_features=sf)["fairness"]["value"]
        if self.epsilon_ is not None and self.train_fairness_ > self.epsilon_ + 1e-12:
            import warnings

            warnings.warn(
                f"the {self.measure_} constraint holds on the training selection (F(z) = {self.fairness_:.4g}) "
                f"but the model's training predictions have {self.measure_} gap {self.train_fairness_:.4g} > "
                f"epsilon = {self.epsilon_} (violation {self.train_fairness_ - self.epsilon_:.4g})",
                RuntimeWarning, stacklevel=2)
        self.fit_seconds_ = time.perf_counter() - t0
        return self

    def _resolve_goal(self):
        """``(measure, epsilon, sensitive column or None)`` from ``measure`` / ``constraints``.

        ``measure`` may be a Ye & Xie name or a goal expression (:func:`measure_of_goal`);
        a constraint ``<disparity>_difference(...) <= eps`` sets both the measure and ``epsilon``.

        Raises
        ------
        ValueError
            More than one constraint, a goal no measure expresses, or a constraint that
            disagrees with an explicit ``measure`` / ``epsilon``.
        """
        measure, column = measure_of_goal(self.measure)
        epsilon = self.epsilon
        constraints = list(self.constraints or ())
        if constraints:
            params = subdata_params_from_goals("error", constraints)
            if not (self.measure == "omr" or measure_of_goal(self.measure)[0] == params["measure"]):
                raise ValueError(f"measure={self.measure!r} disagrees with the constraint {constraints[0].name!r}; "
                                 "give the goal once")
            if self.epsilon is not None and float(self.epsilon) != params["epsilon"]:
                raise ValueError(f"epsilon={self.epsilon} disagrees with the constraint's bound "
                                 f"{params['epsilon']}; give the bound once")
            measure, epsilon, column = params["measure"], params["epsilon"], params["sensitive"]
        return measure, epsilon, column

    def _set_model(self, model):
        """Store ``model_`` (and ``coef_`` / ``intercept_`` for linear models)."""
        self.model_ = model
        if isinstance(model, _w.LinearModel):
            self.coef_ = np.atleast_2d(model.w.T) if len(self.classes_) > 2 else model.w[None, :]
            self.intercept_ = np.atleast_1d(model.b)

    def _encode(self, y):
        """Labels as the steps want them: {-1, +1} (binary) or codes 0..K-1 (multiclass)."""
        if len(self.classes_) > 2:
            return np.searchsorted(self.classes_, y)
        return np.where(y == self.classes_[1], 1, -1)

    def unconstrained_baseline(self, X, y):
        """The same model trained on all of ``(X, y)``: no selection, no fairness term.

        This is the vanilla classifier Ye & Xie compare against (SVM / LR / SVC / the black box
        trained on all data; the IRS's starting point, Alg. 2 step 1), and the baseline of
        :func:`goalfit.report.build_report`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Labels among ``classes_``.

        Returns
        -------
        FairSubdataClassifier
            A fitted shallow copy of this estimator whose ``model_`` is the all-data fit
            (``predict``, ``decision_function`` and :meth:`evaluate` work on it); its
            ``fit_seconds_`` is the time of that fit.

        Raises
        ------
        ValueError
            If the estimator is not fitted, ``X`` has the wrong width or ``y`` holds labels
            outside ``classes_``.
        """
        import copy

        check_is_fitted(self, "model_")
        X = check_array(X, dtype=float)
        y = column_or_1d(y, warn=True)
        if X.shape[1] != self.n_features_in_ or len(y) != X.shape[0]:
            raise ValueError(f"X must have shape (len(y), {self.n_features_in_}), got {X.shape} "
                             f"with {len(y)} labels")
        unknown = np.setdiff1d(np.unique(y), self.classes_)
        if len(unknown):
            raise ValueError(f"y has labels {unknown.tolist()} not seen at fit ({self.classes_.tolist()})")
        t0 = time.perf_counter()
        yy = self._encode(y)
        keep = np.eye(len(self.classes_))[yy] if len(self.classes_) > 2 else np.ones(len(yy))
        base = copy.copy(self)
        base._set_model(self._learner_.fit(X, yy, keep))
        base.selected_ = np.ones(len(yy), bool)
        base.history_, base.n_iter_, base.mip_ = [], 0, None
        base.fit_seconds_ = time.perf_counter() - t0
        return base

    def _fit_exact(self, learner, X, yy, g, K):
        kw = dict(t=self.t, rho=self.rho, epsilon=self.epsilon_)
        if self.solver == "bruteforce":
            r = _mip.bruteforce_gsvmf(X, yy, g, learner=learner, measure=self.measure_, **kw)
        elif isinstance(learner, _w.MulticlassSVMStep):
            r = _mip.solve_gmsvmf(X, yy, g, lam=self.lam, time_limit=self.time_limit, **kw)
        elif isinstance(learner, _w.LinearSVMStep):
            r = _mip.solve_gsvmf(X, yy, g, measure=self.measure_, lam=self.lam, time_limit=self.time_limit,
                                 formulation="big_m" if self.lam > 0 else "indicator", **kw)
        elif isinstance(learner, _w.LogisticStep):
            r = _mip.solve_glrf(X, yy, g, measure=self.measure_, lam=self.lam, time_limit=self.time_limit, **kw)
        else:
            raise ValueError("solver='mip' supports model='svm' and 'logistic' (kernel SVMs and black "
                             "boxes have no mixed-integer form)")
        if not np.isfinite(r.objective):
            raise ValueError(f"the exact solver found no feasible solution ({r.status})")
        self.mip_ = r
        self.objective_, self.fairness_ = r.objective, r.fairness
        self.history_, self.n_iter_, self.converged_ = [], 0, r.optimal
        self.stop_reason_ = r.status
        return _w.LinearModel(np.asarray(r.w), r.b), r.z

    # ------------------------------------------------------------------ predicting
    def decision_function(self, X):
        """Scores, shape (n_samples,) (binary; > 0 predicts ``classes_[1]``) or (n_samples, K)."""
        check_is_fitted(self, "model_")
        X = check_array(X, dtype=float)
        return self._learner_.decision_function(self.model_, X)

    def predict(self, X):
        """Predicted labels, shape (n_samples,)."""
        s = self.decision_function(X)
        if s.ndim == 2:
            return self.classes_[np.argmax(s, axis=1)]
        return self.classes_[(s > 0).astype(int)]

    def predict_proba(self, X):
        """Class probabilities (logistic and estimator models only), shape (n_samples, 2)."""
        check_is_fitted(self, "model_")
        X = check_array(X, dtype=float)
        if isinstance(self._learner_, _w.LogisticStep):
            p = 1.0 / (1.0 + np.exp(-self._learner_.decision_function(self.model_, X)))
            return np.column_stack([1 - p, p])
        if isinstance(self._learner_, _w.EstimatorStep) and not isinstance(self._learner_, _w.KernelSVMStep):
            return self.model_.predict_proba(X)
        raise AttributeError("predict_proba is available for model='logistic' and estimator models only")

    def evaluate(self, X, y, *, sensitive_features=None):
        """Accuracy and the prediction-based fairness gap on labelled data.

        Uses :func:`goalfit.metrics.evaluate_problem` with the error as objective and the goal of
        :func:`fairness_goal` (bounded by ``epsilon``, or 0 when there is none) as constraint.

        Returns
        -------
        dict with ``accuracy``, ``objective`` {name, value}, ``fairness`` {name, value} and
        ``constraints`` (the core's layout).
        """
        from ..metrics import evaluate_problem

        check_consistent_rows(X=X, y=y, sensitive_features=sensitive_features)
        pred = self.predict(X)
        goal = fairness_goal(self.measure_)
        bound = 0.0 if self.epsilon_ is None else float(self.epsilon_)
        sf = (_sensitive_column(sensitive_features, self.sensitive_column_) if sensitive_features is not None
              else np.zeros(len(pred)))
        if self.measure_ == "f1":
            ev = evaluate_problem(Problem(goal), y, pred, sensitive_features=sf, classes=self.classes_)
            ev["fairness"] = {"name": goal.name, "value": ev["objective"]["value"]}
            return ev
        ev = evaluate_problem(Problem("error", [goal <= bound]), y, pred, sensitive_features=sf,
                              classes=self.classes_)
        ev["fairness"] = {"name": goal.name, "value": ev["constraints"][0]["value"]}
        return ev


class SpectralFairSVC(ClassifierMixin, BaseEstimator):
    """Spectral fair linear SVM of Olfat & Aswani (2018): the SSVM baseline of Ye & Xie Table 6.

    See :func:`goalfit.methods.subdata.ssvm.fit_ssvm` (convex QCQP per DC iteration, cvxpy +
    Clarabel).

    Parameters
    ----------
    d : float, default 0.1
        First-moment (mean score) gap bound.
    mu : float, default 0.01
        Penalty on the second-moment gap.
    lam : float, default 0.01
    max_iter : int, default 50
    tol : float, default 1e-3

    Attributes
    ----------
    classes_, groups_, coef_, intercept_, n_iter_, converged_, fit_seconds_
    """

    def __init__(self, *, d=0.1, mu=0.01, lam=0.01, max_iter=50, tol=1e-3):
        self.d = d
        self.mu = mu
        self.lam = lam
        self.max_iter = max_iter
        self.tol = tol

    def fit(self, X, y, *, sensitive_features=None):
        """Fit on ``(X, y)`` (binary) with a two-group sensitive feature."""
        from ..methods.subdata.ssvm import fit_ssvm

        t0 = time.perf_counter()
        X = check_array(X, dtype=float)
        y = column_or_1d(y, warn=True)
        if len(y) != X.shape[0]:
            raise ValueError(f"X has {X.shape[0]} rows but y has {len(y)}")
        self.classes_ = np.unique(y)
        if len(self.classes_) != 2:
            raise ValueError(f"SSVM is binary; y has classes {self.classes_.tolist()}")
        self.groups_, g = _two_groups(sensitive_features, len(y))
        m = fit_ssvm(X, np.where(y == self.classes_[1], 1, -1), g, d=self.d, mu=self.mu, lam=self.lam,
                     max_iter=self.max_iter, tol=self.tol)
        self.coef_, self.intercept_ = m.w[None, :], np.array([m.b])
        self.n_iter_, self.converged_ = m.extra["n_iter"], m.extra["converged"]
        self.n_features_in_ = X.shape[1]
        self.fit_seconds_ = time.perf_counter() - t0
        return self

    def decision_function(self, X):
        check_is_fitted(self, "coef_")
        return check_array(X, dtype=float) @ self.coef_[0] + self.intercept_[0]

    def predict(self, X):
        return self.classes_[(self.decision_function(X) > 0).astype(int)]
