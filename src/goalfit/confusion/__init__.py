"""Confusion statistics: cells (slices), label encoding and (expected) confusion matrices.

This is the one place where predictions meet labels. Everything above it (goals, methods,
reports) sees only stacked per-cell confusion tensors of shape ``(n_cells, n_classes, n_classes)``
(rows: true class, columns: predicted class; Narasimhan et al., JMLR 2024, Def. 1 and Def. 2).
"""
from ..utils.lazy import lazy_attributes

#: name -> module: loaded on first use (the goal vocabulary imports this package's names module
#: without pandas).
_EXPORTS = {"CellEncoder": "cells", "compact_codes": "cells", "int_codes": "cells", "ConfusionSpace": "space",
            "BatchConfusion": "matrices", "binary_confusion_tensors": "matrices", "confusion_matrix": "matrices",
            "confusion_tensor": "matrices", "expected_confusion_matrix": "matrices",
            "group_confusion_matrices": "matrices"}


__getattr__ = lazy_attributes(__name__, _EXPORTS)

__all__ = [
    "BatchConfusion",
    "binary_confusion_tensors",
    "CellEncoder",
    "compact_codes",
    "int_codes",
    "ConfusionSpace",
    "confusion_matrix",
    "confusion_tensor",
    "expected_confusion_matrix",
    "group_confusion_matrices",
]
