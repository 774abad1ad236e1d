"""Predictive distributions: quantiles at every level against the definition, no crossing, one pass."""

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from reference import forest_lcp_matrix, lcp_threshold_reference
from test_pvalue import _index, _leaves

import confrf as cf
from confrf import _kernels
from confrf.calibrators.distribution import tau_counts
from confrf.exceptions import InputError
from confrf.results.distribution import PredictiveDistribution, crps_steps

TAUS = ["0.05", "0.1", "0.25", "0.5", "0.75", "0.9", "0.95"]


@pytest.mark.parametrize("with_mult", [False, True])
def test_levels_and_profiles_match_definition(with_mult):
    rng = np.random.default_rng(21 + with_mult)
    for rep in range(8):
        n, k = int(rng.integers(2, 9)), int(rng.integers(1, 4))
        cal, test = _leaves(rng, n, k, int(rng.integers(1, 3)), 2)
        V = (rng.integers(-2, 2, size=n) if rep % 2 else rng.normal(size=n)).astype(float)
        mult = rng.integers(1, 3, size=(n, k)).astype(np.int32) if with_mult else None
        idx, _ = _index(cal, V, mult)
        leaves = np.ascontiguousarray(test, dtype=np.int64)
        m = tau_counts([float(t) for t in TAUS], n)
        t, closed, _ = _kernels.lcp_rf_levels(leaves, *idx, m, unit_mult=mult is None)
        indptr, u, cnt = _kernels.lcp_rf_profiles(leaves, *idx, unit_mult=mult is None)
        for q in range(test.shape[0]):
            W = forest_lcp_matrix(cal, test[q], mult)
            dist = PredictiveDistribution(u[indptr[q] : indptr[q + 1]], cnt[indptr[q] : indptr[q + 1]], n)
            for j, tau in enumerate(TAUS):
                ref = lcp_threshold_reference(W, list(V), str(1 - Fraction(tau)))
                assert (t[q, j], closed[q, j]) == ref, (rep, q, tau)
                assert dist.ppf(float(tau)) == ref[0]  # the step CDF's quantile is the threshold
            assert np.all(t[q][1:] >= t[q][:-1])


def _random_forest_case(rng, case):
    """Leaves, scores and multiplicities that reach the levels kernel's corners: tied scores, infinite scores,
    weights (multiplicities), test rows without leaf-mates, a loner whose p2 (and a neighbour whose weight)
    dwarfs the others' so that most values share one bucket of the search tables."""
    n, k = int(rng.integers(2, 300)), int(rng.integers(1, 25) if case % 4 != 3 else rng.integers(20, 30))
    per_tree = int(rng.integers(1, max(2, n // int(rng.integers(2, 30))))) if case % 4 != 3 else 1
    cal, test = _leaves(rng, n, k, per_tree, 12)
    if case % 4 == 3 and k >= 2:
        # in all trees but one, calibration point 0 and test row 0 share a leaf of their own: row 0's mass jumps
        # at point 0's score and point 0's p2 dwarfs the others', so the other values crowd into few buckets
        private = np.arange(k) != rng.integers(k)
        cal[0, private] = (np.arange(k) * per_tree + per_tree)[private]
        test[0] = np.where(private, cal[0], cal[1])
        cal, test = cal + np.arange(k), test + np.arange(k)  # keep the trees' leaf ids apart
    test[-1] = cal.max() + 1  # a leaf no calibration point is in (the index has a few empty ones at the end)
    test[-2, ::2] = -1  # a row missing from some trees
    kind = case % 3
    V = rng.normal(size=n) if kind == 0 else rng.integers(-3, 4, size=n).astype(float)
    if kind == 2:
        V[rng.random(n) < 0.1] = np.inf
        V[rng.random(n) < 0.05] = -np.inf
    mult = rng.integers(1, 4, size=(n, k)).astype(np.int32) if case % 2 else None
    return cal, test, V, mult


def test_levels_kernel_equals_threshold_kernel_at_every_count():
    """lcp_rf_levels (one profile per row, table look-ups) against the threshold kernel (a bisection per level,
    _forest.pyx) at every m_req in 1 .. n + 2, bit for bit; the profile's counts against lcp_rf_counts' direct
    O(m) count on each piece; the levels given in any order, repeated."""
    rng = np.random.default_rng(390)
    for case in range(60):
        cal, test, V, mult = _random_forest_case(rng, case)
        n = V.shape[0]
        idx, _ = _index(cal, V, mult)
        leaves = np.ascontiguousarray(test, dtype=np.int64)
        unit = mult is None
        tol = 0.0 if case % 5 == 4 else 1e-10
        m_all = rng.permutation(np.concatenate([np.arange(1, n + 3), rng.integers(1, n + 3, size=5)]))
        t, closed, level = _kernels.lcp_rf_levels(leaves, *idx, m_all.astype(np.int64), tol=tol, unit_mult=unit)
        for j, m_req in enumerate(m_all):
            t1, c1, l1 = _kernels.lcp_rf_thresholds_ranked(leaves, *idx, int(m_req), tol=tol, unit_mult=unit)
            np.testing.assert_array_equal(t[:, j], t1, err_msg=f"case {case}, m_req {m_req}")
            np.testing.assert_array_equal(closed[:, j], c1, err_msg=f"case {case}, m_req {m_req}")
            np.testing.assert_array_equal(level[:, j], l1, err_msg=f"case {case}, m_req {m_req}")
        assert np.isinf(t[-1]).all()  # no leaf-mates: everything accepted
        indptr, u, cnt = _kernels.lcp_rf_profiles(leaves, *idx, tol=tol, unit_mult=unit)
        for q in range(test.shape[0]):
            uq, cq = u[indptr[q] : indptr[q + 1]], cnt[indptr[q] : indptr[q + 1]]
            fin = uq[np.isfinite(uq)]
            # a score inside each open piece (u_j, u_j+1) whose ends are finite, and the points u_j themselves
            inside = np.append((fin[:-1] + fin[1:]) / 2, fin[-1] + 1.0) if fin.size else np.empty(0)
            j_in = np.searchsorted(uq, inside, side="right") - 1
            for v, jj in zip(inside, j_in):
                got = _kernels.lcp_rf_counts(leaves[q : q + 1], *idx, np.array([v]), tol=tol, unit_mult=unit)
                assert got[0] == cq[jj], (case, q, v)


@pytest.fixture(scope="module")
def fits():
    sim = cf.datasets.make_sim(2500, random_state=0)
    test = cf.datasets.make_sim(400, random_state=1).frame
    return {m: cf.conformal(sim.formula, data=sim.frame, method=m, random_state=0) for m in ("split", "lcp-rf")}, test


@pytest.mark.parametrize("method", ["split", "lcp-rf"])
def test_quantiles_equal_one_sided_thresholds_and_do_not_cross(fits, method):
    res, test = fits[0][method], fits[1]
    taus = np.arange(1, 100) / 100
    Q = res.predict(test, type="quantile", q=taus)
    assert Q.columns[0] == "q_0.01" and Q.index.equals(test.index)
    assert (Q.to_numpy()[:, 1:] >= Q.to_numpy()[:, :-1]).all()
    dists = res.distribution(test.head(30))
    np.testing.assert_array_equal(np.array([d.ppf(taus) for d in dists]), Q.to_numpy()[:30])
    # the CDF and the quantile are inverse: Q_tau = inf{y : F(y) >= tau}
    F = res.cdf(test.head(30), y=0.3).to_numpy()
    for d, f in zip(dists, F):
        assert d.cdf(0.3) == f
        assert d.tail_mass >= 1 / (d.n + 1)
        assert d.mean() == np.inf


def test_split_quantile_is_the_order_statistic():
    sim = cf.datasets.make_sim(999, random_state=3)
    res = cf.split_cp("y ~ x1", data=sim.frame, model="ols", random_state=0, calib_size=0.5)
    est = res.estimator
    S = np.sort(est.calib_signed_)
    n = S.shape[0]
    X = res.design.transform(sim.frame.head(3))
    Q = est.predict_quantiles(X, [0.9, 0.999])
    mu = est.predict(X)
    m = int(np.ceil(Fraction("0.9") * (n + 1)))
    np.testing.assert_array_equal(Q[:, 0], mu + S[m - 1])
    assert np.isinf(Q[:, 1]).all() == (np.ceil(Fraction("0.999") * (n + 1)) > n)


def test_crps_of_a_step_function():
    # one row: F = 0.5 on [0, 1), 1 from 1 on; y = 0.25: 0.25 * 0.25 + 0.75 * 0.25
    got = crps_steps(np.array([0, 2]), np.array([0.0, 1.0]), np.array([1, 2]), 1, np.array([0.25]))
    assert got[0] == pytest.approx(0.25**2 * 0 + 0.5**2 * 0.25 + 0.5**2 * 0.75)
    far = crps_steps(np.array([0, 2]), np.array([0.0, 1.0]), np.array([1, 2]), 1, np.array([3.0]))
    assert far[0] == pytest.approx(0.25 + 2.0)


def test_bad_levels_and_refusals(fits):
    res, test = fits[0]["split"], fits[1]
    with pytest.raises(InputError, match="strictly between"):
        res.predict(test, type="quantile", q=[0.0, 0.5])
    with pytest.raises(InputError, match="needs the levels"):
        res.predict(test, type="quantile")
    cv = cf.cv_plus("y ~ x1", data=test, model="ols", random_state=0)
    with pytest.raises(InputError, match="split' and 'lcp-rf'"):
        cv.predict(test, type="quantile", q=0.5)


def test_evaluate_compare_and_pit_plot_report_the_distribution(fits):
    import matplotlib

    matplotlib.use("Agg")
    res, test = fits[0]["lcp-rf"], fits[1]
    ev = res.evaluate(test, n_directions=20)
    d = ev.frames["predictive"]["value"]
    y = test["y"].to_numpy()
    Q = res.predict(test, type="quantile", q=[0.05, 0.5, 0.95]).to_numpy()
    assert d["onesided_0.5"] == np.mean(y <= Q[:, 1]) and d["onesided_0.95"] == np.mean(y <= Q[:, 2])
    # the CRPS is the mean of the exact step-function CRPS of every row's distribution
    one = [
        crps_steps(np.array([0, d_.support.size]), d_.support, d_.counts, d_.n, y[i : i + 1])[0]
        for i, d_ in enumerate(res.distribution(test))
    ]
    assert d["crps"] == pytest.approx(np.mean(one), rel=1e-12)
    assert 0 <= d["pit_ks"] <= 1 and "CRPS" in str(ev)
    cmp = cf.compare(fits[0]["split"], res, test=test, n_directions=20)
    assert "CRPS (finite tail)" in str(cmp) and np.isfinite(cmp.frame.loc["crps"].astype(float)).all()
    ax = res.plot.pit(test)
    assert "PIT" in ax.get_title()


def test_cli_quantiles_and_pvalue(tmp_path, capsys):
    from confrf.__main__ import main

    sim = cf.datasets.make_sim(1200, random_state=0).frame[["x1", "x2", "y"]]
    new = cf.datasets.make_sim(20, random_state=1).frame[["x1", "x2", "y"]]
    sim.to_csv(tmp_path / "train.csv", index=False)
    new.to_csv(tmp_path / "new.csv", index=False)
    fit = ["fit", "y ~ x1 + x2", "--data", str(tmp_path / "train.csv"), "--method", "split", "--random-state", "0"]
    assert main(fit + ["--save", str(tmp_path / "m.joblib")]) == 0
    base = ["predict", "--fit", str(tmp_path / "m.joblib"), "--newdata", str(tmp_path / "new.csv")]
    assert main(base + ["--quantiles", "0.1", "0.5", "0.9", "--pvalue", "--out", str(tmp_path / "q.csv")]) == 0
    out = pd.read_csv(tmp_path / "q.csv")
    assert list(out.columns) == ["row", "fit", "q_0.1", "q_0.5", "q_0.9", "p_value"]
    res = cf.load_fit(tmp_path / "m.joblib")
    np.testing.assert_allclose(out[["q_0.1", "q_0.5", "q_0.9"]], res.predict(new, type="quantile", q=[0.1, 0.5, 0.9]))
    np.testing.assert_allclose(out["p_value"], res.pvalue(new))
    capsys.readouterr()
    assert main(base + ["--quantiles", "0.5", "--level", "0.9"]) == 2
    assert "--quantiles gives quantiles instead of intervals" in capsys.readouterr().err


def test_pickled_fit_rebuilds_the_signed_index(fits):
    import pickle

    res, test = fits[0]["lcp-rf"], fits[1]
    Q = res.predict(test, type="quantile", q=[0.1, 0.9])  # builds and keeps the signed index
    assert "signed_distribution_" in res.estimator.__dict__
    again = pickle.loads(pickle.dumps(res))
    assert "signed_distribution_" not in again.estimator.__dict__
    np.testing.assert_array_equal(again.predict(test, type="quantile", q=[0.1, 0.9]), Q)


@pytest.mark.long
def test_monte_carlo_one_sided_coverage_and_pvalue_validity():
    """Over fresh calibration draws: P(Y <= Q_tau) >= tau and P(p <= a) <= a, within 3 standard errors."""
    taus, levels = [0.1, 0.5, 0.9], [0.05, 0.2, 0.5]
    below, small = [], []
    for seed in range(40):
        sim = cf.datasets.make_sim(800, random_state=seed)
        test = cf.datasets.make_sim(200, random_state=10_000 + seed).frame
        res = cf.lcp_rf("y ~ x1 + x2 + x3", data=sim.frame, random_state=seed, n_estimators=30, min_samples_leaf=10)
        y = test["y"].to_numpy()
        below.append(y[:, None] <= res.predict(test, type="quantile", q=taus).to_numpy())
        small.append(res.pvalue(test).to_numpy()[:, None] <= np.array(levels))
    cov, rej = np.vstack(below).mean(0), np.vstack(small).mean(0)
    n = 40 * 200
    for tau, c in zip(taus, cov):
        assert c >= tau - 3 * np.sqrt(tau * (1 - tau) / n), (tau, c)
    for a, r in zip(levels, rej):
        assert r <= a + 3 * np.sqrt(a * (1 - a) / n), (a, r)
