"""The method interface: every family is a method on the compiled problem.

A :class:`Method` has a registry ``name``, says whether it can express a compiled problem
(:meth:`Method.check`, a one-line reason otherwise) and solves it on prepared data
(:meth:`Method.solve`, returning a :class:`~goalfit.fit.FitResult`). The registry of every
method lives in :mod:`goalfit.methods`.
"""
from __future__ import annotations

import difflib
import functools
import inspect
from dataclasses import dataclass, field, fields, make_dataclass
from typing import cast

from ..goals.problem import CompiledProblem
from ..utils.validation import check_fraction


class UnsupportedGoal(ValueError):
    """A method cannot express a goal (the message is the one-line reason and what to use instead)."""


def require_binary(compiled: CompiledProblem, method: str) -> None:
    """Refuse a problem with more than two classes.

    Raises
    ------
    UnsupportedGoal
    """
    k = compiled.space.n_classes
    if k != 2:
        raise UnsupportedGoal(f"Only binary classification is supported by method {method!r}; y has {k} classes "
                              f"{compiled.space.classes.tolist()}")


def require_linear(compiled: CompiledProblem, method: str, *, objective: bool = True,
                   constraints: bool = True) -> None:
    """Refuse a non-linear objective or a constraint without a polyhedral form.

    Raises
    ------
    UnsupportedGoal
        Naming the goal and its kind.
    """
    if objective and compiled.objective.kind != "linear":
        raise UnsupportedGoal(f"method {method!r} needs a linear objective (an error rate, a weighted sum of "
                              f"rates); {compiled.objective.name!r} is {compiled.objective.kind}")
    if constraints:
        for c in compiled.constraints:
            if c.rows is None:
                raise UnsupportedGoal(f"method {method!r} needs linear constraints; {c.name!r} has no "
                                      "polyhedral form")


def refuse_constraints(compiled: CompiledProblem, method: str, instead: str) -> None:
    """Refuse any constraint (for methods that can only minimize an objective).

    Raises
    ------
    UnsupportedGoal
    """
    if compiled.constraints:
        raise UnsupportedGoal(f"method {method!r} takes no constraints ({len(compiled.constraints)} given: "
                              f"{compiled.constraints[0].name!r}...); {instead}")


def check_method_params(params, known, method: str, owner=None) -> dict:
    """``method_params`` as a dict, every key one the method knows.

    Parameters
    ----------
    params : dict or None
    known : iterable of str
        The method's parameter names.
    method : str
        For the message.
    owner : estimator, optional
        The estimator whose ``method_params`` these are: a key close to one of its constructor
        parameters is pointed there.

    Returns
    -------
    dict

    Raises
    ------
    TypeError
        ``params`` is not a dict (or None).
    ValueError
        An unknown key, with the closest known name ("did you mean") and the known ones.
    """
    if params is None:
        return {}
    if not isinstance(params, dict):
        raise TypeError(f"method_params must be a dict (or None), got {type(params).__name__}")
    known = sorted(known)
    own = [] if owner is None else sorted(owner.get_params(deep=False))
    for key in params:
        if key not in known:
            close = difflib.get_close_matches(str(key), known, n=1)
            mine = difflib.get_close_matches(str(key), own, n=1)
            if close:
                hint = f"; did you mean {close[0]!r}?"
            elif mine:
                hint = (f"; did you mean the parameter {mine[0]!r} of {type(owner).__name__} "
                        f"({type(owner).__name__}({mine[0]}=...), not in method_params)?")
            else:
                hint = ""
            raise ValueError(f"unknown method_params key {key!r} for method {method!r}{hint} known: {known}")
    return dict(params)


def keyword_names(func, exclude=()) -> list[str]:
    """The keyword parameters of ``func`` (a solver's knobs), minus ``exclude``."""
    return [name for name in _keyword_names(func) if name not in exclude]  # read once per process


@functools.lru_cache(maxsize=256)
def _keyword_names(func) -> tuple[str, ...]:
    sig = inspect.signature(func)
    return tuple(p.name for p in sig.parameters.values()
                 if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is not p.empty)


#: ``method_params`` keys that configure the template rather than a method, with their defaults.
TEMPLATE_OPTIONS = {"safety_fraction": 0.4}


def fit_options(params: dict) -> dict:
    """Pop the template's own keys (:data:`TEMPLATE_OPTIONS`) from a ``method_params`` dict, validated.

    Parameters
    ----------
    params : dict
        A copy of ``method_params``; the template's keys are removed from it.

    Returns
    -------
    dict
        ``{"safety_fraction": float}``.

    Raises
    ------
    TypeError, ValueError
        ``method_params['safety_fraction']`` not a float in (0, 1).

    Examples
    --------
    >>> params = {"safety_fraction": 0.3, "step": 0.1}
    >>> fit_options(params), params
    ({'safety_fraction': 0.3}, {'step': 0.1})
    """
    opts = {k: params.pop(k, v) for k, v in TEMPLATE_OPTIONS.items()}
    opts["safety_fraction"] = check_fraction(opts["safety_fraction"], "method_params['safety_fraction']")
    return opts


@dataclass(frozen=True)
class MethodSettings:
    """Base of a method's settings: ``method_params`` validated once, then read by attribute.

    A family declares its settings with :func:`settings_dataclass` (one field per
    ``method_params`` key, its default and the family's value check); the estimator builds them
    once per fit with :meth:`from_params` and hands :meth:`params` to ``Method.solve``. Every
    settings class also holds the template's own key, ``safety_fraction``.

    Attributes
    ----------
    safety_fraction : float
        The share of rows ``confidence=`` holds out for the safety test.
    """

    safety_fraction: float = TEMPLATE_OPTIONS["safety_fraction"]

    @staticmethod
    def check_values(params: dict) -> dict:
        """The family's value check: ``params`` with defaults, each value checked (override)."""
        return dict(params)

    @classmethod
    def from_params(cls, method_params, method: str, owner=None):
        """The settings of ``method_params`` (None: the defaults), validated.

        Raises
        ------
        TypeError
            ``method_params`` not a dict.
        ValueError
            An unknown key (with the closest known one, or the constructor parameter it
            belongs to), a value outside its set or range: each naming the ``method_params``
            key.
        """
        names = [f.name for f in fields(cls) if f.name != "safety_fraction"]
        params = check_method_params(method_params, names + list(TEMPLATE_OPTIONS), method, owner)
        opts = fit_options(params)
        checked = cls.check_values(params)
        return cls(**{k: checked[k] for k in names if k in checked}, **opts)

    def params(self) -> dict:
        """The method's values by ``method_params`` key (what ``Method.solve`` reads)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "safety_fraction"}


def settings_dataclass(name: str, defaults: dict, check, doc: str) -> type[MethodSettings]:
    """Declare a family's settings dataclass: one frozen field per key of ``defaults``.

    Parameters
    ----------
    name : str
        The class name (``"RampSettings"``).
    defaults : dict
        ``method_params`` key -> default value.
    check : callable
        ``check(params) -> dict``: the keys given with the defaults added, each value checked
        (raises ValueError naming the key).
    doc : str
        The class docstring.

    Returns
    -------
    type
        A frozen dataclass deriving from :class:`MethodSettings`.

    Examples
    --------
    >>> S = settings_dataclass("S", {"step": 0.1}, lambda p: {"step": 0.1, **p}, "Demo.")
    >>> S.from_params({"step": 0.5}, "demo").step
    0.5
    """
    cls = make_dataclass(name, [(k, object, field(default=v)) for k, v in defaults.items()],
                         bases=(MethodSettings,), frozen=True,
                         namespace={"check_values": staticmethod(check), "__doc__": doc})
    return cast(type[MethodSettings], cls)  # make_dataclass is typed as returning a plain type




class Method:
    """A method on the compiled problem.

    Subclasses set :attr:`name` and :attr:`family` and implement :meth:`check`,
    :meth:`solve` and :meth:`param_names`.

    Attributes
    ----------
    name : str
        The registry name (``method=`` of the estimators, ``method`` in a spec file).
    family : str
        ``"plugin"``, ``"ramp"``, ``"subdata"``, ``"surrogate"`` or ``"lagrangian"``.
    """

    name: str = ""
    family: str = ""

    def check(self, compiled: CompiledProblem) -> None:
        """Refuse a problem the method cannot express.

        Raises
        ------
        UnsupportedGoal
            With a one-line reason (and what to use instead).
        """

    def param_names(self) -> list[str]:
        """The keys ``method_params`` may hold for this method."""
        return []

    def check_params(self, params, owner=None) -> dict:
        """``method_params`` validated against :meth:`param_names` (see :func:`check_method_params`)."""
        return check_method_params(params, self.param_names(), self.name, owner)

    def solve(self, data, compiled: CompiledProblem, params: dict):
        """Solve ``compiled`` on ``data`` (a :class:`~goalfit.fit.PreparedData`).

        Returns
        -------
        FitResult
        """
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<method {self.name!r} ({self.family})>"
