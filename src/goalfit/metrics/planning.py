"""Sample-size planning for high-confidence goals: how many rows certify a classifier's goals.

A ``confidence=`` fit (:mod:`goalfit.fit.certification`) certifies a classifier when, for every
constraint, the one-sided confidence bound measured on the safety part lies on the right side of
the goal's bound. Whether that happens is random (the safety part is a sample); its probability
at a safety-part size ``N`` is the test's *power*. :func:`plan_certification` predicts it from
one sample of the classifier's predictions, taking the sample's values as the population's:

* every goal is a function ``h(C)`` of the confusion tensor, a max or min of ``m`` smooth pieces
  (:mod:`goalfit.metrics.intervals`); on ``N`` rows the pieces' estimate is approximately normal
  around the population values with covariance ``S / N``, ``S`` the covariance of the pieces'
  influence functions (:func:`~goalfit.metrics.intervals.influence`; the same first-order
  expansion as the delta-method intervals), jointly over every constraint's pieces;
* the test at level ``confidence`` passes a ``<=`` constraint when ``max_j (d_j + z_j
  sqrt(S_jj / N)) <= bound`` (``z_j`` the normal quantile, Bonferroni-corrected only where the
  interval is: the lower bound of a max, the upper bound of a min), a ``>=`` one in the mirror
  image; the certificate needs every constraint to pass;
* the power is the share of ``n_simulations`` draws of the pieces from that normal law
  (common random numbers across sizes, so the curve is monotone in practice) for which every
  test passes; the rows needed are the smallest ``N`` whose power reaches ``power`` (bisection
  in ``log N``).

Single-rate goals are certified with the exact Clopper-Pearson bound, whose width the normal
approximation matches up to ``O(1 / N)``: the plan is a prediction, checked against simulated
safety tests in the test suite. The plan is for one classifier (the one whose predictions are
given); a ``confidence=`` fit tests several candidates, most conservative first, so its chance
of certifying one of them is at least the plan's for its most conservative candidate.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from scipy import stats

if TYPE_CHECKING:
    import pandas as pd

from ..goals import Problem
from ..utils.validation import check_confidence, check_count, check_fraction
from .intervals import (GoalSample, _clopper_pearson, _single_rate, clopper_pearson, combine, corrections, influence,
                        jacobian, smallest_slice)

_MAX_ROWS = 1e10  # beyond this a goal is called uncertifiable by data (its value sits on the bound)


@dataclass
class CertificationPlan:
    """What :func:`plan_certification` predicts.

    Attributes
    ----------
    constraints : list of dict
        Per constraint: ``name``, ``sense``, ``bound``, ``value`` (on the planning sample; all
        three as the constraint was written: F1, ``>=``, 0.7 for ``f1() >= 0.7``),
        ``sd_per_row`` (the standard deviation of the binding piece's estimate on one row:
        ``sd / sqrt(N)`` on ``N`` rows), ``safety_rows_needed`` and ``train_rows_needed``
        (``inf`` when the value is on the wrong side of the bound, or on it: no amount of data
        certifies it), ``power_at_n_train`` (at the ``n_train`` given), ``smallest_slice``,
        ``smallest_slice_share`` (its share of the rows) and ``smallest_slice_rows_needed``
        (rows of that slice in the safety part at ``safety_rows_needed``).
    safety_rows_needed, train_rows_needed : float
        For every constraint at once (the certificate), with ``train = safety /
        safety_fraction``.
    power_at_n_train : float
        The probability that every constraint passes with ``n_train`` training rows.
    curve : pandas.DataFrame
        The power curve: ``n_train``, ``n_safety``, one ``power[<constraint>]`` column per
        constraint and ``power`` (all of them).
    confidence, power, safety_fraction : float
    n_train : int
    """

    constraints: list
    safety_rows_needed: float
    train_rows_needed: float
    power_at_n_train: float
    curve: pd.DataFrame
    confidence: float
    power: float
    safety_fraction: float
    n_train: int
    # n_safety -> (n_constraints, n_simulations) bool, whether each constraint passed
    _simulate: Callable[[float], np.ndarray] | None = field(default=None, repr=False)

    def power_at(self, n_train) -> float:
        """Predicted probability that every constraint passes with ``n_train`` training rows.

        Raises
        ------
        TypeError, ValueError
            ``n_train`` not a positive integer.
        """
        n_train = check_count(n_train, "n_train")
        if self._simulate is None:
            raise ValueError("this plan holds no simulator: build it with plan_certification")
        return float(self._simulate(max(1.0, n_train * self.safety_fraction)).all(axis=0).mean())

    def __str__(self) -> str:
        lines = [f"certification plan at confidence {self.confidence:g} (power {self.power:g}, safety part "
                 f"{self.safety_fraction:g} of the training rows):"]
        for c in self.constraints:
            need = "never (its value does not meet the bound)" if not np.isfinite(c["train_rows_needed"]) else (
                f"{c['train_rows_needed']:,.0f} training rows ({c['safety_rows_needed']:,.0f} in the safety part; "
                f"{c['smallest_slice_rows_needed']:,.0f} of {c['smallest_slice']})")
            lines.append(f"  {c['name']} (value {c['value']:.4g}): {need}; power with {self.n_train:,} rows "
                         f"{c['power_at_n_train']:.2f}")
        total = ("never" if not np.isfinite(self.train_rows_needed)
                 else f"{self.train_rows_needed:,.0f} training rows")
        lines.append(f"  all together: {total}; power with {self.n_train:,} rows {self.power_at_n_train:.2f}")
        return "\n".join(lines)

    def plot(self, ax=None):
        """The power curve against the training size (log scale); returns the axes."""
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots(figsize=(6, 4))
        for col in self.curve.columns:
            if col.startswith("power"):
                ax.plot(self.curve["n_train"], self.curve[col], lw=2.5 if col == "power" else 1.2,
                        label="all constraints" if col == "power" else col[len("power["):-1])
        ax.axhline(self.power, color="grey", ls=":", lw=1)
        ax.set_xscale("log")
        ax.set_xlabel("training rows")
        ax.set_ylabel(f"P(certified at {self.confidence:g})")
        ax.set_ylim(-0.02, 1.02)
        ax.legend(fontsize=8)
        return ax


def plan_certification(constraints, y_true, y_pred, *, sensitive_features=None, sample_weight=None, classes=None,
                       pos_label=None, confidence: float = 0.95, power: float = 0.8, safety_fraction: float = 0.4,
                       n_train=None, sizes=None, n_simulations: int = 4000,
                       random_state=0) -> CertificationPlan:
    """Rows needed to certify a classifier's goals at ``confidence`` with probability ``power``.

    Parameters
    ----------
    constraints : constraint or list of constraints
        The goals to certify (e.g. ``[gf.demographic_parity_difference() <= 0.02]``).
    y_true : array-like of shape (n_samples,)
    y_pred : array-like of shape (n_samples,) or (n_samples, n_classes)
        The classifier's predictions on a sample drawn like the data to come (labels, or
        per-example class distributions of a randomized classifier); its values stand for the
        population's. Held-out predictions give an honest plan; training predictions of a rule
        fitted on the same rows make its values look better than they are.
    sensitive_features, sample_weight, classes, pos_label : optional
        As in :func:`goalfit.metrics.score`.
    confidence : float in [0.5, 1), default 0.95
        The certificate's level (the estimator's ``confidence``).
    power : float in (0, 1), default 0.8
        The probability of certifying that the rows needed must reach.
    safety_fraction : float in (0, 1), default 0.4
        Share of the training rows held for the safety test (``method_params["safety_fraction"]``).
    n_train : int, optional
        A training size to report the power at (default: ``len(y_true)``).
    sizes : array-like of int, optional
        Training sizes of the power curve (default: 40 sizes from 100 to 100 times the largest
        finite size needed, geometric).
    n_simulations : int, default 4000
        Draws of the pieces per size (the power's Monte Carlo error is at most
        ``0.5 / sqrt(n_simulations)``).
    random_state : int, default 0

    Returns
    -------
    CertificationPlan

    Raises
    ------
    ValueError
        No constraint, an objective-only goal, a goal whose slice is empty in the sample,
        ``confidence`` outside [0.5, 1) (0.05 is an alpha, not a confidence), ``power`` or
        ``safety_fraction`` outside (0, 1), ``n_train``, ``n_simulations`` or a size in
        ``sizes`` below 1.
    TypeError
        One of them not a number (``power="0.8"``), or a count that is not an integer.
    """
    from .evaluation import _encoded

    problem = Problem("error", constraints)
    yc, pc, cells, space, _, sw = _encoded(y_true, y_pred, sensitive_features, sample_weight, classes, pos_label)
    labels = np.unique(y_true) if classes is None else np.asarray(classes)
    return plan_from_sample(problem, GoalSample(yc, pc, cells, space, sw), labels, confidence=confidence, power=power,
                            safety_fraction=safety_fraction, n_train=n_train, sizes=sizes,
                            n_simulations=n_simulations, random_state=random_state)


def plan_from_sample(problem, sample: GoalSample, classes, *, confidence=0.95, power=0.8, safety_fraction=0.4,
                     n_train=None, sizes=None, n_simulations=4000, random_state=0) -> CertificationPlan:
    """:func:`plan_certification` on a :class:`~goalfit.metrics.intervals.GoalSample` (the
    estimators' :meth:`~goalfit.fit.GoalEstimator.plan_certification`); ``classes`` name the
    slices."""
    confidence = check_confidence(confidence)
    power, safety_fraction = check_fraction(power, "power"), check_fraction(safety_fraction, "safety_fraction")
    n_simulations = check_count(n_simulations, "n_simulations")
    if n_train is not None:
        n_train = check_count(n_train, "n_train")
    if sizes is not None:
        sizes = [check_count(v, "sizes (each training size)") for v in np.atleast_1d(np.asarray(sizes, dtype=object))]
        if not sizes:
            raise ValueError("sizes must hold at least one training size, got an empty list")
    if not problem.constraints:
        raise ValueError("plan_certification needs at least one constraint (e.g. gf.demographic_parity_difference()"
                         " <= 0.02)")
    labels = np.asarray(classes)
    alpha = 1 - confidence
    parts, IFs, jacs, start = [], [], [], 0
    for c in problem.constraints:  # every constraint's pieces, stacked
        jacs.append(jacobian(sample, c.expression))  # for its influence and its smallest slice
        v0, how, IF = influence(sample, c.expression, jac=jacs[-1])
        lower_side, upper_side = corrections(how, len(v0))
        z = stats.norm.ppf(1 - alpha / (upper_side if c.sense == "<=" else lower_side))
        single = _single_rate(c.expression)
        if single is not None:  # the exact bound of the safety test: Clopper-Pearson on the slice's share
            single = single[:2] + (_clopper_pearson(sample, single[1], alpha, alpha)[3] / sample.n,)
        parts.append((c, np.asarray(v0, float), how, z, slice(start, start + len(v0)), single))
        IFs.append(IF)
        start += len(v0)
    IF = np.vstack(IFs)
    S = IF @ IF.T / sample.n  # per-row covariance of every piece
    vals, vecs = np.linalg.eigh(S)
    root = vecs * np.sqrt(np.clip(vals, 0, None))
    Z = np.random.default_rng(random_state).standard_normal((n_simulations, len(S))) @ root.T
    sd = np.sqrt(np.clip(np.diag(S), 0, None))

    def simulate(n_safety):
        """Pass / fail of each constraint in each draw, shape (n_constraints, n_simulations)."""
        est = np.concatenate([p[1] for p in parts])[None, :] + Z / np.sqrt(n_safety)
        out = np.empty((len(parts), n_simulations), dtype=bool)
        for k, (c, v0, how, z, cols, single) in enumerate(parts):
            e, s = est[:, cols], sd[cols] / np.sqrt(n_safety)
            if single is not None:  # a * rate + b with the rate's Clopper-Pearson bound on share * N rows
                a, _, share = single
                b0 = c.expression.const if hasattr(c.expression, "const") else 0.0
                upper = (c.sense == "<=") == (a >= 0)
                grid = np.linspace(0.0, 1.0, 1025)  # the bound on a grid of rates, interpolated (smooth in r)
                lo, hi = clopper_pearson(grid, share * n_safety, 0.0 if upper else alpha, alpha if upper else 0.0)
                bound = a * np.interp(np.clip((e[:, 0] - b0) / a, 0.0, 1.0), grid, hi if upper else lo) + b0
                out[k] = bound <= c.bound + 1e-12 if c.sense == "<=" else bound >= c.bound - 1e-12
                continue
            if c.sense == "<=":
                out[k] = combine(e + z * s, how) <= c.bound + 1e-12
            else:
                out[k] = combine(e - z * s, how) >= c.bound - 1e-12
        return out

    def needed(pick):
        """Smallest safety size whose power reaches ``power`` (inf when none below _MAX_ROWS)."""
        if pick(simulate(_MAX_ROWS)).mean() < power:
            return np.inf
        lo, hi = 0.0, np.log(_MAX_ROWS)
        if pick(simulate(1.0)).mean() >= power:
            return 1.0
        for _ in range(32):
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if pick(simulate(np.exp(mid))).mean() >= power else (mid, hi)
        return float(np.ceil(np.exp(hi)))

    n_train = sample.n if n_train is None else n_train
    at_n = simulate(max(1.0, n_train * safety_fraction))
    rows = []
    for k, (c, v0, how, z, cols, _) in enumerate(parts):
        n_s = needed(lambda out, k=k: out[k])
        where, count = smallest_slice(c.expression, sample, labels, jac=jacs[k][2])
        share = count / sample.n
        binding = int(np.argmax(v0)) if how == "max" else int(np.argmin(v0))
        sense, bound = c.shown  # as written: F1 and 0.7 for f1() >= 0.7
        rows.append({"name": c.name, "sense": sense, "bound": bound,
                     "value": c.as_shown(combine(v0, how)),
                     "sd_per_row": float(sd[cols][binding]), "safety_rows_needed": n_s,
                     "train_rows_needed": n_s / safety_fraction, "power_at_n_train": float(at_n[k].mean()),
                     "smallest_slice": where, "smallest_slice_share": share,
                     "smallest_slice_rows_needed": n_s * share})
    n_all = needed(lambda out: out.all(axis=0))
    if sizes is None:
        finite = [r["train_rows_needed"] for r in rows if np.isfinite(r["train_rows_needed"])]
        top = 100 * max(finite + [n_train])
        sizes = np.unique(np.geomspace(100, max(top, 1000), 40).astype(np.int64))
    import pandas as pd

    n_trains = np.asarray(sizes, dtype=np.int64)
    n_safety = np.maximum(1, np.round(n_trains * safety_fraction)).astype(np.int64)
    curve: dict[str, object] = {"n_train": n_trains, "n_safety": n_safety}
    sims = [simulate(float(n)) for n in n_safety]
    for k, r in enumerate(rows):
        curve[f"power[{r['name']}]"] = [float(s[k].mean()) for s in sims]
    curve["power"] = [float(s.all(axis=0).mean()) for s in sims]
    return CertificationPlan(rows, n_all, n_all / safety_fraction, float(at_n.all(axis=0).mean()),
                             pd.DataFrame(curve), confidence, power, safety_fraction, n_train, simulate)
