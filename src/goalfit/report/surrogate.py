"""Report of a fitted :class:`~goalfit.AdaptiveSurrogateClassifier` (Jiang et al., ICML 2020)."""
from __future__ import annotations

from .report import Report, _common, label_group_rates, label_sections, label_splits


def build_surrogate_report(model, X_train, y_train, *, sensitive_features_train=None, X_test=None, y_test=None,
                           sensitive_features_test=None, extra: dict | None = None) -> Report:
    """Report of a fitted :class:`~goalfit.AdaptiveSurrogateClassifier` on train (and test) data.

    The objective is the black-box metric (a loss) of :meth:`~goalfit.AdaptiveSurrogateClassifier.evaluate`,
    there are no constraints (the method has none). The baseline is the paper's required one,
    :class:`~goalfit.BlackBoxPostShiftClassifier`: logistic regression with one threshold tuned
    for the same metric on the training data. The history is the metric at each check of
    surrogate projected gradient descent (``metric_path_``: on the validation set when one was
    given, else on the training sample).

    Parameters and result as :func:`goalfit.report.report.build_subdata_report` (a fitted
    AdaptiveSurrogateClassifier; ``sensitive_features_*`` are the groups its metric reads).
    """
    import time

    from sklearn.utils.validation import check_is_fitted

    from ..estimators import BlackBoxPostShiftClassifier

    check_is_fitted(model, "theta_")
    t0 = time.perf_counter()
    baseline = BlackBoxPostShiftClassifier(model.metric).fit(X_train, y_train,
                                                            sensitive_features=sensitive_features_train)
    base_seconds = time.perf_counter() - t0
    splits = label_splits(X_train, y_train, sensitive_features_train, X_test, y_test, sensitive_features_test)
    data = label_sections(model, baseline, splits)
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
    return Report(data, label_group_rates(model, baseline, splits))
