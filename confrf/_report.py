"""What every report shares: one :meth:`Report.summary`, shown as text, HTML and LaTeX.

The reports (evaluations, comparisons, the PAC report, for regression and
classification alike) build a :class:`confrf._tables.Summary`; this base gives
each of them ``print`` (``__str__``), the notebook's ``_repr_html_`` and
``as_latex()`` from it, so a new report or a new format is written once.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from ._tables import Summary


class Report(ABC):
    """A printable report: ``print(report)``, its HTML in a notebook, ``report.as_latex()``."""

    @abstractmethod
    def summary(self) -> Summary:
        """The report's tables (``.frames`` holds their numbers)."""

    def __str__(self) -> str:
        return str(self.summary())

    def _repr_html_(self) -> str:
        return self.summary().as_html()

    def as_latex(self) -> str:
        """The report as LaTeX tabulars, one per table, each titled."""
        return self.summary().as_latex()
