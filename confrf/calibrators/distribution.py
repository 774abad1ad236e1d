"""Localized conformal predictive distributions: one-sided LCP bounds of a signed score at every level.

With a signed score S(x, y) = (y - c(x)) / s(x), increasing in y, the one-sided LCP set at alpha = 1 - tau is
{y : S(x, y) <= t_{1-tau}(x)}, so Q_tau(x) = c(x) + s(x) t_{1-tau}(x) satisfies P(Y <= Q_tau(X)) >= tau exactly
and is non-decreasing in tau (docs/theory.md, "Predictive distributions"). The count behind the set does not
depend on tau: one pass over a test point's neighbours gives Q at every level, and its whole step function.

Only the calibration changes: the same forest (a function of the localizer part) indexes the conformal points'
signed scores instead of their nonconformity scores, so the exchangeability argument is unchanged.
"""

from __future__ import annotations

import copy
import math
from typing import Any

import numpy as np

from .._parallel import kernel_threads
from .._validation import alpha_fraction, as_float_matrix
from ..exceptions import InputError
from ..localizers.leaf_index import LeafIndex
from .base import Calibrator


def signed_parts(score: Any, pred: Any) -> tuple[np.ndarray, np.ndarray]:
    """(c, s) of the signed score S = (y - c) / s: the centre and scale of the score's interval.

    For "absolute" S = y - mu(x), for "scaled" (y - mu(x)) / sigma(x), for "quantile" (CQR) y minus the
    midpoint of (q_lo, q_hi). A score without ``interval_parts`` has no signed version.
    """
    parts = getattr(score, "interval_parts", None)
    if not callable(parts):
        raise InputError(
            f"score {getattr(score, 'name', score)!r} has no interval_parts, so no signed score y - c(x) is known "
            "and no predictive distribution can be formed; use score='absolute', 'scaled' or 'quantile'."
        )
    lo, hi, s = parts(pred)
    c = lo if lo is hi else (np.asarray(lo) + np.asarray(hi)) / 2.0
    scale = np.ones(np.shape(c)) if s is None else np.asarray(s, dtype=np.float64)
    return np.asarray(c, dtype=np.float64), scale


def signed_scores(score: Any, y: np.ndarray, pred: Any) -> np.ndarray:
    """S = (y - c(x)) / s(x) of every row."""
    c, s = signed_parts(score, pred)
    return (np.asarray(y, dtype=np.float64) - c) / s


def tau_counts(taus: Any, n: int) -> np.ndarray:
    """m(tau) = ceil(tau (n + 1)) in exact rational arithmetic (tau read as the decimal typed), per level."""
    out = []
    for tau in np.atleast_1d(np.asarray(taus, dtype=np.float64)):
        if not (0.0 < tau < 1.0):
            raise InputError(f"quantile levels must lie strictly between 0 and 1, got {tau!r}.")
        out.append(math.ceil(alpha_fraction(float(tau)) * (n + 1)))
    return np.asarray(out, dtype=np.int64)


class SignedDistribution:
    """The calibrator's conformal points indexed by signed score: quantiles at any level, whole step functions.

    Build it with :meth:`from_calibrator`; split conformal and honest LCP-RF (unweighted) are offered.
    """

    def __init__(self, kind: str, n: int, sorted_signed: np.ndarray | None = None, localizer: Any = None) -> None:
        self.kind, self.n, self.localizer = kind, int(n), localizer
        self.sorted_signed: np.ndarray = np.empty(0) if sorted_signed is None else sorted_signed

    @staticmethod
    def check(cal: Calibrator) -> None:
        """Refuse, with the reason, a calibrator that offers no predictive distribution."""
        from .lcp_rf import LCPForestCalibrator
        from .split import SplitCalibrator

        if not isinstance(cal, (SplitCalibrator, LCPForestCalibrator)):
            raise InputError(
                f"predictive distributions are offered for methods 'split' and 'lcp-rf' (guarantee='marginal'), "
                f"not {cal.name!r}; p-values (result.pvalue) cover more methods."
            )
        if getattr(cal, "shift_", None) is not None:
            raise InputError(
                "predictive distributions are not offered after a calibration weighted for covariate shift (only "
                "p-values and intervals are); fit without likelihood_ratio / shift for quantiles at every level."
            )

    @classmethod
    def from_calibrator(cls, cal: Calibrator, signed: np.ndarray) -> SignedDistribution:
        """``signed``: the signed score of every calibration row, in the order given to ``calibrate``."""
        from .lcp_rf import LCPForestCalibrator

        cls.check(cal)
        if isinstance(cal, LCPForestCalibrator):
            loc = cal.localizer
            idx = loc._index()
            S = np.ascontiguousarray(signed[cal.conformal_rows_], dtype=np.float64)
            if loc.scaled:
                assert loc.index_scale_ is not None  # set whenever the index is scaled
                S = S / loc.index_scale_
            if loc.pooled:  # split conformal's, of S / sigma(x) when normalized (the localizer keeps sigma)
                return cls("split", S.shape[0], sorted_signed=np.sort(S), localizer=loc if loc.scaled else None)
            mult = None
            if not idx.unit_mult:
                mult = np.ones((idx.n, idx.n_trees), dtype=np.int32)
                for t, (_, _, e0, e1) in enumerate(idx._tree_blocks()):
                    mult[idx.members[e0:e1], t] = idx.member_mult[e0:e1]
            new = copy.copy(loc)
            n_leaves = int(idx.leaf_ptr.shape[0] - 1)
            new.index_ = LeafIndex.build(idx.leaves(), S, mult, idx.node_offset, n_leaves)
            new.n_jobs = getattr(cal, "n_jobs", None)
            return cls("forest", S.shape[0], localizer=new)
        return cls("split", signed.shape[0], sorted_signed=np.sort(signed))

    # -- per-row quantities in signed-score units ------------------------------------------------------
    def _scale(self, X: np.ndarray) -> tuple[np.ndarray | None, np.ndarray]:
        leaves = self.localizer.leaves(X)
        return leaves, self.localizer.score_scale(X, leaves)

    def _split_scale(self, X: np.ndarray) -> np.ndarray:
        # a normalized localizer's split distribution is of S / sigma(x); plain split conformal's has no sigma
        return np.ones(X.shape[0]) if self.localizer is None else self.localizer.score_scale(X)

    def thresholds(self, X: Any, taus: Any, n_jobs: int | None = None) -> np.ndarray:
        """(rows, levels) thresholds t_{1-tau}(x) of the signed score: P(S <= t) >= tau; +inf where unreachable."""
        X = as_float_matrix(X, "X")
        m = tau_counts(taus, self.n)
        if self.kind == "split":
            S = self.sorted_signed
            t = np.where(m <= self.n, S[np.minimum(m, self.n) - 1] if self.n else np.inf, np.inf)
            return t[None, :] * self._split_scale(X)[:, None]
        idx = self.localizer._index()
        leaves, sigma = self._scale(X)
        t, _, _ = idx.levels(leaves, m, kernel_threads(n_jobs if n_jobs is not None else self.localizer.n_jobs))
        return t * sigma[:, None]

    def profiles(self, X: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """CSR (indptr, u, count): row q's support points u (signed units, ascending) and count(u+) at each.

        count / (n + 1) is the predictive CDF at u (right-continuous); past the last point the rest of the mass
        sits at +inf.
        """
        X = as_float_matrix(X, "X")
        rows = X.shape[0]
        if self.kind == "split":
            S = self.sorted_signed
            u = np.unique(S)
            c = np.searchsorted(S, u, side="right").astype(np.int64)
            support = (u[None, :] * self._split_scale(X)[:, None]).ravel()
            return np.arange(rows + 1, dtype=np.int64) * u.shape[0], support, np.tile(c, rows)
        idx = self.localizer._index()
        leaves, sigma = self._scale(X)
        indptr, u, c = idx.profiles(leaves)
        return indptr, u * np.repeat(sigma, np.diff(indptr)), c
