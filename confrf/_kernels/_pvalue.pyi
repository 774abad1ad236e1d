"""Typed signatures of the compiled module ``_pvalue.pyx``: LCP-RF counts, levels, profiles and p-values.

The index arrays are those of ``_forest.lcp_rf_thresholds_ranked`` (``LeafIndex.ranked()``).
"""

import numpy as np
from numpy.typing import ArrayLike, NDArray

def _score_p2_pairs(scores_r: NDArray[np.float64], p2_r: NDArray[np.float64]) -> NDArray[np.float64]: ...
def _p2_table(sorted_p2: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.int32]]: ...
def _unit(member_mult: ArrayLike, unit_mult: bool | None) -> tuple[NDArray[np.int32], bool]: ...
def lcp_rf_counts(
    leafx: NDArray[np.int64],
    leaf_ptr: NDArray[np.int64],
    member_rank: NDArray[np.int32],
    member_mult: ArrayLike,
    below: NDArray[np.int32],
    leaf_pop: NDArray[np.int32],
    scores_r: NDArray[np.float64],
    p2_r: NDArray[np.float64],
    sorted_p2: NDArray[np.float64],
    v: NDArray[np.float64],
    tol: float = 1e-10,
    n_threads: int = 1,
    unit_mult: bool | None = None,
) -> NDArray[np.int64]:
    """count(v) of every test row at its own score ``v[q]``."""

def lcp_rf_levels(
    leafx: NDArray[np.int64],
    leaf_ptr: NDArray[np.int64],
    member_rank: NDArray[np.int32],
    member_mult: ArrayLike,
    below: NDArray[np.int32],
    leaf_pop: NDArray[np.int32],
    scores_r: NDArray[np.float64],
    p2_r: NDArray[np.float64],
    sorted_p2: NDArray[np.float64],
    m_reqs: NDArray[np.int64],
    tol: float = 1e-10,
    n_threads: int = 1,
    unit_mult: bool | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.bool_], NDArray[np.float64]]:
    """(t, closed, level), each (m_test, L): the exact thresholds at L levels from one pass per row."""

def lcp_rf_profiles(
    leafx: NDArray[np.int64],
    leaf_ptr: NDArray[np.int64],
    member_rank: NDArray[np.int32],
    member_mult: ArrayLike,
    below: NDArray[np.int32],
    leaf_pop: NDArray[np.int32],
    scores_r: NDArray[np.float64],
    p2_r: NDArray[np.float64],
    sorted_p2: NDArray[np.float64],
    tol: float = 1e-10,
    unit_mult: bool | None = None,
) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.int64]]:
    """(indptr, u, count_open): every test row's step function count(v), as CSR arrays."""

def lcp_rf_mass_at(
    leafx: NDArray[np.int64],
    leaf_ptr: NDArray[np.int64],
    member_rank: NDArray[np.int32],
    member_mult: ArrayLike,
    below: NDArray[np.int32],
    leaf_pop: NDArray[np.int32],
    scores_r: NDArray[np.float64],
    p2_r: NDArray[np.float64],
    sorted_p2: NDArray[np.float64],
    cumw_p2: NDArray[np.float64],
    w_r: NDArray[np.float64],
    v: NDArray[np.float64],
    tol: float = 1e-10,
    n_threads: int = 1,
    unit_mult: bool | None = None,
) -> NDArray[np.float64]:
    """The covariate-shift weighted count M(v) of every test row at its own score ``v[q]``."""
