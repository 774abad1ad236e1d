"""A grown scikit-learn forest in a small pickle: only what the partition and the node values need.

scikit-learn pickles every node of a tree as 64 bytes (children, feature,
threshold, impurity, two sample counts, the missing-value direction) plus its
value. The localizer needs the partition (children, feature, threshold) and,
for the score scale, the node values: 28 bytes a node here (int32 children and
feature, float64 threshold and value). On load the trees are rebuilt with
scikit-learn's own node layout, impurities and sample counts set to 0, so
``apply`` and ``predict`` give exactly the pickled forest's answers
(``feature_importances_`` is not available on a loaded forest). A forest of
100 trees grown on 50,000 rows with small leaves has millions of nodes, which
made it as large as the leaf index.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
from sklearn.ensemble import RandomForestRegressor
from sklearn.tree._tree import NODE_DTYPE, Tree


def pack_forest(forest: RandomForestRegressor) -> dict[str, Any]:
    """The forest's settings and, per tree, its nodes in compact arrays."""
    shell = copy.copy(forest)
    shell.estimators_ = []
    trees = []
    for est in forest.estimators_:
        st = est.tree_.__getstate__()
        nodes = st["nodes"]
        e = copy.copy(est)
        e.__dict__.pop("tree_", None)
        trees.append(
            {
                "estimator": e,
                "n_features": int(est.tree_.n_features),
                "max_depth": int(st["max_depth"]),
                "left": nodes["left_child"].astype(np.int32),
                "right": nodes["right_child"].astype(np.int32),
                "feature": nodes["feature"].astype(np.int32),
                "threshold": nodes["threshold"].copy(),
                "value": st["values"].reshape(-1).copy(),
            }
        )
    return {"forest": shell, "trees": trees}


def unpack_forest(packed: dict[str, Any]) -> RandomForestRegressor:
    """The forest of :func:`pack_forest`, with scikit-learn's trees rebuilt."""
    forest = packed["forest"]
    estimators = []
    for t in packed["trees"]:
        count = t["left"].shape[0]
        nodes = np.zeros(count, dtype=NODE_DTYPE)
        nodes["left_child"], nodes["right_child"] = t["left"], t["right"]
        nodes["feature"], nodes["threshold"] = t["feature"], t["threshold"]
        tree = Tree(t["n_features"], np.array([1], dtype=np.intp), 1)
        tree.__setstate__(
            {"max_depth": t["max_depth"], "node_count": count, "nodes": nodes, "values": t["value"].reshape(-1, 1, 1)}
        )
        est = t["estimator"]
        est.tree_ = tree
        estimators.append(est)
    forest.estimators_ = estimators
    return forest
