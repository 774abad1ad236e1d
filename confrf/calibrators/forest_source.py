"""What the forest of LCP-RF-G, SPLIT-G (learned groups), QRF-TC and the PAC variants learns from.

Option ``localizer_data`` has LCP-RF's values and default (read from LCP-RF's method spec, the one
place it is set):

- "calibration": the localizer part of the calibration set, as before;
- "training": the training part's out-of-fold scores (the estimator's ``fit`` keeps them, option
  ``cv`` folds, and hands them to :meth:`TrainingPart.set_reference`); every calibration row that
  the localizer part would have taken is then a conformal point (D1 for PAC);
- "auto" (the default): LCP-RF chooses the source by the simulated calibrations of its leaf-size tuning
  (below ``localizer_split.TRAINING_GATE`` localizer rows)
  (:mod:`confrf.localizers.sources`). These methods do not tune their leaves (ceil(sqrt n), every
  feature: :func:`confrf.calibrators.forest_setup.make_forest_localizer`), and with one fixed leaf
  size the tuning simulates nothing to compare sources by, so "auto" grows on the localizer part
  here, and the summary says so.

Exactness. With "training" the forest, the groups, the region rule x -> group and the merging of
small groups are functions of the training part alone, which is disjoint from the calibration set
(and the base model is a function of it too): given it they are fixed, so the calibration points and
a test point keep every exchangeability (or i.i.d.) argument the guarantees use (docs/theory.md,
"What the forest learns from").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .._validation import as_float_matrix, as_float_vector
from ..exceptions import InputError
from . import lcp_rf  # noqa: F401  (importing it registers "lcp-rf", whose options hold the defaults)
from . import localizer_split as split
from .registry import FOREST_SETTINGS, get_method


def training_options() -> dict[str, Any]:
    """The options ``localizer_data`` and ``cv`` with LCP-RF's defaults (its method spec is the one place)."""
    spec = get_method("lcp-rf")
    return {"localizer_data": spec.options["localizer_data"], "cv": spec.options["cv"]}


def check_localizer_data(method: str, opts: Mapping[str, Any], est: Any, why_not: str | None = None) -> str:
    """``localizer_data`` of a forest method other than LCP-RF, checked against the estimator's settings.

    ``why_not``: the reason this configuration cannot grow on the training part (None: it can).
    """
    value = split.check_localizer_data(opts["localizer_data"])
    if value != "training":
        return value
    if why_not is None and not est.honest:
        why_not = "honest=False grows the forest on the calibration points themselves (the paper's variant)"
    if why_not is None and est.prefit:
        why_not = "prefit=True has no training part (fit() computes its out-of-fold scores)"
    if why_not is not None:
        raise InputError(
            f"localizer_data='training' grows the forest of method {method!r} on the training part's out-of-fold "
            f"scores, but {why_not}; use localizer_data='calibration'."
        )
    return value


def uses_training(opts: Mapping[str, Any]) -> bool:
    """Whether ``fit`` keeps the training part's out-of-fold scores: only for ``localizer_data="training"``."""
    return opts.get("localizer_data") == "training"


def forest_settings(opts: Mapping[str, Any]) -> frozenset[str]:
    """A forest grown on the training part leaves no localizer share: ``localizer_size`` is not read."""
    return FOREST_SETTINGS - {"localizer_size"} if uses_training(opts) else FOREST_SETTINGS


class TrainingPart:
    """Mixin: a forest calibrator that can grow on the training part instead of a localizer part.

    The calibrator sets ``localizer_data`` ("calibration", "training" or "auto") in its constructor;
    :meth:`reference_rows` hands the training part to ``calibrate`` once.
    """

    localizer_data: str = "calibration"
    _reference: tuple[np.ndarray, np.ndarray] | None = None
    reference_source_: str | None = None

    def set_reference(self, X: Any, scores: Any, source: str = "training part") -> None:
        """Grow the forest on (X, scores), rows disjoint from the calibration set (``localizer_data="training"``).

        Ignored unless ``localizer_data="training"``: "calibration" and "auto" grow on the localizer part.
        """
        if self.localizer_data != "training":
            return
        X, V = as_float_matrix(X, "training X"), as_float_vector(scores, "training scores")
        if X.shape[0] != V.shape[0]:
            raise InputError(f"training X has {X.shape[0]} rows but {V.shape[0]} scores.")
        self._reference, self.reference_source_ = (X, V), source

    def reference_rows(self, n_features: int) -> tuple[np.ndarray, np.ndarray] | None:
        """The training part to grow on (used once, not kept), or None to grow on the localizer part."""
        if self.localizer_data != "training":
            return None
        if self._reference is None:
            raise InputError(
                "localizer_data='training' grows the forest on the training part's out-of-fold scores, which this "
                "fit did not keep (the estimator computes them in fit() when the method asks for them; a "
                "classification fit does not); use localizer_data='calibration'."
            )
        X, V = self._reference
        self._reference = None
        if X.shape[1] != n_features:
            raise InputError(f"the training part has {X.shape[1]} columns, the calibration data {n_features}.")
        return X, V

    def grown_on(self, n_grow: int) -> str:
        """The summary's ``forest_grown_on`` line."""
        if self.localizer_data == "training":
            return f"{self.reference_source_ or 'training part'} ({n_grow:,} rows)"
        text = f"localizer part of the calibration set ({n_grow:,} rows)"
        if self.localizer_data == "auto":
            text += (
                "; localizer_data='auto' (the default) compares sources only for LCP-RF's tuned forest "
                "(localizer_data='training' grows this one on the training part)"
            )
        return text
