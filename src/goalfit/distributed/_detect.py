"""Recognize Dask collections without importing Dask (an optional dependency)."""
from __future__ import annotations


def is_dask_collection(obj) -> bool:
    """Whether ``obj`` is a Dask collection (array, DataFrame, Series, ...).

    Cheap for every other input: Dask is imported only when the object's type comes from it.
    """
    if not type(obj).__module__.startswith("dask"):
        return False
    import dask

    return dask.is_dask_collection(obj)

