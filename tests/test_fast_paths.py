"""The numpy fast paths of the encoding pass (issue 15) equal the general (pandas) paths."""
import numpy as np
import pandas as pd
import pytest

import goalfit.confusion.cells as cells_module
from goalfit.classifiers import class_labels, encode_labels
from goalfit.confusion import CellEncoder, ConfusionSpace, confusion_tensor

rng = np.random.default_rng(0)
N = 2000
SEX = np.array(["Female", "Male", "X"])[rng.integers(0, 3, N)]
RACE = rng.integers(0, 4, N)
RACE_PARTIAL = np.where(SEX == "X", 0, RACE)  # not every combination occurs
FLAG = rng.random(N) < 0.5
MANY = rng.integers(0, 50, N)  # more values than the comparison path takes


@pytest.mark.parametrize("features", [
    SEX, {"sex": SEX}, {"sex": SEX, "race": RACE}, {"sex": SEX, "race": RACE_PARTIAL, "flag": FLAG},
    pd.Series(SEX, name="sex"), {"race": RACE}, {"many": MANY}, {"many": MANY, "sex": SEX},
    SEX.astype(object), {"sex": SEX.astype(object), "race": RACE_PARTIAL}, pd.Series(SEX, dtype="string")],
    ids=["array", "dict", "two", "partial", "series", "int", "many", "many_sex", "object", "object_dict",
         "arrow_string"])
def test_cell_encoder_fast_path_equals_pandas_path(features, monkeypatch):
    fast = CellEncoder()
    ids_fast = fast.fit_transform(features, N)
    with monkeypatch.context() as m:
        m.setattr(cells_module, "_numpy_columns", lambda *a: None)
        slow = CellEncoder().fit(features, N)
        ids_slow = slow.transform(features, N)
    np.testing.assert_array_equal(ids_fast, ids_slow)
    assert ids_fast.dtype == np.intp
    pd.testing.assert_frame_equal(fast.cells_, slow.cells_)
    np.testing.assert_array_equal(fast.transform(features, N), ids_slow)  # fast transform
    np.testing.assert_array_equal(slow.transform(features, N), ids_slow)  # of a pandas-fitted encoder


def test_cell_encoder_fast_path_errors():
    enc = CellEncoder().fit({"sex": SEX, "race": RACE_PARTIAL})
    with pytest.raises(ValueError, match="sex='Z' was not seen"):
        enc.transform({"sex": np.array(["Z", "Male"]), "race": np.array([0, 0])}, 2)
    with pytest.raises(ValueError, match="not seen together"):
        enc.transform({"sex": np.array(["X"]), "race": np.array([3])}, 1)
    with pytest.raises(ValueError, match="rows"):
        CellEncoder().fit({"sex": SEX}, N + 1)
    # object columns with a missing value leave the fast path; the general path names the problem
    with pytest.raises(ValueError, match=r"\['sex'\] contain missing values"):
        enc.transform({"sex": np.array(["Male", None], dtype=object), "race": np.array([0, 0])}, 2)


@pytest.mark.parametrize("y", [rng.integers(0, 3, 500), rng.integers(5, 9, 500).astype(np.int32),
                               np.array(["b", "a", "c"])[rng.integers(0, 3, 500)], rng.random(500) < 0.3])
def test_class_labels_and_codes(y):
    classes = class_labels(y)
    np.testing.assert_array_equal(classes, np.unique(y))
    codes = encode_labels(y, classes)
    np.testing.assert_array_equal(classes[codes], y)
    with pytest.raises(ValueError, match="do not match"):
        encode_labels(y, classes[1:])


def test_space_and_tensor_without_weights_equal_weighted_ones():
    y = rng.integers(0, 3, N)
    cells = rng.integers(0, 2, N)
    pred = rng.integers(0, 3, N)
    ones = np.ones(N)
    np.testing.assert_allclose(confusion_tensor(y, pred, cells, 3, 2), confusion_tensor(y, pred, cells, 3, 2, ones))
    frame = pd.DataFrame({"g": [0, 1]})
    a = ConfusionSpace.from_codes(y, cells, np.arange(3), frame)
    w = rng.random(N)
    b = ConfusionSpace.from_codes(y, cells, np.arange(3), frame, w)
    np.testing.assert_allclose(a.row_mass, confusion_tensor(y, y, cells, 3, 2).sum(axis=2))
    np.testing.assert_allclose(b.row_mass, confusion_tensor(y, y, cells, 3, 2, w).sum(axis=2))


def _reference_plugin(P, cells, cost):
    """Plain argmin_j sum_i eta_i L[c, i, j], ties toward the larger index (Alg. 10's argmin*)."""
    scores = np.einsum("ni,nij->nj", P, cost[cells])
    n = P.shape[1]
    return n - 1 - np.argmin(scores[:, ::-1], axis=1)


@pytest.mark.parametrize("weighted", [False, True])
def test_multiclass_oracle_blocks_equal_the_plain_rule(weighted):
    import tracemalloc

    from goalfit.methods.plugin import PluginOracle

    r = np.random.default_rng(3)
    n, k, g = 30000, 4, 3
    P = r.dirichlet(np.ones(k), n)
    P[:50] = 0.25  # exact ties in every cost
    y, cells = r.integers(0, k, n), r.integers(0, g, n)
    w = r.random(n) if weighted else None
    space = ConfusionSpace.from_codes(y, cells, np.arange(k), pd.DataFrame({"g": range(g)}), w)
    oracle = PluginOracle(P, y, cells, space, w)
    for trial in range(3):
        cost = r.normal(size=(g, k, k))
        if trial == 2:
            cost[:, :, 1] = cost[:, :, 2]  # two identical columns: ties toward class 2
        ref = confusion_tensor(y, _reference_plugin(P, cells, cost), cells, k, g, w)
        np.testing.assert_allclose(oracle.confusion_of(cost), ref, atol=1e-12)
    oracle.confusion_of(cost)
    tracemalloc.start()
    oracle.confusion_of(cost)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < n  # no allocation proportional to the sample (8 n bytes would be one array)
