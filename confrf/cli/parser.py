"""The argument parser of ``confrf``: its commands, options, argument types and help (with every default)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import Any

from .choices import MODEL_NAMES, RegisteredMethods, RegisteredScores
from .common import PROG, UsageError
from .demo import demo
from .fit import fit
from .predict import predict


# -- argument types and file checks --------------------------------------------------
def _number(text: str, convert: Callable[[str], Any], wanted: str, valid: Callable[[Any], bool], invalid: str) -> Any:
    """``convert(text)``, else argparse's error: "must be ``wanted``" when it is no number, and ``invalid``
    (formatted with ``text`` and ``value``) when ``valid`` refuses the value."""
    try:
        value = convert(text)
    except (ValueError, InvalidOperation):
        raise argparse.ArgumentTypeError(f"must be {wanted}, got {text!r}") from None
    if not valid(value):
        raise argparse.ArgumentTypeError(invalid.format(text=text, value=value))
    return value


def _probability(text: str) -> Decimal:
    """A number in (0, 1), kept exact: --level 0.9 gives alpha 0.1 exactly, not 0.09999999999999998."""
    in_unit = lambda v: v.is_finite() and 0 < v < 1
    return _number(text, Decimal, "a number in (0, 1)", in_unit, "must be in (0, 1), got {text}")


def _positive_float(text: str) -> float:
    return _number(text, float, "a positive number", lambda v: v > 0, "must be a positive number, got {text}")


def _n_jobs(text: str) -> int:
    from .._validation import check_n_jobs
    from ..exceptions import InputError

    def valid(value: int) -> bool:
        try:
            check_n_jobs(value)  # the library's own rule
        except InputError:
            return False
        return True

    wanted = "an integer (1, 2, ... threads; -1: all cores)"
    return _number(text, int, wanted, valid, "{value} is not a number of threads; use 1, 2, ... or -1 for all cores")


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


def _command(
    sub: Any, name: str, func: Callable[..., Any], help: str, description: str | None = None
) -> argparse.ArgumentParser:
    """The subcommand ``name`` run by ``func``, with the help layout every subcommand shares."""
    command = sub.add_parser(name, help=help, description=description, formatter_class=_HelpFormatter)
    command.set_defaults(func=func)
    return command


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

    d = _command(sub, "demo", demo, "SPLIT and LCP-RF on embedded California housing, compared on held-out rows")
    _add_level(d, several=False, default_alpha="0.1")
    d.add_argument("--random-state", type=int, default=0, help="seed of the split and the fits")
    d.add_argument("--n-jobs", type=_n_jobs, default=None, help="threads (default: 1; -1: all cores)")
    d.add_argument("--summary", action="store_true", help="also print the full summary of the LCP-RF fit")

    f = _command(
        sub,
        "fit",
        fit,
        "fit on a CSV file; write intervals for new rows, save the fit, or both",
        "Fit on a CSV file, then write intervals for the rows of --newdata (CSV, one row per input "
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
    f.add_argument("--method", default="lcp-rf", choices=RegisteredMethods(), help="calibration method")
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
        choices=RegisteredScores(),
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

    p = _command(
        sub,
        "predict",
        predict,
        "intervals for new rows from a fit saved with `confrf fit --save`",
        "Intervals for the rows of --newdata from a fit saved by `confrf fit ... --save FILE` "
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
