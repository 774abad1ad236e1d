"""What every fitted result of the formula API shares: its parts, basic facts and multi-level frames."""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import pandas as pd

from .._formula_common import FitCall, FitRows
from .._levels import resolve_alpha, warns_level_once
from ..calibrators import Guarantee, PACReport
from ..exceptions import InputError
from ..formula import as_frame
from .report import short_text

#: columns of a regression predict frame that do not depend on alpha
_SHARED = ("fit", "group")


def _multi_alpha_frame(
    frames: list[pd.DataFrame],
    alphas: list[float],
    shared: tuple[str, ...] = _SHARED,
    suffixes: list[str] | None = None,
) -> pd.DataFrame:
    """One frame for several levels: ``shared`` columns once, then ``lwr_<alpha>``, ``upr_<alpha>``, ... per level.

    ``suffixes`` names the levels otherwise (the CLI: the level in percent, ``lwr_90``).
    """
    first = frames[0]
    parts = [first[[c for c in shared if c in first.columns]]]
    # repr: distinct levels, distinct names
    for suffix, f in zip([repr(a) for a in alphas] if suffixes is None else suffixes, frames):
        per = f[[c for c in f.columns if c not in shared]]
        parts.append(per.set_axis([f"{c}_{suffix}" for c in per.columns], axis=1))
    return pd.concat(parts, axis=1)


def _is_dask_collection(obj: Any) -> bool:
    # no dask import unless the object comes from dask
    return type(obj).__module__.split(".")[0] in ("dask", "dask_expr")


_Class = TypeVar("_Class", bound=type)


def own_methods(*mixins: type) -> Callable[[_Class], _Class]:
    """Class decorator: the public methods of ``mixins`` become the class's own attributes.

    The API pages list no inherited members, so a result's methods that live in its mixins (R's
    vocabulary, the distribution and localizer views, ``pac_report``, ``update``) are made its own;
    a method the class defines itself is kept.
    """

    def adopt(cls: _Class) -> _Class:
        for mixin in mixins:
            for name, value in vars(mixin).items():
                if inspect.isfunction(value) and not name.startswith("_") and name not in vars(cls):
                    setattr(cls, name, value)
        return cls

    return adopt


class ResultBase:
    """Parts and basic facts of a fitted result (:class:`confrf.ConformalResult`, ``ClassificationResult``).

    Subclasses give ``guarantee`` and ``_PAC_HINT`` (the methods that offer
    :meth:`pac_report`). Plain attributes only, so results pickle as they are.
    """

    #: fix named in the error of :meth:`pac_report` for a method without PAC calibration
    _PAC_HINT: str
    #: covariate shift: where the likelihood ratio comes from (:class:`confrf.shift.setup.ShiftSetup`), or None
    shift: Any = None

    if TYPE_CHECKING:  # each subclass says its own

        @property
        def guarantee(self) -> Guarantee: ...

    def __init__(
        self,
        *,
        design: Any,
        estimator: Any,
        options: dict[str, Any],
        nobs: dict[str, int],
        random_state: Any,
        fit_call: FitCall | None = None,
        rows: FitRows | None = None,
    ) -> None:
        self.design = design
        self.estimator = estimator
        self.options = options
        self.nobs = nobs
        self.random_state = random_state
        self.fit_call = fit_call  # the call, for update(); set by confrf.conformal
        self.fit_rows = rows  # where the training and calibration rows came from, for fitted() and augment()
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
        return self.estimator._alpha()

    @warns_level_once
    def pac_report(self, alpha: float | None = None, *, level: float | None = None) -> PACReport:
        """The training-conditional calibration: alpha, delta, epsilon, K, n2, a_hat, D2 coverage, guarantee.

        Only for ``method="qrf-tc"`` and methods fitted with ``guarantee="pac"``;
        ``alpha`` or R's ``level`` (1 - alpha) for another level than the fit's;
        returns a :class:`confrf.PACReport` (``.to_frame()`` for a DataFrame;
        ``.groups`` per group for the groupwise methods).
        """
        report = getattr(self.estimator.calibrator_, "pac_report", None)
        if report is None:
            raise InputError(f"method {self.method!r} has no training-conditional calibration; {self._PAC_HINT}")
        return report(resolve_alpha(alpha, level, self.alpha))

    def update(self, formula: str | None = None, **changes: Any) -> Any:
        """Refit with the same data and settings, changing the formula and any argument, as R's ``update``.

        Parameters
        ----------
        formula : str, optional
            The new formula, where ``.`` stands for the old side, as in R:
            ``". ~ . - x"`` drops the term ``x``, ``". ~ . + z"`` adds ``z``,
            ``". ~ . - 1"`` drops the intercept, ``"np.log(.) ~ ."`` transforms
            the response. A formula without ``.`` replaces the old one.
        **changes
            Any argument of :func:`confrf.conformal` (``method``, ``alpha``
            or ``level``, ``model``, ``data``, ``random_state``, options...).

        Returns
        -------
        ConformalResult or ClassificationResult
            A new fit; the old one is unchanged. The data are the objects
            given at fit (R's ``update`` re-evaluates the call too, so changes
            made to them since are seen; the result keeps references to them,
            as ``lm`` keeps its model frame, and a pickled result carries
            them). ``random_state`` is the fit's seed, so a seeded fit is
            reproduced exactly except for what changed.

        Examples
        --------
        >>> import confrf as cf
        >>> sim = cf.datasets.make_sim(600, random_state=0)
        >>> res = cf.split_cp("y ~ x1 + x2 + x3", data=sim.frame, random_state=0)
        >>> res.update(". ~ . - x3", level=0.8).formula
        'y ~ x1 + x2'
        """
        from ..formula.update import update_formula

        call = self.fit_call
        if call is None:
            raise InputError(
                "this result does not record the call that made it (it was not made by cf.conformal or one of its "
                "shortcuts), so it cannot be updated; call cf.conformal again."
            )
        new = self.formula
        if formula is not None:
            data = changes.get("data", call.kwargs.get("data"))  # "y ~ ." stands for the columns of the data used
            new = update_formula(self.formula, formula, None if data is None else as_frame(data, "data"))
        return call.replay(new, changes)

    def _for_prediction(self) -> ResultBase:
        """A shallow copy without the fit's data (what Dask workers need to predict, and no more)."""
        out = copy.copy(self)
        out.fit_call = out.fit_rows = None
        return out

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
