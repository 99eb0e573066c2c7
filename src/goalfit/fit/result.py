"""The one result type every method returns (:class:`FitResult`)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class FitResult:
    """What a method returns: the classifier it found on the training sample, and how.

    Every family (plug-in, ramp, subdata, surrogate, Lagrangian) returns this type, so the
    estimators, the report, :func:`goalfit.frontier`, Dask and the command line read one
    protocol. A classifier is a *mixture* of deterministic members: a single model is the
    mixture of one member with weight 1.

    Attributes
    ----------
    members : list
        Deterministic members: plug-in rules (:mod:`goalfit.classifiers.members`), refitted
        models, or a family's fitted model (a linear scorer, a selected-data SVM, a network
        snapshot).
    weights : ndarray of shape (n_members,)
        Mixture weights on the simplex.
    confusions : ndarray of shape (n_members, n_cells, n_classes, n_classes)
        Each member's confusion tensor on the method's training sample (normalized to sum to
        1; :class:`goalfit.confusion.ConfusionSpace`).
    method : str
        The method that ran (a registry name, e.g. ``"split_frank_wolfe"``, ``"ramp"``).
    history : list of dict
        One record per iteration, with at least ``iteration``, ``objective`` and
        ``max_violation`` (of the current iterate on the training sample, rate units) and
        ``seconds``; families add their own keys (``oracle_calls``, ``multipliers``, ...).
    n_oracle_calls : int
        Linear-minimization oracle calls, inner solves or metric evaluations (the family's unit
        of work; see :attr:`message`).
    feasible : bool
        Whether the returned mixture meets every constraint on the training sample (violation
        at most :data:`goalfit.goals.FEASIBLE_TOL`).
    message : str
        Why the method stopped.
    certificates : dict
        Family-specific guarantees and diagnostics: a certified gap or dual bound, Lagrange
        multipliers, the selection's fairness, the randomized rule's values, ...
    """

    members: list
    weights: np.ndarray
    confusions: np.ndarray
    method: str
    history: list = field(default_factory=list)
    n_oracle_calls: int = 0
    feasible: bool = True
    message: str = ""
    certificates: dict = field(default_factory=dict)

    @property
    def confusion(self) -> np.ndarray:
        """Expected confusion tensor of the mixture on the training sample, shape (n_cells, n_classes, n_classes)."""
        return np.tensordot(self.weights, self.confusions, axes=1)

    @classmethod
    def single(cls, member, confusion, method: str, **fields) -> "FitResult":
        """The result of a family that returns one model: a mixture of one member with weight 1.

        Parameters
        ----------
        member : object
            The fitted model (what the family's classifier reads).
        confusion : ndarray of shape (n_cells, n_classes, n_classes)
            Its confusion tensor on the training sample.
        method : str
        **fields
            Any other field of :class:`FitResult`.
        """
        C = np.asarray(confusion, dtype=float)
        return cls([member], np.ones(1), C[None], method, **fields)
