"""The report of a fitted :class:`~goalfit.torch.LagrangianClassifier` (via
:func:`goalfit.report.build_report`)."""
from __future__ import annotations

from ..report.report import Report, _common, _evaluate, _group_rates, _section
from .estimator import _as_array


def build_lagrangian_report(model, X_train, y_train, *, sensitive_features_train=None, X_test=None, y_test=None,
                            sensitive_features_test=None, extra: dict | None = None,
                            confidence: float | None = None) -> Report:
    """Report of a :class:`~goalfit.torch.LagrangianClassifier`: the shrunk stochastic classifier
    next to TFCO's best deterministic iterate (the column named ``best iterate``), on train and
    test; the per-epoch history (objective and max violation of each epoch's last snapshot,
    multipliers) feeds ``convergence.png``.

    Parameters and return value as :func:`goalfit.report.build_report`; ``confidence`` adds
    intervals (:mod:`goalfit.metrics.intervals`) to the stochastic classifier's values and the
    per-group rates, not to the best iterate's.
    """
    data_sets = {"train": (_as_array(X_train), y_train, sensitive_features_train)}
    if X_test is not None:
        data_sets["test"] = (_as_array(X_test), y_test, sensitive_features_test)
    ours = {s: _evaluate(model, model.stochastic_classifier_, *v, confidence=confidence) for s, v in data_sets.items()}
    best = {s: _evaluate(model, model.best_iterate_classifier_, *v) for s, v in data_sets.items()}
    data = _section(ours)
    data["baseline"] = _section(best)
    data["baseline_name"] = "best iterate"
    data["timing"] = {"base_fit_seconds": None, "total_fit_seconds": model.fit_seconds_,
                      "train_seconds_per_epoch": [h["seconds"] for h in model.history_]}
    data["method"] = f"lagrangian ({model.formulation})"
    data["n_oracle_calls"] = int(model.n_epochs_)
    data["n_members"] = int(len(model.shrunk_index_))
    data["feasible_train"] = bool(model.feasible_)
    data["multipliers"] = model.multipliers_.tolist()
    data["confidence"] = confidence
    data["history_x_key"], data["history_x_name"] = "epoch", "epoch"
    data["note"] = ("values are expectations over the stochastic classifier (the shrinking LP's mixture of "
                    "at most m + 1 snapshots); 'best iterate' = TFCO's rank-based deterministic snapshot; "
                    "'oracle calls' = epochs")
    _common(data, model.history_, extra)
    split = "test" if X_test is not None else "train"
    Xs, ys, sfs = data_sets[split]
    predictors = {"goalfit": lambda X, sf: model.stochastic_classifier_.predict_proba(X),
                  "baseline": lambda X, sf: model.best_iterate_classifier_.predict_proba(X)}
    rates = _group_rates(model.classes_, predictors, Xs, ys, sfs, split, confidence) if sfs is not None else {}
    return Report(data, rates)
