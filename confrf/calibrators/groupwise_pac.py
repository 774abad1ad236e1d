"""Training-conditional (PAC) calibration within groups: SPLIT-G and LCP-RF-G with ``guarantee="pac"``.

The groups, the region rule x -> group and the merging of small groups are learned on the
localizer part exactly as for the marginal groupwise methods (groupwise.py). Then, in every
group g, the exact binomial order statistic at level delta / L, L the number of groups that
hold points of the part that picks the order statistics (a group without any has infinite
intervals, which cannot fail):

* SPLIT-G: the threshold of group g is the k_g-th smallest conformal score of the group,
  k_g the smallest integer with P(Binomial(n_g, 1 - alpha) >= k_g) <= delta / L (Vovk 2012);
* LCP-RF-G: the group's points are split into D1_g (carries the weights and the exact LCP
  step) and D2_g (the held-out part D2 of the calibration set, share ``pac_size``, that falls
  in g); the correction of group g is the k_g-th smallest of the corrections that just cover
  each D2_g point (calibrators/pac_correction.py), k_g from n2_g and delta / L.

Why it holds. Condition on the localizer part (it fixes the forest, the groups and the rule)
and on the group of every other calibration point (this fixes the counts, hence L). For i.i.d.
data the points of group g
are then i.i.d. draws of P(. | X in R_g), independent of the other groups, and D1_g fixes the
interval map of g; the order-statistic argument gives P(coverage in g < 1 - alpha) <= delta / L.
A union bound over the L groups: with probability >= 1 - delta, every group's coverage is at
least 1 - alpha at once, hence so is the overall coverage sum_g P(R_g) coverage_g.
A group whose k_g exceeds its count has infinite intervals (coverage 1).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .._validation import as_float_matrix, as_float_vector, check_fraction
from ..exceptions import InputError
from ..shift.weighted import PAC_REFUSAL
from .base import Guarantee
from .forest_setup import PAC_DEFAULTS, make_forest_localizer
from .groupwise import REST, group_kwargs
from .lcp_rf_g import LCPForestGroupCalibrator
from .pac import MAX_INFINITE_SHARE
from .pac_bounds import binomial_k, min_d2_size, open_unit
from .pac_correction import ForestPACMap, binomial_correction
from .pac_report import IID, PACReport, shown
from .registry import register_variant
from .split_g import SplitGroupCalibrator


def pac_min_size(alpha: float, delta: float) -> int:
    """Smallest count with k <= count: below it a group's PAC intervals are all infinite."""
    return min_d2_size(alpha, None, delta, "binomial")


if TYPE_CHECKING:  # the mixin reads and extends the groupwise calibrator it is mixed into
    from .groupwise import GroupwiseCalibrator as _Groupwise
else:
    _Groupwise = object


class GroupPACMixin(_Groupwise):
    """Per-group binomial PAC calibration; ``delta`` is shared as delta / L over the L groups with points."""

    #: the part whose points pick each group's order statistic
    pac_part = "conformal"
    #: each class that mixes this in says how a group's correction is computed
    _group_correction: Callable[[int, float], dict[str, Any]]
    supports_shift = False

    def shift_refusal(self) -> str:
        return f"method {self.name!r} with guarantee='pac': {PAC_REFUSAL}"

    def _init_pac(self, delta: float) -> None:
        self.delta = open_unit(delta, "delta")
        self._group_pac: dict[float, list[dict[str, Any]]] = {}

    @property
    def n_groups(self) -> int:
        return len(self.grouping_.names)

    @property
    def n_used(self) -> int:
        """L: groups holding points of the PAC part (a group without any has infinite intervals, never fails)."""
        return max(1, int(np.count_nonzero(self.counts_[self.pac_part])))

    @property
    def delta_group(self) -> float:
        return self.delta / self.n_used

    def _merge_threshold(self, alpha: float, merge: int, n_units: int) -> int:
        if self.min_group_size == "auto" and merge > 0:
            # at most n_units + 1 final groups ("(rest)" included): a group needs k <= its count
            return pac_min_size(alpha, self.delta / (n_units + 1))
        return merge

    def required_points(self, alpha: float) -> tuple[str, int]:
        """(part, count): a group's PAC interval is finite only with this many points of the PAC part."""
        return self.pac_part, pac_min_size(alpha, self.delta_group)

    def _pac(self, alpha: float) -> list[dict[str, Any]]:
        key = float(alpha)
        if key not in self._group_pac:
            self._group_pac[key] = [self._group_correction(c, alpha) for c in range(self.n_groups)]
        return self._group_pac[key]

    def prepare(self, alpha: float) -> None:
        self._pac(alpha)

    def group_table(self, alpha: float | None = None) -> pd.DataFrame:
        df = super().group_table(alpha)
        df["k"] = [g["k"] for g in self._pac(self.alpha_ if alpha is None else alpha)]
        return df

    def pac_report(self, alpha: float) -> PACReport:
        """Per-group corrections (``.groups``) and the simultaneous statement."""
        g = self._pac(alpha)
        n2 = np.array([x["n2"] for x in g])
        k = np.array([x["k"] for x in g])
        finite = k <= n2
        covered = int(sum(x["covered"] for x in g))
        total = int(n2.sum())
        groups = pd.DataFrame(
            {
                "n2": n2,
                "k": k,
                "finite": finite,
                "a_hat" if self.pac_part == "D2" else "threshold": [x["a_hat"] for x in g],
                "d2_coverage": [x["covered"] / x["n2"] if x["n2"] else np.nan for x in g],
            },
            index=pd.Index(self.grouping_.names, name="group", dtype=object),
        )
        return PACReport(
            method=self.name,
            bound="binomial",
            form="exact",
            alpha=float(alpha),
            delta=self.delta,
            n2=total,
            k=int(k[finite].sum()),
            epsilon=float(k[finite].sum() / max(total, 1) - (1 - alpha)),
            K=None,
            target=float(k[finite].sum() / max(total, 1)),
            required_count=int(k[finite].sum()),
            a_hat=None,
            d2_coverage=covered / max(total, 1),
            d2_infinite=float(sum(x["infinite"] * x["n2"] for x in g) / max(total, 1)),
            reached=bool(finite[n2 > 0].all()),
            guaranteed_coverage=1 - float(alpha),
            sentence=self.guarantee(alpha).sentence,
            groups=groups,
            n_groups=self.n_used,
            delta_group=self.delta_group,
        )

    def guarantee(self, alpha) -> Guarantee:
        base = super().guarantee(alpha)
        if not base.certified:
            return base
        L = self.n_used
        part = "held-out D2 points" if self.pac_part == "D2" else "conformal points"
        how = (
            f"the groups and the region rule x -> group were learned on the {self._learned_on}"
            if self._graph
            else "the groups are the given labels"
        )
        rest = (
            f" '{REST}' counts as one group."
            if REST in self.grouping_.names and self.counts_[self.pac_part][self.grouping_.names.index(REST)]
            else ""
        )
        return Guarantee(
            "pac",
            True,
            f"With probability at least {1 - self.delta:g} over the calibration data, simultaneously in every group "
            f"of the table, the coverage P(Y in interval | group, calibration data) is at least {shown(1 - alpha)}, "
            f"hence also overall (training-conditional, PAC: in every group the exact binomial order statistic of "
            f"its {part} at level delta/L = {self.delta:g}/{L} = {self.delta_group:.4g}, a union bound over the "
            f"L={L} groups that hold such points, given which group every calibration point fell in; {how}), "
            + IID
            + rest,
        )


class PACSplitGroupCalibrator(GroupPACMixin, SplitGroupCalibrator):
    """SPLIT-G with a training-conditional guarantee: per group, the k_g-th smallest score.

    Examples
    --------
    >>> import numpy as np
    >>> from confrf.calibrators.groupwise_pac import PACSplitGroupCalibrator
    >>> cal = PACSplitGroupCalibrator(None, groups="labels", delta=0.1).calibrate(
    ...     np.zeros((200, 1)), np.tile(np.arange(100.0), 2), alpha=0.1, rng=None, labels=np.repeat(["a", "b"], 100))
    >>> cal.group_table()["k"].tolist(), cal.thresholds(np.zeros((1, 1)), 0.1, labels=["a"]).t.tolist()
    ([96, 96], [95.0])
    """

    def __init__(self, localizer, delta: float = PAC_DEFAULTS["delta"], **kwargs: Any) -> None:
        super().__init__(localizer, **kwargs)
        self._init_pac(delta)

    def _group_correction(self, code: int, alpha: float) -> dict[str, Any]:
        s = self.sorted_scores_[code]
        n = s.shape[0]
        k = binomial_k(n, alpha, self.delta_group) if n else 1
        t = float(s[k - 1]) if k <= n else np.inf
        return {
            "n2": n,
            "k": k,
            "a_hat": t,
            "covered": int(np.searchsorted(s, t, side="right")) if n else 0,
            "infinite": float(k > n),
        }

    def _group_thresholds(self, code, X, alpha):
        g = self._pac(alpha)[code]
        return g["a_hat"], True, (g["covered"] / (g["n2"] + 1) if np.isfinite(g["a_hat"]) else 1.0)


class PACLCPForestGroupCalibrator(GroupPACMixin, LCPForestGroupCalibrator):
    """LCP-RF-G with a training-conditional guarantee: per group, the binomial correction on D2_g."""

    pac_part = "D2"

    def __init__(
        self, localizer, delta: float = PAC_DEFAULTS["delta"], pac_size: float = PAC_DEFAULTS["pac_size"], **kwargs: Any
    ) -> None:
        super().__init__(localizer, **kwargs)
        self._init_pac(delta)
        self.pac_size = check_fraction(pac_size, "pac_size")

    # no likelihood_ratio: PAC calibration refuses covariate shift before calibrating (supports_shift = False)
    def calibrate(self, X, scores, *, alpha, rng, labels=None) -> PACLCPForestGroupCalibrator:  # type: ignore[override]
        X = as_float_matrix(X, "X")
        V = as_float_vector(scores, "scores")
        labels = self._labels(labels, X.shape[0])
        if not self.localizer.honest:
            raise InputError(
                "method 'lcp-rf-g' with guarantee='pac' learns the forest and the groups on their own "
                "part; honest=False is not available here. Use honest=True (the default)."
            )
        n = X.shape[0]
        perm = rng.permutation(n)
        n2 = int(round(self.pac_size * n))
        d2, rest = np.sort(perm[:n2]), np.sort(perm[n2:])
        self.X2_, self.V2_ = X[d2], V[d2]
        self._labels2 = None if labels is None else labels[d2]
        self._n2_total = n2
        super().calibrate(X[rest], V[rest], alpha=alpha, rng=rng, labels=None if labels is None else labels[rest])
        self.parts_ = {"localizer": rest[self.parts_["localizer"]], "D1": rest[self.parts_["conformal"]], "D2": d2}
        return self

    def _deciding_count(self, n_conformal: int) -> int:
        return self._n2_total

    def _after_grouping(self, alpha: float) -> None:
        self.d2_codes_ = self.grouping_.codes(self.grouping_.units(self.X2_, self._labels2))
        self.counts_["D2"] = np.bincount(self.d2_codes_, minlength=self.n_groups)

    def _group_map(self, code: int) -> ForestPACMap | None:
        loc = self.group_localizers_[code]
        return None if loc is None else ForestPACMap(loc, "lcp", self.n_jobs)

    def _group_correction(self, code: int, alpha: float) -> dict[str, Any]:
        rows = np.flatnonzero(self.d2_codes_ == code)
        n2 = rows.shape[0]
        k = binomial_k(n2, alpha, self.delta_group) if n2 else 1
        pmap = self._group_map(code)
        if pmap is None or k > n2:
            return {"n2": n2, "k": k, "a_hat": np.inf, "covered": n2, "infinite": 1.0}
        c = binomial_correction(pmap, self.X2_[rows], self.V2_[rows], alpha, self.delta_group, MAX_INFINITE_SHARE)
        return {"n2": n2, "k": k, "a_hat": c.a_hat, "covered": c.covered, "infinite": c.d2_infinite}

    def _group_thresholds(self, code, X, alpha):
        pmap = self._group_map(code)
        a = self._pac(alpha)[code]["a_hat"]
        if pmap is None:
            return np.inf, True, 1.0
        th = pmap.thresholds(X, alpha, a)
        return th.t, th.closed, th.level

    def sizes(self) -> dict[str, int]:
        grown = "localizer (training)" if self.localizer_data == "training" else "localizer"
        return {grown: self.n_grow_, "D1": self.n_conformal_, "D2": self._n2_total}


def _factory(cls: type[GroupPACMixin]) -> Callable[[Any, dict[str, Any], int | None], GroupPACMixin]:
    def make(est: Any, opts: dict[str, Any], seed: int | None) -> GroupPACMixin:
        if opts.get("pac_bound") not in (None, "binomial"):
            raise InputError(
                f"method {cls.name!r} with guarantee='pac' uses the exact binomial bound per group; "
                f"pac_bound={opts['pac_bound']!r} is not offered for it."
            )
        extra = {"delta": PAC_DEFAULTS["delta"] if opts.get("delta") is None else opts["delta"]}
        if cls is PACLCPForestGroupCalibrator:
            extra["pac_size"] = PAC_DEFAULTS["pac_size"] if opts.get("pac_size") is None else opts["pac_size"]
        elif opts.get("pac_size") is not None:
            raise InputError(
                "pac_size does not apply to method 'split-g': its PAC thresholds are order statistics "
                "of each group's conformal points, with no held-out part."
            )
        loc = make_forest_localizer(est, seed)
        if cls is PACSplitGroupCalibrator and not loc.honest and opts["groups"] != "labels":
            raise InputError("method 'split-g' with guarantee='pac' and learned groups needs honest=True.")
        return cls(loc, **extra, **group_kwargs(est, opts, cls.name))

    return make


register_variant("split-g", "pac", _factory(PACSplitGroupCalibrator))
register_variant("lcp-rf-g", "pac", _factory(PACLCPForestGroupCalibrator))
