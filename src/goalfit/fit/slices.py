"""Is a goal's smallest slice big enough for its bound to carry to new data? (a check at fit).

A constraint met on the training rows holds on new rows only up to the sampling noise of its
estimate, and that noise is set by the smallest slice the goal reads: an equalized-odds bound
of 0.03 between a group with 50 positives and the rest moves by more than 0.1 from one sample
of that size to the next. :func:`check_slice_sizes` measures that noise in closed form and
warns (:class:`SmallSliceWarning`) when it is larger than the room the bound leaves.

For each constraint ``h(C) <= b`` (or ``>= b``), at the fitted classifier:

* the standard deviation per row ``s`` of the estimate of ``h`` on i.i.d. rows is the
  delta-method one (:func:`goalfit.metrics.intervals.influence`, the first-order expansion of
  the goal intervals and of :func:`goalfit.metrics.plan_certification`), computed from the
  rows' counts per (slice, true class) and the classifier's expected confusion matrix on the
  training sample: each (slice, class) row predicts class ``k`` with the share the confusion
  matrix gives it (a randomized classifier's per-example draws), so no prediction pass and no
  simulation is needed;
* the 95% half-width on the ``n`` training rows is ``w = 1.96 s / sqrt(n)``;
* the room the bound leaves is ``r = b`` for a ``<=`` bound and ``r = 1 - b`` for a ``>=``
  bound (the width of the allowed range of a rate in [0, 1]; at least :data:`MIN_ROOM`, so that
  ``<= 0`` asks for the noise to fall under 0.01);
* the goal is *too small* for its bound when ``w > r``: a fresh sample of the same size moves
  the value by more than the whole allowed range. The rows it needs are ``n (w / r)^2`` (the
  planner's normal approximation at 50% power, two-sided 95%), of which the smallest slice's
  share ``n_slice / n``; :func:`goalfit.metrics.plan_certification` gives the simulated plan
  for a one-sided certificate at a chosen power.
"""
from __future__ import annotations

import warnings

import numpy as np

__all__ = ["MAX_CELLS", "MIN_ROOM", "SmallSliceWarning", "check_slice_sizes"]

#: the smallest room a bound is granted (a ``<= 0`` bound is judged against this noise)
MIN_ROOM = 0.01
#: confusion tensors with more entries than this are not checked (the Jacobian's cost)
MAX_CELLS = 4096
_Z95 = 1.959963984540054


class SmallSliceWarning(RuntimeWarning):
    """A goal's smallest slice is too small for its bound to carry to new data."""


def check_slice_sizes(problem, confusion, data, *, stacklevel: int = 2) -> list:
    """Warn for each constraint whose smallest slice is too small for its bound (module docstring).

    Parameters
    ----------
    problem : Problem
        The goals as the user wrote them (their bounds, untightened).
    confusion : ndarray of shape (n_cells, n_classes, n_classes)
        The fitted classifier's expected confusion tensor on the training sample
        (:attr:`goalfit.fit.FitResult.confusion`).
    data : PreparedData or None
        The prepared training rows (``y_codes``, ``cells``, ``space``, ``sample_weight``);
        None (rows that live elsewhere, e.g. Dask) skips the check.
    stacklevel : int, default 2
        Of the warning (the user's ``fit`` call).

    Returns
    -------
    list of dict
        One per constraint found too small: ``name``, ``slice`` (e.g. ``"age='under_25', y=1"``),
        ``slice_rows``, ``slice_rows_needed``, ``rows``, ``rows_needed``, ``half_width``,
        ``room`` and ``line`` (the sentence the warning and the report print). Empty when every
        slice is big enough or the check does not apply.

    Warns
    -----
    SmallSliceWarning
        One per constraint found too small, naming the slice, its rows and the rows needed.

    Examples
    --------
    >>> import numpy as np, goalfit as gf
    >>> rng = np.random.default_rng(0)
    >>> g = np.where(np.arange(2000) < 60, "young", "rest")
    >>> P = rng.dirichlet([2, 2], 2000); y = (rng.random(2000) < P[:, 1]).astype(int)
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     m = gf.GoalClassifier("precomputed", constraints=[gf.equalized_odds_difference("age") <= 0.03]).fit(
    ...         P, y, sensitive_features={"age": g})
    >>> any(issubclass(x.category, gf.fit.SmallSliceWarning) for x in w)
    True
    >>> m.small_slices_[0]["slice"].startswith("age='young'")
    True
    """
    if data is None or not getattr(problem, "constraints", None):
        return []
    from ..metrics.intervals import GoalSample, jacobian, smallest_slice

    C = np.asarray(confusion, dtype=float)
    space = data.space
    if C.shape != tuple(space.shape) or C.size > MAX_CELLS:
        return []
    n_cells, K = C.shape[0], C.shape[1]
    n = len(data.y_codes)
    counts = _space_counts(data, n)
    if counts is None:
        counts = _row_counts(data.cells, data.y_codes, None, n_cells, K)
    counts_w = counts if data.sample_weight is None else _row_counts(data.cells, data.y_codes, data.sample_weight,
                                                                     n_cells, K)
    # pseudo-rows: (cell, class) row r predicts k with the share C gives it, weighted by r's rows
    mass = C.sum(axis=2, keepdims=True)
    q = np.divide(C, mass, out=np.zeros_like(C), where=mass > 0)
    rc, ry, rk = np.nonzero((counts_w[:, :, None] > 0) & (q > 0))
    if rc.size == 0:
        return []
    weight = counts_w[rc, ry] * q[rc, ry, rk]
    sample = GoalSample(ry, rk, rc, space, weight)
    p = sample.w / sample.w.sum()
    classes = np.asarray(space.classes)
    out = []
    for c in problem.constraints:
        v0, how, J = jacobian(sample, c.expression)
        if not np.all(np.isfinite(v0)):
            continue
        binding = int(np.argmax(v0)) if how == "max" else (int(np.argmin(v0)) if how == "min1" else 0)
        Jz = sample.per_example(J[binding:binding + 1])[0]  # the binding piece on each pseudo-row
        sd = np.sqrt(max(float(((Jz - Jz @ p) ** 2) @ p), 0.0))
        sense, bound = c.shown
        room = max(MIN_ROOM, float(bound) if sense == "<=" else 1.0 - float(bound))
        half = float(_Z95 * sd / np.sqrt(n))
        if not half > room:
            continue
        where, n_slice = smallest_slice(c.expression, sample, classes, counts=counts, jac=J)
        need = n * (half / room) ** 2
        need_slice = need * n_slice / n
        line = (f"{c.name}: its smallest slice ({where}) has {n_slice:,} rows; a new sample of {n:,} rows moves "
                f"its value by up to {half:.3g} (95%), more than the {room:.3g} the bound leaves; about "
                f"{need_slice:,.0f} rows of that slice ({need:,.0f} in all) are needed for the bound to carry "
                "to new data (gf.plan_certification plans a certificate)")
        out.append({"name": c.name, "slice": where, "slice_rows": int(n_slice), "slice_rows_needed": float(need_slice),
                    "rows": int(n), "rows_needed": float(need), "half_width": half, "room": room, "line": line})
        warnings.warn(line, SmallSliceWarning, stacklevel=stacklevel + 1)
    return out


def _space_counts(data, n):
    """The rows of each (cell, class), read from the space that :func:`goalfit.fit.prepare` built
    on these unweighted, labelled rows (its row masses are those counts over ``n``), or None when
    the space is not that (weights, unlabelled rows, another row count): no second pass over the rows."""
    if data.sample_weight is not None or getattr(data, "labelled", None) is not None:
        return None
    counts = np.rint(np.asarray(data.space.row_mass, dtype=float) * n)
    return counts if counts.sum() == n else None


def _row_counts(cells, y, weight, n_cells, n_classes, block=1 << 16):
    """Rows (or their weights) of each (cell, class), shape (n_cells, n_classes), counted by blocks
    of rows so that the narrow codes are never widened whole (a few bytes a row at most)."""
    out = np.zeros(n_cells * n_classes)
    for s in range(0, len(y), block):
        code = np.asarray(cells[s:s + block], dtype=np.int64) * n_classes + np.asarray(y[s:s + block], dtype=np.int64)
        w = None if weight is None else np.asarray(weight[s:s + block], dtype=float)
        out += np.bincount(code, weights=w, minlength=n_cells * n_classes)
    return out.reshape(n_cells, n_classes)
