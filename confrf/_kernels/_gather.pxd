# cython: language_level=3
"""What the threshold kernel (``_forest.pyx``) and the p-value kernel (``_pvalue.pyx``) share: the bitmap gather,
the pieces between a test point's distinct neighbour scores, the count search and the count and mass of one piece.

One definition, inlined into both, so the two kernels sum a test point's leaf-mates in the same order, form the
same pieces and compare the same doubles (the p-value and distribution kernels must agree bit for bit with the
thresholds).
"""

cimport numpy as cnp

# the index's integer types (leaf and entry numbers, ranks and counts)
ctypedef cnp.int64_t i64
ctypedef cnp.int32_t i32

cdef extern from *:
    int __builtin_ctzll(unsigned long long) nogil
    void __builtin_prefetch(const void*) nogil

cdef enum:
    # neighbours read ahead in fill_pieces (their (score, p2) rows are scattered over the n points)
    PREFETCH_AHEAD = 16


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


cdef inline Py_ssize_t leaf_steps(Py_ssize_t k, const i64* leafx, const i64* leaf_ptr,
                                  const i32* leaf_pop, double* step, double* dstep) noexcept nogil:
    """Per tree l with the test point in leaf leafx[l] (>= 0) of N = leaf_pop points: its share
    ``step[l]`` = 1/((N+1)k) of the leaf, and ``dstep[l]`` = (1/(N+1) - 1/N)/k, the change of the others'
    (0 for 1/N when N = 0). Returns the number of leaf entries the test point's leaves hold."""
    cdef Py_ssize_t l, n_entries = 0
    cdef i64 g
    cdef i32 pop
    cdef double inv_new, inv_old, kk = <double> k
    for l in range(k):
        g = leafx[l]
        if g < 0:
            continue
        n_entries += leaf_ptr[g + 1] - leaf_ptr[g]
        pop = leaf_pop[g]
        inv_new = 1.0 / (pop + 1.0)
        inv_old = 1.0 / pop if pop > 0 else 0.0
        step[l] = inv_new / kk
        dstep[l] = (inv_new - inv_old) / kk
    return n_entries


cdef struct Acc:
    double delta      # change of p2_i caused by the test point
    double win        # W[i, n+1]
    double wt         # W[n+1, i]


cdef inline Py_ssize_t bitmap_gather(
    Py_ssize_t k, bint unit, const double* step, const double* dstep,
    Acc* acc, unsigned long long* bits, Py_ssize_t n_words,
    i32* nb, double* delta, double* win, double* wt,
    const i64* leafx, const i64* leaf_ptr, const i32* members,
    const i32* member_mult, const i32* below,
) noexcept nogil:
    """Accumulate the test point's leaf-mates in ``acc`` (indexed by rank, tree by tree), then list the touched
    ranks in ascending order into ``nb`` with their sums; returns how many. ``bits`` is all zero on entry and on
    exit. With unit multiplicities (the honest forest) W[n+1, i] equals W[i, n+1], so ``wt`` is not accumulated.
    """
    cdef Py_ssize_t l, e, w, m = 0
    cdef i64 g
    cdef i32 r, b
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
                r = <i32> ((w << 6) + __builtin_ctzll(x))
                a = &acc[r]
                nb[m] = r
                delta[m] = a.delta
                win[m] = a.win
                wt[m] = a.wt
                m += 1
                x &= x - 1
    return m


cdef inline Py_ssize_t fill_pieces(
    Py_ssize_t m, const double* sp_r, const i32* nb, const double* delta, const double* win,
    const double* wt, bint unit, double* base, double* lo, double* hi, double* ucut, double* theta,
    Py_ssize_t* after, i32* dix,
) noexcept nogil:
    """Distinct neighbour scores ``ucut``, the test row's mass ``theta`` at or below each, each neighbour's pi
    values (``base`` = p2, ``lo`` from its own score on, ``hi`` before it) and ``after[j]``, the first neighbour
    whose score exceeds u_j, from the m >= 1 neighbours gathered in ascending rank (``nb``, ``delta``, ``win``,
    ``wt``). ``sp_r`` holds (score, p2) pairs by rank: one cache line read per neighbour. ``dix`` (may be NULL)
    receives each neighbour's distinct-score index. Returns r, the number of distinct neighbour scores.
    """
    cdef Py_ssize_t a, r = 0
    cdef i32 q
    cdef double acc = 0.0, v, p2
    for a in range(m):
        if a + PREFETCH_AHEAD < m:
            __builtin_prefetch(&sp_r[2 * nb[a + PREFETCH_AHEAD]])
        q = nb[a]
        v = sp_r[2 * q]
        p2 = sp_r[2 * q + 1]
        if r == 0 or v != ucut[r - 1]:
            if r > 0:
                after[r - 1] = a
            ucut[r] = v
            r += 1
        if dix != NULL:
            dix[a] = <i32> (r - 1)
        acc += win[a] if unit else wt[a]
        theta[r - 1] = acc
        base[a] = p2
        lo[a] = p2 + delta[a]
        hi[a] = lo[a] + win[a]
    after[r - 1] = m
    return r


cdef inline Py_ssize_t piece_cut(const Py_ssize_t* after, Py_ssize_t q) noexcept nogil:
    """Neighbours before this position have V_a <= v on piece q: q even is the open piece (u_j, u_j+1) with
    j = q // 2, q odd the point u_{q // 2 + 1} (0-based u)."""
    return after[(q >> 1) + 1] if q & 1 else after[q >> 1]


cdef inline double count_change(const double* lo, const double* hi, const double* base, Py_ssize_t cut,
                                Py_ssize_t m, double lim) noexcept nogil:
    """The neighbours' share of count(v) on one piece: the sum over a < m of [pi_a(v) < lim] - [p2_a < lim],
    with pi_a(v) = ``lo[a]`` before ``cut`` and ``hi[a]`` from it on.

    Two branch-free loops; a double accumulator (exact below 2**53) lets the compiler vectorise them with the
    baseline x86-64 instruction set, where an integer one does not.
    """
    cdef Py_ssize_t a
    cdef double d = 0.0
    for a in range(cut):
        d += (1.0 if lo[a] < lim else 0.0) - (1.0 if base[a] < lim else 0.0)
    for a in range(cut, m):
        d += (1.0 if hi[a] < lim else 0.0) - (1.0 if base[a] < lim else 0.0)
    return d


cdef inline double piece_mass(const double* sorted_p2, const double* cumw_p2, Py_ssize_t n,
                              const i32* nb, const double* w_r, const double* lo, const double* hi,
                              const double* base, Py_ssize_t cut, Py_ssize_t m, double lim) noexcept nogil:
    """The shift-weighted count on one piece: the sum of w_i over {i <= n : pi_i(v) < lim}.

    The non-neighbours' part is a prefix sum of the weights in ascending p2 order (``cumw_p2``); each
    neighbour a then moves its weight ``w_r[nb[a]]`` as in :func:`count_change`, in ascending a.
    """
    cdef double mass = cumw_p2[count_less(sorted_p2, n, lim)]
    cdef Py_ssize_t a
    for a in range(cut):
        mass += w_r[nb[a]] * ((lo[a] < lim) - (base[a] < lim))
    for a in range(cut, m):
        mass += w_r[nb[a]] * ((hi[a] < lim) - (base[a] < lim))
    return mass
