"""Reports: objective and constraints on train and test beside the estimator's baseline,
iterations and times; as a rich table, JSON and PNG plots (including convergence plots)."""
from .plots import plot_convergence
from .report import Report, build_report

__all__ = ["Report", "build_report", "plot_convergence"]
