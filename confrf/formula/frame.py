"""Data frames given to the formula layer: coercion and NaN/inf checks, per column."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import InputError


def as_frame(data: Any, what: str) -> pd.DataFrame:
    """Accept a DataFrame or a dict of arrays; anything else is a TypeError."""
    if isinstance(data, pd.DataFrame):
        return data
    if isinstance(data, Mapping):
        try:
            return pd.DataFrame(dict(data))
        except (ValueError, TypeError) as exc:
            raise InputError(
                f"cannot turn the dict passed as {what} into a DataFrame: {exc}"
            ) from exc
    raise TypeError(
        f"{what} must be a pandas DataFrame (or a dict of equal-length arrays), "
        f"got {type(data).__name__}"
    )


def bad_mask(col: pd.Series) -> np.ndarray:
    """True where a raw value is missing, or infinite for numeric columns."""
    # pandas 3 (copy-on-write) hands out read-only arrays: never update in place.
    bad = col.isna().to_numpy(dtype=bool)
    if pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col):
        vals = col.to_numpy(dtype=np.float64, na_value=np.nan)
        bad = bad | ~np.isfinite(vals)
    return bad


def bad_rows(frame: pd.DataFrame, columns: list[str]) -> tuple[np.ndarray, dict[str, int]]:
    """Rows with NaN/inf in any of `columns`, and the count per offending column."""
    mask = np.zeros(len(frame), dtype=bool)
    per_col: dict[str, int] = {}
    for name in columns:
        bad = bad_mask(frame[name])
        if bad.any():
            per_col[name] = int(bad.sum())
            mask |= bad
    return mask, per_col


def drop_unused_categories(frame: pd.DataFrame) -> pd.DataFrame:
    """Remove unused categories of pandas ``category`` columns.

    At fit, an unused category would become an all-zero design column that
    new rows could then silently use; at transform, pandas 3 warns (and will
    raise) when formulaic recodes a categorical that has extra categories.
    """
    cats = [c for c in frame.columns if isinstance(frame[c].dtype, pd.CategoricalDtype)]
    if not cats:
        return frame
    frame = frame.copy()
    for c in cats:
        frame[c] = frame[c].cat.remove_unused_categories()
    return frame

