"""Groups of the groupwise calibrators: user labels checked, units (regions or labels) kept or merged.

:class:`Grouping` is the final partition that SPLIT-G and LCP-RF-G
(calibrators/groupwise.py) learn on the localizer part: every unit, a region
of the forest's weight graph or a label value, keeps its own group or is
pooled into ``REST``; the same rule then maps conformal and test points.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import InputError
from ..localizers.regions import UNDECIDABLE, WeightRegions

#: name of the group that pools undecidable points (weight ties) and merged small groups
REST = "(rest)"


def check_group_labels(labels: Any, n: int, what: str = "groups") -> np.ndarray:
    """One hashable, non-missing label per row, as an object array."""
    arr = np.asarray(labels, dtype=object)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1 or arr.shape[0] != n:
        raise InputError(f"{what} must give one label per row: expected {n}, got shape {np.shape(labels)}.")
    missing = pd.isna(pd.Series(arr, dtype=object)).to_numpy()
    if missing.any():
        raise InputError(
            f"{what} has {int(missing.sum())} missing (NaN/None) label(s) of {n}; give every row a "
            "group, e.g. fill them with their own level such as 'missing'."
        )
    return arr


def _label_index(labels: np.ndarray) -> pd.Index:
    uniq = pd.Index(pd.unique(pd.Series(labels, dtype=object)), dtype=object)
    try:
        return uniq.sort_values()
    except TypeError:  # labels of mixed types: keep the order of first appearance
        return uniq


def units_to_keep(expected: np.ndarray, expected_undecidable: float, merge: float, *, has_rest: bool) -> np.ndarray:
    """Which units stay groups: those expected to hold at least ``merge`` points, and enough of them for REST.

    Units below ``merge`` are pooled into ``REST`` (``has_rest``: REST exists
    even without them, for undecidable points). When REST would then be
    expected to hold some points but fewer than ``merge`` (its intervals
    would be infinite), the smallest kept units join it, one by one, until
    it reaches ``merge`` or nothing is left to join.
    """
    expected = np.asarray(expected, dtype=float)
    keep = expected >= merge
    rest = float(expected[~keep].sum()) + float(expected_undecidable)
    if keep.all() and not has_rest:  # no REST at all
        return keep
    for u in sorted(np.flatnonzero(keep), key=lambda u: (expected[u], u)):
        if rest <= 0.0 or rest >= merge:
            break
        keep[u] = False
        rest += float(expected[u])
    return keep


class Grouping:
    """The final groups: units (clusters or label values) kept or merged into ``REST``.

    Attributes
    ----------
    names : list
        Final group names; ``REST`` last when present.
    merged : list
        Units merged into ``REST`` for being too small.
    """

    def __init__(
        self, unit_names: list, keep: np.ndarray, *, regions: WeightRegions | None = None, known: pd.Index | None = None
    ) -> None:
        kept = np.flatnonzero(keep)
        self.names: list = [unit_names[u] for u in kept]
        self.merged: list = [unit_names[u] for u in np.flatnonzero(~keep)]
        self.rest: int | None = None
        if regions is not None or self.merged:  # graph regions always have an undecidable set
            if REST in self.names:
                raise InputError(f"a group label is {REST!r}, the name of the pooled rest group; rename it.")
            self.rest = len(self.names)
            self.names.append(REST)
        self.unit_codes = np.full(len(unit_names), -1 if self.rest is None else self.rest, dtype=np.int64)
        self.unit_codes[kept] = np.arange(kept.shape[0])
        self.regions = regions
        self.known = known

    def units(self, X: np.ndarray, labels: np.ndarray | None) -> np.ndarray:
        """Unit of every row: its region (-1 undecidable) or the position of its label."""
        if self.regions is not None:
            return self.regions.assign(X)
        assert self.known is not None and labels is not None  # label groups: the labels seen at calibration
        pos = self.known.get_indexer(pd.Index(labels, dtype=object))
        if (pos < 0).any():
            unseen = list(pd.unique(pd.Series(labels[pos < 0], dtype=object)))
            raise InputError(
                f"group label(s) {unseen[:10]} in {int((pos < 0).sum())} row(s) were not seen in the "
                f"calibration data (seen: {list(self.known[:30])}); map them to a seen group."
            )
        return pos

    def codes(self, units: np.ndarray) -> np.ndarray:
        """Final group code of every unit (``UNDECIDABLE`` goes to ``REST``)."""
        units = np.asarray(units, dtype=np.int64)
        out = np.full(units.shape[0], -1 if self.rest is None else self.rest, dtype=np.int64)
        ok = units != UNDECIDABLE
        out[ok] = self.unit_codes[units[ok]]
        return out


def groups_shown(table: pd.DataFrame, count_columns: tuple[str, ...]) -> tuple[pd.DataFrame, str]:
    """A group table as printed: an empty ``(rest)`` is no group, so it leaves the table for a note.

    ``(rest)`` collects the points whose forest weights tie between groups
    (and the merged small groups); when no calibration point fell there, a
    new point that does gets an infinite interval. Returns the table to print
    and the note ("" when ``(rest)`` is not empty or absent).
    """
    cols = [c for c in count_columns if c in table.columns]
    if REST not in table.index or not cols or table.loc[REST, cols].sum() > 0:
        return table, ""
    note = (
        f"'{REST}' (the points no group claims: exact weight ties between groups, merged small groups) holds "
        "no calibration point, so it is not listed as a group: a new point that falls there gets an infinite "
        "interval."
    )
    return table.drop(index=REST), note
