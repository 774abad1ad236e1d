"""Thread counts, and prediction in row chunks run in parallel with a progress bar.

``n_jobs`` governs every thread pool confrf starts: joblib threads, the
kernels' OpenMP threads, and the OpenMP/BLAS pools of the base models it fits
and predicts with (HistGradientBoosting, statsmodels' linear algebra), through
threadpoolctl. ``n_jobs=None`` means one thread everywhere: on a shared machine
an OpenMP pool as wide as the machine busy-waits against other jobs and can run
20 times slower than a single thread.

Prediction is independent across rows, so large inputs are cut into chunks:
memory stays bounded by a few chunks at a time, and the chunks run on joblib's
threading backend (the Cython kernels, scikit-learn's tree lookups and numpy
release the GIL). While chunks run in parallel, each chunk's kernels use one
OpenMP thread, so the machine is never oversubscribed.
"""

from __future__ import annotations

import functools
import os
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

import numpy as np

from ._validation import check_n_jobs

#: rows per chunk unless the caller says otherwise: a 10,000 x 100 leaf matrix is 8 MB
DEFAULT_CHUNK_SIZE = 10_000
#: seconds a prediction must run before its progress bar appears
PROGRESS_DELAY = 2.0

_local = threading.local()


def resolve_jobs(n_jobs: int | None) -> int:
    """joblib's convention: None -> 1, -1 -> all cores, -2 -> all but one."""
    n_jobs = check_n_jobs(n_jobs)
    if n_jobs is None:
        return 1
    if n_jobs < 0:
        return max(1, (os.cpu_count() or 1) + 1 + n_jobs)
    return n_jobs


def kernel_threads(n_jobs: int | None) -> int:
    """OpenMP threads for a kernel call: ``n_jobs``, unless a prediction set a limit."""
    limit = getattr(_local, "threads", None)
    return resolve_jobs(n_jobs) if limit is None else limit


_controllers: dict[str, tuple[int, Any]] = {}


def _controller(which: str) -> Any:
    """threadpoolctl controller of the loaded OpenMP (+ BLAS) libraries, rebuilt when modules were imported.

    Building one scans the loaded libraries (milliseconds); a new import may
    load a new OpenMP or BLAS library, hence the ``sys.modules`` count.
    """
    n_modules = len(sys.modules)
    cached = _controllers.get(which)
    if cached is not None and cached[0] == n_modules:
        return cached[1]
    from threadpoolctl import ThreadpoolController

    controller = ThreadpoolController().select(user_api=["openmp", "blas"] if which == "all" else ["openmp"])
    _controllers[which] = (n_modules, controller)
    return controller


def limit_threads(n_jobs: int | None) -> Any:
    """Context manager: OpenMP and BLAS pools use at most ``resolve_jobs(n_jobs)`` threads inside it.

    OpenMP's limit belongs to the calling thread, so worker threads set their
    own. BLAS's limit is process-wide: only the main thread sets it, and worker
    threads leave it to the caller that started them.
    """
    n = resolve_jobs(n_jobs)
    main = threading.current_thread() is threading.main_thread()
    return _controller("all" if main else "openmp").limit(limits=n)


F = TypeVar("F", bound=Callable[..., Any])


def governs_threads(method: F) -> F:
    """Run an estimator method under :func:`limit_threads` of its ``n_jobs`` argument, else ``self.n_jobs``."""

    @functools.wraps(method)
    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        n_jobs = kwargs.get("n_jobs")
        with limit_threads(self.n_jobs if n_jobs is None else n_jobs):
            return method(self, *args, **kwargs)

    return run  # type: ignore[return-value]


@contextmanager
def _kernel_threads_set_to(threads: int) -> Iterator[None]:
    # thread-local: parallel chunks each run their kernels on 1 thread
    old = getattr(_local, "threads", None)
    _local.threads = threads
    try:
        yield
    finally:
        _local.threads = old


def row_chunks(n_rows: int, chunk_size: int | None) -> list[slice]:
    """Consecutive slices of at most ``chunk_size`` rows covering ``range(n_rows)``."""
    size = DEFAULT_CHUNK_SIZE if chunk_size is None else int(chunk_size)
    if size < 1:
        raise ValueError(f"chunk_size must be a positive number of rows, got {chunk_size!r}.")
    # zero rows still make one (empty) chunk, so callers get arrays of the right kind back
    return [slice(a, min(a + size, n_rows)) for a in range(0, n_rows, size)] or [slice(0, 0)]


def map_row_chunks(
    fn: Callable[[slice], Any],
    n_rows: int,
    *,
    chunk_size: int | None = None,
    n_jobs: int | None = None,
    progress: bool | None = None,
    desc: str = "predict",
) -> list[Any]:
    """``[fn(chunk) for chunk in row_chunks(...)]``, in order, possibly in parallel.

    Parameters
    ----------
    fn : callable
        Called with a slice of rows; must be thread-safe.
    n_rows, chunk_size
        See :func:`row_chunks`.
    n_jobs : int or None
        Chunks run on this many threads (joblib threading backend), each
        with single-threaded kernels and models (OpenMP and BLAS). With a
        single chunk the kernels themselves use ``n_jobs`` threads instead.
    progress : bool or None
        None (default): a tqdm bar on stderr that appears only if the work
        lasts longer than ``PROGRESS_DELAY`` seconds; True: always; False: never.
    """
    chunks = row_chunks(n_rows, chunk_size)
    jobs = min(resolve_jobs(n_jobs), len(chunks))
    bar = _progress_bar(n_rows, progress, desc) if len(chunks) > 1 or progress else None
    out: list[Any] = []
    try:
        if jobs == 1:
            with _kernel_threads_set_to(resolve_jobs(n_jobs)):
                for c in chunks:
                    out.append(fn(c))
                    _advance(bar, c)
        else:
            from joblib import Parallel, delayed

            def run(c: slice) -> Any:
                with _kernel_threads_set_to(1), limit_threads(1):
                    return fn(c)

            with limit_threads(1):  # BLAS is process-wide: one thread per chunk while chunks run in parallel
                results = Parallel(n_jobs=jobs, backend="threading", return_as="generator")(
                    delayed(run)(c) for c in chunks
                )
                for c, r in zip(chunks, results):
                    out.append(r)
                    _advance(bar, c)
    finally:
        if bar is not None:
            bar.close()
    return out


def _progress_bar(total: int, progress: bool | None, desc: str) -> Any:
    if progress is False:
        return None
    try:
        from tqdm import tqdm
    except ImportError:  # tqdm is a dependency; a stripped environment only loses the bar
        return None
    return tqdm(
        total=total, desc=desc, unit="rows", file=sys.stderr, leave=False, delay=0.0 if progress else PROGRESS_DELAY
    )


def _advance(bar: Any, c: slice) -> None:
    if bar is not None:
        bar.update(c.stop - c.start)


def concat_chunks(parts: Sequence[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """Join per-chunk dicts of row arrays into one dict."""
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
