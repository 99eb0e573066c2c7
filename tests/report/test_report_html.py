"""The HTML audit report (Report.to_html, goalfit fit --html): self-contained, escaped, its numbers the
report's, checked as a person sees it in headless Chromium; the text report's words and labels; progress
lines with each phase's own duration."""
import base64
import io
import os
import re
import time
import warnings

import numpy as np
import pandas as pd
import pytest

import goalfit as gf
from goalfit.report import Report
from goalfit.report.html import find_chromium, roc_data, screenshot

pytestmark = pytest.mark.quick  # in the quick subset (README: python -m pytest -m quick)

IMG = re.compile(r'<img alt="[^"]*" src="data:image/png;base64,([A-Za-z0-9+/=]+)">')


def _data(n, seed):
    rng = np.random.default_rng(seed)
    sex = rng.choice(["Female", "Male"], n, p=[0.35, 0.65])
    X = pd.DataFrame({"a": rng.normal(size=n) + (sex == "Male"), "b": rng.normal(size=n)})
    y = (X["a"] + 0.5 * X["b"] + rng.normal(size=n) > 0.8).astype(int).to_numpy()
    return X, y, pd.DataFrame({"sex": sex})


@pytest.fixture(scope="module")
def fitted():
    """A certified (confidence=0.9) demographic-parity fit on 2,000 synthetic rows, 1,000 test rows."""
    Xtr, ytr, Str = _data(2000, 0)
    Xte, yte, Ste = _data(1000, 1)
    model = gf.GoalClassifier(constraints=[gf.demographic_parity_difference("sex") <= 0.05], confidence=0.9,
                              random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # certified or not, the report says which
        model.fit(Xtr, ytr, sensitive_features=Str)
    report = gf.build_report(model, Xtr, ytr, sensitive_features_train=Str, X_test=Xte, y_test=yte,
                             sensitive_features_test=Ste, extra={"dataset": "synthetic <two groups>"})
    return model, report, (Xte, yte, Ste)


@pytest.fixture(scope="module")
def page(fitted, tmp_path_factory):
    _, report, _ = fitted
    path = tmp_path_factory.mktemp("html") / "report.html"
    card = {"intended_use": "<script>alert('x')</script> pre-screening", "owners": ["risk team", "A & B"]}
    assert report.to_html(path, model_card=card) == path
    return path, path.read_text(encoding="utf-8")


def _images(text):
    from PIL import Image

    return [Image.open(io.BytesIO(base64.b64decode(b))) for b in IMG.findall(text)]


def test_html_is_self_contained_and_escaped(page):
    _, text = page
    assert text.startswith("<!DOCTYPE html>")
    assert "<script" not in text and "alert(&#x27;x&#x27;)" in text  # the user's text, escaped
    assert "A &amp; B" in text and "synthetic &lt;two groups&gt;" in text
    for external in ('src="http', "href=", "@import", "url(", "@font-face"):
        assert external not in text
    assert text.count("<img ") == len(IMG.findall(text)) >= 5  # every figure inline
    for anchor in ("goals", "groups", "roc", "frontier", "plan", "history", "card"):
        assert f'<section id="{anchor}">' in text


def test_html_figures_are_not_empty(page):
    images = _images(page[1])
    assert len(images) >= 5
    for im in images:
        assert im.format == "PNG" and im.width >= 300 and im.height >= 200
        colours = im.convert("RGB").getcolors(maxcolors=1 << 20)
        assert len(colours) > 20  # lines, bars, text: not one flat colour
        white = max(count for count, c in colours if c == (255, 255, 255)) if any(
            c == (255, 255, 255) for _, c in colours) else 0
        assert white < 0.97 * im.width * im.height


def test_html_numbers_are_the_reports(fitted, page):
    model, report, _ = fitted
    text = page[1]
    d = report.data
    c = d["constraints"][0]
    lo, hi = c["interval_test"]
    assert f"{c['test']:.4f}" in text and f"[{lo:.4f}, {hi:.4f}]" in text
    assert f"{c['certified_bound']:.4f}" in text and "certified bound (90%)" in text
    assert f"{d['objective']['test']:.4f}" in text and f"{d['metrics']['test']['accuracy']:.4f}" in text
    ms = d["method_sample"]  # a confidence fit runs on its candidate part: its own column
    assert ms["label"] == "train (candidate part)" and "train (in-sample)" in text
    plan = model.plan_certification(*fitted[2][:2], sensitive_features=fitted[2][2], n_train=2000)
    assert f"{plan.power_at_n_train:.2f}" in text


def test_roc_operating_points_are_the_group_rates(fitted):
    model, report, (X, y, S) = fitted
    roc = roc_data(model, {"goalfit": model.classifier_}, X, y, S, "test")["sex"]
    gr = report.group_rates["sex"]
    for k, g in enumerate(gr["groups"]):
        fpr, tpr = roc["points"]["goalfit"][g]
        assert fpr == pytest.approx(gr["goalfit"]["FPR"][k], abs=1e-12)
        assert tpr == pytest.approx(gr["goalfit"]["TPR"][k], abs=1e-12)
        curve_fpr, curve_tpr, auc = roc["curves"][g]
        assert 0.5 < auc <= 1 and curve_fpr[0] == 0 and curve_tpr[-1] == 1


def test_html_without_source_frontier_or_plan(fitted, tmp_path):
    _, report, _ = fitted
    bare = Report(report.data, report.group_rates)  # rebuilt from its JSON: no model, no rows
    text = bare.to_html(tmp_path / "bare.html").read_text()
    assert "Needs the fitted model" in text and '<section id="goals">' in text
    text = report.to_html(tmp_path / "lean.html", frontier=False, plan=False).read_text()
    assert '<section id="frontier">' not in text and '<section id="plan">' not in text
    with pytest.raises(ValueError, match="model_card must be a dict"):
        report.to_html(tmp_path / "x.html", model_card="for lending")


def test_html_frontier_sweeps_the_given_bounds(fitted, tmp_path):
    _, report, _ = fitted
    text = report.to_html(tmp_path / "f.html", frontier_bounds=[0.0, 0.1, 0.2], plan=False).read_text()
    section = text.split('<section id="frontier">')[1].split("</section>")[0]
    rows = section.split("<tbody>")[1].count("<tr>")
    assert rows == 4  # the three bounds and the fit's own (0.05)
    assert section.count("<small class=\"ci\">") >= 2 * 4  # test objective and goal intervals per point


@pytest.mark.skipif(find_chromium() is None and not os.environ.get("CI"),
                    reason="chromium is not installed (apt-get install chromium); runs always under CI")
def test_html_in_headless_chromium(page, tmp_path):
    from PIL import Image

    path, _ = page
    png = tmp_path / "shot.png"
    errors = screenshot(path, png, width=1280, height=3000)
    assert errors == []  # no console error (the page has no script; blocked loads would be logged)
    im = Image.open(png).convert("RGB")
    assert im.size == (1280, 3000)
    colours = im.getcolors(maxcolors=1 << 22)
    assert len(colours) > 200  # text, tables and figures, not a blank page
    white = sum(count for count, c in colours if min(c) >= 250)
    assert white < 0.95 * 1280 * 3000
    top = im.crop((0, 0, 1280, 600)).getcolors(maxcolors=1 << 22)
    assert len(top) > 50  # the title and the goals table are drawn at the top


def test_a_page_with_a_console_error_is_caught(tmp_path):
    if find_chromium() is None:
        pytest.skip("chromium is not installed")
    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><html><body><p>x</p><script>undefinedFunction();</script></body></html>")
    errors = screenshot(bad, tmp_path / "bad.png", width=400, height=300)
    assert any("Uncaught" in e for e in errors)


def test_text_report_never_breaks_a_word(fitted):
    from rich.console import Console

    from goalfit.report.report import GoalName

    _, report, _ = fitted
    names = ["demographic_parity_difference('sex')", "error rate (minimized)", "accuracy", "goal"]
    pieces = set()  # a goal cell may hold any run of whole parts of a name
    for name in names:
        parts = GoalName(name).parts
        pieces |= {"".join(parts[i:j]).strip() for i in range(len(parts)) for j in range(i + 1, len(parts) + 1)}
    wrapped = set()
    for width in (76, 80, 100, 160):
        console = Console(width=width, record=True, file=io.StringIO())
        report.print(console)
        lines = console.export_text().splitlines()
        assert max(len(line) for line in lines) <= width
        table = lines[: next(i for i, line in enumerate(lines) if line.startswith("└"))]
        assert not any("…" in line for line in table)  # no header or value cut either
        goal_cells = [re.split("[│┃]", line)[1].strip() for line in table if line[:1] in "│┃"]
        assert all(cell in pieces for cell in goal_cells if cell), goal_cells
        if "demographic_parity_difference('sex')" not in goal_cells:
            wrapped.add(width)
    assert 76 in wrapped and 160 not in wrapped  # wrapped between its parts when narrow, whole when it fits


@pytest.mark.filterwarnings("ignore:.*smallest slice")  # a small synthetic sample, on purpose
def test_cross_fitted_values_carry_one_label_in_table_text_and_plot(tmp_path):
    from rich.console import Console

    from goalfit.report.plots import convergence_figure
    from goalfit.report.report import history_label

    X, y, S = _data(1500, 2)
    model = gf.GoalClassifier(constraints=[gf.demographic_parity_difference("sex") <= 0.03], cv=3, random_state=0)
    model.fit(X, y, sensitive_features=S)
    report = gf.build_report(model, X, y, sensitive_features_train=S, confidence=None)
    d = report.data
    ms = d["method_sample"]
    assert history_label(d) == ms["label"] == "train (cross-fitted)"
    # the cross-fitted values are the ones the method met (its feasible_ / max_violation_) ...
    assert max(0.0, ms["constraints"][0]["value"] - 0.03) == pytest.approx(model.max_violation_, abs=1e-9)
    assert ms["constraints"][0]["met"] == model.feasible_
    # ... and differ from the deployed rule's in-sample values, which carry another label
    assert ms["constraints"][0]["value"] != pytest.approx(d["constraints"][0]["train"], abs=1e-6)
    console = Console(width=120, record=True, file=io.StringIO())
    report.print(console)
    text = console.export_text()
    assert "train (in-sample)" in text and "train (cross-fitted)" in text
    fig = convergence_figure(d, history_label(d))
    assert [ax.get_title() for ax in fig.axes] == ["objective, train (cross-fitted)",
                                                   "max constraint violation, train (cross-fitted)"]
    html = report.to_html(tmp_path / "cf.html", frontier=False, plan=False).read_text()
    assert "train (cross-fitted)" in html and "train (in-sample)" in html


@pytest.mark.filterwarnings("ignore:.*smallest slice")  # a small synthetic sample, on purpose
def test_method_sample_score_is_its_evaluations(tmp_path):
    """The method-sample column's score row (F1 beside 1 - F1) is the evaluation's score."""
    X, y, S = _data(1500, 2)
    model = gf.GoalClassifier(objective="f1", constraints=[gf.demographic_parity_difference("sex") <= 0.05], cv=3,
                              random_state=0)
    model.fit(X, y, sensitive_features=S)
    d = gf.build_report(model, X, y, sensitive_features_train=S, confidence=None).data
    ms = d["method_sample"]
    assert d["objective"]["score_label"] == "F1" and 0.3 < ms["score"] < 1
    assert ms["score"] == pytest.approx(1.0 - ms["objective"], abs=1e-12)
    html = Report(d, {}).to_html(tmp_path / "f1.html", frontier=False, plan=False).read_text()
    row = html[html.index("F1 (score)"):].split("</tr>")[0]
    assert f"{ms['score']:.4f}" in row


def test_text_report_names_what_a_certified_bound_bounds():
    """A rate compared with a rate is certified on their difference (the constraint's expression):
    the text report names that difference beside the certified bound, not the left-hand rate."""
    from rich.console import Console

    X, y, S = _data(2000, 3)
    tpr_f = gf.true_positive_rate(group={"sex": "Female"})
    model = gf.GoalClassifier(constraints=[tpr_f >= gf.true_positive_rate() - 0.1], confidence=0.9, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # certified or not, the report says which
        model.fit(X, y, sensitive_features=S)
    report = gf.build_report(model, X, y, sensitive_features_train=S, confidence=None)
    c = report.data["certification"][0]
    assert (c["sense"], c["bound"]) == (">=", pytest.approx(-0.1))
    console = Console(width=200, record=True, file=io.StringIO())
    report.print(console)
    line = next(t for t in console.export_text().splitlines() if "holds at 90%" in t)
    label = report.data["constraints"][0]["label"]
    assert "true_positive_rate()" in label
    assert line.strip().startswith(f"{label} >= {c['certified_bound']:.4f}")


def test_progress_prints_each_phases_own_duration():
    from goalfit.fit.progress import Progress

    out = io.StringIO()
    p = Progress(1, who="t", stream=out)
    p.phase("first")
    time.sleep(0.3)
    p.phase("second")
    time.sleep(0.05)
    p.done()
    took = {m.group(1): float(m.group(2)) for m in re.finditer(r"\[t\] (\w+) took ([0-9.]+) s", out.getvalue())}
    assert set(took) == {"first", "second"}
    assert took["first"] >= 0.3
    assert 0.05 <= took["second"] < 0.3  # its own duration, not the time since the fit started
    assert re.search(r"\[t\] done in ([0-9.]+) s", out.getvalue())
    assert "first ..." in out.getvalue() and "s\n[t] first ..." not in out.getvalue()


def test_cli_fit_writes_the_html_report(tmp_path):
    from typer.testing import CliRunner

    from goalfit.cli.app import app

    X, y, S = _data(600, 3)
    df = X.assign(grp=S["sex"].to_numpy(), label=y)
    df.to_csv(tmp_path / "d.csv", index=False)
    spec = tmp_path / "s.toml"
    spec.write_text(f'[data]\ncsv = "{tmp_path / "d.csv"}"\nlabel = "label"\nsensitive = ["grp"]\n'
                    '[goals]\nconstraints = ["demographic_parity_difference(\'grp\') <= 0.05"]\n')
    runner = CliRunner()
    res = runner.invoke(app, ["fit", str(spec), "--out", str(tmp_path / "o"), "--html", str(tmp_path / "r.html")])
    assert res.exit_code == 0, res.output
    text = (tmp_path / "r.html").read_text()
    assert "demographic_parity_difference(&#x27;grp&#x27;)" in text and '<section id="card">' in text
    res = runner.invoke(app, ["fit", str(spec), "--out", str(tmp_path / "o2"), "--html", str(tmp_path)])
    assert res.exit_code == 2 and "--html" in res.output and "is a folder" in res.output
    assert not (tmp_path / "o2").exists()  # refused before fitting


def test_html_frontier_skipped_unasked_when_its_re_solves_would_be_slow(fitted, tmp_path, monkeypatch):
    """frontier=None sweeps only when the re-solves (bounds x the fit's own method seconds) fit the
    report's budget; a slow fit gets a note saying how to ask, and frontier=True still sweeps."""
    from goalfit.report import html as report_html

    _, report, _ = fitted
    model = report.source["model"]
    per_point = model.result_.history[-1]["seconds"]
    monkeypatch.setattr(report_html, "FRONTIER_SECONDS", 9 * per_point / 2)  # nine default bounds: over budget
    text = report.to_html(tmp_path / "slow.html", plan=False).read_text()
    section = text.split('<section id="frontier">')[1].split("</section>")[0]
    assert "Not computed" in section and "frontier=True" in section and "<tbody>" not in section
    text = report.to_html(tmp_path / "asked.html", frontier=True, frontier_bounds=[0.0, 0.1], plan=False).read_text()
    assert "<tbody>" in text.split('<section id="frontier">')[1].split("</section>")[0]
    monkeypatch.setattr(report_html, "FRONTIER_SECONDS", 10.0)
    text = report.to_html(tmp_path / "fast.html", plan=False).read_text()
    assert "<tbody>" in text.split('<section id="frontier">')[1].split("</section>")[0]
