"""Build, print, save and plot the report of a fitted goalfit estimator (:func:`build_report`)."""
from __future__ import annotations

import json
import platform
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..classifiers import GroupBlindClassifier, GroupBlindRule, PluginClassifier
from ..distributed import is_dask_collection
from ..goals import FEASIBLE_TOL, Problem
from ..metrics import evaluate_problem
from .names import display_name


def _evaluate(model, classifier, X, y, sf, confidence=None):
    if is_dask_collection(X):  # reduced per partition (no intervals): goalfit.distributed
        from ..distributed.estimator import evaluate_classifier
        return evaluate_classifier(Problem(model.objective, model.constraints), classifier, model.classes_, X, y, sf)
    dist = classifier.predict_proba(X, sensitive_features=sf)
    return evaluate_problem(Problem(model.objective, model.constraints), y, dist,
                            sensitive_features=sf, classes=model.classes_, confidence=confidence)


def _fmt(value, interval=None) -> str:
    """``0.1234`` or ``0.1234 [0.1100, 0.1400]``."""
    if interval is None:
        return f"{value:.4f}"
    return f"{value:.4f} [{interval[0]:.4f}, {interval[1]:.4f}]"


def _baseline(model):
    """The unconstrained plug-in argmax on the same fitted base model."""
    clf = model.classifier_
    n = len(model.classes_)
    cost = np.broadcast_to(1.0 - np.eye(n), (clf.cell_encoder.n_cells, n, n))
    if isinstance(clf, GroupBlindClassifier):  # argmax of the marginal P(Y | x), group-blind too
        return clf.with_members([GroupBlindRule(cost)], [1.0])
    return PluginClassifier(cost, model.classes_, clf.cell_encoder, clf.probability_model)


def _section(evals: dict) -> dict:
    """Merge {split: evaluation} into the report's per-field layout."""
    splits = list(evals)
    first = evals[splits[0]]
    out = {
        "objective": {"name": first["objective"]["name"],
                      **{s: evals[s]["objective"]["value"] for s in splits}},
        "constraints": [],
        "metrics": {s: {"accuracy": evals[s]["accuracy"]} for s in splits},
    }
    for s in splits:  # confidence intervals, when evaluated with a confidence
        if "interval" in evals[s]["objective"]:
            out["objective"][f"interval_{s}"] = evals[s]["objective"]["interval"]
            if "accuracy_interval" in evals[s]:
                out["metrics"][s]["accuracy_interval"] = evals[s]["accuracy_interval"]
    for k, c in enumerate(first["constraints"]):
        row = {"name": c["name"], "expression": c["expression"], "sense": c["sense"], "bound": c["bound"]}
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
        JSON-ready content: ``objective`` {name, train, test}, ``constraints`` [{name, sense,
        bound, train, test, violation_*, met_*}], ``metrics`` {train, test: {accuracy}},
        ``baseline`` (same fields, for the unconstrained plug-in argmax on the same base model),
        ``timing`` {base_fit_seconds, total_fit_seconds, base_label (what base_fit_seconds timed, when
        not the base model)}, ``method``, ``n_oracle_calls``,
        ``n_members``, ``feasible_train``, ``history``. Values are expected values over the
        classifier's randomization (exact, no sampling noise).
    group_rates : dict
        Per-group rates for the plots.
    """

    data: dict
    group_rates: dict = field(default_factory=dict)

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
        d, b = self.data, self.data["baseline"]
        splits = [s for s in ("train", "test") if s in d["metrics"]]
        bname = d.get("baseline_name", "baseline")
        t = Table(title=f"goalfit report — method {d['method']}", show_lines=False)
        t.add_column("goal", overflow="fold")  # full names, folded on narrow consoles (never "demographic_…")
        t.add_column("bound", justify="right", no_wrap=True)
        for s in splits:
            t.add_column(f"{s}", justify="right")
            t.add_column(f"{bname} {s}", justify="right", style="dim")
        t.add_row(f"minimize {display_name(d['objective']['name'])}", "",
                  *sum([[_fmt(d['objective'][s], d['objective'].get(f"interval_{s}")),
                         f"{b['objective'][s]:.4f}"] for s in splits], []))
        for c, cb in zip(d["constraints"], b["constraints"]):
            cells = []
            for s in splits:
                ok = "[green]✓[/green]" if c[f"met_{s}"] else "[red]✗[/red]"
                okb = "✓" if cb[f"met_{s}"] else "✗"
                cells += [f"{_fmt(c[s], c.get(f'interval_{s}'))} {ok}", f"{cb[s]:.4f} {okb}"]
            t.add_row(display_name(c["expression"]), f"{c['sense']} {c['bound']:g}", *cells)
        t.add_row("accuracy", "", *sum([[_fmt(d['metrics'][s]['accuracy'], d['metrics'][s].get("accuracy_interval")),
                                          f"{b['metrics'][s]['accuracy']:.4f}"] for s in splits], []))
        console.print(t)
        tm = d["timing"]
        base_fit = tm.get("base_fit_seconds")
        ratio = "" if base_fit is None else (
            f" = {tm['total_fit_seconds'] / max(base_fit, 1e-12):.2f}x "
            f"{tm.get('base_label', 'the base model fit and its training probabilities')} ({base_fit:.3f} s)")
        console.print(
            f"total fit {tm['total_fit_seconds']:.3f} s{ratio}; "
            f"{d['n_oracle_calls']} oracle calls; {d['n_members']} member(s); "
            f"constraints met on train: {d['feasible_train']}"
        )
        if d.get("certified") is not None:
            console.print(f"certified at confidence {d['confidence_fit']:g}: {d['certified']}")
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

        ``data`` may name what the history panels show: ``history_x_key`` / ``history_x_name``
        (the history field on the x axis and its label; default ``oracle_calls``),
        ``history_objective_name`` (y label of the objective panel), ``history_violation_key`` / ``history_violation_name`` (the
        history field and title of the second panel; default ``max_violation``).

        Returns
        -------
        list of the written paths.
        """
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        paths = []
        hist = self.data.get("history") or []
        if hist:
            fig, ax = plt.subplots(1, 2, figsize=(10, 3.6))
            xkey = self.data.get("history_x_key", "oracle_calls")
            xname = self.data.get("history_x_name", "oracle calls")
            it = [h[xkey] for h in hist]
            ax[0].plot(it, [h["objective"] for h in hist], marker=".")
            ax[0].set_xlabel(xname)
            ax[0].set_ylabel(self.data.get("history_objective_name", self.data["objective"]["name"]))
            ax[0].set_title("objective (train)")
            vkey = self.data.get("history_violation_key", "max_violation")
            ax[1].plot(it, [max(h[vkey], 1e-12) for h in hist], marker=".", color="C3")
            ax[1].set_yscale("log")
            ax[1].set_xlabel(xname)
            ax[1].set_title(self.data.get("history_violation_name", "max constraint violation (train)"))
            fig.tight_layout()
            p = directory / "convergence.png"
            fig.savefig(p, dpi=110)
            plt.close(fig)
            paths.append(p)
        if self.group_rates:
            cols = list(self.group_rates)
            fig, axes = plt.subplots(1, len(cols), figsize=(5 * len(cols), 3.8), squeeze=False)
            for ax, col in zip(axes[0], cols):
                gr = self.group_rates[col]
                groups, names = gr["groups"], gr["rates"]
                x = np.arange(len(groups))
                width = 0.8 / (2 * len(names))
                for k, name in enumerate(names):
                    err = None
                    if gr.get("goalfit_interval", {}).get(name) is not None:
                        lo_hi = np.asarray(gr["goalfit_interval"][name], dtype=float)  # (n_groups, 2)
                        val = np.asarray(gr["goalfit"][name], dtype=float)
                        err = np.abs(np.vstack([val - lo_hi[:, 0], lo_hi[:, 1] - val]))
                    ax.bar(x + (2 * k) * width, gr["goalfit"][name], width, label=f"goalfit {name}",
                           yerr=err, capsize=2, error_kw={"elinewidth": 0.8})
                    ax.bar(x + (2 * k + 1) * width, gr["baseline"][name], width, alpha=0.5,
                           label=f"baseline {name}")
                ax.set_xticks(x + 0.4 - width / 2)
                ax.set_xticklabels([str(g) for g in groups], rotation=20)
                ax.set_title(f"rates by {col} ({gr['split']})")
                ax.legend(fontsize=7)
            fig.tight_layout()
            p = directory / "group_rates.png"
            fig.savefig(p, dpi=110)
            plt.close(fig)
            paths.append(p)
        return paths


def _group_rates(classes, predictors, X, y, sf, split, confidence=None):
    """Per-group selection rate, TPR and FPR (binary) or per-class prediction rates.

    ``predictors`` maps "goalfit" / "baseline" to ``f(X, sensitive_features)`` returning labels
    of shape (n,) or class distributions of shape (n, n_classes). With ``confidence``, goalfit's
    rates get Clopper-Pearson intervals (``entry["goalfit_interval"][rate]``: one [low, high] per
    group).
    """
    from ..confusion.cells import as_frame
    from ..metrics import score

    frame = as_frame(sf, len(y))
    out = {}
    for col in frame.columns:
        groups = list(dict.fromkeys(frame[col].tolist()))
        rates = _rate_makers(classes, col)
        entry = {"groups": groups, "rates": list(rates), "split": split, "goalfit": {}, "baseline": {}}
        for who, predict in predictors.items():
            pred = predict(X, sf)
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


def _rate_makers(classes, col) -> dict:
    """The per-group rates of the report: name -> ``f(group value)`` returning the rate goal."""
    from .. import goals as g

    if len(classes) == 2:
        return {"selection": lambda grp, c=col: g.positive_prediction_rate(group={c: grp}),
                "TPR": lambda grp, c=col: g.true_positive_rate(group={c: grp}),
                "FPR": lambda grp, c=col: g.false_positive_rate(group={c: grp})}
    return {f"pred={k}": (lambda grp, c=col, k=k: g.positive_prediction_rate(k, group={c: grp}))
            for k in classes}


def _rate_interval(rate, y, pred, frame, classes, confidence):
    """Clopper-Pearson [low, high] of one rate (NaN for an empty slice)."""
    from ..metrics import evaluate_problem

    try:
        ev = evaluate_problem(Problem(rate), y, pred, sensitive_features=frame, classes=classes,
                              confidence=confidence)
    except ValueError:
        return [float("nan"), float("nan")]
    return ev["objective"]["interval"]


def label_splits(X_train, y_train, sensitive_features_train, X_test=None, y_test=None,
                 sensitive_features_test=None) -> dict:
    """The ``data_sets`` of :func:`label_sections`: {"train": (X, y, sf)}, plus "test" when ``X_test`` is given."""
    data_sets = {"train": (X_train, y_train, sensitive_features_train)}
    if X_test is not None:
        data_sets["test"] = (X_test, y_test, sensitive_features_test)
    return data_sets


def label_sections(model, baseline, data_sets) -> dict:
    """Report fields of a model that predicts labels and has ``evaluate`` (the core layout),
    and of its ``baseline``, on each split of ``data_sets`` ({split: (X, y, sensitive_features)})."""
    def evals(m):
        return {s: m.evaluate(X, y, sensitive_features=sf) for s, (X, y, sf) in data_sets.items()}

    data = _section(evals(model))
    data["baseline"] = _section(evals(baseline))
    return data


def label_group_rates(model, baseline, data_sets) -> dict:
    """Per-group rates of the labels ``model`` and ``baseline`` predict, on test (else train)."""
    split = "test" if "test" in data_sets else "train"
    Xs, ys, sfs = data_sets[split]
    predictors = {"goalfit": lambda X, sf: model.predict(X), "baseline": lambda X, sf: baseline.predict(X)}
    return _group_rates(model.classes_, predictors, Xs, ys, sfs, split) if sfs is not None else {}


def _certification_fields(data, model):
    """``certified``, ``confidence_fit``, ``certification`` and ``margins`` of a high-confidence fit."""
    data["certified"] = getattr(model, "certified_", None)
    if data["certified"] is not None:
        data["confidence_fit"] = model.confidence
        data["certification"] = model.certification_
    if getattr(model, "margins_", None) is not None:
        data["margins"] = model.margins_


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

    One entry point for every estimator whose goals live in the core vocabulary; it dispatches
    on the estimator's type:

    * :class:`~goalfit.GoalClassifier`: the randomized plug-in classifier's expected values
      next to the unconstrained plug-in argmax on the same base model;
    * :class:`~goalfit.RampClassifier`: :func:`build_ramp_report` (randomized and deterministic
      columns, several datasets through ``datasets_train`` / ``datasets_test``);
    * :class:`~goalfit.FairSubdataClassifier`: :func:`build_subdata_report`;
    * :class:`~goalfit.AdaptiveSurrogateClassifier`: :func:`goalfit.report.surrogate.build_surrogate_report`.
    * :class:`goalfit.torch.LagrangianClassifier`:
      :func:`goalfit.torch.report.build_lagrangian_report` (the shrunk stochastic network next to
      the best iterate).

    Parameters
    ----------
    model : fitted GoalClassifier, RampClassifier, FairSubdataClassifier, AdaptiveSurrogateClassifier or
        goalfit.torch.LagrangianClassifier
    X_train, y_train, sensitive_features_train : the training data
    X_test, y_test, sensitive_features_test : optional held-out data
    datasets_train, datasets_test : dict, optional
        Extra named datasets of a RampClassifier's goals (``dataset=...``).
    extra : dict, optional
        Extra JSON fields (dataset name, seed, ...).
    confidence : float in (0, 1) or None, default 0.95
        For a GoalClassifier (and a RampClassifier's randomized columns, a LagrangianClassifier's
        stochastic network): confidence intervals of the objective, every constraint, the
        accuracy and the per-group rates on each split (:mod:`goalfit.metrics.intervals`); each
        covers the population value of the goal for this classifier. On the training split they
        ignore that the classifier was fitted there. None: no intervals.

    Returns
    -------
    Report

    Raises
    ------
    TypeError
        For another estimator.
    ValueError
        ``datasets_*`` given for an estimator other than RampClassifier.
    """
    import sys

    from ..estimators import AdaptiveSurrogateClassifier, FairSubdataClassifier, GoalClassifier, RampClassifier

    torch_est = sys.modules.get("goalfit.torch.estimator")  # never imports torch itself
    if torch_est is not None and isinstance(model, torch_est.LagrangianClassifier):
        if datasets_train is not None or datasets_test is not None:
            raise ValueError("datasets_train / datasets_test are for RampClassifier's multi-dataset goals")
        from ..torch.report import build_lagrangian_report

        return build_lagrangian_report(model, X_train, y_train, sensitive_features_train=sensitive_features_train,
                                       X_test=X_test, y_test=y_test, sensitive_features_test=sensitive_features_test,
                                       extra=extra, confidence=confidence)
    if isinstance(model, RampClassifier):
        return build_ramp_report(model, X_train, y_train, sensitive_features_train=sensitive_features_train,
                                 datasets_train=datasets_train, X_test=X_test, y_test=y_test,
                                 sensitive_features_test=sensitive_features_test, datasets_test=datasets_test,
                                 extra=extra, confidence=confidence)
    if datasets_train is not None or datasets_test is not None:
        raise ValueError(f"datasets_train / datasets_test are for RampClassifier's multi-dataset goals, "
                         f"not {type(model).__name__}")
    if isinstance(model, FairSubdataClassifier):
        return build_subdata_report(model, X_train, y_train, sensitive_features_train=sensitive_features_train,
                                    X_test=X_test, y_test=y_test, sensitive_features_test=sensitive_features_test,
                                    extra=extra)
    if isinstance(model, AdaptiveSurrogateClassifier):
        from .surrogate import build_surrogate_report

        return build_surrogate_report(model, X_train, y_train, sensitive_features_train=sensitive_features_train,
                                      X_test=X_test, y_test=y_test, sensitive_features_test=sensitive_features_test,
                                      extra=extra)
    if not isinstance(model, GoalClassifier):
        raise TypeError(f"build_report supports GoalClassifier, RampClassifier, FairSubdataClassifier, "
                        f"AdaptiveSurrogateClassifier and goalfit.torch.LagrangianClassifier, not {type(model).__name__}")
    baseline = _baseline(model)
    if is_dask_collection(X_train):
        confidence = None  # intervals need the per-example sample
    data_sets = {"train": (X_train, y_train, sensitive_features_train)}
    if X_test is not None:
        data_sets["test"] = (X_test, y_test, sensitive_features_test)
    ours = {s: _evaluate(model, model.classifier_, *v, confidence=confidence) for s, v in data_sets.items()}
    base = {s: _evaluate(model, baseline, *v) for s, v in data_sets.items()}
    data = _section(ours)
    data["baseline"] = _section(base)
    data["timing"] = {"base_fit_seconds": model.base_fit_seconds_, "total_fit_seconds": model.fit_seconds_}
    data["method"] = model.method_
    data["n_oracle_calls"] = int(model.result_.n_oracle_calls)
    data["n_members"] = len(model.result_.members)
    data["feasible_train"] = bool(model.feasible_)
    data["message"] = model.result_.message
    data["confidence"] = confidence
    data["cross_fitting"] = None if getattr(model, "cv_", None) is None else {
        "folds": _n_splits(model.cv_), "deployed_model": model.cv_model}
    _certification_fields(data, model)
    _common(data, model.history_, extra)
    split = "test" if X_test is not None else "train"
    Xs, ys, sfs = data_sets[split]
    predictors = {"goalfit": lambda X, sf: model.classifier_.predict_proba(X, sensitive_features=sf),
                  "baseline": lambda X, sf: baseline.predict_proba(X, sensitive_features=sf)}
    if is_dask_collection(Xs) and sfs is not None:
        from ..distributed.report import group_rates
        rates = group_rates(model.classes_, {"goalfit": model.classifier_, "baseline": baseline}, Xs, ys, sfs, split)
    else:
        rates = _group_rates(model.classes_, predictors, Xs, ys, sfs, split, confidence) if sfs is not None else {}
    return Report(data, rates)


def build_ramp_report(model, X_train, y_train, *, sensitive_features_train=None, datasets_train=None,
                      X_test=None, y_test=None, sensitive_features_test=None, datasets_test=None,
                      extra: dict | None = None, confidence: float | None = 0.95) -> Report:
    """Report of a fitted :class:`~goalfit.RampClassifier` on train (and test) datasets.

    The main columns are the randomized classifier's expected values (the ramp, Goh et al.
    Eq. 3); the ``deterministic`` columns threshold the score at 0.

    Parameters
    ----------
    model : fitted RampClassifier
    X_train, y_train, sensitive_features_train, datasets_train : the training datasets
    X_test, y_test, sensitive_features_test, datasets_test : optional held-out datasets
        (the same dataset names)
    extra : dict, optional
    confidence : float in (0, 1) or None, default 0.95
        Confidence intervals of the randomized classifier's values (as in :func:`build_report`).

    Returns
    -------
    Report
    """
    data_sets = {"train": (X_train, y_train, sensitive_features_train, datasets_train)}
    if X_test is not None:
        data_sets["test"] = (X_test, y_test, sensitive_features_test, datasets_test)
    evals = {}
    for randomized in (True, False):
        evals[randomized] = {s: model.evaluate(X, y, sensitive_features=sf, datasets=ds, randomized=randomized,
                                               confidence=confidence if randomized else None)
                             for s, (X, y, sf, ds) in data_sets.items()}
    data = _section(evals[True])
    data["baseline"] = _section(evals[False])
    data["baseline_name"] = "deterministic"
    data["note"] = ("values: expectations of the randomized rule sigma(f(x)) (Goh et al. Eq. 3), what "
                    "predict(X, randomized=True) samples; deterministic = thresholding f(x) > 0, what the "
                    "default predict(X) returns (its own violations are in the deterministic columns)")
    data["timing"] = {"total_fit_seconds": model.fit_seconds_}
    data["method"] = "ramp majorization-minimization (Goh et al. 2016)"
    data["n_oracle_calls"] = int(sum(h["n_inner"] for h in model.history_))
    data["n_members"] = 1
    data["feasible_train"] = bool(model.feasible_)
    data["multipliers"] = dict(zip(model.constraint_rows_, np.asarray(model.multipliers_).tolist()))
    data["confidence"] = confidence
    _certification_fields(data, model)
    return Report(_common(data, model.history_, extra))


def build_subdata_report(model, X_train, y_train, *, sensitive_features_train=None, X_test=None, y_test=None,
                         sensitive_features_test=None, extra: dict | None = None) -> Report:
    """Report of a fitted :class:`~goalfit.FairSubdataClassifier` on train (and test) data.

    The objective is the error and the constraint the prediction-based gap of the estimator's
    measure (:func:`~goalfit.estimators.fair_subdata.fairness_goal`) bounded by ``epsilon``
    (0 in the penalty-only form), as in :meth:`~goalfit.FairSubdataClassifier.evaluate`.
    The baseline is the same model trained on all training data without selection
    (:meth:`~goalfit.FairSubdataClassifier.unconstrained_baseline`: the vanilla SVM / LR / SVC
    of Ye & Xie's tables). The history is the IRS iterations (objective ``H`` of Eq. 12, with
    ``max_violation = max(0, F(z) - epsilon)``) for the convergence plot. ``selection`` holds
    what the method makes exact: ``F(z)`` of the training selection, which can differ from the
    prediction-based training gap (Ye & Xie define fairness on ``z``, §2; see the notes).

    Parameters
    ----------
    model : fitted FairSubdataClassifier
    X_train, y_train, sensitive_features_train : the training data (``sensitive_features_train``
        is needed for measures other than "f1")
    X_test, y_test, sensitive_features_test : optional held-out data
    extra : dict, optional

    Returns
    -------
    Report

    Raises
    ------
    sklearn.exceptions.NotFittedError
        If the model is not fitted.
    ValueError
        Bad data (see :meth:`~goalfit.FairSubdataClassifier.unconstrained_baseline`).
    """
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(model, "model_")
    baseline = model.unconstrained_baseline(X_train, y_train)
    data_sets = label_splits(X_train, y_train, sensitive_features_train, X_test, y_test, sensitive_features_test)
    data = label_sections(model, baseline, data_sets)
    data["baseline_name"] = "unconstrained"
    data["note"] = ("values on predicted labels; the fairness the method makes exact is F(z) of the training "
                    f"selection ({model.measure_} = {model.fairness_:.4g}); unconstrained = the same model trained "
                    "on all training data (Ye & Xie Alg. 2 step 1)")
    data["timing"] = {"base_fit_seconds": baseline.fit_seconds_, "total_fit_seconds": model.fit_seconds_,
                      "base_label": "the fit of the same model on all data"}
    kind = model.model if isinstance(model.model, str) else type(model.model).__name__
    data["method"] = f"fair subdata selection ({model.solver}, {kind}, Ye & Xie 2020)"
    data["n_oracle_calls"] = len(model.history_)
    data["n_members"] = 1
    data["feasible_train"] = bool(data["constraints"][0]["met_train"]) if data["constraints"] else True
    data["selection"] = {"measure": model.measure_, "fairness_z_train": float(model.fairness_),
                         "n_selected": int(np.sum(model.selected_)), "n_train": int(len(model.selected_)),
                         "objective_train": float(model.objective_), "rho": model.rho, "epsilon": model.epsilon_,
                         "t": model.t, "n_iter": int(model.n_iter_), "stop_reason": model.stop_reason_}
    data["history_objective_name"] = "IRS objective H (Ye & Xie Eq. 12)"
    data["history_violation_key"] = "fairness"
    data["history_violation_name"] = f"F(z) of the selection, {model.measure_} (train)"
    _common(data, model.history_, extra)
    return Report(data, label_group_rates(model, baseline, data_sets))


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
