"""The ``goalfit`` command line (:mod:`goalfit.cli.app`; problem specifications: :mod:`goalfit.cli.spec`)."""
from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int | None:
    """Entry point of the ``goalfit`` command.

    ``goalfit --version`` answers without loading the command-line application (which imports
    scikit-learn, pandas and typer); every other call runs :func:`goalfit.cli.app.main`.

    Parameters
    ----------
    argv : list of str, optional
        The arguments after the program name (default: ``sys.argv[1:]``).

    Returns
    -------
    int or None
        The exit status (``0`` for ``--version``).

    Examples
    --------
    >>> main(["--version"])  # doctest: +ELLIPSIS
    goalfit ...
    0
    """
    args = sys.argv[1:] if argv is None else list(argv)
    if args == ["--version"]:
        from .. import __version__

        print(f"goalfit {__version__}")
        return 0
    from .app import main as run_app

    if argv is not None:
        sys.argv[1:] = args
    return run_app()
