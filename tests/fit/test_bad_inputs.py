"""Bad inputs get a clear error that names the problem, never a silent wrong answer.

The table holds (call, expected error type, words the message must contain); every case gave
a silent answer or a confusing error before these checks existed. The tests after it check
the repaired answers against scikit-learn / fairlearn values.
"""
from __future__ import annotations

import os
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

import goalfit as gf
from goalfit import metrics as gm

rng = np.random.default_rng(0)
N = 200
X = rng.normal(size=(N, 3))
G = rng.choice(["A", "B"], N)
Y = (X[:, 0] + rng.logistic(size=N) > 0).astype(int)
P = (X[:, 0] > 0).astype(int)
YS, PS = np.where(Y == 1, "good", "bad"), np.where(P == 1, "good", "bad")
SEX = pd.DataFrame({"sex": G})


def _goal_classifier():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return gf.GoalClassifier(constraints=[gf.demographic_parity_difference("sex") <= 0.05]).fit(
            X, Y, sensitive_features=SEX)


def _surrogate():
    return gf.AdaptiveSurrogateClassifier("macro_f1_over_groups", max_iter=2, method_params={"n_perturbations": 20},
                                          random_state=0).fit(X, Y, sensitive_features=G)


def _no_positive_in_B():
    y = Y.copy()
    y[G == "B"] = 0
    return gm.equal_opportunity_difference(y, P, sensitive_features=G)


def _nan_group():
    g = G.astype(object)
    g[3] = np.nan
    return gf.FairSubdataClassifier(constraints=[gf.error_rate_difference() <= 0.05]).fit(X, Y, sensitive_features=g)


def _tiny_holdout():
    # 6 examples, one in group B: the goals' share (2 examples) has no example of B
    g = np.array(["A", "A", "A", "A", "A", "B"])
    y = np.array([0, 1, 0, 1, 0, 1])
    return gf.GoalClassifier(constraints=[gf.demographic_parity_difference() <= 0.05], cv=0.3,
                             random_state=0).fit(X[:6], y, sensitive_features=g)


def _linear_svc():
    from sklearn.svm import LinearSVC

    return gf.GoalClassifier(LinearSVC(), constraints=[gf.demographic_parity_difference() <= 0.05]).fit(
        X, Y, sensitive_features=G)


CASES = [
    # §1 silent wrong answers
    ("probabilities as labels", lambda: gm.demographic_parity_difference(Y, np.full(N, 0.3), sensitive_features=G),
     ValueError, ["not class labels", "probabilities"]),
    ("scores as labels in score()", lambda: gm.score("error", Y, X[:, 0], sensitive_features=G),
     ValueError, ["not class labels"]),
    ("string labels, no pos_label", lambda: gm.equal_opportunity_difference(YS, PS, sensitive_features=G),
     ValueError, ["ambiguous", "pos_label"]),
    ("string labels, f1 goal", lambda: gm.score(gf.f1(), YS, PS),
     ValueError, ["ambiguous", "pos_label"]),
    ("pos_label not a class", lambda: gm.equal_opportunity_difference(YS, PS, sensitive_features=G, pos_label="ok"),
     ValueError, ["pos_label='ok'", "not one of the classes"]),
    ("predict with another column", lambda: _goal_classifier().predict(X, sensitive_features=pd.DataFrame({"race": G})),
     ValueError, ["'race'", "'sex'"]),
    ("group metric evaluated without groups", lambda: _surrogate().evaluate(X, Y),
     ValueError, ["over groups", "sensitive_features"]),
    # §2 confusing errors
    ("group without positives", _no_positive_in_B, ValueError, ["group", "'B'", "no positive examples"]),
    ("NaN in a string group column", _nan_group, ValueError, ["sensitive_features", "missing"]),
    ("evaluate with short y", lambda: _goal_classifier().evaluate(X, Y[:-1], sensitive_features=SEX),
     ValueError, ["X has 200 rows but y has 199"]),
    ("evaluate with short X", lambda: _goal_classifier().evaluate(X[:-1], Y, sensitive_features=SEX),
     ValueError, ["X has 199 rows but y has 200"]),
    ("score with short X", lambda: _goal_classifier().score(X[:-1], Y, sensitive_features=SEX),
     ValueError, ["X has 199 rows but y has 200"]),
    ("ramp evaluate with short X",
     lambda: gf.RampClassifier("error", [gf.positive_prediction_rate(group="A") <= 0.6]).fit(
         X, Y, sensitive_features=G).evaluate(X[:-1], Y, sensitive_features=G),
     ValueError, ["X has 199 rows but y has 200"]),
    ("subdata evaluate with short y",
     lambda: gf.FairSubdataClassifier(estimator="logistic", method_params={"t": -0.7}).fit(
         X, Y, sensitive_features=G).evaluate(X, Y[:-1], sensitive_features=G),
     ValueError, ["X has 200 rows but y has 199"]),
    ("metric with short y_pred", lambda: gm.demographic_parity_difference(Y, P[:-1], sensitive_features=G),
     ValueError, ["y_true has 200 rows but y_pred has 199"]),
    ("base estimator without predict_proba", _linear_svc, TypeError,
     ["LinearSVC", "predict_proba", "CalibratedClassifierCV", "decision_function"]),
    ("negative sample weights", lambda: gf.GoalClassifier().fit(X, Y, sample_weight=-np.ones(N)),
     ValueError, ["sample_weight", "negative"]),
    ("negative weights in a metric", lambda: gm.score("error", Y, P, sample_weight=np.r_[-1.0, np.ones(N - 1)]),
     ValueError, ["sample_weight", "negative"]),
    ("sample splitting on tiny data", _tiny_holdout, ValueError, ["cv=0.3", "too few", "'B'"]),
    ("a constraint as a black-box metric",
     lambda: gf.AdaptiveSurrogateClassifier(gf.demographic_parity_difference() <= 0.1).fit(X, Y, sensitive_features=G),
     ValueError, ["constraint", "metric"]),
    ("a subdata goal it cannot express",
     lambda: gf.FairSubdataClassifier(objective=gf.gmean()).fit(X, Y, sensitive_features=SEX),
     ValueError, ["'gmean'", "linear objective"]),
    ("a subdata objective that rewards mistakes",
     lambda: gf.FairSubdataClassifier(objective=gf.coverage(group="A")).fit(X, Y, sensitive_features=G),
     ValueError, ["coverage(group='A')", "reward mistakes"]),
    ("a subdata goal naming a missing column",
     lambda: gf.FairSubdataClassifier(constraints=[gf.error_rate_difference("race") <= 0.02]).fit(
         X, Y, sensitive_features=SEX),
     ValueError, ["'race'", "['sex']"]),
]


@pytest.mark.parametrize("call, error, words", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_names_the_problem(call, error, words):
    with pytest.raises(error) as info:
        call()
    msg = str(info.value)
    for w in words:
        assert w in msg, (w, msg)


# ----------------------------------------------------------------------------- repaired answers
def test_pos_label_values_match_fairlearn_and_sklearn():
    import fairlearn.metrics as flm
    from sklearn.metrics import f1_score

    for pos in ("good", "bad"):
        y01, p01 = (YS == pos).astype(int), (PS == pos).astype(int)
        assert gm.equal_opportunity_difference(YS, PS, sensitive_features=G, pos_label=pos) == pytest.approx(
            flm.equal_opportunity_difference(y01, p01, sensitive_features=G))
        assert gm.demographic_parity_ratio(YS, PS, sensitive_features=G, pos_label=pos) == pytest.approx(
            flm.demographic_parity_ratio(y01, p01, sensitive_features=G))
        assert gm.score(gf.f1(), YS, PS, pos_label=pos) == pytest.approx(1 - f1_score(YS, PS, pos_label=pos))
    # the two choices differ on this data: guessing would have been a silent wrong answer
    assert abs(gm.equal_opportunity_difference(YS, PS, sensitive_features=G, pos_label="good")
               - gm.equal_opportunity_difference(YS, PS, sensitive_features=G, pos_label="bad")) > 0.01
    # error rate does not depend on the positive class: no pos_label needed
    assert gm.score("error", YS, PS) == pytest.approx(np.mean(YS != PS))


def test_labels_absent_from_y_true_need_classes():
    y = np.zeros(N, int)
    y[:50] = 1
    p = np.where(np.arange(N) < 10, 2, y)  # predicts class 2, which y_true lacks
    with pytest.raises(ValueError, match="not class labels"):
        gm.score("error", y, p)
    assert gm.score("error", y, p, classes=[0, 1, 2]) == pytest.approx(np.mean(y != p))


def test_predict_accepts_the_fitted_column_or_an_unnamed_one():
    m = _goal_classifier()
    a = m.predict_proba(X, sensitive_features=SEX)
    np.testing.assert_allclose(m.predict_proba(X, sensitive_features=G), a)
    np.testing.assert_allclose(m.predict_proba(X, sensitive_features=pd.Series(G, name="sex")), a)


def test_surrogate_evaluate_with_groups_is_the_macro_f1_over_groups():
    from sklearn.metrics import f1_score

    m = _surrogate()
    p = m.predict(X)
    exp = 1 - np.mean([f1_score(Y[G == k], p[G == k]) for k in ("A", "B")])
    assert m.evaluate(X, Y, sensitive_features=G)["objective"]["value"] == pytest.approx(exp)
    # a metric that does not read groups still evaluates without them
    e = gf.AdaptiveSurrogateClassifier("error", max_iter=2, method_params={"n_perturbations": 20},
                                       random_state=0).fit(X, Y, sensitive_features=G)
    assert e.evaluate(X, Y)["objective"]["value"] == pytest.approx(np.mean(e.predict(X) != Y))


def test_ramp_reports_what_the_deployed_predict_violates():
    goals = [gf.positive_prediction_rate(group="A") >= 0.9, gf.positive_prediction_rate(group="A") <= 0.5]
    with pytest.warns(RuntimeWarning, match="cannot all be met") as rec:
        m = gf.RampClassifier("error", goals, method_params={"decision_threshold": 0.0}).fit(
            X, Y, sensitive_features=G)  # the paper's rule f(x) > 0
    det = m.evaluate(X, Y, sensitive_features=G)
    worst = max(c["violation"] for c in det["constraints"])
    assert m.max_violation_ == pytest.approx(worst)  # the deployed predict's violation
    rand = m.result_.details.randomized
    assert worst > rand.max_violation + 0.1  # the randomized rule's violation understates predict's
    msg = str(rec[0].message)
    assert f"{worst:.4g}" in msg and "randomized" in msg and f"{rand.max_violation:.4g}" in msg
    from goalfit.report import build_report

    rep = build_report(m, X, Y, sensitive_features_train=G)
    assert "f(x) > 0" in rep.data["note"]
    assert max(c["violation_train"] for c in rep.data["constraints"]) == pytest.approx(worst)
    # the default fitted threshold is the least violating deterministic shift of the same scores
    with pytest.warns(RuntimeWarning):
        fitted = gf.RampClassifier("error", goals).fit(X, Y, sensitive_features=G)
    assert fitted.max_violation_ <= worst + 1e-12


def test_macro_f1_under_auto_matches_sklearn():
    from sklearn.metrics import f1_score

    y3 = np.digitize(X[:, 0] + 0.5 * rng.normal(size=N), [-0.5, 0.5])
    with pytest.warns(RuntimeWarning, match="heuristic"):
        m = gf.GoalClassifier(objective="macro_f1").fit(X, y3)
    assert m.method_ == "split_frank_wolfe"  # three classes: SplitFW's mixtures on the sample
    det = m.to_deterministic()
    p = det.predict(X)
    assert gm.score("macro_f1", y3, p) == pytest.approx(1 - f1_score(y3, p, average="macro"))
    lr = m.estimator_.predict(X)
    # the heuristic does not do worse than the base model's argmax on its training sample
    assert m.evaluate(X, y3)["objective"]["value"] <= 1 - f1_score(y3, lr, average="macro") + 1e-9


def test_cli_nan_in_label_or_group_column_exits_2_with_one_line(tmp_path):
    from typer.testing import CliRunner

    from goalfit.cli.app import app

    for col in ("label", "grp"):
        df = pd.DataFrame({"x1": X[:, 0], "grp": G, "label": Y}).astype({"grp": object, "label": float})
        df.loc[7, col] = np.nan
        csv = tmp_path / f"d_{col}.csv"
        df.to_csv(csv, index=False)
        spec = tmp_path / "s.toml"
        spec.write_text(f'[data]\ncsv = "{csv}"\nlabel = "label"\nsensitive = ["grp"]\n'
                        '[goals]\nconstraints = ["demographic_parity_difference(\'grp\') <= 0.05"]\n')
        res = CliRunner().invoke(app, ["fit", str(spec), "--out", str(tmp_path / "o")])
        assert res.exit_code == 2, res.output
        lines = [ln for ln in res.output.strip().splitlines() if ln.strip()]
        assert len(lines) == 1 and repr(col) in lines[0] and "missing" in lines[0] and "row 8" in lines[0], lines
        assert not (tmp_path / "o").exists()


def test_datasets_command_warns_about_a_missing_data_folder(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from goalfit.cli.app import app

    missing = tmp_path / "nowhere"
    monkeypatch.setenv("GOALFIT_DATA", str(missing))
    res = CliRunner().invoke(app, ["datasets"])
    assert res.exit_code == 0
    assert "GOALFIT_DATA" in res.output and str(missing) in res.output.replace("\n", "")
    assert "not a folder" in res.output


def test_a9a_has_liblinear_ready_indices(need_data):
    need_data("a9a")
    from sklearn.svm import LinearSVC

    from goalfit.datasets import load_a9a

    d = load_a9a(subset="test")
    assert d.data.indices.dtype == np.int32 and d.data.indptr.dtype == np.int32
    m = LinearSVC(C=0.1).fit(d.data[:3000], d.target[:3000])  # refused 64-bit indices before
    assert m.score(d.data[3000:6000], d.target[3000:6000]) > 0.8


_BANNER_CASES = {
    # column generation (the default for linear goals) solves its restricted LPs with highs_linprog
    "column_generation": "m = gf.GoalClassifier(constraints=[gf.demographic_parity_difference() <= 0.05]).fit(\n"
                         "    X, y, sensitive_features=g)\n",
    # SplitFW solves its LPs on highspy directly
    "split_frank_wolfe": "m = gf.GoalClassifier(objective='hmean', constraints=[gf.demographic_parity_difference() <= 0.05],\n"
                         "                      method='split_frank_wolfe').fit(X, y, sensitive_features=g)\n",
    # FairSubdataClassifier's SVM w-step with alpha = 0 is an LP on cvxpy's HIGHS interface
    "subdata_lp": "m = gf.FairSubdataClassifier(alpha=0.0, max_iter=2).fit(X[:80], y[:80], sensitive_features=g[:80])\n",
    # and its exact MILP z-step (three groups) on highspy
    "subdata_milp": ("m = gf.FairSubdataClassifier('error', [gf.demographic_parity_difference() <= 0.05], alpha=0.0, "
                     "max_iter=2)"
                     ".fit(X[:90], y[:90], sensitive_features=np.repeat(['a', 'b', 'c'], 30))\n"),
}


@pytest.mark.parametrize("case", sorted(_BANNER_CASES))
def test_lp_solves_print_no_highs_banner(case):
    code = ("import numpy as np, goalfit as gf\n"
            "rng = np.random.default_rng(0); X = rng.normal(size=(300, 2)); g = rng.choice(['a', 'b'], 300)\n"
            "y = (X[:, 0] + rng.logistic(size=300) > 0).astype(int)\n"
            + _BANNER_CASES[case] + "print('done')\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", code], capture_output=True, text=True, env=env,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "done"
    assert "HiGHS" not in out.stdout + out.stderr


# ----------------------------------------------------------------------------- every estimator
def _estimators():
    out = [gf.GoalClassifier(), gf.RampClassifier(random_state=0), gf.FairSubdataClassifier(random_state=0),
           gf.SpectralFairSVC(), gf.AdaptiveSurrogateClassifier(max_iter=3, random_state=0),
           gf.BlackBoxPostShiftClassifier(), gf.RelaxedFMClassifier(max_iter=5)]
    try:
        from goalfit.torch import LagrangianClassifier

        out.append(LagrangianClassifier(max_iter=2, random_state=0))
    except ImportError:  # pragma: no cover
        pass
    return out


@pytest.mark.parametrize("est", _estimators(), ids=lambda e: type(e).__name__)
def test_predict_with_another_number_of_columns_is_an_error(est):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, Y)
    for width in (2, 4):
        Xw = rng.normal(size=(10, width))
        for call in (est.predict, est.predict_proba, lambda Z: est.score(Z, Y[:10])) + (
                (est.decision_function,) if hasattr(est, "decision_function") else ()):
            with pytest.raises(ValueError, match="features"):
                call(Xw)
    with pytest.raises(ValueError, match="0 feature"):
        type(est)(**est.get_params()).fit(X[:, :0], Y)


@pytest.mark.parametrize("est", _estimators(), ids=lambda e: type(e).__name__)
def test_parameters_are_validated_at_fit_with_their_name(est):
    bools = [k for k, v in est.get_params().items() if isinstance(v, bool)]
    for k in bools:
        with pytest.raises((ValueError, TypeError), match=f"'{k}' parameter"):
            type(est)(**{**est.get_params(), k: "false"}).fit(X, Y)
    if "margin" in est.get_params():
        with pytest.raises(TypeError, match="margin"):
            type(est)(**{**est.get_params(), "margin": True,
                         "constraints": [gf.positive_prediction_rate() <= 0.6]}).fit(X, Y)
    if "max_iter" in est.get_params():
        with pytest.raises(ValueError, match="'max_iter' parameter"):
            type(est)(**{**est.get_params(), "max_iter": 0}).fit(X, Y)
    if "method_params" in est.get_params():
        with pytest.raises(ValueError, match="unknown method_params key 'no_such_knob'"):
            type(est)(**{**est.get_params(), "method_params": {"no_such_knob": 1}}).fit(X, Y)


def test_goals_on_groups_without_sensitive_features_say_so():
    for goal, words in [(gf.demographic_parity_difference("sex") <= 0.1, "no sensitive features"),
                        (gf.demographic_parity_difference() <= 0.1, "no sensitive features"),
                        (gf.true_positive_rate(group="F") >= 0.5, "no sensitive features")]:
        with pytest.raises(ValueError, match=words):
            gf.GoalClassifier(constraints=[goal]).fit(X, Y)


def test_frontier_refuses_goal_sets_on_different_expressions():
    sets = [[gf.demographic_parity_difference() <= 0.1], [gf.true_positive_rate() >= 0.5]]
    with pytest.raises(ValueError, match="same expressions"):
        gf.frontier(gf.GoalClassifier(constraints=sets[0]), X, Y, sensitive_features=G, goal_sets=sets)


def test_a_many_valued_sensitive_feature_is_named_before_fitting():
    age = rng.integers(18, 90, N)
    with pytest.warns(UserWarning, match=r"'age' has \d+ distinct values.*pd.cut"):
        gf.GoalClassifier().fit(X, Y, sensitive_features={"age": age})


def test_models_that_never_read_the_groups_accept_unseen_groups():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = gf.RampClassifier(constraints=[gf.demographic_parity_difference() <= 0.2], random_state=0).fit(
            X, Y, sensitive_features=G)
    unseen = np.where(G == "A", "C", G)
    assert m.predict(X).shape == (N,)  # no groups needed
    ev = m.evaluate(X, Y, sensitive_features=unseen)  # goals measured on the evaluation data's groups
    p = m.predict(X) == m.classes_[1]  # a deterministic rule: the gap of its positive rates between the groups
    rates = [p[unseen == a].mean() for a in np.unique(unseen)]
    assert ev["constraints"][0]["value"] == pytest.approx(max(rates) - min(rates), abs=1e-12)
    s = gf.AdaptiveSurrogateClassifier(max_iter=3, random_state=0).fit(X, Y, sensitive_features=G, X_val=X, y_val=Y,
                                                                       sensitive_features_val=unseen)
    assert s.predict(X).shape == (N,)
    # a group-aware model names the value it never saw
    g = gf.GoalClassifier(constraints=[gf.demographic_parity_difference() <= 0.2]).fit(X, Y, sensitive_features=G)
    with pytest.raises(ValueError, match="'C' was not seen"):
        g.predict(X, sensitive_features=unseen)


def test_torch_errors_are_ours():
    torch = pytest.importorskip("torch")
    from goalfit.torch import LagrangianClassifier

    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="no CUDA GPU"):
            LagrangianClassifier(device="cuda").fit(X, Y)
    m = LagrangianClassifier(max_iter=1, random_state=0).fit(X, Y)
    with pytest.raises(ValueError, match="X has 5 features, but LagrangianClassifier is expecting 3"):
        m.predict(rng.normal(size=(4, 5)))
    with pytest.raises(ValueError, match="do not match the classes"):
        m.partial_fit(X, np.where(Y == 1, 7, Y))


# ----------------------------------------------------------------------------- the command line
SPEC = '[data]\ncsv = "{csv}"\nlabel = "label"\nsensitive = ["grp"]\n[goals]\n{goals}'


@pytest.fixture
def csv(tmp_path):
    path = tmp_path / "d.csv"
    pd.DataFrame({"x": X[:, 0], "z": X[:, 1], "grp": G, "label": Y}).to_csv(path, index=False)
    return path


@pytest.mark.parametrize("goals, words", [
    ('method_params = {max_iters = 5}\n', "did you mean 'max_iter'"),
    ('methd = "auto"\n', "did you mean 'method'"),
    ('method = "split_frankwolfe"\n', "did you mean 'split_frank_wolfe'"),
    ('constraints = ["demographic_parity_difference(\'grp\') <= 2"]\n', "out of range"),
    ('cv = 1\n', "'cv' parameter"),
])
def test_cli_user_errors_exit_2_with_one_line_before_fitting(tmp_path, csv, goals, words):
    from typer.testing import CliRunner

    from goalfit.cli.app import app

    spec = tmp_path / "s.toml"
    spec.write_text(SPEC.format(csv=csv, goals=goals))
    res = CliRunner().invoke(app, ["fit", str(spec), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and words in res.output, res.output
    assert "Traceback" not in res.output and "fitting" not in res.output  # nothing was fitted
    assert not (tmp_path / "o").exists()


def test_cli_bad_paths_exit_2(tmp_path, csv):
    from typer.testing import CliRunner

    from goalfit.cli.app import app

    run = CliRunner().invoke
    spec = tmp_path / "s.toml"
    spec.write_text(SPEC.format(csv=csv, goals=""))
    res = run(app, ["fit", str(tmp_path)])  # a folder as the spec
    assert res.exit_code == 2 and "is a folder" in res.output
    (tmp_path / "bad.toml").write_text("[data\n")
    assert run(app, ["fit", str(tmp_path / "bad.toml")]).exit_code == 2
    res = run(app, ["fit", str(spec), "--out", str(csv)])  # an existing file as --out
    assert res.exit_code == 2 and "existing file" in res.output
    full = tmp_path / "full"
    full.mkdir()
    (full / "keep.txt").write_text("x")
    res = run(app, ["fit", str(spec), "--out", str(full)])
    assert res.exit_code == 2 and "--force" in res.output
    assert run(app, ["fit", str(spec), "--out", str(full), "--force"]).exit_code == 0
    if os.geteuid() != 0:  # root can write anywhere
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        res = run(app, ["fit", str(spec), "--out", str(locked / "o")])
        assert res.exit_code == 2 and "not writable" in res.output
    res = run(app, ["--version"])
    assert res.exit_code == 0 and res.output.startswith("goalfit ")
