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
