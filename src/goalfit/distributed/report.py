"""The per-group rates of :func:`goalfit.report.build_report` on Dask data, reduced per partition."""
from __future__ import annotations


from ..goals import as_objective, per_group_rates
from .backend import expected_confusion


def group_rates(classes, classifiers: dict, X, y, sensitive_features, split) -> dict:
    """Per-group selection rate, TPR and FPR (binary) or per-class prediction rates.

    The layout of the report's group rates (:func:`goalfit.report.build_report`; no intervals), computed from the
    exact expected confusion tensors of every classifier in ``classifiers`` ({"goalfit": ...,
    "baseline": ...}), all in one pass over the partitions. Groups are listed in cell order.
    """
    tensors = dict(zip(classifiers, expected_confusion(list(classifiers.values()), classes, X, y,
                                                       sensitive_features)))
    _, space0 = next(iter(tensors.values()))
    out = {}
    for col in space0.cells.columns:
        groups = space0.column_values(col)
        rates = per_group_rates(classes, col)
        entry = {"groups": groups, "rates": list(rates), "split": split, "goalfit": {}, "baseline": {}}
        for who, (C, space) in tensors.items():
            for name, make in rates.items():
                vals = []
                for grp in groups:
                    try:
                        vals.append(float(as_objective(make(grp)).bind(space).value(C)))
                    except ValueError:
                        vals.append(float("nan"))
                entry[who][name] = vals
        out[col] = entry
    return out
