"""scikit-learn's estimator checks on every public estimator (default construction), with the
checks that cannot apply declared through scikit-learn's expected-failed-checks mechanism."""
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

import goalfit as gf

ESTIMATORS = [gf.GoalClassifier(), gf.GoalClassifier(objective="balanced_error"), gf.RampClassifier(),
              gf.FairSubdataClassifier(), gf.SpectralFairSVC(), gf.AdaptiveSurrogateClassifier(),
              gf.BlackBoxPostShiftClassifier(), gf.RelaxedFMClassifier()]
try:
    from goalfit.torch import LagrangianClassifier

    ESTIMATORS.append(LagrangianClassifier())
except ImportError:  # pragma: no cover - goalfit[torch] absent
    pass


def _weights(reason):
    return {"check_sample_weight_equivalence_on_dense_data": reason,
            "check_sample_weight_equivalence_on_sparse_data": reason}


#: Per estimator, each check that cannot pass and why. A weight of 2 counts as a repeated row in
#: every rate (tested in each family's tests); these checks also ask the fitted parameters to agree
#: to 1e-7, which an iterative method with non-unique minimizers or minibatch noise cannot give.
EXPECTED_FAILURES = {
    "RampClassifier": _weights(
        "the ramp objective (Goh et al., Problem 2) is piecewise linear: weighted and repeated rows reach the "
        "same objective (to 1e-9 with exact inner solves) at different minimizers"),
    "FairSubdataClassifier": _weights(
        "Ye & Xie's alternation reaches the same training objective for weighted and repeated rows; the "
        "weighted SVM of its w-step is solved to a tolerance, so the scores agree to about 1e-2, not 1e-7"),
    "SpectralFairSVC": _weights(
        "a convex QP solved by Clarabel to its tolerance: weighted and repeated rows give decision functions "
        "that agree to about 3e-7 (tested to 1e-5 in test_fit_template), not 1e-7"),
    "AdaptiveSurrogateClassifier": _weights(
        "the gradient estimates are random and the projections inexact: weighted and repeated rows reach the "
        "same training objective, not the same parameters"),
    "LagrangianClassifier": _weights(
        "stochastic minibatch training: repeated rows change the batches, hence the path and the network"),
}


def _expected(estimator):
    return EXPECTED_FAILURES.get(type(estimator).__name__, {})


def test_expected_failures_are_few_and_explained():
    for name, checks in EXPECTED_FAILURES.items():
        assert len(checks) <= 5, name
        assert all(len(reason) > 40 for reason in checks.values()), name


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected)
def test_scikit_learn_estimator_checks(estimator, check):
    check(estimator)


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_binary_only_estimators_declare_it(estimator):
    tags = estimator.__sklearn_tags__()
    multiclass = type(estimator).__name__ in ("GoalClassifier", "LagrangianClassifier") or (
        type(estimator).__name__ == "FairSubdataClassifier" and estimator.estimator == "svm")
    assert tags.classifier_tags.multi_class == multiclass
