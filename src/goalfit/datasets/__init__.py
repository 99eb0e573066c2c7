"""Benchmark datasets for fair / constrained classification.

Every ``load_<name>`` function returns a :class:`Dataset` with features
(``data``), labels (``target``: binary tasks as int 0/1, multiclass tasks as
their class labels) and protected attributes (``sensitive_features``).

Data files are looked up as ``<root>/<folder>/<file>`` in, in order, the
``data_home`` argument, the folder(s) in ``$GOALFIT_DATA`` and the user cache
(``$XDG_CACHE_HOME/goalfit`` or ``~/.cache/goalfit``); Adult also ships inside
the package (a gzip copy of the original files, read last, with no network).
A folder named in ``$GOALFIT_DATA`` that does not exist is an error.  Missing files are
downloaded (``download=True``, the default) from their public source, or from
``$GOALFIT_DOWNLOAD_MIRROR/<folder>/<file>`` when that variable is set, and
checked against the sha256 and size recorded in the registry.  Some files have
no public byte-identical copy and can only come from a local folder or a mirror;
each loader's docstring says which.

Examples
--------
>>> from goalfit.datasets import load_adult          # doctest: +SKIP
>>> ds = load_adult(subset="train")                  # doctest: +SKIP
>>> ds.data.shape, int(ds.target.sum())              # doctest: +SKIP
((32561, 14), 7841)
>>> ds.sensitive_features.columns.tolist()           # doctest: +SKIP
['sex', 'race', 'age']
"""

from ._base import (
    Dataset,
    DatasetChecksumError,
    DatasetDownloadError,
    DatasetNotFoundError,
    dataset_status,
    get_data_home,
)
from ._loaders import (
    list_datasets,
    load_a9a,
    load_abalone,
    load_adult,
    load_bank_marketing,
    load_communities,
    load_compas,
    load_credit_default,
    load_credit_taiwan_fairml,
    load_dataset,
    load_german,
    load_glass,
    load_law_school,
    load_letter,
    load_pageblocks,
    load_recidivism,
    load_satimage,
    load_segment,
    load_shuttle,
    load_student_performance,
    load_vehicle,
    load_wine,
    load_wine_quality,
    load_yeast,
)
from ._synthetic import make_jiang_simulated

__all__ = [
    "Dataset",
    "DatasetChecksumError",
    "DatasetDownloadError",
    "DatasetNotFoundError",
    "dataset_status",
    "get_data_home",
    "list_datasets",
    "load_a9a",
    "load_abalone",
    "load_adult",
    "load_bank_marketing",
    "load_communities",
    "load_compas",
    "load_credit_default",
    "load_credit_taiwan_fairml",
    "load_dataset",
    "load_german",
    "load_glass",
    "load_law_school",
    "load_letter",
    "load_pageblocks",
    "load_recidivism",
    "load_satimage",
    "load_segment",
    "load_shuttle",
    "load_student_performance",
    "load_vehicle",
    "load_wine",
    "load_wine_quality",
    "load_yeast",
]
__all__ += ["make_jiang_simulated"]
