"""The report of a training-conditional (PAC) calibration: what was chosen and what it guarantees."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd


@dataclass(frozen=True, eq=False)
class PACReport:
    """What the training-conditional calibration chose and what it guarantees.

    Attributes
    ----------
    method : str
        "qrf-tc" or "lcp-rf".
    form : str
        "inflated" (D2 target 1 - alpha + epsilon, guarantee 1 - alpha) or
        "paper" (D2 target 1 - alpha, guarantee 1 - alpha - epsilon).
    alpha, delta, epsilon : float
    K : int
        Number of grid values (the union bound runs over all of them).
    n2 : int
        Size of the correction part D2.
    target : float
        Empirical D2 coverage the correction must reach.
    required_count : int
        The same as a count: ceil(n2 * target), computed exactly.
    a_hat : float or None
        The chosen correction; None when no grid value reached the target.
    d2_coverage : float
        D2 coverage at ``a_hat`` (at the largest grid value when none reached).
    reached : bool
    guaranteed_coverage : float
        1 - alpha (inflated) or 1 - alpha - epsilon (paper), held with
        probability at least 1 - delta.
    sentence : str
        The guarantee in words.
    grid : DataFrame
        D2 coverage at every grid value (columns ``a``, ``d2_coverage``).
    """

    method: str
    form: str
    alpha: float
    delta: float
    epsilon: float
    K: int
    n2: int
    target: float
    required_count: int
    a_hat: float | None
    d2_coverage: float
    reached: bool
    guaranteed_coverage: float
    sentence: str
    grid: pd.DataFrame = field(repr=False)

    def items(self) -> list[tuple[str, Any]]:
        """(label, value) pairs for printed tables."""
        return [
            ("alpha", self.alpha), ("delta", self.delta), ("epsilon", self.epsilon),
            ("Grid values K", self.K), ("n2 (D2)", self.n2), ("Form", self.form),
            ("D2 target", self.target), ("D2 count needed", self.required_count),
            ("a_hat", self.a_hat if self.reached else "none (all infinite)"),
            ("D2 coverage", self.d2_coverage), ("Target reached", self.reached),
            ("Guaranteed coverage", self.guaranteed_coverage),
        ]

    def to_frame(self) -> pd.DataFrame:
        """One ``value`` column indexed by field name (the grid left out)."""
        keys = ["method", "form", "alpha", "delta", "epsilon", "K", "n2", "target", "required_count", "a_hat",
                "d2_coverage", "reached", "guaranteed_coverage", "sentence"]
        return pd.DataFrame({"value": {k: getattr(self, k) for k in keys}})
