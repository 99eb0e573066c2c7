"""The surrogates' slices, derived from the compiled goals' linear features.

Jiang et al. (ICML 2020, §3.1 and §6) combine rate surrogates over slices of the training data:
the positives and the negatives overall (G-mean, K = 2), per group (macro-F over groups, K = 4),
per overlapping group (§6.5). Here the slices are read from the goals themselves.

Every bound goal exposes its linear features ``z = U vec(C)`` (:meth:`BoundFunction.features`;
a polyhedral constraint is its rows ``A vec(C) <= b``). In a binary problem the (cell c, true
class i) row of the confusion tensor has a fixed mass ``C[c, i, 0] + C[c, i, 1] = row_mass[c, i]``,
so it moves a goal only through its *error mass* ``e[c, i] = C[c, i, 1 - i]``:

    z = const + sum_{c, i} w[:, c, i] e[c, i],    w[:, c, i] = U[:, c, i, 1 - i] - U[:, c, i, i].

The rows with ``w[:, c, i] != 0`` are the ones the goals read; rows of the same true class whose
``w`` columns are equal enter every goal only through the sum of their error masses, so they
form one slice. A slice of true class i is surrogated by the average pointwise loss of its
examples, which bounds its error rate (for the hinge loss). The columns stacked are the
objective's features and every constraint row (:func:`error_mass_weights`), so the slices are
those of the objective refined by the constraints': G-mean gives the positives and the
negatives (K = 2); ``macro_f1_over_groups("sex")`` and G-mean subject to
``demographic_parity_difference("sex") <= 0.02`` give them per sex (K = 4); cells of other
slicing columns that no goal names merge. An objective known only by evaluation (PRBEP, a
callable) counts as a function of the error masses of the positives and of the negatives
overall.
"""
from __future__ import annotations

import itertools

import numpy as np

from .surrogates import LOSSES, PointwiseLoss, QuantilePrecisionSurrogate, SliceSurrogate, SurrogateSet, get_loss

__all__ = ["error_mass_weights", "goal_slices", "describe_cells", "build_surrogates"]


def error_mass_weights(compiled, *, objective: bool = True, overall: bool = False) -> np.ndarray:
    """Coefficients of the goals' linear features on the error mass of each (cell, class) row.

    Parameters
    ----------
    compiled : CompiledProblem
        A binary problem.
    objective : bool, default True
        Include the objective's features (``compiled.objective.features().U``).
    overall : bool, default False
        Include two features for an objective known only by evaluation: the error mass of the
        positives and of the negatives overall.

    Returns
    -------
    ndarray of shape (F, n_cells, 2)
        ``w[f, c, i] = U[f, c, i, 1 - i] - U[f, c, i, i]`` over the stacked features F (objective,
        the two overall masses, then the constraint rows).
    """
    space = compiled.space
    G = space.n_cells
    blocks = []
    if objective:
        blocks.append(np.atleast_2d(compiled.objective.features().U))
    if compiled.A is not None:
        blocks.append(compiled.A)
    for cc in compiled.nonlinear:
        blocks.append(np.atleast_2d(cc.function.features().U))
    U = np.vstack(blocks).reshape(-1, G, 2, 2) if blocks else np.zeros((0, G, 2, 2))
    w = np.stack([U[:, :, 0, 1] - U[:, :, 0, 0], U[:, :, 1, 0] - U[:, :, 1, 1]], axis=2)
    if overall:
        extra = np.zeros((2, G, 2))
        extra[0, :, 1] = 1.0  # error mass of the positives
        extra[1, :, 0] = 1.0  # of the negatives
        w = np.concatenate([extra, w])
    return w


def goal_slices(w, row_mass, *, rtol: float = 1e-9) -> list[tuple[tuple, int]]:
    """The slices the goals read: (cells, true class code) with equal nonzero ``w`` columns merged.

    Parameters
    ----------
    w : ndarray of shape (F, n_cells, 2)
        :func:`error_mass_weights`.
    row_mass : ndarray of shape (n_cells, 2)
        Mass of each (cell, class) row; empty rows are left out.
    rtol : float
        Columns equal up to ``rtol`` times the largest ``|w|`` are merged, smaller ones are 0.

    Returns
    -------
    list of (tuple of int, int)
        The cells of each slice and its true class (1: positives, 0: negatives), ordered by
        cells, positives first.
    """
    scale = float(np.abs(w).max()) if w.size else 0.0
    if scale == 0:
        return []
    out = []
    for i in (1, 0):
        groups: dict = {}
        for c in range(w.shape[1]):
            col = w[:, c, i] / scale
            if row_mass[c, i] <= 0 or np.abs(col).max() <= rtol:
                continue
            key = np.round(col / rtol).astype(np.int64).tobytes()
            groups.setdefault(key, []).append(c)
        out += [(tuple(cells), i) for cells in groups.values()]
    return sorted(out, key=lambda s: (s[0], -s[1]))


def _shown(v):
    return repr(v.item() if isinstance(v, np.generic) else v)


def describe_cells(cells, space) -> str | None:
    """A short name of a set of cells: None for every cell, ``"sex='F'"``, ``"race in ['a', 'b']"``,
    ``"sex='F', race='a'"``, else ``"cells [0, 3]"``."""
    cells = sorted(int(c) for c in cells)
    G = space.n_cells
    if len(cells) == G:
        return None
    frame = space.cells
    target = np.zeros(G, dtype=bool)
    target[cells] = True
    columns = list(frame.columns)
    for r in (1, 2):
        for combo in itertools.combinations(columns, r):
            keys = [tuple(frame[c].iloc[k] for c in combo) for k in range(G)]
            chosen = {keys[k] for k in cells}
            if np.array_equal(np.array([keys[k] in chosen for k in range(G)]), target):
                if r == 1:
                    values = sorted((k[0] for k in chosen), key=str)
                    col = combo[0]
                    return f"{col}={_shown(values[0])}" if len(values) == 1 else \
                        f"{col} in [{', '.join(_shown(v) for v in values)}]"
                if len(chosen) == 1:
                    (key,) = chosen
                    return ", ".join(f"{c}={_shown(v)}" for c, v in zip(combo, key))
    return f"cells {cells}"


def _resolve_group(spec, data):
    """(name, cells) of an explicit surrogate's group (a goal group spec; None: every row)."""
    if spec is None:
        return None, tuple(range(data.encoder.n_cells))
    mask = data.space.cell_mask(spec)
    cells = tuple(np.flatnonzero(mask).tolist())
    return describe_cells(cells, data.space), cells


def build_surrogates(spec, data, compiled, *, goal_objective: bool = True):
    """The surrogate set of a fit and a table of its slices.

    Parameters
    ----------
    spec : "auto", a loss name, a PointwiseLoss, or a list of surrogates
        ``"auto"``: hinge surrogates over the goals' slices (:func:`goal_slices`); a loss (a
        name of :data:`LOSSES` or an instance): the same slices with that loss; a list of
        :class:`SliceSurrogate` / :class:`QuantilePrecisionSurrogate` whose ``group`` is a goal
        group (``"F"``, ``{"sex": "F"}``, ``("race", "Black")``; None: every example),
        followed by the constraints' slices that the list does not already hold (with the
        list's first pointwise loss, else hinge).
    data : PreparedData
        The training sample (binary).
    compiled : CompiledProblem
        The goals on ``data.space``.
    goal_objective : bool, default True
        Whether the objective is the compiled goal (else a metric known only by evaluation,
        which counts as a function of the error masses of the positives and the negatives).

    Returns
    -------
    (SurrogateSet, list of dict)
        The surrogates bound to the training labels, slices and sample weights; per surrogate
        ``name``, ``label`` (+1 / -1), ``group`` (None: every cell) and ``n_examples``.

    Raises
    ------
    ValueError
        For an unknown loss, a group no example falls in, an empty slice, goals that no
        prediction moves, or an element of the list that is not a surrogate.
    """
    y_pm = 2.0 * np.asarray(data.y_codes == 1, dtype=float) - 1.0
    cells_of = np.asarray(data.cells, dtype=np.intp)
    masks, specs = {}, []

    def add(surrogate_cls, args, name, cells, label=None):
        if name is not None and name not in masks:
            masks[name] = np.isin(cells_of, np.asarray(cells, dtype=np.intp))
        specs.append(QuantilePrecisionSurrogate(args[0], name) if surrogate_cls is QuantilePrecisionSurrogate
                     else SliceSurrogate(args[0], label, name))

    def derived(loss, w):
        present = {(tuple(sorted(cells)), lab) for cells, lab in taken}
        for cells, i in goal_slices(w, data.space.row_mass):
            label = 1 if i == 1 else -1
            if (tuple(sorted(cells)), label) in present:
                continue
            add(SliceSurrogate, (loss,), describe_cells(cells, data.space), cells, label)

    taken: list[tuple] = []  # (cells, label or None) of the slices given
    if isinstance(spec, (str, PointwiseLoss)):
        loss = get_loss("hinge" if isinstance(spec, str) and spec == "auto" else spec)
        derived(loss, error_mass_weights(compiled, objective=goal_objective, overall=not goal_objective))
        if not specs:
            raise ValueError(f"the goals do not depend on the predictions ({compiled.objective.name}): "
                             "no slice to surrogate")
    else:
        items = list(spec)
        if not items:
            raise ValueError("surrogates is an empty list: give surrogates or 'auto'")
        loss = None
        for s in items:
            if isinstance(s, QuantilePrecisionSurrogate):
                name, cells = _resolve_group(s.group, data)
                add(QuantilePrecisionSurrogate, (s.recall,), name, cells)
                taken.append((cells, None))
            elif isinstance(s, SliceSurrogate):
                name, cells = _resolve_group(s.group, data)
                add(SliceSurrogate, (s.loss,), name, cells, s.label)
                taken.append((cells, s.label))
                loss = get_loss(s.loss) if loss is None else loss
            else:
                raise ValueError(f"surrogates must be 'auto', a loss name {sorted(LOSSES)} or a list of "
                                 f"SliceSurrogate / QuantilePrecisionSurrogate, got an element {s!r}")
        if compiled.constraints:
            derived(loss or get_loss("hinge"), error_mass_weights(compiled, objective=False))
    surrogates = SurrogateSet(specs, y_pm, masks, data.sample_weight)
    table = [{"name": s.name, "label": s.label, "group": s.group, "n_examples": int(len(idx))}
             for s, idx in zip(surrogates.surrogates, surrogates.index)]
    return surrogates, table
