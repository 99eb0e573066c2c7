"""Goh et al.'s ramp method as a method on the compiled problem (:class:`RampMethod`)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...classifiers import LinearScorer, ScoreClassifier
from ...confusion import confusion_tensor
from ...fit import SILENT, FitResult, Method, require_binary, require_linear, settings_dataclass
from ...goals import FEASIBLE_TOL, compile_rate_program
from .cutting_plane import CHOOSERS
from .mm import majorization_minimization
from .rates import best_threshold, ramp
from .svm import INNER_SOLVERS, solve_weighted_svm

MULTIPLIER_SOLVERS = ("cutting_plane", "cvxpy")

#: ``method_params`` of the ramp method and their defaults.
RAMP_PARAMS = {
    "decision_threshold": "fit",
    "init": "zeros",
    "multiplier_solver": "cutting_plane",
    "chooser": "auto",
    "max_cutting_plane_iter": 30,
    "cutting_plane_tol": 1e-4,
    "cutting_plane_rel_tol": 0.5,
    "max_multiplier": 1e4,
    "inner_solver": "dcd",
    "inner_tol": 1e-4,
    "intercept_scaling": 1.0,
    "max_feasibility_iter": None,
    "feasibility_alpha": None,
}


def ramp_params(params: dict) -> dict:
    """``method_params`` of the ramp method with their defaults, each value checked.

    Raises
    ------
    ValueError
        A value outside its allowed set or range, naming the key.
    """
    out = dict(RAMP_PARAMS, **(params or {}))
    for key, allowed in (("multiplier_solver", MULTIPLIER_SOLVERS), ("chooser", CHOOSERS),
                         ("inner_solver", INNER_SOLVERS), ("init", ("zeros", "unconstrained"))):
        if out[key] not in allowed:
            raise ValueError(f"method_params[{key!r}] must be one of {list(allowed)}, got {out[key]!r}")
    t = out["decision_threshold"]
    if not ((isinstance(t, str) and t == "fit") or (isinstance(t, (int, float, np.number))
                                                    and not isinstance(t, (bool, np.bool_)) and np.isfinite(t))):
        raise ValueError(f"method_params['decision_threshold'] must be 'fit' or a finite number, got {t!r}")
    for key in ("max_cutting_plane_iter", "max_feasibility_iter"):
        v = out[key]
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1):
            raise ValueError(f"method_params[{key!r}] must be a positive integer, got {v!r}")
    v = out["feasibility_alpha"]
    if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float, np.number)) or not v > 0
                          or not np.isfinite(v)):
        raise ValueError(f"method_params['feasibility_alpha'] must be a positive number, got {v!r}")
    for key in ("cutting_plane_tol", "cutting_plane_rel_tol", "max_multiplier", "inner_tol", "intercept_scaling"):
        v = out[key]
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float, np.number)) or not v >= 0
                              or not np.isfinite(v)):
            raise ValueError(f"method_params[{key!r}] must be a finite non-negative number, got {v!r}")
    return out


#: The settings of the ramp method (:data:`RAMP_PARAMS`): one field per ``method_params`` key, checked by :func:`ramp_params`.
RampSettings = settings_dataclass("RampSettings", RAMP_PARAMS, ramp_params,
                           "Validated ``method_params`` of the ramp method (and ``safety_fraction``); "
                           "built once per fit by ``RampSettings.from_params``.")


@dataclass
class RandomizedRule:
    """The ramp-randomized rule (Goh et al. Eq. 3) whose expected rates the relaxation bounds.

    Attributes
    ----------
    classifier : ScoreClassifier
        Predicts positive with probability ``sigma(f(x))``.
    confusion : ndarray of shape (n_cells, 2, 2)
        Its expected confusion tensor on the training sample.
    feasible : bool
    max_violation : float
        Its largest constraint violation on the training sample (rate units).
    """

    classifier: object
    confusion: np.ndarray
    feasible: bool
    max_violation: float


@dataclass
class RampDetails:
    """What :class:`RampMethod` returns beside the deployed rule (``FitResult.details``).

    Attributes
    ----------
    randomized : RandomizedRule
    multipliers : dict of str to float
        The last Lagrange multiplier of each constraint row (Alg. 2), by row name.
    ramp_objective : float
        The relaxed (ramp) objective of the last MM iterate.
    threshold : float
        The deployed rule is ``f(x) > threshold``.
    coef : ndarray of shape (n_features,)
    intercept : float
    alpha : float
        The l2 weight used (``1 / W`` by default).
    program : goalfit.goals.RateProgram
        The compiled rate program (rows, datasets).
    n_iter : int
        MM iterations.
    """

    randomized: RandomizedRule
    multipliers: dict
    ramp_objective: float
    threshold: float
    coef: np.ndarray
    intercept: float
    alpha: float
    program: object
    n_iter: int


class RampMethod(Method):
    """Linear classifiers under dataset constraints with the ramp loss (Goh et al., NIPS 2016).

    The goals, as per-example weights (:func:`goalfit.goals.compile_rate_program`, Problem 1),
    are relaxed by the ramp ``sigma(f(x))`` (Eq. 2-3) and optimized by majorization-minimization
    (Alg. 1), each step a convex problem solved by a cutting plane over the Lagrange multipliers
    (Alg. 2) whose inner problem is a weighted SVM (warm-started dual coordinate descent).

    ``solve(data, compiled, params)`` reads ``data.X`` (the features, already mapped: a float
    array or CSR matrix), the codes, cells, weights and unlabelled rows of ``data``, and
    ``params``: ``alpha`` (the l2 weight ``lambda`` of Eq. 7, ``lambda/2 |w|^2``), ``max_iter``,
    ``tol``, ``fit_intercept``, ``random_state`` and the keys of :data:`RAMP_PARAMS`.

    The result's single member is the deterministic rule ``f(x) > t`` (``decision_threshold``:
    ``"fit"`` picks the exact best ``t`` on the training datasets for Problem 1 itself, among the
    thresholds meeting every goal, else the least violating; a number fixes it, 0 being the
    paper's rule); ``details.randomized`` (:class:`RampDetails`) holds the ramp-randomized rule (Eq. 3) that the
    relaxation bounds: its classifier, confusion tensor, feasibility and max violation.
    """

    family = "ramp"

    def __init__(self, name: str = "ramp"):
        self.name = name

    def check(self, compiled) -> None:
        require_binary(compiled, self.name)
        require_linear(compiled, self.name)

    def param_names(self) -> list[str]:
        return sorted(RAMP_PARAMS)

    def solve(self, data, compiled, params: dict, progress=SILENT) -> FitResult:
        p = ramp_params({k: v for k, v in params.items() if k in RAMP_PARAMS})
        lam = float(params["alpha"])
        seed = params.get("random_state")
        fit_intercept = params.get("fit_intercept", True)
        Z = data.X
        program = compile_rate_program(compiled, data.y_codes, data.cells, data.sample_weight, data.unlabelled_cells)
        solver = {"multiplier_solver": p["multiplier_solver"], "chooser": p["chooser"],
                  "tol": p["cutting_plane_tol"], "rel_tol": p["cutting_plane_rel_tol"],
                  "max_iter": p["max_cutting_plane_iter"], "v_max": p["max_multiplier"],
                  "inner_solver": p["inner_solver"], "inner_tol": p["inner_tol"], "fit_intercept": fit_intercept,
                  "intercept_scaling": p["intercept_scaling"], "random_state": seed}
        coef0, intercept0 = None, 0.0
        if p["init"] == "unconstrained":
            sol = solve_weighted_svm(Z, program.a0, program.c0, np.zeros(Z.shape[0]), lam, solver=p["inner_solver"],
                                     fit_intercept=fit_intercept, tol=p["inner_tol"],
                                     intercept_scaling=p["intercept_scaling"], random_state=seed)
            coef0, intercept0 = sol.coef, sol.intercept
        progress.phase("ramp majorization-minimization", int(params.get("max_iter", 10)))

        def report(h):
            progress.update(h["iteration"], objective=h["objective"], max_violation=h["max_violation"],
                            phase=h["phase"])

        res = majorization_minimization(program, Z, lam, coef0=coef0, intercept0=intercept0,
                                        max_iter=int(params.get("max_iter", 10)),
                                        max_feasibility_iter=p["max_feasibility_iter"],
                                        feasibility_lam=p["feasibility_alpha"], tol=float(params.get("tol", 1e-4)),
                                        solver_params=solver, callback=report if progress.enabled else None)
        scores = np.asarray(Z @ res.coef).ravel() + res.intercept
        t = p["decision_threshold"]
        threshold = best_threshold(program, scores)[0] if isinstance(t, str) else float(t)
        classes = data.classes
        K, G = 2, data.encoder.n_cells
        pos = (scores > threshold).astype(float)
        C_det = confusion_tensor(data.y_codes, np.column_stack([1 - pos, pos]), data.cells, K, G, data.sample_weight)
        p_ramp = ramp(scores)
        C_ramp = confusion_tensor(data.y_codes, np.column_stack([1 - p_ramp, p_ramp]), data.cells, K, G,
                                  data.sample_weight)
        scorer = LinearScorer(res.coef, res.intercept, params.get("feature_map"))
        deterministic = ScoreClassifier(scorer, classes, threshold)
        randomized = ScoreClassifier(scorer, classes, 0.0, link=ramp)
        n_inner = int(sum(h["n_inner"] for h in res.history))
        return FitResult.single(
            deterministic, C_det, self.name, history=res.history, n_oracle_calls=n_inner,
            feasible=bool(compiled.max_violation(C_det) <= FEASIBLE_TOL),
            message=f"{max(len(res.history) - 1, 1)} MM iterations, {n_inner} weighted-SVM solves; threshold "
                    f"f(x) > {threshold:.4g}",
            details=RampDetails(
                randomized=RandomizedRule(randomized, C_ramp, bool(res.feasible), float(res.max_violation)),
                multipliers=dict(zip(program.row_names, np.asarray(res.multipliers).tolist())),
                ramp_objective=float(res.objective), threshold=float(threshold), coef=res.coef,
                intercept=float(res.intercept), alpha=lam, program=program, n_iter=max(len(res.history) - 1, 1)),
            infeasible_note=(f"the ramp-randomized rule (randomized_classifier_), which the relaxation bounds, has "
                             f"max violation {res.max_violation:.4g}"))
