"""The response (left-hand side): type checks and evaluation on held-out rows.

Every rule about what a response may be lives here, so that other response
types (e.g. classification labels) have one place to hook into.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from formulaic import ModelSpec
from formulaic.errors import FormulaicError

from ..exceptions import InputError
from .frame import bad_rows, prepare_columns
from .messages import clean, describe_bad, show
from .parse import evaluate


def check_numeric_response(col: pd.Series, name: str) -> None:
    """Raise unless the response column `name` is numeric."""
    if not pd.api.types.is_numeric_dtype(col):
        raise InputError(
            f"the response must be numeric; column {name!r} has dtype {col.dtype} (convert it, e.g. with pd.to_numeric)"
        )


def evaluate_response(
    lhs_spec: ModelSpec,
    frame: pd.DataFrame,
    variables: list[str],
    response_name: str,
    formula: str,
    what: str = "data",
) -> np.ndarray:
    """The fitted left-hand side evaluated on `frame`, float64 1-D; NaN/inf raise."""
    missing = [v for v in variables if v not in frame.columns]
    if missing:
        raise InputError(f"{what} lacks the response column(s) {show(missing)} of formula {formula!r}")
    frame = prepare_columns(frame[variables], variables, what)
    for name in variables:
        check_numeric_response(frame[name], name)
    bad, per_col = bad_rows(frame, variables)
    if bad.any():
        raise InputError(describe_bad(per_col, int(bad.sum()), "the response") + "; drop or impute these rows first")
    if len(frame) == 0:
        return np.empty(0, dtype=np.float64)
    try:
        y = evaluate(lhs_spec, frame).to_numpy(dtype=np.float64)
    except FormulaicError as exc:
        raise InputError(f"cannot evaluate the response {response_name!r} on {what}: {clean(exc)}") from None
    bad_y = ~np.isfinite(y).all(axis=1)
    if bad_y.any():
        raise InputError(
            f"the response {response_name!r} is NaN or inf in {int(bad_y.sum())} row(s); drop or fix these rows first"
        )
    return np.ascontiguousarray(y[:, 0])
