"""Conformal p-values: the smallest alpha at which a score leaves the set, for every nested calibrator.

Each calibrator here accepts a score v at level alpha iff an integer count(v),
which does not depend on alpha, stays below m_req(alpha) = ceil((1 - alpha)(n + 1)),
or (covariate shift) a weighted count M(v) stays below (1 - alpha + tol) T(x)
(docs/theory.md, "Conformal p-values"). Hence

    p(v) = (n + 1 - count(v)) / (n + 1),     resp.   p(v) = min(1, 1 + tol - M(v) / T(x)),

and v is in the set at alpha iff p(v) > alpha, for every alpha at once. The
counts are computed by the same operations as the thresholds, so the two
never disagree (tests/test_pvalue.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._parallel import kernel_threads
from .._tolerance import TIE_TOL
from .._validation import as_float_matrix, as_float_vector
from ..exceptions import InputError
from ..shift.value import new_row_ratios
from ..shift.weighted import ShiftWeights, shift_tolerance
from .base import Calibrator


def count_pvalue(count: np.ndarray, n: int) -> np.ndarray:
    """(n + 1 - count) / (n + 1): above alpha exactly when count < ceil((1 - alpha)(n + 1))."""
    return (n + 1 - np.asarray(count, dtype=np.float64)) / (n + 1)


def mass_pvalue(mass: np.ndarray, shift: ShiftWeights, w_test: np.ndarray) -> np.ndarray:
    """min(1, 1 + tol - M / T), T = sum_j w_j + w(x): above alpha exactly when M < (1 - alpha + tol) T.

    tol is the weighted rule's (:func:`confrf.shift.weighted.shift_tolerance`); T = 0 (no weight
    anywhere) rejects nothing: p = 1.
    """
    total = float(shift.total) + np.asarray(w_test, dtype=np.float64)
    tol = shift_tolerance(shift.n)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = 1.0 + tol - np.asarray(mass, dtype=np.float64) / total
    return np.where(total > 0, np.minimum(p, 1.0), 1.0)


def split_counts(sorted_scores: np.ndarray, v: np.ndarray) -> np.ndarray:
    """#{i : V_i < v}: split conformal's count (its threshold V_(m) is accepted iff fewer than m lie below)."""
    return np.searchsorted(sorted_scores, v, side="left")


def split_mass(u: np.ndarray, cum: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Weight strictly below v, read from the distinct scores and cumulative weights of the weighted split rule."""
    j = np.searchsorted(u, v, side="left")
    return np.where(j > 0, cum[np.maximum(j - 1, 0)], 0.0)


def forest_counts(localizer: Any, X: np.ndarray, v: np.ndarray, n_threads: int = 1) -> np.ndarray:
    """count(v) of exact LCP-RF for rows of X at their scores v (score units; divided by sigma(x) when scaled)."""
    idx = localizer._index()
    leaves = localizer.leaves(X)
    if localizer.scaled:
        v = v / localizer.score_scale(X, leaves)
    if localizer.pooled:  # one leaf (of V / sigma(x) when normalized)
        return split_counts(idx.scores_r, v)
    return idx.counts(leaves, v, n_threads)


def forest_mass(localizer: Any, shift_index: Any, X: np.ndarray, v: np.ndarray, n_threads: int = 1) -> np.ndarray:
    """The weighted count M(v) of covariate-shift LCP-RF for rows of X (as the weighted thresholds compute it)."""
    idx = localizer._index()
    leaves = localizer.leaves(X)
    if localizer.scaled:
        v = v / localizer.score_scale(X, leaves)
    return idx.mass_at(leaves, shift_index.cumw_p2, shift_index.w_r, v, n_threads)


def kernel_counts(localizer: Any, X: np.ndarray, v: np.ndarray, shift_w: np.ndarray | None = None) -> np.ndarray:
    """count(v) (or, with ``shift_w``, M(v)) of Guan's kernel LCP, by the expressions of its threshold search."""
    from ..localizers.bandwidth import kernel_matrix
    from ..localizers.kernel import _blocks

    Zq, Z = localizer._transform(X), localizer._indexed()
    V = localizer.scores_
    order = np.argsort(V, kind="stable")
    u, first = np.unique(V[order], return_index=True)
    r, n = u.shape[0], V.shape[0]
    last = np.append(first[1:], n) - 1
    out = np.zeros(Zq.shape[0])
    for b in _blocks(Zq.shape[0], n):
        k = kernel_matrix(Zq[b], Z, localizer.kernel, localizer.bandwidth_)
        theta = np.cumsum(k[:, order], axis=1)[:, last] / (k.sum(axis=1) + 1.0)[:, None]
        jj = np.searchsorted(u, v[b], side="left")  # distinct scores below v
        at = (jj < r) & (u[np.minimum(jj, r - 1)] == v[b])
        j = np.maximum(jj - 1, 0)  # the piece's theta index: (u_j, u_j+1) or the point u_j+1
        cut = np.where(at, u[np.minimum(jj, r - 1)], u[j])
        pi = (localizer.base_[None, :] + k * (V[None, :] > cut[:, None])) / (localizer.total_[None, :] + k)
        below = pi < (theta[np.arange(k.shape[0]), j] - TIE_TOL)[:, None]
        c = np.count_nonzero(below, axis=1).astype(np.float64) if shift_w is None else below @ shift_w
        out[b] = np.where(jj == 0, 0.0, c)  # v at or below the smallest score: always accepted
    return out


def refusal(cal: Calibrator) -> str | None:
    """Why a calibrator has no p-value (its sets are not nested in alpha, or its guarantee is not a p-value's)."""
    from .cross import CrossCalibrator
    from .groupwise_pac import GroupPACMixin
    from .pac import PACForestCalibrator
    from .slcp import SLCPCalibrator

    if isinstance(cal, CrossCalibrator):
        return (
            f"method {cal.name!r} has no conformal p-value: its intervals are not one score's sets {{V <= t}} and "
            "their guarantee is 1 - 2 alpha, so P(p <= a) <= a would not hold; use method='split' or 'lcp-rf'."
        )
    if isinstance(cal, (PACForestCalibrator, GroupPACMixin)):
        return (
            "the training-conditional (PAC) calibration learns a correction for one alpha on held-out points, so "
            "its sets at different alphas are not nested and no p-value inverts them; use guarantee='marginal'."
        )
    if isinstance(cal, SLCPCalibrator):
        return (
            "SLCP's score V - q_{1-alpha}(X) changes with alpha, so its sets at different alphas are not nested "
            "and no single p-value inverts them; use method='lcp' or 'lcp-rf'."
        )
    return None


def calibrator_pvalues(
    cal: Calibrator, X: Any, v: Any, *, labels: Any = None, likelihood_ratio: Any = None, n_jobs: int | None = None
) -> np.ndarray:
    """Conformal p-values of scores ``v`` at rows of X: p(x, v) = inf{alpha : v not in the set at x}.

    v is in the set at level alpha iff p > alpha, for every alpha (the thresholds' own rule).
    """
    from .groupwise import GroupwiseCalibrator
    from .lcp_kernel import KernelLCPCalibrator
    from .lcp_rf import LCPForestCalibrator
    from .lcp_rf_g import LCPForestGroupCalibrator
    from .split import SplitCalibrator
    from .split_g import SplitGroupCalibrator

    why = refusal(cal)
    if why is not None:
        raise InputError(why)
    X = as_float_matrix(X, "X")
    v = as_float_vector(v, "scores")
    if v.shape[0] != X.shape[0]:
        raise InputError(f"{v.shape[0]} scores for {X.shape[0]} rows.")
    if np.isnan(v).any():
        raise InputError("a response is NaN: give a response for every row to compute its p-value.")
    threads = kernel_threads(getattr(cal, "n_jobs", None))
    if isinstance(cal, GroupwiseCalibrator):
        codes = cal.assign(X, labels)
        shifts = getattr(cal, "group_shift_", None)
        w_test = new_row_ratios(likelihood_ratio, X.shape[0], shifts is not None)
        p = np.ones(X.shape[0])
        for c in np.unique(codes):
            rows = np.flatnonzero(codes == c)
            shift = None if shifts is None else shifts[c]
            if isinstance(cal, SplitGroupCalibrator):
                sub: Any = ("split", cal.sorted_scores_[c], getattr(cal, "_group_distinct", [None] * (c + 1))[c])
            else:
                assert isinstance(cal, LCPForestGroupCalibrator)
                loc = cal.group_localizers_[c]
                if loc is None:
                    continue  # no conformal point in the group: every set is the whole line, p = 1
                sub = ("forest", loc, None if shift is None else cal._group_shift_index[c])
            p[rows] = _pvalues_of(sub, X[rows], v[rows], shift, None if w_test is None else w_test[rows], threads)
        return p
    shift = getattr(cal, "shift_", None)
    w_test = new_row_ratios(likelihood_ratio, X.shape[0], shift is not None)
    if isinstance(cal, SplitCalibrator):
        sub = ("split", cal.sorted_scores_, getattr(cal, "_distinct", None))
    elif isinstance(cal, LCPForestCalibrator):
        sub = ("forest", cal.localizer, cal.shift_index_ if shift is not None else None)
    elif isinstance(cal, KernelLCPCalibrator):
        sub = ("kernel", cal.localizer, None)
    else:
        raise InputError(
            f"method {cal.name!r} offers no conformal p-values; use 'split', 'lcp-rf', 'lcp', 'split-g' or 'lcp-rf-g'."
        )
    return _pvalues_of(sub, X, v, shift, w_test, threads)


def _pvalues_of(
    sub: tuple[str, Any, Any],
    X: np.ndarray,
    v: np.ndarray,
    shift: ShiftWeights | None,
    w_test: np.ndarray | None,
    threads: int,
) -> np.ndarray:
    """p-values of one unit: ("split", sorted scores, distinct), ("forest", localizer, shift index), ("kernel", ...)."""
    kind, obj, extra = sub

    def counts(rows: np.ndarray) -> np.ndarray:
        if kind == "split":
            return split_counts(obj, v[rows])
        if kind == "forest":
            return forest_counts(obj, X[rows], v[rows], threads)
        return kernel_counts(obj, X[rows], v[rows])

    n = int(obj.shape[0] if kind == "split" else (obj._index().n if kind == "forest" else obj.scores_.shape[0]))
    p = np.ones(X.shape[0])
    everything = np.arange(X.shape[0])
    if shift is None or shift.n == 0:
        if n:
            p[:] = count_pvalue(counts(everything), n)
        return p
    assert w_test is not None  # a weighted calibration always gets the new rows' ratios
    plain = shift.unweighted_rows(w_test)  # every ratio equal: the integer rule, as the thresholds take it
    if plain.any():
        p[plain] = count_pvalue(counts(np.flatnonzero(plain)), n)
    rest = np.flatnonzero(~plain)
    if rest.size:
        if kind == "split":
            mass = split_mass(extra[0], extra[1], v[rest])
        elif kind == "forest":
            mass = forest_mass(obj, extra, X[rest], v[rest], threads)
        else:
            mass = kernel_counts(obj, X[rest], v[rest], shift_w=shift.w)
        p[rest] = mass_pvalue(mass, shift, w_test[rest])
    return p
