"""The one place goalfit imports its own modules by name: attributes loaded on first use (PEP 562).

Two helpers, used by every package that defers an import (so that ``import goalfit`` stays light
and the optional families -- compiled kernels, cvxpy, torch, Dask -- load only when asked for):

* :func:`load` -- ``"package.module:attribute"`` (or a module name) to the object;
* :func:`lazy_attributes` -- a module ``__getattr__`` over a table of names.
"""
from __future__ import annotations

import importlib


def load(path: str):
    """The object named by ``path``, importing its module.

    Parameters
    ----------
    path : str
        ``"package.module:attribute"`` for an attribute, ``"package.module"`` for a module.

    Returns
    -------
    object

    Raises
    ------
    ImportError
        The module (or an optional dependency it needs) is not installed.
    AttributeError
        The module has no such attribute.

    Examples
    --------
    >>> load("goalfit.goals:Problem").__name__
    'Problem'
    """
    module, _, attr = path.partition(":")
    mod = importlib.import_module(module)
    return getattr(mod, attr) if attr else mod


def lazy_attributes(package: str, table: dict, submodules=()):
    """A module ``__getattr__`` that imports ``table[name]`` on first access of ``name``.

    Parameters
    ----------
    package : str
        The module's ``__name__``; a relative entry (``"evaluation"``) is taken inside it.
    table : dict of str to str
        Attribute name -> module holding it (relative to ``package``, or absolute when it
        contains a dot), or ``"module:attribute"`` when the attribute has another name there.
    submodules : iterable of str, optional
        Subpackages of ``package`` returned (imported) on first access of their name.

    Returns
    -------
    callable
        ``__getattr__(name)``: the attribute, cached in the module's namespace; raises
        ``AttributeError`` for a name outside ``table`` and ``submodules``.

    Examples
    --------
    In a package's ``__init__.py``::

        __getattr__ = lazy_attributes(__name__, {"evaluate": "evaluation"})
    """
    submodules = frozenset(submodules)

    def __getattr__(name):
        if name in submodules:
            return load(f"{package}.{name}")
        if name not in table:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        where, _, attr = table[name].partition(":")
        value = load(f"{where if '.' in where else f'{package}.{where}'}:{attr or name}")
        setattr(load(package), name, value)
        return value

    return __getattr__
