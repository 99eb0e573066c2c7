"""FairSubdataClassifier and SpectralFairSVC: the estimator API, errors, and real effects."""
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression

from goalfit import FairSubdataClassifier, SpectralFairSVC, metrics

pytest.importorskip("cvxpy")


def _synthetic(seed=0):
    """Ye & Xie Experiment 3: four Gaussian blocks of 50 points, covariance diag(4, 9)."""
    rng = np.random.default_rng(seed)
    X, y, g = [], [], []
    for mx, my, yy, gg in [(3, 4, 1, "a"), (2, 6, 1, "b"), (7, 5, 0, "a"), (8, 3, 0, "b")]:
        X.append(rng.multivariate_normal([mx, my], np.diag([4.0, 9.0]), 50))
        y += [yy] * 50
        g += [gg] * 50
    return np.vstack(X), np.array(y), np.array(g)


def test_fit_predict_attributes_and_clone():
    X, y, g = _synthetic()
    clf = FairSubdataClassifier(rho=2.0, t=1.0, lam=0.0).fit(X, y, sensitive_features=g)
    assert set(clf.predict(X)) <= {0, 1}
    assert clf.coef_.shape == (1, 2) and clf.intercept_.shape == (1,)
    assert clf.selected_.dtype == bool and clf.selected_.shape == (200,)
    assert clf.history_ and all("oracle_calls" in r for r in clf.history_)
    assert list(clf.groups_) == ["a", "b"]
    assert clone(clf).get_params()["rho"] == 2.0
    import pickle

    assert np.array_equal(pickle.loads(pickle.dumps(clf)).predict(X), clf.predict(X))
    ev = clf.evaluate(X, y, sensitive_features=g)
    pred = clf.predict(X)
    assert ev["accuracy"] == pytest.approx(np.mean(pred == y))
    assert ev["fairness"]["value"] == pytest.approx(metrics.error_rate_difference(y, pred, sensitive_features=g))


def test_fairness_penalty_reduces_the_omr_gap_on_experiment3_data():
    X, y, g = _synthetic(0)
    svm = FairSubdataClassifier(rho=0.0, t=1e6, lam=0.5 / 200).fit(X, y, sensitive_features=g)
    fair = FairSubdataClassifier(rho=2.0, t=1.0, lam=0.0).fit(X, y, sensitive_features=g)
    gap_svm = svm.evaluate(X, y, sensitive_features=g)["fairness"]["value"]
    gap_fair = fair.evaluate(X, y, sensitive_features=g)["fairness"]["value"]
    assert gap_fair < gap_svm - 0.02
    assert fair.score(X, y) > 0.8


def test_t_large_rho_zero_matches_a_plain_svm_qp():
    cp = pytest.importorskip("cvxpy")
    X, y, g = _synthetic(1)
    lam = 0.01
    clf = FairSubdataClassifier(rho=0.0, t=1e6, lam=lam).fit(X, y, sensitive_features=g)
    w, b = cp.Variable(2), cp.Variable()
    ys = np.where(y == 1, 1, -1)
    cp.Problem(cp.Minimize(cp.sum(cp.pos(1 - cp.multiply(ys, X @ w + b))) / 200 + lam * cp.sum_squares(w))).solve()
    assert np.allclose(clf.coef_[0], w.value, atol=1e-4)


@pytest.mark.parametrize("kw", [dict(model="logistic", t=np.log(0.5), lam=0.001),
                                dict(model="kernel_svm", t=0.5),
                                dict(model=LogisticRegression(), t=0.5),
                                dict(measure="dp", rho=1.0),
                                dict(measure="f1", rho=0.5),
                                dict(measure="omr", epsilon=0.0, rho=0.0)])
@pytest.mark.filterwarnings("ignore:the omr constraint holds on the training selection")
def test_models_and_measures_fit(kw):
    X, y, g = _synthetic(2)
    clf = FairSubdataClassifier(**kw).fit(X, y, sensitive_features=g)
    assert clf.score(X, y) > 0.7
    if kw.get("epsilon") is not None:
        assert clf.fairness_ <= 1e-12
    if kw.get("model") == "logistic":
        P = clf.predict_proba(X)
        assert np.allclose(P.sum(1), 1)


def test_multiclass_gmsvmf():
    rng = np.random.default_rng(3)
    X = np.vstack([rng.normal(m, 1.0, (30, 2)) for m in ([0, 0], [3, 0], [0, 3])])
    y = np.repeat(["p", "q", "r"], 30)
    g = np.tile([0, 1], 45)
    clf = FairSubdataClassifier(rho=0.5, lam=0.01).fit(X, y, sensitive_features=g)
    assert clf.coef_.shape == (3, 2)
    assert clf.score(X, y) > 0.8
    with pytest.raises(ValueError, match="omr"):
        FairSubdataClassifier(measure="dp").fit(X, y, sensitive_features=g)


def test_exact_solvers_agree_on_a_tiny_problem():
    pytest.importorskip("pyscipopt")
    X, y, g = _synthetic(4)
    idx = np.r_[0:3, 50:53, 100:103, 150:152]
    kw = dict(rho=0.5, t=1.0, lam=0.5)
    a = FairSubdataClassifier(solver="mip", **kw).fit(X[idx], y[idx], sensitive_features=g[idx])
    b = FairSubdataClassifier(solver="bruteforce", **kw).fit(X[idx], y[idx], sensitive_features=g[idx])
    c = FairSubdataClassifier(solver="irs", **kw).fit(X[idx], y[idx], sensitive_features=g[idx])
    assert a.mip_.optimal and a.mip_.gap == 0
    assert a.objective_ == pytest.approx(b.objective_, abs=1e-5)
    assert a.objective_ <= c.objective_ + 1e-5


def test_bad_input():
    X, y, g = _synthetic()
    with pytest.raises(ValueError, match="two groups"):
        FairSubdataClassifier().fit(X, y, sensitive_features=np.repeat([0, 1, 2, 3], 50))
    with pytest.raises(ValueError, match="sensitive_features"):
        FairSubdataClassifier().fit(X, y)
    # SpectralFairSVC reads its groups through the same helper (binary, no measure to relax it)
    with pytest.raises(ValueError, match="exactly two groups, got 4"):
        SpectralFairSVC().fit(X, y, sensitive_features=np.repeat([0, 1, 2, 3], 50))
    with pytest.raises(ValueError, match="'dp' needs sensitive_features"):
        SpectralFairSVC().fit(X, y)
    with pytest.raises(ValueError, match=f"one column with {len(y)} entries"):
        SpectralFairSVC().fit(X, y, sensitive_features=g[:-1])
    with pytest.raises(ValueError, match="NaN|infinity"):
        Xn = X.copy()
        Xn[0, 0] = np.nan
        FairSubdataClassifier().fit(Xn, y, sensitive_features=g)
    with pytest.raises(ValueError, match="rows"):
        FairSubdataClassifier().fit(X, y[:-1], sensitive_features=g)
    with pytest.raises(ValueError, match="t < 0"):
        FairSubdataClassifier(model="logistic", t=0.0).fit(X, y, sensitive_features=g)
    with pytest.raises(ValueError, match="empty"):
        FairSubdataClassifier(measure="fpr").fit(X[:150], y[:150], sensitive_features=g[:150])
    with pytest.raises(ValueError, match="epsilon"):
        FairSubdataClassifier(epsilon=-0.1).fit(X, y, sensitive_features=g)


def test_ssvm_reduces_mean_score_gap():
    X, y, g = _synthetic(5)
    loose = SpectralFairSVC(d=10.0, mu=0.0, lam=0.01).fit(X, y, sensitive_features=g)
    tight = SpectralFairSVC(d=0.0, mu=1.0, lam=0.01).fit(X, y, sensitive_features=g)
    gs = g == "b"
    gap = lambda m: abs(m.decision_function(X)[gs].mean() - m.decision_function(X)[~gs].mean())
    assert gap(tight) < gap(loose)
    B = X[gs].mean(0) - X[~gs].mean(0)
    assert abs(B @ tight.coef_[0]) <= 1e-5
    assert tight.converged_


def test_history_feeds_the_core_convergence_plot(tmp_path):
    from goalfit.report import plot_convergence

    X, y, g = _synthetic(6)
    clf = FairSubdataClassifier(rho=0.0, epsilon=0.02, t=1.0, lam=0.0, n_restarts=1, random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf.fit(X, y, sensitive_features=g)
    pred_gap = metrics.error_rate_difference(y, clf.predict(X), sensitive_features=g)
    assert clf.train_fairness_ == pytest.approx(pred_gap)
    assert (pred_gap > 0.02) == any("epsilon" in str(w.message) for w in caught)
    assert all(r["max_violation"] == max(0.0, r["fairness"] - 0.02) for r in clf.history_)
    path = plot_convergence({"GSVMF IRS": clf.history_}, tmp_path / "irs.png")
    assert path.exists() and path.stat().st_size > 1000


def test_core_report_of_a_fair_subdata_classifier(tmp_path):
    """build_report works for FairSubdataClassifier: prediction-based values next to the same SVM
    trained on all data, F(z) of the selection, and the IRS history for the convergence plot."""
    from goalfit.methods.subdata.wstep import LinearSVMStep
    from goalfit.report import build_report

    X, y, g = _synthetic(7)
    Xte, yte, gte = _synthetic(8)
    clf = FairSubdataClassifier(rho=0.0, epsilon=0.02, t=1.0, lam=0.01)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        clf.fit(X, y, sensitive_features=g)
    rep = build_report(clf, X, y, sensitive_features_train=g, X_test=Xte, y_test=yte, sensitive_features_test=gte)
    d = rep.data
    # goalfit columns: the classifier's own predictions
    assert d["metrics"]["train"]["accuracy"] == pytest.approx(clf.score(X, y))
    assert d["metrics"]["test"]["accuracy"] == pytest.approx(clf.score(Xte, yte))
    assert d["constraints"][0]["train"] == pytest.approx(clf.train_fairness_)
    assert d["constraints"][0]["test"] == pytest.approx(
        metrics.error_rate_difference(yte, clf.predict(Xte), sensitive_features=gte))
    assert d["constraints"][0]["bound"] == 0.02
    # baseline: the plain SVM QP on all training rows (Alg. 2 step 1)
    svm = LinearSVMStep(lam=0.01)
    m = svm.fit(X, np.where(y == 1, 1, -1), np.ones(len(y)))
    base_pred = np.where(svm.decision_function(m, Xte) > 0, 1, 0)
    assert d["baseline"]["metrics"]["test"]["accuracy"] == pytest.approx(np.mean(base_pred == yte))
    assert d["baseline"]["constraints"][0]["test"] == pytest.approx(
        metrics.error_rate_difference(yte, base_pred, sensitive_features=gte))
    assert d["selection"]["fairness_z_train"] == pytest.approx(clf.fairness_) and clf.fairness_ <= 0.02 + 1e-9
    assert d["selection"]["n_selected"] == int(clf.selected_.sum())
    assert d["n_oracle_calls"] == len(clf.history_) == len(d["history"])
    assert d["feasible_train"] == (clf.train_fairness_ <= 0.02 + 1e-7)
    assert set(rep.group_rates["sensitive_feature"]["goalfit"]) == {"selection", "TPR", "FPR"}
    sel_a = rep.group_rates["sensitive_feature"]["goalfit"]["selection"][0]
    assert sel_a == pytest.approx(np.mean(clf.predict(Xte)[gte == "a"] == 1))
    paths = rep.plot(tmp_path)
    assert [p.name for p in paths] == ["convergence.png", "group_rates.png"]
    assert "unconstrained" in rep.to_json()
    # F1 (no sensitive feature): an objective and no constraint
    f1 = FairSubdataClassifier(measure="f1", rho=0.5, t=1.0, lam=0.01).fit(X, y)
    r1 = build_report(f1, X, y)
    assert r1.data["constraints"] == [] and r1.data["objective"]["train"] == pytest.approx(
        1 - __import__("sklearn.metrics", fromlist=["f1_score"]).f1_score(y, f1.predict(X)))
    with pytest.raises(ValueError, match="not seen"):
        clf.unconstrained_baseline(X, np.where(y == 1, 1, 5))
