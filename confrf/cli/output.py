"""Predictions at one or several levels, written as CSV (a file or stdout)."""

from __future__ import annotations

import argparse
import sys
from decimal import Decimal
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

from .common import PROG, UsageError, _say

# -- predictions at one or several levels ------------------------------------------------
#: predict columns that do not depend on the level: written once, first
_SHARED = ("fit", "group", "pred")


def level_label(level: Decimal) -> str:
    """A level as a percentage without float noise, for column names: 0.9 -> "90", 0.975 -> "97.5"."""
    text = format(level * 100, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _predict_levels(res: Any, newdata: pd.DataFrame, levels: list[Decimal] | None, **kwargs: Any) -> pd.DataFrame:
    """One row per input row: one level as ``lwr``, ``upr``; several as ``lwr_90``, ``upr_90``, ``lwr_95``, ...

    The suffix is the level in percent (R's forecast package names such columns
    "Lo 90"/"Hi 90"); each level's interval comes from the same fit.
    """
    from ..results.base import _multi_alpha_frame

    if not levels:
        return res.predict(newdata, **kwargs)
    alphas = [float(1 - lv) for lv in levels]
    if len(levels) == 1:
        return res.predict(newdata, alphas[0], **kwargs)
    frames = [res.predict(newdata, a, **kwargs) for a in alphas]
    return _multi_alpha_frame(frames, alphas, shared=_SHARED, suffixes=[level_label(lv) for lv in levels])


def _write_predictions(pred: pd.DataFrame, args: argparse.Namespace, ids: pd.Series | None) -> None:
    if ids is not None:
        if ids.name in pred.columns:
            raise UsageError(
                f"--id {ids.name}: the output already has a column {ids.name!r}; rename the id column in the file"
            )
        pred = pred.reset_index(drop=True)
        pred.insert(0, str(ids.name), ids.to_numpy())
        options: dict[str, Any] = {"index": False}
    else:
        options = {"index_label": "row"}
    if args.out:
        try:
            pred.to_csv(args.out, **options)
        except OSError as exc:
            raise UsageError(f"--out {args.out}: {exc.strerror or exc}") from None
        _say(f"{PROG}: wrote {len(pred)} rows to {args.out}")
    else:
        pred.to_csv(sys.stdout, **options)


def _max_width_option(res: Any, args: argparse.Namespace) -> dict[str, Any]:
    if args.max_width is None:
        return {}
    if type(res).__name__ == "ClassificationResult":
        raise UsageError(
            f"--max-width is the reject option of prediction intervals, but {res.formula!r} has a class-label "
            "response, which gives prediction sets; drop --max-width (the 'size' column says how many classes "
            "each set holds)."
        )
    return {"max_width": args.max_width}
