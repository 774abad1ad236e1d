"""confrf: adaptive conformal prediction intervals (LCP-RF and baselines).

Quick start::

    import confrf as cf
    fit = cf.lcp_rf("MedHouseVal ~ .", data=cf.datasets.load_california(), random_state=0)
"""

from . import datasets
from .api import conformal, lcp_rf, split_cp
from .calibrators import LCPThreshold, lcp_threshold
from .estimator import ConformalRegressor
from .results import ConformalResult, Summary
from .exceptions import ConfrfError, FormulaError, InputError, NotFittedError

__version__ = "0.1.0"

__all__ = [
    "conformal",
    "lcp_rf",
    "split_cp",
    "ConformalResult",
    "Summary",
    "ConformalRegressor",
    "lcp_threshold",
    "LCPThreshold",
    "datasets",
    "ConfrfError",
    "InputError",
    "FormulaError",
    "NotFittedError",
    "__version__",
]
