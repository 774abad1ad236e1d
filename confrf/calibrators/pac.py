"""Training-conditional (PAC) calibration with the forest localizer: QRF-TC and LCP-RF.

Paper: section "Training-Conditional coverage for LCP-RF" and the appendix proof.

Parts. The calibration set is split at random into three disjoint parts: the
correction part D2 (share ``pac_size``), and of the rest a share
``localizer_size`` grows the forest and the remainder, D1, carries the weights
(and, for LCP-RF, the exact LCP step).

Interval. F_x is the LCP test row of x: the forest weights of x on the D1 scores,
x counted in its own leaves and its own mass placed at +inf. For a correction
a >= 0 the score set of x is {v : v <= Q(min(1, b(x) + a); F_x)}, where
Q(1; F_x) = +inf (x's own mass), and the base level b(x) is

* QRF-TC: b(x) = 1 - alpha;
* LCP-RF, ``guarantee="pac"``: b(x) = alpha_tilde(x) := F_x((-inf, t(x)]), the
  test row's mass on D1 scores at or below the exact LCP-RF threshold t(x)
  computed with D1 as the conformal part (1 when t(x) = +inf). Q(b; F_x) = t(x)
  exactly for b in (F_x((-inf, t)), F_x((-inf, t])], and t(x) is a leaf-mate's
  score so F_x has mass there: at a = 0 the set is (-inf, t(x)], equal to the
  marginal LCP-RF set when that is closed and its closure (one more point) when
  it is open, never narrower. (The kernel's ``level`` for an open set is the
  mass strictly below t, whose quantile is the score below t: narrower.)

Correction. T = {a_0 = 0 < ... < a_{K-1} = alpha} (K = ``grid_size`` equally
spaced values); a_hat is the smallest a in T whose D2 coverage
#{i in D2 : V_i <= Q(min(1, b(X_i) + a); F_{X_i})} reaches
ceil(n2 (1 - alpha + epsilon)) (``pac_form="inflated"``, the default) or
ceil(n2 (1 - alpha)) (``pac_form="paper"``), epsilon = sqrt(ln(K/delta)/(2 n2)).

Why it holds. Given the forest and D1, the interval map is fixed and, for each a
in T, the D2 indicators are i.i.d. Bernoulli with mean cov(a), the coverage of a
new point. One-sided Hoeffding: P(mean_D2(a) >= cov(a) + epsilon) <=
exp(-2 n2 epsilon^2); a union bound over the K values of T: with probability at
least 1 - K exp(-2 n2 epsilon^2) = 1 - delta, cov(a) > mean_D2(a) - epsilon for
every a, in particular for a_hat, so cov(a_hat) > 1 - alpha (inflated) or
> 1 - alpha - epsilon (paper). This needs i.i.d. points, not just exchangeable
ones. If no grid value reaches the target, every interval is infinite (coverage
1), which keeps the statement; a :class:`~confrf.exceptions.PACTargetWarning`
and the summary say so.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from .. import _kernels
from .._validation import as_float_matrix, as_float_vector, required_count
from ..exceptions import InputError, PACTargetWarning
from ..localizers.forest import ForestLocalizer
from .base import Calibrator, Guarantee, Thresholds, check_conformal_size
from .._parallel import kernel_threads
from .forest_setup import PAC_DEFAULTS, make_forest_localizer
from .pac_bounds import d2_required_count, min_d2_size, pac_epsilon
from .pac_report import PACReport
from .registry import MethodSpec, register, register_variant

PAC_FORMS = ("inflated", "paper")
BASES = {"qrf": "qrf-tc", "lcp": "lcp-rf"}


@dataclass(frozen=True, eq=False)
class _Correction:
    epsilon: float
    required: int
    grid: np.ndarray
    counts: np.ndarray
    k_hat: int | None


class PACForestCalibrator(Calibrator):
    """Training-conditional calibration of the forest localizer (QRF-TC or LCP-RF).

    Parameters
    ----------
    localizer : ForestLocalizer
        Forest settings; it must be honest (grown on its own part).
    base : {"qrf", "lcp"}
        Base level: 1 - alpha (QRF-TC) or the exact LCP alpha-tilde(x) on D1
        (LCP-RF with ``guarantee="pac"``).
    localizer_size : float
        Share of the non-D2 calibration points that grows the forest; the rest is D1.
    pac_size : float
        Share of the calibration set held out as the correction part D2.
    delta : float
        The guarantee holds with probability at least 1 - delta.
    grid_size : int
        Number K >= 2 of equally spaced correction values in [0, alpha].
    pac_form : {"inflated", "paper"}
        See :class:`PACReport`.
    n_jobs : int or None
        Threads of the LCP kernel.

    Examples
    --------
    >>> import numpy as np
    >>> from confrf.calibrators.pac import PACForestCalibrator
    >>> from confrf.localizers import ForestLocalizer
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(3000, 2)); V = np.abs(X[:, 0] * rng.normal(size=3000))
    >>> cal = PACForestCalibrator(ForestLocalizer(n_estimators=20, random_state=0), base="qrf")
    >>> cal = cal.calibrate(X, V, alpha=0.1, rng=rng)
    >>> cal.pac_report(0.1).reached
    True
    """

    def __init__(self, localizer: ForestLocalizer, base: str = "lcp", localizer_size: float = 0.5,
                 pac_size: float = PAC_DEFAULTS["pac_size"], delta: float = PAC_DEFAULTS["delta"],
                 grid_size: int = PAC_DEFAULTS["grid_size"], pac_form: str = PAC_DEFAULTS["pac_form"],
                 n_jobs: int | None = None) -> None:
        if base not in BASES:
            raise InputError(f"base must be one of {sorted(BASES)}, got {base!r}.")
        for name, v in (("localizer_size", localizer_size), ("pac_size", pac_size), ("delta", delta)):
            if isinstance(v, bool) or not isinstance(v, Real) or not (0.0 < float(v) < 1.0):
                raise InputError(f"{name} must lie strictly between 0 and 1, got {v!r}.")
        if isinstance(grid_size, bool) or not isinstance(grid_size, Integral) or grid_size < 2:
            raise InputError(f"grid_size must be an integer >= 2 (the grid runs from 0 to alpha), got {grid_size!r}.")
        if pac_form not in PAC_FORMS:
            raise InputError(f"pac_form must be one of {list(PAC_FORMS)}, got {pac_form!r}.")
        self.localizer = localizer
        self.base = base
        self.name = BASES[base]
        self.localizer_size = float(localizer_size)
        self.pac_size = float(pac_size)
        self.delta = float(delta)
        self.grid_size = int(grid_size)
        self.pac_form = pac_form
        self.n_jobs = n_jobs

    # -- calibration -------------------------------------------------------
    def calibrate(self, X, scores, *, alpha, rng) -> "PACForestCalibrator":
        X = as_float_matrix(X, "X")
        V = as_float_vector(scores, "scores")
        if not self.localizer.honest:
            raise InputError(
                f"method {self.name!r} with a training-conditional guarantee grows the forest on its own part, "
                "disjoint from D1 and D2; honest=False is not available here. Use honest=True (the default)."
            )
        n = X.shape[0]
        n2 = int(round(self.pac_size * n))
        self._check_d2(n2, alpha, whole_set_hint=True)
        perm = rng.permutation(n)
        d2, rest = np.sort(perm[:n2]), perm[n2:]
        n_grow = int(round(self.localizer_size * rest.shape[0]))
        grow, d1 = np.sort(rest[:n_grow]), np.sort(rest[n_grow:])
        if n_grow < 2:
            raise InputError(f"the localizer part has {n_grow} point(s); give more calibration data or a larger localizer_size.")
        if self.base == "lcp":
            check_conformal_size(d1.shape[0], alpha, "conformal part D1 of the calibration set")
        elif d1.shape[0] < 1:
            raise InputError("the weights part D1 is empty; give more calibration data or a smaller localizer_size.")
        self.localizer.grow(X[grow], V[grow])
        self.localizer.index(X[d1], V[d1])
        self.parts_ = {"localizer": grow, "D1": d1, "D2": d2}  # row indices into the calibration set
        self.X2_, self.V2_ = X[d2], V[d2]
        self.n_grow_, self.n1_, self.n2_ = int(grow.shape[0]), int(d1.shape[0]), n2
        self.corrections_: dict[float, _Correction] = {}
        self._correction(alpha)
        return self

    def _check_d2(self, n2: int, alpha: float, whole_set_hint: bool = False) -> None:
        need = min_d2_size(alpha, self.grid_size, self.delta)
        if n2 >= need:
            return
        got = "no points" if n2 == 0 else f"{n2} point(s), so epsilon = {pac_epsilon(n2, self.grid_size, self.delta):.4g}"
        whole = f" (a calibration set of about {int(np.ceil(need / self.pac_size))} points at pac_size={self.pac_size:g})"
        raise InputError(
            f"the correction part D2 has {got}; with alpha={alpha:g}, delta={self.delta:g} and grid_size="
            f"{self.grid_size} it needs at least {need} points{whole if whole_set_hint else ''} so that "
            f"epsilon = sqrt(ln(K/delta)/(2 n2)) < alpha. Give more calibration data, a larger pac_size, "
            "a larger delta or alpha, or a smaller grid_size."
        )

    def _rows(self, X: np.ndarray, alpha: float) -> tuple[sp.csr_matrix, np.ndarray]:
        """LCP test rows F_x on the D1 scores (own mass left out: it sits at +inf) and base levels b(x)."""
        W, _ = self.localizer.lcp_rows(X)
        m = W.shape[0]
        if self.base == "qrf":
            return W, np.full(m, 1.0 - alpha)
        t, _, _ = self.localizer.thresholds(X, required_count(alpha, self.n1_), n_threads=kernel_threads(self.n_jobs))
        return W, self._mass_at_or_below(W, t)

    def _mass_at_or_below(self, W: sp.csr_matrix, t: np.ndarray) -> np.ndarray:
        """F_x((-inf, t]) per row; 1 where t is infinite (the own mass at +inf counts)."""
        rows = np.repeat(np.arange(W.shape[0]), np.diff(W.indptr))
        keep = self.localizer.index_.scores[W.indices] <= t[rows]
        mass = np.bincount(rows[keep], weights=W.data[keep], minlength=W.shape[0])
        mass[~np.isfinite(t)] = 1.0
        return mass

    def _quantiles(self, W: sp.csr_matrix, levels: np.ndarray) -> np.ndarray:
        """Q(levels[i, j]; F_i); a level above the row's D1 mass gives +inf."""
        return _kernels.csr_row_quantiles(
            W.indptr.astype(np.int64), W.indices.astype(np.int32), W.data, self.localizer.index_.scores,
            np.ascontiguousarray(levels, dtype=np.float64),
        )

    def _correction(self, alpha: float) -> _Correction:
        """a_hat at ``alpha`` from D2 (computed once per alpha)."""
        key = float(alpha)
        if key in self.corrections_:
            return self.corrections_[key]
        self._check_d2(self.n2_, alpha)
        eps = pac_epsilon(self.n2_, self.grid_size, self.delta)
        required = d2_required_count(self.n2_, alpha, eps if self.pac_form == "inflated" else 0.0)
        grid = np.linspace(0.0, alpha, self.grid_size)
        W, base = self._rows(self.X2_, alpha)
        # the same level arithmetic as thresholds(): a D2 point is scored exactly like a test point
        Q = self._quantiles(W, np.minimum(1.0, base[:, None] + grid[None, :]))
        counts = np.count_nonzero(self.V2_[:, None] <= Q, axis=0)
        hits = np.flatnonzero(counts >= required)
        k_hat = int(hits[0]) if hits.size else None
        if k_hat is None:
            warnings.warn(
                f"{self.name}: no correction in [0, alpha={alpha:g}] reached the D2 target ({required} of "
                f"{self.n2_} covered; best {int(counts[-1])}); every interval is infinite, which keeps the "
                "training-conditional guarantee. Give more data to D1 or the forest, or a larger alpha.",
                PACTargetWarning, stacklevel=3,
            )
        c = _Correction(eps, required, grid, counts, k_hat)
        self.corrections_[key] = c
        return c

    # -- queries -----------------------------------------------------------
    def prepare(self, alpha: float) -> None:
        self._correction(alpha)

    def thresholds(self, X, alpha) -> Thresholds:
        """t = Q(min(1, b(x) + a_hat); F_x), always closed; ``level`` = F_x((-inf, t]) (1 where t is inf)."""
        X = as_float_matrix(X, "X")
        c = self._correction(alpha)
        m = X.shape[0]
        if c.k_hat is None:
            return Thresholds(np.full(m, np.inf), np.ones(m, dtype=bool), np.ones(m))
        W, base = self._rows(X, alpha)
        t = self._quantiles(W, np.minimum(1.0, base + c.grid[c.k_hat])[:, None])[:, 0]
        return Thresholds(t, np.ones(m, dtype=bool), self._mass_at_or_below(W, t))

    def guarantee(self, alpha) -> Guarantee:
        return Guarantee("pac", True, self.pac_report(alpha).sentence)

    def pac_report(self, alpha: float) -> PACReport:
        """The correction chosen at ``alpha`` and the statement it gives."""
        c = self._correction(alpha)
        n2, K = self.n2_, self.grid_size
        reached = c.k_hat is not None
        k = c.k_hat if reached else K - 1
        cover = c.counts / n2
        if self.pac_form == "inflated":
            target, guaranteed = 1 - alpha + c.epsilon, 1 - alpha
            shown = f"{guaranteed:g}"
            how = f"the D2 target is 1 - alpha + epsilon = {target:.4g}"
        else:
            target, guaranteed = 1 - alpha, 1 - alpha - c.epsilon
            shown = f"{math.floor(guaranteed * 1e4) / 1e4:g}"  # rounded down: never print more than holds
            how = "the paper's form: D2 target 1 - alpha, guarantee 1 - alpha - epsilon"
        sentence = (
            f"With probability at least {1 - self.delta:g} over the calibration data, the coverage "
            f"P(Y in interval | calibration data) is at least {shown} (training-conditional, PAC: "
            f"Hoeffding on n2={n2} correction points and a union bound over K={K} grid values, "
            f"epsilon={c.epsilon:.4g}; {how}), if the calibration and test points are i.i.d. "
            "(independent draws from one distribution; exchangeability is not enough)."
        )
        if not reached:
            sentence += " No grid value reached the D2 target, so every interval is infinite (coverage 1)."
        return PACReport(
            method=self.name, form=self.pac_form, alpha=float(alpha), delta=self.delta, epsilon=c.epsilon, K=K,
            n2=n2, target=float(target), required_count=c.required,
            a_hat=float(c.grid[c.k_hat]) if reached else None, d2_coverage=float(cover[k]), reached=reached,
            guaranteed_coverage=float(guaranteed), sentence=sentence,
            grid=pd.DataFrame({"a": c.grid, "d2_coverage": cover}),
        )

    def sizes(self) -> dict[str, int]:
        return {"localizer": self.n_grow_, "D1": self.n1_, "D2": self.n2_}

    def describe(self) -> dict[str, Any]:
        return self.localizer.describe()


def make_pac_calibrator(base: str, est: Any, opts: dict[str, Any], seed: int | None) -> PACForestCalibrator:
    """Build from an estimator's shared settings and method options (``None`` = default)."""
    o = {k: PAC_DEFAULTS[k] if opts.get(k) is None else opts[k] for k in PAC_DEFAULTS}
    return PACForestCalibrator(make_forest_localizer(est, seed), base=base, localizer_size=est.localizer_size,
                               n_jobs=est.n_jobs, **o)


register(MethodSpec(
    "qrf-tc",
    lambda est, opts, seed: make_pac_calibrator("qrf", est, opts, seed),
    options=dict(PAC_DEFAULTS),
    title="QRF-TC (forest quantiles, training-conditional calibration)",
))
register_variant("lcp-rf", "pac", lambda est, opts, seed: make_pac_calibrator("lcp", est, opts, seed))
