"""A linear program re-solved with changing costs (HiGHS through highspy, warm started)."""
from __future__ import annotations

import threading

import highspy
import numpy as np

from ...utils.solvers import quiet_highs


def parity_bands(A, b):
    """Blocks of pairwise-difference rows of ``A x <= b`` that say "these rates lie within ``d``".

    A fairness parity (demographic parity, equal opportunity, equalized odds, FPR parity) between
    groups compiles to the rows ``r_a - r_c <= d`` for every ordered pair of the groups' rates
    ``r_a`` (linear forms with non-negative coefficients and disjoint supports): ``k (k - 1)``
    rows for ``k`` groups. Where a block of rows is exactly that, all ordered pairs of its rates
    with one bound ``d``, it is equivalent to ``k`` ranged rows with one free variable ``m``:
    ``0 <= r_a - m <= d`` (the rates' maximum minus their minimum is at most ``d``).

    Parameters
    ----------
    A : ndarray of shape (n_rows, n_vars)
    b : ndarray of shape (n_rows,)

    Returns
    -------
    kept : ndarray of int
        The rows not in a block, to keep as they are.
    bands : list of (ndarray of shape (k, n_vars), float)
        Each block's rates ``r_a`` (one per row) and its bound ``d``.

    Examples
    --------
    >>> import numpy as np
    >>> r = np.eye(3)  # three groups' rates, one variable each
    >>> A = np.array([r[i] - r[j] for i in range(3) for j in range(3) if i != j])
    >>> kept, bands = parity_bands(np.vstack([A, [1.0, 1.0, 0.0]]), np.r_[np.full(6, 0.1), 1.0])
    >>> kept.tolist(), bands[0][0].tolist(), bands[0][1]
    ([6], [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], 0.1)
    """
    kept, blocks = _parity_blocks(A, b)
    return kept, [(rates, d) for _, rates, d in blocks]


def parity_blocks(A, b):
    """The blocks of :func:`parity_bands` as the rows they replace.

    Returns
    -------
    kept : ndarray of int
        The rows not in a block.
    blocks : list of ndarray of int, shape (k, k)
        For each block of ``k`` rates, ``P[a, c]``: the row "rate ``a`` minus rate ``c``" (the
        diagonal is ``-1``). :func:`highs_linprog` (``blocks=``) states them as ``2 k`` rows.
    """
    kept, blocks = _parity_blocks(A, b)
    return kept, [P for P, _, _ in blocks]


def _parity_blocks(A, b):
    """``(kept, [(P, rates, d)])``: the complete parity blocks of ``A x <= b`` (:func:`parity_bands`)."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    A = np.asarray(A, float)
    b = np.asarray(b, float)
    pos, neg = np.maximum(A, 0.0), np.maximum(-A, 0.0)
    cand = np.flatnonzero(pos.any(axis=1) & neg.any(axis=1) & (b >= 0))  # rows r_a - r_c <= d
    if cand.size == 0:
        return np.arange(A.shape[0]), []
    # each row's two rates as indices into the distinct linear forms (equal values, one form),
    # numbered in the order the rows name them (so are the blocks and their rows in the LP); a
    # dictionary keyed by each form's bytes (a sort of the wide rows costs far more)
    both = np.stack([pos[cand], neg[cand]], axis=1).reshape(-1, A.shape[1]) + 0.0  # -0.0 is 0.0
    ids: dict[bytes, int] = {}
    inverse = np.array([ids.setdefault(row.tobytes(), len(ids)) for row in both], dtype=np.intp)
    rates = both[np.unique(inverse, return_index=True)[1]]  # ids count up in order of appearance
    a, c = inverse[0::2], inverse[1::2]
    # blocks: the connected components of the rates joined by a row
    graph = coo_matrix((np.ones(cand.size), (a, c)), shape=(len(rates), len(rates)))
    _, label = connected_components(graph, directed=False)
    in_band = np.zeros(A.shape[0], dtype=bool)
    blocks = []
    for comp in np.unique(label[a]):
        rows = np.flatnonzero(label[a] == comp)
        members = np.flatnonzero(label == comp)
        k = members.size
        ordered = set(zip(a[rows].tolist(), c[rows].tolist()))
        if k < 3 or len(rows) != k * (k - 1) or len(ordered) != len(rows) or np.ptp(b[cand[rows]]) != 0:
            continue  # not every ordered pair once with one bound (two rates: two rows either way)
        P = np.full((k, k), -1, dtype=np.intp)
        P[np.searchsorted(members, a[rows]), np.searchsorted(members, c[rows])] = cand[rows]
        blocks.append((P, rates[members], float(b[cand[rows[0]]])))
        in_band[cand[rows]] = True
    return np.flatnonzero(~in_band), blocks


def banded_rows(A_ub, b_ub, blocks):
    """``A_ub x <= b_ub`` with each parity block (:func:`parity_blocks`' ``P``, rows of ``A_ub``
    that all share one bound) as ``2 k`` rows around a free variable ``m``.

    A block's rows are ``R_a - R_c + E`` for every ordered pair (``E``: what every row of the
    block shares, such as an elastic column), so together they say
    ``max_a R_a x - min_c R_c x <= beta - E x``: ``m <= R_a x`` and ``R_a x + E x - m <= beta``.
    Taken from the rows themselves: ``R_a = (row(a, 0) - row(0, a)) / 2`` (``R_0 = 0``) and ``E``
    the mean of ``(row(a, 0) + row(0, a)) / 2``.

    Parameters
    ----------
    A_ub : ndarray of shape (n_ub, n)
    b_ub : ndarray of shape (n_ub,)
    blocks : list of ndarray of int, shape (k, k)
        Rows of ``A_ub``: ``P[a, c]`` the row "rate ``a`` minus rate ``c``", ``-1`` on the diagonal.

    Returns
    -------
    A2 : ndarray of shape (len(kept) + sum 2 k, n + len(used))
        The kept rows first, then each used block's ``-R_a + m <= 0`` and ``R_a + E - m <= beta``;
        one free column per used block after ``x``.
    b2 : ndarray of shape (A2.shape[0],)
    kept : ndarray of int
        The rows of ``A_ub`` not in a used block.
    used : list
        The blocks rewritten. A block whose rows have unequal right-hand sides, or are not
        ``R_a - R_c + E`` (to 1e-9 of the rows' scale), stays rows.

    Examples
    --------
    >>> import numpy as np
    >>> r = np.eye(4)  # four groups' rates, one variable each
    >>> A = np.array([r[i] - r[j] for i in range(4) for j in range(4) if i != j])
    >>> kept, blocks = parity_blocks(A, np.full(12, 0.1))
    >>> A2, b2, kept, used = banded_rows(A, np.full(12, 0.1), blocks)
    >>> A2.shape, len(used)
    ((8, 5), 1)
    """
    n_ub, n = A_ub.shape
    used, forms = [], []
    for P in blocks:
        off = P >= 0
        if np.ptp(b_ub[P[off]]) != 0:
            continue
        out, back = A_ub[P[1:, 0]], A_ub[P[0, 1:]]  # rows (a, 0) and (0, a), a >= 1
        R = np.vstack([np.zeros(n), (out - back) / 2.0])
        E = ((out + back) / 2.0).mean(axis=0)
        a, c = np.nonzero(off)
        rows = A_ub[P[off]]
        if np.abs(R[a] - R[c] + E - rows).max() > 1e-9 * max(1.0, float(np.abs(rows).max())):
            continue
        used.append(P)
        forms.append((R, E))
    in_block = np.zeros(n_ub, dtype=bool)
    for P in used:
        in_block[P[P >= 0]] = True
    kept = np.flatnonzero(~in_block)
    B = len(used)
    parts, rhs = [np.hstack([A_ub[kept], np.zeros((kept.size, B))])], [b_ub[kept]]
    for j, (P, (R, E)) in enumerate(zip(used, forms)):
        k = len(P)
        m = np.zeros((k, B))
        m[:, j] = 1.0
        parts += [np.hstack([-R, m]), np.hstack([R + E, -m])]
        rhs += [np.zeros(k), np.full(k, float(b_ub[P[0, 1]]))]
    return np.vstack(parts), np.concatenate(rhs), kept, used


class BandedRows:
    """``G x <= h`` with its parity blocks as ``2 k`` rows around one free variable each
    (:func:`banded_rows`), for HiGHS (:func:`highs_linprog`) and SLSQP.

    The variables are ``z = (x, m)``, ``m`` one free variable per block rewritten.

    Parameters
    ----------
    G : ndarray of shape (n_rows, n)
    h : ndarray of shape (n_rows,)
    blocks : list of ndarray of int, or None
        :func:`parity_blocks`' ``P`` of rows of ``G``.

    Attributes
    ----------
    G2, h2 : ndarray of shape (n_rows2, n + B) and (n_rows2,)
        The rows in ``z`` (:func:`banded_rows`).
    B : int
        Blocks rewritten (0: ``G2, h2`` are ``G, h``).
    """

    def __init__(self, G, h, blocks):
        G = np.asarray(G, float)
        self.n = G.shape[1]
        self.n_rows = G.shape[0]
        self.G2, self.h2, self.kept, self.used = banded_rows(G, np.asarray(h, float), blocks or [])
        self.B = len(self.used)

    def start(self, x0):
        """``z0 = (x0, m0)``, shape (n + B,): each block's ``m`` at its rates' least value at ``x0``
        (its lower rows met)."""
        x0 = np.asarray(x0, float)
        if not self.B:
            return x0
        lower = -(self.G2[:, :self.n] @ x0)
        return np.r_[x0, [lower[self.G2[:, self.n + j] == 1.0].min() for j in range(self.B)]]

    def bounds(self, box):
        """``box`` (n ``(lo, hi)`` pairs) followed by ``(None, None)`` for each ``m``."""
        return list(box) + [(None, None)] * self.B

    def gradient(self, g):
        """A cost or gradient in ``x``, shape (n,), as one in ``z`` (zero on ``m``), shape (n + B,)."""
        return np.r_[g, np.zeros(self.B)] if self.B else g

    def constraint(self):
        """SLSQP's inequality ``h2 - G2 z >= 0`` with its Jacobian."""
        G2, h2 = self.G2, self.h2
        return {"type": "ineq", "fun": lambda z: h2 - G2 @ z, "jac": lambda z: -G2}

    def duals(self, y):
        """An LP's duals of ``G2 z <= h2`` (scipy's sign, ``<= 0``), shape (n_rows2,), as those of the
        rows of ``G``, shape (n_rows,) (:func:`pairwise_duals`: the same reduced costs and dual value)."""
        return pairwise_duals(np.asarray(y, float), self.n_rows, self.kept, self.used)

    def multipliers(self, mult):
        """SLSQP's multipliers of :meth:`constraint` (``>= 0``), shape (n_rows2,), as those of the
        rows of ``G``, shape (n_rows,)."""
        return -self.duals(-np.maximum(np.asarray(mult, float), 0.0))


def pairwise_duals(y, n_ub, kept, used):
    """Duals of the original rows of :func:`banded_rows` from the banded LP's ``y`` (scipy's sign:
    ``<= 0``): the kept rows' as they are; a block's, a flow between its rates.

    With ``u = -y`` on a block's rows ``-R_a + m <= 0`` (``u_lo``) and ``R_a + E - m <= beta``
    (``u_hi``), the pairwise rows' ``mu_ac >= 0`` must give the same combination of the rows:
    ``sum_c mu_ac - sum_c mu_ca = u_hi_a - u_lo_a`` (the rates) and ``sum mu = sum u_hi`` (``E``
    and ``beta``); ``m`` free makes ``sum u_hi = sum u_lo``. A greedy flow from the rates of
    positive net to those of negative net meets the first; the rest of the total goes both ways
    between rates 0 and 1. The reduced costs and the dual value are then the banded LP's.

    Parameters
    ----------
    y : ndarray of shape (A2.shape[0],)
        The banded rows' duals (:func:`banded_rows`' ``A2``), ``<= 0``.
    n_ub : int
        Rows of the original ``A_ub``.
    kept, used
        As :func:`banded_rows` returned them.

    Returns
    -------
    ndarray of shape (n_ub,)
        Duals of the original rows, ``<= 0``.
    """
    out = np.zeros(n_ub)
    out[kept] = y[:kept.size]
    pos = kept.size
    for P in used:
        k = len(P)
        u_lo, u_hi = np.maximum(-y[pos:pos + k], 0.0), np.maximum(-y[pos + k:pos + 2 * k], 0.0)
        pos += 2 * k
        net = u_hi - u_lo
        mu = np.zeros((k, k))
        src, dst = list(np.flatnonzero(net > 0)), list(np.flatnonzero(net < 0))
        give, take = {a: net[a] for a in src}, {c: -net[c] for c in dst}
        while src and dst:
            a, c = src[-1], dst[-1]
            f = min(give[a], take[c])
            mu[a, c] += f
            give[a] -= f
            take[c] -= f
            if give[a] <= 0:
                src.pop()
            if take[c] <= 0:
                dst.pop()
        rest = max(0.0, float(u_hi.sum() - mu.sum()))
        mu[0, 1] += rest / 2.0
        mu[1, 0] += rest / 2.0
        off = P >= 0
        out[P[off]] = -mu[off]
    return out


class RepeatedLP:
    """``min_x <c, x>`` over a fixed polytope, for many cost vectors ``c``.

    The model is passed to HiGHS once; each :meth:`solve` changes the costs and re-runs from
    the previous basis (much cheaper than building a new LP per call). Blocks of parity rows
    (:func:`parity_bands`) enter as ranged rows around one free variable each (``bands``): the
    same polytope for ``x``, with ``k`` rows instead of ``k (k - 1)`` (a quarter to two fifths
    less HiGHS time per solve on SplitFW's F-step at 5 groups: benchmarks/README.md, section
    "Measurements behind the library's choices"). Where the LP has several optimal vertices the
    two forms can return different ones.

    Parameters
    ----------
    n_vars : int
        Variables ``x >= 0`` (the live entries of the row-normalized tensor).
    A_ub, b_ub : ndarray of shape (n_ub, n_vars) and (n_ub,)
        Rows ``A_ub x <= b_ub``.
    A_eq, b_eq : ndarray of shape (n_eq, n_vars) and (n_eq,)
        Rows ``A_eq x = b_eq``.
    shape : tuple of int
        The tensor shape :meth:`solve` returns.
    live : ndarray of bool, of ``prod(shape)`` entries
        The entries of that tensor that are variables, in order (the others are 0).
    bands : sequence of (ndarray of shape (k, n_vars), float), default ()
        Parity blocks from :func:`parity_bands`: for each, one free variable ``m`` and the rows
        ``0 <= r x - m <= d`` for each of its ``k`` rates ``r``.
    """

    def __init__(self, n_vars, A_ub, b_ub, A_eq, b_eq, shape, live, bands=()):
        self.shape, self.live = shape, live
        self.h = quiet_highs()  # no banner, no log
        # only the costs change between solves: the previous optimal basis stays primal
        # feasible, so primal simplex continues from it, and presolve (which would rebuild the
        # reduced model each run) is off; together about a third cheaper per solve than the
        # defaults on the F-step of Split Frank-Wolfe
        self.h.setOptionValue("presolve", "off")
        self.h.setOptionValue("simplex_strategy", 4)
        inf = highspy.kHighsInf
        self.n = n_vars
        self.h.addVars(n_vars, np.zeros(n_vars), np.full(n_vars, inf))
        rows = [(A_ub, np.full(len(b_ub), -inf), b_ub), (A_eq, b_eq, b_eq)]
        for M, lo, hi in rows:
            for r in range(M.shape[0]):
                nz = np.flatnonzero(M[r])
                self.h.addRow(float(lo[r]), float(hi[r]), len(nz), nz.astype(np.int32), M[r, nz])
        for R, d in bands:  # 0 <= r_a - m <= d for each rate r_a of the band, m free
            m = self.h.getNumCol()
            self.h.addVar(-inf, inf)
            for v in R:
                nz = np.flatnonzero(v)
                self.h.addRow(0.0, float(d), len(nz) + 1, np.r_[nz, m].astype(np.int32), np.r_[v[nz], -1.0])
        self.idx = np.arange(n_vars, dtype=np.int32)

    @classmethod
    def rows_in_simplex(cls, space, A, b):
        """Polytope of row-normalized tensors ``F`` with rows in the simplex and ``A vec(F * mass) <= b``.

        Without constraint rows (``A`` None or empty) the polytope is a product of simplices and
        the LP separates by row: :class:`RowArgmin` solves it without HiGHS.

        Raises
        ------
        ValueError
            If it is empty: then no confusion matrix meets the constraints.
        """
        if A is None or np.asarray(A).shape[0] == 0:
            return RowArgmin(space)
        mass = space.row_mass[:, :, None]
        live = np.broadcast_to(mass > 0, space.shape).ravel()
        lv = np.flatnonzero(live)
        n = space.n_classes
        # equality: each live (cell, class) row sums to 1
        row_of = (np.arange(space.size) // n)[lv]
        rows = np.unique(row_of)
        A_eq = (row_of[None, :] == rows[:, None]).astype(float)
        b_eq = np.ones(len(rows))
        A_ub = (A * np.broadcast_to(mass, space.shape).ravel()[None, :])[:, lv]
        b_ub = np.asarray(b, float)
        kept, bands = parity_bands(A_ub, b_ub)
        lp = cls(len(lv), A_ub[kept], b_ub[kept], A_eq, b_eq, space.shape, live, bands)
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
        x = np.asarray(self.h.getSolution().col_value)[: self.n]
        out = np.zeros(int(np.prod(self.shape)))
        out[self.live] = x
        return out.reshape(self.shape)


class RowArgmin:
    """``min_F <c, F>`` over row-normalized tensors whose live rows (cells and true classes with
    rows) each lie in the simplex: a vertex puts each live row's mass on its cheapest entry.

    The unconstrained case of :meth:`RepeatedLP.rows_in_simplex`, with its :meth:`solve`: the
    same optimal value as the LP. Ties go to the first (smallest) class index; HiGHS's vertex
    among tied entries depends on its warm basis (the same at SplitFW's all-zero start).

    Examples
    --------
    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> space = SimpleNamespace(shape=(1, 2, 3), row_mass=np.array([[0.5, 0.5]]))
    >>> RowArgmin(space).solve(np.array([[[3.0, 1.0, 2.0], [0.0, 0.0, 5.0]]]))[0].tolist()
    [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]
    """

    def __init__(self, space):
        self.shape = tuple(space.shape)
        self.cells, self.rows = np.nonzero(np.asarray(space.row_mass) > 0)

    def solve(self, cost) -> np.ndarray:
        c = np.asarray(cost, float).reshape(self.shape)
        out = np.zeros(self.shape)
        out[self.cells, self.rows, np.argmin(c[self.cells, self.rows], axis=1)] = 1.0
        return out


#: one HiGHS instance per thread for :func:`highs_linprog` (each call passes a whole new model)
_SOLVERS = threading.local()


def _solver():
    """This thread's ``highspy.Highs`` for :func:`highs_linprog`, made once (silenced).

    Creating an instance (and silencing its banner) cost more than solving the small LPs of the
    plug-in methods; ``passModel`` replaces the previous model, its solution and its basis.
    """
    h = getattr(_SOLVERS, "highs", None)
    if h is None:
        h = _SOLVERS.highs = quiet_highs()
    return h


def highs_linprog(c, A_ub=None, b_ub=None, A_eq=None, b_eq=None, bounds=(0, None), method="highs", blocks=None):
    """``scipy.optimize.linprog(method="highs")`` for small dense LPs, without its overhead.

    The plug-in methods solve many LPs with tens to thousands of columns (pruning, stopping
    tests, column generation); scipy's option checking costs more than the solve
    (see benchmarks/README.md, section "Measurements behind the library's choices").
    Same conventions (``method`` is accepted for drop-in use; always HiGHS): minimize ``c @ x`` s.t. ``A_ub x <= b_ub``, ``A_eq x = b_eq``,
    ``bounds`` one ``(lo, hi)`` pair for every variable or a list of pairs (None: unbounded).

    ``blocks`` (optional, :func:`parity_blocks`' ``P`` of rows of ``A_ub``): parity blocks whose
    ``k (k - 1)`` rows are solved as ``2 k`` rows around a free variable each (:func:`banded_rows`),
    the same feasible ``x``; ``x`` and the duals are reported for the rows as given (a block's
    duals as a flow between its rates, :func:`pairwise_duals`: the same reduced costs and dual
    value). Where the LP has several optima the two forms can return different ones.

    Returns
    -------
    types.SimpleNamespace
        ``status`` (0 optimal, 2 infeasible, 3 unbounded, 4 other, as scipy), ``x``, ``fun``,
        ``ineqlin.marginals`` and ``eqlin.marginals`` (d fun / d b, scipy's sign convention).
    """
    from types import SimpleNamespace

    if blocks and A_ub is not None and np.size(A_ub) and np.isfinite(A_ub).all():
        c = np.asarray(c, float)
        n = c.size
        A_ub = np.asarray(A_ub, float).reshape(-1, n)
        banded = BandedRows(A_ub, np.asarray(b_ub, float).ravel(), blocks)
        if banded.B:
            if isinstance(bounds, tuple) and len(bounds) == 2 and not isinstance(bounds[0], (tuple, list)):
                bounds = [bounds] * n
            A_eq2 = None if A_eq is None or not np.size(A_eq) else np.hstack(
                [np.asarray(A_eq, float).reshape(-1, n), np.zeros((np.size(A_eq) // n, banded.B))])
            res = highs_linprog(banded.gradient(c), banded.G2, banded.h2, A_eq2, b_eq, banded.bounds(bounds))
            if res.x is not None:
                res.x = res.x[:n]
                res.ineqlin.marginals = banded.duals(res.ineqlin.marginals)
            return res
    dense = [np.asarray(M, float) for M in (A_ub, A_eq) if M is not None]
    if not all(np.isfinite(M).all() for M in dense):  # e.g. a nonlinear constraint's value at a member
        from scipy.optimize import linprog

        return linprog(c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, bounds=bounds, method="highs")
    c = np.asarray(c, float)
    n = c.size
    inf = highspy.kHighsInf
    if isinstance(bounds, tuple) and len(bounds) == 2 and not isinstance(bounds[0], (tuple, list)):
        bounds = [bounds] * n
    lo = np.array([-inf if b[0] is None else float(b[0]) for b in bounds])
    hi = np.array([inf if b[1] is None else float(b[1]) for b in bounds])
    blocks, rlo, rhi = [], [], []
    n_ub = 0
    if A_ub is not None and np.size(A_ub):
        A_ub = np.asarray(A_ub, float).reshape(-1, n)
        n_ub = A_ub.shape[0]
        blocks.append(A_ub)
        rlo.append(np.full(n_ub, -inf))
        rhi.append(np.asarray(b_ub, float).ravel())
    if A_eq is not None and np.size(A_eq):
        A_eq = np.asarray(A_eq, float).reshape(-1, n)
        blocks.append(A_eq)
        beq = np.asarray(b_eq, float).ravel()
        rlo.append(beq)
        rhi.append(beq)
    h = _solver()
    lp = highspy.HighsLp()
    lp.num_col_ = n
    lp.col_cost_ = c
    lp.col_lower_ = lo
    lp.col_upper_ = hi
    if blocks:
        # column-wise (CSC) arrays of the dense matrix: its transpose's non-zeros in row order
        # are the matrix's, column by column (no scipy.sparse object to build)
        AT = np.vstack(blocks).T
        col, row = np.nonzero(AT)
        lp.num_row_ = AT.shape[1]
        lp.row_lower_ = np.concatenate(rlo)
        lp.row_upper_ = np.concatenate(rhi)
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        lp.a_matrix_.start_ = np.searchsorted(col, np.arange(n + 1)).astype(np.int32)
        lp.a_matrix_.index_ = row.astype(np.int32)
        lp.a_matrix_.value_ = AT[col, row]
    h.passModel(lp)
    h.run()
    status = h.getModelStatus()
    S = highspy.HighsModelStatus
    code = {S.kOptimal: 0, S.kInfeasible: 2, S.kUnbounded: 3, S.kUnboundedOrInfeasible: 2}.get(status, 4)
    sol = h.getSolution()
    if code != 0 and not (code == 4 and sol.value_valid):
        return SimpleNamespace(status=code, x=None, fun=None, ineqlin=None, eqlin=None,
                               message=f"HiGHS: {h.modelStatusToString(status)}")
    x = np.asarray(sol.col_value, float)
    duals = np.asarray(sol.row_dual, float) if blocks else np.zeros(0)
    return SimpleNamespace(status=code, x=x, fun=float(c @ x), ineqlin=SimpleNamespace(marginals=duals[:n_ub]),
                           eqlin=SimpleNamespace(marginals=duals[n_ub:]),
                           message="optimal" if code == 0 else f"HiGHS: {h.modelStatusToString(status)}")
