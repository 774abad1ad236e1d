"""The response's own scale: its range (``support=``) and the way back from a transformed response.

``support=`` names the range of the response column: ``(lower, upper)``
(None for no bound) or one of :data:`SUPPORTS`. Interval bounds are clipped
to it. If the response always lies in S, the events {Y in C(x)} and
{Y in C(x) and S} are the same, so clipping never changes coverage; for
``"count"`` the bounds are also rounded inward to whole numbers, which keeps
exactly the same whole numbers. A formula whose left-hand side is a monotone
transform g of the column (``np.log(y) ~ x``) predicts on g's scale; with
``predict(..., scale="response")`` the interval is mapped back through g^-1
(see :mod:`confrf.formula.transforms`) and then clipped to the support.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import _is_number
from ..exceptions import InputError
from ..formula.transforms import ResponseTransform

#: names accepted by ``support=``: (lower, upper, lower end open, whole numbers only)
SUPPORTS: dict[str, tuple[float, float, bool, bool]] = {
    "nonnegative": (0.0, math.inf, False, False),
    "positive": (0.0, math.inf, True, False),
    "unit": (0.0, 1.0, False, False),
    "count": (0.0, math.inf, False, True),
}
SCALES = ("model", "response")


@dataclass(frozen=True)
class Support:
    """The range of the response column: [lower, upper] (lower open for "positive"), whole numbers for "count".

    Examples
    --------
    >>> s = Support.parse("count")
    >>> s.clip(np.array([-2.5]), np.array([7.8]))
    (array([0.]), array([7.]))
    """

    lower: float
    upper: float
    name: str | None = None
    lower_open: bool = False
    integer: bool = False

    @classmethod
    def parse(cls, value: Any) -> Support | None:
        if value is None:
            return None
        if isinstance(value, Support):
            return value
        if isinstance(value, str):
            if value not in SUPPORTS:
                raise InputError(
                    f"support={value!r} is not a known range; use one of {list(SUPPORTS)} or a pair (lower, upper) "
                    "with None for no bound, e.g. support=(0, None)."
                )
            lo, hi, lo_open, integer = SUPPORTS[value]
            return cls(lo, hi, value, lo_open, integer)
        if isinstance(value, (tuple, list)) and len(value) == 2:
            bounds = []
            for v, side, default in zip(value, ("lower", "upper"), (-math.inf, math.inf)):
                if v is None:
                    bounds.append(default)
                    continue
                if not _is_number(v) or math.isnan(float(v)):
                    raise InputError(f"support's {side} bound must be a number or None, got {v!r}.")
                bounds.append(float(v))
            if not bounds[0] < bounds[1]:
                raise InputError(f"support=(lower, upper) needs lower < upper, got {tuple(value)!r}.")
            if bounds == [-math.inf, math.inf]:
                return None
            return cls(bounds[0], bounds[1])
        raise InputError(
            f"support must be a pair (lower, upper) or one of {list(SUPPORTS)}, got {value!r} "
            f"({type(value).__name__}); e.g. support=(0, None) for a response that cannot be negative."
        )

    def describe(self) -> str:
        lo = "-inf" if self.lower == -math.inf else f"{self.lower:g}"
        hi = "inf" if self.upper == math.inf else f"{self.upper:g}"
        left = "(" if self.lower_open or self.lower == -math.inf else "["
        text = f"{left}{lo}, {hi}{')' if self.upper == math.inf else ']'}"
        if self.integer:
            text = "whole numbers in " + text
        return text + (f" ({self.name})" if self.name else "")

    def check(self, values: np.ndarray, name: str, what: str) -> None:
        """Refuse responses outside the support: clipping is only safe for a range the response respects."""
        v = np.asarray(values, dtype=np.float64)
        below = (v <= self.lower) if self.lower_open else (v < self.lower)
        bad = below | (v > self.upper)
        if self.integer:
            bad |= v != np.round(v)
        if bad.any():
            shown = ", ".join(f"{x:g}" for x in np.unique(v[bad])[:5])
            raise InputError(
                f"support={self.name or (self.lower, self.upper)!r} says {name!r} lies in {self.describe()}, but "
                f"{int(bad.sum())} row(s) of {what} do not (e.g. {shown}); clipping the intervals to a range the "
                "response leaves would lower their coverage. Give the response's true range, or no support."
            )

    def clip(self, lwr: np.ndarray, upr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """[max(lwr, lower), min(upr, upper)], whole-number bounds rounded inward for "count"."""
        lo = np.maximum(lwr, self.lower)
        hi = np.minimum(upr, self.upper)
        if self.integer:
            with np.errstate(invalid="ignore"):
                lo, hi = np.ceil(lo), np.floor(hi)
        return lo, hi


class ResponseScale:
    """What a result needs to put its predictions on the model's or the response's scale.

    Parameters
    ----------
    transform : ResponseTransform or str
        The response's monotone transform (identity for ``y ~ ...``), or why
        there is none (then ``scale="response"`` is refused with that reason).
    support : Support or None
        The response column's range.
    """

    def __init__(self, transform: ResponseTransform | str, support: Support | None) -> None:
        self.transform = transform
        self.support = support

    @property
    def invertible(self) -> bool:
        return isinstance(self.transform, ResponseTransform)

    @property
    def identity(self) -> bool:
        return isinstance(self.transform, ResponseTransform) and self.transform.is_identity

    def model_support(self) -> tuple[float, float] | None:
        """The support on the model's scale: g(support) for a monotone g, the support itself otherwise."""
        s = self.support
        if s is None:
            return None
        if isinstance(self.transform, ResponseTransform):
            return self.transform.image(s.lower, s.upper)
        return s.lower, s.upper

    def check_scale(self, scale: Any) -> str:
        if not isinstance(scale, str) or scale not in SCALES:
            raise InputError(
                f"scale must be 'model' (the scale of the formula's left-hand side, the default) or 'response' "
                f"(the response column's own scale), got {scale!r}."
            )
        if scale == "response" and not self.invertible:
            raise InputError(
                f"scale='response' is not available: {self.transform}. Predict on the model's scale "
                "(scale='model', the default) and transform the bounds yourself only if your transform is monotone."
            )
        return scale

    def points(self, fit: np.ndarray, scale: str) -> np.ndarray:
        """Point predictions on ``scale``, clipped to the support (the closest value the response can take)."""
        if scale == "response" and not self.identity:
            assert isinstance(self.transform, ResponseTransform)
            fit = self.transform.inverse(fit)
            bounds = None if self.support is None else (self.support.lower, self.support.upper)
        else:
            bounds = self.model_support()
        return fit if bounds is None else np.clip(fit, bounds[0], bounds[1])

    def intervals(self, lwr: np.ndarray, upr: np.ndarray, scale: str) -> tuple[np.ndarray, np.ndarray]:
        """Bounds on ``scale``: mapped back through g^-1 for "response", then clipped to the support."""
        on_response = scale == "response" or self.identity or not self.invertible
        model_lwr, model_upr = lwr, upr
        if scale == "response" and not self.identity:
            assert isinstance(self.transform, ResponseTransform)
            lwr, upr = self.transform.inverse_interval(lwr, upr)
        if self.support is None:
            return lwr, upr
        if not on_response:
            lo, hi = self.model_support()  # type: ignore[misc]
            return np.maximum(lwr, lo), np.minimum(upr, hi)
        lo, hi = self.support.clip(lwr, upr)
        if self.support.integer and scale == "response" and not self.identity:
            lo, hi = self._whole_ends(lo, hi, model_lwr, model_upr)
        return lo, hi

    def _whole_ends(
        self, lo: np.ndarray, hi: np.ndarray, l_m: np.ndarray, u_m: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Whole-number ends that hold exactly the whole numbers k with g(k) in [l_m, u_m].

        g^-1 is exact up to rounding; one step either way settles a bound
        that rounding put on the wrong side of a whole number.
        """
        assert isinstance(self.transform, ResponseTransform) and self.support is not None
        g = self.transform.forward

        def inside(k: np.ndarray) -> np.ndarray:
            v = g(k)
            return (v >= l_m) & (v <= u_m)

        s = self.support
        with np.errstate(invalid="ignore"):
            lo = np.where((lo - 1 >= s.lower) & inside(lo - 1), lo - 1, lo)
            lo = np.where((lo <= hi) & ~inside(lo), lo + 1, lo)
            hi = np.where((hi + 1 <= s.upper) & inside(hi + 1), hi + 1, hi)
            hi = np.where((lo <= hi) & ~inside(hi), hi - 1, hi)
        return lo, hi

    def apply(self, d: dict[str, np.ndarray], scale: str) -> dict[str, np.ndarray]:
        """A predict dict (fit, lwr, upr, ...) with fit, lwr and upr on ``scale``; the rest untouched."""
        if self.support is None and (scale == "model" or self.identity):
            return d
        out = dict(d)
        out["lwr"], out["upr"] = self.intervals(d["lwr"], d["upr"], scale)
        out["fit"] = self.points(d["fit"], scale)
        return out

    def describe(self) -> list[tuple[str, str]]:
        """Lines of the summary's "Response scale" section ([] when there is nothing to say)."""
        items = []
        if isinstance(self.transform, ResponseTransform) and not self.transform.is_identity:
            g = self.transform
            items.append(
                (
                    "Response",
                    f"{g.expression} is {'an increasing' if g.increasing else 'a decreasing'} transform of "
                    f"{g.variable!r}: predict(..., scale='response') maps the intervals back exactly",
                )
            )
        elif isinstance(self.transform, str):
            items.append(("Response", f"predict(..., scale='response') is not available: {self.transform}"))
        if self.support is not None:
            items.append(
                (
                    "Support",
                    f"{self.support.describe()}: interval bounds are clipped to it"
                    + (" and rounded inward to whole numbers" if self.support.integer else "")
                    + " (the coverage is unchanged: the response never lies outside it)",
                )
            )
        return items


def _raw_response(design: Any, frame: Any, positions: np.ndarray | None) -> np.ndarray | None:
    """The response column itself (before the left-hand side's transform) on the given rows."""
    import pandas as pd

    variables = list(design._response_variables)
    if len(variables) != 1:
        return None
    col = frame[variables[0]]
    if positions is not None:
        col = col.iloc[positions]
    return np.asarray(pd.to_numeric(col, errors="coerce"), dtype=np.float64)


def build_response_scale(
    design: Any, support: Any, parts: list[tuple[Any, np.ndarray | None, np.ndarray, str]]
) -> ResponseScale:
    """The response scale of a fit: its transform read from the formula, its support checked on every part.

    ``parts``: (frame, row positions or None for all, left-hand side values, name) of the
    training data and of ``calib=`` when given; the first one also checks
    the transform's reading numerically.
    """
    from ..formula.transforms import response_transform

    sup = Support.parse(support)
    bounds = None if sup is None else (sup.lower, sup.upper)
    transform = response_transform(design, bounds)
    if isinstance(transform, ResponseTransform) and not transform.is_identity:  # read again, checked on the data
        frame, pos, y_model, _ = parts[0]
        transform = response_transform(design, bounds, _raw_response(design, frame, pos), y_model)
    if sup is not None:
        for frame, pos, y_model, what in parts:
            if isinstance(transform, ResponseTransform) and not transform.is_identity:
                sup.check(_raw_response(design, frame, pos), transform.variable, what)  # type: ignore[arg-type]
            else:
                name = transform.variable if isinstance(transform, ResponseTransform) else design.response_name
                sup.check(y_model, name, what)
    return ResponseScale(transform, sup)


def add_response_scale(summary: Any, scale: ResponseScale) -> None:
    """The summary's "Response scale" section, when the response has a transform or a support."""
    import pandas as pd

    from .._tables import text_table

    items = scale.describe()
    if items:
        summary.add_section(
            "response_scale",
            text_table([f"{k}: {v}." for k, v in items], title="Response scale"),
            pd.DataFrame({"value": dict(items)}),
        )
