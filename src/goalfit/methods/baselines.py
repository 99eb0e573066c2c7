"""Deprecated (removed in 0.3): moved to :mod:`goalfit.methods.plugin.baselines` (the same
functions, returning :class:`goalfit.fit.FitResult`). Each use warns FutureWarning."""
from ..utils.deprecation import moved_module

__getattr__ = moved_module(__name__, "goalfit.methods.plugin.baselines")
