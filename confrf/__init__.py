"""confrf: adaptive conformal prediction intervals (LCP-RF and baselines).

Quick start::

    import confrf as cf
    fit = cf.lcp_rf("MedHouseVal ~ .", data=cf.datasets.load_california(), random_state=0)
"""

from . import datasets, metrics
from .api import conformal, cv_plus, lcp_rf, qrf_tc, split_cp
from .calibrators import LCPThreshold, PACReport, lcp_threshold, pac_delta, pac_epsilon, pac_n2
from .classification import ConformalClassifier
from .estimator import ConformalRegressor
from .exceptions import ArgumentTypeError, ConfrfError, FormulaError, InputError, NotFittedError
from .results import Comparison, ConformalResult, Evaluation, Summary, compare

# isort: split
from . import dask  # noqa: F401 - cf.dask; after the results package, which it uses

__version__ = "0.1.0"

__all__ = [
    "conformal",
    "lcp_rf",
    "split_cp",
    "qrf_tc",
    "cv_plus",
    "pac_epsilon",
    "pac_delta",
    "pac_n2",
    "PACReport",
    "ConformalResult",
    "Summary",
    "Evaluation",
    "Comparison",
    "compare",
    "metrics",
    "ConformalRegressor",
    "ConformalClassifier",
    "lcp_threshold",
    "LCPThreshold",
    "datasets",
    "ConfrfError",
    "InputError",
    "FormulaError",
    "ArgumentTypeError",
    "NotFittedError",
    "__version__",
]
