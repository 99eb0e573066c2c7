"""The report as one self-contained HTML file (:meth:`goalfit.report.Report.to_html`).

An audit page a person reads: the goals (asked bound, train value, test value with its interval,
certified bound), per-group rates with intervals, per-group ROC curves with the deployed operating
points, the trade-off frontier with uncertainty bands (:func:`goalfit.frontier`), the sample-size
plan (:meth:`goalfit.fit.GoalEstimator.plan_certification`), the iteration history and a model
card (Mitchell et al., "Model Cards for Model Reporting", FAT* 2019: data, model, method and the
intended-use fields the user fills in). The file loads nothing: no script, no stylesheet or font
from the network; figures are PNGs inline as base64 ``data:`` URIs. Every text that comes from
the data or the user is HTML-escaped (:func:`html.escape`); the page is a :class:`string.Template`.
"""
from __future__ import annotations

import base64
import copy
import datetime
import html
import io
import warnings
from pathlib import Path
from string import Template

import numpy as np

from .names import constraint_label, display_name, objective_label
from .report import history_label, split_label

__all__ = ["MODEL_CARD_FIELDS", "roc_data", "screenshot", "write_html"]

#: Flags of a headless Chromium run that touches no network and no profile but a fresh one.
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--enable-logging=stderr", "--v=0")

#: With ``frontier=None`` the sweep runs when its re-solves are estimated (bounds x the fit's own
#: method seconds) under this many seconds; otherwise the report says how to ask for it. A
#: budget (what a report may spend unasked), not a measurement.
FRONTIER_SECONDS = 10.0

#: The model card's fields the user fills in (``to_html(model_card={...})``), in display order.
MODEL_CARD_FIELDS = {
    "intended_use": "Intended use",
    "out_of_scope_uses": "Out-of-scope uses",
    "owners": "Owners",
    "limitations": "Limitations",
    "ethical_considerations": "Ethical considerations",
    "contact": "Contact",
}

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
       margin: 0 auto; max-width: 1180px; padding: 24px 32px 48px; color: #1f2328; background: #fff;
       line-height: 1.45; }
h1 { font-size: 1.7em; margin: 0 0 4px; }
h2 { font-size: 1.25em; margin: 32px 0 8px; padding-bottom: 4px; border-bottom: 1px solid #d0d7de; }
p.sub { color: #57606a; margin: 0 0 12px; }
.badges span { display: inline-block; margin: 2px 6px 2px 0; padding: 2px 10px; border-radius: 12px;
               font-size: 0.9em; background: #eaeef2; }
.badges span.ok { background: #dafbe1; color: #116329; }
.badges span.bad { background: #ffebe9; color: #a40e26; }
table { border-collapse: collapse; margin: 8px 0 12px; font-size: 0.92em; }
th, td { border: 1px solid #d0d7de; padding: 4px 10px; vertical-align: top; }
th { background: #f6f8fa; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.goal { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.95em;
          overflow-wrap: normal; }
td.dim, th.dim { color: #57606a; }
small.ci { color: #57606a; display: block; }
span.ok { color: #116329; font-weight: 600; }
span.bad { color: #a40e26; font-weight: 600; }
figure { margin: 8px 0 16px; }
figure img { max-width: 100%; height: auto; border: 1px solid #eaeef2; }
figcaption { color: #57606a; font-size: 0.9em; }
p.note { color: #57606a; font-size: 0.9em; }
dl.card { display: grid; grid-template-columns: 220px 1fr; gap: 4px 16px; }
dl.card dt { font-weight: 600; }
dl.card dd { margin: 0; white-space: pre-wrap; }
dl.card dd.missing { color: #9a6700; font-style: italic; }
footer { margin-top: 40px; color: #57606a; font-size: 0.85em; }
"""

_PAGE = Template("""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'">
<meta name="generator" content="goalfit $version">
<title>$title</title>
<style>$css</style>
</head>
<body>
<header>
<h1>$title</h1>
<p class="sub">$subtitle</p>
<div class="badges">$badges</div>
</header>
$sections
<footer>Written by goalfit $version on $date. Values are expectations over the randomized
classifier's draws (exact, no sampling noise); intervals cover the population value of each goal
for this classifier. The file is self-contained: it loads nothing from the network.</footer>
</body>
</html>
""")


def _e(value) -> str:
    """HTML-escaped text of any value."""
    return html.escape(str(value), quote=True)


def _num(value, digits: int = 4) -> str:
    if value is None or (isinstance(value, float) and not np.isfinite(value)):
        return "&ndash;"
    return f"{float(value):.{digits}f}"


def _mark(ok) -> str:
    if ok is None:
        return ""
    return ' <span class="ok" title="met">&#10003;</span>' if ok else ' <span class="bad" title="not met">&#10007;</span>'


def _cell(value, interval=None, ok=None) -> str:
    """A numeric cell: the value, its mark and, below, its interval."""
    ci = "" if interval is None else f'<small class="ci">[{_num(interval[0])}, {_num(interval[1])}]</small>'
    return f'<td class="num">{_num(value)}{_mark(ok)}{ci}</td>'


def _table(headers, rows, *, head_class=None) -> str:
    """An HTML table; ``headers`` are plain text (escaped), ``rows`` lists of ready ``<td>`` cells."""
    hc = head_class or [""] * len(headers)
    # headers wrap at spaces only: a hyphen is non-breaking ("in-sample" never splits)
    head = "".join(f'<th class="{c}">{_e(h).replace("-", "&#8209;")}</th>' for h, c in zip(headers, hc))
    body = "\n".join("<tr>" + "".join(r) + "</tr>" for r in rows)
    return f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody>\n</table>"


def _figure(fig, alt: str, caption: str = "") -> str:
    """A matplotlib figure as an inline base64 PNG (the figure is closed)."""
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=120)
    plt.close(fig)
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    cap = f"<figcaption>{_e(caption)}</figcaption>" if caption else ""
    return f'<figure><img alt="{_e(alt)}" src="data:image/png;base64,{data}">{cap}</figure>'


def _section(anchor: str, title: str, body: str) -> str:
    return f'<section id="{anchor}">\n<h2>{_e(title)}</h2>\n{body}\n</section>'


def _note(text: str) -> str:
    return f'<p class="note">{_e(text)}</p>'


# ---------------------------------------------------------------------------------------- goals
def _goals(d: dict) -> str:
    """The goals table: asked bound, train (in-sample and the method's sample), test with its
    interval, certified bound, the baseline beside."""
    splits = [s for s in ("train", "test") if s in d["metrics"]]
    b = d.get("baseline")
    ms = d.get("method_sample")
    cert = d.get("certified") is not None
    bname = d.get("baseline_name", "baseline")
    headers = ["goal", "asked"]
    for s in splits:
        headers.append(split_label(d, s))
        if s == "train" and ms is not None:
            headers.append(ms["label"])
    if cert:
        headers.append(f"certified bound ({d['confidence_fit']:.0%})")
    if b is not None:
        headers += [f"{bname} {split_label(d, s)}" for s in splits]
    head_class = [""] * (len(headers) - (len(splits) if b is not None else 0)) + ["dim"] * (
        len(splits) if b is not None else 0)

    def values(entry, key_value, key_interval, ok_key=None, ms_value=None, ms_ok=None):
        out = []
        for s in splits:
            out.append(_cell(entry[key_value(s)], entry.get(key_interval(s)),
                             None if ok_key is None else entry.get(ok_key(s))))
            if s == "train" and ms is not None:
                out.append(_cell(ms_value, None, ms_ok) if ms_value is not None else '<td class="num">&ndash;</td>')
        return out

    def base(entry, key, ok_key=None):
        if b is None:
            return []
        return [f'<td class="num dim">{_num(entry[key(s)])}'
                f'{"" if ok_key is None else _mark(entry.get(ok_key(s)))}</td>' for s in splits]

    rows = []
    obj = d["objective"]
    name = objective_label(obj)
    row = [f'<td class="goal">{_e(name)} (minimized)</td>', "<td></td>"]
    row += values(obj, lambda s: s, lambda s: f"interval_{s}", ms_value=None if ms is None else ms["objective"])
    row += ["<td></td>"] if cert else []
    row += base(b["objective"] if b else {}, lambda s: s)
    rows.append(row)
    if obj.get("score_label") is not None:
        row = [f'<td class="goal">{_e(obj["score_label"])} (score)</td>', "<td></td>"]
        row += values(obj, lambda s: f"score_{s}", lambda s: f"score_interval_{s}",
                      ms_value=None if ms is None else ms.get("score"))
        row += ["<td></td>"] if cert else []
        row += base(b["objective"] if b else {}, lambda s: f"score_{s}")
        rows.append(row)
    for k, c in enumerate(d["constraints"]):
        msc = None if ms is None else ms["constraints"][k]
        row = [f'<td class="goal">{_e(constraint_label(c))}</td>',
               f'<td class="num">{_e(c["sense"])} {_e(format(c["bound"], "g"))}</td>']
        row += values(c, lambda s: s, lambda s: f"interval_{s}", lambda s: f"met_{s}",
                      ms_value=None if msc is None else msc["value"], ms_ok=None if msc is None else msc["met"])
        if cert:
            cb = c.get("certified_bound")
            passed = d["certification"][k]["passed"] if len(d.get("certification") or []) > k else None
            row.append(f'<td class="num">{_e(c["sense"])} {_num(cb)}{_mark(passed)}</td>')
        row += base(b["constraints"][k] if b else {}, lambda s: s, lambda s: f"met_{s}")
        rows.append(row)
    acc = ['<td class="goal">accuracy</td>', "<td></td>"]
    for s in splits:
        acc.append(_cell(d["metrics"][s]["accuracy"], d["metrics"][s].get("accuracy_interval")))
        if s == "train" and ms is not None:
            acc.append('<td class="num">&ndash;</td>')
    acc += ["<td></td>"] if cert else []
    acc += [f'<td class="num dim">{_num(b["metrics"][s]["accuracy"])}</td>' for s in splits] if b else []
    rows.append(acc)
    notes = []
    if d.get("confidence") is not None:
        notes.append(f"Below each value: its {d['confidence']:.0%} confidence interval "
                     f"({d.get('interval_note', 'Clopper-Pearson for a rate, delta method otherwise')}); on train "
                     "it ignores that the classifier was fitted there (optimistic).")
    if ms is not None:
        notes.append(f"{split_label(d, 'train')}: the deployed rule on the training rows. {ms['label']}: the goals "
                     "on the sample the method ran on (what it met; the convergence plot shows the same values).")
    if cert:
        verdict = "passed" if d["certified"] else "did not pass"
        notes.append(f"Certified bound: the bound that the fit's safety test showed holds on the population at "
                     f"confidence {d['confidence_fit']:g}; the safety test {verdict} for the asked bounds.")
    if b is not None:
        notes.append(f"{bname}: " + d.get("note", "the unconstrained plug-in argmax on the same base model."))
    notes += [f"Slice too small for its bound: {line}" for line in d.get("small_slices", [])]
    return _table(headers, rows, head_class=head_class) + "".join(_note(n) for n in notes)


def _badges(d: dict) -> str:
    out = [f"<span>method {_e(d.get('method'))}</span>"]
    splits = [s for s in ("train", "test") if s in d["metrics"]]
    for s in splits:
        met = all(c[f"met_{s}"] for c in d["constraints"])
        if d["constraints"]:
            out.append(f'<span class="{"ok" if met else "bad"}">constraints {"met" if met else "not met"} on '
                       f"{_e(split_label(d, s))}</span>")
    if d.get("certified") is not None:
        out.append(f'<span class="{"ok" if d["certified"] else "bad"}">'
                   f'{"certified" if d["certified"] else "not certified"} at {d["confidence_fit"]:.0%}</span>')
    tm = d.get("timing", {})
    if tm.get("total_fit_seconds") is not None:
        out.append(f"<span>fit {tm['total_fit_seconds']:.2f} s</span>")
    return "".join(out)


# ---------------------------------------------------------------------------------------- groups
def _groups(report) -> str:
    from .plots import group_rates_figure

    parts = []
    for col, gr in report.group_rates.items():
        headers = ["group"]
        for name in gr["rates"]:
            headers += [f"goalfit {name}", f"baseline {name}"] if name in gr.get("baseline", {}) else [f"goalfit {name}"]
        rows = []
        for i, grp in enumerate(gr["groups"]):
            row = [f'<td class="goal">{_e(grp)}</td>']
            for name in gr["rates"]:
                iv = gr.get("goalfit_interval", {}).get(name)
                row.append(_cell(gr["goalfit"][name][i], None if iv is None else iv[i]))
                if name in gr.get("baseline", {}):
                    row.append(f'<td class="num dim">{_num(gr["baseline"][name][i])}</td>')
            rows.append(row)
        parts.append(f"<h3>by {_e(col)} ({_e(gr['split'])})</h3>" + _table(headers, rows))
    fig = group_rates_figure(report.group_rates)
    if fig is not None:
        parts.append(_figure(fig, "per-group rates, goalfit beside the baseline",
                             "Bars: goalfit (with its confidence intervals) and the baseline (lighter)."))
    return "\n".join(parts)


def roc_data(model, classifiers: dict, X, y, sensitive_features, split: str) -> dict:
    """Per-group ROC curves of a binary model's scores and the rules' operating points.

    Parameters
    ----------
    model : a fitted goalfit estimator
        Its scores are the positive class's probability from the deployed rule's probability
        model (``classifier_.probability_model``, the base model the plug-in rule thresholds).
    classifiers : dict of name -> rule
        Rules of the fit (``"goalfit"``: ``model.classifier_``; ``"baseline"``) whose expected
        (false positive rate, true positive rate) per group is marked.
    X, y, sensitive_features : the evaluated data
    split : str
        Its name, for the titles.

    Returns
    -------
    dict
        ``{column: {"split", "groups", "curves": {group: (fpr, tpr, auc)}, "points": {name:
        {group: (fpr, tpr)}}}}`` (:func:`goalfit.report.plots.roc_figure`); empty when the
        problem is not binary or the rule has no binary probability model (a group-blind joint
        model, an estimator that trains its own scores).
    """
    from sklearn.metrics import roc_auc_score, roc_curve

    from ..confusion.cells import as_frame
    from ..goals.rates import per_group_rates
    from ..metrics import score as rate_of

    classes = list(model.classes_)
    pm = getattr(model.classifier_, "probability_model", None)
    if len(classes) != 2 or pm is None or sensitive_features is None:
        return {}
    P = np.asarray(pm.predict_proba(X))
    if P.ndim != 2 or P.shape[1] != 2:
        return {}
    score = P[:, 1]
    pos = np.asarray(y) == classes[1]
    frame = as_frame(sensitive_features, len(pos))
    dists = {who: model.distribution(X, sensitive_features=sensitive_features, classifier=c)
             for who, c in classifiers.items()}
    out = {}
    for col in frame.columns:
        values = frame[col].to_numpy()
        groups = list(dict.fromkeys(values.tolist()))
        rates = per_group_rates(classes, col)  # the FPR and TPR of the report's group table
        curves: dict = {}
        points: dict = {who: {} for who in dists}
        for g in groups:
            m = values == g
            if pos[m].all() or not pos[m].any():  # one class only: no curve
                continue
            fpr, tpr, _ = roc_curve(pos[m], score[m])
            curves[g] = (fpr, tpr, float(roc_auc_score(pos[m], score[m])))
            for who, q in dists.items():
                points[who][g] = tuple(rate_of(rates[r](g), y, q, sensitive_features=frame, classes=classes)
                                       for r in ("FPR", "TPR"))
        if curves:
            out[col] = {"split": split, "groups": list(curves), "curves": curves, "points": points}
    return out


def _roc(report, X, y, sf, split) -> str:
    from .plots import roc_figure

    model = report.source["model"]
    clfs = {"goalfit": model.classifier_}
    if report.source.get("baseline") is not None:
        clfs["baseline"] = report.source["baseline"]
    roc = roc_data(model, clfs, X, y, sf, split)
    if not roc:
        return _note("No ROC curve: the problem is not binary, there are no sensitive features, or the deployed rule "
                     "does not threshold a binary class-probability model.")
    fig = roc_figure(roc)
    return _figure(fig, "per-group ROC curves with the deployed operating points",
                   f"ROC of the base model's scores for each group on {split}; filled markers: the deployed "
                   "rule's expected operating point in that group (a randomized rule's lies between its members'), "
                   "open markers: the baseline's.")


# ---------------------------------------------------------------------------------------- frontier
def _default_bounds(d: dict) -> np.ndarray:
    """Nine bounds from the asked bound to the baseline's value of the first constraint, plus two
    tighter than asked (not past 0 for a ``<=`` bound that is at least 0)."""
    c = d["constraints"][0]
    b = float(c["bound"])
    ref = d.get("baseline", d)["constraints"][0]["train"]
    step = abs(ref - b) / 8 if abs(ref - b) > 1e-3 else max(abs(b), 0.04) / 4
    direction = 1.0 if c["sense"] == "<=" else -1.0  # towards looser bounds
    grid = b + direction * step * np.arange(-2, 9)
    if c["sense"] == "<=" and b >= 0:
        grid = grid[grid >= 0]
    if c["sense"] == ">=" and b <= 1:
        grid = grid[grid <= 1]
    return np.unique(np.round(grid, 10))


def _frontier(report, frontier, frontier_bounds, data_sets) -> str:
    from ..tradeoff import frontier as sweep
    from .plots import frontier_figure

    d = report.data
    model = report.source["model"]
    if not d["constraints"]:
        return _note("No constraint: there is no bound to sweep.")
    cheap = hasattr(model, "with_goals")
    if frontier is None and not cheap:
        return _note("Not computed: this estimator would be refitted at every bound; pass frontier=True to compute it.")
    if getattr(model, "group_blind", False):  # its joint model cannot be lent frozen: one refit of the base model
        from sklearn.base import clone

        template, where = clone(model).set_params(confidence=None), "on the base model refitted once"
    else:  # fitted: the sweep reuses its base model
        params: dict = {"confidence": None}
        if "cv" in model.get_params(deep=False):
            params["cv"] = "auto"  # the lent base model is frozen: no cross-fitting of it
        template, where = copy.copy(model).set_params(**params), "on the fitted base model"
    Xtr, ytr, sftr, _ = data_sets["train"]
    val = data_sets.get("test")
    bounds = _default_bounds(d) if frontier_bounds is None else np.asarray(frontier_bounds, dtype=float)
    if frontier is None:  # each point re-solves the goals: about the fit's own method time
        history = getattr(getattr(model, "result_", None), "history", None) or [{}]
        per_point = float(history[-1].get("seconds") or getattr(model, "fit_seconds_", 0.0) or 0.0)
        if len(bounds) * per_point > FRONTIER_SECONDS:
            return _note(f"Not computed: {len(bounds)} re-solves of about {per_point:.1f} s each (the fit's own "
                         f"method time), over the {FRONTIER_SECONDS:g} s a report spends unasked; pass "
                         "frontier=True to compute it.")
    conf = d.get("confidence") or 0.95
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # infeasible tight points are shown as such
            f = sweep(template, Xtr, ytr, sensitive_features=sftr, bounds=bounds,
                      X_val=None if val is None else val[0], y_val=None if val is None else val[1],
                      sensitive_features_val=None if val is None else val[2], confidence=None if val is None else conf)
    except (ValueError, TypeError) as err:
        return _note(f"Not computed: {err}")
    fig = frontier_figure(f.table, swept=f.swept, objective_label=display_name(f.objective), chosen=f.chosen,
                          bound=float(d["constraints"][0]["bound"]))
    cols = [("bound", "bound"), ("objective_train", "objective train"), (f"{f.swept}_train", "goal train")]
    if "objective_val" in f.table:
        cols += [("objective_val", "objective test"), (f"{f.swept}_val", "goal test")]
    rows = []
    for i, r in f.table.iterrows():
        row = []
        for key, _ in cols:
            lo, hi = r.get(f"{key}_low"), r.get(f"{key}_high")
            row.append(_cell(r[key], None if lo is None else (lo, hi)))
        if i == f.chosen:
            row[0] = row[0].replace('class="num"', 'class="num" style="font-weight:700"')
        rows.append(row)
    caption = (f"Each point re-solves the goals at one bound of {f.swept} {where} "
               f"({f.total_seconds:.2f} s in all). Bands and error bars: {conf:.0%} confidence intervals of the test "
               "values. Circled: the deployed bound (fitted here without certification).")
    return _figure(fig, "trade-off frontier with uncertainty bands", caption) + _table(
        [c[1] for c in cols], rows)


# ---------------------------------------------------------------------------------------- plan
def _plan(report, data_sets) -> str:
    from .plots import plan_figure

    d = report.data
    model = report.source["model"]
    if not d["constraints"] or not hasattr(model, "plan_certification"):
        return _note("No constraint to certify.")
    split = "test" if "test" in data_sets else "train"
    X, y, sf, ds = data_sets[split]
    n_train = len(data_sets["train"][1])
    try:
        plan = model.plan_certification(X, y, sensitive_features=sf, datasets=ds, n_train=n_train)
    except ValueError as err:
        return _note(f"Not computed: {err}")
    rows = []
    for c in plan.constraints:
        need = c["train_rows_needed"]
        rows.append([f'<td class="goal">{_e(display_name(c["name"]))}</td>', f'<td class="num">{_num(c["value"])}</td>',
                     f'<td class="num">{"never" if not np.isfinite(need) else f"{need:,.0f}"}</td>',
                     f'<td class="num">{c["power_at_n_train"]:.2f}</td>',
                     f'<td class="goal">{_e(c["smallest_slice"])}</td>'])
    total = plan.train_rows_needed
    rows.append(['<td class="goal"><b>all together</b></td>', "<td></td>",
                 f'<td class="num"><b>{"never" if not np.isfinite(total) else f"{total:,.0f}"}</b></td>',
                 f'<td class="num"><b>{plan.power_at_n_train:.2f}</b></td>', "<td></td>"])
    table = _table(["goal", f"value ({split})", f"training rows for power {plan.power:g}",
                    f"power with {n_train:,} rows", "smallest slice"], rows)
    note = _note(f"The probability that a confidence={plan.confidence:g} fit certifies this classifier's goals "
                 f"(safety part {plan.safety_fraction:g} of the training rows), taking its values on {split} as the "
                 "population's." + (" Training values make it look better than it is." if split == "train" else ""))
    return table + _figure(plan_figure(plan), "power of the certification against the training size") + note


# ---------------------------------------------------------------------------------------- model card
def _check_card(model_card) -> dict:
    if model_card is None:
        return {}
    if not isinstance(model_card, dict) or not all(isinstance(k, str) for k in model_card):
        raise ValueError(f"model_card must be a dict of field name -> text (e.g. {{'intended_use': '...'}}), got "
                         f"{type(model_card).__name__}")
    return model_card


def _text(value) -> str:
    if isinstance(value, (list, tuple)):
        return "\n".join(str(v) for v in value)
    return str(value)


def _card(report, card: dict, data_sets) -> str:
    d = report.data
    model = report.source["model"] if report.source else None
    items = []
    n_train = d.get("n_train") or (len(data_sets["train"][1]) if data_sets else None)
    n_test = d.get("n_test") or (len(data_sets["test"][1]) if data_sets and "test" in data_sets else None)
    groups = "; ".join(f"{col}: {', '.join(str(g) for g in gr['groups'])}" for col, gr in report.group_rates.items())
    unnamed = "not named (build_report(..., extra={'dataset': ...}))"
    items.append(("Data", f"{d.get('dataset') or unnamed}; "
                          f"{n_train if n_train is not None else '?'} training rows"
                          + ("" if n_test is None else f", {n_test} test rows")
                          + (f"; sensitive features {groups}" if groups else "")))
    if model is not None:
        items.append(("Classes", ", ".join(str(c) for c in model.classes_)))
        base = d.get("estimator") or getattr(model, "estimator", None)
        base_text = base if isinstance(base, str) else repr(base)
        items.append(("Base model", base_text if len(base_text) < 600 else base_text[:600] + " ..."))
        items.append(("Estimator", type(model).__name__))
    method = f"{d.get('method')}"
    if d.get("cross_fitting"):
        cf = d["cross_fitting"]
        method += f"; cross-fitting with {cf.get('folds')} folds (deployed model: {cf.get('deployed_model')})"
    if d.get("certified") is not None:
        method += f"; confidence={d['confidence_fit']:g} (candidates and a safety test)"
    method += f"; {d.get('n_members', '?')} member(s), {d.get('n_oracle_calls', '?')} oracle calls"
    items.append(("Method", method))
    goals = [f"minimize {objective_label(d['objective'])}"]
    goals += [f"{constraint_label(c)} {c['sense']} {c['bound']:g}" for c in d["constraints"]]
    items.append(("Goals", "\n".join(goals)))
    rows = [f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in items]
    for key, label in MODEL_CARD_FIELDS.items():
        if card.get(key) not in (None, ""):
            rows.append(f"<dt>{_e(label)}</dt><dd>{_e(_text(card[key]))}</dd>")
        else:
            rows.append(f'<dt>{_e(label)}</dt><dd class="missing">not filled in (to_html(model_card='
                        f'{{"{_e(key)}": ...}}))</dd>')
    for key, value in card.items():
        if key not in MODEL_CARD_FIELDS:
            rows.append(f"<dt>{_e(key.replace('_', ' ').capitalize())}</dt><dd>{_e(_text(value))}</dd>")
    return '<dl class="card">\n' + "\n".join(rows) + "\n</dl>"


# ---------------------------------------------------------------------------------------- page
def write_html(report, path, *, model_card: dict | None = None, frontier: bool | None = None, frontier_bounds=None,
               plan: bool = True, title: str | None = None) -> Path:
    """Write ``report`` as one self-contained HTML file (see :meth:`goalfit.report.Report.to_html`,
    whose parameters these are).

    A report rebuilt from its JSON (no ``source``) has the goals, the group rates, the history
    and the model card; the ROC curves, the frontier and the plan need the fitted model and its
    data (:func:`goalfit.report.build_report`).

    Returns
    -------
    Path

    Raises
    ------
    ValueError
        ``model_card`` is not a dict of strings.
    """
    from .. import __version__
    from ..fit.backends import data_backend
    from .plots import convergence_figure

    card = _check_card(model_card)
    d = report.data
    src = report.source or {}
    data_sets = src.get("data")
    if data_sets is not None and not data_backend(data_sets["train"][0], src["model"]).in_memory:
        data_sets = None  # Dask collections: the sections that read rows are left out
    sections = [_section("goals", "Goals", _goals(d))]
    if report.group_rates:
        sections.append(_section("groups", "Rates by group", _groups(report)))
    need_source = "Needs the fitted model and its in-memory data (a report from gf.build_report)."
    split = "test" if data_sets and "test" in data_sets else "train"
    if data_sets:
        X, y, sf, _ = data_sets[split]
        sections.append(_section("roc", "ROC curves by group", _roc(report, X, y, sf, split)))
        if frontier is not False:
            sections.append(_section("frontier", "Trade-off frontier", _frontier(report, frontier, frontier_bounds,
                                                                                 data_sets)))
        if plan:
            sections.append(_section("plan", "Sample-size plan for certification", _plan(report, data_sets)))
    else:
        sections.append(_section("roc", "ROC curves, frontier and sample-size plan", _note(need_source)))
    fig = convergence_figure(d, history_label(d))
    if fig is not None:
        sections.append(_section("history", "Convergence", _figure(
            fig, "objective and max constraint violation per iteration",
            f"Measured on {history_label(d)}, the sample the method ran on.")))
    sections.append(_section("card", "Model card", _card(report, card, data_sets)))
    dataset = d.get("dataset")
    title = title or ("goalfit audit report" + (f": {dataset}" if dataset else ""))
    goals = ", ".join(f"{constraint_label(c)} {c['sense']} {c['bound']:g}" for c in d["constraints"])
    subtitle = (f"minimize {objective_label(d['objective'])}"
                + (f" subject to {goals}" if goals else ""))
    page = _PAGE.substitute(
        title=_e(title), subtitle=_e(subtitle), badges=_badges(d), sections="\n".join(sections), css=_CSS,
        version=_e(__version__), date=datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8")
    return path


def find_chromium() -> str | None:
    """The path of a Chromium or Chrome executable on ``PATH`` (``chromium``, ``chromium-browser``,
    ``google-chrome``), or None."""
    import shutil

    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


def screenshot(html_path, png_path, *, width: int = 1280, height: int = 3000, browser: str | None = None,
               timeout: float = 120) -> list[str]:
    """Render an HTML file in headless Chromium, save a PNG screenshot and return the console messages.

    The report has no script, so any console message (an uncaught error, a resource the page's
    Content-Security-Policy blocked) is a defect; the tests fail on any.

    Parameters
    ----------
    html_path, png_path : str or Path
        The page to open (``file://``) and the screenshot to write.
    width, height : int, default 1280, 3000
        The window size in CSS pixels (the screenshot's size).
    browser : str, optional
        The Chromium executable (default: :func:`find_chromium`).
    timeout : float, default 120
        Seconds before the browser is stopped.

    Returns
    -------
    list of str
        The browser's console lines (``...:CONSOLE...``), empty for a clean page.

    Raises
    ------
    FileNotFoundError
        No Chromium found (install Debian's ``chromium`` package), or the browser wrote no screenshot.
    subprocess.TimeoutExpired
        The browser ran longer than ``timeout``.

    Examples
    --------
    >>> errors = screenshot("audit.html", "audit.png")  # doctest: +SKIP
    """
    import subprocess
    import tempfile

    browser = browser or find_chromium()
    if browser is None:
        raise FileNotFoundError("no chromium on PATH: install it (Debian: apt-get install chromium)")
    html_path, png_path = Path(html_path).resolve(), Path(png_path).resolve()
    png_path.parent.mkdir(parents=True, exist_ok=True)
    if png_path.exists():
        png_path.unlink()
    with tempfile.TemporaryDirectory() as profile:
        run = subprocess.run([browser, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", f"--screenshot={png_path}",
                              f"--window-size={width},{height}", html_path.as_uri()],
                             capture_output=True, text=True, timeout=timeout, check=False)
    if not png_path.exists():
        raise FileNotFoundError(f"{browser} wrote no screenshot (exit code {run.returncode}): {run.stderr[-2000:]}")
    return [line for line in run.stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line]
