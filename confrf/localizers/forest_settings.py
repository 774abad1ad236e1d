"""A forest localizer's settings: their checks and the "auto" rules for the leaf size and the number of trees.

:class:`confrf.localizers.forest.ForestLocalizer` reads them when it grows; the rules depend on the growing
data only (through its size), never on the conformal points.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..exceptions import InputError
from .tuning import TUNE

#: score scales of the localizer: the raw scores, or scores divided by the forest's prediction sigma(x)
SCALES = ("none", "forest")
#: what grows the trees (confrf/localizers/lightgbm_forest.py)
FOREST_BACKENDS = ("sklearn", "lightgbm")
#: "auto" trees: at least this many
AUTO_TREES_MIN = 100
#: "auto" trees: at most this many
AUTO_TREES_MAX = 500
#: "auto" trees: enough that a point's weights spread over about this many (tree, leaf-mate) pairs
AUTO_TREE_PAIRS = 3000
#: "auto" adds trees only up to the growing cost of AUTO_TREES_MIN trees on this many points
AUTO_TREES_BUDGET_POINTS = 5000


def check_forest_backend(value: Any) -> str:
    """``forest_backend`` of a forest localizer: "sklearn" or "lightgbm"."""
    if not isinstance(value, str) or value not in FOREST_BACKENDS:
        raise InputError(
            f'forest_backend must be one of {list(FOREST_BACKENDS)}, got {value!r}: "sklearn" grows the trees '
            'with scikit-learn, "lightgbm" with LightGBM\'s random-forest mode (faster on many rows).'
        )
    return value


def check_max_samples(value: Any, bootstrap: bool) -> float | None:
    """``max_samples``: None or a share in (0, 1] of the growing rows per tree (needs ``bootstrap=True``)."""
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (float, int, np.floating, np.integer)):
        raise InputError(f"max_samples must be None or a share in (0, 1] of the localizer rows, got {value!r}.")
    if not 0.0 < float(value) <= 1.0:
        raise InputError(
            f"max_samples must be None or a share in (0, 1] of the localizer rows each tree draws, got {value!r}."
        )
    if not bootstrap:
        raise InputError("max_samples draws each tree's rows with bootstrap=True; drop it or set bootstrap=True.")
    return float(value)


def check_scale(scale: Any) -> str:
    """``scale`` of a forest localizer: "none", "forest" or "tune"."""
    if not isinstance(scale, str) or scale not in SCALES + (TUNE,):
        raise InputError(
            f'scale must be one of {list(SCALES + (TUNE,))}, got {scale!r}: "none" localizes the '
            'raw scores, "forest" the scores divided by the forest\'s prediction, "tune" chooses.'
        )
    return scale


def auto_min_samples_leaf(n_grow: int) -> int:
    """Default leaf size: ceil(sqrt(n)), at least 5.

    Assumption 3 of the paper asks for leaves of order sqrt(n) (log n)^beta for
    conditional validity; sqrt(n) keeps leaves informative at moderate n. The
    marginal guarantee holds for any leaf size.
    """
    return max(5, math.ceil(math.sqrt(max(n_grow, 1))))


def auto_n_estimators(n_grow: int, leaf: int) -> int:
    """Default number of trees: ceil(AUTO_TREE_PAIRS / leaf) within [100, 500], and 100 from 5,000 growing points.

    The forest's weights are a Monte Carlo average over trees of the leaf-mates'
    shares; with leaves of ``leaf`` growing points, k trees spread a point's
    weight over at most k * leaf (tree, leaf-mate) pairs, so small leaves need
    more trees for the same Monte Carlo error (a weighted quantile of fewer
    distinct points is coarser). Extra trees are grown only while they cost
    no more than 100 trees on 5,000 points: at larger n the leaves are
    larger and 100 trees already spread the weights widely. The count depends
    on the growing data only (through the leaf size), never on the conformal
    points.
    """
    want = math.ceil(AUTO_TREE_PAIRS / max(int(leaf), 1))
    budget = (AUTO_TREES_MIN * AUTO_TREES_BUDGET_POINTS) // max(int(n_grow), 1)
    return max(AUTO_TREES_MIN, min(want, AUTO_TREES_MAX, budget))
