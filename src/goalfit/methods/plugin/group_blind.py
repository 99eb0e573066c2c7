"""The group-blind plug-in oracle: goals stated on groups, decisions that never read the group.

Narasimhan et al. (JMLR 2024, Def. 2 and Alg. 10) assume the group ``A`` is a function of the
features, so the plug-in rule for a per-group cost tensor ``L`` (shape ``(n_cells, n, n)``)
reads ``A(x)``: ``h(x) = argmin_j sum_y eta_y(x) L_{A(x)}[y, j]``. When ``A`` may not be used at
decision time, the classifier is a function of ``x`` alone, and the expected cost of predicting
``j`` on ``x`` is ``sum_{y,a} P(Y = y, A = a | x) L_a[y, j]``; the Bayes-optimal group-blind
rule for the linear objective ``<L, C>`` is therefore

    h(x) = argmin*_j  sum_{y,a} eta_{y,a}(x) L_a[y, j],   eta_{y,a}(x) = P(Y = y, A = a | x),

(ties toward the larger index). This extends Narasimhan et al.'s Def. 2 / Alg. 10 beyond their
assumption that ``A`` is a function of ``x``, following Menon & Williamson ("The cost of fairness
in binary classification", FAT* 2018: the Bayes-optimal fairness-aware classifier when the
sensitive feature is not an input thresholds a combination of ``P(Y = 1 | x)`` and
``P(A = 1 | x)``) and Yang, Cisse & Koyejo ("Fairness with overlapping groups", NeurIPS 2020:
the plug-in linear-minimization oracle over the joint ``P(Y, A | x)`` with consistent
Frank-Wolfe-type outer loops). Since the outer loops of Narasimhan et al. only call an oracle
with cost tensors and read back confusion tensors, every plug-in method (column generation, FW,
SplitFW, GDA, ellipsoid, bisection and their constrained versions) runs unchanged on this
oracle. The confusion tensors it returns are computed with the **true** groups of the
training examples, so the reported training values of the goals are those of the deployed
group-blind classifier.

For two classes, :class:`GroupBlindThresholdOracle` keeps the plug-in *direction* and picks the
threshold exactly on the sample (the group-blind analogue of the threshold oracle: robust to a
joint model whose probabilities are miscalibrated by a shift of the score); not in the papers
above, an addition.

When ``A`` is a deterministic function of ``x`` (``eta_{y,a}(x) = eta_y(x) 1[a = A(x)]``), the
rule is exactly Alg. 10's, and so is every method's output.
"""
from __future__ import annotations

import numpy as np

from ...classifiers.members import GroupBlindRule, group_blind_predict
from ...confusion import confusion_tensor
from ...utils.validation import check_probabilities
from .._scan import ScoreScan


class GroupBlindOracle:
    """Group-blind plug-in LMO on fixed joint probabilities ``P(A = a, Y = y | x)``.

    Parameters
    ----------
    joint : ndarray of shape (n_samples, n_cells, n_classes)
        Joint probability estimates on the sample the outer loop uses; rows sum to 1.
    y_codes : ndarray of int, shape (n_samples,)
    cell_ids : ndarray of int, shape (n_samples,)
        The **true** cells, used only to compute the confusion tensors.
    space : ConfusionSpace
    sample_weight : ndarray of shape (n_samples,), optional

    Attributes
    ----------
    proba : ndarray of shape (n_samples, n_classes)
        The marginal ``P(Y = y | x) = sum_a eta_{y,a}(x)`` (what the argmax baseline reads).
    n_calls : int
    name : str
        ``"group_blind"``.

    Raises
    ------
    ValueError
        When ``joint`` does not have shape ``(n_samples, space.n_cells, space.n_classes)`` or
        holds NaN, infinite or negative values.
    """

    name = "group_blind"

    def __init__(self, joint, y_codes, cell_ids, space, sample_weight=None):
        joint = np.asarray(joint, dtype=float)
        y = np.asarray(y_codes, dtype=np.intp)
        shape = (len(y), space.n_cells, space.n_classes)
        if joint.shape != shape:
            raise ValueError(f"joint probabilities must have shape {shape} (examples, cells, classes), "
                             f"got {joint.shape}")
        check_probabilities(joint, "joint probabilities", sum_to_one=False)
        self.joint = joint
        self.proba = joint.sum(axis=1)
        self.y = y
        self.cells = np.asarray(cell_ids, dtype=np.intp)
        self.space = space
        self.w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, float)
        self.n_calls = 0

    def predict_codes(self, cost) -> np.ndarray:
        """The group-blind plug-in decisions for ``cost`` on the sample, shape (n_samples,)."""
        return group_blind_predict(self.joint, cost)

    def confusion_of(self, cost) -> np.ndarray:
        """Confusion tensor (true cells) of the rule for ``cost`` (does not count as a call)."""
        return confusion_tensor(self.y, self.predict_codes(cost), self.cells, self.space.n_classes,
                                self.space.n_cells, self.w)

    def __call__(self, cost):
        """Return ``(GroupBlindRule(cost), C)`` with C the rule's confusion tensor on the sample.

        Raises
        ------
        ValueError
            For a cost tensor with NaN or infinite entries.
        """
        L = self._count_call(cost)
        return GroupBlindRule(L), self.confusion_of(L)

    def _count_call(self, cost) -> np.ndarray:
        """``cost`` broadcast to ``space.shape`` after the finiteness check; counts one call."""
        L = np.broadcast_to(np.asarray(cost, dtype=float), self.space.shape)
        bad = ~np.isfinite(L)
        if bad.any():
            raise ValueError(f"the oracle got a cost tensor with {int(bad.sum())} NaN or infinite entries")
        self.n_calls += 1
        return L


class OffsetScan(ScoreScan):
    """The rules ``1[<eta(x), d> <= t]`` of a binary group-blind cost, over every threshold ``t``.

    ``d = L[:, :, 1] - L[:, :, 0]`` (flattened, cell-major); ``t = 0`` is the plug-in rule. The
    :class:`~goalfit.methods._scan.ScoreScan` of the score ``<eta(x), d>``: position ``k``
    predicts class 1 on the first ``k`` sorted examples, and only positions between distinct
    scores are valid. Since the joint probabilities sum to 1, the rule with threshold ``t`` is
    the :class:`GroupBlindRule` of the cost with ``t`` subtracted from ``L[:, :, 1]``.

    Parameters
    ----------
    cost : ndarray of shape (n_cells, 2, 2)
    joint : ndarray of shape (n_samples, n_cells, 2) or (n_samples, 2 * n_cells)
    """

    def __init__(self, cost, joint):
        self.cost = np.asarray(cost, dtype=float)
        J = np.asarray(joint, dtype=float).reshape(len(joint), -1)
        super().__init__(J @ (self.cost[:, :, 1] - self.cost[:, :, 0]).ravel())

    def rule(self, k) -> GroupBlindRule:
        """The rule predicting class 1 on the first ``k`` sorted examples (a valid position)."""
        new = self.cost.copy()
        new[:, :, 1] -= self.threshold(k)
        return GroupBlindRule(new)


class GroupBlindThresholdOracle(GroupBlindOracle):
    """Binary group-blind LMO: the plug-in direction, the threshold exact on the sample.

    For a cost ``L`` it returns, among the rules ``1[<eta(x), d> <= t]`` (:class:`OffsetScan`;
    ``t = 0`` is :class:`GroupBlindOracle`'s rule), the one minimizing ``<L, C>`` on the sample
    (true groups), by one sort and one cumulative sum per call. Its sample cost is never above
    the plug-in rule's.

    Takes the parameters of :class:`GroupBlindOracle` and raises its errors, plus a
    ``ValueError`` for a problem with more than two classes.
    """

    name = "group_blind_threshold"

    def __init__(self, joint, y_codes, cell_ids, space, sample_weight=None):
        super().__init__(joint, y_codes, cell_ids, space, sample_weight)
        if space.n_classes != 2:
            raise ValueError(f"the group-blind threshold oracle is defined for binary problems only "
                             f"(this one has {space.n_classes} classes)")

    def __call__(self, cost):
        L = self._count_call(cost)
        scan = OffsetScan(L, self.joint)
        # predicting 1 instead of 0 on example l changes <L, C> by (L[c,y,1] - L[c,y,0]) w_l / W
        gain = (L[self.cells, self.y, 1] - L[self.cells, self.y, 0]) * self.w / self.w.sum()
        vals = scan.cumulative(gain[:, None])[:, 0]
        k = int(scan.valid[np.argmin(vals[scan.valid])])
        best = scan.rule(k)
        return best, self.confusion_of(best.cost)
