"""The command line: ``confrf demo``, ``confrf fit ...``, ``confrf predict ...`` (``python -m confrf`` runs the same).

Errors follow the convention of argparse tools: ``confrf: error: ...`` on
stderr, exit status 2, no traceback. Input files and the output folder are
checked before anything is fitted. Progress goes to stderr one whole line at
a time, so an error or a progress bar never lands at the end of a progress line.

Only the standard library is imported at the top: ``confrf fit --help`` does
not wait for NumPy, pandas or scikit-learn (each command imports what it uses).
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Sequence

from .common import PROG, UsageError, _say, _show_warning
from .output import level_label
from .parser import _levels, build_parser

__all__ = ["PROG", "UsageError", "build_parser", "level_label", "main"]


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
    from ..exceptions import ConfrfError

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
