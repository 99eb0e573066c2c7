"""Module attributes loaded on first use (PEP 562), so that ``import goalfit`` stays light."""
from __future__ import annotations

import importlib


def lazy_attributes(package: str, table: dict):
    """A module ``__getattr__`` that imports ``table[name]`` on first access of ``name``.

    Parameters
    ----------
    package : str
        The module's ``__name__``; a relative entry (``"evaluation"``) is taken inside it.
    table : dict of str to str
        Attribute name -> module holding it (relative to ``package``, or absolute when it
        contains a dot).

    Returns
    -------
    callable
        ``__getattr__(name)``: the attribute, cached in the module's namespace; raises
        ``AttributeError`` for a name outside ``table``.
    """
    def __getattr__(name):
        if name not in table:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        where = table[name]
        value = getattr(importlib.import_module(where if "." in where else f"{package}.{where}"), name)
        setattr(importlib.import_module(package), name, value)
        return value

    return __getattr__
