"""The training loop: any ``torch.nn.Module``, Lagrangian or proxy-Lagrangian, snapshots.

Per batch (one forward and one backward pass, as in unconstrained training):

1. the network's output on the batch gives the proxy estimate ``C~`` and the exact 0-1 estimate
   ``C`` of the stacked confusion tensor (:class:`~goalfit.torch.rates.RateProblem`), each as the
   values of every linear form (objective and rows) in one matrix-vector product with the
   batch's per-example table of those forms
   (:meth:`~goalfit.torch.rates.RateProblem.weighted_forms`, built once per epoch for all
   batches: no Python loop over groups, no transfer to the host);
2. the model (and the slacks of a non-linear objective) take a step of their optimizer on
   ``w_0 psi(C~) + sum_k lambda_k g_k(C~)``;
3. the multipliers take a step of their own: gradient ascent on the same Lagrangian
   (``formulation="lagrangian"``) or the swap-regret update on the 0-1 rows ``g(C)``
   (``"proxy_lagrangian"``, Cotter, Jiang & Sridharan, ALT 2019, Alg. 4), on the device.

Snapshots of the model are kept along training (``snapshots_per_epoch`` per epoch), each with
its exact confusion tensor on the whole training sample (and on validation data when given):
they are the candidates of the shrinking LP and of the best-iterate rule
(:mod:`goalfit.torch.candidates`).
"""
from __future__ import annotations

import copy
import time
from itertools import repeat
from dataclasses import dataclass, field

import numpy as np
import torch

from .batches import StratifiedBatches
from .multipliers import LagrangeMultipliers, ProxyLagrangeMultipliers, make_optimizer
from .rates import RateProblem, check_output, predicted_codes

FORMULATIONS = ("lagrangian", "proxy_lagrangian")
#: table entries the training loop gathers at once (the batches of an epoch, in chunks)
_CHUNK = 1 << 22


@dataclass
class Snapshot:
    """A saved iterate: where it was taken, its weights and its exact confusion tensors."""

    epoch: int
    step: int
    state: dict
    confusion: np.ndarray
    confusion_val: np.ndarray | None = None
    multipliers: np.ndarray | None = None


@dataclass
class TrainData:
    """Tensors of one labelled sample on the training device.

    ``n_cells`` is the number of cells of the sample's own space (a validation sample's groups
    need not be the training sample's: the network never reads them).
    """

    X: torch.Tensor
    y: torch.Tensor
    cells: torch.Tensor
    weight: np.ndarray | None
    y_np: np.ndarray = field(repr=False)
    cells_np: np.ndarray = field(repr=False)
    n_cells: int = 1

    def slice_ids(self, n_classes: int) -> torch.Tensor:
        """``cell * n_classes + true class`` of every row (the row of the confusion tensor)."""
        return self.cells * n_classes + self.y

    @classmethod
    def of(cls, prepared, X, device) -> "TrainData":
        """The tensors of prepared data (:class:`goalfit.fit.PreparedData`) with features ``X`` (float32)."""
        y = np.asarray(prepared.y_codes, dtype=np.int64)
        cells = np.asarray(prepared.cells, dtype=np.int64)
        return cls(torch.as_tensor(X, device=device), torch.as_tensor(y, device=device),
                   torch.as_tensor(cells, device=device), prepared.sample_weight, y, cells, prepared.encoder.n_cells)


def forward(module: torch.nn.Module, X: torch.Tensor) -> torch.Tensor:
    """``module(X)`` with ``X`` in the module's floating type (float64 for a ``module.double()``
    network, whose features then keep their precision) and the output in float32, the rates'
    type (the cast is differentiable)."""
    dtype = next((p.dtype for p in module.parameters() if p.is_floating_point()), torch.float32)
    out = module(X if X.dtype == dtype else X.to(dtype))
    return out if out.dtype == torch.float32 else out.float()


def state_to_cpu(module: torch.nn.Module) -> dict:
    """A detached CPU copy of a module's ``state_dict``."""
    return {k: v.detach().to("cpu", copy=True) for k, v in module.state_dict().items()}


class NetworkPredictor:
    """Runs saved weights through one working copy of the architecture.

    Parameters
    ----------
    template : torch.nn.Module
        The architecture (its weights are overwritten by each state before use).
    n_classes : int
    device : str or torch.device
    batch_size : int
        Rows per forward pass at inference.
    """

    def __init__(self, template, n_classes, device="cpu", batch_size=4096):
        self.template = template
        self.n_classes = int(n_classes)
        self.device = torch.device(device)
        self.batch_size = int(batch_size)
        self._loaded = None

    def logits(self, state, X) -> torch.Tensor:
        """Network output for every row of ``X`` (an array or tensor), on the CPU."""
        if self._loaded is not state:
            self.template.load_state_dict(state)
            self.template.to(self.device)
            self._loaded = state
        return self.module_logits(self.template, X)

    def module_logits(self, module, X) -> torch.Tensor:
        """Output of ``module`` (in evaluation mode) for every row of ``X``, on the CPU."""
        module.eval()
        X = torch.as_tensor(X)
        if not X.is_floating_point():
            X = X.float()
        out = []
        with torch.no_grad():
            for s in range(0, len(X), self.batch_size):
                out.append(forward(module, X[s: s + self.batch_size].to(self.device)).to("cpu"))
        return torch.cat(out) if out else torch.zeros((0, 1))

    def predict_codes(self, state, X) -> np.ndarray:
        return predicted_codes(self.logits(state, X), self.n_classes).numpy().astype(np.intp)


class NetworkMember:
    """A member of a :class:`~goalfit.classifiers.RandomizedClassifier`: one saved network.

    It predicts from the features alone (group-blind: the group enters the training loss, not
    the model's inputs).
    """

    needs = "X"

    def __init__(self, predictor: NetworkPredictor, state: dict):
        self.predictor, self.state = predictor, state

    def predict_codes(self, X, proba, cell_ids) -> np.ndarray:
        return self.predictor.predict_codes(self.state, X)

    def key(self):
        return id(self.state)


class Trainer:
    """Rate-constrained training of a network (see the module docstring).

    Parameters
    ----------
    module : torch.nn.Module
        Trained in place.
    rates : RateProblem
    data : TrainData
        Training sample (features as a float tensor on ``device``).
    formulation : {"lagrangian", "proxy_lagrangian"}
    optimizer, learning_rate, weight_decay :
        The model's optimizer (see :func:`~goalfit.torch.multipliers.make_optimizer`).
    multiplier_optimizer, multiplier_learning_rate, multiplier_bound :
        The multipliers' (``multiplier_optimizer`` is used by the Lagrangian only; the
        proxy-Lagrangian's update is multiplicative with step ``multiplier_learning_rate``).
    batch_size, min_slice_rows : see :class:`~goalfit.torch.batches.StratifiedBatches`
    snapshots_per_epoch : int
    seed : int
    device : str or torch.device
    val : TrainData or None
        Validation sample: the snapshots' confusion tensors on it feed early stopping and,
        optionally, the shrinking LP.
    val_problem : CompiledProblem or None
        The goals compiled on the validation sample's own space (needed with ``val``).
    """

    def __init__(self, module, rates: RateProblem, data: TrainData, *, formulation, optimizer, learning_rate,
                 weight_decay, multiplier_optimizer, multiplier_learning_rate, multiplier_bound, batch_size,
                 min_slice_rows, snapshots_per_epoch, seed, device, val=None, val_problem=None):
        if formulation not in FORMULATIONS:
            raise ValueError(f"formulation must be one of {list(FORMULATIONS)}, got {formulation!r}")
        self.module, self.rates, self.data, self.val, self.val_problem = module, rates, data, val, val_problem
        self.batch_size, self.min_slice_rows, self.seed = batch_size, min_slice_rows, seed
        self.formulation = formulation
        self.device = torch.device(device)
        self.n_classes = rates.n_classes
        self.predictor = NetworkPredictor(copy.deepcopy(module), self.n_classes, device)
        self.batches = StratifiedBatches(data.y_np, data.cells_np, self.n_classes, data.weight, batch_size,
                                         min_slice_rows, seed, shares=rates.slice_shares())
        self._slice_ids = data.slice_ids(self.n_classes)
        self.snapshots_per_epoch = max(1, int(snapshots_per_epoch))
        with torch.no_grad():
            module.eval()
            check_output(module(data.X[: min(len(data.X), 2)]), self.n_classes)
        C0 = self.confusion_of(state_to_cpu(module), data)
        self.xi = rates.initial_slacks(C0).clone().requires_grad_(rates.n_slacks > 0)
        groups = [{"params": [p for p in module.parameters() if p.requires_grad], "weight_decay": weight_decay}]
        if rates.n_slacks:
            groups.append({"params": [self.xi], "weight_decay": 0.0})
        self.optimizer = make_optimizer(optimizer, groups, learning_rate)
        self.multipliers: LagrangeMultipliers | ProxyLagrangeMultipliers
        if formulation == "lagrangian":
            self.multipliers = LagrangeMultipliers(rates.n_rows, multiplier_optimizer, multiplier_learning_rate,
                                                   multiplier_bound, self.device, rates.dtype)
        else:
            self.multipliers = ProxyLagrangeMultipliers(rates.n_rows, multiplier_learning_rate, self.device,
                                                        rates.dtype)
        self.epoch, self.step = 0, 0
        self.snapshots: list[Snapshot] = []
        self.history: list[dict] = []
        self.train_seconds = 0.0

    # ------------------------------------------------------------------ evaluation
    def confusion_of(self, state, data: TrainData) -> np.ndarray:
        """Exact confusion tensor of saved weights (or of a live module) on a sample, shape
        (n_cells, n, n)."""
        from ..confusion import confusion_tensor

        if isinstance(state, torch.nn.Module):
            codes = predicted_codes(self.predictor.module_logits(state, data.X), self.n_classes).numpy()
        else:
            codes = self.predictor.predict_codes(state, data.X)
        return confusion_tensor(data.y_np, codes, data.cells_np, self.n_classes, data.n_cells, data.weight)

    def set_data(self, rates: RateProblem, data: TrainData) -> None:
        """Continue training on another sample (``partial_fit``): its goals, its batches; every
        snapshot's training confusion tensor is re-evaluated on it.

        Raises
        ------
        ValueError
            If the goals have another number of rows on the new sample (the multipliers' size).
        """
        if rates.n_rows != self.rates.n_rows:
            raise ValueError(f"the goals have {rates.n_rows} constraint rows on this sample but "
                             f"{self.rates.n_rows} on the first one: every chunk must hold the groups the "
                             "goals compare")
        self.rates, self.data = rates, data
        self._slice_ids = data.slice_ids(self.n_classes)
        self.batches = StratifiedBatches(data.y_np, data.cells_np, self.n_classes, data.weight, self.batch_size,
                                         self.min_slice_rows, self.seed + self.epoch, shares=rates.slice_shares())
        for snap in self.snapshots:
            snap.confusion = self.confusion_of(snap.state, data)

    def _snapshot(self):
        state = state_to_cpu(self.module)
        C = self.confusion_of(self.module, self.data)  # the live module holds these weights
        Cv = None if self.val is None else self.confusion_of(self.module, self.val)
        self.snapshots.append(Snapshot(self.epoch, self.step, state, C, Cv,
                                       self.multipliers.current().cpu().numpy().astype(float)))
        self.module.train()

    def _batches(self, rows, weights, sizes):
        """Per batch of an epoch: row indices, the weighted forms ``P`` of the batch
        (:meth:`RateProblem.weighted_forms`), the two tables :meth:`RateProblem.forms_01` reads
        and, for the ``"cross_entropy"`` proxy, the slice ids and importance weights. Everything
        is gathered for many batches at once (at most ``_CHUNK`` table entries) and sliced per
        batch."""
        dev, rates, n, k = self.device, self.rates, self.n_classes, self.rates.n_forms
        sizes = np.asarray(sizes, dtype=np.int64)
        offsets = np.r_[0, np.cumsum(sizes)]
        per_chunk = max(int(sizes.max()), _CHUNK // (n * k))
        idx = torch.as_tensor(rows, device=dev)
        w64 = torch.as_tensor(weights, dtype=torch.float64, device=dev)
        w = w64.to(rates.dtype)
        ids = self._slice_ids.index_select(0, idx)
        t = 0
        while t < len(sizes):
            u = max(t + 1, int(np.searchsorted(offsets, offsets[t] + per_chunk, side="right")) - 1)
            a, b, sz = int(offsets[t]), int(offsets[u]), sizes[t:u].tolist()
            P = rates.weighted_forms(ids[a:b], w[a:b])
            if n == 2:  # exact rates: sum_r P[r, 0] + 1[f_r > 0] (P[r, 1] - P[r, 0]), per batch
                P3 = P.view(b - a, 2, k)
                batch_of = torch.repeat_interleave(torch.arange(u - t, device=dev),
                                                   torch.as_tensor(sizes[t:u], device=dev))
                base = torch.zeros((u - t, k), dtype=rates.dtype, device=dev).index_add_(0, batch_of, P3[:, 0])
                tables = zip((P3[:, 1] - P3[:, 0]).split(sz), base.sub_(rates.offset).unbind(0))
            else:
                tables = zip((ids[a:b] * n).split(sz), w64[a:b].split(sz))
            extra = zip(ids[a:b].split(sz), w[a:b].split(sz)) if rates.proxy == "cross_entropy" else repeat((None, None))
            yield from zip(idx[a:b].split(sz), P.split([z * n for z in sz]), tables, extra)
            t = u

    # ------------------------------------------------------------------ training
    def run_epoch(self, progress=None) -> dict:
        """Train one epoch; returns its history row.

        Parameters
        ----------
        progress : callable or None
            Called with ``(batch, n_batches)`` after each batch.
        """
        rates, data, mult, module, opt = self.rates, self.data, self.multipliers, self.module, self.optimizer
        module.train()
        n_b, k = self.batches.n_batches, rates.n_forms
        marks = self._marks(n_b)
        K, slacks, ce = rates.n_constraint_rows, rates.n_slacks > 0, rates.proxy == "cross_entropy"
        b_rows = rates.offset[1:]
        reads_01 = mult.reads == "01"
        X, xi = data.X, self.xi
        # every batch's values of the forms (proxy and exact 0-1), written in place: no list,
        # no transfer; the multipliers read the 0-1 rows where they run (numpy views on the CPU)
        Z = torch.empty((n_b, k), dtype=rates.dtype, device=self.device)
        Z01 = torch.empty((n_b, k), dtype=rates.dtype if self.n_classes == 2 else torch.float64, device=self.device)
        z_rows, z01_rows = Z.unbind(0), Z01.unbind(0)
        g01 = Z01.numpy()[:, 1:] if getattr(mult, "host", False) and not slacks else Z01[:, 1:]
        objs = []
        t_train, snap_seconds = time.perf_counter(), 0.0
        c_train, snap_cpu = time.process_time(), 0.0
        for b, (idx, P, (table01, base01), (ids, wb)) in enumerate(self._batches(*self.batches.epoch_arrays())):
            logits = forward(module, X.index_select(0, idx))
            lam = mult.full()
            opt.zero_grad(set_to_none=True)
            if ce:
                loss = rates.cost_bound_batch(logits, ids, wb, lam)
                s = rates.proxy_indicators(logits.detach()).view(-1)  # softmax proxies of the rows
            else:  # the Lagrangian is linear in the indicators: each example's cost of each class
                s = rates.proxy_indicators(logits).view(-1)
                loss = torch.dot(s, torch.mv(P, lam))
                s = s.detach()
            z = torch.mv(P.t(), s, out=z_rows[b])
            if slacks:
                terms, obj = rates.slack_loss(xi, lam)
                loss = loss + terms
                objs.append(obj.detach())
                sv = rates.slack_vector(xi)  # the proxy rows read the slacks of this forward pass
            loss.backward()
            opt.step()
            z01 = rates.forms_01(logits, table01, base01, out=z01_rows[b])
            if reads_01:  # the 0-1 rows read the slacks after the step
                mult.step(z01[1:] - rates.slack_vector(xi) if slacks else g01[b])
            else:
                mult.step(z[1:] - b_rows - sv if slacks else z[1:] - b_rows)
            if slacks:
                rates.clip_slacks_(xi)
            self.step += 1
            if b in marks:
                t, c = time.perf_counter(), time.process_time()
                self._snapshot()
                snap_seconds += time.perf_counter() - t
                snap_cpu += time.process_time() - c
            if progress is not None:
                progress(b + 1, n_b)
        # the epoch's batch averages, with one transfer to the host
        stats = [(torch.stack(objs) if slacks else Z[:, 0] - rates.offset[0]).double().mean()]
        if not slacks:
            stats.append(Z01[:, 0].mean())
        if K:
            stats.append(torch.clamp(Z01[:, 1: 1 + K], min=0).max(dim=1).values.mean())
        stats = torch.stack(stats).cpu().tolist()
        seconds = time.perf_counter() - t_train - snap_seconds
        cpu_seconds = time.process_time() - c_train - snap_cpu
        self.train_seconds += seconds
        self.epoch += 1
        last = self.snapshots[-1]
        cp = rates.problem
        row = {"epoch": self.epoch, "step": self.step, "seconds": seconds, "cpu_seconds": cpu_seconds,
               "snapshot_seconds": snap_seconds,
               "batch_objective_proxy": stats[0],
               "batch_max_violation_01": stats[-1] if K else 0.0,
               "objective": float(cp.objective.value(last.confusion)),
               "max_violation": float(cp.max_violation(last.confusion)),
               "constraints": [float(c.value(last.confusion)) for c in cp.constraints],
               "multipliers": [] if last.multipliers is None else last.multipliers.tolist()}
        if not slacks:
            row["batch_objective_01"] = stats[1]
        if last.confusion_val is not None:
            row["objective_val"] = float(self.val_problem.objective.value(last.confusion_val))
            row["max_violation_val"] = float(self.val_problem.max_violation(last.confusion_val))
        self.history.append(row)
        return row

    def _marks(self, n_b: int) -> set:
        """Batches of this epoch after which a snapshot is taken."""
        per = self.snapshots_per_epoch
        return {int(np.ceil(n_b * (k + 1) / per)) - 1 for k in range(per)}

    # ------------------------------------------------------------------ checkpoints
    def state_dict(self) -> dict:
        """Everything needed to resume: model, slacks, both optimizers, RNG streams, snapshots."""
        return {"epoch": self.epoch, "step": self.step, "module": state_to_cpu(self.module),
                "xi": self.xi.detach().cpu().clone(), "optimizer": self.optimizer.state_dict(),
                "multipliers": self.multipliers.state_dict(), "batches": self.batches.state_dict(),
                "torch_rng": torch.get_rng_state(), "snapshots": self.snapshots, "history": self.history,
                "train_seconds": self.train_seconds, "formulation": self.formulation}

    def load_state_dict(self, state: dict) -> None:
        """Restore :meth:`state_dict` (the problem and data must be the same).

        Raises
        ------
        ValueError
            If the checkpoint was written by the other formulation.
        """
        if state["formulation"] != self.formulation:
            raise ValueError(f"the checkpoint was written with formulation={state['formulation']!r}, "
                             f"not {self.formulation!r}")
        self.module.load_state_dict(state["module"])
        with torch.no_grad():
            self.xi.copy_(state["xi"].to(self.xi.device))
        self.optimizer.load_state_dict(state["optimizer"])
        self.multipliers.load_state_dict(state["multipliers"])
        self.batches.load_state_dict(state["batches"])
        self.torch_rng = state["torch_rng"]  # the caller restores it around training
        self.epoch, self.step = state["epoch"], state["step"]
        self.snapshots, self.history = list(state["snapshots"]), list(state["history"])
        self.train_seconds = state["train_seconds"]
