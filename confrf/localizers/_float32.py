"""Features as scikit-learn trees see them: float32, without losing what float64 tells apart.

scikit-learn's trees cast X to float32 and never split between two sorted
values closer than ``SPLIT_RESOLUTION`` (1e-7, its ``FEATURE_THRESHOLD``).
Values that differ only beyond that (1 + 1e-9 u, 1e-8 u, 1e7 + u, timestamps
in seconds within a day), that underflow (1e-300 u) or that overflow (1e39)
would collapse or fail, and the forest would stop adapting, silently. Such
columns are replaced by their rank among the values the forest is grown on,
interpolated linearly between them: a strictly increasing map, exact in
float32 up to 2**24 distinct values. Trees depend on a feature only through
its order, so each tree splits its own sample exactly as it would split the
float64 values; only a point lying between two sampled values may fall on
the other side, as the split sits halfway in rank rather than in value.
The map is learned on the rows that grow the forest (disjoint from the
conformal points when honest). Other columns are left exactly as they are,
so results for ordinary data do not change.

A column needs ranks only when float32 merges values that matter to a split.
A tree needs a column's order at the scale of a leaf's extent along it; what
float32 loses are runs of adjacent distinct values that no split can separate.
A column is rank coded when such a run is longer than the smallest leaf
(``MIN_RUN``) and than ``MAX_RUN_SHARE`` of its distinct values. Continuous
data at any size lose only chance pairs and triples (uniform values: a
longest run of 3 among 50,000, 23 among 5,000,000), which no leaf notices;
ranks for them would cost a sorted copy of the column in the fitted object
and an interpolation per lookup.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

F32_MAX = float(np.finfo(np.float32).max)
#: scikit-learn's trees never split between float32 values this close (FEATURE_THRESHOLD in sklearn/tree/_partitioner)
SPLIT_RESOLUTION = np.float32(1e-7)
#: a run of inseparable values longer than this can hold a whole leaf (the tuning's smallest leaf, tuning.MIN_LEAF)
MIN_RUN = 3
#: ... and it matters when it is also longer than this share of the column's distinct values
MAX_RUN_SHARE = 1e-3


def longest_inseparable_run(values: np.ndarray) -> int:
    """Most adjacent distinct values of ``values`` that scikit-learn's trees cannot split apart.

    Sorted distinct values a < b are separable iff float32(b) > float32(a) + 1e-7 in float32 arithmetic,
    as scikit-learn tests its split positions; values beyond float32's range become +-inf and merge.

    Examples
    --------
    >>> longest_inseparable_run(np.array([0.1, 0.2, 0.3]))
    1
    >>> longest_inseparable_run(1 + 1e-9 * np.arange(5.0))
    5
    """
    u = np.unique(values)
    if u.size < 2:
        return int(u.size)
    with np.errstate(over="ignore"):
        f = u.astype(np.float32)
        apart = f[1:] > f[:-1] + SPLIT_RESOLUTION
    cuts = np.flatnonzero(apart) + 1
    return int(np.diff(np.concatenate([[0], cuts, [u.size]])).max())


def blurred_columns(X: np.ndarray) -> list[int]:
    """Columns of X whose distinct values float32 merges in runs that matter to a split (or cannot hold at all)."""
    out = []
    for j in range(X.shape[1]):
        u = np.unique(X[:, j])
        if np.abs(u).max(initial=0.0) > F32_MAX or longest_inseparable_run(u) > max(MIN_RUN, MAX_RUN_SHARE * u.size):
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
