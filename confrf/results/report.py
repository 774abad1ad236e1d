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
from ..localizers.tuning import ForestTuning
from ..models import model_name
from .diagnostics import assumption_checks

if TYPE_CHECKING:  # pragma: no cover
    from .base import ResultBase
    from .result import ConformalResult

    #: what the shared report sections read: a regression or a classification result (both derive from
    #: ResultBase, so this folder never names the classification family)
    AnyResult: TypeAlias = ResultBase


def method_title(result: ResultBase) -> str:
    return getattr(result, "title", None) or get_method(result.method).title or result.method


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
    s.add_section("calibration", frame_table(diag.table, title="Calibration diagnostics"), diag.table)
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
    formula = textwrap.shorten(result.formula, width=WIDTH - 2, placeholder=" ...")
    parts = ", ".join(f"{k}={v}" for k, v in result.nobs.items())
    return "\n".join(
        [
            f"{method_title(result)}, alpha={result.alpha:g}",
            f"  {formula}",
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
