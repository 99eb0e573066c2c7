"""Optional dependencies, imported where a feature needs them, with the extra that installs them."""
from __future__ import annotations

import importlib

# module -> the pyproject extra that installs it
EXTRAS = {"cvxpy": "cvx", "clarabel": "cvx", "pyscipopt": "mip", "torch": "torch"}


def optional_import(module: str, feature: str):
    """Import ``module`` or raise an ImportError naming the feature and the extra to install.

    Raises
    ------
    ImportError
        ``"<feature> needs cvxpy, an optional dependency: pip install 'goalfit[cvx]'"``.
    """
    try:
        return importlib.import_module(module)
    except ImportError as err:
        extra = EXTRAS.get(module.split(".")[0])
        how = f"pip install 'goalfit[{extra}]'" if extra else f"pip install {module}"
        raise ImportError(f"{feature} needs {module}, an optional dependency: {how}") from err
