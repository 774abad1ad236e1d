"""Features as scikit-learn trees see them: float32, without losing what float64 tells apart.

scikit-learn's trees cast X to float32. Values that differ only beyond
float32's precision (1 + 1e-9 u), that underflow (1e-300 u) or that overflow
(1e39) would collapse or fail, and the forest would stop adapting, silently.
Such columns are replaced by their rank among the values the forest is grown
on, interpolated linearly between them: a strictly increasing map, exact in
float32 up to 2**24 distinct values. Trees depend on a feature only through
its order, so each tree splits its own sample exactly as it would split the
float64 values; only a point lying between two sampled values may fall on
the other side, as the split sits halfway in rank rather than in value.
The map is learned on the rows that grow the forest (disjoint from the
conformal points when honest). Other columns are left exactly as they are,
so results for ordinary data do not change.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

F32_MAX = float(np.finfo(np.float32).max)


def blurred_columns(X: np.ndarray) -> list[int]:
    """Columns of X whose distinct values float32 cannot hold apart (or hold at all)."""
    out = []
    for j in range(X.shape[1]):
        u = np.unique(X[:, j])
        if np.abs(u).max(initial=0.0) > F32_MAX or np.unique(u.astype(np.float32)).size < u.size:
            out.append(j)
    return out


@dataclass(frozen=True)
class RankColumns:
    """The columns replaced by ranks and the sorted distinct values each was grown on."""

    columns: tuple[int, ...]
    knots: tuple[np.ndarray, ...]

    @classmethod
    def learn(cls, X: np.ndarray) -> RankColumns | None:
        """Columns of X whose distinct values float32 cannot hold apart, or None if there are none."""
        cols = blurred_columns(X)
        return cls(tuple(cols), tuple(np.unique(X[:, j]) for j in cols)) if cols else None

    def apply(self, X: np.ndarray) -> np.ndarray:
        """X with the rank columns replaced (values outside the grown-on range clamp to its ends,
        which no split separates from the ends)."""
        X = np.array(X, dtype=np.float64, copy=True)
        for j, u in zip(self.columns, self.knots):
            X[:, j] = np.interp(X[:, j], u, np.arange(u.size, dtype=np.float64)) if u.size > 1 else 0.0
        return X
