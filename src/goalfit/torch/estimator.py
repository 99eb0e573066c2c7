"""The scikit-learn estimator: rate-constrained training of a PyTorch network."""
from __future__ import annotations

import copy
import os
import time
import warnings

import numpy as np
import scipy.sparse as sp
import torch
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d

from ..classifiers import RandomizedClassifier, encode_labels
from ..confusion import CellEncoder, ConfusionSpace
from ..goals import Problem
from ..utils.validation import check_consistent_rows, check_sample_weight, n_rows
from .candidates import best_iterate, shrink
from .rates import RateProblem
from .train import FORMULATIONS, NetworkMember, NetworkPredictor, TrainData, Trainer

PREDICTIONS = ("stochastic", "best_iterate", "last")


def make_mlp(n_features: int, n_outputs: int, hidden_layer_sizes=()) -> torch.nn.Module:
    """A linear model (no hidden layer) or an MLP with ReLU activations.

    Parameters
    ----------
    n_features : int
        Input width; the network reads inputs of shape (B, n_features).
    n_outputs : int
        1 for a binary problem (the margin), ``n_classes`` otherwise.
    hidden_layer_sizes : sequence of int
        Width of each hidden layer (empty: a linear model).

    Returns
    -------
    torch.nn.Sequential
        Output of shape (B, n_outputs); PyTorch's default initialization (seed it first).
    """
    layers, d = [], int(n_features)
    for h in hidden_layer_sizes:
        layers += [torch.nn.Linear(d, int(h)), torch.nn.ReLU()]
        d = int(h)
    layers.append(torch.nn.Linear(d, int(n_outputs)))
    return torch.nn.Sequential(*layers)


def _as_array(X) -> np.ndarray:
    """Features as a float32 array (DataFrames and sparse matrices included).

    Raises
    ------
    ValueError
        For non-numeric, missing or infinite values.
    """
    if sp.issparse(X):
        X = X.toarray()
    elif hasattr(X, "to_numpy"):
        X = X.to_numpy()
    try:
        X = np.asarray(X, dtype=np.float32)
    except (TypeError, ValueError):
        raise ValueError("X must be numeric (encode categorical columns first, e.g. with a "
                         "ColumnTransformer in a Pipeline)") from None
    if X.ndim < 2:
        raise ValueError(f"X must have at least 2 dimensions (n_samples, ...), got shape {X.shape}")
    if not np.isfinite(X).all():
        raise ValueError("X contains NaN or infinite values")
    return X


class LagrangianClassifier(ClassifierMixin, BaseEstimator):
    """A PyTorch network trained to minimize an objective subject to rate constraints.

    The goals are the core's (:mod:`goalfit.goals`), compiled once on the training sample and
    estimated on each minibatch through differentiable proxies of the rates
    (:mod:`goalfit.torch.rates`); the model and the Lagrange multipliers play the Lagrangian or
    the proxy-Lagrangian game (Cotter, Jiang & Sridharan, ALT 2019) and the snapshots taken along
    training are shrunk by an LP to a stochastic classifier of at most ``m + 1`` networks
    (ibid., §2.3), as TFCO does. The network sees only ``X``: the groups enter the training loss,
    not the model's inputs, so :meth:`predict` needs no sensitive features.

    Parameters
    ----------
    module : None, torch.nn.Module or callable, default None
        ``None``: a linear model, or an MLP with ``hidden_layer_sizes``; a module: deep-copied
        at fit time (its weights are the initialization); a callable ``(n_features, n_outputs)
        -> Module``. Binary problems need an output of shape (B,), (B, 1) or (B, 2) (margin
        ``f``, class 1 iff ``f > 0``), multiclass ones (B, n_classes).
    objective : str or goal expression, default "error"
        Linear objectives are estimated directly; others through slack variables (Narasimhan,
        Cotter & Gupta, NeurIPS 2019).
    constraints : sequence of Constraint
        Rate constraints (differences, scalar multiples, max-abs disparities, ratios with a
        constant bound such as ``precision(1) >= 0.8``), as for :class:`goalfit.GoalClassifier`.
    formulation : {"proxy_lagrangian", "lagrangian"}, default "proxy_lagrangian"
        ``"lagrangian"``: both players on the proxy Lagrangian; ``"proxy_lagrangian"``: the
        multipliers are updated from the exact 0-1 rates of the batch (swap-regret update).
    proxy : {"hinge", "logistic", "sigmoid", "softmax", "cross_entropy"} or None
        Proxy of the prediction indicators; default ``"hinge"`` for binary problems (TFCO's
        default), ``"cross_entropy"`` for multiclass ones: it bounds each example's cost in the
        model's loss by a cost-augmented softmax cross-entropy (convex, does not saturate; see
        :mod:`goalfit.torch.rates`). The plain ``"softmax"`` proxy saturates: on load_digits with
        ten recall constraints the CNN lost whole classes it could not recover
        (``benchmarks/README.md``).
    hidden_layer_sizes : tuple of int, default ()
        Hidden layers of the default network (``module=None``).
    optimizer : str or callable, default "adam"
        The model's optimizer: a name (``"adam"``, ``"sgd"``, ``"adagrad"``, ``"adamw"``,
        ``"rmsprop"``) or ``params -> torch.optim.Optimizer``.
    learning_rate : float, default 0.01
    weight_decay : float, default 0.0
        L2 penalty of the model's optimizer.
    multiplier_optimizer : str or callable, default "sgd"
        The Lagrangian multipliers' optimizer (ascent, ``maximize=True``); the
        proxy-Lagrangian's update is multiplicative and uses only the step size.
    multiplier_learning_rate : float, default 0.1
    multiplier_bound : float or None
        Upper bound of the Lagrangian's multipliers (None: unbounded).
    batch_size : int, default 256
    min_slice_rows : int, default 8
        A (group cell, class) slice expected to have fewer rows per batch gets its own stream
        that contributes this many rows to every batch (:mod:`goalfit.torch.batches`).
    n_epochs : int, default 20
    snapshots_per_epoch : int, default 1
    prediction : {"stochastic", "best_iterate", "last"}, default "stochastic"
        What :meth:`predict` uses: the shrunk stochastic classifier, TFCO's rank-based best
        snapshot, or the last snapshot.
    shrink_on : {"train", "validation"}, default "train"
        Sample whose snapshot rates feed the LP and the best-iterate rule.
    n_iter_no_change : int or None, default None
        Early stopping: with validation data, stop when ``n_iter_no_change`` snapshots in a row
        have not improved the best validation snapshot (lower max violation beyond ``tol``,
        else lower objective).
    tol : float, default 1e-3
        Violation below which a validation snapshot counts as feasible for early stopping.
    device : str, default "cpu"
        ``"cuda"`` when a GPU is present.
    checkpoint_path : str or None
        Written after every epoch (model, slacks, both optimizers, RNG streams, snapshots); when
        it exists at :meth:`fit`, training resumes from it.
    progress : bool, default False
        A rich progress bar per epoch.
    random_state : int or None
        Seeds the initialization (``module=None`` or a callable), the batches and
        :meth:`predict`'s sampling; on the CPU the same seed gives the same model.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    module_ : torch.nn.Module
        The network at the end of training.
    classifier_ : RandomizedClassifier
        The classifier :meth:`predict` uses (see ``prediction``).
    stochastic_classifier_, best_iterate_classifier_, last_classifier_ : RandomizedClassifier
        The shrunk mixture, TFCO's best iterate and the last snapshot (group-blind members).
    trainer_ : Trainer
        The training state (model, multipliers, optimizers, batch streams); not pickled.
    snapshots_ : list of Snapshot
    shrunk_index_, shrunk_weights_ : ndarrays
        Snapshots in the shrunk mixture and their probabilities.
    best_index_ : int
    feasible_ : bool
        Whether the shrunk mixture meets the constraints on the ``shrink_on`` sample.
    history_ : list of dict
        One row per epoch: training seconds, objective and constraint values of the epoch's
        last snapshot (exact, on the whole training sample), max violation, multipliers,
        validation values when given.
    multipliers_ : ndarray
        Final multipliers (proxy-Lagrangian: ``m + 1`` coordinates, the first weighs the
        objective).
    problem_ : CompiledProblem
    n_epochs_ : int
        Epochs trained (fewer than ``n_epochs`` after early stopping).
    stopped_early_ : bool
    seed_ : int
        The seed used (``random_state``, or one drawn when it is None).
    cell_encoder_ : CellEncoder
        The training sample's (group) cells the goals were compiled on.
    fit_seconds_ : float

    Raises
    ------
    ValueError
        At fit time, for inputs whose numbers of rows differ, negative, NaN or all-zero sample
        weights, goals the core rejects (unknown groups, empty slices), constraints
        without a linear-row form, a network output that does not match the classes, an unknown
        formulation, proxy or optimizer. Infeasible goals do not raise: the least-violating
        mixture is returned, ``feasible_`` is False and a warning is issued.
    """

    def __init__(self, module=None, *, objective="error", constraints=(), formulation="proxy_lagrangian",
                 proxy=None, hidden_layer_sizes=(), optimizer="adam", learning_rate=0.01, weight_decay=0.0,
                 multiplier_optimizer="sgd", multiplier_learning_rate=0.1, multiplier_bound=None, batch_size=256,
                 min_slice_rows=8, n_epochs=20, snapshots_per_epoch=1, prediction="stochastic", shrink_on="train",
                 n_iter_no_change=None, tol=1e-3, device="cpu", checkpoint_path=None, progress=False,
                 random_state=None):
        self.module = module
        self.objective = objective
        self.constraints = constraints
        self.formulation = formulation
        self.proxy = proxy
        self.hidden_layer_sizes = hidden_layer_sizes
        self.optimizer = optimizer
        self.learning_rate = learning_rate
        self.weight_decay = weight_decay
        self.multiplier_optimizer = multiplier_optimizer
        self.multiplier_learning_rate = multiplier_learning_rate
        self.multiplier_bound = multiplier_bound
        self.batch_size = batch_size
        self.min_slice_rows = min_slice_rows
        self.n_epochs = n_epochs
        self.snapshots_per_epoch = snapshots_per_epoch
        self.prediction = prediction
        self.shrink_on = shrink_on
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.device = device
        self.checkpoint_path = checkpoint_path
        self.progress = progress
        self.random_state = random_state

    # ------------------------------------------------------------------ helpers
    def _seed(self) -> int:
        if self.random_state is None:
            return int(np.random.SeedSequence().entropy % (2**31))
        if isinstance(self.random_state, (int, np.integer)):
            return int(self.random_state)
        raise ValueError(f"random_state must be an int or None, got {self.random_state!r}")

    def _build_module(self, n_features, n_outputs, seed):
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            if self.module is None:
                return make_mlp(n_features, n_outputs, self.hidden_layer_sizes)
            if isinstance(self.module, torch.nn.Module):
                return copy.deepcopy(self.module)
            if callable(self.module):
                out = self.module(n_features, n_outputs)
                if not isinstance(out, torch.nn.Module):
                    raise ValueError(f"module(n_features, n_outputs) must return a torch.nn.Module, got {type(out).__name__}")
                return out
        raise ValueError(f"module must be None, a torch.nn.Module or a callable, got {type(self.module).__name__}")

    def _data(self, X, y_codes, cells, sw, device) -> TrainData:
        return TrainData(torch.as_tensor(X, device=device), torch.as_tensor(y_codes, device=device),
                         torch.as_tensor(cells, device=device), sw, np.asarray(y_codes), np.asarray(cells))

    def _check_params(self):
        if self.formulation not in FORMULATIONS:
            raise ValueError(f"formulation must be one of {list(FORMULATIONS)}, got {self.formulation!r}")
        if self.prediction not in PREDICTIONS:
            raise ValueError(f"prediction must be one of {list(PREDICTIONS)}, got {self.prediction!r}")
        if self.shrink_on not in ("train", "validation"):
            raise ValueError(f"shrink_on must be 'train' or 'validation', got {self.shrink_on!r}")
        if not (isinstance(self.n_epochs, (int, np.integer)) and self.n_epochs >= 1):
            raise ValueError(f"n_epochs must be a positive integer, got {self.n_epochs!r}")

    # ------------------------------------------------------------------ fitting
    def _make_trainer(self, X, y, sensitive_features, sample_weight, X_val, y_val, sensitive_features_val):
        """Validate the data, compile the goals and build the trainer (no training)."""
        self._check_params()
        X = _as_array(X)
        n = len(X)
        if y is None:
            raise ValueError("LagrangianClassifier requires y to be passed, but the target y is None")
        y = column_or_1d(y, warn=True)
        check_consistent_rows(X=X, y=y, sensitive_features=sensitive_features, sample_weight=sample_weight)
        check_classification_targets(y)
        classes = np.unique(y)
        if hasattr(self, "classes_") and not np.array_equal(classes, self.classes_):
            raise ValueError(f"y has classes {classes.tolist()}, the fitted model {self.classes_.tolist()}")
        self.classes_ = classes
        if len(self.classes_) < 2:
            raise ValueError(f"y has one class {self.classes_.tolist()}: need at least two")
        n_classes = len(self.classes_)
        y_codes = encode_labels(y, self.classes_)
        sw = check_sample_weight(sample_weight, n)
        encoder = CellEncoder().fit(sensitive_features, n)
        cells = encoder.transform(sensitive_features, n)
        space = ConfusionSpace.from_codes(y_codes, cells, self.classes_, encoder.cells_, sw)
        self.problem_ = Problem(self.objective, self.constraints).compile(space)
        self.cell_encoder_ = encoder
        device = torch.device(self.device)
        rates = RateProblem(self.problem_, self._proxy(), device)
        if getattr(self, "seed_", None) is None:
            self.seed_ = self._seed()
        seed = self.seed_
        template = getattr(self, "_template", None)
        if template is not None:
            module = copy.deepcopy(template)
        else:
            module = self._build_module(X.shape[1] if X.ndim == 2 else None, 1 if n_classes == 2 else n_classes, seed)
        module.to(device)
        val = None
        if X_val is not None:
            if y_val is None:
                raise ValueError("X_val was given without y_val")
            Xv = _as_array(X_val)
            val = self._data(Xv, encode_labels(column_or_1d(y_val), self.classes_),
                             encoder.transform(sensitive_features_val, len(Xv)), None, device)
        elif self.shrink_on == "validation" or self.n_iter_no_change is not None:
            raise ValueError("shrink_on='validation' and n_iter_no_change need X_val, y_val "
                             "(and sensitive_features_val when the goals use groups)")
        self._val = val
        if X.ndim == 2:
            self.n_features_in_ = X.shape[1]
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            self.trainer_ = Trainer(
                module, rates, self._data(X, y_codes, cells, sw, device), formulation=self.formulation,
                optimizer=self.optimizer, learning_rate=self.learning_rate, weight_decay=self.weight_decay,
                multiplier_optimizer=self.multiplier_optimizer,
                multiplier_learning_rate=self.multiplier_learning_rate, multiplier_bound=self.multiplier_bound,
                batch_size=self.batch_size, min_slice_rows=self.min_slice_rows,
                snapshots_per_epoch=self.snapshots_per_epoch, seed=seed, device=device, val=val)
            self._torch_rng = torch.get_rng_state()
        return self.trainer_

    def _proxy(self):
        if self.proxy is not None:
            return self.proxy
        return "hinge" if len(self.classes_) == 2 else "cross_entropy"

    def fit(self, X, y, *, sensitive_features=None, sample_weight=None, X_val=None, y_val=None,
            sensitive_features_val=None):
        """Train the network on ``(X, y)`` for ``n_epochs`` epochs (or until early stopping).

        Parameters
        ----------
        X : array-like, DataFrame or sparse matrix of shape (n_samples, ...)
            Numeric features; any trailing shape the module accepts (e.g. images
            (n_samples, 1, 8, 8) for a CNN).
        y : array-like of shape (n_samples,)
        sensitive_features : array-like, Series, DataFrame or dict, optional
            Group columns the goals refer to; several columns give intersection cells, so
            overlapping groups (``group={"sex": "Female"}``, ``group={"race": "Black"}``) are
            unions of cells. Used by the loss only.
        sample_weight : array-like of shape (n_samples,), optional
        X_val, y_val, sensitive_features_val : optional
            Validation sample for early stopping and ``shrink_on="validation"``.

        Returns
        -------
        self
        """
        t_start = time.perf_counter()
        for k in ("classes_", "seed_", "_template", "_trainer_state"):
            self.__dict__.pop(k, None)
        tr = self._make_trainer(X, y, sensitive_features, sample_weight, X_val, y_val, sensitive_features_val)
        if self.checkpoint_path is not None and os.path.exists(self.checkpoint_path):
            tr.load_state_dict(torch.load(self.checkpoint_path, weights_only=False))
            self._torch_rng = tr.torch_rng
        self._train(self.n_epochs - tr.epoch)
        self._finish()
        self.fit_seconds_ = time.perf_counter() - t_start
        return self

    def partial_fit(self, X, y, *, sensitive_features=None, sample_weight=None, X_val=None, y_val=None,
                    sensitive_features_val=None):
        """Train one more epoch from the current state (model, multipliers, slacks, optimizers,
        batch streams), then shrink the snapshots again.

        Pass the training sample given to :meth:`fit` (the goals are bound to it; an unpickled
        estimator keeps its weights, not its data). On an unfitted estimator this is
        :meth:`fit` with one epoch.

        Raises
        ------
        ValueError
            If the sample has another number of rows than the one the model was fitted on.
        """
        args = (X, y, sensitive_features, sample_weight, X_val, y_val, sensitive_features_val)
        if not hasattr(self, "trainer_") and not hasattr(self, "_trainer_state"):
            n_epochs = self.n_epochs
            self.n_epochs = 1
            try:
                return self.fit(X, y, sensitive_features=sensitive_features, sample_weight=sample_weight,
                                X_val=X_val, y_val=y_val, sensitive_features_val=sensitive_features_val)
            finally:
                self.n_epochs = n_epochs
        if hasattr(self, "_trainer_state"):  # unpickled: rebuild the trainer on the data
            saved = self.__dict__.pop("_trainer_state")
            tr = self._make_trainer(*args)
            tr.load_state_dict(saved)
            self._torch_rng = tr.torch_rng
        elif n_rows(X) != len(self.trainer_.data.X):
            raise ValueError(f"partial_fit continues training on the sample given to fit "
                             f"({len(self.trainer_.data.X)} rows), got {n_rows(X)} rows")
        self._train(1, force=True)
        self._finish()
        return self

    def _train(self, n_epochs, force=False):
        tr = self.trainer_
        with torch.random.fork_rng(devices=[]):
            torch.set_rng_state(self._torch_rng)
            self._train_epochs(tr, n_epochs, force)
            self._torch_rng = torch.get_rng_state()

    def _train_epochs(self, tr, n_epochs, force):
        best, stale = None, 0
        self.stopped_early_ = False
        bar = None
        if self.progress:
            from rich.progress import Progress

            bar = Progress(transient=True)
            bar.start()
            task = bar.add_task("epoch", total=tr.batches.n_batches)
        try:
            for _ in range(max(0, n_epochs)):
                if bar is not None:
                    bar.update(task, completed=0, description=f"epoch {tr.epoch + 1}")
                    row = tr.run_epoch(lambda b, nb: bar.update(task, completed=b))
                else:
                    row = tr.run_epoch()
                if self.checkpoint_path is not None:
                    torch.save(tr.state_dict(), self.checkpoint_path)
                if self.n_iter_no_change is not None and not force:
                    key = (max(row["max_violation_val"] - self.tol, 0.0), row["objective_val"])
                    if best is None or key < best:
                        best, stale = key, 0
                    else:
                        stale += 1
                        if stale >= self.n_iter_no_change:
                            self.stopped_early_ = True
                            break
        finally:
            if bar is not None:
                bar.stop()

    def _finish(self):
        tr = self.trainer_
        self.module_ = tr.module
        self.snapshots_ = tr.snapshots
        self.history_ = tr.history
        self._predictor = tr.predictor
        self.n_epochs_ = tr.epoch
        self.multipliers_ = tr.multipliers.current().cpu().numpy().astype(float)
        if self.shrink_on == "validation":
            problem = Problem(self.objective, self.constraints).compile(self._val_space())
            Cs = np.stack([s.confusion_val for s in tr.snapshots])
        else:
            problem, Cs = self.problem_, np.stack([s.confusion for s in tr.snapshots])
        self.shrunk_index_, self.shrunk_weights_, self.feasible_, viol = shrink(problem, Cs)
        self.best_index_ = best_iterate(problem, Cs)
        self._build_classifiers()
        if self.problem_.constraints and not self.feasible_:
            warnings.warn("no mixture of the snapshots meets the goals on the "
                          f"{'training' if self.shrink_on == 'train' else 'validation'} sample: returning the "
                          f"least-violating one (max violation {viol:.4g})", RuntimeWarning, stacklevel=3)

    def _val_space(self):
        v = self._val
        return ConfusionSpace.from_codes(v.y_np, v.cells_np, self.classes_, self.cell_encoder_.cells_, None)

    def _build_classifiers(self):
        snaps = self.snapshots_
        blind = CellEncoder().fit(None, 1)
        mk = lambda idx, w: RandomizedClassifier(  # noqa: E731
            [NetworkMember(self._predictor, snaps[i].state) for i in idx], w, self.classes_, blind, None)
        self.stochastic_classifier_ = mk(self.shrunk_index_, self.shrunk_weights_)
        self.best_iterate_classifier_ = mk([self.best_index_], [1.0])
        self.last_classifier_ = mk([len(snaps) - 1], [1.0])
        self.classifier_ = {"stochastic": self.stochastic_classifier_, "best_iterate": self.best_iterate_classifier_,
                            "last": self.last_classifier_}[self.prediction]

    # ------------------------------------------------------------------ predicting
    def predict(self, X, *, random_state=None):
        """Predicted labels, shape (n_samples,); no sensitive features needed.

        The stochastic classifier draws one network per example (seeded by ``random_state``,
        default the estimator's).

        Parameters
        ----------
        X : array-like of shape (n_samples, ...)
            Features as at fit time.
        random_state : int, optional
            Seed of the draw; the same seed gives the same predictions.
        """
        check_is_fitted(self, "classifier_")
        rs = self.random_state if random_state is None else random_state
        return self.classifier_.predict(_as_array(X), random_state=rs)

    def predict_proba(self, X):
        """Distribution of the (stochastic) rule's prediction per example, shape (n_samples, n_classes).

        Entry ``[l, j]`` is the probability that :meth:`predict` outputs ``classes_[j]`` (the
        total weight of the networks that predict it), not an estimate of ``P(y | x)``.
        """
        check_is_fitted(self, "classifier_")
        return self.classifier_.predict_proba(_as_array(X))

    def decision_function(self, X) -> np.ndarray:
        """Output of the last snapshot's network: the margin, shape (n_samples,), for binary
        problems (class ``classes_[1]`` iff positive); logits, shape (n_samples, n_classes),
        otherwise."""
        check_is_fitted(self, "classifier_")
        from .rates import margins

        out = self._predictor.logits(self.snapshots_[-1].state, _as_array(X))
        return (margins(out, 2) if len(self.classes_) == 2 else out).numpy()

    def evaluate(self, X, y, *, sensitive_features=None, sample_weight=None, confidence=None,
                 interval_method="auto"):
        """Objective and constraint values on labelled data (expected over the randomization).

        Parameters
        ----------
        X : array-like of shape (n_samples, ...)
        y : array-like of shape (n_samples,)
        sensitive_features : optional
            The group columns the goals refer to (the network does not read them).
        sample_weight : array-like of shape (n_samples,), optional
        confidence : float in (0, 1), optional
            Add confidence intervals (see :func:`goalfit.metrics.evaluate_problem`).
        interval_method : {"auto", "clopper_pearson", "delta", "bootstrap"}

        Returns
        -------
        dict with ``objective`` {name, value}, ``constraints`` (list of dicts name/value/bound/
        violation/met) and ``accuracy``, as :meth:`goalfit.GoalClassifier.evaluate`.
        """
        from ..metrics import evaluate_problem

        check_consistent_rows(X=X, y=y, sensitive_features=sensitive_features, sample_weight=sample_weight)
        dist = self.predict_proba(X)
        return evaluate_problem(Problem(self.objective, self.constraints), y, dist,
                                sensitive_features=sensitive_features, sample_weight=sample_weight,
                                classes=self.classes_, confidence=confidence, interval_method=interval_method,
                                random_state=self.seed_)

    def score(self, X, y, sample_weight=None):
        """Expected accuracy of the (stochastic) classifier, in [0, 1].

        Raises
        ------
        ValueError
            If ``y`` holds labels that are not among ``classes_``.
        """
        check_is_fitted(self, "classifier_")
        C = self.classifier_.expected_confusion_matrix(_as_array(X), column_or_1d(y), sample_weight=sample_weight)
        return float(np.trace(C))

    # ------------------------------------------------------------------ pickling
    def __getstate__(self):
        """Pickle the networks through their ``state_dict``s: the architecture once, the weights
        of every snapshot and the trainer's state (optimizers, multipliers, streams), not the
        training data."""
        state = self.__dict__.copy()
        for k in ("module_", "snapshots_", "classifier_", "stochastic_classifier_", "best_iterate_classifier_",
                  "last_classifier_", "history_", "_val"):
            state.pop(k, None)
        if "trainer_" in state:
            tr = state.pop("trainer_")
            state["_trainer_state"] = tr.state_dict()
            state["_template"] = tr.predictor.template
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        saved = state.get("_trainer_state")
        if saved is None:
            return
        self.module_ = copy.deepcopy(self._template)
        self.module_.load_state_dict(saved["module"])
        self.snapshots_, self.history_ = saved["snapshots"], saved["history"]
        self._predictor = NetworkPredictor(self._template, len(self.classes_), self.device)
        self._val = None
        self._build_classifiers()
