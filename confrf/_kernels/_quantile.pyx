# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Weighted quantiles, Q(a; F) = inf{t : F(t) >= a}, of a discrete distribution."""

import numpy as np
cimport numpy as cnp
from libc.stdlib cimport malloc, free, qsort
from libc.math cimport INFINITY

cnp.import_array()


cdef struct RankW:
    cnp.int64_t rank
    double w


cdef int _cmp_rank(const void* a, const void* b) noexcept nogil:
    cdef cnp.int64_t x = (<const RankW*> a).rank, y = (<const RankW*> b).rank
    return (x > y) - (x < y)


cdef double _quantile_sorted(const double* values, const double* cum, Py_ssize_t n,
                             double a, double tol) noexcept nogil:
    """First value whose cumulative mass reaches a (within tol); -inf for a <= 0."""
    cdef Py_ssize_t lo = 0, hi = n, mid
    if a <= 0.0:
        return -INFINITY
    while lo < hi:
        mid = (lo + hi) >> 1
        if cum[mid] >= a - tol:
            hi = mid
        else:
            lo = mid + 1
    if lo == n:
        return INFINITY
    return values[lo]


cpdef double weighted_quantile(const double[::1] values, const double[::1] weights,
                               double a, double tol=1e-12):
    """Q(a; F) for F = sum_j weights_j * delta_{values_j} (values in any order).

    Returns ``-inf`` for ``a <= 0`` and ``+inf`` when ``a`` exceeds the total
    mass. Cumulative sums within ``tol`` of ``a`` count as reaching it.
    """
    cdef Py_ssize_t n = values.shape[0], j
    order = np.argsort(np.asarray(values), kind="stable")
    sv = np.ascontiguousarray(np.asarray(values)[order])
    cum = np.ascontiguousarray(np.cumsum(np.asarray(weights)[order]))
    cdef double[::1] svv = sv
    cdef double[::1] cv = cum
    if n == 0:
        return -INFINITY if a <= 0 else INFINITY
    return _quantile_sorted(&svv[0], &cv[0], n, a, tol)


def csr_row_quantiles(const cnp.int64_t[::1] indptr, const cnp.int32_t[::1] indices,
                      const double[::1] data, const double[::1] values,
                      qs, double tol=1e-12):
    """Weighted quantiles of ``values`` under each CSR row of weights.

    ``qs`` is 1-D (the same levels for every row) or 2-D of shape
    (n_rows, n_levels) (its own levels for every row). Returns an
    (n_rows, n_levels) array; a level above a row's mass gives ``inf``.
    """
    cdef Py_ssize_t m = indptr.shape[0] - 1
    levels = np.asarray(qs, dtype=np.float64)
    if levels.ndim == 1:
        levels = np.broadcast_to(levels, (m, levels.shape[0]))  # stride 0: no copy
    elif levels.ndim != 2 or levels.shape[0] != m:
        raise ValueError(f"qs must be 1-D or have one row per CSR row ({m}), got shape {levels.shape}.")
    return _csr_row_quantiles(indptr, indices, data, values, levels, tol)


cdef _csr_row_quantiles(const cnp.int64_t[::1] indptr, const cnp.int32_t[::1] indices,
                        const double[::1] data, const double[::1] values,
                        const double[:, :] qs, double tol):
    cdef Py_ssize_t m = indptr.shape[0] - 1, nq = qs.shape[1], n = values.shape[0]
    cdef Py_ssize_t q, e, a, cnt, j
    cdef double[:, ::1] out = np.empty((m, nq), dtype=np.float64)
    rank_np = np.empty(n, dtype=np.int64)
    order = np.argsort(np.asarray(values), kind="stable")
    rank_np[order] = np.arange(n)
    cdef cnp.int64_t[::1] rank = rank_np
    sorted_np = np.ascontiguousarray(np.asarray(values)[order])
    cdef double[::1] svals = sorted_np
    cdef Py_ssize_t maxrow = 0
    for q in range(m):
        if indptr[q + 1] - indptr[q] > maxrow:
            maxrow = indptr[q + 1] - indptr[q]
    cdef RankW* buf = <RankW*> malloc((maxrow + 1) * sizeof(RankW))
    cdef double* vals = <double*> malloc((maxrow + 1) * sizeof(double))
    cdef double* cum = <double*> malloc((maxrow + 1) * sizeof(double))
    if buf == NULL or vals == NULL or cum == NULL:
        free(buf); free(vals); free(cum)
        raise MemoryError()
    with nogil:
        for q in range(m):
            cnt = indptr[q + 1] - indptr[q]
            for e in range(cnt):
                buf[e].rank = rank[indices[indptr[q] + e]]
                buf[e].w = data[indptr[q] + e]
            qsort(buf, cnt, sizeof(RankW), _cmp_rank)
            for e in range(cnt):
                vals[e] = svals[buf[e].rank]
                cum[e] = buf[e].w + (cum[e - 1] if e > 0 else 0.0)
            for a in range(nq):
                out[q, a] = _quantile_sorted(vals, cum, cnt, qs[q, a], tol)
    free(buf); free(vals); free(cum)
    return np.asarray(out)
