"""The features a first forest finds relevant to the score: the ``max_features="screened"`` candidate.

A forest of the scores spends its splits on every column it is given; with
many columns and few that drive the noise (the paper's sim model: 50 features,
one relevant), the localizer's leaves are cut along irrelevant directions and
its weights and sigma(x) carry that noise. Screening grows a small forest of
the scores on the same (localizer) points, keeps the columns whose mean
decrease in impurity is at least ``SCREEN_FACTOR`` times the average (1/p),
and grows the localizer on those columns only (every split tries all of
them). Whether that helps is the tuning's call (confrf/localizers/tuning.py):
on the real data sets, where several columns matter, it is usually worse.

Only the points the localizer is grown on are used, so the conformal points
never influence the choice of columns and Guan's guarantee stays exact.
"""

from __future__ import annotations

import math

import numpy as np
from sklearn.ensemble import RandomForestRegressor

#: the max_features value that grows the localizer on the screened columns (all of them tried per split)
SCREENED = "screened"
#: trees of the screening forest
SCREEN_TREES = 50
#: a column is kept if its impurity importance is at least this many times the average importance 1/p
SCREEN_FACTOR = 2.0
#: below this many columns there is nothing to screen (the candidate is not tried)
SCREEN_MIN_FEATURES = 3
#: the tuning tries the candidate only when its growing fold has this many points: importances of fewer
#: points are mostly noise, and a 50-tree screening forest would double the cost of a fit on tiny data
SCREEN_MIN_POINTS = 100


def screen_features(X: np.ndarray, V: np.ndarray, random_state: int | None, n_jobs: int | None = None) -> np.ndarray:
    """Sorted indices of the columns of X kept by the screening rule (never empty).

    A forest of ``SCREEN_TREES`` trees with leaves of ceil(sqrt(n)) points and
    a third of the features per split is grown on (X, V); the columns with
    impurity importance >= ``SCREEN_FACTOR`` / p are kept, or the most
    important one if none is. When the forest finds no split (constant
    scores, too few points), every column is kept.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(400, 10))
    >>> V = np.abs(rng.normal(size=400)) * (0.1 + X[:, 3])
    >>> screen_features(X, V, random_state=0).tolist()
    [3]
    """
    n, p = X.shape
    if n < 2:
        return np.arange(p)
    rf = RandomForestRegressor(
        n_estimators=SCREEN_TREES,
        min_samples_leaf=max(1, math.ceil(math.sqrt(n))),
        max_features=1.0 / 3.0,
        random_state=random_state,
        n_jobs=n_jobs,
    ).fit(X, V)
    imp = np.asarray(rf.feature_importances_, dtype=np.float64)
    if not np.isfinite(imp).all() or imp.sum() <= 0.0:
        return np.arange(p)
    keep = np.flatnonzero(imp >= SCREEN_FACTOR / p)
    return keep if keep.size else np.array([int(np.argmax(imp))])
