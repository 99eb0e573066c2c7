"""Deterministic classifiers from a fitted :class:`~goalfit.GoalClassifier` that keep the goals.

:func:`to_deterministic` implements :meth:`GoalClassifier.to_deterministic
<goalfit.GoalClassifier.to_deterministic>`; :class:`TrainingSample` is what ``fit`` keeps to
check a deterministic classifier against the goals on the training data (the outer-loop rows:
their probabilities, labels, true cells, weights, row hashes and the members' predictions).
"""
from __future__ import annotations

import warnings

import numpy as np

from ..classifiers.hashing import array_fingerprint, hash_predictions, hashes_as_array, row_hash
from ..classifiers.members import PluginRule, ThresholdRule
from ..confusion import confusion_tensor
from ..goals import FEASIBLE_TOL
from ..methods.derandomize import best_candidate_rule, best_direction_rule, best_threshold_rule, rank
from ..utils.rows import take_rows

STRATEGIES = ("hash", "best_rule", "max_weight")


class TrainingSample:
    """The outer-loop training rows, as the method saw them.

    The row hashes and the members' predictions are computed on first use (by
    :meth:`GoalClassifier.to_deterministic <goalfit.GoalClassifier.to_deterministic>`), not at
    fit, wherever they can be: the hashes when the feature rows are the probabilities themselves
    (``"precomputed"`` numeric arrays), the predictions when no member reads the features. Where
    they need the feature rows, :meth:`build` computes them at once, so the sample never keeps
    other feature rows. Precomputed probabilities are kept without a copy (as the user's array,
    when it is float64): a fingerprint taken at fit lets :meth:`check_unchanged` refuse them
    once the user has changed that array in place.

    Parameters
    ----------
    proba : ndarray of shape (n, n_columns)
        What the members read (class probabilities, or joint ones when group-blind; out-of-fold
        with ``cv``).
    y, cells : ndarray of int, shape (n,)
        Class codes and **true** cells, in the smallest signed integer type that holds them
        (:func:`~goalfit.confusion.compact_codes`: one byte per row up to 127 classes / cells).
    sample_weight : ndarray of shape (n,) or None
    hashes : ndarray of uint64, shape (n,), or None
        :func:`~goalfit.classifiers.hashing.row_hash` of the feature rows; None when the feature
        rows are ``proba`` (hashed on first use).
    member_codes : ndarray, shape (n_members, n), or None
        Each member's predictions; None to predict them on first use with ``classifier``.
    classifier : RandomizedClassifier, optional
        Whose members' predictions ``member_codes`` are, when it is None (no member may read
        ``X``: refits of the base model need the rows).
    fingerprint : int, optional
        :func:`~goalfit.classifiers.hashing.array_fingerprint` of ``proba`` at fit, when
        ``proba`` may be the user's own array.

    Attributes
    ----------
    hashes : ndarray of uint64, shape (n,)
    member_codes : ndarray of uint8 (or intp beyond 256 classes), shape (n_members, n)
    """

    def __init__(self, proba, y, cells, sample_weight, hashes=None, member_codes=None, *, classifier=None,
                 fingerprint=None):
        if member_codes is None and classifier is None:
            raise ValueError("TrainingSample needs the members' predictions (member_codes) or their classifier")
        self.proba, self.y, self.cells, self.sample_weight = proba, y, cells, sample_weight
        self._hashes, self._member_codes = hashes, member_codes
        self._classifier = None if member_codes is not None else classifier
        self._fingerprint = fingerprint

    def __setstate__(self, state):
        # a sample pickled when hashes and member_codes were plain attributes (goalfit 0.1)
        if "hashes" in state:
            state = {**state, "_hashes": state.pop("hashes"), "_member_codes": state.pop("member_codes")}
        self.__dict__.update({"_classifier": None, "_fingerprint": None, **state})

    def check_unchanged(self) -> None:
        """Refuse probabilities that changed since fit (a precomputed array the user modified in
        place): the deterministic rules and re-solves read them.

        Raises
        ------
        ValueError
            When ``proba`` no longer has the fingerprint it had at fit.
        """
        if self._fingerprint is not None and array_fingerprint(self.proba) != self._fingerprint:
            raise ValueError("the precomputed probabilities passed to fit were modified in place after fit; "
                             "the fitted model keeps them without a copy and needs them as they were: fit "
                             "again, or pass a copy to fit")

    @property
    def hashes(self) -> np.ndarray:
        if self._hashes is None:
            self.check_unchanged()  # never cache what a changed array gives
            self._hashes = row_hash(self.proba)
        return self._hashes

    @property
    def member_codes(self) -> np.ndarray:
        if self._member_codes is None:
            self.check_unchanged()
            self._member_codes = _member_codes(self._classifier, self.proba, self.cells)
            self._classifier = None
        return self._member_codes

    @classmethod
    def build(cls, classifier, X, proba, y, cells, sample_weight, *, rows_are_proba=False):
        """The sample of a fit whose outer loop ran on the rows ``X`` (``proba``: what the
        members read on them).

        ``rows_are_proba``: ``X`` holds the probabilities ``proba`` themselves (a
        ``"precomputed"`` fit), so the row hashes can wait until they are used.
        """
        proba = np.asarray(proba, float)
        lazy_hashes = rows_are_proba and hashes_as_array(X)
        reads_X = any(m.needs == "X" for m in classifier.members)
        return cls(proba, y, cells, sample_weight, None if lazy_hashes else row_hash(X),
                   _member_codes(classifier, proba, cells, X) if reads_X else None, classifier=classifier,
                   fingerprint=array_fingerprint(proba) if rows_are_proba and np.may_share_memory(proba, X) else None)

    def with_members(self, classifier) -> TrainingSample:
        """The same rows with ``classifier``'s members' predictions (members that read the
        probabilities only, i.e. not refits of the base model)."""
        return TrainingSample(self.proba, self.y, self.cells, self.sample_weight, self._hashes,
                              classifier=classifier, fingerprint=self._fingerprint)

    def confusion(self, pred, space) -> np.ndarray:
        # pred as given (one-byte member codes): confusion_tensor widens codes only in its key
        return confusion_tensor(self.y, pred, self.cells, space.n_classes, space.n_cells, self.sample_weight)


_BLOCK_ROWS = 1 << 16


def _member_codes(classifier, proba, cells, X=None) -> np.ndarray:
    """Every member's class codes, shape (n_members, n), one byte per entry when the classes
    allow (the training sample is kept with the fitted model), computed over blocks of rows:
    the rules' n-sized temporaries (cost products, argmin indices) never exist for all rows at
    once. ``X`` (the rows) only for members that read the features (refits of the base model)."""
    n = len(cells)
    out = np.empty((len(classifier.members), n), dtype=np.uint8 if len(classifier.classes) <= 256 else np.intp)
    reads_X = any(m.needs == "X" for m in classifier.members)
    if reads_X and X is None:
        raise ValueError("members that read the features (refits of the base model) need the rows X")
    for start in range(0, n, _BLOCK_ROWS):
        rows = slice(start, start + _BLOCK_ROWS)
        Xb = None if not reads_X else take_rows(X, np.arange(start, min(start + _BLOCK_ROWS, n)))
        for k, m in enumerate(classifier.members):
            out[k, rows] = m.predict_codes(Xb if m.needs == "X" else None, proba[rows], cells[rows])
    return out


def _codes(ts, clf, det, strategy, random_state) -> np.ndarray:
    """The deterministic rule ``det`` (derived from ``clf`` by ``strategy``) on a sample's rows."""
    if strategy == "hash":
        return hash_predictions(ts.hashes, clf.weights, ts.member_codes, int(random_state))
    member = det.members[0]
    for k, m in enumerate(clf.members):
        if m is member:
            return ts.member_codes[k]
    return member.predict_codes(None, ts.proba, ts.cells)


def _certify_deterministic(model, det, strategy, random_state):
    """Re-run the safety test of a ``confidence=`` fit for the deterministic rule: sets
    ``det.certification_`` and ``det.certified_`` and warns when it fails.

    The rule is derived from the deployed candidate on the candidate part only, so with one
    candidate (``margin=`` given) the test is exact at ``confidence``; after the grid it is one
    more hypothesis on the same safety part (chosen by it), an approximation.
    """
    from ..fit import safety_rows
    from ..metrics.intervals import GoalSample

    space, clf = model.problem_.space, model.classifier_
    K = len(model.classes_)

    def sample(ts):
        dist = np.zeros((len(ts.y), K))
        dist[np.arange(len(ts.y)), _codes(ts, clf, det, strategy, random_state)] = 1.0
        return GoalSample(ts.y, dist, ts.cells, space, ts.sample_weight)

    rows = safety_rows(model._fitted_goals(), model.margins_, sample(model.train_sample_), sample(model.safety_sample_),
                       model.confidence, model.classes_)
    det.certification_, det.certified_ = rows, all(r["passed"] for r in rows)
    if not det.certified_ and model.certified_:
        failed = "; ".join(f"{r['name']}: bound {r['certified_bound']:.4g} holds at {model.confidence:.0%}"
                           for r in rows if not r["passed"])
        warnings.warn(f"the deterministic classifier ({strategy}) fails the safety test that the randomized one "
                      f"passed ({failed}): keep the randomized classifier, or use more data",
                      RuntimeWarning, stacklevel=4)


def to_deterministic(model, strategy="hash", *, random_state=0):
    """See :meth:`goalfit.GoalClassifier.to_deterministic`."""
    ts = getattr(model, "train_sample_", None)
    if ts is None:
        raise ValueError("to_deterministic checks the goals on the training rows the method ran on, which a "
                         "fit on Dask input does not keep in memory: derandomize an in-memory fit")
    ts.check_unchanged()
    clf, problem = model.classifier_, model.problem_
    space = problem.space
    info = {"strategy": strategy}
    if strategy == "hash":
        det = clf.to_deterministic("hash", random_state=random_state)
        C = ts.confusion(hash_predictions(ts.hashes, clf.weights, ts.member_codes, int(random_state)), space)
    elif strategy == "max_weight":
        k = int(np.argmax(clf.weights))
        det = clf.with_members([clf.members[k]], [1.0])
        C = ts.confusion(ts.member_codes[k], space)
    elif strategy == "best_rule":
        member, C = None, None
        exact = (space.n_classes == 2 and not model.group_blind and clf.members
                 and all(isinstance(m, (PluginRule, ThresholdRule)) for m in clf.members)
                 and getattr(problem.objective, "kind", None) == "linear" and not problem.nonlinear)
        if exact:
            member, C, found = best_threshold_rule(problem, ts.proba[:, 1], ts.y, ts.cells, ts.sample_weight)
            info.update(search="per-cell thresholds", **found)
            # the family 1[eta_1 >= t_c] misses lower-threshold members, and with three or more
            # cells the search is a local optimum: the members stay candidates
            fixed = list(enumerate(clf.members))
        else:
            fixed = []  # every member is a candidate, scored on its stored predictions
            shift = (space.n_classes == 2 and model.group_blind and not problem.nonlinear
                     and getattr(problem.objective, "kind", None) == "linear")
            member, C, n_cand = best_candidate_rule(
                problem, clf.members, ts.proba, ts.y, ts.cells, ts.sample_weight,
                n_grid=19 if shift else 49, shift=shift, member_codes=ts.member_codes, weights=clf.weights)
            info.update(search="members and plug-in rules between pairs of members", n_candidates=n_cand)
            if shift:  # binary group-blind, linear goals: also the Lagrangian directions' rules
                m2, C2, n_dir = best_direction_rule(problem, ts.proba, ts.y, ts.cells, ts.sample_weight)
                info.update(search=info["search"] + ", and group-blind linear rules over a grid of directions",
                            n_directions=n_dir)
                if C is None or rank(problem, C2) < rank(problem, C):
                    member, C = m2, C2
                    info["picked_direction_rule"] = True
        for k, m in fixed:  # compared on their stored predictions
            Ck = ts.confusion(ts.member_codes[k], space)
            if C is None or rank(problem, Ck) < rank(problem, C):
                member, C = m, Ck
                info["picked_member"] = k
        info["feasible"] = bool(problem.max_violation(C) <= FEASIBLE_TOL)
        det = clf.with_members([member], [1.0])
    else:
        raise ValueError(f"unknown strategy {strategy!r}; known: {list(STRATEGIES)}")
    det.train_objective_ = float(problem.objective.value(C))
    det.train_constraint_values_ = [float(v) for v in problem.constraint_values(C)]
    det.train_max_violation_ = float(problem.max_violation(C))
    det.derandomization_ = info
    if getattr(model, "safety_sample_", None) is not None:
        _certify_deterministic(model, det, strategy, random_state)
    constant = np.count_nonzero(C.sum(axis=(0, 1)) > 0) <= 1  # one predicted class on every training row
    info["constant"] = bool(constant)
    rand_viol = problem.max_violation(model.result_.confusion)
    if det.train_max_violation_ > FEASIBLE_TOL:
        user = model._fitted_goals().constraints
        broken = []
        for k, c in enumerate(problem.constraints):
            if c.violation(C) > FEASIBLE_TOL:
                tightened = "" if model.margins_ is None or not model.margins_[k] else (
                    f", tightened to {c.bound:.4g} by the margin {model.margins_[k]:.4g}")
                broken.append(f"{c.constraint.expression.name} = {c.value(C):.4g} for the bound {c.sense} "
                              f"{user[k].bound:g}{tightened}")
        warnings.warn(
            f"the deterministic classifier ({strategy}) breaks goal(s) on the training data: {'; '.join(broken)} "
            f"(max violation {det.train_max_violation_:.4g}; the randomized classifier's is {rand_viol:.4g})",
            RuntimeWarning, stacklevel=3)
    if constant:
        cls = model.classes_[int(np.argmax(C.sum(axis=(0, 1))))]
        warnings.warn(f"the deterministic classifier ({strategy}) predicts the class {cls!r} for every training "
                      "example: a constant classifier meets these goals best among the candidates; check the "
                      "goals, or keep the randomized classifier", RuntimeWarning, stacklevel=3)
    return det

