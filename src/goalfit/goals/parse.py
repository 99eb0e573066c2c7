"""Read goals written as text (TOML specs, the command line) without ``eval``.

The text is parsed with :mod:`ast` and only these nodes are accepted: calls of goal
constructors from :mod:`goalfit.goals` with literal arguments, numbers, ``+ - * /``, unary
minus and one comparison ``<=`` / ``>=``. Examples::

    parse_constraint("demographic_parity_difference('sex') <= 0.01")
    parse_constraint("error_rate_difference('sex') <= 0.02")   # OMR parity (Ye & Xie Eq. 11a)
    parse_constraint("true_positive_rate(group='Female') >= true_positive_rate() - 0.05")
    parse_constraint("f1 >= 0.7")   # F1 >= 0.7, the same constraint as goalfit.f1() >= 0.7
    parse_objective("hmean")         # minimizes 1 - H-mean

A metric named by a score compares the score, as the builders do
(:func:`goalfit.goals.metrics.compare`): ``"gmean() >= 0.6"`` asks G-mean >= 0.6; ``"f1 <= 0.3"``
keeps its goalfit 0.1 meaning (1 - F1 <= 0.3) for one release with a FutureWarning.
"""
from __future__ import annotations

import ast
import operator

from .expressions import Constraint, Expression
from .metrics import compare

_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


# modules whose public functions are goal constructors (each returns an Expression); the
# black-box metrics of :mod:`.blackbox` evaluate predictions and are not goals of this language
_GOAL_MODULES = ("goalfit.goals", "goalfit.goals.rates", "goalfit.goals.fairness")


def _functions():
    """Every goal constructor exported by :mod:`goalfit.goals`, by name.

    Taken from ``goalfit.goals.__all__`` (functions defined in the rate, fairness and named
    metric modules), so a goal added to the vocabulary is reachable from text without a second
    list to maintain.
    """
    import types

    import goalfit.goals as g

    out = {}
    for name in g.__all__:
        obj = getattr(g, name)
        if isinstance(obj, types.FunctionType) and obj.__module__ in _GOAL_MODULES:
            out[name] = obj
    return out


class GoalSyntaxError(ValueError):
    """A goal text that is not a valid goal (unknown metric, bad syntax, bad arguments)."""


def _eval(node, text, funcs):
    if isinstance(node, ast.Expression):
        return _eval(node.body, text, funcs)
    if isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, (int, float, str))):
        return node.value
    if isinstance(node, ast.List):
        return [_eval(e, text, funcs) for e in node.elts]
    if isinstance(node, ast.Tuple):  # kept a tuple: group=("sex", "F") is a (column, value) pair
        return tuple(_eval(e, text, funcs) for e in node.elts)
    if isinstance(node, ast.Dict):
        return {_eval(k, text, funcs): _eval(v, text, funcs) for k, v in zip(node.keys, node.values)}
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_eval(node.operand, text, funcs)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        return _BINOPS[type(node.op)](_eval(node.left, text, funcs), _eval(node.right, text, funcs))
    if isinstance(node, ast.Name):
        if node.id in funcs:  # a bare metric name means calling it with no argument
            return _call(node.id, [], {}, text, funcs)
        raise GoalSyntaxError(f"unknown metric {node.id!r} in {text!r}; known: {sorted(funcs)}")
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        args = [_eval(a, text, funcs) for a in node.args]
        kwargs = {k.arg: _eval(k.value, text, funcs) for k in node.keywords}
        return _call(node.func.id, args, kwargs, text, funcs)
    if isinstance(node, ast.Compare):
        if len(node.ops) != 1 or type(node.ops[0]) not in (ast.LtE, ast.GtE):
            raise GoalSyntaxError(f"a constraint needs exactly one '<=' or '>=': {text!r}")
        lhs = _eval(node.left, text, funcs)
        rhs = _eval(node.comparators[0], text, funcs)
        sense = "<=" if isinstance(node.ops[0], ast.LtE) else ">="
        if not isinstance(lhs, Expression):
            lhs, rhs, sense = rhs, lhs, ("<=" if sense == ">=" else ">=")
        return compare(lhs, sense, rhs, spelling="", stacklevel=6)  # "f1 >= 0.7" bounds F1
    raise GoalSyntaxError(f"unsupported syntax in goal {text!r}: {ast.dump(node)[:60]}")


def _call(name, args, kwargs, text, funcs):
    if name not in funcs:
        raise GoalSyntaxError(f"unknown metric {name!r} in {text!r}; known: {sorted(funcs)}")
    try:
        return funcs[name](*args, **kwargs)
    except TypeError as err:
        raise GoalSyntaxError(f"bad arguments in {text!r}: {err}") from None


def parse_goal(text: str):
    """Parse a goal expression or constraint from text.

    Raises
    ------
    GoalSyntaxError
        (a ValueError) on unknown metrics, bad syntax or bad arguments; out-of-range bounds
        raise the ValueError of :class:`~goalfit.goals.Constraint`.
    """
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as err:
        raise GoalSyntaxError(f"cannot parse goal {text!r}: {err.msg}") from None
    return _eval(tree, text, _functions())


def parse_constraint(text: str) -> Constraint:
    """Parse ``"<expression> <= number"`` (or ``>=``) into a :class:`Constraint`.

    Examples
    --------
    >>> import goalfit as gf
    >>> gf.parse_constraint("demographic_parity_difference('sex') <= 0.01")
    demographic_parity_difference('sex') <= 0.01
    >>> gf.parse_constraint("true_positive_rate(group='F') >= true_positive_rate() - 0.05")
    true_positive_rate(group='F') >= true_positive_rate() - 0.05
    """
    out = parse_goal(text)
    if not isinstance(out, Constraint):
        raise GoalSyntaxError(f"{text!r} is not a constraint: compare it with '<=' or '>='")
    return out


def parse_objective(text: str) -> Expression:
    """Parse an objective: a name such as ``"hmean"`` or an expression such as ``"error_rate()"``.

    Examples
    --------
    >>> import goalfit as gf
    >>> gf.parse_objective("hmean")
    hmean
    >>> gf.parse_objective("error_rate() + 0.5 * false_positive_rate()")
    error_rate() + 0.5 * false_positive_rate()
    """
    from .problem import OBJECTIVES, as_objective

    key = text.strip().lower().replace("-", "_")
    if key in OBJECTIVES:
        return as_objective(key)
    out = parse_goal(text)
    if not isinstance(out, Expression):
        raise GoalSyntaxError(f"{text!r} is not an objective expression")
    return out
