"""Plots of a classification result: the diagnostic panel, set sizes, coverage by class or set size, alpha-tilde.

The method names are those of a regression result's ``.plot`` where they
make sense (``plot()``, ``coverage``, ``alpha_tilde``); ``intervals`` and
``widths`` belong to prediction intervals and raise an error naming the
call for prediction sets.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NoReturn

import numpy as np

from .._levels import resolve_alpha, warns_level_once
from .._validation import check_alpha
from ..exceptions import InputError
from ..formula import as_frame
from ..results.plots import _axes, _coverage, _pyplot
from ..results.report import method_label

if TYPE_CHECKING:  # pragma: no cover
    from .result import ClassificationResult


class ClassPlots:
    """``result.plot()`` (the panel), ``.set_sizes(data)``, ``.coverage(test)``, ``.alpha_tilde(data)``.

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

    def _alpha(self, alpha: Any, level: Any) -> float:
        return check_alpha(resolve_alpha(alpha, level, self.result.alpha))

    @warns_level_once
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
        >>> import confrf as cf
        >>> from sklearn.datasets import load_wine
        >>> df = load_wine(as_frame=True).frame.astype({"target": "category"})
        >>> res = cf.conformal("target ~ .", data=df, method="split", model="rf", random_state=0)
        >>> len(res.plot().axes)
        4
        """
        from ..results.rstyle import fit_frames

        a = self._alpha(alpha, level)
        res = self.result
        if data is None:
            frame = fit_frames(res, "calibration")[0][0]
            where = f"the {len(frame)} calibration rows (they set the thresholds: not a held-out check)"
        else:
            frame = data
            where = f"{len(frame)} held-out rows"
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
        x = np.arange(len(tab))
        cov = tab["coverage"].to_numpy(dtype=float)
        ax.errorbar(
            x,
            cov,
            yerr=[cov - tab["ci_lower"].to_numpy(dtype=float), tab["ci_upper"].to_numpy(dtype=float) - cov],
            fmt="o",
            color="tab:blue",
            capsize=3,
        )
        ax.axhline(1 - a, color="tab:red", ls="--", label=f"target {_coverage(a)}")
        ax.set_xticks(x)
        ax.set_xticklabels([str(c) for c in tab.index])
        ax.set_xlabel("true class" if by == "class" else "set size")
        ax.set_ylabel("coverage")
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
        ax = _axes(ax)
        res = self.result
        frame = as_frame(data, "data")
        X = res.design.transform(frame)
        d = res.estimator.predict_details(X, a, progress=False, likelihood_ratio=res._ratios(frame, X))
        ax.hist(np.ravel(d["level"]), bins=bins, color="tab:green", alpha=0.8)
        ax.axvline(1 - a, color="tab:red", ls="--", lw=1, label=f"1 - alpha = {_coverage(a)}")
        ax.set_xlabel("LCP level alpha-tilde (coverage side, near 1 - alpha)")
        ax.set_ylabel("thresholds")
        ax.set_title(f"{method_label(res)}: alpha-tilde")
        ax.legend(loc="best", fontsize="small")
        return ax

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
