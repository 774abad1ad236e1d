"""What a forest localizer tells a summary: its settings, leaf sizes, tuning and timings, or why it did not localize.

:meth:`confrf.localizers.forest.ForestLocalizer.describe` and ``localization_note`` call these.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .tuning import TUNE

if TYPE_CHECKING:  # pragma: no cover - forest.py imports this module
    from .forest import ForestLocalizer


def _sigma_leaf(loc: ForestLocalizer) -> str:
    """'; ' and how sigma(x)'s leaf was chosen, or '' (a pickle from before the choice existed)."""
    choice = getattr(loc, "sigma_leaf_", None)
    return f"; {choice.text()}" if choice is not None else ""


def localization_note(loc: ForestLocalizer) -> str | None:
    """The summary's plain words when no localization was chosen (or only sigma(x) was kept), else None."""
    if not loc.pooled:
        return None
    n = loc.index_.n if loc.index_ is not None else None
    if loc.normalized:
        on = f" over the {n} conformal points" if n is not None else ""
        return (
            f"normalized split conformal ({loc.normalized_}): every conformal point weighs the same, and the "
            f"thresholds are sigma(x) times split conformal's quantile of V / sigma(x){on}, sigma(x) the forest's "
            f"prediction of the score (grown on {loc.n_grow_:,} rows{_sigma_leaf(loc)})"
        )
    skipped = getattr(loc, "skipped_", None)
    if skipped:
        every = f" on all {n} calibration points" if n is not None else ""
        return f"no localization ({skipped}): the intervals are split conformal's{every}"
    on = f" on the {n} conformal points" if n is not None else ""
    if loc.tuning_ is None:
        return (
            f"no localization: min_samples_leaf={loc.min_samples_leaf} puts every point in one leaf, so the "
            f"intervals are split conformal's{on}"
        )
    if loc.tuning_.reason:
        return f"localization could not be tried ({loc.tuning_.reason}): the intervals are split conformal's{on}"
    return (
        f"localization did not pay on this data: the intervals are split conformal's{on} (no candidate forest "
        "beat the tuning's no-localization candidate, every localizer point in one leaf)"
    )


def _leaf_rule(loc: ForestLocalizer) -> str:
    tuned = [k for k in ("min_samples_leaf", "max_features", "scale") if getattr(loc, k, None) == TUNE]
    if tuned:
        return (
            f"{' and '.join(tuned)} tuned on the localizer part only (the conformal points are not "
            "used, so the guarantee stays exact)"
        )
    if loc.min_samples_leaf == "auto":
        return "auto: ceil(sqrt(n_localizer))"
    return "given"


def describe_forest(loc: ForestLocalizer) -> dict[str, Any]:
    """Forest settings and leaf-size facts for summaries."""
    if loc.no_localization:
        out: dict[str, Any] = {
            "note": localization_note(loc),
            "n_estimators": "0 (no forest grown)",
            "min_samples_leaf": (
                "- (no localizer part)"
                if getattr(loc, "skipped_", None)
                else f"{loc.min_samples_leaf_} (every localizer point in one leaf)"
            ),
            "settings_rule": "none (no localizer part)" if getattr(loc, "skipped_", None) else _leaf_rule(loc),
            "honest": loc.honest,
        }
        if loc.tuning_ is not None:
            out["tuning_(leaf/max_features/scale: mean half interval score; *: chosen)"] = loc.tuning_.text()
        if loc.tune_seconds_ is not None:
            out["time_tuning"] = f"{loc.tune_seconds_:.2f} s"
        return out
    # a normalized localizer's index is one tree of one leaf, but sigma(x) averages the whole forest
    trees = len(loc.forest_.estimators_) if loc.normalized and loc.forest_ is not None else loc.n_trees
    out = {
        "n_estimators": (
            f"{trees} (auto)" if loc.n_estimators == "auto" and loc.forest_ is not None else loc.n_estimators
        ),
        "min_samples_leaf": loc.min_samples_leaf_,
        "settings_rule": _leaf_rule(loc),
        "max_features": (
            f"screened: all of columns {loc.columns_.tolist()} ({loc.columns_.size} of {loc.n_columns_})"
            if loc.columns_ is not None
            else loc.max_features_
        ),
        "score_scale": (
            "V / sigma(x), sigma the forest's prediction of the score" if loc.scaled else "none (raw scores)"
        ),
        **(
            {"weights": "uniform (normalized split conformal)", "note": localization_note(loc)}
            if loc.normalized
            else {}
        ),
        "max_depth": loc.max_depth,
        "bootstrap": loc.bootstrap,
        "honest": loc.honest,
    }
    if loc.index_ is not None and not loc.normalized:  # a normalized index is one leaf of every conformal point
        sizes = loc.leaf_sizes()
        out["leaf_size_min"] = int(sizes.min()) if sizes.size else 0
        out["leaf_size_median"] = float(np.median(sizes)) if sizes.size else 0.0
    # growing is scikit-learn's work; the O(n k) index of the conformal points is ours
    if loc.tuning_ is not None:
        out["tuning_(leaf/max_features/scale: mean half interval score; *: chosen)"] = loc.tuning_.text()
    if loc.tune_seconds_ is not None:
        out["time_tuning"] = f"{loc.tune_seconds_:.2f} s"
    if loc.grow_seconds_ is not None:
        out["time_growing"] = f"{loc.grow_seconds_:.2f} s"
    if loc.index_seconds_ is not None:
        out["time_indexing_O(nk)"] = f"{loc.index_seconds_:.2f} s"
    return out
