"""The numpy fast paths of the encoding pass (issue 15) equal the general (pandas) paths."""
import warnings

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


def test_compact_codes_types_and_values():
    from goalfit.confusion import compact_codes, int_codes

    codes = rng.integers(0, 127, 1000)
    for n_values, dtype in [(2, np.int8), (128, np.int8), (129, np.int16), (2**15 + 1, np.int32)]:
        c = compact_codes(codes, n_values)
        assert c.dtype == dtype
        np.testing.assert_array_equal(c, codes)
    assert compact_codes(codes, 2**40).dtype == codes.dtype
    assert int_codes(np.array([1, 0], np.uint8)).dtype == np.uint8  # kept as given
    assert int_codes(np.array([1, 0], np.uint64)).dtype == np.intp  # would promote to float with intp
    assert int_codes(np.array([True, False])).dtype == np.intp


@pytest.mark.parametrize("k", [2, 3, 12])
@pytest.mark.parametrize("weighted", [False, True])
def test_narrow_codes_give_identical_results(k, weighted):
    """One-byte class codes and cell ids (what fit passes) give bit-identical confusion
    tensors, spaces and oracle answers to intp ones."""
    from goalfit.confusion import compact_codes
    from goalfit.methods.plugin import PluginOracle, ThresholdOracle

    r = np.random.default_rng(k)
    n, g = 5000, 3
    P = r.dirichlet(np.ones(k), n)
    P[:40] = P[40]  # ties
    y, cells, pred = r.integers(0, k, n), r.integers(0, g, n), r.integers(0, k, n)
    y8, cells8 = compact_codes(y, k), compact_codes(cells, g)
    assert y8.dtype == cells8.dtype == np.int8
    w = r.random(n) if weighted else None
    np.testing.assert_array_equal(confusion_tensor(y8, pred.astype(np.uint8), cells8, k, g, w),
                                  confusion_tensor(y, pred, cells, k, g, w))
    frame = pd.DataFrame({"g": range(g)})
    space = ConfusionSpace.from_codes(y, cells, np.arange(k), frame, w)
    np.testing.assert_array_equal(ConfusionSpace.from_codes(y8, cells8, np.arange(k), frame, w).row_mass,
                                  space.row_mass)
    kinds = [PluginOracle, ThresholdOracle] if k == 2 else [PluginOracle]
    for kind in kinds:
        wide, narrow = kind(P, y, cells, space, w), kind(P, y8, cells8, space, w)
        for _ in range(3):
            cost = r.normal(size=(g, k, k))
            (m1, C1), (m2, C2) = wide(cost), narrow(cost)
            np.testing.assert_array_equal(C1, C2)
            np.testing.assert_array_equal(m1.predict_codes(None, P, cells), m2.predict_codes(None, P, cells8))


def test_binary_plugin_fit_memory():
    """The binary plug-in on precomputed probabilities (issue 15: at most ~40 bytes per row
    beyond the inputs at 10^7 rows) allocates about 20 bytes per row at its peak (one-byte codes,
    the oracle's sorted cells at 12 bytes per row, one cell's sort at a time) and keeps 12
    (labels, cells, row hashes and two members' predictions in ``train_sample_``); it was 67 and
    26. The bounds leave room for the fixed costs (blockwise hashing, the LPs) at 5 * 10^5 rows
    but not for one more 8-byte array per row."""
    import tracemalloc

    import goalfit as gf

    r = np.random.default_rng(0)
    n = 500_000
    g = r.choice(np.array(["a", "b"]), n, p=[0.6, 0.4])
    eta = 1 / (1 + np.exp(-r.normal(0.3 * (g == "a"), 1.0)))  # calibrated: y ~ Bernoulli(eta)
    P = np.column_stack([1 - eta, eta])
    y = (r.random(n) < eta).astype(np.int64)
    del eta
    for con in (gf.demographic_parity_difference("group") <= 0.01, gf.equalized_odds_difference("group") <= 0.01):
        def fit():
            return gf.GoalClassifier("precomputed", objective="error", constraints=[con]).fit(
                P, y, sensitive_features={"group": g})

        fit()  # first-call costs
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        try:
            model = fit()
            kept, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert model.method_ == "column_generation" and len(model.classifier_.members) == 2
        assert (peak - base) / n < 27, f"peak {(peak - base) / n:.1f} bytes per row"
        assert (kept - base) / n < 16, f"kept {(kept - base) / n:.1f} bytes per row"
        ts = model.train_sample_
        assert ts.proba is P and ts.y.dtype == ts.cells.dtype == np.int8


@pytest.mark.parametrize("group_blind", [False, True])
def test_fit_with_more_joint_codes_than_int8_holds(group_blind, monkeypatch):
    """3 classes x 45 cells: one-byte class codes and cells (what fit keeps) whose joint
    (cell, class) codes reach 134 > 127 (the group-blind joint label, the confusion and
    row-mass keys, the oracle's label offsets) give the same fit as intp codes."""
    import goalfit as gf
    import goalfit.fit.data as fit_data

    r = np.random.default_rng(5)
    n, K, G = 1000, 3, 45
    g, y = r.integers(0, G, n), r.integers(0, K, n)
    cols = G * K if group_blind else K
    P = r.dirichlet(np.ones(cols), n)
    P[np.arange(n), (g * K + y) if group_blind else y] += 1.0
    P /= P.sum(axis=1, keepdims=True)
    # column generation: the codes are under test, not method='auto' (SplitFW's LPs over the 45 groups'
    # pairwise parity constraints cost minutes here and test nothing more about the codes)
    kw = dict(objective="error", constraints=[gf.demographic_parity_difference("g") <= 0.2], random_state=0,
              method="column_generation")
    if group_blind:  # the objective alone (a group-blind search over 135 joint columns is slow)
        kw.update(group_blind=True, constraints=[])
    out = []
    for narrow in (True, False):
        if not narrow:
            monkeypatch.setattr(fit_data, "compact_codes", lambda codes, n_values: np.asarray(codes, dtype=np.intp))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = gf.GoalClassifier("precomputed", **kw).fit(P, y, sensitive_features={"g": g})
            det = m.to_deterministic("hash")
        ts = m.train_sample_
        assert ts.y.dtype == ts.cells.dtype == (np.int8 if narrow else np.intp)
        out.append((m.classifier_.predict_proba(P, sensitive_features={"g": g}), m.result_.confusion,
                    det.train_max_violation_, ts.confusion(ts.member_codes[0], m.problem_.space)))
    (P1, R1, d1, C1), (P2, R2, d2, C2) = out
    np.testing.assert_array_equal(P1, P2)
    np.testing.assert_array_equal(C1, C2)
    np.testing.assert_array_equal(R1, R2)
    assert d1 == d2
