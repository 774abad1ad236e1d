"""LCP: exact localized conformal prediction with Guan's kernel localizer.

The calibration is the same exact LCP as LCP-RF's; only the localizer differs
(a kernel on standardized features instead of the forest's leaves).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validation import as_float_matrix, as_float_vector, check_fraction, required_count
from ..localizers.kernel import KernelLocalizer
from ._reference import ReferenceData
from .base import Calibrator, Guarantee, Thresholds
from .registry import MethodSpec, register


class KernelLCPCalibrator(ReferenceData, Calibrator):
    """Exact LCP (Guan) with kernel weights H(x, x') = K(|x - x'| / h).

    Parameters
    ----------
    kernel : {"gaussian", "exponential"}
        Kernel of the Euclidean distance between standardized features.
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

    def __init__(
        self,
        kernel: str = "gaussian",
        bandwidth: float | str = "auto",
        max_infinite: float | None = None,
        reference_size: float = 0.3,
    ) -> None:
        self.localizer = KernelLocalizer(kernel=kernel, bandwidth=bandwidth, max_infinite=max_infinite)
        self.reference_size = check_fraction(reference_size, "reference_size")

    def calibrate(self, X, scores, *, alpha, rng) -> KernelLCPCalibrator:
        X = as_float_matrix(X, "X")
        V = as_float_vector(scores, "scores")
        rng = np.random.default_rng(rng)
        Xr, Vr, conf = self._take_reference(X, V, rng, alpha)
        self.localizer.fit_reference(Xr, Vr, alpha=alpha, n_calibration=int(conf.shape[0]), rng=rng)
        self.localizer.index(X[conf], V[conf])
        self.n_conformal_ = int(conf.shape[0])
        return self

    def thresholds(self, X, alpha) -> Thresholds:
        t, closed, level = self.localizer.thresholds(X, required_count(alpha, self.n_conformal_))
        return Thresholds(t, closed, level)

    def guarantee(self, alpha) -> Guarantee:
        return Guarantee(
            "marginal",
            True,
            f"P(Y in interval) >= {1 - alpha:g} exactly in finite samples, if the conformal calibration and test "
            "points are exchangeable (the kernel's standardization and bandwidth were learned on disjoint data).",
        )

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
    )
)
