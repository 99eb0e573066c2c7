"""Training curves of :class:`~goalfit.torch.LagrangianClassifier`: objective, max violation and
multipliers per epoch."""
from __future__ import annotations

from pathlib import Path

import numpy as np


def plot_training(histories: dict, path, *, title: str | None = None):
    """Objective and max constraint violation (exact, on the training sample, at each epoch's
    last snapshot; validation too when recorded) and the multipliers per epoch.

    Parameters
    ----------
    histories : dict of name -> list of dict
        ``LagrangianClassifier.history_`` of one or several runs.
    path : str or Path
        PNG file to write (dpi 100).
    title : str, optional

    Returns
    -------
    Path
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = len(histories)
    fig, axes = plt.subplots(n, 3, figsize=(13, 3.2 * n), squeeze=False)
    for row, (name, hist) in zip(axes, histories.items()):
        ep = [h["epoch"] for h in hist]
        row[0].plot(ep, [h["objective"] for h in hist], label="train")
        row[1].plot(ep, [h["max_violation"] for h in hist], label="train")
        if "objective_val" in hist[0]:
            row[0].plot(ep, [h["objective_val"] for h in hist], label="validation")
            row[1].plot(ep, [h["max_violation_val"] for h in hist], label="validation")
        lam = np.asarray([h["multipliers"] for h in hist])
        if lam.size:
            row[2].plot(ep, lam)
        row[0].set_title(f"{name}: objective")
        row[1].set_title("max constraint violation")
        row[2].set_title("multipliers" + (" (first: objective)" if lam.ndim == 2 and
                                          abs(lam.sum(axis=1) - 1).max() < 1e-4 else ""))
        for ax in row:
            ax.set_xlabel("epoch")
        row[0].legend(fontsize=8)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
