"""Tests for goalfit.datasets against the real data in the shared data folder.

Real-data tests fail when the folder is not reachable ($GOALFIT_DATA, or
<repo>/../shared/data) unless GOALFIT_SKIP_MISSING_DATA=1 turns them into skips;
Adult tests read the copy shipped with the package then.  Each big file is loaded
once per module (fixtures pass ``data_home`` explicitly, so they do not depend on
the environment).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import shutil
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import goalfit.datasets as gd
from goalfit.datasets import (
    Dataset,
    DatasetNotFoundError,
    dataset_status,
    get_data_home,
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
from goalfit.datasets import _base
from goalfit.datasets._registry import LIBSVM_BINARY, REGISTRY, UCI_ARCHIVE

REPO = Path(__file__).resolve().parents[2]
FOLDERS = sorted(REGISTRY)


def _shared_data_dir() -> Path | None:
    candidates = [os.environ.get("GOALFIT_DATA", ""), str(REPO.parent / "shared" / "data")]
    for c in candidates:
        for part in c.split(os.pathsep):
            if part and (Path(part) / "adult" / "adult.data").is_file():
                return Path(part)
    return None


SHARED = _shared_data_dir()


def missing_shared_data(what: str = "the shared data folder") -> None:
    from conftest import missing_data

    missing_data(what)


@pytest.fixture
def shared_data() -> Path:
    if SHARED is None:
        missing_shared_data()
    return SHARED


needs_data = pytest.mark.usefixtures("shared_data")


def load(func, **kwargs) -> Dataset:
    """Load from the shared data folder only (Adult: from the copy shipped with the package when
    the folder is not reachable; other datasets: see :func:`missing_shared_data`)."""
    if SHARED is None:
        if func is load_adult:
            return func(download=False, **kwargs)
        missing_shared_data(f"dataset {func.__name__.removeprefix('load_')!r}")
    return func(data_home=SHARED, download=False, **kwargs)


def counts(s) -> dict:
    return {k: int(v) for k, v in pd.Series(s).value_counts().items()}


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    """Empty GOALFIT_DATA and cache; no mirror; no proxies."""
    data, cache = tmp_path / "data", tmp_path / "xdg"
    data.mkdir()
    cache.mkdir()
    monkeypatch.setenv("GOALFIT_DATA", str(data))
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    monkeypatch.delenv("GOALFIT_DOWNLOAD_MIRROR", raising=False)
    for var in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    return {"data": data, "cache": cache / "goalfit", "tmp": tmp_path}


# =========================================================================== API / registry


def test_public_api_and_names():
    names = list_datasets()
    assert sorted(names) == FOLDERS and len(names) == 22
    assert issubclass(DatasetNotFoundError, FileNotFoundError)
    for name in names:
        assert callable(getattr(gd, f"load_{name}"))
    with pytest.raises(ValueError, match="valid names: .*adult.*student_performance"):
        load_dataset("nope")


def test_registry_matches_source_md():
    if SHARED is None:
        missing_shared_data("the SOURCE.md files of the shared data folder")
    row = re.compile(r"^\| *([^|]+?) *\| *(\d+) *\| *([0-9a-f]{64}) *\|", re.M)
    for folder in FOLDERS:
        table = {n: (int(s), h) for n, s, h in row.findall((SHARED / folder / "SOURCE.md").read_text())}
        reg = {f.name: (f.size, f.sha256) for f in REGISTRY[folder].files.values()}
        assert reg == table, folder


def test_registry_urls():
    gh = re.compile(r"^https://raw\.githubusercontent\.com/[^/]+/[^/]+/[0-9a-f]{40}/.+")
    for folder, spec in REGISTRY.items():
        assert spec.required_files, folder
        for f in spec.files.values():
            if f.url is None:
                assert f.note, (folder, f.name)
            else:
                assert (gh.match(f.url) or f.url.startswith(UCI_ARCHIVE + "/")
                        or f.url.startswith(LIBSVM_BINARY + "/")), f.url
            assert all(gh.match(m) for m in f.mirrors), f.mirrors
    no_url = {(d, f.name) for d, s in REGISTRY.items() for f in s.files.values() if f.url is None and f.required}
    assert ("a9a", "a9a.t") in no_url and ("glass", "glass.csv") in no_url
    assert ("adult", "adult.data") not in no_url
    # the original publishers where they publish the plain file: Adult from the UCI archive
    for name in ("adult.data", "adult.test", "adult.names"):
        spec = REGISTRY["adult"].files[name]
        assert spec.url == f"{UCI_ARCHIVE}/adult/{name}" and spec.mirrors
    assert REGISTRY["a9a"].files["a9a"].url == LIBSVM_BINARY + "/a9a"
    assert REGISTRY["german"].files["german.data"].url == f"{UCI_ARCHIVE}/statlog/german/german.data"


def test_download_falls_back_to_the_mirror(isolated, monkeypatch):
    """The original URL first; when it fails (or does not match the checksum) the registered copy."""
    import goalfit.datasets._base as base

    tried = []

    def fake(url, dest, folder, spec):
        tried.append(url)
        if url == spec.url:
            raise base.DatasetDownloadError(f"could not download {url}")
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text("x")

    monkeypatch.setattr(base, "_download", fake)
    path = base.fetch_file("adult", "adult.names")
    spec = REGISTRY["adult"].files["adult.names"]
    assert tried == [spec.url, spec.mirrors[0]] and path.read_text() == "x"


def test_get_data_home(isolated, tmp_path):
    home = get_data_home()
    assert home == isolated["cache"] and home.is_dir()
    other = get_data_home(tmp_path / "mine")
    assert other == tmp_path / "mine" and other.is_dir()


# =========================================================================== lookup / errors


def test_missing_without_download_message(isolated):
    with pytest.raises(DatasetNotFoundError) as err:
        load_wine(download=False)
    msg = str(err.value)
    for needed in ("GOALFIT_DATA", "'wine'", "wine.data", "data_home", "download=False"):
        assert needed in msg
    assert not (isolated["cache"] / "wine").exists()


def test_not_downloadable_without_mirror(isolated):
    with pytest.raises(DatasetNotFoundError, match=r"(?s)cannot be downloaded.*glass\.csv.*GOALFIT_DATA"):
        load_glass()


def _no_network(monkeypatch):
    """Any download attempt fails the test."""
    def refuse(url, dest, folder, spec):
        raise AssertionError(f"tried to download {url}")
    monkeypatch.setattr(_base, "_download", refuse)


def test_shipped_adult_needs_no_path_and_no_network(isolated, monkeypatch):
    _no_network(monkeypatch)
    monkeypatch.delenv("GOALFIT_DATA")
    train, test = load_dataset("adult", subset="train"), load_dataset("adult", subset="test")
    # the counts of the original files (SOURCE.md): rows, columns, positives, '?' kept as NaN
    assert train.data.shape == (32561, 14) and test.data.shape == (16281, 14)
    assert int(train.target.sum()) == 7841 and int(test.target.sum()) == 3846
    assert counts(train.sensitive_features["sex"]) == {"Male": 21790, "Female": 10771}
    assert int(train.data["workclass"].isna().sum()) == 1836
    assert _base.locate_file("adult", "adult.data") == _base.BUNDLED_DIR / "adult.data.gz"
    assert not isolated["cache"].exists()  # nothing written


def test_shipped_adult_equals_the_original_files(shared_data, isolated, monkeypatch, adult_all):
    """Same rows, columns, dtypes, labels, sensitive features and train/test split as GOALFIT_DATA."""
    _no_network(monkeypatch)
    shipped = load_adult(subset="all", download=False)  # GOALFIT_DATA and the cache are empty
    original = adult_all  # read from the shared folder
    # DataFrame.equals compares the axes' labels, the dtypes and the values, but not the order of
    # an unordered categorical's categories (the codes) nor the axes' names, checked after it;
    # assert_frame_equal boxes each value of an Arrow-backed categorical (seconds per frame)
    for a, b in ((shipped.data, original.data), (shipped.sensitive_features, original.sensitive_features)):
        assert a.dtypes.equals(b.dtypes) and a.equals(b)
        assert a.index.names == b.index.names and a.columns.names == b.columns.names
        assert a.index.dtype == b.index.dtype
        for col in a.select_dtypes("category"):
            assert list(a[col].cat.categories) == list(b[col].cat.categories), col
    pd.testing.assert_series_equal(shipped.target, original.target)
    assert np.array_equal(shipped.subset, original.subset) and len(shipped) == 48842
    # GOALFIT_DATA comes before the shipped copy
    monkeypatch.setenv("GOALFIT_DATA", str(SHARED))
    assert _base.locate_file("adult", "adult.data") == SHARED / "adult" / "adult.data"


def test_shipped_adult_is_checksummed(isolated, monkeypatch, tmp_path):
    import gzip

    bad = tmp_path / "data"
    bad.mkdir(exist_ok=True)
    with gzip.open(_base.BUNDLED_DIR / "adult.data.gz", "rb") as fh:
        raw = bytearray(fh.read())
    raw[100] ^= 1
    with gzip.open(bad / "adult.data.gz", "wb") as fh:
        fh.write(bytes(raw))
    monkeypatch.setattr(_base, "BUNDLED_DIR", bad)
    monkeypatch.delenv("GOALFIT_DATA")
    with pytest.raises(gd.DatasetChecksumError, match=r"adult\.data\.gz is not the registered file adult/adult\.data"):
        load_adult(download=False)


def test_shipped_files_are_package_data():
    """A non-editable install carries the shipped files: pyproject's package-data matches each."""
    import fnmatch
    import tomllib

    patterns = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["goalfit"]
    shipped = sorted(p.name for p in _base.BUNDLED_DIR.iterdir() if p.is_file())
    assert shipped == ["SOURCE.md", "adult.data.gz", "adult.test.gz"]
    for name in shipped:
        assert any(fnmatch.fnmatch(f"datasets/data/{name}", pat) for pat in patterns), name
    assert sum((_base.BUNDLED_DIR / n).stat().st_size for n in shipped) < 2_000_000
    assert "CC BY 4.0" in (_base.BUNDLED_DIR / "SOURCE.md").read_text()


def test_missing_goalfit_data_folder_is_named_in_one_line(isolated, monkeypatch, tmp_path):
    missing = tmp_path / "x" / "y"
    monkeypatch.setenv("GOALFIT_DATA", str(missing))
    for load_it in (lambda: load_adult(), lambda: load_dataset("compas", download=False)):
        with pytest.raises(DatasetNotFoundError) as err:
            load_it()
        msg = str(err.value)
        assert msg.startswith(f"GOALFIT_DATA={missing}: no such folder") and "\n" not in msg
    afile = tmp_path / "file.txt"
    afile.write_text("")
    monkeypatch.setenv("GOALFIT_DATA", str(afile))
    with pytest.raises(DatasetNotFoundError, match=r"^GOALFIT_DATA=.*file\.txt: not a folder"):
        load_wine(download=False)
    if SHARED is not None:  # a data_home holding the file is read whatever GOALFIT_DATA says
        assert len(load_wine(data_home=SHARED, download=False)) == 178


def test_dataset_missing_from_goalfit_data_names_the_folder_once(isolated, monkeypatch):
    data = isolated["data"]
    with pytest.raises(DatasetNotFoundError) as err:
        load_dataset("compas", download=False)
    first, *rest = str(err.value).split("\n")
    assert first.startswith("dataset 'compas' not found in ")
    assert f"GOALFIT_DATA={data} (looked for {data / 'compas' / 'compas-scores-two-years.csv'})" in first
    assert len(rest) == 1 and rest[0].startswith("To provide it:")
    assert f"copy it to {data / 'compas' / 'compas-scores-two-years.csv'}" in rest[0]
    assert "set the environment variable" not in str(err.value)  # it is set
    monkeypatch.delenv("GOALFIT_DATA")
    with pytest.raises(DatasetNotFoundError, match=r"GOALFIT_DATA is not set(?s:.*)set the environment variable"):
        load_dataset("compas", download=False)


def test_failed_downloads_give_one_paragraph(isolated, monkeypatch):
    """The original URL and its mirror both fail: one error, both causes, the instructions once."""
    def fail(url, dest, folder, spec):
        raise _base.DatasetDownloadError(f"could not download {folder}/{spec.name} from {url}: offline")
    monkeypatch.setattr(_base, "_download", fail)
    with pytest.raises(gd.DatasetDownloadError) as err:
        load_wine()
    msg = str(err.value)
    spec = REGISTRY["wine"].files["wine.data"]
    assert msg.count("To provide it:") == 1 and msg.count("\n") == 1
    assert msg.splitlines()[0].startswith("dataset 'wine' not found") and "the download failed" in msg
    assert spec.url in msg and spec.mirrors[0] in msg
    assert "set the environment variable" not in msg


def test_dataset_status(isolated):
    status = dataset_status()
    assert [s["name"] for s in status] == list_datasets()
    adult = next(s for s in status if s["name"] == "adult")  # the copy shipped inside the package
    assert adult["found"] and adult["missing"] == [] and adult["location"] == str(_base.BUNDLED_DIR)
    assert all(s["found"] is False and s["location"] is None and s["missing"] for s in status if s is not adult)
    wine = next(s for s in status if s["name"] == "wine")
    assert wine["folder"] == "wine" and wine["missing"] == ["wine.data"]
    if SHARED is not None:
        status = dataset_status(data_home=SHARED)
        assert all(s["found"] and not s["missing"] for s in status)
        assert next(s for s in status if s["name"] == "wine")["location"] == str(SHARED / "wine")


@needs_data
def test_lookup_order(isolated, tmp_path, monkeypatch):
    roots = {"arg": tmp_path / "arg", "env": isolated["data"], "cache": isolated["cache"]}
    for root in roots.values():
        (root / "wine").mkdir(parents=True)
        shutil.copy(SHARED / "wine" / "wine.data", root / "wine" / "wine.data")

    def where(**kw):
        return _base.fetch_file("wine", "wine.data", download=False, **kw).parent.parent

    assert where(data_home=roots["arg"]) == roots["arg"]
    assert where() == roots["env"]
    monkeypatch.delenv("GOALFIT_DATA")
    assert where() == roots["cache"]
    # a data_home lacking the file falls through to the next location
    assert where(data_home=tmp_path / "empty") == roots["cache"]
    assert len(load_wine(data_home=roots["arg"], download=False)) == 178


@needs_data
def test_local_checksum_mismatch(tmp_path):
    (tmp_path / "wine").mkdir()
    raw = bytearray((SHARED / "wine" / "wine.data").read_bytes())
    raw[0:1] = b"2"  # same size, different content
    (tmp_path / "wine" / "wine.data").write_bytes(bytes(raw))
    with pytest.raises(gd.DatasetChecksumError, match="sha256"):
        load_wine(data_home=tmp_path, download=False)
    (tmp_path / "wine" / "wine.data").write_bytes(bytes(raw[:-10]))
    with pytest.raises(gd.DatasetChecksumError, match="bytes"):
        load_wine(data_home=tmp_path, download=False)


# =========================================================================== download via a local mirror


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep test output clean
        pass


@pytest.fixture(scope="module")
def mirror_url():
    if SHARED is None:
        missing_shared_data("dataset 'wine' (served by the test mirror)")
    handler = functools.partial(_QuietHandler, directory=str(SHARED))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*")) if folder.exists() else []


def test_download_from_mirror(isolated, mirror_url, monkeypatch):
    monkeypatch.setenv("GOALFIT_DOWNLOAD_MIRROR", mirror_url + "/")
    wine = load_wine()
    target = isolated["cache"] / "wine" / "wine.data"
    assert target.is_file()
    assert target.read_bytes() == (SHARED / "wine" / "wine.data").read_bytes()
    assert wine.data.shape == (178, 13) and counts(wine.target) == {2: 71, 1: 59, 3: 48}
    # glass.csv has no public URL but a mirror can still provide it
    glass = load_glass()
    assert (isolated["cache"] / "glass" / "glass.csv").is_file() and len(glass) == 214
    assert _leftovers(isolated["cache"]) == ["glass", "glass.csv", "wine", "wine.data"]
    assert _leftovers(isolated["data"]) == []  # GOALFIT_DATA is never written to
    # next load finds the cached copy without downloading
    monkeypatch.setenv("GOALFIT_DOWNLOAD_MIRROR", "http://127.0.0.1:9/unreachable")
    assert len(load_wine(download=False)) == 178


def test_download_into_data_home(isolated, mirror_url, monkeypatch, tmp_path):
    monkeypatch.setenv("GOALFIT_DOWNLOAD_MIRROR", mirror_url)
    load_student_performance(subject="por", data_home=tmp_path / "dh")
    assert (tmp_path / "dh" / "student_performance" / "student-por.csv").is_file()
    assert not isolated["cache"].exists()


def test_download_checksum_mismatch(isolated, mirror_url, monkeypatch):
    monkeypatch.setenv("GOALFIT_DOWNLOAD_MIRROR", mirror_url)
    spec = REGISTRY["wine"].files["wine.data"]
    monkeypatch.setitem(REGISTRY["wine"].files, "wine.data", dataclasses.replace(spec, sha256="0" * 64))
    with pytest.raises(gd.DatasetChecksumError, match=r"(?s)wine\.data.*sha256.*deleted"):
        load_wine()
    assert _leftovers(isolated["cache"] / "wine") == []
    monkeypatch.setitem(REGISTRY["wine"].files, "wine.data", dataclasses.replace(spec, size=spec.size - 1))
    with pytest.raises(gd.DatasetChecksumError):
        load_wine()
    assert _leftovers(isolated["cache"] / "wine") == []


def test_download_http_error(isolated, mirror_url, monkeypatch):
    monkeypatch.setenv("GOALFIT_DOWNLOAD_MIRROR", mirror_url + "/no-such-dir")
    with pytest.raises(gd.DatasetDownloadError, match=r"(?s)wine\.data.*404"):
        load_wine()
    assert _leftovers(isolated["cache"] / "wine") == []


# =========================================================================== real data: fairness datasets


@pytest.fixture(scope="module")
def adult_all():
    return load(load_adult, subset="all")


@pytest.fixture(scope="module")
def a9a_all():
    return load(load_a9a, subset="all")


def _check_dataset(ds: Dataset, n: int):
    assert isinstance(ds, Dataset)
    assert ds.data.shape[0] == n == len(ds.target) == len(ds.sensitive_features)
    assert ds.sensitive_features.index.equals(ds.target.index)
    assert isinstance(ds.description, str) and ds.description


def test_adult(adult_all):
    ds = adult_all
    _check_dataset(ds, 48842)
    assert counts(ds.subset) == {"train": 32561, "test": 16281}
    train, test = ds.subset == "train", ds.subset == "test"
    assert int(ds.target[train].sum()) == 7841 and int(ds.target[test].sum()) == 3846
    assert set(ds.target.unique()) == {0, 1}
    assert ds.data.shape[1] == 14 and "income" not in ds.data
    assert list(ds.sensitive_features.columns) == ["sex", "race", "age"]
    assert counts(ds.sensitive_features["sex"][train]) == {"Male": 21790, "Female": 10771}
    assert counts(ds.sensitive_features["race"][train]) == {
        "White": 27816, "Black": 3124, "Asian-Pac-Islander": 1039, "Amer-Indian-Eskimo": 311, "Other": 271}
    assert int(ds.data["workclass"][train].isna().sum()) == 1836
    assert int(ds.data[train].isna().any(axis=1).sum()) == 2399
    assert int(ds.data[test].isna().any(axis=1).sum()) == 1221
    assert isinstance(ds.data["sex"].dtype, pd.CategoricalDtype)
    # train / test alone equal the corresponding part of "all", subset=None
    tr = load(load_adult)
    assert tr.subset is None and len(tr) == 32561
    assert np.array_equal(tr.target.to_numpy(), ds.target[train].to_numpy())


def test_a9a(a9a_all, adult_all):
    ds = a9a_all
    _check_dataset(ds, 48842)
    assert sp.issparse(ds.data) and ds.data.format == "csr" and ds.data.shape[1] == 123
    assert np.array_equal(ds.subset, adult_all.subset)
    train, test = ds.subset == "train", ds.subset == "test"
    assert int(ds.target[train].sum()) == 7841 and int(ds.target[test].sum()) == 3846
    # same row order as Adult: labels, sex and race agree row by row
    assert np.array_equal(ds.target.to_numpy(), adult_all.target.to_numpy())
    for col in ("sex", "race"):
        assert np.array_equal(ds.sensitive_features[col].astype(str).to_numpy(),
                              adult_all.sensitive_features[col].astype(str).to_numpy())
    female = np.asarray(ds.data[:, 71].todense()).ravel() == 1  # LIBSVM feature 72
    assert np.array_equal(female, (adult_all.data["sex"] == "Female").to_numpy())
    assert load(load_a9a, subset="test").data.shape == (16281, 123)


@pytest.fixture(scope="module")
def compas():
    return load(load_compas)


def test_compas(compas):
    ds = compas
    _check_dataset(ds, 6172)
    assert list(ds.data.columns) == [
        "sex", "age", "age_cat", "race", "juv_fel_count", "juv_misd_count", "juv_other_count",
        "priors_count", "c_charge_degree"]
    assert counts(ds.target) == {0: 3363, 1: 2809}
    assert counts(ds.sensitive_features["race"]) == {
        "African-American": 3175, "Caucasian": 2103, "Hispanic": 509, "Other": 343, "Asian": 31,
        "Native American": 11}
    assert counts(ds.sensitive_features["sex"]) == {"Male": 4997, "Female": 1175}
    assert list(ds.sensitive_features.columns) == ["race", "sex", "age_cat"]
    assert set(ds.data["c_charge_degree"].unique()) == {"F", "M"}


def test_recidivism_is_filtered_compas(compas):
    ds = load(load_recidivism)
    _check_dataset(ds, 5278)
    assert counts(ds.target) == {1: 2647, 0: 2631}
    assert counts(ds.sensitive_features["race"]) == {"African-American": 3175, "Caucasian": 2103}
    assert counts(ds.sensitive_features["sex"]) == {"Male": 4247, "Female": 1031}
    tab = pd.crosstab(ds.sensitive_features["race"].astype(str), ds.target)
    assert tab.loc["Caucasian"].tolist() == [1229, 874] and tab.loc["African-American"].tolist() == [1402, 1773]
    # same rows, same order as compas restricted to the two races
    two = compas.data[compas.data["race"].isin(["African-American", "Caucasian"])]
    assert np.array_equal(two["age"].to_numpy(), ds.data["age"].to_numpy())
    assert np.array_equal(two["priors_count"].to_numpy(), ds.data["priors_count"].to_numpy())


def test_credit_default():
    ds = load(load_credit_default)
    _check_dataset(ds, 30000)
    assert ds.data.shape[1] == 23 and "ID" not in ds.data
    assert counts(ds.target) == {0: 23364, 1: 6636}
    assert counts(ds.sensitive_features["SEX"]) == {"Female": 18112, "Male": 11888}
    edu = counts(ds.sensitive_features["EDUCATION"])
    assert edu == {"university": 14030, "graduate school": 10585, "high school": 4917, "other/unknown": 468}
    assert counts(ds.sensitive_features["MARRIAGE"])["unknown"] == 54
    assert all(pd.api.types.is_integer_dtype(t) for t in ds.data.dtypes)


def test_credit_taiwan_fairml():
    ds = load(load_credit_taiwan_fairml)
    _check_dataset(ds, 29623)
    assert ds.data.shape[1] == 23
    assert counts(ds.target) == {0: 23076, 1: 6547}
    assert counts(ds.sensitive_features["SEX"]) == {"Female": 17880, "Male": 11743}
    assert counts(ds.sensitive_features["EDUCATION"]) == {"graduate_or_university": 24407,
                                                          "high_school_or_other": 5216}
    assert counts(ds.sensitive_features["MARRIAGE"]) == {"single": 15964, "married": 13659}
    assert ds.data["PAY_3_Delay"].min() == -2
    fixed = load(load_credit_taiwan_fairml, binarize_pay_3=True)
    assert set(fixed.data["PAY_3_Delay"].unique()) == {0, 1}


def test_communities():
    ds = load(load_communities)
    _check_dataset(ds, 1994)
    assert ds.data.shape[1] == 100 and not ds.data.isna().any().any()
    for col in ("state", "county", "community", "communityname", "fold", "LemasSwornFT", "PolicBudgPerPop"):
        assert col not in ds.data
    assert "OtherPerCap" in ds.data
    assert counts(ds.target) == {0: 1411, 1: 583}
    assert counts(ds.sensitive_features["race"]) == {"low_black_share": 1024, "high_black_share": 970}
    for name, col in (("black_share", "racepctblack"), ("white_share", "racePctWhite"),
                      ("asian_share", "racePctAsian"), ("hispanic_share", "racePctHisp")):
        high = ds.sensitive_features[name] == "high"
        assert np.array_equal(high, ds.data[col] > ds.data[col].median())
        assert 0.4 * 1994 <= high.sum() <= 0.5 * 1994  # ties at the median stay "low"
    raw = load(load_communities, binarize=False)
    assert raw.target.name == "ViolentCrimesPerPop" and raw.target.between(0, 1).all()
    assert np.array_equal((raw.target > raw.target.quantile(0.7)).astype(int), ds.target)


def test_law_school():
    ds = load(load_law_school)
    _check_dataset(ds, 21791)
    assert list(ds.data.columns) == ["race", "sex", "LSAT", "UGPA", "region_first", "ZFYA", "sander_index"]
    assert counts(ds.target) == {1: 19360, 0: 2431}
    assert counts(ds.sensitive_features["sex"]) == {"Male": 12254, "Female": 9537}
    assert counts(ds.sensitive_features["race_binary"]) == {"Other": 20509, "Black": 1282}
    assert counts(ds.sensitive_features["race"])["White"] == 18285


def test_german():
    ds = load(load_german)
    _check_dataset(ds, 1000)
    assert ds.data.shape[1] == 20 and "credit" not in ds.data
    assert counts(ds.target) == {1: 700, 0: 300}
    S = ds.sensitive_features
    assert counts(S["sex"]) == {"Male": 690, "Female": 310}
    assert counts(S["age_group"])["over_25"] == int((ds.data["age"] > 25).sum())
    assert set(S["foreign_worker"].unique()) == {"yes", "no"}
    assert counts(ds.data["personal_status_sex"]) == {"A93": 548, "A92": 310, "A94": 92, "A91": 50}


def test_bank_marketing():
    ds = load(load_bank_marketing)
    _check_dataset(ds, 45211)
    assert ds.data.shape[1] == 15 and "duration" not in ds.data and "y" not in ds.data
    assert counts(ds.target) == {0: 39922, 1: 5289}
    assert list(ds.sensitive_features.columns) == ["age_group", "marital"]
    ages = ds.data["age"]
    assert counts(ds.sensitive_features["age_group"]) == {
        "25_to_60": int(ages.between(25, 60).sum()), "over_60": int((ages > 60).sum()),
        "under_25": int((ages < 25).sum())}
    assert "duration" in load(load_bank_marketing, drop_duration=False).data


@pytest.mark.parametrize("subject,n,passed,sex", [
    ("mat", 395, 265, {"Female": 208, "Male": 187}),
    ("por", 649, 549, {"Female": 383, "Male": 266}),
])
def test_student_performance(subject, n, passed, sex):
    ds = load(load_student_performance, subject=subject)
    _check_dataset(ds, n)
    assert ds.data.shape[1] == 32 and "G3" not in ds.data and "G1" in ds.data
    assert int(ds.target.sum()) == passed
    assert counts(ds.sensitive_features["sex"]) == sex
    assert set(ds.sensitive_features["address"].unique()) == {"urban", "rural"}
    assert "G1" not in load(load_student_performance, subject=subject, drop_grades=True).data


# =========================================================================== real data: multiclass


def test_abalone():
    ds = load(load_abalone)
    _check_dataset(ds, 4177)
    assert ds.sensitive_features.shape == (4177, 0)
    assert counts(ds.target) == {0: 335, 1: 115, 2: 259, 3: 391, 4: 568, 5: 689, 6: 634, 7: 487,
                                 8: 267, 9: 203, 10: 126, 11: 103}
    assert counts(ds.data["Sex"]) == {2: 1528, 0: 1342, 1: 1307}
    raw = load(load_abalone, relabel=None)
    assert raw.target.nunique() == 28 and raw.target.min() == 1 and raw.target.max() == 29
    with pytest.raises(ValueError):
        load(load_abalone, relabel="other")


@pytest.mark.parametrize("loader,n,n_features,class_counts", [
    (load_pageblocks, 5473, 10, {0: 4913, 1: 329, 2: 28, 3: 88, 4: 115}),
    (load_letter, 20000, 16, None),
    (load_vehicle, 846, 18, {"bus": 218, "saab": 217, "opel": 212, "van": 199}),
    (load_yeast, 1484, 8, {"CYT": 463, "NUC": 429, "MIT": 244, "ME3": 163, "ME2": 51, "ME1": 44,
                           "EXC": 35, "VAC": 30, "POX": 20, "ERL": 5}),
    (load_wine, 178, 13, {1: 59, 2: 71, 3: 48}),
    (load_glass, 214, 9, {1: 70, 2: 76, 3: 17, 5: 13, 6: 9, 7: 29}),
])
def test_multiclass(loader, n, n_features, class_counts):
    ds = load(loader)
    _check_dataset(ds, n)
    assert ds.data.shape[1] == n_features and ds.subset is None
    assert ds.sensitive_features.shape == (n, 0)
    if class_counts is not None:
        assert counts(ds.target) == class_counts
    assert all(pd.api.types.is_numeric_dtype(t) for t in ds.data.dtypes)


def test_letter_classes():
    assert sorted(load(load_letter).target.unique()) == [chr(c) for c in range(ord("A"), ord("Z") + 1)]


def test_wine_matches_sklearn():
    from sklearn.datasets import load_wine as sk_load_wine

    ds, sk = load(load_wine), sk_load_wine()
    assert np.allclose(ds.data.to_numpy(), sk.data)
    assert np.array_equal(ds.target.to_numpy() - 1, sk.target)


@pytest.mark.parametrize("loader,n_train,n_test,n_features,train_counts", [
    (load_satimage, 4435, 2000, 36, {"red soil": 1072, "cotton crop": 479, "grey soil": 961,
                                     "damp grey soil": 415, "vegetation stubble": 470,
                                     "very damp grey soil": 1038}),
    (load_shuttle, 43500, 14500, 9, {"Rad.Flow": 34108, "Fpv.Close": 37, "Fpv.Open": 132, "High": 6748,
                                     "Bypass": 2458, "Bpv.Close": 6, "Bpv.Open": 11}),
    (load_segment, 210, 2100, 19, {c: 30 for c in
                                   ("BRICKFACE", "SKY", "FOLIAGE", "CEMENT", "WINDOW", "PATH", "GRASS")}),
])
def test_official_splits(loader, n_train, n_test, n_features, train_counts):
    ds = load(loader, subset="all")
    _check_dataset(ds, n_train + n_test)
    assert counts(ds.subset) == {"train": n_train, "test": n_test}
    assert ds.data.shape[1] == n_features
    assert counts(ds.target[ds.subset == "train"]) == train_counts
    test = load(loader, subset="test")
    assert len(test) == n_test and test.subset is None
    assert np.array_equal(test.target.to_numpy(), ds.target[ds.subset == "test"].to_numpy())
    with pytest.raises(ValueError, match="subset"):
        load(loader, subset="validation")


def test_wine_quality():
    red = load(load_wine_quality, variant="red")
    white = load(load_wine_quality, variant="white")
    _check_dataset(red, 1599)
    _check_dataset(white, 4898)
    assert counts(red.target) == {5: 681, 6: 638, 7: 199, 4: 53, 8: 18, 3: 10}
    assert red.data.shape[1] == 11 and red.sensitive_features.shape[1] == 0
    assert int(load(load_wine_quality, variant="white", binarize=True).target.sum()) == 2198 + 880 + 175 + 5
    fair = load(load_wine_quality, variant="fairml")
    _check_dataset(fair, 6497)
    assert counts(fair.target) == {1: 4113, 0: 2384}
    assert counts(fair.sensitive_features["color"]) == {"white": 4898, "red": 1599}
    assert list(fair.data.columns[:11]) == list(red.data.columns) and fair.data.columns[-1] == "white"
    # FairML = UCI white then UCI red, same features, label quality >= 6
    both = pd.concat([white.data, red.data], ignore_index=True)
    assert np.allclose(fair.data.iloc[:, :11].to_numpy(), both.to_numpy(), atol=1e-6)
    assert np.array_equal(fair.target, (pd.concat([white.target, red.target], ignore_index=True) >= 6).astype(int))
    with pytest.raises(ValueError):
        load(load_wine_quality, variant="fairml", binarize=False)


# =========================================================================== dispatch


@needs_data
def test_load_dataset_dispatch():
    ds = load_dataset("credit-taiwan-fairml", data_home=SHARED, download=False)
    assert ds.name == "credit_taiwan_fairml"
    ds = load_dataset("segment", data_home=SHARED, download=False, subset="all")
    assert len(ds) == 2310
