"""The PAC correction of a forest localizer: the nested family of score sets and the two bounds.

Family. Given the forest and the indexed part D1, F_x is the LCP test row of x on the
D1 scores (x counted in its own leaves, its own mass at +inf) and b(x) a base level.
For a correction a (a real number; negative when the base level over-covers) the score
set of x is

    S(x; a) = {v : v <= Q(u_a(x); F_x)},   u_a(x) = min(1, max(b(x) + a, tiny)),
    Q(u; F) = inf{t : F(t) >= u},

computed by the quantile kernel, which reads F(t) >= u as ``cum >= u - 1e-12`` (tiny, the
smallest positive float, keeps the set non-empty: its smallest value is the row's smallest
score). By the key identity, v in S(x; a) iff F_x((-inf, v)) < u_a(x) - 1e-12 (in the same
floating-point arithmetic), so S(x; a) grows with a, and a point (x, v) is covered at a
iff a >= A(x, v), the smallest float a in [-1, 1] that covers it: the correction "just
covering" the point, attained because corrections are floats.

Binomial bound (exact order statistic). a_hat = A_(k), the k-th smallest of the n2 values
A_j of D2, k = binomial_k(n2, alpha, delta). Why it holds: given the forest and D1 the
A_j are i.i.d. copies of A = A(X, V), and the coverage of a new point at correction a is
G(a) = P(A <= a). Let B = {a : G(a) < 1 - alpha}; B is a down-set, so P(A in B) <= 1 - alpha
(B = (-inf, a*) or (-inf, a*]). If G(a_hat) < 1 - alpha then a_hat = A_(k) lies in B, so
at least k of the A_j lie in B: a Binomial(n2, P(A in B)) count, stochastically smaller than
Binomial(n2, 1 - alpha). Hence P(G(a_hat) < 1 - alpha) <= P(Binomial(n2, 1 - alpha) >= k)
<= delta. Ties among the A_j and atoms of A only make it conservative. If k > n2,
a_hat = +inf: every interval is infinite (coverage 1).

Hoeffding bound (the paper's). a_hat is the smallest value of the grid
{0, alpha/(K-1), ..., alpha} whose D2 coverage reaches ceil(n2 (1 - alpha + epsilon))
(``form="inflated"``) or ceil(n2 (1 - alpha)) (``form="paper"``),
epsilon = sqrt(ln(K / delta) / (2 n2)): one-sided Hoeffding per grid value and a union bound.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .. import _kernels
from .._parallel import kernel_threads
from .._validation import required_count
from ..localizers.forest import ForestLocalizer
from .base import Thresholds
from .pac_bounds import _hoeffding_epsilon, binomial_k, d2_required_count

#: the quantile kernel's tolerance: cumulative masses within it of a level reach it
QUANTILE_TOL = 1e-12
#: the lowest level of the family: the set keeps the row's smallest score (a level <= 0 would empty it)
LEVEL_FLOOR = float(np.finfo(np.float64).tiny)
_INT64_MIN = np.int64(np.iinfo(np.int64).min)


def levels(b: np.ndarray, a: float | np.ndarray) -> np.ndarray:
    """u_a(x) = min(1, max(b(x) + a, tiny)): the quantile level of correction a (b + a for a >= 0 and b > 0)."""
    return np.clip(b + a, LEVEL_FLOOR, 1.0)


def _key(x: np.ndarray | np.float64) -> np.ndarray:
    """Integers ordered like the floats x (finite, -0.0 and 0.0 alike)."""
    bits = np.asarray(x, dtype=np.float64).view(np.int64)
    return np.where(bits >= 0, bits, _INT64_MIN - bits)


def _unkey(k: np.ndarray) -> np.ndarray:
    k = np.asarray(k, dtype=np.int64)
    return np.where(k >= 0, k, _INT64_MIN - k).view(np.float64)


@dataclass(frozen=True, eq=False)
class PACNumbers:
    """What every training-conditional correction states: its bound and form, alpha and delta, the D2 size n2,
    the count k and epsilon (the D2 coverage beyond 1 - alpha that the bound asks for)."""

    bound: str
    form: str
    alpha: float
    delta: float
    n2: int
    k: int
    epsilon: float


@dataclass(frozen=True, eq=False)
class Correction(PACNumbers):
    """A correction chosen on D2 and the numbers behind it.

    ``k``: the order statistic (binomial) or the D2 count needed (Hoeffding);
    ``a_hat`` is ``inf`` when every interval is infinite; ``covered``: D2 points
    covered at ``a_hat``; ``d2_infinite``: share of D2 points whose interval at
    ``a_hat`` is infinite (an estimate of that share on new points).
    """

    a_hat: float
    covered: int
    d2_infinite: float
    grid: np.ndarray | None = None
    counts: np.ndarray | None = None
    cap_coverage: float = (
        1.0  # D2 coverage below the correction where the D2 share of infinite intervals passes the cap
    )
    corrections: np.ndarray | None = None  # binomial: the sorted A_j of D2

    @property
    def reached(self) -> bool:
        return bool(np.isfinite(self.a_hat))


class ForestPACMap:
    """S(x; a) of a forest localizer indexed on D1, with base level b(x) ("qrf" or "lcp")."""

    def __init__(self, localizer: ForestLocalizer, base: str, n_jobs: int | None = None) -> None:
        self.localizer = localizer
        self.base = base
        self.n_jobs = n_jobs

    @property
    def n1(self) -> int:
        return self.localizer._index().n

    def rows(self, X: np.ndarray, alpha: float) -> tuple[sp.csr_matrix, np.ndarray]:
        """LCP test rows F_x on the D1 scores (own mass left out: it sits at +inf) and base levels b(x)."""
        W, _ = self.localizer.lcp_rows(X)
        m = W.shape[0]
        if self.base == "qrf":
            return W, np.full(m, 1.0 - alpha)
        m_req = required_count(alpha, self.n1)
        if m_req > self.n1:
            return W, np.ones(m)
        t, _, _ = self.localizer.thresholds(X, m_req, n_threads=kernel_threads(self.n_jobs))
        return W, self.mass_at_or_below(W, t)

    def mass_at_or_below(self, W: sp.csr_matrix, t: np.ndarray) -> np.ndarray:
        """F_x((-inf, t]) per row; 1 where t is infinite (the own mass at +inf counts)."""
        rows = np.repeat(np.arange(W.shape[0]), np.diff(W.indptr))
        keep = self.localizer._index().scores[W.indices] <= t[rows]
        mass = np.bincount(rows[keep], weights=W.data[keep], minlength=W.shape[0])
        mass[~np.isfinite(t)] = 1.0
        return mass

    def quantiles(self, W: sp.csr_matrix, levels: np.ndarray) -> np.ndarray:
        """Q(levels[i, j]; F_i); a level above the row's D1 mass gives +inf."""
        return _kernels.csr_row_quantiles(
            W.indptr.astype(np.int64),
            W.indices.astype(np.int32),
            W.data,
            self.localizer._index().scores,
            np.ascontiguousarray(levels, dtype=np.float64),
            QUANTILE_TOL,
        )

    def thresholds(self, X: np.ndarray, alpha: float, a: float) -> Thresholds:
        """t = Q(min(1, b(x) + a); F_x), always closed; ``level`` = F_x((-inf, t]) (1 where t is inf)."""
        m = X.shape[0]
        if not np.isfinite(a):
            return Thresholds(np.full(m, np.inf), np.ones(m, dtype=bool), np.ones(m))
        W, b = self.rows(X, alpha)
        t = self.quantiles(W, levels(b, a)[:, None])[:, 0]
        return Thresholds(t, np.ones(m, dtype=bool), self.mass_at_or_below(W, t))

    def _cum_below(self, W: sp.csr_matrix, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per row: the kernel's cumulative mass of the atoms strictly below V_i (-inf: none) and the row's D1 mass.

        The same order (scores by stable rank) and the same sequential sums as the quantile
        kernel, so comparisons with a level give bit for bit the kernel's answer.
        """
        scores = self.localizer._index().scores
        rank = np.empty(scores.shape[0], dtype=np.int64)
        rank[np.argsort(scores, kind="stable")] = np.arange(scores.shape[0])
        below = np.full(W.shape[0], -np.inf)
        total = np.zeros(W.shape[0])
        for i in range(W.shape[0]):
            lo, hi = W.indptr[i], W.indptr[i + 1]
            if lo == hi:
                continue
            order = np.argsort(rank[W.indices[lo:hi]])
            cum = np.cumsum(W.data[lo:hi][order])
            e = int(np.searchsorted(scores[W.indices[lo:hi][order]], V[i], side="left")) - 1
            if e >= 0:
                below[i] = cum[e]
            total[i] = cum[-1]
        return below, total

    @staticmethod
    def _first_float(ok, n: int, lo: float, hi: float) -> np.ndarray:
        """Per row, the smallest float a in [lo, hi] with ok(rows, a) true (ok monotone in a); inf if none."""
        rows = np.arange(n)
        out = np.full(n, np.inf)
        at_lo = ok(rows, np.full(n, lo))
        out[at_lo] = lo
        todo = ok(rows, np.full(n, hi)) & ~at_lo
        klo = np.full(n, _key(np.float64(lo)), dtype=np.int64)  # fails at klo, works at khi
        khi = np.full(n, _key(np.float64(hi)), dtype=np.int64)
        while True:
            active = np.flatnonzero(todo & (khi - klo > 1))
            if not active.size:
                break
            mid = klo[active] + (khi[active] - klo[active]) // 2
            good = ok(active, _unkey(mid))
            khi[active[good]] = mid[good]
            klo[active[~good]] = mid[~good]
        out[todo] = _unkey(khi[todo])
        return out

    def smallest_corrections(self, X2: np.ndarray, V2: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
        """(A_j, I_j) per D2 point: the smallest covering correction and the smallest giving an infinite interval."""
        W, b = self.rows(X2, alpha)
        below, total = self._cum_below(W, V2)
        n = X2.shape[0]

        def covers(r, a):
            return below[r] < levels(b[r], a) - QUANTILE_TOL

        def infinite(r, a):
            return total[r] < levels(b[r], a) - QUANTILE_TOL

        # every level is reached within [-1, 1]: b + 1 >= 1 and b - 1 <= 0
        return self._first_float(covers, n, -1.0, 1.0), self._first_float(infinite, n, -1.0, 1.0)


def binomial_correction(
    pmap: ForestPACMap, X2: np.ndarray, V2: np.ndarray, alpha: float, delta: float, max_infinite: float
) -> Correction:
    """a_hat = k-th smallest A_j (see the module docstring); inf when k > n2."""
    n2 = X2.shape[0]
    k = binomial_k(n2, alpha, delta)
    A, A_inf = pmap.smallest_corrections(X2, V2, alpha)
    a_hat = float(np.sort(A)[k - 1]) if k <= n2 else np.inf
    covered = int(np.count_nonzero(A <= a_hat))
    eps = k / n2 - (1.0 - alpha) if k <= n2 else np.inf
    return Correction(
        "binomial",
        "exact",
        float(alpha),
        float(delta),
        n2,
        k,
        eps,
        a_hat,
        covered,
        float(np.mean(A_inf <= a_hat)),
        cap_coverage=float(np.mean(A < _cap(A_inf, max_infinite))),
        corrections=np.sort(A),
    )


def hoeffding_correction(
    pmap: ForestPACMap,
    X2: np.ndarray,
    V2: np.ndarray,
    alpha: float,
    delta: float,
    K: int,
    form: str,
    max_infinite: float,
) -> Correction:
    """The paper's grid correction (unchanged from the first implementation)."""
    n2 = X2.shape[0]
    eps = _hoeffding_epsilon(n2, K, delta)
    required = d2_required_count(n2, alpha, eps if form == "inflated" else 0.0)
    grid = np.linspace(0.0, alpha, K)
    W, base = pmap.rows(X2, alpha)
    # the same level arithmetic as thresholds(): a D2 point is scored exactly like a test point
    Q = pmap.quantiles(W, levels(base[:, None], grid[None, :]))
    counts = np.count_nonzero(V2[:, None] <= Q, axis=0)
    hits = np.flatnonzero(counts >= required)
    j = int(hits[0]) if hits.size else None
    a_hat = float(grid[j]) if j is not None else np.inf
    _, A_inf = pmap.smallest_corrections(X2, V2, alpha)
    return Correction(
        "hoeffding",
        form,
        float(alpha),
        float(delta),
        n2,
        required,
        eps,
        a_hat,
        int(counts[j if j is not None else -1]),
        float(np.mean(A_inf <= a_hat)),
        grid,
        counts,
        cap_coverage=float(np.mean(V2[:, None] <= Q, axis=0)[grid < _cap(A_inf, max_infinite)].max(initial=0.0)),
    )


def _cap(A_inf: np.ndarray, share: float) -> float:
    """Largest correction below which at most ``share`` of the D2 intervals are infinite."""
    if not A_inf.size:
        return np.inf
    j = int(np.floor(share * A_inf.shape[0]))
    s = np.sort(A_inf)
    return float(s[j]) if j < s.shape[0] else np.inf
