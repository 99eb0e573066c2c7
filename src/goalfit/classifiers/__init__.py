"""Classifiers produced by the methods: deterministic plug-in rules and randomized mixtures."""
from .members import (ConstantMember, FittedMember, GroupBlindRule, PluginRule, ThresholdRule,
                      group_blind_predict, plugin_predict)
from .randomized import (GroupBlindClassifier, PluginClassifier, ProbabilityModel, RandomizedClassifier, class_labels,
                         encode_labels, probability_model)

__all__ = ["ConstantMember", "FittedMember", "GroupBlindClassifier", "GroupBlindRule", "PluginClassifier", "PluginRule",
           "ProbabilityModel", "RandomizedClassifier", "ThresholdRule", "class_labels", "encode_labels",
           "group_blind_predict", "plugin_predict", "probability_model"]
