"""The docstring examples of the public estimators and goal builders run, and every one has one.

The examples are short (a few hundred rows, few iterations) and print rounded numbers, so they
double as tests of the values they show. The documentation build (Sphinx, gallery) is not run
here; its command is in the README.
"""
from __future__ import annotations

import doctest
import importlib
import inspect

import pytest

import goalfit as gf
from goalfit import goals

#: Modules holding the public estimators and goal builders (their doctests run here).
MODULES = [
    "goalfit.goals", "goalfit.goals.rates", "goalfit.goals.fairness", "goalfit.goals.blackbox",
    "goalfit.goals.parse", "goalfit.goals.problem",
    "goalfit.estimators.goal_classifier", "goalfit.estimators.ramp_classifier",
    "goalfit.estimators.fair_subdata", "goalfit.estimators.surrogate_classifier",
    "goalfit.torch.estimator", "goalfit.classifiers.hashing",
]
ESTIMATORS = ["GoalClassifier", "RampClassifier", "FairSubdataClassifier", "SpectralFairSVC",
              "AdaptiveSurrogateClassifier", "BlackBoxPostShiftClassifier", "RelaxedFMClassifier"]
OTHER_BUILDERS = ["parse_constraint", "parse_objective", "as_objective", "as_blackbox_metric", "error_loss",
                  "gmean_loss", "goal_metric", "macro_f1_over_groups_loss", "prbep_loss", "precision_at_k_loss"]
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _examples():
    finder = doctest.DocTestFinder(exclude_empty=True)
    for name in MODULES:
        if name.startswith("goalfit.torch"):
            pytest.importorskip("torch")
        module = importlib.import_module(name)
        for test in finder.find(module):
            if test.examples:
                yield pytest.param(test, id=test.name)


@pytest.mark.parametrize("test", list(_examples()))
def test_docstring_example(test):
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples of {test.name} failed (output above)"


def _public():
    names = [(n, getattr(gf, n)) for n in ESTIMATORS + list(goals.BUILDERS) + OTHER_BUILDERS]
    torch_estimator = pytest.importorskip("goalfit.torch")
    return names + [("LagrangianClassifier", torch_estimator.LagrangianClassifier)]


def test_every_public_estimator_and_goal_builder_has_an_example():
    missing = [name for name, obj in _public() if ">>>" not in (inspect.getdoc(obj) or "")]
    assert not missing, f"docstrings without an example: {missing}"


def test_the_examples_are_collected():
    # every module above contributes examples (a renamed module would silently drop its doctests)
    found = [p.values[0].name for p in _examples()]
    for name in MODULES:
        assert any(f.startswith(name + ".") for f in found), name
