"""The command line's name, its error type, and its messages on stderr (one whole line at a time)."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    pass


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
