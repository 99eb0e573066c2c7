"""Readable names of goals for reports: losses are named as losses ("1 - G-mean").

The goal vocabulary names metrics by what they measure (``"gmean"``, ``"f1"``); as objectives
they are minimized in their loss form (``1 - G-mean``, ``1 - F1``; :mod:`goalfit.goals.metrics`),
so a report that printed "minimize gmean" would read as minimizing the G-mean itself.
"""
from __future__ import annotations

import re

# name (as Expression.name starts) -> loss form shown in reports
_LOSSES = {
    "error": "error rate",
    "balanced_error": "balanced error rate",
    "gmean": "1 - G-mean",
    "gmean_loss": "1 - G-mean",
    "hmean": "1 - H-mean",
    "qmean": "Q-mean loss",
    "minmax_recall": "1 - min recall",
    "f1": "1 - F1",
    "fbeta": "1 - F-beta",
    "micro_f1": "1 - micro-F1",
    "macro_f1": "1 - macro-F1",
    "macro_f1_over_groups": "1 - macro-F1 over groups",
    "macro_f1_over_groups_loss": "1 - macro-F1 over groups",
    "kl_quantification": "KL quantification loss",
    "prbep_loss": "1 - PRBEP",
}


def display_name(name: str) -> str:
    """The report's name of a goal: the loss form of named metrics, other names unchanged.

    ``"gmean"`` -> ``"1 - G-mean"``, ``"f1(group='F')"`` -> ``"1 - F1(group='F')"``,
    ``"precision_at_5_loss"`` -> ``"1 - precision@5"``; rate expressions and fairness
    disparities keep their full name (``"demographic_parity_difference('sex')"``).
    """
    m = re.fullmatch(r"([a-z0-9_]+)(\(.*\))?", name.strip())
    if not m:
        return name
    head, args = m.group(1), m.group(2) or ""
    if head in _LOSSES:
        return _LOSSES[head] + args
    k = re.fullmatch(r"precision_at_(\d+)_loss", head)
    if k:
        return f"1 - precision@{k.group(1)}" + args
    return name
