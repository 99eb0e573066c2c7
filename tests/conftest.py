import os
from pathlib import Path

import pytest

_DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "data"
if "GOALFIT_DATA" not in os.environ and _DEFAULT.is_dir():
    os.environ["GOALFIT_DATA"] = str(_DEFAULT)
elif os.environ.get("GOALFIT_DATA"):  # absolute: tests that change directory still find the data
    os.environ["GOALFIT_DATA"] = os.pathsep.join(str(Path(p).resolve()) for p in os.environ["GOALFIT_DATA"].split(os.pathsep))


def pytest_report_header(config):
    """What the suite covers, printed before the dots."""
    data = os.environ.get("GOALFIT_DATA") or "(none: tests that need a dataset are skipped)"
    return [f"goalfit tests: the goal vocabulary, confusion statistics, the fit core, the five method families "
            f"(plug-in, ramp, subdata, surrogate, torch Lagrangian), scikit-learn's estimator checks on every "
            f"estimator, bad inputs, certification and intervals, reports, trade-off curves, the CLI, Dask and "
            f"the README's examples; datasets from {data}"]


def _have(folder: str) -> bool:
    root = os.environ.get("GOALFIT_DATA")
    return bool(root) and (Path(root) / folder).is_dir()


@pytest.fixture
def need_data():
    def check(folder):
        if not _have(folder):
            pytest.skip(f"dataset folder {folder} not found under $GOALFIT_DATA")
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
