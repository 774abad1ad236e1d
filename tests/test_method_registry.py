"""A calibration method added from outside the package: one calibrator class and one registration.

The toy method below is written here, not in confrf; once registered it is used
through ``cf.conformal`` (regression and classification) and the command line,
and the lists derived from the registry (classification's methods, the
covariate-shift refusal, the CLI's choices) name it.
"""

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_wine

import confrf as cf
from confrf.__main__ import METHOD_NAMES, main
from confrf.calibrators import METHODS, Calibrator, Guarantee, MethodSpec, Thresholds, register
from confrf.calibrators.registry import class_methods, shift_methods
from confrf.exceptions import InputError

TOY = "toy-max"


class MaxScoreCalibrator(Calibrator):
    """Every row's threshold is the largest calibration score: conservative, coverage >= n / (n + 1)."""

    name = TOY

    def calibrate(self, X, scores, *, alpha, rng):
        self.scores_ = np.asarray(scores, dtype=float)
        return self

    def thresholds(self, X, alpha):
        rows, n = np.asarray(X).shape[0], self.scores_.shape[0]
        return Thresholds(np.full(rows, self.scores_.max()), np.ones(rows, dtype=bool), np.full(rows, n / (n + 1)))

    def guarantee(self, alpha):
        return Guarantee("marginal", True, "P(Y in interval) >= n / (n + 1) for exchangeable points.")

    def sizes(self):
        return {"calibration": int(self.scores_.shape[0])}


@pytest.fixture
def toy():
    spec = register(
        MethodSpec(
            TOY, lambda est, opts, seed: MaxScoreCalibrator(), title="Toy: the largest score", classification=True
        )
    )
    try:
        yield spec
    finally:
        del METHODS[TOY]


@pytest.fixture(scope="module")
def sim():
    return cf.datasets.make_sim(400, random_state=0)


def test_regression_fit(toy, sim):
    res = cf.conformal(sim.formula, data=sim.frame, method=TOY, model="ols", random_state=0)
    est = res.estimator
    assert isinstance(est.calibrator_, MaxScoreCalibrator) and res.method == TOY
    pred = res.predict(sim.frame.head(5))
    assert np.allclose(pred["upr"] - pred["fit"], est.calib_scores_.max())
    assert "Toy: the largest score" in str(res.summary())


def test_classification_fit(toy):
    df = load_wine(as_frame=True).frame.astype({"target": "category"})
    res = cf.conformal("target ~ .", data=df, method=TOY, model="logit", random_state=0)
    assert isinstance(res.estimator.calibrator_, MaxScoreCalibrator)
    sets = res.predict(df.head(20))
    assert len(sets) == 20 and TOY in class_methods()
    # every calibration row's own label is in its set: the threshold is the largest calibration score
    assert res.estimator.calibrator_.thresholds(df.head(1).to_numpy(), 0.1).t[0] == res.estimator.calib_scores_.max()


def test_command_line(toy, sim, tmp_path, capsys):
    data = tmp_path / "d.csv"
    sim.frame.to_csv(data, index=False)
    out = tmp_path / "out.csv"
    argv = ["fit", sim.formula, "--data", str(data), "--newdata", str(data), "--method", TOY, "--model", "ols"]
    assert main([*argv, "--out", str(out)]) == 0
    pred = pd.read_csv(out)
    assert np.ptp(pred["upr"] - pred["fit"]) < 1e-9  # one threshold for every row
    # --help lists the registry once it is loaded
    with pytest.raises(SystemExit):
        main(["fit", "--help"])
    assert TOY in capsys.readouterr().out


def test_lists_follow_the_registry(toy):
    assert METHOD_NAMES == tuple(sorted(set(METHODS) - {TOY}))  # the built-in names --help shows without imports
    assert TOY in class_methods() and TOY not in shift_methods()
    assert class_methods() == sorted(m for m, s in METHODS.items() if s.classification)
    refusal = MaxScoreCalibrator().shift_refusal()
    for m in shift_methods():
        assert repr(m) in refusal
    with pytest.raises(InputError, match=TOY):
        frame = pd.DataFrame({"y": np.arange(50.0), "x1": np.arange(50.0) % 7, "w": 1.0})
        cf.conformal("y ~ x1", data=frame, method=TOY, model="ols", likelihood_ratio="w")
    # a method not offered for classification is refused by name, with the registry's list
    df = load_wine(as_frame=True).frame.astype({"target": "category"})
    with pytest.raises(InputError, match=r"not offered for a class-label response.*toy-max"):
        cf.conformal("target ~ .", data=df, method="slcp", model="logit")


def test_registry_shift_agrees_with_the_calibrators():
    # MethodSpec.shift (what the refusal lists) and the calibrator's supports_shift (what the fit checks) are two
    # declarations: every built-in method's default form says the same in both
    from confrf.calibrators.registry import method_options

    for name, spec in METHODS.items():
        calibrator = spec.factory(cf.ConformalRegressor(method=name), method_options(name, None), 0)
        assert calibrator.supports_shift == spec.shift, name
