"""What every forest-based method shares: the localizer built from an estimator's settings,
and the option names of the training-conditional (PAC) calibration.

Kept apart from the calibrators so that LCP-RF, the PAC methods and the groupwise methods
can all use it without importing one another.
"""

from __future__ import annotations

from typing import Any

from ..localizers.forest import ForestLocalizer

#: defaults of the PAC options (``None`` in a method's options means these; for pac_bound,
#: grid_size and pac_form, None lets calibrators/pac.py:resolve_pac_options decide)
PAC_DEFAULTS: dict[str, Any] = {"delta": 0.1, "pac_size": 1 / 3, "pac_bound": None, "grid_size": None,
                                "pac_form": None}


def make_forest_localizer(est: Any, seed: int | None) -> ForestLocalizer:
    """The forest localizer configured by an estimator's shared forest settings."""
    return ForestLocalizer(
        n_estimators=est.n_estimators, min_samples_leaf=est.min_samples_leaf, max_features=est.max_features,
        max_depth=est.max_depth, honest=est.honest, random_state=seed, n_jobs=est.n_jobs,
    )
