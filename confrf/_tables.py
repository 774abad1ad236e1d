"""Printable reports: tables rendered as text, HTML and LaTeX by statsmodels' machinery.

Below every layer that prints a report (calibrators' PAC report, results,
classification), so each of them can lay out its tables the same way; numbers
go through the rule of :mod:`confrf._format`. :class:`confrf._report.Report`
gives every report its text, HTML and LaTeX from one :class:`Summary`.
"""

from __future__ import annotations

import re
import textwrap
from typing import Any

import pandas as pd
from statsmodels.iolib.summary import Summary as _SMSummary
from statsmodels.iolib.table import SimpleTable

from ._format import format_value

#: width of a printed summary, as statsmodels' (78 characters)
WIDTH = 78


#: the number rule of every report (confrf._format); the old private name stays for existing callers
_fmt = format_value


def two_column_table(items: list[tuple[str, Any]], title: str | None = None, width: int = WIDTH) -> SimpleTable:
    """statsmodels-style header: key/value pairs laid out in two column pairs, ``width`` wide."""
    half = (len(items) + 1) // 2
    left, right = items[:half], items[half:]
    right = right + [("", "")] * (half - len(right))
    rows = [
        [f"{k}:" if k else "", _fmt(v) if k else "", f"{k2}:" if k2 else "", _fmt(v2) if k2 else ""]
        for (k, v), (k2, v2) in zip(left, right)
    ]
    sep = 3
    total = width - 3 * sep
    need = [max([len(r[c]) for r in rows] + [1]) for c in range(4)]
    # balanced pairs when they fit, else the left pair takes what the right one leaves (or the table grows)
    left_w = min(max((total + 1) // 2, need[0] + need[1]), max(total - need[2] - need[3], need[0] + need[1]))
    widths = [need[0], left_w - need[0], need[2], max(need[3], total - left_w - need[2])]
    return SimpleTable(rows, title=title, txt_fmt={"data_aligns": "lrlr", "colsep": " " * sep, "colwidths": widths})


def text_table(lines: list[str], title: str | None = None, width: int = WIDTH) -> SimpleTable:
    """Running text (wrapped to ``width``) as a one-column table, so it renders in text, HTML and LaTeX."""
    wrapped: list[str] = []
    for line in lines:
        wrapped.extend(textwrap.wrap(line, width=width, subsequent_indent="  ") or [""])
    return SimpleTable(
        [[w] for w in wrapped], title=title, txt_fmt={"data_aligns": "l", "colwidths": [width], "colsep": ""}
    )


def frame_table(df: pd.DataFrame, title: str | None = None, aligns: str | None = None) -> SimpleTable:
    """A DataFrame as a SimpleTable (index as the row stubs); ``aligns``: one of "lcr" per column."""
    data = [[_fmt(v) for v in row] for row in df.itertuples(index=False)]
    fmt = {"txt_fmt": {"data_aligns": aligns}} if aligns else {}
    return SimpleTable(data, headers=[str(c) for c in df.columns], stubs=[str(i) for i in df.index], title=title, **fmt)


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\^{}",
}


def _latex_escape(s: str) -> str:
    return re.sub(r"[\\&%$#_{}~^]", lambda m: _LATEX_SPECIAL[m.group()], s)


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

    def as_latex(self) -> str:
        """Every table as its own tabular, its title in bold above it (statsmodels would merge them)."""
        parts = []
        for t in self.tables:
            if t.title:
                parts.append(r"\noindent\textbf{" + _latex_escape(str(t.title)) + "}")
            parts.append(t.as_latex_tabular())
        if self.extra_txt is not None:
            parts.append(_latex_escape(self.extra_txt).replace("\n", " \\newline\n "))
        return "\n".join(parts)
