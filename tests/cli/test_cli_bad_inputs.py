"""Bad inputs to the ``goalfit`` command line: each gives one line naming the problem and the fix,
a sensible exit code (2: the spec or its data, 1: unexpected) and no traceback; a numeric column
holding a few non-numeric values is read as numbers, with a warning naming it."""
import json
import warnings

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from goalfit.cli.app import app

runner = CliRunner()
DP = "[goals]\nconstraints = [\"demographic_parity_difference('grp') <= 0.05\"]\n"
# a bound that the 84 training rows' smallest (group, class) slice can carry: no SmallSliceWarning (DP's
# 0.05 draws one, rightly, on these rows), so the tests on data warnings see theirs alone
DP_CARRIED = DP.replace("<= 0.05", "<= 0.3")


def _frame(n=120, seed=0):
    """A small table: two numeric features, a group and a 0/1 label that depends on x1."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x1": rng.normal(size=n).round(3), "x2": rng.normal(size=n).round(3),
                       "grp": rng.choice(["a", "b"], size=n)})
    df["label"] = (df.x1 + 0.5 * rng.normal(size=n) > 0).astype(int)
    return df


def _run(tmp_path, spec_text, *args, csv_text=None, csv_bytes=None, frame=None, command="fit"):
    """Write data.csv (text, bytes or a frame) and spec.toml, run ``goalfit <command> spec.toml``."""
    csv = tmp_path / "data.csv"
    if csv_bytes is not None:
        csv.write_bytes(csv_bytes)
    elif csv_text is not None:
        csv.write_text(csv_text)
    else:
        (_frame() if frame is None else frame).to_csv(csv, index=False)
    spec = tmp_path / "spec.toml"
    spec.write_text(spec_text.replace("CSV", str(csv)))
    out = tmp_path / "out"
    return runner.invoke(app, [command, str(spec), *args] + ([] if "--out" in args else ["--out", str(out)]))


SPEC = '[data]\ncsv = "CSV"\nlabel = "label"\nsensitive = ["grp"]\n'


def _one_line_error(res, code, *words):
    """Exit ``code``, no exception escaped, one ``error:`` line holding every word."""
    assert res.exit_code == code, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    assert "Traceback" not in res.output
    errors = [line for line in res.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, res.output
    for w in words:
        assert w in errors[0], (w, errors[0])
    return errors[0]


# -- a numeric column holding a few non-numeric values ------------------------------------------

def _with_marker(marker, n=120):
    df = _frame(n)
    df["age"] = (30 + 10 * df.x1).round().astype(int).astype(str)
    df.loc[3, "age"] = marker
    return df


def _encoded_width(model_dir):
    """Number of features the saved model's built-in TableEncoder makes of the table."""
    import joblib

    model = joblib.load(model_dir / "model.joblib")
    pipeline = model.estimator_ if hasattr(model, "estimator_") else model.estimator
    encoder = pipeline[0]
    return len(encoder.transformer_.get_feature_names_out()), encoder


def test_question_mark_in_a_numeric_column_is_missing_not_a_hundred_categories(tmp_path):
    df = _with_marker("?")
    res = _run(tmp_path, SPEC + DP, frame=df)
    assert res.exit_code == 0, res.output
    width, _ = _encoded_width(tmp_path / "out")
    assert width == 5  # x1, x2, age as numbers + grp one-hot (2); was one category per distinct age


def test_other_non_numeric_values_in_a_numeric_column_warn_naming_the_column(tmp_path):
    df = _with_marker("unknown")
    df.loc[7, "age"] = "unknown"
    res = _run(tmp_path, SPEC + DP_CARRIED, frame=df)
    assert res.exit_code == 0, res.output
    (line,) = [ln for ln in res.output.splitlines() if ln.startswith("warning:")]
    assert "column 'age' holds numbers on 118 of 120 rows" in line and "'unknown' (2 row(s))" in line
    assert "[data] na_values" in line
    width, encoder = _encoded_width(tmp_path / "out")
    assert width == 5 and "age" in encoder.numeric_columns_
    # the fix it names silences it, with the same features
    res = _run(tmp_path, SPEC + 'na_values = ["unknown"]\n' + DP_CARRIED, "--force", frame=df)
    assert res.exit_code == 0 and "warning:" not in res.output, res.output
    assert _encoded_width(tmp_path / "out")[0] == 5


def test_table_encoder_reads_numbers_stored_as_text_as_numbers():
    """The library path (a DataFrame read without na_values) gets the same reading and a warning."""
    from goalfit.estimators.models import DataWarning, TableEncoder

    ages = [20 + 10 * (i % 3) for i in range(40)]
    X = pd.DataFrame({"age": [str(a) for a in ages], "g": ["u", "v"] * 20})
    X.loc[2, "age"] = "?"
    with pytest.warns(DataWarning, match=r"column 'age' holds numbers on 39 of 40 rows and 1 other value\(s\): "
                                         r"'\?' \(1 row\(s\)\)"):
        enc = TableEncoder(sparse_output=False).fit(X)
    assert enc.numeric_text_columns_ == ["age"]
    Z = enc.transform(X)
    assert Z.shape == (40, 3)  # age as one number, g one-hot (was 4 categories of age)
    age = Z[:, enc.transformer_.get_feature_names_out().tolist().index("pipeline-2__age")]
    ages[2] = np.median(np.delete(ages, 2))  # '?' imputed with the median of the others (30)
    np.testing.assert_allclose(age, (np.array(ages) - np.mean(ages)) / np.std(ages))


def test_many_categories_for_the_rows_warn(tmp_path):
    df = _frame().assign(x1=[f"id{i}" for i in range(120)])
    res = _run(tmp_path, SPEC + DP_CARRIED, frame=df)
    assert res.exit_code == 0, res.output
    (line,) = [ln for ln in res.output.splitlines() if ln.startswith("warning:")]
    assert "column 'x1' has 120 distinct values in 120 rows" in line and "drop it" in line
    from goalfit.estimators.models import DataWarning, TableEncoder

    with pytest.warns(DataWarning, match="column 'x1' has 120 distinct values"):
        TableEncoder().fit(df.drop(columns="label"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # 2 groups in 120 rows: no warning
        TableEncoder().fit(_frame().drop(columns="label"))


# -- files that are not a regular CSV -----------------------------------------------------------

def test_ragged_csv(tmp_path):
    res = _run(tmp_path, SPEC + DP, csv_text="x1,grp,label\n1,a,0\n1,a,0,4\n2,b,1\n")
    _one_line_error(res, 2, "data.csv", "line 3 has 4 fields, the header has 3")


def test_binary_file(tmp_path):
    res = _run(tmp_path, SPEC + DP, csv_bytes=bytes(range(256)) * 8)
    _one_line_error(res, 2, "data.csv", "binary file")


def test_header_only_csv(tmp_path):
    res = _run(tmp_path, SPEC + DP, csv_text="x1,grp,label\n")
    _one_line_error(res, 2, "data.csv", "no data rows")


def test_empty_csv(tmp_path):
    res = _run(tmp_path, SPEC + DP, csv_text="")
    _one_line_error(res, 2, "data.csv", "is empty")


def test_csv_is_a_folder(tmp_path):
    res = _run(tmp_path, SPEC.replace('"CSV"', f'"{tmp_path}"') + DP)
    _one_line_error(res, 2, "[data] csv", "is a folder")


def test_non_utf8_csv_names_the_encoding_key(tmp_path):
    text = "x1,grp,label\n" + "".join(f"{i % 7},{'é' if i % 2 else 'a'},{(i // 2) % 2}\n" for i in range(60))
    res = _run(tmp_path, SPEC + DP, csv_bytes=text.encode("latin-1"))
    _one_line_error(res, 2, "data.csv", "not UTF-8", '[data] encoding = "latin-1"')
    res = _run(tmp_path, SPEC + 'encoding = "latin-1"\n' + DP, "--force", csv_bytes=text.encode("latin-1"))
    assert res.exit_code == 0, res.output
    res = _run(tmp_path, SPEC + 'encoding = "klingon"\n' + DP, "--force", csv_bytes=text.encode("latin-1"))
    _one_line_error(res, 2, "[data] encoding = 'klingon'", "not a known text encoding")


def test_csv_with_only_the_label_column(tmp_path):
    res = _run(tmp_path, '[data]\ncsv = "CSV"\nlabel = "label"\n', frame=_frame()[["label"]])
    _one_line_error(res, 2, "data.csv", "no feature column")


# -- the spec's keys ----------------------------------------------------------------------------

@pytest.mark.parametrize("spec, words", [
    ('[data]\ncsv = 5\nlabel = "label"\n', ["[data] csv must be a string", 'csv = "data.csv"']),
    (SPEC + 'seed = "abc"\n' + DP, ["[data] seed must be an integer", "'abc'"]),
    (SPEC + "seed = 1.5\n" + DP, ["[data] seed must be an integer", "1.5"]),
    (SPEC + "seed = -1\n" + DP, ["[data] seed must be >= 0"]),
    (SPEC.replace('["grp"]', "5") + DP, ["[data] sensitive must be a list of strings"]),
    (SPEC.replace('label = "label"', "label = 5") + DP, ["[data] label must be a string"]),
    (SPEC + "[goals]\nconstraints = 5\n", ["[goals] constraints must be a list of strings"]),
    (SPEC + "[goals]\nobjective = 5\n", ["[goals] objective must be a string", 'objective = "error"']),
    (SPEC + "[goals]\nmethod_params = 5\n", ["[goals] method_params must be a table"]),
])
def test_wrong_types(tmp_path, spec, words):
    _one_line_error(_run(tmp_path, spec), 2, *words)


def test_dataset_params_with_a_csv_are_refused(tmp_path):
    res = _run(tmp_path, SPEC + "params = {x = 1}\n" + DP)
    _one_line_error(res, 2, "[data] params", 'dataset = "name"')


def test_sensitive_column_that_is_the_label(tmp_path):
    res = _run(tmp_path, SPEC.replace('["grp"]', '["label"]') + DP.replace("grp", "label"))
    _one_line_error(res, 2, "sensitive column 'label' is the label column")


def test_sensitive_column_named_twice(tmp_path):
    res = _run(tmp_path, SPEC.replace('["grp"]', '["grp", "grp"]') + DP)
    _one_line_error(res, 2, "[data] sensitive lists ['grp'] more than once")


def test_missing_label_column_names_the_key(tmp_path):
    res = _run(tmp_path, SPEC.replace('label = "label"', 'label = "income"') + DP)
    _one_line_error(res, 2, "[data] label = 'income' is not a column", "columns: ['x1', 'x2', 'grp', 'label']")


def test_label_with_one_class(tmp_path):
    res = _run(tmp_path, SPEC + DP, frame=_frame().assign(label=1))
    _one_line_error(res, 2, "label column 'label'", "has one class ([1])")


def test_class_with_a_single_row(tmp_path):
    res = _run(tmp_path, SPEC + DP, frame=_frame().assign(label=lambda d: np.r_[2, d.label.to_numpy()[1:]]))
    _one_line_error(res, 2, "class 2 has a single row")


def test_test_size_too_small_for_the_classes(tmp_path):
    res = _run(tmp_path, SPEC + "test_size = 0.001\n" + DP)
    _one_line_error(res, 2, "[data] test_size = 0.001", "1 test")


def test_prefit_that_is_not_a_joblib_model(tmp_path):
    bad = tmp_path / "model.joblib"
    bad.write_text("not a model\n")
    res = _run(tmp_path, SPEC + f'[model]\nprefit = "{bad}"\n' + DP)
    _one_line_error(res, 2, "[model] prefit", "cannot load it as a joblib model")


# -- string labels: which class is positive -----------------------------------------------------

def _yes_no():
    return _frame().assign(label=lambda d: d.label.map({0: "no", 1: "yes"}))


def test_string_labels_name_the_positive_class_once_in_the_spec(tmp_path):
    # no default positive class for "no"/"yes": the goal that needs one says how to name it
    res = _run(tmp_path, SPEC + DP, frame=_yes_no())
    _one_line_error(res, 2, "classes ['no', 'yes']", "[data] pos_label = 'yes'")
    # named: encoded as 1 / 0, said in one line, and the goal holds for "yes" as the positive class
    res = _run(tmp_path, SPEC + 'pos_label = "no"\n' + DP, "--force", frame=_yes_no())
    assert res.exit_code == 0, res.output
    assert "positive class: 'no' of label 'label' ([data] pos_label), encoded as 1 and 'yes' as 0" in res.output
    r = json.loads((tmp_path / "out" / "report.json").read_text())
    assert r["constraints"][0]["train"] <= 0.05 + 1e-9
    import joblib

    model = joblib.load(tmp_path / "out" / "model.joblib")
    assert model.classes_.tolist() == [0, 1]
    res = _run(tmp_path, SPEC + 'pos_label = "maybe"\n' + DP, "--force", frame=_yes_no())
    _one_line_error(res, 2, "[data] pos_label = 'maybe' is not a class", "['no', 'yes']")


# -- the output folder, the frontier's bounds, unexpected errors --------------------------------

def test_out_folder_below_a_file(tmp_path):
    (tmp_path / "afile").write_text("x")
    res = _run(tmp_path, SPEC + DP, "--out", str(tmp_path / "afile" / "sub"))
    _one_line_error(res, 2, "--out", "is a file, not a folder")


def test_frontier_without_bounds(tmp_path):
    res = _run(tmp_path, SPEC + DP, "--bounds", "0:0.1:0", command="frontier")
    _one_line_error(res, 2, "--bounds '0:0.1:0' gives no bound")


def test_unexpected_error_is_one_line_and_debug_shows_it(tmp_path, monkeypatch):
    import goalfit.cli.app as cli

    def boom(*args, **kwargs):
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(cli, "run_spec", boom)
    res = _run(tmp_path, SPEC + DP)
    _one_line_error(res, 1, "RuntimeError: boom second line", "goalfit --debug")
    spec = tmp_path / "spec.toml"
    res = runner.invoke(app, ["--debug", "fit", str(spec), "--out", str(tmp_path / "o2")])
    assert isinstance(res.exception, RuntimeError)


def test_report_json_is_written_for_a_good_csv(tmp_path):
    """The checks above leave a good CSV alone: no warning line, the report as before."""
    res = _run(tmp_path, SPEC + DP_CARRIED)
    assert res.exit_code == 0 and "warning:" not in res.output and "positive class" not in res.output
    r = json.loads((tmp_path / "out" / "report.json").read_text())
    assert r["n_train"] == 84 and r["n_test"] == 36
    # DP <= 0.05 is more than these rows' smallest (group, class) slice carries: one warning line says so
    res = _run(tmp_path, SPEC + DP, "--force")
    (line,) = [ln for ln in res.output.splitlines() if ln.startswith("warning:")]
    assert res.exit_code == 0 and line.endswith("(SmallSliceWarning)") and "smallest slice (grp=" in line, line


def test_frontier_with_string_labels_names_pos_label(tmp_path):
    res = _run(tmp_path, SPEC + DP, "--bounds", "0.05,0.1", frame=_yes_no(), command="frontier")
    _one_line_error(res, 2, "classes ['no', 'yes']", "[data] pos_label = 'yes'")
