"""The leaf index of the conformal points: memberships per (tree, leaf), the threshold kernel's input."""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from .. import _kernels


def leaf_dtype(n_leaves: int) -> type:
    """The integer type of global leaf ids: int32 when they fit (half the memory of the n x k leaf matrix)."""
    return np.int32 if n_leaves <= np.iinfo(np.int32).max else np.int64


class RankedIndex(NamedTuple):
    """The threshold kernels' view of a leaf index, in their argument order after the test points' leaves.

    Every LCP-RF kernel (thresholds, weighted thresholds, counts, masses, levels, profiles: the ``.pyi`` stubs of
    ``confrf/_kernels``) reads these eight arrays, passed as ``*index.ranked()``; the named, typed fields let a
    type checker match them to the kernels' parameters.
    """

    leaf_ptr: NDArray[np.int64]  # (n_leaves + 1,) start of each global leaf's members
    member_rank: NDArray[np.int32]  # the members, renumbered by ascending (score, index)
    member_mult: NDArray[np.int32]  # their multiplicities (a stride-0 view of one 1 when all are 1)
    below: NDArray[np.int32]  # mass of the leaf's members with a strictly smaller score
    leaf_pop: NDArray[np.int32]  # mass of each leaf
    scores_r: NDArray[np.float64]  # scores by rank (ascending)
    p2_r: NDArray[np.float64]  # p2 by rank
    sorted_p2: NDArray[np.float64]  # p2, ascending


#: (t, closed, level) of every test row
Thresholds = tuple[NDArray[np.float64], NDArray[np.bool_], NDArray[np.float64]]


@dataclass
class LeafIndex:
    """Calibration points grouped by (tree, leaf), sorted by score in each leaf.

    Only memberships are stored (one entry per point and tree, never per pair).
    The arrays after ``p2`` are derived: the threshold kernel's copy of the
    index with points renumbered by score rank. Pickles keep just the
    memberships and the scores and rebuild the rest on load.
    """

    node_offset: np.ndarray  # (k,) first global leaf id of each tree
    leaf_ptr: np.ndarray
    members: np.ndarray
    member_mult: np.ndarray
    below: np.ndarray
    leaf_pop: np.ndarray
    scores: np.ndarray
    p2: np.ndarray
    sorted_p2: np.ndarray
    member_rank: np.ndarray  # members renumbered by ascending (score, index)
    scores_r: np.ndarray  # scores by rank (ascending)
    p2_r: np.ndarray  # p2 by rank
    unit_mult: bool  # every multiplicity is 1 (the honest forest)

    @classmethod
    def build(
        cls,
        leaves: np.ndarray,
        scores: np.ndarray,
        multiplicity: np.ndarray | None,
        node_offset: np.ndarray,
        n_leaves: int,
    ) -> LeafIndex:
        """Index points with global leaf ids ``leaves`` (n, k; int32 or int64); O(n k) after one sort.

        ``multiplicity`` None or all 1: every multiplicity is 1, and ``member_mult`` is a stride-0 view of a
        single 1 (no (n, k) array of ones is made or kept: a quarter of the index).
        """
        mult = None if multiplicity is None else np.ascontiguousarray(multiplicity, dtype=np.int32)
        if mult is not None and bool(np.all(mult == 1)):
            mult = None
        leaf_ptr, members, member_mult, below, pop = _kernels.build_leaf_index(leaves, scores, mult, n_leaves)
        p2 = _kernels.calibration_p2(leaves, leaf_ptr, members, below, pop, scores.shape[0])
        rank = _kernels.score_ranks(scores)
        order = np.argsort(rank)
        return cls(
            node_offset,
            leaf_ptr,
            members,
            member_mult,
            below,
            pop,
            scores,
            p2,
            np.sort(p2),
            rank[members],
            scores[order],
            p2[order],
            mult is None,
        )

    def ranked(self) -> RankedIndex:
        """The threshold kernels' view of the index (:class:`RankedIndex`), in their argument order after the
        test points' leaves: every LCP-RF kernel reads these eight arrays."""
        return RankedIndex(
            self.leaf_ptr,
            self.member_rank,
            self.member_mult,
            self.below,
            self.leaf_pop,
            self.scores_r,
            self.p2_r,
            self.sorted_p2,
        )

    # -- the LCP-RF kernels on this index: the test rows' (m, k) global leaf ids in, per-row results out --------
    def thresholds(self, leaves: np.ndarray, m_req: int, n_threads: int = 1) -> Thresholds:
        """Exact LCP-RF thresholds (t, closed, level) of the rows at requirement ``m_req``, in index units.

        A row's threshold depends on its leaves alone, so rows with the same leaf in every tree are computed once
        (:func:`distinct_rows`), in an order that puts rows sharing leaves next to each other.
        """
        distinct, inverse = distinct_rows(leaves)
        t, closed, level = _kernels.lcp_rf_thresholds_ranked(
            distinct, *self.ranked(), int(m_req), n_threads=max(1, int(n_threads)), unit_mult=self.unit_mult
        )
        return t[inverse], closed[inverse], level[inverse]

    def weighted_thresholds(
        self, leaves: np.ndarray, cumw_p2: np.ndarray, w_r: np.ndarray, req: np.ndarray, n_threads: int = 1
    ) -> Thresholds:
        """Covariate-shift LCP-RF thresholds: ``cumw_p2``, ``w_r`` of the shift index, one requirement per row."""
        req = np.ascontiguousarray(req, dtype=np.float64)
        return _kernels.lcp_rf_thresholds_weighted(
            leaves, *self.ranked(), cumw_p2, w_r, req, n_threads=max(1, int(n_threads)), unit_mult=self.unit_mult
        )

    def levels(self, leaves: np.ndarray, m_reqs: np.ndarray, n_threads: int = 1) -> Thresholds:
        """(t, closed, level), each (rows, L): the thresholds at L requirements from one pass per row."""
        return _kernels.lcp_rf_levels(
            leaves, *self.ranked(), m_reqs, n_threads=max(1, int(n_threads)), unit_mult=self.unit_mult
        )

    def counts(self, leaves: np.ndarray, v: np.ndarray, n_threads: int = 1) -> NDArray[np.int64]:
        """count(v) of every row at its own score ``v[q]`` (in index units)."""
        v = np.ascontiguousarray(v, dtype=np.float64)
        return _kernels.lcp_rf_counts(
            leaves, *self.ranked(), v, n_threads=max(1, int(n_threads)), unit_mult=self.unit_mult
        )

    def mass_at(
        self, leaves: np.ndarray, cumw_p2: np.ndarray, w_r: np.ndarray, v: np.ndarray, n_threads: int = 1
    ) -> NDArray[np.float64]:
        """The covariate-shift weighted count M(v) of every row at its own score ``v[q]``."""
        v = np.ascontiguousarray(v, dtype=np.float64)
        return _kernels.lcp_rf_mass_at(
            leaves, *self.ranked(), cumw_p2, w_r, v, n_threads=max(1, int(n_threads)), unit_mult=self.unit_mult
        )

    def profiles(self, leaves: np.ndarray) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.int64]]:
        """(indptr, u, count_open): every row's step function count(v), as CSR arrays."""
        return _kernels.lcp_rf_profiles(leaves, *self.ranked(), unit_mult=self.unit_mult)

    def weight_rows(
        self, leaves: np.ndarray, include_self: bool
    ) -> tuple[NDArray[np.int64], NDArray[np.int32], NDArray[np.float64], NDArray[np.float64]]:
        """(indptr, indices, data, self_w): the rows' localizer weights on the indexed points, as CSR arrays."""
        return _kernels.forest_weight_rows(
            leaves, self.leaf_ptr, self.members, self.member_mult, self.leaf_pop, self.n, include_self
        )

    def pooled_thresholds(self, m_req: int, rows: int) -> Thresholds:
        """Uniform weights (one leaf): LCP's threshold is the m_req-th smallest score, closed, as split conformal's.

        With uniform weights count(v) = #{i : V_i < v}, so v is accepted iff at most m_req - 1 scores lie below it:
        the set is (-inf, V_(m_req)] (docs/theory.md); level is the share of the n + 1 points at or below it.
        """
        sorted_scores, m_req = self.scores_r, int(m_req)
        n = sorted_scores.shape[0]
        if m_req > n:
            t, level = np.inf, 1.0
        else:
            t = float(sorted_scores[m_req - 1])
            level = float(np.searchsorted(sorted_scores, t, side="right") / (n + 1))
        return np.full(rows, t), np.ones(rows, dtype=bool), np.full(rows, level)

    @property
    def n(self) -> int:
        return int(self.scores.shape[0])

    @property
    def n_trees(self) -> int:
        return int(self.node_offset.shape[0])

    def __getstate__(self) -> dict[str, Any]:
        # each point's leaf per tree, numbered within its tree in the smallest unsigned type that holds the
        # tree's node ids (uint16 below 65,536 nodes): 2 bytes per point and tree, where int32 member ids took 4
        n_leaves = int(self.leaf_ptr.shape[0] - 1)
        width = int(np.diff(np.append(self.node_offset, n_leaves)).max(initial=0))
        dtype = np.uint16 if width <= np.iinfo(np.uint16).max else np.uint32
        mult = None
        if not self.unit_mult:
            mult = np.ones((self.n, self.n_trees), dtype=np.int32)
            for t, (_, _, e0, e1) in enumerate(self._tree_blocks()):
                mult[self.members[e0:e1], t] = self.member_mult[e0:e1]
        return {
            "node_offset": self.node_offset,
            "n_leaves": n_leaves,
            "local_leaves": self.leaves(local=True, dtype=dtype),
            "mult": mult,
            "scores": self.scores,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        # the build is deterministic, so the rebuilt arrays equal the pickled object's
        offset = state["node_offset"]
        if "members" in state:  # pickled by an earlier version: member ids grouped by leaf
            ptr, members = state["leaf_ptr"], state["members"]
            n, k, n_leaves = state["scores"].shape[0], offset.shape[0], ptr.shape[0] - 1
            leaf_of_entry = np.repeat(np.arange(n_leaves), np.diff(ptr))
            tree_of_entry = np.searchsorted(offset, leaf_of_entry, side="right") - 1
            leaves = np.empty((n, k), dtype=np.int64)
            leaves[members, tree_of_entry] = leaf_of_entry
            mult = np.ones((n, k), dtype=np.int32)
            if state["member_mult"] is not None:
                mult[members, tree_of_entry] = state["member_mult"]
        else:
            n_leaves = state["n_leaves"]
            leaves = state["local_leaves"].astype(leaf_dtype(n_leaves))
            leaves += offset[None, :].astype(leaves.dtype)
            mult = state["mult"]
        self.__dict__.update(LeafIndex.build(leaves, state["scores"], mult, offset, n_leaves).__dict__)

    def _tree_blocks(self) -> list[tuple[int, int, int, int]]:
        """Per tree: its global leaf ids [lo, hi) and its block of membership entries [e0, e1) (every point once)."""
        bounds = np.append(self.node_offset, self.leaf_ptr.shape[0] - 1)
        return [
            (int(bounds[t]), int(bounds[t + 1]), int(self.leaf_ptr[bounds[t]]), int(self.leaf_ptr[bounds[t + 1]]))
            for t in range(self.n_trees)
        ]

    def leaves(self, rows: np.ndarray | None = None, *, local: bool = False, dtype: Any = np.int64) -> np.ndarray:
        """(n, k) leaf id of every indexed point (or of ``rows``) in every tree, read back from the memberships.

        Global ids, or ``local`` ones numbered within each tree; built one tree at a time, so besides the
        result only O(n) memory is used.
        """
        out = np.empty((self.n if rows is None else len(rows), self.n_trees), dtype=dtype)
        col = np.empty(self.n, dtype=dtype)
        for t, (lo, hi, e0, e1) in enumerate(self._tree_blocks()):
            ids = np.arange(hi - lo, dtype=np.int64) + (0 if local else lo)
            col[self.members[e0:e1]] = np.repeat(ids, np.diff(self.leaf_ptr[lo : hi + 1]))
            out[:, t] = col if rows is None else col[rows]
        return out


#: a row's leaf ids are folded into one 64-bit key with these odd multipliers (wrapping); the key only orders the
#: rows, equal rows are found by comparing them whole
_FOLD = np.random.default_rng(20261128).integers(1, 2**62, size=4096, dtype=np.int64) | 1


def distinct_rows(leaves: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of a leaf matrix and, per row, which of them it equals: ``distinct[inverse]`` is ``leaves``.

    The distinct rows come sorted by their first tree's leaf (scikit-learn numbers a tree's nodes depth first,
    so nearby ids are nearby cells: consecutive rows share many leaves, whose index entries are then still in
    the caches) and then by a hash of the whole row, which puts equal rows next to each other; adjacent rows
    are merged only when every leaf is equal, so the result is exact whatever the hash. O(m k).
    """
    leaves = np.ascontiguousarray(leaves)
    m, k = leaves.shape
    if m < 2:
        return leaves, np.arange(m)
    key = (leaves.astype(np.int64, copy=False) * np.resize(_FOLD, k)).sum(axis=1)  # integer arrays wrap silently
    order = np.lexsort((key, leaves[:, 0]))
    ordered = leaves[order]
    new = np.empty(m, dtype=bool)
    new[0] = True
    np.any(ordered[1:] != ordered[:-1], axis=1, out=new[1:])
    inverse = np.empty(m, dtype=np.intp)
    inverse[order] = np.cumsum(new) - 1
    return np.ascontiguousarray(ordered[new]), inverse


def stack_lookups(
    parts: Iterable[tuple[np.ndarray, np.ndarray, np.ndarray]], n: int, k: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Row-wise concatenation of ``n`` rows of :meth:`ForestLocalizer.lookup` results, in order.

    ``parts`` is consumed one at a time (a generator keeps the peak at the
    stacked arrays plus one part); leaf ids keep the parts' integer type.
    """
    parts = iter(parts)
    first = next(parts, None)
    dtype = np.int64 if first is None else first[0].dtype
    leaves, V, sigma = np.empty((n, k), dtype=dtype), np.empty(n), np.empty(n)
    parts = parts if first is None else itertools.chain([first], parts)
    at = 0
    for lv, v, g in parts:
        stop = at + lv.shape[0]
        leaves[at:stop], V[at:stop], sigma[at:stop] = lv, v, g
        at = stop
    if at != n:
        raise ValueError(f"the lookups hold {at} rows, not {n}")
    return leaves, V, sigma
