"""Confusion statistics: cells (slices), label encoding and (expected) confusion matrices.

This is the one place where predictions meet labels. Everything above it (goals, methods,
reports) sees only stacked per-cell confusion tensors of shape ``(n_cells, n_classes, n_classes)``
(rows: true class, columns: predicted class; Narasimhan et al., JMLR 2024, Def. 1 and Def. 2).
"""
from .cells import CellEncoder, compact_codes, int_codes
from .matrices import (
    BatchConfusion,
    binary_confusion_tensors,
    confusion_matrix,
    confusion_tensor,
    expected_confusion_matrix,
    group_confusion_matrices,
)
from .space import ConfusionSpace

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
