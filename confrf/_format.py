"""The one rule for printing numbers in reports: summaries, evaluations, comparisons, PAC reports, the CLI.

Every printed table and sentence formats its numbers with these functions, so
that a report never shows float noise (``0.07999999999999996``,
``1.00047747864096e-12``), a count is never printed as ``20000.0``, and the
text, HTML and LaTeX forms of a report agree. Tidy frames (``.frames``) keep
the exact numbers; only their printed form goes through this rule.

The module imports nothing from confrf, so every layer (calibrators, results,
classification, the command line) can use it.
"""

from __future__ import annotations

import math
from decimal import Decimal
from numbers import Integral, Real
from typing import Any

#: significant digits of a printed float (statsmodels' summaries print 4)
DIGITS = 4

#: below this magnitude a large float is written in full (rounded to an integer), above it with an exponent
_FULL_BELOW = 1e15


def _is_bool(x: Any) -> bool:
    # numpy.bool_ (numpy.bool in NumPy 2) without importing numpy
    return isinstance(x, bool) or (type(x).__module__ == "numpy" and type(x).__name__ in ("bool", "bool_"))


def _significant(x: float, digits: int) -> str:
    """``x`` (finite) to ``digits`` significant digits, no trailing zeros; large values rounded to an integer."""
    s = f"{x:.{digits}g}"
    if "e+" in s and abs(x) < _FULL_BELOW:  # 123456.7 and 9999.5 read better as 123457 and 10000
        s = f"{round(x):d}"
    return "0" if s in ("-0", "0") else s


def format_number(x: Any, digits: int = DIGITS) -> str:
    """A number as every confrf report prints it.

    * integers (Python or NumPy) in full: ``20000``;
    * floats to ``digits`` significant digits, with no trailing zeros and no
      float noise: ``0.07999999999999996`` prints ``0.08``,
      ``1.00047747864096e-12`` prints ``1e-12``, ``0.3333333333333333``
      prints ``0.3333``;
    * a float with an integer value below ``10**digits`` keeps a ``.0``
      (``1.0``: a share such as ``max_features=1.0`` is not the count 1);
      floats of ``10**digits`` and more are rounded to an integer
      (``123456.7`` prints ``123457``) up to 1e15, then use an exponent;
    * NaN prints ``n/a``, infinities ``inf`` and ``-inf``; ``-0.0`` prints ``0.0``;
    * ``Decimal`` and ``Fraction`` values print as the float they round to.

    Parameters
    ----------
    x : int or float
        The number (a bool is refused: use :func:`format_value`, which prints
        ``yes``/``no``).
    digits : int
        Significant digits of a float (default 4, as statsmodels' summaries).

    Returns
    -------
    str

    Examples
    --------
    >>> from confrf._format import format_number
    >>> [format_number(v) for v in (0.07999999999999996, 1.00047747864096e-12, 20000, 1.0, 123456.7)]
    ['0.08', '1e-12', '20000', '1.0', '123457']
    >>> [format_number(v) for v in (float("nan"), float("inf"), -0.0, 2 / 3)]
    ['n/a', 'inf', '0.0', '0.6667']
    """
    if _is_bool(x) or not isinstance(x, (Real, Decimal)):
        raise TypeError(f"format_number() takes a number, got {type(x).__name__} {x!r}; use format_value()")
    if not (isinstance(digits, int) and digits >= 1):
        raise ValueError(f"digits must be a positive integer, got {digits!r}")
    if isinstance(x, Integral):
        return str(int(x))
    v = float(x)
    if math.isnan(v):
        return "n/a"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    s = _significant(v, digits)
    # a float stays visibly a float: 1.0 is not the integer 1
    if s.lstrip("-").isdigit() and len(s.lstrip("-")) <= digits:
        s += ".0"
    return s


def format_percent(x: Any, digits: int = 3) -> str:
    """A share in [0, 1] as a percentage, ``digits`` significant digits, no trailing zeros.

    Examples
    --------
    >>> from confrf._format import format_percent
    >>> [format_percent(v) for v in (0.9249, 1.0, 0.0, 0.00031, float("nan"))]
    ['92.5%', '100%', '0%', '0.031%', 'n/a']
    """
    if _is_bool(x) or not isinstance(x, (Real, Decimal)):
        raise TypeError(f"format_percent() takes a number, got {type(x).__name__} {x!r}")
    v = 100.0 * float(x)
    if math.isnan(v):
        return "n/a"
    if math.isinf(v):
        return ("inf" if v > 0 else "-inf") + "%"
    return _significant(v, digits) + "%"


def format_interval(lower: Any, upper: Any, digits: int = DIGITS) -> str:
    """``[lower, upper]`` with both ends by :func:`format_number`; ``-`` when either is NaN or missing.

    Examples
    --------
    >>> from confrf._format import format_interval
    >>> format_interval(0.90281234, 0.94623), format_interval(float("nan"), 1.0)
    ('[0.9028, 0.9462]', '-')
    """
    if lower is None or upper is None or _isnan(lower) or _isnan(upper):
        return "-"
    return f"[{format_number(lower, digits)}, {format_number(upper, digits)}]"


def _isnan(x: Any) -> bool:
    try:
        return bool(math.isnan(float(x)))
    except (TypeError, ValueError):
        return False


def format_value(v: Any, digits: int = DIGITS) -> str:
    """Any value of a printed report: numbers by :func:`format_number`, the rest in words.

    ``True``/``False`` print ``yes``/``no``, ``None`` prints ``-``, a missing
    value (``pd.NA``, ``NaT``, NaN) ``n/a``, a string as it is, anything else
    as ``str(v)``.

    Examples
    --------
    >>> from confrf._format import format_value
    >>> [format_value(v) for v in (True, None, 0.3333333333333333, 158, "auto")]
    ['yes', '-', '0.3333', '158', 'auto']
    """
    if _is_bool(v):
        return "yes" if v else "no"
    if v is None:
        return "-"
    if isinstance(v, (Real, Decimal)):
        return format_number(v, digits)
    if isinstance(v, str):
        return v
    if type(v).__name__ in ("NAType", "NaTType"):
        return "n/a"
    return str(v)
