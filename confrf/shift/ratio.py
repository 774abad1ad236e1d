"""An estimated likelihood ratio: a probabilistic classifier of target rows against calibration-population rows.

With c(x) = P(target | x) from a classifier trained on n_s source rows and n_t
target rows, Bayes' rule gives dP_target(x) / dP_source(x) =
c(x) / (1 - c(x)) * n_s / n_t (the class-prior correction). The classifier's
probability is clipped to [clip, 1 - clip] first, so every ratio is finite and
positive: at most ((1 - clip) / clip) n_s / n_t, at least its inverse times
(n_s / n_t)^2. docs/theory.md ("Covariate shift") says which rows train it and
what the estimation error costs (Lei and Candès, 2021).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import clone, is_classifier

from .._validation import as_float_matrix, check_real
from ..exceptions import InputError, NotFittedError

#: ``shift_model`` names
RATIO_MODELS = ("logit", "gbm")
#: fewest rows of each population the classifier is trained on
MIN_ROWS = 10


def make_ratio_classifier(model: Any, random_state: int | None = None) -> Any:
    """An unfitted probabilistic classifier for ``shift_model``.

    "logit": L2-penalized logistic regression (C = 1) on the standardized
    design, whose fitted probabilities are calibrated on the training rows by
    its score equations, and which is exact for exponential tilts
    (w(x) proportional to exp(x'beta)) and for shifts of factor levels.
    "gbm": histogram gradient boosting with sigmoid (Platt) calibration by
    3-fold cross-fitting, for shifts that are not log-linear in the design.
    Any scikit-learn classifier with ``predict_proba`` is cloned.
    """
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if isinstance(model, str):
        if model == "logit":
            return make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=5000))
        if model == "gbm":
            from sklearn.calibration import CalibratedClassifierCV

            return CalibratedClassifierCV(
                HistGradientBoostingClassifier(random_state=random_state), method="sigmoid", cv=3
            )
        raise InputError(
            f"unknown shift_model {model!r}; use one of {list(RATIO_MODELS)} or a scikit-learn classifier with "
            "predict_proba."
        )
    if not (is_classifier(model) and hasattr(model, "predict_proba")):
        raise InputError(
            f"shift_model must be {' or '.join(map(repr, RATIO_MODELS))} or a scikit-learn classifier with "
            f"predict_proba (it estimates P(target | x)); got {type(model).__name__}."
        )
    est = clone(model)
    if random_state is not None and "random_state" in est.get_params() and est.get_params()["random_state"] is None:
        est.set_params(random_state=random_state)
    return est


class RatioEstimator:
    """Likelihood ratio w(x) = dP_target(x) / dP_source(x) from a probabilistic classifier.

    Parameters
    ----------
    model : {"logit", "gbm"} or classifier
        See :func:`make_ratio_classifier`.
    clip : float
        The classifier's probability is clipped to [clip, 1 - clip] (0 < clip < 0.5).
    random_state : int or None

    Examples
    --------
    >>> import numpy as np
    >>> from confrf.shift import RatioEstimator
    >>> rng = np.random.default_rng(0)
    >>> source = rng.normal(size=(2000, 1)); target = rng.normal(1.0, size=(2000, 1))
    >>> r = RatioEstimator().fit(source, target)
    >>> w = r(np.array([[0.0], [1.0]]))  # true ratio exp(x - 1/2): 0.61, 1.65
    >>> bool(0.5 < w[0] < 0.75 and 1.4 < w[1] < 1.9)
    True
    """

    def __init__(self, model: Any = "logit", clip: float = 0.01, random_state: int | None = None) -> None:
        self.model = model
        self.clip = check_real(clip, "shift_clip", low=0.0, high=0.5, hint="e.g. 0.01: probabilities in [0.01, 0.99]")
        self.random_state = random_state

    def fit(self, X_source: Any, X_target: Any) -> RatioEstimator:
        """Train the classifier: source rows (label 0) against target rows (label 1)."""
        Xs = as_float_matrix(X_source, "source rows")
        Xt = as_float_matrix(X_target, "target rows (shift=)")
        for X, what in ((Xs, "calibration-population (source) rows"), (Xt, "target rows (shift=)")):
            if X.shape[0] < MIN_ROWS:
                raise InputError(
                    f"the ratio classifier needs at least {MIN_ROWS} {what}, got {X.shape[0]}; give more rows."
                )
        if Xs.shape[1] != Xt.shape[1]:
            raise InputError(f"the target rows have {Xt.shape[1]} design columns, the source rows {Xs.shape[1]}.")
        self.classifier_ = make_ratio_classifier(self.model, self.random_state).fit(
            np.vstack([Xs, Xt]), np.r_[np.zeros(Xs.shape[0]), np.ones(Xt.shape[0])]
        )
        self.n_source_, self.n_target_ = int(Xs.shape[0]), int(Xt.shape[0])
        p = self._proba(Xt)
        # the classifier is (nearly) sure these are target rows: the source population hardly reaches them
        self.target_share_at_clip_ = float(np.mean(p >= 1.0 - self.clip))
        return self

    def _proba(self, X: np.ndarray) -> np.ndarray:
        if not hasattr(self, "classifier_"):
            raise NotFittedError("the ratio classifier is not fitted; call fit(X_source, X_target) first.")
        return np.asarray(self.classifier_.predict_proba(as_float_matrix(X, "X"))[:, 1], dtype=np.float64)

    def __call__(self, X: Any) -> np.ndarray:
        """w(x) for rows of X (design columns)."""
        p = np.clip(self._proba(X), self.clip, 1.0 - self.clip)
        return p / (1.0 - p) * (self.n_source_ / self.n_target_)

    def describe(self) -> str:
        name = self.model if isinstance(self.model, str) else type(self.model).__name__
        name = {"logit": "logistic regression", "gbm": "gradient boosting (sigmoid-calibrated)"}.get(name, name)
        return (
            f"estimated: {name}, {self.n_target_} target rows vs {self.n_source_} training rows; "
            f"P(target | x) clipped to [{self.clip:g}, {1 - self.clip:g}]"
        )
