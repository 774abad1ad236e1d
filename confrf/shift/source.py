"""A known likelihood ratio (or case weights) read from the rows: a column, an expression or a callable."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import InputError
from ..formula.row_values import evaluate_expression, refuse_unpicklable
from .value import ShiftRatio


class RatioSource:
    """Reads one non-negative number per row from raw data.

    Parameters
    ----------
    spec : str or callable
        A column name (``"w"``), an expression over columns
        (``"np.exp(0.5 * x1)"``, evaluated as formulaic evaluates a term), or
        ``f(frame) -> numbers`` (a module-level function if the result must
        pickle).
    name : str
        The option it comes from (``"likelihood_ratio"`` or ``"weights"``), for messages.

    Examples
    --------
    >>> import pandas as pd
    >>> from confrf.shift import RatioSource
    >>> df = pd.DataFrame({"x1": [0.0, 1.0], "w": [1.0, 2.5]})
    >>> RatioSource("w")(df).tolist()
    [1.0, 2.5]
    >>> RatioSource("np.exp(x1)")(df).round(3).tolist()
    [1.0, 2.718]
    """

    def __init__(self, spec: str | Callable[[pd.DataFrame], Any], name: str = "likelihood_ratio") -> None:
        if not (isinstance(spec, str) or callable(spec)):
            raise InputError(
                f"{name} must be a column name, an expression over columns (e.g. 'np.exp(0.5 * x1)') or a "
                f"function of the data frame; got {type(spec).__name__}."
            )
        self.spec = spec
        self.name = name
        self._state: dict = {}
        self._is_column = False

    def __repr__(self) -> str:
        return f"RatioSource({self.spec!r})"

    @property
    def label(self) -> str:
        return self.spec if isinstance(self.spec, str) else getattr(self.spec, "__name__", "callable")

    def describe(self) -> str:
        if callable(self.spec):
            return f"function {self.label}() of the rows"
        return f"column {self.spec!r}" if self._is_column else f"expression {self.spec!r}"

    def __getstate__(self) -> dict[str, Any]:
        refuse_unpicklable(
            self.spec,
            lambda exc: (
                f"{self.name}={self.label!r} is a function that pickle cannot save ({exc}); the fitted result "
                "needs it for new rows. Define it with def at the top level of a module, or give a column name "
                "or an expression over columns."
            ),
        )
        return self.__dict__

    def __call__(self, frame: Any, what: str = "data", allow_all_zero: bool = False) -> np.ndarray:
        """One checked number per row of ``frame``: :meth:`read`'s values."""
        return self.read(frame, what, allow_all_zero).values

    def read(self, frame: Any, what: str = "data", allow_all_zero: bool = False) -> ShiftRatio:
        """One checked number per row of ``frame``, as the :class:`ShiftRatio` the estimators carry."""
        if isinstance(frame, dict):
            frame = pd.DataFrame(frame)
        if not isinstance(frame, pd.DataFrame):
            raise InputError(f"{what} must be a pandas DataFrame, got {type(frame).__name__}.")
        self._is_column = isinstance(self.spec, str) and self.spec in frame.columns
        if callable(self.spec):
            try:
                values = self.spec(frame)
            except Exception as exc:  # noqa: BLE001 - any failure of the user's function
                raise InputError(f"{self.name}={self.label!r} failed on {what}: {exc}") from None
        elif self._is_column:
            values = frame[self.spec]
        else:
            values = self._evaluate(frame, what)
        values = np.asarray(values, dtype=object if np.ndim(values) else None)
        if values.ndim == 0:
            values = np.full(len(frame), values.item())
        try:
            values = values.astype(np.float64)
        except (TypeError, ValueError):
            raise InputError(
                f"{self.name}={self.label!r} of {what} must be numbers; it holds {values[:3].tolist()} ..."
            ) from None
        return ShiftRatio.read(
            values, len(frame), f"{what} ({self.label!r})", name=self.name, allow_all_zero=allow_all_zero
        )

    def _evaluate(self, frame: pd.DataFrame, what: str) -> Any:
        assert isinstance(self.spec, str)  # __call__ handles a callable itself
        rows = what if what.endswith("rows") else f"every row of {what}"  # not "every row of the calibration rows"
        fix = (
            f"The ratio must be computable for {rows}: add the column, or give an expression or a function of "
            "columns it has."
        )
        return evaluate_expression(self.spec, frame, self._state, option=self.name, what=what, fix=fix)
