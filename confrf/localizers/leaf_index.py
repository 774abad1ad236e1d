"""The leaf index of the conformal points: memberships per (tree, leaf), the threshold kernel's input."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _kernels


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
        cls, leaves: np.ndarray, scores: np.ndarray, multiplicity: np.ndarray, node_offset: np.ndarray, n_leaves: int
    ) -> LeafIndex:
        """Index points with global leaf ids ``leaves`` (n, k); O(n k) after one sort."""
        mult = np.ascontiguousarray(multiplicity, dtype=np.int32)
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
            bool(np.all(mult == 1)),
        )

    @property
    def n(self) -> int:
        return int(self.scores.shape[0])

    @property
    def n_trees(self) -> int:
        return int(self.node_offset.shape[0])

    def __getstate__(self) -> dict[str, Any]:
        # each point's leaf per tree, numbered within its tree in the smallest unsigned type that holds the
        # tree's node ids (uint16 below 65,536 nodes): 2 bytes per point and tree, where int32 member ids took 4
        leaves = self.leaves()
        leaves -= self.node_offset[None, :]
        n_leaves = int(self.leaf_ptr.shape[0] - 1)
        width = int(max(n_leaves - self.node_offset[-1], np.diff(self.node_offset).max(initial=0))) if self.n else 0
        dtype = np.uint16 if width <= np.iinfo(np.uint16).max else np.uint32
        mult = None
        if not self.unit_mult:
            mult = np.ones((self.n, self.n_trees), dtype=np.int32)
            mult[self.members, self._tree_of_entry()] = self.member_mult
        return {
            "node_offset": self.node_offset,
            "n_leaves": n_leaves,
            "local_leaves": leaves.astype(dtype),
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
            leaves = state["local_leaves"].astype(np.int64)
            leaves += offset[None, :]
            n_leaves = state["n_leaves"]
            mult = state["mult"] if state["mult"] is not None else np.ones(leaves.shape, dtype=np.int32)
        self.__dict__.update(LeafIndex.build(leaves, state["scores"], mult, offset, n_leaves).__dict__)

    def _entries(self) -> tuple[np.ndarray, np.ndarray]:
        """Global leaf and tree of every membership entry."""
        leaf_of_entry = np.repeat(np.arange(self.leaf_ptr.shape[0] - 1, dtype=np.int64), np.diff(self.leaf_ptr))
        return leaf_of_entry, np.searchsorted(self.node_offset, leaf_of_entry, side="right") - 1

    def _tree_of_entry(self) -> np.ndarray:
        return self._entries()[1]

    def leaves(self) -> np.ndarray:
        """(n, k) global leaf id of every indexed point in every tree, read back from the memberships."""
        leaf_of_entry, tree_of_entry = self._entries()
        leaves = np.empty((self.n, self.n_trees), dtype=np.int64)
        leaves[self.members, tree_of_entry] = leaf_of_entry
        return leaves
