"""Baselines of Jiang et al. (ICML 2020), §6: post-shift on a black-box metric and Relaxed-FM.

* :func:`best_threshold` -- post-shift (Koyejo et al. 2014; Narasimhan et al. 2014): one
  threshold on a fitted model's scores, chosen to minimize the objective on a sample (the
  validation set when the training data are noisy, §6.2-6.5), feasible first when there are
  constraints. The paper calls it a required baseline. The core's
  ``GoalClassifier(method="post_shift")`` thresholds a probability model per group.
* :func:`relaxed_macro_f1` -- Relaxed-FM (§6.2, e.g. Zhao et al. 2019a): the macro F-measure
  over groups with the indicator counts replaced by hinge bounds,
  ``F~_G = 2 (n+_G - FN~_G) / (2 n+_G - FN~_G + FP~_G)`` with
  ``FN~_G = sum_{pos in G} max(0, 1 - s_i) >= FN_G`` and
  ``FP~_G = sum_{neg in G} max(0, 1 + s_j) >= FP_G`` (a lower bound of F_G, since F_G increases
  in TP and decreases in FP), maximized by L-BFGS-B; as in the paper the iterate with the best
  validation metric is kept. The hinge count ``FN~_G`` exceeds ``n+_G`` when positives score
  below 0 on average (a logistic-regression start on imbalanced data), and the denominator
  ``2 n+ - FN~ + FP~`` can then reach 0 or below; past ``FN~_G = n+_G`` (where ``F~_G = 0``)
  the relaxation continues along its tangent, which stays below ``F_G >= 0``, has a positive
  denominator and keeps pushing ``FN~`` down (:func:`relaxed_f_measure`).

Both run as methods on the compiled problem behind the fit template
(:class:`PostShiftMethod`, :class:`RelaxedFMMethod`, returning :class:`PostShiftDetails` and
:class:`RelaxedFMDetails`), for :class:`~goalfit.BlackBoxPostShiftClassifier` and
:class:`~goalfit.RelaxedFMClassifier`. They are not in the registry :mod:`goalfit.methods`: a
registry name is a ``method=`` of a family's estimator (and the command line's ``method``),
while a baseline is chosen by its own estimator class; ``"post_shift"`` names the plug-in
family's per-group post-shift there.
"""
from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral

import numpy as np
from scipy.optimize import minimize

from ...classifiers import LinearScorer as DeployedLinearScorer
from ...classifiers import ScoreClassifier
from ...confusion import confusion_tensor
from ...fit import SILENT, FitResult, Method, UnsupportedGoal, refuse_constraints, require_binary, settings_dataclass
from ...goals import FEASIBLE_TOL, Problem
from .._scan import GRID_SIZE
from .method import Selection, linear_start
from .models import LinearScorer
from .problem import BlackBoxProblem, SampleGoals
from .slices import build_surrogates

__all__ = ["PostShiftDetails", "PostShiftMethod", "PostShiftSettings", "RelaxedFMDetails", "RelaxedFMMethod",
           "best_threshold", "relaxed_f_measure", "relaxed_macro_f1"]


def best_threshold(scores, goals, *, grid_size=GRID_SIZE, chunk_elements=4_000_000):
    """The threshold t of the rule ``scores > t`` that is best for the goals on a sample.

    Feasible first: among the thresholds meeting every constraint, the lowest objective; when
    none does, the smallest largest violation (then the lowest objective). The candidates are
    just below each distinct score of the rows with a positive weight (at most ``grid_size`` of
    them, evenly spaced in rank), plus one threshold above all: the same candidates whether a
    row is repeated or weighted.

    Parameters
    ----------
    scores : array of shape (n,)
        A fitted model's scores on the sample of ``goals``.
    goals : SampleGoals
        The objective and constraints on that sample (:class:`.problem.SampleGoals`).
    grid_size : int, default 1000
        Largest number of distinct scores tried.
    chunk_elements : int
        Scores held at once.

    Returns
    -------
    (threshold, objective, max violation) : floats

    Raises
    ------
    ValueError
        On NaN scores or a length mismatch.
    """
    scores = np.asarray(scores, dtype=float)
    if np.isnan(scores).any():
        raise ValueError("scores contain NaN")
    if scores.shape != (goals.n,):
        raise ValueError(f"scores have shape {scores.shape} but the sample has {goals.n} rows")
    w = goals.sample_weight
    q = np.unique(scores if w is None else scores[w > 0])
    if len(q) > grid_size:
        q = q[np.unique(np.linspace(0, len(q) - 1, int(grid_size)).round().astype(np.intp))]
    # candidate thresholds just below each distinct score so that ``s > t`` includes it
    grid = np.concatenate([q - 1e-12 * np.maximum(1.0, np.abs(q)), [q[-1] + 1.0]])
    step = max(1, chunk_elements // max(len(scores), 1))
    obj, viol = (np.concatenate(parts) for parts in zip(*[goals.assess_many(scores[None, :] - grid[i:i + step, None])
                                                          for i in range(0, len(grid), step)]))
    k = int(np.lexsort((obj, np.where(viol <= FEASIBLE_TOL, 0.0, viol)))[0])
    return float(grid[k]), float(obj[k]), float(viol[k])


def relaxed_f_measure(fn, fp, n_pos):
    """Relaxed F-measure per group and its derivatives in the relaxed counts.

    ``F~ = 2 (n+ - FN~) / (2 n+ - FN~ + FP~)`` for ``FN~ <= n+``: a lower bound of the
    F-measure whenever ``FN~ >= FN`` and ``FP~ >= FP`` (F decreases in FN and FP). For
    ``FN~ > n+`` the formula's denominator can vanish or turn negative, so F~ continues along
    its tangent at ``FN~ = n+`` (where it is 0): ``F~ = -2 (FN~ - n+) / (n+ + FP~)``, below 0
    and hence still a lower bound of ``F >= 0``, continuous with its derivative, and with a
    denominator ``>= n+ > 0``.

    Parameters
    ----------
    fn, fp : arrays of shape (G,)
        Relaxed false-negative and false-positive counts (sums of hinge losses), ``>= 0``.
    n_pos : array of shape (G,)
        Positive examples per group, ``> 0``.

    Returns
    -------
    (f, d_fn, d_fp) : arrays of shape (G,)
        F~ per group and its partial derivatives in ``FN~`` and ``FP~``.

    Raises
    ------
    ValueError
        If a group has no positive example (F undefined), or counts are negative or NaN.
    """
    fn, fp, n_pos = (np.asarray(a, dtype=float) for a in (fn, fp, n_pos))
    if not (n_pos > 0).all():
        raise ValueError("Relaxed-FM needs examples of the positive class in every group (F1 is undefined "
                         f"otherwise); positive-class weight per group: {n_pos.tolist()}")
    if not ((fn >= 0).all() and (fp >= 0).all()):
        raise ValueError("relaxed counts must be non-negative (and not NaN)")
    inside = fn <= n_pos
    den = np.where(inside, 2 * n_pos - fn + fp, n_pos + fp)  # >= n_pos + fp > 0 on both branches
    over = fn - n_pos
    f = np.where(inside, 2 * (n_pos - fn) / den, -2 * over / den)
    # inside: dF/dFN = -2 (n+ + FP) / den^2, dF/dFP = -2 (n+ - FN) / den^2 (den = 2n+ - FN + FP);
    # tangent: dF/dFN = -2 / (n+ + FP), dF/dFP = 2 (FN - n+) / (n+ + FP)^2; equal at FN = n+
    d_fn = np.where(inside, -2 * (n_pos + fp) / den**2, -2 / den)
    d_fp = np.where(inside, -2 * (n_pos - fn) / den**2, 2 * over / den**2)
    return f, d_fn, d_fp


def relaxed_macro_f1(problem, theta0, *, max_iter=200):
    """Relaxed-FM: maximize the hinge-relaxed macro-F over groups; keep the best validation iterate.

    Parameters
    ----------
    problem : BlackBoxProblem
        Its surrogates must be the hinge pos/neg pair of each group, in the order of
        :func:`~goalfit.methods.surrogate.make_rate_surrogates` (positive then negative).
    theta0 : array of shape (d,)
    max_iter : int, default 200

    Returns
    -------
    (theta, validation metric, list of (iteration, validation metric))

    Raises
    ------
    ValueError
        If the surrogates are not hinge (pos, neg) pairs (a group without examples of one
        class), or a group has no positive example.
    """
    sur = problem.surrogates
    pairs = list(zip(sur.surrogates[0::2], sur.surrogates[1::2]))
    if len(sur) % 2 or any(p.label != 1 or n.label != -1 or p.group != n.group or p.loss.name != "hinge"
                           or n.loss.name != "hinge" for p, n in pairs):
        raise ValueError("Relaxed-FM needs hinge surrogates as (positive, negative) pairs per group: every group "
                         "needs examples (of positive weight) of both classes")
    sw = sur.sample_weight  # weighted counts: FN~ and FP~ are weighted sums of hinge losses

    def count(idx):
        return float(len(idx) if sw is None else sw[idx].sum())

    n_pos = np.array([count(i) for i in sur.index[0::2]])
    n_neg = np.array([count(i) for i in sur.index[1::2]])

    def negative_relaxed_f(theta):
        s = problem.scorer.scores(theta)
        v = sur.values(s)
        f, d_fn, d_fp = relaxed_f_measure(v[0::2] * n_pos, v[1::2] * n_neg, n_pos)
        dv = np.empty(len(v))  # chain rule through FN~ = n+ * phi_pos, FP~ = n- * phi_neg
        dv[0::2], dv[1::2] = d_fn * n_pos, d_fp * n_neg
        G = len(n_pos)
        return -f.mean(), problem.scorer.backprop(theta, sur.score_vjp(s, -dv / G))

    iterates = [np.asarray(theta0, dtype=float).copy()]
    minimize(negative_relaxed_f, iterates[0], jac=True, method="L-BFGS-B",
             callback=lambda xk: iterates.append(np.array(xk, copy=True)), options={"maxiter": int(max_iter)})
    vals = problem.metric_many(np.array(iterates))
    k = int(np.argmin(vals))
    return iterates[k], float(vals[k]), list(enumerate(vals.tolist()))


def _check_post_shift(params: dict) -> dict:
    """``method_params`` of post-shift with their defaults: ``grid_size`` an integer >= 2.

    Raises
    ------
    ValueError
        Naming ``method_params['grid_size']``.
    """
    out = {"grid_size": GRID_SIZE, **params}
    grid_size = out["grid_size"]
    if isinstance(grid_size, (bool, np.bool_)) or not isinstance(grid_size, (Integral, np.integer)) or grid_size < 2:
        raise ValueError(f"method_params['grid_size'] must be an integer >= 2, got {grid_size!r}")
    out["grid_size"] = int(grid_size)
    return out


#: The settings of :class:`PostShiftMethod`: ``grid_size``, the largest number of threshold candidates.
PostShiftSettings = settings_dataclass("PostShiftSettings", {"grid_size": GRID_SIZE}, _check_post_shift,
                                       "Validated ``method_params`` of post-shift (``grid_size``: the largest "
                                       "number of threshold candidates); built once per fit.")


@dataclass
class PostShiftDetails:
    """What :class:`PostShiftMethod` returns beside the deployed rule (``FitResult.details``).

    Attributes
    ----------
    threshold : float
        The rule is ``estimator.decision_function(x) > threshold``.
    estimator : object
        The fitted model (a clone of the one given).
    selection : Selection
        Where the threshold was chosen (``"training"`` or ``"validation"``) and the objective and
        largest violation there (``restart`` and ``iteration`` are 0: one pass over the candidates).
    n_candidates : int
        Thresholds tried (at most ``grid_size + 1``).
    """

    threshold: float
    estimator: object
    selection: Selection
    n_candidates: int


class PostShiftMethod(Method):
    """Post-shift on a black-box objective (Jiang et al. §6; Koyejo et al. 2014): one threshold on a
    fitted model's scores, the best for the goals on the selection sample, feasible first.

    ``solve(data, compiled, params)`` fits ``params["estimator"]`` (a clone; default
    ``LogisticRegression(max_iter=1000)``) on the class codes of ``data`` (1: the positive class)
    with its sample weights, then picks the threshold of its ``decision_function`` by
    :func:`best_threshold` on ``params["selection"]`` (``(PreparedData, CompiledProblem)`` of a
    validation sample; default the training sample), with ``params["metric"]`` (a
    :class:`~goalfit.goals.BlackBoxMetric` when the objective is known only by evaluation) and
    ``params["grid_size"]``. The result's member is the deterministic
    :class:`~goalfit.classifiers.ScoreClassifier`; ``details`` are :class:`PostShiftDetails`.
    Constraints that cannot be met on the training sample warn only when it selected.
    """

    name = "post_shift"
    family = "surrogate"

    def check(self, compiled) -> None:
        """Binary labels and polyhedral constraints (the selection measures their rows).

        Raises
        ------
        UnsupportedGoal
        """
        require_binary(compiled, self.name)
        for c in compiled.constraints:
            if c.rows is None:
                raise UnsupportedGoal(f"post-shift needs polyhedral constraints; {c.name!r} has none")

    def param_names(self) -> list[str]:
        return ["grid_size"]

    def solve(self, data, compiled, params: dict, progress=SILENT) -> FitResult:
        from sklearn.base import clone
        from sklearn.linear_model import LogisticRegression

        grid_size = int(params.get("grid_size", GRID_SIZE))
        selection = params.get("selection")
        estimator = params.get("estimator")
        model = clone(estimator if estimator is not None else LogisticRegression(max_iter=1000))
        codes = np.asarray(data.y_codes, dtype=np.intp)
        if data.sample_weight is None:
            model.fit(data.X, codes)
        else:
            model.fit(data.X, codes, sample_weight=data.sample_weight)
        sel_data, sel_compiled = selection if selection is not None else (data, compiled)
        s = np.asarray(model.decision_function(sel_data.X), dtype=float)
        t, obj, viol = best_threshold(s, SampleGoals(sel_data, sel_compiled, params.get("metric")),
                                      grid_size=grid_size)
        clf = ScoreClassifier(model.decision_function, data.classes, t)
        pos = (np.asarray(model.decision_function(data.X), dtype=float) > t).astype(np.intp)
        C = confusion_tensor(codes, pos, data.cells, 2, data.encoder.n_cells, data.sample_weight)
        sample = "training" if selection is None else "validation"
        details = PostShiftDetails(t, model, Selection(sample, 0, 0, obj, viol, viol <= FEASIBLE_TOL), grid_size + 1)
        return FitResult.single(
            clf, C, self.name,
            history=[{"iteration": 0, "objective": float(obj), "max_violation": float(viol), "seconds": 0.0}],
            n_oracle_calls=grid_size + 1, feasible=bool(compiled.max_violation(C) <= FEASIBLE_TOL),
            message=f"threshold {t:.4g}, the best of at most {grid_size + 1} candidates on the {sample} sample",
            details=details, warn_infeasible=selection is None)


@dataclass
class RelaxedFMDetails:
    """What :class:`RelaxedFMMethod` returns beside the deployed rule (``FitResult.details``).

    Attributes
    ----------
    theta : ndarray of shape (d,)
        The selected iterate ``[w, b]`` (``b`` with an intercept).
    coef : ndarray of shape (n_features,)
    intercept : float
    selection : Selection
        The sample the iterate was chosen on, its L-BFGS-B iteration and objective there.
    metric_path : list of (int, float)
        (iteration, objective on the selection sample) of every iterate.
    """

    theta: np.ndarray
    coef: np.ndarray
    intercept: float
    selection: Selection
    metric_path: list


class RelaxedFMMethod(Method):
    """Relaxed-FM (Jiang et al. §6.2 baseline): a linear model maximizing the hinge-relaxed macro-F
    over groups by L-BFGS-B, keeping the iterate best on the selection sample
    (:func:`relaxed_macro_f1`).

    ``solve(data, compiled, params)`` reads ``params``: ``relaxed`` (the
    :class:`~goalfit.goals.MacroF1OverGroupsLoss` whose groups are relaxed), ``max_iter``,
    ``init`` and ``fit_intercept`` (:func:`.method.linear_start`), ``metric`` and ``selection``
    (as :class:`PostShiftMethod`). ``details`` are :class:`RelaxedFMDetails`.
    """

    name = "relaxed_fm"
    family = "surrogate"

    def check(self, compiled) -> None:
        """Binary labels, no constraints.

        Raises
        ------
        UnsupportedGoal
        """
        require_binary(compiled, self.name)
        refuse_constraints(compiled, self.name, "use AdaptiveSurrogateClassifier or BlackBoxPostShiftClassifier")

    def solve(self, data, compiled, params: dict, progress=SILENT) -> FitResult:
        fit_intercept = bool(params.get("fit_intercept", True))
        selection = params.get("selection")
        surs, _ = build_surrogates("hinge", data, Problem(params["relaxed"]).compile(data.space))
        scorer = LinearScorer(data.X, fit_intercept)
        codes = np.asarray(data.y_codes, dtype=np.intp)
        theta0 = linear_start(params.get("init", "logistic"), data.X, codes, fit_intercept, data.sample_weight)
        sel_data, sel_compiled = selection if selection is not None else (data, compiled)
        problem = BlackBoxProblem(scorer, surs, SampleGoals(sel_data, sel_compiled, params.get("metric")),
                                  scorer.with_data(sel_data.X))
        theta, value, path = relaxed_macro_f1(problem, theta0, max_iter=params.get("max_iter", 200))
        coef, intercept = scorer.coef_intercept(theta)
        clf = ScoreClassifier(DeployedLinearScorer(coef, intercept), data.classes, 0.0)
        pos = (scorer.scores(theta) > 0).astype(np.intp)
        C = confusion_tensor(codes, pos, data.cells, 2, data.encoder.n_cells, data.sample_weight)
        best = min(range(len(path)), key=lambda i: path[i][1])  # relaxed_macro_f1's argmin
        sample = "training" if selection is None else "validation"
        details = RelaxedFMDetails(theta, coef, intercept, Selection(sample, 0, best, value, 0.0, True), path)
        history = [{"iteration": it, "objective": float(v), "max_violation": 0.0} for it, v in path]
        return FitResult.single(clf, C, self.name, history=history, n_oracle_calls=len(path),
                                message=f"{len(path) - 1} L-BFGS-B iterations", details=details)
