"""``confrf predict``: intervals, quantiles or p-values for new rows from a saved fit."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    pass

from .common import UsageError, _step
from .files import _check_input, _check_output, _read_csv, _read_ids
from .output import _max_width_option, _predict_levels, _write_predictions


# -- predict with a saved fit ------------------------------------------------------------
def predict(args: argparse.Namespace) -> int:
    from ..exceptions import ConfrfError
    from ..persist import load_fit

    for path, option in ((args.fit, "--fit"), (args.newdata, "--newdata")):
        _check_input(path, option)
    if args.out:
        _check_output(args.out)
    try:
        res = load_fit(args.fit)
    except ConfrfError as exc:
        raise UsageError(f"--fit {exc}") from None
    newdata = _read_csv(args.newdata, "--newdata")
    ids = _read_ids(args.newdata, args.id, newdata) if args.id else None
    with _step(f"predicting {len(newdata)} rows with the saved {res.method} fit"):
        if args.quantiles:
            if args.levels or args.max_width is not None:
                raise UsageError("--quantiles gives quantiles instead of intervals: drop --level/--alpha/--max-width")
            import pandas as pd  # not at the top: --help imports nothing heavy

            taus = [float(q) for q in args.quantiles]
            pred = pd.concat(
                [res.predict(newdata, interval="none"), res.predict(newdata, type="quantile", q=taus)], axis=1
            )
        else:
            pred = _predict_levels(res, newdata, args.levels, **_max_width_option(res, args))
        if args.pvalue:
            pred["p_value"] = res.pvalue(newdata).to_numpy()
    _write_predictions(pred, args, ids)
    if args.summary:
        print(res.summary(), file=sys.stderr)
    return 0
