"""A certified feasibility phase for the ramp relaxation: the all-hinge restriction as one LP.

Every ramp rate is below its hinge bound everywhere: ``sigma(z) <= max(0, 1/2 + z)`` and
``1 - sigma(z) = sigma(-z) <= max(0, 1/2 - z)`` (Goh et al., NIPS 2016, Eq. 4-5 with the anchor
inside the ramp). A goal row ``A[j] . p + C[j] . (1 - p) + k[j] <= 0`` with non-negative weights
(the program's form) therefore holds for the ramp rates of any linear model ``z = X w + b``
meeting the convex restriction

    sum_i A[j, i] max(0, 1/2 + z_i) + C[j, i] max(0, 1/2 - z_i) + k[j] <= 0.

:func:`hinge_feasibility` minimizes the largest restricted row over ``(w, b)`` as a linear
program on HiGHS (one auxiliary variable per example and side that a row weights): a
non-positive optimum is a point that is feasible for Problem 2 (certified, whatever the MM
iterations did), a positive one says that no linear model meets the restriction (the ramp
goals may still be feasible: the restriction is sufficient, not necessary). Our construction,
not the paper's (which leaves the feasible start open).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog


def hinge_feasibility(program, X, *, fit_intercept=True):
    """Minimize the largest all-hinge row over linear models (see the module docstring).

    Parameters
    ----------
    program : RateProgram
        Rows ``A, C, k`` (shape (m, n), (m, n), (m,)), non-negative weights.
    X : ndarray or sparse matrix of shape (n, d)
    fit_intercept : bool, default True

    Returns
    -------
    (coef, intercept, value) : ndarray of shape (d,), float, float
        ``value`` is the smallest largest restricted row (<= 0: the model meets every ramp
        row). ``(None, None, inf)`` when HiGHS fails.
    """
    n, d = X.shape
    m = program.n_rows
    if m == 0:
        return np.zeros(d), 0.0, -np.inf
    Xs = sp.csr_matrix(X, dtype=float)
    pos = np.flatnonzero((program.A > 0).any(axis=0))  # examples with a weighted positive side
    neg = np.flatnonzero((program.C > 0).any(axis=0))
    nb = 1 if fit_intercept else 0
    n_t, n_u = len(pos), len(neg)
    # variables: w (d), b (nb), t (n_t), u (n_u), s (1)
    nv = d + nb + n_t + n_u + 1
    ones = lambda k: sp.csr_matrix(np.ones((k, 1)))  # noqa: E731
    blocks = []
    rhs = []
    # 1/2 + x w + b <= t  ->  x w + b - t <= -1/2
    Xp = Xs[pos]
    blocks.append(sp.hstack([Xp] + ([ones(n_t)] if nb else []) + [-sp.eye(n_t), sp.csr_matrix((n_t, n_u + 1))]))
    rhs.append(np.full(n_t, -0.5))
    # 1/2 - x w - b <= u  ->  -x w - b - u <= -1/2
    Xn = Xs[neg]
    blocks.append(sp.hstack([-Xn] + ([-ones(n_u)] if nb else []) + [sp.csr_matrix((n_u, n_t)), -sp.eye(n_u),
                                                                   sp.csr_matrix((n_u, 1))]))
    rhs.append(np.full(n_u, -0.5))
    # rows: A[j, pos] t + C[j, neg] u - s <= -k_j
    blocks.append(sp.hstack([sp.csr_matrix((m, d + nb)), sp.csr_matrix(program.A[:, pos]),
                             sp.csr_matrix(program.C[:, neg]), -ones(m)]))
    rhs.append(-np.asarray(program.k, float))
    A_ub = sp.vstack(blocks).tocsc()
    c = np.zeros(nv)
    c[-1] = 1.0
    bounds = [(None, None)] * (d + nb) + [(0, None)] * (n_t + n_u) + [(None, None)]
    res = linprog(c, A_ub=A_ub, b_ub=np.concatenate(rhs), bounds=bounds, method="highs")
    if res.status != 0:
        return None, None, np.inf
    x = res.x
    return x[:d].copy(), float(x[d]) if nb else 0.0, float(x[-1])
