"""Helpers shared by the Ye & Xie benchmark scripts (yexie_*.py): data preparation, rows, output."""
from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

from _common import machine_record, versions
from goalfit import metrics
from goalfit.methods.subdata.irs import irs_path
from goalfit.methods.subdata.ssvm import fit_ssvm
from goalfit.methods.subdata.wstep import KernelSVMStep, LinearSVMStep, LogisticStep

RESULTS = Path(__file__).resolve().parent / "results"


def design_matrix(data, *, drop=()):
    """One-hot encode the categorical columns of a DataFrame and return a float array."""
    import pandas as pd

    df = data.drop(columns=[c for c in drop if c in data.columns])
    return pd.get_dummies(df, drop_first=True, dtype=float).to_numpy(float)


def binary_groups(values, positive):
    """``+1`` where ``values == positive`` (the paper's g = +1), ``-1`` elsewhere."""
    return np.where(np.asarray(values) == positive, 1, -1)


class Rows:
    """Collects result rows in the format of DESIGN.md (benchmarks section)."""

    def __init__(self):
        self.rows = []

    def add(self, experiment, dataset, method, metric, value, *, split="test", spread=None, paper=None,
            lower=True, seconds=None, **extra):
        self.rows.append({"experiment": experiment, "dataset": dataset, "method": method, "metric": metric,
                          "split": split, "value": None if value is None else float(value),
                          "spread": None if spread is None else float(spread),
                          "paper_value": None if paper is None else float(paper), "lower_is_better": bool(lower),
                          "seconds": None if seconds is None else float(seconds), **extra})


def write(script: str, rows: Rows, *, seeds, notes, started: float, extra_versions=(), details=None, out=None):
    """Write ``benchmarks/results/<script>.json`` (or ``out``, e.g. for ``--quick`` checks); returns the path."""
    record = {"created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "seconds": time.time() - started,
              "machine": machine_record(), "versions": versions(*extra_versions), "seeds": seeds,
              "notes": notes, "details": details or {}, "rows": rows.rows}
    path = Path(out) if out is not None else RESULTS / f"{script}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1, default=float))
    return path


def gap(measure, y, pred, g):
    fn = metrics.error_rate_difference if measure == "omr" else metrics.demographic_parity_difference
    return fn(y, pred, sensitive_features=g)


def candidates(method, X, y, g, measure, grid, N):
    """Yield (params, predict function, seconds) for every configuration of a method."""
    if method == "SSVM":
        for d in grid["ssvm_d"]:
            for mu in grid["ssvm_mu"]:
                t0 = time.perf_counter()
                m = fit_ssvm(X, y, g, d=d, mu=mu, lam=1.0 / N, max_iter=grid["ssvm_iter"])
                yield {"d": d, "mu": mu}, (lambda Z, m=m: np.sign(Z @ m.w + m.b)), time.perf_counter() - t0
        return
    if method == "SVM":
        for lam in grid["lam"]:
            L = LinearSVMStep(lam=lam)
            t0 = time.perf_counter()
            m = L.fit(X, y, np.ones(len(y)))
            yield {"lam": lam}, (lambda Z, m=m, L=L: np.sign(L.decision_function(m, Z))), time.perf_counter() - t0
        return
    if method == "GKSVMF":
        configs = [(KernelSVMStep(kernel=k), t, {"kernel": k, "t": t}) for k in ("rbf", "poly") for t in grid["t"]]
    elif method == "GLRF":
        configs = [(LogisticStep(lam=lam), t, {"lam": lam, "t": t}) for lam in grid["lam"] for t in grid["t_log"]]
    else:
        configs = [(LinearSVMStep(lam=lam), t, {"lam": lam, "t": t}) for lam in grid["lam"] for t in grid["t"]]
    for learner, t, params in configs:
        t0 = time.perf_counter()
        try:
            path = irs_path(learner, X, y, g, grid["rho"], measure=measure, t=t, max_iter=grid["max_iter"])
        except ValueError:
            continue
        per = (time.perf_counter() - t0) / len(grid["rho"])
        for rho, res in zip(grid["rho"], path):
            yield ({**params, "rho": rho},
                   (lambda Z, m=res.model, L=learner: np.where(L.decision_function(m, Z) > 0, 1, -1)), per)


def pick(method, data, measure, grid, guard):
    (Xtr, ytr, gtr), (Xva, yva, gva) = data
    best, fallback = None, None
    for params, predict, secs in candidates(method, Xtr, ytr, gtr, measure, grid, len(ytr)):
        pv = predict(Xva)
        acc, F = float(np.mean(pv == yva)), gap(measure, yva, pv, gva)
        if fallback is None or acc > fallback[4]:
            fallback = (acc, params, predict, secs, acc)
        if guard is not None and acc < guard - 0.03:
            continue
        score = acc / max(F, 0.005)
        if best is None or score > best[0]:
            best = (score, params, predict, secs, acc)
    return best if best is not None else fallback  # nothing within the guard: most accurate config
