"""Cross-fitting of GoalClassifier's base model: five folds by default, fold models scored once,
the joint model of group-blind fits."""
import numpy as np
import pytest
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


def test_joint_model_product_by_default_factored_on_request():
    X, y, g = _data(1_500)
    con = [gf.demographic_parity_difference("g") <= 0.05]
    tree = DecisionTreeClassifier(max_depth=3, random_state=0)
    product = gf.GoalClassifier(tree, constraints=con, group_blind=True, random_state=0).fit(
        X, y, sensitive_features={"g": g})
    assert not any(isinstance(m, FactoredJointClassifier) for m in product.estimators_)
    assert all(len(m.classes_) == 4 for m in product.estimators_)  # one model of the (group, class) label
    factored = gf.GoalClassifier(tree, constraints=con, group_blind=True, method_params={"joint_model": "factored"},
                                 random_state=0).fit(X, y, sensitive_features={"g": g})
    assert all(isinstance(m, FactoredJointClassifier) for m in factored.estimators_)
    assert factored.predict(X).shape == (len(y),)
    with pytest.raises(ValueError, match="joint_model"):
        gf.GoalClassifier(tree, constraints=con, group_blind=True, method_params={"joint_model": "auto"}).fit(
            X, y, sensitive_features={"g": g})
