"""The core works without the optional extras (mip, cvx, torch, test, bench), and a feature that
needs one names the extra to install (issue 17, §5)."""
from __future__ import annotations

import os
import subprocess
import sys

CODE = r'''
import sys
BLOCKED = {"cvxpy", "torch", "pyscipopt", "fairlearn", "clarabel", "hypothesis"}

class Block:  # as if the extras were not installed
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"No module named {name!r}")

sys.meta_path.insert(0, Block())
import numpy as np
import goalfit as gf
from goalfit.cli.app import app  # noqa: F401  the command line imports without extras

rng = np.random.default_rng(0)
X = rng.normal(size=(300, 2)); g = rng.choice(["a", "b"], 300); y = (X[:, 0] + rng.logistic(size=300) > 0).astype(int)
m = gf.GoalClassifier(constraints=[gf.demographic_parity_difference() <= 0.05]).fit(X, y, sensitive_features=g)
assert m.evaluate(X, y, sensitive_features=g)["constraints"][0]["value"] <= 0.05 + 1e-7
gf.frontier(gf.GoalClassifier(constraints=[gf.demographic_parity_difference() <= 0.05]), X, y,
            sensitive_features=g, bounds=[0.0, 0.1])
gf.AdaptiveSurrogateClassifier("gmean", [gf.demographic_parity_difference() <= 0.1], max_iter=2,
                               method_params={"n_perturbations": 20}).fit(X, y, sensitive_features=g)
gf.RampClassifier("error", [gf.positive_prediction_rate(group="a") <= 0.6]).fit(X, y, sensitive_features=g)
m = gf.FairSubdataClassifier(constraints=[gf.demographic_parity_difference() <= 0.05], estimator="logistic",
                             method_params={"t": -0.7}).fit(X, y, sensitive_features=g)
assert m.evaluate(X, y, sensitive_features=g)["constraints"][0]["value"] <= 0.05 + 1e-7
try:
    gf.FairSubdataClassifier(estimator="svm").fit(X, y, sensitive_features=g)
except ImportError as err:
    assert "goalfit[cvx]" in str(err), err
else:
    raise AssertionError("estimator='svm' ran without cvxpy")
try:
    gf.FairSubdataClassifier(method="mip", alpha=0.0, method_params={"warm_start": False}).fit(
        X[:20], y[:20], sensitive_features=g[:20])
except ImportError as err:
    assert "goalfit[mip]" in str(err), err
else:
    raise AssertionError("method='mip' ran without pyscipopt")
assert not BLOCKED & set(sys.modules), BLOCKED & set(sys.modules)
print("ok")
'''


def test_core_runs_without_extras():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), MPLBACKEND="Agg")
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().endswith("ok")
