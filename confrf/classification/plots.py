"""Plots of a classification result: the diagnostic panel, set sizes, coverage by class or set size, alpha-tilde.

The method names are those of a regression result's ``.plot`` where they
make sense (``plot()``, ``coverage``, ``alpha_tilde``); ``intervals`` and
``widths`` belong to prediction intervals and raise an error naming the
call for prediction sets.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NoReturn

import numpy as np

from .._docstrings import fill
from .._levels import warns_level_once
from ..exceptions import InputError
from ..formula import as_frame
from ..results.plots import PlotsBase, _axes, _coverage, _coverage_points, _pyplot
from ..results.report import method_label

if TYPE_CHECKING:  # pragma: no cover
    from .result import ClassificationResult


@fill
class ClassPlots(PlotsBase):
    """``result.plot()`` (the panel), ``.set_sizes(data)``, ``.coverage(test)``, ``.alpha_tilde(data)``.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    {{wine_rf}}
    >>> res.plot.set_sizes(df).get_xlabel()
    'set size'
    """

    result: ClassificationResult

    @warns_level_once
    @fill
    def __call__(
        self,
        data: Any = None,
        *,
        alpha: float | None = None,
        level: float | None = None,
        conf_level: float = 0.95,
        figsize: tuple[float, float] = (10.0, 8.0),
    ) -> Any:
        """The diagnostic panel: set sizes, coverage by class, coverage by set size, alpha-tilde.

        ``data``: held-out rows with the true class; by default the fit's
        calibration rows, which set the thresholds (not a held-out check; the
        title says so). Returns the matplotlib Figure.

        Examples
        --------
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        {{wine_rf}}
        >>> len(res.plot().axes)
        4
        """
        a = self._alpha(alpha, level)
        res = self.result
        frame, where = self._panel_rows(data)
        fig, axes = _pyplot().subplots(2, 2, figsize=figsize)
        self.set_sizes(frame, alpha=a, ax=axes[0, 0])
        self.coverage(frame, by="class", alpha=a, ax=axes[0, 1], conf_level=conf_level)
        self.coverage(frame, by="set_size", alpha=a, ax=axes[1, 0], conf_level=conf_level)
        self.alpha_tilde(frame, alpha=a, ax=axes[1, 1])
        fig.suptitle(
            f"{method_label(res)}, {_coverage(a)} prediction sets: {res.formula}\non {where}", fontsize="medium"
        )
        fig.tight_layout()
        return fig

    @warns_level_once
    def set_sizes(self, data: Any, *, alpha: float | None = None, level: float | None = None, ax: Any = None) -> Any:
        """Histogram of the set sizes on ``data`` (0 = empty set, K = full set)."""
        a = self._alpha(alpha, level)
        ax = _axes(ax)
        size = self.result.predict(data, a)["size"].to_numpy()
        K = len(self.result.levels)
        counts = np.bincount(size, minlength=K + 1)
        ax.bar(np.arange(K + 1), counts, color="tab:blue")
        ax.set_xticks(np.arange(K + 1))
        ax.set_xlabel("set size")
        ax.set_ylabel("rows")
        ax.set_title(f"{method_label(self.result)}: mean set size {size.mean():.2f}")
        return ax

    @warns_level_once
    def coverage(
        self,
        test: Any,
        by: str = "class",
        *,
        alpha: float | None = None,
        level: float | None = None,
        ax: Any = None,
        conf_level: float = 0.95,
    ) -> Any:
        """Held-out coverage by true class (``by="class"``) or by set size (``by="set_size"``), with exact CIs.

        The classification counterpart of a regression result's coverage by
        width decile: the set size plays the width's part.
        """
        if by not in ("class", "set_size"):
            raise InputError(f"by must be 'class' or 'set_size' for prediction sets, got {by!r}.")
        a = self._alpha(alpha, level)
        ax = _axes(ax)
        ev = self.result.evaluate(test, alpha=a, conf_level=conf_level)
        tab = ev.by_class if by == "class" else ev.by_size[ev.by_size["n"] > 0]
        _coverage_points(ax, tab, a, "true class" if by == "class" else "set size")
        ax.set_title(f"{method_label(self.result)}: coverage by {'class' if by == 'class' else 'set size'}")
        ax.legend(loc="lower right", fontsize="small")
        return ax

    def coverage_by_class(self, test: Any, *, ax: Any = None, conf_level: float = 0.95) -> Any:
        """Coverage given the true class, with exact ``conf_level`` CIs and the 1 - alpha target."""
        return self.coverage(test, by="class", ax=ax, conf_level=conf_level)

    @warns_level_once
    def alpha_tilde(
        self, data: Any, *, alpha: float | None = None, level: float | None = None, ax: Any = None, bins: int = 30
    ) -> Any:
        """Histogram of alpha-tilde (the localizer's level at each threshold; per class for class-conditional sets)."""
        a = self._alpha(alpha, level)
        res = self.result
        frame = as_frame(data, "data")
        X = res.design.transform(frame)
        d = res.estimator.predict_details(X, a, progress=False, likelihood_ratio=res._ratios(frame, X))
        return self._level_histogram(_axes(ax), np.ravel(d["level"]), a, bins, "thresholds")

    def intervals(self, *args: Any, **kwargs: Any) -> NoReturn:
        """Not for prediction sets: the error names ``plot.set_sizes(data)`` and ``predict(data)``."""
        raise InputError(
            "a class-label response gets prediction sets, not intervals; plot.set_sizes(data) draws their sizes, "
            "plot.coverage(test) their coverage by class, and predict(data) lists the sets."
        )

    def widths(self, *args: Any, **kwargs: Any) -> NoReturn:
        """Not for prediction sets: the set size is the width's counterpart, ``plot.set_sizes(data)``."""
        raise InputError(
            "prediction sets have sizes, not widths: use plot.set_sizes(data) (and plot.coverage(test, "
            "by='set_size') for the coverage by size)."
        )
