"""Ye & Xie Experiment 3 (synthetic, Figure 4) and one OMR goal on Adult across methods.

Part 1 - Experiment 3: 200 points in four Gaussian blocks of 50 (covariance diag(4, 9); means
(3, 4), (2, 6) with y = +1 and (7, 5), (8, 3) with y = -1; g = +1 for blocks 1 and 3). The
paper reports, apparently in-sample: SVM (lambda = 0.5) 90% accuracy with a 14% OMR gap, GSVMF
(t, lambda, rho) = (0.3, 0, 0.2) 88% with 0%. We draw the data with seeds 0..S-1 (the paper's
seed is unknown), tune SVM's lambda for accuracy and GSVMF's (t, lambda, rho) over the paper's
grids (reduced in --quick) by the paper's in-sample max Acc/F rule, and also report the paper's
exact GSVMF parameters. The OMR gap is measured on predicted labels, and for GSVMF also on the
selection z (F(z), Eq. 11a: the gap of the indicator "counts as correct at threshold t", which
the method makes exact; at t = 0.3 it is not the correctness of the predictions). The paper's
"88% with 0%" is most likely F(z): a third GSVMF row selects the grid by max Acc/F(z).

Part 2 - Adult, the same goal for every method: error-rate (OMR) parity between the sexes,
``error_rate_difference <= 0.02`` on training data. GSVMF (IRS, constraint form epsilon = 0.02
on z, t = 1, lambda = 1/N) and GSVMF (penalty, rho selected on validation), goalfit's plug-in
method (``GoalClassifier`` with ``error_rate_difference() <= 0.02`` on a logistic model), and
fairlearn's ExponentiatedGradient with ``ErrorRateParity(difference_bound=0.02)``. Training
rows: a random subsample of adult.data (all features one-hot, standardised); test: all of
adult.test. Reported: test accuracy, test OMR gap, fit seconds, and for the constraint form
F(z) of the training selection. Full runs add GSVMF with t = 0.5 and 2 and with epsilon = 0
on z: whether any setting of the paper's method brings the *prediction* gap to the goal.

Usage: GOALFIT_DATA=../shared/data python benchmarks/yexie_synthetic_adult.py [--quick]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import half_width  # noqa: E402
from _yexie import Rows, binary_groups, design_matrix, gap, pick, write  # noqa: E402

from goalfit import GoalClassifier, error_rate_difference  # noqa: E402
from goalfit.datasets import load_adult  # noqa: E402
from goalfit.methods.subdata.irs import irs, irs_path  # noqa: E402
from goalfit.methods.subdata.wstep import LinearSVMStep  # noqa: E402


def synthetic(seed):
    """Experiment 3's generator (Ye & Xie §7, Figure 4)."""
    rng = np.random.default_rng(seed)
    X, y, g = [], [], []
    for mx, my, yy, gg in [(3, 4, 1, 1), (2, 6, 1, -1), (7, 5, -1, 1), (8, 3, -1, -1)]:
        X.append(rng.multivariate_normal([mx, my], np.diag([4.0, 9.0]), 50))
        y += [yy] * 50
        g += [gg] * 50
    return np.vstack(X), np.array(y), np.array(g)


def _predict(learner, model, X):
    return np.where(learner.decision_function(model, X) > 0, 1, -1)


def experiment3(rows, seeds, quick):
    N = 200
    ts = [0.3, 0.5, 1.0, 2.0] if quick else [0.1, 0.3, 0.5, 0.7, 0.9, 1.0, 1.5, 2.0]
    lams = [0.0, 1 / (2 * N), 1 / N] if quick else [0, 1 / (100 * N), 1 / (2 * N), 1 / N, 10 / N]
    rhos = [0.2, 1.0, 5.0, 20.0] if quick else [0.01, 0.1, 0.2, 0.5, 0.8, 1.0, 2.0, 3.0, 5.0, 10.0, 20.0]
    out = {"SVM": [], "GSVMF (grid, max Acc/F)": [], "GSVMF (grid, max Acc/F(z))": [], "GSVMF (0.3, 0, 0.2)": []}
    for seed in seeds:
        X, y, g = synthetic(seed)
        best = None
        t0 = time.perf_counter()
        for lam in [0.5, 1 / N, 10 / N, 100 / N]:  # includes the paper's tuned lambda = 0.5
            L = LinearSVMStep(lam=lam)
            p = _predict(L, L.fit(X, y, np.ones(N)), X)
            acc = np.mean(p == y)
            if best is None or acc > best[0]:
                best = (acc, gap("omr", y, p, g))
        out["SVM"].append((*best, np.nan, time.perf_counter() - t0))
        t0 = time.perf_counter()
        best, best_z = None, None
        for t in ts:
            for lam in lams:
                L = LinearSVMStep(lam=lam)
                for res in irs_path(L, X, y, g, rhos, t=t, max_iter=30):
                    p = _predict(L, res.model, X)
                    acc, F = np.mean(p == y), gap("omr", y, p, g)
                    if acc < 0.8:
                        continue
                    cand = (acc / max(F, 0.005), acc, F, res.fairness)
                    if best is None or cand[0] > best[0]:
                        best = cand
                    cand_z = (acc / max(res.fairness, 0.005), acc, F, res.fairness)
                    if best_z is None or cand_z[0] > best_z[0]:
                        best_z = cand_z
        secs = time.perf_counter() - t0
        out["GSVMF (grid, max Acc/F)"].append((best[1], best[2], best[3], secs))
        out["GSVMF (grid, max Acc/F(z))"].append((best_z[1], best_z[2], best_z[3], secs))
        L = LinearSVMStep(lam=0.0)
        t0 = time.perf_counter()
        res = irs(L, X, y, g, rho=0.2, t=0.3)
        p = _predict(L, res.model, X)
        out["GSVMF (0.3, 0, 0.2)"].append((np.mean(p == y), gap("omr", y, p, g), res.fairness,
                                           time.perf_counter() - t0))
    paper = {"SVM": (0.90, 0.14), "GSVMF (grid, max Acc/F)": (0.88, 0.0), "GSVMF (grid, max Acc/F(z))": (0.88, 0.0),
             "GSVMF (0.3, 0, 0.2)": (0.88, 0.0)}
    print(f"\nExperiment 3 (synthetic, {len(seeds)} seeds, in-sample; gaps: OMR on predictions | F(z) on the "
          "selection):")
    for method, vals in out.items():
        acc, F, Fz, secs = (np.array([v[i] for v in vals], float) for i in range(4))
        zcol = "" if np.isnan(Fz).all() else f"   F(z) {100 * Fz.mean():5.1f} ± {100 * (half_width(Fz) or 0):4.1f}"
        print(f"  {method:26s} acc {100 * acc.mean():5.1f} ± {100 * (half_width(acc) or 0):4.1f}   OMR gap "
              f"{100 * F.mean():5.1f} ± {100 * (half_width(F) or 0):4.1f}{zcol:24s}   | paper "
              f"{100 * paper[method][0]:.0f} / {100 * paper[method][1]:.0f}")
        kw = dict(split="train", seconds=float(secs.mean()))
        rows.add("Experiment 3", "synthetic_4_blocks", method, "accuracy", acc.mean(), spread=half_width(acc),
                 paper=paper[method][0], lower=False, **kw)
        # the paper's 0% is most likely F(z) (module docstring); it is given on both rows
        rows.add("Experiment 3", "synthetic_4_blocks", method, "error_rate_difference", F.mean(),
                 spread=half_width(F), paper=paper[method][1], **kw)
        if not np.isnan(Fz).all():
            rows.add("Experiment 3", "synthetic_4_blocks", method, "selection_omr_gap_z", Fz.mean(),
                     spread=half_width(Fz), paper=paper[method][1], **kw)


def adult(rows, n_train, eps, quick):
    ds = load_adult(subset="all")
    part = np.asarray(ds.subset)
    X_all = design_matrix(ds.data)
    y_all = np.where(ds.target.to_numpy() == 1, 1, -1)
    g_all = binary_groups(ds.sensitive_features["sex"], "Male")
    tr_all, te = np.flatnonzero(part == "train"), np.flatnonzero(part == "test")
    rng = np.random.default_rng(0)
    tr = np.sort(rng.choice(tr_all, n_train, replace=False))
    mu, sd = X_all[tr].mean(0), X_all[tr].std(0)
    sd[sd == 0] = 1
    X = (X_all - mu) / sd
    Xtr, ytr, gtr, Xte, yte, gte = X[tr], y_all[tr], g_all[tr], X[te], y_all[te], g_all[te]
    sex_tr, sex_te = np.where(gtr == 1, "Male", "Female"), np.where(gte == 1, "Male", "Female")
    N = len(tr)
    results = {}

    def record(method, pred_te, pred_tr, secs, note="", zgap=None):
        results[method] = (np.mean(pred_te == yte), gap("omr", yte, pred_te, gte), np.mean(pred_tr == ytr),
                           gap("omr", ytr, pred_tr, gtr), secs, note, zgap)

    from sklearn.linear_model import LogisticRegression

    t0 = time.perf_counter()
    lr = LogisticRegression(max_iter=2000).fit(Xtr, ytr)
    record("LogisticRegression (unconstrained)", lr.predict(Xte), lr.predict(Xtr), time.perf_counter() - t0)

    # the constraint on z; full runs also vary t and tighten epsilon to 0 (is there a setting of the
    # paper's method whose *prediction* gap meets the goal? F(z) = 0 is met by selecting every point)
    L = LinearSVMStep(lam=1.0 / N)
    for t, e in [(1.0, eps)] + ([] if quick else [(0.5, eps), (2.0, eps), (1.0, 0.0)]):
        t0 = time.perf_counter()
        res = irs(L, Xtr, ytr, gtr, epsilon=e, rho=0.0, t=t, max_iter=20)
        record(f"GSVMF IRS (epsilon={e:g} on z, t={t:g})", _predict(L, res.model, Xte), _predict(L, res.model, Xtr),
               time.perf_counter() - t0, f"{res.n_iter} IRS iterations, {int(res.z.sum())} of {N} selected",
               zgap=res.fairness)

    # penalty form, rho and t selected on a validation fifth of the training rows
    perm = rng.permutation(N)
    va, fit = perm[: N // 5], perm[N // 5:]
    grid = {"lam": [1.0 / len(fit)], "t": [0.5, 1.0], "rho": [0.5, 2.0, 10.0], "max_iter": 10}
    t0 = time.perf_counter()
    svm = pick("SVM", ((Xtr[fit], ytr[fit], gtr[fit]), (Xtr[va], ytr[va], gtr[va])), "omr", grid, None)
    b = pick("GSVMF", ((Xtr[fit], ytr[fit], gtr[fit]), (Xtr[va], ytr[va], gtr[va])), "omr", grid, svm[4])
    record("GSVMF IRS (penalty, validated)", b[2](Xte), b[2](Xtr), b[3], f"selected {b[1]}; search "
           f"{time.perf_counter() - t0:.1f} s")

    t0 = time.perf_counter()
    gc = GoalClassifier(LogisticRegression(max_iter=2000), constraints=[error_rate_difference() <= eps],
                        random_state=0).fit(Xtr, ytr, sensitive_features=sex_tr)
    secs = time.perf_counter() - t0
    record("goalfit plug-in (GoalClassifier, LR)", gc.predict(Xte, sensitive_features=sex_te),
           gc.predict(Xtr, sensitive_features=sex_tr), secs, f"method {gc.method_}, randomized predictions seed 0")
    try:
        from fairlearn.reductions import ErrorRateParity, ExponentiatedGradient

        t0 = time.perf_counter()
        eg = ExponentiatedGradient(LogisticRegression(max_iter=2000), ErrorRateParity(difference_bound=eps))
        eg.fit(Xtr, (ytr == 1).astype(int), sensitive_features=sex_tr)  # fairlearn wants 0/1 labels
        secs = time.perf_counter() - t0
        record("fairlearn ExponentiatedGradient (LR)", 2 * eg.predict(Xte, random_state=0) - 1,
               2 * eg.predict(Xtr, random_state=0) - 1, secs, "randomized predictions, random_state 0")
    except ImportError:
        print("fairlearn not installed: skipped")
    print(f"\nAdult, OMR (error-rate difference by sex) <= {eps}, {N} training rows, {len(te)} test rows:")
    for method, (acc, F, acc_tr, F_tr, secs, note, zgap) in results.items():
        zcol = "" if zgap is None else f" z-gap {100 * zgap:5.2f}"
        print(f"  {method:40s} test acc {100 * acc:5.2f}  OMR gap {100 * F:5.2f} | train {100 * acc_tr:5.2f} / "
              f"{100 * F_tr:5.2f}{zcol} | {secs:6.2f} s  {note}")
        for split, a, f in (("test", acc, F), ("train", acc_tr, F_tr)):
            rows.add(f"Adult OMR<={eps}", "adult", method, "accuracy", a, split=split, lower=False, seconds=secs,
                     note=note)
            rows.add(f"Adult OMR<={eps}", "adult", method, "error_rate_difference", f, split=split, seconds=secs,
                     note=note)
        if zgap is not None:
            rows.add(f"Adult OMR<={eps}", "adult", method, "selection_omr_gap_z", zgap, split="train", seconds=secs,
                     note=note)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="3 seeds and reduced grids; 3,000 Adult rows (full: 5 seeds)")
    ap.add_argument("--out", default=None, help="results file (default benchmarks/results/yexie_synthetic_adult.json)")
    args = ap.parse_args(argv)
    started = time.time()
    seeds = list(range(3 if args.quick else 5))
    n_train = 3000 if args.quick else 5000
    rows = Rows()
    experiment3(rows, seeds, args.quick)
    adult(rows, n_train, 0.02, args.quick)
    notes = (f"Experiment 3: seeds {seeds}, in-sample as (apparently) in the paper; GSVMF grid "
             + ("reduced (t 4, lambda 3, rho 4 values)" if args.quick else "t and rho as the paper's (8 x 11), lambda "
               "in {0, 1/(100N), 1/(2N), 1/N, 10/N} (5 of the paper's 9)")
             + " searched with rho-path warm starts, selection by max Acc/max(F, 0.005) among configs with accuracy "
             f">= 0.8. Adult: {n_train} random rows of adult.data (seed 0), full adult.test; one-hot + standardised; "
             "OMR target 0.02 on training data for every method; GSVMF constraint rows also record F(z) of the "
             "training selection (selection_omr_gap_z)" + ("" if args.quick else ", and vary t (0.5, 1, 2) and "
             "epsilon on z (0.02, 0)") + ". Experiment 3 rows 'selection_omr_gap_z' are F(z) (Eq. 11a) of the "
             "final selection; the paper's 0% is given as paper_value on both gap rows.")
    p = write("yexie_synthetic_adult", rows, seeds=seeds, notes=notes, started=started,
              extra_versions=("cvxpy", "fairlearn"), out=args.out)
    print(f"wrote {p}")


if __name__ == "__main__":
    main()
