"""Build, print, save and plot the report of a fitted goalfit estimator (:func:`build_report`)."""
from __future__ import annotations

import json
import platform
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from sklearn.utils.validation import check_is_fitted

from ..fit.backends import data_backend
from ..goals import FEASIBLE_TOL, Problem, per_group_rates
from .names import constraint_label, objective_label


def _fmt(value, interval=None) -> str:
    """``0.1234`` or ``0.1234 [0.1100, 0.1400]``."""
    if interval is None:
        return f"{value:.4f}"
    return f"{value:.4f} [{interval[0]:.4f}, {interval[1]:.4f}]"


class GoalName:
    """A goal's name in a rich table: whole on one line when the column is wide enough, else
    wrapped between its parts (after ``_``, ``,`` or a space, before ``(``), never inside a word:
    ``demographic_parity_`` / ``difference('sex')``, not ``demographic_parity_dif`` / ``ference('se`` / ``x')``."""

    def __init__(self, text: str):
        self.text = text
        self.parts = [p for p in re.split(r"(?<=[_, ])|(?=\()", text) if p]

    def lines(self, width: int) -> list[str]:
        """The name wrapped to ``width`` columns (a part longer than ``width`` keeps its own line)."""
        out = [""]
        for part in self.parts:
            if out[-1] and len(out[-1]) + len(part.rstrip()) > width:
                out.append("")
            out[-1] += part
        return [line.rstrip() for line in out]

    @staticmethod
    def fit_table(table, console) -> None:
        """Fit a report table (goal names first, values after) in the console without cutting a word.

        rich narrows every wrappable column alike when a table is too wide, cutting names and
        headers mid-word. When the table's natural width does not fit, the value columns get fixed
        widths (their longest word: a number, an interval's half, a header's word) and the goal
        column the rest, at least its longest name part (:class:`GoalName`)."""
        from rich.measure import Measurement
        from rich.text import Text

        if Measurement.get(console, console.options.update_width(10**6), table).maximum <= console.width:
            return

        def longest_word(cells, no_wrap) -> int:
            texts = [Text.from_markup(str(c)).plain for c in cells]
            words = texts if no_wrap else [w for t in texts for w in t.split()]
            return max([1] + [len(w) for w in words])

        others = 1  # the left border
        for col in table.columns[1:]:
            col.width = longest_word([col.header, *col._cells], col.no_wrap)
            others += col.width + 3  # padding and border
        names = [c for c in table.columns[0]._cells]
        part = max([1] + [len(p.rstrip()) for n in names for p in (GoalName(str(n)).parts)])
        table.columns[0].width = max(part, min(max(len(str(n)) for n in names), console.width - others - 3))

    def __rich_measure__(self, console, options):
        from rich.measure import Measurement

        longest = max(len(p.rstrip()) for p in self.parts)
        return Measurement(min(longest, options.max_width), min(len(self.text), options.max_width))

    def __rich_console__(self, console, options):
        from rich.text import Text

        yield Text("\n".join(self.lines(options.max_width)), overflow="fold")

    def __str__(self) -> str:
        return self.text


def _section(evals: dict) -> dict:
    """Merge {split: evaluation} into the report's per-field layout."""
    splits = list(evals)
    first = evals[splits[0]]
    out: dict[str, Any] = {
        "objective": {"name": first["objective"]["name"],
                      # what the split columns hold (the minimized value) and the score beside it
                      "loss_label": objective_label(first["objective"]),
                      "score_label": first["objective"].get("score_label"),
                      **{s: evals[s]["objective"]["value"] for s in splits}},
        "constraints": [],
        "metrics": {s: {"accuracy": evals[s]["accuracy"]} for s in splits},
    }
    for s in splits:
        if evals[s]["objective"].get("score") is not None:
            out["objective"][f"score_{s}"] = evals[s]["objective"]["score"]
            if "score_interval" in evals[s]["objective"]:
                out["objective"][f"score_interval_{s}"] = evals[s]["objective"]["score_interval"]
    for s in splits:  # confidence intervals, when evaluated with a confidence
        if "interval" in evals[s]["objective"]:
            out["objective"][f"interval_{s}"] = evals[s]["objective"]["interval"]
            if "accuracy_interval" in evals[s]:
                out["metrics"][s]["accuracy_interval"] = evals[s]["accuracy_interval"]
    for k, c in enumerate(first["constraints"]):
        # value, sense and bound as the constraint was written (F1 >= 0.7: F1's values), named by label
        row = {"name": c["name"], "expression": c["expression"], "label": constraint_label(c),
               "sense": c["sense"], "bound": c["bound"]}
        for s in splits:
            row[s] = evals[s]["constraints"][k]["value"]
            row[f"violation_{s}"] = evals[s]["constraints"][k]["violation"]
            row[f"met_{s}"] = bool(evals[s]["constraints"][k]["violation"] <= FEASIBLE_TOL)
            if "interval" in evals[s]["constraints"][k]:
                row[f"interval_{s}"] = evals[s]["constraints"][k]["interval"]
                row[f"met_with_confidence_{s}"] = evals[s]["constraints"][k]["met_with_confidence"]
                row["interval_method"] = evals[s]["constraints"][k]["interval_method"]
        out["constraints"].append(row)
    return out


@dataclass
class Report:
    """Everything a user needs to judge a fitted goal classifier.

    Attributes
    ----------
    data : dict
        JSON-ready content: ``objective`` {name, loss_label, score_label, train, test,
        score_train, score_test}: ``train`` / ``test`` hold the minimized value (``1 - F1``,
        labelled ``loss_label``), ``score_*`` the score (F1, ``score_label``) where the
        objective is ``1 - score`` (``score_interval_*`` with intervals); ``constraints`` [{name, label,
        sense, bound, train, test, violation_*, met_*}] as each was written (``gmean() >= 0.6``:
        label ``"G-mean"``, sense ``">="``, bound 0.6, the G-mean in ``train`` / ``test``), ``metrics`` {train, test: {accuracy}},
        ``baseline`` (same fields, for the estimator's baseline named ``baseline_name``),
        ``timing`` {base_fit_seconds, total_fit_seconds, base_label (what base_fit_seconds timed, when
        not the base model)}, ``method``, ``n_oracle_calls``, ``n_members``,
        ``constraints_met_train`` (from the train columns), ``feasible_method_sample`` (the
        estimator's ``feasible_``), ``history``. Values are expected values over the
        classifier's randomization (exact, no sampling noise).
    group_rates : dict
        Per-group rates for the plots.
    source : dict or None
        The fitted model, the data and the baseline rule the report was built from
        (:func:`build_report` sets it; :meth:`to_html` reads it for the ROC curves, the frontier
        and the plan). Not part of the JSON.
    """

    data: dict
    group_rates: dict = field(default_factory=dict)
    source: dict | None = field(default=None, repr=False, compare=False)  # None: rebuilt from its JSON

    def to_json(self, path=None, indent: int = 2) -> str:
        text = json.dumps(self.data, indent=indent, default=_json_default)
        if path is not None:
            Path(path).write_text(text + "\n")
        return text

    def print(self, console=None) -> None:
        """Print rich tables (objective, constraints, accuracy, timing)."""
        from rich.console import Console
        from rich.table import Table

        console = console or Console()
        d = self.data
        b = d.get("baseline")
        splits = [s for s in ("train", "test") if s in d["metrics"]]
        bname = d.get("baseline_name", "baseline")
        t = Table(title=f"goalfit report — method {d['method']}", show_lines=False)
        t.add_column("goal")  # names wrap only between their parts (GoalName), never mid-word
        t.add_column("bound", justify="right", no_wrap=True)
        for s in splits:
            t.add_column(split_label(d, s), justify="right")
            if b is not None:
                t.add_column(f"{bname} {s}", justify="right", style="dim")

        def row(ours, theirs):  # our cell, then the baseline's when there is one
            return [ours] if b is None else [ours, theirs]

        obj = d["objective"]
        t.add_row(f"{objective_label(obj)} (minimized)", "",
                  *sum([row(_fmt(obj[s], obj.get(f"interval_{s}")),
                            b and f"{b['objective'][s]:.4f}") for s in splits], []))
        if obj.get("score_label") is not None:  # F1 beside the minimized 1 - F1
            t.add_row(f"{obj['score_label']} (score)", "",
                      *sum([row(_fmt(obj[f"score_{s}"], obj.get(f"score_interval_{s}")),
                                b and f"{b['objective'][f'score_{s}']:.4f}")
                            for s in splits], []))
        for k, c in enumerate(d["constraints"]):
            cb = None if b is None else b["constraints"][k]
            cells = []
            for s in splits:
                ok = "[green]✓[/green]" if c[f"met_{s}"] else "[red]✗[/red]"
                cells += row(f"{_fmt(c[s], c.get(f'interval_{s}'))} {ok}",
                             cb and f"{cb[s]:.4f} {'✓' if cb[f'met_{s}'] else '✗'}")
            t.add_row(GoalName(constraint_label(c)), f"{c['sense']} {c['bound']:g}", *cells)
        t.add_row("accuracy", "", *sum([row(_fmt(d['metrics'][s]['accuracy'], d['metrics'][s].get("accuracy_interval")),
                                            b and f"{b['metrics'][s]['accuracy']:.4f}") for s in splits], []))
        GoalName.fit_table(t, console)
        console.print(t)
        tm = d["timing"]
        base_fit = tm.get("base_fit_seconds")
        ratio = "" if base_fit is None else (
            f" = {tm['total_fit_seconds'] / max(base_fit, 1e-12):.2f}x "
            f"{tm.get('base_label', 'the base model fit and its training probabilities')} ({base_fit:.3f} s)")
        met = d["constraints_met_train"]
        line = (f"total fit {tm['total_fit_seconds']:.3f} s{ratio}; {d['n_oracle_calls']} oracle calls; "
                f"{d['n_members']} member(s); constraints met on train: {met}")
        if d.get("feasible_method_sample") is not None and d["feasible_method_sample"] != met:
            line += (f" (on the sample the method ran on, e.g. out-of-fold with cross-fitting: "
                     f"{d['feasible_method_sample']})")
        console.print(line)
        ms = d.get("method_sample")
        if ms is not None:  # the values the method saw, under the label its history plot carries
            vals = [f"{constraint_label(c)} {c['value']:.4f} {'✓' if c['met'] else '✗'}"
                    for c in ms["constraints"]]
            console.print(f"{ms['label']} (the sample the method ran on; its history): "
                          f"{objective_label(obj)} {ms['objective']:.4f}"
                          + "".join(f"; {v}" for v in vals), highlight=False)
        if d.get("certified") is not None:
            console.print(f"certified at confidence {d['confidence_fit']:g}: {d['certified']}")
            for goal, c in zip(d["constraints"], d["certification"]):  # the k-th constraint's test
                mark = "[green]✓[/green]" if c["passed"] else "[red]✗[/red]"
                console.print(f"  {constraint_label(goal)} {c['sense']} "
                              f"{c['certified_bound']:.4f} holds at {d['confidence_fit']:.0%} "
                              f"(asked {c['bound']:g}) {mark}")
        for line in d.get("small_slices", []):  # goalfit.fit.slices: a bound the slice cannot carry
            console.print(f"[yellow]slice too small for its bound:[/yellow] {line}", highlight=False)
        console.print("[dim]" + d.get("note", "values are expectations over the randomized classifier; "
                      "baseline = unconstrained plug-in argmax on the same base model") + "[/dim]")
        if d.get("confidence") is not None:
            console.print(f"[dim]\\[lo, hi]: {d['confidence']:.0%} confidence intervals for the population value of "
                          "this classifier's goals, from the evaluated sample "
                          f"({d.get('interval_note', 'Clopper-Pearson for a rate, delta method otherwise')}); "
                          "on train they ignore that the classifier was fitted there (optimistic)[/dim]")

    def plot(self, directory) -> list[Path]:
        """Write ``convergence.png`` (objective and max violation per iteration) and
        ``group_rates.png`` (per-group rates, goalfit vs baseline, on test when given).

        ``data`` may name what the history panels show (:func:`goalfit.report.plots.convergence_figure`);
        their titles name the sample the history was measured on with the table's label
        (:func:`history_label`: ``"train (cross-fitted)"`` under cross-fitting).

        Returns
        -------
        list of the written paths.
        """
        import matplotlib.pyplot as plt

        from .plots import convergence_figure, group_rates_figure

        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        paths = []
        for name, fig in (("convergence.png", convergence_figure(self.data, history_label(self.data))),
                          ("group_rates.png", group_rates_figure(self.group_rates))):
            if fig is None:
                continue
            p = directory / name
            fig.savefig(p, dpi=110)
            plt.close(fig)
            paths.append(p)
        return paths

    def to_html(self, path, *, model_card: dict | None = None, frontier: bool | None = None, frontier_bounds=None,
                plan: bool = True, title: str | None = None) -> Path:
        """Write the report as one self-contained HTML file (:func:`goalfit.report.html.write_html`).

        The goals table (asked bound, train and test values with their intervals, certified
        bound), per-group rates with intervals, per-group ROC curves with the deployed operating
        points, the trade-off frontier with uncertainty bands, the sample-size plan, the
        convergence history and a model card; figures are inline PNGs, nothing is loaded from
        the network.

        Parameters
        ----------
        path : str or Path
            The ``.html`` file to write (its folder is created).
        model_card : dict, optional
            Fields the user fills in, shown in the model card: ``intended_use``,
            ``out_of_scope_uses``, ``owners``, ``limitations``, ``ethical_considerations``,
            ``contact`` and any other key (shown as given, HTML-escaped).
        frontier : bool or None, default None
            The trade-off frontier (:func:`goalfit.frontier`) of the first constraint's bound.
            None: computed when it is cheap (an estimator with ``with_goals`` re-solves on its
            fitted state, no refit of the base model, and the re-solves, estimated from the
            fit's own method time, take under
            :data:`~goalfit.report.html.FRONTIER_SECONDS`), skipped otherwise with a note; True:
            always (other estimators are refitted once per bound); False: never.
        frontier_bounds : array-like of float, optional
            The bounds to sweep (default: nine bounds from the asked bound to the baseline's
            value).
        plan : bool, default True
            The sample-size plan (:meth:`goalfit.fit.GoalEstimator.plan_certification`) on the
            test data (the training data when there is none).
        title : str, optional

        Returns
        -------
        Path
            The written file.

        Raises
        ------
        ValueError
            ``model_card`` is not a dict of strings.

        Examples
        --------
        >>> report = gf.build_report(model, X, y, sensitive_features_train=sex)  # doctest: +SKIP
        >>> report.to_html("audit.html", model_card={"intended_use": "loan pre-screening"})  # doctest: +SKIP
        """
        from .html import write_html

        return write_html(self, path, model_card=model_card, frontier=frontier, frontier_bounds=frontier_bounds,
                          plan=plan, title=title)


def _group_rates(classes, predictors, X, y, sf, split, confidence=None):
    """Per-group selection rate, TPR and FPR (binary) or per-class prediction rates.

    ``predictors`` maps "goalfit" / "baseline" to ``f(X, sensitive_features)`` returning class
    distributions of shape (n, n_classes). With ``confidence``, goalfit's rates get
    Clopper-Pearson intervals (``entry["goalfit_interval"][rate]``: one [low, high] per group).
    """
    from ..confusion.cells import as_frame
    from ..metrics import score

    frame = as_frame(sf, len(y))
    preds = {who: predict(X, sf) for who, predict in predictors.items()}
    out = {}
    for col in frame.columns:
        groups = list(dict.fromkeys(frame[col].tolist()))
        rates = per_group_rates(classes, col)
        entry = {"groups": groups, "rates": list(rates), "split": split, "goalfit": {}, "baseline": {}}
        for who, pred in preds.items():
            for name, make in rates.items():
                vals = []
                for grp in groups:
                    try:
                        vals.append(score(make(grp), y, pred, sensitive_features=frame, classes=classes))
                    except ValueError:
                        vals.append(float("nan"))
                entry[who][name] = vals
                if confidence is not None and who == "goalfit":
                    entry.setdefault("goalfit_interval", {})[name] = [
                        _rate_interval(make(grp), y, pred, frame, classes, confidence) for grp in groups]
        out[col] = entry
    return out


def _rate_interval(rate, y, pred, frame, classes, confidence):
    """Clopper-Pearson [low, high] of one rate (NaN for an empty slice)."""
    from ..metrics import evaluate_problem

    try:
        ev = evaluate_problem(Problem(rate), y, pred, sensitive_features=frame, classes=classes,
                              confidence=confidence)
    except ValueError:
        return [float("nan"), float("nan")]
    return ev["objective"]["interval"]


def _certification_fields(data, model):
    """``certified``, ``confidence_fit``, ``certification`` and ``margins`` of a high-confidence fit."""
    data["certified"] = getattr(model, "certified_", None)
    if data["certified"] is not None:
        data["confidence_fit"] = model.confidence
        data["certification"] = model.certification_
        data["safety_path"] = getattr(model, "safety_path_", None)
        for entry, row in zip(data.get("constraints", []), model.certification_):
            entry["certified_bound"] = row["certified_bound"]
    if getattr(model, "margins_", None) is not None:
        data["margins"] = model.margins_


def history_label(data: dict) -> str:
    """The name of the sample the method ran on, which its iteration history measures.

    ``"train (cross-fitted)"`` under cross-fitting (out-of-fold probabilities of the training
    rows), ``"train (candidate part)"`` for a ``confidence=`` fit without it (the candidates are
    fitted on part of the rows, the rest is the safety test's), ``"train"`` otherwise. The report's
    table, its text and its plots use this label for these values, and :func:`split_label` for
    the deployed rule's values on the training rows, so one label always means one set of numbers.
    """
    if data.get("cross_fitting"):
        return "train (cross-fitted)"
    if data.get("certified") is not None:
        return "train (candidate part)"
    return "train"


def split_label(data: dict, split: str) -> str:
    """The table's label of a split: ``"train (in-sample)"`` when the method ran on another sample
    of the training rows (:func:`history_label`), else the split's name."""
    if split == "train" and history_label(data) != "train":
        return "train (in-sample)"
    return split


def _method_sample(data, model):
    """``data["method_sample"]``: the user's goals on the sample the method ran on (its result's
    confusion tensor), labelled :func:`history_label`; None when that sample is the training rows."""
    from ..metrics import evaluate_compiled

    label = history_label(data)
    if label == "train":
        return None
    problem = model._fitted_goals()
    ev = evaluate_compiled(problem, problem.compile(model.problem_.space), model.result_.confusion)
    return {"label": label, "objective": ev["objective"]["value"], "score": ev["objective"]["score"],
            "constraints": [{"expression": c["expression"], "label": c["label"], "value": c["value"],
                             "met": bool(c["met"])}
                            for c in ev["constraints"]]}


def _common(data, history, extra):
    """The fields every report has: iteration history, environment, caller's extras."""
    data["history"] = history
    data["environment"] = {"python": platform.python_version(), "machine": platform.machine()}
    if extra:
        data.update(extra)
    return data


def build_report(model, X_train, y_train, *, sensitive_features_train=None, X_test=None, y_test=None,
                 sensitive_features_test=None, datasets_train=None, datasets_test=None,
                 extra: dict | None = None, confidence: float | None = 0.95) -> Report:
    """Report of a fitted goalfit estimator on train (and test) data.

    Reads only the result protocol every estimator shares (:class:`goalfit.fit.GoalEstimator`):
    ``evaluate`` of the deployed rule and of the estimator's baseline (``fit_baseline``: the
    unconstrained plug-in argmax on the same base model, the ramp-randomized rule, the
    unconstrained selection-free fit, the post-shift baseline, TFCO's best iterate),
    ``result_``, ``history_``, ``feasible_``, ``certification_`` and ``report_fields()``.

    Parameters
    ----------
    model : a fitted goalfit estimator
    X_train, y_train, sensitive_features_train : the training data
    X_test, y_test, sensitive_features_test : optional held-out data
    datasets_train, datasets_test : dict, optional
        Extra named datasets of multi-dataset goals (``dataset=...``).
    extra : dict, optional
        Extra JSON fields (dataset name, seed, ...).
    confidence : float in [0.5, 1) or None, default 0.95
        Confidence intervals of the objective, every constraint, the accuracy and the per-group
        rates on each split (:mod:`goalfit.metrics.intervals`); each covers the population value
        of the goal for this classifier. On the training split they ignore that the classifier
        was fitted there. None: no intervals (always so on Dask collections).

    Returns
    -------
    Report
        ``data["constraints_met_train"]`` is read off the same training evaluation as the table
        (``feasible_``, measured on the method's own training sample, which is out-of-fold with
        cross-fitting, is ``data["feasible_method_sample"]``).

    Raises
    ------
    sklearn.exceptions.NotFittedError
        If the model is not fitted.
    """
    check_is_fitted(model, "classifier_")
    if not data_backend(X_train, model).in_memory:
        confidence = None  # intervals need the per-example sample
    data_sets = {"train": (X_train, y_train, sensitive_features_train, datasets_train)}
    if X_test is not None:
        data_sets["test"] = (X_test, y_test, sensitive_features_test, datasets_test)

    def evals(classifier=None, conf=None):
        return {s: model.evaluate(X, y, sensitive_features=sf, datasets=ds, confidence=conf, classifier=classifier)
                for s, (X, y, sf, ds) in data_sets.items()}

    data = _section(evals(conf=confidence))
    baseline = model.fit_baseline(X_train, y_train, sensitive_features=sensitive_features_train,
                                  datasets=datasets_train)
    fields = dict(model.report_fields())
    timing = {"total_fit_seconds": model.fit_seconds_, **fields.pop("timing", {})}
    if baseline is not None:
        bname, bclf, bseconds = baseline
        data["baseline"] = _section(evals(bclf))
        data["baseline_name"] = bname
        if bseconds and "base_fit_seconds" not in timing:
            timing.update(base_fit_seconds=bseconds, base_label=f"the {bname} baseline's fit")
    data["timing"] = timing
    data["n_oracle_calls"] = int(model.result_.n_oracle_calls)
    data["n_members"] = len(model.result_.members)
    data["constraints_met_train"] = all(c["met_train"] for c in data["constraints"])
    data["feasible_method_sample"] = bool(model.feasible_)
    data["message"] = model.result_.message
    data["confidence"] = confidence
    data.update(fields)
    _certification_fields(data, model)
    data["small_slices"] = [c["line"] for c in (getattr(model, "small_slices_", None) or [])]
    _common(data, model.history_, extra)
    data["method_sample"] = _method_sample(data, model)
    split = "test" if X_test is not None else "train"
    Xs, ys, sfs, ds = data_sets[split]
    rates = {}
    if sfs is not None and ds is None:
        clfs = {"goalfit": model.classifier_}
        if baseline is not None:
            clfs["baseline"] = baseline[1]
        backend = data_backend(Xs, model)
        if not backend.in_memory:  # reduced over the rows where they live (no intervals)
            rates = backend.group_rates(model.classes_, clfs, Xs, ys, sfs, split)
        else:
            predictors = {who: (lambda X, sf, c=c: model.distribution(X, sensitive_features=sf, classifier=c))
                          for who, c in clfs.items()}
            rates = _group_rates(model.classes_, predictors, Xs, ys, sfs, split, confidence)
    return Report(data, rates, source={"model": model, "data": data_sets,
                                       "baseline": None if baseline is None else baseline[1]})


def _json_default(o):
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)


def _n_splits(cv):
    try:
        return int(cv.get_n_splits())
    except (TypeError, ValueError):  # splitters whose count depends on the data
        return None
