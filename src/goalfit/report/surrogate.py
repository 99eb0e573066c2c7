"""Deprecated (removed in 0.3): :func:`goalfit.report.build_report` reports every estimator.
Each use warns FutureWarning."""
from ..utils.deprecation import moved_module

__getattr__ = moved_module(__name__, "goalfit.report", names={"build_surrogate_report": "goalfit.report:build_report"})
