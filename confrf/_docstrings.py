"""Pieces of docstrings that several functions share, written once.

A docstring names a piece by a line that holds only ``{{name}}``; :func:`fill` replaces that line by
the piece, indented like it, when the function or class is defined. ``{{name key=value ...}}`` also
fills the piece's ``$key`` fields (:class:`string.Template`). ``help()``, Sphinx and the
doctests see the whole text, as if it had been written out in place. Examples stay self-contained:
a piece is a few lines an example starts from, not state one example leaves to another.
"""

from __future__ import annotations

import re
from string import Template
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
    # the options of the simulated models' make_* functions
    "draw_options": """\
Parameters
----------
n : int, default 1000
    Number of points.
random_state : None, int or numpy.random.Generator, optional
    Seed or generator (through :func:`numpy.random.default_rng`); the
    same int gives the same sample.""",
    # what they return, and where the other model is (p: number of features)
    "simulated_data": """\
Returns
-------
SimulatedData
    ``frame`` with columns ``x1..x$p, y``, ``formula``
    ``"y ~ x1 + ... + x$p"``, true ``mean`` and ``noise_sd``.

See Also
--------
$other, simulate, ${model}_mean, ${model}_sd

Examples
--------""",
    # the argument of the true-model functions of confrf.datasets
    "model_points": """\
Parameters
----------
X : DataFrame or array_like of shape (n, p)
    Points (column ``x1`` or first column).

Returns
-------""",
}

_SLOT = re.compile(r"^([ \t]*)\{\{(\w+)((?:[ \t]+\w+=\S+)*)\}\}[ \t]*$", re.MULTILINE)


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
        indent, name, fields = match.groups()
        if name not in PIECES:
            raise KeyError(f"{obj!r}: the docstring names {{{{{name}}}}}, which is not one of {sorted(PIECES)}.")
        try:
            text = Template(PIECES[name]).substitute(dict(field.split("=", 1) for field in fields.split()))
        except KeyError as missing:
            raise KeyError(f"{obj!r}: the piece {name!r} needs the field {missing} in its slot.") from None
        return "\n".join(indent + line if line else "" for line in text.splitlines())

    text, count = _SLOT.subn(piece, doc)
    text = _SLOT.sub(piece, text)  # a piece may name another one (one level deep)
    if count == 0:
        raise ValueError(f"{obj!r}: @fill on a docstring that names no piece ({{{{name}}}} on a line of its own).")
    obj.__doc__ = text
    return obj
