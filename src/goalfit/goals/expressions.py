"""Symbolic goals: events, rates, linear rate expressions and constraints.

A *rate* is ``P(event | condition)`` over the (weighted) training sample, where event and
condition are conjunctions of conditions on the true class, the predicted class and the cell
(sensitive group, deployed model's prediction, ...). When the condition does not involve the
prediction its mass is a constant of the data, so the rate is **linear** in the stacked confusion
tensor; otherwise (precision) it is a **ratio** of linear forms (Narasimhan et al., JMLR 2024,
§2 and §7.2; Goh et al., NIPS 2016, Eq. 1 and Table 2).

Expressions stay symbolic (they hold class labels and group names, not data) until
``bind(space)`` turns them into :mod:`goalfit.goals.functions` objects for a given
:class:`~goalfit.confusion.ConfusionSpace`, so one goal can be handed to any method.
"""
from __future__ import annotations

import copy
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from numbers import Real

import numpy as np

from ..confusion.names import ABSENT, unknown_column
from .functions import BoundFunction, LinearFunction, RatioFunction, SumFunction

#: the confusion tensor at which a rate's coefficient is its total derivative (tangent_bind)
_TANGENT_AT: ContextVar = ContextVar("goalfit_tangent_at", default=None)


@contextmanager
def tangent_bind(C):
    """Bind rates with constant denominators to their *total* derivative at ``C`` (a context).

    A linear rate bound to a space is ``<num, C> / M`` with ``M = <given, C0>`` the mass of its
    slice read off the space's row masses. Inside this context (with the space's row masses
    those of ``C``), each such rate binds instead to the gradient of the self-normalized rate
    ``<num, C> / <given, C>`` at ``C``: ``(num - r * given) / M`` with ``r`` its value, so a
    bound function's linear forms carry the variance of every denominator. The function's
    structure (pieces, pairs, features) is unchanged; ratio rates and raw confusion forms do not
    depend on the row masses and bind as usual. Used by :func:`goalfit.metrics.intervals.jacobian`
    (the delta method of Narasimhan et al., JMLR 2024, and the fit's slice-size check).

    Parameters
    ----------
    C : ndarray of shape (n_cells, n_classes, n_classes)
        The stacked confusion tensor (the space's row masses must be ``C.sum(axis=2)``).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from goalfit.confusion import ConfusionSpace
    >>> from goalfit.goals import true_positive_rate
    >>> space = ConfusionSpace.from_codes(np.array([1, 1, 0, 1]), np.zeros(4, int), np.arange(2),
    ...                                   pd.DataFrame(index=[0]))
    >>> C = np.array([[[0.25, 0.0], [0.25, 0.5]]])   # TPR = 2/3 on the 3 positives
    >>> with tangent_bind(C):
    ...     g = true_positive_rate().bind(space).coef
    >>> np.round(g[0, 1] * 0.75, 4).tolist()      # (e_tp - r * row) / M, times M
    [-0.6667, 0.3333]
    """
    token = _TANGENT_AT.set(np.asarray(C, dtype=float))
    try:
        yield
    finally:
        _TANGENT_AT.reset(token)


def _freeze(spec):
    """Hashable form of a group specification."""
    if isinstance(spec, dict):
        return ("__dict__",) + tuple(sorted((str(k), _freeze(v)) for k, v in spec.items()))
    if isinstance(spec, (list, set, frozenset)):
        return ("__list__",) + tuple(spec)
    return spec


def _thaw(spec):
    if isinstance(spec, tuple) and spec and spec[0] == "__dict__":
        return {k: _thaw(v) for k, v in spec[1:]}
    if isinstance(spec, tuple) and spec and spec[0] == "__list__":
        return list(spec[1:])
    return spec


def _fmt_group(spec) -> str:
    return repr(_thaw(spec))


# ----------------------------------------------------------------------------- conditions
@dataclass(frozen=True)
class Cond:
    """One condition on (cell, true class i, predicted class j).

    ``what`` is one of ``"y"`` (true class in ``labels``), ``"pred"`` (predicted class in
    ``labels``), ``"correct"`` (i == j), ``"agree"`` (the predicted class equals the value of the
    slicing column ``column`` of the cell; churn) or ``"group"`` (the cell is in ``group``).
    ``labels=None`` means the positive class of a binary problem. ``negate`` flips it.
    """

    what: str
    labels: tuple | None = None
    group: object = None
    column: str | None = None
    negate: bool = False

    @property
    def on_prediction(self) -> bool:
        return self.what in ("pred", "correct", "agree")

    def mask(self, space) -> np.ndarray:
        n_cells, n, _ = space.shape
        if self.what == "group":
            m = np.broadcast_to(space.cell_mask(_thaw(self.group))[:, None, None], space.shape)
        elif self.what in ("y", "pred"):
            codes = ([space.default_positive()] if self.labels is None
                     else [space.class_code(v) for v in self.labels])
            sel = np.zeros(n, dtype=bool)
            sel[codes] = True
            m = sel[None, :, None] if self.what == "y" else sel[None, None, :]
            m = np.broadcast_to(m, space.shape)
        elif self.what == "correct":
            m = np.broadcast_to(np.eye(n, dtype=bool)[None], space.shape)
        elif self.what == "agree":
            col = space.cells[space_column(space, self.column)]
            m = np.zeros(space.shape, dtype=bool)
            for c, value in enumerate(col):
                if isinstance(value, str) and value == ABSENT:
                    continue  # a dataset without the column: checked in Rate.masks
                try:
                    m[c, :, space.class_code(value)] = True
                except ValueError:
                    raise ValueError(
                        f"column {self.column!r} holds {value!r}, which is not a class label: "
                        "churn needs the deployed model's predicted labels"
                    ) from None
        else:  # pragma: no cover - guarded by constructors
            raise ValueError(f"unknown condition {self.what!r}")
        return ~m if self.negate else np.array(m)


def space_column(space, column):
    if column is None:
        return space.single_column()
    column = str(column)
    if column not in space.cells.columns:
        raise ValueError(unknown_column(column, space.cells.columns))
    return column


def _describe_empty(conds, space) -> str:
    """Words for an empty conditioning slice, e.g. "group sensitive_feature='B' has no positive
    examples (true class 1)"."""
    where, what = [], "examples"
    for c in conds:
        if c.what == "group":
            g = _thaw(c.group)
            if isinstance(g, dict):
                where.append("group " + ", ".join(f"{k}={v!r}" for k, v in g.items()))
            else:
                where.append(f"group {g!r}")
        elif c.what == "y":
            try:
                labels = ([space.classes[space.default_positive()]] if c.labels is None else list(c.labels))
            except ValueError:
                labels = ["(positive class)"]
            labels = [v.item() if isinstance(v, np.generic) else v for v in labels]
            shown = labels[0] if len(labels) == 1 else labels
            try:
                positive = space.n_classes == 2 and len(labels) == 1 and \
                    space.class_code(labels[0]) == space.default_positive()
            except ValueError:
                positive = False
            if positive:
                what = f"{'negative' if c.negate else 'positive'} examples (true class {'not ' if c.negate else ''}{shown!r})"
            else:
                what = f"examples of true class {'not ' if c.negate else ''}{shown!r}"
    subject = " and ".join(where) if where else "the data"
    return f"{subject} has no {what}"


#: Recent :meth:`Rate.masks` results (the entries hold their space's objects, so ids are not reused).
_MASKS: dict = {}


def _mask(conds, space) -> np.ndarray:
    m = np.ones(space.shape, dtype=bool)
    for c in conds:
        m &= c.mask(space)
    return m


# ----------------------------------------------------------------------------- base
class Expression:
    """Base class of goal quantities (rates, linear rate expressions, named metrics).

    Comparisons build constraints: ``expr <= 0.05``, ``expr >= other_expr - 0.05``.

    Class attributes declare the structure used to choose a method:
    ``is_linear``, ``is_ratio`` (ratio of linear forms), ``is_convex``, ``is_smooth``;
    ``value_range`` is the interval the value lies in (used to reject out-of-range bounds).
    """

    is_linear = False
    is_ratio = False
    is_convex = False
    is_smooth = False
    lower_is_better = True
    value_range: tuple[float, float] = (0.0, 1.0)
    name = "expression"
    #: Declared (True) by a class whose ``bind`` reads the space's row masses only through its
    #: rates' denominators, so that binding under :func:`tangent_bind` gives its total derivative
    #: (the closed-form Jacobian of :func:`goalfit.metrics.intervals.jacobian`). Read from the
    #: class itself, never inherited: a subclass that binds otherwise is not assumed exact. Goals
    #: without it (H/G/Q-mean, KL quantification, coverage deviation: they read the class priors;
    #: user-defined goals) take finite differences.
    tangent_exact = False

    def bind(self, space) -> BoundFunction:  # pragma: no cover - abstract
        raise NotImplementedError

    def resolved(self, space) -> "Expression":
        """This goal with every choice it makes from the data fixed as ``space`` makes it.

        A goal that reads a *choice* from the data it is bound to (micro-F1's default class,
        the most frequent one) would make another choice on other rows; a fitted estimator
        keeps the goal resolved on its training rows (``goals_``), so that evaluating it on
        held-out rows measures what the fit minimized. Constants that define a metric on the
        rows it is measured on (the class priors of a recall) are not choices and stay as they
        are. Default: ``self``.
        """
        return self

    def __le__(self, other):
        return Constraint(self, "<=", other)

    def __ge__(self, other):
        return Constraint(self, ">=", other)

    def __repr__(self) -> str:
        return self.name

    __hash__ = object.__hash__


class Rate(Expression):
    """``P(event | given)`` over the sample, possibly restricted to a group.

    Parameters
    ----------
    event : tuple of Cond
        Conditions of the event (intersected with ``given``).
    given : tuple of Cond
        Conditioning event. When none of its conditions involves the prediction the rate is
        linear in the confusion tensor (constant denominator); otherwise it is a ratio.
    name : str
        Display name, e.g. ``"true_positive_rate(group='Female')"``.
    """

    tangent_exact = True  # reads the row masses through its rates only (Expression.tangent_exact)

    is_smooth = True
    is_convex = True

    def __init__(self, event, given=(), name: str = "rate"):
        self.event = tuple(event)
        self.given = tuple(given)
        self.name = name
        self.is_ratio = any(c.on_prediction for c in self.given)
        self.is_linear = not self.is_ratio
        self.is_convex = self.is_linear

    def masks(self, space):
        """``(numerator, slice)`` boolean masks over the space's confusion tensor.

        They depend on the space's classes, cells and positive label, never on its row masses:
        recent results are kept for the same classes and cells objects (the intervals re-bind
        goals with perturbed row masses many times). The arrays are shared: do not modify them."""
        try:
            key = (self.event, self.given, id(space.classes), id(space.cells), id(space.pos_label), space.shape)
            hit = _MASKS.get(key)
        except TypeError:  # an unhashable label
            return self._compute_masks(space)
        if hit is not None and hit[0] is space.classes and hit[1] is space.cells and hit[2] is space.pos_label:
            return hit[3]
        out = self._compute_masks(space)
        for m in out:
            m.flags.writeable = False
        if len(_MASKS) >= 512:
            _MASKS.pop(next(iter(_MASKS)))
        _MASKS[key] = (space.classes, space.cells, space.pos_label, out)
        return out

    def _compute_masks(self, space):
        given = _mask(self.given, space)
        num = given & _mask(self.event, space)
        for c in self.event + self.given:
            if c.what == "agree":
                col = space.cells[space_column(space, c.column)].to_numpy()
                absent = np.array([isinstance(v, str) and v == ABSENT for v in col])
                if (absent & given[:, 0, 0]).any():
                    raise ValueError(
                        f"{self.name}: some of its examples have no {c.column!r} column (a dataset "
                        "given without it); restrict the rate with dataset=..."
                    )
        return num, given

    def bind(self, space) -> BoundFunction:
        return LinearExpression.of(self).bind(space)

    # arithmetic: rates combine into linear expressions
    def __add__(self, other):
        return LinearExpression.of(self) + other

    __radd__ = __add__

    def __sub__(self, other):
        return LinearExpression.of(self) - other

    def __rsub__(self, other):
        return LinearExpression.of(other) - self

    def __mul__(self, c):
        return LinearExpression.of(self) * c

    __rmul__ = __mul__

    def __truediv__(self, c):
        return LinearExpression.of(self) / c

    def __neg__(self):
        return LinearExpression.of(self) * -1.0

    def __eq__(self, other):
        return isinstance(other, Rate) and (self.event, self.given) == (other.event, other.given)

    def __hash__(self):
        return hash((self.event, self.given))


class LinearExpression(Expression):
    """``sum_r c_r * rate_r + const``.

    Linear in the confusion tensor when every rate has a constant denominator; a single ratio
    (or ratios sharing one denominator, with no other term) binds to a ratio of linear forms.
    """

    tangent_exact = True  # reads the row masses through its rates only (Expression.tangent_exact)

    is_smooth = True

    def __init__(self, terms=(), const: float = 0.0):
        merged: dict[Rate, float] = {}
        for c, r in terms:
            merged[r] = merged.get(r, 0.0) + float(c)
        self.terms = tuple((c, r) for r, c in merged.items() if c != 0.0)
        self.const = float(const)
        ratio = [r for _, r in self.terms if r.is_ratio]
        self.is_linear = not ratio
        self.is_ratio = bool(ratio) and len({r.given for r in ratio}) == 1 and len(ratio) == len(self.terms)
        self.is_convex = self.is_linear
        lo = self.const + sum(min(c, 0.0) for c, _ in self.terms)
        hi = self.const + sum(max(c, 0.0) for c, _ in self.terms)
        self.value_range = (lo, hi)

    @classmethod
    def of(cls, x) -> "LinearExpression":
        if isinstance(x, LinearExpression):
            return x
        if isinstance(x, Rate):
            return cls(((1.0, x),))
        if isinstance(x, Real):
            return cls((), float(x))
        raise TypeError(
            f"cannot combine a rate with {type(x).__name__}: only rates and numbers add up "
            "(named metrics such as hmean are used alone)"
        )

    @property
    def name(self) -> str:  # type: ignore[override]  # computed from the terms; other expressions store theirs
        parts = []
        for c, r in self.terms:
            sign = "-" if c < 0 else "+"
            mag = abs(c)
            txt = r.name if mag == 1.0 else f"{mag:g} * {r.name}"
            parts.append((sign, txt))
        if self.const or not parts:
            parts.append(("-" if self.const < 0 else "+", f"{abs(self.const):g}"))
        out = ("-" if parts[0][0] == "-" else "") + parts[0][1]
        for sign, txt in parts[1:]:
            out += f" {sign} {txt}"
        return out

    def __add__(self, other):
        o = LinearExpression.of(other)
        return LinearExpression(self.terms + o.terms, self.const + o.const)

    __radd__ = __add__

    def __sub__(self, other):
        return self + LinearExpression.of(other) * -1.0

    def __rsub__(self, other):
        return LinearExpression.of(other) - self

    def __mul__(self, c):
        if not isinstance(c, Real):
            raise TypeError("rate expressions can only be multiplied by numbers")
        c = float(c)
        return LinearExpression(tuple((a * c, r) for a, r in self.terms), self.const * c)

    __rmul__ = __mul__

    def __truediv__(self, c):
        return self * (1.0 / c)

    def __neg__(self):
        return self * -1.0

    def without_const(self) -> "LinearExpression":
        return LinearExpression(self.terms, 0.0)

    def bind(self, space) -> BoundFunction:
        linear = np.zeros(space.shape)
        ratios: list[tuple[float, np.ndarray, np.ndarray, Rate]] = []
        for c, r in self.terms:
            num, given = r.masks(space)
            if r.is_ratio:
                ratios.append((c, num, given, r))
                continue
            mass = float((given[:, :, 0] * space.row_mass).sum())
            if mass <= 0:
                raise ValueError(f"{r.name}: {_describe_empty(r.given, space)}, so this rate is undefined "
                                 "(an empty slice: a class or group with no examples or zero total weight)")
            at = _TANGENT_AT.get()
            if at is None:
                linear += c * num / mass
            else:  # total derivative of <num, C> / <given, C> at C = at (see tangent_bind)
                linear += c * (num - (float(np.vdot(num, at)) / mass) * given) / mass
        lin = LinearFunction(linear, self.const, self.name)
        if not ratios:
            return lin
        if self.is_ratio:
            den = LinearFunction(ratios[0][2].astype(float))
            num = LinearFunction(sum(c * n for c, n, _, _ in ratios) + self.const * ratios[0][2], 0.0)
            return RatioFunction(num, den, self.name, empty_value=self.const)
        parts = [lin] + [
            RatioFunction(LinearFunction(c * n), LinearFunction(g.astype(float)), r.name) for c, n, g, r in ratios
        ]
        return SumFunction(parts, self.name)


# ----------------------------------------------------------------------------- constraints
class Constraint:
    """``lhs <sense> rhs`` with ``sense`` in ``{"<=", ">="}``.

    Rate expressions on both sides are moved to the left: the constraint is stored as
    ``expression <sense> bound`` with ``bound`` a number. Out-of-range bounds (a rate compared to
    1.5, a disparity bounded by -0.1) raise ``ValueError`` at construction.

    A comparison on the score of a metric whose goal is ``1 - score`` (``f1() >= 0.7``, built
    with ``score_label="F1"``; :func:`goalfit.goals.metrics.compare`) is stored in the form the
    methods read, on the goal's own value: ``expression`` the loss ``1 - F1``, ``sense`` the
    flipped sense, ``bound = 1 - 0.7``; ``score_label``, ``score_sense`` and ``score_bound`` keep
    the comparison as written and ``name`` reads ``"F1 >= 0.7"``.

    Parameters
    ----------
    lhs : Expression
    sense : {"<=", ">="}
    rhs : float or rate expression
    score_label : str, optional
        The score ``lhs`` is one minus (:func:`goalfit.goals.metrics.score_label`): ``rhs`` and
        ``sense`` are then on that score (a number ``rhs`` in [0, 1]).

    Attributes
    ----------
    expression : Expression
    sense : str
    bound : float
        ``expression <sense> bound`` is what the methods enforce (for a score: on ``1 - score``).
    name : str
        The constraint as written, e.g. ``"demographic_parity_difference('sex') <= 0.01"``,
        ``"F1 >= 0.7"``.
    score_label, score_sense, score_bound : str, str, float or None
        For a comparison on a score (``"F1"``, ``">="``, ``0.7``); None otherwise.

    Raises
    ------
    ValueError
        An unknown sense, a bound outside the values the left-hand side can take, or a
        non-finite bound.
    TypeError
        Two named metrics compared with each other, or a comparison with something that is not
        a number or a rate expression.

    Examples
    --------
    >>> from goalfit.goals import f1, true_positive_rate
    >>> c = f1() >= 0.7
    >>> c, c.expression.name, c.sense, round(c.bound, 12)
    (F1 >= 0.7, 'f1', '<=', 0.3)
    >>> true_positive_rate(group="F") >= 0.8
    true_positive_rate(group='F') >= 0.8
    """

    #: class defaults: a constraint pickled before these attributes existed reads as not on a score
    score_label: str | None = None
    score_sense: str | None = None
    score_bound: float | None = None

    def __init__(self, lhs, sense: str, rhs, *, score_label: str | None = None):
        if sense not in ("<=", ">="):
            raise ValueError(f"sense must be '<=' or '>=', got {sense!r}")
        self.score_label = self.score_sense = self.score_bound = None
        if score_label is not None:
            if not (isinstance(lhs, Expression) and isinstance(rhs, Real)):
                raise TypeError(f"a comparison on the score {score_label} bounds it by a number, got {rhs!r}")
            self._init_score(lhs, sense, float(rhs), score_label)
            return
        if isinstance(rhs, Real) and isinstance(lhs, Expression):
            expr, bound = lhs, float(rhs)
        elif isinstance(lhs, (Rate, LinearExpression)) and isinstance(rhs, (Rate, LinearExpression)):
            diff = LinearExpression.of(lhs) - rhs
            expr, bound = diff.without_const(), 0.0 - diff.const + 0.0
        elif isinstance(lhs, Expression) and isinstance(rhs, Expression):
            raise TypeError(
                f"cannot compare {lhs.name} with {rhs.name}: only rate expressions can appear on "
                "both sides; bound a named metric by a number"
            )
        else:
            raise TypeError(f"a constraint compares a goal expression with a number, got {rhs!r}")
        if not np.isfinite(bound):
            raise ValueError(f"the bound of {expr.name} must be finite, got {bound}")
        self.expression = expr
        self.sense = sense
        self.bound = bound
        rhs_txt = rhs.name if isinstance(rhs, Expression) else f"{rhs:g}"
        self.name = f"{lhs.name} {sense} {rhs_txt}"
        self._check_range(expr.name, sense, bound, expr.value_range)

    def resolved(self, space) -> "Constraint":
        """This constraint on its expression :meth:`~Expression.resolved` on ``space`` (``self``
        when the expression makes no choice from the data)."""
        expr = self.expression.resolved(space)
        if expr is self.expression:
            return self
        out = copy.copy(self)
        out.expression = expr
        return out

    def _init_score(self, expr, sense, score_bound, label):
        """``1 - expr <sense> score_bound``, stored as ``expr <flipped sense> 1 - score_bound``."""
        if not np.isfinite(score_bound):
            raise ValueError(f"the bound of {label} must be finite, got {score_bound}")
        self.name = f"{label} {sense} {score_bound:g}"
        lo, hi = expr.value_range
        self._check_range(label, sense, score_bound, (1.0 - hi, 1.0 - lo))
        self.expression = expr
        self.sense = "<=" if sense == ">=" else ">="
        self.bound = 1.0 - score_bound
        self.score_label, self.score_sense, self.score_bound = label, sense, score_bound

    def _check_range(self, what, sense, bound, value_range):
        lo, hi = value_range
        tol = 1e-12
        if sense == "<=" and bound < lo - tol:
            raise ValueError(
                f"bound out of range: {self.name} asks {what} <= {bound:g}, but its values "
                f"lie in [{lo:g}, {hi:g}]: no classifier can meet it"
            )
        if sense == ">=" and bound > hi + tol:
            raise ValueError(
                f"bound out of range: {self.name} asks {what} >= {bound:g}, but its values "
                f"lie in [{lo:g}, {hi:g}]: no classifier can meet it"
            )
        if (sense == "<=" and bound > hi + tol) or (sense == ">=" and bound < lo - tol):
            raise ValueError(
                f"bound out of range: {self.name} bounds {what} by {bound:g}, outside its "
                f"range [{lo:g}, {hi:g}] (a constraint that cannot bind is probably a typo)"
            )

    @property
    def text(self) -> str:
        """The constraint as goal text that :func:`~goalfit.goals.parse_constraint` reads back:
        ``name``, or for a score comparison its call (``"f1 >= 0.7"`` for ``F1 >= 0.7``)."""
        if self.score_label is None:
            return self.name
        return f"{self.expression.name} {self.score_sense} {self.score_bound:g}"

    @property
    def shown(self) -> tuple:
        """``(sense, bound)`` as the user wrote them: on the score for a score comparison
        (``(">=", 0.7)`` for ``f1() >= 0.7``), else ``(sense, bound)``."""
        return (self.sense, self.bound) if self.score_label is None else (self.score_sense, self.score_bound)

    def as_shown(self, value):
        """A value of ``expression`` (or an interval's end) in the units of :attr:`shown`:
        ``1 - value`` for a score comparison, ``value`` otherwise (None stays None)."""
        if value is None or self.score_label is None:
            return value
        return 1.0 - float(value)

    def with_bound(self, bound: float) -> "Constraint":
        """The same comparison with another bound, in the units of :attr:`shown` (a score's
        bound for ``f1() >= 0.7``)."""
        if self.score_label is not None:
            assert self.score_sense is not None  # set together with score_label
            return Constraint(self.expression, self.score_sense, bound, score_label=self.score_label)
        return Constraint(self.expression, self.sense, bound)

    def __repr__(self) -> str:
        return self.name

    def violation(self, value: float) -> float:
        """Amount by which ``value`` of the expression breaks the constraint (0 when met)."""
        return max(0.0, value - self.bound) if self.sense == "<=" else max(0.0, self.bound - value)

    def __bool__(self):
        raise TypeError(
            "a goalfit constraint has no truth value; pass it to a Problem or an estimator"
        )
