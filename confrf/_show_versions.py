"""``confrf.show_versions()``: what to paste into a bug report.

Like ``pandas.show_versions()`` and ``sklearn.show_versions()``: versions of
confrf, Python and every dependency, plus what only confrf knows, namely how
its compiled kernels were built (OpenMP on or off) and which thread settings
govern a fit (``n_jobs``, the OpenMP and BLAS pools threadpoolctl sees, the
environment variables that size them).
"""

from __future__ import annotations

import importlib.metadata
import inspect
import os
import platform
import sys
from typing import Any

#: the runtime dependencies (pyproject.toml's ``dependencies``; a test keeps the two lists equal)
REQUIRED = (
    "numpy",
    "scipy",
    "pandas",
    "formulaic",
    "statsmodels",
    "scikit-learn",
    "joblib",
    "tqdm",
    "threadpoolctl",
    "narwhals",
)
#: optional packages, and what confrf uses them for
OPTIONAL = {
    "igraph": 'groups="leiden"; extra "groups"',
    "matplotlib": 'result.plot; extra "plot"',
    "dask": 'predicting a Dask DataFrame; extra "dask"',
    "distributed": 'a Dask cluster; extra "dask"',
    "pyarrow": "Arrow-backed columns and frames",
    "polars": "polars frames as data",
}
#: build tools and the packaging around them
BUILD = ("pip", "setuptools", "Cython")
#: environment variables that size the OpenMP and BLAS thread pools
THREAD_VARIABLES = (
    "OMP_NUM_THREADS",
    "OMP_WAIT_POLICY",
    "OMP_PROC_BIND",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "BLIS_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
)


def _distribution_version(name: str) -> str | None:
    """The installed version of a distribution, or None; nothing is imported."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def _confrf_info() -> dict[str, Any]:
    from ._version import __version__

    installed = _distribution_version("confrf")
    return {
        "version": __version__,
        "path": os.path.dirname(os.path.abspath(__file__)),  # this module sits in the package's folder
        # a source tree imported ahead of an installed wheel shows up as two different versions here
        "installed distribution": installed if installed is not None else "none (source tree on the path)",
    }


def _system_info() -> dict[str, Any]:
    return {
        "python": sys.version.replace("\n", " "),
        "executable": sys.executable,
        "machine": platform.platform(),
    }


def _kernel_info() -> dict[str, Any]:
    from ._kernels import _forest

    info = dict(_forest.build_info())
    version = info.pop("openmp_version")
    return {
        "path": os.path.dirname(os.path.abspath(_forest.__file__)),
        "OpenMP": f"on (_OPENMP {version})" if info.pop("openmp") else "off: the kernels run on one thread",
        "OpenMP max threads": info.pop("openmp_max_threads"),
        "C compiler": info.pop("compiler"),
        "Cython used": info.pop("cython"),
        **info,
    }


def _thread_info() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    from ._parallel import resolve_jobs
    from .estimator import ConformalRegressor

    default = inspect.signature(ConformalRegressor).parameters["n_jobs"].default
    try:
        usable = len(os.sched_getaffinity(0))  # type: ignore[attr-defined, unused-ignore]
    except AttributeError:  # macOS and Windows have no sched_getaffinity
        usable = os.cpu_count() or 1
    settings: dict[str, Any] = {
        "n_jobs default": f"{default!r} ({resolve_jobs(default)} thread for joblib, OpenMP and BLAS)",
        "CPUs": f"{os.cpu_count()} ({usable} usable by this process)",
    }
    for name in THREAD_VARIABLES:
        if name in os.environ:
            settings[name] = os.environ[name]
    # the pools of the libraries loaded now: the kernels' and scikit-learn's OpenMP, numpy's and scipy's BLAS
    import scipy.linalg  # noqa: F401 - loads scipy's BLAS, which a fit uses through statsmodels
    from sklearn.ensemble import HistGradientBoostingRegressor  # noqa: F401 - loads scikit-learn's OpenMP
    from threadpoolctl import threadpool_info

    return settings, threadpool_info()


def _format(title: str, values: dict[str, Any]) -> list[str]:
    width = max((len(k) for k in values), default=0)
    return [f"{title}:", *(f"    {k:>{width}}: {v}" for k, v in values.items()), ""]


def show_versions() -> None:
    """Print confrf's, Python's and the dependencies' versions, the kernels' build and the thread settings.

    Paste its output into a bug report: results depend on these versions, the
    speed on the thread settings, and a kernel built without OpenMP runs on one
    thread whatever ``n_jobs`` says. Versions come from the installed
    distributions' metadata; "not installed" marks an optional package that is
    absent. The thread pools are those of the libraries loaded in this
    process, as ``threadpoolctl.threadpool_info()`` reports them (``n_jobs``
    limits them during every fit and prediction; outside one they keep their
    own size).

    Examples
    --------
    >>> import confrf as cf
    >>> cf.show_versions()  # doctest: +ELLIPSIS
    confrf:
        ...version: ...
    System:
    ...
    Compiled kernels:
    ...OpenMP: ...
    Threads:
    ...
    """
    lines = _format("confrf", _confrf_info())
    lines += _format("System", _system_info())
    lines += _format("Python dependencies", {name: _distribution_version(name) or "not installed" for name in REQUIRED})
    lines += _format(
        "Optional dependencies",
        {name: f"{_distribution_version(name) or 'not installed':<13} ({use})" for name, use in OPTIONAL.items()},
    )
    lines += _format(
        "Build tools (installed now)", {name: _distribution_version(name) or "not installed" for name in BUILD}
    )
    lines += _format("Compiled kernels", _kernel_info())
    settings, pools = _thread_info()
    lines += _format("Threads", settings)
    lines.append("Thread pools (threadpoolctl):")
    for pool in pools:
        lines += [f"    {k:>15}: {v}" for k, v in pool.items()]
        lines.append("")
    if not pools:
        lines += ["    none loaded", ""]
    print("\n".join(lines).rstrip())
