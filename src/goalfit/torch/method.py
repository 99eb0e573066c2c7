"""The Lagrangian family as a method on the compiled problem (:class:`LagrangianMethod`)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np
import torch

from ..fit import SILENT, FitResult, Method, UnsupportedGoal, settings_dataclass
from ..goals import FEASIBLE_TOL
from .candidates import best_iterate, shrink
from .rates import RateProblem
from .train import FORMULATIONS, NetworkMember, TrainData, Trainer

#: ``method_params`` of the Lagrangian methods and their defaults.
LAGRANGIAN_PARAMS = {
    "proxy": None,
    "optimizer": "adam",
    "learning_rate": 0.01,
    "multiplier_optimizer": "sgd",
    "multiplier_learning_rate": None,
    "multiplier_bound": None,
    "min_slice_rows": 8,
    "snapshots_per_epoch": 1,
    "prediction": "stochastic",
    "shrink_on": "train",
    "n_iter_no_change": None,
    "checkpoint_path": None,
}

PREDICTIONS = ("stochastic", "best_iterate", "last")
#: the multipliers' step size when ``multiplier_learning_rate`` is None, per formulation: the
#: proxy-Lagrangian's multiplicative step on the exact rate rows, the Lagrangian's additive step
#: on the proxy rows. 0.3 for the proxy-Lagrangian, with the estimator's 40 epochs: chosen over
#: several goals at once (many overlapping constraints, one binding parity constraint, churn),
#: where a larger step cost accuracy on the single binding constraint and a smaller one left many
#: constraints unmet (see benchmarks/README.md, section "Measurements behind the library's choices").
DEFAULT_MULTIPLIER_LEARNING_RATE = {"proxy_lagrangian": 0.3, "lagrangian": 0.1}


def lagrangian_params(params) -> dict:
    """``method_params`` with their defaults, each value checked.

    Raises
    ------
    ValueError
        A value outside its allowed set or range, naming the key.
    """
    out = dict(LAGRANGIAN_PARAMS, **(params or {}))
    if out["prediction"] not in PREDICTIONS:
        raise ValueError(f"method_params['prediction'] must be one of {list(PREDICTIONS)}, got {out['prediction']!r}")
    if out["shrink_on"] not in ("train", "validation"):
        raise ValueError(f"method_params['shrink_on'] must be 'train' or 'validation', got {out['shrink_on']!r}")
    for key, low in (("min_slice_rows", 0), ("snapshots_per_epoch", 1), ("n_iter_no_change", 1)):
        v = out[key]
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low):
            raise ValueError(f"method_params[{key!r}] must be an integer >= {low}, got {v!r}")
    for key in ("learning_rate", "multiplier_learning_rate", "multiplier_bound"):
        v = out[key]
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float, np.number)) or not v >= 0):
            raise ValueError(f"method_params[{key!r}] must be a non-negative number, got {v!r}")
    return out


#: The settings of the Lagrangian methods (:data:`LAGRANGIAN_PARAMS`): one field per ``method_params`` key, checked by :func:`lagrangian_params`.
LagrangianSettings = settings_dataclass("LagrangianSettings", LAGRANGIAN_PARAMS, lagrangian_params,
                           "Validated ``method_params`` of the Lagrangian methods (and ``safety_fraction``); "
                           "built once per fit by ``LagrangianSettings.from_params``.")


@dataclass
class LagrangianDetails:
    """What :class:`LagrangianMethod` returns beside the deployed rule (``FitResult.details``).

    Attributes
    ----------
    trainer : Trainer or None
        The trainer (for ``partial_fit``; the estimator keeps it as ``trainer_`` and clears it here).
    shrunk_index, shrunk_weights : ndarray
        The snapshots of the shrunk mixture (Cotter et al.'s LP, at most m + 1) and their weights.
    best_index : int
        TFCO's best (rank-based) deterministic snapshot.
    shrunk_feasible : bool
    shrunk_max_violation : float
    multipliers : ndarray of shape (n_constraints,)
    stopped_early : bool
    chosen_on : str
        ``"train"`` or ``"validation"``: where the mixture was shrunk.
    classifiers : dict or None
        The estimator's stochastic, best-iterate and last-snapshot rules (set by the estimator).
    """

    trainer: object
    shrunk_index: np.ndarray
    shrunk_weights: np.ndarray
    best_index: int
    shrunk_feasible: bool
    shrunk_max_violation: float
    multipliers: np.ndarray
    stopped_early: bool
    chosen_on: str
    classifiers: dict | None = None


class LagrangianMethod(Method):
    """Rate-constrained training of a network: the Lagrangian or the proxy-Lagrangian game.

    Cotter, Jiang & Sridharan (ALT 2019): the model and the Lagrange multipliers play on
    minibatch proxy rates of the compiled goals (:class:`~goalfit.torch.rates.RateProblem`);
    snapshots along training are shrunk by an LP to a stochastic classifier of at most ``m + 1``
    networks (§2.3), TFCO's rank rule picks the best deterministic iterate.

    ``solve(data, compiled, params)`` reads ``data.X`` (float32 features), codes, cells and
    weights, and ``params``: ``module`` (the initialized network), ``device``, ``seed``,
    ``batch_size``, ``max_iter`` (epochs), ``alpha`` (weight decay), ``tol``, ``validation``
    (``(PreparedData, X)`` or None) and the keys of :data:`LAGRANGIAN_PARAMS`. The result's
    members are the shrunk mixture's snapshots (``prediction="stochastic"``), TFCO's best
    iterate or the last snapshot; ``details`` (:class:`LagrangianDetails`) hold the trainer (for ``partial_fit``), every
    snapshot's index choices and the multipliers.
    """

    family = "lagrangian"

    def __init__(self, name: str = "proxy_lagrangian"):
        if name not in FORMULATIONS:
            raise ValueError(f"unknown Lagrangian method {name!r}; known: {list(FORMULATIONS)}")
        self.name = name

    def check(self, compiled) -> None:
        if compiled.nonlinear:
            raise UnsupportedGoal(f"method {self.name!r} needs constraints with a linear-row form; "
                                  f"{compiled.nonlinear[0].name!r} has none")
        obj = compiled.objective
        if obj.kind != "linear":
            try:
                obj.features()
            except NotImplementedError:
                raise UnsupportedGoal(f"method {self.name!r} needs a linear objective or one with linear "
                                      f"features (slack variables); {obj.name!r} has none") from None

    def param_names(self) -> list[str]:
        return sorted(LAGRANGIAN_PARAMS)

    @staticmethod
    def proxy(params, n_classes: int) -> str:
        """The proxy of the indicators: ``hinge`` (binary) or ``cross_entropy`` (multiclass) by default."""
        if params.get("proxy") is not None:
            return params["proxy"]
        return "hinge" if n_classes == 2 else "cross_entropy"

    def trainer(self, data, compiled, params) -> Trainer:
        """A fresh trainer on ``data`` (the module in ``params`` is trained in place)."""
        p = lagrangian_params({k: v for k, v in params.items() if k in LAGRANGIAN_PARAMS})
        device = torch.device(params["device"])
        rates = RateProblem(compiled, self.proxy(p, data.n_classes), device)
        val, val_problem = None, None
        if params.get("validation") is not None:
            vdata, vX = params["validation"]
            val = TrainData.of(vdata, vX, device)
            val_problem = params["validation_problem"]
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(params["seed"])
            tr = Trainer(params["module"].to(device), rates, TrainData.of(data, data.X, device),
                         formulation=self.name, optimizer=p["optimizer"], learning_rate=p["learning_rate"],
                         weight_decay=float(params.get("alpha") or 0.0), multiplier_optimizer=p["multiplier_optimizer"],
                         multiplier_learning_rate=(DEFAULT_MULTIPLIER_LEARNING_RATE[self.name]
                                                   if p["multiplier_learning_rate"] is None
                                                   else p["multiplier_learning_rate"]),
                         multiplier_bound=p["multiplier_bound"],
                         batch_size=int(params["batch_size"]), min_slice_rows=p["min_slice_rows"],
                         snapshots_per_epoch=p["snapshots_per_epoch"], seed=params["seed"], device=device, val=val,
                         val_problem=val_problem)
            tr.torch_rng = torch.get_rng_state()
        return tr

    def train(self, tr: Trainer, n_epochs: int, params, progress=SILENT, early_stopping: bool = True) -> bool:
        """Run ``n_epochs`` epochs (with early stopping on validation data); returns whether it stopped early."""
        p = lagrangian_params({k: v for k, v in params.items() if k in LAGRANGIAN_PARAMS})
        patience, tol = p["n_iter_no_change"], float(params.get("tol", 1e-3))
        best, stale = None, 0
        progress.phase(f"{self.name} training", tr.epoch + max(0, n_epochs), unit="epoch")
        with torch.random.fork_rng(devices=[]):
            torch.set_rng_state(tr.torch_rng)
            try:
                for _ in range(max(0, n_epochs)):
                    row = tr.run_epoch()
                    progress.update(tr.epoch, objective=row["objective"], max_violation=row["max_violation"],
                                    force=True)
                    if p["checkpoint_path"] is not None:
                        torch.save(tr.state_dict(), p["checkpoint_path"])
                    if patience is not None and early_stopping:
                        key = (max(row["max_violation_val"] - tol, 0.0), row["objective_val"])
                        if best is None or key < best:
                            best, stale = key, 0
                        else:
                            stale += 1
                            if stale >= patience:
                                return True
            finally:
                tr.torch_rng = torch.get_rng_state()
        return False

    def result(self, tr: Trainer, compiled, params, stopped_early: bool = False) -> FitResult:
        """The shrunk mixture, the best iterate and the last snapshot of a trained trainer."""
        p = lagrangian_params({k: v for k, v in params.items() if k in LAGRANGIAN_PARAMS})
        snaps = tr.snapshots
        Cs = np.stack([s.confusion for s in snaps])
        if p["shrink_on"] == "validation":
            # every snapshot holds the validation confusion when there is a validation sample
            choose_on, Cc = tr.val_problem, np.stack([cast(np.ndarray, s.confusion_val) for s in snaps])
        else:
            choose_on, Cc = compiled, Cs
        index, weights, feasible_choice, viol = shrink(choose_on, Cc)
        best = best_iterate(choose_on, Cc)
        choice = {"stochastic": (index, weights), "best_iterate": (np.array([best]), np.ones(1)),
                  "last": (np.array([len(snaps) - 1]), np.ones(1))}[p["prediction"]]
        members = [NetworkMember(tr.predictor, snaps[i].state) for i in choice[0]]
        history = [dict(h, iteration=h["epoch"], oracle_calls=h["step"]) for h in tr.history]
        return FitResult(members, np.asarray(choice[1], float), Cs[choice[0]], self.name, history, int(tr.step),
                         bool(compiled.max_violation(np.tensordot(choice[1], Cs[choice[0]], axes=1)) <= FEASIBLE_TOL),
                         f"{tr.epoch} epochs, {len(snaps)} snapshots; {p['prediction']} prediction"
                         + (" (stopped early)" if stopped_early else ""),
                         details=LagrangianDetails(
                             tr, index, weights, int(best), bool(feasible_choice), float(viol),
                             tr.multipliers.current().cpu().numpy().astype(float), bool(stopped_early),
                             p["shrink_on"]))

    def solve(self, data, compiled, params: dict, progress=SILENT) -> FitResult:
        tr = self.trainer(data, compiled, params)
        stopped = self.train(tr, int(params["max_iter"]), params, progress)
        return self.result(tr, compiled, params, stopped)
