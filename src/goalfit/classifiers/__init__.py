"""Classifiers produced by the methods: plug-in rules, randomized mixtures, rules on a score."""
from .members import (ConstantMember, FittedMember, GroupBlindRule, PluginRule, ThresholdRule,
                      group_blind_predict, plugin_predict)
from .scores import LinearScorer, ModelClassifier, ScoreClassifier
from .randomized import (GroupBlindClassifier, PluginClassifier, ProbabilityModel, RandomizedClassifier, class_labels,
                         encode_labels, probability_model)

__all__ = ["ConstantMember", "FittedMember", "GroupBlindClassifier", "GroupBlindRule", "LinearScorer",
           "ModelClassifier", "ScoreClassifier", "PluginClassifier", "PluginRule",
           "ProbabilityModel", "RandomizedClassifier", "ThresholdRule", "class_labels", "encode_labels",
           "group_blind_predict", "plugin_predict", "probability_model"]
