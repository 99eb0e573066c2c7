"""One goals object through every family: each reports training rates equal to goalfit.metrics
on its own predictions, and every estimator exposes the same result protocol."""
import warnings

import numpy as np
import pytest

import goalfit as gf
from goalfit.fit import FitResult, GoalEstimator
from goalfit.cli.spec import estimator_class
from goalfit.methods import REGISTRY, lookup
from goalfit.metrics import evaluate_problem

pytestmark = pytest.mark.quick  # in the quick subset (README: python -m pytest -m quick)

rng = np.random.default_rng(0)
N = 600
S = rng.choice(["a", "b"], N, p=[0.4, 0.6])
X = np.c_[rng.normal(size=(N, 3)), (S == "b").astype(float)]
Y = (X[:, 0] + 0.8 * (S == "b") + 0.7 * rng.normal(size=N) > 0.6).astype(int)
GOALS = dict(objective=gf.error_rate(),
             constraints=[gf.true_positive_rate(group="a") >= gf.true_positive_rate(group="b") - 0.05])


def _families():
    out = [("plugin", gf.GoalClassifier(**GOALS)),
           ("ramp", gf.RampClassifier(**GOALS, random_state=0)),
           ("subdata", gf.FairSubdataClassifier(**GOALS, random_state=0)),
           ("surrogate", gf.AdaptiveSurrogateClassifier(**GOALS, max_iter=40, random_state=0))]
    try:
        from goalfit.torch import LagrangianClassifier
    except ImportError:  # pragma: no cover - goalfit[torch] absent
        return out
    return out + [("lagrangian", LagrangianClassifier(**GOALS, max_iter=10, random_state=0,
                                                      method_params={"learning_rate": 0.05}))]


@pytest.mark.parametrize("family, model", _families(), ids=[f for f, _ in _families()])
def test_every_family_reports_the_rates_of_its_own_predictions(family, model):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        model.fit(X, Y, sensitive_features=S)
    assert isinstance(model, GoalEstimator) and isinstance(model.result_, FitResult)
    assert lookup(model.method_).family == family
    # the result protocol: the same attributes on every estimator
    for attr in ("classes_", "problem_", "result_", "classifier_", "history_", "feasible_", "max_violation_",
                 "method_", "margins_", "certified_", "certification_", "fit_seconds_"):
        assert hasattr(model, attr), (family, attr)
    assert model.history_ and all({"objective", "max_violation"} <= set(h) for h in model.history_)
    # the training values the fit reports are goalfit.metrics of its own predictions
    dist = model.predict_proba(X, sensitive_features=S)
    reference = evaluate_problem(gf.Problem(**GOALS), Y, dist, sensitive_features=S, classes=model.classes_)
    reported = model.problem_.constraints[0].value(model.result_.confusion)
    assert reported == pytest.approx(reference["constraints"][0]["value"], abs=1e-9)
    assert model.problem_.objective.value(model.result_.confusion) == pytest.approx(
        reference["objective"]["value"], abs=1e-9)
    assert model.evaluate(X, Y, sensitive_features=S)["constraints"][0]["value"] == pytest.approx(
        reference["constraints"][0]["value"], abs=1e-12)
    assert model.feasible_ == (reference["constraints"][0]["violation"] <= gf.FEASIBLE_TOL)
    # predictions follow predict_proba: one-hot rows are predict itself
    if np.isin(dist, (0.0, 1.0)).all():
        np.testing.assert_array_equal(model.classes_[dist.argmax(axis=1)], model.predict(X, sensitive_features=S))


def test_the_registry_names_every_method_with_its_estimator():
    families = {e.family for e in REGISTRY.values()}
    assert families == {"plugin", "ramp", "subdata", "surrogate", "lagrangian"}
    for name, entry in REGISTRY.items():
        if entry.family == "lagrangian":
            pytest.importorskip("torch")
        cls = estimator_class(name)
        method = entry.method()
        assert method.name == name and method.family == entry.family
        assert issubclass(cls, GoalEstimator)
        params = cls().get_params()
        assert {"objective", "constraints", "method_params"} <= set(params)
        assert {"confidence", "margin"} <= set(params)  # the template's words, in every family
        assert len(params) <= 15, (cls.__name__, sorted(params))
    with pytest.raises(ValueError, match="did you mean 'split_frank_wolfe'"):
        lookup("split_frankwolfe")


def test_a_method_refuses_what_it_cannot_express_before_fitting():
    hmean = dict(objective="hmean", constraints=GOALS["constraints"])
    for model, words in [(gf.RampClassifier(**hmean), "linear objective"),
                         (gf.FairSubdataClassifier(**hmean), "linear objective"),
                         (gf.GoalClassifier(**GOALS, method="frank_wolfe"), "unconstrained"),
                         (gf.GoalClassifier(**GOALS, method="argmax"), "takes no constraints")]:
        with pytest.raises(ValueError, match=words):
            model.fit(X, Y, sensitive_features=S)
        assert not hasattr(model, "classifier_")
