"""Cross-fitting of GoalClassifier's base model: five folds by default, fold models scored once,
the joint model of group-blind fits."""
import numpy as np
import pytest
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import KFold
from sklearn.tree import DecisionTreeClassifier

import goalfit as gf
from goalfit.estimators.joint import FactoredJointClassifier
from goalfit.estimators.probabilities import cross_fit


def _data(n, seed=0):
    rng = np.random.default_rng(seed)
    g = rng.integers(0, 2, n)
    X = np.column_stack([rng.normal(size=n) + g, rng.normal(size=n)])
    y = (X[:, 0] - X[:, 1] + rng.normal(size=n) > 0.5).astype(int)
    return X, y, g


def test_cv_auto_cross_fits_a_flexible_model_on_five_folds():
    X, y, g = _data(2_000)
    m = gf.GoalClassifier(DecisionTreeClassifier(max_depth=3, random_state=0),
                          constraints=[gf.demographic_parity_difference() <= 0.05], random_state=0)
    m.fit(X, y, sensitive_features=g)
    assert m.cv_.get_n_splits() == 5 and len(m.estimators_) == 5
    assert m.feasible_


@pytest.mark.parametrize("n, group_blind, folds", [(19_999, True, 5), (20_000, True, 2), (20_000, False, 5)])
def test_cv_auto_folds_by_rows_for_group_blind_fits(n, group_blind, folds):
    """Group-blind cross-fitting (a joint model per fold) takes 2 folds from
    GROUP_BLIND_TWO_FOLDS_FROM rows on; a group-aware fit keeps 5; an explicit cv wins."""
    from goalfit.estimators.goal_classifier import GROUP_BLIND_TWO_FOLDS_FROM

    assert GROUP_BLIND_TWO_FOLDS_FROM == 20_000
    X, y, g = _data(n)
    kw = dict(constraints=[gf.demographic_parity_difference("g") <= 0.05], group_blind=group_blind, random_state=0)
    m = gf.GoalClassifier(DecisionTreeClassifier(max_depth=3, random_state=0), **kw).fit(
        X, y, sensitive_features={"g": g})
    assert m.cv_.get_n_splits() == folds and len(m.estimators_) == folds
    assert m.feasible_
    m3 = gf.GoalClassifier(DecisionTreeClassifier(max_depth=3, random_state=0), cv=3, **kw).fit(
        X, y, sensitive_features={"g": g})
    assert m3.cv_.get_n_splits() == 3


class _Counting(ClassifierMixin, BaseEstimator):
    """A logistic regression that records the number of rows of every predict_proba call."""

    def fit(self, X, y, sample_weight=None):
        self.model_ = LogisticRegression().fit(X, y, sample_weight=sample_weight)
        self.classes_ = self.model_.classes_
        self.calls_ = []
        return self

    def predict_proba(self, X):
        self.calls_.append(len(X))
        return self.model_.predict_proba(X)


def test_cross_fit_scores_each_fold_model_on_its_held_out_rows_only():
    X, y, _ = _data(300)
    folds = KFold(3, shuffle=True, random_state=0)
    P, models = cross_fit(_Counting(), X, y, None, folds, np.array([0, 1]))
    tests = [test for _, test in folds.split(X)]
    assert [m.calls_ for m in models] == [[len(t)] for t in tests]
    for m, test in zip(models, tests):
        np.testing.assert_allclose(P[test], m.model_.predict_proba(X[test]))


def test_factored_joint_fit_scores_nothing():
    X, y, g = _data(400)
    f = FactoredJointClassifier(_Counting(), n_classes=2, n_cells=2).fit(X, g * 2 + y)
    assert f.label_model_.calls_ == [] and all(m.calls_ == [] for m in f.group_models_)


def test_joint_model_factored_by_default_product_on_request():
    X, y, g = _data(1_500)
    con = [gf.demographic_parity_difference("g") <= 0.05]
    tree = DecisionTreeClassifier(max_depth=3, random_state=0)
    factored = gf.GoalClassifier(tree, constraints=con, group_blind=True, random_state=0).fit(
        X, y, sensitive_features={"g": g})
    assert all(isinstance(m, FactoredJointClassifier) for m in factored.estimators_)
    assert factored.predict(X).shape == (len(y),)
    product = gf.GoalClassifier(tree, constraints=con, group_blind=True, method_params={"joint_model": "product"},
                                random_state=0).fit(X, y, sensitive_features={"g": g})
    assert not any(isinstance(m, FactoredJointClassifier) for m in product.estimators_)
    assert all(len(m.classes_) == 4 for m in product.estimators_)  # one model of the (group, class) label
    with pytest.raises(ValueError, match="joint_model"):
        gf.GoalClassifier(tree, constraints=con, group_blind=True, method_params={"joint_model": "auto"}).fit(
            X, y, sensitive_features={"g": g})


def test_factored_joint_exposes_the_features_it_saw():
    X, y, g = _data(400)
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
    f = FactoredJointClassifier(DecisionTreeClassifier(max_depth=2), n_classes=2, n_cells=2).fit(frame, g * 2 + y)
    assert f.n_features_in_ == X.shape[1]
    assert list(f.feature_names_in_) == list(frame.columns)
