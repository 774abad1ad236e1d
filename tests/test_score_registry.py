"""A score added from outside the package: one class and one registration, for each family.

The toy scores are twice a built-in one (2 |y - mu(x)|, and 2 (1 - p_y(x))): their calibration scores are
twice the built-in's and their intervals and sets are the built-in's, so a fit that used another score, or
inverted the threshold wrongly, is seen. Once registered, each is used through the estimator, ``cf.conformal``
and the command line, and the lists derived from the registry (the CLI's choices) name it.
"""

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_wine

import confrf as cf
from confrf.__main__ import METHOD_NAMES, SCORE_NAMES, main
from confrf.calibrators import METHODS
from confrf.classification import ConformalClassifier
from confrf.cli.choices import RegisteredScores
from confrf.exceptions import InputError
from confrf.scores import SCORES, ScoreSpec, register_score, score_names

TOY, TOY_CLASS = "toy-double", "toy-lac-double"


class DoubleAbsolute:
    """V = 2 |y - mu(x)|: the absolute score in other units."""

    name = TOY

    def score(self, y, pred):
        return 2.0 * np.abs(np.asarray(y, dtype=float) - np.asarray(pred, dtype=float))

    def interval(self, pred, t):
        pred = np.asarray(pred, dtype=float)
        return pred - np.asarray(t) / 2.0, pred + np.asarray(t) / 2.0

    def center(self, pred):
        return np.asarray(pred, dtype=float)


class DoubleLAC:
    """S = 2 (1 - p_y(x)): LAC in other units."""

    name = TOY_CLASS
    randomized = False

    def matrix(self, proba, u=None):
        return 2.0 * (1.0 - np.asarray(proba, dtype=float))


@pytest.fixture
def toys():
    specs = [
        register_score(ScoreSpec(TOY, DoubleAbsolute, family="regression")),
        register_score(ScoreSpec(TOY_CLASS, DoubleLAC, family="classification")),
    ]
    try:
        yield specs
    finally:
        for spec in specs:
            del SCORES[spec.name]


@pytest.fixture(scope="module")
def sim():
    return cf.datasets.make_sim(300, random_state=0)


@pytest.fixture(scope="module")
def wine():
    return load_wine(as_frame=True).frame.astype({"target": "category"})


def test_estimator(toys, sim):
    X, y = sim.frame[["x1", "x2", "x3"]].to_numpy(), sim.frame["y"].to_numpy()
    fits = {
        s: cf.ConformalRegressor(model="ols", method="split", score=s, random_state=0)
        .fit(X[:150], y[:150])
        .conformalize(X[150:], y[150:])
        for s in (TOY, "absolute")
    }
    assert isinstance(fits[TOY].score_, DoubleAbsolute)
    np.testing.assert_allclose(fits[TOY].calib_scores_, 2.0 * fits["absolute"].calib_scores_)
    np.testing.assert_allclose(fits[TOY].predict_interval(X[:20]), fits["absolute"].predict_interval(X[:20]))


def test_classification_estimator(toys, wine):
    X, y = wine.drop(columns="target").to_numpy(), wine["target"].to_numpy()
    fits = {
        s: ConformalClassifier(model="logit", score=s, random_state=0)
        .fit(X[::2], y[::2])
        .conformalize(X[1::2], y[1::2])
        for s in (TOY_CLASS, "lac")
    }
    assert isinstance(fits[TOY_CLASS].score_, DoubleLAC)
    np.testing.assert_allclose(fits[TOY_CLASS].calib_scores_, 2.0 * fits["lac"].calib_scores_)


def test_formula_api(toys, sim, wine):
    toy = cf.conformal(sim.formula, data=sim.frame, method="split", model="ols", score=TOY, random_state=0)
    ref = cf.conformal(sim.formula, data=sim.frame, method="split", model="ols", random_state=0)
    pd.testing.assert_frame_equal(toy.predict(sim.frame.head(10)), ref.predict(sim.frame.head(10)))
    assert isinstance(toy.estimator.score_, DoubleAbsolute)
    sets = cf.conformal("target ~ .", data=wine, model="logit", score=TOY_CLASS, random_state=0)
    lac = cf.conformal("target ~ .", data=wine, model="logit", score="lac", random_state=0)
    assert isinstance(sets.estimator.score_, DoubleLAC)
    # a class-label score with a numeric response is refused by name: the registry says which family it is
    with pytest.raises(InputError, match=f"score='{TOY_CLASS}' belongs to classification"):
        cf.conformal(sim.formula, data=sim.frame, method="split", model="ols", score=TOY_CLASS)
    pd.testing.assert_frame_equal(sets.predict(wine.head(10)), lac.predict(wine.head(10)))


def test_command_line(toys, sim, tmp_path, capsys):
    data = tmp_path / "d.csv"
    sim.frame.to_csv(data, index=False)
    argv = [
        "fit",
        sim.formula,
        "--data",
        str(data),
        "--newdata",
        str(data),
        "--method",
        "split",
        "--model",
        "ols",
        "--random-state",
        "0",
    ]
    assert main([*argv, "--score", TOY, "--out", str(tmp_path / "toy.csv")]) == 0
    assert main([*argv, "--score", "absolute", "--out", str(tmp_path / "abs.csv")]) == 0
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "toy.csv"), pd.read_csv(tmp_path / "abs.csv"))
    # --help lists the registry once it is loaded: the toy scores with their family
    assert list(RegisteredScores()) == [*score_names("regression"), *score_names("classification")]
    assert TOY in RegisteredScores() and TOY_CLASS in RegisteredScores()
    with pytest.raises(SystemExit):
        main(["fit", "--help"])
    assert f"{TOY}," in capsys.readouterr().out


def test_names_without_import_are_the_registries(toys):
    # what --help lists before the library is loaded is read from the registration lines of the package's files
    assert set(SCORE_NAMES) == set(SCORES) - {TOY, TOY_CLASS}
    assert SCORE_NAMES[:3] == tuple(score_names("regression"))[:3] and "lac" in SCORE_NAMES
    assert METHOD_NAMES == tuple(sorted(METHODS))


def test_a_name_is_registered_once(toys):
    with pytest.raises(ValueError, match="already registered"):
        register_score(ScoreSpec("absolute", DoubleAbsolute))
    with pytest.raises(ValueError, match="family"):
        ScoreSpec("x", DoubleAbsolute, family="survival")
