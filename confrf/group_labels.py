"""User-given groups in the formula API: each row's label from a column, a term or a callable.

``groups="region"`` reads a raw column (it need not appear in the formula);
``groups="C(region)"`` or ``groups="np.round(x1)"`` evaluates an expression on
the columns the way formulaic evaluates a factor (stateful transforms keep the
state learned on the calibration rows); a callable is called on the raw
DataFrame rows and returns one label per row. The labels go to the
array-level estimator as ``groups=`` (method option ``groups="labels"``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from .calibrators.groupwise import check_group_labels
from .exceptions import InputError
from .formula.row_values import evaluate_expression, refuse_unpicklable
from .localizers.graph import GRAPH_GROUPINGS


class GroupLabeler:
    """Reads every row's group from raw data.

    Parameters
    ----------
    spec : str or callable
        A column name, an expression over columns (``"C(cut)"``,
        ``"np.round(x1)"``), or ``f(frame) -> labels`` (use a module-level
        function if the fitted result must pickle).

    Examples
    --------
    >>> import pandas as pd
    >>> from confrf.group_labels import GroupLabeler
    >>> df = pd.DataFrame({"x1": [0.2, 0.7], "region": ["north", "south"]})
    >>> GroupLabeler("region")(df).tolist()
    ['north', 'south']
    >>> GroupLabeler("x1 > 0.5")(df).tolist()
    [False, True]
    """

    def __init__(self, spec: str | Callable[[pd.DataFrame], Any]) -> None:
        if not (isinstance(spec, str) or callable(spec)):
            raise InputError(
                f"groups must be 'leiden', 'components', a column name, a formula term or a callable; "
                f"got {type(spec).__name__}."
            )
        self.spec = spec
        self._state: dict = {}

    def __repr__(self) -> str:
        return f"GroupLabeler({self.spec!r})"

    def __getstate__(self) -> dict[str, Any]:
        refuse_unpicklable(
            self.spec,
            lambda exc: (
                f"groups={self.name!r} is a function that pickle cannot save ({exc}); the fitted result needs "
                "it to label new rows. Define it with def at the top level of a module, or give groups as a "
                "column name or an expression over columns (e.g. groups='C(region)')."
            ),
        )
        return self.__dict__

    @property
    def name(self) -> str:
        return self.spec if isinstance(self.spec, str) else getattr(self.spec, "__name__", "callable")

    def __call__(self, frame: Any, what: str = "data") -> np.ndarray:
        """One label per row of ``frame`` (object array); missing labels raise."""
        if isinstance(frame, dict):
            frame = pd.DataFrame(frame)
        if not isinstance(frame, pd.DataFrame):
            raise TypeError(f"{what} must be a pandas DataFrame, got {type(frame).__name__}.")
        if callable(self.spec):
            values = self.spec(frame)
        elif self.spec in frame.columns:
            values = frame[self.spec]
        else:
            values = self._evaluate(frame, what)
        if isinstance(values, pd.Series) and isinstance(values.dtype, pd.CategoricalDtype):
            values = values.astype(object)
        return check_group_labels(values, len(frame), what=f"the groups {self.name!r} of {what}")

    def _evaluate(self, frame: pd.DataFrame, what: str) -> Any:
        assert isinstance(self.spec, str)  # __call__ handles a callable itself
        fix = (
            f"groups takes {' or '.join(map(repr, GRAPH_GROUPINGS))}, a column name, an expression over columns, "
            "or a callable."
        )
        out = evaluate_expression(self.spec, frame, self._state, option="groups", what=what, fix=fix)
        if np.ndim(out) == 0:
            out = np.full(len(frame), out, dtype=object)
        return out


def split_group_option(method_opts: dict[str, Any]) -> tuple[GroupLabeler | None, dict[str, Any]]:
    """A labeler for user-given groups and the options the estimator sees (``groups="labels"``)."""
    spec = method_opts.get("groups")
    if spec is None or (isinstance(spec, str) and spec in GRAPH_GROUPINGS):
        return None, method_opts
    return GroupLabeler(spec), {**method_opts, "groups": "labels"}


def kept_positions(data: pd.DataFrame, kept: pd.Index) -> np.ndarray:
    """Positions in ``data`` of the rows the formula kept (all of them unless na_action="drop")."""
    if len(kept) == len(data):
        return np.arange(len(data))
    if not data.index.is_unique:
        raise InputError(
            "na_action='drop' with user groups needs a unique index on data; call data.reset_index() first."
        )
    return data.index.get_indexer(kept)
