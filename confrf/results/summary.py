"""Summary tables rendered as text, HTML and LaTeX by statsmodels' machinery."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from statsmodels.iolib.summary import Summary as _SMSummary
from statsmodels.iolib.table import SimpleTable


def _fmt(v: Any) -> str:
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if isinstance(v, (float, np.floating)):
        if np.isinf(v):
            return "inf" if v > 0 else "-inf"
        return f"{v:.4g}"
    if v is None:
        return "-"
    return str(v)


def two_column_table(items: list[tuple[str, Any]], title: str | None = None) -> SimpleTable:
    """statsmodels-style header: key/value pairs laid out in two column pairs."""
    half = (len(items) + 1) // 2
    left, right = items[:half], items[half:]
    right = right + [("", "")] * (half - len(right))
    rows = [[f"{k}:" if k else "", _fmt(v) if k else "", f"{k2}:" if k2 else "", _fmt(v2) if k2 else ""]
            for (k, v), (k2, v2) in zip(left, right)]
    return SimpleTable(rows, title=title, txt_fmt={"data_aligns": "lrlr", "colsep": "   "})


def frame_table(df: pd.DataFrame, title: str | None = None) -> SimpleTable:
    """A DataFrame as a SimpleTable (index as the row stubs)."""
    data = [[_fmt(v) for v in row] for row in df.itertuples(index=False)]
    return SimpleTable(data, headers=[str(c) for c in df.columns], stubs=[str(i) for i in df.index], title=title)


class Summary(_SMSummary):
    """Printable report (text via ``print``, ``_repr_html_``, ``as_latex()``).

    Every number is also available tidily in :attr:`frames`, a dict of
    DataFrames keyed by section name.
    """

    def __init__(self) -> None:
        super().__init__()
        self.frames: dict[str, pd.DataFrame] = {}

    def add_section(self, name: str, table: SimpleTable, frame: pd.DataFrame) -> None:
        self.tables.append(table)
        self.frames[name] = frame
