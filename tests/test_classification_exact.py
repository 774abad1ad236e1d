"""Classification sets against slow references written from the definitions (ties included)."""

from fractions import Fraction

import numpy as np
import pytest
from reference import exact_m_req, forest_lcp_matrix, lcp_accepts

from confrf.calibrators.base import random_split
from confrf.classification import APSScore, ConformalClassifier, LACScore, RAPSScore
from confrf.estimator import _seeds


# -- scores ----------------------------------------------------------------------
def _aps_reference(p, k, u, lam=0.0, k_reg=0):
    greater = [j for j in range(len(p)) if p[j] > p[k]]
    return (
        sum(Fraction(p[j]) for j in greater)
        + Fraction(u) * Fraction(p[k])
        + Fraction(lam) * max(0, len(greater) + 1 - k_reg)
    )


@pytest.mark.parametrize("randomized", [False, True])
def test_aps_and_raps_match_definition_with_ties(randomized):
    rng = np.random.default_rng(1)
    for _ in range(30):
        K = int(rng.integers(2, 7))
        raw = rng.integers(1, 4, size=(5, K)).astype(float)  # few distinct values: tied probabilities
        P = raw / raw.sum(axis=1, keepdims=True)
        u = rng.random(5) if randomized else np.ones(5)
        aps = APSScore(randomized=randomized).matrix(P, u if randomized else None)
        raps = RAPSScore(lam=0.25, k_reg=2, randomized=randomized).matrix(P, u if randomized else None)
        for i in range(5):
            for k in range(K):
                assert aps[i, k] == pytest.approx(float(_aps_reference(P[i], k, u[i])), abs=1e-12)
                assert raps[i, k] == pytest.approx(float(_aps_reference(P[i], k, u[i], 0.25, 2)), abs=1e-12)
        # tied labels get equal scores
        for i in range(5):
            for a in range(K):
                for b in range(K):
                    if P[i, a] == P[i, b]:
                        assert aps[i, a] == aps[i, b]


def test_lac_score():
    assert LACScore().matrix(np.array([[0.25, 0.75]])).tolist() == [[0.75, 0.25]]


# -- a tiny problem whose probabilities take few values (ties between candidate and calibration scores) --
class _GridModel:
    """A 'prefit' classifier whose probabilities lie on a coarse grid, so scores tie often."""

    classes_ = np.array(["a", "b", "c"])

    def predict_proba(self, X):
        z = np.floor(np.abs(X[:, :3]) * 2) + 1.0
        return z / z.sum(axis=1, keepdims=True)


def _data(rng, n):
    X = rng.normal(size=(n, 3))
    y = np.array(["a", "b", "c"])[rng.integers(0, 3, size=n)]
    return X, y


def _conformal_rows(clf, n):
    """Positions of the conformal part of an honest LCP-RF calibration (recomputed from the seeds)."""
    seeds = _seeds(clf.random_state, 4)
    _, conf = random_split(n, clf.localizer_size, np.random.default_rng(seeds[1]), "localizer part", "localizer_size")
    return conf


@pytest.mark.parametrize(
    "score",
    [
        APSScore(randomized=True, random_state=7),
        RAPSScore(lam=0.05, k_reg=1, randomized=True, random_state=7),
        APSScore(randomized=True),  # U's seed derived from the estimator's random_state
    ],
    ids=["aps-seeded", "raps-seeded", "aps-estimator-seed"],
)
def test_randomized_scores_draw_new_uniforms_at_prediction(score):
    """The coverage proof needs the test point's U independent of the calibration points' Us. Predicting the
    calibration rows themselves must therefore not reproduce their calibration scores: the prediction call
    draws its Us from another stream of the seed than the calibration did."""
    from confrf.classification.scores import CALIBRATION_STREAM, PREDICTION_STREAM, uniforms

    rng = np.random.default_rng(4)
    X, y = _data(rng, 200)
    clf = ConformalClassifier(_GridModel(), method="split", score=score, prefit=True, random_state=0)
    clf.conformalize(X, y)
    d = clf.predict_details(X)  # the calibration rows, predicted as new points
    rows = np.arange(X.shape[0])
    assert (d["proba"] > 0).all()  # the premise: every score moves with its row's U
    # no observed-label score of the calibration rows is reproduced at prediction ...
    assert int(np.sum(d["scores"][rows, clf.calib_codes_] == clf.calib_scores_)) == 0
    # ... because each side's scores are exactly the score at its own stream's U, and the streams differ
    fallback = clf._seeds()[3]  # used when the score has no random_state of its own
    u_cal = uniforms(clf.score_, X.shape[0], CALIBRATION_STREAM, fallback)
    u_pred = uniforms(clf.score_, X.shape[0], PREDICTION_STREAM, fallback)
    np.testing.assert_array_equal(clf.calib_scores_, clf.score_.matrix(d["proba"], u_cal)[rows, clf.calib_codes_])
    np.testing.assert_array_equal(d["scores"], clf.score_.matrix(d["proba"], u_pred))
    assert not np.isin(u_pred, u_cal).any()


@pytest.mark.parametrize("alpha", ["0.1", "0.2", "0.35"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_lcp_rf_sets_match_reference(alpha, seed):
    rng = np.random.default_rng(seed)
    X, y = _data(rng, 26)
    Xt, _ = _data(rng, 4)
    clf = ConformalClassifier(
        _GridModel(),
        method="lcp-rf",
        alpha=float(alpha),
        prefit=True,
        n_estimators=4,
        min_samples_leaf=3,
        random_state=seed,
    ).conformalize(X, y)
    conf = _conformal_rows(clf, X.shape[0])
    V = list(clf.calib_scores_[conf])
    loc = clf.calibrator_.localizer
    leaves_cal, leaves_test = loc.leaves(X[conf]), loc.leaves(Xt)
    d = clf.predict_details(Xt)
    m_req = exact_m_req(alpha, len(V))
    assert np.isin(d["scores"], V).any()  # the grid makes candidate scores tie with calibration scores
    for i in range(Xt.shape[0]):
        W = forest_lcp_matrix(leaves_cal, leaves_test[i])
        ref = [lcp_accepts(W, V, float(d["scores"][i, k]), m_req) for k in range(3)]
        assert d["sets"][i].tolist() == ref
    if alpha != "0.1":  # at 0.1 the 13 conformal points often give infinite thresholds
        assert not d["sets"].all()  # some label is left out: not a comparison of full sets


def test_a_label_whose_score_equals_an_open_threshold_is_left_out():
    """LCP's set can be (-inf, t) with t a calibration score: a candidate label whose score is exactly t is then
    not in the set. The grid-valued probabilities make candidate scores land on open thresholds; each such
    label is checked against Guan's definition, enumerated."""
    alpha = "0.25"
    rng = np.random.default_rng(4)
    X, y = _data(rng, 30)
    Xt, _ = _data(rng, 100)
    clf = ConformalClassifier(
        _GridModel(),
        method="lcp-rf",
        alpha=float(alpha),
        prefit=True,
        n_estimators=4,
        min_samples_leaf=3,
        random_state=4,
    ).conformalize(X, y)
    d = clf.predict_details(Xt)
    on_open = (d["scores"] == d["t"][:, None]) & ~d["closed"][:, None]
    assert on_open.sum() >= 3  # the premise: candidate scores lie exactly on open thresholds
    assert not d["sets"][on_open].any()
    below = d["scores"] < d["t"][:, None]
    assert d["sets"][below].all()  # the labels strictly below the same thresholds are in
    conf = _conformal_rows(clf, X.shape[0])
    V = list(clf.calib_scores_[conf])
    loc = clf.calibrator_.localizer
    leaves_cal, leaves_test = loc.leaves(X[conf]), loc.leaves(Xt)
    m_req = exact_m_req(alpha, len(V))
    for i, k in zip(*np.nonzero(on_open)):
        assert d["t"][i] in V  # an open threshold is a calibration score
        assert not lcp_accepts(forest_lcp_matrix(leaves_cal, leaves_test[i]), V, float(d["scores"][i, k]), m_req)


@pytest.mark.parametrize("alpha", ["0.1", "0.25"])
@pytest.mark.parametrize("seed", [0, 1])
def test_mondrian_lcp_rf_sets_match_reference(alpha, seed):
    rng = np.random.default_rng(10 + seed)
    X, y = _data(rng, 60)
    Xt, _ = _data(rng, 3)
    clf = ConformalClassifier(
        _GridModel(),
        method="lcp-rf-g",
        alpha=float(alpha),
        prefit=True,
        n_estimators=3,
        min_samples_leaf=3,
        random_state=seed,
    ).conformalize(X, y)
    conf = _conformal_rows(clf, X.shape[0])
    d = clf.predict_details(Xt)
    for k in range(3):
        rows = conf[clf.calib_codes_[conf] == k]
        V = list(clf.calib_scores_[rows])
        loc = clf.calibrator_.group_localizers_[k]
        leaves_cal, leaves_test = loc.leaves(X[rows]), loc.leaves(Xt)
        m_req = exact_m_req(alpha, len(V))
        for i in range(Xt.shape[0]):
            W = forest_lcp_matrix(leaves_cal, leaves_test[i])
            assert d["sets"][i, k] == lcp_accepts(W, V, float(d["scores"][i, k]), m_req)


@pytest.mark.parametrize("score", ["lac", "aps", "raps"])
@pytest.mark.parametrize("alpha", ["0.1", "0.3"])
def test_split_and_mondrian_split_match_order_statistics(score, alpha):
    rng = np.random.default_rng(5)
    X, y = _data(rng, 90)
    Xt, _ = _data(rng, 50)
    common = dict(alpha=float(alpha), score=score, prefit=True, random_state=0)
    split = ConformalClassifier(_GridModel(), method="split", **common).conformalize(X, y)
    mond = ConformalClassifier(_GridModel(), method="split-g", **common).conformalize(X, y)
    S = split.predict_details(Xt)["scores"]

    def quantile(v):
        m = exact_m_req(alpha, len(v))
        return np.inf if m > len(v) else sorted(v)[m - 1]

    t = quantile(list(split.calib_scores_))
    assert split.predict_sets(Xt).tolist() == (S <= t).tolist()
    t_k = [quantile(list(mond.calib_scores_[mond.calib_codes_ == k])) for k in range(3)]
    assert mond.predict_sets(Xt).tolist() == (S <= np.array(t_k)[None, :]).tolist()


def test_split_lac_equals_mapie_lac():
    mapie = pytest.importorskip("mapie.classification")
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(3)
    X = rng.normal(size=(1500, 3))
    y = np.argmax(X + rng.normal(size=(1500, 3)), axis=1)
    model = LogisticRegression().fit(X[:500], y[:500])
    ours = ConformalClassifier(model, method="split", alpha=0.1, prefit=True).conformalize(X[500:1000], y[500:1000])
    theirs = mapie.SplitConformalClassifier(model, confidence_level=0.9, conformity_score="lac", prefit=True)
    theirs.conformalize(X[500:1000], y[500:1000])
    assert (ours.predict_sets(X[1000:]) == theirs.predict_set(X[1000:])[1][:, :, 0]).all()
