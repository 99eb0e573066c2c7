"""Jiang et al.'s adaptive surrogates as a method on the compiled problem (:class:`SurrogateMethod`)."""
from __future__ import annotations

import copy
import numbers
import warnings
from dataclasses import dataclass

import numpy as np

from ...classifiers import LinearScorer as DeployedLinearScorer
from ...classifiers import ScoreClassifier
from ...confusion import confusion_tensor
from ...fit import SILENT, FitResult, Method, UnsupportedGoal, require_binary, settings_dataclass
from ...goals import FEASIBLE_TOL
from .gradients import ESTIMATORS, make_gradient_estimator
from .models import LinearScorer, ModuleScorer, TorchScorer
from .problem import BlackBoxProblem, SampleGoals
from .projection import SOLVERS
from .slices import build_surrogates
from .spgd import PROJECTION_TOL, surrogate_pgd
from .surrogates import DEFAULT_CHUNK_ELEMENTS

__all__ = ["SurrogateMethod", "SURROGATE_PARAMS", "surrogate_params", "linear_start", "row_names"]

#: ``method_params`` of the surrogate methods and their defaults.
SURROGATE_PARAMS = {
    "n_perturbations": 100,
    "sigma": 1.0,
    "gradient_params": None,
    "step_size": 1.0,
    "eval_every": 10,
    "n_restarts": 1,
    "restart_scale": 1.0,
    "projection": "lbfgs",
    "projection_iter": 100,
    "projection_lr": 1.0,
    "param_bound": None,
    "multiplier_step": 10.0,
    "multiplier_decay": 10.0,
    "dtype": "float32",
    "chunk_elements": DEFAULT_CHUNK_ELEMENTS,
    "device": "cpu",
}

#: The estimators that perturb training scores (Alg. 2, §5.3): they need the goals on the
#: training sample and disjoint slices.
SCORE_SPACE = ("finite_difference", "two_point")


def _positive_int(v):
    return isinstance(v, (numbers.Integral, np.integer)) and not isinstance(v, (bool, np.bool_)) and int(v) >= 1


def _positive_real(v, allow_zero=False):
    return (isinstance(v, (numbers.Real, np.number)) and not isinstance(v, (bool, np.bool_))
            and np.isfinite(float(v)) and (float(v) >= 0 if allow_zero else float(v) > 0))


def surrogate_params(params: dict) -> dict:
    """``method_params`` of the surrogate methods with their defaults, each value checked.

    Raises
    ------
    ValueError
        A value outside its allowed set or range, naming the key.
    """
    out = dict(SURROGATE_PARAMS, **(params or {}))
    for key in ("n_perturbations", "eval_every", "n_restarts", "projection_iter", "chunk_elements"):
        if not _positive_int(out[key]):
            raise ValueError(f"method_params[{key!r}] must be a positive integer, got {out[key]!r}")
    for key in ("sigma", "step_size", "projection_lr", "multiplier_decay"):
        if not _positive_real(out[key]):
            raise ValueError(f"method_params[{key!r}] must be a positive number, got {out[key]!r}")
    for key in ("restart_scale", "multiplier_step"):
        if not _positive_real(out[key], allow_zero=True):
            raise ValueError(f"method_params[{key!r}] must be a finite non-negative number, got {out[key]!r}")
    if out["param_bound"] is not None and not _positive_real(out["param_bound"]):
        raise ValueError(f"method_params['param_bound'] must be a positive number or None, got {out['param_bound']!r}")
    if out["projection"] not in SOLVERS:
        raise ValueError(f"method_params['projection'] must be one of {list(SOLVERS)}, got {out['projection']!r}")
    if out["dtype"] not in ("float32", "float64"):
        raise ValueError(f"method_params['dtype'] must be 'float32' or 'float64', got {out['dtype']!r}")
    if out["gradient_params"] is not None and not isinstance(out["gradient_params"], dict):
        raise ValueError(f"method_params['gradient_params'] must be a dict, got {out['gradient_params']!r}")
    return out


#: The settings of the surrogate methods (:data:`SURROGATE_PARAMS`): one field per ``method_params`` key, checked by :func:`surrogate_params`.
SurrogateSettings = settings_dataclass("SurrogateSettings", SURROGATE_PARAMS, surrogate_params,
                           "Validated ``method_params`` of the surrogate methods (and ``safety_fraction``); "
                           "built once per fit by ``SurrogateSettings.from_params``.")


def linear_start(init, X, y_codes, fit_intercept, sample_weight=None) -> np.ndarray:
    """Start ``theta = [w, b]`` of a linear model: ``"zeros"``, ``"logistic"`` (a logistic-regression
    fit on the class codes) or an array of shape (n_features + fit_intercept,).

    Raises
    ------
    ValueError
        For another string or an array of the wrong length.
    """
    d = X.shape[1] + int(fit_intercept)
    if isinstance(init, str):
        if init == "zeros":
            return np.zeros(d)
        if init == "logistic":
            from sklearn.linear_model import LogisticRegression

            lr = LogisticRegression(max_iter=1000, fit_intercept=fit_intercept).fit(X, y_codes,
                                                                                   sample_weight=sample_weight)
            return np.concatenate([lr.coef_.ravel(), lr.intercept_ if fit_intercept else []])
        raise ValueError(f"init must be 'zeros', 'logistic' or an array, got {init!r}")
    theta = np.asarray(init, dtype=float)
    if theta.shape != (d,):
        raise ValueError(f"init must have shape ({d},) (weights then intercept), got {theta.shape}")
    return theta


def row_names(compiled) -> list[str]:
    """A name per polyhedral constraint row: the constraint's, with ``[j]`` when it has several rows."""
    names = []
    for cc in compiled.constraints:
        if cc.rows is None:
            continue
        k = cc.rows.stop - cc.rows.start
        names += [cc.name] if k == 1 else [f"{cc.name} [{j}]" for j in range(k)]
    return names


@dataclass
class Selection:
    """The iterate :class:`SurrogateMethod` returned: where it was chosen and its values there."""

    sample: str
    """``"training"`` or ``"validation"``."""
    restart: int
    iteration: int
    objective: float
    max_violation: float
    feasible: bool


@dataclass
class SurrogateDetails:
    """What :class:`SurrogateMethod` returns beside the deployed rule (``FitResult.details``).

    Attributes
    ----------
    multipliers : dict of str to float
        The last multiplier of each constraint row.
    selection : Selection
    surrogates : list of dict
        The surrogate table (name, loss, slice) of the run.
    paths : list
        One path per restart (surrogate, target and gradient paths, condition numbers, metric
        values).
    theta : ndarray
        The selected parameters.
    coef, intercept : ndarray or None
        For the linear model.
    module : torch.nn.Module or None
        For a PyTorch model.
    objective_name : str
    """

    multipliers: dict
    selection: Selection
    surrogates: list
    paths: list
    theta: np.ndarray
    coef: np.ndarray | None
    intercept: float | None
    module: object
    objective_name: str


class SurrogateMethod(Method):
    """Black-box goals by adaptively combining surrogates (Jiang et al., ICML 2020, Alg. 1).

    A binary model ``f_theta`` (linear in numpy, or a torch module) is trained by projected
    gradient descent in the K-dimensional space of rate surrogates (Alg. 1): the gradient of
    the unknown monotone ``psi`` in ``M(theta) = psi(phi(theta)) + eps`` is estimated from
    evaluations of the objective (Alg. 3, ``"interpolation"``; Alg. 2, ``"finite_difference"``;
    §5.3, ``"two_point"``), the surrogate profile steps against it, and the projection (4)
    trains the model on the adaptively re-weighted surrogates. The slices are read from the
    compiled goals' linear features (:mod:`.slices`). Constraints are followed by a Lagrangian
    in surrogate space with multipliers on their exact rows and a feasible-first choice of the
    iterate (:mod:`.spgd`; an extension: the paper's Theorem 2 covers the unconstrained case
    only).

    ``solve(data, compiled, params)`` reads ``data.X`` (float array or CSR; a torch module
    densifies it), the codes, cells and weights of ``data``, and ``params``: ``alpha`` (l2 weight
    of the projection, None or 0: none), ``max_iter`` (T per run), ``tol`` (the projection's
    step-size tolerance), ``fit_intercept``, ``random_state``, ``init`` (``"zeros"``,
    ``"logistic"`` or an array; a torch module starts from its parameters), ``estimator`` (None
    or a torch module), ``surrogates`` (see :func:`.slices.build_surrogates`), ``metric`` (a
    :class:`~goalfit.goals.BlackBoxMetric` when the objective is known only by evaluation;
    ``compiled.objective`` is then not read), ``selection`` (``(PreparedData, CompiledProblem)``
    of a validation sample the objective and constraints are measured on; default the
    training sample) and the keys of :data:`SURROGATE_PARAMS`.

    The result's single member is the deterministic rule ``f_theta(x) > 0`` of the selected
    iterate (:class:`~goalfit.classifiers.ScoreClassifier`), its confusion tensor on the
    training sample; ``history`` has one row per assessed iterate (``iteration``, ``restart``,
    ``objective`` and ``max_violation`` on the training sample, ``selection_objective`` and
    ``selection_max_violation`` on the selection sample, ``multipliers``, ``oracle_calls``
    (models evaluated on the selection sample so far), ``seconds``); ``details`` (:class:`SurrogateDetails`) hold the
    multipliers of the selected run's last step, the selection (sample, restart, iteration,
    values, feasibility), the surrogates' slices and every run's path.
    """

    family = "surrogate"

    def __init__(self, name: str = "interpolation"):
        if name not in ESTIMATORS:
            raise ValueError(f"unknown surrogate method {name!r}; known: {sorted(ESTIMATORS)}")
        self.name = name

    def check(self, compiled) -> None:
        require_binary(compiled, self.name)
        for c in compiled.constraints:
            if c.rows is None:
                raise UnsupportedGoal(f"method {self.name!r} needs polyhedral constraints (rates, linear "
                                      f"combinations, ratios, max-abs disparities); {c.name!r} has none")

    def param_names(self) -> list[str]:
        return sorted(SURROGATE_PARAMS)

    def _gradient_estimator(self, p):
        extra = dict(p["gradient_params"] or {})
        if self.name == "two_point":
            base = {"n_perturbations": p["n_perturbations"], "sigma1": p["sigma"], "sigma2": p["sigma"] / 4}
        else:
            base = {"n_perturbations": p["n_perturbations"], "sigma": p["sigma"]}
        try:
            return make_gradient_estimator(self.name, **{**base, **extra})
        except TypeError as err:
            raise ValueError(f"method_params['gradient_params'] for {self.name!r}: {err}") from None

    def solve(self, data, compiled, params: dict, progress=SILENT) -> FitResult:
        import time

        t_start = time.perf_counter()
        p = surrogate_params({k: v for k, v in params.items() if k in SURROGATE_PARAMS})
        metric = params.get("metric")
        selection = params.get("selection")
        module = params.get("estimator")
        fit_intercept = bool(params.get("fit_intercept", True))
        seed = params.get("random_state")
        T = int(params.get("max_iter", 100))
        alpha = float(params.get("alpha") or 0.0)
        tol = float(params.get("tol", PROJECTION_TOL))
        init = params.get("init", "zeros")
        if self.name in SCORE_SPACE and selection is not None:
            raise ValueError(f"method {self.name!r} perturbs training scores, so the goals must be measured on the "
                             "training sample (no separate validation set); use method='interpolation' (Alg. 3)")
        surrogates, table = build_surrogates(params.get("surrogates", "auto"), data, compiled,
                                             goal_objective=metric is None)
        if self.name in SCORE_SPACE and not surrogates.disjoint():
            raise ValueError(f"method {self.name!r} (score perturbations) needs disjoint slices; these surrogates "
                             "overlap: use method='interpolation' (Alg. 3)")
        estimator = self._gradient_estimator(p)
        X = data.X
        y_codes = np.asarray(data.y_codes, dtype=np.intp)
        scorer: TorchScorer | LinearScorer
        if module is not None:
            scorer = TorchScorer(copy.deepcopy(module), X, device=p["device"])
            if isinstance(init, str) and init != "zeros":
                raise ValueError("init='logistic' is for linear models; a torch module starts from its own "
                                 "parameters (or an array)")
            theta0 = scorer.initial_theta() if isinstance(init, str) else np.asarray(init, dtype=float)
            if theta0.shape != (scorer.n_params,):
                raise ValueError(f"init must have shape ({scorer.n_params},) (the module's parameters), got "
                                 f"{theta0.shape}")
        else:
            dt = np.dtype(p["dtype"])
            scorer = LinearScorer(X, fit_intercept, batch_dtype=dt, dtype=dt)
            theta0 = linear_start(init, X, y_codes, fit_intercept, data.sample_weight)
        train_goals = SampleGoals(data, compiled, metric)
        if selection is None:
            sel_goals, val_scorer, same = train_goals, scorer, True
        else:
            sel_data, sel_compiled = selection
            sel_goals, val_scorer, same = SampleGoals(sel_data, sel_compiled, metric), scorer.with_data(sel_data.X), False
        problem = BlackBoxProblem(scorer, surrogates, sel_goals, val_scorer, same_sample=same,
                                  chunk_elements=p["chunk_elements"])
        history = []
        n_restarts = p["n_restarts"]
        progress.phase(f"adaptive surrogates ({self.name}, K = {len(surrogates)})", T * n_restarts)
        runs = {"restart": 0, "offset": 0, "last": 0}  # metric calls of the earlier runs

        def record(r, t, theta, a, lam, calls):
            if r != runs["restart"]:
                runs.update(restart=r, offset=runs["offset"] + runs["last"])
            runs["last"] = calls
            tr = a if same else train_goals.assess(scorer.scores(theta))
            history.append({"iteration": t, "restart": r, "objective": tr.objective,
                            "max_violation": tr.max_violation, "selection_objective": a.objective,
                            "selection_max_violation": a.max_violation,
                            "multipliers": np.asarray(lam, dtype=float).tolist(),
                            "oracle_calls": int(runs["offset"] + calls), "seconds": time.perf_counter() - t_start})
            progress.update(r * T + t, objective=a.objective, max_violation=a.max_violation)

        res = surrogate_pgd(problem, theta0, n_iter=T, step_size=p["step_size"], estimator=estimator,
                            projection=p["projection"], projection_iter=p["projection_iter"],
                            projection_lr=p["projection_lr"], projection_tol=tol, param_bound=p["param_bound"],
                            alpha=alpha, eval_every=p["eval_every"], n_restarts=n_restarts,
                            restart_scale=p["restart_scale"], multiplier_step=p["multiplier_step"],
                            multiplier_decay=p["multiplier_decay"], random_state=seed, callback=record)
        n_calls = int(sum(path.n_metric_calls for path in res.paths))
        theta = res.theta
        path = res.paths[res.best_restart]
        if module is not None:
            import torch

            assert isinstance(scorer, TorchScorer)  # a module: the torch scorer
            fitted = scorer.module
            torch.nn.utils.vector_to_parameters(scorer._tensor(theta), fitted.parameters())
            deployed: ModuleScorer | DeployedLinearScorer = ModuleScorer(fitted, p["device"])
            coef, intercept = None, None
        else:
            assert isinstance(scorer, LinearScorer)  # no module: the linear model
            coef, intercept = scorer.coef_intercept(theta)
            deployed, fitted = DeployedLinearScorer(coef, intercept), None
        classifier = ScoreClassifier(deployed, data.classes, 0.0)
        s_train = scorer.scores(theta)
        C = confusion_tensor(y_codes, (s_train > 0).astype(np.intp), data.cells, 2, data.encoder.n_cells,
                             data.sample_weight)
        feasible_sel = res.violation <= FEASIBLE_TOL
        sample = "training" if same else "validation"
        if compiled.constraints and not same and not feasible_sel:
            warnings.warn(f"the goals cannot all be met on the validation sample: returning the least-violating "
                          f"iterate (max violation {res.violation:.4g} there)", RuntimeWarning, stacklevel=4)
        names = row_names(compiled)
        message = (f"{n_restarts} run(s) of {T} steps, K = {len(surrogates)} surrogates, {n_calls} models evaluated; "
                   f"selected run {res.best_restart} iteration {path.best_iteration} on the {sample} sample: objective "
                   f"{res.metric:.4g}, max violation {res.violation:.3g}")
        details = SurrogateDetails(
            multipliers=dict(zip(names, path.multipliers[-1].tolist())),
            selection=Selection(sample, int(res.best_restart), int(path.best_iteration), float(res.metric),
                                float(res.violation), bool(feasible_sel)),
            surrogates=table, paths=res.paths, theta=theta, coef=coef, intercept=intercept, module=fitted,
            objective_name=sel_goals.name)
        return FitResult.single(classifier, C, self.name, history=history, n_oracle_calls=n_calls,
                                feasible=bool(compiled.max_violation(C) <= FEASIBLE_TOL), message=message,
                                details=details, warn_infeasible=same)
