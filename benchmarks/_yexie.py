"""Helpers shared by the Ye & Xie benchmark scripts (yexie_*.py): data preparation, rows, output."""
from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

from _common import machine_record, versions

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


def write(script: str, rows: Rows, *, seeds, notes, started: float, extra_versions=(), details=None):
    """Write ``benchmarks/results/<script>.json``; returns the path."""
    RESULTS.mkdir(exist_ok=True)
    out = {"created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "seconds": time.time() - started,
           "machine": machine_record(), "versions": versions(*extra_versions), "seeds": seeds,
           "notes": notes, "details": details or {}, "rows": rows.rows}
    path = RESULTS / f"{script}.json"
    path.write_text(json.dumps(out, indent=1, default=float))
    return path
