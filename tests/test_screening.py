"""max_features="screened": the localizer grown on the columns a first forest of the growing scores finds relevant."""

import pickle

import numpy as np
import pytest
from sklearn.ensemble import RandomForestRegressor

import confrf as cf
from confrf._validation import required_count
from confrf.calibrators.base import random_split
from confrf.calibrators.lcp_rf import LCPForestCalibrator
from confrf.exceptions import InputError
from confrf.localizers import ForestLocalizer
from confrf.localizers.screening import SCREEN_FACTOR, SCREEN_TREES, screen_features


def _data(n, p=12, seed=0):
    """The score's spread depends on column 2 only."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, p))
    V = np.abs(rng.normal(size=n)) * (0.05 + 2.0 * X[:, 2])
    return X, V


def test_the_rule_from_its_definition():
    X, V = _data(900)
    # written from the docstring: a 50-tree forest, leaves of ceil(sqrt(n)), a third of the features per split,
    # the columns with importance >= 2 / p
    rf = RandomForestRegressor(n_estimators=SCREEN_TREES, min_samples_leaf=30, max_features=1 / 3, random_state=4).fit(
        X, V
    )
    expected = [j for j, v in enumerate(rf.feature_importances_) if v >= SCREEN_FACTOR / X.shape[1]]
    got = screen_features(X, V, random_state=4)
    assert got.tolist() == expected and 2 in expected and len(expected) < X.shape[1]
    np.testing.assert_array_equal(screen_features(X, V, random_state=4), got)  # deterministic


def test_degenerate_scores_keep_every_column_and_the_choice_is_never_empty(monkeypatch):
    X, V = _data(300)
    np.testing.assert_array_equal(screen_features(X, np.ones(300), random_state=0), np.arange(12))
    np.testing.assert_array_equal(screen_features(X[:1], V[:1], random_state=0), np.arange(12))
    # a threshold no column reaches: the most important column alone
    import confrf.localizers.screening as scr

    monkeypatch.setattr(scr, "SCREEN_FACTOR", 1e6)
    assert screen_features(X, V, random_state=0).tolist() == [2]


def test_screened_forest_is_the_forest_on_the_screened_columns():
    """Weights and exact LCP thresholds equal those of an all-features forest grown on X[:, columns]."""
    X, V = _data(700, seed=1)
    Xg, Vg, Xc, Vc, Xt = X[:400], V[:400], X[400:650], V[400:650], X[650:]
    loc = (
        ForestLocalizer(n_estimators=30, min_samples_leaf=8, max_features="screened", random_state=3, scale="forest")
        .grow(Xg, Vg)
        .index(Xc, Vc)
    )
    cols = loc.columns_
    np.testing.assert_array_equal(cols, screen_features(Xg, Vg, random_state=3))
    assert 2 in cols and cols.size < 12
    ref = (
        ForestLocalizer(n_estimators=30, min_samples_leaf=8, max_features=1.0, random_state=3, scale="forest")
        .grow(Xg[:, cols], Vg)
        .index(Xc[:, cols], Vc)
    )
    assert (loc.weights(Xt) != ref.weights(Xt[:, cols])).nnz == 0
    m = required_count(0.1, Xc.shape[0])
    for a, b in zip(loc.thresholds(Xt, m), ref.thresholds(Xt[:, cols], m)):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(loc.score_scale(Xt), ref.score_scale(Xt[:, cols]))
    assert "screened: all of columns" in str(loc.describe()["max_features"])
    # the inputs keep all their columns: a wrong count names the original one
    with pytest.raises(InputError, match="grown on 12"):
        loc.thresholds(Xt[:, cols], m)
    back = pickle.loads(pickle.dumps(loc))
    np.testing.assert_array_equal(back.thresholds(Xt, m)[0], loc.thresholds(Xt, m)[0])


def test_tuning_tries_screening_after_the_grid_and_stays_honest():
    """The screened candidates come after the grid and its refinement; permuting and replacing the conformal
    points changes neither the candidates' scores nor the screened columns nor the trees."""
    X, V = _data(1500, p=20, seed=2)
    cal = LCPForestCalibrator(ForestLocalizer(n_estimators=20, random_state=7))
    base = cal.calibrate(X, V, alpha=0.1, rng=np.random.default_rng(3)).localizer
    # the no-localization candidate (every point in one leaf) is compared last, with the choice among these
    assert base.tuning_.candidates[-1] == base.tuning_.pooled
    cands = base.tuning_.candidates[:-1]
    firsts = [i for i, c in enumerate(cands) if c[1] == "screened"]
    assert firsts and min(firsts) > max(i for i, c in enumerate(cands) if c[1] != "screened")
    assert {c[0] for c in cands if c[1] == "screened"} <= {c[0] for c in cands if c[1] != "screened"}
    _, conf = random_split(X.shape[0], 0.5, np.random.default_rng(3), "localizer part", "localizer_size")
    rng = np.random.default_rng(5)
    X2, V2 = X.copy(), V.copy()
    X2[conf], V2[conf] = X[rng.permutation(conf)], 50.0 * rng.exponential(size=conf.shape[0])
    other = (
        LCPForestCalibrator(ForestLocalizer(n_estimators=20, random_state=7))
        .calibrate(X2, V2, alpha=0.1, rng=np.random.default_rng(3))
        .localizer
    )
    assert other.tuning_ == base.tuning_
    assert (other.columns_ is None) == (base.columns_ is None)
    if base.columns_ is not None:
        np.testing.assert_array_equal(other.columns_, base.columns_)
    for ta, tb in zip(base.forest_.estimators_, other.forest_.estimators_):
        np.testing.assert_array_equal(ta.tree_.feature, tb.tree_.feature)
        np.testing.assert_array_equal(ta.tree_.threshold, tb.tree_.threshold)


def test_summary_lists_the_screened_candidates_and_a_given_screening():
    sim = cf.datasets.make_sim(1200, random_state=0)
    tuned = cf.lcp_rf(sim.formula, data=sim.frame, model="ols", random_state=0, n_estimators=10)
    table = tuned.summary().frames["tuning"]
    assert (table["max_features"] == "screened").sum() >= 2
    assert "/screened/" in " ".join(str(tuned.summary()).split())
    given = cf.lcp_rf(
        sim.formula,
        data=sim.frame,
        model="ols",
        random_state=0,
        n_estimators=10,
        max_features="screened",
        min_samples_leaf=20,
    )
    loc = given.estimator.localizer_
    assert {c[:2] for c in loc.tuning_.candidates} == {(20, "screened")}  # only the scale is still tuned
    assert 0 in loc.columns_  # x1, the column the noise depends on
    names = [given.design.column_names[j] for j in loc.columns_]
    text = " ".join(str(given.summary()).split())
    assert f"screened: {', '.join(names)} ({len(names)} of 50 columns)" in text and "x1" in names


def test_user_given_screened_and_bad_values():
    X, V = _data(500)
    loc = ForestLocalizer(n_estimators=10, min_samples_leaf=10, max_features="screened", random_state=0).grow(X, V)
    assert loc.tuning_ is None and loc.columns_ is not None
    with pytest.raises(InputError, match="screened"):
        ForestLocalizer(max_features="screen").grow(X, V)


@pytest.mark.parametrize("seed, n_splits", [(1, 1), (3, 3)])
def test_every_screening_in_the_tuning_sees_exactly_one_growing_fold(monkeypatch, seed, n_splits):
    """A simulation that picks the forest must screen as the final forest does, on its growing points alone:
    every call of the screening during the tuning receives exactly the rows (and scores) of one growing third,
    each third at most once, never the folds that play the conformal and test points. With seed 3 the choice
    leaves the sqrt rule and is rechecked with every third growing, so all three thirds are screened."""
    import confrf.localizers.screening as screening
    from confrf.localizers.tuning import MAX_TUNE_POINTS, TUNE_FOLDS, tune_forest

    n = 600
    X, V = _data(n, seed=seed)
    row_of = {row.tobytes(): i for i, row in enumerate(X)}
    assert len(row_of) == n  # rows are distinct, so a row identifies its point
    calls = []
    real = screening.screen_features

    def recording(Xs, Vs, random_state, n_jobs=None):
        calls.append(np.array([row_of[row.tobytes()] for row in Xs]))
        np.testing.assert_array_equal(Vs, V[calls[-1]])  # the scores of the same rows
        return real(Xs, Vs, random_state, n_jobs)

    monkeypatch.setattr(screening, "screen_features", recording)
    tun = tune_forest(
        X,
        V,
        alpha=0.1,
        leaves=[25, 12],
        max_features=[1.0, "screened"],
        forest_kwargs={},
        random_state=seed,
        n_jobs=1,
        make_localizer=ForestLocalizer,
    )
    # the tuning's thirds, recomputed from its seed: consecutive ranges of a permutation of the points
    use = np.random.default_rng(seed).permutation(n)[: min(n, MAX_TUNE_POINTS)]
    thirds = [set(use[r * n // TUNE_FOLDS : (r + 1) * n // TUNE_FOLDS].tolist()) for r in range(TUNE_FOLDS)]
    assert tun.n_splits == n_splits and any(c[1] == "screened" for c in tun.candidates)
    assert len(calls) == n_splits  # the premise: the screened candidates were simulated on every split
    screened = []
    for rows in calls:
        assert len(set(rows.tolist())) == rows.size  # no row twice
        matches = [r for r in range(TUNE_FOLDS) if set(rows.tolist()) == thirds[r]]
        assert len(matches) == 1, f"a screening saw {rows.size} rows, not one growing third of {n // TUNE_FOLDS}"
        screened.append(matches[0])
    assert sorted(screened) == list(range(n_splits))  # third r grows in split r; each screened once


def test_tuning_tries_screening_only_with_enough_growing_points():
    """Below SCREEN_MIN_POINTS points in the tuning's growing third, the screened stage is skipped (cost, noise);
    a screening the user asks for is still done."""
    from confrf.localizers.screening import SCREEN_MIN_POINTS
    from confrf.localizers.tuning import tune_forest

    for n, tried in ((3 * SCREEN_MIN_POINTS - 3, False), (3 * SCREEN_MIN_POINTS, True)):
        X, V = _data(n, seed=4)
        tun = tune_forest(
            X,
            V,
            alpha=0.1,
            leaves=[6, 12],
            max_features=[1.0, "screened"],
            forest_kwargs={},
            random_state=0,
            n_jobs=1,
            make_localizer=ForestLocalizer,
        )
        assert any(c[1] == "screened" for c in tun.candidates) == tried
    X, V = _data(150, seed=4)
    loc = ForestLocalizer(n_estimators=10, max_features="screened", random_state=0).grow(X, V)
    assert loc.columns_ is not None and all(c[1] == "screened" for c in loc.tuning_.candidates)
