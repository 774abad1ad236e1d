"""Warnings that point at the user's line, whichever confrf function raised them."""

from __future__ import annotations

import sys
from pathlib import Path
from types import FrameType

#: the folder of the confrf package; frames whose file lies under it are confrf's own
_PACKAGE = str(Path(__file__).resolve().parent)


def _inside(filename: str) -> bool:
    try:
        return str(Path(filename).resolve()).startswith(_PACKAGE)
    except (OSError, ValueError):  # "<doctest ...>", "<stdin>" and the like are the user's
        return False


def user_stacklevel() -> int:
    """``stacklevel`` for ``warnings.warn`` that attributes the warning to the first frame outside confrf.

    Call it in the argument list of ``warnings.warn`` (``stacklevel=user_stacklevel()``): the
    warning then names the user's file and line, however deep inside confrf
    it was raised (``result.evaluate(test)`` -> ``predict`` -> ``warnings.warn``),
    instead of a line of confrf. A fixed ``stacklevel`` is right for one call
    path only.
    """
    frame: FrameType | None = sys._getframe(1)
    level = 1
    while frame is not None and _inside(frame.f_code.co_filename):
        frame, level = frame.f_back, level + 1
    return level
