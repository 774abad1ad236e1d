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
        return {
            "node_offset": self.node_offset,
            "leaf_ptr": self.leaf_ptr,
            "members": self.members,
            "member_mult": None if self.unit_mult else self.member_mult,
            "scores": self.scores,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        # the build is deterministic, so the rebuilt arrays equal the pickled object's
        ptr, members, offset = state["leaf_ptr"], state["members"], state["node_offset"]
        n, k = state["scores"].shape[0], offset.shape[0]
        leaf_of_entry = np.repeat(np.arange(ptr.shape[0] - 1), np.diff(ptr))
        tree_of_entry = np.searchsorted(offset, leaf_of_entry, side="right") - 1
        leaves = np.empty((n, k), dtype=np.int64)
        leaves[members, tree_of_entry] = leaf_of_entry
        mult = np.ones((n, k), dtype=np.int32)
        if state["member_mult"] is not None:
            mult[members, tree_of_entry] = state["member_mult"]
        self.__dict__.update(LeafIndex.build(leaves, state["scores"], mult, offset, ptr.shape[0] - 1).__dict__)
