"""Reports: objective and constraints on train and test beside the unconstrained baseline,
iterations and times; as a rich table, JSON and PNG plots (including convergence plots)."""
from .plots import plot_convergence
from .report import Report, build_ramp_report, build_report, build_subdata_report

__all__ = ["Report", "build_ramp_report", "build_report", "build_subdata_report", "plot_convergence"]
