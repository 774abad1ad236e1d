"""Pieces of docstrings that several functions share, written once.

A docstring names a piece by a line that holds only ``{{name}}``; :func:`fill` replaces that line by
the piece, indented like it, when the function or class is defined. ``help()``, Sphinx and the
doctests see the whole text, as if it had been written out in place. Examples stay self-contained:
a piece is a few lines an example starts from, not state one example leaves to another.
"""

from __future__ import annotations

import re
from typing import TypeVar

T = TypeVar("T")

PIECES: dict[str, str] = {
    # the class-label data set the classification examples start from
    "wine": """\
>>> import confrf as cf
>>> from sklearn.datasets import load_wine
>>> df = load_wine(as_frame=True).frame.astype({"target": "category"})""",
    # ... and the split-conformal random-forest fit on it
    "wine_rf": """\
{{wine}}
>>> res = cf.conformal("target ~ .", data=df, method="split", model="rf", random_state=0)""",
    # two classes of a two-feature sample, for the ConformalClassifier examples
    "two_classes": """\
>>> import numpy as np
>>> from confrf.classification import ConformalClassifier
>>> rng = np.random.default_rng(0)
>>> X = rng.normal(size=(900, 2)); y = np.where(X[:, 0] + rng.normal(size=900) > 0, "a", "b")""",
    # the first option of the two kernel localizers' calibrators (exact LCP and SLCP)
    "kernel_option": """\
Parameters
----------
kernel : {"gaussian", "exponential"}
    Kernel of the Euclidean distance between standardized features.""",
    # the argument of the true-model functions of confrf.datasets
    "model_points": """\
Parameters
----------
X : DataFrame or array_like of shape (n, p)
    Points (column ``x1`` or first column).

Returns
-------""",
}

_SLOT = re.compile(r"^([ \t]*)\{\{(\w+)\}\}[ \t]*$", re.MULTILINE)


def fill(obj: T) -> T:
    """Replace every ``{{name}}`` line of ``obj``'s docstring by the piece ``PIECES[name]``.

    Parameters
    ----------
    obj : function or class
        Defined with a docstring that names at least one piece.

    Returns
    -------
    obj
        The same object, its ``__doc__`` written out.

    Examples
    --------
    >>> from confrf._docstrings import fill
    >>> @fill
    ... def f():
    ...     '''Start.
    ...
    ...     {{wine}}
    ...     '''
    >>> f.__doc__.splitlines()[2].strip()
    '>>> import confrf as cf'
    """
    doc = obj.__doc__ or ""

    def piece(match: re.Match[str]) -> str:
        indent, name = match.groups()
        if name not in PIECES:
            raise KeyError(f"{obj!r}: the docstring names {{{{{name}}}}}, which is not one of {sorted(PIECES)}.")
        return "\n".join(indent + line if line else "" for line in PIECES[name].splitlines())

    text, count = _SLOT.subn(piece, doc)
    text = _SLOT.sub(piece, text)  # a piece may name another one (one level deep)
    if count == 0:
        raise ValueError(f"{obj!r}: @fill on a docstring that names no piece ({{{{name}}}} on a line of its own).")
    obj.__doc__ = text
    return obj
