"""What ``import goalfit``, ``goalfit --version`` and the first estimator load: heavy and optional
modules only where used (module presence in a fresh interpreter, never wall-clock time; the
timings live in benchmarks/README.md)."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ["numba", "llvmlite", "matplotlib", "torch", "dask", "distributed", "cvxpy", "pyscipopt", "typer",
         "sklearn", "pandas", "scipy.optimize"]


def _loaded(code: str, names=HEAVY) -> dict:
    """Which of ``names`` are in sys.modules after running ``code`` in a new interpreter."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps({{n: n in sys.modules for n in {list(names)!r}}}))"
    out = subprocess.run([sys.executable, "-c", probe], check=False, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_goalfit_loads_no_heavy_module():
    loaded = _loaded("import goalfit as gf\ngf.demographic_parity_difference('sex') <= 0.01")
    assert not any(loaded.values()), [n for n, v in loaded.items() if v]


def test_version_fast_path_loads_no_heavy_module(capsys):
    loaded = _loaded("from goalfit.cli import main\nassert main(['--version']) == 0")
    assert not any(loaded.values()), [n for n, v in loaded.items() if v]
    from goalfit import __version__
    from goalfit.cli import main

    assert main(["--version"]) == 0 and capsys.readouterr().out == f"goalfit {__version__}\n"


def test_version_entry_point_matches_the_app():
    """The fast path prints what the typer app's --version prints."""
    from typer.testing import CliRunner

    from goalfit import __version__
    from goalfit.cli.app import app

    res = CliRunner().invoke(app, ["--version"])
    assert res.exit_code == 0 and res.output == f"goalfit {__version__}\n"


def test_first_goal_classifier_loads_only_its_family():
    code = ("import numpy as np, goalfit as gf\n"
            "rng = np.random.default_rng(0); X = rng.normal(size=(200, 3)); s = rng.choice(['a', 'b'], 200)\n"
            "y = (X[:, 0] + rng.normal(size=200) > 0).astype(int)\n"
            "m = gf.GoalClassifier(constraints=[gf.demographic_parity_difference() <= 0.05])\n"
            "m.fit(X, y, sensitive_features=s); m.predict(X, sensitive_features=s)")
    families = ["goalfit.methods.ramp", "goalfit.methods.subdata", "goalfit.methods.surrogate",
                "goalfit.estimators.ramp_classifier", "goalfit.estimators.fair_subdata", "sklearn.ensemble"]
    loaded = _loaded(code, ["numba", "matplotlib", "torch", "dask", "cvxpy", "pyscipopt", "typer", *families])
    assert not any(loaded.values()), [n for n, v in loaded.items() if v]


@pytest.mark.parametrize("name", ["GoalClassifier", "RampClassifier", "FairSubdataClassifier", "make_estimator",
                                  "select_ramp_params", "FoldAverage"])
def test_lazy_estimator_names_resolve(name):
    import goalfit.estimators as est

    obj = getattr(est, name)
    assert obj.__name__ == name and name in dir(est)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        est.nope  # noqa: B018
