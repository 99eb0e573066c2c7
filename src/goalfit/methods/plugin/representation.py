"""Succinct representations: the few linear features of the confusion tensor a problem uses.

Narasimhan et al. (JMLR 2024, §7.2, Def. 24) optimize over "generalized confusion vectors"
``Phi(C)`` instead of the full ``n^2``-dimensional ``C`` (e.g. the normalized diagonal for H-mean,
plus column sums for coverage), which is what makes the ellipsoid methods practical. Here the
representation is derived, not hand-written: every bound goal exposes its features
(``f(C) = g(U vec(C))``); the objective's and the constraints' feature rows are stacked and a
linearly independent subset ``B`` (rank-revealing QR) becomes the coordinates
``xi = B vec(C)``. The slack variable ``xi`` ranges over the box of each coordinate's exact range
on the polytope of tensors with the sample's row masses (a superset of the achievable set, as
the paper's ``[0, 1]^d``).
"""
from __future__ import annotations

import numpy as np
from scipy.linalg import qr
from scipy.optimize import linprog, minimize


class FeatureSpace:
    """Coordinates ``xi = B vec(C)`` in which a compiled problem's goals are functions.

    Parameters
    ----------
    problem : CompiledProblem
    with_constraints : bool
        Include the constraints' features (ConEllipsoid) or not (ellipsoid).

    Attributes
    ----------
    B : ndarray of shape (r, D)
        Basis rows (a subset of the goals' feature rows).
    dim : int
        ``r``.
    lo, hi : ndarray of shape (r,)
        Exact range of each coordinate over tensors with the sample's row masses.
    n_constraints : int
        Number of scalar constraint functions ``phi_k(xi) <= 0`` (polyhedral rows, then
        nonlinear constraints).

    Raises
    ------
    ValueError
        If the objective (or a constraint) does not expose features, or the objective is not
        convex.
    """

    def __init__(self, problem, with_constraints: bool = True):
        self.problem = problem
        space = problem.space
        obj = problem.objective.features()
        if obj.kind not in ("linear", "convex"):
            raise ValueError(f"the ellipsoid methods need a convex objective; {problem.objective.name} is {obj.kind}")
        blocks = [obj.U]
        cons = []
        if with_constraints:
            if problem.A is not None:
                blocks.append(problem.A)
            for cc in problem.nonlinear:
                f = cc.function.features()
                cons.append((f, cc.bound))
                blocks.append(f.U)
        U = np.vstack(blocks)
        scale = np.abs(U).max(axis=1, keepdims=True)
        scale[scale == 0] = 1.0
        _, R, piv = qr((U / scale).T, mode="economic", pivoting=True)
        diag = np.abs(np.diag(R))
        rank = int((diag > 1e-10 * max(diag.max(), 1e-300)).sum()) if diag.size else 0
        keep = np.sort(piv[:rank])
        self.B = U[keep]
        # every feature row as a combination of the basis rows: U = M @ B
        M, *_ = np.linalg.lstsq(self.B.T, U.T, rcond=None)
        M = M.T
        sizes = np.cumsum([0] + [b.shape[0] for b in blocks])
        self._obj = (obj, M[: sizes[1]])
        self._A = None
        k = 1
        if with_constraints and problem.A is not None:
            self._A = (M[sizes[1]: sizes[2]], problem.b)
            k = 2
        self._nonlin = [(f, bound, M[sizes[k + i]: sizes[k + i + 1]]) for i, (f, bound) in enumerate(cons)]
        self.dim = self.B.shape[0]
        self.n_constraints = (0 if self._A is None else len(problem.b)) + len(self._nonlin)
        mass = space.row_mass[:, :, None]
        Bt = self.B.reshape((-1,) + space.shape)
        self.lo = (Bt.min(axis=3) * space.row_mass[None]).sum(axis=(1, 2))
        self.hi = (Bt.max(axis=3) * space.row_mass[None]).sum(axis=(1, 2))
        del mass
        self._xi: np.ndarray | None = None  # the last answer of argmin_xi (its next warm start)

    # -- maps ---------------------------------------------------------------------------
    def xi(self, C) -> np.ndarray:
        """Coordinates of a confusion tensor, shape (r,)."""
        return self.B @ np.asarray(C).ravel()

    def cost(self, lam) -> np.ndarray:
        """Cost tensor of the linear function ``<lam, xi(C)>`` (the adjoint ``B^T lam``)."""
        return (self.B.T @ lam).reshape(self.problem.space.shape)

    def psi(self, xi) -> float:
        f, M = self._obj
        return f.value(M @ xi)

    def psi_grad(self, xi) -> np.ndarray:
        f, M = self._obj
        return M.T @ f.gradient(M @ xi)

    def phi(self, xi) -> np.ndarray:
        """Constraint values ``phi_k(xi)`` (``<= 0`` means met), shape (n_constraints,)."""
        out = []
        if self._A is not None:
            out.append(self._A[0] @ xi - self._A[1])
        out += [np.array([f.value(M @ xi) - bound]) for f, bound, M in self._nonlin]
        return np.concatenate(out) if out else np.zeros(0)

    def phi_grad_dot(self, xi, mu) -> np.ndarray:
        """``sum_k mu_k grad phi_k(xi)``, shape (r,)."""
        g = np.zeros(self.dim)
        k = 0
        if self._A is not None:
            g += mu[: len(self._A[1])] @ self._A[0]
            k = len(self._A[1])
        for j, (f, _, M) in enumerate(self._nonlin):
            g += mu[k + j] * (M.T @ f.gradient(M @ xi))
        return g

    # -- the xi-subproblem ------------------------------------------------------------
    def argmin_xi(self, lam, mu=None) -> np.ndarray:
        """``argmin_{xi in box} psi(xi) - <lam, xi> + <mu, phi(xi)>``.

        An LP on HiGHS when ``psi`` is piecewise linear and the constraints are polyhedral
        (min-max recall, linear objectives); otherwise L-BFGS-B with the box as bounds, warm
        started from the previous solution (Narasimhan §10.2 note 4: these must be accurate).
        """
        mu = np.zeros(self.n_constraints) if mu is None else np.asarray(mu, float)
        f, M = self._obj
        lin = -np.asarray(lam, float) + self.phi_grad_dot(np.zeros(self.dim), mu) if not self._nonlin else None
        if f.pieces is not None and lin is not None:
            P, Pc = f.pieces
            Q = P @ M  # pieces as functions of xi: Q xi + Pc
            nq = Q.shape[0]
            c = np.concatenate([lin, [1.0]])
            A_ub = np.hstack([Q, -np.ones((nq, 1))])
            res = linprog(c, A_ub=A_ub, b_ub=-Pc, bounds=list(zip(self.lo, self.hi)) + [(None, None)],
                          method="highs")
            if res.status == 0:
                xi: np.ndarray = res.x[:-1]
                self._xi = xi
                return xi
        # psi may be non-differentiable on the box's faces (H-mean and G-mean where a recall is
        # 0): L-BFGS-B warm started at such a kink can stop there far from the minimum, so it
        # also starts from the box's center and the better answer is kept
        starts = [0.5 * (self.lo + self.hi)]
        if self._xi is not None:
            starts.append(np.clip(self._xi, self.lo, self.hi))

        def fun(x):
            val = self.psi(x) - lam @ x
            grad = self.psi_grad(x) - lam
            if self.n_constraints:
                val += mu @ self.phi(x)
                grad = grad + self.phi_grad_dot(x, mu)
            if not np.isfinite(val):
                # e.g. KL quantification on the face where a coverage is 0: an infinite value
                # made L-BFGS-B stop at its start; a large finite one makes its line search back off
                return 1e10, np.nan_to_num(grad)
            return val, grad

        results = [minimize(fun, x0, jac=True, method="L-BFGS-B", bounds=list(zip(self.lo, self.hi)),
                            options={"maxiter": 500, "ftol": 1e-12, "gtol": 1e-9}) for x0 in starts]
        best = min(results, key=lambda r: r.fun)  # the first of equals, as before
        # polish the free coordinates with those on a face held there: a kink on the face (a
        # recall of 0 for H-mean) misleads L-BFGS-B's model of the others
        gap = 1e-9 * (self.hi - self.lo)
        x = np.where(best.x <= self.lo + gap, self.lo, np.where(best.x >= self.hi - gap, self.hi, best.x))
        on_face = (x == self.lo) | (x == self.hi)
        if on_face.any() and not on_face.all():
            bounds = [(v, v) if f else (lo, hi) for v, f, lo, hi in zip(x, on_face, self.lo, self.hi)]
            res = minimize(fun, x, jac=True, method="L-BFGS-B", bounds=bounds,
                           options={"maxiter": 500, "ftol": 1e-12, "gtol": 1e-9})
            if res.fun < best.fun:
                best = res
        xi = best.x
        self._xi = xi
        return xi
