"""confrf: adaptive conformal prediction intervals (LCP-RF and baselines).

Quick start::

    import confrf as cf
    fit = cf.lcp_rf("MedHouseVal ~ .", data=cf.datasets.load_california(), random_state=0)

The public names load on first use (PEP 562), so that ``import confrf`` and
the command line's ``confrf fit --help`` stay fast: scikit-learn, statsmodels
and the kernels are imported when a name that needs them is first touched.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._kernel_files import kernels_built, not_built_error
from ._version import __version__

if not kernels_built():  # a clone's source folder without compiled kernels: say so now, not at first use
    raise not_built_error() from None


#: public name -> the module that defines it (any submodule, cf.datasets or cf.exceptions, loads by its name)
_LAZY = {
    "conformal": "confrf.api",
    "lcp_rf": "confrf.api",
    "split_cp": "confrf.api",
    "qrf_tc": "confrf.api",
    "cv_plus": "confrf.api",
    "pac_epsilon": "confrf.calibrators",
    "pac_delta": "confrf.calibrators",
    "pac_n2": "confrf.calibrators",
    "PACReport": "confrf.calibrators",
    "lcp_threshold": "confrf.calibrators",
    "LCPThreshold": "confrf.calibrators",
    "ConformalResult": "confrf.results",
    "Summary": "confrf.results",
    "Evaluation": "confrf.results",
    "Comparison": "confrf.results",
    "compare": "confrf._compare",
    "ConformalRegressor": "confrf.estimator",
    "ConformalClassifier": "confrf.classification",
    "save_fit": "confrf.persist",
    "load_fit": "confrf.persist",
    "ConfrfError": "confrf.exceptions",
    "InputError": "confrf.exceptions",
    "FormulaError": "confrf.exceptions",
    "ArgumentTypeError": "confrf.exceptions",
    "NotFittedError": "confrf.exceptions",
    "show_versions": "confrf._show_versions",
}

if TYPE_CHECKING:  # what the names are, for type checkers and IDEs
    from . import dask, datasets, metrics, shift  # noqa: F401 - cf.dask, cf.shift: public, not in __all__
    from ._compare import compare
    from ._show_versions import show_versions
    from .api import conformal, cv_plus, lcp_rf, qrf_tc, split_cp
    from .calibrators import LCPThreshold, PACReport, lcp_threshold, pac_delta, pac_epsilon, pac_n2
    from .classification import ConformalClassifier
    from .estimator import ConformalRegressor
    from .exceptions import ArgumentTypeError, ConfrfError, FormulaError, InputError, NotFittedError
    from .persist import load_fit, save_fit
    from .results import Comparison, ConformalResult, Evaluation, Summary


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
    elif name.startswith("__"):  # __wrapped__, __test__, ...: asked by tools, never a submodule
        raise AttributeError(f"module 'confrf' has no attribute {name!r}")
    else:
        # any submodule, as when every one was imported at once: cf.datasets, cf.exceptions, cf.classification
        try:
            value = importlib.import_module(f"confrf.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"confrf.{name}":
                raise
            raise AttributeError(f"module 'confrf' has no attribute {name!r}") from None
    globals()[name] = value  # once loaded, an ordinary attribute
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | {"datasets", "metrics", "dask", "shift"})


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
    "save_fit",
    "load_fit",
    "ConfrfError",
    "InputError",
    "FormulaError",
    "ArgumentTypeError",
    "NotFittedError",
    "show_versions",
    "__version__",
]
