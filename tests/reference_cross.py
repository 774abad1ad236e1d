"""Slow references of the cross-conformal methods, written from the papers' definitions.

Barber, Candes, Ramdas & Tibshirani (2021), "Predictive inference with the
jackknife+": with models mu_{-k} fitted without fold k and out-of-fold scores
R_i, the CV+ / jackknife+ interval at x is

    [ q^-_alpha { lo_i(x) }, q^+_alpha { hi_i(x) } ],   [lo_i(x), hi_i(x)] = {y : V(x, y; mu_{-k(i)}) <= R_i},

q^-_alpha the floor(alpha (n + 1))-th smallest value (-inf if that is 0) and
q^+_alpha the ceil((1 - alpha)(n + 1))-th smallest (+inf if that exceeds n).
Kim, Xu & Barber (2020) replace mu_{-k(i)} by the aggregate of the bootstrap
models whose bag misses i. Everything here is one row and one pair at a time.
"""

from fractions import Fraction
from math import ceil, floor

import numpy as np

from confrf.scores.fitting import fit_score_models


def ranks(alpha, n):
    a = Fraction(repr(float(alpha)))
    return floor(a * (n + 1)), ceil((1 - a) * (n + 1))


def order_bounds(score, pred_of_row, R, x_pred_rows, alpha):
    """Bounds at one new point: pred_of_row[i] is the prediction (a 1-row array) of row i's predictor at x."""
    n = len(R)
    j_lo, j_hi = ranks(alpha, n)
    los, his = [], []
    for i in range(n):
        if np.isinf(R[i]):  # no predictor: the whole line
            los.append(-np.inf)
            his.append(np.inf)
            continue
        lo, hi = score.interval(pred_of_row[i], np.array([R[i]]))
        los.append(float(np.asarray(lo)[0]))
        his.append(float(np.asarray(hi)[0]))
    los, his = sorted(los), sorted(his)
    lower = -np.inf if j_lo == 0 else los[j_lo - 1]
    upper = np.inf if j_hi > n else his[j_hi - 1]
    return lower, upper


def cv_plus_fit(score, X, y, folds, model, random_state, alpha, fit_intercept=True):
    """(models, owner, R): fold models refitted from scratch on every row outside each fold (spare rows included),
    the fold of every scored row, and its out-of-fold score, in the order of the folds."""
    n = X.shape[0]
    models, R, owner = [], [], []
    for k, fold in enumerate(folds):
        keep = np.setdiff1d(np.arange(n), fold)
        m = fit_score_models(
            score, X[keep], y[keep], model, alpha=alpha, random_state=random_state, fit_intercept=fit_intercept
        )
        models.append(m)
        for i in fold:
            R.append(float(score.score(y[i : i + 1], m.predict(X[i : i + 1]))[0]))
            owner.append(k)
    return models, owner, np.array(R)


def cv_plus_bounds(score, models, owner, R, X_new, alpha):
    """(lower, upper) at every new row, one pair at a time."""
    lower, upper = [], []
    for x in X_new:
        preds = [models[k].predict(x[None, :]) for k in owner]
        lo, hi = order_bounds(score, preds, R, None, alpha)
        lower.append(lo)
        upper.append(hi)
    return np.array(lower), np.array(upper)


def jackknife_ab(score, X, y, bags, X_new, alpha, model, random_state, aggregation="mean", fit_intercept=True):
    """(lower, upper, R) of J+aB: models refitted on the bags; row i aggregated over the bags that miss it."""
    n = X.shape[0]
    models = [
        fit_score_models(score, X[b], y[b], model, alpha=alpha, random_state=random_state, fit_intercept=fit_intercept)
        for b in bags
    ]
    agg = np.mean if aggregation == "mean" else np.median
    out = [[j for j, b in enumerate(bags) if i not in set(b.tolist())] for i in range(n)]

    def pred(i, x):
        return agg(np.stack([np.asarray(models[j].predict(x[None, :]), dtype=float) for j in out[i]]), axis=0)

    R = np.array([float(score.score(y[i : i + 1], pred(i, X[i]))[0]) if out[i] else np.inf for i in range(n)])
    lower, upper = [], []
    for x in X_new:
        preds = [pred(i, x) if out[i] else None for i in range(n)]
        lo, hi = order_bounds(score, preds, R, None, alpha)
        lower.append(lo)
        upper.append(hi)
    return np.array(lower), np.array(upper), R
