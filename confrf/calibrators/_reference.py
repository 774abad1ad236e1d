"""Reference data of the kernel baselines: where their data-dependent choices are learned.

The estimator hands over the training part with out-of-fold scores
(``set_reference``). Without it (``prefit=True``: no training part), a random
share of the calibration set is held out for the purpose and only the rest are
conformal points. Either way the reference data are disjoint from the points
the coverage statement is about.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validation import as_float_matrix, as_float_vector
from ..exceptions import InputError
from ..shift.value import ratio_values
from ..shift.weighted import ShiftWeights
from .base import Guarantee, check_conformal_size, random_split


class ReferenceData:
    """Mixin: ``set_reference`` and the split of calibration data it implies."""

    reference_size: float = 0.5
    _reference: tuple[np.ndarray, np.ndarray] | None = None
    #: what was learned on the reference data, as the guarantee names it (set by each calibrator)
    learned_on_reference: str

    def guarantee(self, alpha: float) -> Guarantee:
        """Exact marginal coverage: the reference data are disjoint from the conformal points."""
        return Guarantee(
            "marginal",
            True,
            f"P(Y in interval) >= {1 - alpha:g} exactly in finite samples, if the conformal calibration and test "
            f"points are exchangeable ({self.learned_on_reference} learned on disjoint data).",
        )

    def set_reference(self, X: np.ndarray, scores: np.ndarray, source: str = "training part") -> None:
        """Learn the localizer's choices on (X, scores) rather than on a share of the calibration set."""
        X = as_float_matrix(X, "reference X")
        V = as_float_vector(scores, "reference scores")
        if X.shape[0] != V.shape[0]:
            raise InputError(f"reference X has {X.shape[0]} rows but {V.shape[0]} scores.")
        self._reference = (X, V)
        self.reference_source_ = source

    def _split_reference(
        self, X: Any, scores: Any, alpha: float, rng: Any, likelihood_ratio: Any
    ) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray], np.random.Generator, ShiftWeights | None]:
        """The checked calibration data split as :meth:`_take_reference` does.

        Returns the conformal points (X, V), the reference data (X_ref, V_ref), the generator (advanced
        by the split) and the conformal points' covariate-shift weights (None when unweighted): the
        reference data never see the ratios.
        """
        X = as_float_matrix(X, "X")
        V = as_float_vector(scores, "scores")
        w = None if likelihood_ratio is None else ratio_values(likelihood_ratio, X.shape[0], "the calibration rows")
        gen = np.random.default_rng(rng)
        Xr, Vr, conf = self._take_reference(X, V, gen, alpha)
        return X[conf], V[conf], (Xr, Vr), gen, None if w is None else ShiftWeights(w[conf])

    def _take_reference(
        self, X: np.ndarray, V: np.ndarray, rng: np.random.Generator, alpha: float
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(X_ref, V_ref, indices of the conformal points among the calibration rows).

        Refuses a conformal part too small for a finite interval at ``alpha``.
        """
        n = X.shape[0]
        if self._reference is not None:
            Xr, Vr = self._reference
            if Xr.shape[1] != X.shape[1]:
                raise InputError(f"the reference data have {Xr.shape[1]} columns, the calibration data {X.shape[1]}.")
            conf = np.arange(n)
            self.reference_is_calibration_ = False
        else:
            ref, conf = random_split(
                n, self.reference_size, rng, "reference part of the calibration set", "reference_size"
            )
            Xr, Vr = X[ref], V[ref]
            self.reference_source_ = f"held-out share of the calibration set (reference_size={self.reference_size:g})"
            self.reference_is_calibration_ = True
        self._reference = None  # used once; not kept in the fitted object
        self.n_reference_ = int(Xr.shape[0])
        check_conformal_size(
            conf.shape[0],
            alpha,
            "conformal part of the calibration set" if self.reference_is_calibration_ else "calibration set",
        )
        return Xr, Vr, conf

    def _reference_sizes(self, n_conformal: int) -> dict[str, int]:
        if self.reference_is_calibration_:
            return {"reference": self.n_reference_, "conformal": n_conformal}
        return {"calibration": n_conformal}
