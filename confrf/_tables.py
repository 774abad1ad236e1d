"""Printable reports: tables rendered as text, HTML and LaTeX by statsmodels' machinery.

Below every layer that prints a report (calibrators' PAC report, results,
classification), so each of them can lay out its tables the same way; numbers
go through the rule of :mod:`confrf._format`. :class:`confrf._report.Report`
gives every report its text, HTML and LaTeX from one :class:`Summary`.
"""

from __future__ import annotations

import html
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
    if sum(need) > total:
        # a long key on one row and a long value on another: four aligned columns would run past the
        # width (and the rules above and below), so each pair becomes one cell, its value flush right
        return _paired_table(rows, title, width)
    # balanced pairs when they fit, else the left pair takes what the right one leaves
    left_w = min(max((total + 1) // 2, need[0] + need[1]), max(total - need[2] - need[3], need[0] + need[1]))
    widths = [need[0], left_w - need[0], need[2], max(need[3], total - left_w - need[2])]
    table = SimpleTable(rows, title=title, txt_fmt={"data_aligns": "lrlr", "colsep": " " * sep, "colwidths": widths})
    table.confrf_pairs = True  # keys left in HTML (table_html)
    return table


def _paired_table(rows: list[list[str]], title: str | None, width: int) -> SimpleTable:
    """Two cells a row, each "key:   value" filling its half; one pair a row when two do not fit."""
    sep = 3
    pairs = [[(r[0], r[1]), (r[2], r[3])] for r in rows]
    need = [max(len(k) + len(v) + 1 for k, v in (p[c] for p in pairs)) for c in (0, 1)]
    if sum(need) + sep > width:  # one pair a row, in the reading order of the two columns
        items = [p[0] for p in pairs] + [p[1] for p in pairs if p[1][0]]
        kw = max(len(k) for k, _ in items)
        return SimpleTable(
            [[k, v] for k, v in items],
            title=title,
            txt_fmt={"data_aligns": "lr", "colsep": " ", "colwidths": [kw, width - 1 - kw]},
        )
    left_w = max(need[0], (width - sep + 1) // 2)
    widths = [left_w, max(need[1], width - sep - left_w)]
    cells = [[k + v.rjust(w - len(k)) if k else "" for (k, v), w in zip(p, widths)] for p in pairs]
    table = SimpleTable(cells, title=title, txt_fmt={"data_aligns": "ll", "colsep": " " * sep, "colwidths": widths})
    return table


def text_table(lines: list[str], title: str | None = None, width: int = WIDTH) -> SimpleTable:
    """Running text (wrapped to ``width``) as a one-column table, so it renders in text, HTML and LaTeX."""
    wrapped: list[str] = []
    for line in lines:
        wrapped.extend(textwrap.wrap(line, width=width, subsequent_indent="  ") or [""])
    table = SimpleTable(
        [[w] for w in wrapped], title=title, txt_fmt={"data_aligns": "l", "colwidths": [width], "colsep": ""}
    )
    table.confrf_lines = list(lines)  # the unwrapped text: HTML renders it as paragraphs (Summary.as_html)
    return table


#: inline styles of the prose in HTML: a host's table CSS (nbconvert's right-aligned, striped cells) never reaches it
_NOTE_STYLE = "text-align: left; margin: 0.1em 0 0.1em 0; padding-left: 1.5em; text-indent: -1.5em;"
_NOTES_STYLE = "text-align: left; margin: 0.3em 0 0.6em 0; max-width: 52em; font-size: 0.95em;"
_TABLE_STYLE = "margin-left: 0; margin-right: auto;"
_CAPTION_STYLE = "text-align: left; font-weight: bold;"
_KEY_STYLE = "text-align: left;"
_TITLE_STYLE = "text-align: left; font-weight: bold; margin: 0.4em 0 0.2em 0;"


def table_html(table: SimpleTable) -> str:
    """A table's HTML, left-aligned with the prose around it, its title left and bold, the keys of pairs left."""
    out = table.as_html().replace(
        '<table class="simpletable">', f'<table class="simpletable" style="{_TABLE_STYLE}">', 1
    )
    out = out.replace("<caption>", f'<caption style="{_CAPTION_STYLE}">')
    if getattr(table, "confrf_pairs", False):  # "Method:" reads as a label, left-aligned (hosts align cells right)
        out = re.sub(r"<td>([^<]*:)</td>", rf'<td style="{_KEY_STYLE}">\1</td>', out)
    return out


def notes_html(lines: list[str], title: str | None = None) -> str:
    """Running text as HTML paragraphs, one per note, with inline styles (no table: no host table CSS applies)."""
    head = f'<div class="confrf-notes-title" style="{_TITLE_STYLE}">{html.escape(title)}</div>\n' if title else ""
    body = "\n".join(f'<p style="{_NOTE_STYLE}">{html.escape(line)}</p>' for line in lines)
    return f'{head}<div class="confrf-notes" style="{_NOTES_STYLE}">\n{body}\n</div>'


def frame_table(
    df: pd.DataFrame, title: str | None = None, aligns: str | None = None, colsep: str | None = None
) -> SimpleTable:
    """A DataFrame as a SimpleTable (index as the row stubs); ``aligns``: one of "lcr" per column.

    ``colsep``: the text between columns (statsmodels' one space unless given); wider where
    values with spaces would otherwise run into each other.
    """
    data = [[_fmt(v) for v in row] for row in df.itertuples(index=False)]
    txt = {"data_aligns": aligns} if aligns else {}
    txt.update({"colsep": colsep} if colsep is not None else {})
    fmt = {"txt_fmt": txt} if txt else {}
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

    def as_html(self) -> str:
        """The tables as HTML; running text (the notes) as paragraphs with their own inline styles.

        As table cells, a notebook's table CSS (nbconvert's templates right-align and stripe every
        row) would break the prose line by line.
        """
        parts = [
            notes_html(t.confrf_lines, t.title) if hasattr(t, "confrf_lines") else table_html(t) for t in self.tables
        ]
        if self.extra_txt is not None:
            parts.append(notes_html(self.extra_txt.split("\n")))
        return "\n".join(parts)

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
