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

The plug-in oracle runs *priced* (``exact_binary=False``): column generation with its own rules,
as before binary goals were solved over the cells' ROC hulls; on the default path (the hulls' LP)
both oracles reach the sample's optimum over every threshold rule (``--part default``'s
``"plugin hulls"`` arm).

Reported: training and test accuracy and test violation, mean and standard deviation over the
re-splits, and the paired difference threshold - plug-in in test accuracy. Cost: both oracles'
fit CPU seconds on 2 x 10^6 calibrated binary rows (two groups; DP and EO <= 0.01), beside one
stable ``np.argsort`` of the scores, median of 3 in one process.

``--part default`` chooses the default oracle: credit default, COMPAS, German credit, Adult
(sex) and bank marketing (age under 25 vs the rest), DP <= 0.02 and equalized odds <= 0.03, 5
paired 70/30 splits, ``make_estimator("logistic_regression")`` (and a user's unscaled
``LogisticRegression(max_iter=1000)`` on credit default), each fit option toggled alone on the
same base fits (:data:`CONFIGS`: oracle, cross-fitting, the deployed fold average, per-group
recalibration); it writes its record under the key ``"default"`` of the same results file.

Usage::

    GOALFIT_DATA=../shared/data python benchmarks/oracle_choice.py [--part oracles|default]
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
#: ``method_params`` of each arm: the plug-in oracle *priced* (``exact_binary=False``: column
#: generation with the oracle's own rules, its behaviour before binary goals were solved over the
#: cells' ROC hulls), the same oracle on the default path (the hulls' LP, the sample's optimum
#: over every threshold rule, as the threshold oracle's), the threshold oracle, and the default
PARAMS = {"plugin": {"oracle": "plugin", "exact_binary": False}, "plugin hulls": {"oracle": "plugin"},
          "threshold": {"oracle": "threshold"}, "auto": {"oracle": "auto"}}


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
                return gf.GoalClassifier("precomputed", constraints=[goal], method_params=PARAMS[oracle]).fit(
                    P, y, sensitive_features={"g": g})
            fit()  # first-call costs
            out[f"{goal.name} {oracle}"] = float(np.median([_cpu(fit) for _ in range(repeats)]))
    return out


def _cpu(fn):
    t = time.process_time()
    fn()
    return time.process_time() - t


# ============================================================================ --part default
#: The configurations of ``--part default``: (outer-loop probabilities, deployed model, oracle).
#: "insample": the base model's probabilities on its own training rows (``cv="auto"`` for a
#: linear model); "oof": 5-fold out-of-fold ones (``cv=5``); "recal": in-sample ones recalibrated
#: within each group (Platt on the logit, one fit per group); deployed "full": the model fitted on
#: every training row, "avg": the mean of the 5 fold models (``cv_model="average"``).
CONFIGS = {
    "plugin": ("insample", "full", "plugin"),
    "plugin hulls": ("insample", "full", "plugin hulls"),
    "threshold": ("insample", "full", "threshold"),
    "auto": ("insample", "full", "auto"),
    "plugin cv=5 avg": ("oof", "avg", "plugin"),
    "plugin cv=5 refit": ("oof", "full", "plugin"),
    "threshold cv=5 avg": ("oof", "avg", "threshold"),
    "plugin recalibrated": ("recal", "recal", "plugin"),
}


def default_cases():
    """(dataset, goal name, constraints, X for make_estimator, X for a plain LogisticRegression, y, groups)."""
    import pandas as pd

    from goalfit.datasets import load_dataset

    goals = [gf.demographic_parity_difference("g") <= 0.02, gf.equalized_odds_difference("g") <= 0.03]
    for name, col in (("credit_default", "SEX"), ("compas", "sex"), ("german", "sex"), ("adult", "sex"),
                      ("bank_marketing", "age_group")):
        d = load_dataset(name)
        s = np.asarray(d.sensitive_features[col]).astype(str)
        if name == "bank_marketing":
            s = np.where(s == "under_25", "under_25", "25_plus")
        X = d.data
        Xnum = pd.get_dummies(X, dtype=float).to_numpy(dtype=float)
        yield name, f"{col}: DP <= 0.02, EOdds <= 0.03", goals, X, Xnum, np.asarray(d.target), s


def _recalibrator(P, y, s):
    """Per-group Platt maps on logit(eta_1), fitted on (P, y, s); returns a function of (P, s)."""
    from scipy.special import expit, logit
    from sklearn.linear_model import LogisticRegression

    z = logit(np.clip(P[:, 1], 1e-9, 1 - 1e-9))
    maps = {g: LogisticRegression(C=1e4).fit(z[s == g, None], y[s == g]) for g in np.unique(s)}

    def apply(Q, t):
        zq = logit(np.clip(Q[:, 1], 1e-9, 1 - 1e-9))
        e = np.empty(len(Q))
        for g, m in maps.items():
            e[t == g] = expit(m.decision_function(zq[t == g, None]))
        return np.column_stack([1 - e, e])
    return apply


def default_split(base, X, y, s, split, goals):
    """Every configuration of :data:`CONFIGS` fitted for ``goals`` on one 70/30 split: {config: record}."""
    from sklearn.base import clone
    from sklearn.model_selection import StratifiedKFold, train_test_split
    from sklearn.utils import _safe_indexing

    a, b = train_test_split(np.arange(len(y)), test_size=0.3, random_state=split, stratify=y)
    Xa, Xb = _safe_indexing(X, a), _safe_indexing(X, b)
    ya, yb, sa, sb = y[a], y[b], s[a], s[b]
    full = clone(base).fit(Xa, ya)
    P = {"insample": (full.predict_proba(Xa), full.predict_proba(Xb))}
    oof, avg = np.zeros((len(a), 2)), np.zeros((len(b), 2))
    for tr, te in StratifiedKFold(5, shuffle=True, random_state=split).split(Xa, ya):
        m = clone(base).fit(_safe_indexing(Xa, tr), ya[tr])
        oof[te] = m.predict_proba(_safe_indexing(Xa, te))
        avg += m.predict_proba(Xb) / 5
    recal = _recalibrator(P["insample"][0], ya, sa)
    outer = {"insample": P["insample"][0], "oof": oof, "recal": recal(P["insample"][0], sa)}
    deployed = {"full": P["insample"][1], "avg": avg, "recal": recal(P["insample"][1], sb)}
    out = {}
    for cfg, (o, dep, oracle) in CONFIGS.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = gf.GoalClassifier("precomputed", constraints=goals, method_params=PARAMS[oracle])
            m.fit(outer[o], ya, sensitive_features={"g": sa})
            tr = m.evaluate(outer[o], ya, sensitive_features={"g": sa})
            te = m.evaluate(deployed[dep], yb, sensitive_features={"g": sb})
        out[cfg] = {"train_accuracy": tr["accuracy"], "test_accuracy": te["accuracy"],
                    "test_violation": max(c["violation"] for c in te["constraints"]),
                    "train_violation": max(c["violation"] for c in tr["constraints"])}
    return out


#: The datasets where ``--part default`` also runs a user's plain (unscaled, one-hot)
#: ``LogisticRegression(max_iter=1000)`` beside ``make_estimator``'s.
USER_LR_ON = ("credit_default",)


def _ci(d):
    """Mean and 95% t half-width of paired differences ``d``."""
    from scipy.stats import t

    d = np.asarray(d, dtype=float)
    return float(d.mean()), float(t.ppf(0.975, d.size - 1) * d.std(ddof=1) / np.sqrt(d.size)) if d.size > 1 else 0.0


def part_default(n_splits=5):
    """The oracle default over five datasets and two base models, paired over ``n_splits`` re-splits."""
    from sklearn.linear_model import LogisticRegression

    t0 = time.perf_counter()
    per, rows, summary = {}, [], {}
    for name, goal_name, goals, X, Xnum, y, s in default_cases():
        models = [("make_estimator LR", gf.make_estimator("logistic_regression"), X)]
        if name in USER_LR_ON:  # unscaled lbfgs runs to max_iter: about 30x the cost of make_estimator's
            models.append(("LogisticRegression(max_iter=1000)", LogisticRegression(max_iter=1000), Xnum))
        for model, base, XX in models:
            key = f"{name} | {model}"
            recs = []
            for split in range(n_splits):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    recs.append(default_split(base, XX, y, s, split, goals))
                print(f"[{time.perf_counter() - t0:6.0f}s] {key} split {split}: " + "; ".join(
                    f"{c} {r['test_accuracy']:.4f}/{r['test_violation']:.4f}" for c, r in recs[-1].items()), flush=True)
                for cfg, r in recs[-1].items():
                    for k in ("test_accuracy", "test_violation"):
                        rows.append({"experiment": f"oracle default {goal_name}", "dataset": name, "method": f"{model} {cfg}",
                                     "metric": k.split("_", 1)[1], "split": "test", "split_seed": split, "value": r[k],
                                     "lower_is_better": k == "test_violation", "paper_value": None, "spread": None})
            per[key] = recs
            write_results(Path("/tmp") / "oracle_choice_default_partial.json", {"seconds": 0.0, "per_split": per})
            summary[key] = {}
            for cfg in CONFIGS:
                ent = {k: float(np.mean([r[cfg][k] for r in recs])) for k in recs[0][cfg]}
                for k in ("test_accuracy", "test_violation"):
                    m, h = _ci([r[cfg][k] - r["auto"][k] for r in recs])
                    ent[f"{k}_minus_auto"] = {"mean": m, "ci95": h}
                summary[key][cfg] = ent
    print("\n| dataset | base model | auto: test accuracy / violation | " + " | ".join(
        f"{c} - auto: accuracy; violation" for c in CONFIGS if c != "auto") + " |")
    print("|---|---|---|" + "---|" * (len(CONFIGS) - 1))
    for key, d in summary.items():
        name, model = key.split(" | ")
        print(f"| {name} | {model} | {d['auto']['test_accuracy']:.4f} / {d['auto']['test_violation']:.4f} | " + " | ".join(
            f"{d[c]['test_accuracy_minus_auto']['mean']:+.4f} ± {d[c]['test_accuracy_minus_auto']['ci95']:.4f}; "
            f"{d[c]['test_violation_minus_auto']['mean']:+.4f} ± {d[c]['test_violation_minus_auto']['ci95']:.4f}"
            for c in CONFIGS if c != "auto") + " |")
    return {"seconds": time.perf_counter() - t0, "configs": {k: list(v) for k, v in CONFIGS.items()},
            "summary": summary, "per_split": per, "rows": rows}


def main():
    t0 = time.perf_counter()
    per, rows = {}, []
    for case in [*real_cases(), *synthetic_cases()]:
        name, split, goal, Pa, ya, sa, Pb, yb, sb = case
        for oracle in ORACLES:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t = time.perf_counter()
                m = gf.GoalClassifier("precomputed", constraints=[goal], method_params=PARAMS[oracle])
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


def run_default():
    """``--part default``: writes its record under the key ``"default"`` of the script's results file."""
    import json

    path = HERE / "results" / "oracle_choice.json"
    record = json.loads(path.read_text()) if path.exists() else {"benchmark": "oracle_choice", "seconds": 0.0}
    record["default"] = part_default()
    record["default"]["created"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    record["default"]["machine"], record["default"]["versions"] = machine_record(), versions()
    write_results(path, record)


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--part", choices=["oracles", "default"], default="oracles",
                    help="oracles: the two oracles on fixed probabilities (the first table); default: the "
                         "oracle default over five datasets, two base models and the fit's options")
    ap.add_argument("--splits", type=int, default=5)
    args = ap.parse_args()
    if args.part == "default":
        run_default() if args.splits == 5 else print(part_default(args.splits)["summary"])
    else:
        main()
