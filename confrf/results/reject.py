"""Predict with a reject option: abstain where the interval is wider than a threshold.

What is and is not guaranteed
-----------------------------
The coverage guarantee of a method is a statement about all test points. A
rejection rule "width > max_width" selects test points by their interval,
so the guarantee does not transfer to the accepted rows: coverage among
accepted rows, P(Y in interval | width <= max_width), can be below 1 - alpha
(narrow intervals are exactly where an imperfect localizer may under-cover).
Nothing is claimed for the accepted subset; ``ConformalResult.evaluate``
measures its coverage and the acceptance rate on held-out data, with an exact
confidence interval.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validation import check_real
from ..metrics import interval_width

#: one sentence for printed reports
REJECT_NOTE = (
    "The coverage guarantee is marginal over all test points; it does not transfer to the accepted "
    "rows (selected by their width), whose coverage can be below 1 - alpha. The numbers above are "
    "measured on these held-out rows, not guaranteed."
)


def check_max_width(max_width: Any) -> float:
    """``max_width`` as a float >= 0 (inf accepts every finite and infinite interval)."""
    return check_real(max_width, "max_width", low=0.0, low_open=False, hint="the widest interval to accept")


def rejected(lwr: Any, upr: Any, max_width: Any) -> np.ndarray:
    """True where the interval is wider than ``max_width`` (infinite intervals are rejected unless max_width=inf).

    Examples
    --------
    >>> from confrf.results.reject import rejected
    >>> rejected([0.0, 0.0, -float("inf")], [1.0, 3.0, float("inf")], 2.0).tolist()
    [False, True, True]
    """
    m = check_max_width(max_width)
    w = interval_width(lwr, upr)
    return ~(w <= m)
