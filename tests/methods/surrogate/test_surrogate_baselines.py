"""The black-box baselines (post-shift, Relaxed-FM) as methods behind the fit template: their
numbers against a brute force and against values saved before they moved onto the template."""
import warnings

import numpy as np
import pytest

import goalfit as gf
from goalfit.datasets import make_jiang_simulated
from goalfit.fit import GoalEstimator
from goalfit.methods.surrogate.baselines import (PostShiftDetails, PostShiftMethod, RelaxedFMDetails,
                                                 RelaxedFMMethod)
from tests.estimators.test_surrogate_estimator import _groups_data

pytestmark = pytest.mark.usefixtures("one_thread")  # tests/conftest.py


def _by_hand(y, pred, g, w):
    """(1 - G-mean, demographic-parity gap between the two groups), weighted, written out."""
    tpr = w[(y == 1) & pred].sum() / w[y == 1].sum()
    tnr = w[(y == 0) & ~pred].sum() / w[y == 0].sum()
    rates = [w[(g == v) & pred].sum() / w[g == v].sum() for v in ("a", "b")]
    return 1 - np.sqrt(tpr * tnr), abs(rates[0] - rates[1])


@pytest.mark.filterwarnings("ignore::goalfit.fit.SmallSliceWarning")  # 40 rows: small slices by design
@pytest.mark.parametrize("validation", [False, True])
def test_post_shift_threshold_is_a_brute_force_search_on_a_tiny_sample(validation):
    """Every rule ``s > t`` on the selection rows, weighted: the feasible one with the lowest
    G-mean loss is the one post-shift deploys (its objective, its predictions)."""
    rng = np.random.default_rng(7)
    n = 40
    X = rng.normal(size=(n, 2))
    g = np.where(np.arange(n) % 3 == 0, "a", "b")
    y = (X[:, 0] + 0.8 * (g == "a") + 0.6 * rng.normal(size=n) > 0.3).astype(int)
    w = rng.integers(1, 4, size=n).astype(float)
    tr = np.arange(n) < (24 if validation else n)
    sel = ~tr if validation else tr
    kw = dict(X_val=X[sel], y_val=y[sel], sensitive_features_val=g[sel]) if validation else {}
    ps = gf.BlackBoxPostShiftClassifier("gmean", [gf.demographic_parity_difference() <= 0.15],
                                        method_params={"grid_size": 1000}).fit(
        X[tr], y[tr], sensitive_features=g[tr], sample_weight=w[tr] if not validation else None, **kw)
    ws = w[sel] if not validation else np.ones(sel.sum())
    s = ps.estimator_.decision_function(X[sel])
    cuts = np.concatenate([[-np.inf], np.sort(np.unique(s))])  # s > cut: every distinct rule
    table = [(*_by_hand(y[sel], s > c, g[sel], ws), c) for c in cuts]
    feasible = [(loss, c) for loss, gap, c in table if gap <= 0.15 + 1e-12]
    best_loss, best_cut = min(feasible)
    assert ps.validation_metric_ == pytest.approx(best_loss, abs=1e-12)
    assert ps.selection_max_violation_ == 0.0 and ps.feasible_ == (ps.max_violation_ <= gf.FEASIBLE_TOL)
    # the deployed rule makes the brute force's predictions on the selection rows
    np.testing.assert_array_equal(ps.predict(X[sel]), (s > best_cut).astype(int))
    d = ps.result_.details
    assert isinstance(d, PostShiftDetails) and d.threshold == ps.threshold_ and d.estimator is ps.estimator_
    assert d.selection.sample == ("validation" if validation else "training") and d.selection.feasible
    assert d.n_candidates == 1001 and ps.result_.n_oracle_calls == 1001 and ps.method_ == "post_shift"


def test_post_shift_values_saved_before_the_template():
    """Computed by the estimators' own fit before they ran on the template (same seeds)."""
    X, y = make_jiang_simulated(800, random_state=3)
    ps = gf.BlackBoxPostShiftClassifier("gmean").fit(X, y)
    assert ps.threshold_ == pytest.approx(-2.1362053404944135, rel=1e-12)
    assert ps.validation_metric_ == pytest.approx(0.4433171160046979, rel=1e-12)
    np.testing.assert_allclose(ps.result_.confusion.ravel(), [0.65625, 0.24375, 0.0575, 0.0425], rtol=1e-12)
    Xg, yg, g = _groups_data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the positive class of 'no'/'yes' is the last label
        ps = gf.BlackBoxPostShiftClassifier("macro_f1_over_groups").fit(
            Xg[:600], yg[:600], sensitive_features=g[:600], X_val=Xg[600:], y_val=yg[600:],
            sensitive_features_val=g[600:])
    assert ps.threshold_ == pytest.approx(-0.41470350425400604, rel=1e-12)
    assert ps.validation_metric_ == pytest.approx(0.3212247016087182, rel=1e-12)
    assert ps.result_.details.selection.sample == "validation"
    # the 0.1 mapping still reads the same numbers, with a FutureWarning naming the attribute
    with pytest.warns(FutureWarning, match="details"):
        assert ps.result_.certificates["threshold"] == ps.threshold_


def test_relaxed_fm_values_saved_before_the_template():
    X, y, g = _groups_data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        rf = gf.RelaxedFMClassifier().fit(X[:600], y[:600], sensitive_features=g[:600], X_val=X[600:],
                                          y_val=y[600:], sensitive_features_val=g[600:])
    np.testing.assert_allclose(rf.theta_, [1.8704339261952965, 0.06082950840630182, -0.08962616097247023,
                                           0.2531247807817146, 0.11048998711623625], rtol=1e-9)
    assert rf.validation_metric_ == pytest.approx(0.32040493514710533, rel=1e-12) and rf.n_iter_ == 23
    # independently: 1 - the mean over groups of sklearn's F1 on the validation rows
    from sklearn.metrics import f1_score

    pred = rf.predict(X[600:])
    ref = np.mean([f1_score(y[600:][g[600:] == v], pred[g[600:] == v], pos_label="yes") for v in ("F", "M")])
    assert rf.validation_metric_ == pytest.approx(1 - ref, abs=1e-12)
    d = rf.result_.details
    assert isinstance(d, RelaxedFMDetails) and d.selection.sample == "validation"
    assert d.metric_path[d.selection.iteration][1] == min(v for _, v in rf.metric_path_) == rf.validation_metric_
    np.testing.assert_array_equal(np.r_[rf.coef_, rf.intercept_], rf.theta_)


def test_baselines_run_the_template():
    """No fit of their own: the template's keyword check, its method check before fitting."""
    for cls in (gf.BlackBoxPostShiftClassifier, gf.RelaxedFMClassifier):
        assert cls.fit is GoalEstimator.fit
    X, y = make_jiang_simulated(200, random_state=0)
    with pytest.raises(TypeError, match="takes sensitive_features, sample_weight, X_val, y_val"):
        gf.BlackBoxPostShiftClassifier().fit(X, y, datasets={})
    with pytest.raises(ValueError, match="polyhedral"):
        gf.BlackBoxPostShiftClassifier("gmean", [gf.kl_quantification() <= 0.1]).fit(X, y)
    assert (PostShiftMethod().name, RelaxedFMMethod().name) == ("post_shift", "relaxed_fm")
    from goalfit.methods import lookup

    with pytest.raises(ValueError, match="unknown method 'relaxed_fm'"):
        lookup("relaxed_fm")  # a baseline is chosen by its estimator, not by a registry name
