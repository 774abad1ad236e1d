"""Calibration and prediction past one machine, on Dask.

Prediction is independent across rows, so a fitted (picklable) result is sent
once to the Dask workers and each partition of a Dask DataFrame is predicted
where it lives, with ``map_partitions``.

Calibration (LCP-RF) needs the rows in three ways, which :class:`DaskRows`
serves to :meth:`confrf.calibrators.lcp_rf.LCPForestCalibrator.calibrate_rows`:
every row's score (computed on the workers, partition by partition, with the
fitted base model sent once; 8 bytes a row come back), the localizer part
(at most ``max_localizer_size`` rows, gathered on the client, where the forest
grows) and, for every conformal row, its leaves in the grown forest (looked
up on the workers; the forest is sent once, and the leaf ids and scores come
back to build the index on the client). The random choices read only the
number of rows and the seed (one permutation of known length, see
:func:`confrf.calibrators.base.random_split`), and every per-row step is the
in-memory one applied to a partition, so the same data and seed give the
same fit as rows in memory.

Nothing here schedules work itself: Dask's scheduler does (a
``dask.distributed`` cluster when a ``Client`` is active, the local threaded
scheduler otherwise).

Needs the optional extra ``pip install "confrf[dask]"``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from . import _calibration_record as record
from ._levels import resolve_alpha, warns_level_once
from ._validation import as_float_matrix, as_float_vector, check_alpha
from .exceptions import InputError

__all__ = ["predict", "DaskRows", "is_dask_collection"]


def is_dask_collection(obj: Any) -> bool:
    """Whether ``obj`` is a Dask collection (DataFrame, Series, Array), without importing Dask otherwise."""
    return type(obj).__module__.split(".")[0] in ("dask", "dask_expr")


@warns_level_once
def predict(
    result: Any, newdata: Any, alpha: float | None = None, *, level: float | None = None, **options: Any
) -> Any:
    """Predict every partition of a Dask DataFrame; returns a lazy Dask DataFrame.

    ``result.predict(ddf)`` calls this for a Dask DataFrame ``ddf``.

    Parameters
    ----------
    result : ConformalResult or ClassificationResult
        A fitted result from :func:`confrf.conformal` (sent to the workers once).
    newdata : dask.dataframe.DataFrame
        Rows to predict; needs the predictors of the formula.
    alpha : float, optional
        As in the result's ``predict``.
    level : float, optional
        R's name for 1 - alpha, instead of ``alpha``.
    **options
        Further arguments of the result's ``predict``: ``details``,
        ``max_width``, ``interval`` and ``scale`` for :meth:`ConformalResult.predict`.

    Returns
    -------
    dask.dataframe.DataFrame
        Same partitions and index as ``newdata``; columns as the result's
        ``predict`` (intervals, or prediction sets for a class label). Nothing runs until ``.compute()``
        (or ``.to_parquet(...)``, ...).

    Examples
    --------
    >>> import dask.dataframe as dd
    >>> import confrf as cf
    >>> sim = cf.datasets.make_sim(1500, random_state=0)
    >>> res = cf.lcp_rf(sim.formula, data=sim.frame, random_state=0)
    >>> ddf = dd.from_pandas(sim.frame.head(40), npartitions=2)
    >>> out = res.predict(ddf)          # lazy
    >>> out.compute().shape
    (40, 3)
    """
    import dask
    import dask.dataframe as dd

    if not isinstance(newdata, dd.DataFrame):
        raise TypeError(
            f"newdata must be a dask.dataframe.DataFrame, got {type(newdata).__name__}; "
            "for a pandas DataFrame call result.predict(newdata)."
        )
    alpha = resolve_alpha(alpha, level)
    if alpha is not None:
        check_alpha(alpha)  # now, not when the graph runs
    # one task holds the fitted result; every partition depends on it instead of embedding a copy
    fitted = dask.delayed(result._for_prediction(), pure=True)  # not the training data the result refers to
    return newdata.map_partitions(
        _predict_partition,
        fitted,
        alpha,
        options,
        meta=result._predict_meta(newdata._meta.index, **options),  # checks the options now, not when the graph runs
    )


def _predict_partition(part: pd.DataFrame, result: Any, alpha: float | None, options: dict[str, Any]) -> pd.DataFrame:
    # one worker thread per partition: no nested parallelism, no progress bar
    return result.predict(part, alpha, n_jobs=1, progress=False, **options)


# -- calibration --------------------------------------------------------------
class DaskRows:
    """Calibration rows in Dask partitions, as LCP-RF's calibration reads them (``CalibrationRows``).

    Built by :meth:`from_arrays` or :meth:`from_formula`: each partition
    becomes (X_p, V_p) on the workers, persisted there (held in worker memory
    while the calibration runs), and only the scores come back.
    """

    def __init__(self, parts: list[Any], scores: np.ndarray, lengths: np.ndarray, n_features: int) -> None:
        self.parts, self.scores, self.n_features = parts, scores, int(n_features)
        self.offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)

    @property
    def n(self) -> int:
        return int(self.offsets[-1])

    @classmethod
    def _build(cls, pieces: list[Any], model: Any, score: Any) -> DaskRows:
        import dask

        model_d = dask.delayed(model, pure=True)  # one task holds the model; every partition depends on it
        parts = dask.persist(*[dask.delayed(_with_scores)(p, model_d, score) for p in pieces])
        meta = dask.compute(*[dask.delayed(_scores_of)(p) for p in parts])
        if not meta:
            raise InputError("the Dask calibration data have no partitions.")
        widths = {m[1] for m in meta if m[0].shape[0] > 0} or {meta[0][1]}
        if len(widths) > 1:
            raise InputError(f"the partitions of the calibration data have different numbers of columns: {widths}.")
        scores = np.concatenate([m[0] for m in meta]) if meta else np.empty(0)
        return cls(list(parts), scores, np.array([m[0].shape[0] for m in meta]), widths.pop())

    @classmethod
    def from_arrays(cls, X: Any, y: Any, model: Any, score: Any) -> DaskRows:
        """Rows of a Dask DataFrame or Array ``X`` and a Dask Series or Array ``y`` with the same partitions."""
        import dask.array as da
        import dask.dataframe as dd

        def pieces(obj: Any, what: str) -> list[Any]:
            if isinstance(obj, (dd.DataFrame, dd.Series)):
                return list(obj.to_delayed())
            if isinstance(obj, da.Array):
                if obj.ndim == 2:
                    obj = obj.rechunk({1: -1})  # whole rows in every block
                return list(obj.to_delayed().ravel())
            raise InputError(
                f"{what} is a {type(obj).__name__}; with Dask calibration data both X and y must be Dask "
                "collections (DataFrame or Array, and Series or Array) with the same partitions."
            )

        xs, ys = pieces(X, "X"), pieces(y, "y")
        if len(xs) != len(ys):
            raise InputError(
                f"X has {len(xs)} partitions and y {len(ys)}; give them the same partitions (e.g. take both from one "
                "DataFrame: ddf[columns], ddf[response])."
            )
        import dask

        return cls._build([dask.delayed(_array_part)(a, b) for a, b in zip(xs, ys)], model, score)

    @classmethod
    def from_formula(cls, data: Any, design: Any, model: Any, score: Any) -> DaskRows:
        """Rows of a Dask DataFrame through a fitted formula (design and response built on the workers)."""
        import dask

        return cls._build([dask.delayed(_formula_part)(d, design) for d in data.to_delayed()], model, score)

    def _by_partition(self, positions: np.ndarray) -> list[tuple[int, np.ndarray]]:
        # ascending global positions -> (partition, local positions) for the partitions that hold some
        cut = np.searchsorted(positions, self.offsets)
        return [
            (j, positions[cut[j] : cut[j + 1]] - self.offsets[j]) for j in range(len(self.parts)) if cut[j + 1] > cut[j]
        ]

    def _gather(self, fn: Callable[..., Any], positions: np.ndarray, *extra: Any) -> list[Any]:
        import dask

        return list(
            dask.compute(*[dask.delayed(fn)(self.parts[j], loc, *extra) for j, loc in self._by_partition(positions)])
        )

    def take(self, positions: np.ndarray) -> np.ndarray:
        got = self._gather(_take, np.asarray(positions, dtype=np.int64))
        return np.concatenate(got) if got else np.empty((0, self.n_features))

    def lookup(self, localizer: Any, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        import dask

        from .localizers.forest import stack_lookups

        positions = np.asarray(positions, dtype=np.int64)
        loc_d = dask.delayed(localizer, pure=True)  # the grown forest, sent once
        got = self._gather(_lookup, positions, loc_d)
        got.reverse()
        parts = (got.pop() for _ in range(len(got)))  # each part freed once copied
        return stack_lookups(parts, positions.shape[0], localizer.n_trees)


def _array_part(X: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
    X, y = as_float_matrix(X, "X"), as_float_vector(y, "y")
    if X.shape[0] != y.shape[0]:
        raise InputError(f"a partition of X has {X.shape[0]} rows and the matching one of y {y.shape[0]}.")
    return X, y


def _formula_part(part: pd.DataFrame, design: Any) -> tuple[np.ndarray, np.ndarray]:
    return design.transform(part, what="calib"), design.response(part, what="calib")


def _with_scores(xy: tuple[np.ndarray, np.ndarray], model: Any, score: Any) -> tuple[np.ndarray, np.ndarray]:
    X, y = xy
    V = score.score(y, model.predict(X)) if X.shape[0] else np.empty(0)
    return X, np.asarray(V, dtype=np.float64)


def _scores_of(xv: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, int]:
    return xv[1], int(xv[0].shape[1])


def _take(xv: tuple[np.ndarray, np.ndarray], local: np.ndarray) -> np.ndarray:
    return xv[0][local]


def _lookup(xv: tuple[np.ndarray, np.ndarray], local: np.ndarray, localizer: Any) -> tuple[np.ndarray, ...]:
    return localizer.lookup(xv[0][local], xv[1][local])


def conformalize_rows(
    est: Any, make_rows: Callable[[], Any], n_features: int, names: np.ndarray | None, groups: Any
) -> Any:
    """Calibrate ``est`` (a :class:`confrf.ConformalRegressor`) on rows held elsewhere (Dask partitions: DaskRows).

    ``make_rows`` builds them once the base model is known; the rest is the
    in-memory calibration, so the same rows and seed give the same fit.
    """
    est._check_options()
    if groups is not None:
        raise InputError("group labels are not taken with Dask calibration data; use a pandas DataFrame or arrays.")
    est._ready_for_calibration(np.empty((0, n_features)), names)
    seeds = est._seeds()
    calibrator = est._make_calibrator(seeds[2])
    calibrator.refuse_rows()  # before any partition is read
    t0 = time.perf_counter()
    rows = make_rows()
    est._hand_reference(calibrator)
    est.calibrator_ = calibrator.calibrate_rows(rows, alpha=est._alpha(), rng=np.random.default_rng(seeds[1]))
    est.conformalize_time_ = time.perf_counter() - t0
    keep = np.arange(rows.n) if rows.n <= record.DIAGNOSTIC_ROWS else record.diagnostic_rows(rows.n, seeds[3])
    record.keep_calibration_rows(est, rows.take(keep), rows.scores, None, seeds[3], rows.n)
    est.ratio_model_ = None
    return est
