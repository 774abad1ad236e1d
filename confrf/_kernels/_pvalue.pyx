# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Every level at once: LCP-RF's count profile, conformal p-values and thresholds at many levels.

For one test point, exact LCP-RF accepts a score v at level alpha iff
count(v) < m_req(alpha) (docs/theory.md). count does not depend on alpha, so
one pass over the test point's neighbours gives it on every piece between
consecutive distinct neighbour scores; then

* the conformal p-value of a score v is (n + 1 - count(v)) / (n + 1);
* the threshold at any m_req is the first piece whose count reaches m_req.

The floating-point values compared (theta, pi's lo / hi / base values, the
tie tolerance) are formed by the code ``_forest.pyx``'s threshold kernel forms
them with (``_gather.pxd``, inlined into both), so every decision here is the
threshold kernel's decision, bit for bit (tests/test_pvalue.py and
tests/test_quantiles.py check it). Each neighbour enters the count once and
stays (theta grows, pi falls), so the counts of all pieces cost one histogram.
Where a neighbour enters is found in a bucket table over theta - tol, and the
non-neighbours' count on each piece in one over the sorted p2 (built once per
call): O(1) expected per look-up, exact for any input (the bucket of a value is
monotone, so a bucket brackets the answer; crowded buckets are bisected). Per
test point: O(entries + n / 64) to gather, O(m + r) to profile, with r <= m the
number of distinct neighbour scores, and the levels in one sweep in ascending
m_req. The threshold kernel's cost is mostly the gather both share (the
measured ratio is in docs/benchmarks/distribution.md).
"""

import numpy as np
cimport numpy as cnp
from cython.parallel cimport prange, parallel
from libc.stdlib cimport malloc, free, calloc
from libc.math cimport INFINITY

from ._gather cimport (
    Acc, i32, i64, bitmap_gather, count_change, count_less as _count_less, fill_pieces, leaf_steps, piece_cut, piece_mass,
)
from . import _forest

cnp.import_array()

# A bucket table over an ascending array v[0 .. n-1] (v[n] = +inf, a sentinel): tab[b] is the first i whose
# bucket is b or more. Buckets hold about one value each, so a search is O(1) where a bisection takes log2(n)
# dependent, unpredictable steps.
cdef struct VTab:
    double* v
    i32* tab
    Py_ssize_t n_buckets
    double first
    double last
    double scale


cdef inline Py_ssize_t _bucket(const VTab* t, double x) noexcept nogil:
    """Bucket of x in [first, last]: non-decreasing in x (a difference, a product by scale >= 0 and a
    truncation, each monotone in floating point), which is all the table needs to be exact."""
    cdef Py_ssize_t b = <Py_ssize_t> ((x - t.first) * t.scale)
    return b if b < t.n_buckets else t.n_buckets - 1


cdef void _build_vtab(VTab* t, Py_ssize_t n) noexcept nogil:
    """The table of t.v[0 .. n-1] (n >= 1, ascending, finite); sets the sentinel t.v[n] = +inf."""
    cdef Py_ssize_t i, b
    cdef double width
    t.v[n] = INFINITY
    t.first = t.v[0]
    t.last = t.v[n - 1]
    t.n_buckets = n
    width = t.last - t.first
    t.scale = n / width if width > 0.0 else 0.0
    if not (t.scale < 1e300):  # a width so small that n / width overflows: one bucket, searched by bisection
        t.scale = 0.0
    # tab[b] = #{i : bucket(v[i]) < b} (the buckets of an ascending v do not decrease): a histogram and its
    # running sum, without a branch per value
    for b in range(n + 1):
        t.tab[b] = 0
    for i in range(n):
        t.tab[_bucket(t, t.v[i]) + 1] += 1
    for b in range(n):
        t.tab[b + 1] += t.tab[b]


cdef inline Py_ssize_t _above(const VTab* t, Py_ssize_t n, double x) noexcept nogil:
    """First i with x < v[i] (n if none, NaN included): what a bisection over v answers.

    For x in [first, last) with bucket b, every i below tab[b] has a smaller bucket, hence v[i] < x (the
    bucket is monotone), and every i from tab[b + 1] on a larger one, hence v[i] > x: the answer lies in
    [tab[b], tab[b + 1]], and x < v[tab[b + 1]] (the sentinel at n), so the scan stops by itself.
    """
    cdef Py_ssize_t i, end, mid, b
    if x < t.first:
        return 0
    if not (x < t.last):
        return n
    b = _bucket(t, x)
    i = t.tab[b]
    end = t.tab[b + 1]
    while end - i > 8:
        mid = (i + end) >> 1
        if x < t.v[mid]:
            end = mid
        else:
            i = mid + 1
    i += not (x < t.v[i])  # two steps without a branch cover most buckets
    i += not (x < t.v[i])
    while not (x < t.v[i]):
        i += 1
    return i


cdef inline Py_ssize_t _below(const VTab* t, Py_ssize_t n, double x) noexcept nogil:
    """Entries strictly below x (``_count_less``'s answer; 0 for NaN), by the same bracket as ``_above``."""
    cdef Py_ssize_t i, end, mid, b
    if not (x > t.first):
        return 0
    if x > t.last:
        return n
    b = _bucket(t, x)
    i = t.tab[b]
    end = t.tab[b + 1]
    while end - i > 8:
        mid = (i + end) >> 1
        if t.v[mid] < x:
            i = mid + 1
        else:
            end = mid
    i += t.v[i] < x
    i += t.v[i] < x
    while t.v[i] < x:
        i += 1
    return i


cdef struct PS:
    Py_ssize_t n
    Py_ssize_t k
    bint unit
    double* step
    double* dstep
    Acc* acc          # by rank, over all n points: one cache line per touched point, as ``_forest.pyx``
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
    VTab lt           # the profile's table over lim[j] = theta[j] - tol


cdef void _ps_free(PS* s) noexcept nogil:
    if s == NULL:
        return
    free(s.step); free(s.dstep); free(s.acc); free(s.bits)
    free(s.nb); free(s.delta); free(s.win); free(s.wt); free(s.base); free(s.lo); free(s.hi); free(s.dix)
    free(s.ucut); free(s.theta); free(s.after); free(s.cnt); free(s.diff); free(s.lt.v); free(s.lt.tab)
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
    s.acc = <Acc*> malloc(c * sizeof(Acc))
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
    s.lt.v = <double*> malloc((c + 2) * sizeof(double))
    s.lt.tab = <i32*> malloc((c + 2) * sizeof(i32))
    if (s.step == NULL or s.dstep == NULL or s.acc == NULL or s.lt.v == NULL or s.lt.tab == NULL
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
    leaf_steps(s.k, leafx, leaf_ptr, leaf_pop, s.step, s.dstep)
    return bitmap_gather(s.k, s.unit, s.step, s.dstep, s.acc, s.bits, s.n_words, s.nb, s.delta, s.win, s.wt,
                         leafx, leaf_ptr, members, member_mult, below)


cdef inline Py_ssize_t _fill(PS* s, Py_ssize_t m, const double* sp_r) noexcept nogil:
    """The pieces of the m >= 1 neighbours gathered in ``s``, as the threshold kernel forms them (``_gather.pxd``'s
    ``fill_pieces``), with each neighbour's distinct-score index; returns r."""
    return fill_pieces(m, sp_r, s.nb, s.delta, s.win, s.wt, s.unit, s.base, s.lo, s.hi, s.ucut, s.theta, s.after,
                       s.dix)


cdef void _profile(PS* s, Py_ssize_t m, Py_ssize_t r, const VTab* p2t, Py_ssize_t n, double tol) noexcept nogil:
    """count on every piece q = 0 .. 2r - 2 into ``s.cnt`` (q = 2j: (u_j, u_j+1); q = 2j + 1: the point u_j+1).

    Neighbour a counts on piece q iff its pi value there (hi before its own score, lo from it on) is below
    lim(q) = theta[q // 2] - tol, and lim grows with q: it enters once, at the first such piece, and its base
    value (counted among the non-neighbours' p2) leaves once. Each of the three places is one table look-up
    (``_above`` over lim); the non-neighbours' count on each piece one more (``_below`` over the sorted p2,
    ``p2t``, whose table is built once per call). lim[j] = theta[j] - tol is the double the threshold
    kernel's comparisons form, so every decision is its decision.
    """
    cdef Py_ssize_t a, q, jh, jl, jb, q_lo, e, c, npieces = 2 * r - 1
    cdef i64 acc = 0
    for q in range(r):
        s.lt.v[q] = s.theta[q] - tol  # ascends: theta is a running sum of positive weights
    _build_vtab(&s.lt, r)
    for q in range(npieces + 1):
        s.diff[q] = 0
    for a in range(m):
        q_lo = 2 * s.dix[a] - 1 if s.dix[a] >= 1 else 0
        jh = _above(&s.lt, r, s.hi[a])
        if 2 * jh < q_lo:
            e = 2 * jh
        else:
            # lo <= hi, so lo's place is at most jh: the first j below jh with lo < lim[j], else jh
            jl = _above(&s.lt, r, s.lo[a])
            e = npieces if jl == r else (2 * jl if 2 * jl > q_lo else q_lo)
        s.diff[e] += 1
        jb = _above(&s.lt, r, s.base[a])
        s.diff[2 * jb if jb < r else npieces] -= 1
    c = 0
    for q in range(npieces):
        acc += s.diff[q]
        if not (q & 1) and c < n:  # lim[q // 2] is new on even pieces; it ascends, so c does not fall
            c = _below(p2t, n, s.lt.v[q >> 1])
        s.cnt[q] = acc + c


cdef inline Py_ssize_t _piece_of(PS* s, Py_ssize_t r, double v) noexcept nogil:
    """The piece of a score v: -1 when v <= u_0 (always accepted), else its index q."""
    cdef Py_ssize_t j = _count_less(s.ucut, r, v)
    if j == 0:
        return -1
    if j < r and s.ucut[j] == v:
        return 2 * j - 1
    return 2 * (j - 1)


cdef bint _place(PS* s, Py_ssize_t m, const double* sp_r, double v, double tol, Py_ssize_t* cut,
                 double* lim) noexcept nogil:
    """Form the pieces of one gathered test point and find v's: False when v is accepted at any level (no
    leaf-mates, or v at or below the smallest neighbour score), else True with the piece's neighbour cut and
    lim = theta - tol, the doubles the threshold kernel compares there."""
    cdef Py_ssize_t r, piece
    if m == 0:
        return False
    r = _fill(s, m, sp_r)
    piece = _piece_of(s, r, v)
    if piece < 0:
        return False
    cut[0] = piece_cut(s.after, piece)
    lim[0] = s.theta[piece >> 1] - tol
    return True


cdef i64 _count_at(PS* s, Py_ssize_t m, const double* sp_r, const double* sorted_p2, Py_ssize_t n, double v,
                   double tol) noexcept nogil:
    """count(v) of one gathered test point (0 without leaf-mates or at or below its smallest neighbour score),
    on v's piece alone (O(m)), term by term as the threshold kernel counts a piece."""
    cdef Py_ssize_t cut
    cdef double lim
    if not _place(s, m, sp_r, v, tol, &cut, &lim):
        return 0
    return _count_less(sorted_p2, n, lim) + <i64> count_change(s.lo, s.hi, s.base, cut, m, lim)


cdef double _mass_at(PS* s, Py_ssize_t m, const double* sp_r, const double* sorted_p2, const double* cumw_p2,
                     const double* w_r, Py_ssize_t n, double v, double tol) noexcept nogil:
    """M(v) of one gathered test point, summed as the weighted threshold kernel sums a piece."""
    cdef Py_ssize_t cut
    cdef double lim
    if not _place(s, m, sp_r, v, tol, &cut, &lim):
        return 0.0
    return piece_mass(sorted_p2, cumw_p2, n, s.nb, w_r, s.lo, s.hi, s.base, cut, m, lim)


def _p2_table(const double[::1] sorted_p2):
    """The arrays of a VTab over the sorted p2 (value copy with its sentinel, bucket starts), built once per
    call and read by every thread."""
    cdef Py_ssize_t n = sorted_p2.shape[0]
    v = np.empty(n + 1, dtype=np.float64)
    v[:n] = sorted_p2
    return v, np.empty(n + 2, dtype=np.int32)


cdef void _set_p2_table(VTab* t, double[::1] v, i32[::1] tab) noexcept:
    t.v = &v[0]
    t.tab = &tab[0]
    if v.shape[0] > 1:
        _build_vtab(t, v.shape[0] - 1)


def lcp_rf_counts(const i64[:, ::1] leafx, const i64[::1] leaf_ptr, const i32[::1] member_rank, member_mult,
                  const i32[::1] below, const i32[::1] leaf_pop, const double[::1] scores_r,
                  const double[::1] p2_r, const double[::1] sorted_p2, const double[::1] v,
                  double tol=1e-10, int n_threads=1, unit_mult=None):
    """count(v) of every test point at its own score ``v[q]`` (the index of ``lcp_rf_thresholds_ranked``).

    v is accepted at level alpha iff count(v) < ceil((1 - alpha)(n + 1)); the conformal p-value is
    (n + 1 - count) / (n + 1). A test point without leaf-mates, or a v at or below its smallest
    neighbour score, has count 0.
    """
    no_weights = np.zeros(1, dtype=np.float64)  # never read
    return _at_scores(leafx, leaf_ptr, member_rank, member_mult, below, leaf_pop, scores_r, p2_r, sorted_p2,
                      no_weights, no_weights, v, False, tol, n_threads, unit_mult)


cdef inline Py_ssize_t _first_reaching(const i64* cnt, Py_ssize_t lo, Py_ssize_t npieces, i64 m_req) noexcept nogil:
    """First piece q >= lo with cnt[q] >= m_req (npieces if none), galloping from lo: cnt does not decrease
    along q, so for ascending m_req the answers ascend and the levels cost one sweep, not a search each."""
    cdef Py_ssize_t hi = lo, step = 1, mid
    while hi < npieces and cnt[hi] < m_req:
        lo = hi + 1
        hi = lo + step
        step <<= 1
    if hi > npieces:
        hi = npieces
    while lo < hi:  # cnt[lo - 1] < m_req (or lo is where the sweep started), and hi == npieces or cnt[hi] >= m_req
        mid = (lo + hi) >> 1
        if cnt[mid] >= m_req:
            hi = mid
        else:
            lo = mid + 1
    return lo


def lcp_rf_levels(const i64[:, ::1] leafx, const i64[::1] leaf_ptr, const i32[::1] member_rank, member_mult,
                  const i32[::1] below, const i32[::1] leaf_pop, const double[::1] scores_r,
                  const double[::1] p2_r, const double[::1] sorted_p2, const i64[::1] m_reqs,
                  double tol=1e-10, int n_threads=1, unit_mult=None):
    """Exact LCP-RF thresholds at many levels from one pass per test point.

    ``m_reqs``: the counts ceil((1 - alpha_l)(n + 1)) of L levels (any order). Returns (t, closed, level),
    each (m_test, L): column l equals ``lcp_rf_thresholds_ranked(..., m_reqs[l])`` bit for bit. The first
    piece reaching m_req is the threshold kernel's bisection answer (the count does not decrease along the
    pieces), found for every level by one sweep in ascending m_req.
    """
    cdef Py_ssize_t mt = leafx.shape[0], k = leafx.shape[1], n = scores_r.shape[0], L = m_reqs.shape[0]
    cdef Py_ssize_t q, m, r, i, l, lo, npieces
    cdef double[:, ::1] t = np.empty((mt, L), dtype=np.float64)
    cdef char[:, ::1] closed = np.ones((mt, L), dtype=np.int8)
    cdef double[:, ::1] level = np.empty((mt, L), dtype=np.float64)
    cdef int[::1] failed = np.zeros(1, dtype=np.intc)
    cdef PS* s
    mult_arr, unit_ = _forest._mult_arg(member_mult, unit_mult)
    cdef bint unit = unit_
    cdef const i32[::1] mm = mult_arr
    cdef double[:, ::1] sp_r = _forest._score_p2_pairs(scores_r, p2_r)
    cdef const i64[::1] order = np.argsort(np.asarray(m_reqs), kind="stable").astype(np.int64)
    cdef VTab p2t
    p2v, p2tab = _p2_table(sorted_p2)
    _set_p2_table(&p2t, p2v, p2tab)
    if mt == 0 or L == 0:
        return np.asarray(t), np.asarray(closed).view(np.bool_), np.asarray(level)
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
                    _profile(s, m, r, &p2t, n, tol)
                npieces = 2 * r - 1
                lo = 0
                for i in range(L):
                    l = order[i]
                    if m == 0 or m_reqs[l] > n:
                        lo = npieces
                    else:
                        lo = _first_reaching(s.cnt, lo, npieces, m_reqs[l])
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
    return np.asarray(t), np.asarray(closed).view(np.bool_), np.asarray(level)


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
    mult_arr, unit_ = _forest._mult_arg(member_mult, unit_mult)
    cdef bint unit = unit_
    cdef const i32[::1] mm = mult_arr
    cdef double[:, ::1] sp_r = _forest._score_p2_pairs(scores_r, p2_r)
    us, cs = [], []
    cdef double[::1] ub
    cdef i64[::1] cb
    cdef VTab p2t
    p2v, p2tab = _p2_table(sorted_p2)
    _set_p2_table(&p2t, p2v, p2tab)
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
                    _profile(s, m, r, &p2t, n, tol)
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

    Summed as the weighted threshold kernel sums a piece (``_gather.pxd``'s ``piece_mass``): v is accepted at level
    alpha iff M(v) < req(alpha). 0 without leaf-mates or for v at or below the smallest neighbour score.
    """
    cdef Py_ssize_t n = scores_r.shape[0]
    if v.shape[0] != leafx.shape[0] or cumw_p2.shape[0] != n + 1 or w_r.shape[0] != n:
        raise ValueError("v needs one entry per test row, cumw_p2 n + 1 entries and w_r n entries")
    return _at_scores(leafx, leaf_ptr, member_rank, member_mult, below, leaf_pop, scores_r, p2_r, sorted_p2,
                      cumw_p2, w_r, v, True, tol, n_threads, unit_mult)


cdef _at_scores(const i64[:, ::1] leafx, const i64[::1] leaf_ptr, const i32[::1] member_rank, member_mult,
                const i32[::1] below, const i32[::1] leaf_pop, const double[::1] scores_r, const double[::1] p2_r,
                const double[::1] sorted_p2, const double[::1] cumw_p2, const double[::1] w_r,
                const double[::1] v, bint weighted, double tol, int n_threads, unit_mult):
    """count(v[q]) of every test row (int64), or (``weighted``) its weighted count M(v[q]) (float64), parallel
    over rows."""
    cdef Py_ssize_t mt = leafx.shape[0], k = leafx.shape[1], n = scores_r.shape[0], q, m
    cdef i64[::1] count = np.zeros(0 if weighted else mt, dtype=np.int64)
    cdef double[::1] mass = np.zeros(mt if weighted else 0, dtype=np.float64)
    cdef int[::1] failed = np.zeros(1, dtype=np.intc)
    cdef PS* s
    mult_arr, unit_ = _forest._mult_arg(member_mult, unit_mult)
    cdef bint unit = unit_
    cdef const i32[::1] mm = mult_arr
    cdef double[:, ::1] sp_r = _forest._score_p2_pairs(scores_r, p2_r)
    if v.shape[0] != mt:
        raise ValueError("v needs one score per test row")
    if mt > 0:
        with nogil, parallel(num_threads=n_threads):
            s = _ps_new(n, k, unit)
            if s == NULL:
                failed[0] = 1
            else:
                for q in prange(mt, schedule="dynamic", chunksize=8):
                    m = _gather(s, &leafx[q, 0], &leaf_ptr[0], &member_rank[0], &mm[0], &below[0], &leaf_pop[0])
                    if weighted:
                        mass[q] = _mass_at(s, m, &sp_r[0, 0], &sorted_p2[0], &cumw_p2[0], &w_r[0], n, v[q], tol)
                    else:
                        count[q] = _count_at(s, m, &sp_r[0, 0], &sorted_p2[0], n, v[q], tol)
            _ps_free(s)
    if failed[0]:
        raise MemoryError("could not allocate the per-thread scratch space")
    return np.asarray(mass) if weighted else np.asarray(count)
