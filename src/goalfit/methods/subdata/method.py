"""Ye & Xie's unbiased subdata selection as a method on the compiled problem (:class:`SubdataMethod`).

The goals reach the method compiled (:meth:`goalfit.goals.Problem.compile`) and become the
selection measure of :mod:`.measure`: per example the weight of being right in the objective
(the accuracy term of Ye & Xie Eq. 1, ``1/N`` for the error) and, per constraint row, the
affine function of the correctness pattern ``z`` (the fairness measure ``F(z)`` of Table 3
generalised to any linear rate goal). The classifier is then trained by the iterative refining
strategy (``"irs"``), the mixed-integer program (``"mip"``) or enumeration (``"bruteforce"``).

Which goals keep the paper's exactness
--------------------------------------
*z-steps* (the selection for a fixed classifier; Props. 8, 13, 15):

* exact in ``O(N log N)``: no constraint; one constraint whose rows are one affine form of ``z``
  or a +/- pair (a two-sided bound on one difference) with at most two distinct per-example
  weights ``|alpha_i|`` - every difference of two group rates between two groups without
  sample weights (OMR = ``error_rate_difference``, FPR, equal opportunity / recall gap,
  demographic parity: Table 3, Eqs. 11a, 21a, 23a, 25), a one-sided rate bound
  (``coverage(group=g) >= c``, ``true_positive_rate(group=a) >= true_positive_rate(group=b) -
  eps``), ``f1() <= bound``; and the ``f1()`` objective (GSVM-F1, Eq. 35, Alg. 6)
  (:func:`~.zstep.select_structured`, :func:`~.zstep.select_f1`); multiclass goals that depend
  on correctness only reduce to these through Alg. 3;
* exact by a binary program on HiGHS with a time limit (``zstep_time_limit``; the history's
  ``zstep_exact`` says whether optimality was proven): several constraints, more than two
  groups, sample weights or any other weights (:func:`~.zstep.select_milp`).

*The MICP* (``method="mip"``, Props. 2, 5, 11, 14): exact (to SCIP's tolerances, within
``time_limit``) for every accepted goal with ``estimator="svm"`` (binary: Prop. 5 with the
goal rows as linear rows on ``z``; multiclass: Prop. 11) and ``estimator="logistic"`` (GLRF,
Eq. 31, as a MINLP). The integrality argument of Props. 1-2 (without the fairness term the
best selection is ``z_i = 1[u_i <= t]``; the objective pushes ``s_i = z_i u_i`` down, so only
the lower McCormick bounds (5) are needed) and the big-M of Prop. 3 (the accuracy term is at
least ``-t sum_i reward_i``) need a non-negative weight of being right on every example, which
:meth:`SubdataMethod.check` requires; Prop. 3's reference point is the best feasible selection
at ``w = 0`` (:func:`~.mip.reference_value`), not ``z = 0``, which violates most constraints.
With ``alpha = 0`` the SVM model is solved with indicator constraints on SCIP, or as a MILP on
HiGHS when ``method_params["big_m"]`` bounds the margins. ``"bruteforce"`` enumerates ``2^N``
selections (binary linear models, ``N <= 12``).

The IRS itself is a heuristic (Prop. 9: monotone for the linear SVM and logistic w-steps,
finite; Prop. 10 bounds its gap).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ...classifiers import LinearScorer, ModelClassifier, ScoreClassifier
from ...confusion import confusion_tensor
from ...fit import SILENT, FitResult, Method, UnsupportedGoal, refuse_constraints, require_binary, settings_dataclass
from ...goals import FEASIBLE_TOL
from .irs import irs
from .measure import FORMS, SelectionMeasure, check_selection_goals
from .mip import bruteforce_gsvmf, solve_glrf, solve_gmsvmf, solve_gsvmf, solve_gsvmf_milp
from .wstep import (EstimatorStep, KernelSVMStep, LinearArgmaxRule, LinearModel, LinearSVMStep, LogisticStep,
                    MulticlassSVMStep, PositiveProbabilityScore)
from .zstep import ZSTEP_SOLVERS, InfeasibleSelectionError

__all__ = ["SUBDATA_PARAMS", "SubdataMethod", "subdata_params", "make_learner", "deployed_rule", "ESTIMATORS",
           "INFEASIBLE_RHO"]

#: Built-in learners (``estimator=``): Alg. 2 (linear SVM, GSVMF), GLRF (Eq. 31), Alg. 4 (SVC).
ESTIMATORS = ("svm", "logistic", "kernel_svm")

#: ``method_params`` of the subdata methods and their defaults.
SUBDATA_PARAMS = {
    "decision_threshold": "fit",
    "form": "constraint",
    "rho": 1.0,
    "t": None,
    "w_solver": "auto",
    "n_restarts": 0,
    "iterate": "goals",
    "zstep": "auto",
    "zstep_time_limit": 60.0,
    "time_limit": 60.0,
    "big_m": None,
    "warm_start": True,
    "kernel": "rbf",
    "C": 1.0,
    "gamma": "scale",
    "degree": 3,
}

#: Penalty weight used when no selection meets every constraint (the penalty form then
#: minimizes the summed violations first: a violation of 0.01 outweighs any accuracy term).
INFEASIBLE_RHO = 100.0


def _number(v) -> bool:
    return isinstance(v, (int, float, np.number)) and not isinstance(v, (bool, np.bool_)) and np.isfinite(v)


def subdata_params(params: dict) -> dict:
    """``method_params`` of the subdata methods with their defaults, each value checked.

    Raises
    ------
    ValueError
        A value outside its allowed set or range, naming the key.
    """
    out = dict(SUBDATA_PARAMS, **(params or {}))
    for key, allowed in (("form", FORMS), ("w_solver", ("auto", "liblinear", "cvxpy")),
                         ("iterate", ("goals", "objective")), ("zstep", ZSTEP_SOLVERS),
                         ("kernel", ("rbf", "poly", "linear", "sigmoid"))):
        if out[key] not in allowed:
            raise ValueError(f"method_params[{key!r}] must be one of {list(allowed)}, got {out[key]!r}")
    for key in ("rho", "zstep_time_limit", "time_limit", "C"):
        if not (_number(out[key]) and out[key] >= 0):
            raise ValueError(f"method_params[{key!r}] must be a finite number >= 0, got {out[key]!r}")
    thr = out["decision_threshold"]
    if not ((isinstance(thr, str) and thr == "fit") or _number(thr)):
        raise ValueError(f"method_params['decision_threshold'] must be 'fit' or a finite number, got {thr!r}")
    if out["t"] is not None and not _number(out["t"]):
        raise ValueError(f"method_params['t'] must be a finite number or None, got {out['t']!r}")
    if out["big_m"] is not None and not (_number(out["big_m"]) and out["big_m"] > 0):
        raise ValueError(f"method_params['big_m'] must be a number > 0 or None, got {out['big_m']!r}")
    for key in ("n_restarts", "degree"):
        v = out[key]
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) or v < 0:
            raise ValueError(f"method_params[{key!r}] must be a non-negative integer, got {v!r}")
    if not isinstance(out["warm_start"], (bool, np.bool_)):
        raise ValueError(f"method_params['warm_start'] must be True or False, got {out['warm_start']!r}")
    return out


#: The settings of the subdata methods (:data:`SUBDATA_PARAMS`): one field per ``method_params`` key, checked by :func:`subdata_params`.
SubdataSettings = settings_dataclass("SubdataSettings", SUBDATA_PARAMS, subdata_params,
                           "Validated ``method_params`` of the subdata methods (and ``safety_fraction``); "
                           "built once per fit by ``SubdataSettings.from_params``.")


def make_learner(estimator, alpha: float, n_classes: int, params: dict, *, exact: bool = False):
    """The w-step of ``estimator`` (:mod:`.wstep`) and its default threshold ``t``.

    Parameters
    ----------
    estimator : {"svm", "logistic", "kernel_svm"} or classifier
        A classifier needs ``fit(X, y, sample_weight=)`` and ``predict_proba`` (Alg. 5).
    alpha : float >= 0
        Weight of ``||w||^2`` (linear models; the accuracy term is a weighted average).
    n_classes : int
    params : dict
        :func:`subdata_params` output (``w_solver``, ``kernel``, ``C``, ``gamma``, ``degree``,
        ``t``).
    exact : bool
        Use the exact QP w-step (the exact methods need it).

    Returns
    -------
    (learner, t)

    Raises
    ------
    UnsupportedGoal
        Multiclass targets with an estimator other than "svm".
    ValueError
        An unknown estimator name, a threshold outside the learner's range (logistic: ``t < 0``, a
        log-likelihood; a probabilistic estimator: ``0 < t < 1``).
    """
    if isinstance(estimator, str) and estimator not in ESTIMATORS:
        raise ValueError(f"estimator must be one of {list(ESTIMATORS)} or a classifier, got {estimator!r}")
    if n_classes > 2 and estimator != "svm":
        raise UnsupportedGoal(f"multiclass targets need estimator='svm' (GMSVMF, Ye & Xie Eq. 27); "
                              f"got {estimator if isinstance(estimator, str) else type(estimator).__name__!r}")
    t = params.get("t")
    if estimator == "svm":
        if n_classes > 2:
            return MulticlassSVMStep(alpha, n_classes), 1.0 if t is None else float(t)
        backend = "cvxpy" if exact or alpha == 0 else params.get("w_solver", "auto")
        return LinearSVMStep(alpha, backend=backend), 1.0 if t is None else float(t)
    if estimator == "logistic":
        t = float(np.log(0.5)) if t is None else float(t)
        if not t < 0:
            raise ValueError(f"estimator='logistic' needs t < 0 (a log-likelihood threshold, e.g. log(0.5)); "
                             f"got t = {t}: with t >= 0 no point can be selected")
        return LogisticStep(alpha), t
    if estimator == "kernel_svm":
        return KernelSVMStep(params.get("kernel", "rbf"), params.get("C", 1.0), params.get("gamma", "scale"),
                             params.get("degree", 3)), 1.0 if t is None else float(t)
    t = 0.5 if t is None else float(t)
    if not 0 < t < 1:
        raise ValueError(f"an estimator needs a probability threshold 0 < t < 1, got {t}")
    return EstimatorStep(estimator), t


def deployed_rule(learner, model, classes, threshold: float = 0.0):
    """The deployed deterministic rule of a w-step model (:mod:`goalfit.classifiers.scores`):
    ``f(x) > threshold`` for binary models (``predict_proba`` one-hot), the argmax for multiclass
    ones."""
    if isinstance(model, LinearModel):
        if np.ndim(model.w) == 2:
            return ModelClassifier(LinearArgmaxRule(model.w, model.b, classes), classes)
        return ScoreClassifier(LinearScorer(model.w, model.b), classes, threshold)
    if isinstance(learner, KernelSVMStep):
        return ScoreClassifier(model.decision_function, classes, threshold)
    return ScoreClassifier(PositiveProbabilityScore(model), classes, threshold)


def best_threshold(measure: SelectionMeasure, scores, positive, tol: float = FEASIBLE_TOL):
    """Best deterministic rule ``f(x) > threshold`` for the goals, exactly over the threshold.

    With the examples sorted by decreasing score, predicting the first ``k`` positive changes
    the objective and every constraint row by cumulative sums of per-example weights (a
    positive example predicted positive is right: ``+reward``, ``+alpha``; a negative one is
    wrong), so every ``k`` between distinct scores is evaluated in ``O(n m)`` after one sort.
    Among the thresholds whose rows are all at most ``tol`` it returns the lowest objective
    (ties: the threshold nearest to 0, the paper's rule); when none is, the smallest largest
    row, then the lowest objective. The ``f1()`` objective is evaluated as its ratio.

    Parameters
    ----------
    measure : SelectionMeasure
    scores : ndarray of shape (n,)
    positive : ndarray of bool, shape (n,)
        The examples of the positive class.
    tol : float
        Rows at most ``tol`` (rate units) count as met.

    Returns
    -------
    (threshold, objective, max_row)
    """
    f = np.asarray(scores, float)
    positive = np.asarray(positive, bool)
    n = len(f)
    sgn = np.where(positive, 1.0, -1.0)
    order = np.argsort(-f, kind="stable")
    fs = f[order]
    m = measure.n_rows
    base = measure.kappa + measure.alpha[:, ~positive].sum(axis=1) if m else np.zeros(0)
    rows = base + np.vstack([np.zeros((1, m)), np.cumsum((measure.alpha * sgn).T[order], axis=0)]) if m \
        else np.zeros((n + 1, 0))
    if measure.f1_labels is not None:
        tp = np.r_[0, np.cumsum(positive[order])]
        fp = np.r_[0, np.cumsum(~positive[order])]
        fn = positive.sum() - tp
        obj = (fn + fp) / np.maximum(2 * tp + fn + fp, 1e-300)
    else:
        obj = (measure.const - measure.reward[~positive].sum()) + np.r_[0.0, np.cumsum(
            (-measure.reward * sgn)[order])]
    valid = np.r_[True, fs[:-1] > fs[1:], True] if n else np.array([True])
    k = np.flatnonzero(valid)
    if n == 0:
        thr = np.zeros(1)
    else:
        inner = 0.5 * (fs[np.clip(k - 1, 0, n - 1)] + fs[np.clip(k, 0, n - 1)])
        thr = np.where(k == 0, fs[0] + 1.0, np.where(k == n, fs[-1] - 1.0, inner))
    viol = np.maximum(rows[k].max(axis=1), 0.0) if m else np.zeros(len(k))
    viol = np.where(viol <= tol, 0.0, viol)
    best = np.lexsort((np.abs(thr), np.round(obj[k], 12), viol))[0]
    return float(thr[best]), float(obj[k][best]), float(viol[best])


def _scores(learner, model, X):
    return np.asarray(learner.decision_function(model, X), float)


class _Tracker:
    """Evaluates every IRS iterate's deployed rule on the goals (training predictions, with its
    decision threshold); keeps the history and the best iterate."""

    def __init__(self, compiled, data, learner, X, measure, threshold, progress):
        self.compiled, self.data, self.learner, self.X, self.progress = compiled, data, learner, X, progress
        self.measure, self.threshold = measure, threshold
        self.rows, self.best, self.calls = [], None, 0
        self.t0 = time.perf_counter()

    def rule(self, model):
        """``(threshold, predicted codes)`` of a model."""
        s = _scores(self.learner, model, self.X)
        if s.ndim == 2:
            return 0.0, np.argmax(s, axis=1)
        thr = (best_threshold(self.measure, s, self.data.y_codes == 1)[0] if self.threshold == "fit"
               else float(self.threshold))
        return thr, (s > thr).astype(np.intp)

    def __call__(self, row, model, z):
        d = self.data
        thr, pred = self.rule(model)
        C = confusion_tensor(d.y_codes, pred, d.cells, d.n_classes, d.encoder.n_cells, d.sample_weight)
        obj = float(self.compiled.objective.value(C))
        viol = float(self.compiled.max_violation(C))
        if row["iteration"] > 0:
            self.calls += 1
        rec = {**row, "irs_objective": row["objective"], "objective": obj, "max_violation": viol,
               "threshold": thr, "oracle_calls": self.calls, "elapsed": time.perf_counter() - self.t0}
        self.rows.append(rec)
        key = (viol if viol > FEASIBLE_TOL else 0.0, obj, row["objective"])
        if self.best is None or key < self.best[0]:
            self.best = (key, model, np.array(z, copy=True), rec)
        self.progress.update(row["iteration"], objective=obj, max_violation=viol, restart=row["restart"])


@dataclass
class SubdataDetails:
    """What :class:`SubdataMethod` returns beside the deployed rule (``FitResult.details``).

    Attributes
    ----------
    selection : ndarray of bool, shape (n_samples,)
        The selection ``z`` (True: the example counts as right).
    fairness : float
        ``F(z)``, the selection's total violation of the constraints.
    n_selected : int
    selection_values : list of float
        Each constraint's value if the predictions were the selection's.
    selection_feasible : bool
        Whether the selection meets every constraint.
    model, learner
        The fitted model and the learner that fitted it (its step, for the report's baseline).
    threshold : float
        The deployed rule thresholds the model's scores here.
    t, rho, alpha : float
        The margin threshold, the fairness weight and the l2 weight used.
    form : str
        ``"constraint"`` or ``"penalty"`` (the goals as hard constraints or as ``rho F(z)``).
    iterate : str
        Which IRS iterate was returned (``"goals"`` or ``"objective"``).
    irs_objective : float
        ``H`` of the returned iterate (Eq. 1).
    n_iter : int
    converged : bool
    stop_reason : str
    mip : MIPResult or None
        The exact methods' solver result.
    zstep_exact : bool
        Whether every z-step was solved to optimality.
    zstep_solvers : list of str
    coef, intercept : ndarray or None
        For linear models, ``w`` and ``b``.
    """

    selection: np.ndarray
    fairness: float
    n_selected: int
    selection_values: list
    selection_feasible: bool
    model: object
    learner: object
    threshold: float
    t: float
    rho: float
    form: str
    alpha: float
    iterate: str
    irs_objective: float
    n_iter: int
    converged: bool
    stop_reason: str
    mip: object
    zstep_exact: bool
    zstep_solvers: list
    coef: np.ndarray | None = None
    intercept: np.ndarray | float | None = None


@dataclass
class SSVMDetails:
    """What :class:`SSVMMethod` returns beside the deployed rule: ``w``, ``b``, DC iterations, convergence."""

    w: np.ndarray
    b: float
    n_iter: int
    converged: bool


class SubdataMethod(Method):
    """Exact fairness by unbiased subdata selection (Ye & Xie, arXiv 2012.12356), for linear goals.

    Minimizes ``A(z, te - u) + alpha R(w) + rho F(z)`` (Eq. 1) over a classifier and a
    selection ``z`` (``z_i = 1``: example i counts as right at threshold ``t``; the classifier is
    trained on the selected examples), with ``A = sum_i reward_i z_i (u_i - t)`` (margins) or
    ``sum_i reward_i z_i (t - u_i)`` (scores) and ``F`` built from the compiled goals
    (:class:`~.measure.SelectionMeasure`). In the ``"constraint"`` form (default) every
    z-step keeps ``z`` within the goals (``F(z) = 0``); in the ``"penalty"`` form only ``rho
    F(z)`` is added (Eq. 12 / 22 / 24 / 26 with the goal's bound; the paper's form when the
    bound is 0). See the module docstring for which goals keep exact z-steps and the MICP.

    ``solve(data, compiled, params)`` reads ``data.X`` (a dense float array), the codes, cells
    and weights of ``data``, and ``params``: ``estimator`` ("svm", "logistic", "kernel_svm" or
    a classifier with ``sample_weight``), ``alpha`` (weight of ``||w||^2``, Ye & Xie's
    ``lambda``), ``max_iter``, ``tol``, ``random_state`` and the keys of
    :data:`SUBDATA_PARAMS`: ``decision_threshold`` (``"fit"``, default: the exact best threshold
    of the deployed rule ``f(x) > threshold`` for the goals on the training data,
    :func:`best_threshold`, at every iterate; a number fixes it, 0 being the paper's rule),
    ``form``, ``rho``, ``t`` (threshold: margin units for SVMs, default
    1; log-likelihood for logistic, default ``log 0.5``; probability for estimators, default
    0.5), ``w_solver``, ``n_restarts``, ``iterate`` (``"goals"``: return the IRS iterate whose
    training *predictions* meet the goals with the lowest objective, else the least violating;
    ``"objective"``: the paper's lowest ``H``), ``zstep`` ("auto", "structured", "milp"),
    ``zstep_time_limit``, ``time_limit`` (MIP seconds), ``big_m`` (MILP for ``alpha = 0``),
    ``warm_start`` (start the MIP from the IRS solution), ``kernel``, ``C``, ``gamma``,
    ``degree`` (``kernel_svm``).

    The result's single member is the deterministic rule of the returned model (``f(x) >
    threshold``; the argmax for multiclass). ``details`` (:class:`SubdataDetails`) hold the selection (``selection``, ``fairness``
    = ``F(z)``, ``n_selected``, ``selection_values``: each constraint's value if the
    predictions were the selection's), ``irs_objective`` (``H``), ``zstep_exact``,
    ``zstep_solvers``, ``n_iter``, ``converged``, ``stop_reason``, ``mip`` (a
    :class:`~.mip.MIPResult` or None), ``model``, ``learner``, ``threshold``, ``t``, ``rho``,
    ``form`` and, for linear models, ``coef`` / ``intercept``.
    """

    family = "subdata"

    def __init__(self, name: str = "irs"):
        if name not in ("irs", "mip", "bruteforce"):
            raise ValueError(f"subdata methods are 'irs', 'mip' and 'bruteforce', got {name!r}")
        self.name = name

    def check(self, compiled) -> None:
        """Refuse goals the selection cannot express (:func:`~.measure.check_selection_goals`).

        Raises
        ------
        UnsupportedGoal
        """
        check_selection_goals(compiled, self.name)
        if self.name == "bruteforce" and compiled.space.n_classes > 2:
            raise UnsupportedGoal("method 'bruteforce' is for binary problems (use 'irs' or 'mip')")

    def param_names(self) -> list[str]:
        return sorted(SUBDATA_PARAMS)

    # ------------------------------------------------------------------ solving
    def solve(self, data, compiled, params: dict, progress=SILENT) -> FitResult:
        p = subdata_params({k: v for k, v in params.items() if k in SUBDATA_PARAMS})
        alpha = float(params.get("alpha", 0.01))
        estimator = params.get("estimator", "svm")
        K = data.n_classes
        learner, t = make_learner(estimator, alpha, K, p, exact=self.name != "irs")
        X = np.asarray(data.X, dtype=float)
        yy = np.asarray(data.y_codes, dtype=np.intp) if K > 2 else np.where(data.y_codes == 1, 1, -1)
        meas = SelectionMeasure.from_compiled(compiled, data.y_codes, data.cells, data.sample_weight,
                                              form=p["form"], rho=p["rho"])
        note = ""
        try:
            out = self._run(learner, X, yy, meas, t, data, compiled, p, params, progress)
        except InfeasibleSelectionError:
            meas = meas.with_form("penalty", rho=max(p["rho"], INFEASIBLE_RHO))
            note = (f"no selection meets every goal on the training data: the penalty form with rho = "
                    f"{meas.rho:g} (least total violation of the selection); ")
            out = self._run(learner, X, yy, meas, t, data, compiled, p, params, progress)
        model, z, history, info = out
        thr, pred = info.pop("rule")
        C = confusion_tensor(data.y_codes, pred, data.cells, K, data.encoder.n_cells, data.sample_weight)
        zc = z[np.arange(len(yy)), yy] if z.ndim == 2 else z
        z_pred = np.where(zc > 0.5, data.y_codes, (np.asarray(data.y_codes) + 1) % K)
        Cz = confusion_tensor(data.y_codes, z_pred, data.cells, K, data.encoder.n_cells, data.sample_weight)
        classifier = deployed_rule(learner, model, data.classes, thr)
        message = note + info.pop("message")
        feasible_z = bool(meas.with_form("constraint").feasible(zc)) if meas.n_constraints else True
        cert = {"selection": zc > 0.5, "fairness": float(meas.fairness(zc)), "n_selected": int(np.sum(zc > 0.5)),
                "selection_values": [float(cc.value(Cz)) for cc in compiled.constraints],
                "selection_feasible": feasible_z, "model": model, "learner": learner, "threshold": float(thr),
                "t": float(t), "rho": float(meas.rho), "form": "penalty" if note else p["form"], "alpha": alpha,
                "iterate": p["iterate"], **info}
        if isinstance(model, LinearModel):
            cert["coef"], cert["intercept"] = model.w, model.b
        n_calls = sum(1 for h in history if h.get("iteration", 1) > 0)
        return FitResult.single(classifier, C, self.name, history=history, n_oracle_calls=n_calls,
                                feasible=bool(compiled.max_violation(C) <= FEASIBLE_TOL), message=message,
                                details=SubdataDetails(**cert),
                                warn_infeasible=False)  # the estimator says it, with what the selection meets

    def _run(self, learner, X, yy, meas, t, data, compiled, p, params, progress):
        """``(model, z, history, info)`` of the chosen method."""
        max_iter = int(params.get("max_iter", 50))
        tol = float(params.get("tol", 1e-8))
        seed = params.get("random_state")
        tracker = _Tracker(compiled, data, learner, X, meas, p["decision_threshold"], progress)
        zkw = {"zstep_solver": p["zstep"], "zstep_time_limit": p["zstep_time_limit"]}
        if self.name == "irs":
            progress.phase("iterative refining strategy (Ye & Xie Alg. 2)", max_iter)
            res = irs(learner, X, yy, measure=meas, t=t, max_iter=max_iter, tol=tol, n_restarts=p["n_restarts"],
                      random_state=seed, callback=tracker, **zkw)
            steps = [h for h in tracker.rows if h["iteration"] > 0]
            if p["iterate"] == "goals" and tracker.best is not None:
                _, model, z, rec = tracker.best
                H, chosen = rec["irs_objective"], f"iterate {rec['iteration']} of start {rec['restart']}"
            else:
                model, z, H, chosen = res.model, res.z, res.objective, "the lowest IRS objective"
            info = {"rule": tracker.rule(model), "irs_objective": float(H), "n_iter": int(res.n_iter),
                    "converged": bool(res.converged),
                    "stop_reason": res.stop_reason, "mip": None,
                    "zstep_exact": bool(all(h.get("zstep_exact", True) for h in steps)),
                    "zstep_solvers": sorted({h["zstep"] for h in steps if "zstep" in h}),
                    "message": f"IRS: {len(steps)} w-steps over {1 + p['n_restarts']} start(s), stopped by "
                               f"{res.stop_reason}; returned {chosen}"}
            return model, z, tracker.rows, info
        t0 = time.perf_counter()
        progress.phase(f"exact {self.name} (Ye & Xie MICP)")
        estimator = params.get("estimator", "svm")
        if self.name == "bruteforce":
            if not isinstance(learner, LinearSVMStep) and not isinstance(learner, LogisticStep):
                raise UnsupportedGoal("method 'bruteforce' supports estimator 'svm' and 'logistic' (binary)")
            r = bruteforce_gsvmf(X, yy, learner=learner, measure=meas, t=t)
        elif isinstance(learner, MulticlassSVMStep):
            r = solve_gmsvmf(X, yy, lam=learner.lam, t=t, measure=meas, time_limit=p["time_limit"])
        elif isinstance(learner, LinearSVMStep):
            start = None
            if p["warm_start"]:
                ws = irs(learner, X, yy, measure=meas, t=t, max_iter=max_iter, tol=tol, **zkw)
                start = (ws.model.w, ws.model.b, ws.z)
            if learner.lam > 0 and p["big_m"] is None:
                r = solve_gsvmf(X, yy, measure=meas, lam=learner.lam, t=t, time_limit=p["time_limit"],
                                warm_start=start)
            elif learner.lam == 0 and p["big_m"] is not None:
                r = solve_gsvmf_milp(X, yy, measure=meas, t=t, big_m_value=p["big_m"], time_limit=p["time_limit"])
            else:
                r = solve_gsvmf(X, yy, measure=meas, lam=learner.lam, t=t, time_limit=p["time_limit"],
                                big_m_value=p["big_m"], formulation="big_m" if learner.lam > 0 else "indicator",
                                warm_start=start)
        elif isinstance(learner, LogisticStep):
            r = solve_glrf(X, yy, measure=meas, lam=learner.lam, t=t, time_limit=p["time_limit"])
        else:
            raise UnsupportedGoal(f"method {self.name!r} supports estimator 'svm' and 'logistic' (kernel SVMs and "
                                  f"other estimators have no mixed-integer form); got {estimator!r}")
        if not np.isfinite(r.objective):
            if r.status == "infeasible":
                raise InfeasibleSelectionError(f"no selection meets {meas.names}")
            raise ValueError(f"the exact solver found no feasible solution ({r.status})")
        model = LinearModel(np.asarray(r.w), r.b)
        row = {"restart": 0, "iteration": 1, "objective": r.objective, "objective_after_zstep": r.objective,
               "fairness": r.fairness, "n_selected": int(np.sum(r.z[np.arange(len(yy)), yy] if r.z.ndim == 2
                                                                else r.z)),
               "seconds": time.perf_counter() - t0, "zstep": self.name, "zstep_exact": bool(r.optimal)}
        tracker(row, model, r.z)
        info = {"rule": tracker.rule(model), "irs_objective": float(r.objective), "n_iter": 1,
                "converged": bool(r.optimal),
                "stop_reason": r.status, "mip": r, "zstep_exact": bool(r.optimal), "zstep_solvers": [self.name],
                "message": f"{self.name}: status {r.status}, objective {r.objective:.6g}, dual bound {r.bound:.6g}, "
                           f"gap {r.gap:.3g}"}
        return model, r.z, tracker.rows, info


class SSVMMethod(Method):
    """The spectral fair SVM of Olfat & Aswani (2018) as a method: the SSVM baseline of Ye & Xie Table 6.

    Binary labels, the error as the objective (the SVM minimizes its hinge surrogate), the groups
    from one sensitive column of two values (none: the hinge SVM). ``params`` holds ``d``,
    ``mu``, ``alpha`` (``lam`` of :func:`goalfit.methods.subdata.ssvm.fit_ssvm`), ``max_iter``
    and ``tol``; the result's member is a :class:`~goalfit.classifiers.ScoreClassifier` over the
    linear scores, its ``details`` (:class:`SSVMDetails`) ``w``, ``b``, ``n_iter`` and ``converged``.
    """

    name = "ssvm"
    family = "subdata"

    def __init__(self, name: str = "ssvm"):
        self.name = name

    def check(self, compiled) -> None:
        """Binary labels, no rate constraints (its fairness is the moment bounds ``d`` and ``mu``)."""
        require_binary(compiled, "ssvm")
        refuse_constraints(compiled, "ssvm", "its fairness is the moment bounds d and mu")

    def param_names(self) -> list[str]:
        return ["d", "mu", "alpha", "max_iter", "tol"]

    def solve(self, data, compiled, params: dict, progress=SILENT) -> FitResult:
        from .ssvm import fit_ssvm

        t0 = time.perf_counter()
        X = data.X
        g = np.where(np.asarray(data.cells) == 1, 1, -1) if data.encoder.columns_ else None
        yy = np.where(data.y_codes == 1, 1, -1)
        m = fit_ssvm(X, yy, g, d=params["d"], mu=params["mu"], lam=params["alpha"], max_iter=params["max_iter"],
                     tol=params["tol"], sample_weight=data.sample_weight)
        clf = ScoreClassifier(LinearScorer(m.w, m.b), data.classes, 0.0)
        pred = (X @ m.w + m.b > 0).astype(np.intp)
        C = confusion_tensor(data.y_codes, pred, data.cells, 2, data.encoder.n_cells, data.sample_weight)
        n_iter = int(m.extra["n_iter"])
        history = [{"iteration": n_iter, "objective": float(compiled.objective.value(C)), "max_violation": 0.0,
                    "seconds": time.perf_counter() - t0, "oracle_calls": n_iter}]
        return FitResult.single(clf, C, "ssvm", history=history, n_oracle_calls=n_iter,
                                message=f"DC loop: {m.extra['n_iter']} QCQPs, converged {m.extra['converged']}",
                                details=SSVMDetails(m.w, float(m.b), n_iter, bool(m.extra["converged"])))
