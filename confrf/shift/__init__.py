"""Covariate shift: the likelihood ratio w(x) = dP_target(x) / dP_calibration(x), and what weights by it.

Where the ratio comes from: a known ratio read from the rows
(:class:`RatioSource`: a column, an expression or a callable), or an estimated
one from a probabilistic classifier of target rows against
calibration-population rows (:class:`RatioEstimator`). Either way it is read
and checked once, where it enters, into a :class:`ShiftRatio`, the value the
estimators and calibrators carry at calibration and at prediction (apart from
group labels).

Modules: ``value`` (:class:`ShiftRatio` and the entries that read one),
``weighted`` (the weighted conformal rule the calibrators share: the conformal
points' weights, the requirement and its tolerance, weighted split conformal),
``guarantee`` (the coverage statement under shift), ``source`` and ``ratio``
(known and estimated ratios), ``setup`` (the formula API's options),
``section`` (the summary's "Covariate shift" section). docs/theory.md,
"Covariate shift", derives the rule.

This package sits below ``localizers/`` and ``calibrators/`` in the import
layering (both import the rule from it) and imports neither. Two pieces stay
with them for that reason: ``localizers/weighted.py`` lays the weights out in
the forest's leaf index, and each calibrator's weighted branch is its own.
"""

from .ratio import RatioEstimator
from .source import RatioSource
from .value import ShiftRatio

__all__ = ["RatioEstimator", "RatioSource", "ShiftRatio"]
