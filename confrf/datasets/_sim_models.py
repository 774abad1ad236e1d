"""The true mean and noise sd of the paper's two simulated models, as functions of x."""

from __future__ import annotations

import numpy as np

from .._docstrings import fill
from ._sim_checks import _first_column


def sim_mean(X: object) -> np.ndarray:
    """True conditional mean ``E[Y | x] = x1`` of the ``sim`` model.

    Parameters
    ----------
    X : DataFrame or array_like of shape (n, p)
        Points; a DataFrame must have a column ``x1``, an array has ``x1`` in
        its first column.

    Returns
    -------
    numpy.ndarray of shape (n,)

    Examples
    --------
    >>> import numpy as np
    >>> from confrf.datasets import sim_mean
    >>> sim_mean(np.array([[0.5, 0.1], [1.0, 0.9]]))
    array([0.5, 1. ])
    """
    return _first_column(X, "sim_mean").copy()


@fill
def sim_sd(X: object) -> np.ndarray:
    """True conditional sd of ``Y | x`` in the ``sim`` model: ``x1 / (1 + x1)``.

    Outside ``[0, 1]`` the formula is used as is, in absolute value.

    {{model_points}}
    numpy.ndarray of shape (n,), values ``>= 0``

    Examples
    --------
    >>> import numpy as np
    >>> from confrf.datasets import sim_sd
    >>> sim_sd(np.array([[0.0], [1.0]]))
    array([0. , 0.5])
    """
    x1 = _first_column(X, "sim_sd")
    return np.abs(x1 / (1.0 + x1))


@fill
def toy_mean(X: object) -> np.ndarray:
    """True conditional mean ``sin(x1)^2 + 0.1`` of the ``toy`` model.

    {{model_points}}
    numpy.ndarray of shape (n,)

    Examples
    --------
    >>> import numpy as np
    >>> from confrf.datasets import toy_mean
    >>> toy_mean(np.array([[0.0], [np.pi / 2]]))
    array([0.1, 1.1])
    """
    x1 = _first_column(X, "toy_mean")
    return np.sin(x1) ** 2 + 0.1


@fill
def toy_sd(X: object) -> np.ndarray:
    """True conditional sd ``0.6 * |sin(2 x1)|`` of ``Y | x`` in the ``toy`` model.

    The model is written ``0.6 * eps * sin(2 X1)``; since ``eps`` is
    symmetric the sd is the absolute value. It is 0 at multiples of
    ``pi / 2``, where ``Y`` is deterministic given ``x``.

    {{model_points}}
    numpy.ndarray of shape (n,), values ``>= 0``

    Examples
    --------
    >>> import numpy as np
    >>> from confrf.datasets import toy_sd
    >>> np.round(toy_sd(np.array([[np.pi / 4], [3 * np.pi / 4]])), 12)
    array([0.6, 0.6])
    """
    x1 = _first_column(X, "toy_sd")
    return 0.6 * np.abs(np.sin(2.0 * x1))
