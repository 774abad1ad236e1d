"""Honesty invariants: the data-dependent choices never look at the conformal points.

For every groupwise and PAC method, fit twice with the same seed: once on the data, once
after the conformal points (for the PAC methods: D1 and D2) were replaced by other points,
all piled into one region (and one label) and permuted among themselves. The parts, the
forest, the groups, the merge decisions and the group map must not change. A merge decided
on the conformal points' counts, a forest grown on them, or a split drawn from their values
would all fail here.
"""

import warnings

import numpy as np
import pytest

from confrf.calibrators import METHODS
from confrf.exceptions import ConfrfWarning


class _Est:  # the shared settings a method factory reads
    n_estimators, max_features, max_depth, honest, n_jobs, localizer_size, alpha = 10, 1.0, None, True, 1, 0.5, 0.1

    def __init__(self, min_samples_leaf):
        self.min_samples_leaf = min_samples_leaf


CASES = [  # (method, options, labels?)
    ("split-g", {"groups": "components"}, False),
    ("split-g", {"groups": "leiden", "min_group_size": 40}, False),
    ("split-g", {"groups": "labels", "min_group_size": 30}, True),
    ("lcp-rf-g", {"groups": "leiden", "min_group_size": 40}, False),
    ("lcp-rf-g", {"groups": "labels", "min_group_size": 30}, True),
    ("split-g", {"groups": "leiden", "guarantee": "pac"}, False),
    ("split-g", {"groups": "labels", "min_group_size": 30, "guarantee": "pac"}, True),
    ("lcp-rf-g", {"groups": "leiden", "guarantee": "pac"}, False),
    ("lcp-rf-g", {"groups": "labels", "min_group_size": 30, "guarantee": "pac"}, True),
    ("qrf-tc", {}, False),
    ("lcp-rf", {"guarantee": "pac"}, False),
]


def _fit(method, options, X, V, labels, seed=0):
    spec = METHODS[method]
    opts = {**spec.options, **options}
    cal = spec.factory(_Est(min_samples_leaf=15), opts, 0)
    kw = {"labels": labels} if labels is not None else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConfrfWarning)
        return cal.calibrate(X, V, alpha=0.1, rng=np.random.default_rng(seed), **kw)


def _conformal_rows(cal):
    return np.sort(np.concatenate([v for k, v in cal.parts_.items() if k != "localizer"]))


@pytest.mark.parametrize("method, options, with_labels", CASES)
def test_conformal_points_do_not_move_learned_choices(method, options, with_labels):
    rng = np.random.default_rng(1)
    n = 1500
    X = rng.uniform(size=(n, 3))
    V = np.abs((0.2 + X[:, 0]) * rng.normal(size=n))
    labels = None
    if with_labels:  # small and large labels, so that some are merged
        labels = rng.choice(np.array(["a", "b", "c", "d", "e"], dtype=object), size=n, p=[0.4, 0.3, 0.2, 0.07, 0.03])
    cal = _fit(method, options, X, V, labels)
    conf = _conformal_rows(cal)
    # other conformal points: all in one corner (one group, one label), new scores, permuted
    X2, V2 = X.copy(), V.copy()
    X2[conf] = rng.uniform(0.0, 0.05, size=(conf.shape[0], 3))[rng.permutation(conf.shape[0])]
    V2[conf] = rng.exponential(size=conf.shape[0]) * 10
    labels2 = None
    if with_labels:
        labels2 = labels.copy()
        labels2[conf] = "d"  # a small label gets every conformal point
    cal2 = _fit(method, options, X2, V2, labels2)

    assert cal.parts_.keys() == cal2.parts_.keys()
    for k in cal.parts_:
        np.testing.assert_array_equal(cal.parts_[k], cal2.parts_[k])
    Xf = np.random.default_rng(9).uniform(size=(400, 3))
    if hasattr(cal, "localizer") and getattr(cal.localizer, "forest_", None) is not None:
        leaves = [c.localizer.forest_.apply(Xf.astype(np.float32)) for c in (cal, cal2)]
        np.testing.assert_array_equal(*leaves)
    if hasattr(cal, "grouping_"):
        g, g2 = cal.grouping_, cal2.grouping_
        assert g.names == g2.names and g.merged == g2.merged
        np.testing.assert_array_equal(g.unit_codes, g2.unit_codes)
        assert cal.merge_size_ == cal2.merge_size_
        lab = None if labels is None else labels[:400]
        np.testing.assert_array_equal(cal.assign(Xf, lab), cal2.assign(Xf, lab))
        np.testing.assert_array_equal(cal.counts_.get("localizer"), cal2.counts_.get("localizer"))
        if with_labels:
            assert g.merged, "nothing merged: the test would not see a merge decided on the conformal points"
