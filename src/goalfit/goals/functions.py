"""Goal quantities bound to a confusion space: values and (sub)gradients over stacked tensors.

A *bound function* is a real function of a stacked confusion tensor ``C`` of shape
``(n_cells, n_classes, n_classes)`` (see :class:`goalfit.confusion.ConfusionSpace`). Each one
declares its structure, which is what the methods dispatch on (Narasimhan et al., JMLR 2024,
Table 1 and §4-5):

* ``kind == "linear"``: ``<coef, C> + const``;
* ``kind == "ratio"``: ``(<a, C> + a0) / (<b, C> + b0)`` with a positive denominator on the
  achievable set (bisection, Alg. 4);
* ``kind == "convex"`` (``smooth`` tells whether it is differentiable: Frank-Wolfe, Alg. 1);
* ``kind == "nonconvex"``: evaluation only, or heuristics.

``constraint_rows(sense, bound)`` returns an equivalent system of linear inequalities
``A @ C.ravel() <= b`` when the constraint ``f(C) <sense> bound`` is polyhedral on the achievable
set (rates with constant denominators, ratio constraints multiplied out, max-abs disparities
expanded into K linear constraints, Narasimhan §7.2), or ``None``.
"""
from __future__ import annotations

import numpy as np
from scipy.special import logsumexp, softmax


class BoundFunction:
    """Base class. Subclasses define ``value``, ``gradient`` and their structure flags."""

    kind: str = "nonconvex"
    smooth: bool = False

    def __init__(self, shape, name: str = ""):
        self.shape = tuple(shape)
        self.name = name

    def value(self, C) -> float:
        raise NotImplementedError

    def gradient(self, C) -> np.ndarray:
        raise NotImplementedError

    def constraint_rows(self, sense: str, bound: float):
        return None

    def values(self, Cs) -> np.ndarray:
        """Values at a stack of tensors, shape (T,)."""
        return np.array([self.value(C) for C in Cs])

    def features(self) -> "Features":
        """``f(C) = g(U vec(C))``: the linear features this function depends on (§7.2).

        Methods whose cost grows with the dimension (the ellipsoid) work on these features
        instead of the full confusion tensor.
        """
        raise NotImplementedError(f"{type(self).__name__} does not expose its features")


class Features:
    """A function of linear features: ``f(C) = g(U @ vec(C))``.

    Attributes
    ----------
    U : ndarray of shape (m, D)
    value, gradient : callables on ``z`` of shape (m,)
    kind, smooth : structure of ``g``
    pieces : (P, Pc) or None
        When ``g(z) = max_p (P[p] @ z + Pc[p])`` (piecewise linear), its pieces.
    """

    def __init__(self, U, value, gradient, kind, smooth, pieces=None):
        self.U = np.atleast_2d(np.asarray(U, dtype=float))
        self.value, self.gradient = value, gradient
        self.kind, self.smooth, self.pieces = kind, smooth, pieces


class LinearFunction(BoundFunction):
    """``<coef, C> + const``."""

    kind = "linear"
    smooth = True

    def __init__(self, coef, const: float = 0.0, name: str = ""):
        coef = np.asarray(coef, dtype=float)
        super().__init__(coef.shape, name)
        self.coef = coef
        self.const = float(const)

    def value(self, C) -> float:
        return float(np.vdot(self.coef, C) + self.const)

    def values(self, Cs) -> np.ndarray:
        Cs = np.asarray(Cs)
        return Cs.reshape(len(Cs), -1) @ self.coef.ravel() + self.const

    def gradient(self, C) -> np.ndarray:
        return self.coef

    def constraint_rows(self, sense, bound):
        if sense == "<=":
            return self.coef.ravel()[None, :], np.array([bound - self.const])
        return -self.coef.ravel()[None, :], np.array([self.const - bound])

    def features(self):
        c = self.const
        return Features(self.coef.ravel()[None, :], lambda z: float(z[0] + c), lambda z: np.ones(1),
                        "linear", True, (np.ones((1, 1)), np.array([c])))

    def __add__(self, other: "LinearFunction") -> "LinearFunction":
        return LinearFunction(self.coef + other.coef, self.const + other.const, self.name)

    def scale(self, c: float) -> "LinearFunction":
        return LinearFunction(c * self.coef, c * self.const, self.name)


class RatioFunction(BoundFunction):
    """``num(C) / den(C)`` for linear ``num`` and ``den`` with ``den > 0`` on the achievable set."""

    kind = "ratio"
    smooth = True

    def __init__(self, num: LinearFunction, den: LinearFunction, name: str = "", empty_value: float = 0.0):
        super().__init__(num.shape, name)
        self.num = num
        self.den = den
        self.empty_value = float(empty_value)

    def value(self, C) -> float:
        d = self.den.value(C)
        if d <= 1e-15:
            return self.empty_value
        return self.num.value(C) / d

    def gradient(self, C) -> np.ndarray:
        d = max(self.den.value(C), 1e-12)
        return (self.num.coef * d - self.num.value(C) * self.den.coef) / d**2

    def features(self):
        U = np.vstack([self.num.coef.ravel(), self.den.coef.ravel()])
        a0, b0, e = self.num.const, self.den.const, self.empty_value

        def value(z):
            d = z[1] + b0
            return e if d <= 1e-15 else float((z[0] + a0) / d)

        def gradient(z):
            d = max(z[1] + b0, 1e-12)
            return np.array([1.0 / d, -(z[0] + a0) / d**2])

        return Features(U, value, gradient, "ratio", True)

    def constraint_rows(self, sense, bound):
        # num/den <= t  <=>  num - t*den <= 0   (den > 0)
        diff = self.num + self.den.scale(-bound)
        return diff.constraint_rows(sense, 0.0)


class MaxOfLinear(BoundFunction):
    """Pointwise maximum of linear pieces (convex, piecewise linear), e.g. max-abs disparities.

    ``f(C) <= t`` is equivalent to every piece ``<= t``: the K linear constraints of
    Narasimhan et al. (JMLR 2024), Table 1 caption and §7.2.
    """

    kind = "convex"
    smooth = False

    def __init__(self, pieces, name: str = "", labels=None):
        pieces = list(pieces)
        if not pieces:
            raise ValueError(f"{name}: no pieces (empty family)")
        super().__init__(pieces[0].shape, name)
        self.coefs = np.stack([p.coef.ravel() for p in pieces])
        self.consts = np.array([p.const for p in pieces])
        self.labels = labels

    @classmethod
    def from_arrays(cls, coefs, consts, shape, name: str = "", labels=None) -> MaxOfLinear:
        """The maximum of the pieces ``coefs[p] @ vec(C) + consts[p]`` (``coefs`` of shape
        (P, D), ``consts`` of shape (P,)), without building one :class:`LinearFunction` each."""
        coefs = np.asarray(coefs, dtype=float)
        if len(coefs) == 0:
            raise ValueError(f"{name}: no pieces (empty family)")
        out = cls.__new__(cls)
        BoundFunction.__init__(out, shape, name)
        out.coefs = coefs.reshape(len(coefs), -1)
        out.consts = np.asarray(consts, dtype=float).reshape(len(coefs))
        out.labels = labels
        return out

    def piece_values(self, C) -> np.ndarray:
        return self.coefs @ np.asarray(C).ravel() + self.consts

    def value(self, C) -> float:
        return float(self.piece_values(C).max())

    def gradient(self, C) -> np.ndarray:
        k = int(np.argmax(self.piece_values(C)))
        return self.coefs[k].reshape(self.shape)

    def constraint_rows(self, sense, bound):
        if sense != "<=":
            return None
        return self.coefs.copy(), bound - self.consts

    def smoothed(self, mu: float) -> SmoothMaxOfLinear:
        """The log-sum-exp smoothing of this maximum at temperature ``mu`` (:class:`SmoothMaxOfLinear`)."""
        return SmoothMaxOfLinear(self, mu)

    def features(self):
        consts = self.consts
        P = np.eye(len(consts))

        def gradient(z):
            g = np.zeros(len(consts))
            g[int(np.argmax(z + consts))] = 1.0
            return g

        return Features(self.coefs, lambda z: float(np.max(z + consts)), gradient, "convex", False,
                        (P, consts))


class SmoothMaxOfLinear(BoundFunction):
    """Log-sum-exp smoothing of a maximum of linear pieces (Nesterov, *Smooth minimization of
    non-smooth functions*, Math. Program. 103, 2005, the entropy prox-function):
    ``f_mu(C) = mu log sum_p exp((coefs_p . vec(C) + consts_p) / mu)`` for ``C`` of the base's
    shape (a confusion tensor ``(n_cells, n_classes, n_classes)``), in the objective's units.

    Convex and smooth (its gradient, the softmax-weighted average of the pieces' coefficients,
    is ``1/mu``-Lipschitz in the pieces' values), and ``max <= f_mu <= max + mu log P`` for ``P``
    pieces. Frank-Wolfe-type methods, whose linearization of the maximum itself stalls at a
    vertex (one piece's gradient), iterate on it; the final mixture is then fitted to the true
    maximum (:func:`goalfit.methods.plugin.split_frank_wolfe`).

    Parameters
    ----------
    base : MaxOfLinear
    mu : float
        Temperature (objective units), > 0.

    Raises
    ------
    ValueError
        If ``mu`` is not positive.

    Examples
    --------
    >>> import numpy as np
    >>> f = MaxOfLinear.from_arrays(np.eye(2), np.zeros(2), (2,))
    >>> g = f.smoothed(0.01)
    >>> f.value(np.array([0.3, 0.5])), round(g.value(np.array([0.3, 0.5])), 6)
    (0.5, 0.5)
    >>> np.round(g.gradient(np.array([0.5, 0.5])), 3).tolist()
    [0.5, 0.5]
    """

    kind = "convex"
    smooth = True

    def __init__(self, base: MaxOfLinear, mu: float):
        if not mu > 0:
            raise ValueError(f"the smoothing temperature mu must be > 0, got {mu!r}")
        super().__init__(base.shape, base.name)
        self.base, self.mu = base, float(mu)

    def value(self, C) -> float:
        return float(self.mu * logsumexp(self.base.piece_values(C) / self.mu))

    def gradient(self, C) -> np.ndarray:
        return (softmax(self.base.piece_values(C) / self.mu) @ self.base.coefs).reshape(self.shape)


class FeatureFunction(BoundFunction):
    """``f(C) = g(U vec(C))`` for a function ``g`` of a few linear features.

    Parameters
    ----------
    shape : tuple
        Shape of the confusion tensor.
    U : ndarray of shape (m, D)
    value, gradient : callables on ``z`` of shape (m,)
    kind : str
    smooth : bool
    value_rows : callable, optional
        ``value`` at many feature vectors at once, ``Z`` of shape (T, m) -> (T,) (used by
        :meth:`values`; default one call of ``value`` per row).
    """

    def __init__(self, shape, U, value, gradient, *, kind: str, smooth: bool, name: str = "", value_rows=None):
        super().__init__(shape, name)
        self._features = Features(U, value, gradient, kind, smooth)
        self.kind, self.smooth = kind, smooth
        self._value_rows = value_rows

    def value(self, C) -> float:
        f = self._features
        return float(f.value(f.U @ np.asarray(C).ravel()))

    def gradient(self, C) -> np.ndarray:
        f = self._features
        return (f.U.T @ f.gradient(f.U @ np.asarray(C).ravel())).reshape(self.shape)

    def values(self, Cs) -> np.ndarray:
        """Values at a stack of tensors, shape (T,): the features of all T at once."""
        f = self._features
        Z = np.asarray(Cs, dtype=float).reshape(len(Cs), -1) @ f.U.T
        if self._value_rows is not None:
            return np.asarray(self._value_rows(Z), dtype=float)
        return np.array([f.value(z) for z in Z], dtype=float)

    def features(self):
        return self._features


class SumFunction(BoundFunction):
    """Sum of bound functions (e.g. a linear combination mixing ratio rates)."""

    def __init__(self, parts, name: str = ""):
        parts = list(parts)
        super().__init__(parts[0].shape, name)
        self.parts = parts
        kinds = {p.kind for p in parts}
        self.kind = "linear" if kinds == {"linear"} else "nonconvex"
        self.smooth = all(p.smooth for p in parts)

    def value(self, C) -> float:
        return float(sum(p.value(C) for p in self.parts))

    def gradient(self, C) -> np.ndarray:
        return sum(p.gradient(C) for p in self.parts)

    def features(self):
        fs = [p.features() for p in self.parts]
        sizes = np.cumsum([0] + [f.U.shape[0] for f in fs])
        U = np.vstack([f.U for f in fs])

        def value(z):
            return float(sum(f.value(z[a:b]) for f, a, b in zip(fs, sizes[:-1], sizes[1:])))

        def gradient(z):
            return np.concatenate([f.gradient(z[a:b]) for f, a, b in zip(fs, sizes[:-1], sizes[1:])])

        return Features(U, value, gradient, self.kind, self.smooth)
