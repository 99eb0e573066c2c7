"""The base of every goal-taking estimator: parameter validation, the result protocol and evaluation.

Every estimator of goalfit (:class:`~goalfit.GoalClassifier`, :class:`~goalfit.RampClassifier`,
:class:`~goalfit.FairSubdataClassifier`, :class:`~goalfit.AdaptiveSurrogateClassifier`,
:class:`goalfit.torch.LagrangianClassifier`) derives from :class:`GoalEstimator`. After ``fit``
each exposes the same attributes, which the report, :func:`goalfit.frontier`, Dask and the
command line read (never the estimator's class):

==========================  ================================================================
``classes_``                the labels, shape (n_classes,)
``goals_``                  the goals as fitted: the user's :class:`~goalfit.goals.Problem`
                            with the choices it makes from the data fixed on the training
                            rows (micro-F1's default class); evaluation measures these
``problem_``                the compiled goals on the training sample (tightened by ``margin``)
``result_``                 the method's :class:`~goalfit.fit.FitResult`
``classifier_``             the deployed rule: ``predict(X, sensitive_features=)`` and
                            ``predict_proba(X, sensitive_features=)`` (the distribution of
                            what ``predict`` outputs: one-hot for a deterministic rule)
``history_``                per-iteration ``objective`` and ``max_violation`` (train)
``feasible_``               every constraint met on the training sample
``max_violation_``          the largest constraint violation on the training sample (rate units)
``method_``                 the method that ran (a :mod:`goalfit.methods` registry name)
``margins_``                the tightening applied to each constraint, or None
``certified_``              with ``confidence``: whether the safety test passed, else None
``certification_``          with ``confidence``: per constraint, the safety test's numbers
                            (``certified_bound``: the bound that holds at ``confidence``)
``safety_path_``            with ``confidence``: every candidate of the safety test, in order
``fit_seconds_``            the whole fit
==========================  ================================================================
"""
from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
# scikit-learn has no public module for parameter constraints: _param_validation is what its own
# estimators and scikit-learn-compatible libraries use for _parameter_constraints
from sklearn.utils._param_validation import HasMethods, Interval
from sklearn.utils.validation import check_is_fitted

from ..confusion import confusion_tensor
from ..goals import FEASIBLE_TOL, Problem
from ..goals.problem import CompiledProblem
from ..goals.program import check_label_free
from ..metrics import add_intervals, evaluate_compiled
from ..metrics.intervals import GoalSample
from ..utils.validation import check_confidence
from .backends import DataBackend, InMemoryData, data_backend
from .data import check_inputs, check_validation_inputs, prepare
from .certification import certify
from .method import TEMPLATE_OPTIONS, Method, MethodSettings, fit_options  # noqa: F401 (fit_options: re-exported)
from .problem import as_seed, check_tightenable, resolve_margins, tighten
from .progress import Progress
from .slices import check_slice_sizes


#: The parameters every goal-taking estimator shares, in scikit-learn's validation table form
#: (checked at ``fit``: a wrong type or value names the parameter and what it accepts).
GOAL_PARAMETERS = {
    "objective": [str, HasMethods(["bind"])],
    "constraints": ["array-like", HasMethods(["violation"])],
    "method_params": [dict, None],
    "confidence": [Interval(Real, 0.5, 1, closed="left"), None],
    "margin": [Interval(Real, 0, None, closed="left"), "array-like", None],
    "max_iter": [Interval(Integral, 1, None, closed="left")],
    "tol": [Interval(Real, 0, None, closed="left")],
    "alpha": [Interval(Real, 0, None, closed="neither"), None],
    "random_state": ["random_state"],
    "verbose": ["verbose"],
}


@dataclass
class FitContext:
    """What one run of the fit template hands to the family's hooks.

    Attributes
    ----------
    method : Method
        The family's method (:meth:`GoalEstimator._method`).
    settings : object
        The method's validated settings (:meth:`GoalEstimator._settings`).
    inputs : dict
        The family's extra ``fit`` keywords (``datasets``, ``X_val``, ...), absent ones None.
    progress : Progress
    backend : DataBackend
        Where the training rows live (:mod:`goalfit.fit.backends`).
    problem : Problem
        The user's goals (untightened).
    constraints : list of Constraint
        The user's constraints tightened by ``margin`` (:func:`goalfit.fit.tighten`).
    compiled : CompiledProblem or None
        The objective and ``constraints`` compiled once on the training rows' space and checked
        by the method (None when the rows are not in memory); the first candidate reuses it
        (:meth:`GoalEstimator._compile_goals`).
    seed : int or None
        The family's seed for this fit (:meth:`GoalEstimator._fit_seed`).
    options : dict
        Template options of the caller (``classes`` and a family's budget for an incremental
        first call).
    state : dict
        Scratch space a family's hooks share within one fit (e.g. the last candidate's extras).
    """

    method: Method
    settings: object
    inputs: dict
    progress: Progress
    backend: DataBackend | None = None
    problem: Problem | None = None
    constraints: list | None = None
    compiled: CompiledProblem | None = None
    seed: int | None = None
    options: dict = field(default_factory=dict)
    state: dict = field(default_factory=dict)


class GoalEstimator(ClassifierMixin, BaseEstimator):
    """Base class of the goal-taking estimators (see the module docstring for the result protocol).

    :meth:`fit` is the one template every family runs: validate the parameters, read the data
    through its backend (:mod:`goalfit.fit.backends`), compile the goals, ``method.check``, then
    solve once (constraints tightened by ``margin``) or, with ``confidence``, fit candidates and
    run the safety test (:func:`goalfit.fit.certify`), and adopt the result protocol. A family
    supplies hooks, never its own ``fit``:

    ====================  ===================================================================
    ``_fit_inputs``       the extra ``fit`` keywords it reads (``("datasets",)``,
                          ``("X_val", "y_val", "sensitive_features_val")``, ...)
    ``_method()``         its :class:`~goalfit.fit.Method` (``method=`` resolved)
    ``_settings()``       the method's validated settings from ``method_params`` and the
                          constructor (validated once; errors name the ``method_params`` key)
    ``_fit_features(X)``  features as the family's model reads them (and ``n_features_in_``)
    ``_before_solve``     checks and extra inputs on the prepared rows (a validation sample)
    ``_run_params``       what ``method.solve`` receives for one candidate
    ``_adopt_details``    the family's fitted attributes from the result's ``details``
    ====================  ===================================================================

    Subclasses also declare ``_parameter_constraints`` (scikit-learn's table of types, ranges
    and allowed strings, checked at ``fit`` with a message naming the parameter and what is
    allowed).
    """

    _parameter_constraints: dict = {}
    #: Extra keyword inputs of ``fit`` this family reads (beyond sensitive_features, sample_weight).
    _fit_inputs: tuple = ()
    #: Whether the family's methods run on Dask collections (:func:`goalfit.fit.backends.data_backend`).
    _dask_support: bool = False

    # ------------------------------------------------------------------ parameters
    def check_params(self) -> None:
        """Validate every constructor parameter without data: types, ranges and allowed strings
        (the ``_parameter_constraints`` table), the ``method_params`` keys and values, and
        combinations that cannot work. ``fit`` calls it first; the command line calls it before
        reading any data.

        Raises
        ------
        ValueError, TypeError
            Naming the parameter and what it accepts.
        """
        conf = getattr(self, "confidence", None)
        if isinstance(conf, Real) and not isinstance(conf, bool) and 0 < float(conf) < 0.5:
            check_confidence(conf)  # alpha given as confidence: say so before the table's generic message
        self._validate_params()
        self._check_method_params()

    def _check_method_params(self) -> None:
        """Family-specific checks of ``method_params`` (and option combinations); by default, build
        the settings (:meth:`_settings` validates every key)."""
        self._settings()

    # ------------------------------------------------------------------ goals
    def _goal_problem(self) -> Problem:
        """The user's goals (before any tightening)."""
        return Problem(self.objective, self.constraints)

    def _fitted_goals(self) -> Problem:
        """The goals this fit minimized (``goals_``: resolved on the training rows), which
        evaluation on any rows measures; the user's goals for an estimator fitted before
        ``goals_`` existed (unpickled)."""
        goals = getattr(self, "goals_", None)
        return self._goal_problem() if goals is None else goals

    def _extra_columns(self):
        """Slicing columns computed from the features at fit and evaluation (churn's deployed model)."""
        return None

    # ------------------------------------------------------------------ the fit template
    def fit(self, X, y, *, sensitive_features=None, sample_weight=None, **inputs):
        """Fit the goals on ``(X, y)``: the one template of every family.

        Parameters
        ----------
        X : array-like, DataFrame or sparse matrix of shape (n_samples, n_features)
            (or what the family's model reads; a Dask collection for the families that run on
            Dask: :mod:`goalfit.fit.backends`)
        y : array-like of shape (n_samples,)
        sensitive_features : array-like, Series, DataFrame or dict, optional
            The slicing columns the goals name (groups; a deployed model's predictions).
        sample_weight : array-like of shape (n_samples,), optional
        **inputs
            The family's extra inputs (``_fit_inputs``): ``datasets=`` (ramp: extra named
            datasets the goals refer to), ``X_val=, y_val=, sensitive_features_val=``
            (surrogate, Lagrangian: a validation sample).

        Returns
        -------
        self

        Raises
        ------
        TypeError
            A keyword this family does not take, naming the ones it does.
        ValueError
            Bad parameters (naming them), data the goals cannot be stated on, a method that
            cannot express the goals (before any fitting, with the reason).

        Warns
        -----
        RuntimeWarning
            Goals that cannot all be met on the training sample (the least-violating rule is
            returned); with ``confidence``, a safety test that no candidate passed.
        """
        return self._fit_template(X, y, sensitive_features, sample_weight, inputs)

    def _fit_template(self, X, y, sensitive_features, sample_weight, inputs, **options):
        """:meth:`fit`, with template ``options`` (``classes`` for an incremental first call)."""
        t_start = time.perf_counter()
        self.check_params()
        unknown = sorted(set(inputs) - set(self._fit_inputs))
        if unknown:
            takes = ", ".join(("sensitive_features", "sample_weight") + tuple(self._fit_inputs))
            raise TypeError(f"{type(self).__name__}.fit() got an unexpected keyword argument {unknown[0]!r}; it "
                            f"takes {takes}")
        self._reset_fit()
        ctx = FitContext(self._method(), self._settings(), {k: inputs.get(k) for k in self._fit_inputs},
                         Progress(getattr(self, "verbose", 0), who=type(self).__name__), options=options)
        ctx.backend = self._fit_data(data_backend(X, self), X, y, sensitive_features, sample_weight, ctx)
        self.classes_ = ctx.backend.classes
        problem = self._goal_problem()
        data = ctx.backend.data
        if data is not None:  # choices the goals make from the data, fixed on the training rows
            problem = problem.resolved(data.space)
        ctx.problem = problem
        margins = resolve_margins(getattr(self, "margin", None), problem)
        self._before_solve(ctx)
        ctx.constraints = tighten(problem, margins)
        if data is not None:  # the goals' structure, before any fitting (compiled once: reused by the solve)
            ctx.compiled = self._compile_goals(ctx, ctx.constraints, data.space)
        ctx.seed = self._fit_seed()
        if getattr(self, "confidence", None) is not None:
            ctx.backend.require_in_memory("confidence")
        compiled, result, clf, margins, certification = self._fit_goals(ctx, data, margins)
        # rows on Dask: the goals were bound on the sample's space, which the compiled problem holds
        self.goals_ = problem if data is not None else problem.resolved(compiled.space)
        self._adopt(result, clf, compiled, method=result.method, margins=margins,
                    certification=certification, stacklevel=3)
        self.small_slices_ = check_slice_sizes(problem, result.confusion, data, stacklevel=3)
        self._adopt_details(ctx, result, compiled, certification)
        self.fit_seconds_ = time.perf_counter() - t_start
        ctx.progress.done()
        return self

    # ------------------------------------------------------------------ the template's hooks
    def _reset_fit(self) -> None:
        """Forget state a previous fit left that the next one must not reuse."""

    def _method(self) -> Method:
        """The family's :class:`~goalfit.fit.Method` for ``method=``."""
        raise NotImplementedError(f"{type(self).__name__} defines no method")

    def _settings(self):
        """The method's settings from ``method_params`` and the constructor, validated once."""
        return None

    def _safety_fraction(self, ctx) -> float:
        """The share of rows ``confidence=`` holds out (``method_params['safety_fraction']``)."""
        return getattr(ctx.settings, "safety_fraction", TEMPLATE_OPTIONS["safety_fraction"])

    def _fit_seed(self):
        """The seed of this fit's randomness (``ctx.seed``), the family's derivation from ``random_state``.

        Default (subdata, surrogate and its baselines): :func:`~goalfit.fit.as_seed`: an int
        as it is, one draw from a ``RandomState``, None stays None (each random step then draws
        fresh entropy). Three families keep their own derivation, because one shared rule would
        change the classifier that an existing script fits with the same ``random_state``:

        * ramp: one draw ``check_random_state(random_state).randint(2**31 - 1)``, so an int
          seeds the draw, not the solver (ramp fits and benchmark numbers made with an int
          seed reproduce), and None draws from NumPy's global generator (``np.random.seed``
          reproduces a fit, as with scikit-learn's estimators).
        * Lagrangian: always an int, recorded as ``seed_`` (PyTorch's ``manual_seed`` needs
          one): an int as it is, None drawn from the operating system's entropy so that
          ``random_state=model.seed_`` refits the same network; a ``RandomState`` is refused.
        * plug-in (GoalClassifier): None: no fit-wide seed; the base model, the cross-fitting
          folds, the sample split and the safety split each read ``random_state`` where they
          are made, so a ``RandomState`` is consumed as a stream as in scikit-learn (an int
          gives the same seed everywhere).

        The safety test of ``confidence=`` splits with ``as_seed(random_state)`` in every
        family (:meth:`_fit_goals`).
        """
        return as_seed(getattr(self, "random_state", None))

    def _fit_features(self, X):
        """The features as the family's model reads them (checked; records ``n_features_in_``)."""
        return X

    def _fit_data(self, backend, X, y, sensitive_features, sample_weight, ctx):
        """The training rows, in memory: one :func:`goalfit.fit.prepare` (``backend`` is always
        :class:`InMemoryData` here: :func:`~goalfit.fit.backends.data_backend` refuses Dask input
        unless the family sets ``_dask_support``, and such a family overrides this hook)."""
        check_inputs(X, y, sensitive_features, sample_weight)  # before X becomes an array (its index)
        if "X_val" in ctx.inputs:
            check_validation_inputs(ctx.inputs["X_val"], ctx.inputs.get("y_val"), ctx.inputs.get("sensitive_features_val"))
        X = self._fit_features(X)
        return InMemoryData(prepare(X, y, sensitive_features=sensitive_features, sample_weight=sample_weight,
                                    datasets=ctx.inputs.get("datasets"), extra_columns=self._extra_columns(),
                                    classes=ctx.options.get("classes"), who=type(self).__name__))

    def _before_solve(self, ctx) -> None:
        """Checks and extra inputs on the prepared rows (``ctx.backend.data``), before any fitting."""

    def _fit_candidate(self, ctx, constraints, data):
        """One run of the method on ``data`` with ``constraints``: ``(compiled, FitResult, classifier)``."""
        compiled = self._compile_goals(ctx, constraints, data.space)
        data, params = self._run_params(ctx, data)
        result = ctx.method.solve(data, compiled, params, ctx.progress)
        return compiled, result, result.members[0]

    def _compile_goals(self, ctx, constraints, space) -> CompiledProblem:
        """The objective and ``constraints`` compiled on ``space``, checked by the method.

        The template's own compile (``ctx.compiled``) when these are its tightened constraints
        on the training rows' space (a fit without ``confidence``); compiled and checked now
        otherwise (the candidates of a safety test: their rows, their margins).

        Raises
        ------
        UnsupportedGoal, ValueError
            As :meth:`goalfit.goals.Problem.compile` and ``method.check``.
        """
        if ctx.compiled is not None and constraints is ctx.constraints and space is ctx.compiled.space:
            return ctx.compiled
        problem = ctx.problem
        compiled = type(problem)(problem.objective, constraints).compile(space)
        ctx.method.check(compiled)
        return compiled

    def _run_params(self, ctx, data):
        """``(data, params)`` for ``method.solve`` on one candidate's rows (default: the settings' values)."""
        settings = ctx.settings
        return data, settings.params() if isinstance(settings, MethodSettings) else settings

    def _adopt_details(self, ctx, result, compiled, certification) -> None:
        """The family's fitted attributes, from the adopted result's ``details``."""

    def _fit_goals(self, ctx, data, margins):
        """Run the method on the goals: once on ``data`` with the constraints tightened by
        ``margins`` (``ctx.constraints``; ``ctx.compiled``: the goals with them on ``data``'s space,
        or None), or, with ``confidence``, as candidates and a safety test
        (:func:`goalfit.fit.certify`); without constraints ``confidence`` is ignored (UserWarning)
        and every row is used.

        Each fit is :meth:`_fit_candidate` (``(compiled, FitResult, classifier)``). Returns
        ``(compiled, result, classifier, margins, certification)`` for :meth:`_adopt`,
        ``certification`` the :class:`~goalfit.fit.Certification` or None.
        """
        problem, compiled = ctx.problem, ctx.compiled

        def fit_candidate(constraints, d):
            return self._fit_candidate(ctx, constraints, d)

        confidence = getattr(self, "confidence", None)
        if confidence is not None and not problem.constraints:  # nothing to certify: hold out no rows
            warnings.warn(f"confidence={confidence:g} is ignored: there are no constraints to certify, so the "
                          "fit uses every row (no safety part); drop confidence, or add constraints", UserWarning,
                          stacklevel=4)
        if confidence is None or not problem.constraints:
            if margins is not None and compiled is not None:  # margins that the goals' identities forbid
                check_tightenable(problem.compile(data.space), compiled.b, margins)
            compiled, result, clf = fit_candidate(ctx.constraints, data)
            return compiled, result, clf, margins, None
        cert = certify(fit_candidate, data, problem, margins, confidence, self._safety_fraction(ctx),
                       as_seed(self.random_state), stacklevel=5)
        return cert.compiled, cert.result, cert.classifier, cert.margins, cert

    def _adopt(self, result, classifier, compiled, *, method: str, margins=None, certification=None,
               stacklevel: int = 2) -> None:
        """Set the result protocol from a method's result on the compiled (tightened) goals.

        ``certification`` is the :class:`~goalfit.fit.Certification` of a ``confidence=`` fit
        (:func:`goalfit.fit.certify`; sets ``certification_``, ``certified_`` and
        ``safety_path_``), None otherwise. Warns (RuntimeWarning) when the
        constraints cannot all be met on the training sample, naming the worst one with the
        user's bound (and the tightened one).
        """
        cert = certification
        self.certification_ = None if cert is None else cert.report
        self.certified_ = None if cert is None else cert.certified
        self.safety_path_ = None if cert is None else cert.path
        self.result_ = result
        self.history_ = result.history
        self.classifier_ = classifier
        self.problem_ = compiled
        self.method_ = method
        self.margins_ = None if margins is None else list(margins)
        C = result.confusion
        self.max_violation_ = float(compiled.max_violation(C))
        self.feasible_ = self.max_violation_ <= FEASIBLE_TOL
        if compiled.constraints and not self.feasible_ and result.warn_infeasible:
            note = result.infeasible_note
            warnings.warn("the goals cannot all be met on the training data: returning the least-violating "
                          f"classifier ({self.violation_summary(C)})" + (f"; {note}" if note else ""),
                          RuntimeWarning, stacklevel=stacklevel + 1)

    def violation_summary(self, C) -> str:
        """The worst constraint of the training tensor ``C``: its value, the user's bound and the tightened one."""
        compiled = self.problem_
        user = self._fitted_goals().constraints
        worst = max(range(len(compiled.constraints)), key=lambda j: compiled.constraints[j].violation(C))
        cc = compiled.constraints[worst]
        text = (f"max violation {cc.violation(C):.4g}: {cc.constraint.expression.name} = {cc.value(C):.4g} "
                f"for the bound {cc.sense} {user[worst].bound:g}")
        if self.margins_ is not None and self.margins_[worst] > 0:
            text += f", tightened to {cc.bound:.4g} by the margin {self.margins_[worst]:.4g}"
        return text

    # ------------------------------------------------------------------ predicting
    def predict(self, X, *, sensitive_features=None, random_state=None, stratified=None):
        """Predicted labels, shape (n_samples,).

        A randomized rule samples, seeded by ``random_state`` (default the estimator's).
        ``stratified`` (default None: True) draws the batch's labels together, per group of
        ``sensitive_features``: each example keeps its label distribution (``predict_proba``)
        and each group's class counts stay close to the expected classifier's, so the batch's
        rates do not carry the binomial noise of independent draws. False: one independent draw
        per example (:meth:`goalfit.classifiers.RandomizedClassifier.predict`).
        """
        check_is_fitted(self, "classifier_")
        return data_backend(X, self).predict(self, X, sensitive_features=sensitive_features,
                                             random_state=random_state, stratified=stratified)

    def _predict_rows(self, X, *, sensitive_features=None, random_state=None, stratified=None):
        """:meth:`predict` on rows in memory."""
        check_inputs(X, sensitive_features=sensitive_features)  # rows and pandas indexes agree
        X = self._check_predict_X(X)
        rs = getattr(self, "random_state", None) if random_state is None else random_state
        if stratified is None:
            stratified = True
        if not isinstance(stratified, (bool, np.bool_)):
            raise ValueError(f"stratified must be True, False or None, got {stratified!r}")
        kw = {"stratified": True} if stratified and not self.classifier_.is_deterministic else {}
        return self.classifier_.predict(X, sensitive_features=sensitive_features, random_state=rs, **kw)

    def predict_proba(self, X, *, sensitive_features=None):
        """The deployed rule's class distribution per example, shape (n_samples, n_classes).

        Entry ``[l, j]`` is the probability that :meth:`predict` outputs ``classes_[j]`` for
        example ``l`` (one-hot for a deterministic rule), not an estimate of ``P(y | x)``.
        """
        check_is_fitted(self, "classifier_")
        return data_backend(X, self).predict_proba(self, X, sensitive_features=sensitive_features)

    def distribution(self, X, *, sensitive_features=None, classifier=None) -> np.ndarray:
        """Class distribution per example of a rule of this fit, shape (n_samples, n_classes).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features as at fit time (checked: their number and names).
        sensitive_features : optional
            For group-aware rules.
        classifier : object, optional
            Another rule of this fit (its ``fit_baseline``, a ``to_deterministic`` result, ...);
            default ``classifier_``.
        """
        check_is_fitted(self, "classifier_")
        check_inputs(X, sensitive_features=sensitive_features)  # rows and pandas indexes agree
        clf = self.classifier_ if classifier is None else classifier
        return np.asarray(clf.predict_proba(self._check_predict_X(X), sensitive_features=sensitive_features))

    def _check_predict_X(self, X):
        """Features at predict time (subclasses that own their features check their width and names)."""
        return X

    # ------------------------------------------------------------------ evaluating
    def evaluate(self, X, y=None, *, sensitive_features=None, sample_weight=None, datasets=None, confidence=None,
                 interval_method="auto", classifier=None) -> dict:
        """Objective and constraint values on (held-out) data, expected over the rule's randomization.

        Parameters
        ----------
        X, y, sensitive_features, sample_weight
            Labelled data; ``sensitive_features`` are the columns the goals name (a group-blind
            model never reads them, so groups unseen in training are fine there).
        datasets : dict, optional
            Extra named datasets the goals refer to with ``dataset=...`` (as at fit time).
        confidence : float in [0.5, 1), optional
            Add confidence intervals (:mod:`goalfit.metrics.intervals`): each covers the
            population value of the goal for this fitted classifier, given data drawn i.i.d.
        interval_method : {"auto", "clopper_pearson", "delta", "bootstrap"}
        classifier : object, optional
            Another rule of this fit to evaluate on the same goals (e.g. a
            :meth:`to_deterministic` result or a report's baseline); default ``classifier_``.

        Returns
        -------
        dict
            ``objective`` {name, value, loss, score, loss_label, score_label}: ``value`` and
            ``loss`` are the minimized value (``1 - F1`` for ``objective="f1"``), ``score`` the
            score the name says (F1) where the objective is ``1 - score``, else None
            (:func:`goalfit.metrics.objective_entry`); ``constraints`` [{name, expression,
            value, bound, sense, violation, met}], ``accuracy`` (labelled rows of the training
            dataset); with
            ``confidence`` also ``interval`` entries, ``met_with_confidence`` and
            ``accuracy_interval``. After a ``confidence=`` fit each constraint also carries
            ``certified_bound`` and ``certified``: the one-sided bound that the fit's safety test
            showed holds on the population at the fit's confidence, for the evaluated rule
            (``classifier_``, or a deterministic rule that :meth:`to_deterministic` re-tested).

        Raises
        ------
        ValueError
            Labels not among ``classes_``, a goal's group or class absent from the data (an
            empty slice), a goal on the labels of an unlabelled dataset, mismatched lengths.
        """
        check_is_fitted(self, "classifier_")
        if confidence is not None:
            confidence = check_confidence(confidence)
        return data_backend(X, self).evaluate(self, X, y, sensitive_features=sensitive_features,
                                              sample_weight=sample_weight, datasets=datasets, confidence=confidence,
                                              interval_method=interval_method, classifier=classifier)

    def _evaluate_rows(self, X, y=None, *, sensitive_features=None, sample_weight=None, datasets=None,
                       confidence=None, interval_method="auto", classifier=None) -> dict:
        """:meth:`evaluate` on rows in memory."""
        data = prepare(X, y, sensitive_features=sensitive_features, sample_weight=sample_weight,
                       datasets=datasets, extra_columns=self._extra_columns(), classes=self.classes_,
                       who=type(self).__name__, warn_groups=False)
        dist = self.distribution(data.X, sensitive_features=data.sensitive_features, classifier=classifier)
        problem = self._fitted_goals()
        compiled = problem.compile(data.space)
        if data.labelled is not None:
            check_goals_label_free(compiled, data.unlabelled_cells)
        C = confusion_tensor(data.y_codes, dist, data.cells, data.n_classes, data.encoder.n_cells, data.sample_weight)
        out = evaluate_compiled(problem, compiled, C)
        rows = data.train_rows
        w = data.weights() if rows is None else data.weights()[rows]
        codes = np.asarray(data.y_codes, dtype=np.intp)
        correct = dist[np.arange(len(codes)), codes] if rows is None else dist[rows, codes[rows]]
        out["accuracy"] = float(w @ correct / w.sum())
        if confidence is not None:
            add_intervals(out, problem, GoalSample(data.y_codes, dist, data.cells, data.space, data.sample_weight),
                          confidence, method=interval_method, random_state=as_seed(getattr(self, "random_state", None)),
                          accuracy=rows is None)
        cert = getattr(self if classifier is None else classifier, "certification_", None)
        if cert is not None:
            for entry, row in zip(out["constraints"], cert):
                entry["certified_bound"], entry["certified"] = row["certified_bound"], row["passed"]
        return out

    def plan_certification(self, X, y, *, sensitive_features=None, sample_weight=None, datasets=None, power=0.8,
                           confidence=None, safety_fraction=None, n_train=None, classifier=None, random_state=0):
        """Training rows needed to certify this classifier's goals (:func:`goalfit.plan_certification`).

        Measures the fitted rule (or ``classifier``) on ``(X, y)``, best held-out data, takes
        those values as the population's and predicts the probability that a ``confidence=``
        fit's safety test passes for it, against the training size.

        Parameters
        ----------
        X, y, sensitive_features, sample_weight, datasets
            Labelled data, as in :meth:`evaluate`.
        power : float in (0, 1), default 0.8
        confidence : float in [0.5, 1), optional
            Default: the estimator's ``confidence``, else 0.95.
        safety_fraction : float in (0, 1), optional
            Default: ``method_params["safety_fraction"]``, else 0.4.
        n_train : int, optional
            The training size to report the power at (default: the rows given).
        classifier : object, optional
            Another rule of this fit (e.g. a :meth:`to_deterministic` result).
        random_state : int, default 0

        Returns
        -------
        goalfit.metrics.planning.CertificationPlan

        Raises
        ------
        ValueError
            As :meth:`evaluate`; no constraints to certify.
        """
        from ..metrics.planning import plan_from_sample

        check_is_fitted(self, "classifier_")
        data = prepare(X, y, sensitive_features=sensitive_features, sample_weight=sample_weight,
                       datasets=datasets, extra_columns=self._extra_columns(), classes=self.classes_,
                       who=type(self).__name__, warn_groups=False)
        dist = self.distribution(data.X, sensitive_features=data.sensitive_features, classifier=classifier)
        if confidence is None:
            confidence = getattr(self, "confidence", None) or 0.95
        if safety_fraction is None:
            safety_fraction = (getattr(self, "method_params", None) or {}).get("safety_fraction", 0.4)
        return plan_from_sample(self._fitted_goals(), GoalSample(data.y_codes, dist, data.cells, data.space,
                                                                 data.sample_weight),
                                self.classes_, confidence=confidence, power=power, safety_fraction=safety_fraction,
                                n_train=n_train, random_state=random_state)

    def score(self, X, y, sample_weight=None, *, sensitive_features=None) -> float:
        """Expected accuracy of the deployed rule (over its randomization), in [0, 1].

        Raises
        ------
        ValueError
            Labels not among ``classes_``, mismatched lengths.
        """
        check_is_fitted(self, "classifier_")
        data = prepare(X, y, sample_weight=sample_weight, classes=self.classes_, who=type(self).__name__,
                       warn_groups=False)
        dist = np.asarray(self.predict_proba(X, sensitive_features=sensitive_features))
        codes = np.asarray(data.y_codes, dtype=np.intp)
        return float(np.average(dist[np.arange(len(codes)), codes], weights=data.sample_weight))

    # ------------------------------------------------------------------ the report's baseline
    def fit_baseline(self, X, y, *, sensitive_features=None, sample_weight=None, datasets=None):
        """The rule the report compares this fit with, on the same training data.

        Returns
        -------
        (name, classifier, seconds) or None
            A short name (``"unconstrained"``, ``"post-shift"``, ...), a rule with
            ``predict_proba(X, sensitive_features=)`` that :meth:`evaluate` accepts, and the
            seconds its fit took (0 when it comes with this fit); None when there is none.
        """
        return None

    def report_fields(self) -> dict:
        """Method-specific fields of the report (its ``method`` line, notes, history axes)."""
        return {"method": self.method_}


def check_goals_label_free(compiled, unlabelled_cells) -> None:
    """Refuse goals that read the (placeholder) labels of unlabelled datasets.

    Raises
    ------
    ValueError
        Naming the goal and the unlabelled datasets it covers.
    """
    space = compiled.space
    obj = compiled.objective
    if hasattr(obj, "coef"):
        check_label_free(obj.coef, space, unlabelled_cells, f"the objective {obj.name}")
    for cc in compiled.constraints:
        if cc.rows is not None:
            check_label_free(compiled.A[cc.rows], space, unlabelled_cells, f"the constraint {cc.name}")
