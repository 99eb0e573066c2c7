"""The one result type every method returns (:class:`FitResult`), and its typed family details."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, is_dataclass

import numpy as np

from ..utils.deprecation import warn_deprecated


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
    certificates : Mapping
        Deprecated (removed in 0.3): 0.1's untyped diagnostics by name. For a family with typed
        ``details`` it is a read-only view of them (:class:`DetailsView`, each read warns
        ``FutureWarning``): read ``details`` instead.
    details : dataclass or None
        The family's typed details (:class:`goalfit.methods.ramp.method.RampDetails`,
        :class:`goalfit.methods.subdata.method.SubdataDetails`,
        :class:`goalfit.methods.surrogate.method.SurrogateDetails`,
        :class:`goalfit.torch.method.LagrangianDetails`,
        :class:`goalfit.methods.plugin.PluginDetails`, ...): what the family's estimator
        reads back (coefficients, multipliers, the selection, the trainer, why a plug-in
        method stopped and its certified gap, ...).
    warn_infeasible : bool
        Whether the estimator warns when the returned rule breaks a constraint on the training
        sample (False when the family says it itself, with its own diagnosis).
    infeasible_note : str or None
        Appended to that warning (e.g. what a relaxation's randomized rule achieves).
    """

    members: list
    weights: np.ndarray
    confusions: np.ndarray
    method: str
    history: list = field(default_factory=list)
    n_oracle_calls: int = 0
    feasible: bool = True
    message: str = ""
    certificates: Mapping = field(default_factory=dict)
    details: object = None
    warn_infeasible: bool = True
    infeasible_note: str | None = None

    def __post_init__(self):
        if self.details is not None and not self.certificates:
            self.certificates = DetailsView(self.details)

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


class DetailsView(Mapping):
    """A read-only mapping over a family's typed details (``result.certificates`` of 0.1, by name).

    ``view[name]`` is ``getattr(details, name)``; a nested dataclass is viewed the same way, so
    ``result.certificates["randomized"]["feasible"]`` still reads
    ``result.details.randomized.feasible``. Each read or listing warns ``FutureWarning`` naming
    the attribute of ``details`` to read instead (the view is removed in 0.3).

    Parameters
    ----------
    details : dataclass instance
        The family's typed details.
    path : str, default "details"
        How the user reaches ``details`` from the result, for the warning (a nested view
        extends it: ``"details.randomized"``).

    Raises
    ------
    KeyError
        A name that is not a field of ``details``.
    TypeError
        Item assignment (the view is read-only).

    Examples
    --------
    >>> import warnings
    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class D:
    ...     n_iter: int
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", FutureWarning)
    ...     DetailsView(D(3))["n_iter"]
    3
    """

    def __init__(self, details, path: str = "details"):
        self._details = details
        self._path = path
        self._names = [f.name for f in fields(details)]

    def __getitem__(self, name):
        if name not in self._names:
            raise KeyError(name)
        old = "FitResult.certificates" + "".join(f"[{key!r}]" for key in self._path.split(".")[1:])
        warn_deprecated(f"{old}[{name!r}]", f"FitResult.{self._path}.{name}")
        value = getattr(self._details, name)
        if is_dataclass(value) and not isinstance(value, type):
            return DetailsView(value, f"{self._path}.{name}")
        return value

    def __iter__(self):
        warn_deprecated("iterating FitResult.certificates", f"dataclasses.fields(FitResult.{self._path})")
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __repr__(self) -> str:
        return f"DetailsView({self._details!r})"
