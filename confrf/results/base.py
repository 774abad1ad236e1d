"""What every fitted result of the formula API shares: its parts, basic facts and multi-level frames."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

from ..calibrators import Guarantee, PACReport
from ..exceptions import InputError
from .report import short_text

#: columns of a regression predict frame that do not depend on alpha
_SHARED = ("fit", "group")


def _multi_alpha_frame(
    frames: list[pd.DataFrame], alphas: list[float], shared: tuple[str, ...] = _SHARED
) -> pd.DataFrame:
    """One frame for several levels: ``shared`` columns once, then ``lwr_<alpha>``, ``upr_<alpha>``, ... per level."""
    first = frames[0]
    parts = [first[[c for c in shared if c in first.columns]]]
    for a, f in zip(alphas, frames):
        per = f[[c for c in f.columns if c not in shared]]
        parts.append(per.set_axis([f"{c}_{a!r}" for c in per.columns], axis=1))  # repr: distinct levels, distinct names
    return pd.concat(parts, axis=1)


def _is_dask_collection(obj: Any) -> bool:
    # no dask import unless the object comes from dask
    return type(obj).__module__.split(".")[0] in ("dask", "dask_expr")


class ResultBase:
    """Parts and basic facts of a fitted result (:class:`confrf.ConformalResult`, ``ClassificationResult``).

    Subclasses give ``guarantee`` and ``_PAC_HINT`` (the methods that offer
    :meth:`pac_report`). Plain attributes only, so results pickle as they are.
    """

    #: fix named in the error of :meth:`pac_report` for a method without PAC calibration
    _PAC_HINT: str

    if TYPE_CHECKING:  # each subclass says its own

        @property
        def guarantee(self) -> Guarantee: ...

    def __init__(
        self, *, design: Any, estimator: Any, options: dict[str, Any], nobs: dict[str, int], random_state: Any
    ) -> None:
        self.design = design
        self.estimator = estimator
        self.options = options
        self.nobs = nobs
        self.random_state = random_state
        self._last_predict: dict[str, Any] | None = None

    # -- basic facts -------------------------------------------------------
    @property
    def formula(self) -> str:
        return self.design.formula

    @property
    def method(self) -> str:
        return self.estimator.method

    @property
    def alpha(self) -> float:
        return float(self.estimator.alpha)

    def pac_report(self, alpha: float | None = None) -> PACReport:
        """The training-conditional calibration: alpha, delta, epsilon, K, n2, a_hat, D2 coverage, guarantee.

        Only for ``method="qrf-tc"`` and methods fitted with ``guarantee="pac"``;
        returns a :class:`confrf.PACReport` (``.to_frame()`` for a DataFrame;
        ``.groups`` per group for the groupwise methods).
        """
        report = getattr(self.estimator.calibrator_, "pac_report", None)
        if report is None:
            raise InputError(f"method {self.method!r} has no training-conditional calibration; {self._PAC_HINT}")
        return report(self.alpha if alpha is None else alpha)

    def _repr_extra(self) -> str:
        """Text between the formula and the part sizes in ``repr`` (e.g. the number of classes)."""
        return ""

    def __repr__(self) -> str:
        parts = ", ".join(f"{k}={v}" for k, v in self.nobs.items())
        g = self.guarantee
        return (
            f"<{type(self).__name__} {self.method} alpha={self.alpha:g}: {self.formula!r}; {self._repr_extra()}"
            f"{parts}; guarantee: {g.kind}{'' if g.certified else ' (not certified)'}>"
        )

    def __str__(self) -> str:
        return short_text(self)
