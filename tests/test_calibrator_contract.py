"""The calibrator contract: the base class's optional hooks and their defaults, and estimators that rely on it only.

A calibrator that overrides only the four abstract methods gets hooks that
refuse with the reason (training rows, Dask rows, own models, groups, shift),
and ``predict_rows`` gives its thresholds (and bounds through the score's
inversion). The estimators never ask a calibrator its class or probe its
attributes: they call these hooks.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from confrf.calibrators import Calibrator, Guarantee, Thresholds
from confrf.exceptions import InputError, NotFittedError

PACKAGE = Path(__file__).resolve().parent.parent / "confrf"
#: the modules that drive calibrators: the two estimators, their base, the Dask calibration
DRIVERS = ["estimator.py", "_estimator_base.py", "classification/estimator.py", "dask.py"]


class Quantile(Calibrator):
    """Every row's threshold: the calibration scores' conformal quantile (split conformal, unweighted)."""

    name = "toy"

    def calibrate(self, X, scores, *, alpha, rng):
        k = int(np.ceil((1 - alpha) * (scores.shape[0] + 1)))
        self.t_ = np.sort(scores)[k - 1]
        self.n_ = scores.shape[0]
        return self

    def thresholds(self, X, alpha):
        m = X.shape[0]
        return Thresholds(np.full(m, self.t_), np.ones(m, dtype=bool), np.full(m, 0.9))

    def guarantee(self, alpha):
        return Guarantee("marginal", True, "toy")

    def sizes(self):
        return {"calibration": self.n_}


def _fitted() -> Quantile:
    rng = np.random.default_rng(0)
    cal = Quantile()
    return cal.conformalize(rng.normal(size=(50, 2)), np.abs(rng.normal(size=50)), alpha=0.1, rng=rng)


def test_a_plain_calibrator_refuses_what_it_does_not_do():
    cal, X = _fitted(), np.zeros((3, 2))
    with pytest.raises(InputError, match="'toy' does not learn from training rows"):
        cal.set_reference(X, np.zeros(3))
    with pytest.raises(InputError, match="'toy' calibrates rows in memory only"):
        cal.refuse_rows()
    with pytest.raises(InputError, match="'toy' calibrates rows in memory only"):
        cal.calibrate_rows(None, alpha=0.1, rng=np.random.default_rng(0))
    with pytest.raises(InputError, match="'toy' does not fit models of its own"):
        cal.cross_fit(X, np.zeros(3))
    with pytest.raises(InputError, match="'toy' has no groups"):
        cal.groups_of(X)
    with pytest.raises(InputError, match="groups= labels apply only"):
        cal.label_kwargs(["a", "b", "c"], 3)
    with pytest.raises(InputError, match="likelihood_ratio .covariate shift. cannot be used here"):
        cal.conformalize(X, np.zeros(3), alpha=0.1, rng=np.random.default_rng(0), likelihood_ratio=np.ones(3))
    with pytest.raises(NotFittedError, match="no forest localizer"):
        cal.forest_localizer()
    assert cal.label_kwargs(None, 3) == {} and cal.shift_ is None and not cal.uses_labels and not cal.has_groups


def test_predict_rows_gives_thresholds_and_bounds_through_the_inversion():
    cal, X = _fitted(), np.zeros((4, 2))
    plain = cal.predict_rows(X, 0.1)
    assert list(plain) == ["t", "closed", "level"]
    np.testing.assert_array_equal(plain["t"], np.full(4, cal.t_))
    center = np.arange(4.0)
    rows = cal.predict_rows(X, 0.1, interval=lambda t: (center - t, center + t))
    assert list(rows) == ["lwr", "upr", "t", "closed", "level"]
    np.testing.assert_array_equal(rows["lwr"], center - cal.t_)
    np.testing.assert_array_equal(rows["upr"], center + cal.t_)


def test_the_estimators_never_probe_a_calibrator():
    """No isinstance on a calibrator class, no hasattr/getattr on a calibrator: the hooks say it all."""
    found = []
    for rel in DRIVERS:
        tree = ast.parse((PACKAGE / rel).read_text())
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            text = ast.unparse(node)
            if node.func.id == "isinstance" and "Calibrator" in text:
                found.append(f"{rel}: {text}")
            if node.func.id in ("hasattr", "getattr") and node.args and "calibrator" in ast.unparse(node.args[0]):
                found.append(f"{rel}: {text}")
    assert found == []
