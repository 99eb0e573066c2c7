"""High-confidence goals (``confidence=`` of every estimator): choose, then certify.

The procedure is the Seldonian one of Thomas et al. (Science 2019, "Preventing undesirable
behavior of intelligent machines", Fig. 2 and the supplement's Alg. 1), with goalfit's methods as
the candidate selection and :mod:`goalfit.metrics.intervals` as the safety test:

1. The training rows are split, stratified by (cell, class), into a *candidate* part
   (``1 - safety_fraction``) and a *safety* part (``safety_fraction``).
2. Candidate selection: the base model and the goals are fitted on the candidate part only, with
   every constraint tightened by a margin: the user's ``margin=``, or the *predicted* half-width of
   the safety test's bound (the candidate's one-sided bound width on the candidate part, scaled by
   ``sqrt(n_candidate / n_safety)``), doubled as in Thomas et al. (supplement, "we double the
   width of the confidence interval" in candidate selection, to avoid over-fitting the bound to
   the candidate data); two rounds, each re-predicting the width from the latest candidate.
3. Safety test: on the safety part, which the candidate never saw, every constraint's one-sided
   bound at level ``1 - (1 - confidence) / m`` (Bonferroni over the ``m`` constraints, so they
   hold *simultaneously*) must be on the right side of the goal's bound.

Guarantee: with i.i.d. data, if the classifier is returned with ``certified_ = True``, then with
probability at least ``confidence`` every constraint holds on the population (for the expected
value of the randomized rule). The bound of a single-rate constraint is exact (Clopper-Pearson);
others use the delta method (asymptotic), with Bonferroni over the pieces of max/min
disparities. When the test fails the candidate is returned as the least-violating model with
``certified_ = False``, a warning, and per constraint the safety-part size that would be needed
at the observed values.
"""
from __future__ import annotations

import warnings

import numpy as np
from ..metrics.intervals import GoalSample, jacobian, one_sided_bound
from .problem import tighten

#: Thomas et al.'s inflation of the predicted bound width in candidate selection.
MARGIN_INFLATION = 2.0
#: Candidate-selection rounds (each re-predicts the margins from the latest candidate).
ROUNDS = 2


def split_rows(strata, safety_fraction, random_state):
    """Candidate rows and safety rows (sorted), stratified by ``strata`` when every stratum allows."""
    from sklearn.model_selection import train_test_split

    rows = np.arange(len(strata))
    try:
        cand, safe = train_test_split(rows, test_size=safety_fraction, stratify=strata, random_state=random_state)
    except ValueError:
        cand, safe = train_test_split(rows, test_size=safety_fraction, random_state=random_state)
    return np.sort(cand), np.sort(safe)


def goal_sample(classifier, data) -> GoalSample:
    """A classifier's predictions on prepared data as a :class:`GoalSample` (its true cells for the goals)."""
    dist = np.asarray(classifier.predict_proba(data.X, sensitive_features=data.sensitive_features))
    return GoalSample(data.y_codes, dist, data.cells, data.space, data.sample_weight)


def _bounds(problem, sample, level):
    """(value, one-sided bound) of each constraint on a sample."""
    out = []
    for c in problem.constraints:
        try:
            value = sample.bound(c.expression).value(sample.C)
            b = one_sided_bound(c.expression, c.sense, sample, level)
        except ValueError as e:
            raise ValueError(f"confidence: cannot bound {c.name} on the held part of the data "
                             f"({e}); a group or class is too rare for a safety test: give more data, "
                             "a larger safety_fraction, or drop confidence") from e
        out.append((value, b))
    return out


def predicted_margins(problem, candidate_sample, level, n_candidate, n_safety):
    """Tightening per constraint: the candidate's bound width scaled to the safety size, doubled."""
    widths = [abs(b - v) for v, b in _bounds(problem, candidate_sample, level)]
    return [float(MARGIN_INFLATION * w * np.sqrt(n_candidate / n_safety)) for w in widths]


def _plain(v):
    return v.item() if isinstance(v, np.generic) else v


def _smallest_slice(c, sample, classes):
    """(description, count) of the smallest (cell, class) row that moves ``c``'s value."""
    _, _, J = jacobian(sample, c.expression)
    moved = np.abs(J).sum(axis=(0, 3)) > 1e-9  # (n_cells, K)
    counts = np.zeros(moved.shape)
    np.add.at(counts, (sample.cells, sample.y), 1)
    counts = np.where(moved & (counts > 0), counts, np.inf)
    if not np.isfinite(counts).any():
        return "the whole sample", sample.n
    cell, k = np.unravel_index(int(np.argmin(counts)), counts.shape)
    cells = sample.space.cells
    parts = [f"{col}={_plain(cells.iloc[cell][col])!r}" for col in cells.columns]
    parts.append(f"y={_plain(classes[k])!r}")
    return ", ".join(parts), int(counts[cell, k])


def safety_test(problem, margins, candidate_sample, safety_sample, confidence, classes, stacklevel=4):
    """The safety test of every constraint on the held part (see the module docstring).

    Returns
    -------
    (certification, certified)
        ``certification`` is a list with one dict per constraint: ``name``, ``sense``,
        ``bound``, ``margin`` (tightening used in candidate selection), ``candidate_value``,
        ``safety_value``, ``safety_bound`` (the one-sided confidence bound), ``confidence_each``,
        ``passed``, and for failures ``needed_safety_size`` (safety-part size that would certify
        at the observed values; None when the candidate violates the bound on the safety part)
        with ``smallest_slice`` / ``smallest_slice_count``. A failure also warns.
    """
    m = len(problem.constraints)
    level = 1 - (1 - confidence) / m
    n_s = safety_sample.n
    report, msgs = [], []
    for c, mg, (vc, _), (vs, bs) in zip(problem.constraints, margins, _bounds(problem, candidate_sample, level),
                                        _bounds(problem, safety_sample, level)):
        passed = bool(bs <= c.bound + 1e-12) if c.sense == "<=" else bool(bs >= c.bound - 1e-12)
        row = {"name": c.name, "sense": c.sense, "bound": c.bound, "margin": float(mg),
               "candidate_value": float(vc), "safety_value": float(vs), "safety_bound": float(bs),
               "confidence_each": level, "passed": passed}
        if not passed:
            slack = (c.bound - vs) if c.sense == "<=" else (vs - c.bound)
            width = abs(bs - vs)
            where, count = _smallest_slice(c, safety_sample, classes)
            row["smallest_slice"], row["smallest_slice_count"] = where, count
            if slack > 0 and width > 0:
                factor = (width / slack) ** 2
                row["needed_safety_size"] = int(np.ceil(n_s * factor))
                msgs.append(
                    f"{c.name}: safety value {vs:.4g}, {int(level * 1000) / 10:g}% bound {bs:.4g}; certifying it "
                    f"at this value needs about {factor:.1f}x the data: a safety part of ~{row['needed_safety_size']} "
                    f"rows instead of {n_s} (its smallest slice, {where}, has {count}; ~{int(np.ceil(count * factor))} needed)")
            else:
                row["needed_safety_size"] = None
                msgs.append(f"{c.name}: the candidate's value on the safety part ({vs:.4g}) already breaks "
                            f"the bound {c.bound:g}: more data would not certify it; loosen the goal or "
                            "give a larger margin")
        report.append(row)
    certified = all(r["passed"] for r in report)
    if not certified:
        warnings.warn(
            f"not certified at confidence {confidence:g}: no candidate passed the safety test; "
            "returning the candidate (least-violating on the candidate part), certified_ = False. "
            + " | ".join(msgs), RuntimeWarning, stacklevel=stacklevel)
    return report, certified


def certify(fit_candidate, data, problem, margins, confidence, safety_fraction, random_state):
    """Candidate selection on one part of ``data``, safety test on the other (see the module docstring).

    Parameters
    ----------
    fit_candidate : callable
        ``fit_candidate(constraints, candidate_data)`` fits the estimator's method on the
        candidate part with the given (tightened) constraints and returns ``(compiled problem,
        FitResult, classifier)``; the classifier is the rule that will be deployed.
    data : PreparedData
        Every training row (features, codes, cells; several datasets included: the split is
        stratified by (cell, class), so each dataset is split too).
    problem : Problem
        The user's goals.
    margins : list of float or None
        The user's ``margin=`` (None: predicted from the candidate, two rounds).
    confidence : float in (0, 1)
    safety_fraction : float in (0, 1)
    random_state : int or None
        Seeds the split.

    Returns
    -------
    (compiled, result, classifier, margins, certification, certified, n_candidate)
        See :func:`safety_test` for ``certification``.
    """
    strata = np.asarray(data.cells, dtype=np.int64) * data.n_classes + np.asarray(data.y_codes, dtype=np.int64)
    if data.labelled is not None:
        strata = np.where(data.labelled, strata, -1 - np.asarray(data.cells, dtype=np.int64))
    rows, safety_rows = split_rows(strata, safety_fraction, random_state)
    cand, safe = data.subset(rows), data.subset(safety_rows)
    m = len(problem.constraints)
    if m == 0:
        compiled, result, clf = fit_candidate(problem.constraints, cand)
        return compiled, result, clf, [], [], True, len(rows)
    level = 1 - (1 - confidence) / m
    if margins is None:
        compiled, result, clf = fit_candidate(problem.constraints, cand)
        for _ in range(ROUNDS):
            margins = predicted_margins(problem, goal_sample(clf, cand), level, len(rows), len(safety_rows))
            compiled, result, clf = fit_candidate(tighten(problem, margins), cand)
    else:
        compiled, result, clf = fit_candidate(tighten(problem, margins), cand)
    report, certified = safety_test(problem, margins, goal_sample(clf, cand), goal_sample(clf, safe), confidence,
                                    data.classes)
    return compiled, result, clf, margins, report, certified, len(rows)
