"""Every name of every public module's ``__all__`` imports and resolves, once, without a warning
(a deprecated spelling is never advertised in ``__all__``)."""
import importlib
import warnings
from pathlib import Path

import pytest

import goalfit

pytestmark = pytest.mark.quick  # in the quick subset (README: python -m pytest -m quick)

ROOT = Path(goalfit.__file__).parent

#: The API's packages: each must declare __all__.
PACKAGES = ["goalfit", "goalfit.goals", "goalfit.metrics", "goalfit.estimators", "goalfit.methods", "goalfit.fit",
            "goalfit.report", "goalfit.tradeoff", "goalfit.datasets", "goalfit.confusion", "goalfit.classifiers",
            "goalfit.distributed", "goalfit.torch", "goalfit.methods.plugin", "goalfit.methods.ramp",
            "goalfit.methods.surrogate"]


def _public_modules():
    """Every module of the package whose dotted name has no part starting with an underscore."""
    for path in sorted(ROOT.rglob("*.py")):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if not any(p.startswith("_") for p in parts):
            yield ".".join(parts)


MODULES = list(_public_modules())


def _import(name):
    if name.startswith("goalfit.torch"):
        pytest.importorskip("torch")
    if name.startswith("goalfit.distributed."):
        pytest.importorskip("dask")
    return importlib.import_module(name)


def test_the_walk_sees_the_packages():
    assert set(PACKAGES) <= set(MODULES) and len(MODULES) > 100


@pytest.mark.parametrize("name", PACKAGES)
def test_packages_declare_all(name):
    assert isinstance(getattr(_import(name), "__all__", None), list)


@pytest.mark.parametrize("name", MODULES)
def test_all_names_resolve_once_without_warning(name):
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        warnings.simplefilter("error", DeprecationWarning)
        module = _import(name)
        names = getattr(module, "__all__", None)
        if names is None:
            return
        duplicates = sorted({n for n in names if names.count(n) > 1})
        assert not duplicates, f"{name}.__all__ lists {duplicates} more than once"
        for attr in names:
            assert isinstance(attr, str)
            getattr(module, attr)  # AttributeError / ImportError name the broken entry


def test_star_import():
    namespace = {}
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        exec("from goalfit import *", namespace)  # noqa: S102
    assert set(goalfit.__all__) <= set(namespace) | {"__version__"}
    assert namespace["GoalClassifier"] is goalfit.GoalClassifier


def test_version():
    """One version: pyproject.toml's is goalfit.__version__ and CHANGELOG.md's top release."""
    import tomllib

    repo = ROOT.parents[1]
    if not (repo / "pyproject.toml").exists():
        pytest.skip("not a source checkout")
    project = tomllib.loads((repo / "pyproject.toml").read_text())["project"]
    assert project["version"] == goalfit.__version__ == "0.2.0"
    releases = [line for line in (repo / "CHANGELOG.md").read_text().splitlines() if line.startswith("## ")]
    assert releases[0].startswith(f"## {goalfit.__version__}")
