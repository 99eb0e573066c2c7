"""Exact solve of binary plug-in problems over the per-cell ROC convex hulls (a fast path).

For two classes the plug-in oracle's rule in each cell is a threshold on ``eta_1`` (class 1
above it, or below it for costs of the other sign; Narasimhan et al. JMLR 2024, Alg. 10), and a
cost tensor sets each cell's threshold independently. So the confusion tensors of the mixtures
of the oracle's outputs are exactly the product over cells of the convex hulls of the cells'
threshold points ``(FP_c, TP_c)`` (the ROC convex hull of Provost & Fawcett, Mach. Learn. 2001;
the geometry of Hardt, Price & Srebro, NeurIPS 2016, §4, for equalized odds). Every method that
mixes plug-in rules (Frank-Wolfe, SplitFW, GDA, ...) therefore solves

    min psi(C(x))  s.t.  x_c in hull_c for every cell c,  A vec(C(x)) <= b,

a convex program in ``2 * n_cells`` variables with linear constraints (the hulls' facets and
the goals' rows). It is solved here directly (SLSQP), its optimality certified by one LP (the
Frank-Wolfe gap over the explicit polytope), and its solution written back as a mixture of a
few plug-in rules: in each cell the point is a convex combination of at most three hull vertices
(threshold rules), and the cells' combinations are coupled into at most
``sum_c (k_c - 1) + 1`` product rules, each one oracle call with a cost tensor that selects the
cell thresholds. Not in Narasimhan et al.; an addition that returns the limit their iterative
methods approach (tested against the LP/brute-force optimum over all threshold rules).
"""
from __future__ import annotations

import numpy as np
from scipy.optimize import minimize, nnls
from scipy.spatial import ConvexHull, QhullError

from .lp import highs_linprog as linprog
from .._scan import hull_candidates, split_positions
from .oracle import is_plugin

#: certified gap below which the solution is accepted when the caller's tolerance is 0
EXACT_GAP = 1e-8
#: largest violation of a hull facet or goal row accepted from the convex program (SLSQP's own
#: accuracy; the returned mixture is reported feasible within the methods' 1e-7)
FEASIBLE = 1e-9


def applies(problem, oracle) -> bool:
    """Whether the fast path solves this problem: two classes, the plug-in oracle on fixed
    probabilities (:class:`~goalfit.methods.plugin.PluginOracle`, not its threshold or refit
    relatives), a smooth convex objective with a gradient and polyhedral constraints only."""
    obj = problem.objective
    return (problem.space.n_classes == 2 and is_plugin(oracle) and obj.kind == "convex"
            and bool(getattr(obj, "smooth", False)) and not problem.nonlinear)


class _Cell:
    """The threshold rules of one cell and the facets of their convex hull (units of ``C``)."""

    def __init__(self, eta, cum0, cum1, total):
        n = len(eta)
        self.eta = eta  # a reference to the oracle's sorted probabilities, not a copy
        self.n0, self.n1 = float(cum0[n]) / total, float(cum1[n]) / total
        # split positions: 0, n and every k with eta[k-1] < eta[k], by increasing false positives
        # of the rules "class 1 on [k, n)" (a chain monotone in both coordinates)
        cuts = split_positions(eta)[::-1] if n else np.zeros(2, int)
        x = self.n0 - np.asarray(cum0[cuts], float) / total
        y = self.n1 - np.asarray(cum1[cuts], float) / total
        # hull vertices lie among the upper and lower hull vertices of that chain and their mirror
        # images (n0, n1) - p (the rules "class 1 on [0, k)"); only those candidates are kept
        cand = hull_candidates(x, y)
        m = len(cand)
        self.cuts = np.concatenate([cuts[cand], cuts[cand]])
        self.upper = np.arange(2 * m) < m
        px, py = x[cand], y[cand]
        self.points = np.column_stack([np.concatenate([px, self.n0 - px]), np.concatenate([py, self.n1 - py])])
        self.G, self.h = self._facets()

    def rule(self, i):
        """``(k, upper)``: class 1 on ``[k, n)`` (upper) or on ``[0, k)`` of the sorted cell."""
        return int(self.cuts[i]), bool(self.upper[i])

    def _facets(self):
        """``G x <= h`` describing the hull of the points (a segment or a point when degenerate)."""
        try:
            hull = ConvexHull(self.points)
            self.vertices = hull.vertices
            self.edges = hull.simplices  # the two ends of each facet, aligned with G
            return hull.equations[:, :2], -hull.equations[:, 2]
        except (QhullError, ValueError):  # collinear points: the segment below
            pass
        # all points lie on the segment from (0, 0) (nobody in class 1: the first candidate) to
        # (n0, n1) (everybody: the last): n1 FP - n0 TP = 0 and box bounds
        self.vertices = np.array([0, len(self.points) // 2 - 1])
        self.edges = None
        d = np.array([self.n1, -self.n0])
        G = np.vstack([d, -d, np.eye(2), -np.eye(2)])
        return G, np.array([0.0, 0.0, self.n0, self.n1, 0.0, 0.0])

    def decompose(self, x):
        """Weights on hull vertices whose mean is ``x``: the two ends of the facet (or segment)
        ``x`` lies on, else at most three vertices (non-negative least squares)."""
        ends = None
        if self.edges is None:
            ends = self.vertices
        else:
            j = int(np.argmax(self.G @ x - self.h))
            if self.G[j] @ x - self.h[j] > -FEASIBLE:  # on that facet to the program's accuracy
                ends = self.edges[j]
        if ends is not None:
            a, b = self.points[ends[0]], self.points[ends[1]]
            d = b - a
            t = float(np.clip((x - a) @ d / (d @ d), 0.0, 1.0)) if d @ d > 0 else 0.0
            idx, w = np.asarray(ends), np.array([1.0 - t, t])
        else:
            V = self.points[self.vertices]
            w, _ = nnls(np.vstack([V.T, np.ones(len(V))]), np.array([x[0], x[1], 1.0]))
            idx = self.vertices
        keep = w > 1e-12
        return [self.rule(i) for i in idx[keep]], w[keep] / w[keep].sum()

    def cost(self, rule):
        """2x2 cost whose plug-in rule is ``rule`` (threshold halfway between distinct eta values)."""
        k, upper = rule
        eta, n = self.eta, len(self.eta)
        if n == 0:
            return np.zeros((2, 2))
        t = -1.0 if k == 0 else 2.0 if k == n else 0.5 * (eta[k - 1] + eta[k])
        # margin a + eta (b - a) <= 0 predicts 1: t - eta (class 1 above t), eta - t (below)
        return np.array([[0.0, t], [1.0 - t, 0.0]]) if upper else np.array([[0.0, -t], [t - 1.0, 0.0]])


def solve(problem, oracle, tol: float):
    """The optimum over mixtures of the oracle's plug-in rules, or ``None`` when not certified.

    Parameters
    ----------
    problem : CompiledProblem
        As accepted by :func:`applies`.
    oracle : PluginOracle
        Binary; its per-cell sorted probabilities and cumulative label weights are used.
    tol : float
        The solution is accepted when its certified gap (objective units) is at most ``tol``
        (``EXACT_GAP`` when ``tol`` is 0).

    Returns
    -------
    (members, confusions, weights, gap) or None
        ``S`` plug-in rules (``S <= sum_c (k_c - 1) + 1 <= 2 * n_cells + 1``, ``k_c <= 3`` hull
        vertices per cell), their confusion tensors of shape ``(S, n_cells, 2, 2)`` (fractions
        of the sample's weight), weights of shape ``(S,)`` summing to 1, and the certified gap
        (objective units). ``None`` when the goals admit no point of the hulls (the caller's iterative method then
        returns the least-violating mixture) or the convex program was not solved to the
        tolerance.
    """
    space = problem.space
    m = space.n_cells
    cells = [_Cell(eta, cum0, cum1, oracle.total) for eta, cum0, cum1 in oracle._sorted]
    # C(x) = C0 + sum_c [x_fp (e_01 - e_00) + x_tp (e_11 - e_10)] in cell c
    C0 = np.zeros(space.shape)
    M = np.zeros((2 * m, space.size))
    for c, cell in enumerate(cells):
        C0[c, 0, 0], C0[c, 1, 0] = cell.n0, cell.n1
        base = c * 4
        M[2 * c, [base + 1, base]] = 1.0, -1.0
        M[2 * c + 1, [base + 3, base + 2]] = 1.0, -1.0
    rows = [np.zeros((0, 2 * m))]
    rhs = [np.zeros(0)]
    for c, cell in enumerate(cells):
        blk = np.zeros((len(cell.h), 2 * m))
        blk[:, 2 * c:2 * c + 2] = cell.G
        rows.append(blk)
        rhs.append(cell.h)
    if problem.A is not None:
        rows.append(problem.A @ M.T)
        rhs.append(problem.b - problem.A @ C0.ravel())
    G, h = np.vstack(rows), np.concatenate(rhs)
    obj = problem.objective

    def conf(x):
        return C0 + (x @ M).reshape(space.shape)

    def fun(x):
        C = conf(x)
        return obj.value(C), M @ obj.gradient(C).ravel()

    # start: the random classifier predicting 1 with probability 1/2 in every cell (interior of
    # every hull, meets parity-type goals)
    x0 = np.array([v for cell in cells for v in (cell.n0 / 2, cell.n1 / 2)])
    res = minimize(fun, x0, jac=True, method="SLSQP",
                   constraints=[{"type": "ineq", "fun": lambda x: h - G @ x, "jac": lambda x: -G}],
                   options={"maxiter": 500, "ftol": 1e-12})
    x = res.x
    if not np.isfinite(x).all() or (G @ x - h).max() > FEASIBLE:
        return None
    U, g = fun(x)
    # certificate: psi(x) + min_{x' in polytope} <g, x' - x> bounds the optimum from below
    lp = linprog(g, A_ub=G, b_ub=h, bounds=(None, None))
    if lp.status != 0:
        return None
    gap = float(g @ (x - lp.x))
    if gap > (tol if tol > 0 else EXACT_GAP):
        return None
    # each cell's point as rules, the cells coupled by their cumulative weights (quantiles)
    parts = [cell.decompose(x[2 * c:2 * c + 2]) for c, cell in enumerate(cells)]
    ends = [np.cumsum(w) for _, w in parts]  # each cell's rules cover [0, 1) in this order
    cuts = np.unique(np.concatenate(ends + [[0.0]]))
    cuts = np.clip(cuts, 0.0, 1.0)
    members, confusions, weights = [], [], []
    for lo, hi in zip(cuts[:-1], cuts[1:]):
        if hi - lo <= 1e-15:
            continue
        mid = 0.5 * (lo + hi)
        cost = np.zeros(space.shape)
        for c, (rules, _) in enumerate(parts):
            j = min(int(np.searchsorted(ends[c], mid)), len(rules) - 1)
            cost[c] = cells[c].cost(rules[j])
        member, Ct = oracle(cost)
        members.append(member)
        confusions.append(Ct)
        weights.append(hi - lo)
    weights = np.asarray(weights) / np.sum(weights)
    return members, np.array(confusions), weights, gap
