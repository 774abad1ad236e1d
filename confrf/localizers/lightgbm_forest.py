"""LightGBM's random-forest mode grows the localizer's trees (``forest_backend="lightgbm"``).

A histogram-based forest bins each feature once (at most ``MAX_BIN`` bins)
and finds splits on the bin counts, so growing costs O(n p) per tree level
instead of scikit-learn's sort-based O(n log n p): at 50,000 localizer rows
of the paper's sim data (50 features, leaves of 40), 100 trees grew in 5.3
CPU-seconds instead of 111 (the scaling benchmark's "levers measured",
docs/benchmarks/scale_levers.md). Only the growing
is LightGBM's: its trees are converted into scikit-learn trees (the same
children, features, thresholds and leaf values), so lookups, the leaf index,
pickling and prediction are those of every other forest, and a fitted object
does not need LightGBM to predict.

The settings follow :class:`sklearn.ensemble.RandomForestRegressor`'s:
``min_samples_leaf`` is LightGBM's ``min_data_in_leaf`` (in-bag rows, as in
scikit-learn), ``max_features`` its per-split feature share
(``feature_fraction_bynode``), ``bootstrap=True`` a subsample of 63.2% of the
rows per tree (the share of distinct rows in a bootstrap sample; LightGBM
draws without replacement) and ``max_samples`` a smaller share. Splits lie
between bins instead of between every pair of values: with 255 bins per
feature a split is placed to within 0.4% of a feature's rows, far finer than
the leaves of a localizer. The partition is grown on the localizer rows only,
so Guan's guarantee is unchanged.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from sklearn.ensemble import RandomForestRegressor
from sklearn.tree import DecisionTreeRegressor
from sklearn.tree._tree import NODE_DTYPE, Tree

from ..exceptions import InputError

#: histogram bins per feature (LightGBM's default)
MAX_BIN = 255
#: share of distinct rows in a bootstrap sample of n rows, 1 - 1/e: each tree's subsample with bootstrap=True
BOOTSTRAP_SHARE = 1.0 - math.exp(-1.0)
#: LightGBM's largest num_leaves
MAX_LEAVES = 131_072


def lightgbm_available() -> bool:
    """Whether LightGBM can be imported."""
    try:
        import lightgbm  # noqa: F401
    except ImportError:
        return False
    return True


def _import_lightgbm() -> Any:
    try:
        import lightgbm
    except ImportError:
        raise InputError(
            "forest_backend='lightgbm' needs LightGBM: pip install lightgbm (or pip install 'confrf[lightgbm]'), "
            "or use forest_backend='sklearn'."
        ) from None
    return lightgbm


def feature_share(max_features: Any, p: int) -> float:
    """scikit-learn's ``max_features`` as a share of the p columns (LightGBM's feature_fraction_bynode)."""
    if max_features is None:
        return 1.0
    if isinstance(max_features, str):
        count = {"sqrt": math.sqrt(p), "log2": math.log2(max(p, 1))}[max_features]
        return min(1.0, max(1, int(count)) / p)
    if isinstance(max_features, (int, np.integer)) and not isinstance(max_features, bool):
        return min(1.0, max(1, int(max_features)) / p)
    return min(1.0, max(1, int(float(max_features) * p)) / p)


def grow_lightgbm_forest(
    X: np.ndarray,
    V: np.ndarray,
    *,
    n_estimators: int,
    min_samples_leaf: int,
    max_features: Any,
    max_depth: int | None,
    bootstrap: bool,
    max_samples: float | None,
    random_state: int | None,
    n_jobs: int | None,
) -> RandomForestRegressor:
    """A forest of ``n_estimators`` LightGBM random-forest trees of V on X, as a fitted scikit-learn forest.

    The returned :class:`~sklearn.ensemble.RandomForestRegressor` holds
    scikit-learn trees (``estimators_[t].tree_``) equal to LightGBM's, for
    ``apply`` and the node values; its other fitted attributes are not set.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(2000, 3)); V = np.abs(rng.normal(size=2000)) * X[:, 0]
    >>> rf = grow_lightgbm_forest(X, V, n_estimators=5, min_samples_leaf=50, max_features=1.0, max_depth=None,
    ...                           bootstrap=True, max_samples=None, random_state=0, n_jobs=1)
    >>> len(rf.estimators_), rf.estimators_[0].tree_.apply(X[:3].astype(np.float32)).shape
    (5, (3,))
    """
    lgb = _import_lightgbm()
    n, p = X.shape
    share = float(max_samples) if max_samples is not None else (BOOTSTRAP_SHARE if bootstrap else 1.0)
    fshare = feature_share(max_features, p)
    if share >= 1.0 and fshare >= 1.0:
        # LightGBM's forest needs row or feature subsampling (identical trees otherwise)
        raise InputError(
            "forest_backend='lightgbm' grows each tree on a subsample of the rows or of the features per split; "
            "with bootstrap=False and max_features=1.0 every tree would be the same. Use bootstrap=True, "
            "max_samples < 1 or max_features < 1."
        )
    leaf = max(1, int(min_samples_leaf))
    params = {
        "objective": "regression",
        "boosting": "rf",
        "bagging_fraction": min(share, 1.0),
        "bagging_freq": 1 if share < 1.0 else 0,
        "feature_fraction_bynode": fshare,
        "min_data_in_leaf": leaf,
        "num_leaves": int(min(MAX_LEAVES, max(2, n // leaf + 1))),
        "max_depth": -1 if max_depth is None else int(max_depth),
        # grow until the leaf size stops it, as scikit-learn's trees do
        "min_sum_hessian_in_leaf": 0.0,
        "min_gain_to_split": 0.0,
        "lambda_l2": 0.0,
        "max_bin": MAX_BIN,
        "seed": 0 if random_state is None else int(random_state),
        "deterministic": True,
        "force_col_wise": True,
        "use_missing": False,  # no NaN reaches the localizer; every split is a plain x <= threshold
        "num_threads": max(1, int(n_jobs or 1)),
        "verbose": -1,
    }
    # the float32 values scikit-learn's trees compare at lookup: LightGBM then routes every row as they do
    X32 = np.asarray(X, dtype=np.float32)
    booster = lgb.train(params, lgb.Dataset(X32, V, params={"max_bin": MAX_BIN}), num_boost_round=int(n_estimators))
    trees = booster.dump_model()["tree_info"]
    forest = RandomForestRegressor(
        n_estimators=int(n_estimators),
        min_samples_leaf=leaf,
        max_features=max_features,
        max_depth=max_depth,
        bootstrap=bootstrap,
        max_samples=max_samples,
        random_state=random_state,
    )
    forest.estimators_ = [_sklearn_tree(t["tree_structure"], p) for t in trees]
    forest.n_features_in_, forest.n_outputs_ = p, 1
    return forest


def _sklearn_tree(root: dict[str, Any], p: int) -> DecisionTreeRegressor:
    """LightGBM's nested tree dump as a scikit-learn tree (nodes in depth-first order, left child first)."""
    left: list[int] = []
    right: list[int] = []
    feature: list[int] = []
    threshold: list[float] = []
    value: list[float] = []
    depth, stack = 0, [(root, -1, False, 0)]  # (node, parent, is_right, depth): an explicit stack for deep trees
    while stack:
        node, parent, is_right, d = stack.pop()
        i = len(left)
        if parent >= 0:
            (right if is_right else left)[parent] = i
        depth = max(depth, d)
        leaf = "leaf_value" in node
        left.append(-1)
        right.append(-1)
        if not leaf and node.get("decision_type", "<=") != "<=":
            raise ValueError(f"unexpected LightGBM split {node.get('decision_type')!r}: only numerical '<=' splits")
        feature.append(-2 if leaf else int(node["split_feature"]))
        # x <= threshold goes left, as in scikit-learn (every LightGBM numerical split is "<=")
        threshold.append(-2.0 if leaf else float(node["threshold"]))
        value.append(float(node["leaf_value"] if leaf else node["internal_value"]))
        if not leaf:
            stack.append((node["right_child"], i, True, d + 1))
            stack.append((node["left_child"], i, False, d + 1))
    count = len(left)
    nodes = np.zeros(count, dtype=NODE_DTYPE)
    nodes["left_child"], nodes["right_child"] = left, right
    nodes["feature"], nodes["threshold"] = feature, threshold
    tree = Tree(p, np.array([1], dtype=np.intp), 1)
    tree.__setstate__(
        {"max_depth": depth, "node_count": count, "nodes": nodes, "values": np.asarray(value).reshape(-1, 1, 1)}
    )
    est = DecisionTreeRegressor()
    est.tree_, est.n_features_in_, est.n_outputs_ = tree, p, 1
    return est
