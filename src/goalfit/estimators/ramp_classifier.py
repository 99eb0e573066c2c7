"""Linear classifiers trained under dataset constraints with the ramp loss (Goh et al., NIPS 2016)."""
from __future__ import annotations

import time
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (check_array, check_is_fitted, check_random_state, column_or_1d,
                                      validate_data)

from ..classifiers import encode_labels
from ..confusion import CellEncoder, confusion_tensor
from ..confusion.datasets import DATASET_COLUMN, space_with_unlabelled, stack_datasets
from ..goals import Problem
from ..methods.ramp import (CHOOSERS, INNER_SOLVERS, best_threshold, compile_rate_program,
                            majorization_minimization, ramp, solve_weighted_svm)
from ..utils.validation import check_consistent_rows

MULTIPLIER_SOLVERS = ("cutting_plane", "cvxpy")


class RampClassifier(ClassifierMixin, BaseEstimator):
    """Linear classifier minimizing a rate objective subject to dataset constraints.

    Goh et al. (NIPS 2016): goals are linear combinations of positive / negative prediction
    rates on several datasets (the training data, unlabelled pools, egregious examples, slices by
    group or by a deployed model's prediction). Rates are relaxed by the ramp ``sigma(f(x))``
    (Eq. 2-3; the expected rates of the randomized classifier that predicts positive with
    probability ``sigma(f(x))``) and optimized by majorization-minimization (Alg. 1), each step a
    convex problem solved by a cutting plane over the Lagrange multipliers (Alg. 2) whose inner
    problem is a weighted SVM.

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
        The l2 weight lambda of Goh et al. Eq. 7 (``lambda/2 |w|^2``); default ``1 / n_train``.
        Why: every rate is an average, so one training example weighs ``1 / n_train`` in the
        objective; with ``lambda = 1 / n_train`` the regularizer weighs as much as one example,
        whatever ``n``. In the weighted-SVM form of the inner problem (``svm.py``) this is the
        per-example cost ``C_i = 2 omega_i / lambda = 2`` for a plain error objective: LIBLINEAR's
        scale-free default regime (Fan et al. 2008, C of order 1); Goh et al.'s Adult runs
        (§4.1) used LIBLINEAR "with default parameters, most notably lambda = 1/n". It also
        keeps the ramp's band of randomized predictions narrow as ``n`` grows (``|w|`` grows
        like ``sqrt(n)``), so the randomized and deterministic rules agree more closely on large
        data. ``benchmarks/ramp_robustness.py`` measures the answer's spread over ``alpha`` in
        {1e-2, 1e-3, 1e-4, default} x ``init``. The ramp has a fixed width of 1 in score units,
        so ``alpha`` also sets how wide the band of uncertain randomized predictions is: select it for this estimator on validation data
        (:func:`goalfit.estimators.select_ramp_params`) rather than reusing a hinge SVM's value
        (on Bank Marketing churn the SVM's best 0.01 was 10-100x too large for the ramp;
        ``benchmarks/goh_churn.py``).
    feature_map : transformer, optional
        Fitted (unsupervised) on the features of all datasets, e.g. ``Nystroem`` or
        ``RBFSampler`` for the kernel-approximation map Phi of §4.2. Default: raw features.
    fit_intercept : bool, default True
        The paper's Adult runs used none; the intercept is unregularized (exactly for
        ``"dcd"``, ``"svc"`` and ``"cvxpy"``; with ``inner_solver="liblinear"`` it is a feature
        of value ``intercept_scaling``, weakly regularized).
    max_iter : int, default 10
        MM iterations from a feasible point (the paper's churn runs used 5; svmc.jl stops at 10).
    max_feasibility_iter : int, optional
        MM iterations of the feasibility phase that first runs when the start violates a goal
        (default ``max(max_iter, 20)``; it stops early once every goal is met or when it
        stalls).
    feasibility_alpha : float, optional
        The l2 weight during the feasibility phase (default ``alpha / 100``: there it only keeps
        the weighted SVMs well posed; with ``alpha`` itself the phase can stall short of a
        feasible point because the ramp rates of a small-norm model stay inside the band
        ``0 < sigma < 1``). After a phase step that made no progress (so weak a weight can
        leave the inner SVM unfinished at its epoch cap) it is multiplied by 10, up to
        ``alpha``, before the phase counts as stalled.
    tol : float, default 1e-4
        Stop MM when an iteration lowers the ramp objective by less than this.
    multiplier_solver : {"cutting_plane", "cvxpy"}, default "cutting_plane"
        Alg. 2, or Problem 3 solved directly by cvxpy (small data; the reference).
    chooser : {"auto", "kelley", "chebyshev", "bisection"}, default "auto"
        Cut chooser of Alg. 2 (``auto``: the 1-D bisection for one constraint row, Chebyshev
        centre otherwise).
    max_cutting_plane_iter : int, default 30
    cutting_plane_tol : float, default 1e-4
        Certified gap at which a Problem-3 solve stops (rate units).
    cutting_plane_rel_tol : float, default 0.5
        A Problem-3 solve also stops when its certified gap is at most this fraction of the
        step's certified decrease of the majorizer (an inexact MM step that still achieves at
        least ``1 / (1 + rel_tol)`` of the exact step's decrease, 2/3 at the default; 0: always
        solve to ``cutting_plane_tol``). Late MM steps, whose decrease is small, still stop at
        ``cutting_plane_tol``. The default 0.5 (0.02 before) takes 31-32% fewer passes over the
        data on a9a and Adult (fairness ratio, ``benchmarks/speed.py``) for a training objective
        within the spread over seeds (5 seeds, mean 0.15285 vs 0.15281 on a9a, 0.14947 vs
        0.14948 on Adult); with few MM iterations (``max_iter`` <= 4) each inexact step gains
        less, so lower it there.
    max_multiplier : float, default 1e4
    inner_solver : {"dcd", "liblinear", "svc", "cvxpy"}, default "dcd"
        The weighted-SVM solver: ``"dcd"`` is dual coordinate descent (Hsieh et al. 2008) warm
        started from the previous solve's dual variables, with an exact unregularized intercept
        and a certified dual bound (:mod:`goalfit.methods.ramp.dcd`, compiled by numba);
        ``"liblinear"`` (scikit-learn's ``LinearSVC``, a slightly regularized intercept, no dual
        bound, solved from scratch each time), ``"svc"`` and ``"cvxpy"`` (small data) are kept
        as references.
    inner_tol : float, default 1e-4
        Inner stopping tolerance (for ``"dcd"`` the largest inner duality gap, lowered to
        ``cutting_plane_tol / 2`` near the end of each Problem-3 solve).
    intercept_scaling : float, default 1.0
    init : {"zeros", "unconstrained"}, default "zeros"
        MM start: ``w = 0`` (the paper's; every rate is 1/2 there), or the weighted SVM of the
        objective alone (the hinge relaxation at ``w = 0``), followed by the feasibility phase
        when it violates a constraint.
    deployed_model : fitted classifier, optional
        When given, its predictions on every dataset become the slicing column ``"baseline"``
        that :func:`~goalfit.goals.churn_rate` compares with.
    random_state : int, RandomState or None
        Seeds the feature map, liblinear and randomized predictions.
    confidence : float in (0, 1), optional
        High-confidence goals (:mod:`goalfit.estimators.certification`, Thomas et al. 2019):
        every dataset is split into a candidate part (``1 - safety_fraction``) and a safety
        part; the model is trained on the candidate parts with each constraint tightened by the
        predicted width of the safety bound (one round), then the safety test checks a one-sided
        bound at level ``1 - (1 - confidence) / m`` per constraint for the **deterministic**
        classifier :meth:`predict` returns (``f(x) > threshold_``). ``certified_`` says whether it passed.
    margin : float or sequence of float, optional
        Tighten every constraint (or each by its own amount) by hand; with ``confidence`` it
        replaces the predicted margins.
    safety_fraction : float in (0, 1), default 0.4
    decision_threshold : "fit" or float, default "fit"
        Threshold ``t`` of the deterministic :meth:`predict` (``f(x) > t``). ``"fit"``: after
        training, the exact best ``t`` on the training datasets for Problem 1 itself (the
        indicator rates): the lowest training objective among the thresholds whose
        deterministic rule meets every goal, else the least violating
        (:func:`goalfit.methods.ramp.best_threshold`; one sort). The ramp relaxation bounds the
        *randomized* rule's rates; the deterministic ``f > 0`` can violate a goal the randomized
        rule meets by the mass of examples inside the ramp (on COMPAS FPR parity <= 0.01, up to
        0.04), which the fitted threshold removes whenever a shift can (our addition; the paper
        thresholds at 0). A number: that fixed threshold (``0.0``: the paper's rule).

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    coef_ : ndarray of shape (n_features_out,)
        Weights on the (mapped) features; scores are ``f(x) = <coef_, Phi(x)> + intercept_``
        (Goh et al.'s ``b`` is ``-intercept_``).
    intercept_ : float
    multipliers_ : ndarray of shape (n_rows,)
        Lagrange multipliers of the constraint rows at the last MM step.
    constraint_rows_ : list of str
        The user constraint of each row.
    feasible_ : bool
        Whether the ramp (randomized) constraints hold on the training datasets (every violation
        at most :data:`goalfit.goals.FEASIBLE_TOL`).
    max_violation_ : float
        Largest constraint violation of the randomized rule on the training datasets.
    max_violation_deterministic_ : float
        Largest constraint violation of the default, deterministic :meth:`predict`
        (``f(x) > threshold_``) on the training datasets.
    threshold_ : float
        The deterministic rule's threshold (see ``decision_threshold``).
    objective_ : float
        Ramp objective plus ``alpha/2 |w|^2`` at the solution.
    n_iter_ : int
        MM iterations run (both phases).
    history_ : list of dict
        Per MM iteration: phase ("start", "feasibility", "mm"), objective, max_violation,
        upper_bound, dual_bound, n_inner (weighted-SVM solves), multipliers, seconds.
    feature_map_ : fitted transformer or None
    problem_ : CompiledProblem
        The goals bound to the stacked training datasets.
    dataset_names_ : list of str
    fit_seconds_ : float
    certified_ : bool or None
        With ``confidence``: whether the safety test passed (None without ``confidence``).
    certification_ : list of dict or None
        Per constraint: margin, candidate and safety values, the safety bound, passed, and the
        data a failed test would need (:func:`goalfit.estimators.certification.safety_test`).
    margins_ : list of float or None

    Raises
    ------
    ValueError
        At fit: more than two classes, a non-linear objective or constraint, a goal on the
        labels of an unlabelled dataset, unknown groups or datasets, empty slices.
        Infeasible goals do not raise: the least-violating iterate is kept, ``feasible_`` is
        False and a RuntimeWarning names the violation.
    """

    def __init__(self, objective="error", constraints=(), *, alpha=None, feature_map=None,
                 fit_intercept=True, max_iter=10, max_feasibility_iter=None, feasibility_alpha=None, tol=1e-4,
                 multiplier_solver="cutting_plane",
                 chooser="auto", max_cutting_plane_iter=30, cutting_plane_tol=1e-4, cutting_plane_rel_tol=0.5,
                 max_multiplier=1e4,
                 inner_solver="dcd", inner_tol=1e-4, intercept_scaling=1.0, init="zeros",
                 deployed_model=None, random_state=None, confidence=None, margin=None, safety_fraction=0.4,
                 decision_threshold="fit"):
        self.decision_threshold = decision_threshold
        self.confidence = confidence
        self.margin = margin
        self.safety_fraction = safety_fraction
        self.objective = objective
        self.constraints = constraints
        self.alpha = alpha
        self.feature_map = feature_map
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.max_feasibility_iter = max_feasibility_iter
        self.feasibility_alpha = feasibility_alpha
        self.tol = tol
        self.multiplier_solver = multiplier_solver
        self.chooser = chooser
        self.max_cutting_plane_iter = max_cutting_plane_iter
        self.cutting_plane_tol = cutting_plane_tol
        self.cutting_plane_rel_tol = cutting_plane_rel_tol
        self.max_multiplier = max_multiplier
        self.inner_solver = inner_solver
        self.inner_tol = inner_tol
        self.intercept_scaling = intercept_scaling
        self.init = init
        self.deployed_model = deployed_model
        self.random_state = random_state

    # ------------------------------------------------------------------ data
    def _stack(self, X, y, sensitive_features, sample_weight, datasets, raw=None):
        st = stack_datasets(X, y, sensitive_features, sample_weight, datasets)
        if self.deployed_model is not None:
            if "baseline" in st.sensitive_features.columns:
                raise ValueError("a 'baseline' column is given and deployed_model is set: pass one")
            # the deployed model sees the features as the user gave them (e.g. a DataFrame)
            Xd = st.X if raw is None else stack_datasets(raw[0], y, sensitive_features, sample_weight, raw[1]).X
            st.sensitive_features["baseline"] = np.asarray(self.deployed_model.predict(Xd))
        return st

    def _space(self, st, classes):
        labelled = st.labelled
        y_codes = np.zeros(len(st.y), dtype=np.intp)
        y_codes[labelled] = encode_labels(np.asarray(st.y[labelled]), classes)
        encoder = CellEncoder().fit(st.sensitive_features)
        cells = encoder.transform(st.sensitive_features)
        space = space_with_unlabelled(y_codes, labelled, cells, classes, encoder.cells_, st.sample_weight)
        unlabelled = np.zeros(encoder.n_cells, dtype=bool)
        unlabelled[np.unique(cells[~labelled])] = True
        return space, y_codes, cells, unlabelled

    def _features(self, X):
        Z = X if self.feature_map_ is None else self.feature_map_.transform(X)
        if hasattr(Z, "to_numpy"):
            Z = Z.to_numpy(dtype=float)
        if hasattr(Z, "tocsr"):  # liblinear needs 32-bit sparse indices
            Z = Z.tocsr().astype(float)
            if Z.nnz < 2 ** 31 - 1:
                Z.indices = Z.indices.astype(np.int32)
                Z.indptr = Z.indptr.astype(np.int32)
        else:
            Z = np.asarray(Z, dtype=float)
            if not np.isfinite(Z).all():
                raise ValueError("X contains NaN or infinite values")
        return Z

    # ------------------------------------------------------------------ fit
    def fit(self, X, y, *, sensitive_features=None, sample_weight=None, datasets=None):
        """Train on ``(X, y)`` (dataset ``"train"``) and the extra ``datasets``.

        Parameters
        ----------
        X : array-like, DataFrame or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Binary labels (the larger label is the positive class).
        sensitive_features : optional
            Slicing columns of the training data (groups; a deployed model's predictions).
        sample_weight : array-like of shape (n_samples,), optional
        datasets : dict of str -> Dataset or tuple, optional
            Extra datasets the goals name with ``dataset=...`` (unlabelled pools, egregious
            examples, ...); see :mod:`goalfit.confusion.datasets`.

        Returns
        -------
        self
        """
        if self.confidence is not None or self.margin is not None:
            return self._fit_high_confidence(X, y, sensitive_features, sample_weight, datasets)
        t0 = time.perf_counter()
        self.certified_ = self.certification_ = self.margins_ = None
        if self.multiplier_solver not in MULTIPLIER_SOLVERS:
            raise ValueError(f"multiplier_solver must be one of {MULTIPLIER_SOLVERS}, got {self.multiplier_solver!r}")
        if self.chooser not in CHOOSERS:
            raise ValueError(f"chooser must be one of {CHOOSERS}, got {self.chooser!r}")
        if self.inner_solver not in INNER_SOLVERS:
            raise ValueError(f"inner_solver must be one of {INNER_SOLVERS}, got {self.inner_solver!r}")
        if y is None:
            raise ValueError("RampClassifier requires y to be passed, but the target y is None")
        raw = (X, datasets)
        if self.feature_map is None:
            X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64)
            datasets = {k: _check_dataset(d) for k, d in (datasets or {}).items()} or None
        y = column_or_1d(y, warn=True)
        check_classification_targets(y)
        st = self._stack(X, y, sensitive_features, sample_weight, datasets, raw)
        labels = np.asarray(st.y[st.labelled])
        try:
            self.classes_ = np.unique(labels.astype(np.asarray(y).dtype))
        except (TypeError, ValueError):
            self.classes_ = np.unique(labels)
        if len(self.classes_) != 2:
            raise ValueError(f"Only binary classification is supported by the ramp method; y has {len(self.classes_)} class(es) "
                             f"{self.classes_.tolist()}")
        space, y_codes, cells, unlabelled = self._space(st, self.classes_)
        self.problem_ = Problem(self.objective, self.constraints).compile(space)
        program = compile_rate_program(self.problem_, y_codes, cells, st.sample_weight, unlabelled)
        rs = check_random_state(self.random_state)
        seed = int(rs.randint(np.iinfo(np.int32).max))
        if self.feature_map is not None:
            self.feature_map_ = clone(self.feature_map)
            if "random_state" in self.feature_map_.get_params():
                self.feature_map_.set_params(random_state=seed)
            self.feature_map_.fit(st.X)
        else:
            self.feature_map_ = None
        Z = self._features(st.X)
        n_train = (int((st.sensitive_features[DATASET_COLUMN] == "train").sum())
                   if DATASET_COLUMN in st.sensitive_features.columns else len(st.y))
        lam = 1.0 / n_train if self.alpha is None else float(self.alpha)
        if not lam > 0:
            raise ValueError(f"alpha must be positive, got {self.alpha!r}")
        lam1 = None if self.feasibility_alpha is None else float(self.feasibility_alpha)
        if lam1 is not None and not lam1 > 0:
            raise ValueError(f"feasibility_alpha must be positive, got {self.feasibility_alpha!r}")
        params = {"multiplier_solver": self.multiplier_solver, "chooser": self.chooser,
                  "tol": self.cutting_plane_tol, "rel_tol": self.cutting_plane_rel_tol,
                  "max_iter": self.max_cutting_plane_iter,
                  "v_max": self.max_multiplier, "inner_solver": self.inner_solver,
                  "inner_tol": self.inner_tol, "fit_intercept": self.fit_intercept,
                  "intercept_scaling": self.intercept_scaling, "random_state": seed}
        if not ((isinstance(self.decision_threshold, str) and self.decision_threshold == "fit")
                or (isinstance(self.decision_threshold, (int, float, np.number))
                    and not isinstance(self.decision_threshold, bool) and np.isfinite(self.decision_threshold))):
            raise ValueError(f"decision_threshold must be 'fit' or a finite number, got {self.decision_threshold!r}")
        if self.init not in ("zeros", "unconstrained"):
            raise ValueError(f"init must be 'zeros' or 'unconstrained', got {self.init!r}")
        coef0, intercept0 = None, 0.0
        if self.init == "unconstrained":
            sol = solve_weighted_svm(Z, program.a0, program.c0, np.zeros(Z.shape[0]), lam,
                                     solver=self.inner_solver, fit_intercept=self.fit_intercept,
                                     tol=self.inner_tol, intercept_scaling=self.intercept_scaling,
                                     random_state=seed)
            coef0, intercept0 = sol.coef, sol.intercept
        res = majorization_minimization(program, Z, lam, coef0=coef0, intercept0=intercept0,
                                        max_iter=self.max_iter, max_feasibility_iter=self.max_feasibility_iter,
                                        feasibility_lam=lam1, tol=self.tol, solver_params=params)
        self.coef_, self.intercept_ = res.coef, res.intercept
        if isinstance(self.decision_threshold, str) and self.decision_threshold == "fit":
            self.threshold_ = best_threshold(program, np.asarray(Z @ res.coef).ravel() + res.intercept)[0]
        else:
            self.threshold_ = float(self.decision_threshold)
        self.multipliers_ = res.multipliers
        self.constraint_rows_ = list(program.row_names)
        self.feasible_, self.max_violation_ = res.feasible, res.max_violation
        self.objective_ = res.objective
        self.history_ = res.history
        self.n_iter_ = max(len(res.history) - 1, 1)
        self.program_ = program
        self.alpha_ = lam
        self.dataset_names_ = st.names
        # what the default (deterministic) predict does on the training datasets: it can violate
        # the goals far more than the randomized rule the ramp relaxation bounds
        # (on the inputs as the user gave them, as evaluate is called; array-likes as arrays)
        # (computed on the stacked training data already prepared above: the same values as
        # self.evaluate(X, y, ..., randomized=False), without a second validation and encoding pass)
        pos = (np.asarray(Z @ res.coef).ravel() + res.intercept > self.threshold_).astype(float)
        ev = self._evaluate_prepared(st, space, self.problem_, y_codes, cells, np.column_stack([1 - pos, pos]))
        self.max_violation_deterministic_ = max([c["violation"] for c in ev["constraints"]], default=0.0)
        if not res.feasible:
            warnings.warn(
                "the goals cannot all be met on the training datasets (ramp relaxation): returning "
                f"the least-violating model (max violation {res.max_violation:.4g} for the randomized rule, "
                "predict(X, randomized=True); the default deterministic predict(X) violates them by "
                f"{self.max_violation_deterministic_:.4g})",
                RuntimeWarning, stacklevel=2)
        self.fit_seconds_ = time.perf_counter() - t0
        return self

    # ------------------------------------------------------------------ predict
    def decision_function(self, X):
        """Scores ``f(x) = <coef_, Phi(x)> + intercept_``, shape (n_samples,)."""
        check_is_fitted(self, "coef_")
        if self.feature_map is None:
            X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        return np.asarray(self._features(X) @ self.coef_).ravel() + self.intercept_

    def predict_proba(self, X):
        """Class distribution of the randomized rule: ``[1 - sigma(f), sigma(f)]``, shape (n, 2).

        This is the probability that ``predict(X, randomized=True)`` outputs each class
        (Goh et al. Eq. 3), not an estimate of ``P(y | x)``.
        """
        p = ramp(self.decision_function(X))
        return np.column_stack([1.0 - p, p])

    def predict(self, X, *, randomized=False, random_state=None):
        """Labels, shape (n_samples,).

        ``randomized=False`` (default): deterministic thresholding ``f(x) > threshold_``
        (``threshold_ = 0`` is the paper's better-performing choice in §4.2; by default it is
        fitted, see ``decision_threshold``). ``randomized=True``: positive with probability
        ``sigma(f(x))``, seeded by ``random_state`` (default: the estimator's).
        """
        f = self.decision_function(X)
        if randomized:
            rs = check_random_state(self.random_state if random_state is None else random_state)
            pos = rs.random_sample(len(f)) < ramp(f)
        else:
            pos = f > getattr(self, "threshold_", 0.0)
        return self.classes_[pos.astype(int)]

    def _evaluation(self, X, y, sensitive_features, sample_weight, datasets, randomized):
        """Stacked labelled/unlabelled rows of every dataset with this model's predictions."""
        check_is_fitted(self, "coef_")
        check_consistent_rows(X=X, y=y, sensitive_features=sensitive_features, sample_weight=sample_weight)
        st = self._stack(X, y, sensitive_features, sample_weight, datasets)
        space, y_codes, cells, unlabelled = self._space(st, self.classes_)
        compiled = Problem(self.objective, self.constraints).compile(space)
        compile_rate_program(compiled, y_codes, cells, st.sample_weight, unlabelled)  # label checks
        if randomized:
            dist = self.predict_proba(st.X)
        else:
            pos = (self.decision_function(st.X) > getattr(self, "threshold_", 0.0)).astype(float)
            dist = np.column_stack([1 - pos, pos])
        return st, space, compiled, y_codes, cells, dist

    def _goal_sample(self, X, y, sensitive_features=None, sample_weight=None, datasets=None, randomized=False):
        """The predictions on stacked datasets as a :class:`~goalfit.metrics.intervals.GoalSample`."""
        from ..metrics.intervals import GoalSample

        st, space, _, y_codes, cells, dist = self._evaluation(X, y, sensitive_features, sample_weight, datasets,
                                                              randomized)
        return GoalSample(y_codes, dist, cells, space, st.sample_weight)

    def evaluate(self, X, y=None, *, sensitive_features=None, sample_weight=None, datasets=None,
                 randomized=False, confidence=None):
        """Objective and constraint values on (held-out) datasets.

        Parameters
        ----------
        X, y, sensitive_features, sample_weight, datasets
            As in :meth:`fit` (the same dataset names and columns the goals refer to).
        randomized : bool, default False
            Expected values of the randomized rule (ramp) or the deterministic thresholding.
        confidence : float in (0, 1), optional
            Add confidence intervals of the population values (as
            :meth:`GoalClassifier.evaluate`; :mod:`goalfit.metrics.intervals`).

        Returns
        -------
        dict with ``objective`` {name, value} and ``constraints`` [{name, expression, value,
        bound, sense, violation, met}] and ``accuracy`` (on the labelled rows of ``"train"``);
        with ``confidence``, ``interval`` entries and ``met_with_confidence``.
        """
        st, space, compiled, y_codes, cells, dist = self._evaluation(X, y, sensitive_features, sample_weight,
                                                                     datasets, randomized)
        return self._evaluate_prepared(st, space, compiled, y_codes, cells, dist, confidence)

    def _evaluate_prepared(self, st, space, compiled, y_codes, cells, dist, confidence=None):
        """:meth:`evaluate` on stacked, encoded datasets and the rule's class distribution ``dist``."""
        from ..metrics import add_intervals, evaluate_compiled
        from ..metrics.intervals import GoalSample

        C = confusion_tensor(y_codes, dist, cells, 2, space.n_cells, st.sample_weight)
        problem = Problem(self.objective, self.constraints)
        out = evaluate_compiled(problem, compiled, C)
        train = st.labelled & ((st.sensitive_features[DATASET_COLUMN] == "train").to_numpy()
                               if DATASET_COLUMN in st.sensitive_features.columns else True)
        w = st.sample_weight[train]
        correct = dist[train, y_codes[train]]
        out["accuracy"] = float(w @ correct / w.sum())
        if confidence is not None:
            add_intervals(out, problem, GoalSample(y_codes, dist, cells, space, st.sample_weight), confidence,
                          accuracy=False)
        return out

    def _fit_high_confidence(self, X, y, sensitive_features, sample_weight, datasets):
        """``confidence`` / ``margin``: candidate selection and safety test (see the class docstring)."""
        from ..confusion.cells import as_frame
        from ..confusion.datasets import Dataset
        from .certification import predicted_margins, safety_test, split_rows
        from .goal_classifier import _seed, _tightened, _user_margins

        t0 = time.perf_counter()
        problem = Problem(self.objective, self.constraints)
        margins = _user_margins(self.margin, problem)
        plain = clone(self).set_params(confidence=None, margin=None)
        if self.confidence is None:  # margin only: no split
            fitted = clone(plain).set_params(constraints=_tightened(problem, margins)).fit(
                X, y, sensitive_features=sensitive_features, sample_weight=sample_weight, datasets=datasets)
            self._adopt(fitted, margins, None, None, t0)
            return self
        if not (0 < self.confidence < 1) or not (0 < self.safety_fraction < 1):
            raise ValueError(f"confidence and safety_fraction must be in (0, 1), got {self.confidence!r}, "
                             f"{self.safety_fraction!r}")
        seed = _seed(self.random_state)
        y = np.asarray(column_or_1d(y, warn=True))
        n = len(y)
        frame = as_frame(sensitive_features, n)
        strata = frame.astype(str).agg("|".join, axis=1).to_numpy() + "|" + y.astype(str) if frame.shape[1] else y
        parts = {"train": split_rows(strata, self.safety_fraction, seed)}
        extra = {k: (d if isinstance(d, Dataset) else Dataset(*d) if isinstance(d, tuple) else Dataset(d))
                 for k, d in (datasets or {}).items()}
        for k, d in extra.items():
            m = _num_rows(d.X)
            parts[k] = split_rows(np.zeros(m) if d.y is None else np.asarray(d.y), self.safety_fraction, seed)

        def subset(which):
            rows = parts["train"][which]
            sub = {k: Dataset(_rows(d.X, parts[k][which]), None if d.y is None else np.asarray(d.y)[parts[k][which]],
                              None if d.sensitive_features is None else as_frame(d.sensitive_features, _num_rows(d.X)).iloc[parts[k][which]].reset_index(drop=True),
                              None if d.sample_weight is None else np.asarray(d.sample_weight)[parts[k][which]])
                   for k, d in extra.items()}
            return dict(X=_rows(X, rows), y=y[rows],
                        sensitive_features=frame.iloc[rows].reset_index(drop=True) if frame.shape[1] else None,
                        sample_weight=None if sample_weight is None else np.asarray(sample_weight)[rows],
                        datasets=sub or None)

        cand, safe = subset(0), subset(1)
        n_c, n_s = len(cand["y"]), len(safe["y"])
        level = 1 - (1 - self.confidence) / max(len(problem.constraints), 1)
        if margins is None:
            first = clone(plain).fit(cand["X"], cand["y"], sensitive_features=cand["sensitive_features"],
                                     sample_weight=cand["sample_weight"], datasets=cand["datasets"])
            margins = predicted_margins(problem, first._goal_sample(**cand), level, n_c, n_s) \
                if problem.constraints else []
        fitted = clone(plain).set_params(constraints=_tightened(problem, margins)).fit(
            cand["X"], cand["y"], sensitive_features=cand["sensitive_features"],
            sample_weight=cand["sample_weight"], datasets=cand["datasets"])
        if problem.constraints:
            report, certified = safety_test(problem, margins, fitted._goal_sample(**cand), fitted._goal_sample(**safe),
                                            self.confidence, fitted.classes_, stacklevel=4)
        else:
            report, certified = [], True
        self._adopt(fitted, margins, report, certified, t0)
        return self

    def _adopt(self, fitted, margins, certification, certified, t0):
        for k, v in vars(fitted).items():
            if k.endswith("_") and not k.startswith("__"):
                setattr(self, k, v)
        self.margins_ = None if margins is None else list(margins)
        self.certification_, self.certified_ = certification, certified
        self.fit_seconds_ = time.perf_counter() - t0

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.classifier_tags.multi_class = False
        return tags


def _num_rows(X) -> int:
    return X.shape[0] if hasattr(X, "shape") else len(X)


def _rows(X, rows):
    from sklearn.utils import _safe_indexing

    out = _safe_indexing(X, rows)
    return out.reset_index(drop=True) if hasattr(out, "reset_index") else out


def _check_dataset(d):
    """Validate the features of an extra dataset (raw features: numeric, finite)."""
    from ..confusion.datasets import Dataset

    if not isinstance(d, Dataset):
        d = Dataset(*d) if isinstance(d, tuple) else Dataset(d)
    d.X = check_array(d.X, accept_sparse="csr", dtype=np.float64)
    return d
