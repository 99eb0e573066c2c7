"""Readable names of goals for reports: losses are named as losses ("1 - G-mean").

The goal vocabulary names metrics by what they measure (``"gmean"``, ``"f1"``); as objectives
they are minimized in their loss form (``1 - G-mean``, ``1 - F1``; :mod:`goalfit.goals.metrics`),
so a report that printed "minimize gmean" would read as minimizing the G-mean itself. The names
live with the goals (:func:`goalfit.goals.metrics.loss_label` and ``score_label``).
"""
from __future__ import annotations

from ..goals.metrics import loss_label, score_label

__all__ = ["display_name", "constraint_label", "objective_label", "score_label"]


def display_name(name: str) -> str:
    """The report's name of a goal: the loss form of named metrics, other names unchanged.

    ``"gmean"`` -> ``"1 - G-mean"``, ``"f1(group='F')"`` -> ``"1 - F1(group='F')"``,
    ``"precision_at_5_loss"`` -> ``"1 - precision@5"``; rate expressions and fairness
    disparities keep their full name (``"demographic_parity_difference('sex')"``).
    """
    return loss_label(name)


def constraint_label(entry: dict) -> str:
    """What a constraint row's value and bound measure: its ``label`` (``"F1"`` for
    ``f1() >= 0.7``, whose row holds F1 and the bound 0.7; :func:`goalfit.metrics.constraint_entry`),
    else (a report read from older JSON) :func:`display_name` of its expression."""
    return entry.get("label") or display_name(entry["expression"])


def objective_label(entry: dict) -> str:
    """What an objective entry's values measure (the minimized value): its ``loss_label``
    (``"1 - F1"``; :func:`goalfit.metrics.objective_entry`), else (a report read from older JSON)
    :func:`display_name` of its name."""
    return entry.get("loss_label", display_name(entry["name"]))
