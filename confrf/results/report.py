"""The sections of ``ConformalResult.summary()`` and the short ``print(result)``.

Section order (docs/summary.md explains each): header (formula, set-up,
data parts, localizer settings), guarantee, method-specific sections
(groups, PAC), calibration diagnostics, asymptotic-assumption checks, last
predict.
"""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING, Any, TypeAlias

import pandas as pd

from .._tables import WIDTH, Summary, _fmt, frame_table, text_table, two_column_table
from ..calibrators import get_method
from ..localizers.forest import ForestLocalizer
from ..localizers.tuning import TUNE, ForestTuning
from ..models import model_name
from .diagnostics import assumption_checks, shown_levels

if TYPE_CHECKING:  # pragma: no cover
    from .base import ResultBase
    from .result import ConformalResult

    #: what the shared report sections read: a regression or a classification result (both derive from
    #: ResultBase, so this folder never names the classification family)
    AnyResult: TypeAlias = ResultBase


def no_localization(result: ResultBase) -> str | None:
    """Why a forest method localizes nothing (every point in one leaf), or None when it localizes.

    The tuning may choose no localization, and the small-data size rule skips the forest; the
    weights are then uniform, so the thresholds are split conformal's (PAC: the uniform weights'
    training-conditional ones). Titles and plots say so, not only a note deep in the summary.
    """
    loc = _forest_localizer(result)
    if loc is None or not loc.no_localization:
        return None
    if getattr(loc, "skipped_", None):
        return "size rule"
    # the tuning compares no localization only when it chooses the leaf size; a given leaf size holding every point
    return "tuning's choice" if loc.min_samples_leaf == TUNE else "one leaf"


def _unlocalized_result(result: ResultBase) -> str:
    """What the intervals (or sets) are when nothing is localized (``level_columns``: a classification result)."""
    if result.guarantee.kind == "pac":
        return "uniform weights"
    split = "SPLIT-G's" if result.method.endswith("-g") else "split conformal's"  # within each group
    return f"{split} sets" if hasattr(result, "level_columns") else f"{split} intervals"


def _forest_localizer(result: ResultBase) -> ForestLocalizer | None:
    loc = getattr(getattr(result.estimator, "calibrator_", None), "localizer", None)
    return loc if isinstance(loc, ForestLocalizer) else None


def _normalized(result: ResultBase) -> bool:
    """Whether the forest gives sigma(x) only and the weights are uniform (normalized split conformal)."""
    loc = _forest_localizer(result)
    return loc is not None and loc.normalized


#: what a normalized forest localizer's titles say instead of localized weights
NORMALIZED = "normalized split conformal (forest sigma(x), uniform weights)"


def method_title(result: ResultBase) -> str:
    """The report's title; says "no localization" when the forest method's weights are uniform."""
    why = no_localization(result)
    if why is not None:
        return f"{result.method.upper()}, no localization ({why}): {_unlocalized_result(result)}"
    if _normalized(result):
        return f"{result.method.upper()}, {NORMALIZED}"
    return getattr(result, "title", None) or get_method(result.method).title or result.method


def method_label(result: ResultBase) -> str:
    """The method's name for plot titles, with "no localization" when the weights are uniform."""
    why = no_localization(result)
    if why is None:
        return f"{result.method} ({NORMALIZED})" if _normalized(result) else result.method
    return f"{result.method} (no localization: {_unlocalized_result(result)})"


def add_header(s: Summary, result: AnyResult) -> None:
    """Sections "formula", "setup", "localizer" and "guarantee"."""
    est = result.estimator
    s.add_section(
        "formula",
        text_table([f"Formula: {result.formula}"], title=method_title(result)),
        pd.DataFrame({"value": {"formula": result.formula}}),
    )
    left = [
        ("Method", result.method),
        ("Score", est.score_.name),
        ("Base model", getattr(result, "model_title", None) or model_name(est.model_ if est.prefit else est.model)),
        ("alpha", result.alpha),
        ("Target coverage", 1 - result.alpha),
        ("random_state", result.random_state),
    ]
    right = [("Design columns", len(result.design.column_names))]
    right += [(f"No. {k}", v) for k, v in result.nobs.items()]
    if result.design.n_dropped:
        right.append(("Rows dropped (NA)", result.design.n_dropped))
    pad = [("", "")] * abs(len(left) - len(right))
    items = (left + pad * (len(left) < len(right))) + (right + pad * (len(right) < len(left)))
    s.add_section("setup", two_column_table(items), pd.DataFrame({"value": dict(left + right)}))

    settings = est.calibrator_.describe()
    cols = getattr(getattr(est.calibrator_, "localizer", None), "columns_", None)
    names = list(result.design.column_names)
    if settings and cols is not None and len(names) == est.calibrator_.localizer.n_columns_:
        # max_features="screened": the kept columns by their design names
        kept = ", ".join(names[j] for j in cols)
        settings["max_features"] = f"screened: {kept} ({len(cols)} of {len(names)} columns)"
    if settings:
        title = getattr(est.calibrator_, "localizer_title", "Forest localizer")
        items = [(_setting_name(k), _setting_value(k, v)) for k, v in settings.items()]
        # an item too long for half the width goes on its own line below the table
        fits = [len(k) + len(_fmt(v)) + 2 <= (WIDTH - 9) // 2 for k, v in items]
        s.add_section(
            "localizer",
            two_column_table([i for i, f in zip(items, fits) if f], title=title),
            pd.DataFrame({"value": settings}),
        )
        long = [f"{k}: {_fmt(v)}" for (k, v), f in zip(items, fits) if not f]
        if long:
            s.tables.append(text_table(long))
        tuning = getattr(getattr(est.calibrator_, "localizer", None), "tuning_", None)
        if isinstance(tuning, ForestTuning):  # the candidates of min_samples_leaf/max_features="tune", tidy
            s.frames["tuning"] = tuning.table()

    g = result.guarantee
    s.add_section(
        "guarantee",
        text_table([g.sentence], title=f"Guarantee ({'certified' if g.certified else 'NOT certified'}): {g.kind}"),
        pd.DataFrame({"value": {"kind": g.kind, "certified": g.certified, "statement": g.sentence}}),
    )


def add_diagnostics(s: Summary, result: ConformalResult, *, beta: float, tree_exponent: float) -> None:
    """Sections "calibration" (and "calibration_facts") and "assumptions"."""
    diag = result._calibration_diagnostics
    s.add_section("calibration", frame_table(shown_levels(diag.table), title="Calibration diagnostics"), diag.table)
    facts = diag.facts()
    s.frames["calibration_facts"] = pd.DataFrame({"value": facts})
    s.tables.append(
        text_table(
            diag.notes
            + [
                f"Infinite intervals on the calibration rows: {diag.n_infinite} of {diag.n_rows} "
                f"({diag.share_infinite:.1%})."
            ]
        )
    )
    add_assumptions(s, result, beta=beta, tree_exponent=tree_exponent)


def add_assumptions(s: Summary, result: AnyResult, *, beta: float, tree_exponent: float) -> None:
    """Section "assumptions": the checks of the paper's asymptotic conditional coverage."""
    checks = assumption_checks(result.estimator, result.alpha, beta=beta, tree_exponent=tree_exponent)
    title = "Assumption checks (asymptotic conditional coverage)"
    intro = (
        "These checks concern the paper's asymptotic conditional coverage (section 'Asymptotic conditional "
        "coverage'); the guarantee above does not depend on them."
    )
    if checks is None:
        s.tables.append(
            text_table(
                [
                    f"Not applicable: method {result.method!r} has no forest localizer and no "
                    "groups; Assumptions 1-3 concern LCP-RF's forest weights."
                ],
                title=title,
            )
        )
        return
    shown = checks.table.set_index("assumption")[["check", "value", "reference", "status"]]
    shown.index.name = None
    s.add_section("assumptions", frame_table(shown, title=title, aligns="lrll"), checks.table)
    s.frames["assumption_status"] = pd.DataFrame({"status": checks.status})
    s.frames["assumption_notes"] = pd.DataFrame({"note": [intro] + checks.notes})
    s.tables.append(text_table([intro] + checks.notes))


def short_text(result: ResultBase) -> str:
    """A few lines for ``print(result)``."""
    g = result.guarantee
    # the whole formula, wrapped (never cut: after update(". ~ . - x") the new one must be seen)
    formula = textwrap.wrap(
        result.formula,
        width=WIDTH,
        initial_indent="  ",
        subsequent_indent="      ",
        break_long_words=False,
        break_on_hyphens=False,
    )
    parts = ", ".join(f"{k}={v}" for k, v in result.nobs.items())
    return "\n".join(
        [
            f"{method_title(result)}, alpha={result.alpha:g}",
            *formula,
            f"  data: {parts}",
            f"  guarantee: {g.kind}, {'certified' if g.certified else 'NOT certified'}",
            "  .summary() for the full report, .evaluate(test_data) for held-out diagnostics",
        ]
    )


def _setting_name(key: str) -> str:
    # option names stay as the user types them; derived facts get words
    return key if key in {"n_estimators", "min_samples_leaf", "max_features", "max_depth"} else key.replace("_", " ")


def _setting_value(key: str, v: Any) -> Any:
    if key == "max_features":
        if v is None or (isinstance(v, float) and v == 1.0):
            return f"{_fmt(v) if v is not None else 'None'} (all features)"
        if isinstance(v, float):
            return f"{_fmt(v)} (share of features)"
        if isinstance(v, int):
            return f"{v} (features)"
    if key == "max_depth" and v is None:
        return "None (unlimited)"
    return v
