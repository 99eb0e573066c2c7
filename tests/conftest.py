import os
from pathlib import Path

# One thread per BLAS / OpenMP / torch pool, set before numpy, scipy or torch load (this conftest is
# imported before any test module; subprocesses such as the CLI tests inherit it). The tests' problems
# are small: a second thread only synchronizes, and on a busy 2-core machine the waiting threads spin,
# e.g. a 3000-step full-batch torch fit of 300 rows took 112 CPU s with torch's default threads and 6 s
# with one. Set one of these variables to override it.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import pytest

_DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "data"
if "GOALFIT_DATA" not in os.environ and _DEFAULT.is_dir():
    os.environ["GOALFIT_DATA"] = str(_DEFAULT)
elif os.environ.get("GOALFIT_DATA"):  # absolute: tests that change directory still find the data
    os.environ["GOALFIT_DATA"] = os.pathsep.join(str(Path(p).resolve()) for p in os.environ["GOALFIT_DATA"].split(os.pathsep))


@pytest.fixture(scope="module")
def one_thread():
    """One thread in every BLAS / OpenMP pool for a module, whatever the environment says: tiny matrix
    products (L-BFGS-B's, the surrogate's) slow down some 30x when threads compete with another busy
    process, and some modules compare with values saved from one-thread runs."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        yield


#: Set to 1 to skip (instead of fail) the tests whose real data is not found.
SKIP_MISSING_DATA = "GOALFIT_SKIP_MISSING_DATA"
#: Datasets shipped inside the package: always available.
SHIPPED = {"adult"}


def missing_data(what: str):
    """A test needs real data that is not found: fail it with one line naming the folder, or skip
    it when ``GOALFIT_SKIP_MISSING_DATA=1`` (an explicit opt-out, e.g. a machine without the data)."""
    root = os.environ.get("GOALFIT_DATA")
    where = f"GOALFIT_DATA={root}" if root else f"GOALFIT_DATA is not set and {_DEFAULT} does not exist"
    message = (f"{what} not found ({where}): set GOALFIT_DATA to the folder holding one sub-folder "
               f"per dataset, or {SKIP_MISSING_DATA}=1 to skip the tests that need it")
    if os.environ.get(SKIP_MISSING_DATA, "").strip() == "1":
        pytest.skip(message)
    pytest.fail(message, pytrace=False)


def pytest_report_header(config):
    """What the suite covers, printed before the dots."""
    data = os.environ.get("GOALFIT_DATA") or (
        "(none: Adult is read from the copy shipped with goalfit; tests that need another dataset "
        + ("are skipped)" if os.environ.get(SKIP_MISSING_DATA, "").strip() == "1"
           else f"fail unless {SKIP_MISSING_DATA}=1)"))
    return [f"goalfit tests: the goal vocabulary, confusion statistics, the fit core, the five method families "
            f"(plug-in, ramp, subdata, surrogate, torch Lagrangian), scikit-learn's estimator checks on every "
            f"estimator, bad inputs, certification and intervals, reports, trade-off curves, the CLI, Dask and "
            f"the README's examples; datasets from {data}"]


def _have(folder: str) -> bool:
    roots = [p for p in os.environ.get("GOALFIT_DATA", "").split(os.pathsep) if p]
    return any((Path(root) / folder).is_dir() for root in roots)


@pytest.fixture
def need_data():
    """``need_data(folder)``: the test needs that dataset; see :func:`missing_data`."""
    def check(folder):
        if folder not in SHIPPED and not _have(folder):
            missing_data(f"dataset {folder!r}")
    return check


@pytest.fixture
def cli_fit(tmp_path):
    """Run ``goalfit fit`` on a TOML spec; returns ``(report dict, saved model)``.

    Asserts the exit code is 0 and, when the spec names a registry ``dataset``, that the saved
    model (preprocessing included) predicts that dataset's labels from its first 20 raw rows
    without the sensitive features. ``out`` names the output folder under ``tmp_path``.
    """
    def run(spec_text: str, out: str = "out"):
        import json
        import tomllib

        import joblib
        from typer.testing import CliRunner

        from goalfit.cli.app import app

        spec = tmp_path / f"{out}.toml"
        spec.write_text(spec_text)
        res = CliRunner().invoke(app, ["fit", str(spec), "--out", str(tmp_path / out)])
        assert res.exit_code == 0, res.output
        report = json.loads((tmp_path / out / "report.json").read_text())
        model = joblib.load(tmp_path / out / "model.joblib")
        dataset = tomllib.loads(spec_text).get("data", {}).get("dataset")
        if dataset is not None:
            from goalfit.datasets import load_dataset

            ds = load_dataset(dataset)
            assert set(model.predict(ds.data.iloc[:20])) <= set(ds.target.unique())
        return report, model
    return run
