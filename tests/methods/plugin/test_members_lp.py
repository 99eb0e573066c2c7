"""The pruning LP by column generation from a start (the stopping checks' re-fit) has the full LP's optimum."""
import numpy as np
import pytest

from goalfit.methods.plugin._common import _members_lp


@pytest.mark.parametrize("seed", range(5))
def test_column_generation_reaches_the_full_lp_optimum(seed):
    rng = np.random.default_rng(seed)
    T, K = 400, 12
    psi = rng.uniform(0.2, 1.0, T)
    G = rng.normal(0.0, 1.0, (K, T))
    G[:, 0] = -0.5  # one member meets every row: the LP is feasible
    full = _members_lp(psi, G, 0.0)
    assert full.status == 0
    start = np.zeros(T, bool)
    start[rng.choice(T, 5, replace=False)] = True
    start[0] = True  # a feasible restricted LP: the pricing rounds run
    cg = _members_lp(psi, G, 0.0, start)
    assert cg.status == 0
    assert psi @ cg.x == pytest.approx(psi @ full.x, abs=1e-9)
    assert cg.x.sum() == pytest.approx(1.0) and cg.x.min() >= 0.0
    assert (G @ cg.x).max() <= 1e-9
    # a start whose LP is infeasible falls back to the full LP
    bad = np.zeros(T, bool)
    bad[np.argmax(G.max(axis=0))] = True
    assert G[:, bad].max() > 0  # alone it violates a row
    assert psi @ _members_lp(psi, G, 0.0, bad).x == pytest.approx(psi @ full.x, abs=1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_least_violation_by_column_generation_is_the_full_epigraph_lp(seed):
    from goalfit.methods.plugin._common import epigraph_lp, least_violation_lp

    rng = np.random.default_rng(seed)
    T, K = 500, 20
    G = rng.normal(0.3, 1.0, (K, T))  # no member meets every row
    full = epigraph_lp(G, np.zeros(K), np.zeros((0, T)))
    start = np.zeros(T, bool)
    start[rng.choice(T, 10, replace=False)] = True
    s, x = least_violation_lp(G, start)
    assert s == pytest.approx(float(full.x[-1]), abs=1e-9)
    assert x.sum() == pytest.approx(1.0) and x.min() >= 0.0
    assert (G @ x).max() == pytest.approx(s, abs=1e-9)  # the mixture attains it
    assert least_violation_lp(G)[0] == pytest.approx(s, abs=1e-12)


def test_an_infeasible_lp_is_reported_without_the_full_lp(monkeypatch):
    """From a start, infeasibility is shown by the priced least violation (which ``prune`` then
    reuses): no LP over all the columns is solved."""
    from goalfit.methods.plugin import _common

    rng = np.random.default_rng(0)
    T, K = 300, 10
    G = rng.normal(0.5, 0.2, (K, T))  # every member violates every row: no mixture meets them
    start = np.zeros(T, bool)
    start[:5] = True
    widths = []
    solver = _common.linprog

    def counting(c, *args, **kwargs):
        widths.append(len(c))
        return solver(c, *args, **kwargs)

    monkeypatch.setattr(_common, "linprog", counting)
    res = _members_lp(rng.uniform(size=T), G, 0.0, start)
    assert res.status != 0 and max(widths) < T  # every LP restricted (epigraph LPs: T + 1 columns)
    s, x = res.least_violation
    assert s == pytest.approx(_common.least_violation_lp(G)[0], abs=1e-9) and s > 0
    assert _members_lp(rng.uniform(size=T), G, 0.0).status != 0


@pytest.mark.parametrize("feasible", [True, False])
def test_prune_of_a_large_pool_prices_to_the_full_lp(feasible, monkeypatch):
    """Above PRICED_ABOVE members the pruning LP and the least-violation LPs run by column
    generation from the heaviest members: the same objective, violation and feasibility."""
    from types import SimpleNamespace

    from goalfit.methods.plugin import _common
    from goalfit.methods.plugin._common import least_violation_lp

    rng = np.random.default_rng(3)
    T, D = 600, 8
    C = rng.dirichlet(np.ones(D), T).reshape(T, 1, 2, 4)
    A = rng.normal(size=(12, D))
    least = least_violation_lp((C.reshape(T, D) @ A.T).T)[0]
    b = np.full(12, least + (0.02 if feasible else -0.02))  # just above / below the least violation
    objective = SimpleNamespace(kind="linear", coefs=None, consts=None,
                                values=lambda Cs: np.asarray(Cs).reshape(len(Cs), -1) @ np.arange(D),
                                value=lambda c: float(np.asarray(c).ravel() @ np.arange(D)))
    problem = SimpleNamespace(objective=objective, A=A, b=b, nonlinear=[])
    monkeypatch.setattr(_common, "piecewise_linear", lambda obj: False)
    w = rng.uniform(size=T)
    priced = _common.prune(problem, list(range(T)), C, w)
    monkeypatch.setattr(_common, "PRICED_ABOVE", 10**9)
    full = _common.prune(problem, list(range(T)), C, w)
    assert priced[3] == full[3] == feasible
    assert priced[4] == pytest.approx(full[4], abs=1e-9)
    value = [objective.value(np.tensordot(out[2], out[1], axes=1)) for out in (priced, full)]
    assert value[0] == pytest.approx(value[1], abs=1e-9)


def test_pricing_tolerance_follows_the_costs_not_the_largest_reduced_cost():
    """One column of huge reduced cost (duals of a nearly flat row) must not hide a column of
    small negative reduced cost: the tolerance is relative to the LP's costs."""
    psi = np.array([1.0, 0.0, 1.0 - 1e-4, 1.0])
    G = np.array([[-1e-6, 1e-6, -1e-6, 1.0]])
    full = _members_lp(psi, G, 0.0)
    priced = _members_lp(psi, G, 0.0, np.array([True, True, False, False]))
    assert psi @ full.x == pytest.approx(0.49995, abs=1e-9)
    assert psi @ priced.x == pytest.approx(psi @ full.x, abs=1e-12)


def test_rows_met_exactly_by_a_mixture_are_feasible_from_an_infeasible_start():
    """Two members whose rows cancel in their half-half mixture (least violation exactly 0, the
    limit): the priced LP finds the mixture although its start alone violates the rows."""
    rng = np.random.default_rng(1)
    T = 300
    G = np.abs(rng.normal(1.0, 0.1, (2, T)))  # every member violates both rows ...
    G[:, 7], G[:, 11] = [0.5, -0.5], [-0.5, 0.5]  # ... but these two, mixed half and half, meet them
    psi = rng.uniform(size=T)
    start = np.zeros(T, bool)
    start[:5] = True
    res = _members_lp(psi, G, 0.0, start)
    assert res.status == 0
    assert res.x[7] == pytest.approx(0.5) and res.x[11] == pytest.approx(0.5)
    assert psi @ res.x == pytest.approx(psi @ _members_lp(psi, G, 0.0).x, abs=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_priced_epigraph_lp_with_pieces_and_rows_is_the_full_one(seed):
    """The min-max re-fit (pieces and constraint rows) priced from a few columns has the full
    LP's value; from a start that alone violates the rows it falls back to the full LP."""
    from goalfit.methods.plugin._common import epigraph_lp

    rng = np.random.default_rng(seed)
    T, P, K = 400, 4, 6
    M = rng.uniform(0.0, 1.0, (P, T))
    consts = rng.uniform(-0.1, 0.1, P)
    G = rng.normal(0.2, 0.5, (K, T))
    full = epigraph_lp(M, consts, G, 0.05)
    assert full.status == 0
    for start_cols in (np.argsort(G.max(axis=0))[:20], np.argsort(-G.min(axis=0))[:3]):
        start = np.zeros(T, bool)
        start[start_cols] = True
        res = epigraph_lp(M, consts, G, 0.05, start)
        assert res.status == 0 and res.x.shape == (T + 1,)
        assert res.x[-1] == pytest.approx(full.x[-1], abs=1e-9)
        w = res.x[:T]
        assert w.sum() == pytest.approx(1.0) and (G @ w).max() <= 0.05 + 1e-9
        assert (M @ w + consts).max() == pytest.approx(full.x[-1], abs=1e-9)


def _parity_rows(k, J, rng):
    """``J`` blocks of all ordered pairs of ``k`` rates with disjoint supports, one other row."""
    D = J * k + 2
    rates = np.zeros((J * k, D))
    rates[np.arange(J * k), np.arange(J * k)] = rng.uniform(0.2, 1.0, J * k)
    A = [rates[j * k + a] - rates[j * k + c] for j in range(J) for a in range(k) for c in range(k) if a != c]
    A = np.array(A + [rng.normal(size=D)])
    return A, np.r_[np.full(len(A) - 1, 0.05), 0.5]


@pytest.mark.parametrize("seed", range(6))
def test_parity_blocks_as_2k_rows_give_the_pairwise_lp_and_its_duals(seed):
    """highs_linprog(blocks=...) states each block of k(k-1) pairwise rows as 2k rows around a
    free variable: the pairwise LP's optimum, a point meeting every pairwise row, and duals for
    the pairwise rows (a flow between the rates) that are dual feasible with the LP's value, on
    the members' LP, the elastic master of column generation and the epigraph LP."""
    from goalfit.methods.plugin._common import epigraph_lp
    from goalfit.methods.plugin.lp import highs_linprog, parity_blocks

    rng = np.random.default_rng(seed)
    k, J, T = 3 + seed % 4, 1 + seed % 3, 40
    A, b = _parity_rows(k, J, rng)
    kept, blocks = parity_blocks(A, b)
    assert kept.tolist() == [len(A) - 1] and len(blocks) == J and all(P.shape == (k, k) for P in blocks)
    X = rng.uniform(0.0, 1.0, (T, A.shape[1]))
    X[0] = 0.0  # a member meeting every row: the LP is feasible
    G = (X @ A.T - b).T  # (rows, T): each row's value at each member, as prune's
    psi = rng.normal(size=T)
    for limit in (0.0, 0.02):
        kw = dict(A_ub=G, b_ub=np.full(len(G), limit), A_eq=np.ones((1, T)), b_eq=[1.0])
        ref, got = highs_linprog(psi, **kw), highs_linprog(psi, **kw, blocks=blocks)
        assert got.status == ref.status == 0
        assert got.fun == pytest.approx(ref.fun, abs=1e-9) and len(got.x) == T
        assert (G @ got.x).max() <= limit + 1e-9 and got.x.sum() == pytest.approx(1.0)
        y, y0 = got.ineqlin.marginals, got.eqlin.marginals[0]
        assert y.max() <= 0.0 and (psi - y @ G - y0).min() >= -1e-8  # dual feasible
        assert limit * y.sum() + y0 == pytest.approx(ref.fun, abs=1e-8)  # with the LP's value
    # the elastic master: a slack column in every row (E), as column generation's
    A2, c2 = np.hstack([G, -np.ones((len(G), 1))]), np.r_[psi, 1e3]
    kw = dict(A_ub=A2, b_ub=np.zeros(len(G)), A_eq=np.r_[np.ones(T), 0.0][None], b_eq=[1.0])
    ref, got = highs_linprog(c2, **kw), highs_linprog(c2, **kw, blocks=blocks)
    assert got.fun == pytest.approx(ref.fun, rel=1e-9)
    reduced = c2 - got.ineqlin.marginals @ A2 - got.eqlin.marginals[0] * kw["A_eq"][0]
    assert reduced.min() >= -1e-7
    # the rows as an epigraph's pieces (the least violation): the same largest row
    full = epigraph_lp(G, np.zeros(len(G)), np.zeros((0, T)))
    banded = epigraph_lp(G, np.zeros(len(G)), np.zeros((0, T)), blocks=blocks)
    assert banded.x[-1] == pytest.approx(full.x[-1], abs=1e-9)
    assert (G @ banded.x[:T]).max() == pytest.approx(full.x[-1], abs=1e-9)


def _many_groups(n=3000, n_classes=3, n_groups=12, seed=3):
    """Probabilities, labels and groups of ``n`` rows: Dirichlet scores leaning to the true class."""
    r = np.random.default_rng(seed)
    g, y = r.integers(0, n_groups, n), r.integers(0, n_classes, n)
    P = r.dirichlet(np.ones(n_classes), n)
    P[np.arange(n), y] += 0.6
    return P / P.sum(axis=1, keepdims=True), y, g


def test_many_groups_fit_as_without_the_blocks(monkeypatch):
    """Demographic parity over 12 groups (396 pairwise rows): column generation, the pruning LP,
    the checks of ConGDA and min-max recall's epigraph LP reach the same objectives with the
    blocks as 2k rows as with the rows as compiled."""
    import importlib
    import warnings

    import goalfit as gf
    import goalfit.methods.plugin._common as common

    cg = importlib.import_module("goalfit.methods.plugin.column_generation")  # the package names the function

    K = 3
    P, y, g = _many_groups()
    cons = [gf.demographic_parity_difference("g") <= 0.05]

    def fit(method, objective):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = gf.GoalClassifier("precomputed", objective=objective, constraints=cons, method=method,
                                  method_params={"max_iter": 300} if method == "con_gda" else None)
            return m.fit(P, y, sensitive_features={"g": g})

    # min-max recall: its epigraph LP puts the objective's pieces before the rows (row_blocks' offset)
    cases = [("column_generation", "error"), ("con_gda", "hmean"), ("con_gda", "minmax_recall")]
    banded = [fit(*c) for c in cases]
    problem = banded[0].problem_
    assert len(common.row_blocks(problem)) == K
    shifted = common.row_blocks(problem, 7)  # rows after 7 others: the diagonal stays unused
    assert all((np.diag(B) == -1).all() and B[0, 1] == Q[0, 1] + 7 for B, Q in zip(shifted, common.row_blocks(problem)))
    monkeypatch.setattr(common, "row_blocks", lambda problem, offset=0: [])
    monkeypatch.setattr(cg, "row_blocks", lambda problem, offset=0: [])
    for (method, _), est, ref in zip(cases, banded, [fit(*c) for c in cases]):
        assert est.result_.feasible and ref.result_.feasible
        C, C_ref = est.result_.confusion, ref.result_.confusion
        value, ref_value = est.problem_.objective.value(C), ref.problem_.objective.value(C_ref)
        assert value == pytest.approx(ref_value, abs=1e-9 if method == "column_generation" else 2e-3)
        assert est.problem_.max_violation(C) <= 1e-9


def test_a_block_whose_rows_are_not_pairwise_differences_stays_rows():
    """blocks= names rows that must be every ordered pair of rates (a stale block, e.g. after one
    row's coefficients changed): rows of another form are solved as given, never rewritten."""
    from goalfit.methods.plugin.lp import banded_rows, highs_linprog, parity_blocks

    rng = np.random.default_rng(4)
    A, b = _parity_rows(5, 1, rng)
    _, blocks = parity_blocks(A, b)
    A = A.copy()
    A[blocks[0][2, 3]] *= 0.5  # one pair's row no longer r_2 - r_3
    T = 30
    X = rng.uniform(0.0, 1.0, (T, A.shape[1]))
    X[0] = 0.0
    G = (X @ A.T - b).T
    assert banded_rows(G, np.zeros(len(G)), blocks)[3] == []
    psi = rng.normal(size=T)
    kw = dict(A_ub=G, b_ub=np.zeros(len(G)), A_eq=np.ones((1, T)), b_eq=[1.0])
    assert highs_linprog(psi, **kw, blocks=blocks).fun == pytest.approx(highs_linprog(psi, **kw).fun, abs=1e-12)


def test_mixture_program_with_banded_blocks_is_the_pairwise_program(monkeypatch):
    """SLSQP's program over members (the polish's master, the final mixture) takes the parity
    blocks as 2k rows around one free variable each: over 12 groups it reaches the objective of
    the program on the pairwise rows, meets every pairwise row, and its multipliers come back one
    per pairwise row, non-negative, on rows it binds."""
    import importlib

    import pandas as pd

    import goalfit as gf
    from goalfit.confusion import CellEncoder, ConfusionSpace
    from goalfit.methods.plugin import PluginOracle

    mixture = importlib.import_module("goalfit.methods.plugin.mixture")
    K = 3
    P, y, g = _many_groups()
    r = np.random.default_rng(3)
    enc = CellEncoder()
    cells = enc.fit_transform(pd.Series(g, name="g"))
    space = ConfusionSpace.from_codes(y, cells, np.arange(K), enc.cells_, None)
    problem = gf.Problem("hmean", [gf.demographic_parity_difference() <= 0.05]).compile(space)
    oracle = PluginOracle(P, y, cells, space)
    # 30 plug-in rules of random costs, and the constant rules (parity 0): a feasible pool
    costs = [r.normal(size=space.shape) for _ in range(30)] + [np.where(np.arange(K) == j, -1.0, 0.0) * np.ones(space.shape)
                                                               for j in range(K)]
    members, Cs = zip(*(oracle(c) for c in costs))
    members, Cs = list(members), np.asarray(Cs)
    banded = mixture.master_program(problem, members, Cs, max_members=len(members))
    monkeypatch.setattr(mixture, "row_blocks", lambda problem, offset=0: [])
    pairwise = mixture.master_program(problem, members, Cs, max_members=len(members))
    C = np.tensordot(banded.weights, banded.confusions, axes=1)
    ref = np.tensordot(pairwise.weights, pairwise.confusions, axes=1)
    assert problem.objective.value(C) == pytest.approx(problem.objective.value(ref), abs=1e-6)
    assert banded.feasible and problem.max_violation(C) <= 1e-9
    mu = banded.row_multipliers
    assert mu is not None and mu.shape == (problem.A.shape[0],) and mu.min() >= 0.0 and mu.max() > 0.0
    slack = problem.b - problem.A @ C.ravel()
    assert float(mu @ slack) <= 1e-6 * float(mu.sum())  # multipliers only on binding rows


@pytest.mark.parametrize("objective", ["error", "minmax_recall", "hmean"])
def test_binary_hulls_over_many_groups_fit_as_without_the_blocks(objective, monkeypatch):
    """Binary goals over the cells' ROC hulls (their LP, the min-max epigraph after its pieces and
    the hulls' facets, SLSQP with the facets joining) take DP over 12 groups as 2k rows: the same
    optimum as with the 132 pairwise rows."""
    import importlib
    import warnings

    import goalfit as gf

    r = np.random.default_rng(6)
    n, G = 6000, 12
    g, y = r.integers(0, G, n), r.integers(0, 2, n)
    P = r.dirichlet(np.ones(2), n)
    P[np.arange(n), y] += 0.8 + 0.4 * (g % 3 == 0)
    P /= P.sum(axis=1, keepdims=True)

    def fit():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return gf.GoalClassifier("precomputed", objective=objective,
                                     constraints=[gf.demographic_parity_difference("g") <= 0.05]).fit(
                P, y, sensitive_features={"g": g})

    banded = fit()
    assert "ROC hulls" in banded.result_.message
    for name in ("_common", "binary_hull", "mixture", "column_generation"):
        monkeypatch.setattr(importlib.import_module(f"goalfit.methods.plugin.{name}"), "row_blocks",
                            lambda problem, offset=0: [], raising=False)
    ref = fit()
    C, C_ref = banded.result_.confusion, ref.result_.confusion
    assert banded.problem_.objective.value(C) == pytest.approx(ref.problem_.objective.value(C_ref), abs=1e-9)
    assert banded.problem_.max_violation(C) <= 1e-9
