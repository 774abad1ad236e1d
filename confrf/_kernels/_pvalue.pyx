# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Every level at once: LCP-RF's count profile, conformal p-values and thresholds at many levels.

For one test point, exact LCP-RF accepts a score v at level alpha iff
count(v) < m_req(alpha) (docs/theory.md). count does not depend on alpha, so
one pass over the test point's neighbours gives it on every piece between
consecutive distinct neighbour scores; then

* the conformal p-value of a score v is (n + 1 - count(v)) / (n + 1);
* the threshold at any m_req is the first piece whose count reaches m_req.

The floating-point values compared (theta, pi's lo / hi / base values, the
tie tolerance) are formed by the same operations, in the same order, as in
``_forest.pyx``'s threshold kernel, so every decision here is the threshold
kernel's decision, bit for bit (tests/test_pvalue.py checks it). Each
neighbour enters the count once and stays (theta grows, pi falls), so the
counts of all pieces cost one histogram: O(m log m + r log n) per test point,
with r <= m the number of distinct neighbour scores.
"""

import numpy as np
cimport numpy as cnp
from cython.parallel cimport prange, parallel
from libc.stdlib cimport malloc, free, calloc
from libc.math cimport INFINITY

cnp.import_array()

ctypedef cnp.int64_t i64
ctypedef cnp.int32_t i32

cdef extern from *:
    int __builtin_ctzll(unsigned long long) nogil


cdef inline Py_ssize_t _count_less(const double* v, Py_ssize_t n, double x) noexcept nogil:
    """Entries strictly below x in an ascending array (the threshold kernel's search)."""
    cdef Py_ssize_t lo = 0, hi = n, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if v[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


cdef inline Py_ssize_t _first_above(const double* theta, Py_ssize_t r, double x, double tol) noexcept nogil:
    """First j with x < theta[j] - tol (r if none); theta ascends, so does theta - tol.

    A branch-free lower bound (each comparison's outcome is unpredictable): the same answer as a bisection.
    """
    cdef Py_ssize_t first = 0, length = r, half
    while length > 0:
        half = length >> 1
        if not (x < theta[first + half] - tol):
            first = first + half + 1
            length = length - half - 1
        else:
            length = half
    return first


cdef struct PS:
    Py_ssize_t n
    Py_ssize_t k
    bint unit
    double* step
    double* dstep
    double* a_delta   # by rank, over all n points
    double* a_win
    double* a_wt
    unsigned long long* bits
    Py_ssize_t n_words
    Py_ssize_t cap
    i32* nb
    double* delta
    double* win
    double* wt
    double* base
    double* lo
    double* hi
    i32* dix          # distinct-score index of each neighbour
    double* ucut
    double* theta
    Py_ssize_t* after
    i64* cnt          # count on each piece (2 r - 1)
    i64* diff


cdef void _ps_free(PS* s) noexcept nogil:
    if s == NULL:
        return
    free(s.step); free(s.dstep); free(s.a_delta); free(s.a_win); free(s.a_wt); free(s.bits)
    free(s.nb); free(s.delta); free(s.win); free(s.wt); free(s.base); free(s.lo); free(s.hi); free(s.dix)
    free(s.ucut); free(s.theta); free(s.after); free(s.cnt); free(s.diff)
    free(s)


cdef PS* _ps_new(Py_ssize_t n, Py_ssize_t k, bint unit) noexcept nogil:
    """Per-thread buffers sized by n (a neighbour count never exceeds n). NULL if out of memory."""
    cdef PS* s = <PS*> calloc(1, sizeof(PS))
    cdef Py_ssize_t c = n if n > 0 else 1
    if s == NULL:
        return NULL
    s.n, s.k, s.unit, s.cap = n, k, unit, c
    s.n_words = (c + 63) // 64
    s.step = <double*> malloc((k + 1) * sizeof(double))
    s.dstep = <double*> malloc((k + 1) * sizeof(double))
    s.a_delta = <double*> malloc(c * sizeof(double))
    s.a_win = <double*> malloc(c * sizeof(double))
    s.a_wt = <double*> malloc(c * sizeof(double))
    s.bits = <unsigned long long*> calloc(s.n_words, sizeof(unsigned long long))
    s.nb = <i32*> malloc(c * sizeof(i32))
    s.delta = <double*> malloc(c * sizeof(double))
    s.win = <double*> malloc(c * sizeof(double))
    s.wt = <double*> malloc(c * sizeof(double))
    s.base = <double*> malloc(c * sizeof(double))
    s.lo = <double*> malloc(c * sizeof(double))
    s.hi = <double*> malloc(c * sizeof(double))
    s.dix = <i32*> malloc(c * sizeof(i32))
    s.ucut = <double*> malloc((c + 1) * sizeof(double))
    s.theta = <double*> malloc((c + 1) * sizeof(double))
    s.after = <Py_ssize_t*> malloc((c + 1) * sizeof(Py_ssize_t))
    s.cnt = <i64*> malloc((2 * c + 1) * sizeof(i64))
    s.diff = <i64*> malloc((2 * c + 1) * sizeof(i64))
    if (s.step == NULL or s.dstep == NULL or s.a_delta == NULL or s.a_win == NULL or s.a_wt == NULL
            or s.bits == NULL or s.nb == NULL or s.delta == NULL or s.win == NULL or s.wt == NULL
            or s.base == NULL or s.lo == NULL or s.hi == NULL or s.dix == NULL or s.ucut == NULL
            or s.theta == NULL or s.after == NULL or s.cnt == NULL or s.diff == NULL):
        _ps_free(s)
        return NULL
    return s


cdef Py_ssize_t _gather(PS* s, const i64* leafx, const i64* leaf_ptr, const i32* members,
                        const i32* member_mult, const i32* below, const i32* leaf_pop) noexcept nogil:
    """The test point's leaf-mates, ascending rank, with delta, win and wt summed as the threshold kernel does.

    The per-tree steps and the tree-order sums are those of ``_forest.pyx``'s ``_gather``: identical doubles.
    """
    cdef Py_ssize_t l, e, w, m = 0
    cdef i64 g
    cdef i32 pop, r, b
    cdef double inv_new, inv_old, kk = <double> s.k
    cdef unsigned long long bit, x
    for l in range(s.k):
        g = leafx[l]
        if g < 0:
            continue
        pop = leaf_pop[g]
        inv_new = 1.0 / (pop + 1.0)
        inv_old = 1.0 / pop if pop > 0 else 0.0
        s.step[l] = inv_new / kk
        s.dstep[l] = (inv_new - inv_old) / kk
    for l in range(s.k):
        g = leafx[l]
        if g < 0:
            continue
        for e in range(leaf_ptr[g], leaf_ptr[g + 1]):
            r = members[e]
            bit = (<unsigned long long> 1) << (r & 63)
            if not (s.bits[r >> 6] & bit):
                s.bits[r >> 6] |= bit
                s.a_delta[r] = 0.0
                s.a_win[r] = 0.0
                s.a_wt[r] = 0.0
            b = below[e]
            if b > 0:
                s.a_delta[r] += b * s.dstep[l]
            s.a_win[r] += s.step[l]
            if not s.unit:
                s.a_wt[r] += member_mult[e] * s.step[l]
    for w in range(s.n_words):
        x = s.bits[w]
        if x:
            s.bits[w] = 0
            while x:
                r = <i32> ((w << 6) + __builtin_ctzll(x))
                s.nb[m] = r
                s.delta[m] = s.a_delta[r]
                s.win[m] = s.a_win[r]
                s.wt[m] = s.a_wt[r]
                m += 1
                x &= x - 1
    return m


cdef Py_ssize_t _fill(PS* s, Py_ssize_t m, const double* sp_r) noexcept nogil:
    """Distinct neighbour scores, theta at or below each, pi's values: as ``_forest.pyx``'s ``_fill_pieces``."""
    cdef Py_ssize_t a, r = 0
    cdef i32 q
    cdef double acc = 0.0, v, p2
    for a in range(m):
        q = s.nb[a]
        v = sp_r[2 * q]
        p2 = sp_r[2 * q + 1]
        if r == 0 or v != s.ucut[r - 1]:
            if r > 0:
                s.after[r - 1] = a
            s.ucut[r] = v
            r += 1
        s.dix[a] = <i32> (r - 1)
        acc += s.win[a] if s.unit else s.wt[a]
        s.theta[r - 1] = acc
        s.base[a] = p2
        s.lo[a] = p2 + s.delta[a]
        s.hi[a] = s.lo[a] + s.win[a]
    s.after[r - 1] = m
    return r


cdef void _profile(PS* s, Py_ssize_t m, Py_ssize_t r, const double* sorted_p2, Py_ssize_t n,
                   double tol) noexcept nogil:
    """count on every piece q = 0 .. 2r - 2 into ``s.cnt`` (q = 2j: (u_j, u_j+1); q = 2j + 1: the point u_j+1).

    Neighbour a counts on piece q iff its pi value there (hi before its own score, lo from it on) is below
    lim(q) = theta[q // 2] - tol, and lim grows with q: it enters once, at the first such piece.
    """
    cdef Py_ssize_t a, q, jh, jl, jb, q_lo, e, c, npieces = 2 * r - 1
    cdef i64 acc = 0
    for q in range(npieces + 1):
        s.diff[q] = 0
    for a in range(m):
        q_lo = 2 * s.dix[a] - 1 if s.dix[a] >= 1 else 0
        jh = _first_above(s.theta, r, s.hi[a], tol)
        if 2 * jh < q_lo:
            e = 2 * jh
        else:
            jl = _first_above(s.theta, jh, s.lo[a], tol)  # lo <= hi: at most jh
            e = npieces if jl == r else (2 * jl if 2 * jl > q_lo else q_lo)
        s.diff[e] += 1
        jb = _first_above(s.theta, r, s.base[a], tol)
        s.diff[2 * jb if jb < r else npieces] -= 1
    c = 0
    for q in range(npieces):
        acc += s.diff[q]
        if not (q & 1):  # theta[q // 2] is new on even pieces; it ascends, so the search resumes from c
            c = c + _count_less(&sorted_p2[c], n - c, s.theta[q >> 1] - tol)
        s.cnt[q] = acc + c


cdef inline Py_ssize_t _piece_of(PS* s, Py_ssize_t r, double v) noexcept nogil:
    """The piece of a score v: -1 when v <= u_0 (always accepted), else its index q."""
    cdef Py_ssize_t j = _count_less(s.ucut, r, v)
    if j == 0:
        return -1
    if j < r and s.ucut[j] == v:
        return 2 * j - 1
    return 2 * (j - 1)


cdef i64 _count_at(PS* s, Py_ssize_t m, const double* sp_r, const double* sorted_p2, Py_ssize_t n, double v,
                   double tol) noexcept nogil:
    """count(v) of one gathered test point (0 without leaf-mates or at or below its smallest neighbour score)."""
    cdef Py_ssize_t r, piece, s_idx, j_cut, a
    cdef double lim, d = 0.0
    if m == 0:
        return 0
    r = _fill(s, m, sp_r)
    piece = _piece_of(s, r, v)
    if piece < 0:
        return 0
    # the count on v's piece alone, term by term as ``_forest.pyx``'s ``_piece_count``: O(m)
    s_idx = piece >> 1
    j_cut = s.after[s_idx + 1] if piece & 1 else s.after[s_idx]
    lim = s.theta[s_idx] - tol
    for a in range(j_cut):
        d += (1.0 if s.lo[a] < lim else 0.0) - (1.0 if s.base[a] < lim else 0.0)
    for a in range(j_cut, m):
        d += (1.0 if s.hi[a] < lim else 0.0) - (1.0 if s.base[a] < lim else 0.0)
    return _count_less(sorted_p2, n, lim) + <i64> d


cdef double _mass_at(PS* s, Py_ssize_t m, const double* sp_r, const double* sorted_p2, const double* cumw_p2,
                     const double* w_r, Py_ssize_t n, double v, double tol) noexcept nogil:
    """M(v) of one gathered test point, summed as ``_forest.pyx``'s ``_piece_mass``."""
    cdef Py_ssize_t r, piece, s_idx, j_cut, a, c
    cdef double lim, mass
    if m == 0:
        return 0.0
    r = _fill(s, m, sp_r)
    piece = _piece_of(s, r, v)
    if piece < 0:
        return 0.0
    s_idx = piece >> 1
    j_cut = s.after[s_idx + 1] if piece & 1 else s.after[s_idx]
    lim = s.theta[s_idx] - tol
    c = _count_less(sorted_p2, n, lim)
    mass = cumw_p2[c]
    for a in range(j_cut):
        mass += w_r[s.nb[a]] * ((s.lo[a] < lim) - (s.base[a] < lim))
    for a in range(j_cut, m):
        mass += w_r[s.nb[a]] * ((s.hi[a] < lim) - (s.base[a] < lim))
    return mass


def _score_p2_pairs(scores_r, p2_r):
    n = max(1, len(scores_r))
    out = np.zeros((n, 2), dtype=np.float64)
    out[: len(scores_r), 0] = scores_r
    out[: len(p2_r), 1] = p2_r
    return out


def _unit(member_mult, unit_mult):
    a = np.asarray(member_mult)
    if unit_mult is None:
        unit_mult = (a.ndim == 1 and a.shape[0] > 1 and a.strides[0] == 0) or bool(np.all(a == 1))
    if unit_mult:
        return np.ones(1, dtype=np.int32), True
    return np.ascontiguousarray(a, dtype=np.int32), False


def lcp_rf_counts(const i64[:, ::1] leafx, const i64[::1] leaf_ptr, const i32[::1] member_rank, member_mult,
                  const i32[::1] below, const i32[::1] leaf_pop, const double[::1] scores_r,
                  const double[::1] p2_r, const double[::1] sorted_p2, const double[::1] v,
                  double tol=1e-10, int n_threads=1, unit_mult=None):
    """count(v) of every test point at its own score ``v[q]`` (the index of ``lcp_rf_thresholds_ranked``).

    v is accepted at level alpha iff count(v) < ceil((1 - alpha)(n + 1)); the conformal p-value is
    (n + 1 - count) / (n + 1). A test point without leaf-mates, or a v at or below its smallest
    neighbour score, has count 0.
    """
    cdef Py_ssize_t mt = leafx.shape[0], k = leafx.shape[1], n = scores_r.shape[0], q, m
    cdef i64[::1] out = np.zeros(mt, dtype=np.int64)
    cdef int[::1] failed = np.zeros(1, dtype=np.intc)
    cdef PS* s
    mult_arr, unit_ = _unit(member_mult, unit_mult)
    cdef bint unit = unit_
    cdef const i32[::1] mm = mult_arr
    cdef double[:, ::1] sp_r = _score_p2_pairs(scores_r, p2_r)
    if v.shape[0] != mt:
        raise ValueError("v needs one score per test row")
    if mt == 0:
        return np.asarray(out)
    with nogil, parallel(num_threads=n_threads):
        s = _ps_new(n, k, unit)
        if s == NULL:
            failed[0] = 1
        else:
            for q in prange(mt, schedule="dynamic", chunksize=8):
                m = _gather(s, &leafx[q, 0], &leaf_ptr[0], &member_rank[0], &mm[0], &below[0], &leaf_pop[0])
                out[q] = _count_at(s, m, &sp_r[0, 0], &sorted_p2[0], n, v[q], tol)
        _ps_free(s)
    if failed[0]:
        raise MemoryError("could not allocate the per-thread scratch space")
    return np.asarray(out)


def lcp_rf_levels(const i64[:, ::1] leafx, const i64[::1] leaf_ptr, const i32[::1] member_rank, member_mult,
                  const i32[::1] below, const i32[::1] leaf_pop, const double[::1] scores_r,
                  const double[::1] p2_r, const double[::1] sorted_p2, const i64[::1] m_reqs,
                  double tol=1e-10, int n_threads=1, unit_mult=None):
    """Exact LCP-RF thresholds at many levels from one pass per test point.

    ``m_reqs``: the counts ceil((1 - alpha_l)(n + 1)) of L levels (any order). Returns (t, closed, level),
    each (m_test, L): column l equals ``lcp_rf_thresholds_ranked(..., m_reqs[l])`` bit for bit.
    """
    cdef Py_ssize_t mt = leafx.shape[0], k = leafx.shape[1], n = scores_r.shape[0], L = m_reqs.shape[0]
    cdef Py_ssize_t q, m, r, l, lo, hi, mid, npieces
    cdef double[:, ::1] t = np.empty((mt, L), dtype=np.float64)
    cdef char[:, ::1] closed = np.ones((mt, L), dtype=np.int8)
    cdef double[:, ::1] level = np.empty((mt, L), dtype=np.float64)
    cdef int[::1] failed = np.zeros(1, dtype=np.intc)
    cdef PS* s
    mult_arr, unit_ = _unit(member_mult, unit_mult)
    cdef bint unit = unit_
    cdef const i32[::1] mm = mult_arr
    cdef double[:, ::1] sp_r = _score_p2_pairs(scores_r, p2_r)
    if mt == 0 or L == 0:
        return np.asarray(t), np.asarray(closed).astype(bool), np.asarray(level)
    with nogil, parallel(num_threads=n_threads):
        s = _ps_new(n, k, unit)
        if s == NULL:
            failed[0] = 1
        else:
            for q in prange(mt, schedule="dynamic", chunksize=8):
                m = _gather(s, &leafx[q, 0], &leaf_ptr[0], &member_rank[0], &mm[0], &below[0], &leaf_pop[0])
                r = 0
                if m > 0:
                    r = _fill(s, m, &sp_r[0, 0])
                    _profile(s, m, r, &sorted_p2[0], n, tol)
                npieces = 2 * r - 1
                for l in range(L):
                    closed[q, l] = 1
                    lo = 0
                    hi = npieces
                    if m == 0 or m_reqs[l] > n:
                        lo = npieces
                        hi = npieces
                    while lo < hi:
                        mid = (lo + hi) >> 1
                        if s.cnt[mid] >= m_reqs[l]:
                            hi = mid
                        else:
                            lo = mid + 1
                    if lo == npieces:
                        t[q, l] = INFINITY
                        level[q, l] = 1.0
                    elif lo & 1:
                        t[q, l] = s.ucut[(lo >> 1) + 1]
                        closed[q, l] = 0
                        level[q, l] = s.theta[lo >> 1]
                    else:
                        t[q, l] = s.ucut[lo >> 1]
                        level[q, l] = s.theta[lo >> 1]
        _ps_free(s)
    if failed[0]:
        raise MemoryError("could not allocate the per-thread scratch space")
    return np.asarray(t), np.asarray(closed).astype(bool), np.asarray(level)


def lcp_rf_profiles(const i64[:, ::1] leafx, const i64[::1] leaf_ptr, const i32[::1] member_rank, member_mult,
                    const i32[::1] below, const i32[::1] leaf_pop, const double[::1] scores_r,
                    const double[::1] p2_r, const double[::1] sorted_p2, double tol=1e-10, unit_mult=None):
    """Each test point's whole step function, as CSR arrays (indptr, u, count_open).

    Row q holds its distinct neighbour scores u_0 < ... < u_{r-1} and, for each, the count on the open piece
    just above it ((u_j, u_j+1), u_r = +inf): count(v) is right-continuous from there, so
    count_open[j] / (n + 1) is the predictive CDF at u_j (docs/theory.md, "Predictive distributions").
    A row without leaf-mates is empty (everything accepted).
    """
    cdef Py_ssize_t mt = leafx.shape[0], k = leafx.shape[1], n = scores_r.shape[0], q, m, r, j, pos
    cdef i64[::1] indptr = np.zeros(mt + 1, dtype=np.int64)
    cdef PS* s
    mult_arr, unit_ = _unit(member_mult, unit_mult)
    cdef bint unit = unit_
    cdef const i32[::1] mm = mult_arr
    cdef double[:, ::1] sp_r = _score_p2_pairs(scores_r, p2_r)
    us, cs = [], []
    cdef double[::1] ub
    cdef i64[::1] cb
    s = _ps_new(n, k, unit)
    if s == NULL:
        raise MemoryError("could not allocate the scratch space")
    try:
        for q in range(mt):
            with nogil:
                m = _gather(s, &leafx[q, 0], &leaf_ptr[0], &member_rank[0], &mm[0], &below[0], &leaf_pop[0])
                r = 0
                if m > 0:
                    r = _fill(s, m, &sp_r[0, 0])
                    _profile(s, m, r, &sorted_p2[0], n, tol)
            ub = np.empty(r, dtype=np.float64)
            cb = np.empty(r, dtype=np.int64)
            for j in range(r):
                ub[j] = s.ucut[j]
                cb[j] = s.cnt[2 * j]
            us.append(np.asarray(ub))
            cs.append(np.asarray(cb))
            indptr[q + 1] = indptr[q] + r
    finally:
        _ps_free(s)
    u = np.concatenate(us) if us else np.empty(0)
    c = np.concatenate(cs) if cs else np.empty(0, dtype=np.int64)
    return np.asarray(indptr), u, c


def lcp_rf_mass_at(const i64[:, ::1] leafx, const i64[::1] leaf_ptr, const i32[::1] member_rank, member_mult,
                   const i32[::1] below, const i32[::1] leaf_pop, const double[::1] scores_r,
                   const double[::1] p2_r, const double[::1] sorted_p2, const double[::1] cumw_p2,
                   const double[::1] w_r, const double[::1] v, double tol=1e-10, int n_threads=1, unit_mult=None):
    """The covariate-shift weighted count M(v) of every test point at its own score ``v[q]``.

    Summed as ``_forest.pyx``'s ``_piece_mass`` sums it (same terms, same order): v is accepted at level
    alpha iff M(v) < req(alpha). 0 without leaf-mates or for v at or below the smallest neighbour score.
    """
    cdef Py_ssize_t mt = leafx.shape[0], k = leafx.shape[1], n = scores_r.shape[0], q, m
    cdef double[::1] out = np.zeros(mt, dtype=np.float64)
    cdef int[::1] failed = np.zeros(1, dtype=np.intc)
    cdef PS* s
    mult_arr, unit_ = _unit(member_mult, unit_mult)
    cdef bint unit = unit_
    cdef const i32[::1] mm = mult_arr
    cdef double[:, ::1] sp_r = _score_p2_pairs(scores_r, p2_r)
    if v.shape[0] != mt or cumw_p2.shape[0] != n + 1 or w_r.shape[0] != n:
        raise ValueError("v needs one entry per test row, cumw_p2 n + 1 entries and w_r n entries")
    if mt == 0:
        return np.asarray(out)
    with nogil, parallel(num_threads=n_threads):
        s = _ps_new(n, k, unit)
        if s == NULL:
            failed[0] = 1
        else:
            for q in prange(mt, schedule="dynamic", chunksize=8):
                m = _gather(s, &leafx[q, 0], &leaf_ptr[0], &member_rank[0], &mm[0], &below[0], &leaf_pop[0])
                out[q] = _mass_at(s, m, &sp_r[0, 0], &sorted_p2[0], &cumw_p2[0], &w_r[0], n, v[q], tol)
        _ps_free(s)
    if failed[0]:
        raise MemoryError("could not allocate the per-thread scratch space")
    return np.asarray(out)
