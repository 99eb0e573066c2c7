"""Report of a fitted :class:`~goalfit.AdaptiveSurrogateClassifier` (Jiang et al., ICML 2020)."""
from __future__ import annotations

from .report import Report, _common, _group_rates, _section


def build_surrogate_report(model, X_train, y_train, *, sensitive_features_train=None, X_test=None, y_test=None,
                           sensitive_features_test=None, extra: dict | None = None) -> Report:
    """Report of a fitted :class:`~goalfit.AdaptiveSurrogateClassifier` on train (and test) data.

    The objective is the black-box metric (a loss) of :meth:`~goalfit.AdaptiveSurrogateClassifier.evaluate`,
    there are no constraints (the method has none). The baseline is the paper's required one,
    :class:`~goalfit.BlackBoxPostShiftClassifier`: logistic regression with one threshold tuned
    for the same metric on the training data. The history is the metric at each check of
    surrogate projected gradient descent (``metric_path_``: on the validation set when one was
    given, else on the training sample).

    Parameters
    ----------
    model : fitted AdaptiveSurrogateClassifier
    X_train, y_train, sensitive_features_train : the training data
    X_test, y_test, sensitive_features_test : optional held-out data
    extra : dict, optional

    Returns
    -------
    Report

    Raises
    ------
    sklearn.exceptions.NotFittedError
        If the model is not fitted.
    """
    import time

    from sklearn.utils.validation import check_is_fitted

    from ..estimators import BlackBoxPostShiftClassifier

    check_is_fitted(model, "theta_")
    t0 = time.perf_counter()
    baseline = BlackBoxPostShiftClassifier(model.metric).fit(X_train, y_train,
                                                            sensitive_features=sensitive_features_train)
    base_seconds = time.perf_counter() - t0
    data_sets = {"train": (X_train, y_train, sensitive_features_train)}
    if X_test is not None:
        data_sets["test"] = (X_test, y_test, sensitive_features_test)
    data = _section({s: model.evaluate(X, y, sensitive_features=sf) for s, (X, y, sf) in data_sets.items()})
    data["baseline"] = _section({s: baseline.evaluate(X, y, sensitive_features=sf)
                                 for s, (X, y, sf) in data_sets.items()})
    data["baseline_name"] = "post-shift"
    data["note"] = ("values on predicted labels; the metric is a loss (lower is better); post-shift = logistic "
                    "regression with one threshold tuned for the same metric (Jiang et al.'s baseline)")
    data["timing"] = {"base_fit_seconds": base_seconds, "total_fit_seconds": model.fit_seconds_,
                      "base_label": "the post-shift baseline's fit"}
    data["method"] = f"adaptive surrogates ({model.gradient}, Jiang et al. 2020)"
    data["n_oracle_calls"] = int(model.n_metric_calls_)
    data["n_members"] = 1
    data["feasible_train"] = True
    history = [{"oracle_calls": int(it), "objective": float(v), "max_violation": 0.0}
               for it, v in model.metric_path_]
    data["history_objective_name"] = f"{model.metric_.name} (checks of surrogate PGD)"
    _common(data, history, extra)
    split = "test" if X_test is not None else "train"
    Xs, ys, sfs = data_sets[split]
    predictors = {"goalfit": lambda X, sf: model.predict(X), "baseline": lambda X, sf: baseline.predict(X)}
    rates = _group_rates(model.classes_, predictors, Xs, ys, sfs, split) if sfs is not None else {}
    return Report(data, rates)
