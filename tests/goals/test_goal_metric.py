"""goal_metric: whether a goal reads the groups, from its structure (not its display name)."""
import numpy as np
import pytest

import goalfit as gf

rng = np.random.default_rng(3)
N = 400
Y = rng.integers(0, 2, N)
S = rng.normal(size=N) + 0.8 * Y
G = rng.choice(np.array(["F", "M"]), N)
P = (S > 0).astype(int)  # the predictions the scores make


def _tpr(m):
    return P[m & (Y == 1)].mean()


def _f1(m):
    tp, fp, fn = ((P == 1) & (Y == 1) & m).sum(), ((P == 1) & (Y == 0) & m).sum(), ((P == 0) & (Y == 1) & m).sum()
    return 2 * tp / (2 * tp + fp + fn)


F, ALL = G == "F", np.ones(N, bool)
FAMILIES = [  # goal, uses groups, bound column, loss by hand (numpy)
    (gf.error_rate(), False, "group", np.mean(P != Y)),
    (gf.error(), False, "group", np.mean(P != Y)),
    (gf.gmean(), False, "group", 1 - np.sqrt(_tpr(ALL) * (1 - P[Y == 0].mean()))),
    (gf.f1(), False, "group", 1 - _f1(ALL)),
    (gf.error_rate() + 0.5 * gf.false_negative_rate(), False, "group", np.mean(P != Y) + 0.5 * (1 - _tpr(ALL))),
    (gf.true_positive_rate(group="F"), True, "group", _tpr(F)),
    (gf.f1(group="F"), True, "group", 1 - _f1(F)),
    (gf.coverage_deviation(group="F"), True, "group", abs(P[F].mean() - Y.mean())),
    (gf.error_rate() - 0.5 * gf.true_positive_rate(group="F"), True, "group", np.mean(P != Y) - 0.5 * _tpr(F)),
    (gf.demographic_parity_difference(), True, "group", abs(P[F].mean() - P[~F].mean())),
    (gf.demographic_parity_difference("sex"), True, "sex", abs(P[F].mean() - P[~F].mean())),
    (gf.macro_f1_over_groups("sex"), True, "sex", 1 - 0.5 * (_f1(F) + _f1(~F))),
]


@pytest.mark.parametrize("goal,uses,column,value", FAMILIES, ids=[f[0].name for f in FAMILIES])
def test_every_goal_family_reads_the_groups_as_before(goal, uses, column, value):
    m = gf.goal_metric(goal)
    assert m.uses_groups is uses and m.column == column
    assert m(Y, S, G if uses else None) == pytest.approx(value, abs=1e-12)


def test_a_name_cannot_fool_the_check():
    # the old check looked for "group=" in the name: both of these were misread
    decoy = gf.goal_metric(gf.rate(pred=1, name="rate(group='all')"))  # no group condition
    assert decoy.uses_groups is False
    assert decoy(Y, S) == pytest.approx(P.mean(), abs=1e-12)
    hidden = gf.goal_metric(gf.rate(pred=1, group="F", name="selection_F"))  # a group condition
    assert hidden.uses_groups is True
    assert hidden(Y, S, G) == pytest.approx(P[F].mean(), abs=1e-12)


def test_the_column_a_rate_names_is_the_one_bound():
    for group in ({"sex": "F"}, ("sex", "F")):  # failed before: bound as "group"
        m = gf.goal_metric(gf.true_positive_rate(group=group))
        assert m.uses_groups and m.column == "sex"
        assert m(Y, S, G) == pytest.approx(_tpr(F), abs=1e-12)
    deployed = rng.integers(0, 2, N)  # churn against a deployed model's labels (its column)
    m = gf.goal_metric(gf.churn_rate("deployed"))
    assert m.uses_groups and m.column == "deployed"
    assert m(Y, S, deployed) == pytest.approx(np.mean(P != deployed), abs=1e-12)


def test_goals_a_black_box_cannot_bind_are_refused():
    with pytest.raises(ValueError, match=r"slicing columns \['race', 'sex'\]"):
        gf.goal_metric(gf.true_positive_rate(group={"sex": "F"}) - gf.true_positive_rate(group={"race": "B"}))
    with pytest.raises(ValueError, match="dataset"):
        gf.goal_metric(gf.true_positive_rate(dataset="train"))


def test_groups_become_cells_through_the_cell_encoder():
    """The same metric value whatever the groups' type (strings, integers, booleans): the cells
    come from goalfit.confusion.CellEncoder, as in every estimator."""
    m = gf.goal_metric(gf.demographic_parity_difference())
    ref = abs(P[F].mean() - P[~F].mean())
    for groups in (G, (G == "F").astype(int), G == "F", G.astype(object)):
        assert m(Y, S, groups) == pytest.approx(ref, abs=1e-12)
    many = np.stack([S, -S, S + 1])
    np.testing.assert_allclose(m.evaluate_many(Y, many, G), [m(Y, s, G) for s in many], atol=1e-15)


def test_resolve_objective_splits_goals_from_black_boxes():
    from goalfit.goals.blackbox import ConfusionMetric, resolve_objective

    goal, metric = resolve_objective("gmean")
    assert metric is None and goal.name == "gmean"
    goal, metric = resolve_objective(gf.gmean_loss())  # a ConfusionMetric: its goal
    assert metric is None and type(goal).__name__ == "GMeanLoss"
    dp = gf.demographic_parity_difference("sex")
    assert resolve_objective(gf.goal_metric(dp))[0] is dp
    assert resolve_objective(dp) == (dp, None)
    goal, metric = resolve_objective("prbep")
    assert goal is None and metric.name == "prbep_loss"
    goal, metric = resolve_objective(lambda yt, yp: float(np.mean(yt != yp)))
    assert goal is None and metric(Y, S) == pytest.approx(np.mean(P != Y))
    assert not isinstance(metric, ConfusionMetric)
    with pytest.raises(ValueError, match="is a constraint, not a metric"):
        resolve_objective(dp <= 0.1)
    with pytest.raises(ValueError, match="unknown objective 'gmeen'"):
        resolve_objective("gmeen")
    with pytest.raises(TypeError):
        resolve_objective(3.0)
