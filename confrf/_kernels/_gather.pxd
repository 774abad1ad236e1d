# cython: language_level=3
"""What the threshold kernel (``_forest.pyx``) and the p-value kernel (``_pvalue.pyx``) share: the bitmap gather
and the count search.

One definition, inlined into both, so the two kernels sum a test point's leaf-mates in the same order and search
the same way, and get identical doubles (the p-value and distribution kernels must agree bit for bit with the
thresholds).
"""

cimport numpy as cnp

cdef extern from *:
    int __builtin_ctzll(unsigned long long) nogil


cdef inline Py_ssize_t count_less(const double* sorted_vals, Py_ssize_t n, double x) noexcept nogil:
    """Number of entries strictly less than x in an ascending array."""
    cdef Py_ssize_t lo = 0, hi = n, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if sorted_vals[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


cdef struct Acc:
    double delta      # change of p2_i caused by the test point
    double win        # W[i, n+1]
    double wt         # W[n+1, i]


cdef inline Py_ssize_t bitmap_gather(
    Py_ssize_t k, bint unit, const double* step, const double* dstep,
    Acc* acc, unsigned long long* bits, Py_ssize_t n_words,
    cnp.int32_t* nb, double* delta, double* win, double* wt,
    const cnp.int64_t* leafx, const cnp.int64_t* leaf_ptr, const cnp.int32_t* members,
    const cnp.int32_t* member_mult, const cnp.int32_t* below,
) noexcept nogil:
    """Accumulate the test point's leaf-mates in ``acc`` (indexed by rank, tree by tree), then list the touched
    ranks in ascending order into ``nb`` with their sums; returns how many. ``bits`` is all zero on entry and on
    exit. With unit multiplicities (the honest forest) W[n+1, i] equals W[i, n+1], so ``wt`` is not accumulated.
    """
    cdef Py_ssize_t l, e, w, m = 0
    cdef cnp.int64_t g
    cdef cnp.int32_t r, b
    cdef unsigned long long bit, x
    cdef Acc* a
    for l in range(k):
        g = leafx[l]
        if g < 0:
            continue
        for e in range(leaf_ptr[g], leaf_ptr[g + 1]):
            r = members[e]
            bit = (<unsigned long long> 1) << (r & 63)
            a = &acc[r]
            if not (bits[r >> 6] & bit):
                bits[r >> 6] |= bit
                a.delta = 0.0
                a.win = 0.0
                a.wt = 0.0
            b = below[e]
            if b > 0:
                a.delta += b * dstep[l]
            a.win += step[l]
            if not unit:
                a.wt += member_mult[e] * step[l]
    for w in range(n_words):
        x = bits[w]
        if x:
            bits[w] = 0
            while x:
                r = <cnp.int32_t> ((w << 6) + __builtin_ctzll(x))
                a = &acc[r]
                nb[m] = r
                delta[m] = a.delta
                win[m] = a.win
                wt[m] = a.wt
                m += 1
                x &= x - 1
    return m
