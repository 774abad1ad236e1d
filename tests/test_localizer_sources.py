"""LCP-RF's forest source (localizer_data="auto"): the localizer part, the training part's out-of-fold scores, or both.

The source and the forest must be functions of the training part and the localizer part only (the conformal points
never move them), the thresholds on a forest grown on any source must be Guan's exact LCP thresholds (the slow
reference), a training part unlike the calibration rows must be left out, and marginal coverage must hold with each
source (--long Monte Carlo).
"""

import warnings
from fractions import Fraction

import numpy as np
import pytest
from reference import forest_lcp_matrix
from scipy import stats

import confrf as cf
import confrf.localizers.sources as sources
from confrf.calibrators import METHODS, lcp_threshold
from confrf.calibrators.localizer_split import localizer_rows_with_training, min_localizer_points
from confrf.exceptions import ConfrfWarning


class _Est:  # the shared settings the LCP-RF factory reads
    n_estimators, max_depth, honest, n_jobs, localizer_size, alpha, prefit = 10, None, True, 1, 0.5, 0.1, False
    min_samples_leaf, max_features = "tune", "tune"

    def __init__(self, alpha=0.1):
        self.alpha = alpha


def _calibrate(X, V, X_ref, V_ref, alpha=0.1, options=None, seed=0):
    spec = METHODS["lcp-rf"]
    cal = spec.factory(_Est(alpha), {**spec.options, "localizer_data": "auto", **(options or {})}, 0)
    cal.set_reference(X_ref, V_ref)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConfrfWarning)
        return cal.calibrate(X, V, alpha=alpha, rng=np.random.default_rng(seed))


def _hetero(rng, n, p=3):
    X = rng.uniform(size=(n, p))
    return X, np.abs((0.1 + 2 * X[:, 0]) * rng.normal(size=n))


@pytest.fixture
def forced(monkeypatch):
    """sources.choose with its answer replaced by a given source (its scores and reason kept); the training check is
    off so that the sources are always compared."""

    def force(source):
        monkeypatch.setattr(sources, "TRAINING_CHECK_LEVEL", None)
        real = sources.choose

        def choose(held_out, localizes, rows):
            c = real(held_out, localizes, rows)
            return sources.SourceChoice(source, c.rows, c.scores, c.localizes, "forced by the test")

        monkeypatch.setattr(sources, "choose", choose)

    return force


def test_the_split_is_read_from_sizes_and_shrinks_the_localizer_part_when_training_rows_teach():
    # the localizer part's share scales by n / (n + n_training), at least 3 ceil(10 / alpha) rows, at most the old part
    assert localizer_rows_with_training(1000, 2000, 0.5, 0.1) == 3 * min_localizer_points(0.1) == 300
    assert localizer_rows_with_training(16000, 2000, 0.5, 0.1) == round(0.5 * 16000 * 16000 / 18000)
    assert localizer_rows_with_training(400, 2000, 0.5, 0.1) == 200  # never more than localizer_size * n
    assert localizer_rows_with_training(1000, 0, 0.5, 0.1) == 500


@pytest.mark.parametrize("source", ["calibration", "training", "pooled"])
def test_conformal_points_do_not_move_the_source_or_the_forest(source, forced):
    forced(source)
    rng = np.random.default_rng(1)
    X, V = _hetero(rng, 500)
    Xr, Vr = _hetero(rng, 400)
    cal = _calibrate(X, V, Xr, Vr)
    conf = np.sort(cal.conformal_rows_)
    assert conf.shape[0] == 500 - localizer_rows_with_training(500, 400, 0.5, 0.1)
    # other conformal points: piled into one corner, with new, larger scores
    X2, V2 = X.copy(), V.copy()
    X2[conf] = rng.uniform(0.0, 0.05, size=(conf.shape[0], 3))
    V2[conf] = rng.exponential(size=conf.shape[0]) * 10
    cal2 = _calibrate(X2, V2, Xr, Vr)
    np.testing.assert_array_equal(np.sort(cal2.conformal_rows_), conf)
    loc, loc2 = cal.localizer, cal2.localizer
    assert loc.source_choice_ == loc2.source_choice_ and loc.source_choice_.chosen == source
    assert loc.tuning_.text() == loc2.tuning_.text()
    assert cal.localizer_source_ == cal2.localizer_source_ == ("calibration" if loc.pooled else source)
    Xf = np.random.default_rng(9).uniform(size=(300, 3))
    np.testing.assert_array_equal(loc.leaves(Xf), loc2.leaves(Xf))
    if not loc.pooled:
        assert loc.n_grow_ == {"calibration": 500 - conf.shape[0], "training": 400}.get(
            source, 500 - conf.shape[0] + 400
        )


@pytest.mark.parametrize("source", ["training", "pooled"])
def test_thresholds_on_a_forest_grown_on_training_rows_are_guans_exactly(source, forced, monkeypatch):
    """A small calibration (alpha 0.3 so that a forest is tuned) against the slow reference from the definitions;
    no localization is set aside (it would need no forest) so that a forest grows on the forced source."""
    import confrf.localizers.tuning as tuning

    monkeypatch.setattr(tuning, "NO_LOCALIZATION_SE", -1e9)
    forced(source)
    rng = np.random.default_rng(3)
    X, V = _hetero(rng, 80, p=2)
    Xr, Vr = _hetero(rng, 200, p=2)
    cal = _calibrate(X, V, Xr, Vr, alpha=0.3, options={"scale": "none"})
    loc = cal.localizer
    assert not loc.pooled, "the set-up must grow a forest"
    conf = cal.conformal_rows_
    Xt = np.random.default_rng(4).uniform(size=(4, 2))
    th = cal.thresholds(Xt, 0.3)
    leaves_cal, leaves_test = loc.leaves(X[conf]), loc.leaves(Xt)
    for q in range(Xt.shape[0]):
        # the forest's LCP weights from the definition (exact rationals), then Guan's threshold on them
        W = forest_lcp_matrix(leaves_cal, leaves_test[q])
        assert isinstance(W[0][0], Fraction)
        ref = lcp_threshold(np.array(W, dtype=float), V[conf], 0.3)
        assert (th.t[q], bool(th.closed[q])) == (ref.t, ref.closed)


def test_training_rows_unlike_the_calibration_rows_are_left_out():
    """Training scores driven by x2, calibration scores by x1: the held-out localizer rows reject the training part."""
    rng = np.random.default_rng(5)
    X, V = _hetero(rng, 2000)
    Xr = rng.uniform(size=(600, 3))
    Vr = np.abs((0.1 + 2 * Xr[:, 1]) * rng.normal(size=600))
    cal = _calibrate(X, V, Xr, Vr)
    choice = cal.localizer.source_choice_
    assert choice.chosen == "calibration" and not cal.localizer.pooled
    assert choice.scores["training"] > choice.scores["calibration"]


def test_the_summary_says_what_the_forest_learned_from():
    rng = np.random.default_rng(2)
    X = rng.uniform(size=(1400, 3))
    y = X[:, 0] + (0.1 + 2 * X[:, 0]) * rng.normal(size=1400)
    est = cf.ConformalRegressor(model="ols", n_estimators=20, random_state=0, options={"localizer_data": "auto"}).fit(
        X[:600], y[:600]
    )
    est.conformalize(X[600:], y[600:])
    grown = est.calibrator_.describe()["forest_grown_on"]
    choice = est.localizer_.source_choice_
    assert f"{choice.chosen} ({choice.rows[choice.chosen]:,} rows)" in grown and choice.reason in grown
    sizes = est.calibrator_.sizes()
    assert sizes["conformal"] + sizes["localizer"] == 800


def _coverage_draws(seed0: int, n_cal: int, n_ref: int, alpha: float, reps: int, n_test: int = 100):
    """Mean and s.e. over ``reps`` fresh draws of the exact coverage 2 Phi(t(x) / s(x)) - 1 of the half-normal
    score averaged over a draw's test points, and the number of draws whose training check passed."""
    cover_draws, passed = [], 0
    for r in range(reps):
        rng = np.random.default_rng(seed0 + r)
        X, V = _hetero(rng, n_cal, p=2)
        Xr, Vr = _hetero(rng, n_ref, p=2)
        Xt = rng.uniform(size=(n_test, 2))
        cal = _calibrate(X, V, Xr, Vr, alpha=alpha, seed=r)
        passed += "sources not compared" in cal.localizer.source_choice_.reason
        t = cal.thresholds(Xt, alpha).t
        cover_draws.append(float(np.mean(2 * stats.norm.cdf(t / (0.1 + 2 * Xt[:, 0])) - 1)))
    return float(np.mean(cover_draws)), float(np.std(cover_draws, ddof=1)) / np.sqrt(reps), passed


@pytest.mark.long
@pytest.mark.parametrize("source", ["calibration", "training", "pooled"])
def test_marginal_coverage_with_each_source(source, forced):
    """P(V <= t(X)) >= 1 - alpha over fresh training, calibration and test draws, with the source forced.

    A draw's coverage is the exact P(V <= t(x) | x) = 2 Phi(t(x) / s(x)) - 1 of the half-normal score, averaged
    over its test points: the same expectation as the share of covered test scores, without their
    binomial noise, so 25 draws (about 1 s each: three sources tuned) give a smaller standard error
    than 50 draws of 20 sampled scores did."""
    forced(source)
    alpha, reps = 0.2, 25
    cover, se, _ = _coverage_draws(1000, 150, 150, alpha, reps)
    print(f"source {source}: coverage {cover:.4f} (se {se:.4f}) over {reps} draws")
    assert cover >= 1 - alpha - 3 * se, (source, cover, se)
    assert cover <= 1 - alpha + 0.06, (source, cover)  # not trivially wide


# --- the default (localizer_data="auto", size-gated) ---


def test_auto_is_the_default_and_the_gate_reads_the_sizes_only():
    from confrf.calibrators.localizer_split import TRAINING_GATE, gated_localizer_rows

    assert METHODS["lcp-rf"].options["localizer_data"] == "auto"
    assert gated_localizer_rows(2 * TRAINING_GATE - 2, 0.5, None) == TRAINING_GATE - 1
    assert gated_localizer_rows(2 * TRAINING_GATE, 0.5, None) == TRAINING_GATE
    assert gated_localizer_rows(10**6, 0.5, 1000) == 1000  # the cap of max_localizer_size is the part
    spec = METHODS["lcp-rf"]
    cal = spec.factory(_Est(), dict(spec.options), 0)
    assert cal.choose_source
    assert cal._why_not_training(2 * TRAINING_GATE - 2, 0.1) is None
    assert f"{TRAINING_GATE:,} >= {TRAINING_GATE:,} rows" in cal._why_not_training(2 * TRAINING_GATE, 0.1)


def test_the_source_baseline_is_the_training_part_while_the_localizer_part_is_smaller():
    """Pooled beats training by less than SOURCE_SE paired s.e.: training is kept (the rule bt0; with the pooled
    baseline of the rule nl0, pooled would be kept); with the localizer part the larger, the calibration part is the
    baseline, and the lowest of the sources that beat it wins."""
    rng = np.random.default_rng(0)
    train = rng.exponential(size=200)
    held_out = {"calibration": train + 0.5, "training": train, "pooled": train - 0.01 + 0.3 * np.tile([1.0, -1.0], 100)}
    localizes = dict.fromkeys(held_out, True)
    small = sources.choose(held_out, localizes, {"calibration": 300, "training": 2000, "pooled": 2300})
    assert small.chosen == "training" and "baseline" in small.reason
    large = sources.choose(held_out, localizes, {"calibration": 3000, "training": 2000, "pooled": 5000})
    assert large.chosen == "pooled" and "beat the baseline (calibration)" in large.reason  # then the lowest wins


def _default_fit(X, y, n_train, **kw):
    est = cf.ConformalRegressor(model="ols", n_estimators=10, random_state=0, **kw).fit(X[:n_train], y[:n_train])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConfrfWarning)
        return est.conformalize(X[n_train:], y[n_train:])


def test_above_the_gate_the_default_is_the_calibration_rule_and_never_fits_the_training_folds(monkeypatch):
    import confrf.calibrators.localizer_split as localizer_split

    monkeypatch.setattr(localizer_split, "TRAINING_GATE", 200)  # a small gate keeps the test fast; the rule is the same
    rng = np.random.default_rng(4)
    X = rng.uniform(size=(1000, 3))
    y = X[:, 0] + (0.1 + 2 * X[:, 0]) * rng.normal(size=1000)
    est = _default_fit(X, y, 400)  # 600 calibration rows: a localizer part of 300 >= 200
    ref = _default_fit(X, y, 400, options={"localizer_data": "calibration"})
    assert not est.train_scores_.computed  # the out-of-fold fits never ran
    Xt = rng.uniform(size=(50, 3))
    np.testing.assert_array_equal(est.predict_interval(Xt), ref.predict_interval(Xt))
    np.testing.assert_array_equal(est.calibrator_.conformal_rows_, ref.calibrator_.conformal_rows_)
    grown = est.calibrator_.describe()["forest_grown_on"]
    assert grown.startswith("localizer part of the calibration set (300 rows)")
    assert "training rows not considered: the localizer part has 300 >= 200 rows" in grown
    # below the gate the same data compare the sources (the deferred scores are computed then)
    monkeypatch.setattr(localizer_split, "TRAINING_GATE", 301)
    small = _default_fit(X, y, 400)
    assert small.train_scores_.computed and small.localizer_.source_choice_ is not None
    assert small.calibrator_.training_note_ is None


def test_the_default_below_the_gate_equals_auto_and_keeps_the_conformal_points_unseen():
    """Below the gate the default is "auto" exactly (same deferred out-of-fold scores, same choice); the source and
    the forest do not move when the conformal points change (the guarantee's premise)."""
    rng = np.random.default_rng(6)
    X = rng.uniform(size=(1600, 3))
    y = X[:, 0] + (0.1 + 2 * X[:, 0]) * rng.normal(size=1600)
    est = _default_fit(X, y, 800)
    auto = _default_fit(X, y, 800, options={"localizer_data": "auto"})
    Xt = rng.uniform(size=(40, 3))
    np.testing.assert_array_equal(est.predict_interval(Xt), auto.predict_interval(Xt))
    choice = est.localizer_.source_choice_
    assert choice == auto.localizer_.source_choice_
    grown = est.calibrator_.describe()["forest_grown_on"]
    assert f"{choice.chosen} ({choice.rows[choice.chosen]:,} rows)" in grown and choice.reason in grown
    conf = 800 + np.sort(est.calibrator_.conformal_rows_)
    X2, y2 = X.copy(), y.copy()
    X2[conf] = rng.uniform(0.0, 0.05, size=(conf.shape[0], 3))
    y2[conf] = 10 + rng.exponential(size=conf.shape[0])
    moved = _default_fit(X2, y2, 800)
    np.testing.assert_array_equal(800 + np.sort(moved.calibrator_.conformal_rows_), conf)
    assert moved.localizer_.source_choice_ == choice
    np.testing.assert_array_equal(est.localizer_.leaves(Xt), moved.localizer_.leaves(Xt))


def test_without_a_training_part_the_default_is_unchanged():
    """A prefit model has no training part: the default grows on the localizer part, with no source note."""
    from sklearn.linear_model import LinearRegression

    rng = np.random.default_rng(7)
    X = rng.uniform(size=(900, 3))
    y = X[:, 0] + (0.1 + 2 * X[:, 0]) * rng.normal(size=900)
    model = LinearRegression().fit(X[:300], y[:300])
    kw = dict(model=model, prefit=True, n_estimators=10, random_state=0)
    a = cf.ConformalRegressor(**kw).conformalize(X[300:], y[300:])
    b = cf.ConformalRegressor(**kw, options={"localizer_data": "calibration"}).conformalize(X[300:], y[300:])
    Xt = rng.uniform(size=(30, 3))
    np.testing.assert_array_equal(a.predict_interval(Xt), b.predict_interval(Xt))
    assert a.calibrator_.training_note_ is None and "forest_grown_on" not in a.calibrator_.describe()


# --- the training check (localizer_split.training_split, sources.training_check) ---


def test_the_training_check_passes_like_rows_and_rejects_larger_scores_or_another_dependence_on_x(monkeypatch):
    rng = np.random.default_rng(11)
    Xr, Vr = _hetero(rng, 2000)
    X, V = _hetero(rng, 100)
    assert "Mann-Whitney" in sources.training_check(X, V, Xr, Vr, 0.1, 0)
    assert sources.training_check(X, 1.6 * V, Xr, Vr, 0.1, 0) is None  # larger scores: a training part with a hole
    # the same marginal law of the scores, driven by x2 instead of x1: only the forest's losses see it
    V2 = np.abs((0.1 + 2 * X[:, 1]) * rng.normal(size=100))
    assert sources.training_check(X, V2, Xr, Vr, 0.1, 0) is None
    assert sources.training_check(Xr, Vr, X, V, 0.1, 0) is None  # the check part is the larger
    monkeypatch.setattr(sources, "TRAINING_CHECK_LEVEL", None)
    assert sources.training_check(X, V, Xr, Vr, 0.1, 0) is None  # off: the sources are always compared


def test_a_passed_check_reads_the_check_part_only_and_every_other_row_is_conformal():
    """The check passes on like scores: the forest grows on the training part, the check part's ceil(10/alpha) rows
    are the localizer part, and the other 400 are conformal points; piling the conformal points into one corner with
    scores ten times larger moves neither the verdict nor the forest (a check that read them would reject)."""
    rng = np.random.default_rng(12)
    X, V = _hetero(rng, 500)
    Xr, Vr = _hetero(rng, 1500)
    cal = _calibrate(X, V, Xr, Vr)
    choice = cal.localizer.source_choice_
    assert choice.chosen == "training" and "Mann-Whitney" in choice.reason and not choice.scores
    conf = np.sort(cal.conformal_rows_)
    assert conf.shape[0] == 500 - min_localizer_points(0.1) == 400
    X2, V2 = X.copy(), V.copy()
    X2[conf] = rng.uniform(0.0, 0.05, size=(conf.shape[0], 3))
    V2[conf] = 10 * V[conf] + 1
    cal2 = _calibrate(X2, V2, Xr, Vr)
    np.testing.assert_array_equal(np.sort(cal2.conformal_rows_), conf)
    assert cal2.localizer.source_choice_ == choice and cal.localizer_source_ == cal2.localizer_source_
    assert cal.localizer.tuning_.text() == cal2.localizer.tuning_.text()
    Xf = np.random.default_rng(9).uniform(size=(300, 3))
    np.testing.assert_array_equal(cal.localizer.leaves(Xf), cal2.localizer.leaves(Xf))
    grown = cal.describe()["forest_grown_on"]
    assert choice.reason in grown


def test_a_failed_check_gives_the_calibration_rows_own_localizer_part(monkeypatch):
    """Training scores a third of the calibration rows' (a model that has not seen rows like them): the check
    rejects, and the localizer part is the first localizer_size * n rows of the same permutation (600 of 1,200, the
    part the calibration rows alone give, against the 300 sized for the training rows); the conformal points and the
    source choice are then those of the rule with the check off, row for row. The rule before
    (REJECTED_LOCALIZER = "training") kept the 300 rows: its conformal points are a superset of the new ones. A
    passed check is untouched."""
    import confrf.calibrators.localizer_split as ls

    rng = np.random.default_rng(14)
    X, V = _hetero(rng, 1200)
    Xr, Vr = _hetero(rng, 1500)
    small = localizer_rows_with_training(1200, 1500, 0.5, 0.1)
    assert small == 300 and ls.rejected_localizer_rows(small, 1200, 0.5, None) == 600
    assert ls.rejected_localizer_rows(small, 1200, 0.5, 250) == 300  # never below the part sized for training rows
    passed = _calibrate(X, V, Xr, Vr)
    cal = _calibrate(X, V, Xr, Vr / 3)
    assert "Mann-Whitney" not in cal.localizer.source_choice_.reason  # rejected
    assert cal.n_localizer_ == 600 and cal.conformal_rows_.shape[0] == 600
    monkeypatch.setattr(sources, "TRAINING_CHECK_LEVEL", None)
    off = _calibrate(X, V, Xr, Vr / 3)
    np.testing.assert_array_equal(cal.conformal_rows_, off.conformal_rows_)
    assert cal.localizer.source_choice_ == off.localizer.source_choice_
    monkeypatch.undo()
    monkeypatch.setattr(ls, "REJECTED_LOCALIZER", "training")
    assert ls.rejected_localizer_rows(small, 1200, 0.5, None) == 300
    before = _calibrate(X, V, Xr, Vr / 3)
    assert before.n_localizer_ == 300 and set(cal.conformal_rows_) < set(before.conformal_rows_)
    again = _calibrate(X, V, Xr, Vr)
    np.testing.assert_array_equal(again.conformal_rows_, passed.conformal_rows_)
    assert again.n_localizer_ == passed.n_localizer_ == min_localizer_points(0.1)


@pytest.mark.long
def test_marginal_coverage_with_the_training_check():
    """The default rule, check on: P(V <= t(X)) >= 1 - alpha over fresh draws (exact per-x coverage as above), with
    training rows like the calibration rows, so that the check passes in most draws and the forest grows on them."""
    alpha, reps = 0.2, 25
    cover, se, passed = _coverage_draws(2000, 200, 300, alpha, reps)
    print(f"training check passed in {passed} of {reps} draws: coverage {cover:.4f} (se {se:.4f})")
    assert passed >= reps // 2, passed
    assert cover >= 1 - alpha - 3 * se, (cover, se)
    assert cover <= 1 - alpha + 0.06, cover  # not trivially wide
