"""RampClassifier's speed.py cases under two revisions of goalfit, side by side (issue 15).

Each run is a fresh process that imports goalfit from one revision (``--base``: a git worktree of
it; the working tree's ``src`` for "current"), warms up (imports, numba's cached kernels) on 400
rows, then times one ``LinearSVC`` fit and one ``RampClassifier`` fit of ``speed.py``'s case (error
s.t. ``ppr(Male) <= 2 ppr(Female)``, a9a sparse / Adult one-hot dense, 1 BLAS thread). The two
revisions alternate, ``--repeats`` runs each; the table reports the fastest fit of each revision,
its ratio to the fastest LinearSVC fit of the same runs, and the speed-up. On a shared VM whose
single runs vary up to 2x, alternating processes and taking minima is what makes two revisions
comparable.

    python benchmarks/ramp_revisions.py --base 66d2ba2 --repeats 5
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from _common import machine_record, versions, write_results  # noqa: E402

CHILD = r"""
import json, os, sys, time
for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[v] = "1"
sys.path.insert(0, {bench!r})
from speed import a9a_sparse, adult_dense, svc_fit  # the data loaders of the working tree
import goalfit as gf
X, y, s = a9a_sparse() if {dataset!r} == "a9a" else adult_dense()
cons = [gf.positive_prediction_rate(group="Male") <= 2.0 * gf.positive_prediction_rate(group="Female")]
fit = lambda rows=slice(None): gf.RampClassifier("error", cons, random_state=0).fit(
    X[rows], y[rows], sensitive_features={{"sex": s[rows]}})
fit(slice(0, 400))
t = time.perf_counter(); svc_fit(X, y); ref = time.perf_counter() - t
t = time.perf_counter(); m = fit(); sec = time.perf_counter() - t
print(json.dumps({{"reference_seconds": ref, "seconds": sec, "objective": float(m.objective_),
                  "n_inner": int(sum(h["n_inner"] for h in m.history_)), "goalfit": gf.__file__}}))
"""


def run_child(src, dataset):
    env = dict(os.environ, PYTHONPATH=str(src))
    out = subprocess.run([sys.executable, "-c", CHILD.format(bench=str(HERE), dataset=dataset)], env=env,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", default="66d2ba2", help="the revision to compare the working tree with")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--datasets", default="a9a,adult")
    ap.add_argument("--out", default=str(HERE / "results" / "ramp_revisions.json"))
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    base_rev = subprocess.run(["git", "rev-parse", "--short", args.base], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    head_rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    details = {}
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "base"
        subprocess.run(["git", "worktree", "add", "--detach", str(tree), args.base], cwd=ROOT, check=True,
                       capture_output=True)
        try:
            srcs = {f"base {base_rev}": tree / "src", f"current (HEAD {head_rev} + working tree)": ROOT / "src"}
            print(f"{'dataset':8s} {'revision':34s} {'min fit s':>9s} {'min svc s':>9s} {'ratio':>6s} {'solves':>6s} "
                  f"{'objective':>9s}")
            for dataset in args.datasets.split(","):
                runs = {k: [] for k in srcs}
                for _ in range(args.repeats):
                    for name, src in srcs.items():
                        runs[name].append(run_child(src, dataset))
                ref = min(r["reference_seconds"] for rs in runs.values() for r in rs)
                rec = {}
                for name, rs in runs.items():
                    sec = min(r["seconds"] for r in rs)
                    rec[name] = {"seconds_min": sec, "ratio_vs_fastest_linearsvc": sec / ref, "runs": rs}
                    print(f"{dataset:8s} {name:34s} {sec:9.3f} {ref:9.3f} {sec / ref:6.2f} {rs[0]['n_inner']:6d} "
                          f"{rs[0]['objective']:9.6f}", flush=True)
                names = list(srcs)
                rec["speedup_min"] = rec[names[0]]["seconds_min"] / rec[names[1]]["seconds_min"]
                print(f"{dataset:8s} speed-up (min over min): {rec['speedup_min']:.2f}x")
                details[dataset] = rec
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, capture_output=True)
    out = {"created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "seconds": time.perf_counter() - t0,
           "machine": machine_record(), "versions": versions(), "base": base_rev, "head": head_rev,
           "repeats": args.repeats, "notes": "fresh process per run, revisions alternating; minima over runs; "
           "the LinearSVC reference is the fastest of all runs of the dataset", "details": details}
    write_results(args.out, out)


if __name__ == "__main__":
    main()
