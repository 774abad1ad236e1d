"""Simulators of the two models of the LCP-RF paper, with exact oracles.

Two models are reproduced exactly as the paper states them:

``sim`` (section "Experiments")
    ``X`` in ``[0, 1]^50`` with ``X_i ~ U(0, 1)`` i.i.d. and
    ``Y = X1 + eps * X1 / (1 + X1)``, ``eps ~ N(0, 1)``.
``toy`` (introduction, figure of the toy demo)
    ``X`` in ``[0, 7]^21`` with ``X_i ~ U(0, 7)`` i.i.d. and
    ``Y = sin(X1)^2 + 0.1 + 0.6 * eps * sin(2 X1)``, ``eps ~ N(0, 1)``.

In both, ``Y | x`` is normal with mean ``mean(x)`` and standard deviation
``noise_sd(x)`` (for ``toy``, ``0.6 * |sin(2 x1)|``), so the oracle quantile
of the absolute residual score ``|Y - mu_hat(x)|`` and the conditional
coverage of any interval are known in closed form (up to a 1-D root).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from .._docstrings import fill
from ..exceptions import InputError
from ._sim_checks import RandomState, _check_n, _rng
from ._sim_models import sim_mean, sim_sd, toy_mean, toy_sd
from ._simdata import SimulatedData

# --------------------------------------------------------------------------
# Simulators
# --------------------------------------------------------------------------


def _make(
    name: str,
    n: int,
    p: int,
    high: float,
    mean_fn: Callable[[np.ndarray], np.ndarray],
    sd_fn: Callable[[np.ndarray], np.ndarray],
    noise_fn: Callable[[np.ndarray, np.ndarray], np.ndarray],
    random_state: RandomState,
) -> SimulatedData:
    n = _check_n(n)
    rng = _rng(random_state)
    X = rng.uniform(0.0, high, size=(n, p))
    eps = rng.standard_normal(n)
    mean = mean_fn(X)
    y = mean + noise_fn(X[:, 0], eps)
    cols = [f"x{j}" for j in range(1, p + 1)]
    frame = pd.DataFrame(X, columns=cols)
    frame["y"] = y
    formula = "y ~ " + " + ".join(cols)
    return SimulatedData(name=name, frame=frame, formula=formula, mean=mean, noise_sd=sd_fn(X))


@fill
def make_sim(n: int = 1000, *, random_state: RandomState = None) -> SimulatedData:
    """Draw ``n`` points of the paper's ``sim`` model.

    ``X`` in ``[0, 1]^50`` with ``X_i ~ U(0, 1)`` i.i.d., and
    ``Y = X1 + eps * X1 / (1 + X1)`` with ``eps ~ N(0, 1)``: one active
    feature, 49 noise features, noise sd growing from 0 to 0.5 with ``x1``.

    {{draw_options}}
        ``X`` is drawn first (row by row), then ``eps``. A Generator passed
        in is advanced.

    {{simulated_data p=50 model=sim other=make_toy}}
    >>> from confrf.datasets import make_sim
    >>> data = make_sim(500, random_state=42)
    >>> data.frame.shape
    (500, 51)
    >>> data.formula[:20]
    'y ~ x1 + x2 + x3 + x'
    >>> test = make_sim(100, random_state=43)   # a fresh test set
    >>> float(test.noise_sd.max()) <= 0.5
    True
    """
    return _make(
        "sim",
        n,
        50,
        1.0,
        sim_mean,
        sim_sd,
        lambda x1, eps: eps * x1 / (1.0 + x1),
        random_state,
    )


@fill
def make_toy(n: int = 1000, *, random_state: RandomState = None) -> SimulatedData:
    """Draw ``n`` points of the paper's toy model (its introduction figure).

    ``X`` in ``[0, 7]^21`` with ``X_i ~ U(0, 7)`` i.i.d., and
    ``Y = sin(X1)^2 + 0.1 + 0.6 * eps * sin(2 X1)`` with ``eps ~ N(0, 1)``:
    one active feature and 20 noise features; the noise sd
    ``0.6 |sin(2 x1)|`` vanishes at multiples of ``pi / 2``.

    {{draw_options}}
        ``X`` is drawn first, then ``eps``.

    {{simulated_data p=21 model=toy other=make_sim}}
    >>> from confrf.datasets import make_toy
    >>> data = make_toy(300, random_state=0)
    >>> data.frame.shape
    (300, 22)
    >>> list(data.frame.columns[[0, -2, -1]])
    ['x1', 'x21', 'y']
    """
    return _make(
        "toy",
        n,
        21,
        7.0,
        toy_mean,
        toy_sd,
        lambda x1, eps: 0.6 * eps * np.sin(2.0 * x1),
        random_state,
    )


_SIMULATORS: dict[str, Callable[..., SimulatedData]] = {
    "sim": make_sim,
    "toy": make_toy,
}


def simulate(name: str, n: int = 1000, random_state: RandomState = None) -> SimulatedData:
    """Draw from a simulated model by name.

    Parameters
    ----------
    name : {"sim", "toy"}
        ``"sim"`` for :func:`make_sim`, ``"toy"`` for :func:`make_toy`.
    n : int, default 1000
        Number of points.
    random_state : None, int or numpy.random.Generator, optional
        As in :func:`make_sim`; ``simulate(name, n, seed)`` equals
        ``make_<name>(n, random_state=seed)``.

    Returns
    -------
    SimulatedData

    Examples
    --------
    >>> from confrf.datasets import simulate
    >>> simulate("toy", 50, random_state=3).frame.shape
    (50, 22)
    """
    try:
        maker = _SIMULATORS[name]
    except (KeyError, TypeError):
        raise InputError(f"unknown simulated model {name!r}; choose one of {sorted(_SIMULATORS)}.") from None
    return maker(n, random_state=random_state)
