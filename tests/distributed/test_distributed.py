"""GoalClassifier on Dask collections (goalfit.distributed): equality with the in-memory fit,
the histogram path's error bound, partition alignment and partition-preserving predictions."""
import dask
import dask.array as da
import dask.dataframe as dd
import numpy as np
from sklearn.frozen import FrozenEstimator
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression, SGDClassifier

import goalfit as gf
from goalfit.report import build_report
from goalfit.distributed.statistics import histogram_sample
from goalfit.methods.plugin import PluginOracle, ThresholdOracle


@pytest.fixture(autouse=True)
def synchronous():
    with dask.config.set(scheduler="synchronous"):
        yield


def _data(n=6000, k=2, seed=0):
    """Features that carry the group (so demographic parity binds), 4 groups, k classes."""
    rng = np.random.default_rng(seed)
    g = rng.integers(0, 4, n)
    X = np.column_stack([rng.normal(size=(n, 3)), g - 1.5])
    score = X[:, 0] + 0.6 * g + rng.normal(size=n)
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, k + 1)[1:-1]))
    return X, y, np.array(["a", "b", "c", "d"])[g]


def _dask(X, y, s, chunk=1000):
    return da.from_array(X, chunks=(chunk, X.shape[1])), da.from_array(y, chunks=chunk), da.from_array(s, chunks=chunk)


DP = [gf.demographic_parity_difference("sensitive_feature") <= 0.01]
HMEAN_COV = ("hmean", [gf.coverage() >= 0.4])


@pytest.mark.parametrize("objective,constraints,oracle", [
    ("error", DP, "plugin"), (*HMEAN_COV, "plugin"), ("error", DP, "threshold")])
def test_binary_fit_equals_in_memory(objective, constraints, oracle):
    X, y, s = _data()
    lr = LogisticRegression().fit(X, y)
    kw = dict(objective=objective, constraints=constraints, method_params={"oracle": oracle})
    mem = gf.GoalClassifier(FrozenEstimator(lr), **kw).fit(X, y, sensitive_features=s)
    dsk = gf.GoalClassifier(FrozenEstimator(lr), **kw).fit(*_dask(X, y, s)[:2], sensitive_features=_dask(X, y, s)[2])
    assert dsk.statistics_["kind"] == "exact" and dsk.statistics_["n_partitions"] == 6
    assert dsk.method_ == mem.method_
    np.testing.assert_allclose(dsk.result_.confusion, mem.result_.confusion, atol=1e-12)
    ev_m = mem.evaluate(X, y, sensitive_features=s)
    ev_d = dsk.evaluate(*_dask(X, y, s)[:2], sensitive_features=_dask(X, y, s)[2])
    assert ev_d["objective"]["value"] == pytest.approx(ev_m["objective"]["value"], abs=1e-12)
    for a, b in zip(ev_d["constraints"], ev_m["constraints"]):
        assert a["value"] == pytest.approx(b["value"], abs=1e-12)
    assert ev_d["accuracy"] == pytest.approx(ev_m["accuracy"], abs=1e-12)


def test_sample_weight_and_precomputed_probabilities():
    X, y, s = _data(n=4000, seed=6)
    P = LogisticRegression().fit(X, y).predict_proba(X)
    w = np.random.default_rng(0).uniform(0.2, 3.0, len(y))
    kw = dict(estimator="precomputed", constraints=DP)
    mem = gf.GoalClassifier(**kw).fit(P, y, sensitive_features=s, sample_weight=w)
    Pd = da.from_array(P, chunks=(1000, 2))
    dsk = gf.GoalClassifier(**kw).fit(Pd, da.from_array(y, chunks=1000), sensitive_features=da.from_array(s, chunks=1000),
                                      sample_weight=w)  # in memory, cut at the known chunks
    np.testing.assert_allclose(dsk.result_.confusion, mem.result_.confusion, atol=1e-12)
    # a partition of zero weights is fine (the in-memory fit on the same weights); bad weights are
    # refused as in memory, naming the partition
    w0 = w.copy()
    w0[1000:2000] = 0.0
    mem0 = gf.GoalClassifier(**kw).fit(P, y, sensitive_features=s, sample_weight=w0)
    dsk0 = gf.GoalClassifier(**kw).fit(Pd, da.from_array(y, chunks=1000),
                                       sensitive_features=da.from_array(s, chunks=1000), sample_weight=w0)
    np.testing.assert_allclose(dsk0.result_.confusion, mem0.result_.confusion, atol=1e-12)
    for bad, msg in ((-1.0, "partition 2: sample_weight must be non-negative"), (np.nan, "partition 2: .*NaN")):
        wb = w.copy()
        wb[2500] = bad
        with pytest.raises(ValueError, match=msg):
            gf.GoalClassifier(**kw).fit(Pd, da.from_array(y, chunks=1000),
                                        sensitive_features=da.from_array(s, chunks=1000), sample_weight=wb)
    with pytest.raises(ValueError, match="shape"):
        gf.GoalClassifier(**kw).fit(da.from_array(np.hstack([P, P]), chunks=(1000, 4)),
                                    da.from_array(y, chunks=1000), sensitive_features=da.from_array(s, chunks=1000))
    # probabilities that do not sum to 1 are refused as in memory (the Dask path did not check the sums)
    with pytest.raises(ValueError, match=r"partition \d+: precomputed probabilities must sum to 1 on each row"):
        gf.GoalClassifier(**kw).fit(da.from_array(P * 0.9, chunks=(1000, 2)),
                                    da.from_array(y, chunks=1000), sensitive_features=da.from_array(s, chunks=1000))


def test_multiclass_map_reduce_equals_in_memory():
    X, y, s = _data(n=3000, k=3, seed=1)
    lr = LogisticRegression().fit(X, y)
    kw = dict(objective="error", constraints=[gf.positive_prediction_rate(0) <= 0.25])
    mem = gf.GoalClassifier(FrozenEstimator(lr), **kw).fit(X, y, sensitive_features=s)
    Xd, yd, sd = _dask(X, y, s, chunk=700)
    dsk = gf.GoalClassifier(FrozenEstimator(lr), **kw).fit(Xd, yd, sensitive_features=sd)
    assert dsk.statistics_["kind"] == "map_reduce"
    assert dsk.result_.n_oracle_calls == mem.result_.n_oracle_calls > 2
    np.testing.assert_allclose(dsk.result_.confusion, mem.result_.confusion, atol=1e-12)
    assert dsk.result_.confusion[:, :, 0].sum() <= 0.25 + 1e-9


def test_histogram_rates_within_the_stated_bound():
    X, y, s = _data(n=8000, seed=2)
    lr = LogisticRegression().fit(X, y)
    Xd, yd, sd = _dask(X, y, s)
    # the bound eps is the largest bin share of a (cell, class) row, by brute force
    n_bins = 64
    eta = lr.predict_proba(X)[:, 1]
    cells = np.unique(s, return_inverse=True)[1]
    hist = np.zeros((4, 2, n_bins))
    np.add.at(hist, (cells, y, np.minimum((eta * n_bins).astype(int), n_bins - 1)), 1.0)
    P, yc, cc, w, eps = histogram_sample(hist)
    assert eps == pytest.approx((hist.max(axis=2) / hist.sum(axis=2)).max())
    assert w.sum() == len(y) and 0.01 < eps < 0.2

    # every member an oracle returns on the histogram sample: rates within eps of the member's
    # true rates on the data (the statement of goalfit.distributed.statistics)
    from goalfit.confusion import ConfusionSpace
    space = ConfusionSpace.from_codes(y, cells, np.array([0, 1]), pd.DataFrame({"g": list("abcd")}))
    rng = np.random.default_rng(0)
    mass = space.row_mass[:, :, None]
    for Oracle in (PluginOracle, ThresholdOracle):
        hist_oracle = Oracle(P, yc, cc, space, w)
        worst = 0.0
        for _ in range(200):
            member, C_hist = hist_oracle(rng.normal(size=space.shape))
            pred = member.predict_codes(X, np.column_stack([1 - eta, eta]), cells)
            C_true = gf.confusion.confusion_tensor(y, pred, cells, 2, 4)
            worst = max(worst, float(np.abs((C_hist - C_true) / mass).max()))
        assert worst <= eps + 1e-12
        assert worst > eps / 20  # the bound is not vacuous at this resolution

    # the fitted classifier: reported training rates vs its exact rates on the data
    with gf.distributed.options(statistics="histogram", n_bins=n_bins):
        hst = gf.GoalClassifier(FrozenEstimator(lr), constraints=DP).fit(Xd, yd, sensitive_features=sd)
    assert hst.statistics_["kind"] == "histogram"
    assert hst.statistics_["rate_error_bound"] == pytest.approx(eps)
    C_true = hst.classifier_.expected_confusion_tensor(X, y, sensitive_features=s)
    assert np.abs((hst.result_.confusion - C_true) / mass).max() <= eps + 1e-12
    ev = hst.evaluate(X, y, sensitive_features=s)
    assert ev["constraints"][0]["value"] <= 0.01 + 2 * eps


def test_encode_cells_on_distinct_rows_equals_the_encoder():
    from goalfit.confusion import CellEncoder
    from goalfit.distributed.partitions import encode_cells

    rng = np.random.default_rng(0)
    s = np.array(["a", "b", "c"])[rng.integers(0, 3, 500)]
    frame = pd.DataFrame({"g": s, "h": rng.integers(0, 2, 500)}, index=np.arange(500) + 7)
    for sf in (s, pd.Series(s, name="g"), frame):
        enc = CellEncoder().fit(sf)
        np.testing.assert_array_equal(encode_cells(enc, sf, 500), enc.transform(sf, 500))
    bad = frame.copy()
    bad.iloc[3, 0] = "zz"
    with pytest.raises(ValueError, match="'zz' was not seen"):
        encode_cells(CellEncoder().fit(frame), bad, 500)
    bad.iloc[3, 0] = None
    with pytest.raises(ValueError, match="missing values"):
        encode_cells(CellEncoder().fit(frame), bad, 500)


def test_unaligned_partitions_raise_a_clear_error():
    X, y, s = _data(n=3000)
    Xd = da.from_array(X, chunks=(1000, 4))
    yd = da.from_array(y, chunks=1000)
    lr = LogisticRegression().fit(X, y)
    clf = gf.GoalClassifier(FrozenEstimator(lr), constraints=DP)
    with pytest.raises(ValueError, match="partition 0: X has 1000 rows but sensitive_features has 750"):
        clf.fit(Xd, yd, sensitive_features=da.from_array(s, chunks=((750, 1250, 1000),)))
    with pytest.raises(ValueError, match="X has 3 partitions but sensitive_features has 2"):
        clf.fit(Xd, yd, sensitive_features=da.from_array(s, chunks=1500))
    # unknown partition sizes (Dask DataFrames) are checked inside the tasks
    Xf = dd.from_pandas(pd.DataFrame(X, columns=list("pqrs")), npartitions=3, sort=False)
    sf = dd.from_pandas(pd.Series(s, name="sensitive_feature").iloc[::-1].reset_index(drop=True).iloc[:2990],
                        npartitions=3, sort=False)
    yf = dd.from_pandas(pd.Series(y), npartitions=3, sort=False)
    with pytest.raises(ValueError, match="different divisions"):
        clf.fit(Xf, yf, sensitive_features=sf)
    with pytest.raises(ValueError, match=r"partition \d: X has \d+ rows but sensitive_features has \d+"):
        clf.fit(Xf.clear_divisions(), yf.clear_divisions(), sensitive_features=sf.clear_divisions())


def test_dataframe_on_local_cluster_keeps_partitioning():
    distributed = pytest.importorskip("dask.distributed")
    X, y, s = _data(n=4000, seed=3)
    frame = pd.DataFrame(X, columns=list("pqrs")).assign(label=y, group=s)
    df = dd.from_pandas(frame, npartitions=5, sort=False)
    lr = LogisticRegression().fit(frame[list("pqrs")], y)
    mem = gf.GoalClassifier(FrozenEstimator(lr), constraints=[gf.demographic_parity_difference("group") <= 0.01]).fit(
        frame[list("pqrs")], y, sensitive_features=frame[["group"]])
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster, distributed.Client(cluster), \
            dask.config.set(scheduler=None):
        dsk = gf.GoalClassifier(FrozenEstimator(lr), constraints=[gf.demographic_parity_difference("group") <= 0.01]).fit(
            df[list("pqrs")], df["label"], sensitive_features=df[["group"]])
        proba = dsk.predict_proba(df[list("pqrs")], sensitive_features=df[["group"]])
        pred = dsk.predict(df[list("pqrs")], sensitive_features=df[["group"]], random_state=0)
        assert isinstance(proba, da.Array) and proba.numblocks == (df.npartitions, 1)
        sizes = tuple(len(p) for p in df.partitions)
        assert proba.compute_chunk_sizes().chunks[0] == sizes
        assert pred.compute_chunk_sizes().chunks[0] == sizes
        P = proba.compute()
        p1, p2 = pred.compute(), dsk.predict(df[list("pqrs")], sensitive_features=df[["group"]], random_state=0).compute()
        report = build_report(dsk, df[list("pqrs")], df["label"], sensitive_features_train=df[["group"]])
    np.testing.assert_allclose(dsk.result_.confusion, mem.result_.confusion, atol=1e-12)
    np.testing.assert_allclose(P, mem.predict_proba(frame[list("pqrs")], sensitive_features=frame[["group"]]), atol=0)
    np.testing.assert_array_equal(p1, p2)  # reproducible per seed
    assert set(np.unique(p1)) <= {0, 1}
    ref = build_report(mem, frame[list("pqrs")], y, sensitive_features_train=frame[["group"]],
                                 confidence=None)
    assert report.data["objective"]["train"] == pytest.approx(ref.data["objective"]["train"], abs=1e-12)
    assert report.data["constraints"][0]["train"] == pytest.approx(ref.data["constraints"][0]["train"], abs=1e-12)
    assert report.data["baseline"]["objective"]["train"] == pytest.approx(ref.data["baseline"]["objective"]["train"],
                                                                          abs=1e-12)
    ours, theirs = report.group_rates["group"], ref.group_rates["group"]
    for grp in ours["groups"]:
        i, j = ours["groups"].index(grp), theirs["groups"].index(grp)
        for r in ("selection", "TPR", "FPR"):
            assert ours["goalfit"][r][i] == pytest.approx(theirs["goalfit"][r][j], abs=1e-12)


def test_partial_fit_over_partitions():
    X, y, s = _data(n=3000, seed=4)
    Xd, yd, sd = _dask(X, y, s)
    sgd = SGDClassifier(loss="log_loss", random_state=0)
    clf = gf.GoalClassifier(sgd, constraints=DP, random_state=0).fit(Xd, yd, sensitive_features=sd)
    # the same partial_fit calls in memory, in the order the fit drew
    order = np.random.RandomState(0).permutation(3)
    ref = SGDClassifier(loss="log_loss", random_state=0)
    for k in order:
        ref.partial_fit(X[1000 * k:1000 * (k + 1)], y[1000 * k:1000 * (k + 1)], classes=np.array([0, 1]))
    np.testing.assert_allclose(clf.estimator_.coef_, ref.coef_)
    with gf.distributed.options(partial_fit_epochs=2):  # a second pass in a new shuffled order
        two = gf.GoalClassifier(sgd, constraints=DP, random_state=0).fit(Xd, yd, sensitive_features=sd)
    rng = np.random.RandomState(0)
    ref2 = SGDClassifier(loss="log_loss", random_state=0)
    for k in np.concatenate([rng.permutation(3), rng.permutation(3)]):
        ref2.partial_fit(X[1000 * k:1000 * (k + 1)], y[1000 * k:1000 * (k + 1)], classes=np.array([0, 1]))
    np.testing.assert_allclose(two.estimator_.coef_, ref2.coef_)
    assert np.abs(two.estimator_.coef_ - ref.coef_).max() > 1e-6  # the second epoch moved the weights
    mem = gf.GoalClassifier(FrozenEstimator(ref), constraints=DP).fit(X, y, sensitive_features=s)
    np.testing.assert_allclose(clf.result_.confusion, mem.result_.confusion, atol=1e-12)


def test_options_that_need_memory_are_refused():
    X, y, s = _data(n=2000)
    Xd, yd, sd = _dask(X, y, s)
    with pytest.raises(ValueError, match="has no partial_fit"):
        gf.GoalClassifier(LogisticRegression()).fit(Xd, yd, sensitive_features=sd)
    with pytest.raises(ValueError, match="confidence is not available on Dask"):
        gf.GoalClassifier(FrozenEstimator(LogisticRegression().fit(X, y)), confidence=0.9).fit(Xd, yd, sensitive_features=sd)
    with pytest.raises(ValueError, match="group_blind=True is not available on Dask"):
        gf.GoalClassifier("precomputed", group_blind=True).fit(da.from_array(np.eye(2)[y], chunks=(1000, 2)), yd,
                                                               sensitive_features=sd)
    with pytest.raises(ValueError, match="power of two"):
        with gf.distributed.options(n_bins=1000):
            pass
    model = gf.GoalClassifier(FrozenEstimator(LogisticRegression().fit(X, y))).fit(Xd, yd, sensitive_features=sd)
    with pytest.raises(ValueError, match="datasets= is not read on Dask collections"):  # not silently dropped
        model.evaluate(Xd, yd, sensitive_features=sd, datasets={"pool": (X[:10], None)})


def test_cli_fits_a_parquet_glob_on_a_scheduler(tmp_path):
    import json

    import joblib
    from typer.testing import CliRunner

    from goalfit.cli.app import app

    distributed = pytest.importorskip("dask.distributed")
    X, y, s = _data(n=3000, seed=5)
    cols = list("pqrs")
    frame = pd.DataFrame(X, columns=cols).assign(label=y, group=s)
    for k in range(3):
        frame.iloc[1000 * k:1000 * (k + 1)].to_parquet(tmp_path / f"part-{k}.parquet")
    lr = LogisticRegression().fit(frame[cols], y)
    joblib.dump(lr, tmp_path / "lr.joblib")
    spec = tmp_path / "spec.toml"
    spec.write_text(f'[data]\nfiles = "{tmp_path}/part-*.parquet"\nlabel = "label"\nsensitive = ["group"]\n'
                    f'[model]\nprefit = "{tmp_path}/lr.joblib"\n'
                    '[goals]\nconstraints = ["demographic_parity_difference(\'group\') <= 0.01"]\n')
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, dask.config.set(scheduler=None):
        res = CliRunner().invoke(app, ["fit", str(spec), "--out", str(tmp_path / "out"),
                                       "--scheduler", cluster.scheduler_address])
    assert res.exit_code == 0, res.output
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    mem = gf.GoalClassifier(FrozenEstimator(lr), constraints=[gf.demographic_parity_difference("group") <= 0.01]).fit(
        frame[cols], y, sensitive_features=frame[["group"]])
    ev = mem.evaluate(frame[cols], y, sensitive_features=frame[["group"]])
    assert report["objective"]["train"] == pytest.approx(ev["objective"]["value"], abs=1e-12)
    assert report["constraints"][0]["train"] == pytest.approx(ev["constraints"][0]["value"], abs=1e-12)
    assert report["dask_statistics"]["kind"] == "exact" and report["dask_statistics"]["n_partitions"] == 3
    assert report["n_train"] == 3000
    spec.write_text(spec.read_text().replace("part-*", "nothing-*"))
    res = CliRunner().invoke(app, ["fit", str(spec), "--out", str(tmp_path / "out2"), "--scheduler", "inproc://x"])
    assert res.exit_code == 2 and "no file matches" in res.output


def test_to_deterministic_after_a_dask_fit_says_why_it_cannot():
    import dask.array as da

    rng = np.random.default_rng(0)
    P1 = rng.uniform(size=400)
    y = (rng.uniform(size=400) < P1).astype(int)
    g = rng.choice(["a", "b"], 400)
    m = gf.GoalClassifier("precomputed", constraints=[gf.demographic_parity_difference() <= 0.1]).fit(
        da.from_array(np.c_[1 - P1, P1], chunks=(100, 2)), da.from_array(y, chunks=100),
        sensitive_features=da.from_array(g, chunks=100))
    with pytest.raises(ValueError, match="Dask"):
        m.to_deterministic("hash")


def test_distributed_fit_function():
    """goalfit.distributed.fit (0.1's public function; it imported a deleted module in 0.2's first
    drafts) fits a GoalClassifier on Dask input as its own fit does, and is in __all__."""
    import goalfit.distributed as gd

    assert {"fit", "predict", "predict_proba", "evaluate"} <= set(gd.__all__)
    X, y, s = _data(n=1200, seed=3)
    lr = LogisticRegression().fit(X, y)
    Xd, yd, sd = _dask(X, y, s, chunk=400)
    kw = dict(constraints=DP)
    model = gf.GoalClassifier(FrozenEstimator(lr), **kw)
    assert gd.fit(model, Xd, yd, sensitive_features=sd) is model
    mem = gf.GoalClassifier(FrozenEstimator(lr), **kw).fit(X, y, sensitive_features=s)
    assert model.statistics_["n_partitions"] == 3
    np.testing.assert_allclose(model.result_.confusion, mem.result_.confusion, atol=1e-12)
    ev = gd.evaluate(model, Xd, yd, sensitive_features=sd)
    assert ev["constraints"][0]["value"] == pytest.approx(mem.evaluate(X, y, sensitive_features=s)["constraints"][0]
                                                          ["value"], abs=1e-12)
    np.testing.assert_allclose(gd.predict_proba(model, Xd, sensitive_features=sd).compute(),
                               mem.predict_proba(X, sensitive_features=s), atol=1e-12)
    with pytest.raises(TypeError, match="fits a GoalClassifier"):
        gd.fit(gf.RampClassifier(), Xd, yd)
