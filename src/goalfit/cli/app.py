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


def run_spec(spec: Spec, *, out: Path | None = None, json_path: Path | None = None, quiet: bool = False):
    """Fit the spec's problem, print the report and write the outputs. Returns the Report."""
    import joblib

    from ..estimators import GoalClassifier
    from ..report import build_report
    from .models import make_estimator

    objective, constraints = spec.goals()
    (Xtr, ytr, Str), (Xte, yte, Ste) = load_data(spec)
    if spec.fit_options.get("group_blind") and hasattr(Xtr, "columns"):
        # group-blind: the sensitive columns state and audit the goals, they are not features
        drop = [c for c in spec.sensitive if c in Xtr.columns]
        Xtr, Xte = (None if X is None else X.drop(columns=drop) for X in (Xtr, Xte))
    if spec.prefit:
        base = joblib.load(spec.prefit)
        if spec.features is None and spec.files and hasattr(base, "feature_names_in_"):
            Xtr, Xte = (None if X is None else X[list(base.feature_names_in_)] for X in (Xtr, Xte))
    elif spec.files:  # no preprocessing pipeline: the model must learn by partial_fit on numeric columns
        from .models import ESTIMATORS

        base = ESTIMATORS[spec.estimator](spec.seed)
    else:
        base = make_estimator(spec.estimator, Xtr, spec.seed)
    n_train = None if spec.files else len(ytr)  # Dask: counted by the fit
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from ..methods.plugin import METHODS

    params = dict(spec.method_params)
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                  TextColumn("{task.completed} iterations"), TimeElapsedColumn(),
                  console=console, transient=True, disable=quiet) as progress:
        task = progress.add_task(f"fitting {spec.prefit or spec.estimator} + {spec.method} on "
                                 f"{n_train or spec.files} examples",
                                 total=params.get("max_iter"))
        if spec.method in METHODS or spec.method == "auto":
            params["callback"] = lambda it: progress.update(task, completed=it)
        if spec.method == "ramp":
            from ..estimators import RampClassifier

            # the base estimator's preprocessing (one-hot, scaling) is the ramp model's feature map
            fmap = base[:-1] if hasattr(base, "steps") else None
            try:
                model = RampClassifier(objective, constraints, feature_map=fmap, random_state=spec.seed, **params)
            except TypeError as err:
                raise SpecError(f"method_params for 'ramp': {err}") from None
        elif spec.method == "subdata":
            model, fmap, (Xtr, Xte, Str, Ste) = _subdata_model(spec, base, objective, constraints, params,
                                                               Xtr, Xte, Str, Ste)
        elif spec.method == "surrogate":
            model, fmap, (Xtr, Xte, Str, Ste) = _surrogate_model(spec, base, objective, constraints, params,
                                                                 Xtr, Xte, Str, Ste)
        elif spec.method == "lagrangian":
            model, fmap, (Xtr, Xte) = _lagrangian_model(spec, base, objective, constraints, params, Xtr, Xte)
        else:
            model = GoalClassifier(base, objective=objective, constraints=constraints, method=spec.method,
                                   method_params=params or None, random_state=spec.seed,
                                   prefit=bool(spec.prefit), **spec.fit_options)
        try:
            model.fit(Xtr, ytr, sensitive_features=Str)
        except ValueError as err:
            raise SpecError(str(err)) from None
    extra = {"dataset": spec.dataset or spec.csv or spec.files, "estimator": spec.prefit or spec.estimator,
             "seed": spec.seed, "n_train": int(n_train or model.n_outer_samples_),
             "n_test": None if yte is None or spec.files else int(len(yte))}
    if hasattr(model, "statistics_"):
        extra["dask_statistics"] = model.statistics_
    if spec.method == "ramp":
        extra["estimator"] = "linear (ramp loss)"
    elif spec.method == "subdata":
        extra["estimator"] = f"{model.model} (fair subdata selection)"
    elif spec.method == "surrogate":
        extra["estimator"] = "linear (adaptive surrogates)"
    elif spec.method == "lagrangian":
        extra["estimator"] = f"torch network, hidden layers {list(model.hidden_layer_sizes)}"
    else:
        model.method_params = spec.method_params or None  # keep the saved model free of the callback
    report = build_report(model, Xtr, ytr, sensitive_features_train=Str, X_test=Xte, y_test=yte,
                          sensitive_features_test=Ste, extra=extra)
    if spec.method in ("subdata", "surrogate", "lagrangian") and fmap is not None:  # the saved model predicts on raw rows
        from sklearn.pipeline import Pipeline

        model = Pipeline([("features", fmap), (spec.method, model)])
    if not quiet:
        report.print(console)
    if json_path is not None:
        report.to_json(json_path)
        console.print(f"wrote {json_path}")
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        joblib.dump(model, out / "model.joblib")
        report.to_json(out / "report.json")
        paths = report.plot(out)
        console.print(f"wrote {out / 'model.joblib'}, {out / 'report.json'}, " + ", ".join(str(p) for p in paths))
    return report


def _subdata_model(spec, base, objective, constraints, params, Xtr, Xte, Str, Ste):
    """``method = "subdata"``: a :class:`~goalfit.FairSubdataClassifier` for the spec's goal.

    The goal must be the error with at most one ``<disparity>_difference <= epsilon``
    (:func:`~goalfit.estimators.fair_subdata.subdata_params_from_goals`); ``method_params``
    go to the constructor. Features are the base estimator's preprocessing (one-hot, scaling)
    fitted on the training rows; the sensitive feature is one column with two groups.

    Returns
    -------
    (model, fitted feature map or None, (Xtr, Xte, Str, Ste) transformed)

    Raises
    ------
    SpecError
        Unsupported goal, conflicting or unknown method_params, no single sensitive column.
    """
    from ..estimators import FairSubdataClassifier
    from ..estimators.fair_subdata import subdata_params_from_goals

    try:
        goal = subdata_params_from_goals(objective, constraints)
    except ValueError as err:
        raise SpecError(f"method 'subdata': {err}") from None
    col = goal.pop("sensitive", None)
    clash = sorted(set(goal) & set(params))
    if clash:
        raise SpecError(f"method 'subdata': {clash} come from the constraint; remove them from method_params")
    if col is None:
        if len(spec.sensitive) != 1 and params.get("measure") != "f1":
            raise SpecError(f"method 'subdata' needs one sensitive column (two groups), got {spec.sensitive}")
        col = spec.sensitive[0] if spec.sensitive else None
    try:
        model = FairSubdataClassifier(random_state=spec.seed, **goal, **params)
    except TypeError as err:
        raise SpecError(f"method_params for 'subdata': {err}") from None
    fmap, parts = _features_and_column(spec, base, col, Xtr, Xte, Str, Ste, dense=True)
    return model, fmap, parts


def _features_and_column(spec, base, col, Xtr, Xte, Str, Ste, dense):
    """The base estimator's preprocessing fitted on the training rows, and one sensitive column.

    Shared by the methods that train their own linear model on features (``subdata``,
    ``surrogate``) rather than wrapping the base estimator.
    """
    import scipy.sparse as sparse

    fmap = base[:-1] if hasattr(base, "steps") else None
    if fmap is not None:
        Xtr, Xte = fmap.fit_transform(Xtr), fmap.transform(Xte)
    if dense:
        Xtr, Xte = (X.toarray() if sparse.issparse(X) else X for X in (Xtr, Xte))
    Str, Ste = (None if S is None or col is None else S[[col]] for S in (Str, Ste))
    return fmap, (Xtr, Xte, Str, Ste)


def _surrogate_model(spec, base, objective, constraints, params, Xtr, Xte, Str, Ste):
    """``method = "surrogate"``: an :class:`~goalfit.AdaptiveSurrogateClassifier` for the objective.

    The objective (a goal expression or a name such as ``"gmean"``) is the metric, evaluated as
    a black box (Jiang et al. 2020); the method takes no constraints. ``method_params`` go to
    the constructor. The metric sees the sensitive column the objective names (or the only
    one); features are the base estimator's preprocessing.

    Raises
    ------
    SpecError
        Constraints given, several sensitive columns and none named, unknown method_params.
    """
    from ..estimators import AdaptiveSurrogateClassifier
    from ..goals.blackbox import BLACKBOX_METRICS

    if constraints:
        raise SpecError("method 'surrogate' minimizes one black-box metric and takes no constraints; "
                        "write the goal as the objective")
    name = spec.objective.strip()
    metric = name if name in BLACKBOX_METRICS else objective
    col = getattr(objective, "sensitive", None) or getattr(objective, "column", None)
    if col is None and spec.sensitive:
        if len(spec.sensitive) != 1:
            raise SpecError(f"method 'surrogate': the metric sees one sensitive column; name it in the "
                            f"objective or give one in [data] sensitive, got {spec.sensitive}")
        col = spec.sensitive[0]
    if col is not None and col not in spec.sensitive:
        raise SpecError(f"method 'surrogate': the objective names {col!r}, which is not in [data] sensitive "
                        f"{spec.sensitive}")
    try:
        model = AdaptiveSurrogateClassifier(metric, random_state=spec.seed, **params)
    except TypeError as err:
        raise SpecError(f"method_params for 'surrogate': {err}") from None
    fmap, parts = _features_and_column(spec, base, col, Xtr, Xte, Str, Ste, dense=False)
    return model, fmap, parts


def _lagrangian_model(spec, base, objective, constraints, params, Xtr, Xte):
    """``method = "lagrangian"``: a :class:`goalfit.torch.LagrangianClassifier` (a linear model or
    an MLP, ``method_params`` go to its constructor) on the base estimator's preprocessing
    (one-hot, scaling) fitted on the training rows.

    Returns
    -------
    (model, fitted feature map or None, (Xtr, Xte) transformed)

    Raises
    ------
    SpecError
        Without PyTorch, or for unknown method_params.
    """
    try:
        from ..torch import LagrangianClassifier
    except ImportError as err:
        raise SpecError(f"method 'lagrangian': {err}") from None
    if "hidden_layer_sizes" in params:
        params["hidden_layer_sizes"] = tuple(params["hidden_layer_sizes"])
    try:
        model = LagrangianClassifier(objective=objective, constraints=constraints, random_state=spec.seed, **params)
    except TypeError as err:
        raise SpecError(f"method_params for 'lagrangian': {err}") from None
    fmap = base[:-1] if hasattr(base, "steps") else None
    if fmap is not None:
        Xtr, Xte = fmap.fit_transform(Xtr), fmap.transform(Xte)
    return model, fmap, (Xtr, Xte)


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


@app.command()
def demo(json: Path = typer.Option(None, "--json", help="Write report.json here."),
         out: Path = typer.Option(None, "--out", help="Also write the model and plots into this folder.")):
    """Adult, logistic regression: minimize error s.t. demographic parity difference (sex) <= 0.01."""
    try:
        run_spec(DEMO, out=out, json_path=json)
    except (SpecError, FileNotFoundError) as err:
        _fail(str(err), 2 if isinstance(err, SpecError) else 1)


@app.command()
def fit(spec: Path = typer.Argument(..., help="TOML problem specification."),
        out: Path = typer.Option(Path("goalfit-out"), "--out", help="Output folder."),
        scheduler: str = typer.Option(None, "--scheduler", help="Dask scheduler address (tcp://host:8786) for "
                                      "specs with files = \"glob\"; default: a LocalCluster on this machine.")):
    """Fit the problem in SPEC and write model.joblib, report.json and plots to --out."""
    try:
        s = load_spec(spec)
        if s.files:
            from ..distributed.io import matching_files

            for pattern in filter(None, (s.files, s.test_files)):
                try:
                    matching_files(pattern)  # before starting or reaching a cluster
                except ValueError as err:
                    raise SpecError(str(err)) from None
            with _dask_client(scheduler):
                run_spec(s, out=out)
        elif scheduler is not None:
            raise SpecError("--scheduler is for specs that read files = \"glob\" with Dask")
        else:
            run_spec(s, out=out)
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
        A method other than a plug-in one (``ramp``, ``subdata``, ``surrogate``, baselines),
        no constraint, a bad constraint index or bound.
    """
    import json as _json

    from ..estimators import GoalClassifier
    from ..tradeoff import frontier
    from .models import make_estimator

    if spec.method in ("ramp", "subdata", "surrogate"):
        raise SpecError(f"goalfit frontier sweeps the plug-in methods' goals; method {spec.method!r} is not one")
    objective, constraints = spec.goals()
    if not constraints:
        raise SpecError("goalfit frontier needs a constraint in [goals] constraints whose bound it sweeps")
    if not -len(constraints) <= constraint < len(constraints):
        raise SpecError(f"--constraint {constraint}: the spec has {len(constraints)} constraint(s)")
    (Xtr, ytr, Str), (Xte, yte, Ste) = load_data(spec)
    est = GoalClassifier(make_estimator(spec.estimator, Xtr, spec.seed), objective=objective, constraints=constraints,
                         method=spec.method, method_params=spec.method_params or None, random_state=spec.seed)
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
                 out: Path = typer.Option(Path("goalfit-frontier"), "--out", help="Output folder.")):
    """Trade-off curve: refit the spec's goals for each bound on one fitted base model; write
    frontier.csv, frontier.json and frontier.png (objective vs the swept goal, train and test)."""
    try:
        run_frontier(load_spec(spec), _parse_bounds(bounds), constraint=constraint, out=out)
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
