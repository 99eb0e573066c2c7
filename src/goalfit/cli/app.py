"""``goalfit`` command line: ``demo``, ``fit SPEC.toml``, ``frontier SPEC.toml --bounds ...``, ``datasets``."""
from __future__ import annotations

import contextlib
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import typer
from rich.console import Console

from .spec import Spec, SpecError, load_spec

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Train classifiers that meet real-world goals (fairness, coverage, churn, ...).")
console = Console()

DEMO = Spec(dataset="adult", sensitive=["sex"], estimator="logistic_regression", objective="error",
            constraints=["demographic_parity_difference('sex') <= 0.01"], method="auto")


def _fail(message: str, code: int = 2):
    err = Console(stderr=False, soft_wrap=True)
    err.print("error:", style="red", end=" ")
    err.print(message, markup=False, highlight=False)
    raise typer.Exit(code)


#: ``goalfit --debug``: show the traceback of an error instead of its one line.
_DEBUG = {"on": False}


@contextlib.contextmanager
def _errors():
    """One line per error, no traceback (unless ``goalfit --debug``): a bad spec or input exits 2,
    a missing file 1, anything unexpected 1 with its type and the way to see the traceback; a
    warning raised meanwhile prints as one ``warning:`` line."""
    from ..estimators.models import DataWarning

    with warnings.catch_warnings():
        warnings.simplefilter("default")
        warnings.simplefilter("ignore", DataWarning)  # load_data prints them once, on the whole table
        shown = set()

        def show(message, category, filename, lineno, file=None, line=None):
            text = str(message).strip()
            if text not in shown:
                shown.add(text)
                _warn(f"{text} ({category.__name__})")

        warnings.showwarning = show
        try:
            yield
        except SpecError as err:
            if _DEBUG["on"]:
                raise
            _fail(str(err), 2)
        except FileNotFoundError as err:
            if _DEBUG["on"]:
                raise
            _fail(str(err), 1)
        except Exception as err:
            if _DEBUG["on"] or isinstance(err, (typer.Exit, typer.Abort, typer.TyperException)):
                raise
            text = " ".join(str(err).split()) or "(no message)"
            _fail(f"{type(err).__name__}: {text} (unexpected; rerun as goalfit --debug ... for the traceback)", 1)


def load_data(spec: Spec):
    """Train/test features, labels and sensitive features for a spec.

    Raises
    ------
    SpecError
        Unknown dataset, unknown label or sensitive column.
    """
    from sklearn.model_selection import train_test_split

    if spec.files:  # Dask DataFrames (goalfit.distributed)
        from ..distributed.io import read_table

        assert spec.label is not None  # spec_from_dict requires a label with files = "glob"
        label, sensitive, features = spec.label, spec.sensitive, spec.features
        try:
            train = read_table(spec.files, label=label, sensitive=sensitive, features=features)
            test = (read_table(spec.test_files, label=label, sensitive=sensitive, features=features)
                    if spec.test_files else (None, None, None))
        except ValueError as err:
            raise SpecError(str(err)) from None
        return [train, test]
    if spec.dataset:
        from ..datasets import load_dataset, list_datasets

        if spec.dataset not in list_datasets():
            raise SpecError(f"unknown dataset {spec.dataset!r}; known: {list_datasets()}")
        official = {"adult", "a9a", "satimage", "shuttle", "segment"}
        if spec.dataset in official:
            tr = load_dataset(spec.dataset, subset="train", **spec.dataset_params)
            te = load_dataset(spec.dataset, subset="test", **spec.dataset_params)
            parts = [(tr.data, tr.target, tr.sensitive_features), (te.data, te.target, te.sensitive_features)]
        else:
            ds = load_dataset(spec.dataset, **spec.dataset_params)
            parts = _split(ds.data, ds.target, ds.sensitive_features, spec, train_test_split)
        out = []
        for X, y, S in parts:
            missing = [c for c in spec.sensitive if c not in S.columns]
            if missing:
                raise SpecError(f"unknown sensitive column(s) {missing} for dataset {spec.dataset!r}; "
                                f"known: {list(S.columns)}")
            out.append((X, np.asarray(y), S[spec.sensitive].reset_index(drop=True) if spec.sensitive else None))
        return out
    assert spec.csv is not None  # spec_from_dict requires exactly one of dataset, csv, files
    path = Path(spec.csv)
    frame = read_csv(path, encoding=spec.encoding, na_values=spec.na_values)
    for col in [spec.label] + spec.sensitive:
        if col not in frame.columns:
            what = "label" if col == spec.label else "sensitive"
            raise SpecError(f"[data] {what} = {col!r} is not a column of {path}; columns: {list(frame.columns)}")
    if len(frame.columns) == 1:
        raise SpecError(f"{path} has no feature column: only the label {spec.label!r}; a classifier needs "
                        "at least one more column")
    for col in [spec.label] + spec.sensitive:  # before any fitting: one line, exit code 2
        missing = frame[col].isna().to_numpy()
        if missing.any():
            rows = np.flatnonzero(missing)
            raise SpecError(f"{path}: column {col!r} ({'label' if col == spec.label else 'sensitive feature'}) "
                            f"has {len(rows)} missing value(s), first at data row {int(rows[0]) + 1}; "
                            "drop or fill those rows")
    y = check_label(frame[spec.label].to_numpy(), spec, path)
    X = _warn_about_columns(frame.drop(columns=[spec.label]))
    S = frame[spec.sensitive] if spec.sensitive else None
    parts = _split(X, y, S, spec, train_test_split)
    return [(X_, np.asarray(y_), S_) for X_, y_, S_ in parts]


#: Missing-value markers of a CSV besides pandas' own ('', 'NA', 'N/A', 'NaN', 'nan', 'null', 'NULL',
#: 'None', '#N/A', '-nan', ...): the UCI files' '?' (with or without a leading space).
NA_MARKERS = ["?", " ?"]


def read_csv(path: Path, *, encoding: str | None = None, na_values=()) -> pd.DataFrame:
    """The CSV file of a spec, with pandas' missing-value markers, '?' and ``na_values`` read as missing.

    Raises
    ------
    SpecError
        A missing file, a folder, a binary or empty file, a file in another encoding, rows with
        more fields than the header, a header without data rows (one line each, naming the file).
    """
    if not path.exists():
        raise SpecError(f"[data] csv = {str(path)!r}: the file does not exist")
    if path.is_dir():
        raise SpecError(f"[data] csv = {str(path)!r} is a folder; give the CSV file inside it")
    with open(path, "rb") as fh:
        head = fh.read(65536)
    if b"\x00" in head:
        raise SpecError(f"{path} is a binary file (it holds NUL bytes), not a CSV text file; export the data as CSV")
    if not head.strip():
        raise SpecError(f"{path} is empty; a CSV needs a header row and data rows")
    try:
        frame = pd.read_csv(path, na_values=NA_MARKERS + list(na_values), encoding=encoding or "utf-8")
    except UnicodeDecodeError as err:
        bad = err.object[err.start:err.start + 1]
        raise SpecError(f"{path} is not {encoding or 'UTF-8'} text (byte {bad!r} cannot be decoded); re-save it as "
                        "UTF-8, or name its encoding: [data] encoding = \"latin-1\" (or \"cp1252\", ...)") from None
    except pd.errors.EmptyDataError:
        raise SpecError(f"{path} is empty; a CSV needs a header row and data rows") from None
    except pd.errors.ParserError as err:
        import re

        text = str(err).strip()
        m = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", text)
        where = (f"line {m.group(2)} has {m.group(3)} fields, the header has {m.group(1)}" if m
                 else text.splitlines()[-1])
        raise SpecError(f"{path} is not a regular CSV: {where}; give every row as many fields as the header "
                        "(quote fields that hold commas)") from None
    if len(frame) == 0:
        raise SpecError(f"{path} has a header but no data rows")
    return frame


def check_label(y, spec: Spec, path):
    """The label column, checked; with ``[data] pos_label``, encoded as 1 (that class) / 0.

    The estimators take 1 / True as the positive class of 0/1, -1/1 and False/True labels and
    ask other binary labels (``"no"``/``"yes"``) to name it in each goal that needs one; naming
    it once in the spec encodes the column, and the line printed says so (the saved model then
    predicts 1 / 0).

    Raises
    ------
    SpecError
        One class, ``pos_label`` not a class, ``pos_label`` with more than two classes.
    """
    classes = np.unique(y)
    if len(classes) < 2:
        raise SpecError(f"label column {spec.label!r} of {path} has one class ({classes.tolist()}); a classifier "
                        "needs at least two")
    if spec.pos_label is None:
        return y
    if spec.pos_label not in set(classes.tolist()):
        raise SpecError(f"[data] pos_label = {spec.pos_label!r} is not a class of label column {spec.label!r}; "
                        f"its classes: {classes.tolist()}")
    if len(classes) != 2:
        raise SpecError(f"[data] pos_label is for a binary label; column {spec.label!r} has {len(classes)} "
                        "classes (name the class in each goal, e.g. recall(label=...))")
    (negative,) = [c for c in classes.tolist() if c != spec.pos_label]
    console.print(f"positive class: {spec.pos_label!r} of label {spec.label!r} ([data] pos_label), encoded as 1 "
                  f"and {negative!r} as 0: the model predicts 1 / 0", markup=False, highlight=False, soft_wrap=True)
    return (y == spec.pos_label).astype(int)


def _ambiguous_label_hint(spec: Spec, y) -> str | None:
    """The spec's fix when its binary label has no default positive class (not 0/1, -1/1,
    False/True) and a goal needs one; None otherwise."""
    from ..utils.validation import resolve_pos_label

    classes = np.unique(y)
    if spec.csv is None or spec.pos_label is not None or len(classes) != 2 or \
            resolve_pos_label(classes, None) is not None:
        return None
    last = classes.tolist()[-1]
    return (f"label {spec.label!r} has classes {classes.tolist()}, none of them the positive class by default, and "
            f"a goal of the spec needs one: set [data] pos_label = {last!r} (or the other class), or name it in "
            f"the goal (e.g. true_positive_rate(label={last!r}))")


@contextlib.contextmanager
def _fit_errors(spec: Spec, y):
    """A fit's ``ValueError`` as the spec's one-line error; a binary label with no default positive
    class that a goal needs (the estimators take the last label with a ``UserWarning``) is refused
    with the spec's fix, ``[data] pos_label`` (a spec names it once instead of guessing).

    Raises
    ------
    SpecError
        The fit's ``ValueError``, or the ambiguous positive class of ``y``.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=r"the positive class of labels .* is ambiguous",
                                category=UserWarning)
        try:
            yield
        except (ValueError, UserWarning) as err:
            hint = _ambiguous_label_hint(spec, y) if "ambiguous" in str(err) else None
            raise SpecError(hint or str(err)) from None


def _warn_about_columns(X):
    """``X`` with its numbers stored as text read as numbers (the few other values missing,
    :func:`goalfit.estimators.models.numeric_text_columns`), before the train/test split; one warning
    line per such column and per column with very many categories for the rows
    (:func:`~goalfit.estimators.models.many_category_columns`)."""
    from ..estimators.models import many_category_columns, numeric_text_columns, read_as_numbers

    numeric = numeric_text_columns(X)
    for message in numeric.values():
        _warn(f"{message}; they are read as missing (imputed). List them in [data] na_values = [...] to "
              "silence this, or fix the column")
    X = read_as_numbers(X, list(numeric))
    for message in many_category_columns(X).values():
        _warn(message)
    return X


def _warn(message: str) -> None:
    console.print("[yellow]warning:[/yellow]", end=" ")
    console.print(message, markup=False, highlight=False, soft_wrap=True)


def _split(X, y, S, spec, train_test_split):
    idx = np.arange(len(y))
    values, counts = np.unique(np.asarray(y), return_counts=True)
    if counts.min() < 2:
        raise SpecError(f"label {spec.label!r}: class {values[counts.argmin()].item()!r} has a single row; a "
                        "stratified train/test split needs at least 2 rows per class: drop or merge that class")
    n_test = int(np.ceil(spec.test_size * len(y)))
    if min(n_test, len(y) - n_test) < len(values):
        raise SpecError(f"[data] test_size = {spec.test_size} leaves {n_test} test and {len(y) - n_test} train rows "
                        f"of {len(y)}: each split needs one row per class ({len(values)}); pick a test_size "
                        "nearer 0.3")
    tr, te = train_test_split(idx, test_size=spec.test_size, random_state=spec.seed, stratify=np.asarray(y))

    def take(obj, rows):
        if obj is None:
            return None
        if hasattr(obj, "iloc"):
            return obj.iloc[rows].reset_index(drop=True)
        return obj[rows]

    return [(take(X, tr), take(np.asarray(y), tr), take(S, tr)), (take(X, te), take(np.asarray(y), te), take(S, te))]


def _base_model(spec: Spec, Xtr):
    """The [model] estimator: a fitted model (``prefit``, frozen), an incremental learner for Dask
    files, or a built-in model with the preprocessing real tables need."""
    import joblib
    from sklearn.frozen import FrozenEstimator

    from ..estimators.models import MODELS, make_estimator

    if spec.prefit:
        try:
            return FrozenEstimator(joblib.load(spec.prefit))
        except Exception as err:  # noqa: BLE001 - joblib/pickle raise many kinds (zlib.error, UnpicklingError, ...)
            raise SpecError(f"[model] prefit = {spec.prefit!r}: cannot load it as a joblib model "
                            f"({type(err).__name__}: {err}); give a file written by joblib.dump") from None
    if spec.files:  # no preprocessing pipeline: the model must learn by partial_fit on numeric columns
        return MODELS[spec.estimator][0](spec.seed)
    return make_estimator(spec.estimator, random_state=spec.seed)


def check_output(out: Path | None, force: bool) -> None:
    """Refuse an output folder that cannot be written, before any fitting.

    Raises
    ------
    SpecError
        ``out`` is an existing file, a non-empty folder without ``force``, or not writable.
    """
    import os

    if out is None:
        return
    if out.exists() and not out.is_dir():
        raise SpecError(f"--out {out} is an existing file; give a folder")
    if out.is_dir() and any(out.iterdir()) and not force:
        raise SpecError(f"--out {out} exists and is not empty; pass --force to overwrite its files")
    parent = out if out.exists() else next((p for p in out.parents if p.exists()), Path("."))
    if not parent.is_dir():
        raise SpecError(f"--out {out}: {parent} is a file, not a folder; give a folder path")
    if not os.access(parent, os.W_OK):
        raise SpecError(f"--out {out}: {parent} is not writable; give a folder you can write to")
    import tempfile

    try:  # os.access says yes to root on read-only file systems
        with tempfile.TemporaryFile(dir=parent):
            pass
    except OSError as err:
        raise SpecError(f"--out {out}: cannot write in {parent} ({err.strerror}); give a folder you can write "
                        "to") from None


def check_html(path: Path | None) -> None:
    """Refuse an ``--html`` path that cannot be written, before any fitting.

    Raises
    ------
    SpecError
        ``path`` is an existing folder, or its folder is not writable.
    """
    import os

    if path is None:
        return
    if path.is_dir():
        raise SpecError(f"--html {path} is a folder; give a file name such as {path / 'report.html'}")
    parent = next((p for p in path.parents if p.exists()), Path("."))
    if not os.access(parent, os.W_OK):
        raise SpecError(f"--html {path}: {parent} is not writable")


def run_spec(spec: Spec, *, out: Path | None = None, json_path: Path | None = None, quiet: bool = False,
             html_path: Path | None = None):
    """Fit the spec's problem, print the report and write the outputs (``html_path``: the
    self-contained HTML report, :meth:`goalfit.report.Report.to_html`). Returns the Report.

    The method's estimator comes from the registry (:mod:`goalfit.methods`): the plug-in
    methods wrap the [model] estimator; the other families train their own model on its
    preprocessing of the features (saved as one pipeline that predicts on raw rows).
    """
    import joblib
    from sklearn.base import clone
    from sklearn.pipeline import Pipeline

    from ..methods import lookup
    from ..report import build_report
    from .spec import build_estimator

    entry = lookup(spec.method)
    (Xtr, ytr, Str), (Xte, yte, Ste) = load_data(spec)
    if spec.fit_options.get("group_blind") and hasattr(Xtr, "columns"):
        # group-blind: the sensitive columns state and audit the goals, they are not features
        drop = [c for c in spec.sensitive if c in Xtr.columns]
        Xtr, Xte = (None if X is None else X.drop(columns=drop) for X in (Xtr, Xte))
    base = _base_model(spec, Xtr)
    if spec.prefit and spec.features is None and spec.files and hasattr(base.estimator, "feature_names_in_"):
        Xtr, Xte = (None if X is None else X[list(base.estimator.feature_names_in_)] for X in (Xtr, Xte))
    model = build_estimator(spec, base)
    model.set_params(verbose=0 if quiet else 1)
    fmap = None
    if entry.family != "plugin" and hasattr(base, "steps"):  # the model trains on the preprocessed features
        fmap = clone(base[:-1])
        Xtr = fmap.fit_transform(Xtr)
        Xte = None if Xte is None else fmap.transform(Xte)
    n_train = None if spec.files else len(ytr)  # Dask: counted by the fit
    if not quiet:
        console.print(f"fitting {model.__class__.__name__} (method {spec.method!r}) on {n_train or spec.files} "
                      "examples", highlight=False)
    with _fit_errors(spec, ytr):
        model.fit(Xtr, ytr, sensitive_features=Str)
    model.set_params(verbose=0)
    extra = {"dataset": spec.dataset or spec.csv or spec.files, "estimator": spec.prefit or spec.estimator,
             "seed": spec.seed, "n_train": int(n_train) if n_train else int(getattr(model, "n_outer_samples_", 0)),
             "n_test": None if yte is None or spec.files else int(len(yte))}
    if hasattr(model, "statistics_"):
        extra["dask_statistics"] = model.statistics_
    if fmap is not None:
        extra["estimator"] = f"{spec.estimator} preprocessing + {model.__class__.__name__}"
    report = build_report(model, Xtr, ytr, sensitive_features_train=Str, X_test=Xte, y_test=yte,
                          sensitive_features_test=Ste, extra=extra)
    saved = model if fmap is None else Pipeline([("features", fmap), (entry.family, model)])
    if not quiet:
        report.print(console)
    if json_path is not None:
        report.to_json(json_path)
        console.print(f"wrote {json_path}")
    if html_path is not None:
        report.to_html(html_path)
        console.print(f"wrote {html_path}", highlight=False)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        joblib.dump(saved, out / "model.joblib")
        report.to_json(out / "report.json")
        paths = report.plot(out)
        console.print(f"wrote {out / 'model.joblib'}, {out / 'report.json'}, " + ", ".join(str(p) for p in paths))
    return report


def _dask_client(address):
    """A Dask client on ``address``, or on a new LocalCluster (closed on exit)."""
    import contextlib

    from dask.distributed import Client, LocalCluster

    stack = contextlib.ExitStack()
    if address is None:
        cluster = stack.enter_context(LocalCluster(dashboard_address=":0"))
        console.print(f"started a LocalCluster: {cluster.scheduler_address}")
        address = cluster
    stack.enter_context(Client(address))
    return stack


def _version(value: bool):
    if value:
        from .. import __version__

        print(f"goalfit {__version__}")
        raise typer.Exit(0)


@app.callback()
def _main(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print goalfit's version and exit."),
          debug: bool = typer.Option(False, "--debug", help="Show the traceback of an error (one line without).")):
    """Train classifiers that meet real-world goals (fairness, coverage, churn, ...)."""
    _DEBUG["on"] = debug


@app.command()
def demo(json: Path = typer.Option(None, "--json", help="Write report.json here."),
         out: Path = typer.Option(None, "--out", help="Also write the model and plots into this folder."),
         force: bool = typer.Option(False, "--force", help="Overwrite the files of an existing --out folder."),
         html: Path = typer.Option(None, "--html", help="Write the self-contained HTML audit report here.")):
    """Adult, logistic regression: minimize error s.t. demographic parity difference (sex) <= 0.01."""
    with _errors():
        check_output(out, force)
        check_html(html)
        run_spec(DEMO, out=out, json_path=json, html_path=html)


@app.command()
def fit(spec: Path = typer.Argument(..., help="TOML problem specification."),
        out: Path = typer.Option(Path("goalfit-out"), "--out", help="Output folder."),
        force: bool = typer.Option(False, "--force", help="Overwrite the files of an existing --out folder."),
        scheduler: str = typer.Option(None, "--scheduler", help="Dask scheduler address (tcp://host:8786) for "
                                      "specs with files = \"glob\"; default: a LocalCluster on this machine."),
        html: Path = typer.Option(None, "--html", help="Also write the self-contained HTML audit report here "
                                  "(goals, group rates, ROC, trade-off frontier, sample-size plan, model card).")):
    """Fit the problem in SPEC and write model.joblib, report.json and plots to --out (and --html)."""
    with _errors():
        s = load_spec(spec)
        check_output(out, force)
        check_html(html)
        if s.files:
            from ..distributed.io import matching_files

            for pattern in filter(None, (s.files, s.test_files)):
                try:
                    matching_files(pattern)  # before starting or reaching a cluster
                except ValueError as err:
                    raise SpecError(str(err)) from None
            with _dask_client(scheduler):
                run_spec(s, out=out, html_path=html)
        elif scheduler is not None:
            raise SpecError("--scheduler is for specs that read files = \"glob\" with Dask")
        else:
            run_spec(s, out=out, html_path=html)


def run_frontier(spec: Spec, bounds, *, constraint: int = 0, out: Path | None = None, quiet: bool = False):
    """Sweep the bound of the spec's constraint number ``constraint`` (:func:`goalfit.frontier`).

    The base model is fitted once on the training split; the test split is the validation
    data of the table. Writes ``frontier.csv``, ``frontier.json`` and ``frontier.png`` to
    ``out``. Returns the :class:`~goalfit.Frontier`.

    Raises
    ------
    SpecError
        A method that takes no constraints (the baselines), no constraint, a bad constraint
        index or bound.
    """
    import json as _json

    from ..tradeoff import frontier
    from .spec import build_estimator

    objective, constraints = spec.goals()
    if not constraints:
        raise SpecError("goalfit frontier needs a constraint in [goals] constraints whose bound it sweeps")
    if not -len(constraints) <= constraint < len(constraints):
        raise SpecError(f"--constraint {constraint}: the spec has {len(constraints)} constraint(s)")
    (Xtr, ytr, Str), (Xte, yte, Ste) = load_data(spec)
    est = build_estimator(spec, _base_model(spec, Xtr))
    with _fit_errors(spec, ytr):
        f = frontier(est, Xtr, ytr, sensitive_features=Str, bounds=bounds, constraint=constraint,
                     X_val=Xte, y_val=yte, sensitive_features_val=Ste)
    if not quiet:
        from rich.table import Table

        t = Table(title=f"frontier: {f.objective} vs {f.swept} ({len(f.table)} points, "
                        f"{f.total_seconds:.2f} s, base model fitted once in {f.base_fit_seconds:.2f} s)")
        cols = ["bound", "objective_train", f"{f.swept}_train", "objective_val", f"{f.swept}_val"]
        for c in cols:
            t.add_column(c.replace("_val", " (test)").replace("_train", " (train)"), justify="right", overflow="fold")
        for i, row in f.table.iterrows():
            mark = " *" if i == f.chosen else ""
            t.add_row(*[f"{row[c]:.4f}" + (mark if c == "bound" else "") for c in cols])
        console.print(t)
        console.print("[dim]* the spec's own bound[/dim]")
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        f.table.to_csv(out / "frontier.csv", index=False)
        (out / "frontier.json").write_text(_json.dumps(
            {"objective": f.objective, "swept": f.swept, "chosen": f.chosen, "method": f.meta["method"],
             "base_fit_seconds": f.base_fit_seconds, "total_seconds": f.total_seconds,
             "dataset": spec.dataset or spec.csv, "seed": spec.seed,
             "points": f.table.to_dict(orient="records")}, indent=2, default=float) + "\n")
        f.plot(out / "frontier.png")
        console.print(f"wrote {out / 'frontier.csv'}, {out / 'frontier.json'}, {out / 'frontier.png'}")
    return f


def _parse_bounds(text: str):
    """``"0,0.01,0.02"`` or ``"0:0.1:11"`` (start:stop:count, inclusive) -> list of floats."""
    try:
        if ":" in text:
            a, b, k = text.split(":")
            bounds = np.linspace(float(a), float(b), max(int(k), 0)).tolist()
        else:
            bounds = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise SpecError(f"--bounds {text!r}: give numbers separated by commas, or start:stop:count") from None
    if not bounds:
        raise SpecError(f"--bounds {text!r} gives no bound; give numbers separated by commas, or start:stop:count "
                        "with count >= 1")
    return bounds


@app.command("frontier")
def frontier_cmd(spec: Path = typer.Argument(..., help="TOML problem specification with a constraint."),
                 bounds: str = typer.Option(..., "--bounds", help="Bounds to sweep: '0,0.01,0.05' or start:stop:count."),
                 constraint: int = typer.Option(0, "--constraint", help="Index of the constraint to sweep."),
                 out: Path = typer.Option(Path("goalfit-frontier"), "--out", help="Output folder."),
                 force: bool = typer.Option(False, "--force", help="Overwrite the files of an existing --out folder.")):
    """Trade-off curve: refit the spec's goals for each bound on one fitted base model; write
    frontier.csv, frontier.json and frontier.png (objective vs the swept goal, train and test)."""
    with _errors():
        s = load_spec(spec)
        check_output(out, force)
        run_frontier(s, _parse_bounds(bounds), constraint=constraint, out=out)


@app.command()
def datasets(data_home: Path = typer.Option(None, "--data-home", help="Folder to look in first.")):
    """List the datasets goalfit can load and whether each is found."""
    from rich.table import Table

    import os

    from ..datasets import dataset_status

    env = os.environ.get("GOALFIT_DATA")
    for folder in (env.split(os.pathsep) if env else []):
        if folder and not Path(folder).expanduser().is_dir():
            console.print(f"[yellow]warning:[/yellow] GOALFIT_DATA names {folder}, which is not a folder; "
                          "datasets are looked up in the other locations only", markup=True, highlight=False)
    if data_home is not None and not Path(data_home).expanduser().is_dir():
        console.print(f"[yellow]warning:[/yellow] --data-home {data_home} is not a folder", highlight=False)
    t = Table(title="goalfit datasets")
    for col in ("name", "found", "location / missing files"):
        t.add_column(col)
    for row in dataset_status(data_home):
        where = row["location"] if row["found"] else ("missing: " + ", ".join(row["missing"]))
        t.add_row(row["name"], "[green]yes[/green]" if row["found"] else "[red]no[/red]", str(where))
    console.print(t)


def main():  # pragma: no cover - entry point
    app()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
