"""Data frames of other libraries (polars, pyarrow, modin, cuDF, ...) as pandas, through narwhals.

narwhals recognises the frame and hands it to the library's own conversion
(``to_pandas()``), which keeps every row, in order, with its dtype:
categoricals stay categoricals (a polars ``Enum`` and a pyarrow dictionary
keep their declared level order; a polars ``Categorical``, which polars
orders lexically, gets its levels sorted, as pandas' ``astype("category")``
and R's ``factor()`` would), strings stay text, booleans stay booleans,
missing values stay missing (a nullable integer column with nulls becomes
float with NaN, which the formula layer then reports), dates stay dates
(which the formula layer refuses with a fix). When that conversion needs
pyarrow and it is not installed (polars alone), the columns are converted
one by one with the same dtypes.

Objects narwhals does not know are read through the Arrow PyCapsule
interface (``__arrow_c_stream__``) or pyarrow's implementation of the
dataframe interchange protocol (pandas' own implementation is deprecated
since pandas 3), both with pyarrow.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ..exceptions import ArgumentTypeError, InputError


def _name(data: Any) -> str:
    return f"{type(data).__module__}.{type(data).__name__}"


def from_narwhals(data: Any, what: str) -> pd.DataFrame | None:
    """``data`` as pandas if narwhals knows its library (None otherwise, or without narwhals)."""
    try:
        import narwhals.stable.v2 as nw  # the API narwhals keeps stable for libraries
    except ImportError:  # pragma: no cover - a dependency; an environment may still lack it
        return None
    frame = nw.from_native(data, pass_through=True, allow_series=True)
    if frame is data:
        return None
    if isinstance(frame, nw.LazyFrame):
        raise ArgumentTypeError(
            f"{what} is a lazy frame ({_name(data)}): its rows are not computed yet; collect them first, "
            f"e.g. {what}.collect(), and pass the result"
        )
    if isinstance(frame, nw.Series):
        raise ArgumentTypeError(
            f"{what} is a single column ({_name(data)}); pass a data frame with the columns the formula uses "
            f"(e.g. {what}.to_frame())"
        )
    try:
        out = frame.to_pandas()
    except ImportError:  # polars without pyarrow: the same dtypes, column by column
        out = _columns_to_pandas(frame)
    if not isinstance(out, pd.DataFrame) or len(out) != len(frame):  # pragma: no cover - a library's bug
        raise InputError(f"converting {what} ({_name(data)}) to pandas did not keep its rows; convert it yourself")
    return _sorted_polars_categoricals(frame, out)


def _sorted_polars_categoricals(frame: Any, out: pd.DataFrame) -> pd.DataFrame:
    """polars orders a ``Categorical`` lexically, pandas by appearance after ``to_pandas()``: sort its levels."""
    import narwhals.stable.v2 as nw

    if frame.implementation is not nw.Implementation.POLARS:
        return out
    cats = [c for c, dtype in frame.schema.items() if dtype == nw.Categorical and not isinstance(dtype, nw.Enum)]
    if not cats:
        return out
    fixed = {c: out[c].cat.reorder_categories(sorted(out[c].cat.categories)) for c in cats}
    return out.assign(**fixed)


def _columns_to_pandas(frame: Any) -> pd.DataFrame:
    """Column by column, for a library whose ``to_pandas()`` needs pyarrow (polars)."""
    import narwhals.stable.v2 as nw

    columns: dict[str, Any] = {}
    for name, dtype in frame.schema.items():
        s = frame.get_column(name)
        if isinstance(dtype, nw.Enum) or dtype == nw.Categorical:
            values = s.cast(nw.String).to_numpy()
            levels = (
                list(dtype.categories)
                if isinstance(dtype, nw.Enum)
                else sorted(v for v in set(values) if v is not None)
            )
            # an Enum's levels are ordered, as polars' own conversion makes them
            columns[name] = pd.Categorical(values, categories=levels, ordered=isinstance(dtype, nw.Enum))
        else:
            # integers with nulls arrive as float with NaN, booleans with nulls as objects with None
            columns[name] = s.to_numpy()
    return pd.DataFrame(columns, index=pd.RangeIndex(len(frame)))


def from_arrow(data: Any) -> pd.DataFrame | None:
    """``data`` as pandas through pyarrow: Arrow PyCapsule stream, or pyarrow's dataframe interchange."""
    capsule = hasattr(data, "__arrow_c_stream__")
    interchange = hasattr(data, "__dataframe__")
    if not (capsule or interchange):
        return None
    try:
        import pyarrow as pa
    except ImportError:
        return None
    if capsule:
        table = pa.table(data)
    else:
        from pyarrow.interchange import from_dataframe

        table = from_dataframe(data)
    return table.to_pandas()
