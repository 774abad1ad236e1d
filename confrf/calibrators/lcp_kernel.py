"""LCP: exact localized conformal prediction with Guan's kernel localizer.

The calibration is the same exact LCP as LCP-RF's; only the localizer differs
(a kernel on standardized features instead of the forest's leaves).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._docstrings import fill
from .._validation import as_float_matrix, check_fraction, required_count
from ..localizers.kernel import KernelLocalizer
from ..shift.value import new_row_ratios
from ._reference import ReferenceData
from .base import Calibrator, Thresholds
from .registry import MethodSpec, register


@fill
class KernelLCPCalibrator(ReferenceData, Calibrator):
    """Exact LCP (Guan) with kernel weights H(x, x') = K(|x - x'| / h).

    {{kernel_option}}
    bandwidth : float or "auto"
        h in standardized units; "auto" is Guan's rule (the bandwidth with the
        smallest mean finite threshold among those giving at most
        ``max_infinite`` infinite thresholds, by leave-one-out LCP on the
        reference data).
    max_infinite : float or None
        Guan's delta; None is alpha / 2.
    reference_size : float
        With no training part (``prefit=True``), the share of the calibration
        set held out to learn the standardization and the bandwidth.

    Notes
    -----
    The standardization and the bandwidth are learned on reference data
    disjoint from the conformal points: the training part with out-of-fold
    scores when the estimator fitted the model, else a held-out share of the
    calibration set. The kernel is then a fixed symmetric function, the n + 1
    points are exchangeable and the marginal guarantee is exact. A test point
    far from every calibration point (relative to h) keeps most of its own
    mass, which sits at +inf: its interval is infinite. A tiny bandwidth makes
    every test point isolated (all intervals infinite); a huge one makes the
    weights uniform, which is split conformal exactly.

    Examples
    --------
    >>> import numpy as np
    >>> from confrf.calibrators import KernelLCPCalibrator
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(400, 2)); V = X[:, 0] * rng.exponential(size=400)
    >>> cal = KernelLCPCalibrator(bandwidth=0.5).calibrate(X, V, alpha=0.1, rng=rng)
    >>> cal.sizes()
    {'reference': 120, 'conformal': 280}
    >>> bool(np.isfinite(cal.thresholds(X[:3], 0.1).t).all())
    True
    """

    name = "lcp"
    localizer_title = "Kernel localizer"
    learned_on_reference = "the kernel's standardization and bandwidth were"
    supports_shift = True

    def __init__(
        self,
        kernel: str = "gaussian",
        bandwidth: float | str = "auto",
        max_infinite: float | None = None,
        reference_size: float = 0.3,
    ) -> None:
        self.localizer = KernelLocalizer(kernel=kernel, bandwidth=bandwidth, max_infinite=max_infinite)
        self.reference_size = check_fraction(reference_size, "reference_size")

    def calibrate(self, X, scores, *, alpha, rng, likelihood_ratio=None) -> KernelLCPCalibrator:
        Xc, Vc, (Xr, Vr), rng, shift = self._split_reference(X, scores, alpha, rng, likelihood_ratio)
        self.localizer.fit_reference(Xr, Vr, alpha=alpha, n_calibration=int(Xc.shape[0]), rng=rng)
        self.localizer.index(Xc, Vc)
        self.n_conformal_ = int(Xc.shape[0])
        self.shift_ = shift  # the kernel and bandwidth never see the ratios
        return self

    def thresholds(self, X, alpha, likelihood_ratio=None) -> Thresholds:
        X = as_float_matrix(X, "X")
        shift = self.shift_
        w_test = new_row_ratios(likelihood_ratio, X.shape[0], shift is not None)
        m_req = required_count(alpha, self.n_conformal_)
        if shift is None:
            return Thresholds(*self.localizer.thresholds(X, m_req))
        assert w_test is not None  # new_row_ratios gives the new rows' ratios whenever the calibration was weighted
        plain = shift.unweighted_rows(w_test)  # equal ratios: the exact integer rule
        t, closed, level = np.full(X.shape[0], np.inf), np.ones(X.shape[0], dtype=bool), np.ones(X.shape[0])
        for rows, weighted in ((plain, False), (~plain, True)):
            if rows.any():
                kw = {"shift_w": shift.w, "req": shift.requirement(alpha, w_test[rows])} if weighted else {}
                t[rows], closed[rows], level[rows] = self.localizer.thresholds(X[rows], m_req, **kw)
        return Thresholds(t, closed, level)

    def sizes(self) -> dict[str, int]:
        return self._reference_sizes(self.n_conformal_)

    def describe(self) -> dict[str, Any]:
        return {**self.localizer.describe(), "learned_on": self.reference_source_, "n_reference": self.n_reference_}


register(
    MethodSpec(
        "lcp",
        lambda est, opts, seed: KernelLCPCalibrator(
            opts["kernel"], opts["bandwidth"], opts["max_infinite"], opts["reference_size"]
        ),
        options={"kernel": "gaussian", "bandwidth": "auto", "max_infinite": None, "reference_size": 0.3, "cv": 5},
        title="LCP (exact localized conformal, kernel weights; Guan)",
        needs_training=True,
        shift=True,
    )
)
