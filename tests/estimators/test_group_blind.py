"""Group-blind plug-in (GoalClassifier(group_blind=True)) and deterministic classifiers."""
import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

import goalfit as gf
from goalfit.classifiers import GroupBlindRule, PluginRule, RandomizedClassifier, ProbabilityModel
from goalfit.classifiers.hashing import row_hash
from goalfit.confusion import CellEncoder, ConfusionSpace, confusion_tensor
from goalfit.estimators.joint import FactoredJointClassifier
from goalfit.goals import Problem
from goalfit.methods.derandomize import FEASIBLE_TOL, best_threshold_rule
from goalfit.methods.plugin.group_blind import GroupBlindOracle, GroupBlindThresholdOracle


def _tiny_sample(rng, n_x, G, K, per_x=12):
    """Examples at ``n_x`` distinct points whose empirical joint of (A, Y) at each point is exact."""
    xs, ys, cs, joint = [], [], [], []
    for i in range(n_x):
        counts = rng.multinomial(per_x, rng.dirichlet(np.ones(G * K))).reshape(G, K)
        counts[0, 0] += 1  # never empty
        for a in range(G):
            for y in range(K):
                xs += [i] * counts[a, y]
                cs += [a] * counts[a, y]
                ys += [y] * counts[a, y]
        joint.append(counts / counts.sum())
    xs = np.array(xs)
    J = np.array(joint)[xs]  # (N, G, K): the exact conditional joint at each point
    return xs, np.array(ys), np.array(cs), J


@pytest.mark.parametrize("G,K,seed", [(2, 2, 0), (2, 3, 1), (3, 2, 2), (2, 2, 3), (3, 3, 4)])
def test_group_blind_oracle_equals_brute_force(G, K, seed):
    rng = np.random.default_rng(seed)
    n_x = 4 if K == 3 else 5
    xs, y, cells, J = _tiny_sample(rng, n_x, G, K)
    space = ConfusionSpace.from_codes(y, cells, np.arange(K), pd.DataFrame({"g": np.arange(G)}))
    oracle = GroupBlindOracle(J, y, cells, space)
    for _ in range(5):
        L = rng.normal(size=(G, K, K))
        member, C = oracle(L)
        value = float(np.vdot(L, C))
        best = np.inf
        for h in itertools.product(range(K), repeat=n_x):  # every deterministic function of x
            pred = np.array(h)[xs]
            best = min(best, float(np.vdot(L, confusion_tensor(y, pred, cells, K, G, None))))
        assert value == pytest.approx(best, abs=1e-12)
        # the member reproduces the oracle's predictions from the joint alone
        np.testing.assert_array_equal(member.predict_codes(None, J.reshape(len(y), -1), np.zeros(len(y), int)),
                                      oracle.predict_codes(L))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_group_blind_threshold_oracle_is_the_best_shift_of_the_plugin_rule(seed):
    rng = np.random.default_rng(seed)
    n, G = 300, 2
    cells = rng.integers(0, G, n)
    J = rng.dirichlet(np.ones(2 * G), n).reshape(n, G, 2)
    y = rng.integers(0, 2, n)
    space = ConfusionSpace.from_codes(y, cells, np.arange(2), pd.DataFrame({"g": np.arange(G)}))
    plug, thr = GroupBlindOracle(J, y, cells, space), GroupBlindThresholdOracle(J, y, cells, space)
    for _ in range(5):
        L = rng.normal(size=(G, 2, 2))
        _, C_plug = plug(L)
        rule, C_thr = thr(L)
        d = (L[:, :, 1] - L[:, :, 0]).ravel()
        score = J.reshape(n, -1) @ d
        best = np.inf  # brute force over every threshold between (and beyond) the scores
        cuts = np.unique(score)
        for t in np.r_[cuts[0] - 1, (cuts[1:] + cuts[:-1]) / 2, cuts[-1]]:
            C = confusion_tensor(y, (score <= t).astype(int), cells, 2, G, None)
            best = min(best, float(np.vdot(L, C)))
        assert float(np.vdot(L, C_thr)) == pytest.approx(best, abs=1e-12)
        assert float(np.vdot(L, C_thr)) <= float(np.vdot(L, C_plug)) + 1e-12
        np.testing.assert_allclose(confusion_tensor(y, rule.predict_codes(None, J.reshape(n, -1), cells),
                                                    cells, 2, G, None), C_thr, atol=1e-12)


def _aware_and_blind(constraints, K, seed, n=600):
    rng = np.random.default_rng(seed)
    g = rng.integers(0, 2, n)
    P = rng.dirichlet(np.ones(K), n)
    y = np.array([rng.choice(K, p=p) for p in P])
    joint = np.zeros((n, 2, K))
    joint[np.arange(n), g] = P  # A is a function of x: eta_{y,a} = eta_y 1[a = A(x)]
    sf = {"g": g}
    # the same method on the plug-in oracle's pricing on both sides: the group-aware binary default
    # is the threshold oracle, with the plug-in oracle the binary default is the LP over the cells'
    # ROC hulls, and with several classes "auto" runs column generation with the recalibrated
    # pricing, which the group-blind oracle has not (its auto runs SplitFW)
    blind = gf.GoalClassifier("precomputed", constraints=constraints, group_blind=True).fit(
        joint.reshape(n, -1), y, sensitive_features=sf)
    aware = gf.GoalClassifier("precomputed", constraints=constraints, method=blind.method_,
                              method_params={"oracle": "plugin", "exact_binary": False}).fit(P, y, sensitive_features=sf)
    return aware, blind, P, joint.reshape(n, -1), y, sf


@pytest.mark.parametrize("constraints,K", [
    ([gf.demographic_parity_difference("g") <= 0.02], 2),
    ([gf.equalized_odds_difference("g") <= 0.03], 2),
    ([gf.demographic_parity_difference("g") <= 0.05], 3),
])
def test_group_blind_equals_group_aware_when_group_is_a_function_of_x(constraints, K):
    aware, blind, P, J, y, sf = _aware_and_blind(constraints, K, seed=K)
    np.testing.assert_allclose(blind.result_.confusion, aware.result_.confusion, atol=1e-9)
    np.testing.assert_allclose(blind.predict_proba(J), aware.predict_proba(P, sensitive_features=sf), atol=1e-9)
    assert blind.evaluate(J, y, sensitive_features=sf)["accuracy"] == pytest.approx(
        aware.evaluate(P, y, sensitive_features=sf)["accuracy"], abs=1e-12)


def _blobs(n=800, seed=0, K=2):
    rng = np.random.default_rng(seed)
    g = rng.integers(0, 2, n)
    race = rng.integers(0, 2, n)
    X = np.column_stack([rng.normal(size=n) + g, rng.normal(size=n) + 0.5 * race, rng.normal(size=n)])
    logits = np.column_stack([np.zeros(n)] + [X[:, 0] * (k + 1) - X[:, 1] * k + rng.normal(size=n)
                                              for k in range(1, K)])
    y = np.argmax(logits, axis=1)
    return X, y, g, race


def test_predict_without_sensitive_features_after_group_blind_fit():
    X, y, g, _ = _blobs()
    con = [gf.demographic_parity_difference("g") <= 0.02]
    blind = gf.GoalClassifier(LogisticRegression(), constraints=con, group_blind=True, random_state=0)
    blind.fit(X, y, sensitive_features={"g": g})
    p = blind.predict(X)
    assert p.shape == (len(y),)
    np.testing.assert_array_equal(blind.predict_proba(X), blind.predict_proba(X, sensitive_features={"g": 1 - g}))
    # the training values of the goals are those of the deployed classifier with the true groups
    ev = blind.evaluate(X, y, sensitive_features={"g": g})
    assert ev["constraints"][0]["value"] == pytest.approx(
        blind.problem_.constraints[0].value(blind.result_.confusion), abs=1e-12)
    assert ev["constraints"][0]["value"] <= 0.02 + 1e-9
    aware = gf.GoalClassifier(LogisticRegression(), constraints=con).fit(X, y, sensitive_features={"g": g})
    with pytest.raises(ValueError, match=r"depends on the sensitive feature.*pass sensitive_features"):
        aware.predict(X)


def test_group_blind_multiclass_intersectional_and_factored():
    X, y, g, race = _blobs(n=1200, seed=3, K=3)
    sf = pd.DataFrame({"g": g, "race": race})
    # the cells are the 4 intersections of g and race: a joint model over 4 x 3 labels
    con = [gf.demographic_parity_difference("g") <= 0.05, gf.demographic_parity_difference("race") <= 0.05]
    for joint in ("product", "factored"):
        m = gf.GoalClassifier(LogisticRegression(max_iter=500), constraints=con, group_blind=True,
                              method_params={"joint_model": joint}).fit(X, y, sensitive_features=sf)
        assert m.train_sample_.proba.shape == (len(y), 12)
        ev = m.evaluate(X, y, sensitive_features=sf)
        assert max(c["value"] for c in ev["constraints"]) <= 0.05 + 1e-9
        # the training values are measured with the true intersectional cells
        C = m.classifier_.expected_confusion_tensor(X, m.train_sample_.y, sensitive_features=sf)
        np.testing.assert_allclose(C, m.result_.confusion, atol=1e-12)
        assert m.predict(X).shape == (len(y),)


def test_factored_joint_is_product_of_its_parts():
    X, y, g, _ = _blobs(n=500, seed=4, K=3)
    z = g * 3 + y
    f = FactoredJointClassifier(LogisticRegression(), n_classes=3, n_cells=2).fit(X, z)
    J = f.predict_proba(X)
    np.testing.assert_allclose(J.sum(axis=1), 1.0, atol=1e-12)
    Py = f.label_model_.predict_proba(X)
    np.testing.assert_allclose(J.reshape(-1, 2, 3).sum(axis=1), Py, atol=1e-12)
    Pa = f.group_models_[1].predict_proba(X)
    np.testing.assert_allclose(J.reshape(-1, 2, 3)[:, :, 1], Py[:, [1]] * Pa, atol=1e-12)


def test_group_blind_option_errors():
    X, y, g, _ = _blobs(n=200)
    with pytest.raises(ValueError, match="pass sensitive_features to fit"):
        gf.GoalClassifier(group_blind=True).fit(X, y)
    with pytest.raises(ValueError, match=r"oracle'\] must be 'plugin' or 'threshold'"):
        gf.GoalClassifier(group_blind=True, method_params={"oracle": "refit"}).fit(X, y, sensitive_features=g)
    X3, y3, g3, _ = _blobs(n=300, K=3)
    with pytest.raises(ValueError, match="binary problems only"):
        gf.GoalClassifier(group_blind=True, method_params={"oracle": "threshold"},
                          constraints=[gf.demographic_parity_difference("g") <= 0.1]).fit(X3, y3, sensitive_features={"g": g3})
    with pytest.raises(ValueError, match="joint_model"):
        gf.GoalClassifier(group_blind=True, method_params={"joint_model": "x"}).fit(X, y, sensitive_features=g)
    with pytest.raises(ValueError, match=r"shape \(n_samples, 4\)"):
        gf.GoalClassifier("precomputed", group_blind=True).fit(np.full((200, 2), 0.5), y, sensitive_features=g)


# ---------------------------------------------------------------- deterministic classifiers
def _mixture(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    eta = 1 / (1 + np.exp(-(X[:, 0] + 0.5 * X[:, 1])))
    P = np.column_stack([1 - eta, eta])
    y = (rng.random(n) < eta).astype(int)
    enc = CellEncoder().fit(None, n)
    members = [PluginRule(np.array([[[0, 1], [t, 0]]], float)) for t in (0.5, 1.0, 3.0)]
    prob = ProbabilityModel(_Fixed(), [0, 1])
    np.testing.assert_allclose(prob.predict_proba(X), P, atol=1e-12)
    return RandomizedClassifier(members, [0.3, 0.5, 0.2], np.array([0, 1]), enc, prob), X, y


class _Fixed:
    """A 'model' with the true probabilities ``sigma(x_0 + x_1 / 2)`` of :func:`_mixture`."""

    def predict_proba(self, X):
        return 1 / (1 + np.exp(-(X[:, [0]] + 0.5 * X[:, [1]]))) * np.array([[-1, 1]]) + np.array([[1, 0]])


def test_hash_rates_converge_to_randomized_rates():
    devs = {}
    for n in (1000, 10000, 100000):
        d = []
        for seed in range(4):
            clf, X, y = _mixture(n, seed)
            C_exp = clf.expected_confusion_tensor(X, y, np.zeros(n, int))
            C_hash = clf.to_deterministic("hash", random_state=seed).expected_confusion_tensor(X, y, np.zeros(n, int))
            d.append(np.abs(C_hash - C_exp).max())
        devs[n] = float(np.mean(d))
        assert devs[n] <= 3 * np.sqrt(0.25 / n)  # one sampled prediction per example, at most
    assert devs[100000] < devs[10000] < devs[1000]


def test_hash_predictions_do_not_depend_on_batch():
    clf, X, y = _mixture(2000, 0)
    det = clf.to_deterministic("hash", random_state=7)
    full = det.predict(X)
    perm = np.random.default_rng(0).permutation(len(X))
    np.testing.assert_array_equal(det.predict(X[perm]), full[perm])
    np.testing.assert_array_equal(np.concatenate([det.predict(X[:3]), det.predict(X[3:1000]), det.predict(X[1000:])]), full)
    assert det.is_deterministic
    assert not np.array_equal(full, clf.to_deterministic("hash", random_state=8).predict(X))
    # rows hash by value: dense, sparse and DataFrame rows are stable across calls
    import scipy.sparse as sp

    np.testing.assert_array_equal(row_hash(X), row_hash(sp.csr_matrix(X)))
    np.testing.assert_array_equal(row_hash(pd.DataFrame(X))[perm], row_hash(pd.DataFrame(X[perm])))


def test_row_hash_dense_blocks_equal_sparse_entries():
    # the dense branch hashes column by column over blocks of rows; the sparse one hashes the
    # stored entries: the same sum of entry hashes across a block boundary, zeros and -0.0
    import scipy.sparse as sp

    from goalfit.classifiers.hashing import _BLOCK_ROWS

    rng = np.random.default_rng(3)
    X = rng.integers(-2, 3, size=(_BLOCK_ROWS + 7, 3)).astype(float)
    X[5, 1] = -0.0
    h = row_hash(X)
    np.testing.assert_array_equal(h, row_hash(sp.csr_matrix(X)))
    np.testing.assert_array_equal(row_hash(X.astype(np.int64)), h)  # by value, not by dtype
    np.testing.assert_array_equal(row_hash(X[-20:]), h[-20:])  # a row's hash does not depend on its block
    assert row_hash(np.zeros((1, 3)))[0] == 0  # no stored entries: the empty sum


def test_best_threshold_rule_equals_brute_force():
    rng = np.random.default_rng(0)
    n = 60
    cells = rng.integers(0, 2, n)
    eta = np.round(rng.random(n), 1)  # few distinct values
    y = (rng.random(n) < eta).astype(int)
    space = ConfusionSpace.from_codes(y, cells, np.array([0, 1]), pd.DataFrame({"g": [0, 1]}))
    for bound in (0.0, 0.05, 0.2):
        problem = Problem("error", [gf.demographic_parity_difference("g") <= bound]).compile(space)
        rule, C, info = best_threshold_rule(problem, eta, y, cells)
        assert info["exact"]
        best = (np.inf, np.inf)
        grids = [np.r_[np.unique(eta[cells == c]), np.inf] for c in range(2)]
        for t0 in grids[0]:
            for t1 in grids[1]:
                pred = (eta >= np.array([t0, t1])[cells]).astype(int)
                Cb = confusion_tensor(y, pred, cells, 2, 2, None)
                v = problem.max_violation(Cb)
                best = min(best, (0.0 if v <= FEASIBLE_TOL else v, problem.objective.value(Cb)))
        got = problem.max_violation(C)
        assert (0.0 if got <= FEASIBLE_TOL else got) == pytest.approx(best[0], abs=1e-12)
        assert problem.objective.value(C) == pytest.approx(best[1], abs=1e-12)


@pytest.mark.parametrize("group_blind", [False, True])
def test_to_deterministic_strategies_check_the_goals_on_train(group_blind):
    X, y, g, _ = _blobs(n=3000, seed=5)
    con = [gf.demographic_parity_difference("g") <= 0.01]
    m = gf.GoalClassifier(LogisticRegression(), constraints=con, group_blind=group_blind).fit(
        X, y, sensitive_features={"g": g})
    sf = None if group_blind else {"g": g}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the best rule meets the goal on train: no warning
        best = m.to_deterministic("best_rule")
    assert best.is_deterministic and best.train_max_violation_ <= 1e-7
    C = best.expected_confusion_tensor(X, y, sensitive_features={"g": g}) if group_blind else \
        best.expected_confusion_tensor(X, y, sensitive_features=sf)
    assert m.problem_.max_violation(C) <= 1e-7  # the deployed rule, re-evaluated, meets it
    # the randomized objective is a lower bound on any deterministic rule's only up to noise;
    # the best rule must be at least as good as the heaviest member when that one is feasible
    assert best.train_objective_ <= m.problem_.objective.value(m.result_.confusion) + 0.01
    hashed = m.to_deterministic("hash") if len(m.classifier_.members) == 1 else None
    if len(m.classifier_.members) > 1:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            hashed = m.to_deterministic("hash")
        viol = hashed.train_max_violation_
        assert (viol > 1e-7) == any("breaks goal" in str(w.message) for w in caught)
    assert abs(hashed.train_objective_ - m.problem_.objective.value(m.result_.confusion)) < 0.02
    # the training values come from the stored sample; the deployed classifier, re-run on X, agrees
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the heaviest member alone may break the goal (checked above for hash)
        heaviest = m.to_deterministic("max_weight")
    for det in (best, hashed, heaviest):
        C = det.expected_confusion_tensor(X, y, sensitive_features={"g": g})
        assert det.train_objective_ == pytest.approx(m.problem_.objective.value(C), abs=1e-12)
        assert det.train_max_violation_ == pytest.approx(m.problem_.max_violation(C), abs=1e-12)
    with pytest.raises(ValueError, match="unknown strategy"):
        m.to_deterministic("vote")


def test_report_of_a_group_blind_fit_has_a_group_blind_baseline():
    from goalfit.report import build_report

    X, y, g, _ = _blobs(n=600, seed=6)
    m = gf.GoalClassifier(LogisticRegression(), constraints=[gf.demographic_parity_difference("g") <= 0.02],
                          group_blind=True).fit(X, y, sensitive_features={"g": g})
    r = build_report(m, X, y, sensitive_features_train={"g": g}, confidence=None)
    marginal = m.estimator_.predict_proba(X).reshape(len(y), 2, 2).sum(axis=1)
    assert r.data["baseline"]["metrics"]["train"]["accuracy"] == pytest.approx(
        float(np.mean(np.argmax(marginal, axis=1) == y)), abs=1e-12)
    assert r.data["constraints"][0]["train"] <= 0.02 + 1e-9


def test_best_rule_is_never_worse_than_a_member_with_three_groups():
    # three groups: the per-cell threshold search is coordinate descent (a local optimum); on this
    # sample it ends worse than the threshold oracle's first member, which must then be returned
    from goalfit.methods.derandomize import rank

    rng = np.random.default_rng(11)
    n = 1500
    g = rng.integers(0, 3, n)
    X = np.column_stack([rng.normal(size=n) + 0.7 * g, rng.normal(size=n)])
    y = (X[:, 0] + X[:, 1] + rng.normal(size=n) > 0.8).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = gf.GoalClassifier(LogisticRegression(), constraints=[gf.demographic_parity_difference("g") <= 0.01],
                              method_params={"oracle": "threshold"}).fit(X, y, sensitive_features={"g": g})
        best = m.to_deterministic("best_rule")
    assert best.derandomization_["exact"] is False
    P, sf = m.problem_, {"g": g}
    got = rank(P, best.expected_confusion_tensor(X, y, sensitive_features=sf))
    members = [rank(P, m.classifier_.with_members([mb], [1.0]).expected_confusion_tensor(X, y, sensitive_features=sf))
               for mb in m.classifier_.members]
    assert got <= min(members)


@pytest.mark.parametrize("goal,n_dirs", [(gf.demographic_parity_difference, 49), (gf.equalized_odds_difference, 1153)])
def test_direction_rule_reaches_the_exact_threshold_rule_when_the_group_is_a_function_of_x(goal, n_dirs):
    # with A a function of x the joint is eta_1 on the row's own group and 0 elsewhere, so the
    # group-blind linear rules are exactly the per-group threshold rules, whose best is known
    # exactly (best_threshold_rule, two groups); the direction grid must get within its
    # resolution of it, and meet the goal on the sample whenever the exact search does
    from goalfit.methods.derandomize import best_direction_rule

    rng = np.random.default_rng(3)
    n = 3000
    cells = rng.integers(0, 2, n)
    eta = np.clip(rng.beta(2, 3, n) + 0.15 * cells, 0, 1)
    y = (rng.random(n) < eta).astype(int)
    J = np.zeros((n, 2, 2))
    J[np.arange(n), cells, 1], J[np.arange(n), cells, 0] = eta, 1 - eta
    space = ConfusionSpace.from_codes(y, cells, np.array([0, 1]), pd.DataFrame({"g": [0, 1]}))
    for bound in (0.01, 0.05):
        problem = Problem("error", [goal("g") <= bound]).compile(space)
        _, C_exact, info = best_threshold_rule(problem, eta, y, cells)
        assert info["exact"] and info["feasible"]
        rule, C, n_cand = best_direction_rule(problem, J.reshape(n, -1), y, cells)
        assert n_cand == n_dirs  # one constraint axis for DP, two (TPR, FPR) for equalized odds
        assert isinstance(rule, GroupBlindRule)
        np.testing.assert_allclose(C, confusion_tensor(y, rule.predict_codes(None, J.reshape(n, -1), cells),
                                                       cells, 2, 2, None), atol=1e-15)
        assert problem.max_violation(C) <= 1e-9
        exact, got = problem.objective.value(C_exact), problem.objective.value(C)
        assert exact - 1e-12 <= got <= exact + 0.004


def test_best_rule_group_blind_equalized_odds_uses_the_direction_search():
    X, y, g, _ = _blobs(n=2000, seed=7)
    con = [gf.equalized_odds_difference("g") <= 0.02]
    m = gf.GoalClassifier(LogisticRegression(), constraints=con, group_blind=True).fit(
        X, y, sensitive_features={"g": g})
    from goalfit.methods.derandomize import best_candidate_rule, best_direction_rule, rank

    best = m.to_deterministic("best_rule")
    ts, P = m.train_sample_, m.problem_
    assert best.derandomization_["n_directions"] == 1153
    members = [mb for mb in m.classifier_.members if mb.needs == "proba"]
    _, C_pairs, _ = best_candidate_rule(P, members, ts.proba, ts.y, ts.cells, n_grid=19, shift=True)
    _, C_dirs, _ = best_direction_rule(P, ts.proba, ts.y, ts.cells)
    C = best.expected_confusion_tensor(X, y, sensitive_features={"g": g})
    assert rank(P, C) == min(rank(P, C_pairs), rank(P, C_dirs))  # the better of both searches


def test_best_candidate_rule_scores_members_on_their_stored_predictions():
    # the stored member predictions (TrainingSample.member_codes) give the same search as
    # predicting again; a member's stored codes are what it is scored on
    from goalfit.methods.derandomize import best_candidate_rule

    X, y, g, _ = _blobs(n=1500, seed=8)
    m = gf.GoalClassifier(LogisticRegression(), constraints=[gf.demographic_parity_difference("g") <= 0.01]).fit(
        X, y, sensitive_features={"g": g})
    ts, P, members = m.train_sample_, m.problem_, m.classifier_.members
    args = (P, members, ts.proba, ts.y, ts.cells)
    b1, C1, n1 = best_candidate_rule(*args, n_grid=5)
    b2, C2, n2 = best_candidate_rule(*args, n_grid=5, member_codes=ts.member_codes)
    np.testing.assert_array_equal(C1, C2)
    assert n1 == n2
    # all-zero stored codes for every member: the best member is scored as "predict 0 everywhere"
    zeros = np.zeros_like(ts.member_codes)
    _, C0, _ = best_candidate_rule(P, members, ts.proba, ts.y, ts.cells, n_grid=0, member_codes=zeros)
    np.testing.assert_allclose(C0, confusion_tensor(ts.y, np.zeros(len(ts.y), int), ts.cells, 2, C0.shape[0], None))
    with pytest.raises(ValueError, match="member_codes has"):
        best_candidate_rule(*args, member_codes=ts.member_codes[:0])


@pytest.mark.parametrize("as_frame", [False, True])
def test_training_sample_defers_hashes_and_member_predictions_until_to_deterministic(as_frame):
    # a precomputed numeric array is hashed from the probabilities it holds, on first use; the
    # members (plug-in rules) predict on first use; a DataFrame hashes by pandas' rules, at fit
    rng = np.random.default_rng(4)
    n = 4000
    p = rng.random(n)
    P = np.column_stack([1 - p, p]).astype(np.float32)  # float32 rows hash as their float64 values
    y, g = (rng.random(n) < p).astype(int), rng.integers(0, 2, n)
    X = pd.DataFrame(P, columns=["p0", "p1"]) if as_frame else P
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = gf.GoalClassifier("precomputed", constraints=[gf.demographic_parity_difference("g") <= 0.01]).fit(
            X, y, sensitive_features={"g": g})
    ts = m.train_sample_
    assert (ts._hashes is None) is (not as_frame) and ts._member_codes is None
    np.testing.assert_array_equal(ts.hashes, row_hash(X))
    # the classifier's own prediction path on the user's rows (not the sample's kept arrays)
    eager = m.classifier_.member_predictions(X, sensitive_features={"g": g})
    np.testing.assert_array_equal(ts.member_codes, eager)
    assert ts.member_codes.dtype == np.uint8 and ts._classifier is None  # computed once, then kept
    det = m.to_deterministic("hash")
    np.testing.assert_array_equal(det.predict(X, sensitive_features={"g": g}),
                                  gf.classifiers.hashing.hash_predictions(ts.hashes, m.classifier_.weights,
                                                                          eager, 0))


def test_precomputed_probabilities_changed_in_place_after_fit_are_refused():
    # the model keeps a float64 precomputed array without a copy; its lazy hashes and the
    # deterministic searches read it: a change in place is refused, not used silently
    from goalfit.classifiers.hashing import array_fingerprint
    from goalfit.estimators.deterministic import TrainingSample

    rng = np.random.default_rng(6)
    n = 3000
    p = rng.random(n)
    P = np.column_stack([1 - p, p])
    y, g = (rng.random(n) < p).astype(int), rng.integers(0, 2, n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = gf.GoalClassifier("precomputed", constraints=[gf.demographic_parity_difference("g") <= 0.01]).fit(
            P, y, sensitive_features={"g": g})
    assert m.train_sample_.proba is P
    before = m.to_deterministic("hash").train_objective_
    P[:] = P[::-1].copy()  # the rows permuted: every value still a probability
    for call in (lambda: m.to_deterministic("hash"), lambda: m.to_deterministic("best_rule"),
                 lambda: m.with_goals(constraints=[gf.demographic_parity_difference("g") <= 0.05])):
        with pytest.raises(ValueError, match="modified in place after fit"):
            call()
    P[:] = P[::-1].copy()  # restored: accepted again, with the same answer
    assert m.to_deterministic("hash").train_objective_ == before
    # the fingerprint sees a swap of two rows and any change of one entry (its sign and its
    # exponent too: the multipliers are odd), and not the memory layout
    Q = rng.random((70_000, 3))
    swapped = Q.copy()
    swapped[[3, 69_999]] = swapped[[69_999, 3]]
    assert array_fingerprint(Q) != array_fingerprint(swapped)
    assert array_fingerprint(np.asfortranarray(Q)) == array_fingerprint(Q)
    small, f = Q[:100], array_fingerprint(Q[:100])
    for change in (np.negative, lambda v: 2 * v, lambda v: v / 2, lambda v: np.nextafter(v, 2.0)):
        for i in range(100):
            for j in range(3):
                edited = small.copy()
                edited[i, j] = change(edited[i, j])
                assert array_fingerprint(edited) != f
    # a value computed from a changed array is never cached: the getters check first
    lazy = gf.GoalClassifier("precomputed", constraints=[gf.demographic_parity_difference("g") <= 0.01]).fit(
        P, y, sensitive_features={"g": g}).train_sample_
    P[0] = P[0, ::-1].copy()
    with pytest.raises(ValueError, match="modified in place"):
        lazy.hashes
    with pytest.raises(ValueError, match="modified in place"):
        lazy.member_codes
    P[0] = P[0, ::-1].copy()
    assert lazy.hashes is not None and lazy._fingerprint is not None
    # a copy made at fit (float32 input) is not the user's array: no fingerprint to keep
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        copied = gf.GoalClassifier("precomputed").fit(P.astype(np.float32), y, sensitive_features={"g": g})
    assert copied.train_sample_._fingerprint is None
    # a sample pickled when hashes and member_codes were plain attributes still loads
    ts = m.train_sample_
    old = {"proba": ts.proba, "y": ts.y, "cells": ts.cells, "sample_weight": None, "hashes": ts.hashes,
           "member_codes": ts.member_codes}
    loaded = TrainingSample.__new__(TrainingSample)
    loaded.__setstate__(old)
    np.testing.assert_array_equal(loaded.hashes, ts.hashes)
    np.testing.assert_array_equal(loaded.member_codes, ts.member_codes)
    loaded.check_unchanged()  # no fingerprint then: nothing to compare


def test_group_blind_precomputed_sample_is_deferred_and_equals_the_eager_one():
    # joint (group, class) probabilities: the kept proba is the joint array the rows hash by, and
    # the group-blind members read it; to_deterministic("hash") predicts from the same hashes
    _, blind, _, J, _, _ = _aware_and_blind([gf.demographic_parity_difference("g") <= 0.02], 3, seed=3)
    ts = blind.train_sample_
    assert len(blind.classifier_.members) >= 2  # the hash picks between members
    assert ts._hashes is None and ts._member_codes is None and ts.proba.shape == J.shape
    np.testing.assert_array_equal(ts.hashes, row_hash(J))
    eager = blind.classifier_.member_predictions(J)  # the deployed classifier's path, group-blind
    np.testing.assert_array_equal(ts.member_codes, eager)
    det = blind.to_deterministic("hash")
    from goalfit.classifiers.hashing import hash_predictions

    np.testing.assert_array_equal(det.predict(J), blind.classes_[hash_predictions(row_hash(J), blind.classifier_.weights,
                                                                                    eager, 0)])
