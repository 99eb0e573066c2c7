#!/usr/bin/env python
"""A random sweep of goal shapes through everything a user does with a fitted ``GoalClassifier``.

Each draw (seeded) picks a shape no list elsewhere fixes: 2, 3, 4 or 6 classes; 1 to 6 groups;
300 to 20,000 training rows (as many held out); one of the ten named objectives of
``benchmarks/atlas.py`` and one of its eight constraint families (a second family for
``with_goals``); sample weights or not; a probability model calibrated or miscalibrated
(``temperature`` 0.5, 1 or 2); string or integer labels; a DataFrame or an array. Two paths:

* ``precomputed``: ``GoalClassifier("precomputed", ...)`` on the probabilities of a logistic
  regression (``atlas.synthetic_cell``);
* ``estimator``: ``GoalClassifier(LogisticRegression(), ...)`` on the features (cross-fitted).

Checked per draw, in order (the first failure is recorded with its stage):

1. ``fit`` either succeeds or raises a ``ValueError`` that names the problem (a disparity over a
   single group is the expected refusal);
2. ``precomputed`` only (the method's training rows are the rows given; a cross-fitted fit
   runs on out-of-fold probabilities, not the deployed model's): a fit that reports its goals met
   meets them on its training rows (violation <= 1e-6, exact expectations of the randomized rule
   through ``evaluate_problem``), and its own history's objective agrees with that evaluation to
   1e-6;
3. ``predict_proba`` rows are finite and sum to 1, ``predict`` returns known labels;
4. ``evaluate(confidence=0.9)`` on held-out rows: every interval contains its value;
5. ``with_goals`` with the second family (or a ``ValueError`` naming the problem, recorded),
   ``to_deterministic`` ("hash" and "best_rule");
6. ``build_report`` on train and test, its HTML (without the frontier: a sweep of ``with_goals``,
   nine re-solves) and JSON;
7. a pickle round trip predicts the same probabilities.

Writes ``benchmarks/results/robustness.json``: one row per (path, stage) with the number of draws
that failed there (``lower_is_better``), the counts of refused and passed draws, and in
``details`` every draw (its shape, the method ``auto`` ran, seconds, the failure if any).

Usage::

    python benchmarks/robustness.py                 # 40 draws per path
    python benchmarks/robustness.py --draws 5       # a smoke run
"""
from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import pickle  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
import warnings  # noqa: E402
from collections import Counter  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import atlas  # noqa: E402
from _common import machine_record, versions, write_results  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402

import goalfit as gf  # noqa: E402
from goalfit.metrics import evaluate_problem  # noqa: E402
from goalfit.report import build_report  # noqa: E402

STAGES = ["fit", "train_goals", "predict", "evaluate", "with_goals", "to_deterministic", "report", "pickle"]
TOL = 1e-6


def draw(seed):
    """The shape of one draw."""
    rng = np.random.default_rng(seed)
    k = int(rng.choice([2, 2, 3, 4, 6]))
    shape = dict(seed=seed, n_classes=k, n_groups=int(rng.choice([1, 2, 3, 4, 6])),
                 n=int(rng.choice([300, 3000, 20000])), objective=str(rng.choice(atlas.OBJECTIVES)),
                 constraints=str(rng.choice(atlas.FAMILIES)), constraints_2=str(rng.choice(atlas.FAMILIES)),
                 weighted=bool(rng.random() < 0.3), temperature=float(rng.choice([0.5, 1.0, 2.0])),
                 string_labels=bool(rng.random() < 0.4), frame=bool(rng.random() < 0.4))
    if shape["objective"] == "f1" and k > 2:
        shape["objective"] = "micro_f1"  # F1 is binary
    return shape


def run(shape, path, tmp):
    """One draw through the stages; returns its record."""
    rec = dict(shape, path=path)
    rng = np.random.default_rng(shape["seed"] + 1)
    k, g, n = shape["n_classes"], shape["n_groups"], shape["n"]
    stage = "data"
    try:
        P, Y, G, _ = atlas.synthetic_cell(n, k, max(g, 2), shape["seed"], shape["temperature"])
        if g == 1:
            G = {s: np.full(len(Y[s]), "all") for s in Y}
        labels = np.array([f"c{j}" for j in range(k)]) if shape["string_labels"] else np.arange(k)
        y = {s: labels[Y[s]] for s in Y}
        w = rng.uniform(0.2, 3.0, n) if shape["weighted"] else None
        cons, cons2 = (atlas.constraints(f, Y["train"], P["train"], k, label=labels[-1])
                       for f in (shape["constraints"], shape["constraints_2"]))
        if path == "precomputed":
            X = P
            est = gf.GoalClassifier("precomputed", objective=shape["objective"], constraints=cons)
        else:
            rows = np.log(np.clip(P["train"], 1e-12, None)), np.log(np.clip(P["test"], 1e-12, None))
            X = {s: r + rng.normal(scale=0.5, size=r.shape) for s, r in zip(("train", "test"), rows)}
            if shape["frame"]:
                X = {s: pd.DataFrame(v, columns=[f"x{i}" for i in range(k)]) for s, v in X.items()}
            est = gf.GoalClassifier(LogisticRegression(max_iter=500), objective=shape["objective"], constraints=cons,
                                    random_state=shape["seed"])
        sf = {s: {"group": G[s]} for s in G}
        stage = "fit"
        t = time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                est.fit(X["train"], y["train"], sensitive_features=sf["train"], sample_weight=w)
            except ValueError as err:
                rec.update(outcome="refused", stage=stage, error=f"ValueError: {str(err)[:200]}")
                return rec
            rec.update(seconds=time.process_time() - t, method=est.method_, feasible=bool(est.feasible_),
                       members=len(est.classifier_.members))
            stage = "train_goals"
            pr = est.predict_proba(X["train"], sensitive_features=sf["train"])
            if path == "precomputed":
                ev = evaluate_problem(gf.Problem(shape["objective"], cons), y["train"], pr,
                                      sensitive_features=sf["train"], classes=est.classes_, sample_weight=w)
                viol = max([c["violation"] for c in ev["constraints"]], default=0.0)
                assert not est.result_.feasible or viol <= TOL, f"reported feasible, violation {viol:.3g}"
                hist = est.result_.history[-1]["objective"] if est.result_.history else None
                value = ev["objective"]["value"]
                assert hist is None or not np.isfinite(value) or abs(hist - value) <= TOL, \
                    f"history objective {hist} but evaluate {value}"
            stage = "predict"
            assert np.isfinite(pr).all() and np.abs(pr.sum(axis=1) - 1).max() <= 1e-9, "probability rows"
            assert set(np.unique(est.predict(X["test"], sensitive_features=sf["test"]))) <= set(est.classes_)
            stage = "evaluate"
            ev = est.evaluate(X["test"], y["test"], sensitive_features=sf["test"], confidence=0.9)
            for c in ev["constraints"]:
                iv = c.get("interval")
                if iv is not None:
                    assert iv[0] - 1e-9 <= c["value"] <= iv[1] + 1e-9, f"{c['name']} outside its interval"
            stage = "with_goals"
            try:
                est.with_goals(cons2)
            except ValueError as err:  # a goal the data cannot carry (a disparity over one group)
                rec["with_goals_refused"] = f"ValueError: {str(err)[:200]}"
            stage = "to_deterministic"
            for strategy in ("hash", "best_rule"):
                det = est.to_deterministic(strategy)
                assert set(np.unique(det.predict(X["test"], sensitive_features=sf["test"]))) <= set(est.classes_)
            stage = "report"
            rep = build_report(est, X["train"], y["train"], sensitive_features_train=sf["train"], X_test=X["test"],
                               y_test=y["test"], sensitive_features_test=sf["test"])
            rep.to_html(os.path.join(tmp, f"{path}_{shape['seed']}.html"), frontier=False)  # a with_goals sweep
            json.dumps(rep.data, default=str)
            stage = "pickle"
            again = pickle.loads(pickle.dumps(est))
            np.testing.assert_array_equal(again.predict_proba(X["test"], sensitive_features=sf["test"]),
                                          est.predict_proba(X["test"], sensitive_features=sf["test"]))
        rec["outcome"] = "passed"
    except Exception as err:  # noqa: BLE001 - every failure is the record
        rec.update(outcome="failed", stage=stage, error=f"{type(err).__name__}: {str(err)[:300]}",
                   traceback=traceback.format_exc()[-1500:])
    return rec


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--draws", type=int, default=40, help="draws per path")
    ap.add_argument("--seed", type=int, default=0, help="first draw's seed")
    ap.add_argument("--out", type=Path, default=HERE / "results" / "robustness.json")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    tmp = tempfile.mkdtemp()
    records = []
    for path in ("precomputed", "estimator"):
        for i in range(args.draws):
            rec = run(draw(args.seed + i), path, tmp)
            records.append(rec)
            print(f"{path:11s} {rec['seed']:4d} {rec['n_classes']}x{rec['n_groups']} n={rec['n']:<6d} "
                  f"{rec['objective']:>17s} + {rec['constraints']:<9s} {rec.get('method', ''):>18s} "
                  f"{rec.get('seconds', 0):6.2f}s {rec['outcome']}"
                  + ("" if rec["outcome"] == "passed" else f" [{rec['stage']}] {rec['error'][:120]}"), flush=True)
    rows = []
    for path in ("precomputed", "estimator"):
        mine = [r for r in records if r["path"] == path]
        failed = Counter(r["stage"] for r in mine if r["outcome"] == "failed")
        for stage in STAGES:
            rows.append(dict(experiment=f"robustness ({path})", dataset="synthetic", method="GoalClassifier",
                             metric=f"failed_at_{stage}", split="train", value=failed.get(stage, 0), spread=None,
                             paper_value=None, lower_is_better=True, seconds=None))
        for outcome in ("passed", "refused"):
            rows.append(dict(experiment=f"robustness ({path})", dataset="synthetic", method="GoalClassifier",
                             metric=outcome, split="train", value=sum(r["outcome"] == outcome for r in mine),
                             spread=None, paper_value=None, lower_is_better=False, seconds=None))
    for r in rows:
        print(f"{r['experiment']:26s} {r['metric']:28s} {r['value']}")
    write_results(args.out, {"benchmark": "robustness", "script": "benchmarks/robustness.py",
                             "created": time.strftime("%Y-%m-%d %H:%M:%S"), "seconds": time.perf_counter() - t0,
                             "machine": machine_record(), "versions": versions(), "seeds": [args.seed, args.draws],
                             "rows": rows, "details": {"draws": records}})
    return 0 if all(r["outcome"] != "failed" for r in records) else 1


if __name__ == "__main__":
    sys.exit(main())
