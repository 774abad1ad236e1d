"""Prediction past one machine, on Dask.

Prediction is independent across rows, so a fitted (picklable) result is sent
once to the Dask workers and each partition of a Dask DataFrame is predicted
where it lives, with ``map_partitions``. Nothing here schedules work itself:
Dask's scheduler does (a ``dask.distributed`` cluster when a ``Client`` is
active, the local threaded scheduler otherwise).

Needs the optional extra ``pip install "confrf[dask]"``.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ._levels import resolve_alpha
from ._validation import check_alpha

__all__ = ["predict"]


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
