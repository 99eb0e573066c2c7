"""The plug-in family as methods on the compiled problem (:class:`PluginMethod`) and its settings
(:class:`PluginSettings`)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...fit import (SILENT, TEMPLATE_OPTIONS, Method, MethodSettings, UnsupportedGoal, check_method_params,
                    keyword_names, refuse_constraints)
from ...utils.validation import check_fraction
from . import METHODS, choose_method, solve
from .baselines import BASELINES
from .group_blind import GroupBlindOracle, GroupBlindThresholdOracle
from .oracle import PluginOracle, ThresholdOracle

#: Every plug-in method name: ``"auto"``, the algorithms and the baselines.
PLUGIN_NAMES = ("auto", *METHODS, *BASELINES)

ORACLES = ("auto", "plugin", "threshold", "refit")
#: The deployed probability models under cross-fitting (``method_params["cv_model"]``).
CV_MODELS = ("average", "refit")
#: The joint models of ``method_params["joint_model"]`` (:mod:`goalfit.estimators.joint`).
JOINT_MODELS = ("product", "factored")
#: The keys of ``method_params`` that configure the plug-in fit rather than the method, with their defaults.
FIT_OPTIONS: dict[str, Any] = {"oracle": "auto", "cv_model": "average", "joint_model": "factored",
                               **TEMPLATE_OPTIONS}


def resolve_oracle(kind: str, n_classes: int, *, group_blind: bool = False) -> str:
    """The oracle ``"auto"`` stands for: ``"threshold"`` for a binary problem whose rule may read
    the groups, ``"plugin"`` otherwise (more than two classes, or ``group_blind``); any other
    kind is returned as it is.

    The threshold oracle minimizes the cost on the sample over per-group threshold rules, so it
    needs only that ``eta_1`` ranks the examples within each group; the plug-in rule also needs
    them calibrated within each group (Narasimhan et al., JMLR 2024, Alg. 9/10) and loses
    accuracy where they are not. The measurements behind the choice are in
    ``benchmarks/README.md`` (section ``oracle_choice.py``).

    Parameters
    ----------
    kind : {"auto", "plugin", "threshold", "refit"}
    n_classes : int
    group_blind : bool, default False

    Returns
    -------
    str

    Examples
    --------
    >>> resolve_oracle("auto", 2), resolve_oracle("auto", 3), resolve_oracle("auto", 2, group_blind=True)
    ('threshold', 'plugin', 'plugin')
    """
    if kind != "auto":
        return kind
    return "threshold" if n_classes == 2 and not group_blind else "plugin"

_UNCONSTRAINED = {"frank_wolfe": "split_frank_wolfe or con_gda", "gda": "con_gda", "bisection": "con_bisection",
                  "ellipsoid": "con_ellipsoid"}


def make_oracle(data, kind: str = "plugin", *, group_blind: bool = False):
    """The linear minimization oracle on the class probabilities ``data.scores``.

    Parameters
    ----------
    data : PreparedData
        With ``scores`` of shape (n_samples, n_classes), or (n_samples, n_cells * n_classes)
        cell-major joint probabilities when ``group_blind``.
    kind : {"auto", "plugin", "threshold"}
        The plug-in rule (Narasimhan et al. Alg. 9/10), the exact per-group thresholds on the
        sample (binary), or ``"auto"``: :func:`resolve_oracle`.
    group_blind : bool
        The group-blind oracles on joint probabilities (:mod:`goalfit.methods.plugin.group_blind`).

    Raises
    ------
    ValueError
        An unknown kind, or ``data.scores`` missing.
    """
    if data.scores is None:
        raise ValueError("the plug-in methods need class probabilities (data.scores)")
    if kind not in ("auto", "plugin", "threshold"):
        raise ValueError(f"oracle must be 'auto', 'plugin' or 'threshold' here, got {kind!r}")
    space = data.space
    kind = resolve_oracle(kind, space.n_classes, group_blind=group_blind)
    if group_blind:
        blind: type[GroupBlindOracle] = GroupBlindThresholdOracle if kind == "threshold" else GroupBlindOracle
        return blind(data.scores.reshape(-1, space.n_cells, space.n_classes), data.y_codes, data.cells, space,
                   data.sample_weight)
    cls = ThresholdOracle if kind == "threshold" else PluginOracle
    return cls(data.scores, data.y_codes, data.cells, space, data.sample_weight)


class PluginMethod(Method):
    """One plug-in method of Narasimhan et al. (JMLR 2024), or a baseline, on fixed class probabilities.

    ``solve(data, compiled, params)`` runs it with the oracle ``params["oracle"]`` (an oracle
    object, or ``"plugin"`` / ``"threshold"`` built on ``data.scores`` by :func:`make_oracle`);
    every other key of ``params`` goes to the algorithm (``max_iter``, ``tol``, step sizes, ...).

    Parameters
    ----------
    name : str
        ``"auto"`` (resolved by :func:`~goalfit.methods.plugin.choose_method`), an algorithm of
        :data:`~goalfit.methods.plugin.METHODS` or a baseline of :data:`BASELINES`.
    """

    family = "plugin"

    def __init__(self, name: str):
        if name not in PLUGIN_NAMES:
            raise ValueError(f"unknown plug-in method {name!r}; known: {list(PLUGIN_NAMES)}")
        self.name = name

    def resolve(self, compiled, oracle=None) -> str:
        """The algorithm that runs on ``compiled`` (``"auto"`` resolved, §8.6) with ``oracle``
        (an oracle object; None: as for an inexact one, see
        :func:`~goalfit.methods.plugin.choose_method`).

        Raises
        ------
        UnsupportedGoal
            When ``"auto"`` finds no method with a guarantee for the objective.
        """
        if self.name != "auto":
            return self.name
        try:
            return choose_method(compiled, oracle)
        except ValueError as err:
            raise UnsupportedGoal(str(err)) from None

    def check(self, compiled) -> None:
        """Refuse a goal the method cannot express, before any fitting (:class:`UnsupportedGoal`).

        ``"auto"`` only needs a method for the goal: :func:`choose_method` picks among the
        methods that accept it, for any oracle (the oracle, not known yet, only decides between
        such methods), so the refusals below are for a method the user named.
        """
        name = self.resolve(compiled)
        if self.name == "auto":
            return
        obj = compiled.objective
        if name in BASELINES:
            refuse_constraints(compiled, name, "the baselines ignore goals; pass method='auto' to meet them")
            if name.startswith("post_shift") and compiled.space.n_classes != 2:
                raise UnsupportedGoal(f"method {name!r} thresholds eta_1: it is for binary problems")
            return
        if name in _UNCONSTRAINED and compiled.constraints:
            raise UnsupportedGoal(f"method {name!r} is unconstrained; with constraints use {_UNCONSTRAINED[name]}")
        if name in ("column_generation",) and obj.kind != "linear":
            raise UnsupportedGoal(f"method 'column_generation' needs a linear objective; {obj.name!r} is {obj.kind} "
                                  "(method='auto' picks one for it)")
        if name in ("bisection", "con_bisection") and obj.kind != "ratio":
            raise UnsupportedGoal(f"method {name!r} needs a ratio-of-linear objective (F-measure, micro-F1); "
                                  f"{obj.name!r} is {obj.kind}")
        if name in ("column_generation", "split_frank_wolfe") and compiled.nonlinear:
            raise UnsupportedGoal(f"method {name!r} needs polyhedral constraints; {compiled.nonlinear[0].name!r} is "
                                  "not (use con_gda)")

    def param_names(self) -> list[str]:
        names = list(METHODS) if self.name == "auto" else [self.name]
        keys = {"oracle"}
        for name in names:
            func = METHODS.get(name) or BASELINES[name]
            keys |= set(keyword_names(func, exclude=("callback",)))
            if name == "gda":  # GDA is ConGDA without constraints: its keywords pass on
                keys |= set(keyword_names(METHODS["con_gda"], exclude=("callback",)))
        if any(n in BASELINES for n in names):
            keys |= set(keyword_names(BASELINES["post_shift"], exclude=("per_group",)))
        return sorted(keys)

    def solve(self, data, compiled, params: dict, progress=SILENT):
        """Run on ``data.scores`` (or the oracle in ``params["oracle"]``).

        Returns
        -------
        FitResult
            When the method's members meet no constraint set, the constant classifiers join
            them first (:func:`~goalfit.methods.plugin.repair.repair_infeasible`).
        """
        params = dict(params or {})
        oracle = params.pop("oracle", "plugin")
        if isinstance(oracle, str):
            oracle = make_oracle(data, oracle)
        name = self.resolve(compiled, oracle)
        progress.phase(name)
        if name in BASELINES:
            return BASELINES[name](compiled, oracle, **params)
        if progress.enabled and "callback" not in params:
            params["callback"] = progress
        result = solve(compiled, oracle, name, **params)
        result.method = name
        return result


@dataclass(frozen=True)
class PluginSettings(MethodSettings):
    """The validated ``method_params`` of a plug-in fit: the fit's options and the method's knobs.

    Built once per fit by :meth:`from_params` and read by attribute. The four fit options are
    fields; the chosen method's own knobs (``max_iter``, ``tol``, step sizes, ...) are the
    mapping :attr:`method_params`, checked against the keyword arguments of the algorithm(s)
    that ``method`` names (:meth:`PluginMethod.check_params`): the knobs differ per algorithm
    and are read from their signatures, so one settings class with a checked mapping keeps the
    signatures the single source of every knob's name and default (the algorithm checks the
    values it reads).

    Attributes
    ----------
    oracle : {"auto", "plugin", "threshold", "refit"}
        The linear minimization oracle (:func:`resolve_oracle`, :func:`make_oracle`).
    cv_model : {"average", "refit"}
        The deployed probability model under cross-fitting.
    joint_model : {"product", "factored"}
        The joint (group, class) model with ``group_blind``.
    method_params : dict
        The method's own knobs, by keyword of the algorithm (the fit options removed): what
        ``PluginMethod.solve`` receives (:meth:`params`).
    safety_fraction : float
        The share of rows ``confidence=`` holds out for the safety test.

    Examples
    --------
    >>> s = PluginSettings.from_params({"oracle": "plugin", "max_iter": 50}, "split_frank_wolfe")
    >>> s.oracle, s.params(), s.safety_fraction
    ('plugin', {'max_iter': 50}, 0.4)
    """

    oracle: str = FIT_OPTIONS["oracle"]
    cv_model: str = FIT_OPTIONS["cv_model"]
    joint_model: str = FIT_OPTIONS["joint_model"]
    method_params: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_params(cls, method_params, method: str, owner=None) -> PluginSettings:
        """The settings of ``method_params`` (None: the defaults) for the plug-in ``method``, validated.

        Parameters
        ----------
        method_params : dict or None
            The estimator's ``method_params``: fit options and the method's knobs.
        method : str
            A name of :data:`PLUGIN_NAMES` (``"auto"`` accepts the knobs of every algorithm).
        owner : estimator, optional
            A key close to one of its constructor parameters is pointed there.

        Raises
        ------
        TypeError
            ``method_params`` not a dict.
        ValueError
            An unknown key (with the closest known one and the known ones), or a fit option
            outside its set or range, naming ``method_params['key']``.
        """
        if method_params is not None and not isinstance(method_params, dict):
            check_method_params(method_params, (), method, owner)  # raises the TypeError
        given = method_params or {}
        knobs = PluginMethod(method).check_params(
            {k: v for k, v in given.items() if k not in FIT_OPTIONS or k == "oracle"}, owner)
        opts = {k: given.get(k, v) for k, v in FIT_OPTIONS.items()}
        for key, allowed in (("oracle", ORACLES), ("cv_model", CV_MODELS), ("joint_model", JOINT_MODELS)):
            if opts[key] not in allowed:
                raise ValueError(f"method_params[{key!r}] must be one of {list(allowed)}, got {opts[key]!r}")
        knobs.pop("oracle", None)
        return cls(oracle=opts["oracle"], cv_model=opts["cv_model"], joint_model=opts["joint_model"],
                   method_params=knobs,
                   safety_fraction=check_fraction(opts["safety_fraction"], "method_params['safety_fraction']"))

    def params(self) -> dict:
        """The method's knobs (what ``PluginMethod.solve`` reads besides the oracle)."""
        return dict(self.method_params)

    @property
    def options(self) -> dict:
        """The fit options (:data:`FIT_OPTIONS`' keys) and their values."""
        return {k: getattr(self, k) for k in FIT_OPTIONS}
