"""The oracle of binary goals: the plug-in rule against the exact per-group thresholds.

``method_params={"oracle": "threshold"}`` finds the optimum over mixtures of per-group threshold
rules on the training sample (as fairlearn's ThresholdOptimizer does), where the default plug-in
oracle's thresholds come from the probabilities' costs and are exact only when the
probabilities are calibrated within each group. This script measures both on held-out data:

* Adult (sex, demographic parity <= 0.02), COMPAS (sex, equal opportunity <= 0.05), German
  credit (sex, demographic parity <= 0.02): logistic regression (``make_estimator``'s) on 70% of
  the rows, the goals fitted on its in-sample probabilities, 30% test; 5 stratified re-splits;
* the synthetic problem of ``benchmarks/speed.py``'s peer table (5 groups that shift the
  features, logistic regression that does not see the group, so its probabilities are
  miscalibrated within the groups), 10^5 training and 10^5 test rows, demographic parity <=
  0.01, 3 seeds.

Reported: training and test accuracy and test violation, mean and standard deviation over the
re-splits, and the paired difference threshold - plug-in in test accuracy. Cost: both oracles'
fit CPU seconds on 2 x 10^6 calibrated binary rows (two groups; DP and EO <= 0.01), beside one
stable ``np.argsort`` of the scores, median of 3 in one process.

Usage::

    GOALFIT_DATA=../shared/data python benchmarks/oracle_choice.py
"""
from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import machine_record, versions, write_results  # noqa: E402

import goalfit as gf  # noqa: E402

ORACLES = ("plugin", "threshold")


def real_cases():
    from sklearn.model_selection import train_test_split

    from goalfit.datasets import load_dataset

    for name, col, goal in (("adult", "sex", gf.demographic_parity_difference("g") <= 0.02),
                            ("compas", "sex", gf.equal_opportunity_difference("g") <= 0.05),
                            ("german", "sex", gf.demographic_parity_difference("g") <= 0.02)):
        d = load_dataset(name)
        X, y, s = d.data, np.asarray(d.target), np.asarray(d.sensitive_features[col]).astype(str)
        for split in range(5):
            a, b = train_test_split(np.arange(len(y)), test_size=0.3, random_state=split, stratify=y)
            base = gf.make_estimator("logistic_regression").fit(X.iloc[a], y[a])
            yield (f"{name} {goal.name}", split, goal, base.predict_proba(X.iloc[a]), y[a], s[a],
                   base.predict_proba(X.iloc[b]), y[b], s[b])


def synthetic_cases():
    from speed import lr, synthetic

    goal = gf.demographic_parity_difference("g") <= 0.01
    n = 10**5
    for seed in range(3):
        X, y, g = synthetic(2 * n, 2, 5, seed=seed)
        base = lr().fit(X[:n], y[:n])
        yield (f"synthetic 5 groups {goal.name}", seed, goal, base.predict_proba(X[:n]), y[:n], g[:n],
               base.predict_proba(X[n:]), y[n:], g[n:])


def cost(repeats=3):
    """CPU seconds of each oracle's fit and of one stable argsort on 2 x 10^6 rows."""
    r = np.random.default_rng(0)
    n = 2_000_000
    g = r.choice(np.array(["a", "b"]), n, p=[0.6, 0.4])
    eta = 1 / (1 + np.exp(-r.normal(0.3 * (g == "a"), 1.0)))
    P, y = np.column_stack([1 - eta, eta]), (r.random(n) < eta).astype(np.int64)
    out = {"argsort_seconds": float(np.median([_cpu(lambda: np.argsort(eta, kind="stable")) for _ in range(repeats)]))}
    for goal in (gf.demographic_parity_difference("g") <= 0.01, gf.equalized_odds_difference("g") <= 0.01):
        for oracle in ORACLES:
            def fit():
                return gf.GoalClassifier("precomputed", constraints=[goal], method_params={"oracle": oracle}).fit(
                    P, y, sensitive_features={"g": g})
            fit()  # first-call costs
            out[f"{goal.name} {oracle}"] = float(np.median([_cpu(fit) for _ in range(repeats)]))
    return out


def _cpu(fn):
    t = time.process_time()
    fn()
    return time.process_time() - t


def main():
    t0 = time.perf_counter()
    per, rows = {}, []
    for case in [*real_cases(), *synthetic_cases()]:
        name, split, goal, Pa, ya, sa, Pb, yb, sb = case
        for oracle in ORACLES:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t = time.perf_counter()
                m = gf.GoalClassifier("precomputed", constraints=[goal], method_params={"oracle": oracle})
                m.fit(Pa, ya, sensitive_features={"g": sa})
                sec = time.perf_counter() - t
            tr = m.evaluate(Pa, ya, sensitive_features={"g": sa})
            te = m.evaluate(Pb, yb, sensitive_features={"g": sb})
            rec = {"train_accuracy": tr["accuracy"], "test_accuracy": te["accuracy"],
                   "test_violation": te["constraints"][0]["violation"], "seconds": sec, "feasible": bool(m.feasible_)}
            per.setdefault(name, {}).setdefault(oracle, []).append(rec)
            for key in ("train_accuracy", "test_accuracy", "test_violation"):
                rows.append({"experiment": name, "dataset": name.split()[0], "method": f"oracle={oracle}",
                             "metric": key.split("_", 1)[1], "split": key.split("_", 1)[0], "split_seed": split,
                             "value": rec[key], "lower_is_better": key != "train_accuracy" and key != "test_accuracy",
                             "paper_value": None, "spread": None})
        print(f"{name} split {split}: " + "; ".join(
            f"{o} train {per[name][o][-1]['train_accuracy']:.4f} test {per[name][o][-1]['test_accuracy']:.4f} "
            f"viol {per[name][o][-1]['test_violation']:.4f}" for o in ORACLES), flush=True)
    summary = {}
    print("\n| goal | oracle | train accuracy | test accuracy | test violation | threshold - plugin test accuracy |")
    print("|---|---|---|---|---|---|")
    for name, d in per.items():
        diff = np.array([b["test_accuracy"] - a["test_accuracy"] for a, b in zip(d["plugin"], d["threshold"])])
        summary[name] = {o: {k: {"mean": float(np.mean([r[k] for r in d[o]])), "sd": float(np.std([r[k] for r in d[o]]))}
                             for k in ("train_accuracy", "test_accuracy", "test_violation", "seconds")} for o in ORACLES}
        summary[name]["paired_test_accuracy_difference"] = {"mean": float(diff.mean()), "sd": float(diff.std()),
                                                            "n": int(diff.size)}
        for o in ORACLES:
            s = summary[name][o]
            print(f"| {name} | {o} | " + " | ".join(f"{s[k]['mean']:.4f} ± {s[k]['sd']:.4f}" for k in
                                                    ("train_accuracy", "test_accuracy", "test_violation"))
                  + (f" | {diff.mean():+.4f} ± {diff.std():.4f} |" if o == "threshold" else " | |"))
    costs = cost()
    print("\nCPU seconds at 2 x 10^6 rows: " + ", ".join(f"{k} {v:.2f}" for k, v in costs.items()))
    for k, v in costs.items():
        rows.append({"experiment": "cost at 2e6 rows", "dataset": "synthetic", "method": k, "metric": "cpu_seconds",
                     "split": "train", "value": v, "lower_is_better": True, "paper_value": None, "spread": None})
    write_results(HERE / "results" / "oracle_choice.json",
                  {"benchmark": "oracle_choice", "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                   "seconds": time.perf_counter() - t0, "machine": machine_record(), "versions": versions(),
                   "summary": summary, "cost_2e6_rows": costs, "per_split": per, "rows": rows})


if __name__ == "__main__":
    main()
