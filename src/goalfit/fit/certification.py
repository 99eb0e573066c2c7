"""High-confidence goals (``confidence=`` of every estimator): choose candidates, then certify.

The procedure follows the Seldonian split of Thomas et al. (Science 2019, "Preventing undesirable
behavior of intelligent machines", Fig. 2), with the candidates chosen and tested as in
Learn-then-Test (Angelopoulos, Bates, Candès, Jordan & Lei, 2021, §3: fixed-sequence testing):

1. The training rows are split, stratified by (cell, class), into a *candidate* part
   (``1 - safety_fraction``) and a *safety* part (``safety_fraction``).
2. Candidates: the estimator's method is run on the candidate part once without tightening; each
   constraint's safety bound width is *predicted* from it (its one-sided bound width on the
   candidate part scaled by ``sqrt(n_candidate / n_safety)``), and candidates are fitted with the
   constraints tightened by that width times each factor of :data:`MARGIN_GRID`, most
   conservative first. The user's ``margin=`` replaces the grid by one candidate.
3. Safety test, in that fixed order: a candidate passes when every constraint's one-sided bound
   on the safety part at level ``confidence`` is on the right side of the goal's bound; the
   sequence stops at the first candidate that fails. A candidate passes only when all of its
   constraints do, so no correction over its ``m`` constraints is needed (the null "some
   constraint is broken" is a union, rejected only when each part is: Berger's
   intersection-union test, Statist. Sci. 1996); and by the fixed-sequence argument every
   candidate that passed meets all its constraints on the population with probability at least
   ``confidence`` simultaneously, so the one deployed is the best of them (lowest objective on
   the safety part).
4. When the first candidate fails, it is deployed (the most conservative, least-violating one)
   with ``certified_ = False``: each of its one-sided bounds still holds at ``confidence`` (it
   was tested first) and is reported as the headline (``certified_bound``), with the
   safety-part size that would certify it.

Bounds (:mod:`goalfit.metrics.intervals`): the exact Clopper-Pearson bound for a goal that is
one rate; the delta method (asymptotic) otherwise, the max (min) of the pieces' bounds for a
max (min) disparity, which needs no correction either (:mod:`goalfit.metrics.intervals`). Guarantee: under i.i.d. sampling a classifier returned with ``certified_ = True`` meets
every constraint on the population with probability at least ``confidence`` (exactly for
single-rate goals, asymptotically for the others), for the expected value of the deployed rule.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
from ..metrics.evaluation import measured_label
from ..metrics.intervals import GoalSample, one_sided_bound, smallest_slice
from .problem import check_tightenable, tighten

#: Candidates' margins as multiples of each constraint's predicted safety-bound width, in the order
#: of the fixed-sequence test (most conservative first; 0 is the untightened goal).
MARGIN_GRID = (2.0, 1.5, 1.25, 1.0, 0.75, 0.5, 0.25, 0.0)


def split_rows(strata, safety_fraction, random_state):
    """Candidate rows and safety rows (sorted), stratified by ``strata`` when every stratum allows.

    Raises
    ------
    ValueError
        When ``safety_fraction`` leaves a part with no row, naming it.
    """
    from sklearn.model_selection import train_test_split

    rows = np.arange(len(strata))
    n_safe = int(np.ceil(safety_fraction * len(rows)))
    if n_safe < 1 or len(rows) - n_safe < 1:
        raise ValueError(f"safety_fraction={safety_fraction:g} of {len(rows)} rows leaves {len(rows) - n_safe} for "
                         f"fitting candidates and {n_safe} for the safety test: both need rows (e.g. "
                         "method_params={'safety_fraction': 0.4}), or drop confidence")
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


def predicted_widths(problem, candidate_sample, level, n_candidate, n_safety):
    """Each constraint's predicted safety-bound width: its one-sided bound width on the candidate
    part scaled by ``sqrt(n_candidate / n_safety)`` (goal units)."""
    widths = [abs(b - v) for v, b in _bounds(problem, candidate_sample, level)]
    return [float(w * np.sqrt(n_candidate / n_safety)) for w in widths]


def safety_rows(problem, margins, candidate_sample, safety_sample, confidence, classes):
    """The safety test of every constraint on the held part (see the module docstring).

    Returns
    -------
    list of dict
        One per constraint: ``name``, ``label`` (what the values measure, as in
        :func:`goalfit.metrics.constraint_entry`), ``sense``, ``bound``, ``margin`` (tightening used for the
        candidate), ``candidate_value``, ``safety_value``, ``certified_bound`` (the one-sided confidence
        bound on the safety part: what holds at ``confidence`` for this classifier; these numbers as
        the constraint was written, F1's for ``f1() >= 0.7``),
        ``confidence``, ``passed``,
        and for failures ``needed_safety_size`` (safety-part size that would certify at the
        observed values; None when the value on the safety part breaks the bound) with
        ``smallest_slice`` / ``smallest_slice_count``.
    """
    level = confidence  # intersection-union: each constraint at the full level (module docstring)
    n_s = safety_sample.n
    rows = []
    for c, mg, (vc, _), (vs, bs) in zip(problem.constraints, margins, _bounds(problem, candidate_sample, level),
                                        _bounds(problem, safety_sample, level)):
        passed = bool(bs <= c.bound + 1e-12) if c.sense == "<=" else bool(bs >= c.bound - 1e-12)
        sense, bound = c.shown  # as written: F1 >= 0.7 reports F1 values (the test ran on 1 - F1)
        row = {"name": c.name, "label": measured_label(c), "sense": sense, "bound": bound, "margin": float(mg),
               "candidate_value": float(c.as_shown(vc)), "safety_value": float(c.as_shown(vs)),
               "certified_bound": float(c.as_shown(bs)), "confidence": confidence, "passed": passed}
        if not passed:
            slack = (c.bound - vs) if c.sense == "<=" else (vs - c.bound)
            width = abs(bs - vs)
            where, count = smallest_slice(c.expression, safety_sample, classes)
            row["smallest_slice"], row["smallest_slice_count"] = where, count
            row["needed_safety_size"] = int(np.ceil(n_s * (width / slack) ** 2)) if slack > 0 and width > 0 else None
        rows.append(row)
    return rows


def _failure_message(rows, n_s, confidence) -> str:
    msgs = []
    for r in rows:
        head = (f"{r['label']} {r['sense']} {r['certified_bound']:.4g} holds at "
                f"{confidence:.0%} (asked {r['bound']:g})")
        if r["passed"]:
            continue
        if r["needed_safety_size"] is not None:
            factor = r["needed_safety_size"] / n_s
            head += (f"; certifying the asked bound at this value needs a safety part of ~{r['needed_safety_size']} "
                     f"rows instead of {n_s} (its smallest slice, {r['smallest_slice']}, has "
                     f"{r['smallest_slice_count']}; ~{int(np.ceil(r['smallest_slice_count'] * factor))} needed)")
        else:
            head += "; its value on the safety part already breaks the bound: more data would not certify it"
        msgs.append(head)
    return " | ".join(msgs)


def _check_parts(data, cand, safe, safety_fraction) -> None:
    """Both parts of the split hold every class of the labelled rows (else name ``safety_fraction``)."""
    labels = data.y_codes if data.labelled is None else data.y_codes[data.labelled]
    classes = np.unique(labels)
    for name, part in (("fitting candidates", cand), ("the safety test", safe)):
        have = part.y_codes if part.labelled is None else part.y_codes[part.labelled]
        missing = np.setdiff1d(classes, have)
        if len(missing):
            raise ValueError(f"safety_fraction={safety_fraction:g} leaves {part.n_samples} row(s) for {name}, with no "
                             f"example of class {data.classes[missing[0]]!r}: use a safety_fraction nearer 0.4 "
                             "(method_params={'safety_fraction': ...}), give more data, or drop confidence")


@dataclass
class Certification:
    """What :func:`certify` found.

    Attributes
    ----------
    compiled, result, classifier
        The deployed candidate's compiled (tightened) goals, method result and rule.
    margins : list of float
        Its margins.
    report : list of dict
        Per constraint, its safety test (:func:`safety_rows`), with ``n_candidates_tested`` and
        ``n_certified``.
    certified : bool
    candidate, safety : PreparedData
        The two parts of the training data.
    path : list of dict
        Every candidate tested, in order: ``margins``, ``safety_bounds``, ``safety_objective``,
        ``passed``.
    """

    compiled: object
    result: object
    classifier: object
    margins: list
    report: list
    certified: bool
    candidate: object
    safety: object
    path: list = field(default_factory=list)


def certify(fit_candidate, data, problem, margins, confidence, safety_fraction, random_state,
            stacklevel: int = 4) -> Certification:
    """Candidates on one part of ``data``, fixed-sequence safety test on the other (module docstring).

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
        The user's ``margin=`` (one candidate); None: the grid of predicted margins.
    confidence : float in [0.5, 1)
    safety_fraction : float in (0, 1)
        Both parts must hold every class (ValueError naming ``safety_fraction`` otherwise).
    random_state : int or None
        Seeds the split.

    Returns
    -------
    Certification

    Raises
    ------
    ValueError
        Margins that cannot all hold together (:func:`goalfit.fit.check_tightenable`), a
        goal whose slice is empty on one part, or a ``safety_fraction`` that leaves a part
        without rows or without a class.

    Warns
    -----
    RuntimeWarning
        When no candidate passes, with the bounds that hold at ``confidence`` for the deployed one.
    """
    strata = np.asarray(data.cells, dtype=np.int64) * data.n_classes + np.asarray(data.y_codes, dtype=np.int64)
    if data.labelled is not None:
        strata = np.where(data.labelled, strata, -1 - np.asarray(data.cells, dtype=np.int64))
    rows, safety_rows_ = split_rows(strata, safety_fraction, random_state)
    cand, safe = data.subset(rows), data.subset(safety_rows_)
    _check_parts(data, cand, safe, safety_fraction)
    m = len(problem.constraints)
    if m == 0:  # the estimators fit on every row instead (GoalEstimator._fit_goals)
        compiled, result, clf = fit_candidate(problem.constraints, cand)
        return Certification(compiled, result, clf, [], [], True, cand, safe)
    level = confidence
    first = None
    if margins is None:
        first = fit_candidate(problem.constraints, cand)
        widths = predicted_widths(problem, goal_sample(first[2], cand), level, len(rows), len(safety_rows_))
        grid = [[g * w for w in widths] for g in MARGIN_GRID]
    else:
        grid = [list(margins)]
    compiled_user = type(problem)(problem.objective, problem.constraints).compile(cand.space)
    seen, candidates = set(), []
    for mg in grid:  # distinct tightened goals, in order
        tight = tighten(problem, mg)
        key = tuple(round(c.bound, 12) for c in tight)
        if key not in seen:
            seen.add(key)
            candidates.append((mg, tight))
    widest = candidates[0]
    check_tightenable(compiled_user, type(problem)(problem.objective, widest[1]).compile(cand.space).b, widest[0])
    path, tested = [], []
    for mg, tight in candidates:
        fitted = first if (first is not None and all(v == 0 for v in mg)) else fit_candidate(tight, cand)
        report = safety_rows(problem, mg, goal_sample(fitted[2], cand), goal_sample(fitted[2], safe), confidence,
                             data.classes)
        passed = all(r["passed"] for r in report)
        objective = float(problem.objective.bind(safe.space).value(goal_sample(fitted[2], safe).C))
        path.append({"margins": [float(v) for v in mg], "safety_bounds": [r["certified_bound"] for r in report],
                     "safety_objective": objective, "passed": passed})
        tested.append((fitted, mg, report, objective))
        if not passed:
            break
    certified_ones = [t for t, p in zip(tested, path) if p["passed"]]
    if certified_ones:
        (compiled, result, clf), mg, report, _ = min(certified_ones, key=lambda t: t[3])
    else:
        (compiled, result, clf), mg, report, _ = tested[0]
    for r in report:
        r["n_candidates_tested"], r["n_certified"] = len(tested), len(certified_ones)
    certified = bool(certified_ones)
    if not certified:
        warnings.warn(
            f"not certified at confidence {confidence:g}: the most conservative of {len(candidates)} candidates "
            f"failed the safety test, and it is returned (certified_ = False). For it: "
            + _failure_message(report, safe.n_samples, confidence), RuntimeWarning, stacklevel=stacklevel)
    return Certification(compiled, result, clf, list(mg), report, certified, cand, safe, path)
