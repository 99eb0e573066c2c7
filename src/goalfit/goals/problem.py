"""A problem = one objective + constraints, and its compiled (numeric) form.

``Problem.compile(space)`` binds every goal to a :class:`~goalfit.confusion.ConfusionSpace`
and stacks the polyhedral constraints into ``A @ vec(C) <= b`` over the flattened stacked
confusion tensor (row-major ``vec``, Narasimhan et al. JMLR 2024 §1 and §7.2). Methods read only
the compiled form, so every method consumes the same goals.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from .expressions import Constraint, Expression
from .functions import BoundFunction
from . import metrics as _m

if TYPE_CHECKING:
    from ..confusion import ConfusionSpace

#: Largest violation (rate units) at which a constraint counts as met, everywhere goalfit says
#: "met" or "feasible": the methods' ``FitResult.feasible`` and ``GoalClassifier.feasible_``,
#: the deterministic searches' order and warnings (:mod:`goalfit.methods.derandomize`),
#: :func:`goalfit.metrics.evaluate_problem`'s ``met``, the report, the bisection method, the
#: trade-off frontier and the ramp method's feasibility phase (``RampClassifier.feasible_``). Above float rounding of rates (a float64 sum of 10^8 terms of 1/n is off by
#: at most about 10^8 x 1.1e-16 = 1.1e-8), below any violation a user would call one.
FEASIBLE_TOL = 1e-7

OBJECTIVES = {
    "error": _m.ErrorRate,
    "balanced_error": _m.BalancedErrorRate,
    "hmean": _m.HMeanLoss,
    "gmean": _m.GMeanLoss,
    "qmean": _m.QMeanLoss,
    "minmax_recall": _m.MinMaxRecallLoss,
    "f1": _m.FBetaLoss,
    "micro_f1": _m.MicroF1Loss,
    "macro_f1": _m.MacroF1Loss,
    "macro_f1_over_groups": _m.MacroF1OverGroupsLoss,
    "kl_quantification": _m.KLQuantification,
}


def as_objective(objective) -> Expression:
    """Resolve an objective given by name or as an expression.

    Raises
    ------
    ValueError
        For an unknown name (the message lists the known ones).
    TypeError
        For anything that is neither a name nor a goal expression.

    Examples
    --------
    >>> import goalfit as gf
    >>> gf.as_objective("gmean")
    gmean
    >>> gf.as_objective(gf.error_rate(group="a"))
    error_rate(group='a')
    """
    if isinstance(objective, Expression):
        return objective
    if isinstance(objective, str):
        key = objective.strip().lower().replace("-", "_")
        if key not in OBJECTIVES:
            raise ValueError(f"unknown objective {objective!r}; known: {sorted(OBJECTIVES)}")
        return OBJECTIVES[key]()
    raise TypeError(f"objective must be a name or a goal expression, got {type(objective).__name__}")


@dataclass
class CompiledConstraint:
    """One user constraint bound to a space.

    Attributes
    ----------
    name : str
    function : BoundFunction
        Left-hand side (all rate terms moved left).
    sense : str
    bound : float
    rows : slice or None
        Rows of the stacked ``A, b`` that express it (None for a non-polyhedral constraint).
    """

    constraint: Constraint
    function: BoundFunction
    rows: slice | None

    @property
    def name(self) -> str:
        return self.constraint.name

    @property
    def sense(self) -> str:
        return self.constraint.sense

    @property
    def bound(self) -> float:
        return self.constraint.bound

    def value(self, C) -> float:
        return self.function.value(C)

    def violation(self, C) -> float:
        return self.constraint.violation(self.value(C))


@dataclass
class CompiledProblem:
    """Numeric form of a problem on one confusion space.

    Attributes
    ----------
    space : ConfusionSpace
    objective : BoundFunction
    constraints : list of CompiledConstraint
    A : ndarray of shape (K, D), b : ndarray of shape (K,)
        Polyhedral constraints ``A @ C.ravel() <= b``; ``D = space.size``.
    nonlinear : list of CompiledConstraint
        Constraints without a polyhedral form (convex smooth ones such as KL quantification).
    """

    space: ConfusionSpace
    objective: BoundFunction
    constraints: list = field(default_factory=list)
    A: np.ndarray | None = None
    b: np.ndarray | None = None
    nonlinear: list = field(default_factory=list)

    @property
    def n_rows(self) -> int:
        return 0 if self.A is None else self.A.shape[0]

    def row_violations(self, C) -> np.ndarray:
        """``A vec(C) - b`` (positive entries are violated rows), shape (K,)."""
        if self.A is None:
            return np.zeros(0)
        return self.A @ np.asarray(C).ravel() - self.b

    def max_violation(self, C) -> float:
        """Largest violation over all constraints (0 when all are met)."""
        v = [c.violation(C) for c in self.constraints]
        return float(max(v)) if v else 0.0

    def constraint_values(self, C) -> list[float]:
        return [c.value(C) for c in self.constraints]


class Problem:
    """Minimize an objective subject to constraints, all stated as goals.

    Parameters
    ----------
    objective : str or Expression, default "error"
        A name from :data:`OBJECTIVES` or any goal expression: what is minimized (lower is
        better). A name that is a score names its loss: ``"f1"`` minimizes 1 - F1,
        ``"gmean"`` / ``"hmean"`` 1 - G-mean / 1 - H-mean, ``"micro_f1"`` / ``"macro_f1"``
        1 - micro-/macro-F1, ``"minmax_recall"`` 1 - the worst-class recall (Narasimhan et
        al.'s min-max loss); ``"error"``, ``"balanced_error"``, ``"qmean"`` and
        ``"kl_quantification"`` are losses and are minimized as they are
        (:data:`goalfit.goals.metrics.SCORES`). The same builders called on labels return the
        score (``goalfit.f1(y_true, y_pred)`` is F1).
    constraints : sequence of Constraint
        E.g. ``[demographic_parity_difference("sex") <= 0.01, precision(1) >= 0.8]``. A
        metric named by a score bounds that score: ``gmean() >= 0.6`` asks G-mean >= 0.6
        (enforced as 1 - G-mean <= 0.4, :func:`goalfit.goals.metrics.compare`).

    Raises
    ------
    TypeError
        If a constraint is not a :class:`Constraint` (e.g. a bare expression).

    Examples
    --------
    >>> from goalfit.goals import Problem, demographic_parity_difference
    >>> Problem("f1", [demographic_parity_difference() <= 0.05])
    minimize f1 (1 - F1)
      s.t. demographic_parity_difference() <= 0.05
    """

    def __init__(self, objective="error", constraints=()):
        self.objective = as_objective(objective)
        if isinstance(constraints, Constraint):
            constraints = [constraints]
        self.constraints = list(constraints)
        for c in self.constraints:
            if not isinstance(c, Constraint):
                raise TypeError(
                    f"constraints must be comparisons such as `expr <= 0.01`, got {c!r}"
                )

    def __repr__(self) -> str:
        cons = "".join(f"\n  s.t. {c.name}" for c in self.constraints)
        name = self.objective.name
        label = _m.loss_label(name)
        return f"minimize {name}{'' if label == name else f' ({label})'}{cons}"

    def resolved(self, space) -> "Problem":
        """These goals with the choices they make from the data fixed on ``space``
        (:meth:`Expression.resolved <goalfit.goals.Expression.resolved>`: micro-F1's default
        class); ``self`` when none makes one. A fitted estimator keeps its goals resolved on the
        training rows (``goals_``) and evaluates new rows with them.

        Examples
        --------
        >>> import numpy as np, pandas as pd
        >>> from goalfit.confusion import ConfusionSpace
        >>> y, cells = np.array([0, 1, 1, 2]), np.zeros(4, dtype=int)
        >>> space = ConfusionSpace.from_codes(y, cells, np.array([0, 1, 2]), pd.DataFrame(index=range(1)))
        >>> Problem("micro_f1").resolved(space).objective.default_class
        1
        """
        objective = self.objective.resolved(space)
        constraints = [c.resolved(space) for c in self.constraints]
        if objective is self.objective and all(a is b for a, b in zip(constraints, self.constraints)):
            return self
        out = copy.copy(self)
        out.objective, out.constraints = objective, constraints
        return out

    def compile(self, space) -> CompiledProblem:
        """Bind to a confusion space.

        Raises
        ------
        ValueError
            If a goal refers to unknown classes or groups, or to an empty slice.
        """
        objective = self.objective.bind(space)
        compiled, rows_A, rows_b, nonlinear = [], [], [], []
        k = 0
        for c in self.constraints:
            f = c.expression.bind(space)
            rows = f.constraint_rows(c.sense, c.bound)
            if rows is None:
                # smooth, or smooth on its sublevel set (gmean() >= 0.6: every recall positive)
                smooth = f.smooth or c.bound < getattr(c.expression, "smooth_below", -np.inf)
                if not (f.kind in ("linear", "convex") and c.sense == "<=" and smooth):
                    raise ValueError(
                        f"constraint {c.name!r} is neither polyhedral nor a smooth convex "
                        "function bounded above; the plug-in methods cannot handle it"
                    )
                cc = CompiledConstraint(c, f, None)
                nonlinear.append(cc)
            else:
                A, b = rows
                cc = CompiledConstraint(c, f, slice(k, k + len(b)))
                rows_A.append(A)
                rows_b.append(b)
                k += len(b)
            compiled.append(cc)
        A = np.vstack(rows_A) if rows_A else None
        b = np.concatenate(rows_b) if rows_b else None
        return CompiledProblem(space, objective, compiled, A, b, nonlinear)
