"""Best single deterministic rule meeting the goals on a sample (the ``"best_rule"`` strategy
of :meth:`goalfit.GoalClassifier.to_deterministic`).

A randomized classifier meets the goals in expectation; one deployed deterministic model has
to meet them with its own predictions. Two searches, both over the training sample the
randomized classifier was fitted on (so both see the same confusion tensors as the method):

* :func:`best_threshold_rule` — binary problems with per-cell rules ``1[eta_1(x) >= t_c]``,
  linear objective and linear (polyhedral) constraints: a search over the combinations of
  per-cell thresholds (at the distinct values of ``eta_1`` in each cell), **exact** for one or
  two cells (every combination is evaluated, vectorized), block-coordinate descent for more.
  It returns the rule of this family with the lowest training objective among those meeting
  every constraint on the sample; when none does, the one with the smallest largest
  violation, and among those the lowest objective. (A mixed-integer formulation on HiGHS, one
  binary per (cell, threshold), found no feasible point in its time limit on Adult: the
  fairness band acts like an equality;
  see benchmarks/README.md, section "Measurements behind the library's choices".)
* :func:`best_candidate_rule` — every other case (multiclass, group-blind rules, nonlinear
  goals): a documented heuristic. The candidates are the mixture's members and the plug-in
  rules of the convex combinations ``(1 - s) L_a / |L_a| + s L_b / |L_b|`` of every pair of
  the heaviest members' (at most :data:`MAX_PAIR_MEMBERS`; max-abs normalized) cost tensors
  for ``s`` on a grid (``n_grid`` interior points):
  the rules "between" two members, where a feasible deterministic rule usually lies when the
  mixture needs both. For binary group-blind rules and linear goals each candidate is also
  tried with its threshold shifted to the best value on the sample (:func:`best_offset_rule`,
  exact in the shift). It picks the candidate as above (feasible with the lowest objective,
  else least violating). Guarantee: the result meets the goals on the sample whenever any
  candidate does, and is never worse than the best member; no optimality over all rules.
* :func:`best_direction_rule` — binary group-blind rules with linear goals, added to the
  candidates above: the linear rules ``1[<eta(x), d> <= t]`` on the joint probabilities with
  ``d`` on a grid of directions of the span of the objective's and the constraints' costs
  (the Lagrangian plug-in rules, Narasimhan et al. §7), each with its exact best threshold.
  For equalized odds between two groups this is a grid over both true-class conditions (the
  TPR and the FPR multiplier); it finds feasible rules where the pairwise candidates only meet
  the goals with a near-constant rule
  (see benchmarks/README.md, section "Measurements behind the library's choices").
"""
from __future__ import annotations

import numpy as np

from ..classifiers.members import ThresholdRule
from ..confusion import confusion_tensor
from ..goals.problem import FEASIBLE_TOL
from .plugin.group_blind import OffsetScan
from .plugin.mixture import MAX_MEMBERS


def rank(problem, C):
    """Sort key of a rule's confusion tensor: feasible first (by objective), else by violation.

    A violation of at most :data:`FEASIBLE_TOL` counts as 0 (feasible).
    """
    v = problem.max_violation(C)
    return (0.0 if v <= FEASIBLE_TOL else v, problem.objective.value(C))


def _lexbest(viol, obj) -> int:
    """Index of the smallest violation, ties broken by the lowest objective (:func:`rank` order)."""
    return int(np.lexsort((obj, viol))[0])


#: the most members whose pairs :func:`best_candidate_rule` interpolates (the heaviest): as many as
#: a plug-in method's output mixture keeps (:data:`~goalfit.methods.plugin.mixture.MAX_MEMBERS`,
#: :func:`~goalfit.methods.plugin.mixture.final_mixture`), so only a larger mixture built
#: otherwise is cut; 20 lost up to 1.3 in KL quantification on held-out rows against every pair
MAX_PAIR_MEMBERS = MAX_MEMBERS


def best_candidate_rule(problem, members, proba, y_codes, cell_ids, sample_weight=None, n_grid: int = 49,
                        shift: bool = False, member_codes=None, weights=None,
                        max_pair_members: int = MAX_PAIR_MEMBERS):
    """The best member, or plug-in rule between two members' costs (see module docstring).

    Parameters
    ----------
    problem : CompiledProblem
    members : list
        Members of the mixture; those with a ``cost`` attribute (plug-in and group-blind rules)
        are interpolated, the others are candidates as they are.
    proba : ndarray of shape (n_samples, n_columns)
        What the members read (class probabilities, or joint probabilities for group-blind rules).
    y_codes, cell_ids : ndarray of int, shape (n_samples,)
        True classes and true cells.
    sample_weight : ndarray of shape (n_samples,), optional
    n_grid : int, default 49
    shift : bool, default False
        Also try every candidate with its threshold shifted optimally (:func:`best_offset_rule`;
        binary group-blind rules, linear goals).
    member_codes : ndarray of int, shape (len(members), n_samples), optional
        The members' predictions on the sample (e.g. the stored
        :attr:`TrainingSample.member_codes`); required for members that read ``X``,
        otherwise computed from ``proba``.
    weights : ndarray of shape (len(members),), optional
        The members' mixture weights: the pairs are taken among the ``max_pair_members``
        heaviest members with a cost (default: the first ones).
    max_pair_members : int, default 60
        The most members whose pairs are interpolated (every member is a candidate itself). A
        mixture can carry hundreds of members (a Frank-Wolfe run kept whole when the pruning LP
        does not improve a nonlinear objective), and the pairs' candidates grow as their square,
        each a pass over the sample.

    Returns
    -------
    member : the best candidate
    C : ndarray of shape (n_cells, n_classes, n_classes), its confusion tensor on the sample
    n_candidates : int

    Raises
    ------
    ValueError
        When ``member_codes`` does not have one row per member.
    """
    space = problem.space
    K, G = space.n_classes, space.n_cells

    def conf(pred):
        return confusion_tensor(y_codes, pred, cell_ids, K, G, sample_weight)

    best, best_key, best_C = None, None, None
    n_cand = 0

    def consider(member, C):
        nonlocal best, best_key, best_C, n_cand
        n_cand += 1
        key = rank(problem, C)
        if best is None or key < best_key:
            best, best_key, best_C = member, key, C
        if shift and hasattr(member, "cost"):
            n_cand += 1
            m2, C2 = best_offset_rule(problem, member, proba, y_codes, cell_ids, sample_weight)
            key = rank(problem, C2)
            if key < best_key:
                best, best_key, best_C = m2, key, C2

    if member_codes is not None and len(member_codes) != len(members):
        raise ValueError(f"member_codes has {len(member_codes)} rows for {len(members)} members")
    for k, m in enumerate(members):
        consider(m, conf(m.predict_codes(None, proba, cell_ids) if member_codes is None else member_codes[k]))
    with_cost = [k for k, m in enumerate(members) if hasattr(m, "cost")]
    if len(with_cost) > max_pair_members:  # the heaviest (without weights, the first ones)
        key = np.zeros(len(with_cost)) if weights is None else -np.asarray(weights, float)[with_cost]
        with_cost = sorted(with_cost[i] for i in np.argsort(key, kind="stable")[:max_pair_members])
    costly = [members[k] for k in with_cost]
    grid = np.linspace(0, 1, n_grid + 2)[1:-1]
    for i in range(len(costly)):
        for j in range(i + 1, len(costly)):
            a, b = costly[i], costly[j]
            if type(a) is not type(b):
                continue
            La = a.cost / max(np.abs(a.cost).max(), 1e-300)
            Lb = b.cost / max(np.abs(b.cost).max(), 1e-300)
            for s in grid:
                m = type(a)((1 - s) * La + s * Lb)
                consider(m, conf(m.predict_codes(None, proba, cell_ids)))
    return best, best_C, n_cand


def _linear_rows(problem):
    """(objective coef, objective const, A, b) of a linear objective and polyhedral constraints.

    Raises
    ------
    ValueError
        When the objective is not linear or a constraint is not polyhedral.
    """
    obj = problem.objective
    if getattr(obj, "kind", None) != "linear" or problem.nonlinear:
        raise ValueError("the exact threshold search needs a linear objective and polyhedral constraints")
    shape = problem.space.shape
    A = np.zeros((0, int(np.prod(shape)))) if problem.A is None else np.asarray(problem.A, float)
    b = np.zeros(0) if problem.b is None else np.asarray(problem.b, float)
    return np.asarray(obj.coef, float).reshape(shape), float(obj.const), A.reshape((-1,) + shape), b


def _cell_tables(eta1, y, cells, w, G):
    """Per cell: distinct values of ``eta_1`` and, per threshold position ``k`` (class 1 on the
    values ``v_k, v_{k+1}, ...``; ``k = m``: nobody), the weight of each class predicted 1
    (shape (m + 1, 2), fractions of the total weight)."""
    total = w.sum()
    values, suffix = [], []
    for c in range(G):
        idx = np.flatnonzero(cells == c)
        v, inv = np.unique(eta1[idx], return_inverse=True)
        cnt = np.zeros((len(v), 2))
        np.add.at(cnt, (inv, y[idx]), w[idx])
        values.append(v)
        suffix.append(np.vstack([np.cumsum(cnt[::-1], axis=0)[::-1], np.zeros((1, 2))]) / total)
    return values, suffix


def _sample(y_codes, cell_ids, sample_weight):
    """Class codes and cells as intp, and the weights (ones when ``sample_weight`` is None)."""
    y = np.asarray(y_codes, dtype=np.intp)
    w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, float)
    return y, np.asarray(cell_ids, dtype=np.intp), w


class _LinearGoals:
    """The objective and the constraint rows as sums over examples predicted 1 (binary).

    With every example predicted 0 the vector [objective, rows] is ``base``; predicting 1 on
    an example of cell ``c`` and class ``y`` adds ``delta[:, c, y] * w / total``.
    """

    def __init__(self, problem, y, cells, w):
        coef, const, A, b = _linear_rows(problem)
        Ls = np.concatenate([coef[None], A])  # (1 + R, G, 2, 2)
        G = problem.space.n_cells
        tot = np.zeros((G, 2))
        np.add.at(tot, (cells, y), w / w.sum())
        self.delta = Ls[..., 1] - Ls[..., 0]  # (1 + R, G, 2)
        self.base = np.einsum("rcy,cy->r", Ls[..., 0], tot)
        self.limit = b - self.base[1:]
        self.R = len(b)

    def key(self, vals):
        """(violation or 0, objective) of summed contributions ``vals`` (..., 1 + R)."""
        if self.R:
            viol = np.max(vals[..., 1:] - self.limit, axis=-1)
            viol = np.where(viol <= FEASIBLE_TOL, 0.0, viol)
        else:
            viol = np.zeros(vals.shape[:-1])
        return viol, vals[..., 0]


class _OffsetSearch:
    """Exact best threshold of binary group-blind rules on one sample (shared set-up)."""

    def __init__(self, problem, joint, y_codes, cell_ids, sample_weight=None):
        self.y, self.cells, self.w = _sample(y_codes, cell_ids, sample_weight)
        self.joint = joint
        self.lin = _LinearGoals(problem, self.y, self.cells, self.w)
        # per example: change of [objective, rows] when it is predicted 1, shape (n, 1 + R)
        self.gains = self.lin.delta[:, self.cells, self.y].T * (self.w / self.w.sum())[:, None]

    def best(self, cost):
        """(key, rule) of the best threshold for the direction of ``cost`` (:func:`rank` order)."""
        scan = OffsetScan(cost, self.joint)
        viol, obj = self.lin.key(scan.cumulative(self.gains))  # (N + 1,) each
        cand = scan.valid
        k = int(cand[_lexbest(viol[cand], obj[cand])])
        return (float(viol[k]), float(obj[k])), scan.rule(k)

    def confusion(self, rule):
        pred = rule.predict_codes(None, self.joint, self.cells)
        return confusion_tensor(self.y, pred, self.cells, 2, rule.cost.shape[0], self.w)


def best_offset_rule(problem, member, joint, y_codes, cell_ids, sample_weight=None):
    """Best shift of a binary group-blind rule's threshold on the sample (exact in the shift).

    The rule ``1[<eta(x), d> <= 0]`` (``d = L[:, :, 1] - L[:, :, 0]``, flattened) becomes
    ``1[<eta(x), d> <= t]``, still a :class:`~goalfit.classifiers.members.GroupBlindRule`
    (since the joint probabilities sum to 1, it is the cost with ``t`` subtracted from
    ``L[:, :, 1]``); every ``t`` between distinct scores is evaluated by one cumulative sum.

    Returns
    -------
    member, C
    """
    search = _OffsetSearch(problem, joint, y_codes, cell_ids, sample_weight)
    out = search.best(member.cost)[1]
    return out, search.confusion(out)


def _directions(problem, n_angles: int, n_random: int, random_state):
    """Unit directions ``d`` (shape (m, 2 G), over (cell, true class)) spanned by the objective's
    and the constraint rows' binary directions, for :func:`best_direction_rule`."""
    coef, _, A, _ = _linear_rows(problem)

    def flat(L):  # d = L[:, :, 1] - L[:, :, 0] over (cell, y); constants are threshold shifts
        d = (L[..., 1] - L[..., 0]).ravel()
        return d - d.mean()

    d0 = flat(coef)
    n0 = np.linalg.norm(d0)
    d0 = d0 / n0 if n0 > 1e-12 else d0
    basis: list[np.ndarray] = []
    for r in range(len(A)):  # Gram-Schmidt: a row and its negation (|a - b| <= eps) give one axis
        v = flat(A[r])
        for u in ([d0] if n0 > 1e-12 else []) + basis:
            v = v - (v @ u) * u
        nv = np.linalg.norm(v)
        if nv > 1e-9 * max(1.0, np.abs(flat(A[r])).max()):
            basis.append(v / nv)
    U = np.array(basis).reshape(-1, len(d0))
    m = len(U)
    if m == 0:
        return d0[None]
    if m == 1:  # the half circle cos(phi) d0 + sin(phi) u, phi in [-pi/2, pi/2]
        phi = np.linspace(-np.pi / 2, np.pi / 2, 2 * n_angles + 1)
        return np.cos(phi)[:, None] * d0 + np.sin(phi)[:, None] * U[0]
    if m == 2:  # v on the circle of the constraints' span
        psi = np.linspace(0, 2 * np.pi, 2 * n_angles, endpoint=False)
        v = np.cos(psi)[:, None] * U[0] + np.sin(psi)[:, None] * U[1]
    else:  # seeded random unit vectors of the span (documented fallback)
        g = np.random.default_rng(random_state).standard_normal((n_random, m))
        v = (g / np.linalg.norm(g, axis=1, keepdims=True)) @ U
    phi = np.linspace(0, np.pi / 2, n_angles + 1)[1:]
    D = (np.cos(phi)[:, None, None] * d0 + np.sin(phi)[:, None, None] * v[None]).reshape(-1, len(d0))
    return np.vstack([d0[None], D])


def best_direction_rule(problem, joint, y_codes, cell_ids, sample_weight=None, n_angles: int = 24,
                        n_random: int = 1024, random_state=0):
    """Best binary group-blind linear rule ``1[<eta(x), d> <= t]`` over a grid of directions.

    The Lagrangian of a linear objective and polyhedral constraints has the plug-in cost
    ``L_obj + sum_r lambda_r A_r`` (Narasimhan et al., JMLR 2024, §7: the optimal classifier
    for given multipliers is the plug-in rule of that cost), so its group-blind rule scores
    ``x`` by ``<eta(x), d>`` with ``d`` in the span of the objective's direction ``d_0`` and
    the constraint rows' directions (``d = L[:, :, 1] - L[:, :, 0]`` over (cell, true class);
    constants are threshold shifts, so they are projected out). Unlike a group-aware threshold
    rule, such a rule needs no randomization in the population (its score is continuous), which
    makes it the natural deterministic candidate. This searches the unit directions
    ``cos(phi) d_0 + sin(phi) v``, ``v`` a unit vector of the constraints' span orthogonal to
    ``d_0``, ``phi`` in ``(0, pi/2]`` on ``n_angles`` points (and ``d_0`` itself): with one
    constraint axis (demographic parity or equal opportunity between two groups) ``v = ±u``
    (a half circle of ``2 n_angles + 1`` directions); with two (equalized odds between two
    groups: the TPR and the FPR condition) a grid of ``2 n_angles`` angles ``psi`` on the circle
    of the span; with more, ``n_random`` seeded random unit vectors of the span. For each
    direction the threshold ``t`` is exact on the sample (:class:`OffsetScan`). Guarantee: the
    best rule of the grid in :func:`rank` order (feasible with the lowest objective, else the
    least violating); no optimality between grid directions.

    Parameters
    ----------
    problem : CompiledProblem
        Binary, linear objective, polyhedral constraints.
    joint : ndarray of shape (n_samples, 2 * n_cells)
        Joint probabilities ``P(A = a, Y = y | x)``, cell-major.
    y_codes, cell_ids : ndarray of int, shape (n_samples,)
        True classes and **true** cells.
    sample_weight : ndarray of shape (n_samples,), optional
    n_angles : int, default 24
    n_random : int, default 1024
    random_state : int, default 0
        Seed of the random directions (three or more constraint axes).

    Returns
    -------
    rule : GroupBlindRule
    C : ndarray of shape (n_cells, 2, 2), its confusion tensor on the sample
    n_candidates : int

    Raises
    ------
    ValueError
        For more than two classes, a nonlinear objective or a non-polyhedral constraint.
    """
    if problem.space.n_classes != 2:
        raise ValueError("the direction search is for binary problems")
    G = problem.space.n_cells
    search = _OffsetSearch(problem, joint, y_codes, cell_ids, sample_weight)
    D = _directions(problem, n_angles, n_random, random_state)
    best_key, best = None, None
    for d in D:
        cost = np.zeros((G, 2, 2))
        cost[:, :, 1] = d.reshape(G, 2)
        key, rule = search.best(cost)
        if best is None or key < best_key:
            best_key, best = key, rule
    return best, search.confusion(best), len(D)


def best_threshold_rule(problem, eta1, y_codes, cell_ids, sample_weight=None, chunk: int = 64,
                        n_sweeps: int = 5):
    """Best per-cell threshold rule ``1[eta_1 >= t_c]`` on the sample (binary; see module docstring).

    Every linear goal is, per cell, a linear function of the cell's weight of each class
    predicted 1, which a threshold position fixes; so the objective and the constraint rows
    are sums over cells of per-position tables. With one or two cells every combination of
    positions is enumerated (vectorized, ``chunk`` positions of the first cell at a time):
    the result is **exact**. With more cells, block-coordinate descent from the best
    combination of the cells' positions found by enumerating pairs is used instead (each step
    exact in one cell given the others; a local optimum, reported as ``exact: False``).

    Parameters
    ----------
    problem : CompiledProblem
        Binary, linear objective, polyhedral constraints.
    eta1 : ndarray of shape (n_samples,)
        ``P(Y = 1 | x)`` estimates the rule thresholds.
    y_codes, cell_ids : ndarray of int, shape (n_samples,)
    sample_weight : ndarray of shape (n_samples,), optional
    chunk : int, default 64
    n_sweeps : int, default 5
        Coordinate-descent passes (three or more cells).

    Returns
    -------
    rule : ThresholdRule
    C : ndarray of shape (n_cells, 2, 2), the rule's confusion tensor on the sample
    info : dict
        ``exact`` (bool), ``n_combinations`` (evaluated), ``feasible`` (bool).

    Raises
    ------
    ValueError
        For more than two classes, a nonlinear objective or a non-polyhedral constraint.
    """
    space = problem.space
    if space.n_classes != 2:
        raise ValueError("the exact threshold search is for binary problems")
    y, cells, w = _sample(y_codes, cell_ids, sample_weight)
    G = space.n_cells
    lin = _LinearGoals(problem, y, cells, w)
    values, suffix = _cell_tables(np.asarray(eta1, float), y, cells, w, G)
    # per cell, per position: contribution to [objective, rows] (C[c,y,1] = S_y, C[c,y,0] = tot_y - S_y)
    tabs = [suffix[c] @ lin.delta[:, c, :].T for c in range(G)]  # (m_c + 1, 1 + R)
    key = lin.key

    def best_pair(T1, T2):
        """Exact best (i, j) for two tables, plus the number of combinations evaluated.

        Positions of the first table are visited by increasing objective; once a feasible
        pair is known, the positions whose objective plus the second table's smallest cannot
        beat it are skipped (and so are such positions of the second table): still exact.
        """
        best, best_k = None, (np.inf, np.inf)
        order1 = np.argsort(T1[:, 0], kind="stable")
        o2min = T2[:, 0].min()
        n_eval = 0
        for s0 in range(0, len(order1), chunk):
            rows1 = order1[s0:s0 + chunk]
            T2s, idx2 = T2, None
            if best_k[0] == 0.0:
                if T1[rows1[0], 0] + o2min > best_k[1]:
                    break
                idx2 = np.flatnonzero(T2[:, 0] + T1[rows1[0], 0] <= best_k[1])
                T2s = T2[idx2]
            V = T1[rows1, None, :] + T2s[None, :, :]
            n_eval += V.shape[0] * V.shape[1]
            viol, obj = key(V)
            vmin = viol.min()  # lexicographic: smallest violation, then objective
            cand = np.where(viol <= vmin, obj, np.inf)
            i, j = np.unravel_index(int(np.argmin(cand)), cand.shape)
            k = (float(vmin), float(cand[i, j]))
            if k < best_k:
                best_k, best = k, (int(rows1[i]), int(j if idx2 is None else idx2[j]))
        return best, n_eval

    if G == 1:
        viol, obj = key(tabs[0])
        pos = [_lexbest(viol, obj)]
        n_comb, exact = len(tabs[0]), True
    elif G == 2:
        (i, j), n_comb = best_pair(tabs[0], tabs[1])
        pos, exact = [i, j], True
    else:
        pos = [int(np.argmin(t[:, 0])) for t in tabs]
        n_comb, exact = 0, False
        for _ in range(n_sweeps):
            before = list(pos)
            for c in range(G):
                rest = sum(tabs[d][pos[d]] for d in range(G) if d != c)
                viol, obj = key(tabs[c] + rest)
                pos[c] = _lexbest(viol, obj)
                n_comb += len(tabs[c])
            if pos == before:
                break
    t = np.array([values[c][k] if k < len(values[c]) else np.inf for c, k in enumerate(pos)])
    rule = ThresholdRule(t, np.ones(G, dtype=bool))
    pred = rule.predict_codes(None, np.column_stack([1 - eta1, eta1]), cells)
    C = confusion_tensor(y, pred, cells, 2, G, w)
    info = {"exact": exact, "n_combinations": int(n_comb), "feasible": bool(problem.max_violation(C) <= FEASIBLE_TOL)}
    return rule, C, info
