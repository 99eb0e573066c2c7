"""Regenerate the HTML audit report of the documentation and its screenshot.

Adult (official train/test split), the default logistic-regression base model, minimize the error
subject to a demographic parity difference on sex of at most 0.02, certified at confidence 0.95.
Writes ``docs/_static/report_adult.html`` (:meth:`goalfit.report.Report.to_html`) and
``docs/_static/report_adult.png`` (the page in headless Chromium, :func:`goalfit.report.html.screenshot`;
Debian: ``apt-get install chromium``), and fails when the browser logs a console message.

Run from the repository root::

    GOALFIT_DATA=../shared/data python docs/make_report_screenshot.py
"""
from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

from PIL import Image, ImageChops

import goalfit as gf
from goalfit.datasets import load_dataset
from goalfit.report.html import screenshot

STATIC = Path(__file__).resolve().parent / "_static"


def main() -> int:
    t0 = time.perf_counter()
    train, test = load_dataset("adult", subset="train"), load_dataset("adult", subset="test")
    sex_train, sex_test = train.sensitive_features[["sex"]], test.sensitive_features[["sex"]]
    model = gf.GoalClassifier(constraints=[gf.demographic_parity_difference("sex") <= 0.02], confidence=0.95,
                              random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # whether it certified is in the report
        model.fit(train.data, train.target, sensitive_features=sex_train)
    report = gf.build_report(model, train.data, train.target, sensitive_features_train=sex_train,
                             X_test=test.data, y_test=test.target, sensitive_features_test=sex_test,
                             extra={"dataset": "Adult (UCI census income, official train/test split)",
                                    "estimator": "gf.make_estimator('logistic_regression') (one-hot categories, "
                                                 "standardized numbers, logistic regression)"})
    t1 = time.perf_counter()
    html = report.to_html(STATIC / "report_adult.html", model_card={
        "intended_use": "Example audit for the goalfit documentation: predicting whether yearly income exceeds "
                        "$50K from 1994 census answers, with the share predicted positive equal across sexes "
                        "within 0.02.",
        "out_of_scope_uses": "Any decision about a real person: the data are from 1994 and the model was not "
                             "validated for a use.",
        "owners": "the goalfit developers",
        "limitations": "Two recorded sexes only; demographic parity says nothing about error rates per group "
                       "(see the TPR and FPR by group).",
    })
    t2 = time.perf_counter()
    png = STATIC / "report_adult.png"
    errors = screenshot(html, png, width=1280, height=7000)  # taller than the page: the blank below is cut
    im = Image.open(png).convert("RGB")
    bottom = ImageChops.difference(im, Image.new("RGB", im.size, "white")).getbbox()[3]
    im.crop((0, 0, im.width, min(im.height, bottom + 32))).save(png, optimize=True)
    t3 = time.perf_counter()
    print(f"fit + build_report {t1 - t0:.1f} s, to_html {t2 - t1:.1f} s, screenshot {t3 - t2:.1f} s")
    print(f"wrote {html} ({html.stat().st_size / 1e6:.2f} MB) and {png} ({png.stat().st_size / 1e6:.2f} MB)")
    if errors:
        print("console messages:\n" + "\n".join(errors), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
