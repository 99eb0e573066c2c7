#!/usr/bin/env python
"""Do goalfit's confidence intervals cover, and does certification hold, where the truth is known?

Data: a group ``a`` (P(a = 1) = 0.3), a feature ``x | a ~ N(mu_a, 1)`` with ``mu = (0.3, -0.3)``,
and ``P(y = 1 | x, a) = sigmoid(1.5 x + c_a)`` with ``c = (-0.4, -0.9)``. A logistic regression
on ``(x, a)`` is well specified, every plug-in rule is a threshold on ``x`` per group, and the
population value of any fitted (randomized) classifier is a one-dimensional integral per group,
computed here by quadrature (a 20,001-point grid on [-9, 9] per group, each grid point entered
twice, as y = 1 with weight eta and y = 0 with weight 1 - eta): exact to ~1e-9.

(1) Interval coverage. 200 draws: a training sample (n = 2,000) fits
    ``GoalClassifier(LogisticRegression(), constraints=[demographic_parity_difference() <= 0.05])``;
    a fresh evaluation sample (n = 2,000) gives 95% intervals (``evaluate(confidence=0.95)``,
    default methods, and the percentile bootstrap) for a rate (TPR of group 1), a signed
    difference (TPR(a=0) - TPR(a=1)), a ratio (demographic parity ratio) and the G-mean loss. The
    share of draws whose interval holds the population value is reported (target >= 0.93).
(2) Certification. 200 draws of a training sample (n = 4,000): ``confidence=0.95`` fits with the
    goals "TPR of group 1 >= 0.7" and "demographic parity difference <= 0.08"; among the draws
    that certify, the share whose population constraints all hold (target >= 0.95), the share
    certified, and the population accuracy beside the uncertified fit on the same draw.

Usage::

    python benchmarks/intervals_synthetic.py [--quick]

Writes ``benchmarks/results/intervals_synthetic.json``.
"""
from __future__ import annotations

import argparse
import importlib
import json
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression

import goalfit as gf
from _common import machine_record, versions

gfm = importlib.import_module("goalfit.metrics")
NAME = "intervals_synthetic"
RESULTS = Path(__file__).resolve().parent / "results"
P_A1, MU, C, SLOPE = 0.3, (0.3, -0.3), (-0.4, -0.9), 1.5


def draw(n, rng):
    a = (rng.random(n) < P_A1).astype(int)
    x = rng.normal(np.take(MU, a), 1.0)
    eta = 1 / (1 + np.exp(-(SLOPE * x + np.take(C, a))))
    y = (rng.random(n) < eta).astype(int)
    return np.c_[x, a], y, a


def population():
    """Quadrature 'sample': features, labels, groups and weights whose weighted rates are exact."""
    grid = np.linspace(-9, 9, 20001)
    dx = grid[1] - grid[0]
    Xs, ys, gs, ws = [], [], [], []
    for a in (0, 1):
        dens = np.exp(-0.5 * (grid - MU[a]) ** 2) / np.sqrt(2 * np.pi) * dx * (P_A1 if a else 1 - P_A1)
        eta = 1 / (1 + np.exp(-(SLOPE * grid + C[a])))
        for y, w in ((1, dens * eta), (0, dens * (1 - eta))):
            Xs.append(np.c_[grid, np.full_like(grid, a)])
            ys.append(np.full(len(grid), y))
            gs.append(np.full(len(grid), a))
            ws.append(w)
    return np.vstack(Xs), np.concatenate(ys), np.concatenate(gs), np.concatenate(ws)


GOALS = {
    "rate: TPR(a=1)": lambda: gf.true_positive_rate(group=1),
    "difference: TPR(a=0) - TPR(a=1)": lambda: gf.true_positive_rate(group=0) - gf.true_positive_rate(group=1),
    "ratio: demographic parity ratio": lambda: gf.demographic_parity_ratio(),
    "G-mean loss": lambda: "gmean",
}


def coverage(draws, n, seed, pop, n_boot):
    rng = np.random.default_rng(seed)
    Xp, yp, gp, wp = pop
    hits = {k: {"auto": 0, "bootstrap": 0} for k in GOALS}
    widths = {k: {"auto": [], "bootstrap": []} for k in GOALS}
    methods = {}
    for d in range(draws):
        X, y, a = draw(n, rng)
        m = gf.GoalClassifier(LogisticRegression(), constraints=[gf.demographic_parity_difference() <= 0.05],
                              cv=None).fit(X, y, sensitive_features=a)
        Xe, ye, ae = draw(n, rng)
        dist = m.predict_proba(Xe, sensitive_features=ae)
        pdist = m.predict_proba(Xp, sensitive_features=gp)
        for k, make in GOALS.items():
            prob = gf.goals.Problem(make())
            truth = gfm.evaluate_problem(prob, yp, pdist, sensitive_features=gp, sample_weight=wp,
                                         classes=m.classes_)["objective"]["value"]
            for how in ("auto", "bootstrap"):
                ev = gfm.evaluate_problem(prob, ye, dist, sensitive_features=ae, classes=m.classes_,
                                          confidence=0.95, interval_method=how, n_bootstrap=n_boot,
                                          random_state=d)
                lo, hi = ev["objective"]["interval"]
                hits[k][how] += bool(lo - 1e-12 <= truth <= hi + 1e-12)
                widths[k][how].append(hi - lo)
                if how == "auto":
                    methods[k] = ev["objective"]["interval_method"]
    return {k: {"coverage_default": hits[k]["auto"] / draws, "coverage_bootstrap": hits[k]["bootstrap"] / draws,
                "mean_width_default": float(np.mean(widths[k]["auto"])),
                "mean_width_bootstrap": float(np.mean(widths[k]["bootstrap"])), "default_method": methods[k]}
            for k in GOALS}


def certification(draws, n, seed, pop):
    rng = np.random.default_rng(seed)
    Xp, yp, gp, wp = pop
    cons = [gf.true_positive_rate(group=1) >= 0.7, gf.demographic_parity_difference() <= 0.08]
    prob = gf.goals.Problem("error", cons)
    out = []
    for d in range(draws):
        X, y, a = draw(n, rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mc = gf.GoalClassifier(LogisticRegression(), constraints=cons, cv=None, confidence=0.95,
                                   random_state=d).fit(X, y, sensitive_features=a)
            mu = gf.GoalClassifier(LogisticRegression(), constraints=cons, cv=None).fit(X, y, sensitive_features=a)
        evc = gfm.evaluate_problem(prob, yp, mc.predict_proba(Xp, sensitive_features=gp), sensitive_features=gp,
                                   sample_weight=wp, classes=mc.classes_)
        evu = gfm.evaluate_problem(prob, yp, mu.predict_proba(Xp, sensitive_features=gp), sensitive_features=gp,
                                   sample_weight=wp, classes=mu.classes_)
        out.append({"certified": bool(mc.certified_),
                    "population_holds": all(c["violation"] <= 1e-9 for c in evc["constraints"]),
                    "population_holds_uncertified": all(c["violation"] <= 1e-9 for c in evu["constraints"]),
                    "population_accuracy": evc["accuracy"], "population_accuracy_uncertified": evu["accuracy"],
                    "margins": [c["margin"] for c in mc.certification_]})
    cert = [r for r in out if r["certified"]]
    return {
        "share_certified": len(cert) / draws,
        "share_population_holds_given_certified": (sum(r["population_holds"] for r in cert) / len(cert)) if cert else None,
        "share_population_holds_uncertified_fit": sum(r["population_holds_uncertified"] for r in out) / draws,
        "mean_population_accuracy_certified_fit": float(np.mean([r["population_accuracy"] for r in out])),
        "mean_population_accuracy_uncertified_fit": float(np.mean([r["population_accuracy_uncertified"] for r in out])),
        "mean_margins": np.mean([r["margins"] for r in out], axis=0).tolist(),
        "per_draw": out,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="40 draws, 200 bootstrap replicates")
    args = ap.parse_args()
    draws = 40 if args.quick else 200
    t0 = time.time()
    pop = population()
    cov = coverage(draws, 2000, 0, pop, 200 if args.quick else 1000)
    for k, v in cov.items():
        print(f"{k:36s} coverage {v['coverage_default']:.3f} ({v['default_method']}), bootstrap "
              f"{v['coverage_bootstrap']:.3f}; mean width {v['mean_width_default']:.4f} / {v['mean_width_bootstrap']:.4f}")
    cert = certification(draws, 4000, 1, pop)
    print({k: v for k, v in cert.items() if k != "per_draw"})
    RESULTS.mkdir(exist_ok=True)
    rows = [dict(experiment="interval coverage (95%)", dataset="synthetic", method=f"{how} intervals",
                 metric=f"coverage: {k}", split="evaluation sample", value=v[f"coverage_{how}"], spread=None,
                 paper_value=None, lower_is_better=False, seconds=None)
            for k, v in cov.items() for how in ("default", "bootstrap")]
    rows.append(dict(experiment="certification", dataset="synthetic", method="GoalClassifier confidence=0.95",
                     metric="share of certified draws meeting the population constraints", split="population",
                     value=cert["share_population_holds_given_certified"], spread=None, paper_value=None,
                     lower_is_better=False, seconds=None))
    out = {"machine": machine_record(), "versions": versions(), "draws": draws, "seconds": time.time() - t0,
           "targets": {"coverage_min": 0.93, "certified_population_holds_min": 0.95},
           "coverage": cov, "certification": cert, "rows": rows}
    suffix = "_quick" if args.quick else ""
    (RESULTS / f"{NAME}{suffix}.json").write_text(json.dumps(out, indent=1, default=float) + "\n")
    print(f"wrote {RESULTS / (NAME + suffix + '.json')} in {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
