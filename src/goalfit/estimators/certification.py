"""Deprecated (removed in 0.3): certification moved to :mod:`goalfit.fit.certification` (every
estimator's ``confidence=`` runs it). ``split_rows`` keeps its signature there; ``safety_test``,
``predicted_margins`` and ``certify`` were replaced by ``safety_rows``, ``predicted_widths`` and a
new ``certify`` (see CHANGELOG.md). Each use warns FutureWarning."""
from ..utils.deprecation import moved_module

__getattr__ = moved_module(__name__, "goalfit.fit.certification")
