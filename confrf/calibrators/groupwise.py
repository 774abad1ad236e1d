"""Groupwise calibration: SPLIT-G and LCP-RF-G calibrate within each group of a partition.

Groups come from the forest's weight graph (``groups="components"`` or
``"leiden"``) or from labels the user gives with the data (``"labels"``, the
Mondrian case). Validity within every group (docs/theory.md, "Groupwise
calibration"): the groups, the region rule x -> group and the merging of
small groups are learned on the localizer part of the calibration set, disjoint
from the conformal points, and the same rule maps conformal and test points.
Given that part, the conformal and test points that fall in one group are
exchangeable, so split conformal or exact LCP run on that group alone covers
with probability >= 1 - alpha conditionally on the group.
"""

from __future__ import annotations

import copy
import warnings
from abc import abstractmethod
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from .._validation import (
    as_float_matrix,
    as_float_vector,
    check_fraction,
    min_calibration_size,
)
from .._warnings import user_stacklevel
from ..exceptions import InfiniteIntervalWarning, InputError, NotFittedError
from ..localizers.forest import ForestLocalizer
from ..localizers.graph import GRAPH_GROUPINGS, cluster_graph, weight_graph
from ..localizers.regions import WeightRegions
from ..shift.value import new_row_ratios, ratio_values
from ..shift.weighted import ShiftWeights
from .base import Calibrator, Guarantee, Thresholds, check_conformal_size, random_split, threshold_rows
from .forest_setup import make_forest_localizer
from .forest_source import TrainingPart, check_localizer_data, forest_settings, training_options, uses_training
from .grouping import REST, Grouping, _label_index, check_group_labels, units_to_keep
from .registry import get_variant

#: values of ``groups=`` at the array level (the formula API also takes columns, terms and callables)
GROUPINGS = (*GRAPH_GROUPINGS, "labels")
#: options of guarantee="pac" for the groupwise methods (calibrators/groupwise_pac.py); None: defaults
GROUP_PAC_OPTIONS = ("delta", "pac_size", "pac_bound")
GROUP_OPTIONS = {
    "groups": "leiden",
    "resolution": 1.0,
    "min_group_size": "auto",
    "guarantee": "marginal",
    **dict.fromkeys(GROUP_PAC_OPTIONS),
    **training_options(),
}


class GroupwiseCalibrator(TrainingPart, Calibrator):
    """Base of SPLIT-G and LCP-RF-G: learn groups, then calibrate within each group.

    Parameters
    ----------
    localizer : ForestLocalizer
        Forest settings; ``localizer.honest`` selects the certified construction
        (True) or the paper's literal variant (False: forest and groups learned
        on the calibration points themselves; not certified).
    groups : {"leiden", "components", "labels"}
        Groups from the forest's weight graph, or labels passed with the data.
    resolution : float
        Leiden's resolution (larger: more, smaller groups).
    min_group_size : int, "auto" or None
        Groups expected to hold fewer conformal points than this are merged into
        ``"(rest)"``. The expectation is read on the localizer part only
        (its points in the group x n_conformal / n_localizer), never on the
        conformal points. When ``"(rest)"`` would then be expected to hold
        some points but fewer than this, the smallest groups join it until it
        does not, so that it is not left with infinite intervals. "auto": the
        smallest size that can give a finite interval at the fitted alpha,
        when a localizer part exists; None or 0: no merging.
    localizer_size : float
        Share of the calibration set that learns the forest and the groups.
    n_jobs : int or None
        Threads of the LCP kernel.
    localizer_data : {"calibration", "training", "auto"}
        "training": the forest, the groups, the region rule and the merging
        are learned on the training part (:meth:`set_reference`: its rows
        and out-of-fold scores) and every calibration point is conformal;
        "calibration" and "auto": on the localizer part
        (:mod:`confrf.calibrators.forest_source`).
    """

    def __init__(
        self,
        localizer: ForestLocalizer,
        groups: str = "leiden",
        resolution: float = 1.0,
        min_group_size: int | str | None = "auto",
        localizer_size: float = 0.5,
        n_jobs: int | None = None,
        localizer_data: str = "calibration",
    ) -> None:
        if not isinstance(groups, str) or groups not in GROUPINGS:
            raise InputError(
                f"groups must be one of {list(GROUPINGS)} here, got {groups!r} (the formula API also "
                "takes a column name, a formula term or a callable returning labels)."
            )
        if isinstance(resolution, bool) or not isinstance(resolution, (int, float)) or not resolution > 0:
            raise InputError(f"resolution must be a positive number, got {resolution!r}.")
        if not (
            min_group_size is None
            or min_group_size == "auto"
            or (
                isinstance(min_group_size, (int, np.integer))
                and not isinstance(min_group_size, bool)
                and min_group_size >= 0
            )
        ):
            raise InputError(f"min_group_size must be a non-negative integer, 'auto' or None, got {min_group_size!r}.")
        check_fraction(localizer_size, "localizer_size")
        self.localizer = localizer
        self.groups = groups
        self.resolution = float(resolution)
        self.min_group_size = min_group_size
        self.localizer_size = float(localizer_size)
        self.n_jobs = n_jobs
        self.localizer_data = localizer_data
        if localizer_data == "training" and not self._graph:
            raise InputError(
                f"localizer_data='training' learns the forest and the groups on the training part, but "
                f"groups={groups!r} are given labels: the training part's labels are not kept, so small groups could "
                "not be merged on it; use localizer_data='calibration', or groups='leiden' or 'components'."
            )

    has_groups = True

    # -- what this configuration needs ---------------------------------------
    @property
    def uses_labels(self) -> bool:
        """Whether labels must be passed with the data (``groups="labels"``)."""
        return self.groups == "labels"

    @property
    def _graph(self) -> bool:
        return self.groups in GRAPH_GROUPINGS

    def _uses_forest(self) -> bool:
        return self._graph

    @property
    def _honest(self) -> bool:
        return not self._uses_forest() or self.localizer.honest

    def _merge_size(self, alpha: float) -> int:
        if self.min_group_size == "auto":
            # without a forest there is no held-out part on which merging could be decided
            return min_calibration_size(alpha) if self._uses_forest() else 0
        return int(self.min_group_size or 0)

    def _labels(self, labels: Any, n: int) -> np.ndarray | None:
        if not self.uses_labels:
            if labels is not None:
                raise InputError(
                    f"group labels were given but groups={self.groups!r} learns the groups from the "
                    "forest; pass groups='labels' (or a column in the formula API) to use them."
                )
            return None
        if labels is None:
            raise InputError(
                "groups='labels': pass one group label per row (groups=...) when calibrating and predicting."
            )
        return check_group_labels(labels, n)

    # -- calibration ---------------------------------------------------------
    #: weighted within each group (docs/theory.md, "Covariate shift"); the PAC variants refuse
    supports_shift = True

    def calibrate(self, X, scores, *, alpha, rng, labels=None, likelihood_ratio=None) -> GroupwiseCalibrator:
        X = as_float_matrix(X, "X")
        V = as_float_vector(scores, "scores")
        n = X.shape[0]
        labels = self._labels(labels, n)
        w = None if likelihood_ratio is None else ratio_values(likelihood_ratio, n, "the calibration rows")
        merge = self._merge_size(alpha)
        forest = self._uses_forest()
        # the training part (disjoint from the calibration set) learns the forest and the groups
        ref = self.reference_rows(X.shape[1]) if forest else None
        self.split_ = ref is None and self._honest and (forest or merge > 0)
        if self.split_:
            grow, conf = random_split(n, self.localizer_size, rng, "localizer part", "localizer_size")
            check_conformal_size(conf.shape[0], alpha, "conformal part of the calibration set")
        else:  # every point is conformal: the training part learns, no forest (given labels), or not honest
            grow = np.arange(0 if ref is not None else n)
            conf = np.arange(n)
            check_conformal_size(n, alpha, "calibration set")
        X_grow, V_grow = (X[grow], V[grow]) if ref is None else ref
        one_rule = self.split_ or ref is not None  # honest: one region rule maps every calibration and test point
        mult = None
        if forest:
            self.localizer.grow(X_grow, V_grow)
            mult = None if self._honest else self.localizer.growing_multiplicity()
        # units (clusters or labels) of the rows that learn the groups and of the conformal points
        if self._graph:
            loc = copy.copy(self.localizer).index(X_grow, V_grow, multiplicity=mult)
            clusters = cluster_graph(
                weight_graph(loc, X_grow), self.groups, resolution=self.resolution, seed=int(rng.integers(2**31 - 1))
            )
            regions = WeightRegions(loc, clusters)
            unit_names: list = [f"G{c + 1}" for c in range(regions.n_clusters)]
            # honest: one region rule for every point; paper's variant: calibration points keep their cluster
            units_grow = regions.assign(X_grow) if one_rule else clusters
            units_conf = regions.assign(X[conf]) if one_rule else clusters
            known = None
        else:
            regions = None
            known = _label_index(labels)
            unit_names = list(known)
            units_grow = known.get_indexer(pd.Index(labels[grow], dtype=object))
            units_conf = known.get_indexer(pd.Index(labels[conf], dtype=object))
        # merging is decided on the localizer part (or the training part) alone, so it stays exact
        n_units = len(unit_names)
        merge = self._merge_threshold(alpha, merge, n_units)
        grow_counts = np.bincount(units_grow[units_grow >= 0], minlength=n_units)
        ratio = self._deciding_count(conf.shape[0]) / X_grow.shape[0]
        keep = units_to_keep(
            grow_counts * ratio, float(np.sum(units_grow < 0)) * ratio, merge, has_rest=regions is not None
        )
        self.grouping_ = Grouping(unit_names, keep, regions=regions, known=known)
        codes = self.grouping_.codes(units_conf)
        self._fit_groups(X[conf], V[conf], codes, None if mult is None else mult[conf])
        self.shift_ = None if w is None else ShiftWeights(w[conf])
        self.group_shift_: list[ShiftWeights | None] | None = None
        if w is not None:  # each group's conformal points carry their ratios; the groups never see them
            self.group_shift_ = [ShiftWeights(w[conf][codes == c]) for c in range(len(self.grouping_.names))]
            self._fit_group_shift(V[conf], codes, w[conf])
        self.n_grow_, self.n_conformal_ = int(X_grow.shape[0]), int(conf.shape[0])
        self.parts_ = {"localizer": grow, "conformal": conf}  # row indices into the calibration set
        self.merge_size_ = merge
        self.alpha_ = float(alpha)
        n_groups = len(self.grouping_.names)
        self.counts_ = {"conformal": np.bincount(codes, minlength=n_groups)}
        if self.split_:
            self.counts_["localizer"] = np.bincount(self.grouping_.codes(units_grow), minlength=n_groups)
        self._after_grouping(alpha)
        self._warn_small(alpha)
        return self

    @abstractmethod
    def _fit_groups(self, X: np.ndarray, V: np.ndarray, codes: np.ndarray, mult: np.ndarray | None) -> None:
        """Calibrate every group on its conformal points (``codes``: group of each row)."""

    @abstractmethod
    def _group_thresholds(self, code: int, X: np.ndarray, alpha: float) -> tuple[Any, Any, Any]:
        """(t, closed, level) of rows X that all belong to group ``code``."""

    def _fit_group_shift(self, V: np.ndarray, codes: np.ndarray, w: np.ndarray) -> None:
        """Lay out each group's ratios for its weighted thresholds (``V``, ``codes``, ``w``: per conformal point)."""

    def _group_thresholds_weighted(
        self, code: int, X: np.ndarray, alpha: float, w_test: np.ndarray
    ) -> tuple[Any, Any, Any]:
        """As :meth:`_group_thresholds`, weighted by the group's ratios and the rows' own ``w_test``."""
        raise NotImplementedError

    def _after_grouping(self, alpha: float) -> None:
        """Work that needs the final groups (e.g. assigning a held-out part to them)."""

    def _merge_threshold(self, alpha: float, merge: int, n_units: int) -> int:
        """Expected count below which a unit is merged (``n_units``: units before merging)."""
        return merge

    def _deciding_count(self, n_conformal: int) -> int:
        """Size of the part whose expected per-group count decides merging (the conformal part)."""
        return n_conformal

    def required_points(self, alpha: float) -> tuple[str, int]:
        """(column of the group table, count a group needs in it for finite intervals)."""
        return "conformal", min_calibration_size(alpha)

    def _warn_small(self, alpha: float) -> None:
        col, need = self.required_points(alpha)
        table = self.group_table(alpha)
        small = table[
            ~table["finite"] & (table[[c for c in ("localizer", "conformal", "D2") if c in table]].sum(axis=1) > 0)
        ]
        if len(small):
            shown = ", ".join(f"{g!r} ({int(c)})" for g, c in small[col].items())
            warnings.warn(
                f"{len(small)} group(s) have fewer than {need} {col} calibration points, so their intervals "
                f"are infinite at alpha={alpha:g}: {shown}. Give more calibration data, raise min_group_size "
                "(merges small groups into '(rest)', decided on the localizer part), or use coarser groups.",
                InfiniteIntervalWarning,
                stacklevel=user_stacklevel(),
            )

    # -- queries -------------------------------------------------------------
    def assign(self, X: np.ndarray, labels: Any = None) -> np.ndarray:
        """Final group code of every row of X."""
        X = as_float_matrix(X, "X")
        return self.grouping_.codes(self.grouping_.units(X, self._labels(labels, X.shape[0])))

    def groups_of(self, X: np.ndarray, labels: Any = None) -> np.ndarray:
        """Group name of every row of X (object array)."""
        return np.asarray(self.grouping_.names, dtype=object)[self.assign(X, labels)]

    def grouped_thresholds(
        self, X: np.ndarray, alpha: float, labels: Any = None, likelihood_ratio: Any = None
    ) -> tuple[Thresholds, np.ndarray]:
        """Thresholds of the rows of X, each calibrated within its group, and the group names."""
        X = as_float_matrix(X, "X")
        codes = self.assign(X, labels)
        m = X.shape[0]
        shifts = self.group_shift_
        w_test = new_row_ratios(likelihood_ratio, m, shifts is not None)
        t, closed, level = np.full(m, np.inf), np.ones(m, dtype=bool), np.ones(m)
        for c in np.unique(codes):
            rows = np.flatnonzero(codes == c)
            if shifts is not None and shifts[c] is not None and shifts[c].n:
                assert (
                    w_test is not None
                )  # new_row_ratios gives the new rows' ratios whenever the calibration was weighted
                # rows with the group's common ratio keep the exact integer rule
                plain = rows[shifts[c].unweighted_rows(w_test[rows])]
                rows = np.setdiff1d(rows, plain)
                if plain.size:
                    t[plain], closed[plain], level[plain] = self._group_thresholds(int(c), X[plain], alpha)
                if rows.size:
                    t[rows], closed[rows], level[rows] = self._group_thresholds_weighted(
                        int(c), X[rows], alpha, w_test[rows]
                    )
                continue
            t[rows], closed[rows], level[rows] = self._group_thresholds(int(c), X[rows], alpha)
        return Thresholds(t, closed, level), np.asarray(self.grouping_.names, dtype=object)[codes]

    def thresholds(self, X, alpha, labels=None, likelihood_ratio=None) -> Thresholds:
        return self.grouped_thresholds(X, alpha, labels, likelihood_ratio)[0]

    def predict_rows(self, X, alpha, *, interval=None, labels=None, likelihood_ratio=None) -> dict[str, np.ndarray]:
        """:meth:`Calibrator.predict_rows` with each row's ``group``."""
        th, group = self.grouped_thresholds(X, alpha, labels, likelihood_ratio)
        return threshold_rows(th, interval, group=group)

    def forest_localizer(self) -> ForestLocalizer:
        loc = super().forest_localizer()
        if loc.index_ is None and getattr(self, "group_localizers_", None):
            # lcp-rf-g indexes each group's conformal points separately: there is no single weight row
            raise NotFittedError(
                f"method {self.name!r} keeps one weight index per group, so forest weights and QRF quantiles "
                "over all calibration points are not defined; use estimator.calibrator_.group_localizers_[code] "
                "for one group's weights, or method='lcp-rf'."
            )
        return loc

    def group_table(self, alpha: float | None = None) -> pd.DataFrame:
        """Points of every group: localizer part (when used), conformal part, finite intervals possible."""
        a = self.alpha_ if alpha is None else alpha
        df = pd.DataFrame(
            {k: self.counts_[k] for k in ("localizer", "conformal", "D2") if k in self.counts_},
            index=pd.Index(self.grouping_.names, name="group", dtype=object),
        )
        col, need = self.required_points(a)
        df["finite"] = df[col] >= need
        return df

    def guarantee(self, alpha) -> Guarantee:
        pooled = ["the undecidable points (exact weight ties)"] if self._graph else []
        if self.grouping_.merged:
            pooled.append(f"the merged small groups ({', '.join(map(str, self.grouping_.merged))})")
        rest = f" '{REST}' pools {' and '.join(pooled)}; the statement holds for it as a whole." if pooled else ""
        if not self._honest:
            learned = "the forest and the groups were" if self._graph else "the forest was"
            return Guarantee(
                "none",
                False,
                f"Not certified: {learned} learned on the calibration points themselves "
                f"(honest=False, the paper's variant), so P(Y in interval | group) >= {1 - alpha:g} is not proved.",
            )
        if self._graph:
            how = (
                f"the groups and the region rule x -> group were learned on the {self._learned_on}, disjoint from them"
            )
        elif self.split_:
            how = "the groups are the given labels, merged on the localizer part alone"
        else:
            how = "the groups are the given labels"
        return Guarantee(
            "groupwise",
            True,
            f"Within every group of the table: P(Y in interval | group) >= {1 - alpha:g} exactly in finite samples, "
            f"hence also marginally, if the conformal calibration and test points are exchangeable ({how})." + rest,
        )

    @property
    def _learned_on(self) -> str:
        return "training part" if self.localizer_data == "training" else "localizer part"

    def sizes(self) -> dict[str, int]:
        if self.split_:
            return {"localizer": self.n_grow_, "conformal": self.n_conformal_}
        if self.localizer_data == "training":
            return {"localizer (training)": self.n_grow_, "conformal": self.n_conformal_}
        return {"calibration": self.n_conformal_}

    def describe(self) -> dict[str, Any]:
        if not self._uses_forest():
            return {}
        return {**self.localizer.describe(), "forest_grown_on": self.grown_on(self.n_grow_)}

    def describe_groups(self) -> dict[str, Any]:
        """Group settings and counts for summaries."""
        out: dict[str, Any] = {"groups": self.groups}
        if self.groups == "leiden":
            out["resolution"] = self.resolution
        used = self.group_table().drop(columns="finite").sum(axis=1) > 0
        out.update(
            {
                "groups with points": int(used.sum()),
                "min group size": self.merge_size_,
                "merged into rest": ", ".join(map(str, self.grouping_.merged)) or "-",
            }
        )
        return out


def _make(cls: type[GroupwiseCalibrator]):
    def factory(est: Any, opts: dict[str, Any], seed: int | None) -> Calibrator:
        if opts["guarantee"] == "pac":
            return get_variant(cls.name, "pac")(est, opts, seed)  # registered by calibrators/groupwise_pac.py
        if opts["guarantee"] != "marginal":
            raise InputError(
                f"guarantee must be 'marginal' or 'pac' for method {cls.name!r}, got {opts['guarantee']!r}."
            )
        stray = [k for k in GROUP_PAC_OPTIONS if opts.get(k) is not None]
        if stray:
            raise InputError(f"option(s) {stray} apply only with guarantee='pac'; add guarantee='pac' or drop them.")
        return cls(make_forest_localizer(est, seed), **group_kwargs(est, opts, cls.name))

    return factory


def group_kwargs(est: Any, opts: dict[str, Any], method: str) -> dict[str, Any]:
    """Constructor arguments of a groupwise calibrator from an estimator's settings and method options."""
    why_not = None
    if opts["groups"] not in GRAPH_GROUPINGS:
        why_not = (
            f"groups={opts['groups']!r} are given labels, whose small groups are merged on the localizer part's "
            "labels (the training part's labels are not kept; learned groups, groups='leiden' or 'components', can "
            "grow on it)"
        )
    return dict(
        groups=opts["groups"],
        resolution=opts["resolution"],
        min_group_size=opts["min_group_size"],
        localizer_size=est.localizer_size,
        n_jobs=est.n_jobs,
        localizer_data=check_localizer_data(method, opts, est, why_not),
    )


def _split_g_settings(opts: Mapping[str, Any]) -> frozenset[str]:
    # given labels need no forest; the localizer part still decides which small groups merge
    return frozenset({"honest", "localizer_size"}) if opts["groups"] == "labels" else forest_settings(opts)


#: what both groupwise methods share: their options, classification (the class label as groups), shift weighting
_GROUPWISE: dict[str, Any] = {
    "options": GROUP_OPTIONS,
    "classification": True,
    "shift": True,
    "needs_training": uses_training,
}
