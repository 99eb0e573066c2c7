"""Recognize Dask collections without importing Dask: the data backends' test, re-exported here."""
from __future__ import annotations

from ..fit.backends import is_dask_collection

__all__ = ["is_dask_collection"]
