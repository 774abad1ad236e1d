"""Command line: ``confrf demo`` and ``confrf fit ...`` (``python -m confrf`` runs the same).

Errors follow the convention of argparse tools: ``confrf: error: ...`` on
stderr, exit status 2, no traceback. Input files and the output folder are
checked before anything is fitted. Progress goes to stderr one whole line at
a time, so an error or a progress bar never lands at the end of a progress line.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from decimal import Decimal, InvalidOperation
from typing import Any

import numpy as np
import pandas as pd

PROG = "confrf"


class UsageError(Exception):
    """A problem with the command line or its files: reported as ``confrf: error: ...``, exit status 2."""


# -- progress and messages ---------------------------------------------------------
def _say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


@contextmanager
def _step(msg: str) -> Iterator[None]:
    """Announce a step on its own line and its time when it is done."""
    t0 = time.perf_counter()
    _say(f"{PROG}: {msg} ...")
    yield
    _say(f"{PROG}:   done in {time.perf_counter() - t0:.1f} s")


def _show_warning(
    message: Any, category: type, filename: str, lineno: int, file: Any = None, line: str | None = None
) -> None:
    _say(f"{PROG}: warning: {message}")


# -- argument types and file checks --------------------------------------------------
def _probability(text: str) -> Decimal:
    """A number in (0, 1), kept exact: --level 0.9 gives alpha 0.1 exactly, not 0.09999999999999998."""
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1), got {text!r}") from None
    if not (value.is_finite() and 0 < value < 1):
        raise argparse.ArgumentTypeError(f"must be in (0, 1), got {text}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text}")
    return value


def _n_jobs(text: str) -> int:
    from ._validation import check_n_jobs
    from .exceptions import InputError

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be an integer (1, 2, ... threads; -1: all cores), got {text!r}"
        ) from None
    try:
        return check_n_jobs(value)  # the library's own rule
    except InputError:
        raise argparse.ArgumentTypeError(
            f"{value} is not a number of threads; use 1, 2, ... or -1 for all cores"
        ) from None


def _check_input(path: str, option: str) -> None:
    if not os.path.exists(path):
        raise UsageError(f"{option} {path}: no such file")
    if os.path.isdir(path):
        raise UsageError(f"{option} {path}: is a directory; give a CSV file")
    if not os.access(path, os.R_OK):
        raise UsageError(f"{option} {path}: permission denied")


def _check_output(path: str) -> None:
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise UsageError(f"--out {path}: is a directory; give a file name such as {os.path.join(path, 'pred.csv')}")
    if not os.path.isdir(folder):
        raise UsageError(f"--out {path}: the folder {folder} does not exist; create it first or write elsewhere")
    if not os.access(folder, os.W_OK):
        raise UsageError(f"--out {path}: the folder {folder} is not writable")


def _read_csv(path: str, option: str) -> pd.DataFrame:
    try:
        frame = pd.read_csv(path)
    except pd.errors.EmptyDataError:
        raise UsageError(
            f"{option} {path}: the file is empty; a CSV file starts with a header line of column names"
        ) from None
    except UnicodeDecodeError as exc:
        raise UsageError(
            f"{option} {path}: not a readable CSV file (not UTF-8 text: {exc.reason}); save it as UTF-8 text"
        ) from None
    except pd.errors.ParserError as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UsageError(f"{option} {path}: not a readable CSV file ({reason})") from None
    except OSError as exc:
        raise UsageError(f"{option} {path}: {exc.strerror or exc}") from None
    if frame.empty:
        raise UsageError(f"{option} {path}: the file has a header line but no data rows")
    if frame.shape[1] == 1:  # a ;- or tab-separated file reads as one column named "x;g;y"
        sep = next((c for c in (";", "\t", "|") if c in str(frame.columns[0])), None)
        if sep is not None:
            raise UsageError(
                f"{option} {path}: the header {str(frame.columns[0])!r} reads as a single column: the "
                f"file seems separated by {sep!r}, not commas; save it as comma-separated CSV"
            )
    return frame


# -- held-out comparison (the demo) -------------------------------------------------
def _held_out(res: Any, test: pd.DataFrame) -> dict[str, float]:
    """Coverage and widths of a regression fit on held-out rows."""
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
    if row["sd width"] <= 1e-9 * max(1.0, abs(row["mean width"])):
        return f"one width for every row ({row['mean width']:.2f})"
    return (
        f"widths that adapt to the row ({row['width q10']:.2f} to {row['width q90']:.2f} between the 10% "
        f"and 90% quantiles, mean {row['mean width']:.2f})"
    )


def _result_sentence(table: pd.DataFrame, names: dict[str, str], n_test: int, alpha: float) -> str:
    parts = [f"{names[m]} covers {row['coverage']:.1%} with {_widths_phrase(row)}" for m, row in table.iterrows()]
    return f"On {n_test} held-out rows, target coverage {100 * (1 - alpha):g}%: " + "; ".join(parts) + "."


def demo(args: argparse.Namespace) -> int:
    import confrf as cf

    df = cf.datasets.load_california()
    rng = np.random.default_rng(args.random_state)
    is_test = rng.random(len(df)) < 0.2
    train, test = df[~is_test], df[is_test]
    formula = "MedHouseVal ~ ."
    names = {"split": "SPLIT", "lcp-rf": "LCP-RF"}
    _say(
        f"{PROG} demo: SPLIT vs LCP-RF on California housing (embedded), {len(train)} rows to fit, "
        f"{len(test)} held out, alpha = {args.alpha:g}"
    )
    results, rows = {}, {}
    for method in names:
        with _step(f"{names[method]}: fitting, then predicting the held-out rows"):
            results[method] = cf.conformal(
                formula, data=train, method=method, alpha=args.alpha, random_state=args.random_state, n_jobs=args.n_jobs
            )
            rows[method] = _held_out(results[method], test)
    table = pd.DataFrame(rows).T.astype({"infinite": int})
    print(f"Held-out comparison ({len(test)} rows, target coverage {1 - args.alpha:g}):")
    print(table.rename(index=names).to_string(float_format=lambda v: f"{v:.4f}"))
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


# -- fit on CSV files ---------------------------------------------------------------
def _method_options(args: argparse.Namespace) -> dict[str, Any]:
    """Method options given on the command line (the rest keep the library's defaults), checked against --method."""
    from .calibrators import METHODS

    given = {"groups": args.groups, "guarantee": args.guarantee, "delta": args.delta, "scale": args.scale}
    given["cv"] = args.cv
    given = {k: v for k, v in given.items() if v is not None}
    for name in given:
        if name not in METHODS[args.method].options:
            takers = ", ".join(sorted(m for m, spec in METHODS.items() if name in spec.options))
            raise UsageError(f"--{name} does not apply to --method {args.method}; it applies to --method {takers}")
    return given


def fit(args: argparse.Namespace) -> int:
    import confrf as cf
    from confrf.formula.labels import label_column

    # every file and the output folder are checked before any fitting
    inputs = [(args.data, "--data"), (args.newdata, "--newdata")] + ([(args.calib, "--calib")] if args.calib else [])
    for path, option in inputs:
        _check_input(path, option)
    if args.out:
        _check_output(args.out)
    options = _method_options(args)
    data = _read_csv(args.data, "--data")
    calib = _read_csv(args.calib, "--calib") if args.calib else None
    newdata = _read_csv(args.newdata, "--newdata")

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
            **options,
        )
    with _step(f"predicting {len(newdata)} rows"):
        pred = res.predict(newdata, **({} if args.max_width is None else {"max_width": args.max_width}))
    if args.out:
        try:
            pred.to_csv(args.out, index_label="row")
        except OSError as exc:
            raise UsageError(f"--out {args.out}: {exc.strerror or exc}") from None
        _say(f"{PROG}: wrote {len(pred)} rows to {args.out}")
    else:
        pred.to_csv(sys.stdout, index_label="row")
    if args.summary:
        print(res.summary(), file=sys.stderr)
    return 0


# -- parser ---------------------------------------------------------------------------
def _add_level(p: argparse.ArgumentParser) -> None:
    level = p.add_mutually_exclusive_group()
    level.add_argument(
        "--alpha",
        type=_probability,
        default=Decimal("0.1"),
        help="miscoverage level in (0, 1) (default 0.1: intervals cover 90%%)",
    )
    level.add_argument(
        "--level",
        type=_probability,
        default=None,
        help="coverage level in (0, 1), instead of --alpha (--level 0.9 is --alpha 0.1)",
    )


def build_parser() -> argparse.ArgumentParser:
    from .calibrators import METHODS

    parser = argparse.ArgumentParser(prog=PROG, description="Adaptive conformal prediction intervals (LCP-RF).")
    sub = parser.add_subparsers(dest="command", required=True)

    d = sub.add_parser("demo", help="SPLIT and LCP-RF on embedded California housing, compared on held-out rows")
    _add_level(d)
    d.add_argument("--random-state", type=int, default=0)
    d.add_argument("--n-jobs", type=_n_jobs, default=None, help="threads (default: 1; -1: all cores)")
    d.add_argument("--summary", action="store_true", help="also print the full summary of the LCP-RF fit")
    d.set_defaults(func=demo)

    f = sub.add_parser("fit", help="fit on a CSV file and write intervals for new rows")
    f.add_argument("formula", help='e.g. "y ~ x1 + C(group)"')
    f.add_argument("--data", required=True, help="training CSV (with a header line)")
    f.add_argument("--newdata", required=True, help="CSV of rows to predict")
    f.add_argument("--calib", help="calibration CSV (otherwise --data is split)")
    f.add_argument("--method", default="lcp-rf", choices=sorted(METHODS))
    f.add_argument("--model", default="gbm", choices=["gbm", "rf", "ols", "qr", "qgbm", "logit"])
    # a class-label response (string column or C(y)) gives prediction sets: pred, size, one column per class
    f.add_argument(
        "--score",
        default=None,
        choices=["absolute", "quantile", "scaled", "lac", "aps", "raps"],
        help="default: absolute (numeric response), lac (class-label response)",
    )
    _add_level(f)
    f.add_argument(
        "--guarantee",
        choices=["marginal", "pac"],
        help="lcp-rf: 'pac' for training-conditional coverage (with --delta)",
    )
    f.add_argument(
        "--delta",
        type=_probability,
        help="qrf-tc, or lcp-rf with --guarantee pac: the guarantee holds with probability 1 - delta",
    )
    f.add_argument("--groups", help="split-g and lcp-rf-g: 'leiden', 'components', a column name or an expression")
    f.add_argument(
        "--scale",
        choices=["tune", "none", "forest"],
        help="lcp-rf: localize the raw scores (none), the scores over the forest's prediction (forest), "
        "or choose on the localizer part (tune, the default)",
    )
    f.add_argument("--cv", type=int, help="cv+: the number of folds K (default 5; lcp, slcp: out-of-fold folds)")
    f.add_argument(
        "--max-width",
        type=_positive_float,
        help="reject option: add a column 'rejected', True where the interval is wider than this",
    )
    f.add_argument("--random-state", type=int, default=None)
    f.add_argument("--n-jobs", type=_n_jobs, default=None, help="threads (default: 1; -1: all cores)")
    f.add_argument("--out", help="output CSV (default: stdout)")
    f.add_argument("--summary", action="store_true", help="print the summary to stderr")
    f.set_defaults(func=fit)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (2 for an error, after ``confrf: error: ...``)."""
    args = build_parser().parse_args(argv)  # argparse's own errors exit with status 2
    args.alpha = float(1 - args.level if args.level is not None else args.alpha)
    if getattr(args, "delta", None) is not None:
        args.delta = float(args.delta)
    from .exceptions import ConfrfError

    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            return args.func(args)
    except (UsageError, ConfrfError) as exc:
        _say(f"{PROG}: error: {exc}")
        return 2
    except KeyboardInterrupt:
        _say(f"{PROG}: interrupted")
        return 130
    except BrokenPipeError:  # e.g. `confrf fit ... | head`: the reader left; Python's documented remedy
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
