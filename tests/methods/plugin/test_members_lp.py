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
