"""Typed signatures of the compiled module ``_pvalue.pyx``: LCP-RF counts, levels, profiles and p-values.

The index arrays are those of ``_forest.lcp_rf_thresholds_ranked`` (``LeafIndex.ranked()``).
"""

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._arrays import F64, I32, I64

def _p2_table(sorted_p2: F64) -> tuple[F64, I32]: ...

# fmt: off
# one line a group of parameters: the ranked leaf index, the calibration scores, what is asked, the settings
def lcp_rf_counts(
    leafx: I64, leaf_ptr: I64, member_rank: I32, member_mult: ArrayLike, below: I32, leaf_pop: I32,
    scores_r: F64, p2_r: F64, sorted_p2: F64, v: F64,
    tol: float = 1e-10, n_threads: int = 1, unit_mult: bool | None = None,
) -> NDArray[np.int64]:
    """count(v) of every test row at its own score ``v[q]``."""

def lcp_rf_levels(
    leafx: I64, leaf_ptr: I64, member_rank: I32, member_mult: ArrayLike, below: I32, leaf_pop: I32,
    scores_r: F64, p2_r: F64, sorted_p2: F64, m_reqs: I64,
    tol: float = 1e-10, n_threads: int = 1, unit_mult: bool | None = None,
) -> tuple[F64, NDArray[np.bool_], F64]:
    """(t, closed, level), each (m_test, L): the exact thresholds at L levels from one pass per row."""

def lcp_rf_profiles(
    leafx: I64, leaf_ptr: I64, member_rank: I32, member_mult: ArrayLike, below: I32, leaf_pop: I32,
    scores_r: F64, p2_r: F64, sorted_p2: F64,
    tol: float = 1e-10, unit_mult: bool | None = None,
) -> tuple[I64, F64, I64]:
    """(indptr, u, count_open): every test row's step function count(v), as CSR arrays."""

def lcp_rf_mass_at(
    leafx: I64, leaf_ptr: I64, member_rank: I32, member_mult: ArrayLike, below: I32, leaf_pop: I32,
    scores_r: F64, p2_r: F64, sorted_p2: F64, cumw_p2: F64, w_r: F64, v: F64,
    tol: float = 1e-10, n_threads: int = 1, unit_mult: bool | None = None,
) -> F64:
    """The covariate-shift weighted count M(v) of every test row at its own score ``v[q]``."""
