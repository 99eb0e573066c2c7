"""AdaptiveSurrogateClassifier and the black-box baselines, end to end."""
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression

import goalfit as gf
from goalfit.datasets import make_jiang_simulated

pytestmark = pytest.mark.usefixtures("one_thread")  # tests/conftest.py


def _loss(model, X, y, **kw):
    """The objective value of ``model.evaluate`` (the core's layout)."""
    return model.evaluate(X, y, **kw)["objective"]["value"]


def test_simulated_gmean_ordering_proposed_postshift_logreg():
    """Jiang et al. Table 2 on one seed: proposed < post-shift < logistic regression (= 1)."""
    X, y = make_jiang_simulated(3000, random_state=2)
    Xt, yt = make_jiang_simulated(3000, random_state=102)
    lr = gf.gmean_loss()(yt, LogisticRegression().fit(X, y).decision_function(Xt))
    ps = gf.BlackBoxPostShiftClassifier("gmean").fit(X, y)
    est = gf.AdaptiveSurrogateClassifier("gmean", max_iter=60, random_state=2,
                                         method_params={"sigma": 0.5, "step_size": 0.5, "eval_every": 5}).fit(X, y)
    proposed, post = _loss(est, Xt, yt), _loss(ps, Xt, yt)
    assert lr == pytest.approx(1.0)  # logistic regression predicts all negative
    assert 0.40 < post < 0.58  # the paper: 0.498
    assert proposed < post - 0.05  # the paper: 0.344
    # the paths are kept and consistent
    T, K = est.max_iter, 2
    assert est.surrogate_names_ == ["hinge_pos", "hinge_neg"]
    assert est.surrogate_path_.shape == (T + 1, K) and est.target_path_.shape == (T, K)
    assert est.gradient_path_.shape == (T, K) and np.isfinite(est.condition_numbers_).all()
    it = est.metric_path_[:, 0].astype(int)
    assert est.best_iteration_ in it and np.all(np.diff(it) == 5)
    assert est.validation_metric_ == pytest.approx(est.metric_path_[:, 1].min())
    assert est.validation_metric_ == pytest.approx(_loss(est, X, y))
    np.testing.assert_array_equal(est.predict(Xt), (est.decision_function(Xt) > 0).astype(int))
    # the result protocol
    assert est.method_ == "interpolation" and est.feasible_ and est.max_violation_ == 0.0
    assert len(est.history_) == len(it) and {"iteration", "objective", "max_violation", "seconds",
                                             "oracle_calls"} <= set(est.history_[0])
    assert est.result_.n_oracle_calls == est.n_metric_calls_ == est.history_[-1]["oracle_calls"]
    np.testing.assert_array_equal(est.predict_proba(Xt)[:, 1], est.predict(Xt))


def test_evaluate_has_the_goal_classifier_layout():
    """evaluate: {"objective": {name, value, loss, score, loss_label, score_label}, "constraints": [],
    "accuracy"}, as GoalClassifier (value = loss, the minimized 1 - score)."""
    X, y, g = _groups_data(2)
    est = gf.AdaptiveSurrogateClassifier("macro_f1_over_groups", max_iter=4, init="logistic", random_state=0,
                                         method_params={"sigma": 0.3, "eval_every": 2}).fit(
        X, y, sensitive_features=g)
    out = est.evaluate(X, y, sensitive_features=g)
    core = gf.GoalClassifier(objective="error").fit(X, y, sensitive_features=g).evaluate(X, y, sensitive_features=g)
    assert set(out) == set(core) and out["constraints"] == []
    assert set(out["objective"]) == set(core["objective"]) == {"name", "value", "loss", "score", "loss_label",
                                                                "score_label"}
    assert out["objective"]["name"] == "macro_f1_over_groups"
    from sklearn.metrics import f1_score

    pred = est.predict(X)
    ref = np.mean([f1_score(y[g == v], pred[g == v], pos_label="yes") for v in ("F", "M")])
    assert out["objective"]["value"] == out["objective"]["loss"] == pytest.approx(1 - ref, abs=1e-12)
    assert out["objective"]["score"] == pytest.approx(ref, abs=1e-12)
    assert (out["objective"]["loss_label"], out["objective"]["score_label"]) == ("1 - macro-F1 over groups",
                                                                               "macro-F1 over groups")
    assert core["objective"]["score"] is None and core["objective"]["loss"] == core["objective"]["value"]
    assert out["accuracy"] == pytest.approx(np.mean(pred == y), abs=1e-12)
    ps = gf.BlackBoxPostShiftClassifier("gmean").fit(X, y)
    assert set(ps.evaluate(X, y)) == {"objective", "constraints", "accuracy"}
    with pytest.raises(ValueError, match="do not match the classes"):
        est.evaluate(X, np.where(y == "yes", "maybe", y), sensitive_features=g)


def _groups_data(seed=0, n=900):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    g = np.where(rng.random(n) < 0.4, "F", "M")
    y = np.where(X[:, 0] + 0.7 * (g == "F") + rng.normal(size=n) > 0.8, "yes", "no")
    return X, y, g


def test_macro_f_with_validation_set_and_restarts():
    X, y, g = _groups_data()
    tr, va = slice(0, 600), slice(600, 900)
    est = gf.AdaptiveSurrogateClassifier("macro_f1_over_groups", max_iter=15, init="logistic", random_state=0,
                                         method_params={"eval_every": 5, "sigma": 0.3, "n_restarts": 2})
    est.fit(X[tr], y[tr], sensitive_features=g[tr], X_val=X[va], y_val=y[va], sensitive_features_val=g[va])
    # the slices of macro-F over groups: positives and negatives of each group (K = 4)
    assert est.surrogate_names_ == ["hinge_pos[sensitive_feature='F']", "hinge_neg[sensitive_feature='F']",
                                    "hinge_pos[sensitive_feature='M']", "hinge_neg[sensitive_feature='M']"]
    assert len(est.result_.details.paths) == 2 and {h["restart"] for h in est.history_} == {0, 1}
    assert est.validation_metric_ == pytest.approx(_loss(est, X[va], y[va], sensitive_features=g[va]))
    paths = est.result_.details.paths
    assert est.validation_metric_ == pytest.approx(min(p.best_metric for p in paths))
    assert est.result_.details.selection.sample == "validation"
    assert set(est.predict(X[va])) <= {"yes", "no"}
    ps = gf.BlackBoxPostShiftClassifier("macro_f1_over_groups").fit(
        X[tr], y[tr], sensitive_features=g[tr], X_val=X[va], y_val=y[va], sensitive_features_val=g[va])
    assert ps.validation_metric_ == pytest.approx(_loss(ps, X[va], y[va], sensitive_features=g[va]))
    rf = gf.RelaxedFMClassifier().fit(X[tr], y[tr], sensitive_features=g[tr], X_val=X[va], y_val=y[va],
                                      sensitive_features_val=g[va])
    assert rf.validation_metric_ == pytest.approx(min(v for _, v in rf.metric_path_))
    assert rf.validation_metric_ == pytest.approx(_loss(rf, X[va], y[va], sensitive_features=g[va]))
    clone(est)  # scikit-learn conventions
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(again.decision_function(X[va]), est.decision_function(X[va]))


def test_explicit_overlapping_surrogates_and_sigmoid():
    """§6.5: surrogates over overlapping goal groups of several slicing columns, sigmoid loss."""
    from goalfit.methods.surrogate import SliceSurrogate

    X, y, g = _groups_data(1)
    S = pd.DataFrame({"sex": g, "x1pos": X[:, 1] > 0})
    surs = [SliceSurrogate("sigmoid", lab, grp) for grp in ({"sex": "F"}, {"sex": "M"}, {"x1pos": True})
            for lab in (1, -1)]
    est = gf.AdaptiveSurrogateClassifier("gmean", surrogates=surs, max_iter=5, random_state=0,
                                         method_params={"eval_every": 5, "param_bound": 3.0}).fit(
        X, y, sensitive_features=S)
    assert est.surrogate_names_ == ["sigmoid_pos[sex='F']", "sigmoid_neg[sex='F']", "sigmoid_pos[sex='M']",
                                    "sigmoid_neg[sex='M']", "sigmoid_pos[x1pos=True]", "sigmoid_neg[x1pos=True]"]
    assert [s["n_examples"] for s in est.surrogates_[4:]] == [int(np.sum((X[:, 1] > 0) & (y == "yes"))),
                                                             int(np.sum((X[:, 1] > 0) & (y == "no")))]
    assert np.abs(est.theta_).max() <= 3.0 + 1e-12
    assert est.condition_numbers_.max() < 1e4  # bounded weights: the sigmoids do not saturate
    # the model never reads the groups: evaluation data may lack them (gmean reads none)
    assert _loss(est, X, y) == pytest.approx(est.validation_metric_)


def test_finite_difference_estimator_path():
    X, y = make_jiang_simulated(1000, random_state=0)
    est = gf.AdaptiveSurrogateClassifier("gmean", method="finite_difference", max_iter=5, random_state=0,
                                         method_params={"sigma": 0.02, "eval_every": 5}).fit(X, y)
    assert np.isnan(est.condition_numbers_).all() and est.n_metric_calls_ > 5 * 50
    assert est.method_ == "finite_difference"


def test_torch_module_and_adagrad():
    torch = pytest.importorskip("torch")
    X, y = make_jiang_simulated(600, random_state=0)
    torch.manual_seed(0)
    mlp = torch.nn.Sequential(torch.nn.Linear(2, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    est = gf.AdaptiveSurrogateClassifier("gmean", estimator=mlp, max_iter=3, random_state=0,
                                         method_params={"projection": "adagrad", "projection_lr": 0.05,
                                                        "projection_iter": 10, "eval_every": 3, "sigma": 0.1,
                                                        "n_perturbations": 20})
    est.fit(X, y)
    assert est.theta_.shape == (2 * 8 + 8 + 8 + 1,)
    with torch.no_grad():
        s = est.module_(torch.as_tensor(X, dtype=torch.float64)).numpy().ravel()
    np.testing.assert_allclose(est.decision_function(X), s, atol=1e-10)
    assert est.validation_metric_ == pytest.approx(_loss(est, X, y))
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_allclose(again.decision_function(X), s, atol=1e-10)
    lin = gf.AdaptiveSurrogateClassifier("gmean", max_iter=3, random_state=0,
                                         method_params={"projection": "adagrad", "eval_every": 3}).fit(X, y)
    assert lin.coef_.shape == (2,)


def test_bad_input():
    X, y, g = _groups_data()
    est = gf.AdaptiveSurrogateClassifier(max_iter=2)
    with pytest.raises(ValueError, match="binary"):
        est.fit(X, np.arange(len(X)) % 3)
    with pytest.raises(ValueError, match="X has 900 rows but y has 899"):
        est.fit(X, y[:-1])
    with pytest.raises(ValueError, match="X_val has 10 rows but y_val has 9"):
        est.fit(X, y, X_val=X[:10], y_val=y[:9])
    with pytest.raises(ValueError, match="both X_val and y_val"):
        est.fit(X, y, X_val=X)
    with pytest.raises(ValueError):
        est.fit(np.where(np.eye(len(X), 4) > 0, np.nan, X), y)
    with pytest.raises(ValueError, match="at least K"):
        gf.AdaptiveSurrogateClassifier("macro_f1_over_groups", max_iter=2,
                                       method_params={"n_perturbations": 3}).fit(X, y, sensitive_features=g)
    with pytest.raises(ValueError, match="training sample"):
        gf.AdaptiveSurrogateClassifier(method="finite_difference", max_iter=2).fit(X, y, X_val=X, y_val=y)
    with pytest.raises(ValueError, match="empty group|no example"):
        from goalfit.methods.surrogate import SliceSurrogate

        gf.AdaptiveSurrogateClassifier(surrogates=[SliceSurrogate("hinge", 1, "Z")], max_iter=2).fit(
            X, y, sensitive_features=g)
    with pytest.raises(ValueError, match="do not match the classes"):
        est.fit(X, y, X_val=X, y_val=np.where(y == "yes", "maybe", y))
    with pytest.raises(ValueError, match="unknown method_params key 'sigmaa'.*did you mean 'sigma'"):
        gf.AdaptiveSurrogateClassifier(method_params={"sigmaa": 1.0}).fit(X, y)
    with pytest.raises(ValueError, match="step_size"):
        gf.AdaptiveSurrogateClassifier(method_params={"step_size": -1.0}).fit(X, y)
    with pytest.raises(ValueError, match="method"):
        gf.AdaptiveSurrogateClassifier(method="newton").fit(X, y)
    with pytest.raises(ValueError, match="polyhedral"):
        gf.AdaptiveSurrogateClassifier(constraints=[gf.kl_quantification() <= 0.1]).fit(X, y)
    with pytest.raises(ValueError, match="sensitive_features_val given without X_val"):
        est.fit(X, y, sensitive_features_val=g)


def test_quantile_surrogates_for_prbep():
    """§6.3 set-up: three quantile precision-at-recall surrogates, PRBEP as the black box."""
    from goalfit.methods.surrogate import QuantilePrecisionSurrogate, SurrogateSet

    rng = np.random.default_rng(0)
    X = rng.normal(size=(800, 3))
    y = (X[:, 0] - 0.5 * X[:, 1] + rng.normal(size=800) > 1.2).astype(int)
    surs = [QuantilePrecisionSurrogate(t) for t in (0.25, 0.5, 0.75)]
    est = gf.AdaptiveSurrogateClassifier("prbep", surrogates=surs, max_iter=10, init="logistic", random_state=0,
                                         method_params={"eval_every": 5, "sigma": 0.2, "step_size": 0.2}).fit(X, y)
    assert est.surrogate_names_ == ["quantile_prec@rec0.25", "quantile_prec@rec0.5", "quantile_prec@rec0.75"]
    k = int(y.sum())
    top = np.argsort(-est.decision_function(X))[:k]
    assert est.validation_metric_ == pytest.approx(1 - y[top].mean())
    prbep = y[top].mean()  # precision at the top k = recall at the top k (k positives): the break-even point
    assert est.evaluate(X, y)["objective"] == {"name": "prbep_loss", "value": pytest.approx(1 - prbep),
                                               "loss": pytest.approx(1 - prbep), "score": pytest.approx(prbep),
                                               "loss_label": "1 - PRBEP", "score_label": "PRBEP"}
    # the first profile is phi at the logistic start, computed by the quantile formula
    lr = LogisticRegression(max_iter=1000).fit(X, y)
    np.testing.assert_allclose(est.surrogate_path_[0],
                               SurrogateSet(surs, 2 * y - 1).values(lr.decision_function(X)), rtol=1e-6)


def test_quantile_surrogate_torch_value_matches_numpy():
    torch = pytest.importorskip("torch")
    from goalfit.methods.surrogate import QuantilePrecisionSurrogate, SurrogateSet

    rng = np.random.default_rng(1)
    y = np.where(rng.random(300) < 0.3, 1, -1)
    s = rng.normal(size=300) + y
    sur = SurrogateSet([QuantilePrecisionSurrogate(0.3), QuantilePrecisionSurrogate(0.8)], y)
    st = torch.tensor(s, dtype=torch.float64, requires_grad=True)
    v = sur.torch_values(st)
    np.testing.assert_allclose(v.detach().numpy(), sur.values(s), atol=1e-12)
    (g,) = torch.autograd.grad(v.sum(), st)
    np.testing.assert_allclose(g.numpy(), sur.score_jacobian(s).sum(axis=0), atol=1e-12)


def test_ill_conditioned_estimates_warn_once_per_run():
    from goalfit.methods.surrogate import SliceSurrogate
    from goalfit.methods.surrogate.gradients import IllConditionedWarning

    X, y = make_jiang_simulated(500, random_state=0)
    same = [SliceSurrogate("hinge", 1), SliceSurrogate("hinge", 1), SliceSurrogate("hinge", -1)]
    with pytest.warns(IllConditionedWarning, match="4 of 4 gradient estimates") as rec:
        est = gf.AdaptiveSurrogateClassifier("gmean", surrogates=same, max_iter=4, random_state=0,
                                             method_params={"eval_every": 2}).fit(X, y)
    assert sum(issubclass(w.category, IllConditionedWarning) for w in rec) == 1
    assert (est.condition_numbers_ > 1e8).all()


def test_works_without_torch():
    """torch is optional: linear models run, torch back ends raise a clear ImportError."""
    import subprocess
    import sys

    code = """
import sys, importlib.abc
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == 'torch' or name.startswith('torch.'):
            raise ImportError('blocked')
sys.meta_path.insert(0, Block())
import goalfit as gf
from goalfit.datasets import make_jiang_simulated
X, y = make_jiang_simulated(300, random_state=0)
gf.AdaptiveSurrogateClassifier(max_iter=2, method_params={'eval_every': 2}).fit(X, y)
try:
    gf.AdaptiveSurrogateClassifier(max_iter=2, method_params={'projection': 'adagrad'}).fit(X, y)
except ImportError as err:
    print(err)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "pip install 'goalfit[torch]'" in out.stdout


def test_alpha_shrinks_the_weights():
    X, y, _ = _groups_data(3)
    kw = dict(max_iter=8, init="logistic", random_state=0, method_params={"sigma": 0.3})
    a = gf.AdaptiveSurrogateClassifier("gmean", **kw).fit(X, y)
    b = gf.AdaptiveSurrogateClassifier("gmean", alpha=1.0, **kw).fit(X, y)
    assert np.linalg.norm(b.coef_) < 0.5 * np.linalg.norm(a.coef_)


def test_report_reads_the_result_protocol():
    from goalfit.report import build_report

    X, y, g = _groups_data(4)
    est = gf.AdaptiveSurrogateClassifier("gmean", [gf.demographic_parity_difference() <= 0.05], max_iter=6,
                                         init="logistic", random_state=0, method_params={"sigma": 0.3}).fit(
        X, y, sensitive_features=g)
    name, base, seconds = est.fit_baseline(X, y, sensitive_features=g)
    assert name == "post-shift" and seconds >= 0
    ev = est.evaluate(X, y, sensitive_features=g, classifier=base)
    ps = gf.BlackBoxPostShiftClassifier("gmean", [gf.demographic_parity_difference() <= 0.05]).fit(
        X, y, sensitive_features=g)
    assert ev == ps.evaluate(X, y, sensitive_features=g)
    fields = est.report_fields()
    assert fields["method"].startswith("adaptive surrogates (interpolation")
    assert list(fields["multipliers"]) == est.constraint_rows_ and len(est.constraint_rows_) == 2
    rep = build_report(est, X, y, sensitive_features_train=g, X_test=X, y_test=y, sensitive_features_test=g)
    assert rep.data["baseline_name"] == "post-shift"
    assert rep.data["objective"]["train"] == pytest.approx(_loss(est, X, y, sensitive_features=g))
