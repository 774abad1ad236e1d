"""Formula entry for a class-label response: :func:`confrf.conformal` routes here.

``cf.conformal("Species ~ .", data=iris)`` with a categorical, bool, string or
``C(y)`` response gives prediction sets. The options are those of the
regression entry (``score`` defaults to "lac"); the methods are "split",
"lcp-rf", "qrf-tc" and the class-conditional "split-g" / "lcp-rf-g"
(``groups="label"``, the default for classification).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._docstrings import fill
from .._fit_pipeline import check_options, estimator_args, make_result, shift_weights, split_rows
from .._validation import seed_entropy
from ..exceptions import InputError
from ..formula import as_frame
from ..formula.labels import LabelDesign
from ..models import adapt_formula_results
from ..scores.registry import score_family, score_names
from ..shift.setup import refuse_case_weights
from .estimator import ConformalClassifier
from .models import CLASSIFIER_SHORTCUTS, family_only_models
from .result import ClassificationResult


@fill
def conformal_sets(
    formula: str,
    data: Any,
    *,
    method: str = "lcp-rf",
    alpha: float = 0.1,
    model: Any = "gbm",
    calib: Any = None,
    calib_size: float | None = 0.5,
    random_state: Any = None,
    shift_options: dict[str, Any] | None = None,
    **options: Any,
) -> ClassificationResult:
    """Fit a classifier and calibrate conformal prediction sets (see :func:`confrf.conformal`).

    ``shift_options``: the covariate-shift options of :func:`confrf.conformal`
    (``likelihood_ratio``, or ``shift`` with ``shift_model`` and ``shift_clip``),
    as :func:`confrf.shift.setup.pop_shift_options` returns them; ``weights``
    (case weights of the base model) is not offered for classifiers.

    Examples
    --------
    {{wine}}
    >>> res = cf.conformal("target ~ .", data=df, method="split-g", model="logit", random_state=0)
    >>> res.guarantee.kind
    'class-conditional'
    """
    fit = check_options(method, options, calib=calib, calib_size=calib_size, classification=True)
    seed = seed_entropy(random_state)  # drawn once: a Generator gives one seed for every step
    data = as_frame(data, "data")
    design, X, codes, _ = LabelDesign.fit(formula, data, na_action=fit.shared["na_action"])
    _refuse_regression_settings(design, model, fit.shared["score"])
    if X.shape[1] == 0:
        raise InputError(
            f"formula {formula!r} has no predictors; a classifier needs at least one column on the "
            "right of ~ (e.g. 'y ~ x1 + x2' or 'y ~ .')."
        )
    kept = np.arange(X.shape[0]) if design.design.kept_positions is None else design.design.kept_positions
    split = split_rows(
        len(data),
        X,
        codes,
        kept,
        fit=fit,
        calib=None if calib is None else as_frame(calib, "calib"),
        read_calib=lambda frame: (design.transform(frame, what="calib"), design.codes(frame)),
        seed=seed,
    )
    if fit.prefit:  # a statsmodels formula-API result: its columns matched to the design by name
        model = adapt_formula_results(model, design.column_names, design.has_intercept)
    args = estimator_args(fit, model=model, alpha=alpha, design=design, seed=seed, options=fit.own or None)
    est = ConformalClassifier(**args)
    if shift_options:  # docs/theory.md, "Covariate shift": the weighted rule holds for any score
        refuse_case_weights(shift_options)
    _, ratio, shift_setup = shift_weights(shift_options or {}, est, design, data, kept, split, seed)
    labels = np.asarray(design.levels, dtype=object)  # the estimator takes the level values themselves
    if fit.prefit:
        est.conformalize(split.X_cal, labels[split.y_cal], classes=design.levels, likelihood_ratio=ratio)
    else:
        est.fit(split.X_tr, labels[split.y_tr], classes=design.levels)
        est.conformalize(split.X_cal, labels[split.y_cal], likelihood_ratio=ratio)
    return make_result(ClassificationResult, est=est, design=design, fit=fit, split=split, seed=seed, shift=shift_setup)


def _refuse_regression_settings(design: LabelDesign, model: Any, score: Any) -> None:
    """A regression model or score with a class-label response: say why, and both ways out."""
    wrong = [f"model={model!r}"] if isinstance(model, str) and model in family_only_models("regression") else []
    wrong += [f"score={score!r}"] if score_family(score) == "regression" else []
    if wrong:
        name = design.response_name
        # pd.to_numeric leaves a bool column bool (still a label): name the conversion that gives numbers
        if all(isinstance(v, (bool, np.bool_)) for v in design.levels):
            what = f"boolean, which is a class label (levels {design.levels})"
            numbers = f"for prediction intervals of the 0/1 values, convert it: df[{name!r}] = df[{name!r}].astype(int)"
        else:
            what = f"a class label ({len(design.levels)} levels)"
            numbers = "convert the response to numbers (pd.to_numeric) for prediction intervals"
        raise InputError(
            f"the response {name!r} is {what}, so cf.conformal() and its aliases (lcp_rf, split_cp, qrf_tc) build "
            f"prediction sets, but {' and '.join(wrong)} belong{'s' if len(wrong) == 1 else ''} to regression. Use a "
            f"classifier ({', '.join(map(repr, CLASSIFIER_SHORTCUTS))} or one with predict_proba) and a "
            f"classification score ({', '.join(map(repr, score_names('classification')))}), or {numbers}."
        )
