"""The registry of methods: every family's algorithms on the compiled problem, by name.

Each name maps to a :class:`~goalfit.fit.Method` (``check(compiled)`` / ``solve(data, compiled,
params)``) and its family; nothing here knows the estimators above (the command line maps a
family to the estimator that runs it: :func:`goalfit.cli.spec.estimator_class`). The
estimators, the command line (``method = "..."`` in a spec) and the report find methods here,
and only here.

=====================  ==============================================
family                 names
=====================  ==============================================
plug-in (Narasimhan)   ``auto``, ``column_generation``,
                       ``frank_wolfe``, ``split_frank_wolfe``,
                       ``gda``, ``con_gda``, ``bisection``,
                       ``con_bisection``, ``ellipsoid``,
                       ``con_ellipsoid``; baselines ``argmax``,
                       ``balanced``, ``post_shift``,
                       ``post_shift_groups``
ramp (Goh et al.)      ``ramp``
subdata (Ye & Xie)     ``irs``, ``mip``, ``bruteforce``
surrogate (Jiang)      ``interpolation``, ``finite_difference``,
                       ``two_point``
lagrangian (Cotter)    ``proxy_lagrangian``, ``lagrangian``
=====================  ==============================================

The family names ``"subdata"``, ``"surrogate"`` and ``"lagrangian"`` name the family's default
method (``irs``, ``interpolation``, ``proxy_lagrangian``) where a method is asked for by name.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass

from ..utils.lazy import load
from .plugin.method import PLUGIN_NAMES


@dataclass(frozen=True)
class Entry:
    """One registered method.

    Attributes
    ----------
    name : str
    family : str
    method_class : str
        ``"module:Class"`` of its :class:`~goalfit.fit.Method` (imported on first use through
        :func:`goalfit.utils.lazy.load`: the families load their compiled kernels, cvxpy or
        torch only when asked for).
    """

    name: str
    family: str
    method_class: str

    def method(self):
        """The :class:`~goalfit.fit.Method` object (imports its family)."""
        return load(self.method_class)(self.name)


REGISTRY: dict[str, Entry] = {name: Entry(name, "plugin", "goalfit.methods.plugin.method:PluginMethod")
                              for name in PLUGIN_NAMES}
REGISTRY["ramp"] = Entry("ramp", "ramp", "goalfit.methods.ramp.method:RampMethod")
for _name in ("irs", "mip", "bruteforce"):
    REGISTRY[_name] = Entry(_name, "subdata", "goalfit.methods.subdata.method:SubdataMethod")
for _name in ("interpolation", "finite_difference", "two_point"):
    REGISTRY[_name] = Entry(_name, "surrogate", "goalfit.methods.surrogate.method:SurrogateMethod")
for _name in ("proxy_lagrangian", "lagrangian"):
    REGISTRY[_name] = Entry(_name, "lagrangian", "goalfit.torch.method:LagrangianMethod")

#: A family's name stands for its default method.
FAMILY_DEFAULTS = {"plugin": "auto", "ramp": "ramp", "subdata": "irs", "surrogate": "interpolation",
                   "lagrangian": "proxy_lagrangian"}


def names(family: str | None = None) -> list[str]:
    """Registered method names (of one family)."""
    return [n for n, e in REGISTRY.items() if family is None or e.family == family]


def lookup(name: str) -> Entry:
    """The registry entry of a method name or a family name (its default method).

    Raises
    ------
    ValueError
        For an unknown name, with the closest known one.
    """
    key = FAMILY_DEFAULTS.get(name, name) if isinstance(name, str) else name
    if key in REGISTRY:
        return REGISTRY[key]
    known = sorted(REGISTRY) + sorted(set(FAMILY_DEFAULTS) - set(REGISTRY))
    close = difflib.get_close_matches(str(name), known, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise ValueError(f"unknown method {name!r}{hint} known: {known}")


def get_method(name: str):
    """The :class:`~goalfit.fit.Method` registered under ``name`` (or a family's default).

    Raises
    ------
    ValueError
        For an unknown name.
    ImportError
        When the method's family needs an optional extra that is not installed.
    """
    return lookup(name).method()


__all__ = ["Entry", "FAMILY_DEFAULTS", "REGISTRY", "get_method", "lookup", "names"]
