"""Plots of a classification result: set-size histogram and coverage by class."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..results.plots import _axes

if TYPE_CHECKING:  # pragma: no cover
    from .result import ClassificationResult


class ClassPlots:
    """``result.plot.set_sizes(data)`` and ``result.plot.coverage_by_class(test)``; each returns the Axes.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import confrf as cf
    >>> from sklearn.datasets import load_wine
    >>> df = load_wine(as_frame=True).frame.astype({"target": "category"})
    >>> res = cf.conformal("target ~ .", data=df, method="split", model="rf", random_state=0)
    >>> res.plot.set_sizes(df).get_xlabel()
    'set size'
    """

    def __init__(self, result: ClassificationResult) -> None:
        self.result = result

    def set_sizes(self, data: Any, *, ax: Any = None) -> Any:
        """Histogram of the set sizes on ``data`` (0 = empty set, K = full set)."""
        ax = _axes(ax)
        size = self.result.predict(data)["size"].to_numpy()
        K = len(self.result.levels)
        counts = np.bincount(size, minlength=K + 1)
        ax.bar(np.arange(K + 1), counts, color="tab:blue")
        ax.set_xticks(np.arange(K + 1))
        ax.set_xlabel("set size")
        ax.set_ylabel("rows")
        ax.set_title(f"{self.result.method}: mean set size {size.mean():.2f}")
        return ax

    def coverage_by_class(self, test: Any, *, ax: Any = None, level: float = 0.95) -> Any:
        """Coverage given the true class, with exact ``level`` CIs and the 1 - alpha target."""
        ax = _axes(ax)
        tab = self.result.evaluate(test, level=level).by_class
        x = np.arange(len(tab))
        cov = tab["coverage"].to_numpy()
        ax.errorbar(
            x,
            cov,
            yerr=[cov - tab["ci_lower"].to_numpy(), tab["ci_upper"].to_numpy() - cov],
            fmt="o",
            color="tab:blue",
            capsize=3,
        )
        ax.axhline(1 - self.result.alpha, color="tab:red", ls="--", label=f"target {1 - self.result.alpha:g}")
        ax.set_xticks(x)
        ax.set_xticklabels([str(c) for c in tab.index])
        ax.set_xlabel("true class")
        ax.set_ylabel("coverage")
        ax.set_title(f"{self.result.method}: coverage by class")
        ax.legend(loc="lower right", fontsize="small")
        return ax
