"""``confrf ...`` and ``python -m confrf ...``: the command line, whose code is in :mod:`confrf.cli`."""

from __future__ import annotations

import sys
from typing import Any

from .cli import build_parser, level_label, main
from .cli.choices import MODEL_NAMES, builtin_methods, builtin_scores, ordered_scores

#: METHOD_NAMES and SCORE_NAMES (the names --help lists before the library is loaded) come from __getattr__
__all__ = ["MODEL_NAMES", "build_parser", "level_label", "main"]


def __getattr__(name: str) -> Any:
    # the built-in names that --help lists before the library is loaded, read from the registrations on demand
    if name == "METHOD_NAMES":
        return builtin_methods()
    if name == "SCORE_NAMES":
        return ordered_scores(builtin_scores())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if __name__ == "__main__":
    sys.exit(main())
