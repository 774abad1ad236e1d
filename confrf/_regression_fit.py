"""The regression family's formula fit: :func:`confrf.conformal` with a numeric response routes here.

The steps both families share are :mod:`confrf._fit_pipeline`'s; here are
regression's own: the numeric design (and a response's ``support``), the
cross-conformal methods (every row trains and calibrates), Dask calibration
rows, user group labels, the refusals of classification models and scores,
and :class:`confrf.ConformalRegressor` with :class:`confrf.results.ConformalResult`.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ._fit_pipeline import (
    FitOptions,
    calibration_groups,
    check_options,
    estimator_args,
    make_result,
    shift_weights,
    split_rows,
)
from ._formula_common import FitCall, FitRows
from ._warnings import user_stacklevel
from .dask import DaskRows, is_dask_collection
from .estimator import ConformalRegressor
from .exceptions import ConfrfWarning, InputError
from .formula import Design
from .formula.frame import as_training_frame
from .group_labels import split_group_option
from .localizers._float32 import F32_MAX, blurred_columns
from .models import adapt_formula_results, check_linear_scale, name_model_terms, no_predictor_model
from .results import ConformalResult
from .results.response_scale import build_response_scale


def conformal_intervals(
    formula: str,
    data: Any,
    *,
    method: str,
    alpha: float,
    model: Any,
    calib: Any,
    calib_size: float | None,
    random_state: int | None,
    support: Any,
    shift_options: dict[str, Any],
    fit_call: FitCall,
    **options: Any,
) -> ConformalResult:
    """Fit a base model and calibrate prediction intervals (the arguments of :func:`confrf.conformal`, checked).

    ``random_state`` is the seed :func:`confrf.conformal` drew; ``shift_options``
    those :func:`confrf.shift.setup.pop_shift_options` took out of ``options``.
    """
    seed = random_state

    def refuse(spec: Any, prefit: bool) -> None:
        if spec.fits_models:
            _refuse_calibration_set(method, calib, calib_size, prefit, shift_options)

    fit = check_options(method, options, calib=calib, calib_size=calib_size, refuse=refuse)
    labeler, est_opts = split_group_option(fit.own)  # user groups: labels read from the rows
    design, X, y, kept_mask = Design.fit(formula, data, na_action=fit.shared["na_action"])
    model = _regression_model(design, model, fit, X, method)
    kept = np.arange(len(data)) if design.kept_positions is None else design.kept_positions
    dask_calib = calib is not None and is_dask_collection(calib)
    if dask_calib and (labeler is not None or shift_options or support is not None):
        raise InputError(
            "with Dask calibration data, groups=, the covariate-shift options and support= are not offered; "
            "compute the frame first (calib.compute()) to use them."
        )
    if calib is not None and not dask_calib:
        calib = as_training_frame(calib, "calib")
    split = split_rows(
        len(data),
        X,
        y,
        kept,
        fit=fit,
        calib=None if dask_calib else calib,
        read_calib=lambda frame: (design.transform(frame, what="calib"), design.response(frame, what="calib")),
        seed=seed,
        every=fit.spec.fits_models or dask_calib,  # Dask: all of data trains, the calibration rows stay remote
    )
    scale_parts = [(data, design.kept_positions, y, "data")]
    if split.calib is not None:
        scale_parts.append((split.calib, None, split.y_cal, "calib"))
    response_scale = build_response_scale(design, support, scale_parts)
    args = estimator_args(fit, model=model, alpha=alpha, design=design, seed=seed, options=est_opts)
    est = ConformalRegressor(**args)
    sample_weight, ratio, shift_setup = shift_weights(shift_options, est, design, data, kept, split, seed)
    groups_cal = calibration_groups(labeler, data, kept_mask, split)
    if not fit.prefit:
        est.fit(split.X_tr, split.y_tr, sample_weight=sample_weight)
        name_model_terms(est.model_, design)  # OLS / QuantReg summaries show the formula's names
    if dask_calib:  # built on the workers, partition by partition (confrf.dask.DaskRows)
        est._conformalize_rows(
            lambda: DaskRows.from_formula(calib, design, est.model_, est.score_), X.shape[1], None, None
        )
        split.rows = FitRows.from_split(len(data), kept, None, None, est.n_calib_, None)
    elif not fit.spec.fits_models:  # the cross-conformal methods calibrated in fit
        est.conformalize(split.X_cal, split.y_cal, groups=groups_cal, likelihood_ratio=ratio)
    return make_result(
        ConformalResult,
        est=est,
        design=design,
        fit=fit,
        split=split,
        seed=seed,
        shift=shift_setup,
        group_labeler=labeler,
        response_scale=response_scale,
        fit_call=fit_call,
    )


def _regression_model(design: Design, model: Any, fit: FitOptions, X: np.ndarray, method: str) -> Any:
    """The model checked against the design: no classifier, float32's range, OLS's scale, a prefit model's columns."""
    prefit, score = fit.prefit, fit.shared["score"]
    _refuse_classification_settings(design, model, score)
    _warn_float32_trees(model, prefit, X, design.column_names)
    if model == "ols" and not prefit and score != "quantile":  # names the columns before the model sees them
        check_linear_scale(X, design.has_intercept, design.column_names)
    if prefit:
        model = adapt_formula_results(model, design.column_names, design.has_intercept)
    if X.shape[1] == 0:
        model = no_predictor_model(model, design, method, prefit)
    return model


def _warn_float32_trees(model: Any, prefit: bool, X: np.ndarray, names: list[str]) -> None:
    """The localizer forest copes with columns float32 blurs (it uses ranks); model="rf" does not: say so."""
    if prefit or not (
        model == "rf" if isinstance(model, str) else type(model).__module__.startswith("sklearn.ensemble._forest")
    ):
        return
    over = [names[j] for j in range(X.shape[1]) if np.abs(X[:, j]).max(initial=0.0) > F32_MAX]
    if over:
        raise InputError(
            f"design column(s) {over} exceed float32's range (3.4e38), which scikit-learn's random forest "
            "uses; rescale them, e.g. I(x * 1e-39), or use model='gbm'."
        )
    blurred = [names[j] for j in blurred_columns(X)]
    if blurred:
        warnings.warn(
            f"design column(s) {blurred} differ only beyond float32 precision; "
            "scikit-learn's random forest casts X to float32 and cannot split on them, so the base model "
            "ignores them (the intervals stay valid). Rescale them, e.g. I((x - 1) * 1e9), or use model='gbm'.",
            ConfrfWarning,
            stacklevel=user_stacklevel(),
        )


def _refuse_calibration_set(method: str, calib: Any, calib_size: Any, prefit: bool, shift_opts: dict) -> None:
    """The cross-conformal methods use every row of ``data`` for both jobs: no calibration set, no prefit model."""
    why = (
        f"method {method!r} fits the model on folds of data= and calibrates on every row's out-of-fold score, "
        "so all of data= trains and calibrates"
    )
    if calib is not None:
        raise InputError(
            f"{why}; a separate calib= set has no role. Pass all the rows as data= (e.g. pd.concat([train, calib])), "
            "or use method='split' or 'lcp-rf' to calibrate on calib=."
        )
    if calib_size is not None:
        raise InputError(f"{why}; calib_size= has no role: drop it.")
    if prefit:
        raise InputError(
            f"{why}: it refits the model on every fold and cannot use a prefit model. Drop prefit=True and pass an "
            "unfitted model (e.g. model='ols'), or use method='split' for a fitted model."
        )
    shifted = [k for k in ("likelihood_ratio", "shift") if shift_opts.get(k) is not None]  # one: both is refused
    if shifted:
        raise InputError(
            f"{shifted[0]}= (covariate shift) is not offered with method {method!r}: its weighted version is not "
            "built. Use method='split' or 'lcp-rf', whose weighted calibration is exact (weights= for the model's "
            "case weights is accepted)."
        )


def _refuse_classification_settings(design: Design, model: Any, score: Any) -> None:
    """A classifier or classification score with a numeric response: say why, and both ways out.

    The mirror of :func:`confrf.classification.api._refuse_regression_settings`.
    """
    from sklearn.base import is_classifier

    from .classification.models import family_only_models
    from .models import SHORTCUTS
    from .scores import ClassScore
    from .scores.registry import score_family, score_names

    try:
        classifier = not isinstance(model, (str, type)) and is_classifier(model)
    except AttributeError:  # an object outside scikit-learn's estimator protocol (no tags): not a known classifier
        classifier = False
    named = isinstance(model, str) and model in family_only_models("classification")
    wrong = [f"model={model!r}"] if named or classifier else []
    wrong += [f"score={score!r}"] if score_family(score) == "classification" or isinstance(score, ClassScore) else []
    if wrong:
        raise InputError(
            f"the response {design.response_name!r} is numeric, so conformal() builds prediction intervals, but "
            f"{' and '.join(wrong)} belong{'s' if len(wrong) == 1 else ''} to classification. Use a regression model "
            f"({', '.join(map(repr, SHORTCUTS))} or a regressor) and score "
            f"({', '.join(map(repr, score_names('regression')))}), or make the response a class label (C(y) in the "
            "formula, or a categorical column) for prediction sets."
        )
