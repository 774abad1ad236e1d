"""Covariate shift: where the likelihood ratio w(x) = dP_target(x) / dP_calibration(x) comes from.

A known ratio is read from the rows (:class:`RatioSource`: a column, an
expression or a callable); an estimated one comes from a probabilistic
classifier of target rows against calibration-population rows
(:class:`RatioEstimator`). The weighted calibration itself lives with the
calibrators (:mod:`confrf.calibrators.shift`); docs/theory.md, "Covariate
shift", derives it.
"""

from .ratio import RatioEstimator
from .source import RatioSource

__all__ = ["RatioEstimator", "RatioSource"]
