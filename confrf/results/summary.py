"""Summary tables rendered as text, HTML and LaTeX (the machinery lives in :mod:`confrf._tables`)."""

from .._tables import WIDTH, Summary, _fmt, _latex_escape, frame_table, text_table, two_column_table

__all__ = ["WIDTH", "Summary", "_fmt", "_latex_escape", "frame_table", "text_table", "two_column_table"]
