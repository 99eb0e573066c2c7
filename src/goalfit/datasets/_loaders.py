"""One loader per dataset; shared reading/cleaning helpers live at the top."""

from __future__ import annotations

import os
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ._base import Dataset, fetch_file
from ._registry import REGISTRY

__all__ = [
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

PathLike = str | os.PathLike[str] | None
Subset = Literal["train", "test", "all"]
Parts = tuple[Any, pd.Series, pd.DataFrame]  # features, target, sensitive features

# =========================================================================== helpers


def _path(folder: str, name: str, data_home: PathLike, download: bool) -> Path:
    return fetch_file(folder, name, data_home=data_home, download=download)


def _check_choice(value: Any, param: str, choices: Sequence[Any]) -> None:
    if value not in choices:
        raise ValueError(f"{param} must be one of {list(choices)}, got {value!r}")


def _categorize(df: pd.DataFrame) -> pd.DataFrame:
    """String/object columns -> ``category`` (missing values stay NaN)."""
    out = df.copy()
    for col in out.columns:
        s = out[col]
        if pd.api.types.is_object_dtype(s.dtype) or pd.api.types.is_string_dtype(s.dtype):
            out[col] = s.astype("category")
    return out


def _integral_floats_to_int(df: pd.DataFrame) -> pd.DataFrame:
    """Float columns holding only whole numbers (e.g. written as ``5e+05``) -> int64."""
    out = df.copy()
    for col in out.columns:
        s = out[col]
        if pd.api.types.is_float_dtype(s.dtype) and s.notna().all() and (s == np.round(s)).all():
            out[col] = s.astype("int64")
    return out


def _binary(values: pd.Series, positive: Any, negative: Any, name: str) -> pd.Series:
    """Map a two-valued column to int 0/1 (1 = ``positive``), refusing other values."""
    unexpected = set(pd.unique(values)) - {positive, negative}
    if unexpected:
        raise ValueError(f"unexpected values for label {name!r}: {sorted(map(str, unexpected))}")
    return values.eq(positive).astype("int64").rename(name)


def _recode(values: pd.Series, mapping: dict[Any, str], other: str | None = None) -> pd.Series:
    """Human-readable labels for a coded column; codes outside ``mapping`` -> ``other``."""
    out = values.map(mapping)
    if other is not None:
        out = out.fillna(other)
    elif out.isna().any():
        bad = sorted(map(str, pd.unique(values[out.isna()])))
        raise ValueError(f"unexpected codes in column {values.name!r}: {bad}")
    return out.astype(str)


def _make(
    name: str,
    X: Any,
    y: pd.Series,
    sensitive: pd.DataFrame | None,
    description: str,
    subset: np.ndarray | None = None,
) -> Dataset:
    """Assemble a :class:`Dataset` (fresh RangeIndex everywhere, string columns as category)."""
    y = y.reset_index(drop=True)
    if isinstance(X, pd.DataFrame):
        X = _categorize(X.reset_index(drop=True))
    if sensitive is None:
        sensitive = pd.DataFrame(index=y.index)
    else:
        sensitive = _categorize(sensitive.reset_index(drop=True))
    return Dataset(name, X, y, sensitive, description, subset)


def _split(subset: str, read_part: Callable[[str], Parts]) -> tuple[Any, pd.Series, pd.DataFrame, Any]:
    """Read the official ``train``/``test`` part(s); ``"all"`` stacks train then test."""
    _check_choice(subset, "subset", ("train", "test", "all"))
    if subset != "all":
        X, y, S = read_part(subset)
        return X, y, S, None
    parts = [read_part("train"), read_part("test")]
    Xs = [p[0] for p in parts]
    X = sp.vstack(Xs, format="csr") if sp.issparse(Xs[0]) else pd.concat(Xs, ignore_index=True)
    y = pd.concat([p[1] for p in parts], ignore_index=True)
    S = pd.concat([p[2] for p in parts], ignore_index=True)
    which = np.repeat(np.array(["train", "test"]), [len(parts[0][1]), len(parts[1][1])])
    return X, y, S, which


def _describe(folder: str, text: str) -> str:
    spec = REGISTRY[folder]
    files = ", ".join(f"{folder}/{f}" for f in spec.required_files)
    return f"{spec.title}.\n{text.strip()}\nFiles (sha256-checked): {files}."


@dataclass(frozen=True)
class _Table:
    """How to read one delimited file into (features, label)."""

    file: str
    label: str
    read_kwargs: dict[str, Any] = field(default_factory=dict)
    drop: tuple[str, ...] = ()


def _read_table(folder: str, table: _Table, data_home: PathLike, download: bool) -> tuple[pd.DataFrame, pd.Series]:
    df = pd.read_csv(_path(folder, table.file, data_home, download), **table.read_kwargs)
    y = df.pop(table.label)
    return df.drop(columns=list(table.drop)), y


# --------------------------------------------------------------------------- docstrings
_PARAMS = """data_home : str or path-like, optional
    Folder searched first for ``<folder>/<file>``; then ``$GOALFIT_DATA``,
    then the user cache (``$XDG_CACHE_HOME/goalfit`` or ``~/.cache/goalfit``).
    Downloads go to ``data_home`` when given, else to the user cache.
download : bool, default=True
    Download missing files (from ``$GOALFIT_DOWNLOAD_MIRROR/<folder>/<file>``
    when that variable is set, else from the public URL listed in the Notes);
    every file is checked against its registered size and sha256."""

_RETURNS = """Dataset
    ``name``, ``data``, ``target``, ``sensitive_features``, ``description``,
    ``subset`` (see :class:`goalfit.datasets.Dataset`)."""

_RAISES = """DatasetNotFoundError
    A file is missing and ``download=False``, or it has no public URL (see
    Notes) and ``GOALFIT_DOWNLOAD_MIRROR`` is not set.  The message names the
    file, the folder, ``GOALFIT_DATA`` and the ``data_home`` argument.
DatasetDownloadError
    The download failed (subclass of ``DatasetNotFoundError``).
DatasetChecksumError
    A local or downloaded file differs from its registered size/sha256
    (a bad download is deleted).
ValueError
    An invalid option value."""


def _files_note(folder: str) -> str:
    lines = []
    for f in REGISTRY[folder].files.values():
        if not f.required:
            continue
        where = (
            f"downloaded from ``{f.url}``"
            if f.url
            else f"cannot be downloaded ({f.note}); use a local copy or a mirror"
        )
        text = f"* ``{folder}/{f.name}`` ({f.size:,} bytes, sha256 ``{f.sha256[:16]}...``): {where}."
        lines.append(textwrap.fill(text, width=76, subsequent_indent="  ", break_on_hyphens=False,
                                   break_long_words=False))
    return "\n".join(lines)


def _indent(block: str, width: int = 4) -> str:
    return block.replace("\n", "\n" + " " * width)


def _doc(folder: str) -> Callable[[Callable[..., Dataset]], Callable[..., Dataset]]:
    """Fill the shared ``{params}``, ``{returns}``, ``{raises}`` and ``{files}`` blocks."""

    def deco(func: Callable[..., Dataset]) -> Callable[..., Dataset]:
        doc = func.__doc__ or ""
        for token, block in (
            ("{params}", _PARAMS),
            ("{returns}", _RETURNS),
            ("{raises}", _RAISES),
            ("{files}", _files_note(folder)),
        ):
            doc = doc.replace(token, _indent(block))
        func.__doc__ = doc
        return func

    return deco


# =========================================================================== fairness datasets

_ADULT_COLUMNS = [
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
    "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country",
    "income",
]


@_doc("adult")
def load_adult(*, subset: Subset = "train", data_home: PathLike = None, download: bool = True) -> Dataset:
    """Load UCI Adult (census income).

    Parameters
    ----------
    subset : {"train", "test", "all"}, default="train"
        ``"train"``: ``adult.data`` (32,561 rows); ``"test"``: ``adult.test``
        (16,281 rows); ``"all"``: train then test (48,842 rows) with
        ``Dataset.subset`` giving each row's part.
    {params}

    Returns
    -------
    {returns}

    Raises
    ------
    {raises}

    Notes
    -----
    * ``data``: the 14 attributes (age, workclass, fnlwgt, education,
      education-num, marital-status, occupation, relationship, race, sex,
      capital-gain, capital-loss, hours-per-week, native-country), sensitive
      columns included.  ``?`` is read as missing (NaN) and kept (train: 1,836
      workclass, 1,843 occupation, 583 native-country); string columns are
      ``category`` dtype (categories are those present in the loaded rows).
    * ``target`` ``income``: 1 = ``>50K`` (train 7,841 / 32,561; test 3,846 /
      16,281), 0 = ``<=50K``.  The test file's banner line
      (``|1x3 Cross validator``) and its labels' trailing ``.`` are handled.
    * ``sensitive_features``: ``sex`` (Male/Female), ``race`` (White, Black,
      Asian-Pac-Islander, Amer-Indian-Eskimo, Other), ``age`` (years).
    * Source: original UCI files (Becker & Kohavi 1996, CC BY 4.0; Kohavi 1996).
    * A gzip copy of both files ships inside the package
      (``goalfit/datasets/data``, licence and source in its SOURCE.md); it is
      read when ``data_home``, ``$GOALFIT_DATA`` and the user cache hold no
      Adult, with no download, and is checked against the same sha256, so it
      gives the same rows, columns and train/test split.

    {files}
    """

    def part(which: str) -> Parts:
        name = "adult.data" if which == "train" else "adult.test"
        df = pd.read_csv(
            _path("adult", name, data_home, download), header=None, names=_ADULT_COLUMNS,
            skipinitialspace=True, na_values="?", comment="|",
        )
        y = _binary(df.pop("income").str.rstrip("."), ">50K", "<=50K", "income")
        return df, y, df[["sex", "race", "age"]]

    X, y, S, which = _split(subset, part)
    desc = _describe("adult", "Label income: 1 = >50K. Sensitive: sex, race, age. '?' kept as NaN.")
    return _make("adult", X, y, S, desc, which)


_A9A_SEX = {71: "Female", 72: "Male"}  # 0-based columns of 1-based features 72 / 73
_A9A_RACE = {66: "White", 67: "Asian-Pac-Islander", 68: "Amer-Indian-Eskimo", 69: "Other", 70: "Black"}


def _indicator_labels(X: sp.csr_matrix, columns: dict[int, str], what: str) -> pd.Series:
    """Decode a one-hot block of ``X`` (exactly one 1 per row) into labels."""
    block = X[:, list(columns)].toarray()
    if not np.all(block.sum(axis=1) == 1):
        raise ValueError(f"a9a: the {what} indicator features are not one-hot on every row")
    return pd.Series(np.asarray(list(columns.values()))[block.argmax(axis=1)], name=what)


@_doc("a9a")
def load_a9a(*, subset: Subset = "train", data_home: PathLike = None, download: bool = True) -> Dataset:
    """Load LIBSVM a9a (Platt's binarized UCI Adult, 123 binary features).

    Parameters
    ----------
    subset : {"train", "test", "all"}, default="train"
        ``"train"``: ``a9a`` (32,561 rows); ``"test"``: ``a9a.t`` (16,281
        rows); ``"all"``: both stacked, with ``Dataset.subset``.
    {params}

    Returns
    -------
    {returns}

    Raises
    ------
    {raises}

    Notes
    -----
    * ``data``: ``scipy.sparse.csr_matrix`` of shape (n, 123), float64 0/1,
      read with ``sklearn.datasets.load_svmlight_file(path, n_features=123,
      zero_based=False)`` (the test file never uses feature 123), with 32-bit
      indices (as liblinear requires).  LIBSVM
      feature ``k`` (1-based) is column ``k - 1``.
    * ``target`` ``income``: 1 = label ``+1`` (income >50K; train 7,841, test
      3,846), 0 = ``-1``.
    * ``sensitive_features``: ``sex`` from features 72 (Female) / 73 (Male),
      ``race`` from features 67 White, 68 Asian-Pac-Islander,
      69 Amer-Indian-Eskimo, 70 Other, 71 Black.  Rows are in the order of
      ``adult.data`` / ``adult.test`` and these columns equal Adult's sex and
      race row by row.
    * Source: LIBSVM binary datasets page ("a9a"), from UCI Adult.

    {files}
    """
    from sklearn.datasets import load_svmlight_file

    def part(which: str) -> Parts:
        name = "a9a" if which == "train" else "a9a.t"
        X, labels = load_svmlight_file(
            str(_path("a9a", name, data_home, download)), n_features=123, zero_based=False
        )
        X = sp.csr_matrix(X)
        # 32-bit indices: scikit-learn's liblinear models (LinearSVC, LogisticRegression with
        # liblinear) refuse the 64-bit indices load_svmlight_file can return
        X.indices, X.indptr = X.indices.astype(np.int32), X.indptr.astype(np.int32)
        y = _binary(pd.Series(labels), 1.0, -1.0, "income")
        S = pd.concat([_indicator_labels(X, _A9A_SEX, "sex"), _indicator_labels(X, _A9A_RACE, "race")], axis=1)
        return X, y, S

    X, y, S, which = _split(subset, part)
    desc = _describe("a9a", "Label: 1 = +1 (income >50K). Sensitive: sex (features 72/73), race (67-71).")
    return _make("a9a", X, y, S, desc, which)


_COMPAS_FEATURES = [
    "sex", "age", "age_cat", "race", "juv_fel_count", "juv_misd_count", "juv_other_count",
    "priors_count", "c_charge_degree",
]


def _propublica_filter(df: pd.DataFrame) -> pd.DataFrame:
    """ProPublica's analysis filter (7,214 -> 6,172 rows), original order kept."""
    keep = (
        df["days_b_screening_arrest"].between(-30, 30)
        & df["is_recid"].ne(-1)
        & df["c_charge_degree"].ne("O")
        & df["score_text"].notna()  # pandas reads the literal "N/A" as NaN
        & df["score_text"].ne("N/A")
    )
    return df.loc[keep]


@_doc("compas")
def load_compas(*, data_home: PathLike = None, download: bool = True) -> Dataset:
    """Load ProPublica's COMPAS two-year recidivism data (Broward County).

    Parameters
    ----------
    {params}

    Returns
    -------
    {returns}

    Raises
    ------
    {raises}

    Notes
    -----
    * Rows: ``compas-scores-two-years.csv`` (7,214) after ProPublica's filter
      ``days_b_screening_arrest`` in [-30, 30], ``is_recid != -1``,
      ``c_charge_degree != "O"``, ``score_text != "N/A"`` -> 6,172 rows.
    * ``data``: sex, age, age_cat, race, juv_fel_count, juv_misd_count,
      juv_other_count, priors_count, c_charge_degree (F/M).  No COMPAS scores,
      names, ids or dates.
    * ``target`` ``two_year_recid``: 1 = re-offended within two years (2,809),
      0 = did not (3,363).  Note that 1 is the adverse outcome.
    * ``sensitive_features``: ``race`` (African-American 3,175, Caucasian
      2,103, Hispanic 509, Other 343, Asian 31, Native American 11), ``sex``
      (Male 4,997 / Female 1,175), ``age_cat``.
    * Source: ``propublica/compas-analysis`` (Angwin et al. 2016).

    {files}
    """
    df = _propublica_filter(pd.read_csv(_path("compas", "compas-scores-two-years.csv", data_home, download)))
    y = df["two_year_recid"].astype("int64")
    desc = _describe(
        "compas",
        "ProPublica filter -> 6,172 rows. Label two_year_recid: 1 = re-offended within two years. "
        "Sensitive: race, sex, age_cat. No COMPAS scores in the features.",
    )
    return _make("compas", df[_COMPAS_FEATURES], y, df[["race", "sex", "age_cat"]], desc)


_CREDIT_SEX = {1: "Male", 2: "Female"}
_CREDIT_EDUCATION = {1: "graduate school", 2: "university", 3: "high school"}
_CREDIT_MARRIAGE = {1: "married", 2: "single", 3: "others"}


@_doc("credit_default")
def load_credit_default(*, data_home: PathLike = None, download: bool = True) -> Dataset:
    """Load Default of Credit Card Clients (Taiwan, Yeh & Lien 2009).

    Parameters
    ----------
    {params}

    Returns
    -------
    {returns}

    Raises
    ------
    {raises}

    Notes
    -----
    * 30,000 rows.  ``data``: the 23 UCI attributes (LIMIT_BAL, SEX, EDUCATION,
      MARRIAGE, AGE, PAY_0, PAY_2..PAY_6, BILL_AMT1..6, PAY_AMT1..6) with their
      original integer codes; ``ID`` is dropped.  The CSV was written by R
      (values such as ``5e+05``); whole-number columns are returned as int64.
    * ``target`` ``default.payment.next.month``: 1 = default (6,636), 0 = no
      default (23,364).  1 is the adverse outcome.
    * ``sensitive_features``: ``SEX`` (Male 11,888 / Female 18,112),
      ``EDUCATION`` (graduate school, university, high school, other/unknown
      for the codes 0/4/5/6), ``MARRIAGE`` (married, single, others, unknown for
      the undocumented code 0), ``AGE`` (years).
    * Source: Kaggle/UCI ``UCI_Credit_Card.csv``.

    {files}
    """
    df = pd.read_csv(_path("credit_default", "UCI_Credit_Card.csv", data_home, download))
    df = _integral_floats_to_int(df.drop(columns=["ID"]))
    y = df.pop("default.payment.next.month").astype("int64")
    S = pd.DataFrame({
        "SEX": _recode(df["SEX"], _CREDIT_SEX),
        "EDUCATION": _recode(df["EDUCATION"], _CREDIT_EDUCATION, other="other/unknown"),
        "MARRIAGE": _recode(df["MARRIAGE"], _CREDIT_MARRIAGE, other="unknown"),
        "AGE": df["AGE"],
    })
    desc = _describe(
        "credit_default",
        "Label default.payment.next.month: 1 = default. Sensitive: SEX, EDUCATION, MARRIAGE, AGE.",
    )
    return _make("credit_default", df, y, S, desc)


_COMMUNITIES_NON_PREDICTIVE = ["state", "county", "community", "communityname", "fold"]
_COMMUNITIES_MAX_MISSING = 0.5


def _arff_attribute_names(path: Path) -> list[str]:
    """Column names from the ``@attribute <name> <type>`` lines of a UCI .names file."""
    with open(path, encoding="latin-1") as fh:
        return [line.split()[1] for line in fh if line.lower().startswith("@attribute")]


#: the race-share columns of Communities and Crime behind its ``*_share`` sensitive features
_COMMUNITIES_SHARES = {"black_share": "racepctblack", "white_share": "racePctWhite",
                       "asian_share": "racePctAsian", "hispanic_share": "racePctHisp"}


@_doc("communities")
def load_communities(
    *, binarize: bool = True, data_home: PathLike = None, download: bool = True
) -> Dataset:
    """Load UCI Communities and Crime (normalized version).

    Parameters
    ----------
    binarize : bool, default=True
        ``True``: ``target`` is 1 when ``ViolentCrimesPerPop`` is strictly above
        its 70th percentile (0.28), else 0 (583 positives of 1,994).
        ``False``: the continuous ``ViolentCrimesPerPop`` in [0, 1].
    {params}

    Returns
    -------
    {returns}

    Raises
    ------
    {raises}

    Notes
    -----
    * Column names are read from the ``@attribute`` lines of
      ``communities.names``; ``?`` is missing.
    * Preprocessing: the 5 non-predictive columns (state, county, community,
      communityname, fold) are dropped; the 22 columns missing in more than
      half of the rows (the LEMAS police statistics, 1,675 of 1,994 missing
      each) are dropped; the one remaining missing value (``OtherPerCap``, 1
      row) is imputed with the column median.  Result: 1,994 rows x 100
      numeric features.
    * ``sensitive_features``: ``race`` = ``"high_black_share"`` when
      ``racepctblack`` is above its median (0.06; 970 communities), else
      ``"low_black_share"`` (1,024), as in Kearns et al. (2018) and Narasimhan
      et al.; ``racepctblack`` (the normalized share itself).  The threshold
      is the median, so the groups are not "majority Black" communities.
      ``black_share``, ``white_share``, ``asian_share``, ``hispanic_share``:
      ``"high"`` when ``racepctblack``, ``racePctWhite``, ``racePctAsian``,
      ``racePctHisp`` is above its median, else ``"low"``: eight overlapping
      groups (e.g. ``{"asian_share": "high"}``; ``black_share`` is the split
      of ``race`` under other labels), one per column and value, for
      goals stated on every group at once (each group's FPR <= the overall
      FPR on eight race groups is the goal of TFCO's
      ``Generalization_communities`` notebook, Cotter et al., ICML 2019; the
      median cut points are this loader's choice).
    * Source: UCI (Redmond & Baveja 2002).

    {files}
    """
    names_path = _path("communities", "communities.names", data_home, download)
    data_path = _path("communities", "communities.data", data_home, download)
    df = pd.read_csv(data_path, header=None, names=_arff_attribute_names(names_path), na_values="?")
    df = df.drop(columns=_COMMUNITIES_NON_PREDICTIVE)
    df = df.loc[:, df.isna().mean() <= _COMMUNITIES_MAX_MISSING]
    df = df.fillna(df.median(numeric_only=True))
    y = df.pop("ViolentCrimesPerPop")
    if binarize:
        y = (y > y.quantile(0.7)).astype("int64")
    black = df["racepctblack"]
    S = pd.DataFrame({
        "race": np.where(black > black.median(), "high_black_share", "low_black_share"),
        "racepctblack": black,
    })
    for name, col in _COMMUNITIES_SHARES.items():
        S[name] = np.where(df[col] > df[col].median(), "high", "low")
    desc = _describe(
        "communities",
        "Dropped 5 non-predictive and 22 mostly-missing columns, median-imputed 1 value. "
        + ("Label: ViolentCrimesPerPop > 70th percentile. " if binarize else "Label: ViolentCrimesPerPop. ")
        + "Sensitive: race (racepctblack above/below its median), racepctblack, and each of the four race "
        "shares above/below its median (black_share, white_share, asian_share, hispanic_share).",
    )
    return _make("communities", df, y, S, desc)


_LAW_SEX = {1: "Female", 2: "Male"}


@_doc("law_school")
def load_law_school(*, data_home: PathLike = None, download: bool = True) -> Dataset:
    """Load the LSAC bar passage data in the version of Kusner et al. (2017).

    Parameters
    ----------
    {params}

    Returns
    -------
    {returns}

    Raises
    ------
    {raises}

    Notes
    -----
    * 21,791 rows.  ``data``: race, sex (coded 1/2), LSAT, UGPA, region_first,
      ZFYA, sander_index; the unnamed row-index column is dropped.
    * ``target`` ``first_pf``: 1 = passed the bar exam on the first try
      (19,360), 0 = did not (2,431).
    * ``sensitive_features``: ``race`` (White, Black, Asian, Hispanic,
      Mexican, Other, Puertorican, Amerindian), ``race_binary`` (Black 1,282 /
      Other 20,509), ``sex`` (Female for code 1: 9,537, Male for code 2:
      12,254; the coding is undocumented in the file and follows Kusner et
      al.'s ``law_school_classifiers.R``).
    * Source: ``law_data.csv`` linked from Kusner et al.'s
      counterfactual-fairness repository; Wightman (1998).

    {files}
    """
    df = pd.read_csv(_path("law_school", "law_data.csv", data_home, download), index_col=0)
    y = df.pop("first_pf").astype("int64")
    S = pd.DataFrame({
        "race": df["race"],
        "race_binary": np.where(df["race"].eq("Black"), "Black", "Other"),
        "sex": _recode(df["sex"], _LAW_SEX),
    })
    desc = _describe(
        "law_school",
        "Label first_pf: 1 = passed the bar on the first try. Sensitive: race, race_binary "
        "(Black/Other), sex (1 = Female, 2 = Male).",
    )
    return _make("law_school", df, y, S, desc)


_GERMAN_COLUMNS = [  # attribute names of german.doc, in file order
    "checking_status", "duration_months", "credit_history", "purpose", "credit_amount", "savings",
    "employment_since", "installment_rate", "personal_status_sex", "other_debtors", "residence_since",
    "property", "age", "other_installment_plans", "housing", "existing_credits", "job",
    "people_liable", "telephone", "foreign_worker", "credit",
]


@_doc("german")
def load_german(*, data_home: PathLike = None, download: bool = True) -> Dataset:
    """Load Statlog German Credit (categorical version, ``german.data``).

    Parameters
    ----------
    {params}

    Returns
    -------
    {returns}

    Raises
    ------
    {raises}

    Notes
    -----
    * 1,000 rows x 20 attributes named after ``german.doc`` (checking_status,
      duration_months, credit_history, purpose, credit_amount, savings,
      employment_since, installment_rate, personal_status_sex, other_debtors,
      residence_since, property, age, other_installment_plans, housing,
      existing_credits, job, people_liable, telephone, foreign_worker); the 13
      qualitative attributes keep their codes (``A11`` ...) as categories.
    * ``target`` ``credit``: 1 = good (file code 1, 700 rows), 0 = bad (code 2,
      300 rows).  ``german.doc`` gives a cost matrix (bad predicted good costs 5).
    * ``sensitive_features``: ``sex`` (Female iff personal_status_sex is
      ``A92``: 310; Male: 690), ``age`` (years), ``age_group`` (``"over_25"``
      / ``"25_or_under"``), ``foreign_worker`` (``"yes"`` for A201 /
      ``"no"`` for A202).
    * Source: UCI Statlog (Hofmann).

    {files}
    """
    df = pd.read_csv(_path("german", "german.data", data_home, download), sep=" ", header=None, names=_GERMAN_COLUMNS)
    y = _binary(df.pop("credit"), 1, 2, "credit")
    S = pd.DataFrame({
        "sex": np.where(df["personal_status_sex"].eq("A92"), "Female", "Male"),
        "age": df["age"],
        "age_group": np.where(df["age"] > 25, "over_25", "25_or_under"),
        "foreign_worker": _recode(df["foreign_worker"], {"A201": "yes", "A202": "no"}),
    })
    desc = _describe(
        "german",
        "Label credit: 1 = good, 0 = bad. Sensitive: sex (Female iff A92), age, age_group (> 25), "
        "foreign_worker.",
    )
    return _make("german", df, y, S, desc)


def _age_group(age: pd.Series) -> np.ndarray:
    return np.select([age < 25, age > 60], ["under_25", "over_60"], default="25_to_60")


@_doc("bank_marketing")
def load_bank_marketing(
    *, drop_duration: bool = True, data_home: PathLike = None, download: bool = True
) -> Dataset:
    """Load UCI Bank Marketing (``bank-full.csv``, Moro et al.).

    Parameters
    ----------
    drop_duration : bool, default=True
        Drop ``duration`` (length of the last call): it is only known after
        the call and leaks the label.
    {params}

    Returns
    -------
    {returns}

    Raises
    ------
    {raises}

    Notes
    -----
    * 45,211 rows.  ``data``: age, job, marital, education, default, balance,
      housing, loan, contact, day, month, (duration,) campaign, pdays,
      previous, poutcome (16 columns, 15 with ``drop_duration``).  ``unknown``
      is kept as a category value.
    * ``target`` ``y``: 1 = subscribed a term deposit (5,289), 0 = no (39,922).
    * ``sensitive_features``: ``age_group`` (``"under_25"`` for age < 25,
      ``"over_60"`` for age > 60, else ``"25_to_60"``), ``marital``.
    * Source: UCI (Moro, Cortez & Rita).

    {files}
    """
    df = pd.read_csv(_path("bank_marketing", "bank-full.csv", data_home, download), sep=";")
    y = _binary(df.pop("y"), "yes", "no", "y")
    if drop_duration:
        df = df.drop(columns=["duration"])
    S = pd.DataFrame({"age_group": _age_group(df["age"]), "marital": df["marital"]})
    desc = _describe(
        "bank_marketing",
        "Label y: 1 = subscribed. " + ("duration dropped. " if drop_duration else "")
        + "Sensitive: age_group (<25, 25-60, >60), marital.",
    )
    return _make("bank_marketing", df, y, S, desc)


_RECID_RACE = {1: "African-American", 0: "Caucasian"}
_RECID_SEX = {1: "Male", 0: "Female"}


@_doc("recidivism")
def load_recidivism(*, data_home: PathLike = None, download: bool = True) -> Dataset:
    """Load FairML's Recidivism data (Olfat & Aswani; used by Ye & Xie).

    Parameters
    ----------
    {params}

    Returns
    -------
    {returns}

    Raises
    ------
    {raises}

    Notes
    -----
    * 5,278 rows: ProPublica's COMPAS filter (see :func:`load_compas`)
      restricted to African-American and Caucasian defendants, original row
      order.  ``data``: age, agesq, priors_count, sexbin (1 = male), chargebin
      (1 = felony), jailtime (days), racebin (1 = African-American).
    * ``target`` ``is_recid``: ProPublica's ``is_recid`` (not
      ``two_year_recid``): 1 = re-offended (2,647), 0 = not (2,631).
    * ``sensitive_features``: ``race`` (African-American 3,175 / Caucasian
      2,103, from racebin), ``sex`` (Male 4,247 / Female 1,031, from sexbin),
      ``age``.
    * Source: ``molfat66/FairML`` ``Recidivism_Data.csv``.

    {files}
    """
    df = pd.read_csv(_path("recidivism", "Recidivism_Data.csv", data_home, download))
    y = df.pop("is_recid").astype("int64")
    S = pd.DataFrame({
        "race": _recode(df["racebin"], _RECID_RACE),
        "sex": _recode(df["sexbin"], _RECID_SEX),
        "age": df["age"],
    })
    desc = _describe(
        "recidivism",
        "Label is_recid: 1 = re-offended. Sensitive: race (racebin), sex (sexbin), age.",
    )
    return _make("recidivism", df, y, S, desc)


_TAIWAN_LABEL = "default payment next month"
_TAIWAN_SEX = {1: "Female", 0: "Male"}
_TAIWAN_EDUCATION = {1: "graduate_or_university", 0: "high_school_or_other"}
_TAIWAN_MARRIAGE = {1: "married", 2: "single"}


@_doc("credit_taiwan_fairml")
def load_credit_taiwan_fairml(
    *, binarize_pay_3: bool = False, data_home: PathLike = None, download: bool = True
) -> Dataset:
    """Load FairML's preprocessed Taiwanese credit default data.

    Parameters
    ----------
    binarize_pay_3 : bool, default=False
        FairML binarized every ``PAY_k_Delay`` column (1 if the UCI ``PAY_k``
        is not 0) except ``PAY_3_Delay``, which holds the raw UCI ``PAY_3``
        (-2..8).  ``False`` keeps the file as is (to reproduce published
        numbers); ``True`` applies the same binarization to ``PAY_3_Delay``.
    {params}

    Returns
    -------
    {returns}

    Raises
    ------
    {raises}

    Notes
    -----
    * 29,623 rows (UCI credit default without the 377 clients with MARRIAGE 0
      or 3, shuffled by FairML; 102 rows duplicate another row) x 23
      features: LIMIT_BAL, EDUCATION (> high school), MARRIAGE, AGE,
      PAY_0_Delay, PAY_2_Delay..PAY_6_Delay, BILL_AMT1..6, PAY_AMT1..6, SEX.
    * ``target`` ``default payment next month``: 1 = default (6,547), 0 = no
      default (23,076).
    * ``sensitive_features``: ``SEX`` (Female for 1: 17,880 / Male for 0:
      11,743), ``EDUCATION`` (``"graduate_or_university"`` for 1, i.e. UCI
      codes 0/1/2: 24,407; ``"high_school_or_other"``: 5,216), ``MARRIAGE``
      (married / single), ``AGE``.
    * Source: ``molfat66/FairML`` ``Taiwanese_Credit_Data.csv``.

    {files}
    """
    df = pd.read_csv(_path("credit_taiwan_fairml", "Taiwanese_Credit_Data.csv", data_home, download))
    y = df.pop(_TAIWAN_LABEL).astype("int64")
    if binarize_pay_3:
        df["PAY_3_Delay"] = df["PAY_3_Delay"].ne(0).astype("int64")
    S = pd.DataFrame({
        "SEX": _recode(df["SEX"], _TAIWAN_SEX),
        "EDUCATION": _recode(df["EDUCATION (> high school)"], _TAIWAN_EDUCATION),
        "MARRIAGE": _recode(df["MARRIAGE"], _TAIWAN_MARRIAGE),
        "AGE": df["AGE"],
    })
    desc = _describe(
        "credit_taiwan_fairml",
        "Label: 1 = default. Sensitive: SEX (1 = female), EDUCATION (> high school), MARRIAGE, AGE. "
        + ("PAY_3_Delay re-binarized." if binarize_pay_3 else "PAY_3_Delay left raw as in FairML."),
    )
    return _make("credit_taiwan_fairml", df, y, S, desc)


_STUDENT_SEX = {"F": "Female", "M": "Male"}
_STUDENT_ADDRESS = {"U": "urban", "R": "rural"}


@_doc("student_performance")
def load_student_performance(
    *,
    subject: Literal["mat", "por"] = "mat",
    drop_grades: bool = False,
    data_home: PathLike = None,
    download: bool = True,
) -> Dataset:
    """Load UCI Student Performance (Cortez & Silva 2008).

    Parameters
    ----------
    subject : {"mat", "por"}, default="mat"
        ``"mat"``: mathematics (``student-mat.csv``, 395 rows); ``"por"``:
        Portuguese (``student-por.csv``, 649 rows).
    drop_grades : bool, default=False
        Also drop the first/second period grades ``G1`` and ``G2`` (strongly
        predictive of ``G3``; dropping them gives the harder task).
    {params}

    Returns
    -------
    {returns}

    Raises
    ------
    {raises}

    Notes
    -----
    * ``data``: the 32 attributes other than ``G3`` (30 with ``drop_grades``),
      meanings in ``student.txt``.
    * ``target`` ``pass``: 1 = ``G3 >= 10`` (mat 265 / 395, por 549 / 649),
      0 = fail.  ``G3`` itself is dropped from the features.
    * ``sensitive_features``: ``sex`` (Female/Male), ``age`` (15-22),
      ``address`` (urban/rural).
    * Source: UCI (Cortez & Silva 2008).

    {files}
    """
    _check_choice(subject, "subject", ("mat", "por"))
    df = pd.read_csv(
        _path("student_performance", f"student-{subject}.csv", data_home, download), sep=";"
    )
    y = df.pop("G3").ge(10).astype("int64").rename("pass")
    if drop_grades:
        df = df.drop(columns=["G1", "G2"])
    S = pd.DataFrame({
        "sex": _recode(df["sex"], _STUDENT_SEX),
        "age": df["age"],
        "address": _recode(df["address"], _STUDENT_ADDRESS),
    })
    desc = _describe(
        "student_performance",
        f"Subject {subject}. Label pass: 1 = G3 >= 10 (G3 dropped"
        + (", G1/G2 dropped). " if drop_grades else "; G1/G2 kept). ")
        + "Sensitive: sex, age, address.",
    )
    return _make("student_performance", df, y, S, desc)


# =========================================================================== multiclass datasets

_ABALONE_COLUMNS = [
    "Sex", "Length", "Diameter", "Height", "Whole weight", "Shucked weight", "Viscera weight",
    "Shell weight", "Rings",
]
_ABALONE_SEX = {"I": 0, "F": 1, "M": 2}


@_doc("abalone")
def load_abalone(
    *,
    relabel: Literal["narasimhan"] | None = "narasimhan",
    data_home: PathLike = None,
    download: bool = True,
) -> Dataset:
    """Load UCI Abalone as a multiclass task.

    Parameters
    ----------
    relabel : {"narasimhan"} or None, default="narasimhan"
        ``"narasimhan"``: 12 classes as in Narasimhan et al. (JMLR 2024,
        App. B, and their code): rings 1-4 and 16-29 are merged into class 0,
        rings ``r`` in 5..15 become class ``r - 4`` (1..11); ``target`` is
        named ``ring_class``.  ``None``: the raw ``Rings`` (1..29, 28 values).
    {params}

    Returns
    -------
    {returns}

    Raises
    ------
    {raises}

    Notes
    -----
    * 4,177 rows x 8 features: ``Sex`` coded numerically (I = 0, F = 1,
      M = 2), Length, Diameter, Height, Whole weight, Shucked weight, Viscera
      weight, Shell weight.
    * Class counts with ``"narasimhan"``: 0: 335, 1: 115, 2: 259, 3: 391,
      4: 568, 5: 689, 6: 634, 7: 487, 8: 267, 9: 203, 10: 126, 11: 103.
    * ``sensitive_features``: none (empty DataFrame; ``Sex`` is the animal's
      sex/infant status).
    * Source: UCI (Nash et al. 1994).

    {files}
    """
    _check_choice(relabel, "relabel", ("narasimhan", None))
    df = pd.read_csv(_path("abalone", "abalone.data", data_home, download), header=None, names=_ABALONE_COLUMNS)
    df["Sex"] = df["Sex"].map(_ABALONE_SEX).astype("int64")
    y = df.pop("Rings").astype("int64")
    if relabel == "narasimhan":
        y = y.where(y.between(5, 15), 4).sub(4).rename("ring_class")
    desc = _describe(
        "abalone",
        "Sex coded I=0, F=1, M=2. "
        + ("Target: 12 ring classes (Narasimhan et al.)." if relabel else "Target: raw Rings."),
    )
    return _make("abalone", df, y, None, desc)


def _load_multiclass(
    folder: str,
    tables: dict[str, _Table],
    subset: str | None,
    data_home: PathLike,
    download: bool,
    text: str,
    label_map: Callable[[pd.Series], pd.Series] | None = None,
) -> Dataset:
    """Shared loader for the multiclass benchmarks (no sensitive attributes).

    ``tables`` has one entry ``"all"`` for single-file datasets, or ``"train"``
    and ``"test"`` for the official splits (then ``subset`` selects them).
    """

    def part(which: str) -> Parts:
        X, y = _read_table(folder, tables[which], data_home, download)
        if label_map is not None:
            y = label_map(y)
        return X, y, pd.DataFrame(index=y.index)

    if subset is None:
        X, y, _ = part("all")
        which = None
    else:
        X, y, _, which = _split(subset, part)
    return _make(folder, X, y, None, _describe(folder, text), which)


_PAGEBLOCKS = _Table(
    "page-blocks.data", "class",
    {"sep": r"\s+", "header": None, "names": [
        "height", "lenght", "area", "eccen", "p_black", "p_and", "mean_tr", "blackpix", "blackand",
        "wb_trans", "class"]},
)


@_doc("pageblocks")
def load_pageblocks(*, data_home: PathLike = None, download: bool = True) -> Dataset:
    """Load UCI Page Blocks (5 classes).

    Parameters
    ----------
    {params}

    Returns
    -------
    {returns}

    Raises
    ------
    {raises}

    Notes
    -----
    * 5,473 rows x 10 numeric features (height, lenght [sic], area, eccen,
      p_black, p_and, mean_tr, blackpix, blackand, wb_trans).
    * ``target`` ``class``: file class minus 1: 0 text (4,913), 1 horizontal
      line (329), 2 picture (28), 3 vertical line (88), 4 graphic (115).
    * ``sensitive_features``: none.  Source: UCI (Malerba 1995).

    {files}
    """
    return _load_multiclass(
        "pageblocks", {"all": _PAGEBLOCKS}, None, data_home, download,
        "Target: class - 1 (0 text, 1 horiz. line, 2 picture, 3 vert. line, 4 graphic).",
        label_map=lambda y: (y - 1).astype("int64"),
    )


@_doc("satimage")
def load_satimage(*, subset: Subset = "train", data_home: PathLike = None, download: bool = True) -> Dataset:
    """Load Statlog Landsat Satellite ("satimage", 6 classes).

    Parameters
    ----------
    subset : {"train", "test", "all"}, default="train"
        ``"train"``: 4,435 rows; ``"test"``: 2,000 rows; ``"all"``: 6,435 rows
        with ``Dataset.subset``.
    {params}

    Returns
    -------
    {returns}

    Raises
    ------
    {raises}

    Notes
    -----
    * 36 integer features ``x.1`` .. ``x.36`` (4 spectral bands x 3x3 pixels).
    * ``target`` ``classes`` (text): red soil, cotton crop, grey soil, damp
      grey soil, vegetation stubble, very damp grey soil (UCI codes 1-5, 7).
      Train counts 1,072 / 479 / 961 / 415 / 470 / 1,038.
    * The CSVs were written from CRAN mlbench's ``Satellite`` data frame,
      which stacks UCI sat.trn and sat.tst; the split (first 4,435 rows =
      train) is inferred from the class counts, which match UCI's exactly.
    * ``sensitive_features``: none.  Source: UCI Statlog (Srinivasan).

    {files}
    """
    tables = {s: _Table(f"satimage_{s}.csv", "classes") for s in ("train", "test")}
    return _load_multiclass(
        "satimage", tables, subset, data_home, download, "Target: classes (6 soil types, text labels)."
    )


@_doc("shuttle")
def load_shuttle(*, subset: Subset = "train", data_home: PathLike = None, download: bool = True) -> Dataset:
    """Load Statlog Shuttle (7 classes, very imbalanced).

    Parameters
    ----------
    subset : {"train", "test", "all"}, default="train"
        ``"train"``: 43,500 rows (UCI shuttle.trn); ``"test"``: 14,500 rows
        (shuttle.tst); ``"all"``: 58,000 rows with ``Dataset.subset``.
    {params}

    Returns
    -------
    {returns}

    Raises
    ------
    {raises}

    Notes
    -----
    * 9 integer features ``V1`` .. ``V9``.
    * ``target`` ``Class`` (text): Rad.Flow, Fpv.Close, Fpv.Open, High,
      Bypass, Bpv.Close, Bpv.Open (UCI codes 1-7); train counts 34,108 / 37 /
      132 / 6,748 / 2,458 / 6 / 11.
    * CSVs written from CRAN mlbench's ``Shuttle`` (UCI train then test rows).
    * ``sensitive_features``: none.  Source: UCI Statlog (Catlett).

    {files}
    """
    tables = {s: _Table(f"shuttle_{s}.csv", "Class") for s in ("train", "test")}
    return _load_multiclass("shuttle", tables, subset, data_home, download, "Target: Class (7 text labels).")


_LETTER = _Table(
    "letter-recognition.data", "lettr",
    {"header": None, "names": [
        "lettr", "x-box", "y-box", "width", "high", "onpix", "x-bar", "y-bar", "x2bar", "y2bar", "xybar",
        "x2ybr", "xy2br", "x-ege", "xegvy", "y-ege", "yegvx"]},
)


@_doc("letter")
def load_letter(*, data_home: PathLike = None, download: bool = True) -> Dataset:
    """Load UCI Letter Recognition (26 classes).

    Parameters
    ----------
    {params}

    Returns
    -------
    {returns}

    Raises
    ------
    {raises}

    Notes
    -----
    * 20,000 rows x 16 integer features (0-15; UCI names x-box ... yegvx).
      The conventional split is the first 16,000 rows for training and the
      last 4,000 for testing (not applied here).
    * ``target`` ``lettr``: capital letters A-Z.
    * ``sensitive_features``: none.  Source: UCI (Slate 1991).

    {files}
    """
    return _load_multiclass("letter", {"all": _LETTER}, None, data_home, download, "Target: lettr (A-Z).")


_SEGMENT_FEATURES = [
    "REGION-CENTROID-COL", "REGION-CENTROID-ROW", "REGION-PIXEL-COUNT", "SHORT-LINE-DENSITY-5",
    "SHORT-LINE-DENSITY-2", "VEDGE-MEAN", "VEDGE-SD", "HEDGE-MEAN", "HEDGE-SD", "INTENSITY-MEAN",
    "RAWRED-MEAN", "RAWBLUE-MEAN", "RAWGREEN-MEAN", "EXRED-MEAN", "EXBLUE-MEAN", "EXGREEN-MEAN",
    "VALUE-MEAN", "SATURATION-MEAN", "HUE-MEAN",
]


@_doc("segment")
def load_segment(*, subset: Subset = "train", data_home: PathLike = None, download: bool = True) -> Dataset:
    """Load UCI Image Segmentation (7 classes).

    Parameters
    ----------
    subset : {"train", "test", "all"}, default="train"
        ``"train"``: ``segmentation.data`` (210 rows, 30 per class);
        ``"test"``: ``segmentation.test`` (2,100 rows, 300 per class);
        ``"all"``: 2,310 rows (the Statlog "segment" data) with
        ``Dataset.subset``.  Note the official training file is the small one.
    {params}

    Returns
    -------
    {returns}

    Raises
    ------
    {raises}

    Notes
    -----
    * 19 numeric features (REGION-CENTROID-COL ... HUE-MEAN); the files'
      5 leading non-data lines are skipped.
    * ``target`` ``class``: BRICKFACE, SKY, FOLIAGE, CEMENT, WINDOW, PATH, GRASS.
    * ``sensitive_features``: none.  Source: UCI (Brodley 1990).

    {files}
    """
    names = ["class", *_SEGMENT_FEATURES]
    tables = {
        s: _Table(f, "class", {"skiprows": 5, "header": None, "names": names})
        for s, f in (("train", "segmentation.data"), ("test", "segmentation.test"))
    }
    return _load_multiclass("segment", tables, subset, data_home, download, "Target: class (7 region types).")


@_doc("vehicle")
def load_vehicle(*, data_home: PathLike = None, download: bool = True) -> Dataset:
    """Load Statlog Vehicle Silhouettes (4 classes).

    Parameters
    ----------
    {params}

    Returns
    -------
    {returns}

    Raises
    ------
    {raises}

    Notes
    -----
    * 846 rows x 18 integer features (mlbench names Comp, Circ, ..., Holl.Ra).
    * ``target`` ``Class``: bus 218, saab 217, opel 212, van 199.
    * No official split.  ``sensitive_features``: none.
    * CSV written from CRAN mlbench's ``Vehicle``.  Source: UCI Statlog
      (Turing Institute).

    {files}
    """
    return _load_multiclass(
        "vehicle", {"all": _Table("vehicle.csv", "Class")}, None, data_home, download,
        "Target: Class (bus, opel, saab, van).",
    )


_YEAST = _Table(
    "yeast.data", "class",
    {"sep": r"\s+", "header": None, "names": [
        "sequence_name", "mcg", "gvh", "alm", "mit", "erl", "pox", "vac", "nuc", "class"]},
    drop=("sequence_name",),
)


@_doc("yeast")
def load_yeast(*, data_home: PathLike = None, download: bool = True) -> Dataset:
    """Load UCI Yeast (10 classes).

    Parameters
    ----------
    {params}

    Returns
    -------
    {returns}

    Raises
    ------
    {raises}

    Notes
    -----
    * 1,484 rows x 8 numeric features (mcg, gvh, alm, mit, erl, pox, vac,
      nuc); the sequence name (an identifier) is dropped.
    * ``target`` ``class``: CYT 463, NUC 429, MIT 244, ME3 163, ME2 51,
      ME1 44, EXC 35, VAC 30, POX 20, ERL 5.
    * ``sensitive_features``: none.  Source: UCI (Nakai & Kanehisa).

    {files}
    """
    return _load_multiclass("yeast", {"all": _YEAST}, None, data_home, download, "Target: class (10 sites).")


_WINE = _Table(
    "wine.data", "class",
    {"header": None, "names": [
        "class", "alcohol", "malic_acid", "ash", "alcalinity_of_ash", "magnesium", "total_phenols",
        "flavanoids", "nonflavanoid_phenols", "proanthocyanins", "color_intensity", "hue",
        "od280/od315_of_diluted_wines", "proline"]},
)


@_doc("wine")
def load_wine(*, data_home: PathLike = None, download: bool = True) -> Dataset:
    """Load UCI Wine (3 cultivars).

    Parameters
    ----------
    {params}

    Returns
    -------
    {returns}

    Raises
    ------
    {raises}

    Notes
    -----
    * 178 rows x 13 numeric features (scikit-learn's names: alcohol,
      malic_acid, ..., proline).
    * ``target`` ``class``: 1 (59), 2 (71), 3 (48).
    * ``sensitive_features``: none.  Source: UCI (Forina et al.).

    {files}
    """
    return _load_multiclass("wine", {"all": _WINE}, None, data_home, download, "Target: class (1, 2, 3).")


@_doc("glass")
def load_glass(*, data_home: PathLike = None, download: bool = True) -> Dataset:
    """Load UCI Glass Identification (6 classes).

    Parameters
    ----------
    {params}

    Returns
    -------
    {returns}

    Raises
    ------
    {raises}

    Notes
    -----
    * 214 rows x 9 numeric features (RI, Na, Mg, Al, Si, K, Ca, Ba, Fe).
    * ``target`` ``Type``: 1 (70), 2 (76), 3 (17), 5 (13), 6 (9), 7 (29); type 4
      does not occur.
    * CSV written from CRAN mlbench's ``Glass`` (no UCI Id column).
      ``sensitive_features``: none.  Source: UCI (German).

    {files}
    """
    return _load_multiclass(
        "glass", {"all": _Table("glass.csv", "Type")}, None, data_home, download, "Target: Type (6 glass types)."
    )


@_doc("wine_quality")
def load_wine_quality(
    *,
    variant: Literal["red", "white", "fairml"] = "red",
    binarize: bool | None = None,
    data_home: PathLike = None,
    download: bool = True,
) -> Dataset:
    """Load Wine Quality (Cortez et al. 2009), UCI or FairML version.

    Parameters
    ----------
    variant : {"red", "white", "fairml"}, default="red"
        ``"red"`` (1,599 rows) / ``"white"`` (4,898 rows): the UCI files.
        ``"fairml"``: FairML's ``Wine_Quality_Data.csv`` (6,497 rows: white
        wines first, then red) with its binarized label and the wine colour
        as sensitive feature (Olfat & Aswani; Ye & Xie).
    binarize : bool, optional
        For ``"red"``/``"white"``: ``False`` (default) gives ``quality``
        (integer grades 3-9, multiclass); ``True`` gives ``quality>=6`` as
        0/1.  ``"fairml"`` is always binary (``False`` raises ValueError).
    {params}

    Returns
    -------
    {returns}

    Raises
    ------
    {raises}

    Notes
    -----
    * ``data``: 11 physico-chemical features (fixed acidity ... alcohol); for
      ``"fairml"`` also ``white`` (1 = white wine).  The FairML header's
      literal double quotes (``"volatile acidity"``) are stripped.
    * ``target``: ``quality`` or ``quality>=6`` (1 = quality >= 6; fairml:
      4,113 positives).
    * ``sensitive_features``: ``"fairml"``: ``color`` (white 4,898 / red
      1,599); other variants: none.
    * Source: UCI files; FairML's file is these two concatenated.

    {files}
    """
    _check_choice(variant, "variant", ("red", "white", "fairml"))
    if variant == "fairml":
        if binarize is False:
            raise ValueError("variant='fairml' only has the binarized label (quality>=6)")
        df = pd.read_csv(_path("wine_quality", "Wine_Quality_Data.csv", data_home, download))
        df.columns = [c.strip('"') for c in df.columns]
        y = df.pop("quality>=6").astype("int64")
        S = pd.DataFrame({"color": _recode(df["white"], {1: "white", 0: "red"})})
        text = "FairML file (white then red). Label quality>=6. Sensitive: color."
        return _make("wine_quality", df, y, S, _describe("wine_quality", text))
    df = pd.read_csv(_path("wine_quality", f"winequality-{variant}.csv", data_home, download), sep=";")
    y = df.pop("quality").astype("int64")
    if binarize:
        y = y.ge(6).astype("int64").rename("quality>=6")
    text = f"{variant} wines. Target: " + ("quality>=6 (0/1)." if binarize else "quality (grades).")
    return _make("wine_quality", df, y, None, _describe("wine_quality", text))


# =========================================================================== dispatch

_LOADERS: dict[str, Callable[..., Dataset]] = {
    "adult": load_adult,
    "a9a": load_a9a,
    "compas": load_compas,
    "credit_default": load_credit_default,
    "communities": load_communities,
    "law_school": load_law_school,
    "german": load_german,
    "bank_marketing": load_bank_marketing,
    "abalone": load_abalone,
    "pageblocks": load_pageblocks,
    "satimage": load_satimage,
    "shuttle": load_shuttle,
    "letter": load_letter,
    "segment": load_segment,
    "vehicle": load_vehicle,
    "yeast": load_yeast,
    "wine": load_wine,
    "glass": load_glass,
    "wine_quality": load_wine_quality,
    "recidivism": load_recidivism,
    "credit_taiwan_fairml": load_credit_taiwan_fairml,
    "student_performance": load_student_performance,
}
assert set(_LOADERS) == set(REGISTRY), "every registry folder needs a loader"


def list_datasets() -> list[str]:
    """Return the names accepted by :func:`load_dataset` (the data folder names).

    Returns
    -------
    list of str
    """
    return list(_LOADERS)


def load_dataset(name: str, **kwargs: Any) -> Dataset:
    """Load a dataset by name.

    Parameters
    ----------
    name : str
        One of :func:`list_datasets` (hyphens are accepted for underscores).
    **kwargs
        Passed to the dataset's ``load_<name>`` function (``data_home``,
        ``download``, ``subset``, ...).

    Returns
    -------
    Dataset

    Raises
    ------
    ValueError
        Unknown name (the message lists the valid names).
    """
    key = str(name).strip().lower().replace("-", "_")
    try:
        loader = _LOADERS[key]
    except KeyError:
        raise ValueError(f"unknown dataset {name!r}; valid names: {', '.join(_LOADERS)}") from None
    return loader(**kwargs)
