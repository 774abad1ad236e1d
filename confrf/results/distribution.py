"""Every level at once on a fitted regression result: p-values, quantiles, CDFs, predictive distributions.

The math is in docs/theory.md ("Conformal p-values", "Predictive distributions"); the calibrator-level work in
:mod:`confrf.calibrators.pvalue` and :mod:`confrf.calibrators.distribution`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import InputError
from ..formula import as_frame


def _levels(q: Any) -> np.ndarray:
    taus = np.atleast_1d(np.asarray(q, dtype=np.float64))
    if taus.ndim != 1 or taus.size == 0 or not np.all((taus > 0) & (taus < 1)):
        raise InputError(f"q must be one or more quantile levels strictly between 0 and 1, got {q!r}.")
    return taus


class PredictiveDistribution:
    """One row's localized conformal predictive distribution (scipy-like: ``cdf``, ``ppf``, ``sf``, ``median``).

    A step CDF on ``support`` with values ``cdf_values`` (= count / (n + 1)); the mass
    ``1 - cdf_values[-1]`` (at least 1/(n + 1)) sits at +inf, so ``ppf`` is +inf above it and ``mean`` is
    +inf. ``ppf(tau)`` is Q_tau with P(Y <= Q_tau(X)) >= tau exactly.

    Examples
    --------
    >>> import confrf as cf
    >>> sim = cf.datasets.make_sim(1500, random_state=0)
    >>> res = cf.split_cp(sim.formula, data=sim.frame, random_state=0)
    >>> d = res.distribution(sim.frame.head(1))[0]
    >>> bool(d.ppf(0.25) <= d.median() <= d.ppf(0.75))
    True
    """

    def __init__(self, support: np.ndarray, counts: np.ndarray, n: int) -> None:
        self.support = np.asarray(support, dtype=np.float64)
        self.counts = np.asarray(counts, dtype=np.int64)
        self.n = int(n)
        self.cdf_values = self.counts / (self.n + 1)

    @property
    def tail_mass(self) -> float:
        """The mass at +inf (the count never reaches n + 1)."""
        return (self.n + 1 - (int(self.counts[-1]) if self.support.size else 0)) / (self.n + 1)

    def cdf(self, y: Any) -> np.ndarray:
        """P(Y <= y) under the distribution (right-continuous)."""
        j = np.searchsorted(self.support, np.asarray(y, dtype=np.float64), side="right")
        return np.where(j > 0, self.cdf_values[np.maximum(j - 1, 0)] if self.support.size else 0.0, 0.0)

    def sf(self, y: Any) -> np.ndarray:
        """1 - cdf(y)."""
        return 1.0 - self.cdf(y)

    def ppf(self, q: Any) -> np.ndarray:
        """Q_tau: the first support point whose count reaches ceil(tau (n + 1)); +inf if none does."""
        from ..calibrators.distribution import tau_counts

        taus = np.asarray(q, dtype=np.float64)
        m = tau_counts(taus.ravel(), self.n)
        j = np.searchsorted(self.counts, m, side="left")
        out = np.where(j < self.support.size, self.support[np.minimum(j, max(self.support.size - 1, 0))], np.inf)
        return out.reshape(taus.shape) if taus.ndim else out[0]

    def median(self) -> float:
        return float(self.ppf(0.5))

    def mean(self) -> float:
        """+inf: the distribution keeps mass at +inf (the price of the finite-sample guarantee)."""
        return (
            float("inf") if self.tail_mass > 0 else float(np.sum(np.diff(np.r_[0.0, self.cdf_values]) * self.support))
        )

    def __repr__(self) -> str:
        size, med, tail = self.support.size, self.median(), self.tail_mass
        return f"PredictiveDistribution({size} support points, median {med:.4g}, tail mass {tail:.3g})"


def crps_steps(indptr: np.ndarray, support: np.ndarray, counts: np.ndarray, n: int, y: np.ndarray) -> np.ndarray:
    """CRPS of every row's step CDF at its observation, with the +inf mass moved to the last support point.

    CRPS(F, y) = integral of (F(z) - 1{z >= y})^2 dz, computed exactly for the step function. The mass at +inf
    makes the integral infinite, so this "finite-tail" CRPS puts it on the largest support point (what crepes'
    and quantile forests' distributions do with their last level); rows without support give +inf.
    """
    rows = indptr.shape[0] - 1
    out = np.full(rows, np.inf)
    size = np.diff(indptr)
    has = size > 0
    if not has.any():
        return out
    row_of = np.repeat(np.arange(rows), size)
    F = counts / (n + 1)
    last = indptr[1:][has] - 1
    F = F.copy()
    F[last] = 1.0
    nxt = np.r_[support[1:], np.inf]
    nxt[indptr[1:][has] - 1] = support[last]  # the last piece has length 0 (F = 1 beyond)
    yy = y[row_of]
    below = np.clip(np.minimum(nxt, yy) - support, 0.0, None)  # part of [u_j, u_j+1) below y: H = 0
    above = np.clip(nxt - np.maximum(support, yy), 0.0, None)  # part at or above y: H = 1
    piece = F**2 * below + (1.0 - F) ** 2 * above
    inside = np.bincount(row_of, weights=piece, minlength=rows)
    first = support[indptr[:-1][has]]
    lastv = support[last]
    yh = y[has]
    out[has] = inside[has] + np.clip(first - yh, 0.0, None) + np.clip(yh - lastv, 0.0, None)
    return out


def randomized_pit(
    indptr: np.ndarray, support: np.ndarray, counts: np.ndarray, n: int, y: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """F(y-) + U (F(y) - F(y-)), U uniform: the randomized PIT of a step CDF (uniform when F is the truth)."""
    rows = indptr.shape[0] - 1
    F = counts / (n + 1)
    out = np.empty(rows)
    for q in range(rows):
        u, f = support[indptr[q] : indptr[q + 1]], F[indptr[q] : indptr[q + 1]]
        hi = np.searchsorted(u, y[q], side="right")
        lo = np.searchsorted(u, y[q], side="left")
        f_hi = f[hi - 1] if hi > 0 else 0.0
        f_lo = f[lo - 1] if lo > 0 else 0.0
        out[q] = f_lo + rng.uniform() * (f_hi - f_lo)
    return out


class DistributionMethods:
    """p-values, quantiles, CDFs and distributions of :class:`confrf.ConformalResult` (a mixin)."""

    estimator: Any
    design: Any
    shift: Any

    def _rows(self, newdata: Any) -> tuple[np.ndarray, pd.Index, pd.DataFrame]:
        newdata = as_frame(newdata, "newdata")
        return self.design.transform(newdata), newdata.index, newdata

    def pvalue(self, newdata: Any) -> pd.Series:
        """Conformal p-value of every row's response: the smallest alpha at which it leaves the set.

        The response of the formula must be in ``newdata``. A row's response lies in
        ``predict(newdata, alpha=a)``'s interval iff its p-value exceeds ``a``, for every ``a`` at once,
        and P(p(X, Y) <= a) <= a (exactly as the intervals' guarantee; under covariate shift, for the
        target population). Small p-values flag unusual responses for their x (outliers).

        Examples
        --------
        >>> import confrf as cf
        >>> sim = cf.datasets.make_sim(1500, random_state=0)
        >>> res = cf.lcp_rf(sim.formula, data=sim.frame, random_state=0)
        >>> p = res.pvalue(cf.datasets.make_sim(5, random_state=1).frame)
        >>> bool(((p > 0) & (p <= 1)).all())
        True
        """
        X, index, frame = self._rows(newdata)
        try:
            y = self.design.response(frame, "newdata")
        except InputError as exc:
            raise InputError(f"pvalue needs the response in newdata: {exc}") from None
        labels = self._group_labels(frame)  # type: ignore[attr-defined]
        ratios = None if self.shift is None else self.shift.ratios(frame, X)
        p = self.estimator.predict_pvalues(X, y, groups=labels, likelihood_ratio=ratios)
        return pd.Series(p, index=index, name="p_value")

    def _quantile_frame(self, newdata: Any, q: Any) -> pd.DataFrame:
        taus = _levels(q)
        X, index, _ = self._rows(newdata)
        Q = self.estimator.predict_quantiles(X, taus)
        return pd.DataFrame(Q, index=index, columns=[f"q_{float(t)!r}" for t in taus])

    def cdf(self, newdata: Any, y: Any = None) -> pd.Series:
        """The predictive CDF of every row at ``y`` (one value per row; default: the response in ``newdata``).

        F(y) = count / (n + 1) of the signed-score LCP count, right-continuous; Q_tau = inf{y : F(y) >= tau}.
        """
        X, index, frame = self._rows(newdata)
        yy = (
            self.design.response(frame, "newdata")
            if y is None
            else np.broadcast_to(np.asarray(y, float), (X.shape[0],))
        )
        indptr, u, cnt, n = self.estimator.predict_profiles(X)
        out = np.zeros(X.shape[0])
        for q in range(X.shape[0]):
            j = np.searchsorted(u[indptr[q] : indptr[q + 1]], yy[q], side="right")
            out[q] = cnt[indptr[q] + j - 1] / (n + 1) if j > 0 else 0.0
        return pd.Series(out, index=index, name="cdf")

    def distribution(self, newdata: Any) -> list[PredictiveDistribution]:
        """One :class:`PredictiveDistribution` per row of ``newdata`` (quantiles at any level, CDF, median)."""
        X, _, _ = self._rows(newdata)
        indptr, u, cnt, n = self.estimator.predict_profiles(X)
        return [
            PredictiveDistribution(u[indptr[q] : indptr[q + 1]], cnt[indptr[q] : indptr[q + 1]], n)
            for q in range(X.shape[0])
        ]


#: levels of the one-sided coverage that ``evaluate`` reports
ONE_SIDED_LEVELS = (0.05, 0.25, 0.5, 0.75, 0.95)


def distribution_metrics(result: Any, data: Any, y: np.ndarray, random_state: int | None = 0) -> pd.Series | None:
    """Held-out facts of the predictive distribution: CRPS, the PIT's distance from uniform, one-sided coverage.

    None when the fit offers no distribution (methods other than split and LCP-RF, covariate shift, a score
    without a signed version): ``evaluate`` then reports intervals only.
    """
    from ..calibrators.distribution import SignedDistribution

    est = result.estimator
    try:
        SignedDistribution.check(est.calibrator_)
    except InputError:
        return None
    if getattr(est, "calib_signed_", None) is None:
        return None
    X, _ = result._X(data)
    indptr, u, cnt, n = est.predict_profiles(X)
    crps = crps_steps(indptr, u, cnt, n, y)
    pit = np.sort(randomized_pit(indptr, u, cnt, n, y, np.random.default_rng(random_state)))
    m = pit.shape[0]
    ks = float(np.max(np.maximum(np.arange(1, m + 1) / m - pit, pit - np.arange(m) / m)))
    Q = est.predict_quantiles(X, list(ONE_SIDED_LEVELS))
    out: dict[str, Any] = {"crps": float(np.mean(crps)), "pit_ks": ks}
    for j, tau in enumerate(ONE_SIDED_LEVELS):
        out[f"onesided_{tau:g}"] = float(np.mean(y <= Q[:, j]))
    out["onesided_se_max"] = float(np.sqrt(0.25 / m))
    return pd.Series(out, dtype=object)
