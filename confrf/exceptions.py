"""Exceptions and warnings raised by confrf.

Every error says what is wrong and how to fix it; none of them is raised
after a row has been silently dropped.
"""

from __future__ import annotations

__all__ = [
    "ConfrfError",
    "InputError",
    "FormulaError",
    "ArgumentTypeError",
    "NotFittedError",
    "ConfrfWarning",
    "InfiniteIntervalWarning",
    "PACTargetWarning",
    "UnusedSettingWarning",
    "LevelWarning",
]


class ConfrfError(Exception):
    """Base class of every error raised by confrf."""


class InputError(ConfrfError, ValueError):
    """Bad data or options: NaN/inf, missing column, unseen level, bad alpha, ..."""


class FormulaError(InputError):
    """A formula that cannot be parsed or does not fit the data."""


class ArgumentTypeError(InputError, TypeError):
    """An argument of the wrong type (e.g. a NumPy array where a DataFrame is needed)."""


class NotFittedError(ConfrfError, AttributeError):
    """A method was called before the object reached the needed stage."""


class ConfrfWarning(UserWarning):
    """Base class of confrf warnings."""


class InfiniteIntervalWarning(ConfrfWarning):
    """Some intervals are infinite (too few calibration points nearby)."""


class PACTargetWarning(ConfrfWarning):
    """No value of the PAC correction grid reached the D2 target: every interval is infinite."""


class UnusedSettingWarning(ConfrfWarning):
    """A setting moved from its default that the chosen method does not read: it has no effect."""


class LevelWarning(ConfrfWarning):
    """alpha above 0.5 (or level below 0.5): intervals that cover less than half the time.

    Usually alpha and level mixed up: R's ``level=0.95`` is ``alpha=0.05``.
    """
