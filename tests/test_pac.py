"""Training-conditional (PAC) calibration: QRF-TC and LCP-RF with guarantee="pac".

Kernels and the correction against exact references (tests/reference_pac.py),
the sample-size helpers, errors, reporting, pickling; the Monte Carlo checks of
the PAC statement are in tests/test_pac_coverage_mc.py.
"""

import math
import pickle
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from reference import quantile
from reference_pac import a_hat_index, grid, mass_at_or_below, pac_row

import confrf as cf
from confrf import _kernels
from confrf._validation import required_count
from confrf.calibrators import pac as pac_module
from confrf.calibrators import pac_correction
from confrf.calibrators.pac import PACForestCalibrator
from confrf.calibrators.pac_bounds import binomial_k, d2_required_count, min_d2_size
from confrf.exceptions import InputError, PACTargetWarning
from confrf.localizers import ForestLocalizer

# these tests pass one set of forest settings to every method on purpose
pytestmark = pytest.mark.filterwarnings("ignore::confrf.exceptions.UnusedSettingWarning")


# ----------------------------------------------------------------- kernel ---
def test_per_row_quantiles_match_exact_definition():
    rng = np.random.default_rng(0)
    for _ in range(60):
        m, n = int(rng.integers(1, 6)), int(rng.integers(1, 9))
        K = rng.integers(0, 4, size=(m, n)) * (rng.random((m, n)) < 0.7)
        den = K.sum(axis=1) + rng.integers(0, 3, size=m) + 1  # rows may have mass < 1 (own mass at +inf)
        values = rng.integers(0, 4, size=n).astype(float)  # ties
        Wf = sp.csr_matrix(K / den[:, None])
        levels = rng.choice([0.0, 0.25, 0.5, 1 / 3, 0.9, 1.0, 1.2], size=(m, 3))
        got = _kernels.csr_row_quantiles(
            Wf.indptr.astype(np.int64), Wf.indices.astype(np.int32), Wf.data, values, levels
        )
        for i in range(m):
            atoms = [(values[j], Fraction(int(K[i, j]), int(den[i]))) for j in range(n) if K[i, j]]
            for k in range(3):
                assert got[i, k] == quantile(Fraction(levels[i, k]).limit_denominator(1000), atoms)
        common = _kernels.csr_row_quantiles(
            Wf.indptr.astype(np.int64), Wf.indices.astype(np.int32), Wf.data, values, levels[0]
        )
        rows = _kernels.csr_row_quantiles(
            Wf.indptr.astype(np.int64), Wf.indices.astype(np.int32), Wf.data, values, np.tile(levels[0], (m, 1))
        )
        np.testing.assert_array_equal(common, rows)
    with pytest.raises(ValueError, match="one row per CSR row"):
        _kernels.csr_row_quantiles(
            Wf.indptr.astype(np.int64), Wf.indices.astype(np.int32), Wf.data, values, np.zeros((m + 1, 1))
        )


# ----------------------------------------------------------------- bounds ---
def test_pac_bounds_are_inverses_and_minimal():
    for n2 in (1, 7, 100, 1234, 10**6):
        for K in (1, 2, 20, 500):
            for delta in (1e-6, 0.05, 0.1, 0.5, 0.99):
                eps = cf.pac_epsilon(n2, K, delta)
                assert eps == pytest.approx(math.sqrt(math.log(K / delta) / (2 * n2)), rel=1e-15)
                assert cf.pac_delta(n2, K, eps) <= delta  # rounding never loosens the statement
                assert cf.pac_delta(n2, K, eps) == pytest.approx(delta, rel=1e-12)
                assert cf.pac_n2(K, delta, eps) == n2
    for K, delta, eps in [(20, 0.1, 0.05), (1, 0.5, 0.3), (7, 0.01, 0.011)]:
        n = cf.pac_n2(K, delta, eps)
        assert cf.pac_epsilon(n, K, delta) <= eps
        assert n == 1 or cf.pac_epsilon(n - 1, K, delta) > eps
        assert cf.pac_epsilon(n, K, cf.pac_delta(n, K, eps)) == pytest.approx(eps, rel=1e-12)
    assert cf.pac_n2(20, 0.1, 0.05) == math.ceil(math.log(200) / (2 * 0.05**2))


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: cf.pac_epsilon(100, 10, 0.0), "delta"),
        (lambda: cf.pac_epsilon(100, 10, 1.0), "delta"),
        (lambda: cf.pac_epsilon(0, 10, 0.1), "n2"),
        (lambda: cf.pac_epsilon(10.5, 10, 0.1), "n2"),
        (lambda: cf.pac_epsilon(100, 0, 0.1), "K"),
        (lambda: cf.pac_delta(100, 10, 0.0), "epsilon"),
        (lambda: cf.pac_delta(0, 10, 0.1), "n2"),
        (lambda: cf.pac_n2(0, 0.1, 0.1), "K"),
        (lambda: cf.pac_n2(10, 1.5, 0.1), "delta"),
        (lambda: cf.pac_n2(10, 0.1, -1.0), "epsilon"),
        (lambda: cf.pac_n2(True, 0.1, 0.1), "K"),
    ],
)
def test_pac_bounds_reject_bad_input(call, match):
    with pytest.raises(InputError, match=match):
        call()


def test_required_count_is_exact():
    assert d2_required_count(100, 0.1, 0.0) == 90  # float 100 * (1 - 0.1) = 90.00000000000001
    assert d2_required_count(100, 0.07, 0.0) == 93
    assert d2_required_count(10, 0.1, 0.0) == 9
    assert d2_required_count(10, 0.1, 1e-12) == 10
    assert d2_required_count(1000, 0.1, 0.05) == 951  # the float 0.05 is slightly above 1/20
    assert d2_required_count(1000, 0.1, cf.pac_epsilon(1000, 20, 0.1)) == math.ceil(1000 * (0.9 + 0.0515))
    need = min_d2_size(0.1, 20, 0.1)
    assert cf.pac_epsilon(need, 20, 0.1) < 0.1 <= cf.pac_epsilon(need - 1, 20, 0.1)


# ------------------------------------------------- correction vs reference ---
@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(3)
    X = rng.uniform(size=(260, 2))
    V = np.round(np.abs((0.2 + X[:, 0]) * rng.normal(size=260)), 1)  # ties: open LCP sets occur
    return X, V


def _small_cal(small, base, **kw):
    X, V = small
    loc = ForestLocalizer(n_estimators=4, min_samples_leaf=6, random_state=1)
    opts = dict(base=base, localizer_size=0.5, pac_size=0.4, delta=0.5, grid_size=5, **kw)
    return PACForestCalibrator(loc, **opts).calibrate(X[:200], V[:200], alpha=0.3, rng=np.random.default_rng(7))


def _leaves(loc, X):
    return loc.forest_.apply(X.astype(np.float32)).astype(np.int64)


@pytest.mark.parametrize("base", ["qrf", "lcp"])
def test_thresholds_and_a_hat_match_exact_reference(small, base):
    X, V = small
    cal = _small_cal(small, base)
    loc = cal.localizer
    d1 = cal.parts_["D1"]
    V1 = V[:200][d1]
    L1 = _leaves(loc, X[:200][d1])
    alpha, K = "0.3", cal.grid_size
    T = grid(alpha, K)
    # every D2 row at every grid value, and the direct loop for a_hat
    L2 = _leaves(loc, cal.X2_)
    Q_ref = np.array([pac_row(L1, L2[i], V1, alpha, base, T) for i in range(cal.n2_)])
    W, b = cal.map_.rows(cal.X2_, 0.3)
    Q = cal.map_.quantiles(W, np.minimum(1.0, b[:, None] + np.linspace(0, 0.3, K)[None, :]))
    np.testing.assert_array_equal(Q, Q_ref)
    counts, required, k_ref = a_hat_index(Q_ref, cal.V2_, alpha, cf.pac_epsilon(cal.n2_, K, 0.5))
    c = cal._correction(0.3)
    assert c.counts.tolist() == counts and c.k == required and c.a_hat == c.grid[k_ref]
    assert k_ref is not None
    if base == "qrf":  # a = alpha: level (1 - alpha) + alpha capped at 1, own mass at +inf: all infinite
        assert np.isinf(Q_ref[:, -1]).all() and counts[-1] == cal.n2_
    # test rows use the same map at a_hat
    Xt = X[200:]
    th = cal.thresholds(Xt, 0.3)
    Lt = _leaves(loc, Xt)
    ref = [pac_row(L1, Lt[q], V1, alpha, base, [T[k_ref]])[0] for q in range(Xt.shape[0])]
    np.testing.assert_array_equal(th.t, ref)
    assert th.closed.all()
    mass = [float(mass_at_or_below(L1, Lt[q], V1, th.t[q])) for q in range(Xt.shape[0])]
    np.testing.assert_allclose(th.level, mass, rtol=0, atol=1e-12)


def test_zero_correction_reproduces_marginal_lcp_rf():
    rng = np.random.default_rng(3)
    X = rng.uniform(size=(2500, 2))
    V = np.round(np.abs((0.2 + X[:, 0]) * rng.normal(size=2500)) * 3)  # heavy ties: open LCP sets occur
    loc = ForestLocalizer(n_estimators=4, min_samples_leaf=15, random_state=1)
    cal = PACForestCalibrator(loc, base="lcp", pac_size=0.5, delta=0.5, grid_size=5).calibrate(
        X[:800], V[:800], alpha=0.3, rng=np.random.default_rng(0)
    )
    Xt = X[800:]
    W, b = cal.map_.rows(Xt, 0.3)
    t0 = cal.map_.quantiles(W, b[:, None])[:, 0]
    t, closed, level = cal.localizer.thresholds(Xt, required_count(0.3, cal.n1_))
    np.testing.assert_array_equal(t0, t)  # (-inf, t]: equal when closed, the closure when open
    assert (~closed).sum() >= 5 and closed.any()
    # the kernel's level is the alpha-tilde only for closed sets; for open ones its quantile is narrower
    q_level = cal.map_.quantiles(W, level[:, None])[:, 0]
    np.testing.assert_array_equal(q_level[closed], t[closed])
    assert (q_level[~closed] < t[~closed]).all()


def test_boundary_count_is_accepted(small, monkeypatch):
    cal = _small_cal(small, "qrf")
    counts = cal._correction(0.3).counts
    k = int(np.flatnonzero(np.diff(counts) > 0)[-1]) + 1  # counts[k] > counts[k - 1]
    monkeypatch.setattr(pac_correction, "d2_required_count", lambda n2, alpha, eps: int(counts[k]))
    cal.corrections_.clear()
    c = cal._correction(0.3)
    assert c.a_hat == c.grid[k]  # a count equal to the target reaches it


def test_unreachable_target_warns_and_gives_infinite_intervals(small, monkeypatch):
    monkeypatch.setattr(pac_correction, "d2_required_count", lambda n2, alpha, eps: n2 + 1)
    with pytest.warns(PACTargetWarning, match="infinite"):
        cal = _small_cal(small, "lcp")
    th = cal.thresholds(small[0][200:], 0.3)
    assert np.isposinf(th.t).all()
    rep = cal.pac_report(0.3)
    assert not rep.reached and rep.a_hat is None
    assert "every interval is infinite" in rep.sentence
    # through the formula API: the warning, +-inf bounds, and the summary line
    sim = cf.datasets.make_sim(1800, random_state=2)
    with pytest.warns(PACTargetWarning):
        res = cf.qrf_tc(sim.formula, data=sim.frame, model="ols", n_estimators=10, random_state=0, grid_size=20)
    with pytest.warns(cf.exceptions.InfiniteIntervalWarning):
        p = res.predict(sim.frame.head(20))
    assert np.isneginf(p["lwr"]).all() and np.isposinf(p["upr"]).all()
    s = res.summary()
    assert "No grid value reached the D2 target" in s.frames["guarantee"]["value"]["statement"]
    assert "none (all infinite)" in str(s) and "Target reached:" in str(s)


# ------------------------------------------------------- API and results ---
@pytest.fixture(scope="module")
def sim():
    return cf.datasets.make_sim(3000, random_state=11)


@pytest.fixture(scope="module")
def fits(sim):
    kw = dict(data=sim.frame, model="ols", random_state=0, n_estimators=40)
    return {
        "qrf-tc": cf.conformal(sim.formula, method="qrf-tc", delta=0.1, grid_size=10, **kw),
        "lcp-rf": cf.lcp_rf(sim.formula, guarantee="pac", delta=0.1, **kw),
    }


@pytest.mark.parametrize("method", ["qrf-tc", "lcp-rf"])
def test_report_summary_and_sizes(fits, method):
    res = fits[method]
    rep = res.pac_report()
    assert rep.alpha == 0.1 and rep.delta == 0.1 and rep.n2 == res.nobs["D2"] == 500
    if method == "qrf-tc":  # grid_size given: the paper's Hoeffding bound
        assert rep.bound == "hoeffding" and rep.K == 10 and rep.epsilon == cf.pac_epsilon(500, rep.K, 0.1)
        assert rep.required_count == rep.k == d2_required_count(500, 0.1, rep.epsilon)
        assert rep.a_hat in rep.grid["a"].tolist()
    else:  # the default: exact binomial order statistic
        assert rep.bound == "binomial" and rep.K is None
        cov_at = rep.grid["d2_coverage"][rep.grid["a"] <= rep.a_hat].iloc[-1]  # the D2 coverage curve
        assert cov_at == rep.d2_coverage and rep.grid["d2_coverage"].iloc[-1] == 1.0
        assert rep.k == binomial_k(500, 0.1, 0.1) == 460 and rep.target == 460 / 500
        assert rep.epsilon == cf.pac_epsilon(500, alpha=0.1, delta=0.1) == pytest.approx(0.02)
        assert "k=460-th smallest" in rep.sentence and "P(Binomial(500, 0.9) >= k) <= 0.1" in rep.sentence
        assert "k (order statistic)" in str(res.summary())
    assert rep.reached and rep.d2_coverage >= rep.target and rep.guaranteed_coverage == pytest.approx(0.9)
    assert res.nobs["localizer"] + res.nobs["D1"] + res.nobs["D2"] == 1500
    g = res.guarantee
    assert g.kind == "pac" and g.certified and "i.i.d." in g.sentence and "exchangeab" in g.sentence
    s = res.summary()
    assert "Training-conditional (PAC) calibration" in str(s) and "a_hat" in str(s)
    assert "<table" in s.as_html() and "tabular" in s.as_latex()
    frame = s.frames["pac"]["value"]
    assert frame["epsilon"] == rep.epsilon and frame["a_hat"] == rep.a_hat
    assert isinstance(rep.to_frame(), pd.DataFrame)


def test_paper_form(sim):
    res = cf.qrf_tc(sim.formula, data=sim.frame, model="ols", random_state=0, n_estimators=40, pac_form="paper")
    rep = res.pac_report()
    assert rep.form == "paper" and rep.target == pytest.approx(0.9)
    assert rep.guaranteed_coverage == pytest.approx(0.9 - rep.epsilon)
    assert rep.required_count == 450 and f"at least {math.floor((0.9 - rep.epsilon) * 1e4) / 1e4:g} " in rep.sentence


def test_predict_finite_and_other_alpha(fits, sim):
    res = fits["lcp-rf"]
    p = res.predict(sim.frame.head(200))
    assert np.isfinite(p.to_numpy()).all()
    d = res.predict(sim.frame.head(200), alpha=0.2, details=True)
    assert (d["upr"] - d["lwr"] <= p["upr"] - p["lwr"] + 1e-12).mean() > 0.9
    assert res.pac_report(0.2).alpha == 0.2 and res.pac_report(0.2).guaranteed_coverage == pytest.approx(0.8)


def test_pickle_and_reproducibility(fits, sim):
    res = fits["qrf-tc"]
    new = sim.frame.tail(100)
    again = pickle.loads(pickle.dumps(res))
    pd.testing.assert_frame_equal(again.predict(new), res.predict(new))
    kw = dict(data=sim.frame, model="ols", n_estimators=40, delta=0.1, grid_size=10)
    same = cf.qrf_tc(sim.formula, random_state=0, **kw)
    other = cf.qrf_tc(sim.formula, random_state=1, **kw)
    pd.testing.assert_frame_equal(same.predict(new), res.predict(new))
    assert not np.array_equal(other.predict(new)["upr"], res.predict(new)["upr"])


def test_bad_configurations(sim):
    kw = dict(data=sim.frame.head(600), model="ols", random_state=0, n_estimators=10)
    with pytest.raises(InputError, match=r"D2 has 100 point\(s\).*needs at least 265 points"):
        cf.qrf_tc(sim.formula, delta=0.1, grid_size=20, **kw)  # n2 = 100 of 300: epsilon >= alpha
    with pytest.raises(InputError, match="D2 has no points"):
        cf.qrf_tc(sim.formula, pac_size=0.001, **kw)
    with pytest.raises(InputError, match="grid_size"):
        cf.qrf_tc(sim.formula, grid_size=1, **kw)
    with pytest.raises(InputError, match="delta"):
        cf.qrf_tc(sim.formula, delta=1.0, **kw)
    with pytest.raises(InputError, match="pac_form"):
        cf.qrf_tc(sim.formula, pac_form="loose", **kw)
    with pytest.raises(InputError, match="honest"):
        cf.qrf_tc(sim.formula, honest=False, **kw)
    with pytest.raises(InputError, match="guarantee='pac'"):
        cf.lcp_rf(sim.formula, delta=0.1, **kw)
    with pytest.raises(InputError, match="guarantee must be"):
        cf.lcp_rf(sim.formula, guarantee="conditional", **kw)
    with pytest.raises(InputError, match="do not apply|unknown option"):
        cf.split_cp(sim.formula, delta=0.1, **kw)
    res = cf.split_cp(sim.formula, **kw)
    with pytest.raises(InputError, match="no training-conditional"):
        res.pac_report()


def test_marginal_lcp_rf_is_unchanged_by_default(sim):
    # localizer_data="calibration" (the default before issue 36) keeps the sizes pinned below; the guarantee's
    # default is what is tested
    kw = dict(data=sim.frame.head(1200), model="ols", random_state=0, n_estimators=20, localizer_data="calibration")
    a = cf.lcp_rf(sim.formula, **kw)
    b = cf.lcp_rf(sim.formula, guarantee="marginal", **kw)
    assert a.guarantee.kind == "marginal" and set(a.nobs) == {"train", "localizer", "conformal"}
    pd.testing.assert_frame_equal(a.predict(sim.frame.tail(50)), b.predict(sim.frame.tail(50)))


def test_docstring_examples_run():
    import doctest

    from confrf.calibrators import pac_bounds

    for mod in (pac_module, pac_bounds):
        result = doctest.testmod(mod)
        assert result.attempted > 0 and result.failed == 0
    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner()
    for test in finder.find(cf.qrf_tc, "qrf_tc", globs={}):
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0 and runner.summarize(verbose=False).attempted > 0
