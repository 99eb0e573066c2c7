"""Reports: objective and constraints on train and test beside the estimator's baseline,
iterations and times; as a rich table, JSON and PNG plots (including convergence plots)."""
from .plots import plot_convergence
from .report import Report, build_report

__all__ = ["Report", "build_report", "plot_convergence"]

#: Report builders of goalfit 0.1, kept with a FutureWarning until 0.3: build_report reports every estimator.
_RENAMED = {"build_ramp_report": build_report, "build_subdata_report": build_report}


def __getattr__(name):
    if name in _RENAMED:
        from ..utils.deprecation import deprecated_alias

        return deprecated_alias(_RENAMED[name], f"goalfit.report.{name}", "goalfit.report.build_report")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
