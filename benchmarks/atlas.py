#!/usr/bin/env python
"""An atlas of the goal space: ``method="auto"`` against every plug-in method, cell by cell.

A *cell* is one goal shape on one data set: an objective (every named objective of
:data:`goalfit.OBJECTIVES` but the group-wise macro-F1) x a constraint family (none, demographic
parity, equal opportunity, equalized odds, FPR parity, the 80% ratio, coverage, precision >= p)
x the number of classes (binary, 3-5) x the number of groups (2, 5) x the number of training
rows (10^4, 10^5, 10^6). Data: synthetic (``speed.synthetic``: Gaussian classes shifted per
group; the probability model is a logistic regression on the features, which do not include
the group: calibrated over all rows but not within a group, since the group's shift moves its
intercept -- the usual case of a model that does not see the group; ``--temperature T`` divides
its logits by ``T`` to miscalibrate it overall as well) and real data sets (``--real``: Adult by sex, COMPAS by race, bank marketing by age < 25;
binary; half of the rows to train on, half held out).

In each cell one probability model is fitted once (a logistic regression on the training rows)
and every method runs on its probabilities (``GoalClassifier("precomputed", method=...)``), so
the comparison is the methods'. Each method's CPU seconds (one BLAS thread) are divided by the
CPU seconds of one ``LogisticRegression`` fit on the same rows in the same process (the fastest
of three fits, timed right before the cell's methods); a method that finishes in under a second
is timed three times and its median kept (:data:`RETIME_BELOW`). Recorded per method: the ratio, the
objective and the worst constraint violation on the training rows and on as many held-out rows
(exact expectations over a randomized classifier, :func:`goalfit.metrics.evaluate_problem`),
whether it finished (no error and within the limit: ``--limit-ratio`` LR fits, at least
``--min-limit`` seconds, of the process's CPU time, so a loaded machine does not cut it short) and its stopping
message; a method that refuses the goal (``UnsupportedGoal``) is recorded as refused.

Per cell, the *near-best* methods are the finished ones that meet the constraints on the
training rows (violation <= 1e-3) and whose objective is within 1e-3 of the best such method's
both on the training rows and on the held-out rows; auto's *time ratio* is its seconds over the
fastest near-best method's, its *gap* the larger of its two objective gaps. ``auto`` is scored
as the method :func:`goalfit.methods.plugin.choose_method` picks *now* (the measured run of that
method in the same cell), beside the run of ``auto`` as it was when the cell ran
(``auto_at_run``), so the rule can be re-scored with ``--replot`` without re-running anything.

Usage::

    python benchmarks/atlas.py --quick          # 10^4 rows, binary and 4 classes, 2 groups, 4 objectives x 3 families: ~3 min
    python benchmarks/atlas.py --sizes 10000 100000 --objectives gmean minmax_recall --constraints dp
    python benchmarks/atlas.py --resume         # skip the cells already in the JSON
    python benchmarks/atlas.py --classes 3 4 5 --rerun split_frank_wolfe   # one method again in the
                                                # selected cells already in the JSON (others kept)
    python benchmarks/atlas.py --replot         # re-score the JSON with the current rule; PNG, per-class
                                                # table, worst cells, the must-show check from 10^5 rows
    python benchmarks/atlas.py --out a.json ...  # runs in parallel, each to its own file, then
    python benchmarks/atlas.py --merge a.json b.json   # their cells join --out's (later files win)

Writes ``benchmarks/results/atlas.json`` (the Benchmarks rows of ``DESIGN.md``: each finished
method's held-out objective and violation per cell; the per-cell records under ``details``, without
the numbers the rows hold; compact, floats to 6 significant digits) and ``atlas.png`` (auto's time
ratio and objective gap per cell). The whole grid (up to 10^6 rows) takes hours on one core;
benchmarks/README.md says which part was run.
"""
from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse
import json
import platform
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import machine_record, versions, write_results
from speed import lr, synthetic, synthetic_population

import goalfit as gf
from goalfit.methods.plugin import METHODS, choose_method, resolve_oracle
from goalfit.metrics import evaluate_problem

OUT = HERE / "results" / "atlas.json"
PNG = HERE / "results" / "atlas.png"
OBJECTIVES = ["error", "balanced_error", "hmean", "gmean", "qmean", "f1", "micro_f1", "macro_f1",
              "minmax_recall", "kl_quantification"]
FAMILIES = ["none", "dp", "eopp", "eodds", "fpr", "ratio80", "coverage", "precision"]
#: the code a cell ran on (cells of one file may come from several runs: ``--resume``, ``--merge``)
COMMIT = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=HERE, capture_output=True,
                        text=True).stdout.strip() or None
#: near-best: within this much of the best objective (train and held-out), violation at most this
TOL = 1e-3


# ============================================================================ goals


def constraints(family, y, P, n_classes, label=None):
    """The constraint list of ``family`` on training class codes ``y`` and probabilities ``P``.

    Coverage and precision bounds are set from the data so that they bind: coverage of the last
    class at most 3/4 of its base rate; its precision at least the argmax rule's plus 0.05.
    ``label``: the last class as the fit's labels name it (default its code, ``n_classes - 1``).
    """
    k = n_classes - 1
    name = k if label is None else label
    if family == "none":
        return []
    if family == "dp":
        return [gf.demographic_parity_difference("group") <= 0.02]
    if family == "eopp":
        return [gf.equal_opportunity_difference("group") <= 0.02]
    if family == "eodds":
        return [gf.equalized_odds_difference("group") <= 0.03]
    if family == "fpr":
        return [gf.false_positive_rate_difference("group") <= 0.02]
    if family == "ratio80":
        return [gf.demographic_parity_ratio("group") >= 0.8]
    if family == "coverage":
        return [gf.coverage(name) <= round(0.75 * float(np.mean(y == k)), 4)]
    if family == "precision":
        pred = P.argmax(1)
        prec = float(gf.precision(y, pred, label=k)) if (pred == k).any() else 0.5
        return [gf.precision(name) >= round(min(0.95, prec + 0.05), 4)]
    raise ValueError(f"unknown constraint family {family!r}; known: {FAMILIES}")


# ============================================================================ data


def synthetic_cell(n, n_classes, n_groups, seed, temperature, population=0):
    """(P, y, g) for the training and the held-out rows, and the LR reference seconds.

    ``population``: also this many new rows of the same distribution, the split
    ``"population"`` (:func:`speed.synthetic_population`; every method record then has its
    objective and violation there too)."""
    X, y, g = synthetic(2 * n, n_classes, n_groups, seed=seed)
    extra = {"population": synthetic_population(2 * n, n_classes, n_groups, population, seed=seed)} if population else {}
    return _model(X[:n], y[:n], g[:n], X[n:], y[n:], g[n:], temperature, extra)


def real_cell(name, temperature, seed):
    """Adult (sex), COMPAS (race: African-American vs the rest), bank marketing (age < 25 vs the rest)."""
    from goalfit.datasets import load_dataset

    d = load_dataset(name)
    col = {"adult": "sex", "compas": "race", "bank_marketing": "age_group"}[name]
    s = np.asarray(d.sensitive_features[col]).astype(str)
    if name == "compas":
        s = np.where(s == "African-American", "african_american", "other")
    if name == "bank_marketing":
        s = np.where(np.char.find(s.astype(str), "25_to") >= 0, "25_and_over", s)
        s = np.where(s == "25_and_over", s, np.where(np.char.find(s, "60") >= 0, "25_and_over", "under_25"))
    pre = gf.make_estimator("logistic_regression")[:-1]
    X = pre.fit_transform(d.data)
    X = X.toarray() if hasattr(X, "toarray") else np.asarray(X, float)
    y = np.asarray(d.target).astype(int)
    idx = np.random.default_rng(seed).permutation(len(y))
    a, b = idx[: len(y) // 2], idx[len(y) // 2:]
    return _model(X[a], y[a], s[a], X[b], y[b], s[b], temperature)


def _model(Xa, ya, ga, Xb, yb, gb, temperature, extra=None):
    """Fit the cell's probability model once; time one LR fit (fastest of three). ``extra``:
    more splits, ``{name: (X, y, g)}``."""
    secs, base = [], None
    for _ in range(3):
        t = time.process_time()
        base = lr().fit(Xa, ya)
        secs.append(time.process_time() - t)
    splits = {"train": (Xa, ya, ga), "test": (Xb, yb, gb), **(extra or {})}
    P = {}
    for split, (X, _, _) in splits.items():
        logits = base.decision_function(X)
        logits = np.c_[np.zeros(len(X)), logits] if logits.ndim == 1 else logits
        z = logits / temperature
        z = np.exp(z - z.max(1, keepdims=True))
        P[split] = z / z.sum(1, keepdims=True)
    return P, {k: v[1] for k, v in splits.items()}, {k: v[2] for k, v in splits.items()}, min(secs)


# ============================================================================ one cell


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout


def run_method(method, objective, cons, P, Y, G, limit, oracle=None, method_params=None):
    """One method on the cell: its record (seconds, objective and violation per split, status)
    and the fitted estimator (None unless it finished).

    ``oracle``: ``method_params["oracle"]`` of the fit (None: the estimator's default);
    ``method_params``: the method's other knobs.
    """
    rec = {"method": method}
    params = {**(method_params or {}), **({} if oracle is None else {"oracle": oracle})} or None
    signal.signal(signal.SIGPROF, _alarm)  # the limit counts the process's CPU seconds, not the wall clock
    signal.setitimer(signal.ITIMER_PROF, max(1.0, float(limit)))
    t = time.process_time()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = gf.GoalClassifier("precomputed", objective=objective, constraints=cons, method=method,
                                    method_params=params).fit(
                P["train"], Y["train"], sensitive_features={"group": G["train"]})
    except _Timeout:
        rec.update(status="timeout", finished=False, seconds=time.process_time() - t)
        return rec, None
    except Exception as err:  # noqa: BLE001 - recorded: refused goals and errors alike
        refused = type(err).__name__ == "UnsupportedGoal"
        rec.update(status="refused" if refused else "error", finished=False, seconds=time.process_time() - t,
                   message=f"{type(err).__name__}: {str(err)[:200]}")
        return rec, None
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
    rec.update(status="finished", finished=True, seconds=time.process_time() - t, ran=est.method_,
               message=str(est.result_.message)[:200], oracle_calls=int(est.result_.n_oracle_calls))
    problem = est.goals_  # as fitted: micro-F1's default class is the training rows' most frequent
    for split in P:  # train, test and any other split the cell has
        sf = {"group": G[split]}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ev = evaluate_problem(problem, Y[split], est.predict_proba(P[split], sensitive_features=sf),
                                  sensitive_features=sf, classes=est.classes_)
        rec[f"{split}_objective"] = float(ev["objective"]["value"])
        rec[f"{split}_violation"] = float(max([c["violation"] for c in ev["constraints"]], default=0.0))
    return rec, est


#: a finished run shorter than this (CPU seconds) is timed twice more and its median kept: one run
#: of a few tens of milliseconds moves by 20% from run to run, as much as the 1.5x criterion's room
RETIME_BELOW = 1.0


def _retime(rec, method, objective, cons, P, Y, G, limit, oracle):
    """Replace ``rec["seconds"]`` by the median of three runs when the run finished in under
    :data:`RETIME_BELOW` seconds (the other fields are the first run's: the fits are deterministic)."""
    if rec.get("finished") and rec["seconds"] < RETIME_BELOW:
        runs = [rec["seconds"]] + [run_method(method, objective, cons, P, Y, G, limit, oracle)[0]["seconds"]
                                   for _ in range(2)]
        rec["seconds"] = float(np.median(runs))


def _warmed_up(family, P, Y, G, lr_seconds, limit_ratio, min_limit, oracle):
    """The cell's constraints and time limit, after an untimed warm-up fit (an unconstrained
    fit on the same rows: the first fit of a cell pays for first touches of the arrays, which
    would otherwise land on the first method timed)."""
    cons = constraints(family, Y["train"], P["train"], P["train"].shape[1])
    limit = max(min_limit, limit_ratio * lr_seconds)
    run_method("column_generation", "error", [], P, Y, G, limit, oracle)
    return cons, limit


def _timed(method, objective, cons, P, Y, G, limit, oracle):
    """One method's record on the cell, re-timed when it was short (:func:`_retime`)."""
    rec, _ = run_method(method, objective, cons, P, Y, G, limit, oracle)
    _retime(rec, method, objective, cons, P, Y, G, limit, oracle)
    return rec


def _where() -> dict:
    """The machine a run timed on: its CPU model and the 1-minute load average (timings of one
    code move by up to about 30% between runs on a shared virtual machine; these say which
    runs can be compared)."""
    return {"cpu_model": machine_record().get("cpu_model", platform.machine()),
            "load_average": round(os.getloadavg()[0], 2)}


def run_cell(key, P, Y, G, lr_seconds, limit_ratio, min_limit, oracle=None):
    """Every method on one cell (all with ``method_params["oracle"] = oracle``): the cell record."""
    objective = key["objective"]
    cons, limit = _warmed_up(key["constraints"], P, Y, G, lr_seconds, limit_ratio, min_limit, oracle)
    cell = dict(key, lr_seconds=lr_seconds, limit_seconds=limit, goal=[str(c) for c in cons], methods={}, commit=COMMIT,
                oracle_used=resolve_oracle(oracle or "auto", P["train"].shape[1]), temperature=key.get("temperature", 1.0),
                warmed_up=True, **_where())
    rec = _timed("auto", objective, cons, P, Y, G, limit, oracle)
    cell["auto_at_run"] = rec.get("ran") or rec["status"]
    for m in METHODS:
        if m == rec.get("ran"):  # auto's run is this method's (same call, same defaults)
            cell["methods"][m] = dict(rec, method=m)
            continue
        cell["methods"][m] = _timed(m, objective, cons, P, Y, G, limit, oracle)
    for r in cell["methods"].values():
        r["ratio"] = r["seconds"] / lr_seconds
    if rec["status"] != "finished":
        cell["methods"]["auto"] = rec
    return cell


def rerun_cell(cell, methods, P, Y, G, lr_seconds, limit_ratio, min_limit, oracle=None):
    """Run ``methods`` again in a cell already recorded, keeping the other methods' records.

    A re-run method's seconds are put on the cell's scale: multiplied by the cell's LR
    reference over the LR fit timed in the re-run's process (``lr_seconds``), so its ratio to
    one LR fit is the one measured beside it; the record keeps ``lr_seconds_at_run``, its
    ``commit`` and where it ran (:func:`_where`).
    """
    cons, limit = _warmed_up(cell["constraints"], P, Y, G, lr_seconds, limit_ratio, min_limit, oracle)
    for m in methods:
        rec = _timed(m, cell["objective"], cons, P, Y, G, limit, oracle)
        rec["seconds"] *= cell["lr_seconds"] / lr_seconds
        rec.update(ratio=rec["seconds"] / cell["lr_seconds"], lr_seconds_at_run=lr_seconds, commit=COMMIT, **_where())
        cell["methods"][m] = rec
    return cell


# ============================================================================ scoring


def near_best(cell):
    """Names of the near-best methods of a cell (see the module docstring) and the best values."""
    ok = {m: r for m, r in cell["methods"].items() if m != "auto" and r.get("finished")
          and r["train_violation"] <= TOL}
    if not ok:
        return [], None, None
    bt = min(r["train_objective"] for r in ok.values())
    bh = min(r["test_objective"] for r in ok.values())
    good = [m for m, r in ok.items() if r["train_objective"] <= bt + TOL and r["test_objective"] <= bh + TOL]
    return good, bt, bh


def compiled_problem(objective, family, n_classes, n_groups, oracle="plugin"):
    """The cell's goal compiled on a small stand-in sample of the same classes and groups, and the
    cell's kind of oracle (``"plugin"`` / ``"threshold"``) built on it.

    ``choose_method`` reads the goal's structure (objective kind, constraints, dimensions) and
    whether the oracle is exact, not the data, so this is what ``auto`` decides on for the cell.
    """
    import pandas as pd

    from goalfit.confusion import CellEncoder, ConfusionSpace
    from goalfit.methods.plugin import PluginOracle, ThresholdOracle

    n = 20 * n_classes * n_groups
    y = np.arange(n) % n_classes
    g = np.array([f"g{i}" for i in (np.arange(n) // n_classes) % n_groups])
    P = np.full((n, n_classes), 1.0 / n_classes)
    enc = CellEncoder()
    cells = enc.fit_transform(pd.Series(g, name="group"))
    space = ConfusionSpace.from_codes(y, cells, np.arange(n_classes), enc.cells_)
    kind = ThresholdOracle if oracle == "threshold" else PluginOracle
    return gf.Problem(objective, constraints(family, y, P, n_classes)).compile(space), kind(P, y, cells, space)


def current_choice(cell):
    """What ``choose_method`` picks now for the cell's goal and oracle (None: it refuses the goal)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return choose_method(*compiled_problem(cell["objective"], cell["constraints"], cell["n_classes"],
                                                   cell["n_groups"], cell.get("oracle_used", "plugin")))
    except ValueError:
        return None


def standing(cell, method):
    """``method``'s standing in the cell: ``(fastest, gap, time_ratio)``, the fastest near-best
    method, ``method``'s objective gap to the best (the larger of train and held-out) and its
    seconds over the fastest's; None when it did not finish or no method is near-best."""
    good, bt, bh = near_best(cell)
    r = cell["methods"].get(method) if method else None
    if not good or not r or not r.get("finished"):
        return None
    fastest = min(good, key=lambda m: cell["methods"][m]["seconds"])
    return (fastest, max(r["train_objective"] - bt, r["test_objective"] - bh),
            r["seconds"] / max(cell["methods"][fastest]["seconds"], 1e-9))


def score(cell):
    """auto's time ratio to the fastest near-best method and its objective gap (train, held-out)."""
    good, _, _ = near_best(cell)
    auto = current_choice(cell)
    cell["auto_now"] = auto
    cell["near_best"] = good
    st = standing(cell, auto)
    if st is None:
        r = cell["methods"].get(auto) if auto else None
        cell["score"] = {"auto": auto, "time_ratio": None, "gap": None, "ok": bool(not good and r is None)}
        return cell["score"]
    fastest, gap, tr = st
    r = cell["methods"][auto]
    cell["score"] = {"auto": auto, "fastest_near_best": fastest, "time_ratio": tr, "gap": gap,
                     "auto_ratio_to_lr": r["ratio"], "fastest_ratio_to_lr": cell["methods"][fastest]["ratio"],
                     "train_violation": r["train_violation"], "ok": auto in good and tr <= 1.5}
    return cell["score"]


def cell_id(key):
    return "|".join(str(key.get(k)) for k in ("data", "objective", "constraints", "n_classes", "n_groups", "n", "oracle"))


#: a finished method's numbers that its rows hold: ``details`` does not repeat them (see :func:`slim`)
ROW_FIELDS = ("test_objective", "test_violation", "seconds")


def experiment_name(cell):
    return (f"{cell['objective']} s.t. {cell['constraints']}, {cell['n_classes']} classes x {cell['n_groups']} groups, "
            f"n={cell['n']}")


def rows_of(cell):
    """The DESIGN.md Benchmarks rows of one cell: each finished method's objective and violation on the
    held-out rows (its training-sample numbers, which the near-best test also reads, stay in ``details``)."""
    out = []
    name = experiment_name(cell)
    for m, r in cell["methods"].items():
        if not r.get("finished"):
            continue
        for split in ("test",):
            for metric in ("objective", "violation"):
                out.append({"experiment": name, "dataset": cell["data"], "method": m, "metric": metric, "split": split,
                            "value": r[f"{split}_{metric}"], "spread": None, "paper_value": None,
                            "lower_is_better": True, "seconds": r["seconds"]})
    return out


#: a stopping message is kept to this many characters (its reason comes first)
MESSAGE_CHARS = 80
#: what :func:`score` recomputes from the methods' records
SCORED = ("score", "near_best", "auto_now")


def slim(cell):
    """The cell as ``details`` stores it: a finished method's :data:`ROW_FIELDS` live in the rows only,
    and so does what they imply (``finished``, ``status``, ``ratio``, ``ran`` when it is the method);
    a refused method keeps its status only; messages are cut to :data:`MESSAGE_CHARS`; the
    scoring (:data:`SCORED`) is recomputed when read."""
    def kept(m, r):
        drop = {"method"}
        if r.get("finished"):
            drop |= set(ROW_FIELDS) | {"finished", "status", "ratio"} | ({"ran"} if r.get("ran") == m else set())
        elif r.get("status") == "refused":  # depends on the goal's kind only; running the method again says why
            return {"status": "refused"}
        out = {k: v for k, v in r.items() if k not in drop}
        if isinstance(out.get("message"), str):
            out["message"] = out["message"][:MESSAGE_CHARS]
        return out
    return {**{k: v for k, v in cell.items() if k not in SCORED},
            "methods": {m: kept(m, r) for m, r in cell["methods"].items()}}


def load_cells(record):
    """The per-cell records of a written atlas: ``details`` with the rows' numbers put back (:func:`slim`'s inverse).

    A method with rows finished (files written before :func:`slim` dropped ``finished`` keep it)."""
    numbers: dict = {}
    for row in record.get("rows", []):
        v = numbers.setdefault((row["experiment"], row["dataset"], row["method"]), {"seconds": row["seconds"]})
        v[f"{row['split']}_{row['metric']}"] = row["value"]
    cells = record.get("details", {}).get("cells", [])
    for c in cells:
        for m, r in c["methods"].items():
            r["method"] = m
            got = numbers.get((experiment_name(c), c["data"], m))
            if r.get("status") == "refused":
                r.setdefault("finished", False)
            if got is not None:
                r.update(got)
                r.setdefault("finished", True)
                r.setdefault("status", "finished")
                r.setdefault("ran", m)
                r["ratio"] = r["seconds"] / c["lr_seconds"]
    return cells


def rounded(x, digits=6):
    """``x`` with every float to ``digits`` significant digits (the atlas compares objectives at 1e-3)."""
    if isinstance(x, float):
        return float(f"{x:.{digits}g}")
    if isinstance(x, dict):
        return {k: rounded(v, digits) for k, v in x.items()}
    if isinstance(x, list):
        return [rounded(v, digits) for v in x]
    return x


# ============================================================================ outputs


def plot(cells, path):
    """Two heatmaps: auto's time ratio to the fastest near-best method, and its objective gap."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cols = sorted({(c["data"], c["n_classes"], c["n_groups"], c["n"], c["constraints"]) for c in cells},
                  key=lambda t: (t[0], t[1], t[2], t[3], FAMILIES.index(t[4])))
    objs = [o for o in OBJECTIVES if any(c["objective"] == o for c in cells)]
    T = np.full((len(objs), len(cols)), np.nan)
    D = np.full_like(T, np.nan)
    for c in cells:
        s = c.get("score", {})
        i, j = objs.index(c["objective"]), cols.index((c["data"], c["n_classes"], c["n_groups"], c["n"], c["constraints"]))
        if s.get("time_ratio") is not None:
            T[i, j], D[i, j] = s["time_ratio"], max(s["gap"], 1e-6)
    fig, axes = plt.subplots(2, 1, figsize=(max(8, 0.32 * len(cols) + 3), 2 * (0.35 * len(objs) + 1.6)))
    labels = [f"{d.replace('synthetic', 'syn')[:10]} K{k} G{g} n{n:.0e} {f}" for d, k, g, n, f in cols]
    for ax, M, title, norm in ((axes[0], T, "auto's seconds / fastest near-best method's (1 = auto is it)",
                                matplotlib.colors.LogNorm(0.5, 50)),
                               (axes[1], D, "auto's objective gap to the best (max of train, held-out)",
                                matplotlib.colors.LogNorm(1e-5, 1e-1))):
        im = ax.imshow(np.ma.masked_invalid(M), aspect="auto", cmap="viridis", norm=norm)
        ax.set_yticks(range(len(objs)), objs, fontsize=7)
        ax.set_xticks(range(len(cols)), labels, rotation=90, fontsize=6)
        ax.set_title(title, fontsize=9)
        fig.colorbar(im, ax=ax)
        for i, j in zip(*np.where(np.isnan(M))):
            ax.text(j, i, "-", ha="center", va="center", fontsize=6, color="grey")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"wrote {path}")


#: the objective's class in ``choose_method``'s table (the README's per-class table)
KIND = {"error": "linear", "balanced_error": "linear", "f1": "ratio", "micro_f1": "ratio", "hmean": "convex smooth",
        "qmean": "convex smooth", "kl_quantification": "convex smooth", "gmean": "convex non-smooth",
        "minmax_recall": "piecewise linear", "macro_f1": "non-convex"}


def class_table(cells, min_rows=100_000):
    """Markdown table: per class of cells (objective kind x constraints x binary / multiclass), from ``min_rows`` up.

    Only cells run with the estimator's default oracle (no ``--oracle``) count.
    """
    by = {}
    for c in cells:
        if c["n"] >= min_rows and c.get("oracle") is None:  # the estimator's defaults
            key = (KIND[c["objective"]], "none" if c["constraints"] == "none" else "polyhedral",
                   "binary" if c["n_classes"] == 2 else "multiclass")
            by.setdefault(key, []).append(c)
    head = ("| objective | constraints | classes | cells | auto | near-best | <= 1.5x fastest | <= 2x / 5x LR | "
            "auto x LR (median, max) | largest time ratio |")
    lines = [head, "|---|---|---|---|---|---|---|---|---|---|"]
    for key in sorted(by):
        cs = by[key]
        sc = [c for c in cs if c["score"].get("gap") is not None]
        autos = sorted({str(c["score"]["auto"]) for c in cs})
        near = sum(c["score"]["gap"] <= TOL and c["score"]["auto"] in c["near_best"] for c in sc)
        fast = sum(c["score"]["time_ratio"] <= 1.5 for c in sc)
        cheap = sum(c["score"]["auto_ratio_to_lr"] <= (2 if c["n_classes"] == 2 else 5) for c in sc)
        xs = sorted(c["score"]["auto_ratio_to_lr"] for c in sc) or [float("nan")]
        worst = max(sc, key=lambda c: c["score"]["time_ratio"], default=None)
        wt = (f"{worst['score']['time_ratio']:.1f}x {worst['score']['fastest_near_best']} ({worst['objective']} + "
              f"{worst['constraints']}, {worst['n_classes']} x {worst['n_groups']})" if worst else "-")
        lines.append(f"| {key[0]} | {key[1]} | {key[2]} | {len(cs)} ({len(sc)} scored) | {', '.join(autos)} | {near} | "
                     f"{fast} | {cheap} | {xs[len(xs) // 2]:.1f}, {xs[-1]:.1f} | {wt} |")
    return "\n".join(lines)


def three_tests(cell, method):
    """The must-show's three tests for ``method`` in the cell, had ``auto`` picked it: near-best
    (within 1e-3 of the best objective on train and held-out rows, constraints met on train), at
    most 1.5x the fastest near-best method's seconds, at most 2x (binary) / 5x (multiclass) one LR
    fit; None when the method did not finish or no method is near-best (the cell is not scored)."""
    st = standing(cell, method)
    if st is None:
        return None
    _, gap, ratio = st
    return {"near": bool(gap <= TOL and method in near_best(cell)[0]), "fast": bool(ratio <= 1.5),
            "cheap": bool(cell["methods"][method]["ratio"] <= (2 if cell["n_classes"] == 2 else 5))}


def passes(cell, method) -> bool:
    """All three of :func:`three_tests` (False when the cell is not scored for the method)."""
    t = three_tests(cell, method)
    return bool(t) and all(t.values())


def rule_alternatives(cells, min_rows=100_000):
    """Markdown table: per class of cells (as :func:`class_table`), how many cells each method would
    pass on all three tests if ``auto`` picked it for the whole class, beside the rule's count (the
    rule is read by class, so a method that wins a few cells of a class but loses others is no
    better rule)."""
    by = {}
    for c in cells:
        if c["n"] >= min_rows and c.get("oracle") is None:
            key = (KIND[c["objective"]], "none" if c["constraints"] == "none" else "polyhedral",
                   "binary" if c["n_classes"] == 2 else "multiclass")
            by.setdefault(key, []).append(c)
    lines = ["| objective | constraints | classes | cells | auto passes | best single method: passes | others |",
             "|---|---|---|---|---|---|---|"]
    for key in sorted(by):
        cs = by[key]
        now = sum(passes(c, c["score"]["auto"]) for c in cs)
        tally = {m: sum(passes(c, m) for c in cs) for m in METHODS}
        autos = {c["score"]["auto"] for c in cs}
        best = max(tally, key=lambda m: (tally[m], m in autos))  # a tie names the rule's method
        others = ", ".join(f"{m} {v}" for m, v in sorted(tally.items(), key=lambda kv: -kv[1]) if v and m != best)
        top = f"{best}: {tally[best]}" if tally[best] else "none"
        lines.append(f"| {key[0]} | {key[1]} | {key[2]} | {len(cs)} | {now} | {top} | {others or '-'} |")
    return "\n".join(lines)


def must_show(cells, min_rows=100_000):
    """The issue's check on every cell from ``min_rows`` rows up, by setting (data label): auto's
    method against :func:`three_tests`. Returns the printed lines; the failing cells follow each
    setting's counts."""
    out = []
    for setting in sorted({c["data"] for c in cells if c["n"] >= min_rows}):
        cs = [c for c in cells if c["n"] >= min_rows and c["data"] == setting]
        tests = {id(c): three_tests(c, c["score"]["auto"]) for c in cs}
        sc = [c for c in cs if tests[id(c)] is not None]
        near, fast, cheap = ({id(c) for c in sc if tests[id(c)][k]} for k in ("near", "fast", "cheap"))
        out.append(f"{setting}: {len(cs)} cells, {len(sc)} scored: near-best {len(near)}, <= 1.5x the fastest "
                   f"near-best {len(fast)}, <= 2x / 5x one LR fit {len(cheap)}, all three {len(near & fast & cheap)}")
        for c in cs:
            s, what = c["score"], f"{c['objective']} + {c['constraints']}, {c['n_classes']} x {c['n_groups']}, n={c['n']:.0e}"
            if s.get("gap") is None:
                out.append(f"  not scored: {what} (auto: {s['auto']}; near-best: {', '.join(c['near_best']) or 'none'})")
            elif id(c) not in near & fast & cheap:
                out.append(f"  {what}: {s['auto']} gap {s['gap']:.1e}, {s['time_ratio']:.2f}x {s['fastest_near_best']}, "
                           f"{s['auto_ratio_to_lr']:.1f}x LR")
    return out


def worst_table(cells, k=15):
    """Markdown table of the cells where auto is farthest from the fastest near-best method."""
    bad = [c for c in cells if c.get("score", {}).get("time_ratio") is not None]
    bad.sort(key=lambda c: (-(c["score"]["gap"] > TOL), -c["score"]["time_ratio"]))
    lines = ["| data | objective | constraints | K x G | n | auto | x LR | fastest near-best | x LR | time ratio | gap |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for c in bad[:k]:
        s = c["score"]
        lines.append(f"| {c['data']} | {c['objective']} | {c['constraints']} | {c['n_classes']} x {c['n_groups']} | "
                     f"{c['n']:.0e} | {s['auto']} | {s['auto_ratio_to_lr']:.1f} | {s['fastest_near_best']} | "
                     f"{s['fastest_ratio_to_lr']:.1f} | {s['time_ratio']:.2f} | {s['gap']:.1e} |")
    unscored = [c for c in cells if c.get("score", {}).get("time_ratio") is None and not c["score"]["ok"]]
    if unscored:
        lines.append("")
        lines.append("Not scored (auto's method did not finish within the limit, or no method was within 1e-3 of the best "
                     "on both train and held-out rows): " + "; ".join(
                         f"{c['objective']} + {c['constraints']}, {c['n_classes']} x {c['n_groups']}, n={c['n']:.0e} "
                         f"(auto: {c['score']['auto']}, "
                         f"{c['methods'].get(c['score']['auto'] or '', {}).get('status', 'refused')})" for c in unscored))
    return "\n".join(lines)


def save(cells, args, t0, old_seconds=0.0):
    pub = cells
    rows = [r for c in pub for r in rows_of(c)]
    ok = [c["score"]["ok"] for c in pub if "score" in c]
    record = {"script": "atlas.py", "machine": machine_record(), "versions": versions(),
              "seeds": [args.seed], "args": {k: v for k, v in vars(args).items()},
              "tolerance": TOL, "seconds": old_seconds + time.time() - t0,
              "summary": {"cells": len(pub), "auto_ok": int(sum(ok)),
                          "auto_not_near_best": [cell_id(c) for c in pub if c.get("score", {}).get("gap") is not None
                                                 and c["score"]["gap"] > TOL]},
              "rows": rows, "details": {"cells": [slim(c) for c in pub]}}
    keys = [(r["experiment"], r["dataset"], r["method"], r["split"], r["metric"]) for r in rows]
    assert len(set(keys)) == len(keys), "two cells share an experiment name and data label"
    write_results(args.out, rounded(record), indent=None)  # compact: thousands of rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="10^4 rows, 4 objectives x 3 families, binary and 4 classes")
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--objectives", nargs="+", default=OBJECTIVES, choices=OBJECTIVES)
    ap.add_argument("--constraints", nargs="+", default=FAMILIES, choices=FAMILIES)
    ap.add_argument("--classes", type=int, nargs="+", default=[2, 4])
    ap.add_argument("--groups", type=int, nargs="+", default=[2, 5])
    ap.add_argument("--real", nargs="*", default=None, choices=["adult", "compas", "bank_marketing"],
                    help="real data sets (binary, at their size); default: none")
    ap.add_argument("--no-synthetic", action="store_true")
    ap.add_argument("--cells", nargs="*", default=None,
                    help="only these cells, as objective:constraints:classes:groups:n (e.g. gmean:dp:2:2:100000)")
    ap.add_argument("--temperature", type=float, default=1.0, help="probability model's logits / T (1: calibrated)")
    ap.add_argument("--limit-ratio", type=float, default=400.0, help="a method stops after this many LR fits' seconds")
    ap.add_argument("--min-limit", type=float, default=30.0, help="... but never before this many seconds")
    ap.add_argument("--oracle", default=None, help="method_params['oracle'] of every method (default: the estimator's)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--resume", action="store_true", help="keep the cells already in --out; run the others")
    ap.add_argument("--rerun", nargs="+", default=None, choices=list(METHODS) + ["near-best"],
                    help="in the cells of --out that the other options select, run these methods again and keep "
                         "the other methods' records (see rerun_cell); 'near-best': auto's method and the "
                         "cell's near-best ones, all that its score reads")
    ap.add_argument("--replot", action="store_true", help="re-score --out with the current rule, write the PNG and table")
    ap.add_argument("--merge", type=Path, nargs="+", default=None,
                    help="add these files' cells to --out (same cell: the later file's), then --replot")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--png", type=Path, default=PNG)
    args = ap.parse_args(argv)
    if args.quick:
        args.sizes, args.objectives, args.constraints = [10_000], ["error", "gmean", "hmean", "f1"], ["none", "dp", "eodds"]
        args.groups, args.min_limit, args.limit_ratio = [2], 10.0, 200.0
    t0 = time.time()
    args.replot = args.replot or args.merge is not None
    old = json.loads(args.out.read_text()) if (args.resume or args.replot or args.rerun) and args.out.exists() else {}
    cells = load_cells(old)
    if args.merge:
        by = {cell_id(c): c for c in cells}
        for f in args.merge:
            by.update((cell_id(c), c) for c in load_cells(json.loads(f.read_text())))
        cells = list(by.values())
    if args.replot:
        for c in cells:
            score(c)
        save(cells, args, t0, old.get("seconds", 0.0))
        plot(cells, args.png)
        print(worst_table(cells))
        print(worst_table([c for c in cells if c["n"] >= 100_000 and c.get("oracle") is None]))
        print(class_table(cells) + "\n")
        print(rule_alternatives(cells) + "\n")
        print("\n".join(must_show(cells)))
        return
    done = {cell_id(c) for c in cells}
    by_id = {cell_id(c): c for c in cells}
    wanted = None if args.cells is None else {tuple(s.split(":")) for s in args.cells}
    datas = ([] if args.no_synthetic else ["synthetic"]) + list(args.real or [])
    for data in datas:
        shapes = ([(k, g, n) for n in args.sizes for k in args.classes for g in args.groups] if data == "synthetic"
                  else [(2, 2, None)])
        for k, g, n in shapes:
            todo = [(o, f) for o in args.objectives for f in args.constraints
                    if (wanted is None or (o, f, str(k), str(g), str(n)) in wanted)]
            label = data if args.temperature == 1 else f"{data}-T{args.temperature:g}"
            label += "" if args.oracle is None else f"-{args.oracle}"  # rows name the data and the oracle
            if data == "synthetic":
                keys = [{"data": label, "objective": o, "constraints": f, "n_classes": k, "n_groups": g, "n": n}
                        for o, f in todo]
            else:
                keys = [{"data": label, "objective": o, "constraints": f, "n_classes": 2, "n_groups": 2, "n": None}
                        for o, f in todo]
            if args.temperature != 1:
                keys = [dict(kk, temperature=args.temperature) for kk in keys]
            if args.oracle is not None:
                keys = [dict(kk, oracle=args.oracle) for kk in keys]
            # a run adds the cells not recorded yet; a re-run visits the recorded ones
            keys = [kk for kk in keys if kk["n"] is None or (cell_id(kk) in done) == bool(args.rerun)]
            if not keys:
                continue
            if data == "synthetic":
                P, Y, G, lr_s = synthetic_cell(n, k, g, args.seed, args.temperature)
            else:
                P, Y, G, lr_s = real_cell(data, args.temperature, args.seed)
                for kk in keys:
                    kk["n"] = len(Y["train"])
                keys = [kk for kk in keys if (cell_id(kk) in done) == bool(args.rerun)]
            print(f"{data} K={k} G={g} n={len(Y['train'])}: one LR fit {lr_s:.3f} s; {len(keys)} cells", flush=True)
            for key in keys:
                if args.rerun:
                    cell = by_id[cell_id(key)]
                    methods = [m for m in args.rerun if m != "near-best"]
                    if "near-best" in args.rerun:
                        score(cell)
                        methods += [m for m in [cell["score"]["auto"], *cell["near_best"]] if m and m not in methods]
                    rerun_cell(cell, methods, P, Y, G, lr_s, args.limit_ratio, args.min_limit, args.oracle)
                else:
                    cell = run_cell(key, P, Y, G, lr_s, args.limit_ratio, args.min_limit, args.oracle)
                    cells.append(cell)
                    done.add(cell_id(key))
                s = score(cell)
                print(f"  {key['objective']:>17} {key['constraints']:>9}: auto={s['auto']} "
                      f"ratio={s.get('time_ratio')} gap={s.get('gap')}", flush=True)
                save(cells, args, t0, old.get("seconds", 0.0))
    for c in cells:
        score(c)
    save(cells, args, t0, old.get("seconds", 0.0))
    plot(cells, args.png)
    print(worst_table(cells))


if __name__ == "__main__":
    main()
