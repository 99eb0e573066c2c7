"""Dataset container, file lookup, download and integrity checks.

Lookup order for ``<folder>/<file>`` (first hit wins):

1. the ``data_home`` argument of a loader;
2. the environment variable ``GOALFIT_DATA`` (one folder, or several joined
   with :data:`os.pathsep`);
3. the user cache folder: ``$XDG_CACHE_HOME/goalfit`` when ``XDG_CACHE_HOME``
   is set, else ``~/.cache/goalfit``;
4. the copy shipped inside the package (``goalfit/datasets/data``, gzip-compressed
   originals; only Adult), so that the demo runs with no path and no network.

Every folder named in ``GOALFIT_DATA`` must exist: a missing one raises
:class:`DatasetNotFoundError` naming it, rather than silently reading another copy.

Each of these holds ``<folder>/<file>`` exactly as the shared data directory.
A file found there is checked against the registry (size and sha256, computed
once per process and file version).  A file found nowhere is downloaded, when
``download=True``, into :func:`get_data_home` (``data_home`` when given, else
the cache folder), from ``$GOALFIT_DOWNLOAD_MIRROR/<folder>/<file>`` when that
variable is set, else from the file's registered public URL.  The download is
written to a temporary file, checked (size + sha256) and only then renamed to
its final name; a mismatch deletes it and raises :class:`DatasetChecksumError`.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import tempfile
import threading
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ._registry import REGISTRY, FileSpec

__all__ = [
    "DATA_ENV",
    "MIRROR_ENV",
    "Dataset",
    "DatasetChecksumError",
    "DatasetDownloadError",
    "DatasetNotFoundError",
    "bundled_file",
    "check_data_env",
    "dataset_status",
    "fetch_file",
    "get_data_home",
    "locate_file",
]

DATA_ENV = "GOALFIT_DATA"
MIRROR_ENV = "GOALFIT_DOWNLOAD_MIRROR"
#: Folder of the data shipped inside the package: ``<file>.gz`` per registered file.
BUNDLED_DIR = Path(__file__).resolve().with_name("data")
#: Dataset folders with a copy in :data:`BUNDLED_DIR` (see its SOURCE.md).
BUNDLED_FOLDERS = frozenset({"adult"})
_TIMEOUT_S = 60.0
_CHUNK = 1 << 20


# --------------------------------------------------------------------------- errors
class DatasetNotFoundError(FileNotFoundError):
    """A dataset file is in none of the lookup folders and could not be downloaded."""


class DatasetDownloadError(DatasetNotFoundError):
    """Downloading a missing dataset file failed (network or HTTP error)."""


class DatasetChecksumError(OSError):
    """A dataset file's size or sha256 differs from the registry."""


# --------------------------------------------------------------------------- container
@dataclass
class Dataset:
    """A loaded dataset.

    Attributes
    ----------
    name : str
        Dataset name (the folder name, e.g. ``"adult"``).
    data : pandas.DataFrame or scipy.sparse.csr_matrix
        Features, one row per sample.  Sensitive columns are kept.  String
        columns are ``category`` dtype.  ``a9a`` gives a CSR matrix.
    target : pandas.Series
        Labels.  Binary tasks: ``int`` 0/1 with 1 the positive outcome named in
        the loader's docstring; multiclass tasks: the class labels.
    sensitive_features : pandas.DataFrame
        Protected attributes, same length and index as ``target`` (zero or more
        columns, human-readable values such as ``"Female"``/``"Male"``).
    description : str
        Short text: source, label, sensitive columns, preprocessing.
    subset : numpy.ndarray or None
        ``"train"``/``"test"`` per row when a source with an official split was
        loaded with ``subset="all"``, else ``None``.
    """

    name: str
    data: Any
    target: pd.Series
    sensitive_features: pd.DataFrame
    description: str = ""
    subset: np.ndarray | None = None

    def __post_init__(self) -> None:
        n = len(self.target)
        if self.data.shape[0] != n:
            raise ValueError(f"data has {self.data.shape[0]} rows but target has {n}")
        if len(self.sensitive_features) != n or not self.sensitive_features.index.equals(
            self.target.index
        ):
            raise ValueError("sensitive_features must have the same length and index as target")
        if self.subset is not None and len(self.subset) != n:
            raise ValueError(f"subset has {len(self.subset)} entries but target has {n}")

    def __len__(self) -> int:
        return len(self.target)

    def __repr__(self) -> str:
        kind = "sparse" if not isinstance(self.data, pd.DataFrame) else "DataFrame"
        sens = list(self.sensitive_features.columns)
        split = "" if self.subset is None else ", subset=train/test"
        return (
            f"Dataset(name={self.name!r}, data={kind} {self.data.shape[0]}x{self.data.shape[1]}, "
            f"target={self.target.name!r} ({self.target.nunique()} classes), "
            f"sensitive_features={sens}{split})"
        )


# --------------------------------------------------------------------------- folders
def _cache_home() -> Path:
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "goalfit"


def get_data_home(data_home: str | os.PathLike[str] | None = None) -> Path:
    """Return the folder downloads are written to, creating it if needed.

    Parameters
    ----------
    data_home : str or path-like, optional
        When given, this folder is returned.  Otherwise the user cache folder:
        ``$XDG_CACHE_HOME/goalfit`` if ``XDG_CACHE_HOME`` is set, else
        ``~/.cache/goalfit``.

    Returns
    -------
    pathlib.Path
        The folder (it exists on return).

    Notes
    -----
    ``GOALFIT_DATA`` is a read-only lookup location and is never written to.
    """
    home = Path(data_home).expanduser() if data_home is not None else _cache_home()
    home.mkdir(parents=True, exist_ok=True)
    return home


def _search_roots(data_home: str | os.PathLike[str] | None) -> list[tuple[str, Path]]:
    roots: list[tuple[str, Path]] = []
    if data_home is not None:
        roots.append(("data_home argument", Path(data_home).expanduser()))
    env = os.environ.get(DATA_ENV, "")
    for part in env.split(os.pathsep):
        if part.strip():
            roots.append((f"${DATA_ENV}", Path(part.strip()).expanduser()))
    roots.append(("user cache", _cache_home()))
    return roots


def _spec(folder: str, name: str) -> FileSpec:
    try:
        return REGISTRY[folder].files[name]
    except KeyError:
        raise KeyError(f"no registered file {folder}/{name}") from None


def _env_folders() -> list[str]:
    return [part.strip() for part in os.environ.get(DATA_ENV, "").split(os.pathsep) if part.strip()]


def check_data_env() -> None:
    """Raise when a folder named in ``$GOALFIT_DATA`` does not exist.

    Raises
    ------
    DatasetNotFoundError
        One line naming the folder, e.g. ``GOALFIT_DATA=/x/y: no such folder``.
    """
    for part in _env_folders():
        path = Path(part).expanduser()
        if not path.is_dir():
            what = "not a folder" if path.exists() else "no such folder"
            if str(path.resolve()) != part:
                what += f" ({path.resolve()})"
            raise DatasetNotFoundError(
                f"{DATA_ENV}={part}: {what}; point {DATA_ENV} at the folder that holds one sub-folder "
                f"per dataset, or unset it"
            )


def bundled_file(folder: str, name: str) -> Path | None:
    """Return the copy of ``<folder>/<name>`` shipped inside the package (gzip), or ``None``."""
    if folder not in BUNDLED_FOLDERS:
        return None
    path = BUNDLED_DIR / f"{name}.gz"
    return path if path.is_file() else None


def locate_file(folder: str, name: str, data_home: str | os.PathLike[str] | None = None) -> Path | None:
    """Return the first existing ``<root>/<folder>/<name>`` in lookup order, or ``None``.

    The lookup order is ``data_home``, ``$GOALFIT_DATA``, the user cache, then the copy shipped
    inside the package (a ``.gz`` file, for the folders in :data:`BUNDLED_FOLDERS`).
    """
    for _, root in _search_roots(data_home):
        path = root / folder / name
        if path.is_file():
            return path
    return bundled_file(folder, name)


# --------------------------------------------------------------------------- integrity
_verified: set[tuple[str, int, int, str]] = set()
_verified_lock = threading.Lock()


def _size_sha256(path: Path, opener=open) -> tuple[int, str]:
    """Size in bytes and sha256 of what ``opener(path, "rb")`` reads (``gzip.open``: the
    decompressed content of a gzip file)."""
    h = hashlib.sha256()
    size = 0
    with opener(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(_CHUNK), b""):
            size += len(chunk)
            h.update(chunk)
    return size, h.hexdigest()


def _check_local(path: Path, folder: str, spec: FileSpec) -> None:
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns, spec.sha256)
    with _verified_lock:
        if key in _verified:
            return
    if path.suffix == ".gz" and not spec.name.endswith(".gz"):  # the shipped copy: check what it holds
        size, digest = _size_sha256(path, gzip.open)
    else:
        size = st.st_size
        digest = _size_sha256(path)[1] if st.st_size == spec.size else "(not computed)"
    if size != spec.size or digest != spec.sha256:
        raise DatasetChecksumError(
            f"{path} is not the registered file {folder}/{spec.name}: expected {spec.size} bytes "
            f"with sha256 {spec.sha256}, found {size} bytes with sha256 {digest}. "
            "Replace it with the original file (see the folder's SOURCE.md) or delete it so that "
            "it can be downloaded again."
        )
    with _verified_lock:
        _verified.add(key)


# --------------------------------------------------------------------------- download
def _download_url(folder: str, spec: FileSpec) -> str | None:
    mirror = os.environ.get(MIRROR_ENV, "").strip()
    if mirror:
        return f"{mirror.rstrip('/')}/{urllib.parse.quote(folder)}/{urllib.parse.quote(spec.name)}"
    return spec.url


def _download(url: str, dest: Path, folder: str, spec: FileSpec) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{spec.name}.", suffix=".part", dir=dest.parent)
    tmp = Path(tmp_name)
    try:
        h = hashlib.sha256()
        size = 0
        try:
            request = urllib.request.Request(url, headers={"User-Agent": "goalfit-datasets"})
            with os.fdopen(fd, "wb") as out, urllib.request.urlopen(request, timeout=_TIMEOUT_S) as resp:
                for chunk in iter(lambda: resp.read(_CHUNK), b""):
                    size += len(chunk)
                    if size > spec.size:
                        break
                    h.update(chunk)
                    out.write(chunk)
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise DatasetDownloadError(f"could not download {folder}/{spec.name} from {url}: {exc}") from exc
        digest = h.hexdigest()
        if size != spec.size or digest != spec.sha256:
            got = f"{size} bytes" if size <= spec.size else f"more than {spec.size} bytes"
            raise DatasetChecksumError(
                f"download of {folder}/{spec.name} from {url} does not match the registry: expected "
                f"{spec.size} bytes with sha256 {spec.sha256}, got {got} with sha256 {digest}. "
                "The partial file was deleted."
            )
        os.chmod(tmp, 0o644)
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)


def _placement_hint(folder: str, name: str) -> str:
    """How to provide a missing file: one paragraph, naming ``GOALFIT_DATA`` as it is set."""
    env = _env_folders()
    if env:
        where = (f"copy it to {Path(env[0]).expanduser() / folder / name} (under {DATA_ENV}={env[0]}), "
                 f"or to {_cache_home() / folder / name}")
    else:
        where = (f"copy it to {_cache_home() / folder / name}, or put it at <dir>/{folder}/{name} and set "
                 f"the environment variable {DATA_ENV}=<dir>")
    return (
        f"To provide it: {where}, or pass data_home=<dir> holding {folder}/{name}; "
        f"{MIRROR_ENV}=<base URL> downloads <base URL>/{folder}/{name} instead "
        f"(the folder's SOURCE.md and the loader's docstring say where the file comes from)."
    )


def _searched(folder: str, name: str, data_home: Any) -> str:
    """Where the file was looked for, in lookup order, as one clause."""
    parts = []
    for label, root in _search_roots(data_home):
        if label == f"${DATA_ENV}":
            parts.append(f"{DATA_ENV}={root} (looked for {root / folder / name})")
        else:
            parts.append(f"the {label} ({root / folder / name})")
    text = ", nor in ".join(parts)
    return text if _env_folders() else f"{text}; {DATA_ENV} is not set"


def _not_found_message(folder: str, spec: FileSpec, data_home: Any, reason: str) -> str:
    """First line: what is missing, where it was looked for and why it was not fetched; then how
    to provide it (once)."""
    return (
        f"dataset {folder!r} not found in {_searched(folder, spec.name, data_home)}; {reason}.\n"
        + _placement_hint(folder, spec.name)
    )


def fetch_file(
    folder: str,
    name: str,
    *,
    data_home: str | os.PathLike[str] | None = None,
    download: bool = True,
) -> Path:
    """Return the path of a verified data file, downloading it if allowed.

    Parameters
    ----------
    folder, name : str
        Dataset folder and file name, as in the registry.
    data_home : str or path-like, optional
        Folder searched first (and where downloads go when given).
    download : bool, default=True
        Download the file when it is found nowhere.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    DatasetNotFoundError
        A folder named in ``$GOALFIT_DATA`` does not exist (unless ``data_home``
        holds the file); the file is missing and ``download=False``; or it has no
        public URL and no mirror is set.
    DatasetDownloadError
        The download failed (from the original URL and from every mirror).
    DatasetChecksumError
        A local or downloaded file does not match the registered size/sha256.
    """
    spec = _spec(folder, name)
    if data_home is None or not (Path(data_home).expanduser() / folder / name).is_file():
        check_data_env()  # a GOALFIT_DATA that names no folder is an error, not a folder passed over
    path = locate_file(folder, name, data_home)
    if path is not None:
        _check_local(path, folder, spec)
        return path
    url = _download_url(folder, spec)
    if not download:
        reason = "download=False" + (f"; download=True would fetch it from {url}" if url else "")
        raise DatasetNotFoundError(_not_found_message(folder, spec, data_home, reason))
    if url is None:
        raise DatasetNotFoundError(
            _not_found_message(
                folder, spec, data_home,
                f"it cannot be downloaded automatically: {spec.note or 'no public byte-identical copy'}",
            )
        )
    dest = get_data_home(data_home) / folder / name
    urls = [url] + ([] if os.environ.get(MIRROR_ENV, "").strip() else list(spec.mirrors))
    errors = []
    for u in urls:  # the original publisher first, then the registered copies
        try:
            _download(u, dest, folder, spec)
            return dest
        except (DatasetDownloadError, DatasetChecksumError) as exc:
            errors.append(exc)
    if all(isinstance(e, DatasetChecksumError) for e in errors):
        raise type(errors[-1])("; ".join(str(e) for e in errors))
    reason = "the download failed: " + "; ".join(str(e) for e in errors)
    raise DatasetDownloadError(_not_found_message(folder, spec, data_home, reason))


def fetch_files(
    folder: str,
    names: list[str] | tuple[str, ...],
    *,
    data_home: str | os.PathLike[str] | None = None,
    download: bool = True,
) -> list[Path]:
    """:func:`fetch_file` for several files of one folder, in order."""
    return [fetch_file(folder, n, data_home=data_home, download=download) for n in names]


# --------------------------------------------------------------------------- status
def dataset_status(data_home: str | os.PathLike[str] | None = None) -> list[dict[str, Any]]:
    """Report which datasets are available locally (no download, no hashing).

    Parameters
    ----------
    data_home : str or path-like, optional
        Folder searched before ``$GOALFIT_DATA`` and the user cache.

    Returns
    -------
    list of dict
        One dict per dataset, in :func:`list_datasets` order, with keys
        ``name``, ``folder``, ``found`` (all files the loader reads are present),
        ``location`` (the folder holding the first of them, as ``str``, or
        ``None``) and ``missing`` (names of the required files not found).
    """
    out = []
    for folder, fspec in REGISTRY.items():
        missing: list[str] = []
        location: str | None = None
        for name in fspec.required_files:
            path = locate_file(folder, name, data_home)
            if path is None:
                missing.append(name)
            elif location is None:
                location = str(path.parent)
        out.append(
            {"name": folder, "folder": folder, "found": not missing, "location": location, "missing": missing}
        )
    return out
