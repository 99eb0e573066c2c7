"""GoalClassifier as a scikit-learn estimator: checks, composition, inputs and errors."""
import pickle

import numpy as np
from sklearn.frozen import FrozenEstimator
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import goalfit as gf
from goalfit import GoalClassifier

pytestmark = pytest.mark.quick  # in the quick subset (README: python -m pytest -m quick)


def make_data(n=3000, seed=0, n_classes=2):
    rng = np.random.default_rng(seed)
    group = rng.choice(["F", "M"], size=n, p=[0.35, 0.65])
    X = rng.normal(size=(n, 4)) + (group == "M")[:, None] * 0.6
    w = np.array([1.5, -1.0, 0.5, 0.0])
    score = X @ w
    if n_classes == 2:
        y = (rng.random(n) < 1 / (1 + np.exp(-score))).astype(int)
    else:
        cuts = np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1])
        y = np.digitize(score + rng.normal(scale=0.7, size=n), cuts)
    return X, y, pd.Series(group, name="sex")


DP = [gf.demographic_parity_difference("sex") <= 0.02]


def fitted(**kw):
    X, y, s = make_data()
    return GoalClassifier(constraints=DP, **kw).fit(X, y, sensitive_features=s), (X, y, s)


def test_fit_meets_constraint_on_train_and_beats_nothing():
    m, (X, y, s) = fitted()
    ev = m.evaluate(X, y, sensitive_features=s)
    assert ev["constraints"][0]["value"] <= 0.02 + 1e-9
    # the unconstrained argmax on the same base model, evaluated on the same goals
    base = m.evaluate(X, y, sensitive_features=s, classifier=m.fit_baseline(X, y)[1])
    assert base["constraints"][0]["value"] > 0.05  # the unconstrained model is unfair here
    assert ev["accuracy"] <= base["accuracy"] + 1e-12  # the constraint costs accuracy
    assert m.feasible_


def test_predict_reproducible_and_distribution():
    m, (X, y, s) = fitted()
    p1 = m.predict(X, sensitive_features=s, random_state=3)
    p2 = m.predict(X, sensitive_features=s, random_state=3)
    assert np.array_equal(p1, p2)
    P = m.predict_proba(X, sensitive_features=s)
    assert np.allclose(P.sum(axis=1), 1)
    if len(m.classifier_.members) > 1:
        p3 = m.predict(X, sensitive_features=s, random_state=4)
        assert not np.array_equal(p1, p3)
    # sampled accuracy is close to the expected accuracy
    assert abs(np.mean(p1 == y) - m.score(X, y, sensitive_features=s)) < 0.03


def test_pickle_clone_pipeline_and_sparse():
    m, (X, y, s) = fitted()
    m2 = pickle.loads(pickle.dumps(m))
    assert np.array_equal(m.predict_proba(X, sensitive_features=s), m2.predict_proba(X, sensitive_features=s))
    c = clone(GoalClassifier(constraints=DP, objective="error"))
    assert c.constraints[0].name == DP[0].name
    pipe = make_pipeline(StandardScaler(), GoalClassifier(constraints=DP))
    pipe.fit(X, y, goalclassifier__sensitive_features=s)
    assert pipe.predict(X, sensitive_features=s).shape == (len(y),)
    ms = GoalClassifier(constraints=DP).fit(sp.csr_matrix(X), y, sensitive_features=s)
    assert np.allclose(ms.predict_proba(sp.csr_matrix(X), sensitive_features=s),
                       m.predict_proba(X, sensitive_features=s), atol=1e-6)
    mdf = GoalClassifier(constraints=DP).fit(pd.DataFrame(X, columns=list("abcd")), y, sensitive_features=s)
    assert list(mdf.feature_names_in_) == list("abcd")


@pytest.mark.parametrize("objective", ["error", "balanced_error", "hmean", "gmean", "qmean", "f1", "micro_f1",
                                       "macro_f1", "minmax_recall", "kl_quantification"])
def test_every_named_objective_pickles_after_fit(objective):
    """A fitted estimator keeps its bound objective: every named objective must survive pickling
    (macro-F1 and KL quantification once bound local functions, which pickle refuses)."""
    X, y, s = make_data(n=800)
    m = GoalClassifier("precomputed", objective=objective, constraints=DP)
    P = LogisticRegression().fit(X, y).predict_proba(X)
    m.fit(P, y, sensitive_features=s)
    m2 = pickle.loads(pickle.dumps(m))
    assert np.array_equal(m.predict_proba(P, sensitive_features=s), m2.predict_proba(P, sensitive_features=s))
    # the restored estimator still evaluates and refits its goals (the bound objective is used)
    assert m2.evaluate(P, y, sensitive_features=s)["objective"]["value"] == pytest.approx(
        m.evaluate(P, y, sensitive_features=s)["objective"]["value"], abs=1e-12)


def test_gridsearch_without_and_with_routing():
    X, y, s = make_data(n=1200)
    gs = GridSearchCV(GoalClassifier(), {"objective": ["error", "balanced_error"]}, cv=3).fit(X, y)
    assert gs.best_params_["objective"] in ("error", "balanced_error")
    import sklearn

    with sklearn.config_context(enable_metadata_routing=True):
        est = GoalClassifier(constraints=DP).set_fit_request(sensitive_features=True).set_score_request(
            sensitive_features=True)
        gs = GridSearchCV(est, {"method": ["column_generation", "con_gda"]}, cv=3)
        gs.fit(X, y, sensitive_features=s)
        assert 0.5 < gs.best_score_ < 1


def test_precomputed_and_prefit_agree():
    X, y, s = make_data()
    lr = LogisticRegression(max_iter=1000).fit(X, y)
    a = GoalClassifier(FrozenEstimator(lr), constraints=DP).fit(X, y, sensitive_features=s)
    b = GoalClassifier("precomputed", constraints=DP).fit(lr.predict_proba(X), y, sensitive_features=s)
    assert np.allclose(a.predict_proba(X, sensitive_features=s),
                       b.predict_proba(lr.predict_proba(X), sensitive_features=s))


def test_multiclass_fairness():
    X, y, s = make_data(n=3000, n_classes=3)
    m = GoalClassifier(constraints=[gf.demographic_parity_difference("sex") <= 0.03]).fit(
        X, y, sensitive_features=s)
    ev = m.evaluate(X, y, sensitive_features=s)
    assert ev["constraints"][0]["value"] <= 0.03 + 1e-9
    base = GoalClassifier(method="argmax").fit(X, y, sensitive_features=s)
    assert gf.metrics.score(gf.demographic_parity_difference("sex"), y,
                            base.predict(X, sensitive_features=s), sensitive_features=s) > 0.05


@pytest.mark.parametrize("objective", ["hmean", "gmean", "qmean", "minmax_recall", "micro_f1", "f1"])
def test_complex_objectives_beat_argmax(objective):
    X, y, s = make_data(n=2000, n_classes=3 if objective not in ("f1",) else 2, seed=1)
    m = GoalClassifier(objective=objective).fit(X, y)
    base = GoalClassifier(method="argmax", objective=objective).fit(X, y)
    ours = m.evaluate(X, y)["objective"]["value"]
    theirs = base.evaluate(X, y)["objective"]["value"]
    assert ours <= theirs + 1e-9


def test_micro_f1_held_out_leaves_out_the_class_the_fit_left_out():
    """micro-F1's default class is the training rows' most frequent; held-out rows where another
    class is the most frequent are measured with the fit's class (``goals_``), as the report and
    ``with_goals`` read them."""
    rng = np.random.default_rng(3)

    def rows(counts):
        y = np.repeat(np.arange(3), counts)
        P = rng.dirichlet(np.ones(3), len(y)) * 0.8
        P[np.arange(len(y)), y] += 0.2
        return P, y, pd.Series(rng.choice(["F", "M"], len(y)), name="sex")

    P, y, s = rows([300, 360, 340])  # class 1 the most frequent
    Pt, yt, st = rows([330, 320, 350])  # class 2 the most frequent
    m = GoalClassifier("precomputed", objective="micro_f1", constraints=[gf.demographic_parity_difference("sex") <= 0.05])
    m.fit(P, y, sensitive_features=s)
    assert m.goals_.objective.default_class == 1 and m.goals_.objective.name == "micro_f1"
    got = m.evaluate(Pt, yt, sensitive_features=st)["objective"]["value"]
    proba = m.predict_proba(Pt, sensitive_features=st)
    ref = {d: gf.metrics.evaluate_problem(gf.Problem(gf.micro_f1(default_class=d)), yt, proba,
                                           sensitive_features=st)["objective"]["value"] for d in (1, 2)}
    assert got == pytest.approx(ref[1], abs=1e-12) and abs(ref[1] - ref[2]) > 1e-3
    new = m.with_goals(constraints=[gf.demographic_parity_difference("sex") <= 0.1])
    assert new.goals_.objective.default_class == 1 and new.goals_.constraints[0].bound == 0.1
    assert new.evaluate(Pt, yt, sensitive_features=st)["objective"]["value"] == pytest.approx(
        gf.metrics.evaluate_problem(gf.Problem(gf.micro_f1(default_class=1)), yt,
                                    new.predict_proba(Pt, sensitive_features=st), sensitive_features=st)
        ["objective"]["value"], abs=1e-12)


def test_refit_oracle_binary():
    X, y, s = make_data(n=1500)
    m = GoalClassifier(constraints=DP, method_params={"oracle": "refit", "max_iter": 15}).fit(
        X, y, sensitive_features=s)
    assert m.result_.n_oracle_calls <= 16
    ev = m.evaluate(X, y, sensitive_features=s)
    assert np.isfinite(ev["accuracy"])


# ----------------------------------------------------------------------------- bad input
def test_errors_name_the_problem():
    X, y, s = make_data(n=300)
    with pytest.raises(ValueError, match="empty group"):
        GoalClassifier(constraints=[gf.true_positive_rate(group="X") >= 0.5]).fit(X, y, sensitive_features=s)
    with pytest.raises(ValueError, match="unknown sensitive feature"):
        GoalClassifier(constraints=[gf.demographic_parity_difference("race") <= 0.1]).fit(
            X, y, sensitive_features=s)
    with pytest.raises(ValueError, match="not one of the classes"):
        GoalClassifier(constraints=[gf.precision(7) >= 0.5]).fit(X, y)
    with pytest.raises(ValueError, match="NaN"):
        Xn = X.copy(); Xn[0, 0] = np.nan
        GoalClassifier().fit(Xn, y)
    with pytest.raises(ValueError, match="missing values"):
        GoalClassifier(constraints=DP).fit(X, y, sensitive_features=s.where(s != "F", None))
    with pytest.raises(ValueError, match="shape"):
        GoalClassifier("precomputed").fit(np.random.rand(len(y), 3), y)
    m = GoalClassifier(constraints=DP).fit(X, y, sensitive_features=s)
    with pytest.raises(ValueError, match="sensitive_features"):
        m.predict(X)
    with pytest.raises(ValueError, match="not seen"):
        m.predict(X[:2], sensitive_features=pd.Series(["F", "Z"], name="sex"))
    with pytest.raises(ValueError, match="do not match the classes"):
        m.score(X, np.full(len(y), 5), sensitive_features=s)


def test_infeasible_goal_returns_least_violation_with_warning():
    X, y, s = make_data(n=500)
    cons = [gf.positive_prediction_rate() <= 0.1, gf.positive_prediction_rate() >= 0.3]
    with pytest.warns(RuntimeWarning, match="least-violating"):
        m = GoalClassifier(constraints=cons).fit(X, y)
    assert not m.feasible_
    rate = m.evaluate(X, y)["constraints"][0]["value"]
    assert rate == pytest.approx(0.2, abs=1e-6)  # the least-violating mixture splits the gap


def test_pipeline_base_with_sample_weight_matches_manual_fit():
    X, y, s = make_data(n=800)
    w = np.random.default_rng(0).uniform(0.5, 2.0, len(y))
    base = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
    m = GoalClassifier(base, constraints=DP).fit(X, y, sensitive_features=s, sample_weight=w)
    ref = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)).fit(
        X, y, logisticregression__sample_weight=w)
    assert np.allclose(m.estimator_.predict_proba(X), ref.predict_proba(X))
    # the fitted pipeline predicts the same probabilities the oracle was given
    b = GoalClassifier(FrozenEstimator(ref), constraints=DP).fit(X, y, sensitive_features=s, sample_weight=w)
    assert np.allclose(m.predict_proba(X, sensitive_features=s), b.predict_proba(X, sensitive_features=s))
