"""Held-out metrics of prediction intervals, on plain arrays.

Every function takes the response ``y`` and the bounds ``lwr``/``upr`` (or
what it needs of them) and follows the package's conventions: bounds may be
-inf/+inf, never NaN; an interval covers y when ``lwr <= y <= upr``.
:meth:`confrf.ConformalResult.evaluate` and :func:`confrf.compare` are built
on these functions.
"""

from ._adaptivity import fidelity_error, oracle_width_error, width_spearman
from ._coverage import clopper_pearson, coverage, coverage_table, covered
from ._slab import SlabCoverage, worst_slab_coverage
from ._widths import coverage_by_width, interval_width, quantiles, share_infinite, width_bins

__all__ = [
    "covered",
    "coverage",
    "clopper_pearson",
    "interval_width",
    "share_infinite",
    "quantiles",
    "coverage_table",
    "coverage_by_width",
    "width_bins",
    "fidelity_error",
    "oracle_width_error",
    "width_spearman",
    "worst_slab_coverage",
    "SlabCoverage",
]
