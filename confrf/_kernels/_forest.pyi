"""Typed signatures of the compiled module ``_forest.pyx``: the leaf index, LCP-RF thresholds and forest weights.

The arrays of a leaf index (:class:`confrf.localizers.leaf_index.LeafIndex`) are C-contiguous: ``leaf_ptr`` int64,
``members`` / ``member_rank`` / ``below`` / ``leaf_pop`` int32, scores and masses float64; ``leafx`` is the (m, k)
int64 matrix of the test rows' global leaf ids. ``member_mult`` is an int32 array or a stride-0 view of one 1
(:func:`unit_multiplicities`).
"""

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._arrays import F64, I32, I64

BLOCK_BITS: tuple[int, int]
GATHER_MODES: dict[str, int]
COMPACT_MIN: int

#: (t, closed, level) of every test row
Thresholds = tuple[F64, NDArray[np.bool_], F64]

def build_leaf_index(leaves: I64 | I32, scores: F64, mult: I32 | None, n_leaves: int) -> tuple[I64, I32, I32, I32, I32]:
    """(leaf_ptr, members, member_mult, below, leaf_pop) of the calibration points grouped by leaf."""

def unit_multiplicities(size: int) -> I32:
    """``size`` multiplicities of 1 as a read-only stride-0 view of one int32."""

def _mult_arg(member_mult: ArrayLike, unit_mult: bool | None) -> tuple[I32, bool]: ...
def calibration_p2(
    leaves: NDArray[np.integer[Any]] | int, leaf_ptr: I64, members: I32, below: I32, leaf_pop: I32, n: int
) -> F64:
    """p2_i: the mass row i puts strictly below V_i, with no test point present."""

def score_ranks(scores: ArrayLike) -> I32:
    """Rank of every calibration point in ascending (score, index) order."""

def _gather_mode(gather: str) -> int: ...
def _set_block_bits(lo: int, hi: int) -> tuple[int, int]: ...
def _score_p2_pairs(scores_r: F64, p2_r: F64) -> F64: ...

# fmt: off
# one line a group of parameters: the leaf index, the calibration scores, what is asked, the settings
def lcp_rf_thresholds(
    leafx: I64, leaf_ptr: I64, members: I32, member_mult: ArrayLike, below: I32, leaf_pop: I32,
    scores: F64, p2: F64, sorted_p2: F64, m_req: int,
    tol: float = 1e-10, n_threads: int = 1, gather: str = "auto", compact_min: int = ...,
) -> Thresholds:
    """Exact LCP-RF thresholds from an index by calibration row (ranks computed here)."""

def lcp_rf_thresholds_ranked(
    leafx: I64, leaf_ptr: I64, member_rank: I32, member_mult: ArrayLike, below: I32, leaf_pop: I32,
    scores_r: F64, p2_r: F64, sorted_p2: F64, m_req: int,
    tol: float = 1e-10, n_threads: int = 1, unit_mult: bool | None = None, gather: str = "auto",
    compact_min: int = ...,
) -> Thresholds:
    """Exact LCP-RF thresholds from a ranked index (``LeafIndex.ranked()``)."""

def lcp_rf_thresholds_weighted(
    leafx: I64, leaf_ptr: I64, member_rank: I32, member_mult: ArrayLike, below: I32, leaf_pop: I32,
    scores_r: F64, p2_r: F64, sorted_p2: F64, cumw_p2: F64, w_r: F64, req: F64,
    tol: float = 1e-10, n_threads: int = 1, unit_mult: bool | None = None, gather: str = "auto",
) -> Thresholds:
    """Exact LCP-RF thresholds weighted by likelihood ratios (covariate shift), one requirement per row."""

# fmt: on
def forest_weight_rows(
    leafx: I64, leaf_ptr: I64, members: I32, member_mult: ArrayLike, leaf_pop: I32, n: int, include_self: bool
) -> tuple[I64, I32, F64, F64]:
    """(indptr, indices, data, self_w): the localizer weights of test rows on the calibration points, as CSR."""

def forest_weight_sumsq(
    leafx: I64, leaf_ptr: I64, members: I32, member_mult: ArrayLike, leaf_pop: I32, n: int, n_threads: int = 1
) -> F64:
    """sum_j w_ij^2 of every row of :func:`forest_weight_rows` (``include_self=False``)."""

def build_info() -> dict[str, Any]:
    """How the kernels were built: OpenMP, its threads, the compiler and Cython."""
