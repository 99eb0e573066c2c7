"""Exact solve of binary problems over the per-cell ROC convex hulls (a fast path).

For two classes the plug-in oracle's rule in each cell is a threshold on ``eta_1`` (class 1
above it, or below it for costs of the other sign; Narasimhan et al. JMLR 2024, Alg. 10), and a
cost tensor sets each cell's threshold independently; the threshold oracle picks among the same
rules by their cost on the sample. So the confusion tensors of the mixtures of either oracle's
outputs are exactly the product over cells of the convex hulls of the cells' threshold points
``(FP_c, TP_c)`` (the ROC convex hull of Provost & Fawcett, Mach. Learn. 2001; the geometry of
Hardt, Price & Srebro, NeurIPS 2016, §4, for equalized odds). Every method that mixes threshold
rules (column generation, Frank-Wolfe, SplitFW, GDA, ...) therefore solves

    min psi(C(x))  s.t.  x_c in hull_c for every cell c,  A vec(C(x)) <= b,

a program in ``2 * n_cells`` variables with linear constraints (the hulls' facets and the
goals' rows), solved here directly:

* a linear objective (error, cost-sensitive, balanced error): a linear program, exact;
* a maximum of linear pieces (min-max recall): its epigraph linear program, exact;
* a smooth convex objective (H-mean, Q-mean, KL quantification), or a convex function of a few
  linear features at a point where it is differentiable (G-mean where no recall is 0): SLSQP,
  its optimality certified by one LP (the Frank-Wolfe gap over the explicit polytope);
* a smooth non-convex objective (macro-F1, macro-F1 over groups): SLSQP from the balanced
  random rule and from the linearization's vertex there (the first Frank-Wolfe step; the
  balanced rule is a stationary point of macro-F1), the better local optimum, with no
  certificate (a heuristic, as the iterative methods are on it).

The solution is written back as a mixture of a few threshold rules: in each cell the point is a
convex combination of at most three hull vertices, and the cells' combinations are coupled into
at most ``sum_c (k_c - 1) + 1`` product rules, :class:`~goalfit.classifiers.ThresholdRule` objects
with thresholds at sample values (no oracle call; their confusion tensors from the oracle's
``confusion_of_thresholds``). The optimum is over every threshold rule of the sample, so with the
plug-in oracle it can lie below what the oracle's pricing reaches (its rules minimize the cost
*expected* under the probabilities: column generation stops short of the sample's optimum when
they are not calibrated within the cells). Not in Narasimhan et al.; an addition that returns
the limit their iterative methods approach (tested against the LP/brute-force optimum over all
threshold rules).
"""
from __future__ import annotations

import numpy as np
from scipy.optimize import minimize, nnls
from scipy.spatial import ConvexHull, QhullError

from ...classifiers.members import ThresholdRule
from ._common import StopReason, piecewise_linear, plugin_result, row_blocks
from .coarse_to_fine import differentiable_at
from .lp import BandedRows
from .lp import highs_linprog as linprog
from .mixture import final_mixture
from .._scan import hull_candidates
from .oracle import ThresholdOracle, is_plugin

#: certified gap below which the solution is accepted when the caller's tolerance is 0
EXACT_GAP = 1e-8
#: largest violation of a hull facet or goal row accepted from the convex program (SLSQP's own
#: accuracy; the returned mixture is reported feasible within the methods' 1e-7)
FEASIBLE = 1e-9


def applies(problem, oracle) -> bool:
    """Whether the fast path solves this problem: two classes, the plug-in or the threshold
    oracle on fixed probabilities (:class:`~goalfit.methods.plugin.PluginOracle`,
    :class:`~goalfit.methods.plugin.ThresholdOracle`; not the refit oracle), a linear objective,
    a smooth convex one with a gradient, a maximum of linear pieces or a convex function of a
    few linear features (G-mean: :func:`solve` declines where it ends at a kink), and
    polyhedral constraints only (macro-F1, not convex, is left to the methods' own paths).

    Examples
    --------
    >>> import numpy as np, goalfit as gf
    >>> from goalfit.confusion import CellEncoder, ConfusionSpace
    >>> from goalfit.methods.plugin import ThresholdOracle
    >>> import pandas as pd
    >>> y = np.array([0, 1, 0, 1, 1, 0]); eta = np.array([.2, .7, .4, .9, .6, .3])
    >>> enc = CellEncoder(); cells = enc.fit_transform(pd.Series(list("aabbab"), name="g"))
    >>> space = ConfusionSpace.from_codes(y, cells, np.arange(2), enc.cells_)
    >>> oracle = ThresholdOracle(np.c_[1 - eta, eta], y, cells, space)
    >>> [applies(gf.Problem(o).compile(space), oracle) for o in ("error", "minmax_recall", "macro_f1")]
    [True, True, False]
    """
    obj = problem.objective
    return (problem.space.n_classes == 2 and (is_plugin(oracle) or isinstance(oracle, ThresholdOracle))
            and (obj.kind == "linear"
                 or (obj.kind == "convex" and (bool(getattr(obj, "smooth", False)) or piecewise_linear(obj)
                                               or hasattr(obj, "features")))
                 or (obj.kind == "nonconvex" and bool(getattr(obj, "smooth", False))))
            and not problem.nonlinear)


class _Cell:
    """The threshold rules of one cell and the facets of their convex hull (units of ``C``)."""

    def __init__(self, eta, cum0, cum1, total, cuts=None):
        n = len(eta)
        self.eta = eta  # a reference to the oracle's sorted probabilities, not a copy
        self.n0, self.n1 = float(cum0[n]) / total, float(cum1[n]) / total
        # the split positions that can be hull vertices (0, n and some k with eta[k-1] < eta[k]:
        # the threshold oracle's candidate cuts, given or found block by block, so no temporary
        # spans the cell), by increasing false positives of the rules "class 1 on [k, n)" (a
        # chain monotone in both coordinates)
        if not n:
            cuts = np.zeros(2, int)
        else:
            cuts = np.asarray(ThresholdOracle._candidate_cuts(eta, cum0, cum1) if cuts is None else cuts)[::-1]
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
            self.described = True
            self.vertices = hull.vertices
            self.edges = hull.simplices  # the two ends of each facet, aligned with G
            return hull.equations[:, :2], -hull.equations[:, 2]
        except (QhullError, ValueError):  # collinear points: the segment below
            pass
        # all points lie on the segment from (0, 0) (nobody in class 1: the first candidate) to
        # (n0, n1) (everybody: the last): n1 FP - n0 TP = 0 and box bounds; if Qhull failed on
        # points off that segment, the cell is not described and :func:`solve` declines
        self.vertices = np.array([0, len(self.points) // 2 - 1])
        self.edges = None
        d = np.array([self.n1, -self.n0])
        self.described = bool(np.abs(self.points @ d).max(initial=0.0) <= FEASIBLE)
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

    def threshold(self, rule):
        """``(t, upper)`` of :class:`~goalfit.classifiers.ThresholdRule` for ``rule``: class 1
        iff ``eta_1 >= t`` (upper) or ``eta_1 <= t``, as the threshold oracle writes it."""
        k, upper = rule
        n = len(self.eta)
        if upper:
            return (float(self.eta[k]) if k < n else np.inf), True
        return (float(self.eta[k - 1]) if k > 0 else -np.inf), False


def solve(problem, oracle, tol: float):
    """The optimum over mixtures of threshold rules, or ``None`` when not certified.

    Parameters
    ----------
    problem : CompiledProblem
        As accepted by :func:`applies`.
    oracle : PluginOracle or ThresholdOracle
        Binary; its per-cell sorted probabilities and cumulative label weights are used (and the
        threshold oracle's candidate cuts, which hold every hull vertex).
    tol : float
        The solution is accepted when its certified gap (objective units) is at most ``tol``
        (``EXACT_GAP`` when ``tol`` is 0).

    Returns
    -------
    (members, confusions, weights, gap) or None
        ``S`` :class:`~goalfit.classifiers.ThresholdRule` objects (``S <= sum_c (k_c - 1) + 1 <= 2 * n_cells + 1``, ``k_c <= 3`` hull
        vertices per cell), their confusion tensors of shape ``(S, n_cells, 2, 2)`` (fractions
        of the sample's weight), weights of shape ``(S,)`` summing to 1, and the certified gap
        (objective units; None for a non-convex objective, whose local optimum certifies
        nothing). ``None`` when the goals admit no point of the hulls (the caller's iterative
        method then returns the least-violating mixture) or the convex program (smooth objectives) was not
        solved to the tolerance or ended where a non-smooth objective is not differentiable; the
        linear programs' gap is 0.
    """
    space = problem.space
    m = space.n_cells
    # the threshold oracle has each cell's candidate cuts already (every hull vertex among them)
    known = getattr(oracle, "_cuts", [None] * m)
    cells = [_Cell(eta, cum0, cum1, oracle.total, k) for (eta, cum0, cum1), k in zip(oracle._sorted, known)]
    if not all(cell.described for cell in cells):
        return None
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
    n_facets = len(G) - problem.n_rows  # the goals' rows come last
    blocks = row_blocks(problem, n_facets)  # their parity blocks, solved as 2k rows (lp.BandedRows)
    # the cell each row of G bounds (-1: a goal's row)
    owner = np.concatenate([np.full(len(cell.h), c) for c, cell in enumerate(cells)] + [np.full(len(G) - sum(
        len(cell.h) for cell in cells), -1)])
    box = [(0.0, v) for cell in cells for v in (cell.n0, cell.n1)]
    obj = problem.objective

    def conf(x):
        return C0 + (x @ M).reshape(space.shape)

    def fun(x):
        C = conf(x)
        return obj.value(C), M @ obj.gradient(C).ravel()

    if obj.kind == "linear":
        # a linear program over the same polytope: its optimum, with a zero gap
        lp = linprog(M @ obj.coef.ravel(), A_ub=G, b_ub=h, bounds=(None, None), blocks=blocks)
        if lp.status != 0:
            return None
        x, gap = np.asarray(lp.x, float), 0.0
    elif piecewise_linear(obj):
        # a maximum of linear pieces (min-max recall): the epigraph LP in (x, s), min s s.t.
        # every piece at C(x) <= s, over the same polytope; its optimum, with a zero gap
        P = obj.coefs @ M.T
        A_ub = np.block([[P, -np.ones((len(P), 1))], [G, np.zeros((len(G), 1))]])
        b_ub = np.concatenate([-(obj.coefs @ C0.ravel() + obj.consts), h])
        lp = linprog(np.r_[np.zeros(2 * m), 1.0], A_ub=A_ub, b_ub=b_ub, bounds=(None, None),
                     blocks=row_blocks(problem, len(P) + n_facets))
        if lp.status != 0:
            return None
        x, gap = np.asarray(lp.x[:-1], float), 0.0
    else:
        # start: the random classifier predicting 1 with probability 1/2 in every cell (interior
        # of every hull, meets parity-type goals)
        starts = [np.array([v for cell in cells for v in (cell.n0 / 2, cell.n1 / 2)])]
        if obj.kind == "nonconvex":
            # that rule is a stationary point of macro-F1 (where SplitFW's linearization stalls):
            # also start from the vertex of the linearization there (the first Frank-Wolfe step)
            lp = linprog(fun(starts[0])[1], A_ub=G, b_ub=h, bounds=(None, None), blocks=blocks)
            if lp.status == 0:
                starts.append(np.asarray(lp.x, float))
        found, best = None, np.inf
        for x0 in starts:
            x, converged = _active_slsqp(fun, x0, G, h, owner, box, problem)
            # a non-convex objective has no certificate: only SLSQP's own convergence makes its
            # point a local optimum (a convex one is checked by the LP below)
            if (np.isfinite(x).all() and (G @ x - h).max() <= FEASIBLE and fun(x)[0] < best
                    and (converged or obj.kind != "nonconvex")):
                found, best = x, fun(x)[0]
        if found is None:
            return None
        x = found
        if obj.kind == "nonconvex":
            gap = None  # a local optimum: no certificate
        else:
            gap = _certified_gap(obj, fun, conf, x, G, h, blocks)
            if gap is not None and gap > (tol if tol > 0 else EXACT_GAP):
                # SLSQP can stop short on the few rows: once more from there with every row
                x, _ = _active_slsqp(fun, x, G, h, owner, box, problem, every_row=True)
                if not (np.isfinite(x).all() and (G @ x - h).max() <= FEASIBLE):
                    return None
                gap = _certified_gap(obj, fun, conf, x, G, h, blocks)
            if gap is None:
                return None
    if gap is not None and gap > (tol if tol > 0 else EXACT_GAP):
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
        rules = [r[min(int(np.searchsorted(e, mid)), len(r) - 1)] for (r, _), e in zip(parts, ends)]
        # the cells' vertices as one rule, thresholds at sample values (either oracle: a plug-in
        # rule's cost would put them halfway, which rounds onto one of two adjacent doubles)
        thresholds, upper = zip(*(cell.threshold(r) for cell, r in zip(cells, rules)))
        member = ThresholdRule(thresholds, upper)
        Ct = oracle.confusion_of_thresholds(member.thresholds, member.upper)
        members.append(member)
        confusions.append(Ct)
        weights.append(hi - lo)
    weights = np.asarray(weights) / np.sum(weights)
    return members, np.array(confusions), weights, gap


#: hull facets added per cell and round by :func:`_active_slsqp` (the most violated first)
FACETS_PER_ROUND = 5


def _active_slsqp(fun, x0, G, h, owner, box, problem, every_row=False):
    """SLSQP on ``min fun(x)`` s.t. ``G x <= h`` and the cells' boxes, the hull facets joining as
    they are violated.

    Each cell's hull has some hundred facets at 10^5 rows, and the cost of SLSQP's subproblem
    grows with the rows it carries. So it starts from the goals' rows and the boxes (which hold
    every hull), then adds, per cell, the :data:`FACETS_PER_ROUND` most violated facets of its
    solution and solves again from there, until no facet is violated: a KKT point of the
    relaxation that meets every row is one of the whole program (the rows left out have zero
    multipliers). Usually two rounds of a few tens of rows (benchmarks/README.md, atlas.py).
    ``every_row``: one solve with every row. The goals' rows (the last of ``G``, ``owner < 0``,
    always active) take their parity blocks as ``2 k`` rows around free variables
    (:class:`~goalfit.methods.plugin.lp.BandedRows`). Returns the last solution and whether
    SLSQP reported it converged.
    """
    active = np.ones(len(G), bool) if every_row else owner < 0
    x = np.asarray(x0, float)
    n = len(x)
    while True:
        banded = BandedRows(G[active], h[active], row_blocks(problem, int((active & (owner >= 0)).sum())))
        cons = [banded.constraint()] if active.any() else []

        def fun_z(z, banded=banded):
            value, grad = fun(z[:n])
            return value, banded.gradient(grad)

        res = minimize(fun_z, banded.start(x), jac=True, method="SLSQP", bounds=banded.bounds(box), constraints=cons,
                       options={"maxiter": 500, "ftol": 1e-12})
        x = res.x[:n]
        if not np.isfinite(x).all():
            return x, False
        viol = G @ x - h
        new = (viol > FEASIBLE) & ~active
        if not new.any():
            return x, bool(res.success)
        for c in np.unique(owner[new]):
            rows = np.flatnonzero(new & (owner == c))
            active[rows[np.argsort(-viol[rows])[:FACETS_PER_ROUND]]] = True


def _certified_gap(obj, fun, conf, x, G, h, blocks=None):
    """The Frank-Wolfe gap at ``x`` over the polytope ``G x <= h`` (one LP), or None where it
    certifies nothing (a kink of a non-smooth objective, a failed LP)."""
    if not differentiable_at(obj, conf(x)):
        return None  # at a kink (G-mean where a recall is 0) the gradient certifies nothing
    _, g = fun(x)
    # certificate: psi(x) + min_{x' in polytope} <g, x' - x> bounds the optimum from below
    lp = linprog(g, A_ub=G, b_ub=h, bounds=(None, None), blocks=blocks)
    return None if lp.status != 0 else float(g @ (x - lp.x))


def fit(problem, oracle, tol, rec, method):
    """:func:`solve` as the result of ``method`` (a :class:`FitResult`), or ``None`` where
    :func:`solve` returns ``None`` or its mixture misses the goals (the caller then runs its own
    iterations).

    ``rec`` is the caller's :class:`~goalfit.methods.plugin._common.Recorder`.
    """
    out = solve(problem, oracle, tol)
    if out is None:
        return None
    members, Cs, weights, gap = out
    # the weights are the program's optimum: not re-weighted by the LP of §8.2 (which optimizes
    # an upper bound and would reject a violation of 1e-12); feasible to the methods' 1e-7
    members, Cs, w, feasible = final_mixture(problem, members, Cs, weights, prune_output=False)
    if not feasible:  # the program's point met the goals; a mixture that does not is no exact answer
        return None
    C = np.tensordot(w, Cs, axes=1)
    rec(1, C, force=True)
    obj = problem.objective
    if gap is None:  # a non-convex objective: the best local optimum of the program's starts
        return plugin_result(problem, oracle, members, w, Cs, method, rec.rows, feasible,
                             "converged: local optimum of the non-convex program over the per-cell ROC hulls of "
                             "the threshold rules (no certificate)", stop=StopReason.CONVERGED, iterations=0,
                             tol=tol, lower_bound=None, certified=False)
    program = "linear program" if obj.kind == "linear" or piecewise_linear(obj) else "convex program"
    # the gap is certified over the mixtures of threshold rules, the plug-in oracle's rules here
    return plugin_result(problem, oracle, members, w, Cs, method, rec.rows, feasible,
                         f"exact: {program} over the per-cell ROC hulls of the threshold rules, certified "
                         f"gap {gap:.1e}", stop=StopReason.EXACT, iterations=0, tol=tol,
                         lower_bound=float(problem.objective.value(C)) - gap, certified=True)
