"""Reference data of the kernel baselines: where their data-dependent choices are learned.

The estimator hands over the training part with out-of-fold scores
(``set_reference``). Without it (``prefit=True``: no training part), a random
share of the calibration set is held out for the purpose and only the rest are
conformal points. Either way the reference data are disjoint from the points
the coverage statement is about.
"""

from __future__ import annotations

import numpy as np

from .._validation import as_float_matrix, as_float_vector
from ..exceptions import InputError
from .base import check_conformal_size, random_split


class ReferenceData:
    """Mixin: ``set_reference`` and the split of calibration data it implies."""

    reference_size: float = 0.5
    _reference: tuple[np.ndarray, np.ndarray] | None = None

    def set_reference(self, X: np.ndarray, scores: np.ndarray, source: str = "training part") -> None:
        """Learn the localizer's choices on (X, scores) rather than on a share of the calibration set."""
        X = as_float_matrix(X, "reference X")
        V = as_float_vector(scores, "reference scores")
        if X.shape[0] != V.shape[0]:
            raise InputError(f"reference X has {X.shape[0]} rows but {V.shape[0]} scores.")
        self._reference = (X, V)
        self.reference_source_ = source

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
