"""Localizers: the weights w(x, X_j) that make a conformal calibration local."""

from .forest import ForestLocalizer, auto_min_samples_leaf
from .kernel import KernelLocalizer, NadarayaWatsonLocalizer

__all__ = ["ForestLocalizer", "auto_min_samples_leaf", "KernelLocalizer", "NadarayaWatsonLocalizer"]
