"""alpha or R's level: one of them, read exactly, with a warning when the interval covers less than half.

Every entry point that takes ``alpha=`` also takes ``level=`` (the coverage
1 - alpha, as R's ``predict(..., level=0.95)`` and the CLI's ``--level``);
giving both is an error. ``level`` is read as the decimal typed, so
``level=0.95`` is ``alpha=0.05`` exactly (not 0.050000000000000044).
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from contextvars import ContextVar
from fractions import Fraction
from typing import Any, TypeVar

import numpy as np

from ._validation import _is_number, check_alpha, check_real
from ._warnings import user_stacklevel
from .exceptions import InputError, LevelWarning

__all__ = ["resolve_alpha", "alpha_from_level", "setting_alpha", "warns_level_once"]

F = TypeVar("F", bound=Callable[..., Any])

#: inside a call wrapped by warns_level_once: the alphas already warned about (None outside any such call)
_WARNED: ContextVar[set[float] | None] = ContextVar("confrf_levels_warned", default=None)


def warns_level_once(func: F) -> F:
    """Wrap a user-facing call so that each low level warns once, in the words the user typed.

    Such a call resolves ``alpha``/``level`` (warning about ``level=0.05``) and passes the resolved
    alpha on to calls that resolve it again; without this they would warn a second time, quoting an
    ``alpha=0.95`` the user never wrote.
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        token = _WARNED.set(set()) if _WARNED.get() is None else None
        try:
            return func(*args, **kwargs)
        finally:
            if token is not None:
                _WARNED.reset(token)

    return wrapper  # type: ignore[return-value]


#: the array estimators' miscoverage when neither alpha= nor level= is given (90% intervals)
DEFAULT_ALPHA = 0.1


def _several(value: Any) -> bool:
    return not isinstance(value, (str, bytes)) and np.ndim(value) > 0


def alpha_from_level(level: Any) -> float:
    """1 - ``level`` in exact rational arithmetic: ``alpha_from_level(0.95) == 0.05``.

    ``level`` is a probability in (0, 1), as in R; 95 is refused with the fix.

    Examples
    --------
    >>> alpha_from_level(0.95)
    0.05
    """
    if _is_number(level) and 1 < float(level) < 100:
        v = float(level)
        fix = f"for {v:g}% intervals write level={v / 100:g}" if v >= 50 else "e.g. level=0.95 for 95% intervals"
        raise InputError(f"level is a probability in (0, 1), as in R, got {level!r}; {fix}.")
    v = check_real(level, "level", low=0.0, high=1.0, hint="the coverage, e.g. level=0.95 for 95% intervals")
    return float(1 - Fraction(repr(v)))


def _percent(alpha: float) -> str:
    return f"{float(100 * (1 - Fraction(repr(alpha)))):g}%"


def _warn_low_coverage(alpha: float, given: str) -> None:
    if alpha <= 0.5:
        return
    warned = _WARNED.get()
    if warned is not None:
        if alpha in warned:
            return  # the outer call warned already, quoting what was given
        warned.add(alpha)
    other = float(1 - Fraction(repr(alpha)))
    warnings.warn(
        f"{given} gives {_percent(alpha)} prediction intervals (they miss the response "
        f"{_percent(other)} of the time); for {_percent(other)} intervals use level={1 - other:g} "
        f"or alpha={other:g}.",
        LevelWarning,
        stacklevel=user_stacklevel(),
    )


def resolve_alpha(alpha: Any, level: Any, default: Any = None, *, several: bool = False) -> Any:
    """The miscoverage from ``alpha=`` or ``level=`` (one of them; ``default`` when neither is given).

    With ``several=True`` either may be a sequence of levels (``predict(new,
    level=[0.9, 0.95])``), returned as a list of alphas in the order given.
    Values are returned unchecked apart from the conversion; callers keep
    their own ``check_alpha``. A resolved alpha above 0.5 warns
    (:class:`~confrf.exceptions.LevelWarning`): such intervals cover less
    than half the time, which is rarely meant.

    Examples
    --------
    >>> resolve_alpha(None, 0.95)
    0.05
    >>> resolve_alpha(None, [0.9, 0.95], several=True)
    [0.1, 0.05]
    """
    if alpha is not None and level is not None:
        raise InputError(
            f"give alpha= or level=, not both (got alpha={alpha!r}, level={level!r}); level is the coverage "
            "1 - alpha: level=0.95 is alpha=0.05."
        )
    if level is not None:
        if _several(level):
            if not several:
                raise InputError(f"level must be a single number in (0, 1) here, got {level!r}.")
            if len(level) == 0:
                raise InputError("level is an empty sequence; give at least one level, e.g. level=[0.9, 0.95].")
            out = [alpha_from_level(v) for v in np.asarray(level, dtype=object).ravel()]
            for v, a in zip(np.asarray(level, dtype=object).ravel(), out):
                _warn_low_coverage(a, f"level={v!r}")
            return out
        a = alpha_from_level(level)
        _warn_low_coverage(a, f"level={level!r}")
        return a
    if alpha is None:
        return default
    for v in np.asarray(alpha, dtype=object).ravel() if _several(alpha) else [alpha]:
        if _is_number(v) and 0.5 < float(v) < 1:
            _warn_low_coverage(float(check_real(v, "alpha", low=0.0, high=1.0)), f"alpha={v!r}")
    return alpha


def setting_alpha(alpha: Any, level: Any, *, warn: bool = False) -> float:
    """An estimator's miscoverage from its ``alpha`` and ``level`` settings, checked.

    One of them (giving both is an error); neither means ``DEFAULT_ALPHA``.
    ``warn``: a ``level`` below 0.5 warns (:class:`~confrf.exceptions.LevelWarning`).

    Examples
    --------
    >>> setting_alpha(None, 0.95), setting_alpha(0.2, None), setting_alpha(None, None)
    (0.05, 0.2, 0.1)
    """
    if alpha is not None and level is not None:
        resolve_alpha(alpha, level)  # raises, naming both
    if level is None:
        a = DEFAULT_ALPHA if alpha is None else alpha
    else:
        a = resolve_alpha(None, level) if warn else alpha_from_level(level)
    check_alpha(a)
    return float(a)
