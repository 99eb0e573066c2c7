"""The scikit-learn estimator: rate-constrained training of a PyTorch network."""
from __future__ import annotations

import copy
import numbers
import os
import time
import warnings

import numpy as np
import scipy.sparse as sp
import torch
# scikit-learn has no public module for parameter constraints: _param_validation is what its own
# estimators and scikit-learn-compatible libraries use for _parameter_constraints
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_array, check_is_fitted

from ..classifiers import RandomizedClassifier
from ..confusion import CellEncoder
from ..fit import GOAL_PARAMETERS, GoalEstimator, prepare
from ..utils.deprecation import DeprecatedParams, Renamed
from .method import LAGRANGIAN_PARAMS, LagrangianMethod, LagrangianSettings
from .rates import RateProblem, margins
from .train import FORMULATIONS, NetworkMember, NetworkPredictor, TrainData


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


#: The largest error of the float32 cast of a feature, relative to the feature's spread (its
#: standard deviation), before :func:`_as_array` warns that the cast loses the feature.
CAST_TOLERANCE = 1e-3


def _as_array(X, what: str = "X", dtype=np.float32) -> np.ndarray:
    """Features as a float32 array (``dtype``: float64 for a float64 network; DataFrames and
    sparse matrices included).

    Warns
    -----
    UserWarning
        When the cast from a wider type loses a feature's variation: a feature whose values sit
        far from zero compared with their spread (``1e8 + x``) keeps only about 7 significant
        digits in float32; the message names the column and the fix (standardize the features).

    Raises
    ------
    ValueError
        For non-numeric, missing or infinite values.
    """
    if sp.issparse(X):
        X = X.toarray()
    try:
        wide = check_array(X, dtype=None, allow_nd=True, ensure_all_finite=True)
        out = check_array(wide, dtype=dtype, allow_nd=True, ensure_all_finite=True)
    except ValueError as err:
        if "could not convert" in str(err) or "convert string" in str(err):
            raise ValueError(f"{what} must be numeric (encode categorical columns first, e.g. with "
                             f"goalfit.make_estimator's TableEncoder or a ColumnTransformer): {err}") from None
        raise
    if (out.dtype == np.float32 and wide.dtype != np.float32 and wide.dtype.kind in "fiu" and wide.dtype.itemsize >= 4
            and len(out) > 1):
        _warn_lossy_cast(wide, out, what)
    return out


def _warn_lossy_cast(wide: np.ndarray, out: np.ndarray, what: str) -> None:
    """Warn when a feature's float32 values lose its variation (see :func:`_as_array`)."""
    a = wide.reshape(len(wide), -1).astype(np.float64, copy=False)
    err = np.abs(out.reshape(len(out), -1).astype(np.float64) - a).max(axis=0)
    spread = a.std(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(spread > 0, err / spread, 0.0)
    if rel.max(initial=0.0) > CAST_TOLERANCE:
        j = int(np.argmax(rel))
        warnings.warn(f"{what} is cast to float32 (the network's type), which loses column {j}'s variation "
                      f"(rounding error {rel[j]:.2g} of its standard deviation: values around {np.median(a[:, j]):.4g} "
                      f"vary by {spread[j]:.3g}): standardize the features first (e.g. "
                      "sklearn.preprocessing.StandardScaler, or subtract each column's mean)", UserWarning,
                      stacklevel=6)


class LagrangianClassifier(DeprecatedParams, GoalEstimator):
    """A PyTorch network trained to minimize an objective subject to rate constraints.

    The goals are the core's (:mod:`goalfit.goals`), compiled once on the training sample and
    estimated on each minibatch through differentiable proxies of the rates
    (:mod:`goalfit.torch.rates`); the model and the Lagrange multipliers play the Lagrangian or
    the proxy-Lagrangian game (Cotter, Jiang & Sridharan, ALT 2019) and the snapshots taken along
    training are shrunk by an LP to a stochastic classifier of at most ``m + 1`` networks
    (ibid., §2.3), as TFCO does (:class:`goalfit.torch.method.LagrangianMethod`). The network
    sees only ``X``: the groups enter the training loss, not the model's inputs, so
    :meth:`predict` needs no sensitive features.

    Parameters
    ----------
    estimator : None, torch.nn.Module or callable, default None
        The network. ``None``: a linear model, or an MLP with ``hidden_layer_sizes``; a module:
        deep-copied at fit time (its weights are the initialization); a callable
        ``(n_features, n_outputs) -> Module``. Binary problems need an output of shape (B,),
        (B, 1) or (B, 2) (margin ``f``, class 1 iff ``f > 0``), multiclass ones (B, n_classes).
        Features are cast to float32 (a warning names a column that loses its variation:
        standardize it), to float64 for a module with float64 parameters (``module.double()``).
    objective : str or goal expression, default "error"
        Linear objectives are estimated directly; others through slack variables (Narasimhan,
        Cotter & Gupta, NeurIPS 2019).
    constraints : sequence of Constraint
        Rate constraints (differences, scalar multiples, max-abs disparities, ratios with a
        constant bound such as ``precision(1) >= 0.8``), as for :class:`goalfit.GoalClassifier`.
    method : {"proxy_lagrangian", "lagrangian"}, default "proxy_lagrangian"
        ``"lagrangian"``: both players on the proxy Lagrangian; ``"proxy_lagrangian"``: the
        multipliers are updated from the exact 0-1 rates of the batch (swap-regret update).
    method_params : dict, optional
        The method's knobs (:data:`goalfit.torch.method.LAGRANGIAN_PARAMS`): ``proxy``
        (``"hinge"``, default for binary problems as TFCO's; ``"logistic"``, ``"sigmoid"``,
        ``"softmax"``, ``"cross_entropy"``, default for multiclass: a cost-augmented
        cross-entropy bound of each example's cost that does not saturate), ``optimizer``
        (``"adam"``, ``"sgd"``, ``"adagrad"``, ``"adamw"``, ``"rmsprop"`` or ``params ->
        torch.optim.Optimizer``), ``learning_rate`` (0.01), ``multiplier_optimizer`` (``"sgd"``),
        ``multiplier_learning_rate`` (None: 0.3 for the proxy-Lagrangian's multiplicative step on
        the exact rates, 0.1 for the Lagrangian's additive one on the proxies; a larger
        proxy-Lagrangian step meets many overlapping constraints in fewer epochs but costs
        accuracy where a single constraint binds, a smaller one needs more epochs;
        ``{"multiplier_learning_rate": 1.0}`` with ``max_iter=20`` is the earlier default),
        ``multiplier_bound`` (None), ``min_slice_rows`` (8: a (group cell, class) slice
        expected to have fewer rows per batch gets its own stream),
        ``snapshots_per_epoch`` (1), ``prediction`` (``"stochastic"``: the shrunk mixture,
        ``"best_iterate"``: TFCO's rank-based best snapshot, ``"last"``), ``shrink_on``
        (``"train"`` or ``"validation"``), ``n_iter_no_change`` (early stopping on validation
        data) and ``checkpoint_path`` (written after every epoch; training resumes from it when
        it exists at :meth:`fit`).
    hidden_layer_sizes : tuple of int, default ()
        Hidden layers of the default network (``estimator=None``).
    alpha : float, default 0.0
        L2 penalty (weight decay) of the model's optimizer.
    batch_size : int or "auto", default "auto"
        Rows per minibatch; ``"auto"``: ``min(256, max(16, n_samples // 20))``, so a small
        sample still gets about 20 steps per epoch.
    max_iter : int, default 40
        Epochs. The shrunk mixture is chosen among the snapshots of every epoch; with the
        default multiplier step, goals with many constraints need the longer run (measurements
        in ``benchmarks/README.md``, "Measurements behind the library's choices").
    tol : float, default 1e-3
        Violation below which a validation snapshot counts as feasible for early stopping.
    device : str, default "cpu"
        ``"cuda"`` when a GPU is present (an error names the problem otherwise).
    random_state : int or None
        Seeds the initialization, the batches and :meth:`predict`'s sampling; on the CPU the
        same seed gives the same model.
    verbose : int, default 0
        0: silent; 1 or 2: a line per epoch (objective and worst violation on the training sample).

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
        The training state (model, multipliers, optimizers, batch streams); pickled as its
        ``state_dict``.
    snapshots_ : list of Snapshot
    shrunk_index_, shrunk_weights_ : ndarrays
        Snapshots in the shrunk mixture and their probabilities.
    best_index_ : int
    multipliers_ : ndarray
        Final multipliers (proxy-Lagrangian: ``m + 1`` coordinates, the first weighs the
        objective).
    n_epochs_, n_iter_ : int
        Epochs trained (fewer than ``max_iter`` after early stopping).
    stopped_early_ : bool
    seed_ : int
        The seed used (``random_state``, or one drawn when it is None).
    cell_encoder_ : CellEncoder
        The training sample's (group) cells the goals were compiled on.
    n_features_in_ : int
    problem_, result_, history_, feasible_, max_violation_, method_, fit_seconds_
        The result protocol (:class:`goalfit.fit.GoalEstimator`); ``history_`` has one row per
        epoch (objective and constraint values of its last snapshot, exact on the whole
        training sample, multipliers, validation values when given).

    Raises
    ------
    ValueError
        At fit time, for inputs whose numbers of rows differ, negative, NaN or all-zero sample
        weights, goals the core rejects (unknown groups, empty slices), constraints without a
        linear-row form, a network whose output does not fit the problem, ``device="cuda"``
        without a GPU, an unknown ``method_params`` key.

    Examples
    --------
    >>> import numpy as np
    >>> import goalfit as gf
    >>> from goalfit.torch import LagrangianClassifier
    >>> rng = np.random.default_rng(0)
    >>> X, s = rng.normal(size=(300, 3)), rng.choice(["a", "b"], 300)
    >>> y = (X[:, 0] + 0.5 * (s == "b") + 0.5 * rng.normal(size=300) > 0).astype(int)
    >>> model = LagrangianClassifier(constraints=[gf.demographic_parity_difference() <= 0.05], max_iter=5, random_state=0)
    >>> model = model.fit(X, y, sensitive_features=s)
    >>> res = model.evaluate(X, y, sensitive_features=s)
    >>> print(f"error {res['objective']['value']:.3f}, DP difference {res['constraints'][0]['value']:.3f}")
    error 0.287, DP difference 0.050
    """

    _parameter_constraints = {
        **GOAL_PARAMETERS,
        "estimator": [None, torch.nn.Module, callable],
        "method": [StrOptions(set(FORMULATIONS))],
        "hidden_layer_sizes": ["array-like"],
        "alpha": [Interval(numbers.Real, 0, None, closed="left")],
        "batch_size": [Interval(numbers.Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "device": [str, torch.device],
    }

    def __init__(self, estimator=None, *, objective="error", constraints=(), method="proxy_lagrangian",
                 method_params=None, hidden_layer_sizes=(), alpha=0.0, batch_size="auto", max_iter=40, tol=1e-3,
                 device="cpu", confidence=None, margin=None, random_state=None, verbose=0, **deprecated_params):
        self.estimator = estimator
        self.objective = objective
        self.constraints = constraints
        self.method = method
        self.method_params = method_params
        self.hidden_layer_sizes = hidden_layer_sizes
        self.alpha = alpha
        self.batch_size = batch_size
        self.max_iter = max_iter
        self.tol = tol
        self.device = device
        self.confidence = confidence
        self.margin = margin
        self.random_state = random_state
        self.verbose = verbose
        self._fold_deprecated(deprecated_params)

    #: Constructor keywords of goalfit 0.1 (accepted with a FutureWarning until 0.3): where each now lives.
    _deprecated_params = {
        "module": "estimator", "formulation": "method", "n_epochs": "max_iter", "weight_decay": "alpha",
        "progress": Renamed("verbose", convert=lambda v, est: int(bool(v)), use="verbose=1"),
        **{name: f"method_params.{name}" for name in LAGRANGIAN_PARAMS},
    }

    # ------------------------------------------------------------------ helpers
    def _seed(self) -> int:
        if self.random_state is None:
            entropy = np.random.SeedSequence().entropy
            assert isinstance(entropy, int)  # drawn from the OS when none is given
            return int(entropy % (2**31))
        if isinstance(self.random_state, (int, np.integer)):
            return int(self.random_state)
        raise ValueError(f"random_state must be an int or None, got {self.random_state!r}")

    def _build_module(self, n_features, n_outputs, seed):
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            if self.estimator is None:
                return make_mlp(n_features, n_outputs, self.hidden_layer_sizes)
            if isinstance(self.estimator, torch.nn.Module):
                return copy.deepcopy(self.estimator)
            out = self.estimator(n_features, n_outputs)
            if not isinstance(out, torch.nn.Module):
                raise ValueError(f"estimator(n_features, n_outputs) must return a torch.nn.Module, got "
                                 f"{type(out).__name__}")
            return out

    def _device(self) -> torch.device:
        try:
            device = torch.device(self.device)
        except (RuntimeError, TypeError) as err:
            raise ValueError(f"device={self.device!r} is not a torch device ({err})") from None
        if device.type == "cuda" and not torch.cuda.is_available():
            raise ValueError(f"device={self.device!r}, but this machine has no CUDA GPU visible to torch "
                             "(torch.cuda.is_available() is False): use device='cpu'")
        if device.type == "mps" and not torch.backends.mps.is_available():
            raise ValueError(f"device={self.device!r}, but the MPS backend is not available: use device='cpu'")
        return device

    def _feature_dtype(self):
        """float64 when ``estimator`` is a module with float64 parameters (``module.double()``),
        else float32."""
        if isinstance(self.estimator, torch.nn.Module):
            dtype = next((p.dtype for p in self.estimator.parameters() if p.is_floating_point()), None)
            if dtype == torch.float64:
                return np.float64
        return np.float32

    def _features(self, X, reset: bool):
        """Features as float32 (float64 for a float64 ``estimator`` module) with the fitted trailing
        shape (``reset``: record it)."""
        X = _as_array(X, dtype=self._feature_dtype())
        if reset:
            self.n_features_in_ = int(np.prod(X.shape[1:]))
            self.input_shape_ = tuple(X.shape[1:])
        elif tuple(X.shape[1:]) != self.input_shape_:
            raise ValueError(f"X has {X.shape[1] if X.ndim == 2 else X.shape[1:]} features, but "
                             f"LagrangianClassifier is expecting "
                             f"{self.n_features_in_ if len(self.input_shape_) == 1 else self.input_shape_} features as input")
        return X

    def _check_predict_X(self, X):
        return self._features(X, reset=False)

    def _check_method_params(self) -> None:
        self._settings()
        self._device()

    def _batch_size(self, n: int) -> int:
        if isinstance(self.batch_size, str):  # "auto"
            return int(min(256, max(16, n // 20)))
        return int(self.batch_size)

    def _train_params(self, params, module, device, validation=None, validation_problem=None, n=None):
        n = self.trainer_.data.y_np.shape[0] if n is None else n
        return dict(params, module=module, device=device, seed=self.seed_, batch_size=self._batch_size(n),
                    max_iter=self.max_iter, alpha=self.alpha, tol=self.tol, validation=validation,
                    validation_problem=validation_problem)

    # ------------------------------------------------------------------ the fit template's hooks
    _fit_inputs = ("X_val", "y_val", "sensitive_features_val")

    def _reset_fit(self) -> None:
        for k in ("classes_", "seed_", "trainer_", "_trainer_state"):
            self.__dict__.pop(k, None)

    def _method(self):
        return LagrangianMethod(self.method)

    def _settings(self):
        """The validated :class:`~goalfit.torch.method.LagrangianSettings` of ``method_params``."""
        return LagrangianSettings.from_params(self.method_params, self.method, self)

    def _fit_seed(self):
        return self._seed()

    def _fit_features(self, X):
        return self._features(X, reset=True)

    def _before_solve(self, ctx) -> None:
        """At least two classes; the validation sample (early stopping, ``shrink_on="validation"``)."""
        data, params = ctx.backend.data, ctx.settings.params()
        if len(data.classes) < 2:
            raise ValueError(f"classes {data.classes.tolist()}: need at least two")
        ctx.state["device"] = self._device()
        X_val, y_val = ctx.inputs["X_val"], ctx.inputs["y_val"]
        ctx.state["validation"] = ctx.state["validation_problem"] = None
        if X_val is not None:  # given with y_val (checked with the training data)
            Xv = _as_array(X_val, "X_val", dtype=self._feature_dtype())
            vdata = prepare(Xv, y_val, sensitive_features=ctx.inputs["sensitive_features_val"], classes=self.classes_,
                            who="LagrangianClassifier (validation data)", warn_groups=False, suffix="_val")
            ctx.state["validation"], ctx.state["validation_problem"] = (vdata, Xv), ctx.problem.compile(vdata.space)
        elif params["shrink_on"] == "validation" or params["n_iter_no_change"] is not None:
            raise ValueError("shrink_on='validation' and n_iter_no_change need X_val, y_val (and "
                             "sensitive_features_val when the goals use groups)")
        self.cell_encoder_ = data.encoder

    def _fit_candidate(self, ctx, constraints, data):
        """Train a network on ``data`` (from a checkpoint when ``checkpoint_path`` holds one)."""
        method, params = ctx.method, ctx.settings.params()
        compiled = self._compile_goals(ctx, constraints, data.space)
        self.seed_ = ctx.seed
        X = data.X
        n_out = 1 if len(self.classes_) == 2 else len(self.classes_)
        module = self._build_module(X.shape[1] if X.ndim == 2 else None, n_out, self.seed_)
        run = self._train_params(params, module, ctx.state["device"], ctx.state["validation"],
                                 ctx.state["validation_problem"], n=data.n_samples)
        tr = method.trainer(data, compiled, run)
        path = params["checkpoint_path"]
        if path is not None and os.path.exists(path):
            tr.load_state_dict(torch.load(path, weights_only=False))
        stopped = method.train(tr, ctx.options.get("n_epochs", self.max_iter) - tr.epoch, run, ctx.progress)
        result = method.result(tr, compiled, run, stopped)
        result.details.classifiers = clfs = self._classifiers(tr.predictor, tr.snapshots, result)
        return compiled, result, clfs[params["prediction"]]

    def _adopt_details(self, ctx, result, compiled, certification) -> None:
        d = result.details
        self.trainer_ = tr = d.trainer
        d.trainer = None  # the estimator keeps it (pickled as its state), the result does not
        self.module_ = tr.module
        self.snapshots_ = tr.snapshots
        self._template = tr.predictor.template
        self.n_epochs_ = self.n_iter_ = tr.epoch
        self.stopped_early_ = d.stopped_early
        self.multipliers_ = d.multipliers
        self.shrunk_index_, self.shrunk_weights_ = d.shrunk_index, d.shrunk_weights
        self.best_index_ = d.best_index
        clfs, d.classifiers = d.classifiers, None
        self.stochastic_classifier_ = clfs["stochastic"]
        self.best_iterate_classifier_ = clfs["best_iterate"]
        self.last_classifier_ = clfs["last"]

    def partial_fit(self, X, y, *, classes=None, sensitive_features=None, sample_weight=None):
        """Train one epoch on ``(X, y)``, continuing from the current state.

        The first call (on an unfitted estimator) starts training with ``classes`` (default: the
        labels of ``y``); later calls continue the model, its optimizers, the multipliers and the
        slacks on the data they are given: the goals are compiled on that sample (with the
        groups seen by the first call), every snapshot is re-evaluated on it, and the mixture is
        shrunk again.

        Parameters
        ----------
        X, y, sensitive_features, sample_weight
            A labelled sample (features of the fitted width).
        classes : array-like of shape (n_classes,), optional
            Every class, on the first call (as scikit-learn's incremental learners).

        Returns
        -------
        self

        Raises
        ------
        ValueError
            Another feature width, labels outside the fitted classes, ``classes`` that differ
            from the fitted ones, a group value the first call did not see, a sample on which
            a goal's slice is empty.
        """
        t_start = time.perf_counter()
        if not hasattr(self, "classes_") or not hasattr(self, "seed_"):
            cls = None if classes is None else np.unique(np.asarray(classes))
            return self._fit_template(X, y, sensitive_features, sample_weight, {}, classes=cls, n_epochs=1)
        if classes is not None and not np.array_equal(np.unique(np.asarray(classes)), self.classes_):
            raise ValueError(f"classes={np.asarray(classes).tolist()} differ from the fitted classes "
                             f"{self.classes_.tolist()}")
        method, settings = self._method(), self._settings()
        params = settings.params()
        device = self._device()
        X = self._features(X, reset=False)
        data = prepare(X, y, sensitive_features=sensitive_features, sample_weight=sample_weight,
                       classes=self.classes_, encoder=self.cell_encoder_, who="LagrangianClassifier")
        compiled = self._fitted_goals().compile(data.space)
        run = self._train_params(params, self.module_, device, n=data.n_samples)
        if getattr(self, "trainer_", None) is None:  # unpickled: rebuild the trainer from its state
            tr = method.trainer(data, compiled, dict(run, module=copy.deepcopy(self._template)))
            tr.load_state_dict(self.__dict__.pop("_trainer_state"))
        else:
            tr = self.trainer_
        tr.set_data(RateProblem(compiled, method.proxy(params, len(self.classes_)), device),
                    TrainData.of(data, X, device))
        method.train(tr, 1, run, early_stopping=False)
        result = method.result(tr, compiled, run, False)
        result.details.classifiers = clfs = self._classifiers(tr.predictor, tr.snapshots, result)
        self._adopt(result, clfs[settings.prediction], compiled, method=result.method, stacklevel=2)
        self._adopt_details(None, result, compiled, None)
        self.fit_seconds_ = time.perf_counter() - t_start
        return self

    def _classifiers(self, predictor, snaps, result) -> dict:
        """The stochastic (shrunk), best-iterate and last-snapshot rules of a trained run."""
        d = result.details
        blind = CellEncoder().fit(None, 1)

        def mixture(idx, w):
            return RandomizedClassifier([NetworkMember(predictor, snaps[i].state) for i in idx], w, self.classes_,
                                        blind, None)

        return {"stochastic": mixture(d.shrunk_index, d.shrunk_weights),
                "best_iterate": mixture([d.best_index], [1.0]), "last": mixture([len(snaps) - 1], [1.0])}

    # ------------------------------------------------------------------ predicting
    def decision_function(self, X) -> np.ndarray:
        """The output of the network :meth:`predict` uses when it uses one (the best iterate, the
        last snapshot, or a shrunk mixture of a single snapshot), else of the last snapshot:
        margins, shape (n_samples,), for binary problems (class ``classes_[1]`` iff positive);
        logits, shape (n_samples, n_classes), otherwise."""
        check_is_fitted(self, "classifier_")
        members = self.classifier_.members
        member = members[0] if len(members) == 1 else self.last_classifier_.members[0]
        out = member.predictor.logits(member.state, self._check_predict_X(X))
        return (margins(out, 2) if len(self.classes_) == 2 else out).numpy()

    def fit_baseline(self, X, y, *, sensitive_features=None, sample_weight=None, datasets=None):
        """TFCO's best deterministic iterate of this fit, for the report."""
        check_is_fitted(self, "classifier_")
        return "best iterate", self.best_iterate_classifier_, 0.0

    def report_fields(self) -> dict:
        return {"method": f"{self.method} (Cotter et al. 2019)", "n_members": int(len(self.classifier_.members)),
                "multipliers": self.multipliers_.tolist(), "history_x_key": "epoch", "history_x_name": "epoch",
                "timing": {"total_fit_seconds": self.fit_seconds_,
                           "train_seconds_per_epoch": [h["seconds"] for h in self.history_]},
                "note": ("values are expectations over the deployed classifier (the shrinking LP's mixture of at "
                         "most m + 1 snapshots by default); 'best iterate' = TFCO's rank-based deterministic "
                         "snapshot; 'oracle calls' = minibatch steps")}

    # ------------------------------------------------------------------ pickling
    def __getstate__(self):
        """The trainer travels as its ``state_dict`` (model, slacks, optimizers, multipliers,
        streams, snapshots), not with the training data."""
        state = self.__dict__.copy()
        tr = state.pop("trainer_", None)
        if tr is not None:
            state["_trainer_state"] = tr.state_dict()
        return state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.non_deterministic = False
        return tags
