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
