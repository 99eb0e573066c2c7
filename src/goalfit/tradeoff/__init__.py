"""Trade-off curves (frontiers) of goals: :func:`frontier`."""
from .frontier import Frontier, frontier

__all__ = ["Frontier", "frontier"]
