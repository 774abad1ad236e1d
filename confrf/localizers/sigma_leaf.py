"""The leaf size of a normalized localizer's sigma(x) forest, chosen on the rows it grows on.

A normalized localizer (:func:`confrf.localizers.sources.normalizes`) keeps a
forest only for its prediction sigma(x) of the score, and the thresholds are
sigma(x) times split conformal's quantile of V / sigma(x). How well those
thresholds follow the conditional quantile depends on how well sigma(x)
follows the score's conditional scale: leaves too small make sigma noisy,
leaves too large blur it where the noise changes quickly. Neither size suits
every data set (docs/benchmarks/condcov.md, "Eighth round": leaves of twice
the sqrt rule lowered the conditional-coverage error on a slowly varying
noise and raised it on a fast one), so the leaf is chosen by the forest's
out-of-bag squared error of the score, over leaves around the sqrt rule.

Out-of-bag predictions read only the growing rows (the training part's
out-of-fold scores), never the conformal points, so the choice keeps split
conformal's exact guarantee.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.ensemble import RandomForestRegressor

#: the candidate leaves, as multiples of the sqrt rule (:func:`confrf.localizers.forest_settings.auto_min_samples_leaf`)
SIGMA_LEAF_FACTORS: tuple[float, ...] = (2**-0.5, 1.0, 2**0.5, 2.0, 2**1.5)
#: trees of each candidate forest: each growing row is out of bag in about 37 % of them
SIGMA_LEAF_TREES = 100


@dataclass(frozen=True)
class SigmaLeafChoice:
    """The leaf of sigma(x)'s forest and the out-of-bag mean squared errors it was chosen by."""

    chosen: int
    candidates: tuple[int, ...]
    losses: tuple[float, ...]  # each candidate's out-of-bag mean squared error of the score

    def text(self) -> str:
        """One line for the summary: the chosen leaf and the candidates."""
        others = ", ".join(str(c) for c in self.candidates)
        return (
            f"sigma(x)'s leaves: {self.chosen} rows, the lowest out-of-bag squared error of the score among "
            f"leaves of {others}"
        )


def sigma_leaf_candidates(n_grow: int, base: int) -> list[int]:
    """Leaves around ``base`` (the sqrt rule), each at least 1 and below ``n_grow / 2``, without repeats."""
    top = max(1, n_grow // 2 - 1)  # two leaves at least, so every candidate localizes sigma
    found = {min(top, max(1, round(base * f))) for f in SIGMA_LEAF_FACTORS}
    return sorted(found)


def choose_sigma_leaf(
    X: np.ndarray, V: np.ndarray, base: int, max_features: Any, random_state: Any, n_jobs: Any = None
) -> SigmaLeafChoice:
    """The candidate leaf whose forest predicts the score ``V`` best out of bag (ties: the smaller leaf).

    Parameters
    ----------
    X, V : ndarray
        The growing rows (tree input) and their scores: the training part's out-of-fold scores.
    base : int
        The sqrt rule's leaf for these rows; the candidates are its multiples ``SIGMA_LEAF_FACTORS``.
    max_features : int, float or str
        Passed to each candidate forest (``"screened"`` is read as every column).
    random_state : int or None
        The forests' seed (one for every candidate, so they differ by their leaves only).
    n_jobs : int or None
        Threads for growing the forests.

    Returns
    -------
    SigmaLeafChoice

    Examples
    --------
    >>> import numpy as np
    >>> from confrf.localizers.sigma_leaf import choose_sigma_leaf
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(400, 2))
    >>> V = np.abs(rng.normal(size=400)) * (0.2 + np.abs(X[:, 0]))
    >>> choice = choose_sigma_leaf(X, V, base=20, max_features=1.0, random_state=0)
    >>> choice.candidates
    (14, 20, 28, 40, 57)
    >>> choice.chosen in choice.candidates
    True
    """
    candidates = sigma_leaf_candidates(X.shape[0], base)
    mf = 1.0 if isinstance(max_features, str) else max_features
    losses = []
    for leaf in candidates:
        forest = RandomForestRegressor(
            n_estimators=SIGMA_LEAF_TREES,
            min_samples_leaf=leaf,
            max_features=mf,
            bootstrap=True,
            oob_score=True,
            random_state=random_state,
            n_jobs=n_jobs,
        ).fit(X, V)
        losses.append(float(np.mean((V - forest.oob_prediction_) ** 2)))
    best = int(np.argmin(losses))  # the first minimum: the smallest such leaf
    return SigmaLeafChoice(candidates[best], tuple(candidates), tuple(losses))
