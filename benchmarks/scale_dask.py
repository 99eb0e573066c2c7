"""GoalClassifier on Dask at 10^6 - 10^8 rows (goalfit issue 16).

Synthetic binary data generated lazily per partition (no file): 20 Gaussian features, 4 groups
(shares 0.4/0.3/0.2/0.1) that shift the first feature, labels from a logistic model; the base
model is a *prefit* LogisticRegression holding the true weights. On a ``LocalCluster`` with 2
worker processes (1 thread each):

* problems: error s.t. demographic parity <= 0.01, and H-mean s.t. coverage <= 0.25;
* fit time as a ratio to one pass of ``predict_proba`` over the same Dask array (the pass
  generates the data and applies the model, reduced to a sum);
* peak memory (RSS) per worker process (workers restarted before each size) and of the client
  during the fit;
* agreement with the in-memory fit on the same rows at 10^6 and 10^7: the largest difference of
  any rate (every confusion entry divided by its (group, class) mass), of the objective and of
  the constraint value;
* a multiclass row (5 classes, error s.t. every class predicted for at least 15% of the rows,
  per-call map-reduce) at 10^7;
* ``--parquet``: the same DP problem at 10^7 rows from Parquet files through ``goalfit fit
  SPEC --scheduler``.

Usage: ``python benchmarks/scale_dask.py [--quick] [--sizes 1e6 1e7 1e8] [--parquet]``
(``--quick``: 10^5 and 10^6, multiclass at 10^6, about 2 minutes, written to
``scale_dask_quick.json``). Writes ``benchmarks/results/scale_dask.json``, keeping the rows of
sizes not re-run.
"""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
from sklearn.frozen import FrozenEstimator

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine_record, versions  # noqa: E402

N_FEATURES, GROUP_SHARES, SEED = 20, (0.4, 0.3, 0.2, 0.1), 0
RESULTS = Path(__file__).resolve().parent / "results"


def true_model(n_classes=2):
    """Weights of the generating logistic model (also the prefit base model's weights)."""
    rng = np.random.default_rng(12345 + n_classes)
    if n_classes == 2:
        return rng.normal(0, 0.35, N_FEATURES), -0.8
    return rng.normal(0, 0.35, (n_classes, N_FEATURES)), rng.normal(0, 0.3, n_classes)


def make_partition(k, rows, n_classes=2):
    """Partition ``k``: features (rows, 20) float64, labels int8, groups int8 (deterministic)."""
    rng = np.random.default_rng([SEED, n_classes, k])
    g = rng.choice(4, size=rows, p=GROUP_SHARES).astype(np.int8)
    X = rng.standard_normal((rows, N_FEATURES))
    X[:, 0] += 0.6 * g
    W, b = true_model(n_classes)
    if n_classes == 2:
        p = 1.0 / (1.0 + np.exp(-(X @ W + b)))
        y = (rng.random(rows) < p).astype(np.int8)
    else:
        z = X @ W.T + b
        P = np.exp(z - z.max(axis=1, keepdims=True))
        P /= P.sum(axis=1, keepdims=True)
        y = (rng.random(rows)[:, None] > np.cumsum(P, axis=1)).sum(axis=1).astype(np.int8)
    return X, y, g


def prefit_model(n_classes=2):
    """A LogisticRegression holding the generating weights (no training)."""
    from sklearn.linear_model import LogisticRegression

    W, b = true_model(n_classes)
    lr = LogisticRegression()
    lr.coef_ = np.atleast_2d(W).astype(float)
    lr.intercept_ = np.atleast_1d(b).astype(float)
    lr.classes_ = np.arange(n_classes)
    lr.n_features_in_ = N_FEATURES
    return lr


def partition_rows(n):
    return min(1_000_000, max(n // 8, 1))


def lazy_data(n, n_classes=2):
    """Dask arrays X, y, g whose partitions are generated on the workers when computed."""
    import dask
    import dask.array as da

    rows = partition_rows(n)
    Xs, ys, gs = [], [], []
    for k in range(n // rows):
        part = dask.delayed(make_partition, pure=True)(k, rows, n_classes)
        Xs.append(da.from_delayed(part[0], (rows, N_FEATURES), dtype=float))
        ys.append(da.from_delayed(part[1], (rows,), dtype=np.int8))
        gs.append(da.from_delayed(part[2], (rows,), dtype=np.int8))
    return da.concatenate(Xs), da.concatenate(ys), da.concatenate(gs)


def in_memory(n, n_classes=2):
    parts = [make_partition(k, partition_rows(n), n_classes) for k in range(n // partition_rows(n))]
    return tuple(np.concatenate([p[i] for p in parts]) for i in range(3))


class PeakRSS:
    """Peak resident memory of this process while the block runs (polled every 20 ms)."""

    def __enter__(self):
        import psutil

        self.proc, self.peak, self.stop = psutil.Process(), 0, False
        self.base = self.proc.memory_info().rss

        def poll():
            while not self.stop:
                self.peak = max(self.peak, self.proc.memory_info().rss)
                time.sleep(0.02)

        self.thread = threading.Thread(target=poll, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop = True
        self.thread.join()


def worker_peaks(client):
    """Peak RSS (bytes) of every worker process since it started."""
    return sorted(client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024).values())


def problems(n_classes=2):
    import goalfit as gf

    if n_classes == 2:
        return {"error s.t. DP<=0.01": dict(objective="error",
                                            constraints=[gf.demographic_parity_difference() <= 0.01]),
                "hmean s.t. coverage<=0.25": dict(objective="hmean", constraints=[gf.coverage() <= 0.25])}
    return {"5 classes: error s.t. every class >= 15%": dict(
        objective="error", constraints=[gf.positive_prediction_rate(k) >= 0.15 for k in range(n_classes)])}


def agreement(dsk, mem):
    """Largest differences between two fits: any rate, the objective, any constraint value."""
    def rates(m):
        C = m.result_.confusion
        mass = C.sum(axis=2, keepdims=True)
        return np.where(mass > 0, C / np.where(mass > 0, mass, 1), 0)

    cp_d, cp_m = dsk.problem_, mem.problem_
    Cd, Cm = dsk.result_.confusion, mem.result_.confusion
    return {"max_rate_diff": float(np.abs(rates(dsk) - rates(mem)).max()),
            "objective_diff": abs(cp_d.objective.value(Cd) - cp_m.objective.value(Cm)),
            "constraint_diff": max((abs(a.value(Cd) - b.value(Cm)) for a, b in zip(cp_d.constraints, cp_m.constraints)),
                                   default=0.0)}


def run_size(client, n, n_classes, compare, rows_out, details):
    import dask.array as da

    import goalfit as gf

    lr = prefit_model(n_classes)
    X, y, g = lazy_data(n, n_classes)
    client.restart()
    proba_sum = da.map_blocks(lambda b: lr.predict_proba(b), X, chunks=(X.chunks[0], (n_classes,)), dtype=float).sum(axis=0)
    client.run(lambda: __import__("goalfit.distributed.backend"))  # warm the workers' imports
    da.map_blocks(lambda b: lr.predict_proba(b), X[:1000], dtype=float).sum().compute()
    t0 = time.perf_counter()
    proba_sum.compute()
    t_pass = time.perf_counter() - t0
    mem = in_memory(n, n_classes) if compare else None
    for name, kw in problems(n_classes).items():
        with PeakRSS() as client_mem:
            t0 = time.perf_counter()
            clf = gf.GoalClassifier(FrozenEstimator(lr), **kw).fit(X, y, sensitive_features=g)
            t_fit = time.perf_counter() - t0
        peaks = worker_peaks(client)
        C = clf.result_.confusion
        rec = {"n": n, "problem": name, "statistics": clf.statistics_, "method": clf.method_,
               "oracle_calls": clf.result_.n_oracle_calls, "fit_seconds": t_fit, "predict_proba_pass_seconds": t_pass,
               "fit_to_pass_ratio": t_fit / t_pass, "worker_peak_rss_gb": [p / 1e9 for p in peaks],
               "client_fit_peak_rss_gb": client_mem.peak / 1e9, "client_fit_rss_growth_gb": (client_mem.peak - client_mem.base) / 1e9,
               "objective_train": clf.problem_.objective.value(C),
               "constraints_train": [c.value(C) for c in clf.problem_.constraints], "feasible": bool(clf.feasible_)}
        if mem is not None:
            t0 = time.perf_counter()
            ref = gf.GoalClassifier(FrozenEstimator(lr), **kw).fit(mem[0], mem[1], sensitive_features=mem[2])
            rec["in_memory_fit_seconds"] = time.perf_counter() - t0
            rec.update(agreement(clf, ref))
        details.append(rec)
        print(json.dumps(rec), flush=True)
        base = dict(experiment=name, dataset=f"synthetic N={n:.0e}", method=f"GoalClassifier on Dask ({clf.statistics_['kind']})",
                    split="train", spread=None, paper_value=None, seconds=t_fit)
        rows_out += [dict(base, metric="fit_seconds", value=t_fit, lower_is_better=True),
                     dict(base, metric="fit_to_predict_proba_pass_ratio", value=t_fit / t_pass, lower_is_better=True),
                     dict(base, metric="max_worker_peak_rss_gb", value=max(peaks) / 1e9, lower_is_better=True),
                     dict(base, metric="objective", value=rec["objective_train"], lower_is_better=True),
                     dict(base, metric="max_constraint_violation", value=clf.problem_.max_violation(C), lower_is_better=True)]
        if clf.statistics_["kind"] == "histogram":
            rows_out.append(dict(base, metric="rate_error_bound", value=clf.statistics_["rate_error_bound"],
                                 lower_is_better=True))
        if mem is not None:
            rows_out += [dict(base, metric=f"agreement_{k}", value=rec[k], lower_is_better=True)
                         for k in ("max_rate_diff", "objective_diff", "constraint_diff")]
    del mem


def run_parquet(client, n, rows_out, details):
    """The DP problem from Parquet files through ``goalfit fit SPEC --scheduler ADDRESS``."""
    import joblib
    import pandas as pd

    with tempfile.TemporaryDirectory(prefix="goalfit-parquet-") as tmp:
        tmp = Path(tmp)
        t0 = time.perf_counter()
        rows = partition_rows(n)
        cols = [f"x{j}" for j in range(N_FEATURES)]
        for k in range(n // rows):
            X, y, g = make_partition(k, rows)
            frame = pd.DataFrame(X, columns=cols).assign(label=y, group=g)
            frame.to_parquet(tmp / f"part-{k:04d}.parquet")
        t_write = time.perf_counter() - t0
        lr = prefit_model()
        lr.feature_names_in_ = np.array(cols, dtype=object)
        joblib.dump(lr, tmp / "lr.joblib")
        (tmp / "spec.toml").write_text(
            f'[data]\nfiles = "{tmp}/part-*.parquet"\nlabel = "label"\nsensitive = ["group"]\n\n'
            f'[model]\nprefit = "{tmp}/lr.joblib"\n\n'
            '[goals]\nobjective = "error"\nconstraints = ["demographic_parity_difference(\'group\') <= 0.01"]\n')
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "goalfit.cli.app", "fit", str(tmp / "spec.toml"), "--out",
                               str(tmp / "out"), "--scheduler", client.scheduler.address],
                              capture_output=True, text=True)
        t_cli = time.perf_counter() - t0
        if proc.returncode != 0:
            raise RuntimeError(proc.stdout + proc.stderr)
        report = json.loads((tmp / "out" / "report.json").read_text())
    rec = {"n": n, "problem": "parquet + goalfit fit: error s.t. DP<=0.01", "write_seconds": t_write,
           "cli_seconds": t_cli, "fit_seconds": report["timing"]["total_fit_seconds"],
           "objective_train": report["objective"]["train"], "constraint_train": report["constraints"][0]["train"],
           "statistics": report.get("dask_statistics")}
    details.append(rec)
    print(json.dumps(rec), flush=True)
    base = dict(experiment="error s.t. DP<=0.01 (Parquet, goalfit fit)", dataset=f"synthetic N={n:.0e}",
                method="goalfit fit --scheduler", split="train", spread=None, paper_value=None, seconds=t_cli)
    rows_out += [dict(base, metric="cli_seconds", value=t_cli, lower_is_better=True),
                 dict(base, metric="objective", value=rec["objective_train"], lower_is_better=True),
                 dict(base, metric="demographic_parity_difference", value=rec["constraint_train"], lower_is_better=True)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--sizes", nargs="*", type=float, default=None)
    ap.add_argument("--multiclass", type=float, default=None, help="rows of the multiclass run (0: none)")
    ap.add_argument("--parquet", type=float, default=0, help="rows of the Parquet + CLI run (0: none)")
    ap.add_argument("--compare-up-to", type=float, default=1e7)
    ap.add_argument("--memory-limit", default="8GB", help="per worker")
    ap.add_argument("--out", default=None, help="default results/scale_dask.json (--quick: scale_dask_quick.json)")
    args = ap.parse_args()
    if args.out is None:
        args.out = str(RESULTS / ("scale_dask_quick.json" if args.quick else "scale_dask.json"))
    sizes = [int(s) for s in (args.sizes if args.sizes is not None else ([1e5, 1e6] if args.quick else [1e6, 1e7]))]
    multiclass = int(args.multiclass if args.multiclass is not None else (1e6 if args.quick else 1e7))
    from dask.distributed import Client, LocalCluster

    start = time.perf_counter()
    rows, details = [], []
    with LocalCluster(n_workers=2, threads_per_worker=1, memory_limit=args.memory_limit,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        for n in sizes:
            run_size(client, n, 2, n <= args.compare_up_to, rows, details)
        if multiclass:
            run_size(client, multiclass, 5, multiclass <= args.compare_up_to, rows, details)
        if args.parquet:
            run_parquet(client, int(args.parquet), rows, details)
    out = {"created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "total_seconds": time.perf_counter() - start,
           "machine": machine_record(), "versions": versions("dask", "distributed"), "seeds": [SEED],
           "notes": "LocalCluster(n_workers=2, threads_per_worker=1); prefit LogisticRegression with the generating "
                    "weights; fit_to_predict_proba_pass_ratio = Dask fit time / one predict_proba pass over the same "
                    "lazily generated array; agreement_* = largest difference to the in-memory fit on the same rows",
           "details": details, "rows": rows}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    if Path(args.out).exists() and not args.quick:  # keep rows of other sizes from earlier runs
        old = json.loads(Path(args.out).read_text())
        keep = {(d["n"], d["problem"]) for d in details}
        out["details"] = [d for d in old.get("details", []) if (d["n"], d["problem"]) not in keep] + details
        out["rows"] = [r for r in old.get("rows", []) if not any(
            r["dataset"] == f"synthetic N={n:.0e}" and r["experiment"] == p for n, p in keep)] + rows
    Path(args.out).write_text(json.dumps(out, indent=2, default=float))
    print(f"{'N':>8} {'problem':<42} {'stats':<10} {'fit s':>8} {'ratio':>6} {'worker GB':>10} {'rate diff':>10}")
    for d in out["details"]:
        if "fit_to_pass_ratio" in d:
            print(f"{d['n']:>8.0e} {d['problem']:<42} {d['statistics']['kind']:<10} {d['fit_seconds']:>8.1f} "
                  f"{d['fit_to_pass_ratio']:>6.2f} {max(d['worker_peak_rss_gb']):>10.2f} "
                  f"{d.get('max_rate_diff', float('nan')):>10.2e}")
        else:
            print(f"{d['n']:>8.0e} {d['problem']:<42} {'':<10} {d['fit_seconds']:>8.1f}")


if __name__ == "__main__":
    main()
