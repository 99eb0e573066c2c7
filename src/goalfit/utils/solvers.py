"""Solver handles that print nothing."""
from __future__ import annotations

import os
import sys


def quiet_highs():
    """A ``highspy.Highs`` instance with logging off and no start-up banner.

    HiGHS prints its banner ("Running HiGHS ...") from the C++ constructor of the first
    instance of a process, before any option can be set, straight to file descriptor 1; the
    descriptor is pointed at ``os.devnull`` for the duration of the constructor, then
    ``output_flag`` is set to False for the solves.
    """
    import highspy

    sys.stdout.flush()
    try:
        fd = sys.stdout.fileno() if hasattr(sys.stdout, "fileno") else 1
    except (OSError, ValueError):  # a stdout without a descriptor (e.g. captured in memory)
        fd = 1
    saved = os.dup(fd)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), fd)
            h = highspy.Highs()
    finally:
        os.dup2(saved, fd)
        os.close(saved)
    h.setOptionValue("output_flag", False)
    return h


_BANNER_DONE = False


def silence_highs_banner():
    """Make sure HiGHS's once-per-process start-up banner has been swallowed.

    The banner comes with the first ``Highs`` instance of the process, also when another
    library (cvxpy's HIGHS interface) creates it; creating one through :func:`quiet_highs`
    first leaves nothing to print.
    """
    global _BANNER_DONE
    if not _BANNER_DONE:
        try:
            quiet_highs()
        except ImportError:  # pragma: no cover - highspy is a core dependency
            pass
        _BANNER_DONE = True


def solve_cvxpy(problem, solver):
    """``problem.solve(solver=solver)`` with no HiGHS banner on stdout."""
    if str(solver).upper() == "HIGHS":
        silence_highs_banner()
    return problem.solve(solver=solver)
