"""Goal tightening shared by every estimator: ``margin=`` and the predicted margins of ``confidence=``."""
from __future__ import annotations

import numbers

import numpy as np

from ..goals import Constraint, Problem


def resolve_margins(margin, problem: Problem) -> list[float] | None:
    """Absolute tightening per constraint from ``margin=`` (None when not given).

    Parameters
    ----------
    margin : None, float or sequence of float
        One margin for every constraint, or one per constraint, in the goal's units (rate units
        for a rate, ratio units for a ratio).
    problem : Problem

    Returns
    -------
    list of float (one per constraint) or None

    Raises
    ------
    TypeError
        For a boolean or a non-numeric margin.
    ValueError
        For a wrong number of margins or a negative / non-finite one.
    """
    if margin is None:
        return None
    k = len(problem.constraints)
    if isinstance(margin, (bool, np.bool_)):
        raise TypeError(f"margin must be a number or one number per constraint, got {margin!r}")
    if isinstance(margin, numbers.Real):
        values = [float(margin)] * k
    else:
        try:
            values = list(margin)
        except TypeError:
            raise TypeError(f"margin must be a number or one number per constraint, got {margin!r}") from None
        if any(isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real) for v in values):
            raise TypeError(f"margin must hold numbers, got {values!r}")
        values = [float(v) for v in values]
    if len(values) != k:
        raise ValueError(f"margin has {len(values)} entries for {k} constraints")
    if any(not np.isfinite(v) or v < 0 for v in values):
        raise ValueError(f"margins must be finite and non-negative, got {values}")
    return values


def tighten(problem: Problem, margins) -> list[Constraint]:
    """The problem's constraints with each bound moved inwards by its margin (clipped to the goal's range).

    Parameters
    ----------
    problem : Problem
    margins : list of float or None
        As returned by :func:`resolve_margins` (None: the constraints unchanged).

    Returns
    -------
    list of Constraint
    """
    if margins is None:
        return list(problem.constraints)
    out = []
    for c, m in zip(problem.constraints, margins):
        lo, hi = c.expression.value_range
        b = c.bound - m if c.sense == "<=" else c.bound + m
        out.append(Constraint(c.expression, c.sense, min(max(b, lo), hi)))
    return out


def as_seed(random_state) -> int | None:
    """An int seed (or None) from an int, None or a :class:`numpy.random.RandomState`.

    Raises
    ------
    TypeError
        For anything else (a float, a string, a boolean).
    """
    if random_state is None:
        return None
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(2**31 - 1))
    if isinstance(random_state, (numbers.Integral, np.integer)) and not isinstance(random_state, (bool, np.bool_)):
        return int(random_state)
    raise TypeError(f"random_state must be an int, a numpy RandomState or None, got {random_state!r}")


def check_tightenable(compiled, tightened_bounds, margins) -> None:
    """Refuse margins that no classifier can meet because the constraints average out.

    Some sets of constraints are tied by an identity that holds for every classifier: each
    group's rate against the overall rate, when the groups make up the data, averages to zero
    (``sum_a P(a) (rate_a - rate) = 0``), so ``rate_a - rate <= -m`` for every group is
    infeasible for any margin ``m > 0``. The test is an LP over the compiled rows ``A vec(C) <= b``:
    weights ``lam >= 0`` (summing to 1) with ``A' lam`` constant over the predicted class within
    each (cell, true class) row make ``lam' A vec(C)`` the same number ``c0`` for every confusion
    tensor of the sample's row masses; if ``lam' b' < c0`` with the tightened bounds ``b'`` (and
    ``lam' b >= c0`` with the user's) the margins alone made the goals infeasible.

    Parameters
    ----------
    compiled : CompiledProblem
        The user's goals on the sample's space.
    tightened_bounds : ndarray of shape (n_rows,)
        ``b`` after tightening.
    margins : list of float
        For the message.

    Raises
    ------
    ValueError
        Naming the constraints that cannot all be tightened and the pairwise form that can.
    """
    from scipy.optimize import linprog

    A, b = compiled.A, compiled.b
    if A is None or not any(m > 0 for m in margins or ()):
        return
    space = compiled.space
    G, K = space.n_cells, space.n_classes
    k, D = A.shape
    # M maps a constant per (cell, true class) row to the tensor: column (c, i) is 1 on C[c, i, :]
    M = np.zeros((D, G * K))
    for r in range(G * K):
        M[r * K:(r + 1) * K, r] = 1.0
    mass = space.row_mass.ravel()
    bp = np.asarray(tightened_bounds, float)
    # variables [lam (k), mu (G K)]: A' lam - M mu = 0, sum lam = 1; minimize lam' b' - mu' mass
    A_eq = np.vstack([np.hstack([A.T, -M]), np.hstack([np.ones(k), np.zeros(G * K)])])
    b_eq = np.r_[np.zeros(D), 1.0]
    res = linprog(np.r_[bp, -mass], A_eq=A_eq, b_eq=b_eq, bounds=[(0, None)] * k + [(None, None)] * (G * K),
                  method="highs")
    if res.status != 0 or res.fun >= -1e-9:
        return
    lam, mu = res.x[:k], res.x[k:]
    c0 = float(mu @ mass)
    if float(lam @ b) < c0 - 1e-9:  # infeasible without any margin: the fit reports it as usual
        return
    rows = np.flatnonzero(lam > 1e-9)
    names = []
    for cc in compiled.constraints:
        if cc.rows is not None and any(cc.rows.start <= r < cc.rows.stop for r in rows):
            names.append(cc.name)
    raise ValueError(
        f"margin / confidence cannot tighten {names}: a weighted average of them is the same number for every "
        "classifier (e.g. each group's rate against the overall rate, which averages the groups), so they "
        "cannot all move inwards together; state the goal pairwise (e.g. rate(group=a) - rate(group=b) <= c, "
        "or a *_difference disparity such as equal_opportunity_difference(...) <= c), which a margin can tighten")
