"""The goalfit command end to end on real data, and its errors on bad specs (exit code 2)."""
import json

import pytest
from typer.testing import CliRunner

from goalfit.cli.app import app

pytestmark = pytest.mark.quick  # in the quick subset (README: python -m pytest -m quick)

runner = CliRunner()


def _no_download(monkeypatch):
    import goalfit.datasets._base as base

    def refuse(url, dest, folder, spec):
        raise AssertionError(f"tried to download {url}")
    monkeypatch.setattr(base, "_download", refuse)


def test_demo_meets_the_issue_targets(tmp_path, monkeypatch):
    """On the Adult shipped inside the package: no GOALFIT_DATA, an empty cache, no network."""
    monkeypatch.delenv("GOALFIT_DATA", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    _no_download(monkeypatch)
    out = tmp_path / "r.json"
    res = runner.invoke(app, ["demo", "--json", str(out)])
    assert res.exit_code == 0, res.output
    r = json.loads(out.read_text())
    assert r["metrics"]["test"]["accuracy"] >= 0.82
    dp = r["constraints"][0]
    assert dp["name"] == "demographic_parity_difference('sex') <= 0.01"
    assert dp["train"] <= 0.01 + 1e-9
    assert dp["test"] <= 0.02
    assert r["baseline"]["constraints"][0]["train"] > 0.1  # unconstrained LR is far from parity
    assert set(r["timing"]) == {"base_fit_seconds", "total_fit_seconds"}
    assert r["objective"]["name"] == "error"


def test_demo_names_a_missing_goalfit_data_folder_in_one_line(tmp_path, monkeypatch):
    missing = tmp_path / "x" / "y"
    monkeypatch.setenv("GOALFIT_DATA", str(missing))
    res = runner.invoke(app, ["demo"])
    assert res.exit_code == 1 and isinstance(res.exception, SystemExit), res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: GOALFIT_DATA={missing}: no such folder"), lines
    assert "Traceback" not in res.output


def test_fit_names_the_dataset_missing_from_goalfit_data(tmp_path, monkeypatch):
    """The folder exists but holds no compas and the download fails: where it looked, why, the
    instructions once, no "set GOALFIT_DATA" (it is set), exit 1 without a traceback."""
    data = tmp_path / "data"
    data.mkdir()
    monkeypatch.setenv("GOALFIT_DATA", str(data))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("GOALFIT_DOWNLOAD_MIRROR", raising=False)
    import goalfit.datasets._base as base

    def offline(url, dest, folder, spec):
        raise base.DatasetDownloadError(f"could not download {folder}/{spec.name} from {url}: offline")
    monkeypatch.setattr(base, "_download", offline)
    spec = tmp_path / "spec.toml"
    spec.write_text('[data]\ndataset = "compas"\nsensitive = ["race"]\n[goals]\nobjective = "error"\n')
    res = runner.invoke(app, ["fit", str(spec), "--out", str(tmp_path / "o")])
    assert res.exit_code == 1 and isinstance(res.exception, SystemExit), res.output
    text = res.output.replace("\n", " ")
    wanted = f"error: dataset 'compas' not found in GOALFIT_DATA={data} (looked for {data / 'compas'}"
    assert res.output.startswith(wanted), res.output
    assert text.count("To provide it:") == 1 and "offline" in text and "Traceback" not in text
    assert "set the environment variable" not in text


def _fit_german(tmp_path, goals: str):
    """Run ``goalfit fit`` on German credit (sex; 70/30 split, seed 1) with a [goals] body;
    returns the output folder and its report."""
    spec = tmp_path / "spec.toml"
    spec.write_text('[data]\ndataset = "german"\nsensitive = ["sex"]\ntest_size = 0.3\nseed = 1\n'
                    '[goals]\nobjective = "error"\n' + goals)
    out = tmp_path / "out"
    res = runner.invoke(app, ["fit", str(spec), "--out", str(out)])
    assert res.exit_code == 0, res.output
    return out, json.loads((out / "report.json").read_text())


def test_fit_spec_writes_model_report_and_plots(tmp_path, need_data):
    need_data("german")
    out, r = _fit_german(
        tmp_path, 'constraints = ["demographic_parity_difference(\'sex\') <= 0.02", "true_positive_rate() >= 0.6"]\n')
    assert [c["met_train"] for c in r["constraints"]] == [True, True]
    assert r["n_train"] == 700 and r["n_test"] == 300
    for f in ("model.joblib", "convergence.png", "group_rates.png"):
        assert (out / f).stat().st_size > 0
    import joblib

    model = joblib.load(out / "model.joblib")
    assert model.feasible_


def test_fit_csv(tmp_path):
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    n = 400
    df = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.normal(size=n),
                       "grp": rng.choice(["a", "b"], size=n)})
    df["label"] = (df.x1 + 0.5 * (df.grp == "a") + rng.normal(size=n) > 0).astype(int)
    csv = tmp_path / "d.csv"
    df.to_csv(csv, index=False)
    spec = tmp_path / "s.toml"
    spec.write_text(f'[data]\ncsv = "{csv}"\nlabel = "label"\nsensitive = ["grp"]\n'
                    '[goals]\nconstraints = ["equal_opportunity_difference(\'grp\') <= 0.05"]\n')
    res = runner.invoke(app, ["fit", str(spec), "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
    r = json.loads((tmp_path / "o" / "report.json").read_text())
    assert r["constraints"][0]["train"] <= 0.05 + 1e-9


@pytest.mark.parametrize("goals, message", [
    ('constraints = ["demographic_parity_diff(\'sex\') <= 0.01"]', "unknown metric"),
    ('constraints = ["demographic_parity_difference(\'sex\') <= 1.5"]', "out of range"),
    ('constraints = ["precision(1) >= -0.2"]', "out of range"),
    ('objective = "accuracyy"', "unknown"),
    ('constraints = ["demographic_parity_difference(\'gender\') <= 0.01"]', "gender"),
    ('method = "magic"', "unknown method"),
])
def test_bad_spec_exit_code_2(tmp_path, goals, message, need_data):
    need_data("german")
    spec = tmp_path / "bad.toml"
    spec.write_text(f'[data]\ndataset = "german"\nsensitive = ["sex"]\n[goals]\n{goals}\n')
    res = runner.invoke(app, ["fit", str(spec), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2, res.output
    assert message in res.output


def test_bad_spec_structure(tmp_path, need_data):
    need_data("german")
    for text, message in [
        ('[data]\ndataset = "nope"\n', "unknown dataset"),
        ('[data]\ndataset = "german"\nsensitive = ["colour"]\n', "unknown sensitive column"),
        ('[data]\ndataset = "german"\n[extra]\nx = 1\n', "unknown section"),
        ('[data]\ndataset = "german"\ntest_size = 2\n', "test_size"),
        ('[data\n', "invalid TOML"),
    ]:
        spec = tmp_path / "bad.toml"
        spec.write_text(text)
        res = runner.invoke(app, ["fit", str(spec), "--out", str(tmp_path / "o")])
        assert res.exit_code == 2, (text, res.output)
        assert message in res.output, (text, res.output)


def test_datasets_command_lists_found(need_data):
    need_data("adult")
    res = runner.invoke(app, ["datasets"])
    assert res.exit_code == 0
    assert "adult" in res.output and "yes" in res.output


def test_fit_spec_with_the_ramp_method(tmp_path, need_data):
    need_data("german")
    spec = tmp_path / "spec.toml"
    spec.write_text(
        '[data]\ndataset = "german"\nsensitive = ["sex"]\ntest_size = 0.3\nseed = 1\n'
        '[goals]\nobjective = "error"\nmethod = "ramp"\nestimator_params = {max_iter = 3}\n'
        'constraints = ["positive_prediction_rate(group=\'Female\') >= 0.9 * positive_prediction_rate(group=\'Male\')"]\n'
    )
    out = tmp_path / "out"
    res = runner.invoke(app, ["fit", str(spec), "--out", str(out)])
    assert res.exit_code == 0, res.output
    r = json.loads((out / "report.json").read_text())
    assert r["constraints"][0]["met_train"] and r["constraints_met_train"]
    assert r["baseline_name"] == "randomized"
    import joblib

    model = joblib.load(out / "model.joblib")[-1]  # preprocessing + RampClassifier
    assert model.n_iter_ <= 3 and model.history_[-1]["objective"] <= model.history_[0]["objective"]
    bad = tmp_path / "bad.toml"
    bad.write_text('[data]\ndataset = "german"\nsensitive = ["sex"]\n[goals]\nmethod = "ramp"\n'
                   'method_params = {max_iterations = 3}\n')
    res = runner.invoke(app, ["fit", str(bad)])
    assert res.exit_code == 2 and "method_params" in res.output and "did you mean" in res.output


def test_fit_spec_with_the_subdata_method(tmp_path, need_data):
    need_data("german")
    out, r = _fit_german(tmp_path, 'method = "subdata"\nmethod_params = {t = 1.0}\n'
                                   'estimator_params = {alpha = 0.01, max_iter = 10}\n'
                                   'constraints = ["error_rate_difference(\'sex\') <= 0.02"]\n')
    assert r["baseline_name"] == "unconstrained" and r["n_train"] == 700
    assert r["constraints"][0]["expression"] == "error_rate_difference('sex')"
    sel = r["selection"]
    assert sel["fairness_z_train"] <= 1e-9 and sel["zstep_exact"]  # exact on the selection z
    assert r["constraints_met_train"] == r["constraints"][0]["met_train"]
    assert 0.6 <= r["metrics"]["test"]["accuracy"] <= 1 and 0.6 <= r["baseline"]["metrics"]["test"]["accuracy"]
    for f in ("model.joblib", "convergence.png", "group_rates.png"):
        assert (out / f).stat().st_size > 0
    import joblib

    from goalfit.datasets import load_dataset

    model = joblib.load(out / "model.joblib")  # preprocessing + FairSubdataClassifier
    ds = load_dataset("german")
    pred = model.predict(ds.data.iloc[:20])
    assert set(pred) <= set(ds.target.unique())
    for goals, message in [
        ('objective = "hmean"\nmethod = "subdata"\n', "linear objective"),
        ('method = "subdata"\nmethod_params = {rhoo = 1.0}\n', "did you mean 'rho'"),
        ('method = "subdata"\nestimator_params = {lamda = 0.1}\n', "does not take ['lamda']"),
    ]:
        bad = tmp_path / "bad.toml"
        bad.write_text(f'[data]\ndataset = "german"\nsensitive = ["sex"]\n[goals]\n{goals}')
        res = runner.invoke(app, ["fit", str(bad), "--out", str(tmp_path / "o")])
        assert res.exit_code == 2 and message in res.output, (goals, res.output)


def test_fit_spec_with_cross_fitting_confidence_and_intervals(tmp_path, need_data):
    need_data("german")
    out, r = _fit_german(tmp_path, 'constraints = ["true_positive_rate() >= 0.5"]\ncv = 3\nconfidence = 0.9\n')
    assert r["cross_fitting"] == {"folds": 3, "deployed_model": "average"}
    assert r["confidence"] == 0.95 and r["confidence_fit"] == 0.9
    (cert,) = r["certification"]
    assert cert["passed"] == r["certified"] and cert["margin"] > 0
    c = r["constraints"][0]
    assert c["interval_test"][0] <= c["test"] <= c["interval_test"][1]
    assert c["interval_method"] == "clopper_pearson"
    for bad, words in [("cv = 1\n", "'cv' parameter"), ("confidence = 2.0\n", "'confidence' parameter"),
                       ("margin = -0.1\n", "'margin' parameter"), ("group_blind = 1\n", "true or false"),
                       ('method = "ramp"\ngroup_blind = true\n', "does not take ['group_blind']")]:
        spec = tmp_path / "bad.toml"
        spec.write_text('[data]\ndataset = "german"\nsensitive = ["sex"]\n[goals]\n'
                        'constraints = ["true_positive_rate() >= 0.5"]\n' + bad)
        res = runner.invoke(app, ["fit", str(spec), "--out", str(tmp_path / "o2")])
        assert res.exit_code == 2 and words in res.output, res.output


def test_fit_spec_group_blind_drops_the_sensitive_column(tmp_path, need_data):
    need_data("german")
    out, r = _fit_german(tmp_path, 'constraints = ["demographic_parity_difference(\'sex\') <= 0.05"]\n'
                                   'group_blind = true\n')
    import joblib

    model = joblib.load(out / "model.joblib")
    assert model.group_blind and "sex" not in list(model.feature_names_in_)
    assert r["constraints"][0]["met_train"]
