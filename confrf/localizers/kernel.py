"""Kernel localizers on standardized features: Guan's LCP weights and the
Nadaraya-Watson conditional distribution of SLCP (Han et al.).

Features are standardized with means and standard deviations learned on the
reference data (the training part), never on the conformal calibration
points. The design matrix is used as given: a categorical predictor enters as
its dummy columns, each standardized like any other column. Two rows in
different levels then differ by 1/sd_j in each of the one or two dummy columns
j that separate them (sd_j: the dummy's standard deviation on the training
part), so the rarer a level, the farther it sits from the others; and a
predictor with many levels adds as many dimensions. Distances mix all columns
alike, relevant or not, which is why kernels lose their locality when many
features are noise.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sklearn.preprocessing import StandardScaler

from .._validation import as_float_matrix, as_float_vector, check_real
from ..exceptions import InputError, NotFittedError
from ._dense_lcp import dense_lcp_thresholds
from .bandwidth import check_bandwidth, check_kernel, guan_bandwidth, han_bandwidth, kernel_matrix

#: entries of one (block x n) kernel block
BLOCK_ENTRIES = 1 << 21


def _blocks(m: int, n: int):
    step = max(1, BLOCK_ENTRIES // max(n, 1))
    for s in range(0, m, step):
        yield slice(s, min(m, s + step))


@dataclass
class KernelLocalizer:
    """Guan's kernel localizer H(x, x') = K(|x - x'| / h) for exact LCP.

    Parameters
    ----------
    kernel : {"gaussian", "exponential"}
        exp(-d^2 / (2 h^2)) or exp(-d / h), d the Euclidean distance of standardized features.
    bandwidth : float or "auto"
        h in standardized units, or "auto" for Guan's rule
        (:func:`confrf.localizers.bandwidth.guan_bandwidth`) on the reference data.
    max_infinite : float or None
        Guan's delta: the largest share of infinite thresholds the rule accepts
        (None: alpha / 2, as in Guan's worked example).

    Examples
    --------
    >>> import numpy as np
    >>> from confrf.localizers import KernelLocalizer
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 2)); V = np.abs(X[:, 0]) * rng.exponential(size=300)
    >>> loc = KernelLocalizer(bandwidth=0.5).fit_reference(X[:100], V[:100], alpha=0.1, n_calibration=200,
    ...                                                     rng=rng).index(X[100:], V[100:])
    >>> t, closed, level = loc.thresholds(np.zeros((1, 2)), m_req=181)
    >>> bool(np.isfinite(t[0]))
    True
    """

    kernel: str = "gaussian"
    bandwidth: float | str = "auto"
    max_infinite: float | None = None
    scaler_: StandardScaler | None = field(default=None, repr=False)
    bandwidth_: float | None = field(default=None, repr=False)
    tuning_: dict[str, Any] | None = field(default=None, repr=False)
    Z_: np.ndarray | None = field(default=None, repr=False)
    scores_: np.ndarray | None = field(default=None, repr=False)
    base_: np.ndarray | None = field(default=None, repr=False)
    total_: np.ndarray | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.kernel = check_kernel(self.kernel)
        self.bandwidth = check_bandwidth(self.bandwidth)
        if self.max_infinite is not None:
            self.max_infinite = check_real(
                self.max_infinite,
                "max_infinite",
                low=0.0,
                low_open=False,
                high=1.0,
                hint="Guan's delta, the largest share of infinite intervals",
            )

    # -- lifecycle ---------------------------------------------------------
    def fit_reference(
        self, X: np.ndarray, scores: np.ndarray, *, alpha: float, n_calibration: int, rng: np.random.Generator
    ) -> KernelLocalizer:
        """Learn the standardization and (for "auto") the bandwidth on reference data."""
        X = as_float_matrix(X, "X")
        V = as_float_vector(scores, "scores")
        self.scaler_ = StandardScaler().fit(X)
        if self.bandwidth == "auto":
            delta = alpha / 2.0 if self.max_infinite is None else self.max_infinite
            self.bandwidth_, self.tuning_ = guan_bandwidth(
                self.scaler_.transform(X),
                V,
                kernel=self.kernel,
                alpha=alpha,
                n_calibration=n_calibration,
                max_infinite=delta,
                rng=rng,
            )
            self.tuning_["max_infinite"] = delta
        else:
            self.bandwidth_, self.tuning_ = float(self.bandwidth), None
        return self

    def index(self, X: np.ndarray, scores: np.ndarray) -> KernelLocalizer:
        """Store the conformal calibration points and their row sums c_i, D_i."""
        Z = self._transform(X)
        assert self.bandwidth_ is not None  # fit_reference() sets it with scaler_, which _transform checked
        V = as_float_vector(scores, "scores")
        n = Z.shape[0]
        base = np.empty(n)
        total = np.empty(n)
        for b in _blocks(n, n):
            K = kernel_matrix(Z[b], Z, self.kernel, self.bandwidth_)
            total[b] = K.sum(axis=1)
            base[b] = (K * (V[None, :] < V[b, None])).sum(axis=1)
        self.Z_, self.scores_, self.base_, self.total_ = Z, V, base, total
        return self

    # -- queries -----------------------------------------------------------
    def thresholds(
        self, X: np.ndarray, m_req: int, shift_w: np.ndarray | None = None, req: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Exact LCP thresholds (t, closed, level) for rows of X.

        ``shift_w``, ``req``: the weighted rule of covariate shift (see
        :func:`confrf.localizers._dense_lcp.dense_lcp_thresholds`).
        """
        Zq = self._transform(X)
        Z = self._indexed()
        # index() sets them with Z_, fit_reference() the bandwidth with the scaler: both were checked above
        assert self.bandwidth_ is not None and self.base_ is not None and self.total_ is not None
        assert self.scores_ is not None
        m = Zq.shape[0]
        t, closed, level = np.empty(m), np.empty(m, dtype=bool), np.empty(m)
        for b in _blocks(m, Z.shape[0]):
            k = kernel_matrix(Zq[b], Z, self.kernel, self.bandwidth_)
            t[b], closed[b], level[b] = dense_lcp_thresholds(
                self.base_,
                self.total_,
                k,
                self.scores_,
                int(m_req),
                shift_w=shift_w,
                req=None if req is None else req[b],
            )
        return t, closed, level

    def weights(self, X: np.ndarray) -> np.ndarray:
        """Dense (m, n + 1) LCP test rows: weights on the calibration points, then the test point's own."""
        Z = self._indexed()
        Zq = self._transform(X)
        assert self.bandwidth_ is not None  # set with the scaler that _transform checked
        k = kernel_matrix(Zq, Z, self.kernel, self.bandwidth_)
        return np.column_stack([k, np.ones(k.shape[0])]) / (k.sum(axis=1) + 1.0)[:, None]

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kernel": self.kernel,
            "bandwidth": self.bandwidth_,
            "bandwidth_rule": "Guan (auto)" if self.bandwidth == "auto" else "given",
        }
        if self.tuning_ is not None:
            best = int(np.argmin(np.abs(self.tuning_["grid"] - self.bandwidth_)))
            out["tuning_share_infinite"] = float(self.tuning_["share_infinite"][best])
            out["tuning_max_infinite"] = float(self.tuning_["max_infinite"])
        return out

    # -- helpers -----------------------------------------------------------
    def _transform(self, X: np.ndarray) -> np.ndarray:
        if self.scaler_ is None:
            raise NotFittedError("the kernel localizer has no reference data yet; call fit_reference() first.")
        X = as_float_matrix(X, "X")
        if X.shape[1] != self.scaler_.n_features_in_:
            raise InputError(f"X has {X.shape[1]} columns; the localizer was fitted on {self.scaler_.n_features_in_}.")
        return self.scaler_.transform(X)

    def _indexed(self) -> np.ndarray:
        if self.Z_ is None:
            raise NotFittedError("no calibration points are indexed yet; call index() first.")
        return self.Z_


@dataclass
class NadarayaWatsonLocalizer:
    """Kernel (Nadaraya-Watson) estimate of the scores' conditional distribution (SLCP).

    F(r | x) = sum_j K(x, X_j) 1{V_j <= r} / sum_j K(x, X_j) over the
    reference points (X_j, V_j); the same kernels as :class:`KernelLocalizer`.

    Parameters
    ----------
    kernel : {"gaussian", "exponential"}
    bandwidth : float or "auto"
        "auto" is Han et al.'s median heuristic (:func:`confrf.localizers.bandwidth.han_bandwidth`).

    Examples
    --------
    >>> import numpy as np
    >>> from confrf.localizers import NadarayaWatsonLocalizer
    >>> X = np.arange(10.0).reshape(-1, 1); V = np.arange(10.0)
    >>> nw = NadarayaWatsonLocalizer(bandwidth=1e6).fit(X, V, rng=np.random.default_rng(0))
    >>> nw.quantiles(np.zeros((1, 1)), 0.5)[0]
    array([4.])
    """

    kernel: str = "gaussian"
    bandwidth: float | str = "auto"
    scaler_: StandardScaler | None = field(default=None, repr=False)
    bandwidth_: float | None = field(default=None, repr=False)
    Z_: np.ndarray | None = field(default=None, repr=False)
    sorted_scores_: np.ndarray | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.kernel = check_kernel(self.kernel)
        self.bandwidth = check_bandwidth(self.bandwidth)

    def fit(self, X: np.ndarray, scores: np.ndarray, *, rng: np.random.Generator) -> NadarayaWatsonLocalizer:
        """Standardize, choose the bandwidth and keep the reference points (sorted by score)."""
        X = as_float_matrix(X, "X")
        V = as_float_vector(scores, "scores")
        if X.shape[0] < 2:
            raise InputError(f"the reference set has {X.shape[0]} point(s); at least 2 are needed.")
        self.scaler_ = StandardScaler().fit(X)
        order = np.argsort(V, kind="stable")
        self.Z_ = self.scaler_.transform(X)[order]
        self.sorted_scores_ = V[order]
        self.bandwidth_ = (
            han_bandwidth(self.Z_, self.kernel, rng) if self.bandwidth == "auto" else float(self.bandwidth)
        )
        return self

    def quantiles(
        self, X: np.ndarray, level: float, offset: float | np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Q(level; F(.|x)) for rows of X and, with ``offset`` (a number or one per row), the mass F(Q + offset | x).

        Q(a; F) = inf{r : F(r) >= a} (cumulative sums within 1e-12 of a count as reaching it).
        """
        if self.Z_ is None:
            raise NotFittedError("the Nadaraya-Watson localizer is not fitted; call fit() first.")
        # fit() sets them with Z_
        assert self.scaler_ is not None and self.bandwidth_ is not None and self.sorted_scores_ is not None
        X = as_float_matrix(X, "X")
        if X.shape[1] != self.scaler_.n_features_in_:
            raise InputError(f"X has {X.shape[1]} columns; the localizer was fitted on {self.scaler_.n_features_in_}.")
        Zq = self.scaler_.transform(X)
        Vs = self.sorted_scores_
        m = Zq.shape[0]
        q, mass = np.empty(m), np.ones(m)
        for b in _blocks(m, Vs.shape[0]):
            # relative kernel: the nearest reference point weighs 1, so the weights never vanish together
            cum = np.cumsum(kernel_matrix(Zq[b], self.Z_, self.kernel, self.bandwidth_, relative=True), axis=1)
            cum /= cum[:, -1:]
            idx = np.argmax(cum >= level - 1e-12, axis=1)
            q[b] = Vs[idx]
            if offset is not None:  # a number, or one per row (the weighted correction of covariate shift)
                off = np.broadcast_to(np.asarray(offset, dtype=np.float64), (m,))[b]
                fin = np.isfinite(off)
                j = np.searchsorted(Vs, q[b] + np.where(fin, off, 0.0), side="right") - 1
                got = np.where(j >= 0, cum[np.arange(cum.shape[0]), np.maximum(j, 0)], 0.0)
                mass[b] = np.where(fin, got, 1.0)
        return q, mass

    def describe(self) -> dict[str, Any]:
        return {
            "kernel": self.kernel,
            "bandwidth": self.bandwidth_,
            "bandwidth_rule": "Han et al. median heuristic (auto)" if self.bandwidth == "auto" else "given",
            "n_reference": None if self.Z_ is None else int(self.Z_.shape[0]),
        }
