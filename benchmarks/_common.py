"""What every benchmark script records about its run: the machine and the package versions."""
from __future__ import annotations

import os
import platform
import sys


def machine_record() -> dict:
    """Platform, Python, CPU model and count, affinity and BLAS/OpenMP thread pools."""
    rec = {"platform": platform.platform(), "python": sys.version.split()[0],
           "processor": platform.processor() or platform.machine(), "cpu_count": os.cpu_count()}
    try:
        with open("/proc/cpuinfo") as f:
            rec["cpu_model"] = next(ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name"))
    except (OSError, StopIteration):
        pass
    try:
        rec["sched_affinity_cpus"] = len(os.sched_getaffinity(0))
    except AttributeError:
        pass
    try:
        from threadpoolctl import threadpool_info

        rec["threadpools"] = [{k: d.get(k) for k in ("internal_api", "num_threads")} for d in threadpool_info()]
    except Exception:  # noqa: BLE001 - optional detail
        pass
    return rec


def versions(*extra: str) -> dict:
    """Versions of goalfit, its numeric stack and any ``extra`` importable packages."""
    import importlib

    out = {}
    for name in ("goalfit", "sklearn", "numpy", "scipy", "pandas", "matplotlib") + extra:
        mod = importlib.import_module(name)
        out["scikit-learn" if name == "sklearn" else name] = getattr(mod, "__version__", "?")
    return out


def half_width(values):
    """95% half-width ``2 std / sqrt(n)`` (the paper's ± convention), or None for one value."""
    import numpy as np

    v = np.asarray(values, float)
    return float(2 * v.std() / np.sqrt(v.size)) if v.size > 1 else None


def merge_previous(path, rows, details):
    """``--merge``: the rows and details of the experiments not re-run, from an earlier results
    file at ``path``, with the new ones. Returns ``(rows, details, old record)``."""
    import json
    from pathlib import Path

    old = json.loads(Path(path).read_text()) if Path(path).exists() else {}
    done = {r["experiment"] for r in rows}
    rows = [r for r in old.get("rows", []) if r["experiment"] not in done] + rows
    return rows, {**old.get("details", {}), **details}, old


def write_results(path, record, indent=1):
    """Write ``record`` (with its ``seconds``) as JSON at ``path``, creating the folder; say so
    (``indent=None``: compact, for a results file of thousands of rows)."""
    import json
    from pathlib import Path

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # compact: no spaces after the separators either (a tenth of a large file)
    separators = (",", ":") if indent is None else None
    path.write_text(json.dumps(record, indent=indent, separators=separators, default=str))
    print(f"wrote {path} ({record['seconds']:.0f} s)")


def save_run(benchmark, t0, quick, **fields):
    """Write ``results/<benchmark>.json`` next to this file: the benchmark's name, when it ran, its
    seconds since ``t0`` (``time.perf_counter()``), ``quick``, the machine and the versions, then
    ``fields`` (``summary``, ``per_seed``, ``rows``, ...)."""
    import time
    from pathlib import Path

    write_results(Path(__file__).resolve().parent / "results" / f"{benchmark}.json",
                  {"benchmark": benchmark, "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                   "seconds": time.perf_counter() - t0, "quick": quick, "machine": machine_record(),
                   "versions": versions(), **fields})
