"""Data frames given to the formula layer: coercion and NaN/inf checks, per column."""

from __future__ import annotations

from collections.abc import Mapping, Set
from decimal import Decimal
from numbers import Real
from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import ArgumentTypeError, InputError
from .foreign import from_arrow, from_narwhals
from .messages import show


def as_frame(data: Any, what: str) -> pd.DataFrame:
    """``data`` as a pandas DataFrame with string column names, or an error naming `what`.

    Accepted: a DataFrame; a dict of equal-length arrays; a Series (one row,
    e.g. ``df.iloc[0]``); a polars, pyarrow, modin or cuDF frame (through
    narwhals, :mod:`confrf.formula.foreign`: every row, in order, dtypes
    kept); any other Arrow stream (``__arrow_c_stream__``) or frame of the
    dataframe interchange protocol (read by pyarrow); any object with a
    ``to_pandas()`` method. Non-string column names (``0``, ``1``) become
    strings, the names formulas use.
    """
    frame = _to_pandas(data, what)
    if not all(isinstance(c, str) for c in frame.columns):
        names = [str(c) for c in frame.columns]
        clash = sorted({n for n in names if names.count(n) > 1})
        if clash:
            raise InputError(f"{what} has columns whose names collide as strings: {clash}; rename them")
        frame = frame.set_axis(names, axis=1)
    return frame


def as_training_frame(data: Any, what: str) -> pd.DataFrame:
    """:func:`as_frame` for data that trains or calibrates: a Series is refused, not read as one row.

    ``df["price"]`` passed as ``data`` would otherwise become one row with a
    column per value, and the error would be about "1 row".
    """
    if isinstance(data, pd.Series):
        name = "column" if data.name is None else f"column {data.name!r}"
        raise ArgumentTypeError(
            f"{what} is a pandas Series ({name}, {len(data)} values); fitting and calibration need a DataFrame "
            f"with the response and the predictors: pass the whole frame (df, not df[...]), or {what}.to_frame()"
        )
    return as_frame(data, what)


def _to_pandas(data: Any, what: str) -> pd.DataFrame:
    if isinstance(data, pd.DataFrame):
        return data
    if isinstance(data, pd.Series):
        # one row (df.iloc[0]); infer_objects restores the column dtypes the transpose loses
        return data.to_frame().T.infer_objects()
    if isinstance(data, Mapping):
        data = dict(data)
        if data and all(np.ndim(v) == 0 for v in data.values()):
            data = {k: [v] for k, v in data.items()}  # {"x": 0.5, "g": "a"} is one row
        try:
            return pd.DataFrame(data)
        except (ValueError, TypeError) as exc:
            raise InputError(f"cannot turn the dict passed as {what} into a DataFrame: {exc}") from exc
    if isinstance(data, np.ndarray):
        raise ArgumentTypeError(
            f"{what} must be a pandas DataFrame, got a NumPy array, which has no column names for the "
            "formula to use: wrap it as pd.DataFrame(array, columns=[...])"
        )
    converted = from_narwhals(data, what)  # polars, pyarrow, modin, cuDF, ...: the library's own conversion
    if converted is not None:
        return converted
    converters = []
    if callable(getattr(data, "to_pandas", None)):  # an object that converts itself
        converters.append(data.to_pandas)
    converters.append(lambda: from_arrow(data))  # an Arrow stream or interchange-protocol frame, read by pyarrow
    failures = []
    for convert in converters:
        try:
            out = convert()
        except Exception as exc:  # noqa: BLE001 - any failure of a foreign library, reported below
            failures.append(f"{type(exc).__name__}: {exc}")
            continue
        if isinstance(out, pd.DataFrame):
            return out
    if failures:
        raise InputError(
            f"cannot convert {what} ({type(data).__module__}.{type(data).__name__}) to a pandas DataFrame: "
            f"{'; '.join(failures)}; convert it yourself, e.g. with .to_pandas()"
        )
    raise ArgumentTypeError(
        f"{what} must be a pandas DataFrame (or a dict of equal-length arrays, or a polars/pyarrow/... frame), "
        f"got {type(data).__module__}.{type(data).__name__}"
    )


#: NumPy dtype kinds (bool, int, uint, float) that prepare_columns leaves as they are
_PLAIN_KINDS = "biuf"
#: NumPy dtype kinds checked for NaN/inf as one float64 block (bool is never NaN/inf, and not checked for inf)
_BLOCK_KINDS = "iuf"

#: what pandas.api.types.infer_dtype calls an object column holding only numbers
_NUMBER_KINDS = ("integer", "floating", "mixed-integer-float", "decimal")
#: ... and one holding only dates or times (datetime.date, datetime.time, Timestamp, timedelta, Period)
_DATE_KINDS = ("date", "datetime", "datetime64", "time", "timedelta", "timedelta64", "period")


def prepare_columns(frame: pd.DataFrame, columns: list[str], what: str, bare: Set[str] = frozenset()) -> pd.DataFrame:
    """Check and convert the raw `columns` a formula reads, before formulaic sees them.

    * datetime and timedelta columns raise (also object columns of
      ``datetime.date`` or ``datetime.time`` values, as pyarrow's dates
      arrive): a formula needs numbers or categories, and the right encoding
      (days since, year, month) is the user's choice;
    * object columns whose values are all numbers (as after
      ``astype(object)`` or ``pd.concat`` of mixed frames) become float;
    * text in any string dtype (pandas' nullable ``"string"``, Arrow strings)
      becomes object, which formulaic reads as a factor (it would try to
      cast those dtypes to float);
    * object columns mixing numbers and strings raise, naming the strings
      (a stray "n/a" in a numeric column must not turn it into a factor);
    * a string column read as a factor with a distinct value in (almost)
      every row raises: every row would be its own level, which is never
      what a ``y ~ x`` means (R's read.csv would have made such a column
      numeric, or it is an identifier).  Only columns in `bare` (used as a
      term on their own, at fit) are checked: ``C(x)`` asks for a factor
      explicitly.
    """
    converted: dict[str, pd.Series] = {}
    dtypes = frame.dtypes
    for name in columns:
        dtype = dtypes[name]
        # plain NumPy numbers and booleans pass every check below unchanged: skip the per-column lookups
        if isinstance(dtype, np.dtype) and dtype.kind in _PLAIN_KINDS:
            continue
        col = frame[name]
        if (
            pd.api.types.is_datetime64_any_dtype(col)
            or pd.api.types.is_timedelta64_dtype(col)
            or isinstance(col.dtype, pd.PeriodDtype)
        ):
            raise InputError(
                f"column {name!r} of {what} holds dates or times (dtype {col.dtype}); formulas need numbers "
                "or categories: add a column such as (d - d.min()).dt.days, d.dt.year or d.dt.month "
                "(as C(month) for a factor) and use it instead"
            )
        kind = pd.api.types.infer_dtype(col, skipna=True) if col.dtype == object else None  # one pass, in C
        if kind in _DATE_KINDS:  # datetime.date objects (pyarrow's date32, SQL readers) and the like
            raise InputError(
                f"column {name!r} of {what} holds dates or times (Python {kind} objects); formulas need numbers "
                f"or categories: convert it with pd.to_datetime(df[{name!r}]) and add a column such as "
                "(d - d.min()).dt.days, d.dt.year or d.dt.month (as C(month) for a factor) to use instead"
            )
        if pd.api.types.is_complex_dtype(col) or kind == "complex":  # casting would drop the imaginary part
            raise InputError(
                f"column {name!r} of {what} holds complex numbers; formulas need real numbers: "
                "use its .real, .imag or abs() as columns"
            )
        if col.dtype != object and not pd.api.types.is_string_dtype(col):
            continue
        if col.dtype != object:
            # formulaic reads object text (and pandas 3's default "str") as a factor, but casts the nullable
            # "string" and Arrow string dtypes to float; as object they are one factor whatever the dtype
            col = converted[name] = col.astype(object).where(col.notna(), np.nan)
        kind = kind or pd.api.types.infer_dtype(col, skipna=True)
        if kind in ("mixed", "mixed-integer"):  # rare: find the numbers among the other values
            values = col.dropna()
            is_num = values.map(
                lambda v: isinstance(v, (Real, Decimal, np.number)) and not isinstance(v, (bool, np.bool_))
            ).astype(bool)
            if is_num.any() and not is_num.all():
                stray = list(pd.unique(values[~is_num.to_numpy()]))
                raise InputError(
                    f"column {name!r} of {what} mixes numbers and other values ({show(stray, 5)} in "
                    f"{int((~is_num).sum())} of {len(values)} rows); fix those entries, e.g. "
                    f"pd.to_numeric(df[{name!r}], errors='coerce') and then drop or impute the NaN rows, "
                    f"or make it categorical with df[{name!r}].astype(str)"
                )
            kind = "floating" if is_num.any() else kind
        if kind in _NUMBER_KINDS:
            # pd.NA and None become NaN (then reported as missing), not a TypeError of astype
            converted[name] = col.map(float, na_action="ignore").where(col.notna(), np.nan).astype(np.float64)
        elif name in bare:
            _refuse_one_level_per_row(col, name, what)
    if not converted:
        return frame
    return frame.assign(**converted)


def _refuse_one_level_per_row(col: pd.Series, name: str, what: str) -> None:
    """Raise for text with a distinct value in more than 90% of (at least 20) rows."""
    n, k = int(col.notna().sum()), int(col.nunique())
    if n >= 20 and k > 0.9 * n:
        looks = pd.to_numeric(col.dropna(), errors="coerce").notna().mean()
        fix = (
            f"it looks numeric: convert it with pd.to_numeric(df[{name!r}])"
            if looks > 0.9
            else "if it is an identifier, leave it out of the formula"
        )
        raise InputError(
            f"column {name!r} of {what} is text with {k} distinct values in {n} rows: as a factor almost "
            f"every row would be its own level; {fix}; to use it as a factor anyway write C({name})"
        )


def bad_mask(col: pd.Series) -> np.ndarray:
    """True where a raw value is missing, or infinite for numeric columns."""
    # pandas 3 (copy-on-write) hands out read-only arrays: never update in place.
    bad = col.isna().to_numpy(dtype=bool)
    if pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col):
        vals = col.to_numpy(dtype=np.float64, na_value=np.nan)
        bad = bad | ~np.isfinite(vals)
    return bad


class NumericBlock:
    """The NumPy-numeric columns of a frame as one float64 array (rows x columns), read once.

    Shared by the NaN/inf check and the design matrix, so the columns are
    converted once per call rather than once per use and per column.

    Attributes
    ----------
    names : list of str
        The block's columns, in the order asked for.
    dtypes : list of numpy.dtype
        Their dtypes before the cast to float64.
    values : numpy.ndarray
        Float64, shape ``(n_rows, len(names))``.
    position : dict
        Column name -> index into ``values``' columns.
    """

    def __init__(self, frame: pd.DataFrame, columns: list[str]) -> None:
        dtypes = frame.dtypes
        self.names: list[str] = []
        self.dtypes: list[np.dtype] = []
        for name in dict.fromkeys(columns):
            dtype = dtypes[name]
            if isinstance(dtype, np.dtype) and dtype.kind in _BLOCK_KINDS:
                self.names.append(name)
                self.dtypes.append(dtype)
        self.position = {name: j for j, name in enumerate(self.names)}
        if self.names:
            self.values = frame[self.names].to_numpy(dtype=np.float64)
        else:
            self.values = np.empty((len(frame), 0), dtype=np.float64)


def bad_rows(
    frame: pd.DataFrame, columns: list[str], block: NumericBlock | None = None
) -> tuple[np.ndarray, dict[str, int]]:
    """Rows with NaN/inf in any of `columns`, and the count per offending column.

    NumPy-numeric columns are checked together (``block``, built here if not
    given); the others one by one with :func:`bad_mask`. The counts are in
    the order of `columns`.
    """
    if block is None:
        block = NumericBlock(frame, columns)
    bad_block = ~np.isfinite(block.values)
    mask = bad_block.any(axis=1)
    counts = bad_block.sum(axis=0) if mask.any() else None
    per_col: dict[str, int] = {}
    for name in dict.fromkeys(columns):
        j = block.position.get(name)
        if j is not None:
            if counts is not None and counts[j]:
                per_col[name] = int(counts[j])
            continue
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
