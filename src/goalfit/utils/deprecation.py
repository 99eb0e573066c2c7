"""The one place for deprecations: renamed constructor keywords, moved modules, removed attributes.

An old spelling keeps working for one release (until :data:`REMOVED_IN`) and warns
``FutureWarning`` naming its new spelling; ``CHANGELOG.md`` lists every one. Four tools:

* :class:`DeprecatedParams` -- a mixin for estimators whose constructor keywords were renamed
  or moved into ``method_params``: ``__init__(..., **deprecated_params)`` hands the old keywords
  to :meth:`DeprecatedParams._fold_deprecated`, which stores each value where it now lives, so
  :func:`sklearn.base.clone`, ``get_params`` and ``set_params`` see only the new spelling;
* :func:`renamed_attribute` -- a property for a fitted attribute that was renamed;
* :func:`moved_module` -- the ``__getattr__`` of a module that moved (its names forward to the
  new module);
* :func:`deprecated_alias` -- a function kept under its old name.

Examples
--------
>>> import warnings
>>> from goalfit import GoalClassifier
>>> with warnings.catch_warnings(record=True) as w:
...     warnings.simplefilter("always")
...     model = GoalClassifier(oracle="threshold")
>>> model.get_params()["method_params"]
{'oracle': 'threshold'}
>>> print(w[0].message)
GoalClassifier(oracle=...) is deprecated and will be removed in 0.3; use method_params={'oracle': ...}
"""
from __future__ import annotations

import difflib
import functools
import inspect
import warnings
from typing import TYPE_CHECKING

from .lazy import load

#: The release in which the old spellings kept by this module are removed.
REMOVED_IN = "0.3"

#: Returned by a :class:`Renamed` conversion when the old keyword's value needs no change (e.g.
#: ``holdout=None``, ``prefit=False``).
NOTHING = object()


def warn_deprecated(old: str, new: str, *, stacklevel: int = 3) -> None:
    """Warn ``FutureWarning``: ``"<old> is deprecated and will be removed in 0.3; use <new>"``.

    Parameters
    ----------
    old, new : str
        The old spelling and the one to use instead, as the user would write them.
    stacklevel : int, default 3
        Passed to :func:`warnings.warn` (the default points at the caller's caller).
    """
    warnings.warn(f"{old} is deprecated and will be removed in {REMOVED_IN}; use {new}", FutureWarning,
                  stacklevel=stacklevel)


class Renamed:
    """Where an old constructor keyword's value now lives.

    Parameters
    ----------
    target : str
        A constructor parameter (``"objective"``) or a key of ``method_params``
        (``"method_params.oracle"``).
    convert : callable, optional
        ``convert(value, estimator) -> new value``, or :data:`NOTHING` when the old value needs
        no change (e.g. ``holdout=None``). Default: the value as it is.
    use : str, optional
        The new spelling quoted by the warning (default ``target=...`` or
        ``method_params={'key': ...}``).
    """

    def __init__(self, target: str, *, convert=None, use: str | None = None):
        self.target = target
        self.convert = convert
        self.key = target.split(".", 1)[1] if target.startswith("method_params.") else None
        self.use = use or (f"method_params={{{self.key!r}: ...}}" if self.key else f"{target}=...")


class DeprecatedParams:
    """Mixin of an estimator whose constructor still accepts old keywords (put it first in the bases).

    The estimator declares ``_deprecated_params`` (old keyword -> :class:`Renamed`, a string
    taken as the target, or None for one that :meth:`_translate_deprecated` handles), takes ``**deprecated_params`` in ``__init__`` (hidden from its
    signature, so scikit-learn's ``get_params`` and checks see only the parameters) and calls ``self._fold_deprecated(deprecated_params)`` last. Each old
    keyword warns ``FutureWarning`` naming its new spelling and its value is stored where it now
    lives (a new ``method_params`` dict; the user's is not modified), so a
    :func:`~sklearn.base.clone` keeps it and ``get_params`` shows the new spelling.
    ``set_params`` accepts the old keywords too (e.g. in an old ``GridSearchCV`` grid).
    """

    _deprecated_params: dict = {}

    if TYPE_CHECKING:  # the estimator's scikit-learn base class (BaseEstimator) provides it
        def get_params(self, deep: bool = True) -> dict: ...

    def __init_subclass__(cls, **kwargs):
        """Hide ``**deprecated_params`` from ``inspect.signature(cls)``: the old keywords are not
        parameters (scikit-learn's checks pass every signature name to ``__init__`` and
        ``set_params``) and are not advertised."""
        super().__init_subclass__(**kwargs)
        init = vars(cls).get("__init__")
        if init is not None:
            sig = inspect.signature(init)
            init.__signature__ = sig.replace(parameters=[p for p in sig.parameters.values()
                                                         if p.kind is not inspect.Parameter.VAR_KEYWORD])

    def _fold_deprecated(self, given: dict, *, in_init: bool = True) -> None:
        """Store each old keyword's value where it now lives, warning once per keyword.

        Raises
        ------
        TypeError
            An unknown keyword (naming the closest parameter), or an old keyword given together
            with its new spelling in ``__init__``.
        """
        given = self._translate_deprecated(dict(given), in_init=in_init)
        if not given:
            return
        who = type(self).__name__
        table = {old: spec if isinstance(spec, Renamed) else Renamed(spec)
                 for old, spec in type(self)._deprecated_params.items() if spec is not None}
        unknown = [k for k in given if k not in table]
        if unknown:
            known = sorted(self.get_params(deep=False)) + sorted(table)
            close = difflib.get_close_matches(unknown[0], known, n=1)
            raise TypeError(f"{who}.__init__() got an unexpected keyword argument {unknown[0]!r}"
                            + (f"; did you mean {close[0]!r}?" if close else ""))
        defaults = {name: p.default for name, p in inspect.signature(type(self).__init__).parameters.items()}
        method_params = dict(getattr(self, "method_params", None) or {})
        for old, value in given.items():
            spec = table[old]
            warn_deprecated(f"{who}({old}=...)", spec.use, stacklevel=4)
            new = value if spec.convert is None else spec.convert(value, self)
            if new is NOTHING:
                continue
            if spec.key is not None:
                if in_init and spec.key in method_params:
                    raise TypeError(f"{who}: give {old}= or method_params={{{spec.key!r}: ...}}, not both")
                method_params[spec.key] = new
            else:
                current, default = getattr(self, spec.target), defaults.get(spec.target)
                same = current is default or (type(current) in (str, int, float, bool) and current == default)
                if in_init and spec.convert is None and not same:
                    raise TypeError(f"{who}: give {old}= or {spec.target}=, not both")
                setattr(self, spec.target, new)
        if any(table[old].key is not None for old in given) and hasattr(self, "method_params"):
            self.method_params = method_params

    def _translate_deprecated(self, given: dict, *, in_init: bool) -> dict:
        """Hook for old keywords that only make sense together (warn, store, pop them); returns the rest."""
        return given

    def set_params(self, **params):
        """scikit-learn's ``set_params``; an old keyword warns and sets its new spelling."""
        old = {k: params.pop(k) for k in list(params) if k in type(self)._deprecated_params}
        if params:
            super().set_params(**params)  # type: ignore[misc]  # a mixin: BaseEstimator follows it in the MRO
        self._fold_deprecated(old, in_init=False)
        return self


def renamed_attribute(old: str, new: str, *, note: str = "") -> property:
    """A read-only property ``old`` that warns and returns the attribute ``new``.

    Parameters
    ----------
    old, new : str
        The attribute names (``"max_violation_deterministic_"``, ``"max_violation_"``).
    note : str, optional
        Appended to the new spelling in the warning (what changed, if anything).

    Returns
    -------
    property
        Raises AttributeError (as the new attribute does) before ``fit``.
    """

    def getter(self):
        value = getattr(self, new)  # AttributeError / NotFittedError before fit, as the new name
        warn_deprecated(f"{type(self).__name__}.{old}", f"{new}{note}")
        return value

    getter.__name__ = old
    getter.__doc__ = f"Deprecated (removed in {REMOVED_IN}): use ``{new}``{note}."
    return property(getter)


def deprecated_alias(func, old: str, new: str):
    """``func`` under its old name ``old``: warns naming ``new``, then calls ``func``.

    Parameters
    ----------
    func : callable
    old, new : str
        Dotted names as the user writes them (``"goalfit.report.build_ramp_report"``,
        ``"goalfit.report.build_report"``).
    """

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        warn_deprecated(old, new)
        return func(*args, **kwargs)

    wrapper.__doc__ = f"Deprecated (removed in {REMOVED_IN}): use :func:`{new}`.\n\n" + (func.__doc__ or "")
    return wrapper


def moved_module(old: str, new: str, *, names=None):
    """The ``__getattr__`` of module ``old`` that moved to ``new``: each name warns and forwards.

    Parameters
    ----------
    old, new : str
        Module names (``"goalfit.methods.baselines"``, ``"goalfit.methods.plugin.baselines"``).
    names : dict of str to str, optional
        Names that moved elsewhere or were renamed: old name -> ``"module:attribute"``.

    Returns
    -------
    callable
        ``__getattr__(name)``; AttributeError for a name that neither module has.
    """
    names = dict(names or {})

    def __getattr__(name):
        if name.startswith("__"):
            raise AttributeError(name)
        where, _, attr = names.get(name, f"{new}:{name}").partition(":")
        try:
            value = load(f"{where}:{attr}")
        except AttributeError:
            raise AttributeError(f"module {old!r} has no attribute {name!r} (the module moved to {new!r}, "
                                 "which has no such name either; see CHANGELOG.md)") from None
        warn_deprecated(f"{old}.{name}", f"{where}.{attr}")
        return value

    return __getattr__
