"""``goalfit`` command line: ``demo``, ``fit SPEC.toml``, ``frontier SPEC.toml --bounds ...``, ``datasets``."""
from __future__ import annotations

import sys
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

        kw = dict(label=spec.label, sensitive=spec.sensitive, features=spec.features)
        try:
            train = read_table(spec.files, **kw)
            test = read_table(spec.test_files, **kw) if spec.test_files else (None, None, None)
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
    path = Path(spec.csv)
    if not path.exists():
        raise SpecError(f"csv file {path} does not exist")
    frame = pd.read_csv(path)
    for col in [spec.label] + spec.sensitive:
        if col not in frame.columns:
            raise SpecError(f"unknown column {col!r} in {path}; columns: {list(frame.columns)}")
    for col in [spec.label] + spec.sensitive:  # before any fitting: one line, exit code 2
        missing = frame[col].isna().to_numpy()
        if missing.any():
            rows = np.flatnonzero(missing)
            raise SpecError(f"{path}: column {col!r} ({'label' if col == spec.label else 'sensitive feature'}) "
                            f"has {len(rows)} missing value(s), first at data row {int(rows[0]) + 1}; "
                            "drop or fill those rows")
    y = frame[spec.label].to_numpy()
    X = frame.drop(columns=[spec.label])
    S = frame[spec.sensitive] if spec.sensitive else None
    parts = _split(X, y, S, spec, train_test_split)
    return [(X_, np.asarray(y_), S_) for X_, y_, S_ in parts]


def _split(X, y, S, spec, train_test_split):
    idx = np.arange(len(y))
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
        except (OSError, ValueError, EOFError) as err:
            raise SpecError(f"prefit = {spec.prefit!r}: cannot load it ({err})") from None
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
    if not os.access(parent, os.W_OK):
        raise SpecError(f"--out {out}: {parent} is not writable")


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
    try:
        model.fit(Xtr, ytr, sensitive_features=Str)
    except ValueError as err:
        raise SpecError(str(err)) from None
    model.set_params(verbose=0)
    extra = {"dataset": spec.dataset or spec.csv or spec.files, "estimator": spec.prefit or spec.estimator,
             "seed": spec.seed, "n_train": int(n_train or getattr(model, "n_outer_samples_", 0)),
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
                                       help="Print goalfit's version and exit.")):
    """Train classifiers that meet real-world goals (fairness, coverage, churn, ...)."""


@app.command()
def demo(json: Path = typer.Option(None, "--json", help="Write report.json here."),
         out: Path = typer.Option(None, "--out", help="Also write the model and plots into this folder."),
         force: bool = typer.Option(False, "--force", help="Overwrite the files of an existing --out folder."),
         html: Path = typer.Option(None, "--html", help="Write the self-contained HTML audit report here.")):
    """Adult, logistic regression: minimize error s.t. demographic parity difference (sex) <= 0.01."""
    try:
        check_output(out, force)
        check_html(html)
        run_spec(DEMO, out=out, json_path=json, html_path=html)
    except (SpecError, FileNotFoundError) as err:
        _fail(str(err), 2 if isinstance(err, SpecError) else 1)


@app.command()
def fit(spec: Path = typer.Argument(..., help="TOML problem specification."),
        out: Path = typer.Option(Path("goalfit-out"), "--out", help="Output folder."),
        force: bool = typer.Option(False, "--force", help="Overwrite the files of an existing --out folder."),
        scheduler: str = typer.Option(None, "--scheduler", help="Dask scheduler address (tcp://host:8786) for "
                                      "specs with files = \"glob\"; default: a LocalCluster on this machine."),
        html: Path = typer.Option(None, "--html", help="Also write the self-contained HTML audit report here "
                                  "(goals, group rates, ROC, trade-off frontier, sample-size plan, model card).")):
    """Fit the problem in SPEC and write model.joblib, report.json and plots to --out (and --html)."""
    try:
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
    except SpecError as err:
        _fail(str(err), 2)
    except FileNotFoundError as err:
        _fail(str(err), 1)


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
    try:
        f = frontier(est, Xtr, ytr, sensitive_features=Str, bounds=bounds, constraint=constraint,
                     X_val=Xte, y_val=yte, sensitive_features_val=Ste)
    except ValueError as err:
        raise SpecError(str(err)) from None
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
            return np.linspace(float(a), float(b), int(k)).tolist()
        return [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise SpecError(f"--bounds {text!r}: give numbers separated by commas, or start:stop:count") from None


@app.command("frontier")
def frontier_cmd(spec: Path = typer.Argument(..., help="TOML problem specification with a constraint."),
                 bounds: str = typer.Option(..., "--bounds", help="Bounds to sweep: '0,0.01,0.05' or start:stop:count."),
                 constraint: int = typer.Option(0, "--constraint", help="Index of the constraint to sweep."),
                 out: Path = typer.Option(Path("goalfit-frontier"), "--out", help="Output folder."),
                 force: bool = typer.Option(False, "--force", help="Overwrite the files of an existing --out folder.")):
    """Trade-off curve: refit the spec's goals for each bound on one fitted base model; write
    frontier.csv, frontier.json and frontier.png (objective vs the swept goal, train and test)."""
    try:
        s = load_spec(spec)
        check_output(out, force)
        run_frontier(s, _parse_bounds(bounds), constraint=constraint, out=out)
    except SpecError as err:
        _fail(str(err), 2)
    except FileNotFoundError as err:
        _fail(str(err), 1)


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
