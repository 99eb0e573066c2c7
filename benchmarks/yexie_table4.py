"""Ye & Xie Table 4: IRS against the exact GSVMF mixed-integer program on 55 Wine Quality points.

GSVMF (Eq. 12, OMR penalty), lambda = 1, t = 1, the paper's 12 rho values. IRS (Alg. 2) with
the exact z-step, warm starts along the rho path and random restarts, against SCIP on the MIQP
of Prop. 5 with the closed-form big-M of Prop. 3 (the paper used Gurobi 9.0). Which 55 points
the paper used is not stated: we draw 55 rows of FairML's Wine_Quality_Data.csv (12 raw
features, y = quality >= 6, g = +1 for white wine) with a fixed seed.

Open-source SCIP does not close the N = 55 problem within minutes (the notes measured the same),
so the script reports, per rho: the SCIP incumbent, its dual bound and gap at the time limit,
the IRS objective and time, IRS's gap to the best exact incumbent (the paper's Gap column) and
IRS's certified gap to SCIP's dual bound; and repeats the comparison on a 20-point subset where
SCIP proves optimality, which is where the target "IRS within 2.5% of the exact optimum" can be
checked.

IRS seconds are wall-clock around everything IRS runs for a rho (the fits on all data, the
random-restart fits, the warm-started run and every iteration), not the sum of the iteration
times. The main exact column is SCIP from a cold start, as the paper's Gurobi runs were; an
extra column (N = 55 only; skip with --no-warm) gives SCIP the IRS solution as its starting
incumbent, with the same time limit, and records whether SCIP accepted it.

Usage: GOALFIT_DATA=../shared/data python benchmarks/yexie_table4.py [--quick]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _yexie import Rows, binary_groups, write  # noqa: E402

from goalfit.datasets import load_wine_quality  # noqa: E402
from goalfit.methods.subdata.irs import irs_path  # noqa: E402
from goalfit.methods.subdata.mip import solve_gsvmf  # noqa: E402
from goalfit.methods.subdata.wstep import LinearSVMStep  # noqa: E402

RHOS = [0.01, 0.03, 0.05, 0.1, 0.2, 0.5, 0.8, 1.0, 2.0, 3.0, 5.0, 10.0]
PAPER = {  # rho: (Gurobi opt.val, Gurobi s, IRS obj.val, gap %, IRS s)
    0.01: (-0.6852, 14, -0.6827, 0.4, 0.03), 0.03: (-0.6829, 14, -0.6804, 0.4, 0.03),
    0.05: (-0.6805, 13, -0.6781, 0.4, 0.02), 0.1: (-0.6747, 14, -0.6722, 0.4, 0.02),
    0.2: (-0.6631, 12, -0.6606, 0.4, 0.02), 0.5: (-0.6387, 9, -0.6257, 2.0, 0.02),
    0.8: (-0.6328, 16, -0.6275, 0.8, 0.03), 1.0: (-0.6309, 14, -0.6150, 2.5, 0.02),
    2.0: (-0.6211, 29, -0.6089, 2.0, 0.03), 3.0: (-0.6140, 42, -0.6075, 1.1, 0.03),
    5.0: (-0.6112, 45, -0.6047, 1.1, 0.03), 10.0: (-0.6042, 84, -0.5977, 1.1, 0.04),
}
LAM, T, SEED = 1.0, 1.0, 0


def run(rows, exp, X, y, g, rhos, time_limit, restarts, paper, warm=False):
    t0 = time.perf_counter()
    path = irs_path(LinearSVMStep(lam=LAM), X, y, g, rhos, t=T, n_restarts=restarts, random_state=SEED)
    irs_total = time.perf_counter() - t0
    print(f"\n{exp}: N = {len(y)}, IRS path total {irs_total:.2f} s (wall-clock)")
    print(f"{'rho':>6} {'SCIP obj':>9} {'bound':>9} {'gap%':>6} {'status':>9} {'s':>5} | {'IRS obj':>9} {'s':>5} "
          f"{'IRS-gap%':>8} {'cert%':>6} |" + (f" {'warm obj':>9} {'bound':>9} {'start':>8} |" if warm else "")
          + f" paper: {'opt':>7} {'IRS':>7} {'gap%':>5}")
    within = []
    for rho, res in zip(rhos, path):
        irs_s = res.seconds  # wall-clock: initial + restart fits, warm run, iterations
        m = solve_gsvmf(X, y, g, lam=LAM, t=T, rho=rho, time_limit=time_limit)
        mw = (solve_gsvmf(X, y, g, lam=LAM, t=T, rho=rho, time_limit=time_limit,
                          warm_start=(res.model.w, res.model.b, res.z)) if warm else None)
        best = min(m.objective, res.objective)
        gap_irs = (res.objective - best) / abs(best) * 100
        cert = (res.objective - m.bound) / abs(res.objective) * 100
        if m.optimal:
            within.append(gap_irs <= 2.5)
        p = paper.get(rho) if paper else None
        print(f"{rho:6g} {m.objective:9.4f} {m.bound:9.4f} {100 * m.gap:6.1f} {m.status:>9} {m.seconds:5.1f} | "
              f"{res.objective:9.4f} {irs_s:5.2f} {gap_irs:8.2f} {cert:6.1f} |"
              + (f" {mw.objective:9.4f} {mw.bound:9.4f} {mw.start[:8]:>8} |" if warm else "")
              + (f" {p[0]:7.4f} {p[2]:7.4f} {p[3]:5.1f}" if p else "   -"))
        ds, kw = "wine_quality", dict(split="train", rho=rho, n=len(y))
        rows.add(exp, ds, "SCIP (GSVMF MIQP)", "objective", m.objective, paper=p and p[0], seconds=m.seconds,
                 status=m.status, **kw)
        rows.add(exp, ds, "SCIP (GSVMF MIQP)", "dual_bound", m.bound, lower=False, seconds=m.seconds, **kw)
        rows.add(exp, ds, "SCIP (GSVMF MIQP)", "mip_gap", m.gap, seconds=m.seconds, **kw)
        rows.add(exp, ds, "SCIP (GSVMF MIQP)", "seconds", m.seconds, paper=p and p[1], seconds=m.seconds, **kw)
        if mw is not None:
            name = "SCIP warm-started from IRS"
            rows.add(exp, ds, name, "objective", mw.objective, seconds=mw.seconds, status=mw.status, start=mw.start,
                     **kw)
            rows.add(exp, ds, name, "dual_bound", mw.bound, lower=False, seconds=mw.seconds, **kw)
            rows.add(exp, ds, name, "mip_gap", mw.gap, seconds=mw.seconds, **kw)
            rows.add(exp, ds, name, "improvement_over_irs", (res.objective - mw.objective) / abs(res.objective),
                     lower=False, seconds=mw.seconds, **kw)
            rows.add(exp, ds, "IRS", "certified_gap_to_warm_dual_bound", (res.objective - mw.bound) / abs(res.objective),
                     seconds=irs_s, **kw)
        rows.add(exp, ds, "IRS", "objective", res.objective, paper=p and p[2], seconds=irs_s, **kw)
        rows.add(exp, ds, "IRS", "gap_to_best_exact_incumbent", gap_irs / 100, paper=p and p[3] / 100,
                 seconds=irs_s, **kw)
        rows.add(exp, ds, "IRS", "certified_gap_to_dual_bound", cert / 100, seconds=irs_s, **kw)
        rows.add(exp, ds, "IRS", "seconds", irs_s, paper=p and p[4], seconds=irs_s, **kw)
        rows.add(exp, ds, "IRS", "seconds_iterations_only", sum(h["seconds"] for h in res.history), seconds=irs_s,
                 **kw)
    return within, irs_total


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="4 rho values, 10 s SCIP limit")
    ap.add_argument("--time-limit", type=float, default=None, help="SCIP seconds per rho (default 40, quick 10)")
    ap.add_argument("--no-warm", action="store_true", help="skip SCIP warm-started from the IRS solution")
    ap.add_argument("--out", default=None, help="results file (default benchmarks/results/yexie_table4.json)")
    args = ap.parse_args(argv)
    started = time.time()
    rhos = [0.01, 0.5, 1.0, 10.0] if args.quick else RHOS
    tl = args.time_limit or (10.0 if args.quick else 40.0)
    restarts = 10
    ds = load_wine_quality(variant="fairml")
    rng = np.random.default_rng(SEED)
    idx = rng.choice(len(ds.target), 55, replace=False)
    X = ds.data.to_numpy(float)[idx]
    y = np.where(ds.target.to_numpy()[idx] == 1, 1, -1)
    g = binary_groups(ds.sensitive_features["color"].to_numpy()[idx], "white")
    rows = Rows()
    _, total55 = run(rows, "Table 4", X, y, g, rhos, tl, restarts, PAPER, warm=not args.no_warm)
    sub = np.r_[np.flatnonzero(g == 1)[:12], np.flatnonzero(g == -1)[:8]]
    within, total20 = run(rows, "Table 4 (20-point subset, exact optimum)", X[sub], y[sub], g[sub], rhos, 60.0,
                          restarts, None)
    print(f"\n20-point subset: IRS within 2.5% of the proven optimum for {sum(within)} of {len(within)} "
          "rho values where SCIP closed")
    notes = (f"55 rows of FairML Wine_Quality_Data.csv drawn with numpy seed {SEED} (the paper's 55 are not "
             f"stated); 12 raw features incl. 'white'; lambda = {LAM}, t = {T}; IRS = rho path with warm starts "
             f"+ {restarts} random restarts, tol 1e-8; IRS seconds = wall-clock of everything run for the rho "
             f"(cold run with {restarts} restarts + warm-started run, including every fit on all data); exact = SCIP "
             f"{tl:g} s per rho from a cold start (big-M of Prop. 3, 1 thread) instead of Gurobi 9.0 (the paper's "
             "9-84 s, also cold)" + ("" if args.no_warm else "; extra column: SCIP with the IRS solution as its "
             "starting incumbent, same limit (N = 55 only)") + "; the 20-point subset (first 12 white, 8 red of "
             "the 55) uses a 60 s limit." + (" QUICK run: 4 rho values." if args.quick else ""))
    p = write("yexie_table4", rows, seeds=[SEED], notes=notes, started=started, extra_versions=("pyscipopt", "cvxpy"),
              details={"rhos": rhos, "time_limit": tl, "restarts": restarts, "subset_within_2.5pct": within,
                       "irs_path_seconds": {"n55": total55, "n20": total20}}, out=args.out)
    print(f"wrote {p}")


if __name__ == "__main__":
    main()
