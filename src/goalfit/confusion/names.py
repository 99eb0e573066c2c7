"""Names shared by the confusion statistics and the goals (no heavy imports: the goal vocabulary reads them)."""
from __future__ import annotations

#: The slicing column that names the datasets of a multi-dataset problem.
DATASET_COLUMN = "dataset"
#: The name of the training data passed as ``X, y``.
TRAIN = "train"
#: The value of a slicing column on a dataset that does not give it.
ABSENT = "<not given>"


def unknown_column(column, columns) -> str:
    """The message for a goal naming a slicing column the data does not have."""
    if not list(columns):
        return (f"a goal names the sensitive feature {column!r}, but the data has no sensitive features: pass "
                f"sensitive_features=... to fit (a column {column!r}, or a DataFrame / dict holding it)")
    return f"unknown sensitive feature {column!r}; known: {list(columns)}"
