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

import numbers
from dataclasses import dataclass, field
from typing import Callable, Union

import numpy as np
import pandas as pd
from scipy.special import ndtr, ndtri

from .._validation import seed_entropy
from ..exceptions import InputError

__all__ = [
    "SimulatedData",
    "make_sim",
    "make_toy",
    "simulate",
    "sim_mean",
    "sim_sd",
    "toy_mean",
    "toy_sd",
    "folded_normal_quantile",
]

RandomState = Union[None, int, np.integer, np.random.Generator, np.random.RandomState, np.random.SeedSequence]

_SQRT_2PI = np.sqrt(2.0 * np.pi)


# --------------------------------------------------------------------------
# Input helpers
# --------------------------------------------------------------------------


def _check_n(n: object) -> int:
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise InputError(f"n must be a positive integer, got {n!r}.")
    if n < 1:
        raise InputError(f"n must be a positive integer, got {n!r}.")
    return int(n)


def _rng(random_state: RandomState) -> np.random.Generator:
    # a Generator is used as is (its stream continues); other seeds are checked as everywhere in confrf
    if isinstance(random_state, (np.random.Generator, np.random.SeedSequence)):
        return np.random.default_rng(random_state)
    return np.random.default_rng(seed_entropy(random_state))


def _first_column(X: object, what: str) -> np.ndarray:
    """Return the values of ``x1`` from a DataFrame or a 2-D array."""
    if isinstance(X, pd.DataFrame):
        if "x1" not in X.columns:
            raise InputError(
                f"{what}: the DataFrame has no column 'x1'; pass the x columns "
                "of a simulated frame (e.g. data.frame or data.X)."
            )
        x1 = X["x1"].to_numpy(dtype=float)
    else:
        arr = np.asarray(X, dtype=float)
        if arr.ndim != 2 or arr.shape[1] < 1:
            raise InputError(
                f"{what}: X must be a 2-D array (rows = points, column 0 = x1) "
                f"or a DataFrame with column 'x1', got shape {arr.shape}."
            )
        x1 = arr[:, 0]
    if not np.all(np.isfinite(x1)):
        raise InputError(f"{what}: x1 contains NaN or infinite values.")
    return x1


def _as_vector(values: object, n: int, what: str, *, allow_inf: bool = False) -> np.ndarray:
    """Broadcast ``values`` to a float vector of length ``n`` (checked)."""
    arr = np.asarray(values, dtype=float)
    if arr.ndim > 1:
        arr = np.squeeze(arr)
    if arr.ndim == 0:
        arr = np.full(n, float(arr))
    if arr.ndim != 1 or arr.shape[0] != n:
        raise InputError(
            f"{what} must be a scalar or a 1-D array of length {n} (one value "
            f"per row of the simulated frame), got shape {np.shape(values)}."
        )
    if np.any(np.isnan(arr)):
        raise InputError(f"{what} contains NaN.")
    if not allow_inf and not np.all(np.isfinite(arr)):
        raise InputError(f"{what} contains infinite values.")
    return arr


def _check_prob(q: object, n: int, what: str) -> np.ndarray:
    arr = _as_vector(q, n, what)
    if np.any((arr <= 0.0) | (arr >= 1.0)):
        raise InputError(f"{what} must lie strictly between 0 and 1.")
    return arr


# --------------------------------------------------------------------------
# Folded normal quantile
# --------------------------------------------------------------------------


def folded_normal_quantile(
    b: np.ndarray, s: np.ndarray, q: np.ndarray, *, max_iter: int = 200
) -> np.ndarray:
    """Quantile of ``|b + s * eps|`` with ``eps ~ N(0, 1)`` (vectorised).

    Solves ``Phi((t - b) / s) - Phi((-t - b) / s) = q`` for ``t >= 0`` by a
    safeguarded Newton iteration inside the bracket
    ``[max(s z((1+q)/2), |b| + s z(q)), |b| + s z((1+q)/2)]`` (``z`` the
    standard normal quantile), which always contains the root.

    Parameters
    ----------
    b : array_like
        Shift(s). Only ``|b|`` matters.
    s : array_like
        Scale(s), ``>= 0``. Where ``s == 0`` the answer is ``|b|``.
    q : array_like
        Probability level(s) in ``(0, 1)``.
    max_iter : int, default 200
        Iteration cap (convergence normally takes fewer than 10).

    Returns
    -------
    numpy.ndarray
        The quantiles, broadcast shape of the inputs, absolute error about
        ``1e-12 * (1 + t)``.

    Examples
    --------
    >>> import numpy as np
    >>> from confrf.datasets import folded_normal_quantile
    >>> t = folded_normal_quantile(0.0, 1.0, 0.9)   # no shift: z_{0.95}
    >>> bool(np.isclose(t, 1.6448536269514722))
    True
    >>> float(folded_normal_quantile(2.0, 0.0, 0.5))  # s == 0: |b|
    2.0
    """
    b, s, q = np.broadcast_arrays(
        np.abs(np.asarray(b, dtype=float)),
        np.asarray(s, dtype=float),
        np.asarray(q, dtype=float),
    )
    if np.any(s < 0) or np.any(np.isnan(s)):
        raise InputError("the noise sd s must be >= 0.")
    if np.any(np.isnan(q)) or np.any((q <= 0) | (q >= 1)):
        raise InputError("q must lie strictly between 0 and 1.")
    out = np.array(b, dtype=float, copy=True)  # s == 0 -> |b|
    pos = s > 0
    if not np.any(pos):
        return out

    bb, ss, qq = b[pos], s[pos], q[pos]
    z_half = -ndtri((1.0 - qq) / 2.0)  # z_{(1+q)/2}, accurate for q near 1
    z_q = ndtri(qq)
    lo = np.maximum(ss * z_half, bb + ss * z_q)
    hi = bb + ss * z_half
    upper_tail = qq >= 0.5

    def resid(t: np.ndarray, b_: np.ndarray, s_: np.ndarray, q_: np.ndarray,
              up: np.ndarray) -> np.ndarray:
        # r = q - F(t), computed through the smaller tail for accuracy.
        a1 = (t - b_) / s_
        a2 = (-t - b_) / s_
        tail = ndtr(-a1) + ndtr(a2)  # 1 - F(t)
        return np.where(up, tail - (1.0 - q_), q_ - (ndtr(a1) - ndtr(a2)))

    def dens(t: np.ndarray, b_: np.ndarray, s_: np.ndarray) -> np.ndarray:
        a1 = (t - b_) / s_
        a2 = (t + b_) / s_
        return (np.exp(-0.5 * a1 * a1) + np.exp(-0.5 * a2 * a2)) / (_SQRT_2PI * s_)

    t = lo.copy()
    active = hi > lo
    for _ in range(max_iter):
        if not np.any(active):
            break
        idx = np.flatnonzero(active)
        ti, bi, si, qi = t[idx], bb[idx], ss[idx], qq[idx]
        r = resid(ti, bi, si, qi, upper_tail[idx])
        below = r > 0  # F(t) < q: root is to the right
        lo_i = np.where(below, ti, lo[idx])
        hi_i = np.where(below, hi[idx], ti)
        exact = r == 0
        lo_i = np.where(exact, ti, lo_i)
        hi_i = np.where(exact, ti, hi_i)
        f = dens(ti, bi, si)
        with np.errstate(divide="ignore", invalid="ignore"):
            t_new = ti + r / f
        bad = ~np.isfinite(t_new) | (t_new <= lo_i) | (t_new >= hi_i)
        t_new = np.where(bad, 0.5 * (lo_i + hi_i), t_new)
        t_new = np.where(exact, ti, t_new)
        tol = 1e-14 * (1.0 + np.abs(t_new))
        done = exact | (np.abs(t_new - ti) <= tol) | ((hi_i - lo_i) <= tol)
        t[idx] = t_new
        lo[idx] = lo_i
        hi[idx] = hi_i
        active[idx[done]] = False
    out[pos] = t
    return out


# --------------------------------------------------------------------------
# The two models: mean and sd as functions of x
# --------------------------------------------------------------------------


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


def sim_sd(X: object) -> np.ndarray:
    """True conditional sd of ``Y | x`` in the ``sim`` model: ``x1 / (1 + x1)``.

    Outside ``[0, 1]`` the formula is used as is, in absolute value.

    Parameters
    ----------
    X : DataFrame or array_like of shape (n, p)
        Points (column ``x1`` or first column).

    Returns
    -------
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


def toy_mean(X: object) -> np.ndarray:
    """True conditional mean ``sin(x1)^2 + 0.1`` of the ``toy`` model.

    Parameters
    ----------
    X : DataFrame or array_like of shape (n, p)
        Points (column ``x1`` or first column).

    Returns
    -------
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


def toy_sd(X: object) -> np.ndarray:
    """True conditional sd ``0.6 * |sin(2 x1)|`` of ``Y | x`` in the ``toy`` model.

    The model is written ``0.6 * eps * sin(2 X1)``; since ``eps`` is
    symmetric the sd is the absolute value. It is 0 at multiples of
    ``pi / 2``, where ``Y`` is deterministic given ``x``.

    Parameters
    ----------
    X : DataFrame or array_like of shape (n, p)
        Points (column ``x1`` or first column).

    Returns
    -------
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


# --------------------------------------------------------------------------
# Container
# --------------------------------------------------------------------------


def _readonly(a: object) -> np.ndarray:
    arr = np.array(a, dtype=float, copy=True)
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True, eq=False, repr=False)
class SimulatedData:
    """A sample of a simulated model together with its exact oracles.

    ``Y | x`` is normal with mean ``mean`` and standard deviation
    ``noise_sd`` (both evaluated at the rows of ``frame``), so the oracle
    interval of the paper and the conditional coverage of any interval are
    computed exactly, without Monte Carlo.

    Attributes
    ----------
    name : str
        Model name, ``"sim"`` or ``"toy"``.
    frame : pandas.DataFrame
        Columns ``x1, ..., xp`` then ``y`` (all float64).
    formula : str
        ``"y ~ x1 + x2 + ... + xp"``.
    mean : numpy.ndarray of shape (n,)
        True ``E[Y | x]`` at each row (read-only).
    noise_sd : numpy.ndarray of shape (n,)
        True sd of ``Y | x`` at each row, ``>= 0`` (read-only).

    Examples
    --------
    >>> from confrf.datasets import make_toy
    >>> data = make_toy(200, random_state=0)
    >>> data
    SimulatedData(name='toy', n=200, p=21)
    >>> lwr, upr = data.oracle_interval(data.mean, alpha=0.1)
    >>> bool(abs(data.conditional_coverage(data.mean, lwr, upr) - 0.9).max() < 1e-8)
    True
    """

    name: str
    frame: pd.DataFrame
    formula: str
    mean: np.ndarray = field(repr=False)
    noise_sd: np.ndarray = field(repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.frame, pd.DataFrame) or "y" not in self.frame.columns:
            raise InputError("frame must be a pandas DataFrame with a column 'y'.")
        n = len(self.frame)
        mean = _readonly(self.mean)
        sd = _readonly(self.noise_sd)
        if mean.shape != (n,) or sd.shape != (n,):
            raise InputError(
                f"mean and noise_sd must be 1-D arrays of length {n} (rows of frame)."
            )
        if np.any(~np.isfinite(sd)) or np.any(sd < 0):
            raise InputError("noise_sd must be finite and >= 0.")
        object.__setattr__(self, "mean", mean)
        object.__setattr__(self, "noise_sd", sd)

    def __repr__(self) -> str:
        return f"SimulatedData(name={self.name!r}, n={self.n}, p={len(self.feature_names)})"

    def __len__(self) -> int:
        return len(self.frame)

    # -- conveniences -----------------------------------------------------
    @property
    def n(self) -> int:
        """Number of rows."""
        return len(self.frame)

    @property
    def feature_names(self) -> list[str]:
        """Names of the x columns, ``["x1", ..., "xp"]``."""
        return [c for c in self.frame.columns if c != "y"]

    @property
    def X(self) -> pd.DataFrame:
        """The x columns of :attr:`frame` (a new DataFrame)."""
        return self.frame[self.feature_names]

    @property
    def y(self) -> pd.Series:
        """The response column of :attr:`frame`."""
        return self.frame["y"]

    # -- oracles ----------------------------------------------------------
    def oracle_score_quantile(self, mu_hat: object, q: object) -> np.ndarray:
        """Exact ``q``-quantile of the score ``|Y - mu_hat(x)|`` given ``x``.

        With ``b = mean - mu_hat`` and ``s = noise_sd``, ``|Y - mu_hat(x)|``
        is ``|b + s * eps|``; its quantile ``t >= 0`` solves
        ``Phi((t - b) / s) - Phi((-t - b) / s) = q`` (``t = |b|`` where
        ``s == 0``). This is the oracle ``q*(x)`` of the paper.

        Parameters
        ----------
        mu_hat : array_like of shape (n,) or scalar
            Predictions of the fitted model at the rows of :attr:`frame`.
        q : float or array_like of shape (n,)
            Level(s), strictly between 0 and 1.

        Returns
        -------
        numpy.ndarray of shape (n,)
            Accurate to about ``1e-12 * (1 + t)``.

        Examples
        --------
        >>> import numpy as np
        >>> from confrf.datasets import make_sim
        >>> data = make_sim(5, random_state=1)
        >>> t = data.oracle_score_quantile(data.mean, 0.9)   # b = 0
        >>> bool(np.allclose(t, 1.6448536269514722 * data.noise_sd))
        True
        """
        n = self.n
        mu = _as_vector(mu_hat, n, "mu_hat")
        qq = _check_prob(q, n, "q")
        return folded_normal_quantile(self.mean - mu, self.noise_sd, qq)

    def oracle_interval(self, mu_hat: object, alpha: object) -> tuple[np.ndarray, np.ndarray]:
        """Oracle interval ``mu_hat -/+ q*_{1-alpha}(x)`` of the paper.

        The best symmetric interval around ``mu_hat`` with exact conditional
        coverage ``1 - alpha`` at every ``x``.

        Parameters
        ----------
        mu_hat : array_like of shape (n,) or scalar
            Predictions at the rows of :attr:`frame`.
        alpha : float or array_like of shape (n,)
            Miscoverage level(s) in ``(0, 1)``.

        Returns
        -------
        lwr, upr : numpy.ndarray of shape (n,)

        Examples
        --------
        >>> from confrf.datasets import make_sim
        >>> data = make_sim(100, random_state=0)
        >>> lwr, upr = data.oracle_interval(data.mean + 0.05, alpha=0.1)
        >>> bool((lwr <= upr).all())
        True
        """
        n = self.n
        mu = _as_vector(mu_hat, n, "mu_hat")
        a = _check_prob(alpha, n, "alpha")
        t = folded_normal_quantile(self.mean - mu, self.noise_sd, 1.0 - a)
        return mu - t, mu + t

    def conditional_coverage(
        self, mu_hat: object, lwr: object, upr: object
    ) -> np.ndarray:
        """Exact ``P(lwr <= Y <= upr | x)`` at each row, under the true model.

        Parameters
        ----------
        mu_hat : array_like of shape (n,), scalar or None
            Predictions at the rows. The probability does not depend on it;
            it is accepted so that calls mirror :meth:`oracle_interval`, and
            only its length is checked (``None`` skips the check).
        lwr, upr : array_like of shape (n,) or scalar
            Interval bounds; ``-inf`` / ``+inf`` are allowed. An empty
            interval (``lwr > upr``) has coverage 0.

        Returns
        -------
        numpy.ndarray of shape (n,)
            Values in ``[0, 1]``. Where ``noise_sd == 0``, ``Y`` equals
            ``mean`` and the coverage is 0 or 1.

        Examples
        --------
        >>> import numpy as np
        >>> from confrf.datasets import make_sim
        >>> data = make_sim(3, random_state=0)
        >>> cov = data.conditional_coverage(None, -np.inf, np.inf)
        >>> cov.tolist()
        [1.0, 1.0, 1.0]
        """
        n = self.n
        if mu_hat is not None:
            _as_vector(mu_hat, n, "mu_hat")
        lo = _as_vector(lwr, n, "lwr", allow_inf=True)
        hi = _as_vector(upr, n, "upr", allow_inf=True)
        m, s = self.mean, self.noise_sd
        cov = np.where(((lo <= m) & (m <= hi)), 1.0, 0.0)
        pos = s > 0
        if np.any(pos):
            sp, mp = s[pos], m[pos]
            zh = (hi[pos] - mp) / sp
            zl = (lo[pos] - mp) / sp
            # use the tail where it is more accurate: P = Phi(zh) - Phi(zl)
            #                                          = Phi(-zl) - Phi(-zh)
            p = np.where(
                zl > 0, ndtr(-zl) - ndtr(-zh), ndtr(zh) - ndtr(zl)
            )
            cov[pos] = np.clip(p, 0.0, 1.0)
        return cov


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
    return SimulatedData(
        name=name, frame=frame, formula=formula, mean=mean, noise_sd=sd_fn(X)
    )


def make_sim(n: int = 1000, *, random_state: RandomState = None) -> SimulatedData:
    """Draw ``n`` points of the paper's ``sim`` model.

    ``X`` in ``[0, 1]^50`` with ``X_i ~ U(0, 1)`` i.i.d., and
    ``Y = X1 + eps * X1 / (1 + X1)`` with ``eps ~ N(0, 1)``: one active
    feature, 49 noise features, noise sd growing from 0 to 0.5 with ``x1``.

    Parameters
    ----------
    n : int, default 1000
        Number of points.
    random_state : None, int or numpy.random.Generator, optional
        Seed or generator (through :func:`numpy.random.default_rng`); the
        same int gives the same sample. ``X`` is drawn first (row by row),
        then ``eps``. A Generator passed in is advanced.

    Returns
    -------
    SimulatedData
        ``frame`` with columns ``x1..x50, y``, ``formula``
        ``"y ~ x1 + ... + x50"``, true ``mean`` and ``noise_sd``.

    See Also
    --------
    make_toy, simulate, sim_mean, sim_sd

    Examples
    --------
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
        "sim", n, 50, 1.0, sim_mean, sim_sd,
        lambda x1, eps: eps * x1 / (1.0 + x1), random_state,
    )


def make_toy(n: int = 1000, *, random_state: RandomState = None) -> SimulatedData:
    """Draw ``n`` points of the paper's toy model (its introduction figure).

    ``X`` in ``[0, 7]^21`` with ``X_i ~ U(0, 7)`` i.i.d., and
    ``Y = sin(X1)^2 + 0.1 + 0.6 * eps * sin(2 X1)`` with ``eps ~ N(0, 1)``:
    one active feature and 20 noise features; the noise sd
    ``0.6 |sin(2 x1)|`` vanishes at multiples of ``pi / 2``.

    Parameters
    ----------
    n : int, default 1000
        Number of points.
    random_state : None, int or numpy.random.Generator, optional
        Seed or generator (through :func:`numpy.random.default_rng`); the
        same int gives the same sample. ``X`` is drawn first, then ``eps``.

    Returns
    -------
    SimulatedData
        ``frame`` with columns ``x1..x21, y``, ``formula``
        ``"y ~ x1 + ... + x21"``, true ``mean`` and ``noise_sd``.

    See Also
    --------
    make_sim, simulate, toy_mean, toy_sd

    Examples
    --------
    >>> from confrf.datasets import make_toy
    >>> data = make_toy(300, random_state=0)
    >>> data.frame.shape
    (300, 22)
    >>> list(data.frame.columns[[0, -2, -1]])
    ['x1', 'x21', 'y']
    """
    return _make(
        "toy", n, 21, 7.0, toy_mean, toy_sd,
        lambda x1, eps: 0.6 * eps * np.sin(2.0 * x1), random_state,
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
        raise InputError(
            f"unknown simulated model {name!r}; choose one of {sorted(_SIMULATORS)}."
        ) from None
    return maker(n, random_state=random_state)
