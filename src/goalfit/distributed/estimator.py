"""Deprecated (removed in 0.3): moved to :mod:`goalfit.distributed.backend` (the same functions;
:func:`goalfit.distributed.fit` and friends are the public spelling). Each use warns FutureWarning."""
from ..utils.deprecation import moved_module

__getattr__ = moved_module(__name__, "goalfit.distributed.backend")
