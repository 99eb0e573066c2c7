"""Ye & Xie Tables 5 and 6: GSVMF, GLRF, kernel GSVMF under OMR, and GSVMF vs SSVM under DP.

Data (as in the paper's §7): credit default (DP, Taiwan, 30,000 rows; g = sex), COMPAS (CP, the
5,278 African-American / Caucasian defendants of ProPublica's filter, Zafar et al.'s features
age_cat, race, sex, priors_count, c_charge_degree, label two_year_recid; g = race), abalone (AB,
2,835 adults, label rings > 10, g = sex; 'age above 10' read as rings > 10, which gives 46% positives
- rings + 1.5 > 10 would give 83%), student performance Portuguese (PG, 649)
and math (MG, 395), label G3 > median, g = sex. One-hot encoding, standardisation on the
training part.

Protocol (differs from the paper, on purpose): per split, 30% test, and the remaining 70%
divided 80/20 into training and validation; every configuration is trained on the training
part and **selected on validation** by the paper's criterion, the largest Acc / F (F floored
at 0.5% so a zero gap does not make the ratio infinite), among configurations whose validation
accuracy is within 3 points of the best plain SVM's (so a constant classifier, whose DP gap is
0, is not selected; if none is, the most accurate configuration). The paper selects on test results (leaky) with grids of 8 x 9 x 11; we use
reduced grids (below), fewer splits, and a random subsample of credit default (noted in the
JSON). Methods: SVM (GSVMF with rho = 0 and t = inf: the hinge SVM), GSVMF / GLRF / GKSVMF (IRS,
Alg. 2 / 2 / 4, rho paths with warm starts), and SSVM (Olfat & Aswani, cvxpy + Clarabel).
Reported: test accuracy, test gap (OMR = error-rate difference, or DP difference, from
predicted labels), fit time of the selected configuration.

Usage: GOALFIT_DATA=../shared/data python benchmarks/yexie_tables56.py [--quick]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import half_width  # noqa: E402
from _yexie import Rows, binary_groups, design_matrix, gap, pick, write  # noqa: E402

from goalfit.datasets import load_abalone, load_compas, load_credit_default  # noqa: E402
from goalfit.datasets._base import fetch_file  # noqa: E402

# paper values: (acc %, F %, seconds)
PAPER5 = {
    "DP": {"GSVMF": (80.5, 1.8, 37.8), "GKSVMF": (79.6, 0.1, 30.3), "GLRF": (81.5, 1.7, 33.1)},
    "CP": {"GSVMF": (66.0, 0.02, 2.5), "GKSVMF": (64.0, 0.03, 1.9), "GLRF": (66.4, 0.06, 2.5)},
    "AB": {"GSVMF": (71.8, 0.2, 2.2), "GKSVMF": (68.6, 0.3, 1.2), "GLRF": (70.4, 2.2, 1.6)},
    "PG": {"GSVMF": (93.3, 0.1, 0.7), "GKSVMF": (93.3, 0.1, 0.2), "GLRF": (94.9, 0.2, 2.6)},
    "MG": {"GSVMF": (93.3, 0.1, 0.4), "GKSVMF": (92.4, 1.8, 0.1), "GLRF": (91.6, 0.1, 0.8)},
}
PAPER6 = {
    "DP": {"SSVM": (71.7, 2.8, 48.5), "GSVMF": (82.5, 0.6, 39.4)},
    "CP": {"SSVM": (58.0, 9.8, 20.7), "GSVMF": (64.9, 0.8, 2.9)},
    "AB": {"SSVM": (73.4, 3.4, 21.8), "GSVMF": (71.8, 0.08, 2.4)},
    "PG": {"SSVM": (96.7, 15.9, 14.8), "GSVMF": (94.9, 3.6, 0.8)},
    "MG": {"SSVM": (96.1, 9.0, 17.6), "GSVMF": (94.1, 4.3, 0.5)},
}
NAMES = {"DP": "credit_default", "CP": "compas", "AB": "abalone", "PG": "student_performance_por",
         "MG": "student_performance_mat"}


def load(code, credit_rows, rng):
    if code == "DP":
        ds = load_credit_default()
        X, y, g = ds.data, ds.target.to_numpy(), binary_groups(ds.sensitive_features["SEX"], "Male")
        if credit_rows and credit_rows < len(y):
            keep = np.sort(np.random.default_rng(12345).choice(len(y), credit_rows, replace=False))
            X, y, g = X.iloc[keep], y[keep], g[keep]
        X = design_matrix(X.astype({c: "category" for c in ("SEX", "EDUCATION", "MARRIAGE")}))
    elif code == "CP":
        ds = load_compas()
        keep = ds.data["race"].isin(["African-American", "Caucasian"]).to_numpy()
        cols = ["age_cat", "race", "sex", "priors_count", "c_charge_degree"]
        X = design_matrix(ds.data.loc[keep, cols].astype({"race": str}))
        y, g = ds.target.to_numpy()[keep], binary_groups(ds.data["race"].to_numpy()[keep], "African-American")
    elif code == "AB":
        ds = load_abalone(relabel=None)
        keep = (ds.data["Sex"] != 0).to_numpy()  # drop infants: 1,528 M + 1,307 F
        X = ds.data.loc[keep].assign(Sex=lambda d: (d["Sex"] == 2).astype(float)).to_numpy(float)
        y = (ds.target.to_numpy()[keep] > 10).astype(int)
        g = np.where(ds.data["Sex"].to_numpy()[keep] == 2, 1, -1)
    else:
        df = pd.read_csv(fetch_file("student_performance", f"student-{'por' if code == 'PG' else 'mat'}.csv"), sep=";")
        g3 = df.pop("G3")
        y = (g3 > g3.median()).astype(int).to_numpy()
        g = binary_groups(df["sex"], "M")
        X = design_matrix(df)
    return np.asarray(X, float), np.where(y == 1, 1, -1), g


def split(n, seed):
    rng = np.random.default_rng(seed)
    perm = rng.permutation(n)
    n_test = int(round(0.3 * n))
    rest = perm[n_test:]
    n_val = int(round(0.2 * len(rest)))
    return rest[n_val:], rest[:n_val], perm[:n_test]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="1 split, no credit default, smaller grids")
    ap.add_argument("--splits", type=int, default=None)
    ap.add_argument("--credit-rows", type=int, default=3000, help="subsample of credit default (0 = all 30,000)")
    ap.add_argument("--out", default=None, help="results file (default benchmarks/results/yexie_tables56.json)")
    args = ap.parse_args(argv)
    started = time.time()
    splits = args.splits or (1 if args.quick else 2)
    codes = ["CP", "AB", "PG", "MG"] if args.quick else ["DP", "CP", "AB", "PG", "MG"]
    grid = {"t": [0.5, 1.0, 2.0], "t_log": [np.log(0.3), np.log(0.5), np.log(0.7)], "rho": [0.0, 0.2, 1.0, 5.0],
            "ssvm_d": [0.01, 0.1], "ssvm_mu": [0.01, 1.0], "max_iter": 10, "ssvm_iter": 15}
    if args.quick:
        grid.update(t=[0.5, 1.0], t_log=[np.log(0.5)], rho=[0.0, 1.0, 5.0], ssvm_d=[0.1], ssvm_mu=[0.01, 1.0])
    rows = Rows()
    results = {}
    for code in codes:
        X, y, g = load(code, args.credit_rows, None)
        N = len(y)
        print(f"\n== {code} ({NAMES[code]}): N = {N}, d = {X.shape[1]}, groups {np.sum(g == 1)}/{np.sum(g == -1)}")
        for seed in range(splits):
            tr, va, te = split(N, seed)
            mu, sd = X[tr].mean(0), X[tr].std(0)
            sd[sd == 0] = 1.0
            Z = (X - mu) / sd
            Ntr = len(tr)
            grid["lam"] = [1.0 / Ntr]
            data = ((Z[tr], y[tr], g[tr]), (Z[va], y[va], g[va]))
            svm = pick("SVM", data, "omr", grid, None)
            for table, measure, methods in (("Table 5", "omr", ["SVM", "GSVMF", "GLRF", "GKSVMF"]),
                                            ("Table 6", "dp", ["SVM", "SSVM", "GSVMF"])):
                for method in methods:
                    t0 = time.perf_counter()
                    b = svm if method == "SVM" else pick(method, data, measure, grid, svm[4])
                    pt = b[2](Z[te])
                    acc, F = float(np.mean(pt == y[te])), gap(measure, y[te], pt, g[te])
                    key = (table, code, method)
                    results.setdefault(key, []).append((acc, F, b[3], b[1], time.perf_counter() - t0))
                    print(f"  split {seed} {table} {method:7s} acc {100 * acc:5.1f} F {100 * F:5.2f} "
                          f"fit {b[3]:6.2f}s  {b[1]}")
    print(f"\n{'table':8s} {'data':4s} {'method':7s} {'acc%':>6s} {'F%':>6s} {'fit s':>6s} | paper acc  F%  s")
    for (table, code, method), vals in results.items():
        acc, F, secs = (np.array([v[i] for v in vals]) for i in range(3))
        paper = (PAPER5 if table == "Table 5" else PAPER6).get(code, {}).get(method)
        print(f"{table:8s} {code:4s} {method:7s} {100 * acc.mean():6.1f} {100 * F.mean():6.2f} {secs.mean():6.2f} | "
              + (f"{paper[0]:5.1f} {paper[1]:5.2f} {paper[2]:5.1f}" if paper else "   -"))
        measure = "error_rate_difference" if table == "Table 5" else "demographic_parity_difference"
        kw = dict(seconds=float(secs.mean()), n_splits=len(vals), selected=[v[3] for v in vals])
        rows.add(table, NAMES[code], method, "accuracy", acc.mean(), spread=half_width(acc),
                 paper=paper and paper[0] / 100, lower=False, **kw)
        rows.add(table, NAMES[code], method, measure, F.mean(), spread=half_width(F), paper=paper and paper[1] / 100,
                 **kw)
        rows.add(table, NAMES[code], method, "fit_seconds", secs.mean(), spread=half_width(secs),
                 paper=paper and paper[2], **kw)
    notes = (f"{splits} random 70/30 splits (seeds 0..{splits - 1}), validation = 20% of the 70%; selection on "
             "validation by max Acc/max(F, 0.005) among configs within 3 accuracy points of the best SVM (else the most "
             "accurate); grids "
             f"t={grid['t']}, log-t={[round(v, 3) for v in grid['t_log']]}, rho={grid['rho']}, lam = 1/N_train, kernels rbf/poly (SVC defaults), SSVM d in "
             f"{grid['ssvm_d']}, mu in {grid['ssvm_mu']}, lam = 1/N, {grid['ssvm_iter']} DC iterations max; IRS "
             f"max_iter {grid['max_iter']}, no restarts. Credit default: random subsample of {args.credit_rows} rows "
             "(0 = all). Abalone label: rings > 10. Fit seconds: one IRS configuration (rho-path time / number of rho), 2 shared CPU cores. "
             "The paper: 8x9x11 grids, selection on test, Gurobi-free IRS with gradient descent, a 2.3 GHz i9."
             + (" QUICK run." if args.quick else ""))
    p = write("yexie_tables56", rows, seeds=list(range(splits)), notes=notes, started=started,
              extra_versions=("cvxpy",), out=args.out)
    print(f"wrote {p}")


if __name__ == "__main__":
    main()
