"""Monte Carlo: coverage of the classification methods, marginal and per class.

x ~ U[-1, 1]^2, three classes with logits s(x) * 3 * (x1, x2, -x1 - x2), where
s(x) = 0.3 for x1 < 0 (hard region) and 1 otherwise; a fixed logistic model
(misspecified: it ignores s) gives the probabilities. Every repetition draws
fresh calibration and test sets. Theory: P(Y in C(X)) >= 1 - alpha for split
and honest LCP-RF; P(Y in C(X) | Y = k) >= 1 - alpha for every class k for
the class-conditional methods; the PAC methods cover >= 1 - alpha with
probability >= 1 - delta over the calibration draw (so on average too).
"""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from confrf.classification import APSScore, ConformalClassifier, RAPSScore

# these tests pass one set of forest settings to every method on purpose
pytestmark = pytest.mark.filterwarnings("ignore::confrf.exceptions.UnusedSettingWarning")

ALPHA = 0.1


def _draw(n, rng):
    X = rng.uniform(-1, 1, size=(n, 2))
    s = np.where(X[:, 0] < 0, 0.3, 1.0)
    logits = 3 * s[:, None] * np.column_stack([X[:, 0], X[:, 1], -X[:, 0] - X[:, 1]])
    P = np.exp(logits)
    P /= P.sum(axis=1, keepdims=True)
    y = (rng.random(n)[:, None] > np.cumsum(P, axis=1)).sum(axis=1)
    return X, np.minimum(y, 2)


MODEL = LogisticRegression().fit(*_draw(2000, np.random.default_rng(99)))


def _mc(method, score, reps, *, n_cal=600, n_test=300, options=None, seed=7):
    rng = np.random.default_rng(seed)
    marginal, by_class = [], {k: [] for k in range(3)}
    for _ in range(reps):
        X, y = _draw(n_cal, rng)
        Xt, yt = _draw(n_test, rng)
        clf = ConformalClassifier(
            MODEL,
            prefit=True,
            method=method,
            alpha=ALPHA,
            score=score,
            n_estimators=30,
            options=options,
            random_state=int(rng.integers(2**31)),
        ).conformalize(X, y)
        hit = clf.predict_sets(Xt)[np.arange(n_test), yt]
        marginal.append(hit.mean())
        for k in range(3):
            if (yt == k).any():
                by_class[k].append(hit[yt == k].mean())
    return np.asarray(marginal), {k: np.asarray(v) for k, v in by_class.items()}


def _check(values, name):
    mean, se = values.mean(), values.std(ddof=1) / np.sqrt(len(values))
    print(f"{name}: coverage {mean:.4f} (se {se:.4f}, {len(values)} draws)")
    assert mean >= 1 - ALPHA - 3 * se, (name, mean, se)


def test_class_conditional_split_coverage_quick():
    marginal, by_class = _mc("split-g", "lac", 40)
    _check(marginal, "split-g marginal")
    for k, v in by_class.items():
        _check(v, f"split-g class {k}")


@pytest.mark.long
@pytest.mark.parametrize(
    "method,score",
    [
        ("split", "lac"),
        ("split", "aps"),
        ("split", APSScore(randomized=True)),
        ("split", RAPSScore(0.05, 1)),
        ("lcp-rf", "lac"),
        ("lcp-rf", APSScore(randomized=True)),
        ("lcp-rf", RAPSScore(0.05, 1, randomized=True)),
    ],
)
def test_marginal_coverage_long(mc_reps, method, score):
    marginal, _ = _mc(method, score, mc_reps or 200)
    _check(marginal, f"{method} {score!r}")


@pytest.mark.long
@pytest.mark.parametrize(
    "method,score",
    [("split-g", "lac"), ("split-g", APSScore(randomized=True)), ("lcp-rf-g", "lac"), ("lcp-rf-g", "aps")],
)
def test_class_conditional_coverage_long(mc_reps, method, score):
    marginal, by_class = _mc(method, score, mc_reps or (120 if method == "lcp-rf-g" else 200))
    _check(marginal, f"{method} marginal")
    for k, v in by_class.items():
        _check(v, f"{method} {score!r} class {k}")


@pytest.mark.long
@pytest.mark.parametrize("method,options", [("qrf-tc", None), ("lcp-rf", {"guarantee": "pac"})])
def test_pac_coverage_long(mc_reps, method, options):
    marginal, _ = _mc(method, "lac", mc_reps or 100, n_cal=1500, options=options)
    _check(marginal, method)
