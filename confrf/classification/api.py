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

from .._formula_common import OPTIONS, FitRows, split_indices
from .._validation import check_bool, check_fraction, seed_entropy
from ..calibrators import get_method
from ..calibrators.registry import class_methods
from ..exceptions import InputError
from ..formula import as_frame
from ..formula.labels import LabelDesign
from ..models import adapt_formula_results
from ..shift.setup import refuse_case_weights, refuse_unweighted, resolve_shift
from .estimator import ConformalClassifier
from .result import ClassificationResult


def conformal_sets(
    formula: str,
    data: Any,
    *,
    method: str = "lcp-rf",
    alpha: float = 0.1,
    model: Any = "gbm",
    calib: Any = None,
    calib_size: float = 0.5,
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
    >>> import confrf as cf
    >>> from sklearn.datasets import load_wine
    >>> df = load_wine(as_frame=True).frame.astype({"target": "category"})
    >>> res = cf.conformal("target ~ .", data=df, method="split-g", model="logit", random_state=0)
    >>> res.guarantee.kind
    'class-conditional'
    """
    spec = get_method(method)
    if not spec.classification:
        raise InputError(
            f"method {method!r} is not offered for a class-label response; choose one of {class_methods()}."
        )
    unknown = sorted(set(options) - set(OPTIONS) - set(spec.options))
    if unknown:
        raise InputError(
            f"unknown option(s) {unknown}; valid options are {sorted(OPTIONS)} and, for method "
            f"{method!r}, {sorted(spec.options) or 'none'}."
        )
    opts = {**OPTIONS, "score": "lac", **{k: v for k, v in options.items() if k in OPTIONS}}
    method_opts = {k: v for k, v in options.items() if k in spec.options}
    seed = seed_entropy(random_state)  # drawn once: a Generator gives one seed for every step
    calib_size = check_fraction(calib_size, "calib_size")
    prefit = check_bool(opts["prefit"], "prefit")
    data = as_frame(data, "data")
    design, X, codes, _ = LabelDesign.fit(formula, data, na_action=opts["na_action"])
    _refuse_regression_settings(design, model, opts["score"])
    if X.shape[1] == 0:
        raise InputError(
            f"formula {formula!r} has no predictors; a classifier needs at least one column on the "
            "right of ~ (e.g. 'y ~ x1 + x2' or 'y ~ .')."
        )
    n_data = len(data)
    kept = design.design.kept_positions
    kept = np.arange(X.shape[0]) if kept is None else kept
    if calib is not None:
        calib = as_frame(calib, "calib")
        X_tr, y_tr, X_cal, y_cal = X, codes, design.transform(calib, what="calib"), design.codes(calib)
        rows = FitRows.from_split(n_data, kept, None, None, len(calib), None)
    elif prefit:
        X_tr, y_tr, X_cal, y_cal = X[:0], codes[:0], X, codes
        rows = FitRows.from_split(n_data, kept, np.arange(0), np.arange(X.shape[0]), None, None)
    else:
        tr, cal = split_indices(X.shape[0], calib_size, seed)
        X_tr, y_tr, X_cal, y_cal = X[tr], codes[tr], X[cal], codes[cal]
        rows = FitRows.from_split(n_data, kept, tr, cal, None, None)
    if prefit:  # a statsmodels formula-API result: its columns matched to the design by name
        model = adapt_formula_results(model, design.column_names, design.has_intercept)
    est = ConformalClassifier(
        model=model,
        method=method,
        alpha=alpha,
        score=opts["score"],
        prefit=prefit,
        honest=opts["honest"],
        localizer_size=opts["localizer_size"],
        n_estimators=opts["n_estimators"],
        min_samples_leaf=opts["min_samples_leaf"],
        max_features=opts["max_features"],
        max_depth=opts["max_depth"],
        fit_intercept=design.has_intercept,
        random_state=seed,
        n_jobs=opts["n_jobs"],
        options=method_opts or None,
    )
    ratio, shift_setup = None, None
    if shift_options:  # docs/theory.md, "Covariate shift": the weighted rule holds for any score
        refuse_case_weights(shift_options)
        refuse_unweighted(est._shift_refusal(), shift_options)
        kept_rows = data.iloc[kept]
        _, ratio, shift_setup = resolve_shift(
            shift_options,
            design=design,
            train_rows=None if prefit else (kept_rows if calib is not None else kept_rows.iloc[tr]),
            calib_rows=calib if calib is not None else (kept_rows if prefit else kept_rows.iloc[cal]),
            X_tr=X_tr,
            X_cal=X_cal,
            seed=seed,
        )
    labels = np.asarray(design.levels, dtype=object)  # the estimator takes the level values themselves
    if prefit:
        est.conformalize(X_cal, labels[y_cal], classes=design.levels, likelihood_ratio=ratio)
    else:
        est.fit(X_tr, labels[y_tr], classes=design.levels)
        est.conformalize(X_cal, labels[y_cal], likelihood_ratio=ratio)
    nobs = {"train": int(X_tr.shape[0]), **est.calibrator_.sizes()}
    result = ClassificationResult(
        design=design, estimator=est, options={**opts, **method_opts}, nobs=nobs, random_state=seed, rows=rows
    )
    result.shift = shift_setup
    return result


def _refuse_regression_settings(design: LabelDesign, model: Any, score: Any) -> None:
    """A regression model or score with a class-label response: say why, and both ways out."""
    wrong = [f"model={model!r}"] if isinstance(model, str) and model in ("ols", "qr", "qgbm") else []
    wrong += [f"score={score!r}"] if isinstance(score, str) and score in ("absolute", "quantile", "scaled") else []
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
            "classifier ('gbm', 'rf', 'logit' or one with predict_proba) and a classification score ('lac', 'aps', "
            f"'raps'), or {numbers}."
        )
