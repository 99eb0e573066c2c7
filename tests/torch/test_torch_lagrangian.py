"""goalfit.torch: rate-constrained training of PyTorch networks (issue 14)."""
import pickle
import subprocess
import sys
import warnings

import numpy as np
import pytest
from scipy.optimize import linprog

torch = pytest.importorskip("torch")
cp = pytest.importorskip("cvxpy")

from goalfit.confusion import CellEncoder, ConfusionSpace, confusion_tensor  # noqa: E402
from goalfit.goals import (Problem, f1, positive_prediction_rate, precision, recall,  # noqa: E402
                           true_positive_rate)
from goalfit.metrics import score  # noqa: E402
from goalfit.torch import LagrangianClassifier, RateProblem, best_iterate, shrink  # noqa: E402
from goalfit.torch.batches import StratifiedBatches  # noqa: E402


def _data(n=400, seed=0, shift=0.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2)).astype(np.float32)
    g = np.where(rng.random(n) < 0.4, "a", "b")
    y = (X[:, 0] + 0.5 * X[:, 1] + shift + 0.8 * rng.normal(size=n) > 0).astype(int)
    return X, y, g


def test_import_goalfit_does_not_import_torch():
    code = "import sys, goalfit; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_lagrangian_reaches_cvxpy_optimum_on_convex_problem():
    """Logistic proxy (convex) for the objective and for one rate constraint, L2 penalty: the
    Lagrangian's last iterate matches cvxpy's optimum of the same convex program."""
    X, y, g = _data(300, seed=1)
    wd, bound = 0.05, 0.45
    con = positive_prediction_rate(group="a") <= bound
    model = LagrangianClassifier(objective='error', constraints=[con], method='lagrangian', alpha=wd, batch_size=len(y), max_iter=3000, random_state=0, method_params={'proxy': 'logistic', 'optimizer': 'sgd', 'learning_rate': 0.5, 'multiplier_learning_rate': 0.5, 'min_slice_rows': 0})
    model.fit(X, y, sensitive_features=g)
    lin = model.module_[0]
    w_t = np.r_[lin.weight.detach().numpy().ravel(), lin.bias.detach().numpy()]

    Xb = np.c_[X, np.ones(len(X))].astype(float)
    s = np.where(y == 1, -1.0, 1.0)  # error proxy on a row: softplus(s * f) / ln 2
    theta = cp.Variable(3)
    f = Xb @ theta
    obj = cp.sum(cp.logistic(cp.multiply(s, f))) / (len(y) * np.log(2)) + wd / 2 * cp.sum_squares(theta)
    a = g == "a"
    cons = [cp.sum(cp.logistic(f[a])) / (a.sum() * np.log(2)) <= bound]
    prob = cp.Problem(cp.Minimize(obj), cons)
    prob.solve()

    def value(w):
        fw = Xb @ w
        o = np.logaddexp(0, s * fw).mean() / np.log(2) + wd / 2 * w @ w
        c = np.logaddexp(0, fw[a]).mean() / np.log(2)
        return o, c

    o_t, c_t = value(w_t)
    assert cons[0].dual_value > 0.05  # the constraint binds
    assert abs(o_t - prob.value) <= 1e-3
    assert c_t <= bound + 1e-3
    assert np.abs(w_t - theta.value).max() <= 1e-2
    assert (np.asarray([h["multipliers"] for h in model.history_]) >= 0).all()
    assert model.multipliers_[0] == pytest.approx(cons[0].dual_value, rel=0.05)


def _fit_two_constraints(formulation, **kw):
    X, y, g = _data(600, seed=2)
    cons = [true_positive_rate(group="a") >= 0.85, positive_prediction_rate() <= 0.55]
    params = dict(objective='error', constraints=cons, method=formulation, max_iter=15, batch_size=64, random_state=3, method_params={'learning_rate': 0.05, 'multiplier_learning_rate': 0.5, 'snapshots_per_epoch': 2})
    params["method_params"].update(kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return LagrangianClassifier(**params).fit(X, y, sensitive_features=g), (X, y, g)


@pytest.mark.parametrize("formulation", ["lagrangian", "proxy_lagrangian"])
def test_shrinking_lp_at_most_m_plus_one_members_meeting_the_constraints(formulation):
    model, (X, y, g) = _fit_two_constraints(formulation)
    cp_ = model.problem_
    K = cp_.n_rows
    Cs = np.stack([s.confusion for s in model.snapshots_])
    assert len(Cs) == 30
    assert 1 <= len(model.shrunk_index_) <= K + 1
    mix = np.tensordot(model.shrunk_weights_, Cs[model.shrunk_index_], axes=1)
    rows = cp_.A @ mix.ravel() - cp_.b
    # an independent LP over all snapshots: the same optimal objective
    G = Cs.reshape(len(Cs), -1) @ cp_.A.T - cp_.b
    psi = np.array([cp_.objective.value(C) for C in Cs])
    ref = linprog(psi, A_ub=G.T, b_ub=np.zeros(K), A_eq=np.ones((1, len(Cs))), b_eq=[1.0], method="highs")
    if ref.status == 0:
        assert model.feasible_
        assert rows.max() <= 1e-9
        assert cp_.objective.value(mix) == pytest.approx(ref.fun, abs=1e-9)
    else:
        assert not model.feasible_
    # the stochastic classifier's exact expected rates on the training sample are the mixture's
    ev = model.evaluate(X, y, sensitive_features=g)
    assert ev["objective"]["value"] == pytest.approx(cp_.objective.value(mix), abs=1e-9)


def test_multipliers_stay_nonnegative():
    model, _ = _fit_two_constraints("lagrangian", multiplier_learning_rate=2.0)
    lam = np.asarray([s.multipliers for s in model.snapshots_])
    assert (lam >= 0).all()
    assert lam.max() > 0  # some constraint was violated at some point and got weight
    model, _ = _fit_two_constraints("proxy_lagrangian")
    lam = np.asarray([s.multipliers for s in model.snapshots_])
    assert (lam >= 0).all() and np.allclose(lam.sum(axis=1), 1.0, atol=1e-5)


def _frozen(bias):
    lin = torch.nn.Linear(2, 1)
    with torch.no_grad():
        lin.weight.zero_()
        lin.bias.fill_(bias)
    return lin


@pytest.mark.parametrize("sense", ["<=", ">="])
def test_proxy_lagrangian_multipliers_follow_01_rates_not_proxies(sense):
    """A frozen model with margin -0.2 everywhere: the 0-1 positive rate is 0, the hinge proxy
    of it is 0.8. ``rate <= 0.5`` is met by the 0-1 rate and broken by the proxy; ``rate >= 0.5``
    the other way round. The proxy-Lagrangian's multiplier follows the 0-1 rate, the
    Lagrangian's (all on proxies) the proxy."""
    X, y, g = _data(200, seed=4)
    con = positive_prediction_rate() <= 0.5 if sense == "<=" else positive_prediction_rate() >= 0.5
    out = {}
    for form in ("proxy_lagrangian", "lagrangian"):
        m = LagrangianClassifier(_frozen(-0.2), constraints=[con], method=form, batch_size=50, max_iter=5, random_state=0, method_params={'proxy': 'hinge', 'optimizer': 'sgd', 'learning_rate': 0.0, 'multiplier_learning_rate': 0.5})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            m.fit(X, y)
        out[form] = np.asarray([s.multipliers for s in m.snapshots_])
    pl, lag = out["proxy_lagrangian"][:, 1], out["lagrangian"][:, 0]
    # 20 steps; proxy-Lagrangian starts at lambda_1 = 1/2 (stationary distribution of the initial M)
    if sense == "<=":  # 0-1 met (g = -0.5), proxy broken (g~ = +0.3)
        assert pl[-1] < 0.05 and np.all(np.diff(pl) < 0)
        assert lag[-1] == pytest.approx(20 * 0.5 * 0.3, rel=1e-4)
    else:  # 0-1 broken (g = +0.5), proxy met (g~ = -0.3)
        assert pl[-1] > 0.49 and np.all(np.diff(pl) > 0)
        assert lag[-1] == 0.0


def test_precision_goal_met_on_train():
    X, y, g = _data(500, seed=5, shift=-0.3)
    base = LagrangianClassifier(max_iter=20, batch_size=50, random_state=0, method_params={'learning_rate': 0.05}).fit(X, y)
    p0 = score(precision(1), y, base.predict_proba(X), classes=base.classes_)
    assert p0 < 0.8
    model = LagrangianClassifier(constraints=[precision(1) >= 0.8], max_iter=20, batch_size=50, random_state=0, method_params={'learning_rate': 0.05, 'multiplier_learning_rate': 0.5}).fit(X, y)
    ev = model.evaluate(X, y)
    assert model.feasible_
    assert ev["constraints"][0]["value"] >= 0.8 - 1e-9
    assert ev["objective"]["value"] < y.mean()  # better than predicting all negative


def test_slack_objective_f1_beats_error_objective_on_f1():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(600, 2)).astype(np.float32)
    y = (X[:, 0] + 0.7 * rng.normal(size=600) > 1.2).astype(int)  # ~ 15% positives
    kw = dict(max_iter=25, batch_size=60, random_state=0, method_params={'learning_rate': 0.05, 'multiplier_learning_rate': 0.5})
    err = LagrangianClassifier(**kw).fit(X, y)
    fm = LagrangianClassifier(objective=f1(), **kw).fit(X, y)
    assert fm.trainer_.rates.n_slacks == 2
    f_err = score(f1(), y, err.predict_proba(X), classes=err.classes_)
    f_fm = score(f1(), y, fm.predict_proba(X), classes=fm.classes_)
    assert f_fm < f_err - 0.02


def test_reproducible_on_cpu_and_checkpoint_resume(tmp_path):
    X, y, g = _data(300, seed=7)
    cons = [true_positive_rate(group="a") >= 0.8]
    kw = dict(constraints=cons, hidden_layer_sizes=(8,), max_iter=4, batch_size=32, random_state=11)
    a = LagrangianClassifier(**kw).fit(X, y, sensitive_features=g)
    b = LagrangianClassifier(**kw).fit(X, y, sensitive_features=g)
    for sa, sb in zip(a.snapshots_, b.snapshots_):
        for k in sa.state:
            assert torch.equal(sa.state[k], sb.state[k])
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    # a constant sample weight is no weight at all (importance weights are normalized per stratum)
    w2 = LagrangianClassifier(**kw).fit(X, y, sensitive_features=g, sample_weight=np.full(len(y), 2.0))
    for k in a.snapshots_[-1].state:
        assert torch.allclose(w2.snapshots_[-1].state[k], a.snapshots_[-1].state[k], atol=1e-6)
    c = LagrangianClassifier(**kw).set_params(random_state=12).fit(X, y, sensitive_features=g)
    assert not torch.equal(c.snapshots_[-1].state["0.weight"], a.snapshots_[-1].state["0.weight"])
    # two epochs, then resume to four from the checkpoint: the same model as four in a row
    path = tmp_path / "ckpt.pt"
    LagrangianClassifier(**{**kw, 'max_iter': 2}, method_params={'checkpoint_path': str(path)}).fit(X, y, sensitive_features=g)
    r = LagrangianClassifier(**kw, method_params={'checkpoint_path': str(path)}).fit(X, y, sensitive_features=g)
    assert r.n_epochs_ == 4
    for k in a.snapshots_[-1].state:
        assert torch.equal(r.snapshots_[-1].state[k], a.snapshots_[-1].state[k])
    np.testing.assert_allclose(r.multipliers_, a.multipliers_)


@pytest.mark.filterwarnings("ignore:no mixture:RuntimeWarning")
def test_pickle_partial_fit_and_group_blind_predict():
    X, y, g = _data(300, seed=8)
    kw = dict(constraints=[true_positive_rate(group='a') >= 0.8], max_iter=3, batch_size=32, random_state=0)
    m = LagrangianClassifier(**kw).fit(X, y, sensitive_features=g)
    m2 = pickle.loads(pickle.dumps(m))
    np.testing.assert_array_equal(m.predict(X), m2.predict(X))  # no sensitive features needed
    np.testing.assert_allclose(m.predict_proba(X), m2.predict_proba(X))
    assert m2.evaluate(X, y, sensitive_features=g) == m.evaluate(X, y, sensitive_features=g)
    # score: the expected weighted accuracy over the mixture, from predict_proba by hand
    w = np.random.default_rng(0).random(len(y))
    dist = m.predict_proba(X)
    assert m.score(X, y, sample_weight=w) == pytest.approx((dist[np.arange(len(y)), y] * w).sum() / w.sum(), abs=1e-12)
    ev = m.evaluate(X, y, sensitive_features=g, confidence=0.9)
    low, high = ev["constraints"][0]["interval"]
    assert low < ev["constraints"][0]["value"] < high and ev["confidence"] == 0.9
    # one more epoch, from the fitted state and from the unpickled one: the same model
    m.partial_fit(X, y, sensitive_features=g)
    m2.partial_fit(X, y, sensitive_features=g)
    assert m.n_epochs_ == m2.n_epochs_ == 4 and len(m.snapshots_) == 4
    for k in m.snapshots_[-1].state:
        assert torch.equal(m.snapshots_[-1].state[k], m2.snapshots_[-1].state[k])
    # partial_fit trains on the data it is given: one more epoch on a chunk, every snapshot
    # re-evaluated on it
    m.partial_fit(X[:150], y[:150], sensitive_features=g[:150])
    assert m.n_epochs_ == 5 and len(m.snapshots_) == 5
    codes = m.trainer_.predictor.predict_codes(m.snapshots_[0].state, X[:150])
    C = confusion_tensor(y[:150], codes, (g[:150] == "b").astype(int), 2, 2)
    np.testing.assert_allclose(m.snapshots_[0].confusion, C, atol=1e-12)
    with pytest.raises(ValueError, match="features"):
        m.partial_fit(np.c_[X, X], y, sensitive_features=g)
    with pytest.raises(ValueError, match="do not match the classes"):
        m.partial_fit(X, np.where(y == 1, 2, y), sensitive_features=g)
    with pytest.raises(ValueError, match="differ from the fitted classes"):
        m.partial_fit(X, y, classes=[0, 1, 2], sensitive_features=g)
    with pytest.raises(ValueError, match="not seen"):
        m.partial_fit(X, y, sensitive_features=np.where(g == "a", "c", g))
    fresh = LagrangianClassifier(**kw).partial_fit(X[:100], y[:100], classes=[0, 1], sensitive_features=g[:100])
    assert fresh.n_epochs_ == 1 and fresh.classes_.tolist() == [0, 1]


def test_multiclass_softmax_and_early_stopping():
    rng = np.random.default_rng(9)
    X = rng.normal(size=(450, 3)).astype(np.float32)
    y = np.digitize(X[:, 0] + 0.5 * rng.normal(size=450), [-0.5, 0.5])
    from goalfit.goals import recall
    cons = [recall(k) >= 0.6 for k in range(3)]
    m = LagrangianClassifier(constraints=cons, hidden_layer_sizes=(8,), max_iter=30, batch_size=45, random_state=0, method_params={'proxy': 'softmax', 'n_iter_no_change': 3})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        m.fit(X[:300], y[:300], X_val=X[300:], y_val=y[300:])
    assert m.trainer_.rates.proxy == "softmax"
    assert m.n_epochs_ < 30 and m.stopped_early_
    assert set(np.unique(m.predict(X))) <= {0, 1, 2}
    assert "objective_val" in m.history_[-1]
    # the default multiclass proxy: the cost-augmented cross-entropy bound, which meets the goals here
    ce = LagrangianClassifier(constraints=cons, hidden_layer_sizes=(8,), max_iter=15, batch_size=45, random_state=0).fit(X[:300], y[:300])
    assert ce.trainer_.rates.proxy == "cross_entropy" and ce.feasible_
    ev = ce.evaluate(X[:300], y[:300])
    assert all(c["value"] >= 0.6 - 1e-9 for c in ev["constraints"])


def test_cross_entropy_bound_is_an_upper_bound_of_the_cost():
    """B(c, z) = c_j* + logsumexp(c - c_j* + z - z_j*) >= c_argmax(z), on random costs and logits."""
    from goalfit.confusion import CellEncoder as CE

    rng = np.random.default_rng(12)
    y = rng.integers(0, 4, 50)
    space = ConfusionSpace.from_codes(y, np.zeros(50, int), np.arange(4), CE().fit(None, 50).cells_)
    cp_ = Problem("error", [recall(k) >= 0.1 for k in range(4)]).compile(space)
    rp = RateProblem(cp_, "cross_entropy")
    z = torch.as_tensor(rng.normal(size=(50, 4)) * 3, dtype=torch.float32)
    lam = torch.as_tensor(rng.random(4), dtype=torch.float32)
    w = torch.full((50,), 1 / 50)
    yt, ct = torch.as_tensor(y), torch.zeros(50, dtype=torch.long)
    bound = float(rp.cost_bound_loss(z, yt, ct, w, 1.0, lam, None))
    C01 = rp.confusion(z, yt, ct, w, None)
    exact = float(rp.objective(C01, None) + lam @ (rp.A @ C01))  # the same loss on the 0-1 rates, b dropped
    assert bound >= exact - 1e-6


def test_best_iterate_rank_rule_and_batches():
    # best iterate: ranks (objective, violation) -> worst rank; smallest wins, ties by objective
    space = ConfusionSpace.from_codes(np.array([0, 1, 1, 0]), np.zeros(4, int), np.array([0, 1]),
                                      CellEncoder().fit(None, 4).cells_)
    cp_ = Problem("error", [positive_prediction_rate() <= 0.5]).compile(space)

    def C(err_pos, fp):  # a tensor with given false-negative and false-positive mass
        return np.array([[[0.5 - fp, fp], [err_pos, 0.5 - err_pos]]])
    Cs = np.stack([C(0.0, 0.5), C(0.1, 0.1), C(0.3, 0.0), C(0.05, 0.2)])
    # objectives 0.5, 0.2, 0.3, 0.25; violations 0.5, 0, 0, 0.15 -> ranks: obj 4,1,3,2; viol 4,1,1,3
    assert best_iterate(cp_, Cs) == 1
    idx, w, feasible, viol = shrink(cp_, Cs)
    assert feasible and len(idx) <= cp_.n_rows + 1
    # stratified batches: a small slice gets its own stream in every batch, weights sum to 1
    y = np.r_[np.zeros(990, int), np.ones(10, int)]
    sb = StratifiedBatches(y, np.zeros(1000, int), 2, None, 100, 5, seed=0)
    assert sb.n_small_slices == 1
    batches = sb.epoch()
    assert len(batches) == 10
    for rows, wts in batches:
        assert (y[rows] == 1).sum() == 5 and wts.sum() == pytest.approx(1.0)
        assert wts[y[rows] == 1].sum() == pytest.approx(0.01)


def test_errors():
    X, y, g = _data(100)
    with pytest.raises(ValueError, match="'method' parameter"):
        LagrangianClassifier(method='augmented').fit(X, y)
    with pytest.raises(ValueError, match="output"):
        LagrangianClassifier(torch.nn.Linear(2, 3)).fit(X, y)
    with pytest.raises(ValueError, match="multiclass|binary"):
        LagrangianClassifier(method_params={'proxy': 'hinge'}).fit(X, np.arange(100) % 3)
    with pytest.raises(ValueError, match="empty group|does not occur"):
        LagrangianClassifier(constraints=[true_positive_rate(group="zz") >= 0.5]).fit(X, y, sensitive_features=g)
    with pytest.raises(ValueError, match="non-negative"):
        LagrangianClassifier().fit(X, y, sample_weight=np.r_[-1.0, np.ones(99)])
    with pytest.raises(ValueError, match="sensitive_features has 99"):
        LagrangianClassifier().fit(X, y, sensitive_features=g[:99])
    with pytest.raises(ValueError, match="X_val"):
        LagrangianClassifier(method_params={'n_iter_no_change': 2}).fit(X, y)
    from goalfit.goals import kl_quantification
    with pytest.raises(ValueError, match="linear-row"):
        LagrangianClassifier(constraints=[kl_quantification() <= 0.1]).fit(X, y)


@pytest.mark.filterwarnings("ignore:no mixture:RuntimeWarning")
def test_build_report_and_cli_lagrangian(tmp_path, need_data, cli_fit):
    need_data("german")
    from goalfit.report import build_report

    X, y, g = _data(300, seed=10)
    m = LagrangianClassifier(constraints=[true_positive_rate(group='a') >= 0.8], max_iter=3, batch_size=32, random_state=0).fit(X, y, sensitive_features=g)
    rep = build_report(m, X, y, sensitive_features_train=g, X_test=X[:100], y_test=y[:100],
                       sensitive_features_test=g[:100])
    ev = m.evaluate(X, y, sensitive_features=g)
    assert rep.data["objective"]["train"] == pytest.approx(ev["objective"]["value"])
    assert rep.data["baseline_name"] == "best iterate" and rep.data["n_members"] == len(m.shrunk_index_)
    paths = rep.plot(tmp_path / "plots")
    assert {p.name for p in paths} == {"convergence.png", "group_rates.png"}
    rep = build_report(m, X, y, sensitive_features_train=g, confidence=0.9)
    low, high = rep.data["constraints"][0]["interval_train"]
    assert low < rep.data["constraints"][0]["train"] < high and rep.data["confidence"] == 0.9
    # the CLI: the saved pipeline (preprocessing + network) predicts from raw rows, no groups needed
    r, model = cli_fit('[data]\ndataset = "german"\nsensitive = ["sex"]\nseed = 1\n[goals]\nobjective = "error"\n'
                       'constraints = ["true_positive_rate(group=\'Female\') >= true_positive_rate() - 0.05"]\n'
                       'method = "lagrangian"\nestimator_params = {hidden_layer_sizes = [8], max_iter = 3}\n')
    assert r["method"] == "proxy_lagrangian (Cotter et al. 2019)" and len(r["history"]) == 3
    assert isinstance(model[-1], LagrangianClassifier) and model[-1].n_epochs_ == 3


def test_shrink_on_validation_and_progress_bar():
    X, y, g = _data(600, seed=13)
    cons = [true_positive_rate(group="a") >= 0.75]
    m = LagrangianClassifier(constraints=cons, max_iter=10, batch_size=50, verbose=1, random_state=0, method_params={'shrink_on': 'validation', 'multiplier_learning_rate': 0.5})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        m.fit(X[:400], y[:400], sensitive_features=g[:400], X_val=X[400:], y_val=y[400:],
              sensitive_features_val=g[400:])
    Cv = np.stack([s.confusion_val for s in m.snapshots_])
    mix = np.tensordot(m.shrunk_weights_, Cv[m.shrunk_index_], axes=1)
    ev = m.evaluate(X[400:], y[400:], sensitive_features=g[400:])
    # the LP ran on the validation rates: the classifier's exact validation value is the mixture's
    tpr_a = mix[0, 1, 1] / mix[0, 1].sum()  # cell 0 is group "a"
    assert ev["constraints"][0]["value"] == pytest.approx(tpr_a, abs=1e-9)
    assert m.feasible_ and tpr_a >= 0.75 - 1e-9


def test_default_multiplier_step_per_formulation():
    """``multiplier_learning_rate=None`` resolves per formulation; an explicit value is used as given."""
    from goalfit.torch.method import DEFAULT_MULTIPLIER_LEARNING_RATE

    X, y, g = _data(200, seed=0)
    for form, step in DEFAULT_MULTIPLIER_LEARNING_RATE.items():
        m = LagrangianClassifier(constraints=[positive_prediction_rate() <= 0.5], method=form, max_iter=1,
                                 random_state=0).fit(X, y, sensitive_features=g)
        assert m.trainer_.multipliers.lr == step
        m = LagrangianClassifier(constraints=[positive_prediction_rate() <= 0.5], method=form, max_iter=1,
                                 random_state=0, method_params={"multiplier_learning_rate": 0.37})
        assert m.fit(X, y, sensitive_features=g).trainer_.multipliers.lr == 0.37  # an explicit step wins


def test_proxy_lagrangian_step_one_meets_eight_overlapping_fpr_goals(need_data):
    """Communities and Crime, 8 overlapping race groups (each race share above/below its median),
    each group's FPR <= the overall FPR, the group indicators among the inputs (as the plug-in's
    rule reads the groups): with a multiplier step of 1.0 (``method_params``; the default before
    ``benchmarks/torch_constrained.py`` part g chose 0.3 over four goals) the shrunk mixture meets
    all 8 on the training sample (at 0.1 it broke them by 0.03-0.04 on every seed of part e), at a
    training error within 0.02 of the plug-in rule's on the same features (oracle="plugin", the
    probabilities' own thresholds; measured 0.1591 vs 0.1562 on this split). The default step
    leaves the mixture 0.007 short of them on this split (test error 0.185 against 0.189 at 1.0,
    test violation 0.027 against 0.016)."""
    need_data("communities")
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    import goalfit as gf
    from goalfit.datasets import load_dataset

    ds = load_dataset("communities")
    shares = ["black_share", "white_share", "asian_share", "hispanic_share"]
    sf = ds.sensitive_features[shares].astype(str)
    X = np.hstack([ds.data.to_numpy(float), (sf.to_numpy() == "high").astype(float)])
    y = np.asarray(ds.target, int)
    tr, _ = train_test_split(np.arange(len(y)), test_size=1 / 3, random_state=0, stratify=y)
    Xtr, ytr, sftr = StandardScaler().fit_transform(X[tr]).astype(np.float32), y[tr], sf.iloc[tr].reset_index(drop=True)
    cons = [gf.false_positive_rate(group={c: v}) <= gf.false_positive_rate() for c in shares for v in ("high", "low")]
    m = LagrangianClassifier(constraints=cons, max_iter=40, batch_size=64, random_state=0,
                             method_params={"optimizer": "adam", "learning_rate": 0.01, "snapshots_per_epoch": 2,
                                            "multiplier_learning_rate": 1.0})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m.fit(Xtr, ytr, sensitive_features=sftr)
    ev = m.evaluate(Xtr, ytr, sensitive_features=sftr)
    assert m.feasible_ and max(c["violation"] for c in ev["constraints"]) <= 1e-6
    # the plug-in oracle's column generation (pricing); the LP over the 16 cells' ROC hulls, the
    # binary default, reaches 0.127 training error here (0.156 priced), below what the network gets
    pl = gf.GoalClassifier(LogisticRegression(max_iter=2000), constraints=cons,
                           method_params={"oracle": "plugin", "exact_binary": False})
    pl.fit(Xtr, ytr, sensitive_features=sftr)
    assert ev["objective"]["value"] <= pl.evaluate(Xtr, ytr, sensitive_features=sftr)["objective"]["value"] + 0.02


def test_decision_function_is_the_network_predict_uses():
    """Without constraints the shrinking LP keeps the snapshot with the lowest training error,
    here not the last one: ``decision_function`` is that network's margin, so its sign is
    ``predict`` (scikit-learn's classifier contract), where the last snapshot's sign is not."""
    from goalfit.torch.rates import margins

    X, y, _ = _data(400, seed=0)
    m = LagrangianClassifier(max_iter=40, random_state=0).fit(X, y)
    assert len(m.shrunk_index_) == 1 and m.shrunk_index_[0] != len(m.snapshots_) - 1
    pred = m.predict(X) == 1
    np.testing.assert_array_equal(m.decision_function(X) > 0, pred)
    last = m.last_classifier_.members[0]
    assert ((margins(last.predictor.logits(last.state, X), 2).numpy() > 0) != pred).sum() == 7
