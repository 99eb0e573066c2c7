"""Classifiers produced by the methods: deterministic plug-in rules and randomized mixtures."""
from .members import ConstantMember, FittedMember, PluginRule, ThresholdRule, plugin_predict
from .randomized import PluginClassifier, ProbabilityModel, RandomizedClassifier, class_labels, encode_labels

__all__ = ["ConstantMember", "FittedMember", "PluginClassifier", "PluginRule", "ProbabilityModel",
           "RandomizedClassifier", "ThresholdRule", "class_labels", "encode_labels", "plugin_predict"]
