"""LCP-RF: exact LCP calibration with the random-forest localizer."""

from __future__ import annotations

import copy
import time
from typing import Any

import numpy as np

from .._parallel import kernel_threads
from .._validation import as_float_matrix, as_float_vector, check_fraction, required_count
from ..exceptions import InputError
from ..localizers.batched import batched_thresholds
from ..localizers.forest import ForestLocalizer, check_forest_backend, check_max_samples
from ..localizers.sources import grow_from_sources, training_check
from ..localizers.tuning import TUNE
from ..localizers.weighted import ForestShiftIndex, weighted_forest_thresholds
from ..shift.value import new_row_ratios, ratio_values
from ..shift.weighted import ShiftWeights
from . import localizer_split as split
from .base import Calibrator, Guarantee, Thresholds, check_conformal_size, random_split
from .forest_setup import PAC_DEFAULTS, make_forest_localizer
from .registry import FOREST_SETTINGS, MethodSpec, get_variant, register
from .rows import ArrayRows, CalibrationRows


class LCPForestCalibrator(Calibrator):
    """Exact LCP (Guan) with forest weights; honest by default.

    Parameters
    ----------
    localizer : ForestLocalizer
        Forest settings; ``localizer.honest`` selects the variant.
    localizer_size : float
        Share of the calibration set that grows the forest when honest; the
        rest are the conformal calibration points.
    n_jobs : int or None
        Threads of the threshold kernel.
    max_localizer_size : int or None
        Most rows that grow the forest (honest): the localizer part is
        ``min(round(localizer_size * n), max_localizer_size)`` rows and every
        other calibration row is a conformal point; with a training-part
        forest, a random subsample of that size grows it. None: no cap.
    shift_tuning : {"calibration", "target"}
        Under covariate shift (``likelihood_ratio``), which population the
        forest's "tune" rule scores candidates for: "calibration" (default:
        the unweighted tuning; the forest does not depend on the ratios) or
        "target" (the tuning's simulated calibrations and losses weighted by
        the localizer points' ratios, :mod:`confrf.localizers.tuning`). Both
        keep the guarantee exact; on the shift benchmark "target" was not
        better (``benchmarks/explore/shift_levers.md`` in the repository).
    choose_source : bool
        With a training part (:meth:`set_reference`): choose what the forest
        grows on (the localizer part, the training part or both) by the
        tuning's simulated calibrations on the localizer part
        (:mod:`confrf.localizers.sources`; ``localizer_data="auto"``) instead
        of always growing on the training part (``localizer_data="training"``),
        while the localizer part is below ``TRAINING_GATE`` rows; from there
        on the forest grows on the localizer part and the training scores are
        never computed (they may be handed as a callable, called only when
        the gate is open).

    Notes
    -----
    After :meth:`set_reference` (the estimator's training part with
    out-of-fold scores, option ``localizer_data="training"``), the forest is
    grown on those instead and every calibration point is a conformal point;
    the training part is independent of the calibration and test points, so
    the guarantee stays exact.
    """

    name = "lcp-rf"
    supports_shift = True

    def __init__(
        self,
        localizer: ForestLocalizer,
        localizer_size: float = 0.5,
        n_jobs: int | None = None,
        max_localizer_size: int | None = None,
        shift_tuning: str = "calibration",
        choose_source: bool = False,
    ) -> None:
        self.localizer = localizer
        self.localizer_size = check_fraction(localizer_size, "localizer_size")
        self.max_localizer_size = max_localizer_size
        self.n_jobs = n_jobs
        self.shift_tuning = split.check_shift_tuning(shift_tuning)
        self._reference: tuple[np.ndarray, np.ndarray] | None = None
        self.localizer_source_ = "calibration"
        self.choose_source = choose_source
        #: why "auto" left the training rows out (None: it considered them, or there were none)
        self.training_note_: str | None = None
        #: set by the factory for localizer_data="training": calibrating without a training part is an error
        self.needs_reference = False

    #: ``set_reference`` takes the scores as a callable too (the estimator's deferred out-of-fold scores)
    defers_reference = True

    def set_reference(self, X, scores, source: str = "training part") -> None:
        """Grow the forest on (X, scores), data disjoint from the calibration set, instead of a share of it.

        ``scores`` may be a callable returning them: it is called only if the forest may learn from the
        training rows (always for ``localizer_data="training"``; for "auto" while the gate is open).
        """
        X = as_float_matrix(X, "training X")
        if not callable(scores):
            scores = self._check_reference(X, scores)
        self._reference = (X, scores)
        self.localizer_source_ = source

    @staticmethod
    def _check_reference(X: np.ndarray, scores: Any) -> np.ndarray:
        V = as_float_vector(scores, "training scores")
        if X.shape[0] != V.shape[0]:
            raise InputError(f"training X has {X.shape[0]} rows but {V.shape[0]} scores.")
        return V

    def _reference_rows(self) -> tuple[np.ndarray, np.ndarray]:
        """The training part with its scores (a deferred one computed now), used once: not kept."""
        assert self._reference is not None
        Xr, Vr = self._reference
        self._reference = None
        return Xr, self._check_reference(Xr, Vr() if callable(Vr) else Vr)

    def calibrate(self, X, scores, *, alpha, rng, likelihood_ratio=None) -> LCPForestCalibrator:
        X = as_float_matrix(X, "X")
        V = as_float_vector(scores, "scores")
        n = X.shape[0]
        w = None if likelihood_ratio is None else ratio_values(likelihood_ratio, n, "the calibration rows")
        target_tuning = self.shift_tuning == "target"
        if self.needs_reference and self._reference is None:
            raise InputError(
                "localizer_data='training' grows the forest on the training part's out-of-fold scores, which this "
                "fit did not keep (the regression estimator computes them in fit(); a classification fit does not); "
                "use localizer_data='calibration'."
            )
        if self.choose_source and (target_tuning or not self.localizer.honest):
            # "auto": the training part only competes for an honest, unweighted tuning; else the localizer part's rule
            # (a deferred training score is never computed, and nothing says the forest learned from it)
            self._reference, self.localizer_source_ = None, "calibration"
        if target_tuning and self._reference is not None and not self.choose_source:
            raise InputError(
                "shift_tuning='target' weights the forest's tuning by the growing rows' likelihood ratios, and the "
                "training part has none (an array of calibration ratios does not give them, and w(x) is "
                "dP_target/dP_training only if the training rows are drawn like the calibration rows); use "
                "shift_tuning='calibration' (the calibration is weighted either way) or localizer_data='calibration'."
            )
        if target_tuning and (w is None or self._reference is not None or not self.localizer.honest):
            raise InputError(
                "shift_tuning='target' weights the tuning of the honest forest, grown on the localizer part of the "
                "calibration set, by those points' likelihood ratios: it needs likelihood_ratio= (or shift=), "
                "honest=True and localizer_data='calibration'. Drop shift_tuning otherwise."
            )
        if self._reference is None and not self.localizer.honest:
            check_conformal_size(n, alpha, "calibration set")
            self.localizer.fit(X, V)
            self.n_grow_ = self.n_conformal_ = n
            self.n_calibration_, self.conformal_rows_ = n, np.arange(n)
        else:
            self.calibrate_rows(ArrayRows(X, V), alpha=alpha, rng=rng, tuning_ratio=w if target_tuning else None)
        # the ratios weight the conformal points (the forest saw at most the localizer part's, with shift_tuning)
        self._set_ratios(None if w is None else w[self.conformal_rows_])
        return self

    def calibrate_rows(
        self,
        rows: CalibrationRows,
        *,
        alpha: float,
        rng: np.random.Generator,
        tuning_ratio: np.ndarray | None = None,
    ) -> LCPForestCalibrator:
        """Honest calibration on rows held anywhere (arrays, or Dask partitions: :mod:`confrf.dask`).

        The forest grows on at most ``max_localizer_size`` rows (gathered in
        one place); every conformal row is looked up where it is and only its
        leaves and score come back to build the index. Unweighted (covariate
        shift ratios are set by :meth:`calibrate` afterwards); ``tuning_ratio``
        (``shift_tuning="target"``: one likelihood ratio per row) is read at
        the localizer part's rows only, by the forest's tuning.
        """
        n = rows.n
        if not self.localizer.honest:
            raise InputError("honest=False grows the forest on every calibration row; it needs the rows in memory.")
        w_grow = None
        if self._reference is not None and self.choose_source:
            return self._calibrate_choosing_source(rows, alpha, rng)
        if self._reference is not None:
            Xr, Vr = self._reference_rows()  # used once; not kept in the fitted object
            if Xr.shape[1] != rows.n_features:
                raise InputError(
                    f"the training part has {Xr.shape[1]} columns, the calibration data {rows.n_features}."
                )
            check_conformal_size(n, alpha, "calibration set")
            if self.max_localizer_size is not None and Xr.shape[0] > self.max_localizer_size:
                keep = np.sort(rng.permutation(Xr.shape[0])[: self.max_localizer_size])
                Xr, Vr = Xr[keep], Vr[keep]
            conf = np.arange(n)
        elif self._too_small_to_localize(n, alpha):
            check_conformal_size(n, alpha, "calibration set")
            self.localizer.skip(
                rows.n_features,
                f"a localizer part of {int(round(self.localizer_size * n))} points would be below ceil(10/alpha) = "
                f"{split.min_localizer_points(alpha)}, decided from the sizes alone",
            )
            conf = np.arange(n)
            Xr = None
        else:
            grow, conf = random_split(
                n, self.localizer_size, rng, "localizer part", "localizer_size", max_first=self.max_localizer_size
            )
            check_conformal_size(conf.shape[0], alpha, "conformal part of the calibration set")
            Xr, Vr = rows.take(grow), rows.scores[grow]
            w_grow = None if tuning_ratio is None else tuning_ratio[grow]
        if Xr is not None:
            self._prepare_tuning(alpha, Xr.shape[0], conf.shape[0])
            self.localizer.grow(Xr, Vr, likelihood_ratio=w_grow)
        t0 = time.perf_counter()
        self.localizer.index_lookups(*rows.lookup(self.localizer, conf))
        self.localizer.index_seconds_ = time.perf_counter() - t0
        self.n_grow_, self.n_conformal_ = (0 if Xr is None else int(Xr.shape[0])), int(conf.shape[0])
        # int32: 4 bytes a conformal point in the fitted object (reweighted() reads the ratios' rows with it)
        self.n_calibration_, self.conformal_rows_ = n, conf.astype(np.int32 if n < 2**31 else np.int64)
        self._set_ratios(None)
        return self

    def _calibrate_choosing_source(
        self, rows: CalibrationRows, alpha: float, rng: np.random.Generator
    ) -> LCPForestCalibrator:
        """``localizer_data="auto"``: the forest grows on the localizer part, the training part or both.

        The localizer part's size is decided from the sizes alone (:func:`localizer_rows_with_training`);
        the source and the forest are chosen from it and the training part only (:mod:`confrf.localizers.sources`),
        so the conformal points stay unseen until they are indexed.
        """
        n = rows.n
        why_not = self._why_not_training(n, alpha)
        if why_not is not None:
            # the localizer part's rule, as without training rows; a deferred training score is never computed
            self._reference, self.localizer_source_ = None, "calibration"
            self.training_note_ = f"training rows not considered: {why_not}"
            return self.calibrate_rows(rows, alpha=alpha, rng=rng)
        Xr, Vr = self._reference_rows()  # used once; not kept in the fitted object
        if Xr.shape[1] != rows.n_features:
            raise InputError(f"the training part has {Xr.shape[1]} columns, the calibration data {rows.n_features}.")
        if self.max_localizer_size is not None and Xr.shape[0] > self.max_localizer_size:
            keep = np.sort(rng.permutation(Xr.shape[0])[: self.max_localizer_size])
            Xr, Vr = Xr[keep], Vr[keep]
        n_loc = split.localizer_rows_with_training(n, Xr.shape[0], self.localizer_size, alpha)
        n_loc = n_loc if self.max_localizer_size is None else min(n_loc, self.max_localizer_size)
        loc = self.localizer
        grow, conf, passed = split.training_split(
            n,
            n_loc,
            Vr.shape[0],
            alpha,
            rng,
            lambda k: training_check(rows.take(k), rows.scores[k], Xr, Vr, alpha, loc.random_state, loc.n_jobs),
            split.rejected_localizer_rows(n_loc, n, self.localizer_size, self.max_localizer_size),
        )
        check_conformal_size(conf.shape[0], alpha, "conformal part of the calibration set")
        self._prepare_tuning(alpha, grow.shape[0], conf.shape[0])
        Xg, Vg = rows.take(grow), rows.scores[grow]
        grow_from_sources(self.localizer, Xg, Vg, Xr, Vr, int(conf.shape[0]), checked=passed)
        choice = self.localizer.source_choice_
        # a normalized localizer's sigma(x) is the training part's forest
        self.localizer_source_ = "calibration" if self.localizer.no_localization else choice.chosen
        t0 = time.perf_counter()
        self.localizer.index_lookups(*rows.lookup(self.localizer, conf))
        self.localizer.index_seconds_ = time.perf_counter() - t0
        self.n_grow_, self.n_conformal_ = int(self.localizer.n_grow_ or 0), int(conf.shape[0])
        self.n_localizer_ = int(grow.shape[0])
        self.n_calibration_, self.conformal_rows_ = n, conf.astype(np.int32 if n < 2**31 else np.int64)
        self._set_ratios(None)
        return self

    def _why_not_training(self, n: int, alpha: float) -> str | None:
        """Why "auto" grows on the localizer part without comparing sources (None: it compares them); sizes only."""
        part = split.gated_localizer_rows(n, self.localizer_size, self.max_localizer_size)
        if part >= split.TRAINING_GATE:
            return (
                f"the localizer part has {part:,} >= {split.TRAINING_GATE:,} rows (localizer_data='auto' compares "
                "sources below that; decided from the sizes alone)"
            )
        if self.localizer.min_samples_leaf != TUNE:
            return "a leaf size was given (min_samples_leaf), so there is no tuning to compare sources by"
        if self._too_small_to_localize(n, alpha):
            return f"the localizer part would be below ceil(10/alpha) = {split.min_localizer_points(alpha)} rows"
        return None

    def _too_small_to_localize(self, n: int, alpha: float) -> bool:
        # only when the leaf size is tuned (an explicit one asks for a forest), from the sizes alone
        return self.localizer.min_samples_leaf == TUNE and round(self.localizer_size * n) < split.min_localizer_points(
            alpha
        )

    def _set_ratios(self, w: np.ndarray | None) -> None:
        self.shift_ = None if w is None else ShiftWeights(w)
        self.shift_index_ = None if w is None else ForestShiftIndex.build(self.localizer._index(), w)

    def reweighted(self, likelihood_ratio: object = None) -> LCPForestCalibrator:
        """The same forest and conformal points with other likelihood ratios (None: unweighted).

        ``likelihood_ratio`` has one entry per row of the calibration set
        given to :meth:`calibrate`. The forest is kept as grown; with the
        default ``shift_tuning="calibration"`` it never depends on the ratios,
        so this equals calibrating again with them and the same ``rng``,
        without growing the forest again (with ``shift_tuning="target"`` the
        forest stays the one tuned for the calibration's ratios). Either way
        the guarantee for the new ratios is exact: the forest depends on
        localizer points only. Comparing a known and an estimated ratio, or
        weighted and unweighted, costs one fit.

        Examples
        --------
        >>> import numpy as np
        >>> from confrf.calibrators import LCPForestCalibrator
        >>> from confrf.localizers import ForestLocalizer
        >>> rng = np.random.default_rng(0)
        >>> X = rng.uniform(size=(400, 2)); V = X[:, 0] * rng.exponential(size=400)
        >>> cal = LCPForestCalibrator(ForestLocalizer(n_estimators=20, min_samples_leaf=10, max_features=1.0))
        >>> cal = cal.calibrate(X, V, alpha=0.1, rng=rng)
        >>> w = np.exp(2 * X[:, 0])
        >>> cal.reweighted(w).thresholds(X[:2], 0.1, likelihood_ratio=w[:2]).t.shape
        (2,)
        """
        out = copy.copy(self)
        w = None
        if likelihood_ratio is not None:
            w = ratio_values(likelihood_ratio, self.n_calibration_, "the calibration rows")[self.conformal_rows_]
        out._set_ratios(w)
        return out

    def _prepare_tuning(self, alpha: float, n_grow: int, n_conformal: int) -> None:
        # the "tune" rule scores candidates at the calibration's alpha, with the conformal mass its leaves will get
        self.localizer.alpha = alpha
        self.localizer.conformal_ratio = n_conformal / n_grow

    def thresholds(self, X, alpha, likelihood_ratio=None) -> Thresholds:
        X = as_float_matrix(X, "X")
        shift = self.shift_
        w_test = new_row_ratios(likelihood_ratio, X.shape[0], shift is not None)
        threads = kernel_threads(self.n_jobs)
        if shift is None:
            return Thresholds(*self.localizer.thresholds(X, required_count(alpha, self.n_conformal_), threads))
        assert w_test is not None and self.shift_index_ is not None  # both set for a weighted calibration
        # rows whose ratio equals every calibration ratio have p_i = 1/(n+1): the exact integer rule
        plain = shift.unweighted_rows(w_test)
        t, closed, level = np.full(X.shape[0], np.inf), np.ones(X.shape[0], dtype=bool), np.ones(X.shape[0])
        if plain.any():
            m_req = required_count(alpha, self.n_conformal_)
            t[plain], closed[plain], level[plain] = self.localizer.thresholds(X[plain], m_req, threads)
        rest = ~plain
        if rest.any():
            req = shift.requirement(alpha, w_test[rest])
            t[rest], closed[rest], level[rest] = weighted_forest_thresholds(
                self.localizer, self.shift_index_, X[rest], req, threads
            )
        return Thresholds(t, closed, level)

    def thresholds_in_batches(self, X, alpha, batch) -> Thresholds | None:
        # rows sharing leaves are computed together (confrf/localizers/batched.py); the weighted rule's thresholds
        # also depend on each row's likelihood ratio, so a weighted calibration keeps the chunks
        if self.shift_ is not None:
            return None
        X = as_float_matrix(X, "X")
        m_req = required_count(alpha, self.n_conformal_)
        return Thresholds(*batched_thresholds(self.localizer, X, m_req, kernel_threads(self.n_jobs), int(batch)))

    def guarantee(self, alpha) -> Guarantee:
        if self.localizer.honest:
            how = (
                "no localization, decided from the sizes alone: the thresholds are split conformal's"
                if getattr(self.localizer, "skipped_", None)
                else "no localization was chosen, on disjoint data: the thresholds are split conformal's"
                if self.localizer.no_localization
                else "sigma(x) from a forest grown on disjoint data, uniform weights: normalized split conformal"
                if self.localizer.normalized
                else "the forest was grown on disjoint data"
            )
            return Guarantee(
                "marginal",
                True,
                f"P(Y in interval) >= {1 - alpha:g} exactly in finite samples, if the conformal calibration and test "
                f"points are exchangeable ({how}).",
            )
        return Guarantee(
            "none",
            False,
            f"Not certified: the forest was grown on the calibration points themselves (honest=False, the paper's "
            f"variant), so the finite-sample guarantee P(Y in interval) >= {1 - alpha:g} is not proved.",
        )

    def sizes(self) -> dict[str, int]:
        choice = getattr(self.localizer, "source_choice_", None)
        if choice is not None:
            out = {"localizer": self.n_localizer_, "conformal": self.n_conformal_}
            if not self.localizer.no_localization and choice.chosen != "calibration":
                out["forest rows"] = self.n_grow_  # the training part's rows, with the localizer part's if pooled
            return out
        if self.localizer_source_ != "calibration":
            return {"localizer (training)": self.n_grow_, "conformal": self.n_conformal_}
        if getattr(self.localizer, "skipped_", None):  # no localizer part: every point calibrates
            return {"calibration": self.n_conformal_}
        if self.localizer.honest:
            return {"localizer": self.n_grow_, "conformal": self.n_conformal_}
        return {"calibration": self.n_conformal_}

    def describe(self) -> dict[str, Any]:
        out = self.localizer.describe()
        choice = getattr(self.localizer, "source_choice_", None)
        if choice is not None:
            out["forest_grown_on"] = (
                f"nothing (no localization; source: {choice.text()})"
                if self.localizer.no_localization
                else choice.text()
            )
        elif self.localizer_source_ != "calibration":
            out["forest_grown_on"] = self.localizer_source_
        elif self.training_note_ is not None:
            grown = (
                "nothing (no localization, decided from the sizes alone)"
                if getattr(self.localizer, "skipped_", None)
                else f"localizer part of the calibration set ({self.n_grow_:,} rows)"
            )
            out["forest_grown_on"] = f"{grown}; {self.training_note_}"
        return out


#: options of guarantee="pac" (calibrators/pac.py); None means forest_setup.PAC_DEFAULTS
PAC_OPTIONS = tuple(PAC_DEFAULTS)
#: how the honest forest grows (confrf/localizers/forest.py): what grows the trees, each tree's share of the rows
GROWTH_OPTIONS: dict[str, Any] = {"forest_backend": "sklearn", "max_samples": None}


def _make_lcp_rf(est: Any, opts: dict[str, Any], seed: int | None) -> Calibrator:
    split.check_localizer_data(opts["localizer_data"])
    if opts["localizer_data"] == "training" and (not est.honest or est.prefit):
        raise InputError(
            "localizer_data='training' grows an honest forest on the training part's out-of-fold scores: it needs "
            "the training data (not prefit=True) and honest=True; use localizer_data='calibration' otherwise."
        )
    shift_tuning = split.check_shift_tuning(opts["shift_tuning"])
    cap = split.check_max_localizer_size(opts["max_localizer_size"])
    growth = {k: opts[k] for k in GROWTH_OPTIONS if opts[k] != GROWTH_OPTIONS[k]}  # given away from the default
    for name in ["max_localizer_size"] * (opts["max_localizer_size"] != "auto") + list(growth):
        if opts["guarantee"] == "pac" or not est.honest:
            raise InputError(
                f"option {name!r} applies only to the honest LCP-RF with guarantee='marginal' (it shapes how the "
                "forest grows on the localizer rows); drop it, or use honest=True and guarantee='marginal'."
            )
    if opts["guarantee"] == "pac":
        if shift_tuning != "calibration":
            raise InputError(
                "shift_tuning applies to covariate shift, which guarantee='pac' does not weight for; drop it or use "
                "guarantee='marginal'."
            )
        if opts["scale"] is not None:
            raise InputError(
                "option 'scale' applies only with guarantee='marginal' (the PAC correction works on "
                "the raw scores); drop it or use guarantee='marginal'."
            )
        return get_variant("lcp-rf", "pac")(est, opts, seed)  # registered by calibrators/pac.py
    if opts["guarantee"] != "marginal":
        raise InputError(f"guarantee must be 'marginal' or 'pac', got {opts['guarantee']!r}.")
    stray = [k for k in PAC_OPTIONS if opts[k] is not None]
    if stray:
        raise InputError(f"option(s) {stray} apply only with guarantee='pac'; add guarantee='pac' or drop them.")
    scale = "tune" if opts["scale"] is None else opts["scale"]  # checked by the localizer when it grows
    localizer = make_forest_localizer(est, seed, tune=True, scale=scale)
    localizer.forest_backend = check_forest_backend(opts["forest_backend"])
    localizer.max_samples = check_max_samples(opts["max_samples"], localizer.bootstrap)
    cal = LCPForestCalibrator(
        localizer,
        est.localizer_size,
        est.n_jobs,
        max_localizer_size=cap,
        shift_tuning=shift_tuning,
        choose_source=opts["localizer_data"] == "auto",
    )
    cal.needs_reference = opts["localizer_data"] == "training"  # never fall back silently to the localizer part
    return cal


register(
    MethodSpec(
        "lcp-rf",
        _make_lcp_rf,
        # scale None: "tune" (guarantee="marginal"); PAC refuses an explicit one
        options={
            "guarantee": "marginal",
            **dict.fromkeys(PAC_OPTIONS),
            # "auto": the training rows compete only while the localizer part is below TRAINING_GATE rows (their
            # out-of-fold fits run only then), so large calibrations cost what "calibration" costs
            # (docs/benchmarks/condcov.md "Choosing the rule")
            "localizer_data": "auto",
            "cv": 5,
            "scale": None,
            "shift_tuning": "calibration",
            "max_localizer_size": "auto",
            **GROWTH_OPTIONS,
        },
        title="LCP-RF (exact localized conformal, forest weights)",
        # "auto" keeps the training part's out-of-fold scores when its tuning can use them (honest, unweighted)
        needs_training=lambda opts: (
            opts["localizer_data"] == "training"
            or (
                opts["localizer_data"] == "auto"
                and opts["guarantee"] == "marginal"
                and opts["shift_tuning"] == "calibration"
            )
        ),
        # a forest grown on the training part leaves every calibration point conformal: no localizer share
        settings=lambda opts: (
            FOREST_SETTINGS - {"localizer_size"} if opts["localizer_data"] == "training" else FOREST_SETTINGS
        ),
        classification=True,
        shift=True,
    )
)
