"""Command line: ``confrf demo``, ``confrf fit ...`` and ``confrf predict ...`` (``python -m confrf`` runs the same).

Errors follow the convention of argparse tools: ``confrf: error: ...`` on
stderr, exit status 2, no traceback. Input files and the output folder are
checked before anything is fitted. Progress goes to stderr one whole line at
a time, so an error or a progress bar never lands at the end of a progress line.

Only the standard library is imported at the top: ``confrf fit --help`` does
not wait for NumPy, pandas or scikit-learn (each command imports what it uses).
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
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
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


def _check_output(path: str, option: str = "--out") -> None:
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        example = os.path.join(path, "pred.csv" if option == "--out" else "model.joblib")
        raise UsageError(f"{option} {path}: is a directory; give a file name such as {example}")
    if not os.path.isdir(folder):
        raise UsageError(f"{option} {path}: the folder {folder} does not exist; create it first or write elsewhere")
    if not os.access(folder, os.W_OK):
        raise UsageError(f"{option} {path}: the folder {folder} is not writable")


def _read_csv(path: str, option: str) -> pd.DataFrame:
    import pandas as pd

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


def _read_ids(path: str, column: str, frame: pd.DataFrame) -> pd.Series:
    """The ``--id`` column exactly as written in the file (``007`` stays ``007``), one value per row."""
    import pandas as pd

    if column not in frame.columns:
        raise UsageError(
            f"--id {column}: no such column in --newdata {path}; its columns are {', '.join(map(str, frame.columns))}"
        )
    ids = pd.read_csv(path, usecols=[column], dtype=str, keep_default_na=False)[column]
    if len(ids) != len(frame):  # pragma: no cover - the same file read twice
        raise UsageError(f"--id {column}: reading the column again gave {len(ids)} rows, not {len(frame)}")
    return ids.set_axis(frame.index)


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
    from ._format import format_number

    if row["sd width"] <= 1e-9 * max(1.0, abs(row["mean width"])):
        return f"one width for every row ({format_number(row['mean width'], 3)})"
    return (
        f"widths that adapt to the row ({format_number(row['width q10'], 3)} to {format_number(row['width q90'], 3)} "
        f"between the 10% and 90% quantiles, mean {format_number(row['mean width'], 3)})"
    )


def _result_sentence(table: pd.DataFrame, names: dict[str, str], n_test: int, alpha: float) -> str:
    from ._format import format_percent

    parts = [
        f"{names[m]} covers {format_percent(row['coverage'])} with {_widths_phrase(row)}" for m, row in table.iterrows()
    ]
    return f"On {n_test} held-out rows, target coverage {format_percent(1 - alpha)}: " + "; ".join(parts) + "."


def demo(args: argparse.Namespace) -> int:
    import numpy as np
    import pandas as pd

    import confrf as cf

    from ._format import format_value

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
    from .results.base import _multi_alpha_frame

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


def _check_prediction_options(args: argparse.Namespace) -> None:
    if args.newdata is None:
        for option, value in (("--out", args.out), ("--id", args.id), ("--max-width", args.max_width)):
            if value is not None:
                raise UsageError(f"{option} is about predictions: give --newdata (the rows to predict) with it")


def _shift_options(
    args: argparse.Namespace, data: pd.DataFrame, calib: pd.DataFrame | None, newdata: pd.DataFrame | None
) -> dict[str, Any]:
    """--shift (target rows: the ratio is estimated) or --likelihood-ratio (a known ratio), checked early."""
    from .exceptions import ConfrfError

    if args.shift and args.likelihood_ratio:
        raise UsageError(
            "give either --shift (target rows; the likelihood ratio is estimated) or --likelihood-ratio (a known "
            "ratio column), not both"
        )
    if args.likelihood_ratio:
        from .formula.row_values import evaluate_expression

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
    from .exceptions import ConfrfError
    from .persist import save_fit

    try:
        save_fit(res, path)
    except OSError as exc:
        raise UsageError(f"--save {path}: {exc.strerror or exc}") from None
    except ConfrfError as exc:
        raise UsageError(f"--save {path}: {exc}") from None


# -- predict with a saved fit ------------------------------------------------------------
def predict(args: argparse.Namespace) -> int:
    from .exceptions import ConfrfError
    from .persist import load_fit

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


# -- parser ---------------------------------------------------------------------------
#: the choices of --method and --model, written out so that --help needs no import of the library
#: (tests/test_cli.py checks them against confrf.calibrators.METHODS and the models)
METHOD_NAMES = ("cv+", "jackknife+", "jackknife+ab", "lcp", "lcp-rf", "lcp-rf-g", "qrf-tc", "slcp", "split", "split-g")


class _RegisteredMethods(Sequence[str]):
    """The choices of --method: the calibration registry's names.

    A given value is checked against the registry itself
    (:data:`confrf.calibrators.METHODS`), so a method another module
    registered is accepted; ``--help`` lists the registry once it is loaded,
    and before that the built-in names above, so that it imports no library.
    """

    def _names(self) -> tuple[str, ...]:
        registry = sys.modules.get("confrf.calibrators.registry")
        return METHOD_NAMES if registry is None else tuple(sorted(registry.METHODS))

    def __contains__(self, name: object) -> bool:
        from .calibrators import METHODS  # every built-in method registers itself on this import

        return name in METHODS

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())

    def __getitem__(self, i: Any) -> Any:
        return self._names()[i]


MODEL_NAMES = ("gbm", "rf", "ols", "qr", "qgbm", "logit")
SCORE_NAMES = ("absolute", "quantile", "scaled", "lac", "aps", "raps")


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's help with every option's default, "(default: ...)", where it has one."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if "%(default)" in text or "default:" in text or default in (None, False, argparse.SUPPRESS):
            return text
        if isinstance(default, list):
            default = " ".join(map(str, default))
        return f"{text} (default: {default})" if text else f"(default: {default})"


def _add_level(p: argparse.ArgumentParser, *, several: bool, default_alpha: str | None) -> None:
    """--alpha or --level; ``several``: each takes one or more values (fit, predict); None default: the fit's."""
    level = p.add_mutually_exclusive_group()
    # argparse's "extend" adds to a non-empty default, so the default level is applied after parsing (_levels)
    many: dict[str, Any] = {"nargs": "+", "action": "extend"} if several else {}
    default = f"(default: {default_alpha})" if default_alpha else "(default: the saved fit's)"
    level.add_argument(
        "--alpha",
        type=_probability,
        default=None if several else Decimal(default_alpha or "0.1"),
        metavar="ALPHA",
        help=f"miscoverage level in (0, 1): intervals cover 1 - alpha {default}",
        **many,
    )
    several_help = (
        "; several (--level 0.8 0.95) give the columns lwr_80, upr_80, lwr_95, upr_95 (the level in percent) "
        + ("from one fit, itself at the first level" if default_alpha else "from the one saved fit")
    )
    level.add_argument(
        "--level",
        type=_probability,
        default=None,
        metavar="LEVEL",
        help="coverage level in (0, 1), instead of --alpha (--level 0.9 is --alpha 0.1)"
        + (several_help if several else ""),
        **many,
    )


def _add_prediction_output(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", metavar="CSV", help="output CSV (default: stdout)")
    p.add_argument(
        "--id",
        metavar="COLUMN",
        help="a column of --newdata (e.g. an identifier) written as the first output column, as it is in the "
        "file; without it the first column is 'row' (0, 1, ...: the data row of --newdata)",
    )
    p.add_argument(
        "--max-width",
        type=_positive_float,
        metavar="W",
        help="reject option: add a column 'rejected', True where the interval is wider than W",
    )
    p.add_argument("--n-jobs", type=_n_jobs, default=None, help="threads (default: 1; -1: all cores)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Adaptive conformal prediction intervals (LCP-RF).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=(
            "examples:\n"
            f'  {PROG} fit "y ~ x1 + C(g)" --data train.csv --newdata new.csv --out pred.csv\n'
            f'  {PROG} fit "y ~ x1 + C(g)" --data train.csv --save model.joblib\n'
            f"  {PROG} predict --fit model.joblib --newdata new.csv --level 0.8 0.95 --id id\n"
            f"  {PROG} fit --help"
        ),
    )
    sub = parser.add_subparsers(dest="command", required=True)

    d = sub.add_parser(
        "demo",
        help="SPLIT and LCP-RF on embedded California housing, compared on held-out rows",
        formatter_class=_HelpFormatter,
    )
    _add_level(d, several=False, default_alpha="0.1")
    d.add_argument("--random-state", type=int, default=0, help="seed of the split and the fits")
    d.add_argument("--n-jobs", type=_n_jobs, default=None, help="threads (default: 1; -1: all cores)")
    d.add_argument("--summary", action="store_true", help="also print the full summary of the LCP-RF fit")
    d.set_defaults(func=demo)

    f = sub.add_parser(
        "fit",
        help="fit on a CSV file; write intervals for new rows, save the fit, or both",
        formatter_class=_HelpFormatter,
        description="Fit on a CSV file, then write intervals for the rows of --newdata (CSV, one row per input "
        "row), save the fit for `confrf predict` (--save), print its summary (--summary), or several of these.",
    )
    f.add_argument("formula", help='e.g. "y ~ x1 + C(group)"')
    f.add_argument("--data", required=True, metavar="CSV", help="training CSV (with a header line)")
    f.add_argument("--newdata", metavar="CSV", help="CSV of rows to predict")
    f.add_argument("--calib", metavar="CSV", help="calibration CSV (otherwise --data is split)")
    f.add_argument(
        "--save",
        metavar="FILE",
        help="save the fit to FILE (e.g. model.joblib) for `confrf predict --fit FILE`; it is read by this "
        "confrf version (load only files you trust: they are pickles)",
    )
    f.add_argument("--method", default="lcp-rf", choices=_RegisteredMethods(), help="calibration method")
    f.add_argument(
        "--model",
        default="gbm",
        choices=MODEL_NAMES,
        help="base model: gradient boosting, random forest, OLS or quantile regression (statsmodels), "
        "quantile gradient boosting, logit (class labels)",
    )
    # a class-label response (string column or C(y)) gives prediction sets: pred, size, one column per class
    f.add_argument(
        "--score",
        default=None,
        choices=SCORE_NAMES,
        help="nonconformity score (default: absolute for a numeric response, lac for a class-label response)",
    )
    _add_level(f, several=True, default_alpha="0.1")
    f.add_argument(
        "--guarantee",
        choices=["marginal", "pac"],
        help="lcp-rf, split-g, lcp-rf-g: 'pac' for training-conditional coverage, with --delta (default: marginal)",
    )
    f.add_argument(
        "--delta",
        type=_probability,
        help="qrf-tc, or --guarantee pac: the guarantee holds with probability 1 - delta (default: 0.1)",
    )
    f.add_argument(
        "--groups",
        help="split-g and lcp-rf-g: 'leiden', 'components', a column name or an expression (default: leiden)",
    )
    f.add_argument(
        "--scale",
        choices=["tune", "none", "forest"],
        help="lcp-rf: localize the raw scores (none), the scores over the forest's prediction (forest), "
        "or choose on the localizer part (default: tune)",
    )
    f.add_argument("--cv", type=int, help="cv+: the number of folds K (default 5; lcp, slcp: out-of-fold folds)")
    f.add_argument(
        "--shift",
        metavar="TARGET.csv",
        help="covariate shift: unlabeled rows of the population to predict; the likelihood ratio is estimated "
        "(logistic regression of these rows against the training rows) and the calibration weighted",
    )
    f.add_argument(
        "--likelihood-ratio",
        metavar="COLUMN",
        help="covariate shift: dP_target(x) / dP_calibration(x), a column of --data (or --calib) and --newdata or "
        'an expression over their columns (e.g. "np.exp(0.08 * age)"); the calibration is weighted, exact for '
        "the target population",
    )
    f.add_argument(
        "--na-action",
        choices=["raise", "drop"],
        default=None,
        help="rows of --data (and --calib) with a missing value in a formula variable: 'raise' an error, or "
        "'drop' them at fit (the summary counts them; rows to predict are never dropped) (default: raise)",
    )
    f.add_argument("--random-state", type=int, default=None, help="seed (default: none, a fresh draw each run)")
    _add_prediction_output(f)
    f.add_argument("--summary", action="store_true", help="print the summary to stderr")
    f.set_defaults(func=fit)

    p = sub.add_parser(
        "predict",
        help="intervals for new rows from a fit saved with `confrf fit --save`",
        formatter_class=_HelpFormatter,
        description="Intervals for the rows of --newdata from a fit saved by `confrf fit ... --save FILE` "
        "(or confrf.save_fit in Python), written as CSV, one row per input row.",
    )
    p.add_argument("--fit", required=True, metavar="FILE", help="the saved fit (load only files you trust)")
    p.add_argument("--newdata", required=True, metavar="CSV", help="CSV of rows to predict")
    _add_level(p, several=True, default_alpha=None)
    _add_prediction_output(p)
    p.add_argument(
        "--quantiles",
        nargs="+",
        type=_probability,
        metavar="Q",
        help="conformal quantiles at these levels instead of intervals (columns q_0.1, ...): "
        "P(Y <= Q_tau(X)) >= tau exactly, no crossing (methods split and lcp-rf)",
    )
    p.add_argument(
        "--pvalue",
        action="store_true",
        help="add a column p_value: each row's conformal p-value (needs the response in --newdata); "
        "the row's response is in the interval at level 1 - a iff p_value > a",
    )
    p.add_argument("--summary", action="store_true", help="print the saved fit's summary to stderr")
    p.set_defaults(func=predict)
    return parser


def _levels(args: argparse.Namespace) -> list[Decimal]:
    """The coverage levels asked for, exact (--alpha 0.1 is level 0.9 exactly), each once; [] for the fit's own."""
    if args.level is not None:
        given, option = args.level, "--level"
    elif args.alpha is not None:
        given, option = args.alpha, "--alpha"
    elif args.command == "fit":
        return [Decimal("0.9")]  # alpha 0.1, as the library's default
    else:
        return []
    given = given if isinstance(given, list) else [given]
    levels = [v if option == "--level" else 1 - v for v in given]
    seen = [v for i, v in enumerate(given) if v in given[:i]]
    if seen:
        raise UsageError(f"{option} {seen[0]} is given twice; give each level once")
    return levels


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (2 for an error, after ``confrf: error: ...``)."""
    args = build_parser().parse_args(argv)  # argparse's own errors exit with status 2
    try:
        args.levels = _levels(args)
    except UsageError as exc:
        _say(f"{PROG}: error: {exc}")
        return 2
    # the fit (and the demo) at the first level; predict at every level asked for
    args.alpha = float(1 - args.levels[0]) if args.levels else None
    if getattr(args, "delta", None) is not None:
        args.delta = float(args.delta)
    from .exceptions import ConfrfError

    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            return args.func(args)
    except (UsageError, ConfrfError) as exc:
        message = str(exc)
        if args.command == "fit":  # the library's fix, in the command line's words
            message = message.replace("na_action='drop'", "--na-action drop")
        _say(f"{PROG}: error: {message}")
        return 2
    except KeyboardInterrupt:
        _say(f"{PROG}: interrupted")
        return 130
    except BrokenPipeError:  # e.g. `confrf fit ... | head`: the reader left; Python's documented remedy
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
