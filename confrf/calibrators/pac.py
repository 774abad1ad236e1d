"""Training-conditional (PAC) calibration with the forest localizer: QRF-TC and LCP-RF.

Paper: section "Training-Conditional coverage for LCP-RF" and the appendix proof.

Parts. The calibration set is split at random into three disjoint parts: the
correction part D2 (share ``pac_size``), and of the rest a share
``localizer_size`` grows the forest and the remainder, D1, carries the weights
(and, for LCP-RF, the exact LCP step).

Interval. F_x is the LCP test row of x: the forest weights of x on the D1 scores,
x counted in its own leaves and its own mass placed at +inf. For a correction a
the score set of x is {v : v <= Q(min(1, b(x) + a); F_x)}, where Q(1; F_x) = +inf
(x's own mass) and, for the binomial bound, where a may be negative, the level is
kept at or above the smallest positive float. The base level b(x) is

* QRF-TC: b(x) = 1 - alpha;
* LCP-RF, ``guarantee="pac"``: b(x) = alpha_tilde(x) := F_x((-inf, t(x)]), the
  test row's mass on D1 scores at or below the exact LCP-RF threshold t(x)
  computed with D1 as the conformal part (1 when t(x) = +inf). Q(b; F_x) = t(x)
  exactly for b in (F_x((-inf, t)), F_x((-inf, t])], and t(x) is a leaf-mate's
  score so F_x has mass there: at a = 0 the set is (-inf, t(x)], equal to the
  marginal LCP-RF set when that is closed and its closure (one more point) when
  it is open, never narrower. (The kernel's ``level`` for an open set is the
  mass strictly below t, whose quantile is the score below t: narrower.)

Correction (calibrators/pac_correction.py has the derivations).

* ``pac_bound="binomial"`` (default): a_hat is the k-th smallest of the
  corrections A_j that just cover each D2 point, k the smallest integer with
  P(Binomial(n2, 1 - alpha) >= k) <= delta. No grid; a_hat < 0 when the base
  level already covers more of D2 than needed.
* ``pac_bound="hoeffding"``: the paper's grid of K = ``grid_size`` values in
  [0, alpha], the D2 target 1 - alpha + epsilon (``pac_form="inflated"``) or
  1 - alpha (``pac_form="paper"``), epsilon = sqrt(ln(K/delta)/(2 n2)).

Either way, for i.i.d. data, P(coverage >= 1 - alpha) >= 1 - delta (paper's
form: 1 - alpha - epsilon). When no finite correction exists every interval is
infinite (coverage 1), which keeps the statement; the fit says so.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .._validation import as_float_matrix, as_float_vector, check_fraction, check_int
from .._warnings import user_stacklevel
from ..exceptions import InfiniteIntervalWarning, InputError, PACTargetWarning
from ..localizers.forest import ForestLocalizer
from ..shift.weighted import PAC_REFUSAL
from .base import Calibrator, Guarantee, Thresholds, check_conformal_size
from .forest_setup import PAC_DEFAULTS, make_forest_localizer
from .forest_source import TrainingPart, check_localizer_data, forest_settings, training_options, uses_training
from .pac_bounds import BOUNDS, _hoeffding_epsilon, min_d2_size, open_unit, pac_n2
from .pac_correction import Correction, ForestPACMap, binomial_correction, hoeffding_correction
from .pac_report import PACReport, make_report
from .registry import MethodSpec, register, register_variant

PAC_FORMS = ("inflated", "paper")
BASES = {"qrf": "qrf-tc", "lcp": "lcp-rf"}
#: a fit warns when more than this share of its D2 intervals are infinite
MAX_INFINITE_SHARE = 0.02


def resolve_pac_options(
    pac_bound: str | None, grid_size: int | None, pac_form: str | None
) -> tuple[str, int | None, str]:
    """(bound, K, form) after defaults: binomial unless a grid size or a form (Hoeffding's options) is given."""
    if pac_bound is None:
        pac_bound = "hoeffding" if grid_size is not None or pac_form is not None else "binomial"
    if pac_bound not in BOUNDS:
        raise InputError(f"pac_bound must be one of {list(BOUNDS)}, got {pac_bound!r}.")
    if pac_bound == "binomial":
        for name, v in (("grid_size", grid_size), ("pac_form", pac_form)):
            if v is not None:
                raise InputError(
                    f"{name} applies only to pac_bound='hoeffding' (the paper's grid bound); the "
                    "binomial bound needs no grid. Drop it or use pac_bound='hoeffding'."
                )
        return "binomial", None, "exact"
    grid_size = (
        20 if grid_size is None else check_int(grid_size, "grid_size", minimum=2, hint="the grid runs from 0 to alpha")
    )
    pac_form = "inflated" if pac_form is None else pac_form
    if pac_form not in PAC_FORMS:
        raise InputError(f"pac_form must be one of {list(PAC_FORMS)}, got {pac_form!r}.")
    return "hoeffding", int(grid_size), pac_form


def refuse_small_d2(
    n2: int,
    alpha: float,
    delta: float,
    bound: str,
    K: int | None,
    pac_size: float | None,
    part: str = "correction part D2",
) -> None:
    """Refuse a D2 on which every interval would be infinite, naming the size needed."""
    need = min_d2_size(alpha, K, delta, bound)
    if n2 >= need:
        return
    whole = (
        ""
        if pac_size is None
        else f" (a calibration set of about {int(np.ceil(need / pac_size))} points at pac_size={pac_size:g})"
    )
    if bound == "binomial":
        why = (
            f"P(Binomial(n2, {1 - alpha:g}) >= n2) = {1 - alpha:g}^n2 <= delta, "
            "else k > n2 and every interval is infinite"
        )
    else:
        eps = "" if n2 == 0 else f", so epsilon = {_hoeffding_epsilon(n2, K, delta):.4g}"
        why = f"epsilon = sqrt(ln(K/delta)/(2 n2)) < alpha (grid_size={K}{eps})"
    got = "no points" if n2 == 0 else f"{n2} point(s)"
    raise InputError(
        f"the {part} has {got}; with alpha={alpha:g}, delta={delta:g} and pac_bound={bound!r} it needs at least "
        f"{need} points{whole} so that {why}. Give more calibration data, a larger pac_size, a larger delta or alpha"
        + (", or pac_bound='binomial' (much smaller)." if bound == "hoeffding" else ".")
    )


def warn_infinite(name: str, c: Correction) -> None:
    """Warn at fit time when the correction leaves only, or too many, infinite intervals."""
    if not c.reached:
        what = "no grid value in [0, alpha]" if c.bound == "hoeffding" else "no finite correction"
        warnings.warn(
            f"{name}: {what} reached the D2 target ({c.k} of {c.n2} covered; best {c.covered}); every interval is "
            "infinite, which keeps the training-conditional guarantee. Give more data to D1 or the forest, a "
            "larger alpha, or pac_bound='binomial'.",
            PACTargetWarning,
            stacklevel=user_stacklevel(),
        )
        return
    if c.d2_infinite <= MAX_INFINITE_SHARE:
        return
    hint = ""
    if c.bound == "binomial":
        reach = c.cap_coverage  # D2 coverage of the largest correction that keeps the share small
        if reach > 1 - c.alpha:
            n_need = pac_n2(alpha=c.alpha, delta=c.delta, epsilon=reach - (1 - c.alpha), bound="binomial")
            hint = (
                f" About n2 = {n_need} D2 points (a larger pac_size or more calibration data) would lower the "
                f"D2 target to the {reach:.3f} that keeps this share under {MAX_INFINITE_SHARE:.0%}."
            )
        else:
            hint = " More D2 points alone do not help: give D1 and the forest more data (larger leaves)."
    warnings.warn(
        f"{name}: about {c.d2_infinite:.1%} of the intervals will be infinite (share on the D2 points at "
        f"a_hat = {c.a_hat:.4g}; n2 = {c.n2}, D2 target {c.k}/{c.n2} = {c.k / c.n2:.3f}).{hint}",
        InfiniteIntervalWarning,
        stacklevel=user_stacklevel(),
    )


class PACForestCalibrator(TrainingPart, Calibrator):
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
    pac_bound : {"binomial", "hoeffding"} or None
        "binomial" (default): the exact order statistic of the D2 corrections.
        "hoeffding": the paper's grid with Hoeffding and a union bound (chosen
        when ``grid_size`` or ``pac_form`` is given without ``pac_bound``).
    grid_size : int or None
        Hoeffding only: number K >= 2 of equally spaced corrections in [0, alpha] (20).
    pac_form : {"inflated", "paper"} or None
        Hoeffding only (see :class:`PACReport`); "inflated" by default.
    n_jobs : int or None
        Threads of the LCP kernel.
    localizer_data : {"calibration", "training", "auto"}
        What the forest grows on (:mod:`confrf.calibrators.forest_source`):
        "training" grows it on the training part (:meth:`set_reference`) and
        every non-D2 calibration point is in D1; "calibration" and "auto" on
        a localizer share of the non-D2 points.

    Notes
    -----
    Binomial bound. Given the forest and D1 the interval map is fixed and the
    score sets grow with the correction a; A_j is the smallest correction whose
    set holds D2 point j, so point j is covered at a iff A_j <= a, and the
    coverage of a new point at a is G(a) = P(A <= a). With a_hat = A_(k), k the
    smallest integer with P(Binomial(n2, 1 - alpha) >= k) <= delta: if
    G(a_hat) < 1 - alpha, at least k of the i.i.d. A_j fall in the down-set
    {a : G(a) < 1 - alpha}, whose probability is at most 1 - alpha; that has
    probability at most P(Binomial(n2, 1 - alpha) >= k) <= delta. Ties only make
    it conservative. k > n2 (when (1 - alpha)^n2 > delta) is refused at fit time.

    Examples
    --------
    >>> import numpy as np
    >>> from confrf.calibrators.pac import PACForestCalibrator
    >>> from confrf.localizers import ForestLocalizer
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(3000, 2)); V = np.abs(X[:, 0] * rng.normal(size=3000))
    >>> cal = PACForestCalibrator(ForestLocalizer(n_estimators=20, random_state=0), base="qrf")
    >>> rep = cal.calibrate(X, V, alpha=0.1, rng=rng).pac_report(0.1)
    >>> rep.bound, rep.reached, rep.d2_coverage >= rep.k / rep.n2
    ('binomial', True, True)
    """

    supports_shift = False

    def shift_refusal(self) -> str:
        return f"the training-conditional calibration ({getattr(self, 'name', '') or 'PAC'}): {PAC_REFUSAL}"

    def __init__(
        self,
        localizer: ForestLocalizer,
        base: str = "lcp",
        localizer_size: float = 0.5,
        pac_size: float = PAC_DEFAULTS["pac_size"],
        delta: float = PAC_DEFAULTS["delta"],
        grid_size: int | None = None,
        pac_form: str | None = None,
        pac_bound: str | None = None,
        n_jobs: int | None = None,
        localizer_data: str = "calibration",
    ) -> None:
        if base not in BASES:
            raise InputError(f"base must be one of {sorted(BASES)}, got {base!r}.")
        self.localizer = localizer
        self.base = base
        self.name = BASES[base]
        self.localizer_size = check_fraction(localizer_size, "localizer_size")
        self.pac_size = check_fraction(pac_size, "pac_size")
        self.delta = open_unit(delta, "delta")
        self.pac_bound, self.grid_size, self.pac_form = resolve_pac_options(pac_bound, grid_size, pac_form)
        self.n_jobs = n_jobs
        self.localizer_data = localizer_data

    # -- calibration -------------------------------------------------------
    def calibrate(self, X, scores, *, alpha, rng) -> PACForestCalibrator:
        X = as_float_matrix(X, "X")
        V = as_float_vector(scores, "scores")
        if not self.localizer.honest:
            raise InputError(
                f"method {self.name!r} with a training-conditional guarantee grows the forest on its own part, "
                "disjoint from D1 and D2; honest=False is not available here. Use honest=True (the default)."
            )
        n = X.shape[0]
        n2 = int(round(self.pac_size * n))
        refuse_small_d2(n2, alpha, self.delta, self.pac_bound, self.grid_size, self.pac_size)
        ref = self.reference_rows(X.shape[1])
        perm = rng.permutation(n)
        d2, rest = np.sort(perm[:n2]), perm[n2:]
        # the training part (disjoint from the calibration set) grows the forest: no localizer share, D1 gets it
        n_grow = int(round(self.localizer_size * rest.shape[0])) if ref is None else 0
        grow, d1 = np.sort(rest[:n_grow]), np.sort(rest[n_grow:])
        X_grow, V_grow = (X[grow], V[grow]) if ref is None else ref
        if X_grow.shape[0] < 2:
            raise InputError(
                f"the {'localizer' if ref is None else 'training'} part has {X_grow.shape[0]} point(s); give more "
                "calibration data or a larger localizer_size."
            )
        if self.base == "lcp":
            check_conformal_size(d1.shape[0], alpha, "conformal part D1 of the calibration set")
        elif d1.shape[0] < 1:
            raise InputError("the weights part D1 is empty; give more calibration data or a smaller localizer_size.")
        self.localizer.grow(X_grow, V_grow)
        self.localizer.index(X[d1], V[d1])
        self.map_ = ForestPACMap(self.localizer, self.base, self.n_jobs)
        self.parts_ = {"localizer": grow, "D1": d1, "D2": d2}  # row indices into the calibration set
        self.X2_, self.V2_ = X[d2], V[d2]
        self.n_grow_, self.n1_, self.n2_ = int(X_grow.shape[0]), int(d1.shape[0]), n2
        self.corrections_: dict[float, Correction] = {}
        warn_infinite(self.name, self._correction(alpha))
        return self

    def _correction(self, alpha: float) -> Correction:
        """The correction at ``alpha`` from D2 (computed once per alpha)."""
        key = float(alpha)
        if key not in self.corrections_:
            refuse_small_d2(self.n2_, alpha, self.delta, self.pac_bound, self.grid_size, None)
            if self.pac_bound == "binomial":
                c = binomial_correction(self.map_, self.X2_, self.V2_, alpha, self.delta, MAX_INFINITE_SHARE)
            else:
                assert self.grid_size is not None  # resolve_pac_options gives Hoeffding its grid
                c = hoeffding_correction(
                    self.map_, self.X2_, self.V2_, alpha, self.delta, self.grid_size, self.pac_form, MAX_INFINITE_SHARE
                )
            self.corrections_[key] = c
        return self.corrections_[key]

    # -- queries -----------------------------------------------------------
    def prepare(self, alpha: float) -> None:
        self._correction(alpha)

    def thresholds(self, X, alpha) -> Thresholds:
        """t = Q(min(1, b(x) + a_hat); F_x), always closed; ``level`` = F_x((-inf, t]) (1 where t is inf)."""
        return self.map_.thresholds(as_float_matrix(X, "X"), alpha, self._correction(alpha).a_hat)

    def guarantee(self, alpha) -> Guarantee:
        return Guarantee("pac", True, self.pac_report(alpha).sentence)

    def pac_report(self, alpha: float) -> PACReport:
        """The correction chosen at ``alpha`` and the statement it gives."""
        return make_report(self.name, self._correction(alpha))

    def sizes(self) -> dict[str, int]:
        grown = "localizer (training)" if self.localizer_data == "training" else "localizer"
        return {grown: self.n_grow_, "D1": self.n1_, "D2": self.n2_}

    def describe(self) -> dict[str, Any]:
        return {**self.localizer.describe(), "forest_grown_on": self.grown_on(self.n_grow_)}


def make_pac_calibrator(base: str, est: Any, opts: dict[str, Any], seed: int | None) -> PACForestCalibrator:
    """Build from an estimator's shared settings and method options (``None`` = default)."""
    o = {k: PAC_DEFAULTS[k] if opts.get(k) is None else opts[k] for k in ("delta", "pac_size")}
    source = check_localizer_data(BASES[base], opts, est)
    return PACForestCalibrator(
        make_forest_localizer(est, seed),
        base=base,
        localizer_size=est.localizer_size,
        grid_size=opts.get("grid_size"),
        pac_form=opts.get("pac_form"),
        pac_bound=opts.get("pac_bound"),
        n_jobs=est.n_jobs,
        localizer_data=source,
        **o,
    )


register(
    MethodSpec(
        "qrf-tc",
        lambda est, opts, seed: make_pac_calibrator("qrf", est, opts, seed),
        options={**dict.fromkeys(PAC_DEFAULTS), **training_options()},
        title="QRF-TC (forest quantiles, training-conditional calibration)",
        needs_training=uses_training,
        settings=forest_settings,
        classification=True,
    )
)
register_variant("lcp-rf", "pac", lambda est, opts, seed: make_pac_calibrator("lcp", est, opts, seed))
