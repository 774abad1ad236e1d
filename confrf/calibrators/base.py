"""What a calibrator is: conformal calibration data in, per-row thresholds out."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .._validation import min_calibration_size
from ..exceptions import InputError, NotFittedError
from ..localizers.forest import ForestLocalizer
from ..shift.value import ShiftRatio
from .grouping import check_group_labels

if TYPE_CHECKING:
    from ..shift.weighted import ShiftWeights

#: the score's inversion at the predicted rows: thresholds t -> (lower, upper) bounds
Inversion = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class Thresholds:
    """Per-row score thresholds: the set of scores is (-inf, t] or (-inf, t).

    ``level`` is the localizer mass at or below t (the alpha-tilde diagnostic);
    1 where t is infinite.
    """

    t: np.ndarray
    closed: np.ndarray
    level: np.ndarray


@dataclass(frozen=True)
class Guarantee:
    """The coverage statement that holds, in words and as facts.

    Attributes
    ----------
    kind : str
        "marginal", "pac", "groupwise" or "none"; the cross-conformal methods'
        marginal statements are "marginal (1 - 2 alpha)" (jackknife+, J+aB)
        and "marginal (1 - 2 alpha - eps)" (CV+).
    certified : bool
        Whether the statement is proved for this configuration.
    sentence : str
        One sentence for the summary.
    """

    kind: str
    certified: bool
    sentence: str


class Calibrator(ABC):
    """Base class: ``calibrate`` on (X, scores), then ``thresholds`` for new X.

    The estimators (:class:`confrf.ConformalRegressor`, ``ConformalClassifier``)
    use a calibrator only through this class: the four abstract methods, and
    the optional hooks below, whose defaults describe a calibrator that weights
    nothing, takes no group labels, learns nothing from training rows and
    fits no models of its own. A calibrator that does one of these overrides
    the hook (and sets the matching flag); the estimators never ask a
    calibrator what class it is.

    Lifecycle: ``set_reference`` (optional, training rows) -> ``conformalize``
    (or ``calibrate_rows`` for rows held elsewhere, or ``cross_fit`` for the
    methods that fit their own models) -> ``prepare(alpha)`` -> ``predict_rows``.
    """

    #: method name as used by :func:`confrf.conformal`
    name: str = ""
    #: ``calibrate`` and ``thresholds`` take ``likelihood_ratio=`` (covariate shift, docs/theory.md)
    supports_shift: bool = False
    #: the calibrator sorts rows into groups (``groups_of``, and a ``group`` column from ``predict_rows``)
    has_groups: bool = False
    #: after a calibration weighted for covariate shift: the conformal points' ratios (None: unweighted)
    shift_: ShiftWeights | None = None

    @property
    def uses_labels(self) -> bool:
        """``calibrate`` and ``thresholds`` take ``labels=``, one group label per row (``groups="labels"``)."""
        return False

    def shift_refusal(self) -> str:
        """Why this configuration does not weight for covariate shift (asked only when ``supports_shift`` is False)."""
        from .registry import shift_methods  # the registry imports this module

        *others, last = (repr(m) for m in shift_methods())
        return (
            f"method {self.name!r} has no covariate-shift weighting; use method {', '.join(others)} or {last}, whose "
            "weighted versions are exact."
        )

    @abstractmethod
    def calibrate(self, X: np.ndarray, scores: np.ndarray, *, alpha: float, rng: np.random.Generator) -> Calibrator:
        """Learn from calibration rows; ``alpha`` is only used to check sizes."""

    @abstractmethod
    def thresholds(self, X: np.ndarray, alpha: float) -> Thresholds:
        """Thresholds for rows of X at miscoverage ``alpha``."""

    @abstractmethod
    def guarantee(self, alpha: float) -> Guarantee:
        """The coverage statement for ``alpha``."""

    @abstractmethod
    def sizes(self) -> dict[str, int]:
        """Number of points in every calibration part."""

    def describe(self) -> dict[str, Any]:
        """Settings worth printing (e.g. forest settings)."""
        return {}

    def prepare(self, alpha: float) -> None:  # noqa: B027 - an optional hook: most calibrators need nothing here
        """Work done once per ``alpha`` (e.g. a correction learned on held-out points).

        Called before rows are predicted, possibly in parallel chunks, so that
        ``thresholds`` only reads state.
        """

    # -- optional hooks: the estimators' entries, with the defaults of a plain calibrator ------------------
    #: whether :meth:`set_reference` takes the scores as a callable, called only if they are used (LCP-RF's
    #: ``localizer_data="auto"``: the training rows' out-of-fold fits run only below its size gate)
    defers_reference: bool = False

    def set_reference(self, X: np.ndarray, scores: np.ndarray, source: str = "training part") -> None:
        """Learn from training rows: ``X`` and their out-of-fold ``scores`` (before ``conformalize``).

        Called by ``fit`` for the methods whose spec says ``needs_training``
        (:class:`confrf.calibrators.registry.MethodSpec`); ``source`` names the
        rows for the summary. Rows the calibrator learns from here are
        disjoint from the conformal points. The default refuses: this
        calibrator does not learn from training rows.
        """
        raise InputError(
            f"method {self.name!r} does not learn from training rows; set_reference applies to the methods "
            "whose registration says needs_training."
        )

    def label_kwargs(self, groups: Any, n_rows: int) -> dict[str, Any]:
        """``{"labels": ...}`` for ``conformalize`` and ``predict_rows``, checked; required iff ``uses_labels``."""
        if groups is None:
            if self.uses_labels:
                raise InputError(
                    "this method calibrates within given groups (groups='labels'): pass groups=<one label "
                    "per row> to conformalize() and to every prediction."
                )
            return {}
        if not self.uses_labels:
            raise InputError(
                f"groups= labels apply only to methods {_named(' and ')} with options={{'groups': 'labels'}}."
            )
        return {"labels": check_group_labels(groups, n_rows)}

    def conformalize(
        self,
        X: np.ndarray,
        scores: np.ndarray,
        *,
        alpha: float,
        rng: np.random.Generator,
        labels: Any = None,
        likelihood_ratio: ShiftRatio | np.ndarray | None = None,
    ) -> Calibrator:
        """The estimators' calibration entry: ``calibrate`` with the keywords given (None: not given).

        ``labels`` (from :meth:`label_kwargs`, or class codes) go only to a
        calibrator that ``uses_labels``; ``likelihood_ratio`` (a :class:`confrf.shift.ShiftRatio`,
        or numbers the calibrator reads) only to one that ``supports_shift``, else the refusal says why and
        what to use.
        """
        kw: dict[str, Any] = {} if labels is None else {"labels": labels}
        if likelihood_ratio is not None:
            if not self.supports_shift:
                raise InputError(f"likelihood_ratio (covariate shift) cannot be used here: {self.shift_refusal()}")
            kw["likelihood_ratio"] = likelihood_ratio
        return self.calibrate(X, scores, alpha=alpha, rng=rng, **kw)

    def calibrate_rows(self, rows: Any, *, alpha: float, rng: np.random.Generator) -> Calibrator:
        """Calibrate on rows held elsewhere (:class:`confrf.dask.DaskRows`); the default takes rows in memory only."""
        raise InputError(self._rows_refusal())

    def refuse_rows(self) -> None:
        """Raise unless this calibrator has its own :meth:`calibrate_rows` (asked before any row is read)."""
        if type(self).calibrate_rows is Calibrator.calibrate_rows:
            raise InputError(self._rows_refusal())

    def _rows_refusal(self) -> str:
        return (
            f"method {self.name!r} calibrates rows in memory only; Dask calibration data are taken by "
            "method='lcp-rf' (guarantee='marginal', honest=True). Compute the frame first (ddf.compute()) or "
            "use method='lcp-rf'."
        )

    def cross_fit(self, X: np.ndarray, y: np.ndarray, **fit_args: Any) -> np.ndarray:
        """Fit the models of a method that fits its own (``fits_models``) and return the out-of-fold scores.

        ``fit_args``: ``score``, ``model``, ``alpha``, ``random_state``,
        ``fit_intercept``, ``sample_weight``, as
        :meth:`confrf.calibrators.cross.CrossCalibrator.fit` takes them. The
        default refuses: this calibrator calibrates on a calibration set.
        """
        raise InputError(f"method {self.name!r} does not fit models of its own; calibrate it with conformalize().")

    def thresholds_in_batches(self, X: np.ndarray, alpha: float, batch: int) -> Thresholds | None:
        """The thresholds of all rows of X, computed ``batch`` rows at a time in an order of the calibrator's choice
        (after ``prepare(alpha)``), or None (the default) when rows are best computed chunk by chunk.

        The estimators ask before predicting rows without labels or likelihood ratios; the results must equal
        :meth:`thresholds`'s, bit for bit.
        """
        return None

    def predict_rows(
        self,
        X: np.ndarray,
        alpha: float,
        *,
        interval: Inversion | None = None,
        labels: Any = None,
        likelihood_ratio: ShiftRatio | np.ndarray | None = None,
    ) -> dict[str, np.ndarray]:
        """The per-row prediction entry: ``t``, ``closed``, ``level`` for the rows of X (after ``prepare(alpha)``).

        ``interval``: the score's inversion at these rows; given, the bounds
        ``lwr`` and ``upr`` come first. ``labels`` and ``likelihood_ratio``
        as in :meth:`conformalize`. A groupwise calibrator adds ``group``.
        """
        kw: dict[str, Any] = {} if labels is None else {"labels": labels}
        if likelihood_ratio is not None:
            kw["likelihood_ratio"] = likelihood_ratio
        th = self.thresholds(X, alpha, **kw)
        return threshold_rows(th, interval)

    def groups_of(self, X: np.ndarray, labels: Any = None) -> np.ndarray:
        """Group name of every row of X (the calibrators that have groups)."""
        raise InputError(f"method {self.name!r} has no groups; use method {_named(' or ')}.")

    def forest_localizer(self) -> ForestLocalizer:
        """The fitted forest localizer whose weights give the thresholds (an error for a method without one)."""
        loc = getattr(self, "localizer", None)  # the attribute of every calibrator that has a localizer
        if not isinstance(loc, ForestLocalizer):
            raise NotFittedError("no forest localizer: the method does not use one or conformalize() was not called.")
        return loc


def threshold_rows(th: Thresholds, interval: Inversion | None, **extra: np.ndarray) -> dict[str, np.ndarray]:
    """:meth:`Calibrator.predict_rows`'s columns: the bounds (when ``interval`` is given), ``extra``, the thresholds."""
    bounds = {} if interval is None else dict(zip(("lwr", "upr"), interval(th.t)))
    return {**bounds, **extra, "t": th.t, "closed": th.closed, "level": th.level}


def check_conformal_size(n: int, alpha: float, part: str) -> None:
    """Refuse a calibration part so small that every interval would be infinite."""
    need = min_calibration_size(alpha)
    if n < need:
        raise InputError(
            f"the {part} has {n} point(s); at alpha={alpha} at least {need} are needed for a finite interval "
            "(ceil((1-alpha)(n+1)) <= n). Give more calibration data (calib= or a larger calib_size) or a "
            "larger alpha."
        )


def random_split(
    n: int, share: float, rng: np.random.Generator, part: str, option: str, max_first: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Sorted indices of a random ``share`` of ``n`` points (at most ``max_first``) and of the rest.

    ``part`` names the first part and ``option`` the setting that sizes it, for
    the error raised when the first part would hold fewer than 2 points. The
    split reads only ``n`` and ``rng`` (one permutation of ``n``), so rows
    held in memory or in Dask partitions split alike.
    """
    perm = rng.permutation(n)
    n_first = int(round(share * n))
    if max_first is not None:
        n_first = min(n_first, int(max_first))
    if n_first < 2:
        raise InputError(f"the {part} has {n_first} point(s); give more calibration data or a larger {option}.")
    return np.sort(perm[:n_first]), np.sort(perm[n_first:])


def _named(joined_by: str) -> str:
    """The methods that calibrate within groups, quoted and joined: "'split-g' or 'lcp-rf-g'"."""
    from .registry import group_methods  # the registry imports this module

    return joined_by.join(map(repr, group_methods()))
