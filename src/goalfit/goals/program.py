"""Linear goals as per-example weights: the form in-training methods read (Goh et al., NIPS 2016, Problem 1).

Any linear goal of :mod:`goalfit.goals` (rates on datasets and slices, their weighted sums,
fairness ratios multiplied out, churn) is, on a sample, a weighted sum of per-example positive
and negative prediction indicators: with ``p_x`` the probability that example ``x`` is predicted
positive,

    value = sum_x ( a_x * p_x + c_x * (1 - p_x) ) + const,

where ``a_x = w_x / W * coef[cell(x), y(x), positive]`` and ``c_x`` likewise for the negative
prediction (:class:`~goalfit.confusion.ConfusionSpace` normalizes by the total weight ``W``). This
is Goh et al.'s Problem 1 written per example: a rate ``s_p(D)`` puts weight ``1/|D|`` on the
examples of ``D``. Because ``p + (1 - p) = 1``, ``a p + c (1 - p) = min(a, c) + (a - min) p +
(c - min)(1 - p)``: every goal is rewritten with **non-negative** weights plus a constant (the
paper's Appendix B rule "replace ``-c s_p(D)`` by ``c s_n(D) - c``"), which convex upper bounds
need. The ramp method (:mod:`goalfit.methods.ramp`) relaxes ``p_x``; Ye & Xie's subdata
selection (:mod:`goalfit.methods.subdata`) reads the weights of being right or wrong on each
example.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..confusion.names import DATASET_COLUMN


@dataclass
class RateProgram:
    """Goh et al.'s Problem 1 on one sample, with non-negative per-example weights.

    minimize ``a0 . p + c0 . (1 - p) + k0``  s.t.  ``A[j] . p + C[j] . (1 - p) + k[j] <= 0``.

    Attributes
    ----------
    a0, c0 : ndarray of shape (n,), non-negative
        Objective weights on the positive / negative prediction of each example.
    k0 : float
    A, C : ndarray of shape (m, n), non-negative
        Constraint weights (one row per polyhedral row of the compiled goals).
    k : ndarray of shape (m,)
        Constants, bounds moved to the left (``k[j] = const_j - gamma_j``).
    row_names : list of str
        The user constraint each row comes from.
    """

    a0: np.ndarray
    c0: np.ndarray
    k0: float
    A: np.ndarray
    C: np.ndarray
    k: np.ndarray
    row_names: list

    @property
    def n_rows(self) -> int:
        return len(self.k)

    def values(self, p, q=None):
        """Objective and constraint rows at positive-prediction weights ``p``.

        Parameters
        ----------
        p : ndarray of shape (n,)
            Probability of a positive prediction (or its upper bound).
        q : ndarray of shape (n,), optional
            Weight on the negative prediction (default ``1 - p``; an upper bound of it in
            Problem 3).

        Returns
        -------
        (objective, rows) : float, ndarray of shape (m,)
            ``rows <= 0`` means the constraints are met.
        """
        q = 1.0 - p if q is None else q
        return (float(self.a0 @ p + self.c0 @ q + self.k0),
                self.A @ p + self.C @ q + self.k)

    def subproblem(self, objective_rows, constraint_rows) -> "RateProgram":
        """Program whose objective is the sum of some constraint rows (a feasibility phase)."""
        o = np.asarray(objective_rows, dtype=int)
        c = np.asarray(constraint_rows, dtype=int)
        return RateProgram(self.A[o].sum(axis=0), self.C[o].sum(axis=0), float(self.k[o].sum()),
                           self.A[c], self.C[c], self.k[c], [self.row_names[j] for j in c])


def _per_example(coef, y_codes, cell_ids, s):
    """Non-negative (a, c, const) of one linear form ``<coef, C>`` over the sample."""
    a = s * coef[cell_ids, y_codes, 1]
    c = s * coef[cell_ids, y_codes, 0]
    m = np.minimum(a, c)
    return a - m, c - m, float(m.sum())


def compile_rate_program(compiled, y_codes, cell_ids, sample_weight=None, unlabelled_cells=None) -> RateProgram:
    """Per-example weights of a compiled problem (Goh et al. Problem 1).

    Parameters
    ----------
    compiled : CompiledProblem
        Goals bound to the sample's :class:`~goalfit.confusion.ConfusionSpace` (binary).
    y_codes : ndarray of int, shape (n,)
        Class codes (0 = negative, 1 = positive; any placeholder on unlabelled rows).
    cell_ids : ndarray of int, shape (n,)
    sample_weight : ndarray of shape (n,), optional
    unlabelled_cells : ndarray of bool, shape (n_cells,), optional
        Cells of unlabelled datasets: goals must not depend on their labels.

    Returns
    -------
    RateProgram

    Raises
    ------
    ValueError
        For a multiclass problem, an objective that is not linear in the rates (a ratio such as
        F1 or a nonlinear metric such as the G-mean), a constraint without a polyhedral form, or
        a goal that depends on the labels of an unlabelled dataset.
    """
    space = compiled.space
    if space.n_classes != 2:
        raise ValueError(f"per-example rate weights are defined for binary problems; this one has "
                         f"{space.n_classes} classes")
    obj = compiled.objective
    if obj.kind != "linear":
        raise ValueError(f"per-example rate weights need a linear objective; {obj.name or 'the objective'} is {obj.kind}")
    if compiled.nonlinear:
        raise ValueError(f"constraint {compiled.nonlinear[0].name!r} has no linear form")
    unlabelled_cells = (np.zeros(space.n_cells, dtype=bool) if unlabelled_cells is None
                        else np.asarray(unlabelled_cells, dtype=bool))
    check_label_free(obj.coef, space, unlabelled_cells, f"the objective {obj.name}")
    n = len(y_codes)
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    s = w / w.sum()
    a0, c0, k0 = _per_example(obj.coef, y_codes, cell_ids, s)
    k0 += obj.const
    rows = []
    for cc in compiled.constraints:
        if cc.rows is None:  # pragma: no cover - nonlinear rejected above
            continue
        check_label_free(compiled.A[cc.rows], space, unlabelled_cells, f"the constraint {cc.name}")
        for r in range(cc.rows.start, cc.rows.stop):
            a, c, k = _per_example(compiled.A[r].reshape(space.shape), y_codes, cell_ids, s)
            rows.append((a, c, k - compiled.b[r], cc.name))
    if rows:
        A = np.array([r[0] for r in rows])
        C = np.array([r[1] for r in rows])
        k = np.array([r[2] for r in rows])
    else:
        A = C = np.zeros((0, n))
        k = np.zeros(0)
    return RateProgram(a0, c0, k0, A, C, k, [r[3] for r in rows])


def check_label_free(function, space, unlabelled_cells, name: str) -> None:
    """Raise if a linear goal's value depends on the (placeholder) labels of unlabelled cells.

    Parameters
    ----------
    function : LinearFunction-like with ``coef`` of shape ``space.shape``, or a matrix of rows
        of shape (K, space.size)
    space : ConfusionSpace
    unlabelled_cells : ndarray of bool, shape (n_cells,)
    name : str
        The goal's name, for the message.

    Raises
    ------
    ValueError
        If some coefficient on an unlabelled cell differs between true classes.
    """
    if not unlabelled_cells.any():
        return
    coef = np.asarray(function).reshape(-1, *space.shape)[:, unlabelled_cells]
    if np.abs(coef - coef[:, :, :1, :]).max() > 1e-12:
        cells = space.cells[unlabelled_cells]
        where = (sorted(set(cells[DATASET_COLUMN])) if DATASET_COLUMN in cells.columns
                 else "the unlabelled rows")
        raise ValueError(
            f"{name} depends on true labels, but it covers the unlabelled dataset(s) {where}: "
            "restrict it to labelled data with dataset=..."
        )
