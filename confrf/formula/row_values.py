"""Per-row values that an option reads from raw rows: a column, an expression over columns or a function.

``groups=`` (:class:`confrf.group_labels.GroupLabeler`), ``likelihood_ratio=`` and
``weights=`` (:class:`confrf.shift.RatioSource`) accept the same three forms; the
expression is evaluated the way formulaic evaluates a factor, so stateful
transforms keep the state learned on the first rows they saw.
"""

from __future__ import annotations

import difflib
import pickle
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from formulaic.transforms import TRANSFORMS
from formulaic.utils.layered_mapping import LayeredMapping
from formulaic.utils.stateful_transforms import stateful_eval

from ..exceptions import InputError


def evaluate_expression(expr: str, frame: pd.DataFrame, state: dict, *, option: str, what: str, fix: str) -> Any:
    """``expr`` evaluated on the columns of ``frame`` (``state``: the stateful transforms' state, updated in place).

    A name that is not a column raises InputError naming the closest columns,
    then ``fix``; any other failure of the user's expression raises InputError
    with its message.

    Examples
    --------
    >>> df = pd.DataFrame({"x1": [0.0, 1.0]})
    >>> evaluate_expression("x1 + 1", df, {}, option="groups", what="data", fix="").tolist()
    [1.0, 2.0]
    """
    env = LayeredMapping(frame, TRANSFORMS, {"np": np, "pd": pd})
    try:
        return stateful_eval(expr, env, None, state, None)
    except NameError as exc:
        missing = str(exc).split("'")[1] if "'" in str(exc) else str(exc)
        close = difflib.get_close_matches(missing, [str(c) for c in frame.columns], n=3)
        hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
        verb = "have" if what.endswith("rows") else "has"  # "the calibration rows have", "data has"
        raise InputError(f"{option}={expr!r}: {what} {verb} no column {missing!r}.{hint} {fix}") from None
    except Exception as exc:  # noqa: BLE001 - any failure of the user's expression
        raise InputError(f"cannot evaluate {option}={expr!r} on {what}: {exc}") from None


def refuse_unpicklable(spec: Any, message: Callable[[Exception], str]) -> None:
    """Raise PicklingError with ``message(exc)`` when ``spec`` is a function pickle cannot save (a lambda, a closure).

    pickle's own error names a lookup failure, not the option or the fix.
    """
    if not callable(spec):
        return
    try:
        pickle.dumps(spec)
    except Exception as exc:  # noqa: BLE001 - whatever pickle refuses
        raise pickle.PicklingError(message(exc)) from exc
