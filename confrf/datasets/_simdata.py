"""A simulated sample together with its exact oracles (:class:`SimulatedData`)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.special import ndtr

from ..exceptions import InputError
from ._folded import folded_normal_quantile
from ._sim_checks import _as_vector, _check_prob, _readonly


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
            raise InputError(f"mean and noise_sd must be 1-D arrays of length {n} (rows of frame).")
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

    def conditional_coverage(self, mu_hat: object, lwr: object, upr: object) -> np.ndarray:
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
            p = np.where(zl > 0, ndtr(-zl) - ndtr(-zh), ndtr(zh) - ndtr(zl))
            cov[pos] = np.clip(p, 0.0, 1.0)
        return cov
