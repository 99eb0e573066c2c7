"""Progress of long fits: the phase, the iteration, the objective and the worst violation.

``verbose=0`` (every estimator's default in library use) prints nothing. ``verbose=1`` prints
a line when a phase starts, at most every :attr:`Progress.interval` seconds the current
iteration with the seconds spent in the phase so far, and a line with the phase's own duration
when it ends (``column_generation took 0.22 s``); ``verbose=2`` prints every update. On a terminal the lines are drawn by rich; in a
file or a pipe (a CLI run redirected, a notebook's captured stream) they are plain text lines.
"""
from __future__ import annotations

import sys
import time


class Progress:
    """Reports the phases and iterations of one fit.

    Parameters
    ----------
    verbose : int, default 0
        0: silent; 1: phases and throttled iterations; 2: every iteration.
    who : str
        Name printed at the start of each line (the estimator's class).
    stream : file-like, optional
        Where to write (default ``sys.stderr``).
    interval : float, default 1.0
        Seconds between two iteration lines at ``verbose=1``.
    """

    def __init__(self, verbose: int = 0, *, who: str = "goalfit", stream=None, interval: float = 1.0):
        self.verbose = int(verbose or 0)
        self.who = who
        self.stream = stream
        self.interval = float(interval)
        self.start = time.perf_counter()
        self._last = -float("inf")
        self._phase = ""
        self._phase_start = self.start
        self._total: int | None = None
        self._unit = "iteration"

    @property
    def enabled(self) -> bool:
        return self.verbose > 0

    def _write(self, text: str) -> None:
        stream = self.stream if self.stream is not None else sys.stderr
        if getattr(stream, "isatty", lambda: False)():
            from rich.console import Console

            Console(file=stream, highlight=False, soft_wrap=True).print(f"[dim]{self.who}[/dim] {text}",
                                                                       markup=True)
        else:
            stream.write(f"[{self.who}] {text}\n")
            stream.flush()

    def phase(self, name: str, total: int | None = None, unit: str = "iteration") -> None:
        """Start a phase (``"fitting the base model"``, ``"split_frank_wolfe"``, ...) of at most
        ``total`` steps, each called a ``unit`` (iteration, epoch, fold, point)."""
        self.end_phase()
        self._phase, self._total, self._unit = name, total, unit
        self._last = self._phase_start = time.perf_counter()  # the first iteration line comes after an interval
        if self.enabled:
            size = "" if total is None else f" (at most {total} {unit}s)"
            self._write(f"{name}{size} ...")

    def end_phase(self) -> None:
        """End the current phase: print its own duration (``column_generation took 0.22 s``).
        :meth:`phase` and :meth:`done` call it; a second call does nothing."""
        if self._phase and self.enabled:
            self._write(f"{self._phase} took {_seconds(time.perf_counter() - self._phase_start)}")
        self._phase = ""

    def due(self) -> bool:
        """Whether an :meth:`update` now would print (enabled, and the interval has passed at ``verbose=1``)."""
        return self.enabled and (self.verbose >= 2 or time.perf_counter() - self._last >= self.interval)

    def update(self, iteration: int | None = None, *, objective: float | None = None,
               max_violation: float | None = None, force: bool = False, **fields) -> None:
        """Report the current iteration (throttled at ``verbose=1``)."""
        if not self.enabled:
            return
        now = time.perf_counter()
        if not force and self.verbose < 2 and now - self._last < self.interval:
            return
        self._last = now
        parts = [self._phase]
        if iteration is not None:
            parts.append(f"{self._unit} {iteration}" + ("" if self._total is None else f"/{self._total}"))
        if objective is not None:
            parts.append(f"objective {objective:.4g}")
        if max_violation is not None:
            parts.append(f"max violation {max_violation:.3g}")
        parts += [f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in fields.items()]
        parts.append(_seconds(now - self._phase_start))
        self._write("  ".join(p for p in parts if p))

    def done(self, message: str = "done") -> None:
        """End the current phase (its duration), then the fit's last line (the whole fit's duration)."""
        self.end_phase()
        if self.enabled:
            self._write(f"{message} in {_seconds(time.perf_counter() - self.start)}")


def _seconds(t: float) -> str:
    """``0.004 s``, ``0.22 s``, ``12.3 s``."""
    return f"{t:.3f} s" if t < 0.1 else f"{t:.2f} s" if t < 10 else f"{t:.1f} s"


#: The silent reporter (``verbose=0``).
SILENT = Progress(0)
