"""RampClassifier's inner solver: the cache-friendly epoch order against a fully random one.

The dual coordinate descent of :mod:`goalfit.methods.ramp.dcd` visits the rows, stored in a
random order, by random blocks of about ``BLOCK_BYTES`` of consecutive rows (each block in a
random order, the next one read ahead), and in one fully random order once the active rows fit
in ``CACHE_BYTES``. Setting ``CACHE_BYTES`` above the data's size gives LIBLINEAR's fully random
order (Hsieh et al. 2008, §3.1) in the same kernel, so both orders are timed in one process,
interleaved, on the ``benchmarks/speed.py`` data:

* ``solve``: one cold weighted-hinge solve to a duality gap of 1e-3 (labels' hinges weighted
  1/n, 10% of the rows in the ramp's linear zone with both hinges at 1/(2n), lam = 1/n);
* ``fit``: the ``speed.py`` RampClassifier case (error s.t. ``ppr(Male) <= 2 ppr(Female)``).

Each is repeated ``--repeats`` times per order; the table gives the minimum seconds (the least
disturbed run on a shared machine), the coordinate visits per row and gap checks (deterministic
for a seed), and, for fits, the training objective over ``--seeds`` seeds. One LinearSVC fit is
timed with every repeat as in ``speed.py``. Writes ``results/ramp_epochs.json``.
"""
from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import machine_record, versions  # noqa: E402
from speed import a9a_sparse, adult_dense, svc_fit, timed  # noqa: E402

import goalfit as gf  # noqa: E402
from goalfit.methods.ramp import dcd  # noqa: E402

ORDERS = {"blocks": None, "random": 2 ** 62}  # CACHE_BYTES: the default, or one random order


def _counting():
    """Record every DualState made (the fit's work is read off them)."""
    made = []
    init = dcd.DualState.__init__

    def counted(self, X, *args, **kwargs):
        init(self, X, *args, **kwargs)
        made.append(self)

    dcd.DualState.__init__ = counted
    return made


def one_solve(X, y, seed):
    n = X.shape[0]
    pos = y == y.max()
    a, c = np.where(~pos, 1.0 / n, 0.0), np.where(pos, 1.0 / n, 0.0)
    both = np.random.default_rng(seed).random(n) < 0.1
    a[both] = c[both] = 0.5 / n
    state = dcd.DualState(X, random_state=seed)
    sec, out = timed(lambda: dcd.solve_dcd(state, np.arange(n), a, c, 1.0 / n, tol=1e-3, random_state=seed))
    return sec, {"visits_per_row": state.n_visits / n, "gap_checks": state.n_gap_checks,
                 "gap": out[3] - out[2]}


def one_fit(X, y, s, seed, made):
    cons = [gf.positive_prediction_rate(group="Male") <= 2.0 * gf.positive_prediction_rate(group="Female")]
    made.clear()
    sec, m = timed(lambda: gf.RampClassifier("error", cons, random_state=seed).fit(
        X, y, sensitive_features={"sex": s}))
    n = X.shape[0]
    return sec, {"visits_per_row": sum(st.n_visits for st in made) / n,
                 "gap_checks": sum(st.n_gap_checks for st in made),
                 "solves": sum(st.n_solves for st in made), "objective": float(m.objective_)}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--seeds", type=int, default=3, help="fit seeds (objective spread); timing on seed 0")
    ap.add_argument("--out", default=str(HERE / "results" / "ramp_epochs.json"))
    args = ap.parse_args(argv)
    made = _counting()
    default_cache = dcd.CACHE_BYTES
    rows, t_start = [], time.perf_counter()
    for dataset in ("a9a", "adult"):
        X, y, s = a9a_sparse() if dataset == "a9a" else adult_dense()
        one_fit(X[:400], y[:400], s[:400], 0, made)  # numba's cached kernels load here
        ref = []
        runs = {(kind, order): [] for kind in ("solve", "fit") for order in ORDERS}
        for rep in range(args.repeats):
            ref.append(timed(lambda: svc_fit(X, y))[0])
            for (kind, order), out in runs.items():
                dcd.CACHE_BYTES = ORDERS[order] or default_cache
                out.append(one_solve(X, y, 0) if kind == "solve" else one_fit(X, y, s, 0, made))
        objectives = {}
        for order in ORDERS:
            dcd.CACHE_BYTES = ORDERS[order] or default_cache
            objectives[order] = [one_fit(X, y, s, seed, made)[1]["objective"] for seed in range(args.seeds)]
        dcd.CACHE_BYTES = default_cache
        for (kind, order), out in runs.items():
            secs = [o[0] for o in out]
            row = {"dataset": dataset, "kind": kind, "order": order, "seconds_min": min(secs), "seconds": secs,
                   "linear_svc_seconds_min": min(ref), "ratio_vs_linear_svc": min(secs) / min(ref), **out[0][1]}
            if kind == "fit":
                row["objective_over_seeds"] = objectives[order]
            rows.append(row)
    print(f"{'dataset':8} {'kind':6} {'order':7} {'min s':>7} {'xSVC':>6} {'visits/n':>9} {'gap chk':>8}  objective (seeds)")
    for r in rows:
        obj = " ".join(f"{v:.5f}" for v in r.get("objective_over_seeds", []))
        print(f"{r['dataset']:8} {r['kind']:6} {r['order']:7} {r['seconds_min']:7.3f} {r['ratio_vs_linear_svc']:6.1f} "
              f"{r['visits_per_row']:9.1f} {r['gap_checks']:8d}  {obj}")
    for dataset in ("a9a", "adult"):
        for kind in ("solve", "fit"):
            b, r = (next(x for x in rows if x["dataset"] == dataset and x["kind"] == kind and x["order"] == o)
                    for o in ("blocks", "random"))
            print(f"{dataset} {kind}: blocks {r['seconds_min'] / b['seconds_min']:.2f}x faster than the random order, "
                  f"{b['visits_per_row'] / r['visits_per_row']:.2f}x its visits")
    record = {"script": "ramp_epochs.py", "date": time.strftime("%Y-%m-%d %H:%M:%S"), "machine": machine_record(),
              "versions": versions(), "block_bytes": dcd.BLOCK_BYTES, "cache_bytes": default_cache,
              "repeats": args.repeats, "seconds_total": time.perf_counter() - t_start, "rows": rows}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(record, indent=1) + "\n")
    print(f"wrote {args.out} ({record['seconds_total']:.0f} s)")


if __name__ == "__main__":
    main()
