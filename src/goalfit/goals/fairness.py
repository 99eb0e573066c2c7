"""Group-fairness goals: demographic parity, equal opportunity, equalized odds, error-rate
(overall misclassification rate) and false-positive-rate parity.

Each is a disparity of a family of rates across the groups of one sensitive feature, in
difference form (``max_f (max_a r_fa - min_a r_fa)``, fairlearn's ``method="between_groups"``,
or ``max_f max_a |r_fa - r_f|`` with ``method="to_overall"``, Narasimhan et al. JMLR 2024
Ex. 7-8 and Table 1) or ratio form (``min_f min_a r_fa / max_a r_fa``; ``ratio >= 0.8`` is the
80% rule). Families: demographic parity ``P(h = k | A = a)``; equal opportunity
``P(h = k | y = k, A = a)``; equalized odds ``P(h = j | y = i, A = a)`` (binary: TPR and FPR);
error rate ``P(h != y | A = a)`` (the "overall misclassification rate" (OMR) disparity of Ye &
Xie, arXiv 2012.12356, Def. 2 / Eq. 11a, Zafar et al.'s disparate mistreatment); false
positive rate ``P(h = k | y != k, A = a)`` (Ye & Xie Def. 3 / Eq. 21a).
For binary problems only the positive class is used (the negative class gives the same
disparity); for multiclass problems every class (or the one named by ``label``).

A difference bound expands into linear constraints ``r_fa - r_fb <= eps`` for every ordered
pair of groups (or ``±(r_fa - r_f) <= eps``), a ratio bound ``>= kappa`` into
``kappa r_fb - r_fa <= 0`` (Goh et al. NIPS 2016 Table 2 "fairness constraint"): exact
polyhedral forms, the "K linear constraints" of Narasimhan §7.2.
"""
from __future__ import annotations

import itertools

import numpy as np

from .expressions import Cond, Expression, Rate, _freeze, space_column
from .functions import BoundFunction, LinearFunction, MaxOfLinear

__all__ = [
    "GroupDisparity",
    "demographic_parity_difference", "demographic_parity_ratio",
    "equal_opportunity_difference", "equal_opportunity_ratio",
    "equalized_odds_difference", "equalized_odds_ratio",
    "error_rate_difference", "error_rate_ratio", "overall_misclassification_rate_difference",
    "false_positive_rate_difference", "false_positive_rate_ratio", "average_odds_difference",
]

_KINDS = ("demographic_parity", "equal_opportunity", "equalized_odds", "error_rate", "false_positive_rate",
          "average_odds")


class GroupDisparity(Expression):
    """Disparity of a rate family across the groups of a sensitive feature.

    Parameters
    ----------
    kind : {"demographic_parity", "equal_opportunity", "equalized_odds", "error_rate", \
            "false_positive_rate"}
        ``"error_rate"`` compares ``P(h != y | A = a)`` (no class involved; ``label`` is
        ignored); ``"false_positive_rate"`` compares ``P(h = k | y != k, A = a)``.
    sensitive : str, optional
        Sensitive-feature column; default: the only one.
    label : class label, optional
        Restrict the family to one class (default: positive class if binary, all if multiclass).
    method : {"between_groups", "to_overall"}
    form : {"difference", "ratio"}
    """

    tangent_exact = True  # reads the row masses through its rates only (Expression.tangent_exact)

    is_smooth = False

    def __init__(self, kind: str, sensitive: str | None = None, *, label=None,
                 method: str = "between_groups", form: str = "difference"):
        if kind not in _KINDS:
            raise ValueError(f"kind must be one of {_KINDS}, got {kind!r}")
        if method not in ("between_groups", "to_overall"):
            raise ValueError(f"method must be 'between_groups' or 'to_overall', got {method!r}")
        if form not in ("difference", "ratio"):
            raise ValueError(f"form must be 'difference' or 'ratio', got {form!r}")
        if kind == "average_odds" and form != "difference":
            raise ValueError("average odds has a difference form only")
        self.kind, self.sensitive, self.label, self.method, self.form = kind, sensitive, label, method, form
        self.is_convex = form == "difference"
        self.lower_is_better = form == "difference"
        args = [] if sensitive is None else [repr(sensitive)]
        if label is not None:
            args.append(f"label={label!r}")
        if method != "between_groups":
            args.append(f"method={method!r}")
        self.name = f"{kind}_{form}({', '.join(args)})"

    # -- the rate family ---------------------------------------------------------------
    def _families(self, space):
        """List of (event conds, given conds) without the group condition."""
        binary = space.n_classes == 2
        if self.label is not None:
            ks = [self.label]
        elif self.kind == "error_rate":  # no class: labels of any kind need no positive class
            ks = []
        elif binary:
            ks = [space.classes[space.default_positive()]]
        else:
            ks = list(space.classes)
        fam: list[tuple[tuple[Cond, ...], tuple[Cond, ...]]] = []  # (event, given) of each rate
        if self.kind == "demographic_parity":
            fam = [((Cond("pred", (k,)),), ()) for k in ks]
        elif self.kind == "equal_opportunity":
            fam = [((Cond("pred", (k,)),), (Cond("y", (k,)),)) for k in ks]
        elif self.kind == "error_rate":
            fam = [((Cond("correct", negate=True),), ())]
        elif self.kind == "false_positive_rate":
            fam = [((Cond("pred", (k,)),), (Cond("y", (k,), negate=True),)) for k in ks]
        elif self.kind == "average_odds":
            if len(ks) != 1:
                raise ValueError(f"{self.name}: a multiclass problem needs the class, e.g. "
                                 f"average_odds_difference(label={space.classes[0]!r})")
            k = ks[0]
            fam = [((Cond("pred", (k,)),), (Cond("y", (k,)),)),                 # TPR
                   ((Cond("pred", (k,)),), (Cond("y", (k,), negate=True),))]   # FPR
        else:
            fam = [((Cond("pred", (j,)),), (Cond("y", (i,)),)) for i in space.classes for j in ks]
        return fam

    def rate_table(self, space):
        """Bound rates: ``(groups, overall, table)`` with ``table[f][a]`` a LinearFunction."""
        col = space_column(space, self.sensitive)
        groups = space.column_values(col)
        if len(groups) < 2:
            raise ValueError(f"{self.name}: sensitive feature {col!r} has a single group {groups}; "
                             "a disparity needs at least two")
        table, overall = [], []
        for event, given in self._families(space):
            row = []
            for g in groups:
                r = Rate(event, given + (_group_cond(col, g),), f"rate[{col}={g!r}]")
                row.append(r.bind(space))
            table.append(row)
            overall.append(Rate(event, given, "overall").bind(space))
        return groups, overall, table

    def bind(self, space) -> BoundFunction:
        groups, overall, table = self.rate_table(space)
        if self.kind == "average_odds":
            return MaxOfLinear(_average_odds_pieces(table, overall, self.method), self.name)
        if self.form == "difference":  # each family's pieces, in itertools.permutations' order
            blocks = []
            for f, row in enumerate(table):
                R = np.stack([r.coef.ravel() for r in row])  # (groups, D)
                if self.method == "between_groups":
                    a, b = np.nonzero(~np.eye(len(row), dtype=bool))  # the ordered pairs a != b
                    blocks.append(R[a] - R[b])
                else:  # +d and -d for each group, interleaved
                    d = R - overall[f].coef.ravel()[None, :]
                    blocks.append(np.stack([d, -d], axis=1).reshape(-1, R.shape[1]))
            coefs = np.concatenate(blocks)
            return MaxOfLinear.from_arrays(coefs, np.zeros(len(coefs)), space.shape, self.name)
        return MinRatio(table, overall, self.method, self.name, space.shape)


def _average_odds_pieces(table, overall, method):
    """Linear pieces of ``max 0.5 (|dTPR| + |dFPR|)`` over group pairs (or each group vs overall).

    ``table = [TPR row, FPR row]``; every sign pattern of the two gaps is one piece, so the max
    over pieces is the sum of absolute values (a convex, polyhedral function).
    """
    (tpr, fpr), pieces = table, []
    if method == "between_groups":
        pairs = [(tpr[a].coef - tpr[b].coef, fpr[a].coef - fpr[b].coef)
                 for a, b in itertools.permutations(range(len(tpr)), 2)]
    else:
        pairs = [(tpr[a].coef - overall[0].coef, fpr[a].coef - overall[1].coef) for a in range(len(tpr))]
    for dt, df in pairs:
        for st, sf in itertools.product((1.0, -1.0), repeat=2):
            pieces.append(LinearFunction(0.5 * (st * dt + sf * df), 0.0))
    return pieces


def _group_cond(col, value):
    return Cond("group", group=_freeze({col: value}))


class MinRatio(BoundFunction):
    """``min`` over families and group pairs of ``r_a / r_b`` (ratio form of a disparity)."""

    kind = "nonconvex"
    smooth = False

    def __init__(self, table, overall, method, name, shape):
        super().__init__(shape, name)
        self.pairs = []  # (numerator LinearFunction, denominator LinearFunction)
        for f, row in enumerate(table):
            if method == "between_groups":
                self.pairs += list(itertools.permutations(row, 2))
            else:
                for r in row:
                    self.pairs += [(r, overall[f]), (overall[f], r)]
        self.num = np.stack([p[0].coef.ravel() for p in self.pairs])
        self.den = np.stack([p[1].coef.ravel() for p in self.pairs])

    def _ratios(self, C):
        c = np.asarray(C).ravel()
        a, b = self.num @ c, self.den @ c
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.where(b > 0, a / np.where(b > 0, b, 1), np.where(a > 0, np.inf, 1.0))
        return r, a, b

    def value(self, C) -> float:
        return float(min(1.0, self._ratios(C)[0].min()))

    def gradient(self, C) -> np.ndarray:
        r, a, b = self._ratios(C)
        k = int(np.argmin(r))
        if r[k] >= 1.0 or b[k] <= 0:
            return np.zeros(self.shape)
        return ((self.num[k] * b[k] - a[k] * self.den[k]) / b[k] ** 2).reshape(self.shape)

    def features(self):
        from .functions import Features

        P = len(self.pairs)
        U = np.vstack([self.num, self.den])

        def value(z):
            a, b = z[:P], z[P:]
            with np.errstate(divide="ignore", invalid="ignore"):
                r = np.where(b > 0, a / np.where(b > 0, b, 1), np.where(a > 0, np.inf, 1.0))
            return float(min(1.0, r.min()))

        def gradient(z):
            a, b = z[:P], z[P:]
            with np.errstate(divide="ignore", invalid="ignore"):
                r = np.where(b > 0, a / np.where(b > 0, b, 1), np.where(a > 0, np.inf, 1.0))
            g = np.zeros(2 * P)
            k = int(np.argmin(r))
            if r[k] < 1.0 and b[k] > 0:
                g[k], g[P + k] = 1.0 / b[k], -a[k] / b[k] ** 2
            return g

        return Features(U, value, gradient, "nonconvex", False)

    def constraint_rows(self, sense, bound):
        if sense != ">=":
            return None
        # r_a / r_b >= kappa  <=>  kappa * r_b - r_a <= 0
        return bound * self.den - self.num, np.zeros(len(self.pairs))


def _maker(kind, form, doc, example_value):
    def make(sensitive: str | None = None, *, label=None, method: str = "between_groups") -> GroupDisparity:
        return GroupDisparity(kind, sensitive, label=label, method=method, form=form)

    make.__name__ = f"{kind}_{form}"
    make.__doc__ = doc + """

    Parameters
    ----------
    sensitive : str, optional
        Sensitive-feature column (default: the only one given at fit time).
    label : class label, optional
        Class whose rates are compared (default: the positive class of a binary problem, every
        class of a multiclass problem).
    method : {"between_groups", "to_overall"}, default "between_groups"
        Compare groups with each other (fairlearn's default) or each group with the overall rate
        (Narasimhan et al. Ex. 7-8).

    Returns
    -------
    GroupDisparity
        A symbolic goal; compare it with a number to make a constraint.

    Examples
    --------
    >>> import goalfit as gf
    >>> gf.{name}("sex") {bound}
    {name}('sex') {bound}
    >>> y_true, y_pred = [1, 1, 0, 0, 1, 0], [1, 0, 0, 1, 1, 0]
    >>> round(gf.{name}(y_true, y_pred, sensitive_features=["a", "a", "a", "b", "b", "b"]), 4)
    {value}
    """.replace("{name}", make.__name__).replace("{bound}", "<= 0.05" if form == "difference" else ">= 0.8").replace(
        "{value}", str(example_value))
    return make


demographic_parity_difference = _maker(
    "demographic_parity", "difference",
    "Largest gap in ``P(h(x) = k | A = a)`` across groups (in [0, 1]; 0 is parity).", 0.3333)
demographic_parity_ratio = _maker(
    "demographic_parity", "ratio",
    "Smallest ratio of ``P(h(x) = k | A = a)`` across groups (in [0, 1]; ``>= 0.8`` is the 80% rule).", 0.5)
equal_opportunity_difference = _maker(
    "equal_opportunity", "difference",
    "Largest gap in true positive rate ``P(h(x) = k | y = k, A = a)`` across groups.", 0.5)
equal_opportunity_ratio = _maker(
    "equal_opportunity", "ratio",
    "Smallest ratio of true positive rates across groups.", 0.5)
equalized_odds_difference = _maker(
    "equalized_odds", "difference",
    "Largest gap in ``P(h(x) = j | y = i, A = a)`` across groups (binary: max of TPR and FPR gaps).", 0.5)
equalized_odds_ratio = _maker(
    "equalized_odds", "ratio",
    "Smallest ratio of ``P(h(x) = j | y = i, A = a)`` across groups (binary: min of TPR and FPR ratios).", 0.0)
error_rate_difference = _maker(
    "error_rate", "difference",
    "Largest gap in error rate ``P(h(x) != y | A = a)`` across groups: the overall misclassification\n"
    "    rate (OMR) disparity of Ye & Xie (arXiv 2012.12356, Def. 2, Eq. 11a); ``label`` is ignored.", 0.0)
error_rate_ratio = _maker(
    "error_rate", "ratio",
    "Smallest ratio of error rates ``P(h(x) != y | A = a)`` across groups; ``label`` is ignored.", 1.0)
false_positive_rate_difference = _maker(
    "false_positive_rate", "difference",
    "Largest gap in false positive rate ``P(h(x) = k | y != k, A = a)`` across groups (Ye & Xie\n"
    "    Def. 3, Eq. 21a).", 0.5)
false_positive_rate_ratio = _maker(
    "false_positive_rate", "ratio",
    "Smallest ratio of false positive rates across groups.", 0.0)


def overall_misclassification_rate_difference(sensitive: str | None = None, *,
                                              method: str = "between_groups") -> GroupDisparity:
    """Alias of :func:`error_rate_difference` under Ye & Xie's name (OMR, Def. 2, Eq. 11a).

    Parameters
    ----------
    sensitive : str, optional
        Sensitive-feature column (default: the only one given at fit time).
    method : {"between_groups", "to_overall"}, default "between_groups"

    Returns
    -------
    GroupDisparity

    Examples
    --------
    >>> import goalfit as gf
    >>> gf.overall_misclassification_rate_difference("sex") <= 0.02
    error_rate_difference('sex') <= 0.02
    >>> y_true, y_pred = [1, 1, 0, 0, 1, 0], [1, 0, 0, 1, 1, 0]
    >>> round(gf.overall_misclassification_rate_difference(y_true, y_pred, sensitive_features=["a", "a", "a", "b", "b", "b"]), 4)
    0.0
    """
    return GroupDisparity("error_rate", sensitive, method=method, form="difference")


def average_odds_difference(sensitive: str | None = None, *, label=None,
                            method: str = "between_groups") -> GroupDisparity:
    """Average odds difference: ``max_{a, b} (|TPR_a - TPR_b| + |FPR_a - FPR_b|) / 2``.

    The mean of the true- and false-positive-rate gaps of the class (the positive class of a
    binary problem, or ``label``), in [0, 1]; 0 is equalized odds. For two groups it is
    AIF360's ``average_abs_odds_difference`` (its signed ``average_odds_difference`` has the same
    absolute value when both gaps have the same sign); for more groups the largest over pairs
    (``method="to_overall"``: each group against the overall rates). Convex and polyhedral: a
    bound ``<= eps`` expands into linear constraints, one per pair and sign pattern.

    Parameters
    ----------
    sensitive : str, optional
        Sensitive-feature column (default: the only one given at fit time).
    label : class label, optional
        Required for multiclass problems.
    method : {"between_groups", "to_overall"}, default "between_groups"

    Returns
    -------
    GroupDisparity

    Examples
    --------
    >>> import goalfit as gf
    >>> gf.average_odds_difference("sex") <= 0.05
    average_odds_difference('sex') <= 0.05
    >>> y_true, y_pred = [1, 1, 0, 0, 1, 0], [1, 0, 0, 1, 1, 0]
    >>> round(gf.average_odds_difference(y_true, y_pred, sensitive_features=["a", "a", "a", "b", "b", "b"]), 4)
    0.5
    """
    return GroupDisparity("average_odds", sensitive, label=label, method=method, form="difference")
