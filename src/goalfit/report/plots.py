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


def _pyplot():
    """matplotlib's pyplot on the non-interactive Agg backend (reports write files, never windows)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def convergence_figure(data: dict, split_label: str = "train"):
    """Objective and max constraint violation per iteration of a report's ``data["history"]``.

    ``data`` may name what the panels show: ``history_x_key`` / ``history_x_name`` (the history
    field on the x axis and its label; default ``oracle_calls``), ``history_objective_name`` (y
    label of the objective panel), ``history_violation_key`` / ``history_violation_name`` (the
    history field and title of the second panel; default ``max_violation``). ``split_label``
    names the sample the history was measured on (``"train (cross-fitted)"`` under
    cross-fitting: the method's out-of-fold sample, not the in-sample training values).

    Returns
    -------
    matplotlib Figure, or None when there is no history.
    """
    hist = data.get("history") or []
    if not hist:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(1, 2, figsize=(10, 3.6))
    xkey = data.get("history_x_key", "oracle_calls")
    xname = data.get("history_x_name", "oracle calls")
    it = [h[xkey] for h in hist]
    ax[0].plot(it, [h["objective"] for h in hist], marker=".")
    ax[0].set_xlabel(xname)
    ax[0].set_ylabel(data.get("history_objective_name", data["objective"]["name"]))
    ax[0].set_title(f"objective, {split_label}")
    vkey = data.get("history_violation_key", "max_violation")
    ax[1].plot(it, [max(h[vkey], 1e-12) for h in hist], marker=".", color="C3")
    ax[1].set_yscale("log")
    ax[1].set_xlabel(xname)
    ax[1].set_title(data.get("history_violation_name", f"max constraint violation, {split_label}"))
    fig.tight_layout()
    return fig


def group_rates_figure(group_rates: dict):
    """Per-group rates, goalfit beside the baseline, one panel per sensitive column, with the
    goalfit rates' confidence intervals as error bars when the report has them.

    Returns
    -------
    matplotlib Figure, or None when there are no group rates.
    """
    import numpy as np

    if not group_rates:
        return None
    plt = _pyplot()
    cols = list(group_rates)
    fig, axes = plt.subplots(1, len(cols), figsize=(6.4 * len(cols), 3.8), squeeze=False)
    for ax, col in zip(axes[0], cols):
        gr = group_rates[col]
        groups, names = gr["groups"], gr["rates"]
        x = np.arange(len(groups))
        width = 0.8 / (2 * len(names))
        for k, name in enumerate(names):
            err = None
            if gr.get("goalfit_interval", {}).get(name) is not None:
                lo_hi = np.asarray(gr["goalfit_interval"][name], dtype=float)  # (n_groups, 2)
                val = np.asarray(gr["goalfit"][name], dtype=float)
                err = np.abs(np.vstack([val - lo_hi[:, 0], lo_hi[:, 1] - val]))
            ax.bar(x + (2 * k) * width, gr["goalfit"][name], width, label=f"goalfit {name}", color=f"C{k}",
                   yerr=err, capsize=2, error_kw={"elinewidth": 0.8})
            if name in gr.get("baseline", {}):
                ax.bar(x + (2 * k + 1) * width, gr["baseline"][name], width, alpha=0.45, color=f"C{k}",
                       label=f"baseline {name}")
        ax.set_xticks(x + 0.4 - width / 2)
        ax.set_xticklabels([str(g) for g in groups], rotation=20)
        ax.set_title(f"rates by {col} ({gr['split']})")
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)  # beside the bars
    fig.tight_layout()
    return fig


def roc_figure(roc: dict):
    """Per-group ROC curves of the base model's scores with the deployed operating points.

    Parameters
    ----------
    roc : dict
        ``{column: {"split", "groups", "curves": {group: (fpr, tpr, auc)}, "points": {who:
        {group: (fpr, tpr)}}}}`` as :func:`goalfit.report.report.roc_data` returns it: one
        panel per sensitive column; each operating point is the expected (false positive rate,
        true positive rate) of a rule on that group (a randomized rule's point lies between
        its members' points).

    Returns
    -------
    matplotlib Figure, or None when ``roc`` is empty.
    """
    if not roc:
        return None
    plt = _pyplot()
    cols = list(roc)
    fig, axes = plt.subplots(1, len(cols), figsize=(5 * len(cols), 4.6), squeeze=False)
    markers = {"goalfit": "o", "baseline": "s"}
    for ax, col in zip(axes[0], cols):
        entry = roc[col]
        for k, grp in enumerate(entry["groups"]):
            fpr, tpr, auc = entry["curves"][grp]
            ax.plot(fpr, tpr, color=f"C{k}", lw=1.4, label=f"{grp} (AUC {auc:.3f})")
            for who, pts in entry["points"].items():
                if grp in pts:
                    ax.plot(*pts[grp], marker=markers.get(who, "^"), ms=9, mew=1.6, color=f"C{k}", ls="none",
                            mfc=f"C{k}" if who == "goalfit" else "none", mec="k" if who == "goalfit" else f"C{k}")
        for who, m in markers.items():
            if who in entry["points"]:
                ax.plot([], [], marker=m, ls="none", color="0.3", mfc="0.3" if who == "goalfit" else "none",
                        label=f"{who} operating point")
        ax.plot([0, 1], [0, 1], color="0.8", lw=0.8, ls=":")
        ax.set_xlim(-0.01, 1.01)
        ax.set_ylim(-0.01, 1.01)
        ax.set_xlabel("false positive rate")
        ax.set_ylabel("true positive rate")
        ax.set_title(f"ROC by {col} ({entry['split']})")
        ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    return fig


def frontier_figure(table, *, swept: str, objective_label: str, chosen: int, bound: float | None = None):
    """The trade-off frontier with its uncertainty bands: the objective against the swept goal
    on train and validation, the validation values' confidence intervals as a band (objective)
    and error bars (swept goal) when ``table`` has ``*_val_low`` / ``*_val_high`` columns
    (:func:`goalfit.frontier` with ``confidence``).

    Returns
    -------
    matplotlib Figure
    """
    import numpy as np

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    for k, s in enumerate(s for s in ("train", "val") if f"objective_{s}" in table):
        x, y = table[f"{swept}_{s}"].to_numpy(float), table[f"objective_{s}"].to_numpy(float)
        order = np.argsort(x)
        label = "train" if s == "train" else "test"
        ax.plot(x[order], y[order], marker=".", color=f"C{k}", label=label)
        if f"objective_{s}_low" in table:
            lo, hi = table[f"objective_{s}_low"].to_numpy(float), table[f"objective_{s}_high"].to_numpy(float)
            ax.fill_between(x[order], lo[order], hi[order], color=f"C{k}", alpha=0.18, lw=0,
                            label=f"{label} objective interval")
        if f"{swept}_{s}_low" in table:
            xl, xh = table[f"{swept}_{s}_low"].to_numpy(float), table[f"{swept}_{s}_high"].to_numpy(float)
            ax.errorbar(x, y, xerr=np.abs(np.vstack([x - xl, xh - x])), fmt="none", ecolor=f"C{k}", alpha=0.5,
                        elinewidth=0.8, capsize=2)
        ax.scatter([x[chosen]], [y[chosen]], s=120, facecolors="none", edgecolors="k", zorder=3,
                   label="deployed bound" if k == 0 else None)
    if bound is not None and np.isfinite(bound):
        ax.axvline(bound, color="0.6", ls="--", lw=1, label="bound")
    ax.set_xlabel(swept)
    ax.set_ylabel(objective_label)
    ax.set_title(f"trade-off: {objective_label} vs {swept}")
    ax.legend(fontsize=7, frameon=False)
    fig.tight_layout()
    return fig


def plan_figure(plan):
    """The power curve of a :class:`~goalfit.metrics.planning.CertificationPlan` against the
    training size, the current training size marked.

    Returns
    -------
    matplotlib Figure
    """
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    plan.plot(ax=ax)
    ax.axvline(plan.n_train, color="k", lw=0.8, ls="--", label=f"this fit ({plan.n_train:,} rows)")
    ax.legend(fontsize=7)
    ax.set_title(f"probability of certifying at confidence {plan.confidence:g}")
    fig.tight_layout()
    return fig
