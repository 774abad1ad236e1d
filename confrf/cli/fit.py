"""``confrf fit``: fit on CSV files; write intervals for new rows, save the fit, or both."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

from .common import UsageError, _step
from .files import _check_input, _check_output, _read_csv, _read_ids
from .output import _max_width_option, _predict_levels, _write_predictions


# -- fit on CSV files ---------------------------------------------------------------
def _method_options(args: argparse.Namespace) -> dict[str, Any]:
    """Method options given on the command line (the rest keep the library's defaults), checked against --method."""
    from ..calibrators import METHODS

    given = {"groups": args.groups, "guarantee": args.guarantee, "delta": args.delta, "scale": args.scale}
    given["cv"] = args.cv
    given = {k: v for k, v in given.items() if v is not None}
    for name in given:
        if name not in METHODS[args.method].options:
            takers = ", ".join(sorted(m for m, spec in METHODS.items() if name in spec.options))
            raise UsageError(f"--{name} does not apply to --method {args.method}; it applies to --method {takers}")
    return given


def _check_prediction_options(args: argparse.Namespace) -> None:
    if args.newdata is None:
        for option, value in (("--out", args.out), ("--id", args.id), ("--max-width", args.max_width)):
            if value is not None:
                raise UsageError(f"{option} is about predictions: give --newdata (the rows to predict) with it")


def _shift_options(
    args: argparse.Namespace, data: pd.DataFrame, calib: pd.DataFrame | None, newdata: pd.DataFrame | None
) -> dict[str, Any]:
    """--shift (target rows: the ratio is estimated) or --likelihood-ratio (a known ratio), checked early."""
    from ..exceptions import ConfrfError

    if args.shift and args.likelihood_ratio:
        raise UsageError(
            "give either --shift (target rows; the likelihood ratio is estimated) or --likelihood-ratio (a known "
            "ratio column), not both"
        )
    if args.likelihood_ratio:
        from ..formula.row_values import evaluate_expression

        ratio = args.likelihood_ratio
        frames = [(calib if calib is not None else data, "--calib" if calib is not None else "--data")]
        frames += [(newdata, "--newdata")] if newdata is not None else []
        for frame, option in frames:
            if ratio in frame.columns:
                continue
            # an expression over columns, as in Python (likelihood_ratio="np.exp(0.08 * age)"): evaluated here
            # only to name a missing column before any fitting; the fit evaluates it again
            try:
                evaluate_expression(
                    ratio,
                    frame,
                    {},
                    option="--likelihood-ratio",
                    what=option,
                    fix="The ratio (a column or an expression over columns) is needed for the calibration rows and "
                    "for every row to predict.",
                )
            except ConfrfError as exc:
                raise UsageError(str(exc).replace("--likelihood-ratio=", "--likelihood-ratio ")) from None
        return {"likelihood_ratio": ratio}
    if args.shift:
        return {"shift": _read_csv(args.shift, "--shift")}
    return {}


def fit(args: argparse.Namespace) -> int:
    import confrf as cf
    from confrf.formula.labels import label_column

    _check_prediction_options(args)
    if args.newdata is None and args.save is None and not args.summary:
        raise UsageError(
            "nothing to do with the fit: give --newdata (rows to predict), --save (a file to keep the fit in, "
            "for `confrf predict`) or --summary, or several of them"
        )
    # every file and the output folder are checked before any fitting
    inputs = [(args.data, "--data")] + [(p, o) for p, o in ((args.newdata, "--newdata"), (args.calib, "--calib")) if p]
    inputs += [(args.shift, "--shift")] if args.shift else []
    for path, option in inputs:
        _check_input(path, option)
    if args.out:
        _check_output(args.out)
    if args.save:
        _check_output(args.save, "--save")
    options = _method_options(args)
    data = _read_csv(args.data, "--data")
    calib = _read_csv(args.calib, "--calib") if args.calib else None
    newdata = _read_csv(args.newdata, "--newdata") if args.newdata else None
    ids = _read_ids(args.newdata, args.id, newdata) if args.id else None
    shift = _shift_options(args, data, calib, newdata)

    if args.max_width is not None and label_column(args.formula, data) is not None:  # before any fitting
        raise UsageError(
            f"--max-width is the reject option of prediction intervals, but {args.formula!r} has a "
            "class-label response, which gives prediction sets; drop --max-width (the 'size' column "
            "says how many classes each set holds)."
        )
    with _step(f"fitting {args.method} on {len(data)} rows"):
        res = cf.conformal(
            args.formula,
            data=data,
            method=args.method,
            alpha=args.alpha,
            model=args.model,
            calib=calib,
            random_state=args.random_state,
            n_jobs=args.n_jobs,
            **({"score": args.score} if args.score else {}),
            **({"na_action": args.na_action} if args.na_action else {}),
            **options,
            **shift,
        )
    if args.save:
        with _step(f"saving the fit to {args.save}"):
            _save(res, args.save)
    if newdata is not None:
        with _step(f"predicting {len(newdata)} rows"):
            pred = _predict_levels(
                res, newdata, args.levels if len(args.levels) > 1 else None, **_max_width_option(res, args)
            )
        _write_predictions(pred, args, ids)
    if args.summary:
        print(res.summary(), file=sys.stderr)
    return 0


def _save(res: Any, path: str) -> None:
    from ..exceptions import ConfrfError
    from ..persist import save_fit

    try:
        save_fit(res, path)
    except OSError as exc:
        raise UsageError(f"--save {path}: {exc.strerror or exc}") from None
    except ConfrfError as exc:
        raise UsageError(f"--save {path}: {exc}") from None
