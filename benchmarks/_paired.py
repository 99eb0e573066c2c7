"""Paired comparisons of method settings on re-drawn atlas cells.

The loop ``minmax_multiclass.py``, ``coarse_budget.py`` and ``ratio_search.py`` share: draw a cell
of ``atlas.py`` per seed, fit every setting on the same probabilities (:func:`fit_settings`), and
per case summarize the seeds as paired differences to a reference setting, with their table
cells and result rows (:func:`add_case`; ``multiclass_defaults.summarize`` and ``paired_cells``).
"""
from __future__ import annotations

from atlas import run_method, synthetic_cell  # atlas pins BLAS to one thread first
from multiclass_defaults import paired_cells, summarize

LIMIT = 3600.0  # CPU seconds a fit may take (atlas.run_method's limit): none comes close


def draw(n, n_classes, n_groups, seed, population=0):
    """One synthetic cell of ``atlas.py`` drawn anew, after an untimed warm-up fit on its rows
    (as ``atlas.run_cell``): ``(P, Y, G, lr_seconds)``; ``population``: also that many new rows
    of the same distribution (``atlas.synthetic_cell``)."""
    P, Y, G, lr_seconds = synthetic_cell(n, n_classes, n_groups, seed, 1.0, population)
    run_method("column_generation", "error", [], P, Y, G, LIMIT)
    return P, Y, G, lr_seconds


def fit_settings(settings, objective, cons, P, Y, G, lr_seconds, *, reverse=False):
    """Fit each ``(label, method, method_params)`` of ``settings`` on one cell (``atlas.run_method``).

    ``reverse`` runs them in the opposite order (callers alternate it per seed: the later fit
    of a pair would otherwise always be the warmer one). Returns ``{label: record}`` in the
    settings' order; a record holds ``seconds``, the objective and violation on each split of the
    cell (``train_objective``, ...), ``seconds_over_lr`` and ``steps`` (``n_iter_``). Raises
    ``RuntimeError`` when a setting does not finish.
    """
    out = {}
    for label, method, params in settings[::-1] if reverse else settings:
        rec, est = run_method(method, objective, cons, P, Y, G, LIMIT, method_params=params)
        if est is None:
            raise RuntimeError(f"{label} did not finish: {rec.get('message', rec['status'])}")
        keys = ["seconds"] + [f"{split}_{what}" for split in P for what in ("objective", "violation")]
        out[label] = {**{key: rec[key] for key in keys}, "seconds_over_lr": rec["seconds"] / lr_seconds,
                      "steps": int(est.n_iter_)}
    return {label: out[label] for label, _, _ in settings}


def pair_line(label, summary, name, reference, new, cells):
    """A markdown row ``| label | ref x LR -> new x LR | cell | cell ... |`` for a two-setting case
    (``cells``: :func:`add_case`'s cells of the ``new`` setting)."""
    times = f"{summary[name][reference]['seconds_over_lr']:.2f} -> {summary[name][new]['seconds_over_lr']:.2f}"
    return f"| {label} | {times} | " + " | ".join(cells) + " |"


def add_case(name, per_seed, reference, summary, rows, metric, splits=("train", "test")):
    """Summarize one case's seeds (paired differences to ``reference`` on each of ``splits``) into
    ``summary[name]`` and ``rows``; return ``{label: [one table cell per split]}`` for every setting."""
    summary[name] = summarize(per_seed, reference, splits)
    out = {}
    for label, d in summary[name].items():
        out[label], more = paired_cells(name, "synthetic", label, d, metric=metric, splits=splits)
        rows += more
    return out
