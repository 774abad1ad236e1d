"""``confrf demo``: SPLIT and LCP-RF on embedded California housing, compared on held-out rows."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

from .common import PROG, _say, _step


# -- held-out comparison (the demo) -------------------------------------------------
def _held_out(res: Any, test: pd.DataFrame) -> dict[str, float]:
    """Coverage and widths of a regression fit on held-out rows."""
    import numpy as np

    p = res.predict(test)
    y = res.design.response(test)
    width = (p["upr"] - p["lwr"]).to_numpy()
    finite = np.isfinite(width)
    return {
        "coverage": float(np.mean((y >= p["lwr"]) & (y <= p["upr"]))),
        "mean width": float(width[finite].mean()) if finite.any() else float("inf"),
        "sd width": float(width[finite].std()) if finite.any() else float("nan"),
        "width q10": float(np.quantile(width, 0.1)),
        "width q90": float(np.quantile(width, 0.9)),
        "infinite": int((~finite).sum()),
    }


def _widths_phrase(row: pd.Series) -> str:
    from .._format import format_number

    if row["sd width"] <= 1e-9 * max(1.0, abs(row["mean width"])):
        return f"one width for every row ({format_number(row['mean width'], 3)})"
    return (
        f"widths that adapt to the row ({format_number(row['width q10'], 3)} to {format_number(row['width q90'], 3)} "
        f"between the 10% and 90% quantiles, mean {format_number(row['mean width'], 3)})"
    )


def _result_sentence(table: pd.DataFrame, names: dict[str, str], n_test: int, alpha: float) -> str:
    from .._format import format_percent

    parts = [
        f"{names[m]} covers {format_percent(row['coverage'])} with {_widths_phrase(row)}" for m, row in table.iterrows()
    ]
    return f"On {n_test} held-out rows, target coverage {format_percent(1 - alpha)}: " + "; ".join(parts) + "."


def demo(args: argparse.Namespace) -> int:
    import numpy as np
    import pandas as pd

    import confrf as cf

    from .._format import format_value

    df = cf.datasets.load_california()
    rng = np.random.default_rng(args.random_state)
    is_test = rng.random(len(df)) < 0.2
    train, test = df[~is_test], df[is_test]
    formula = "MedHouseVal ~ ."
    names = {"split": "SPLIT", "lcp-rf": "LCP-RF"}
    _say(
        f"{PROG} demo: SPLIT vs LCP-RF on California housing (embedded), {len(train)} rows to fit, "
        f"{len(test)} held out, alpha = {format_value(args.alpha)}"
    )
    results, rows = {}, {}
    for method in names:
        with _step(f"{names[method]}: fitting, then predicting the held-out rows"):
            results[method] = cf.conformal(
                formula, data=train, method=method, alpha=args.alpha, random_state=args.random_state, n_jobs=args.n_jobs
            )
            rows[method] = _held_out(results[method], test)
    table = pd.DataFrame(rows).T.astype({"infinite": int})
    print(f"Held-out comparison ({len(test)} rows, target coverage {format_value(1 - args.alpha)}):")
    print(table.rename(index=names).to_string(formatters={c: format_value for c in table.columns}))
    print()
    print(_result_sentence(table, names, len(test), args.alpha))
    if args.summary:
        print()
        print(results["lcp-rf"].summary())
    else:
        print()
        print("Full report of the LCP-RF fit (set-up, guarantee, calibration diagnostics, assumption checks):")
        print(f"  {PROG} demo --summary")
    return 0
