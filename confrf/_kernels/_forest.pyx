# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Cython kernels of the random-forest localizer.

The forest is stored as a leaf index: for every (tree, leaf) the calibration
points that fall in it, sorted by score, with their multiplicity in the weights
(1 for the honest forest, the bootstrap count for the paper's variant) and the
multiplicity mass strictly below their score inside the leaf.

Every kernel here works per test point on the leaves the test point falls in,
so no n x n matrix is ever formed. The slow references that these kernels are
tested against live in ``tests/reference.py``.
"""

import numpy as np
cimport numpy as cnp
from cython.parallel cimport prange, parallel
from libc.stdlib cimport malloc, free, calloc, qsort
from libc.math cimport INFINITY

cnp.import_array()

ctypedef cnp.int64_t i64
ctypedef cnp.int32_t i32


cdef inline Py_ssize_t _count_less(const double* sorted_vals, Py_ssize_t n, double x) noexcept nogil:
    """Number of entries strictly less than x in an ascending array."""
    cdef Py_ssize_t lo = 0, hi = n, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if sorted_vals[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


ctypedef fused leaf_t:
    cnp.int32_t
    cnp.int64_t


def build_leaf_index(const leaf_t[:, ::1] leaves, const double[::1] scores,
                     mult, Py_ssize_t n_leaves):
    """Group calibration points by global leaf id, sorted by score.

    Parameters
    ----------
    leaves : (n, k) int64 or int32
        Global leaf id of calibration point i in tree l (tree offsets applied).
    scores : (n,) float64
        Calibration scores.
    mult : (n, k) int32 or None
        Multiplicity of point i in the weights of tree l; None: all 1 (the
        honest forest), without an (n, k) array of ones.
    n_leaves : int
        Number of global leaf ids.

    Returns
    -------
    leaf_ptr : (n_leaves + 1,) int64
    members : (n * k,) int32
        Calibration indices, grouped by leaf, ascending score inside a leaf.
    member_mult : (n * k,) int32
    below : (n * k,) int32
        Multiplicity mass of the leaf's members with a strictly smaller score.
    leaf_pop : (n_leaves,) int32
        Multiplicity mass of the leaf.
    """
    cdef Py_ssize_t n = leaves.shape[0], k = leaves.shape[1]
    cdef Py_ssize_t i, l, g, e, start, stop, run_start
    cdef bint unit = mult is None
    cdef const i32[:, ::1] mv
    if not unit:
        mv = mult
        if mv.shape[0] != n or mv.shape[1] != k:
            raise ValueError("mult must have the shape of leaves")
    cdef i64[::1] leaf_ptr = np.zeros(n_leaves + 1, dtype=np.int64)
    cdef i32[::1] leaf_pop = np.zeros(n_leaves, dtype=np.int32)
    cdef i32[::1] members = np.empty(n * k, dtype=np.int32)
    cdef i32[::1] member_mult = np.empty(n * k, dtype=np.int32)
    cdef i32[::1] below = np.empty(n * k, dtype=np.int32)
    cdef i64[::1] fill
    cdef i64[::1] order = np.argsort(np.asarray(scores), kind="stable").astype(np.int64)
    cdef i32 acc, run_mass, w
    cdef double prev

    for i in range(n):
        for l in range(k):
            g = leaves[i, l]
            if g < 0 or g >= n_leaves:
                raise ValueError("leaf id out of range")
            leaf_ptr[g + 1] += 1
            leaf_pop[g] += 1 if unit else mv[i, l]
    for g in range(n_leaves):
        leaf_ptr[g + 1] += leaf_ptr[g]
    fill = np.array(leaf_ptr[:n_leaves], dtype=np.int64)
    # visiting points in score order makes every leaf's member list sorted
    for e in range(n):
        i = order[e]
        for l in range(k):
            g = leaves[i, l]
            w = 1 if unit else mv[i, l]
            members[fill[g]] = <i32> i
            member_mult[fill[g]] = w
            fill[g] += 1
    del fill, order
    with nogil:
        for g in range(n_leaves):
            start = leaf_ptr[g]
            stop = leaf_ptr[g + 1]
            acc = 0
            e = start
            while e < stop:
                # a run of tied scores shares the same "strictly below" mass
                run_start = e
                prev = scores[members[e]]
                run_mass = 0
                while e < stop and scores[members[e]] == prev:
                    below[e] = acc
                    run_mass += member_mult[e]
                    e += 1
                acc += run_mass
    return (np.asarray(leaf_ptr), np.asarray(members), np.asarray(member_mult),
            np.asarray(below), np.asarray(leaf_pop))


def calibration_p2(leaves, const i64[::1] leaf_ptr,
                   const i32[::1] members, const i32[::1] below,
                   const i32[::1] leaf_pop, Py_ssize_t n):
    """p2_i: mass that row i puts strictly below V_i, with no test point present.

    p2_i = (1/k) sum_l c_l(i) / N_l(X_i), where c_l(i) is the multiplicity mass of
    i's leaf-mates with a smaller score and N_l(X_i) the leaf's mass. ``leaves``
    (n, k) is read for k only (an int k is taken too): the sums run over the index.
    """
    cdef Py_ssize_t k = leaves if isinstance(leaves, int) else leaves.shape[1]
    cdef Py_ssize_t l, g, e
    cdef double[::1] p2 = np.zeros(n, dtype=np.float64)
    cdef i32 i
    with nogil:
        for g in range(leaf_ptr.shape[0] - 1):
            if leaf_pop[g] == 0:
                continue
            for e in range(leaf_ptr[g], leaf_ptr[g + 1]):
                i = members[e]
                p2[i] += (<double> below[e]) / leaf_pop[g]
        for e in range(n):
            p2[e] /= k
    return np.asarray(p2)


cdef extern from *:
    int __builtin_ctzll(unsigned long long) nogil


cdef struct Acc:
    double delta      # change of p2_i caused by the test point
    double win        # W[i, n+1]
    double wt         # W[n+1, i]


cdef struct Scratch:
    # indexed by score rank r (calibration points renumbered in ascending (score, index) order)
    Acc* acc
    unsigned long long* bits   # bitmap of touched ranks: scanning it lists neighbours sorted by score
    Py_ssize_t n_words
    # per neighbour a = 0..m-1, in ascending score order
    i32* nb           # rank of neighbour a
    double* base      # p2
    double* lo        # pi_a(v) when v >= V_a: p2 + delta
    double* hi        # pi_a(v) when v < V_a: p2 + delta + win
    # per distinct neighbour score
    double* ucut      # u_1 < ... < u_r
    double* theta     # test-row mass at or below u_j
    Py_ssize_t* after # first neighbour whose score exceeds u_j


cdef void _scratch_free(Scratch* s) noexcept nogil:
    if s == NULL:
        return
    free(s.acc); free(s.bits); free(s.nb); free(s.base); free(s.lo); free(s.hi)
    free(s.ucut); free(s.theta); free(s.after)
    free(s)


cdef Scratch* _scratch_new(Py_ssize_t n) noexcept nogil:
    """Per-thread buffers sized for n calibration points; NULL if out of memory."""
    cdef Scratch* s = <Scratch*> calloc(1, sizeof(Scratch))
    if s == NULL:
        return NULL
    s.n_words = (n + 63) // 64
    s.acc = <Acc*> malloc(n * sizeof(Acc))
    s.bits = <unsigned long long*> calloc(s.n_words, sizeof(unsigned long long))
    s.nb = <i32*> malloc(n * sizeof(i32))
    s.base = <double*> malloc(n * sizeof(double))
    s.lo = <double*> malloc(n * sizeof(double))
    s.hi = <double*> malloc(n * sizeof(double))
    s.ucut = <double*> malloc((n + 1) * sizeof(double))
    s.theta = <double*> malloc((n + 1) * sizeof(double))
    s.after = <Py_ssize_t*> malloc((n + 1) * sizeof(Py_ssize_t))
    if (s.acc == NULL or s.bits == NULL or s.nb == NULL or s.base == NULL or s.lo == NULL
            or s.hi == NULL or s.ucut == NULL or s.theta == NULL or s.after == NULL):
        _scratch_free(s)
        return NULL
    return s


cdef Py_ssize_t _gather(Scratch* s, const i64* leafx, Py_ssize_t k,
                        const i64* leaf_ptr, const i32* members,
                        const i32* member_mult, const i32* below,
                        const i32* leaf_pop, bint unit_mult) noexcept nogil:
    """Accumulate the test point's effect on its leaf-mates; return their count.

    ``members`` holds score ranks. On return ``s.nb[:m]`` lists the neighbours' ranks in ascending order and the
    bitmap is clear again. With unit multiplicities (the honest forest)
    W[n+1, i] equals W[i, n+1], so ``wt`` is not accumulated separately.
    """
    cdef Py_ssize_t l, e, w, m = 0
    cdef i64 g
    cdef i32 r, pop, b
    cdef unsigned long long bit, x
    cdef double inv_new, inv_old, step, dstep, kk = <double> k
    cdef Acc* a
    for l in range(k):
        g = leafx[l]
        if g < 0:
            continue
        pop = leaf_pop[g]
        inv_new = 1.0 / (pop + 1.0)
        inv_old = 1.0 / pop if pop > 0 else 0.0
        step = inv_new / kk
        dstep = (inv_new - inv_old) / kk
        for e in range(leaf_ptr[g], leaf_ptr[g + 1]):
            r = members[e]
            bit = (<unsigned long long> 1) << (r & 63)
            a = &s.acc[r]
            if not (s.bits[r >> 6] & bit):
                s.bits[r >> 6] |= bit
                a.delta = 0.0
                a.win = 0.0
                a.wt = 0.0
            b = below[e]
            if b > 0:
                a.delta += b * dstep
            a.win += step
            if not unit_mult:
                a.wt += member_mult[e] * step
    for w in range(s.n_words):
        x = s.bits[w]
        if x:
            s.bits[w] = 0
            while x:
                s.nb[m] = <i32> ((w << 6) + __builtin_ctzll(x))
                m += 1
                x &= x - 1
    if unit_mult:
        for w in range(m):
            a = &s.acc[s.nb[w]]
            a.wt = a.win
    return m


cdef Py_ssize_t _piece_count(Scratch* s, Py_ssize_t m, double theta, Py_ssize_t j_cut,
                             const double* sorted_p2, Py_ssize_t n, double tol) noexcept nogil:
    """count(v) = #{i <= n : pi_i(v) < theta(v)} for v on one piece.

    Neighbours before ``j_cut`` have V_a <= v (value ``lo``), the others V_a > v
    (value ``hi``); non-neighbours keep p2_i. Differences below ``tol`` count as
    ties, which can only widen the interval.
    """
    cdef double lim = theta - tol
    cdef Py_ssize_t c = _count_less(sorted_p2, n, lim)
    cdef Py_ssize_t a
    # two branch-free loops (the compiler vectorises them)
    for a in range(j_cut):
        c += (s.lo[a] < lim) - (s.base[a] < lim)
    for a in range(j_cut, m):
        c += (s.hi[a] < lim) - (s.base[a] < lim)
    return c


cdef Py_ssize_t _fill_pieces(Scratch* s, Py_ssize_t m, const double* scores_r,
                             const double* p2_r) noexcept nogil:
    """Distinct neighbour scores, the test row's mass at or below each, and each neighbour's pi values.

    Returns r, the number of distinct neighbour scores (m >= 1).
    """
    cdef Py_ssize_t a, r = 0
    cdef i32 q
    cdef double acc = 0.0, v
    for a in range(m):
        q = s.nb[a]
        v = scores_r[q]
        if r == 0 or v != s.ucut[r - 1]:
            if r > 0:
                s.after[r - 1] = a
            s.ucut[r] = v
            r += 1
        acc += s.acc[q].wt
        s.theta[r - 1] = acc
        s.base[a] = p2_r[q]
        s.lo[a] = p2_r[q] + s.acc[q].delta
        s.hi[a] = s.lo[a] + s.acc[q].win
    s.after[r - 1] = m
    return r


cdef inline void _set_infinite(double* t_out, char* closed_out, double* level_out) noexcept nogil:
    t_out[0] = INFINITY
    closed_out[0] = 1
    level_out[0] = 1.0


cdef void _set_piece(Scratch* s, Py_ssize_t lo, Py_ssize_t npieces,
                     double* t_out, char* closed_out, double* level_out) noexcept nogil:
    """Threshold from the first rejected piece ``lo`` (``npieces``: none rejected)."""
    cdef Py_ssize_t s_idx = lo >> 1
    if lo == npieces:
        _set_infinite(t_out, closed_out, level_out)
    elif lo & 1:
        t_out[0] = s.ucut[s_idx + 1]
        closed_out[0] = 0
        level_out[0] = s.theta[s_idx]
    else:
        t_out[0] = s.ucut[s_idx]
        closed_out[0] = 1
        level_out[0] = s.theta[s_idx]


cdef void _threshold_one(Scratch* s, Py_ssize_t m, const double* scores_r,
                         const double* p2_r, const double* sorted_p2, Py_ssize_t n,
                         Py_ssize_t m_req, double tol,
                         double* t_out, char* closed_out, double* level_out) noexcept nogil:
    """Exact LCP threshold from the neighbours gathered in ``s`` (ranks ascending)."""
    cdef Py_ssize_t r, lo, hi, mid, s_idx, j_cut, npieces
    if m == 0 or m_req > n:
        _set_infinite(t_out, closed_out, level_out)
        return
    r = _fill_pieces(s, m, scores_r, p2_r)
    # Pieces after (-inf, u_1] (always accepted, theta = 0 there):
    # q even -> open (u_j, u_{j+1}) with j = q/2; q odd -> the point u_{j+1} with j = (q-1)/2
    # (0-based u). count is non-decreasing along q, so bisect for the first rejected piece.
    npieces = 2 * r - 1
    lo = 0
    hi = npieces
    while lo < hi:
        mid = (lo + hi) >> 1
        s_idx = mid >> 1
        j_cut = s.after[s_idx + 1] if mid & 1 else s.after[s_idx]
        if _piece_count(s, m, s.theta[s_idx], j_cut, sorted_p2, n, tol) >= m_req:
            hi = mid
        else:
            lo = mid + 1
    _set_piece(s, lo, npieces, t_out, closed_out, level_out)


cdef double _piece_mass(Scratch* s, Py_ssize_t m, double theta, Py_ssize_t j_cut,
                        const double* sorted_p2, const double* cumw_p2, const double* w_r,
                        Py_ssize_t n, double tol) noexcept nogil:
    """The shift-weighted count: sum of w_i over {i <= n : pi_i(v) < theta(v)} for v on one piece.

    As :func:`_piece_count`, with a prefix sum of the weights in ascending p2 order instead of a rank.
    """
    cdef double lim = theta - tol
    cdef Py_ssize_t c = _count_less(sorted_p2, n, lim)
    cdef double mass = cumw_p2[c]
    cdef Py_ssize_t a
    for a in range(j_cut):
        mass += w_r[s.nb[a]] * ((s.lo[a] < lim) - (s.base[a] < lim))
    for a in range(j_cut, m):
        mass += w_r[s.nb[a]] * ((s.hi[a] < lim) - (s.base[a] < lim))
    return mass


cdef void _threshold_one_weighted(Scratch* s, Py_ssize_t m, const double* scores_r,
                                  const double* p2_r, const double* sorted_p2,
                                  const double* cumw_p2, const double* w_r, Py_ssize_t n,
                                  double req, double tol,
                                  double* t_out, char* closed_out, double* level_out) noexcept nogil:
    """Weighted LCP threshold: v is rejected once the weighted count reaches ``req``."""
    cdef Py_ssize_t r, lo, hi, mid, s_idx, j_cut, npieces
    if m == 0 or cumw_p2[n] < req:  # isolated, or the whole calibration mass cannot reach req
        _set_infinite(t_out, closed_out, level_out)
        return
    r = _fill_pieces(s, m, scores_r, p2_r)
    npieces = 2 * r - 1
    lo = 0
    hi = npieces
    while lo < hi:
        mid = (lo + hi) >> 1
        s_idx = mid >> 1
        j_cut = s.after[s_idx + 1] if mid & 1 else s.after[s_idx]
        if _piece_mass(s, m, s.theta[s_idx], j_cut, sorted_p2, cumw_p2, w_r, n, tol) >= req:
            hi = mid
        else:
            lo = mid + 1
    _set_piece(s, lo, npieces, t_out, closed_out, level_out)


def score_ranks(scores):
    """Rank of every calibration point in ascending (score, index) order, int32."""
    order = np.argsort(np.asarray(scores, dtype=np.float64), kind="stable")
    rank = np.empty(order.shape[0], dtype=np.int32)
    rank[order] = np.arange(order.shape[0], dtype=np.int32)
    return rank


def lcp_rf_thresholds(leafx, leaf_ptr, members, member_mult, below, leaf_pop,
                      scores, p2, sorted_p2, Py_ssize_t m_req, double tol=1e-10, int n_threads=1):
    """Exact LCP-RF thresholds for many test points (calibration points in any order).

    Parameters
    ----------
    leafx : (m_test, k) int64
        Global leaf id of each test point in each tree, or -1 when that leaf
        holds no calibration point.
    leaf_ptr, members, member_mult, below, leaf_pop
        The leaf index of :func:`build_leaf_index`.
    scores : (n,) float64
        Calibration scores.
    p2, sorted_p2 : (n,) float64
        :func:`calibration_p2` and its ascending sort.
    m_req : int
        ceil((1 - alpha)(n + 1)), computed exactly by the caller.
    tol : float
        Weight sums closer than ``tol`` are treated as equal (never narrows).
    n_threads : int
        OpenMP threads over test points.

    Returns
    -------
    t : (m_test,) float64
        Threshold; ``inf`` when every score is accepted.
    closed : (m_test,) bool
        Whether the accepted set is (-inf, t] (True) or (-inf, t) (False).
    level : (m_test,) float64
        The localizer's mass on calibration scores at or below t (its alpha-tilde);
        1 when t is infinite.

    Notes
    -----
    Renumbers the calibration points by score rank on every call (O(n k)), then
    runs :func:`lcp_rf_thresholds_ranked`; callers that predict repeatedly keep
    the renumbered index instead.
    """
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    rank = score_ranks(scores)
    order = np.argsort(rank)
    return lcp_rf_thresholds_ranked(
        leafx, leaf_ptr, rank[np.asarray(members)], member_mult, below, leaf_pop,
        scores[order], np.ascontiguousarray(np.asarray(p2, dtype=np.float64)[order]), sorted_p2,
        m_req, tol=tol, n_threads=n_threads,
    )


def lcp_rf_thresholds_ranked(const i64[:, ::1] leafx, const i64[::1] leaf_ptr,
                             const i32[::1] member_rank, const i32[::1] member_mult,
                             const i32[::1] below, const i32[::1] leaf_pop,
                             const double[::1] scores_r, const double[::1] p2_r,
                             const double[::1] sorted_p2, Py_ssize_t m_req,
                             double tol=1e-10, int n_threads=1, unit_mult=None):
    """:func:`lcp_rf_thresholds` on an index whose points are numbered by score rank.

    ``member_rank`` holds the leaf members' ranks (:func:`score_ranks`),
    ``scores_r`` and ``p2_r`` are laid out by rank (so ``scores_r`` ascends):
    the neighbours of a test point then come out of a bitmap scan already
    sorted, and the gather reads no extra indirection. ``unit_mult``: whether
    every multiplicity is 1 (computed when not given).
    """
    cdef Py_ssize_t mt = leafx.shape[0], k = leafx.shape[1], n = scores_r.shape[0]
    cdef double[::1] t = np.empty(mt, dtype=np.float64)
    cdef char[::1] closed = np.empty(mt, dtype=np.int8)
    cdef double[::1] level = np.empty(mt, dtype=np.float64)
    cdef Py_ssize_t q, m
    cdef Scratch* s
    cdef int[::1] failed = np.zeros(1, dtype=np.intc)
    cdef bint unit = bool(np.all(np.asarray(member_mult) == 1)) if unit_mult is None else bool(unit_mult)
    if mt == 0:
        return np.asarray(t), np.asarray(closed).astype(bool), np.asarray(level)
    with nogil, parallel(num_threads=n_threads):
        # assigned inside the block, so each thread gets its own buffers
        s = _scratch_new(n if n > 0 else 1)
        if s == NULL:
            failed[0] = 1
        else:
            for q in prange(mt, schedule="dynamic", chunksize=8):
                m = _gather(s, &leafx[q, 0], k, &leaf_ptr[0], &member_rank[0],
                            &member_mult[0], &below[0], &leaf_pop[0], unit)
                _threshold_one(s, m, &scores_r[0], &p2_r[0], &sorted_p2[0], n,
                               m_req, tol, &t[q], &closed[q], &level[q])
        _scratch_free(s)
    if failed[0]:
        raise MemoryError("could not allocate the per-thread scratch space")
    return np.asarray(t), np.asarray(closed).astype(bool), np.asarray(level)


def lcp_rf_thresholds_weighted(const i64[:, ::1] leafx, const i64[::1] leaf_ptr,
                                const i32[::1] member_rank, const i32[::1] member_mult,
                                const i32[::1] below, const i32[::1] leaf_pop,
                                const double[::1] scores_r, const double[::1] p2_r,
                                const double[::1] sorted_p2, const double[::1] cumw_p2,
                                const double[::1] w_r, const double[::1] req,
                                double tol=1e-10, int n_threads=1, unit_mult=None):
    """Covariate-shift weighted LCP-RF thresholds (docs/theory.md, "Covariate shift").

    As :func:`lcp_rf_thresholds_ranked`, but v is accepted iff the weighted count
    sum_i w_i 1{pi_i(v) < theta(v)} stays below ``req[q]`` instead of the count below m_req.

    Parameters
    ----------
    cumw_p2 : (n + 1,) float64
        Prefix sums of the calibration weights taken in the order of ``sorted_p2``
        (``cumw_p2[c]``: the weight of the c points with the smallest p2).
    w_r : (n,) float64
        Calibration weights laid out by score rank.
    req : (m_test,) float64
        Per test point, (1 - alpha)(sum_j w_j + w(x)) plus the caller's tolerance.
    """
    cdef Py_ssize_t mt = leafx.shape[0], k = leafx.shape[1], n = scores_r.shape[0]
    cdef double[::1] t = np.empty(mt, dtype=np.float64)
    cdef char[::1] closed = np.empty(mt, dtype=np.int8)
    cdef double[::1] level = np.empty(mt, dtype=np.float64)
    cdef Py_ssize_t q, m
    cdef Scratch* s
    cdef int[::1] failed = np.zeros(1, dtype=np.intc)
    cdef bint unit = bool(np.all(np.asarray(member_mult) == 1)) if unit_mult is None else bool(unit_mult)
    if req.shape[0] != mt or cumw_p2.shape[0] != n + 1 or w_r.shape[0] != n:
        raise ValueError("req needs one entry per test row, cumw_p2 n + 1 entries and w_r n entries")
    if mt == 0:
        return np.asarray(t), np.asarray(closed).astype(bool), np.asarray(level)
    with nogil, parallel(num_threads=n_threads):
        s = _scratch_new(n if n > 0 else 1)
        if s == NULL:
            failed[0] = 1
        else:
            for q in prange(mt, schedule="dynamic", chunksize=8):
                m = _gather(s, &leafx[q, 0], k, &leaf_ptr[0], &member_rank[0],
                            &member_mult[0], &below[0], &leaf_pop[0], unit)
                _threshold_one_weighted(s, m, &scores_r[0], &p2_r[0], &sorted_p2[0], &cumw_p2[0],
                                        &w_r[0], n, req[q], tol, &t[q], &closed[q], &level[q])
        _scratch_free(s)
    if failed[0]:
        raise MemoryError("could not allocate the per-thread scratch space")
    return np.asarray(t), np.asarray(closed).astype(bool), np.asarray(level)


cdef int _cmp_i32(const void* a, const void* b) noexcept nogil:
    cdef i32 x = (<const i32*> a)[0], y = (<const i32*> b)[0]
    return (x > y) - (x < y)


cdef Py_ssize_t _weight_row(const i64* leafx, Py_ssize_t k, const i64* leaf_ptr,
                            const i32* members, const i32* member_mult,
                            const i32* leaf_pop, bint include_self,
                            double* acc, char* mark, i32* nb, double* self_w) noexcept nogil:
    """Accumulate one test row's weights in ``acc``; return its neighbour count."""
    cdef Py_ssize_t l, e, m = 0, k_eff = 0
    cdef i64 g
    cdef i32 i
    cdef double denom
    self_w[0] = 0.0
    for l in range(k):
        g = leafx[l]
        if g >= 0 and leaf_pop[g] > 0:
            k_eff += 1
    for l in range(k):
        g = leafx[l]
        if include_self:
            denom = (leaf_pop[g] + 1.0) * k if g >= 0 else <double> k
            self_w[0] += 1.0 / denom
        else:
            if g < 0 or leaf_pop[g] == 0:
                continue
            denom = (<double> leaf_pop[g]) * k_eff
        if g < 0:
            continue
        for e in range(leaf_ptr[g], leaf_ptr[g + 1]):
            if member_mult[e] == 0:
                continue
            i = members[e]
            if not mark[i]:
                mark[i] = 1
                nb[m] = i
                m += 1
                acc[i] = 0.0
            acc[i] += member_mult[e] / denom
    return m


def forest_weight_rows(const i64[:, ::1] leafx, const i64[::1] leaf_ptr,
                       const i32[::1] members, const i32[::1] member_mult,
                       const i32[::1] leaf_pop, Py_ssize_t n, bint include_self):
    """Localizer weights of test points on calibration points, as CSR arrays.

    With ``include_self`` the test point is counted in its leaves (the LCP row:
    w_j = (1/k) sum_l mult_j / (N_l + 1)) and its own mass is returned in
    ``self_w``. Without it these are Meinshausen's QRF weights: each tree's
    leaf is normalised by its calibration mass, averaged over the trees whose
    leaf holds calibration mass (rows sum to 1, or to 0 when none does).

    Two passes without the GIL: count each row's neighbours, then fill.

    Returns
    -------
    indptr, indices, data, self_w
    """
    cdef Py_ssize_t mt = leafx.shape[0], k = leafx.shape[1]
    cdef Py_ssize_t q, a, m, nn = n if n > 0 else 1
    cdef i64[::1] indptr = np.zeros(mt + 1, dtype=np.int64)
    cdef double[::1] self_w = np.zeros(mt, dtype=np.float64)
    cdef double* acc = <double*> calloc(nn, sizeof(double))
    cdef char* mark = <char*> calloc(nn, sizeof(char))
    cdef i32* nb = <i32*> malloc(nn * sizeof(i32))
    cdef i32[::1] indices
    cdef double[::1] data
    if acc == NULL or mark == NULL or nb == NULL:
        free(acc); free(mark); free(nb)
        raise MemoryError()
    if k == 0 or mt == 0:
        free(acc); free(mark); free(nb)
        return np.asarray(indptr), np.empty(0, np.int32), np.empty(0, np.float64), np.asarray(self_w)
    with nogil:
        for q in range(mt):
            m = _weight_row(&leafx[q, 0], k, &leaf_ptr[0], &members[0], &member_mult[0],
                            &leaf_pop[0], include_self, acc, mark, nb, &self_w[q])
            for a in range(m):
                mark[nb[a]] = 0
            indptr[q + 1] = indptr[q] + m
    indices = np.empty(indptr[mt], dtype=np.int32)
    data = np.empty(indptr[mt], dtype=np.float64)
    with nogil:
        for q in range(mt):
            m = _weight_row(&leafx[q, 0], k, &leaf_ptr[0], &members[0], &member_mult[0],
                            &leaf_pop[0], include_self, acc, mark, nb, &self_w[q])
            qsort(nb, m, sizeof(i32), _cmp_i32)
            for a in range(m):
                indices[indptr[q] + a] = nb[a]
                data[indptr[q] + a] = acc[nb[a]]
                mark[nb[a]] = 0
    free(acc); free(mark); free(nb)
    return np.asarray(indptr), np.asarray(indices), np.asarray(data), np.asarray(self_w)


cdef double _row_sumsq(const i64* leafx, Py_ssize_t k, const i64* leaf_ptr, const i32* members,
                       const i32* member_mult, const i32* leaf_pop, double* acc, char* mark,
                       i32* nb) noexcept nogil:
    """sum_j w_j^2 of one row's QRF weights (as forest_weight_rows without the test point)."""
    cdef double self_w = 0.0, total = 0.0
    cdef Py_ssize_t a, m
    m = _weight_row(leafx, k, leaf_ptr, members, member_mult, leaf_pop, False, acc, mark, nb, &self_w)
    for a in range(m):
        total += acc[nb[a]] * acc[nb[a]]
        mark[nb[a]] = 0
    return total


def forest_weight_sumsq(const i64[:, ::1] leafx, const i64[::1] leaf_ptr,
                        const i32[::1] members, const i32[::1] member_mult,
                        const i32[::1] leaf_pop, Py_ssize_t n, int n_threads=1):
    """sum_j w_ij^2 of every row of :func:`forest_weight_rows` (``include_self=False``), rows never stored.

    For the effective sample size 1 / sum_j w_ij^2 of the localizing weights;
    OpenMP threads over rows, O(n) scratch per thread.
    """
    cdef Py_ssize_t mt = leafx.shape[0], k = leafx.shape[1], q, nn = n if n > 0 else 1
    cdef double[::1] out = np.zeros(mt, dtype=np.float64)
    cdef double* acc
    cdef char* mark
    cdef i32* nb
    cdef int[::1] failed = np.zeros(1, dtype=np.intc)
    if mt == 0 or k == 0:
        return np.asarray(out)
    with nogil, parallel(num_threads=n_threads):
        # assigned inside the block, so each thread gets its own buffers
        acc = <double*> calloc(nn, sizeof(double))
        mark = <char*> calloc(nn, sizeof(char))
        nb = <i32*> malloc(nn * sizeof(i32))
        if acc == NULL or mark == NULL or nb == NULL:
            failed[0] = 1
        else:
            for q in prange(mt, schedule="dynamic", chunksize=16):
                out[q] = _row_sumsq(&leafx[q, 0], k, &leaf_ptr[0], &members[0], &member_mult[0],
                                    &leaf_pop[0], acc, mark, nb)
        free(acc); free(mark); free(nb)
    if failed[0]:
        raise MemoryError("could not allocate the per-thread scratch space")
    return np.asarray(out)
