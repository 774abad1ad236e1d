"""Conformal p-values: the kernel against the definition, and 'y in the interval <=> p > alpha' bit for bit."""

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from reference import forest_lcp_matrix
from reference_pvalue import lcp_pvalue_reference, weighted_lcp_pvalue_reference

import confrf as cf
from confrf import _kernels
from confrf.calibrators.pvalue import count_pvalue, mass_pvalue
from confrf.exceptions import InputError
from confrf.shift.weighted import ShiftWeights


def _index(cal, V, mult=None):
    n, k = cal.shape
    n_leaves = int(cal.max()) + 8
    m = None if mult is None else np.ascontiguousarray(mult, dtype=np.int32)
    ptr, mem, mm, below, pop = _kernels.build_leaf_index(np.ascontiguousarray(cal, dtype=np.int64), V, m, n_leaves)
    p2 = _kernels.calibration_p2(np.ascontiguousarray(cal, dtype=np.int64), ptr, mem, below, pop, n)
    rank = _kernels.score_ranks(V)
    order = np.argsort(rank)
    return (ptr, rank[mem], mm, below, pop, V[order], p2[order], np.sort(p2)), p2


def _leaves(rng, n, k, per_tree, m):
    cal = np.column_stack([rng.integers(0, per_tree, size=n) + t * per_tree for t in range(k)])
    test = np.column_stack([rng.integers(0, per_tree, size=m) + t * per_tree for t in range(k)])
    return cal, test


def _candidates(V):
    u = np.unique(V)
    return np.concatenate([[u[0] - 1.0], u, (u[:-1] + u[1:]) / 2, [u[-1] + 1.0]])


@pytest.mark.parametrize("with_mult", [False, True])
def test_forest_pvalue_matches_definition(with_mult):
    rng = np.random.default_rng(3 + with_mult)
    for rep in range(8):
        n, k = int(rng.integers(2, 8)), int(rng.integers(1, 4))
        cal, test = _leaves(rng, n, k, int(rng.integers(1, 3)), 2)
        V = (rng.integers(0, 3, size=n) if rep % 2 else rng.normal(size=n)).astype(float)
        mult = None
        if with_mult:
            mult = rng.integers(1, 3, size=(n, k)).astype(np.int32)
        idx, _ = _index(cal, V, mult)
        for q in range(test.shape[0]):
            W = forest_lcp_matrix(cal, test[q], mult)
            for v in _candidates(V):
                c = _kernels.lcp_rf_counts(
                    np.ascontiguousarray(test[q : q + 1], dtype=np.int64), *idx, np.array([v]), unit_mult=mult is None
                )
                got = count_pvalue(c, n)[0]
                assert got == float(lcp_pvalue_reference(W, list(V), float(v))), (rep, q, v)


def test_forest_weighted_pvalue_matches_definition():
    rng = np.random.default_rng(11)
    for rep in range(6):
        n, k = int(rng.integers(2, 7)), int(rng.integers(1, 3))
        cal, test = _leaves(rng, n, k, int(rng.integers(1, 3)), 2)
        V = (rng.integers(0, 3, size=n) if rep % 2 else rng.normal(size=n)).astype(float)
        w_int = rng.integers(1, 4, size=n)
        idx, p2 = _index(cal, V)
        order = np.argsort(_kernels.score_ranks(V))
        by_p2 = np.argsort(p2, kind="stable")
        w = w_int.astype(float)
        cumw = np.concatenate([[0.0], np.cumsum(w[by_p2])])
        shift = ShiftWeights(w)
        for q in range(test.shape[0]):
            wx = int(rng.integers(1, 4))
            W = forest_lcp_matrix(cal, test[q], None)
            for v in _candidates(V):
                mass = _kernels.lcp_rf_mass_at(
                    np.ascontiguousarray(test[q : q + 1], dtype=np.int64),
                    *idx[:-1],
                    idx[-1],
                    cumw,
                    np.ascontiguousarray(w[order]),
                    np.array([v]),
                )
                got = mass_pvalue(mass, shift, np.array([float(wx)]))[0]
                ref = weighted_lcp_pvalue_reference(W, list(V), float(v), [Fraction(int(x)) for x in w_int] + [wx])
                # the package's tolerance only enlarges sets: p is never below the exact one, and above by ~tol
                assert float(ref) - 1e-12 <= got <= float(ref) + 1e-8, (rep, q, v, got, ref)


@pytest.fixture(scope="module")
def sim():
    return cf.datasets.make_sim(3000, random_state=0), cf.datasets.make_sim(2000, random_state=1).frame


@pytest.mark.parametrize("method", ["split", "lcp-rf", "lcp", "split-g", "lcp-rf-g"])
@pytest.mark.parametrize("shift", [False, True])
def test_inside_interval_iff_pvalue_above_alpha(sim, method, shift):
    train, test = sim
    df, new = train.frame.copy(), test.copy()
    kw = {}
    if shift:
        df["w"], new["w"] = np.exp(df["x1"]), np.exp(new["x1"])
        kw["likelihood_ratio"] = "w"
    res = cf.conformal("y ~ x1 + x2 + x3", data=df, method=method, alpha=0.1, random_state=0, **kw)
    p = res.pvalue(new)
    y = new["y"].to_numpy()
    assert p.index.equals(new.index) and ((p > 0) & (p <= 1)).all()
    for a in (0.05, 0.1, 0.3):
        pr = res.predict(new, alpha=a)
        inside = (y >= pr["lwr"].to_numpy()) & (y <= pr["upr"].to_numpy())
        np.testing.assert_array_equal(inside, p.to_numpy() > a)


def test_pvalue_at_the_threshold_itself(sim):
    """At the score t itself: open sets reject it, closed ones accept it; the p-value says the same."""
    train, test = sim
    res = cf.lcp_rf("y ~ x1 + x2 + x3", data=train.frame, alpha=0.1, random_state=0, min_samples_leaf=10)
    est = res.estimator
    X = res.design.transform(test)
    d = est.predict_details(X, 0.1)
    fin = np.isfinite(d["t"])
    v = d["t"][fin]
    cal = est.calibrator_
    p = cf.calibrators.pvalue.calibrator_pvalues(cal, X[fin], v)
    np.testing.assert_array_equal(p > 0.1, d["closed"][fin])
    up = cf.calibrators.pvalue.calibrator_pvalues(cal, X[fin], np.nextafter(v, np.inf))
    assert not (up > 0.1).any()


@pytest.mark.parametrize("method,why", [("cv+", "1 - 2 alpha"), ("slcp", "not nested"), ("qrf-tc", "not nested")])
def test_not_nested_methods_refuse(sim, method, why):
    train, test = sim
    res = cf.conformal("y ~ x1 + x2", data=train.frame.iloc[:800], method=method, model="ols", random_state=0)
    with pytest.raises(InputError, match=why):
        res.pvalue(test.head(5))


def test_pvalue_needs_the_response(sim):
    train, test = sim
    res = cf.split_cp("y ~ x1", data=train.frame, random_state=0)
    with pytest.raises(InputError, match="response"):
        res.pvalue(test.drop(columns="y").head(3))


@pytest.mark.parametrize("method,score", [("split", "lac"), ("lcp-rf", "aps"), ("split-g", "lac"), ("lcp-rf-g", "lac")])
def test_class_label_pvalues_match_the_sets(method, score):
    from sklearn.datasets import make_classification

    X, y = make_classification(1600, n_features=4, n_informative=3, n_redundant=0, n_classes=3, random_state=0)
    df = pd.DataFrame(X, columns=["a", "b", "c", "d"]).assign(y=np.array(["u", "v", "w"])[y])
    opts = {"groups": "label"} if method.endswith("-g") else {}
    res = cf.conformal("C(y) ~ a + b + c + d", data=df.iloc[:1200], method=method, score=score, random_state=0, **opts)
    new = df.iloc[1200:]
    p = res.pvalue(new)
    assert list(p.columns) == ["u", "v", "w"] and p.index.equals(new.index)
    for a in (0.05, 0.1, 0.3):
        sets = res.predict(new, alpha=a)[["u", "v", "w"]].to_numpy()
        np.testing.assert_array_equal(sets, p.to_numpy() > a)
