"""confrf.metrics against scipy/numpy/pandas and against slow references."""

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from reference_diagnostics import worst_slab_reference
from scipy import stats

from confrf import metrics as M
from confrf.exceptions import InputError


@pytest.mark.parametrize("k,n", [(0, 1), (0, 20), (3, 20), (90, 100), (100, 100), (517, 600), (1, 1)])
@pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
def test_clopper_pearson_matches_scipy_exact(k, n, level):
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=level, method="exact")
    lo, hi = M.clopper_pearson(k, n, level)
    assert lo == pytest.approx(ci.low, rel=1e-9, abs=1e-12)
    assert hi == pytest.approx(ci.high, rel=1e-9, abs=1e-12)


def test_clopper_pearson_vectorised_and_bad_input():
    lo, hi = M.clopper_pearson(np.array([0, 5, 10]), np.array([10, 10, 10]))
    assert lo[0] == 0.0 and hi[2] == 1.0 and lo[1] < 0.5 < hi[1]
    for bad in [(5, 4), (-1, 4), (1, 0), (1.5, 4)]:
        with pytest.raises(InputError):
            M.clopper_pearson(*bad)
    with pytest.raises(InputError, match="level"):
        M.clopper_pearson(1, 4, level=95)


def test_clopper_pearson_covers_in_simulation():
    # the exact interval covers the true proportion at least at its level, for every p
    rng = np.random.default_rng(0)
    for p in (0.05, 0.5, 0.9, 0.99):
        k = rng.binomial(60, p, size=4000)
        lo, hi = M.clopper_pearson(k, np.full(k.shape, 60), 0.9)
        assert np.mean((lo <= p) & (p <= hi)) >= 0.9 - 3 * np.sqrt(0.09 / 4000)


def test_coverage_width_and_infinite():
    y = np.array([0.0, 1.0, 5.0, 2.0])
    lwr = np.array([-1.0, 1.0, 0.0, -np.inf])
    upr = np.array([1.0, 2.0, 4.0, np.inf])
    assert M.covered(y, lwr, upr).tolist() == [True, True, False, True]
    assert M.coverage(y, lwr, upr) == 0.75
    assert M.interval_width(lwr, upr).tolist() == [2.0, 1.0, 4.0, np.inf]
    assert M.share_infinite(lwr, upr) == 0.25
    with pytest.raises(InputError, match="NaN"):
        M.covered(y, np.r_[lwr[:3], np.nan], upr)
    with pytest.raises(InputError):
        M.coverage(y[:3], lwr, upr)


def test_quantiles_match_numpy_on_finite_and_are_inf_safe(rng):
    x = rng.normal(size=101)
    q = np.linspace(0, 1, 17)
    np.testing.assert_allclose(M.quantiles(x, q), np.quantile(x, q))
    xi = np.r_[x, np.inf, np.inf]
    out = M.quantiles(xi, q)
    assert not np.isnan(out).any() and out[-1] == np.inf
    np.testing.assert_allclose(out[:8], np.quantile(np.r_[x, 1e300, 1e300], q[:8]))


def test_width_bins_agree_with_qcut(rng):
    w = rng.exponential(size=500)
    ref = pd.qcut(w, 10, labels=False) + 1
    assert np.array_equal(M.width_bins(w), ref)
    w[:7] = np.inf
    bins = M.width_bins(w)
    assert (bins[:7] == 0).all() and np.array_equal(bins[7:], pd.qcut(w[7:], 10, labels=False) + 1)
    # equal widths up to rounding noise share one bin
    assert set(M.width_bins(1.3 + 1e-15 * rng.normal(size=50))) == {1}


def test_coverage_tables_count_directly(rng):
    c = rng.random(300) < 0.8
    g = rng.choice(["a", "b", "c"], size=300)
    t = M.coverage_table(c, g, level=0.9)
    for lab in "abc":
        k, n = int(c[g == lab].sum()), int((g == lab).sum())
        assert t.loc[lab, "n"] == n and t.loc[lab, "covered"] == k and t.loc[lab, "coverage"] == k / n
        assert (t.loc[lab, "ci_lower"], t.loc[lab, "ci_upper"]) == M.clopper_pearson(k, n, 0.9)
    w = rng.exponential(size=300)
    tw = M.coverage_by_width(c, w, n_bins=5)
    bins = M.width_bins(w, 5)
    for b in range(1, 6):
        s = bins == b
        assert tw.loc[str(b), "covered"] == c[s].sum() and tw.loc[str(b), "width_max"] == w[s].max()


def test_fidelity_oracle_error_spearman():
    y = np.array([1.0, 3.0, 2.0, 0.0, 5.0])
    fit = np.zeros(5)
    h = np.array([2.0, 3.0, 1.0, 0.0, np.inf])
    np.testing.assert_array_equal(M.fidelity_error(y, fit, h), [1.0, 0.0, 0.5, 0.0, np.inf])
    assert M.fidelity_error([0.0], [0.0], [1.0])[0] == np.inf
    np.testing.assert_array_equal(M.oracle_width_error([1.0, 3.0, np.inf], [2.0, 2.0, 2.0]), [0.5, 0.5, np.inf])
    w = np.array([1.0, 4.0, 2.0, 3.0, 5.0])
    assert M.width_spearman(w, y, fit) == pytest.approx(stats.spearmanr(w, np.abs(y)).statistic)
    assert np.isnan(M.width_spearman(np.full(5, 2.0), y, fit))


def test_worst_slab_equals_brute_force_with_ties():
    rng = np.random.default_rng(7)
    for _ in range(25):
        n, p = int(rng.integers(4, 35)), int(rng.integers(1, 4))
        X = rng.integers(0, 4, size=(n, p)).astype(float)  # many tied projections
        c = rng.random(n) < 0.7
        D = rng.normal(size=(4, p))
        delta = float(rng.choice([0.1, 0.3, 0.5, 1.0]))
        res = M.worst_slab_coverage(X, c, delta=delta, directions=D)
        assert Fraction(res.n_covered, res.n_in_slab) == worst_slab_reference(X, c, D, delta)
        assert res.coverage == res.n_covered / res.n_in_slab
        z = X @ res.direction
        inside = (z >= res.lower - 1e-12) & (z <= res.upper + 1e-12)
        assert inside.sum() == res.n_in_slab and c[inside].sum() == res.n_covered
        assert res.n_in_slab >= np.ceil(delta * n - 1e-9)


def test_worst_slab_random_directions_are_seeded_and_valid(rng):
    X = rng.normal(size=(300, 4)) * [1.0, 100.0, 0.01, 1.0]
    c = ~((X[:, 0] > 1.0) & (rng.random(300) < 0.7))  # undercoverage where x0 is large
    a = M.worst_slab_coverage(X, c, n_directions=200, random_state=3)
    b = M.worst_slab_coverage(X, c, n_directions=200, random_state=3)
    assert a.coverage == b.coverage and np.array_equal(a.direction, b.direction)
    assert a.coverage < c.mean() and a.n_in_slab >= 30
    # the slab along x0 alone is found at least as bad by searching that direction
    axis = M.worst_slab_coverage(X, c, directions=np.eye(4)[:1])
    assert axis.coverage < 0.75
    with pytest.raises(InputError):
        M.worst_slab_coverage(X, c, delta=0.0)
    with pytest.raises(InputError):
        M.worst_slab_coverage(X, c[:10])
    with pytest.raises(InputError):
        M.worst_slab_coverage(X, c, directions=np.ones((2, 3)))


def test_public_namespace_is_all():
    # No np, pd, math or typing names leak into cf.metrics.
    public = {n for n in dir(M) if not n.startswith("_")}
    assert public == set(M.__all__)
    assert "np" not in public and "Any" not in public


def test_docstring_examples_run():
    import doctest
    import importlib

    for name in ("_coverage", "_widths", "_adaptivity", "_slab"):
        mod = importlib.import_module(f"confrf.metrics.{name}")
        result = doctest.testmod(mod)
        assert result.failed == 0
