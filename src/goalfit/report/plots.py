"""Convergence plots in the style of Narasimhan et al. (JMLR 2024), Figs. 10-12."""
from __future__ import annotations

from pathlib import Path


def plot_convergence(histories: dict, path, *, title: str | None = None, objective_label: str = "objective",
                     test_points: dict | None = None):
    """Objective and max constraint violation against oracle calls, one line per method.

    Parameters
    ----------
    histories : dict of name -> list of dict
        ``FitResult.history`` / ``GoalClassifier.history_`` rows (``oracle_calls``,
        ``objective``, ``max_violation``), on the training sample.
    path : str or Path
        PNG file to write.
    title : str, optional
    objective_label : str
    test_points : dict of name -> (oracle_calls, test objective), optional
        Final test values drawn as markers.

    Returns
    -------
    Path
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    constrained = any(any(r.get("max_violation", 0) > 0 for r in h) for h in histories.values())
    fig, axes = plt.subplots(1, 2 if constrained else 1, figsize=(10 if constrained else 5.5, 3.8),
                             squeeze=False)
    ax = axes[0, 0]
    for k, (name, hist) in enumerate(histories.items()):
        calls = [r["oracle_calls"] for r in hist]
        ax.plot(calls, [r["objective"] for r in hist], label=name, color=f"C{k}")
        if test_points and name in test_points:
            x, v = test_points[name]
            ax.plot([x], [v], marker="*", markersize=10, color=f"C{k}")
    ax.set_xscale("log")
    ax.set_xlabel("oracle calls")
    ax.set_ylabel(objective_label + " (train)")
    ax.legend(fontsize=8)
    if constrained:
        ax2 = axes[0, 1]
        for k, (name, hist) in enumerate(histories.items()):
            ax2.plot([r["oracle_calls"] for r in hist], [max(r["max_violation"], 1e-6) for r in hist],
                     label=name, color=f"C{k}")
        ax2.set_xscale("log")
        ax2.set_yscale("log")
        ax2.set_xlabel("oracle calls")
        ax2.set_ylabel("max violation (train)")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
