"""A linear program re-solved with changing costs (HiGHS through highspy, warm started)."""
from __future__ import annotations

import highspy
import numpy as np

from ...utils.solvers import quiet_highs


class RepeatedLP:
    """``min_x <c, x>`` over a fixed polytope, for many cost vectors ``c``.

    The model is passed to HiGHS once; each :meth:`solve` changes the costs and re-runs from
    the previous basis (much cheaper than building a new LP per call).
    """

    def __init__(self, n_vars, A_ub, b_ub, A_eq, b_eq, shape, live):
        self.shape, self.live = shape, live
        self.h = quiet_highs()  # no banner, no log
        inf = highspy.kHighsInf
        self.n = n_vars
        self.h.addVars(n_vars, np.zeros(n_vars), np.full(n_vars, inf))
        rows = [(A_ub, np.full(len(b_ub), -inf), b_ub), (A_eq, b_eq, b_eq)]
        for M, lo, hi in rows:
            for r in range(M.shape[0]):
                nz = np.flatnonzero(M[r])
                self.h.addRow(float(lo[r]), float(hi[r]), len(nz), nz.astype(np.int32), M[r, nz])
        self.idx = np.arange(n_vars, dtype=np.int32)

    @classmethod
    def rows_in_simplex(cls, space, A, b):
        """Polytope of row-normalized tensors ``F`` with rows in the simplex and ``A vec(F * mass) <= b``.

        Raises
        ------
        ValueError
            If it is empty: then no confusion matrix meets the constraints.
        """
        mass = space.row_mass[:, :, None]
        live = np.broadcast_to(mass > 0, space.shape).ravel()
        lv = np.flatnonzero(live)
        n = space.n_classes
        # equality: each live (cell, class) row sums to 1
        row_of = (np.arange(space.size) // n)[lv]
        rows = np.unique(row_of)
        A_eq = (row_of[None, :] == rows[:, None]).astype(float)
        b_eq = np.ones(len(rows))
        if A is None:
            A_ub, b_ub = np.zeros((0, len(lv))), np.zeros(0)
        else:
            A_ub = (A * np.broadcast_to(mass, space.shape).ravel()[None, :])[:, lv]
            b_ub = np.asarray(b, float)
        lp = cls(len(lv), A_ub, b_ub, A_eq, b_eq, space.shape, live)
        lp.solve(np.zeros(space.shape))
        if lp.h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            raise ValueError(
                "the constraints are infeasible even for arbitrary confusion matrices: no "
                "classifier can meet them"
            )
        return lp

    @staticmethod
    def least_slack(space, A, b) -> float:
        """Smallest ``s`` such that some row-normalized tensor meets ``A vec(F * mass) <= b + s``."""
        from scipy.optimize import linprog

        mass = space.row_mass[:, :, None]
        live = np.broadcast_to(mass > 0, space.shape).ravel()
        lv = np.flatnonzero(live)
        n = space.n_classes
        row_of = (np.arange(space.size) // n)[lv]
        rows = np.unique(row_of)
        A_eq = np.hstack([(row_of[None, :] == rows[:, None]).astype(float), np.zeros((len(rows), 1))])
        A_ub = np.hstack([(A * np.broadcast_to(mass, space.shape).ravel()[None, :])[:, lv],
                          -np.ones((A.shape[0], 1))])
        c = np.zeros(len(lv) + 1)
        c[-1] = 1.0
        res = linprog(c, A_ub=A_ub, b_ub=np.asarray(b, float), A_eq=A_eq, b_eq=np.ones(len(rows)),
                      bounds=[(0, None)] * len(lv) + [(None, None)], method="highs")
        return float(res.x[-1])

    def solve(self, cost) -> np.ndarray:
        c = np.asarray(cost, float).ravel()[self.live]
        self.h.changeColsCost(self.n, self.idx, c)
        self.h.run()
        x = np.asarray(self.h.getSolution().col_value)
        out = np.zeros(int(np.prod(self.shape)))
        out[self.live] = x
        return out.reshape(self.shape)
