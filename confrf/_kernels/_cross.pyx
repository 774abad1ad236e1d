# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Order statistics of cross-conformal (CV+, jackknife+, J+aB) interval ends.

For a new point x and every training row i, a score of the affine kind gives
the ends lo_i = a_lo[g(i)] - R_i * s[g(i)] and hi_i = a_hi[g(i)] + R_i * s[g(i)],
where g(i) is the predictor that left row i out (its fold, itself, or its
out-of-bag aggregate) and a_lo, a_hi, s are that predictor's centres and scale
at x (absolute score: a_lo = a_hi = mu(x), s = 1; CQR: q_lo(x), q_hi(x), 1;
scaled: mu(x), mu(x), sigma(x)). The interval is

    [ the j_lo-th smallest lo_i (-inf when j_lo = 0),
      the j_hi-th smallest hi_i (+inf when j_hi > n) ].

Every end is computed with the same floating-point operations as the score's
``interval`` (one product, one sum), so the bounds equal the slow reference's
bit for bit. Two kernels, one OpenMP thread per block of rows, no n x m matrix:

* ``cross_bounds_rows``: any grouping (jackknife+, J+aB, or CV+ at small n):
  the n ends of a row in a per-thread buffer, then selection (O(n) per row).
* ``cross_bounds_folds``: CV+ with K folds, each fold's scores sorted once:
  within a fold the ends are monotone in R, so the number of ends at or below
  a value is K binary searches, and a bisection over the ordered doubles finds
  the exact order statistic (O(64 K log(n / K)) per row, independent of n).
"""

import numpy as np
cimport numpy as cnp
from cython.parallel cimport prange, parallel
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy
from libc.math cimport INFINITY

cnp.import_array()

ctypedef cnp.int64_t i64


# -- selection -----------------------------------------------------------------
cdef double _select(double* a, Py_ssize_t n, Py_ssize_t k) noexcept nogil:
    """k-th smallest (0-based) of a[0:n], permuting a (Hoare's selection; ties are handled by the partition)."""
    cdef Py_ssize_t l = 0, m = n - 1, i, j
    cdef double x, t, p, q, r
    while l < m:
        # median of three of a[l], a[k], a[m]: a value of the range, so both scans stop inside it
        p = a[l]; q = a[k]; r = a[m]
        if p < q:
            if q < r:
                x = q
            elif p < r:
                x = r
            else:
                x = p
        else:
            if p < r:
                x = p
            elif q < r:
                x = r
            else:
                x = q
        i = l
        j = m
        while True:
            while a[i] < x:
                i += 1
            while x < a[j]:
                j -= 1
            if i <= j:
                t = a[i]; a[i] = a[j]; a[j] = t
                i += 1
                j -= 1
            if i > j:
                break
        if j < k:
            l = i
        if k < i:
            m = j
    return a[k]


cdef void _row_bounds(const double* alo, const double* ahi, const double* s, bint scaled,
                      const i64* group, const double* R, Py_ssize_t n, Py_ssize_t j_lo, Py_ssize_t j_hi,
                      double* buf, double* lower, double* upper, Py_ssize_t* count) noexcept nogil:
    cdef Py_ssize_t i, c = 0
    cdef i64 g
    cdef double u, prod
    if j_lo < 1:
        lower[0] = -INFINITY
    else:
        for i in range(n):
            g = group[i]
            prod = R[i] * s[g] if scaled else R[i]
            buf[i] = alo[g] - prod
        lower[0] = _select(buf, n, j_lo - 1)
    for i in range(n):
        g = group[i]
        prod = R[i] * s[g] if scaled else R[i]
        buf[i] = ahi[g] + prod
    if j_hi > n:
        upper[0] = INFINITY
        count[0] = n
        return
    u = _select(buf, n, j_hi - 1)
    upper[0] = u
    for i in range(n):
        if buf[i] <= u:
            c += 1
    count[0] = c


def cross_bounds_rows(const double[:, ::1] a_lo, const double[:, ::1] a_hi, const double[:, ::1] scale,
                      const i64[::1] group, const double[::1] R, Py_ssize_t j_lo, Py_ssize_t j_hi,
                      int n_threads=1):
    """Interval ends of m rows from the n ends of each (selection in a per-thread buffer).

    Parameters
    ----------
    a_lo, a_hi : (m, G) float64
        Centres of the G predictors at every row.
    scale : (m, G) float64 or (0, 0)
        Their scales; an empty array means 1 (the ends are a -/+ R exactly).
    group : (n,) int64
        Predictor of each training row, in [0, G).
    R : (n,) float64
        Finite out-of-fold scores.
    j_lo, j_hi : int
        Ranks (1-based) of the lower and upper ends; j_lo = 0 gives -inf, j_hi > n gives +inf.

    Returns
    -------
    lower, upper : (m,) float64
    count : (m,) int64
        Number of upper ends at or below ``upper`` (n when it is +inf).
    """
    cdef Py_ssize_t m = a_lo.shape[0], n = R.shape[0], q
    cdef bint scaled = scale.shape[0] > 0
    cdef double[::1] lower = np.empty(m, dtype=np.float64)
    cdef double[::1] upper = np.empty(m, dtype=np.float64)
    cdef Py_ssize_t[::1] count = np.empty(m, dtype=np.intp)
    cdef int[::1] failed = np.zeros(1, dtype=np.intc)
    cdef double* buf
    if m == 0:
        return np.asarray(lower), np.asarray(upper), np.asarray(count).astype(np.int64)
    if n == 0:
        raise ValueError("no training scores")
    with nogil, parallel(num_threads=n_threads):
        buf = <double*> malloc(n * sizeof(double))
        if buf == NULL:
            failed[0] = 1
        else:
            for q in prange(m, schedule="dynamic", chunksize=16):
                _row_bounds(&a_lo[q, 0], &a_hi[q, 0], &scale[q, 0] if scaled else NULL, scaled,
                            &group[0], &R[0], n, j_lo, j_hi, buf, &lower[q], &upper[q], &count[q])
        free(buf)
    if failed[0]:
        raise MemoryError("could not allocate the per-thread scratch space")
    return np.asarray(lower), np.asarray(upper), np.asarray(count).astype(np.int64)


# -- bisection over the ordered doubles (CV+) ------------------------------------------
ctypedef cnp.uint64_t u64

cdef union Bits:
    double d
    i64 i
    u64 u

#: the sign bit, and every other bit
cdef u64 SIGN = (<u64> 1) << 63
cdef u64 MAGNITUDE = SIGN - 1


cdef inline i64 _key(double x) noexcept nogil:
    """An int64 with the order of the doubles (-0.0 and +0.0 share key 0)."""
    cdef Bits b
    b.d = x
    if b.i >= 0:
        return b.i
    return -(<i64> (b.u & MAGNITUDE))


cdef inline double _value(i64 k) noexcept nogil:
    cdef Bits b
    if k >= 0:
        b.i = k
    else:
        b.u = (<u64> (-k)) | SIGN
    return b.d


cdef inline i64 _midpoint(i64 a, i64 b) noexcept nogil:
    # floor((a + b) / 2) without overflow (keys span almost all of int64)
    return (a & b) + ((a ^ b) >> 1)


cdef Py_ssize_t _count_ends(const double* a, const double* s, bint scaled, const double* R, const i64* ptr,
                            Py_ssize_t K, double v, bint upper_end) noexcept nogil:
    """#{i : a[k(i)] + R_i s[k(i)] <= v} (``upper_end``), else #{i : a[k(i)] - R_i s[k(i)] <= v}.

    Within a fold R ascends, so the upper ends grow (those at or below v are a prefix) and the lower ends fall
    (a suffix): one bisection a fold for the boundary.
    """
    cdef Py_ssize_t k, lo, hi, mid, c = 0
    cdef double r, sc
    cdef bint at_most
    for k in range(K):
        sc = s[k] if scaled else 1.0
        lo = ptr[k]
        hi = ptr[k + 1]
        while lo < hi:  # the boundary: the first i of the fold whose end is above v (upper) or at most v (lower)
            mid = (lo + hi) >> 1
            r = R[mid] * sc if scaled else R[mid]
            at_most = (a[k] + r <= v) if upper_end else (a[k] - r <= v)
            if at_most == upper_end:
                lo = mid + 1
            else:
                hi = mid
        c += (lo - ptr[k]) if upper_end else (ptr[k + 1] - lo)
    return c


cdef double _kth_folds(const double* a, const double* s, bint scaled, const double* R, const i64* ptr,
                       Py_ssize_t K, Py_ssize_t j, bint upper_end, Py_ssize_t* count) noexcept nogil:
    """The j-th smallest (1-based) end: the smallest double v with at least j ends at or below it.

    ``count`` (may be NULL) receives the number of ends at or below it.
    """
    cdef Py_ssize_t k, c
    cdef double e, emin = INFINITY, emax = -INFINITY, sc
    cdef i64 lo, hi, mid
    for k in range(K):
        if ptr[k + 1] == ptr[k]:
            continue
        sc = s[k] if scaled else 1.0
        if upper_end:  # smallest end: the fold's smallest R; largest: its largest
            e = a[k] + (R[ptr[k]] * sc if scaled else R[ptr[k]])
            emin = e if e < emin else emin
            e = a[k] + (R[ptr[k + 1] - 1] * sc if scaled else R[ptr[k + 1] - 1])
            emax = e if e > emax else emax
        else:
            e = a[k] - (R[ptr[k + 1] - 1] * sc if scaled else R[ptr[k + 1] - 1])
            emin = e if e < emin else emin
            e = a[k] - (R[ptr[k]] * sc if scaled else R[ptr[k]])
            emax = e if e > emax else emax
    lo = _key(emin)
    hi = _key(emax)
    c = _count_ends(a, s, scaled, R, ptr, K, emin, upper_end)
    if c >= j:
        if count != NULL:
            count[0] = c
        return _value(lo)
    # invariant: fewer than j ends at or below value(lo), at least j at or below value(hi)
    while lo + 1 < hi:
        mid = _midpoint(lo, hi)
        c = _count_ends(a, s, scaled, R, ptr, K, _value(mid), upper_end)
        if c >= j:
            hi = mid
        else:
            lo = mid
    if count != NULL:
        count[0] = _count_ends(a, s, scaled, R, ptr, K, _value(hi), upper_end)
    return _value(hi)


def cross_bounds_folds(const double[:, ::1] a_lo, const double[:, ::1] a_hi, const double[:, ::1] scale,
                       const double[::1] R_sorted, const i64[::1] fold_ptr, Py_ssize_t j_lo, Py_ssize_t j_hi,
                       int n_threads=1):
    """The same bounds as :func:`cross_bounds_rows` for K folds, by bisection (CV+ at large n).

    ``R_sorted`` holds the folds' scores one fold after the other, ascending
    within each fold (fold k is ``R_sorted[fold_ptr[k]:fold_ptr[k + 1]]``);
    ``a_lo``, ``a_hi``, ``scale`` are (m, K).
    """
    cdef Py_ssize_t m = a_lo.shape[0], K = a_lo.shape[1], n = R_sorted.shape[0], q
    cdef bint scaled = scale.shape[0] > 0
    cdef double[::1] lower = np.empty(m, dtype=np.float64)
    cdef double[::1] upper = np.empty(m, dtype=np.float64)
    cdef Py_ssize_t[::1] count = np.empty(m, dtype=np.intp)
    if fold_ptr.shape[0] != K + 1 or fold_ptr[K] != n or fold_ptr[0] != 0:
        raise ValueError("fold_ptr must have K + 1 entries from 0 to n")
    if n == 0:
        raise ValueError("no training scores")
    with nogil:
        for q in prange(m, schedule="dynamic", chunksize=16, num_threads=n_threads):
            if j_lo < 1:
                lower[q] = -INFINITY
            else:
                lower[q] = _kth_folds(&a_lo[q, 0], &scale[q, 0] if scaled else NULL, scaled, &R_sorted[0],
                                      &fold_ptr[0], K, j_lo, False, NULL)
            if j_hi > n:
                upper[q] = INFINITY
                count[q] = n
            else:
                upper[q] = _kth_folds(&a_hi[q, 0], &scale[q, 0] if scaled else NULL, scaled, &R_sorted[0],
                                      &fold_ptr[0], K, j_hi, True, &count[q])
    return np.asarray(lower), np.asarray(upper), np.asarray(count).astype(np.int64)
