"""Ye & Xie's fairness measure ``F(z)`` built from compiled goals (any linear rate goal).

Ye & Xie (arXiv 2012.12356) write every goal as a function of one binary vector ``z``,
``z_i = 1`` meaning "example i counts as correctly classified" (§2, Table 3): the accuracy
term ``A(z, te - u)`` of Eq. (1) is linear in ``z`` and each fairness measure is the absolute
value of an affine function of ``z``. The same holds for **every linear rate goal** of
:mod:`goalfit.goals`: a rate goal is a linear function of the confusion tensor, and with the
classifier's correctness pattern ``z`` the confusion tensor is linear in ``z``. This module
builds that form from a compiled problem:

* the objective: ``objective(z) = const - reward @ z`` with ``reward_i >= 0`` the objective's
  decrease when example i is classified correctly (``1/N`` for the error: the ``1/N`` of
  Eq. 12; ``1 / (2 N_y)`` for the balanced error: the class weighting of Eq. 35);
* each constraint row: ``row_r(z) = kappa_r + alpha_r @ z <= 0`` (the bound moved left);
* the measure ``F(z) = sum_c max(0, max_{r in c} row_r(z))``: for each user constraint ``c``
  the amount by which the selection violates it, in rate units. For a difference disparity
  ``D(z) <= 0`` between two groups it is the paper's ``|D(z)|`` (Table 3): OMR is
  ``error_rate_difference``, FPR ``false_positive_rate_difference``, equal opportunity
  ``equal_opportunity_difference``, demographic parity ``demographic_parity_difference``;
  ``1 - F1`` (Eq. 34a) is the ratio objective :func:`goalfit.goals.f1`.

For a binary problem the weights come from :func:`goalfit.goals.compile_rate_program` (the
non-negative weights ``a`` / ``c`` of predicting positive / negative): a positive example is
right when predicted positive, so its term ``a p + c (1 - p)`` is ``c + (a - c) z``; a negative
one is right when predicted negative, ``a + (c - a) z``. For a multiclass problem every goal
must depend on correctness only (all wrong predictions of a (cell, class) weigh the same, as in
the multiclass error and its group disparities, Eq. 27); the weights are read from the compiled
``A, b`` directly.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ...fit import UnsupportedGoal
from ...goals import compile_rate_program
from .framework import check_binary_pm1, f1_loss_value, measure_form, selection_costs, step_weights

__all__ = ["SelectionMeasure", "check_selection_goals", "is_f1_objective", "FORMS", "ZTOL"]

#: Slack (in units of the smallest non-zero ``|alpha_i|``, one example's weight) within which a
#: selection counts as meeting a row in the exact z-steps.
ZTOL = 1e-9

_COEF_TOL = 1e-12
#: The two forms of the goals in the z-steps (Ye & Xie §3: a penalty ``rho F(z)`` or a constraint).
FORMS = ("constraint", "penalty")


@dataclass
class SelectionMeasure:
    """Goals as functions of the selection ``z`` (Ye & Xie's ``A`` and ``F``, generalised).

    Attributes
    ----------
    reward : ndarray of shape (n,), non-negative
        Weight of example i being right in the accuracy term: the selection cost of
        example i is ``reward_i (u_i - t)`` (margins) or ``reward_i (t - u_i)`` (scores), the
        ``1/N`` of Eq. 12 generalised.
    alpha : ndarray of shape (m, n)
        Constraint rows ``row_r(z) = kappa_r + alpha_r @ z`` (rate units).
    kappa : ndarray of shape (m,)
    row_group : ndarray of int, shape (m,)
        The constraint (index into ``names``) of each row.
    bounds : ndarray of shape (n_constraints,)
        Level each constraint's rows must stay below in every z-step (``row_r(z) <= bound``):
        0 in the constraint form, NaN where the constraint is only penalized.
    names : list of str
        One name per constraint.
    rho : float
        Penalty weight of ``F(z)``.
    const : float
        Objective constant: ``objective(z) = const - reward @ z`` (for linear objectives).
    f1_labels : ndarray of shape (n,) with values in {-1, +1}, or None
        When set, ``F(z)`` also holds ``1 - F1(z)`` (Eq. 34a) of these labels (GSVM-F1, Eq. 35).
    f1_bound : float
        ``1 - F1(z) <= f1_bound`` is enforced (NaN: not).
    named : tuple or None
        ``(measure, y, g, epsilon)`` for one of the paper's named measures
        (:meth:`from_named`), so the z-steps can run Alg. 1 / the unified solver / Alg. 6.
    """

    reward: np.ndarray
    alpha: np.ndarray
    kappa: np.ndarray
    row_group: np.ndarray
    bounds: np.ndarray
    names: list
    rho: float = 0.0
    const: float = 0.0
    f1_labels: np.ndarray | None = None
    f1_bound: float = float("nan")
    named: tuple | None = None

    # ------------------------------------------------------------------ sizes
    @property
    def n(self) -> int:
        return len(self.reward)

    @property
    def n_rows(self) -> int:
        return len(self.kappa)

    @property
    def n_constraints(self) -> int:
        return len(self.names)

    @property
    def enforced(self) -> np.ndarray:
        """Per row, whether the z-steps enforce it, shape (m,) of bool."""
        return ~np.isnan(self.bounds[self.row_group]) if self.n_rows else np.zeros(0, bool)

    # ------------------------------------------------------------------ values
    def rows(self, z) -> np.ndarray:
        """``row_r(z)``, shape (m,) (or (k, m) for a stack of selections of shape (k, n))."""
        Z = np.asarray(z, float)
        return Z @ self.alpha.T + self.kappa

    def violations(self, z) -> np.ndarray:
        """Per constraint ``max(0, max_{r in c} row_r(z))``, shape (n_constraints,) (or (k, ...));
        values within :meth:`tolerance` (float rounding of the rows) count as 0."""
        R = np.atleast_2d(self.rows(z))
        out = np.zeros((R.shape[0], self.n_constraints))
        for c in range(self.n_constraints):
            sel = self.row_group == c
            if sel.any():
                out[:, c] = np.maximum(R[:, sel].max(axis=1), 0.0)
        out[out <= self.tolerance()] = 0.0
        return out[0] if np.ndim(z) == 1 else out

    def fairness(self, z):
        """``F(z)``: the summed violations plus ``1 - F1(z)`` when set (float, or (k,) for a stack)."""
        Z = np.asarray(z, float)
        F = np.atleast_2d(self.violations(Z)).sum(axis=1) if self.n_constraints else np.zeros(
            len(np.atleast_2d(Z)))
        if self.f1_labels is not None:
            F = F + np.array([f1_loss_value(zz, self.f1_labels) for zz in np.atleast_2d(Z)])
        return float(F[0]) if Z.ndim == 1 else F

    def feasible(self, z, tol: float | None = None):
        """Whether ``z`` meets every enforced row (and the F1 bound), bool (or (k,) of bool)."""
        Z = np.atleast_2d(np.asarray(z, float))
        tol = self.tolerance() if tol is None else tol
        ok = np.ones(len(Z), bool)
        enf = self.enforced
        if enf.any():
            lim = self.bounds[self.row_group[enf]]
            ok &= np.all(Z @ self.alpha[enf].T + self.kappa[enf] <= lim + tol, axis=1)
        if self.f1_labels is not None and not np.isnan(self.f1_bound):
            ok &= np.array([f1_loss_value(zz, self.f1_labels) <= self.f1_bound + 1e-12 for zz in Z])
        return bool(ok[0]) if np.ndim(z) == 1 else ok

    def tolerance(self) -> float:
        """Slack of "meets a row": :data:`ZTOL` times the smallest non-zero ``|alpha|``."""
        a = np.abs(self.alpha[self.alpha != 0]) if self.n_rows else np.zeros(0)
        return ZTOL * (float(a.min()) if a.size else 1.0)

    def objective(self, z) -> float:
        """The (linear) objective of the goals if the correctness pattern were ``z``."""
        return float(self.const - self.reward @ np.asarray(z, float))

    def value(self, costs, z) -> float:
        """The z-step objective ``costs @ z + rho F(z)``."""
        return float(np.asarray(costs, float) @ np.asarray(z, float) + self.rho * self.fairness(z))

    def costs(self, u, t: float, kind: str = "margin") -> np.ndarray:
        """Selection costs ``reward * (u - t)`` (margins) or ``reward * (t - u)`` (scores)."""
        u = np.asarray(u, float)
        if not np.isfinite(u).all():
            raise ValueError("outcomes u contain NaN or infinite values")
        if kind == "margin":
            return self.reward * (u - t)
        if kind == "score":
            return self.reward * (t - u)
        raise ValueError(f"kind must be 'margin' or 'score', got {kind!r}")

    def step_weights(self, z) -> np.ndarray:
        """w-step weights ``N reward_i z_i``: a learner minimizing ``(1/N) sum_i weight_i loss_i``
        then minimizes the accuracy term ``sum_i reward_i z_i loss_i`` (Eq. 12 / 35)."""
        if self.named is not None:  # the paper's own weights (z, or z N / N+- for GSVM-F1)
            return step_weights(z, self.named[1], self.named[0])
        return np.asarray(z, float) * self.reward * self.n

    def with_form(self, form: str, rho: float | None = None) -> "SelectionMeasure":
        """The same goals in the ``"constraint"`` form (rows enforced at 0) or the ``"penalty"``
        form (no row enforced; ``rho F(z)`` only)."""
        if form not in FORMS:
            raise ValueError(f"form must be one of {list(FORMS)}, got {form!r}")
        bounds = np.zeros(self.n_constraints) if form == "constraint" else np.full(self.n_constraints, np.nan)
        return replace(self, bounds=bounds, rho=self.rho if rho is None else float(rho), named=None)

    # ------------------------------------------------------------------ structure
    def structure(self, rel_tol: float = 1e-9):
        """The form the exact ``O(N log N)`` z-step needs, or None.

        It applies when at most one constraint is present and its rows are one affine form
        ``kappa + a @ z`` or a +/- pair ``kappa_1 + a @ z``, ``kappa_2 - a @ z`` (a difference
        bounded on both sides), and ``|a_i|`` takes at most two non-zero values (up to
        ``rel_tol``): then ``a @ z = mu_1 P + mu_2 Q`` with integer signed counts ``P, Q`` over
        two blocks (notes on Ye & Xie §3.7).

        Returns
        -------
        dict or None
            ``a`` (n,), ``kappas`` and ``signs`` (one per row: +1 for ``kappa + a z``, -1 for
            ``kappa - a z``), ``bound`` (NaN: not enforced), ``mags`` (the one or two
            magnitudes), ``block`` (n,) of int (-1: ``a_i = 0``, else the magnitude's index).
        """
        if self.f1_labels is not None or self.n_constraints > 1:
            return None
        if self.n_constraints == 0 or self.n_rows == 0:
            return {"a": np.zeros(self.n), "kappas": np.zeros(0), "signs": np.zeros(0), "bound": np.nan,
                    "mags": np.zeros(0), "block": np.full(self.n, -1)}
        A = self.alpha
        scale = float(np.abs(A).max()) or 1.0
        tol = rel_tol * scale
        a = A[0]
        if self.n_rows == 1:
            signs = np.array([1.0])
        elif self.n_rows == 2 and np.all(np.abs(A[1] + a) <= tol):
            signs = np.array([1.0, -1.0])
        else:
            return None
        absa = np.abs(a)
        nz = absa > tol
        mags: list[float] = []
        block = np.full(self.n, -1)
        for v in np.unique(absa[nz]):
            if mags and v - mags[-1] <= tol:
                continue
            mags.append(float(v))
        if len(mags) > 2:
            return None
        for k, v in enumerate(mags):
            block[nz & (np.abs(absa - v) <= tol)] = k
        a = np.where(block >= 0, np.sign(a) * np.array(mags + [0.0])[block], 0.0)
        return {"a": a, "kappas": self.kappa.astype(float).copy(), "signs": signs,
                "bound": float(self.bounds[0]), "mags": np.asarray(mags), "block": block}

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_named(cls, measure: str, y, g=None, *, rho: float = 0.0, epsilon: float | None = None,
                   class_weighted: bool | None = None) -> "SelectionMeasure":
        """One of the paper's named measures (Table 3) on labels and groups in {-1, +1}.

        ``F(z) = |alpha @ z + kappa|`` (:func:`~.framework.measure_form`) as the +/- pair of
        rows of one constraint, enforced at ``epsilon`` when given (the constraint form of §3);
        ``"f1"``: ``1 - F1(z)`` (Eq. 34a) with the class-weighted accuracy term of Eq. 35.
        ``reward`` is ``1/N`` (Eq. 12), or ``1/N+-`` for ``"f1"`` or ``class_weighted``.
        """
        y = check_binary_pm1(y, "y")
        n = len(y)
        cw = (measure == "f1") if class_weighted is None else bool(class_weighted)
        reward = selection_costs(np.ones(n), 0.0, y, class_weighted=cw)
        eps = float("nan") if epsilon is None else float(epsilon)
        if measure == "f1":
            if not (y == 1).any():
                raise ValueError("1 - F1 needs at least one positive point (y = +1)")
            return cls(reward, np.zeros((0, n)), np.zeros(0), np.zeros(0, int), np.zeros(0), [], float(rho), 0.0,
                       y, eps, ("f1", y, None, epsilon))
        form = measure_form(measure, y, g)
        al, ka = form.coef()
        return cls(reward, np.vstack([al, -al]), np.array([ka, -ka]), np.zeros(2, int), np.array([eps]),
                   [measure], float(rho), float(reward.sum()), None, float("nan"),
                   (measure, y, check_binary_pm1(g, "sensitive group g"), epsilon))

    @classmethod
    def from_compiled(cls, compiled, y_codes, cells, sample_weight=None, *, form: str = "constraint",
                      rho: float = 1.0) -> "SelectionMeasure":
        """The measure of a compiled problem on its training sample.

        Parameters
        ----------
        compiled : CompiledProblem
            Goals bound to the sample's space (:meth:`goalfit.goals.Problem.compile`).
        y_codes : ndarray of int, shape (n,)
            Class codes (for a binary problem code 1 is the positive class).
        cells : ndarray of int, shape (n,)
        sample_weight : ndarray of shape (n,), optional
        form : {"constraint", "penalty"}
            ``"constraint"``: every row is enforced (``row_r(z) <= 0``) in every z-step;
            ``"penalty"``: only ``rho F(z)`` (Eq. 12 / 22 / 24 / 26 with the goal's bound).
        rho : float >= 0

        Returns
        -------
        SelectionMeasure

        Raises
        ------
        UnsupportedGoal
            See :func:`check_selection_goals`; also an F1 objective with sample weights.
        """
        check_selection_goals(compiled, "subdata")
        if form not in FORMS:
            raise ValueError(f"form must be one of {list(FORMS)}, got {form!r}")
        y_codes = np.asarray(y_codes, dtype=np.intp)
        cells = np.asarray(cells, dtype=np.intp)
        n = len(y_codes)
        w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, float)
        names = [cc.name for cc in compiled.constraints]
        row_group = np.zeros(compiled.n_rows, int)
        for j, cc in enumerate(compiled.constraints):
            row_group[cc.rows] = j
        f1_labels = None
        if is_f1_objective(compiled):
            if sample_weight is not None and not np.allclose(w, w[0]):
                raise UnsupportedGoal("the f1 objective (GSVM-F1, Ye & Xie Eq. 35) counts examples: sample "
                                      "weights are not supported with it")
            f1_labels = np.where(y_codes == 1, 1, -1)
            reward = selection_costs(np.ones(n), 0.0, f1_labels, class_weighted=True)
            const = float(reward.sum())
            alpha, kappa = np.zeros((0, n)), np.zeros(0)
        elif compiled.space.n_classes == 2:
            prog = compile_rate_program(compiled, y_codes, cells, sample_weight)
            pos = y_codes == 1
            reward = -np.where(pos, prog.a0 - prog.c0, prog.c0 - prog.a0)
            const = float(prog.k0 + prog.c0[pos].sum() + prog.a0[~pos].sum())
            alpha = np.where(pos[None, :], prog.A - prog.C, prog.C - prog.A)
            kappa = prog.k + prog.C[:, pos].sum(axis=1) + prog.A[:, ~pos].sum(axis=1)
        else:
            s = w / w.sum()
            K = compiled.space.n_classes
            wrong = (y_codes + 1) % K
            coef = compiled.objective.coef
            reward = s * (coef[cells, y_codes, wrong] - coef[cells, y_codes, y_codes])
            const = float(compiled.objective.const + s @ coef[cells, y_codes, wrong])
            rows = []
            for r in range(compiled.n_rows):
                Ar = compiled.A[r].reshape(compiled.space.shape)
                rows.append((s * (Ar[cells, y_codes, y_codes] - Ar[cells, y_codes, wrong]),
                             float(s @ Ar[cells, y_codes, wrong] - compiled.b[r])))
            alpha = np.array([r[0] for r in rows]) if rows else np.zeros((0, n))
            kappa = np.array([r[1] for r in rows]) if rows else np.zeros(0)
        reward = np.maximum(reward, 0.0)  # non-negative by check_selection_goals (rounding only)
        bounds = np.zeros(len(names)) if form == "constraint" else np.full(len(names), np.nan)
        return cls(reward, np.asarray(alpha, float), np.asarray(kappa, float), row_group, bounds, names,
                   float(rho), const, f1_labels, float("nan"), None)


def is_f1_objective(compiled) -> bool:
    """Whether the compiled objective is ``1 - F1`` of the positive class over every example
    (:func:`goalfit.goals.f1` on a binary problem): the GSVM-F1 model (Ye & Xie Eq. 35, Alg. 6)."""
    obj = compiled.objective
    if obj.kind != "ratio" or compiled.space.n_classes != 2 or not hasattr(obj, "num"):
        return False
    G = compiled.space.n_cells
    fn = np.zeros((G, 2, 2)); fn[:, 1, 0] = 1
    fp = np.zeros((G, 2, 2)); fp[:, 0, 1] = 1
    tp = np.zeros((G, 2, 2)); tp[:, 1, 1] = 1
    num, den = obj.num, obj.den
    return (np.allclose(num.coef, fn + fp) and np.allclose(den.coef, 2 * tp + fn + fp)
            and abs(num.const) < _COEF_TOL and abs(den.const) < _COEF_TOL)


def _correctness_only(coef, what: str) -> None:
    """Refuse a multiclass linear form whose value depends on which wrong class is predicted."""
    K = coef.shape[-1]
    for k in range(K):
        off = np.delete(coef[:, k, :], k, axis=1)
        if not np.allclose(off, off[:, :1], atol=_COEF_TOL):
            raise UnsupportedGoal(f"fair subdata selection needs multiclass goals that depend only on whether an "
                                  f"example is classified correctly (the error and its group disparities, Ye & Xie "
                                  f"Eq. 27); {what} weighs the wrong classes differently")


def check_selection_goals(compiled, method: str) -> None:
    """Refuse goals the selection ``z`` cannot express, with a one-line reason.

    Supported: a linear objective whose weight of being right is non-negative on every example
    (the error, the balanced error, class or group error rates, weighted sums of them), or
    ``1 - F1`` of the positive class (binary, GSVM-F1); polyhedral constraints (any linear
    rate goal; ratio goals multiplied out). Multiclass problems: goals that depend on
    correctness only (Eq. 27).

    Raises
    ------
    UnsupportedGoal
    """
    space = compiled.space
    K = space.n_classes
    obj = compiled.objective
    if is_f1_objective(compiled):
        if compiled.constraints:
            raise UnsupportedGoal(f"method {method!r}: the f1 objective (GSVM-F1, Ye & Xie Eq. 35, Alg. 6) takes no "
                                  "constraints; state the F1 goal as a constraint f1() >= the F1 you need instead")
        return
    if obj.kind != "linear":
        raise UnsupportedGoal(f"method {method!r} needs a linear objective (an error rate, a weighted sum of "
                              f"rates) or f1(); {obj.name!r} is {obj.kind}")
    for c in compiled.constraints:
        if c.rows is None:
            raise UnsupportedGoal(f"method {method!r} needs linear constraints; {c.name!r} has no polyhedral form")
    coef = np.asarray(obj.coef, float).reshape(space.shape)
    if K > 2:
        _correctness_only(coef, f"the objective {obj.name!r}")
        for c in compiled.constraints:
            for r in range(c.rows.start, c.rows.stop):
                _correctness_only(compiled.A[r].reshape(space.shape), f"the constraint {c.name!r}")
    ks = np.arange(K)
    right, wrong = coef[:, ks, ks], coef[:, ks, (ks + 1) % K]  # (n_cells, K); wrong classes weigh alike
    if np.any(wrong - right < -_COEF_TOL):
        raise UnsupportedGoal(f"method {method!r} needs an objective that does not reward mistakes (Ye & Xie's "
                              f"accuracy term, Eq. 1: a non-negative weight of being right on every example); "
                              f"{obj.name!r} decreases when some examples are misclassified")
