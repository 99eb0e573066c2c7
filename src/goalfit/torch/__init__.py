"""Rate-constrained training of PyTorch networks (optional extra ``goalfit[torch]``).

The maintained successor of TFCO's workflow on PyTorch: the goals of :mod:`goalfit.goals`
(compiled once by the core) become differentiable per-batch proxy rates
(:mod:`goalfit.torch.rates`); any ``torch.nn.Module`` is trained with the Lagrangian or the
proxy-Lagrangian formulation (:mod:`goalfit.torch.train`, :mod:`goalfit.torch.multipliers`);
the snapshots are shrunk to a stochastic classifier of at most ``m + 1`` networks or reduced to
TFCO's best iterate (:mod:`goalfit.torch.candidates`). :class:`LagrangianClassifier` is the
scikit-learn estimator.

``import goalfit`` does not import this package (nor torch).
"""
try:
    import torch  # noqa: F401
except ImportError as err:  # pragma: no cover - depends on the environment
    raise ImportError("goalfit.torch needs PyTorch: pip install 'goalfit[torch]'") from err

from .candidates import best_iterate, shrink
from .estimator import LagrangianClassifier, make_mlp
from .method import LAGRANGIAN_PARAMS, LagrangianMethod
from .rates import PROXIES, RateProblem, indicators
from .train import FORMULATIONS, NetworkMember, NetworkPredictor, Snapshot, Trainer

__all__ = ["FORMULATIONS", "LAGRANGIAN_PARAMS", "LagrangianClassifier", "LagrangianMethod", "NetworkMember", "NetworkPredictor", "PROXIES", "RateProblem",
           "Snapshot", "Trainer", "best_iterate", "indicators", "make_mlp", "shrink"]
