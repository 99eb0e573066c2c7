"""The confusion space of a problem: classes, cells and the label mass of each (cell, class)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .cells import int_codes
from .names import unknown_column


class _Ambiguous:
    """Marker: the positive class of a binary problem is not told by its labels; ``how`` says
    how to name it. ``assume_last``: take the last label with a warning instead of refusing."""

    def __init__(self, how: str = "pass pos_label=... (scikit-learn's convention)", assume_last: bool = False):
        self.how, self.assume_last = how, assume_last

    def __repr__(self):
        return "AMBIGUOUS"


#: The metric functions' marker: refuse, asking for ``pos_label=``.
AMBIGUOUS = _Ambiguous()

#: The estimators' marker: a goal that means "the positive class" takes the last label in sorted
#: order (scikit-learn's estimators' ``classes_[1]``) with a warning asking for ``label=`` in the
#: goal (a refusal would break scikit-learn's checks, which fit on string labels).
AMBIGUOUS_IN_GOALS = _Ambiguous(
    "name it in each goal that needs it to be sure, e.g. gf.true_positive_rate(label={pos!r}), "
    "gf.demographic_parity_difference(label={pos!r}), gf.f1(label={pos!r}); or encode y as 0/1 "
    "(an objective string such as 'f1' needs 0/1, -1/1 or False/True labels)", assume_last=True)


def _plain(value):
    """A numpy scalar as the Python value it holds (for messages)."""
    return value.item() if isinstance(value, np.generic) else value


@dataclass(frozen=True)
class ConfusionSpace:
    """Classes and cells that stacked confusion tensors are indexed by.

    A confusion tensor ``C`` of this space has shape ``(n_cells, n_classes, n_classes)`` and
    ``C[c, i, j]`` is the (weighted) fraction of *all* examples that are in cell ``c``, have true
    class ``i`` and are predicted ``j`` (Narasimhan et al., JMLR 2024, Def. 2: normalized by the
    whole population, so ``C.sum() == 1``). Row sums ``C[c, i, :].sum()`` do not depend on the
    classifier: they are ``row_mass[c, i]``, the prior mass of (cell, class), which every goal
    treats as a constant (Narasimhan et al. §2: pi is a property of the distribution).

    Attributes
    ----------
    classes : ndarray of shape (n_classes,)
        Class labels in code order (code ``k`` is ``classes[k]``).
    cells : pandas.DataFrame of shape (n_cells, n_columns)
        Attribute values of each cell (one column per slicing column; no column when there is a
        single cell).
    row_mass : ndarray of shape (n_cells, n_classes)
        Fraction of examples in each (cell, true class); sums to 1.
    pos_label : class label, :data:`AMBIGUOUS` or None
        The positive class of a binary problem (what ``true_positive_rate()``,
        ``demographic_parity_difference(...)`` and ``f1()`` refer to without ``label=``).
        None: the larger label (scikit-learn's order; the estimators' convention).
        :data:`AMBIGUOUS`: refuse to guess (:mod:`goalfit.metrics` with labels such as
        "bad"/"good" and no ``pos_label=``); :data:`AMBIGUOUS_IN_GOALS`: the estimators'
        (:func:`goalfit.fit.prepare`): the last label, with a warning asking for ``label=`` in
        the goals.
    """

    classes: np.ndarray
    cells: pd.DataFrame
    row_mass: np.ndarray
    pos_label: object = None

    @property
    def n_classes(self) -> int:
        return len(self.classes)

    @property
    def n_cells(self) -> int:
        return self.row_mass.shape[0]

    @property
    def shape(self) -> tuple[int, int, int]:
        return (self.n_cells, self.n_classes, self.n_classes)

    @property
    def size(self) -> int:
        return self.n_cells * self.n_classes * self.n_classes

    @property
    def priors(self) -> np.ndarray:
        """Class priors pi, shape (n_classes,)."""
        return self.row_mass.sum(axis=0)

    @classmethod
    def from_codes(cls, y_codes, cell_ids, classes, cells: pd.DataFrame, sample_weight=None):
        """Build the space of labelled data.

        Parameters
        ----------
        y_codes : array of int, shape (n_samples,)
            True class codes in ``0..len(classes)-1``.
        cell_ids : array of int, shape (n_samples,)
            Cell of each example, in ``0..len(cells)-1``.
        classes : array-like of shape (n_classes,)
        cells : DataFrame of shape (n_cells, k)
        sample_weight : array of shape (n_samples,), optional
        """
        classes = np.asarray(classes)
        n_cells = max(len(cells), 1)
        y_codes = int_codes(y_codes)
        k = len(classes)
        if len(y_codes) == 0:
            raise ValueError("cannot compute a confusion matrix of zero examples")
        # the row masses only (the diagonal of the identity classifier's tensor), in one pass;
        # narrow codes are widened only in ``row``
        row = np.multiply(int_codes(cell_ids), k, dtype=np.intp)
        row += y_codes
        w = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
        mass = np.bincount(row, weights=w, minlength=n_cells * k).astype(float)
        total = float(len(y_codes)) if w is None else w.sum()
        if total <= 0:
            raise ValueError("the sample weights sum to zero")
        return cls(classes=classes, cells=cells, row_mass=(mass / total).reshape(n_cells, k))

    def class_code(self, label) -> int:
        """Code of a class label.

        Raises
        ------
        ValueError
            If ``label`` is not one of the classes.
        """
        for k, c in enumerate(self.classes):
            if _same(c, label):
                return k
        raise ValueError(f"label {label!r} is not one of the classes {self.classes.tolist()}")

    def default_positive(self) -> int:
        """Code of the positive class of a binary problem (the larger label, as scikit-learn).

        Raises
        ------
        ValueError
            For multiclass problems, where the class must be named, and for binary labels
            whose positive class is ambiguous (``pos_label`` is :data:`AMBIGUOUS`).

        Warns
        -----
        UserWarning
            With :data:`AMBIGUOUS_IN_GOALS` (the estimators, labels such as "no"/"yes"): the
            last label is taken, and the warning says how to name it.
        """
        if self.n_classes != 2:
            raise ValueError(
                f"this problem has {self.n_classes} classes: name the class of a goal on 'the positive class' "
                f"(e.g. label={_plain(self.classes[-1])!r}; classes {self.classes.tolist()}), or use a multiclass "
                "goal (an objective such as 'macro_f1', 'micro_f1' or 'balanced_error')"
            )
        if self.pos_label is None:
            return 1
        if isinstance(self.pos_label, _Ambiguous):
            pos = _plain(self.classes[1])
            text = (f"the positive class of labels {self.classes.tolist()} is ambiguous (only 0/1, -1/1 and "
                    f"False/True have a default)")
            if not self.pos_label.assume_last:
                raise ValueError(f"{text}: " + self.pos_label.how.format(pos=pos))
            import warnings

            warnings.warn(f"{text}: a goal on 'the positive class' takes {pos!r}, the last label in sorted order "
                          "(the metric functions refuse to guess without pos_label=); "
                          + self.pos_label.how.format(pos=pos), UserWarning, stacklevel=2)
            return 1
        return self.class_code(self.pos_label)

    def cell_mask(self, group) -> np.ndarray:
        """Boolean mask over cells selected by ``group``.

        Parameters
        ----------
        group : None, scalar, dict or tuple (column, value)
            ``None`` selects every cell. A scalar selects the cells where some slicing column
            has that value (it must occur in exactly one column). A dict ``{column: value or
            list of values}`` selects cells matching all items. A 2-tuple ``(column, value)``
            is the same as ``{column: value}``.

        Raises
        ------
        ValueError
            If a column is unknown, the value never occurs (an empty group), or a scalar value
            occurs in several columns.
        """
        mask = np.ones(self.n_cells, dtype=bool)
        if group is None:
            return mask
        if isinstance(group, tuple) and len(group) == 2 and str(group[0]) in self.cells.columns:
            group = {group[0]: group[1]}
        if not isinstance(group, dict):
            cols = [c for c in self.cells.columns if any(_same(v, group) for v in self.cells[c])]
            if not cols and not len(self.cells.columns):
                raise ValueError(f"a goal names the group {group!r}, but the data has no sensitive features: pass "
                                 "sensitive_features=... to fit")
            if not cols:
                raise ValueError(
                    f"group {group!r} does not occur in the sensitive features "
                    f"{list(self.cells.columns)}: an empty group"
                )
            if len(cols) > 1:
                raise ValueError(
                    f"group {group!r} occurs in several sensitive features {cols}: "
                    f"write group={{{cols[0]!r}: {group!r}}}"
                )
            group = {cols[0]: group}
        for col, values in group.items():
            col = str(col)
            if col not in self.cells.columns:
                raise ValueError(unknown_column(col, self.cells.columns))
            values = list(values) if isinstance(values, (list, set, frozenset)) else [values]
            hit = np.array([any(_same(v, w) for w in values) for v in self.cells[col]])
            if not hit.any():
                raise ValueError(
                    f"no example has {col}={values if len(values) > 1 else values[0]!r}: an empty group"
                )
            mask &= hit
        if not mask.any():
            raise ValueError(f"no example falls in group {group!r}: an empty group")
        return mask

    def column_values(self, column: str) -> list:
        """Distinct values of a slicing column, in cell order.

        Raises
        ------
        ValueError
            If the column is unknown.
        """
        column = str(column)
        if column not in self.cells.columns:
            raise ValueError(unknown_column(column, self.cells.columns))
        seen: list = []
        for v in self.cells[column]:
            if not any(_same(v, s) for s in seen):
                seen.append(v)
        return seen

    def single_column(self) -> str:
        """The only slicing column (used when a fairness goal names none).

        Raises
        ------
        ValueError
            If there are zero or several slicing columns.
        """
        cols = list(self.cells.columns)
        if not cols:
            raise ValueError("a goal compares groups, but the data has no sensitive features: pass "
                             "sensitive_features=... to fit")
        if len(cols) > 1:
            raise ValueError(f"name the sensitive feature: the data has {len(cols)} sensitive feature columns {cols} "
                             f"(e.g. demographic_parity_difference({cols[0]!r}))")
        return cols[0]


def _same(a, b) -> bool:
    if isinstance(a, np.generic):
        a = a.item()
    if isinstance(b, np.generic):
        b = b.item()
    try:
        return bool(a == b)
    except (TypeError, ValueError):  # pragma: no cover - exotic types
        return False
