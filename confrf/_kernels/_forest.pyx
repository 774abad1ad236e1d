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
from libc.stdlib cimport malloc, free, calloc, realloc, qsort
from libc.math cimport INFINITY

from ._gather cimport (
    Acc, i32, i64, bitmap_gather, count_change, count_less as _count_less, fill_pieces, leaf_steps, piece_cut, piece_mass,
)

cnp.import_array()


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
        Multiplicity of each member; without ``mult`` a read-only view of a
        single 1 (stride 0, :func:`unit_multiplicities`): the honest index
        stores no multiplicities.
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
    cdef i32[::1] member_mult = np.empty(0 if unit else n * k, dtype=np.int32)
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
            members[fill[g]] = <i32> i
            if not unit:
                member_mult[fill[g]] = mv[i, l]
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
                    run_mass += 1 if unit else member_mult[e]
                    e += 1
                acc += run_mass
    return (np.asarray(leaf_ptr), np.asarray(members),
            unit_multiplicities(n * k) if unit else np.asarray(member_mult),
            np.asarray(below), np.asarray(leaf_pop))


def unit_multiplicities(Py_ssize_t size):
    """``size`` multiplicities of 1 as a read-only stride-0 view of one int32: no memory per entry."""
    return np.broadcast_to(np.ones(1, dtype=np.int32), (size,))


def _mult_arg(member_mult, unit_mult):
    """(member_mult as the kernels read it, unit): a contiguous int32 array unless every multiplicity is 1.

    A stride-0 view (:func:`unit_multiplicities`) is unit and never indexed; ``unit_mult`` None: computed.
    """
    a = np.asarray(member_mult)
    if a.ndim == 1 and a.shape[0] > 1 and a.strides[0] == 0:
        if a[0] != 1:
            raise ValueError("a stride-0 member_mult must hold multiplicities of 1")
        unit = True
    else:
        unit = bool(np.all(a == 1)) if unit_mult is None else bool(unit_mult)
    return (np.ones(1, dtype=np.int32), True) if unit else (np.ascontiguousarray(a, dtype=np.int32), False)


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
    void __builtin_prefetch(const void*) nogil


ctypedef unsigned long long u64

# how a test point's leaf-mates are gathered (the ``gather`` argument of the threshold kernels)
cdef enum:
    GATHER_AUTO = 0
    GATHER_BITMAP = 1
    GATHER_SORT = 2
    GATHER_BLOCKED = 3

#: the sorting and the bitmap gather are explicit modes only; "auto" takes the blocked one, measured faster
#: than both (issue 40; one forest of 100 trees, 1 thread: at 50,000 and 950,000 conformal points, 14,000 and
#: 270,000 neighbours per point, 23 and 28 ns a neighbour against the bitmap's 40 and 113 and the sort's 62 and 72;
#: with 830 neighbours of 30,000 entries per point at 950,000 points, 0.8x the bitmap's time, 0.5x the sort's)
#: widest radix digit of the sort (4,096 buckets: the counts stay in L1)
cdef int RADIX_MAX_BITS = 12
#: the blocked gather's rank blocks: 2**BLOCK_MIN_BITS to 2**BLOCK_MAX_BITS ranks, whose sums (16 bytes a rank,
#: 24 with multiplicities) and bitmap stay in L1/L2 (L3 at the widest) at any n ...
cdef int BLOCK_MIN_BITS = 12
cdef int BLOCK_MAX_BITS = 16
BLOCK_BITS = (BLOCK_MIN_BITS, BLOCK_MAX_BITS)
#: ... the narrowest whose per-(block, tree) steps are at most this share of the test point's entries
cdef double BLOCK_STEP_SHARE = 0.1
#: ... read ahead: a leaf's next block of entries is prefetched while the current block is summed (100 trees are
#: 200 short read streams, too many for the hardware prefetcher)
cdef Py_ssize_t BLOCK_PREFETCH_LINES = 4
GATHER_MODES = {"auto": GATHER_AUTO, "bitmap": GATHER_BITMAP, "sort": GATHER_SORT, "blocked": GATHER_BLOCKED}


cdef struct Scratch:
    Py_ssize_t n      # calibration points
    Py_ssize_t k      # trees
    bint unit         # every multiplicity is 1: W[n+1, i] = W[i, n+1]
    int mode          # GATHER_*
    Py_ssize_t compact_min  # the bisection compacts while more neighbours than this are undecided
    # per tree: the test point's share 1/((N+1)k) of its leaf and the change (1/(N+1) - 1/N)/k of the others'
    double* step
    double* dstep
    # sorting gather: one entry per (tree, leaf-mate), capacity cap_e
    Py_ssize_t cap_e
    u64* keys         # score rank << 32 | entry number
    u64* tmp
    i32* e_below
    i32* e_tree
    i32* e_mult
    Py_ssize_t* hist  # radix bucket counts
    int radix_bits
    int radix_passes
    # bitmap gather over all n points (allocated on first use)
    Acc* acc          # indexed by score rank r (calibration points renumbered in ascending (score, index) order)
    unsigned long long* bits   # bitmap of touched ranks: scanning it lists neighbours sorted by score
    Py_ssize_t n_words
    # blocked gather: sums and bitmap of one block of ranks (zero between uses), each live leaf's read position
    double* bdelta
    double* bwin
    double* bwt
    unsigned long long* bbits
    Py_ssize_t* cur
    Py_ssize_t* end
    i32* live         # trees whose leaf still has entries beyond the current block
    # per neighbour a = 0..m-1, in ascending score order, capacity cap_m
    Py_ssize_t cap_m
    i32* nb           # rank of neighbour a
    double* delta     # Acc of neighbour a
    double* win
    double* wt
    double* base      # p2
    double* lo        # pi_a(v) when v >= V_a: p2 + delta
    double* hi        # pi_a(v) when v < V_a: p2 + delta + win
    i32* pos          # the bisection's undecided neighbours: their positions a (lo, hi, base compacted alike)
    # per distinct neighbour score (capacity cap_m + 1)
    double* ucut      # u_1 < ... < u_r
    double* theta     # test-row mass at or below u_j
    Py_ssize_t* after # first neighbour whose score exceeds u_j


cdef void _scratch_free(Scratch* s) noexcept nogil:
    if s == NULL:
        return
    free(s.step); free(s.dstep)
    free(s.keys); free(s.tmp); free(s.e_below); free(s.e_tree); free(s.e_mult); free(s.hist)
    free(s.acc); free(s.bits)
    free(s.bdelta); free(s.bwin); free(s.bwt); free(s.bbits); free(s.cur); free(s.end); free(s.live)
    free(s.nb); free(s.delta); free(s.win); free(s.wt); free(s.base); free(s.lo); free(s.hi); free(s.pos)
    free(s.ucut); free(s.theta); free(s.after)
    free(s)


cdef Scratch* _scratch_new(Py_ssize_t n, Py_ssize_t k, bint unit, int mode, Py_ssize_t compact_min) noexcept nogil:
    """Per-thread buffers; those sized by a test point's neighbours grow on demand. NULL if out of memory."""
    cdef Scratch* s = <Scratch*> calloc(1, sizeof(Scratch))
    cdef int bits = 0
    if s == NULL:
        return NULL
    s.n, s.k, s.unit, s.mode, s.compact_min = n, k, unit, mode, compact_min
    s.step = <double*> malloc((k + 1) * sizeof(double))
    s.dstep = <double*> malloc((k + 1) * sizeof(double))
    # ranks < n take `bits` bits, sorted in passes of at most RADIX_MAX_BITS bits
    while bits < 40 and ((<Py_ssize_t> 1) << bits) < n:
        bits += 1
    s.radix_passes = (bits + RADIX_MAX_BITS - 1) // RADIX_MAX_BITS
    s.radix_bits = (bits + s.radix_passes - 1) // s.radix_passes if s.radix_passes > 0 else 0
    s.hist = <Py_ssize_t*> malloc(((1 << s.radix_bits) + 1) * sizeof(Py_ssize_t))
    s.cur = <Py_ssize_t*> malloc((k + 1) * sizeof(Py_ssize_t))
    s.end = <Py_ssize_t*> malloc((k + 1) * sizeof(Py_ssize_t))
    s.live = <i32*> malloc((k + 1) * sizeof(i32))
    if s.step == NULL or s.dstep == NULL or s.hist == NULL or s.cur == NULL or s.end == NULL or s.live == NULL:
        _scratch_free(s)
        return NULL
    return s


cdef int _grow(void** p, size_t nbytes) noexcept nogil:
    """realloc ``*p`` to ``nbytes``; -1 (``*p`` untouched) if out of memory."""
    cdef void* q = realloc(p[0], nbytes if nbytes > 0 else 1)
    if q == NULL:
        return -1
    p[0] = q
    return 0


cdef inline Py_ssize_t _new_capacity(Py_ssize_t need, Py_ssize_t cap) noexcept nogil:
    """0 when ``cap`` suffices, else the capacity to grow to: at least twice ``cap``, so growth costs O(1)
    amortised."""
    if need <= cap:
        return 0
    return need if need >= 2 * cap else 2 * cap


cdef int _reserve_neighbours(Scratch* s, Py_ssize_t m) noexcept nogil:
    m = _new_capacity(m, s.cap_m)
    if m == 0:
        return 0
    if s.n < m:
        m = s.n
    if (_grow(<void**> &s.nb, m * sizeof(i32)) or _grow(<void**> &s.delta, m * sizeof(double))
            or _grow(<void**> &s.win, m * sizeof(double)) or _grow(<void**> &s.wt, m * sizeof(double))
            or _grow(<void**> &s.base, m * sizeof(double)) or _grow(<void**> &s.lo, m * sizeof(double))
            or _grow(<void**> &s.hi, m * sizeof(double)) or _grow(<void**> &s.pos, m * sizeof(i32))
            or _grow(<void**> &s.ucut, (m + 1) * sizeof(double))
            or _grow(<void**> &s.theta, (m + 1) * sizeof(double))
            or _grow(<void**> &s.after, (m + 1) * sizeof(Py_ssize_t))):
        return -1
    s.cap_m = m
    return 0


cdef int _reserve_entries(Scratch* s, Py_ssize_t e) noexcept nogil:
    e = _new_capacity(e, s.cap_e)
    if e == 0:
        return 0
    if (_grow(<void**> &s.keys, e * sizeof(u64)) or _grow(<void**> &s.tmp, e * sizeof(u64))
            or _grow(<void**> &s.e_below, e * sizeof(i32)) or _grow(<void**> &s.e_tree, e * sizeof(i32))
            or (not s.unit and _grow(<void**> &s.e_mult, e * sizeof(i32)))):
        return -1
    s.cap_e = e
    return 0


cdef int _reserve_bitmap(Scratch* s) noexcept nogil:
    if s.acc != NULL:
        return 0
    s.n_words = (s.n + 63) // 64
    s.bits = <unsigned long long*> calloc(s.n_words if s.n_words > 0 else 1, sizeof(unsigned long long))
    s.acc = <Acc*> malloc((s.n if s.n > 0 else 1) * sizeof(Acc))
    if s.bits == NULL or s.acc == NULL:
        free(s.bits); free(s.acc)
        s.bits = NULL
        s.acc = NULL
        return -1
    return 0


cdef void _gather_sort(Scratch* s, const i64* leafx, const i64* leaf_ptr, const i32* members,
                       const i32* member_mult, const i32* below) noexcept nogil:
    """Entries (rank, tree) of the test point's leaves, radix-sorted by rank into ``s.keys``.

    Reads the index in leaf order and writes the entries in sequence: no access spans the n points, so the
    cost follows the entries, not n. The sort is stable, so one rank's entries stay in tree order.
    """
    cdef Py_ssize_t l, e, i = 0, j, p, d, nb_ = 1 << s.radix_bits
    cdef i64 g
    cdef u64* src = s.keys
    cdef u64* dst = s.tmp
    cdef u64* sw
    cdef u64 mask = (<u64> nb_) - 1
    cdef int shift
    for l in range(s.k):
        g = leafx[l]
        if g < 0:
            continue
        for e in range(leaf_ptr[g], leaf_ptr[g + 1]):
            src[i] = ((<u64> members[e]) << 32) | (<u64> i)
            s.e_below[i] = below[e]
            s.e_tree[i] = <i32> l
            if not s.unit:
                s.e_mult[i] = member_mult[e]
            i += 1
    for p in range(s.radix_passes):
        shift = 32 + p * s.radix_bits
        for d in range(nb_ + 1):
            s.hist[d] = 0
        for j in range(i):
            s.hist[((src[j] >> shift) & mask) + 1] += 1
        for d in range(nb_):
            s.hist[d + 1] += s.hist[d]
        for j in range(i):
            d = (src[j] >> shift) & mask
            dst[s.hist[d]] = src[j]
            s.hist[d] += 1
        sw = src
        src = dst
        dst = sw
    if src != s.keys:  # an odd number of passes: the result is in tmp
        s.tmp = s.keys
        s.keys = src


cdef Py_ssize_t _sum_sorted(Scratch* s, Py_ssize_t n_entries) noexcept nogil:
    """Sum the sorted entries per rank into the per-neighbour arrays; return the neighbour count."""
    cdef Py_ssize_t j, m = 0, i
    cdef u64 key, r, prev = 0
    cdef i32 l, b
    for j in range(n_entries):
        key = s.keys[j]
        r = key >> 32
        i = <Py_ssize_t> (key & 0xFFFFFFFFULL)
        if m == 0 or r != prev:
            s.nb[m] = <i32> r
            s.delta[m] = 0.0
            s.win[m] = 0.0
            s.wt[m] = 0.0
            m += 1
            prev = r
        l = s.e_tree[i]
        b = s.e_below[i]
        # the same products, added in the same (tree) order as the bitmap gather: identical sums
        if b > 0:
            s.delta[m - 1] += b * s.dstep[l]
        s.win[m - 1] += s.step[l]
        if not s.unit:
            s.wt[m - 1] += s.e_mult[i] * s.step[l]
    return m


cdef Py_ssize_t _gather_bitmap(Scratch* s, const i64* leafx, const i64* leaf_ptr, const i32* members,
                               const i32* member_mult, const i32* below) noexcept nogil:
    """Accumulate the entries in ``s.acc`` (indexed by rank), then list the touched ranks in ascending order
    (``_gather.pxd``, shared with the p-value kernel)."""
    return bitmap_gather(s.k, s.unit, s.step, s.dstep, s.acc, s.bits, s.n_words, s.nb, s.delta, s.win, s.wt,
                         leafx, leaf_ptr, members, member_mult, below)


cdef int _block_bits(Py_ssize_t n, Py_ssize_t k, Py_ssize_t n_entries) noexcept nogil:
    """Bits of the blocked gather's rank blocks: the narrowest block (its sums the most likely to stay in the
    caches) whose (block, tree) steps are at most BLOCK_STEP_SHARE of the entries, at most BLOCK_MAX_BITS."""
    cdef int bits = BLOCK_MIN_BITS
    while bits < BLOCK_MAX_BITS and (((n - 1) >> bits) + 1) * k > BLOCK_STEP_SHARE * n_entries:
        bits += 1
    return bits


def _set_block_bits(int lo, int hi):
    """Set the blocked gather's (narrowest, widest) block bits; returns the previous pair (tests: many blocks at
    small n, which the slow references can check). Not thread-safe: no kernel may be running."""
    global BLOCK_MIN_BITS, BLOCK_MAX_BITS
    if not 1 <= lo <= hi <= 16:
        raise ValueError(f"block bits must satisfy 1 <= lo <= hi <= 16, got ({lo}, {hi})")
    old = (BLOCK_MIN_BITS, BLOCK_MAX_BITS)
    BLOCK_MIN_BITS, BLOCK_MAX_BITS = lo, hi
    return old


cdef int _reserve_blocks(Scratch* s) noexcept nogil:
    cdef Py_ssize_t width = (<Py_ssize_t> 1) << 16  # the widest block _set_block_bits allows
    if s.bdelta != NULL:
        return 0
    s.bdelta = <double*> calloc(width, sizeof(double))
    s.bwin = <double*> calloc(width, sizeof(double))
    s.bwt = <double*> calloc(width, sizeof(double))
    s.bbits = <unsigned long long*> calloc(width // 64, sizeof(unsigned long long))  # (width >= 64)
    if s.bdelta == NULL or s.bwin == NULL or s.bwt == NULL or s.bbits == NULL:
        free(s.bdelta); free(s.bwin); free(s.bwt); free(s.bbits)
        s.bdelta = NULL
        s.bwin = NULL
        s.bwt = NULL
        s.bbits = NULL
        return -1
    return 0


cdef Py_ssize_t _gather_blocked(Scratch* s, const i64* leafx, const i64* leaf_ptr, const i32* members,
                                const i32* member_mult, const i32* below, int bits) noexcept nogil:
    """The bitmap gather one block of 2**bits score ranks at a time: its sums stay in the caches at any n.

    A leaf's members are stored in ascending score rank, so each leaf is read once, in sequence, a block's worth
    per block, and the reads ahead are prefetched. Within a block the trees are visited in order, so every rank's
    sums add the same products in the same (tree) order as :func:`_gather_bitmap`: identical doubles. (A zero
    ``below`` adds b * dstep = -0.0, which leaves every sum unchanged, as the bitmap gather's skip does.) Memory is
    touched only where the entries and the neighbours' rows lie, never across all n points.
    """
    cdef Py_ssize_t l, t, e, stop, w, j, m = 0, n_live = 0, kept, n_words
    cdef Py_ssize_t width = (<Py_ssize_t> 1) << bits
    cdef i64 g
    cdef i32 r
    cdef Py_ssize_t top, base
    cdef double st, dst
    cdef unsigned long long x
    cdef double* bd = s.bdelta
    cdef double* bw = s.bwin
    cdef double* bt = s.bwt
    cdef unsigned long long* bm = s.bbits
    for l in range(s.k):
        g = leafx[l]
        if g < 0 or leaf_ptr[g] == leaf_ptr[g + 1]:
            continue
        s.cur[l] = leaf_ptr[g]
        s.end[l] = leaf_ptr[g + 1]
        s.live[n_live] = <i32> l
        n_live += 1
        for j in range(BLOCK_PREFETCH_LINES):
            __builtin_prefetch(&members[leaf_ptr[g] + 16 * j])
            __builtin_prefetch(&below[leaf_ptr[g] + 16 * j])
    while n_live > 0:
        # the block of the smallest rank still to read: blocks without entries are skipped
        top = members[s.cur[s.live[0]]]
        for t in range(1, n_live):
            r = members[s.cur[s.live[t]]]
            if r < top:
                top = r
        base = (top >> bits) << bits
        top = base + width
        # words of the bitmap that can hold a rank below n
        n_words = (((width if s.n - base > width else s.n - base)) + 63) >> 6
        kept = 0
        for t in range(n_live):
            l = s.live[t]
            e = s.cur[l]
            stop = s.end[l]
            st = s.step[l]
            dst = s.dstep[l]
            if s.unit:
                while e < stop and members[e] < top:
                    r = <i32> (members[e] - base)
                    bm[r >> 6] |= (<unsigned long long> 1) << (r & 63)
                    bd[r] += below[e] * dst
                    bw[r] += st
                    e += 1
            else:
                while e < stop and members[e] < top:
                    r = <i32> (members[e] - base)
                    bm[r >> 6] |= (<unsigned long long> 1) << (r & 63)
                    bd[r] += below[e] * dst
                    bw[r] += st
                    bt[r] += member_mult[e] * st
                    e += 1
            s.cur[l] = e
            if e < stop:
                s.live[kept] = <i32> l
                kept += 1
                for j in range(BLOCK_PREFETCH_LINES):
                    __builtin_prefetch(&members[e + 16 * j])
                    __builtin_prefetch(&below[e + 16 * j])
        n_live = kept
        for w in range(n_words):
            x = bm[w]
            if x:
                bm[w] = 0
                while x:
                    r = <i32> ((w << 6) + __builtin_ctzll(x))
                    s.nb[m] = <i32> (base + r)
                    s.delta[m] = bd[r]
                    s.win[m] = bw[r]
                    s.wt[m] = bt[r]
                    bd[r] = 0.0
                    bw[r] = 0.0
                    bt[r] = 0.0
                    m += 1
                    x &= x - 1
    return m


cdef Py_ssize_t _gather(Scratch* s, const i64* leafx, const i64* leaf_ptr, const i32* members,
                        const i32* member_mult, const i32* below, const i32* leaf_pop) noexcept nogil:
    """Accumulate the test point's effect on its leaf-mates; return their count (-1: out of memory).

    ``members`` holds score ranks. On return ``s.nb[:m]`` lists the neighbours' ranks in ascending order
    with their ``delta``, ``win`` and ``wt``.
    """
    cdef Py_ssize_t n_entries = leaf_steps(s.k, leafx, leaf_ptr, leaf_pop, s.step, s.dstep)
    if n_entries == 0:
        return 0
    if _reserve_neighbours(s, n_entries if n_entries < s.n else s.n):
        return -1
    if s.mode == GATHER_BLOCKED or s.mode == GATHER_AUTO:
        if _reserve_blocks(s):
            return -1
        return _gather_blocked(s, leafx, leaf_ptr, members, member_mult, below, _block_bits(s.n, s.k, n_entries))
    if s.mode == GATHER_SORT:
        if _reserve_entries(s, n_entries):
            return -1
        _gather_sort(s, leafx, leaf_ptr, members, member_mult, below)
        return _sum_sorted(s, n_entries)
    if _reserve_bitmap(s):
        return -1
    return _gather_bitmap(s, leafx, leaf_ptr, members, member_mult, below)


#: the bisection sets aside decided neighbours while more than this many are undecided (the kernels' default)
cdef Py_ssize_t COMPACT_DEFAULT = 64
COMPACT_MIN = COMPACT_DEFAULT


cdef Py_ssize_t _piece_count(Scratch* s, Py_ssize_t m_act, bint compacted, Py_ssize_t off, double theta,
                             Py_ssize_t j_cut, const double* sorted_p2, Py_ssize_t c_lo, Py_ssize_t c_hi,
                             double tol) noexcept nogil:
    """count(v) = #{i <= n : pi_i(v) < theta(v)} for v on one piece.

    Neighbours before ``j_cut`` have V_a <= v (value ``lo``), the others V_a > v
    (value ``hi``); non-neighbours keep p2_i. Differences below ``tol`` count as
    ties, which can only widen the interval. ``off``: the count of the
    neighbours already set aside (:func:`_compact`); the non-neighbours' count
    is searched between ``c_lo`` and ``c_hi`` only.
    """
    cdef double lim = theta - tol
    cdef Py_ssize_t c = c_lo + _count_less(&sorted_p2[c_lo], c_hi - c_lo, lim) + off
    cdef Py_ssize_t w_cut = j_cut, lo_ = 0, hi_ = m_act, mid
    if compacted:  # positions ascend: the first undecided neighbour at or after j_cut
        while lo_ < hi_:
            mid = (lo_ + hi_) >> 1
            if s.pos[mid] < j_cut:
                lo_ = mid + 1
            else:
                hi_ = mid
        w_cut = lo_
    return c + <Py_ssize_t> count_change(s.lo, s.hi, s.base, w_cut, m_act, lim)


cdef inline bint _outside(double v, double lim_lo, double lim_hi) noexcept nogil:
    return v < lim_lo or v >= lim_hi


cdef Py_ssize_t _compact(Scratch* s, Py_ssize_t m_act, bint compacted, Py_ssize_t lo, Py_ssize_t hi,
                         double tol, Py_ssize_t* off) noexcept nogil:
    """Set aside the neighbours whose term is the same on every piece the bisection may still visit.

    Pieces lo .. hi - 1 remain: their lim = theta - tol lies in [lim_lo, lim_hi] and their cut in
    [j_lo, j_hi]. A neighbour before j_lo always counts its ``lo`` value, one at or after j_hi its ``hi``
    value; when that value and ``base`` both lie below lim_lo or at or above lim_hi, its term
    [value < lim] - [base < lim] is fixed: it is added to ``off`` and the neighbour leaves the arrays
    (the others move down, in order). The counts, hence every decision, stay exactly those of the full sums.
    Returns the undecided count.
    """
    cdef double lim_lo = s.theta[lo >> 1] - tol, lim_hi = s.theta[(hi - 1) >> 1] - tol, v, b
    cdef Py_ssize_t j_lo = piece_cut(s.after, lo), j_hi = piece_cut(s.after, hi - 1), t, w = 0
    cdef i32 a
    for t in range(m_act):
        a = s.pos[t] if compacted else <i32> t
        b = s.base[t]
        v = s.lo[t] if a < j_lo else s.hi[t]
        if (a < j_lo or a >= j_hi) and _outside(v, lim_lo, lim_hi) and _outside(b, lim_lo, lim_hi):
            off[0] += (v < lim_lo) - (b < lim_lo)
        else:
            s.pos[w] = a
            s.lo[w] = s.lo[t]
            s.hi[w] = s.hi[t]
            s.base[w] = b
            w += 1
    return w


cdef inline Py_ssize_t _fill_pieces(Scratch* s, Py_ssize_t m, const double* sp_r) noexcept nogil:
    """The pieces of the m >= 1 neighbours gathered in ``s`` (``_gather.pxd``'s ``fill_pieces``); returns r."""
    return fill_pieces(m, sp_r, s.nb, s.delta, s.win, s.wt, s.unit, s.base, s.lo, s.hi, s.ucut, s.theta, s.after,
                       NULL)


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


cdef void _threshold_one(Scratch* s, Py_ssize_t m, const double* sp_r,
                         const double* sorted_p2, Py_ssize_t n, Py_ssize_t m_req,
                         bint weighted, const double* cumw_p2, const double* w_r, double req, double tol,
                         double* t_out, char* closed_out, double* level_out) noexcept nogil:
    """Exact LCP threshold from the neighbours gathered in ``s`` (ranks ascending): v is rejected once its
    count reaches ``m_req`` or (``weighted``, covariate shift) its weighted count, the sum of the weights
    ``w_r`` (by rank; ``cumw_p2``: their prefix sums in ascending p2 order) over the same points, reaches ``req``.
    """
    cdef Py_ssize_t r, lo, hi, mid, npieces, m_act = m, off = 0, c_lo = 0, c_hi = n, c_new
    cdef bint compacted = False, rejected
    # isolated, or the whole calibration count (mass) cannot reach the requirement
    if m == 0 or (cumw_p2[n] < req if weighted else m_req > n):
        _set_infinite(t_out, closed_out, level_out)
        return
    r = _fill_pieces(s, m, sp_r)
    # Pieces after (-inf, u_1] (always accepted, theta = 0 there):
    # q even -> open (u_j, u_{j+1}) with j = q/2; q odd -> the point u_{j+1} with j = (q-1)/2
    # (0-based u). count is non-decreasing along q, so bisect for the first rejected piece.
    npieces = 2 * r - 1
    lo = 0
    hi = npieces
    while lo < hi:
        mid = (lo + hi) >> 1
        if weighted:
            rejected = piece_mass(sorted_p2, cumw_p2, n, s.nb, w_r, s.lo, s.hi, s.base, piece_cut(s.after, mid), m,
                                  s.theta[mid >> 1] - tol) >= req
        else:
            rejected = _piece_count(s, m_act, compacted, off, s.theta[mid >> 1], piece_cut(s.after, mid), sorted_p2,
                                    c_lo, c_hi, tol) >= m_req
        if rejected:
            hi = mid
        else:
            lo = mid + 1
        if not weighted and lo < hi and m_act > s.compact_min:
            # what the remaining pieces share need not be counted again: the non-neighbours' count lies
            # between its values at the bracket's ends, and most neighbours' terms are fixed
            c_new = c_lo + _count_less(&sorted_p2[c_lo], c_hi - c_lo, s.theta[lo >> 1] - tol)
            c_hi = c_lo + _count_less(&sorted_p2[c_lo], c_hi - c_lo, s.theta[(hi - 1) >> 1] - tol)
            c_lo = c_new
            m_act = _compact(s, m_act, compacted, lo, hi, tol, &off)
            compacted = True
    _set_piece(s, lo, npieces, t_out, closed_out, level_out)


def score_ranks(scores):
    """Rank of every calibration point in ascending (score, index) order, int32."""
    order = np.argsort(np.asarray(scores, dtype=np.float64), kind="stable")
    rank = np.empty(order.shape[0], dtype=np.int32)
    rank[order] = np.arange(order.shape[0], dtype=np.int32)
    return rank


def _gather_mode(gather):
    if gather not in GATHER_MODES:
        raise ValueError(f"gather must be one of {list(GATHER_MODES)}, got {gather!r}")
    return GATHER_MODES[gather]


def _score_p2_pairs(scores_r, p2_r):
    """(n, 2) rows (score, p2) by rank, at least one row (an O(n) copy per call, read once per neighbour)."""
    n = max(1, len(scores_r))
    out = np.zeros((n, 2), dtype=np.float64)
    out[: len(scores_r), 0] = scores_r
    out[: len(p2_r), 1] = p2_r
    return out


def lcp_rf_thresholds(leafx, leaf_ptr, members, member_mult, below, leaf_pop,
                      scores, p2, sorted_p2, Py_ssize_t m_req, double tol=1e-10, int n_threads=1,
                      gather="auto", Py_ssize_t compact_min=COMPACT_MIN):
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
    gather : {"auto", "blocked", "sort", "bitmap"}
        How a test point's leaf-mates are collected (the results are identical):
        "blocked" (what "auto" takes) reads each of its leaves once, in
        sequence, one block of score ranks at a time, summing into arrays of
        one block (``BLOCK_BITS``: 2**12 to 2**16 ranks), which stay in the
        caches at any n; "sort" radix-sorts its (tree, leaf-mate) entries;
        "bitmap" scatters them over arrays of all n points, a cache miss per
        entry once those outgrow the caches.

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
        m_req, tol=tol, n_threads=n_threads, gather=gather, compact_min=compact_min,
    )


def lcp_rf_thresholds_ranked(const i64[:, ::1] leafx, const i64[::1] leaf_ptr,
                             const i32[::1] member_rank, member_mult,
                             const i32[::1] below, const i32[::1] leaf_pop,
                             const double[::1] scores_r, const double[::1] p2_r,
                             const double[::1] sorted_p2, Py_ssize_t m_req,
                             double tol=1e-10, int n_threads=1, unit_mult=None, gather="auto",
                             Py_ssize_t compact_min=COMPACT_MIN):
    """:func:`lcp_rf_thresholds` on an index whose points are numbered by score rank.

    ``member_rank`` holds the leaf members' ranks (:func:`score_ranks`),
    ``scores_r`` and ``p2_r`` are laid out by rank (so ``scores_r`` ascends):
    the neighbours of a test point then come out of the gather already
    sorted, and the gather reads no extra indirection. ``unit_mult``: whether
    every multiplicity is 1 (computed when not given). ``compact_min``: the
    bisection sets aside the neighbours whose term is decided while more than
    this many are undecided (the results do not depend on it).
    """
    no_weights = np.zeros(1, dtype=np.float64)  # never read
    return _thresholds(leafx, leaf_ptr, member_rank, member_mult, below, leaf_pop, scores_r, p2_r, sorted_p2,
                       m_req, no_weights, no_weights, no_weights, False, tol, n_threads, unit_mult, gather,
                       compact_min)


def lcp_rf_thresholds_weighted(const i64[:, ::1] leafx, const i64[::1] leaf_ptr,
                                const i32[::1] member_rank, member_mult,
                                const i32[::1] below, const i32[::1] leaf_pop,
                                const double[::1] scores_r, const double[::1] p2_r,
                                const double[::1] sorted_p2, const double[::1] cumw_p2,
                                const double[::1] w_r, const double[::1] req,
                                double tol=1e-10, int n_threads=1, unit_mult=None, gather="auto"):
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
    cdef Py_ssize_t n = scores_r.shape[0]
    if req.shape[0] != leafx.shape[0] or cumw_p2.shape[0] != n + 1 or w_r.shape[0] != n:
        raise ValueError("req needs one entry per test row, cumw_p2 n + 1 entries and w_r n entries")
    return _thresholds(leafx, leaf_ptr, member_rank, member_mult, below, leaf_pop, scores_r, p2_r, sorted_p2,
                       0, cumw_p2, w_r, req, True, tol, n_threads, unit_mult, gather, COMPACT_DEFAULT)


cdef tuple _thresholds(const i64[:, ::1] leafx, const i64[::1] leaf_ptr, const i32[::1] member_rank, member_mult,
                       const i32[::1] below, const i32[::1] leaf_pop, const double[::1] scores_r,
                       const double[::1] p2_r, const double[::1] sorted_p2, Py_ssize_t m_req,
                       const double[::1] cumw_p2, const double[::1] w_r, const double[::1] req, bint weighted,
                       double tol, int n_threads, unit_mult, gather, Py_ssize_t compact_min):
    """The threshold of every test row, parallel over rows: by the count reaching ``m_req``, or (``weighted``)
    by the weighted count reaching ``req[q]``."""
    cdef Py_ssize_t mt = leafx.shape[0], k = leafx.shape[1], n = scores_r.shape[0]
    cdef double[::1] t = np.empty(mt, dtype=np.float64)
    cdef char[::1] closed = np.empty(mt, dtype=np.int8)
    cdef double[::1] level = np.empty(mt, dtype=np.float64)
    cdef Py_ssize_t q, m
    cdef Scratch* s
    cdef int[::1] failed = np.zeros(1, dtype=np.intc)
    mult_arr, unit_ = _mult_arg(member_mult, unit_mult)
    cdef bint unit = unit_
    cdef const i32[::1] mm = mult_arr
    cdef int mode = _gather_mode(gather)
    cdef double[:, ::1] sp_r = _score_p2_pairs(scores_r, p2_r)
    if mt == 0:
        return np.asarray(t), np.asarray(closed).astype(bool), np.asarray(level)
    with nogil, parallel(num_threads=n_threads):
        # assigned inside the block, so each thread gets its own buffers
        s = _scratch_new(n if n > 0 else 1, k, unit, mode, compact_min)
        if s == NULL:
            failed[0] = 1
        else:
            for q in prange(mt, schedule="dynamic", chunksize=8):
                m = _gather(s, &leafx[q, 0], &leaf_ptr[0], &member_rank[0],
                            &mm[0], &below[0], &leaf_pop[0])
                if m < 0:
                    failed[0] = 1
                    m = 0
                _threshold_one(s, m, &sp_r[0, 0], &sorted_p2[0], n, m_req, weighted, &cumw_p2[0], &w_r[0],
                               req[q] if weighted else 0.0, tol, &t[q], &closed[q], &level[q])
        _scratch_free(s)
    if failed[0]:
        raise MemoryError("could not allocate the per-thread scratch space")
    return np.asarray(t), np.asarray(closed).astype(bool), np.asarray(level)


cdef int _cmp_i32(const void* a, const void* b) noexcept nogil:
    cdef i32 x = (<const i32*> a)[0], y = (<const i32*> b)[0]
    return (x > y) - (x < y)


cdef Py_ssize_t _weight_row(const i64* leafx, Py_ssize_t k, const i64* leaf_ptr,
                            const i32* members, const i32* member_mult, bint unit,
                            const i32* leaf_pop, bint include_self,
                            double* acc, char* mark, i32* nb, double* self_w) noexcept nogil:
    """Accumulate one test row's weights in ``acc``; return its neighbour count (``unit``: every multiplicity 1,
    ``member_mult`` not read)."""
    cdef Py_ssize_t l, e, m = 0, k_eff = 0
    cdef i64 g
    cdef i32 i, w
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
            w = 1 if unit else member_mult[e]
            if w == 0:
                continue
            i = members[e]
            if not mark[i]:
                mark[i] = 1
                nb[m] = i
                m += 1
                acc[i] = 0.0
            acc[i] += w / denom
    return m


def forest_weight_rows(const i64[:, ::1] leafx, const i64[::1] leaf_ptr,
                       const i32[::1] members, member_mult,
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
    mult_arr, unit_ = _mult_arg(member_mult, None)
    cdef bint unit = unit_
    cdef const i32[::1] mm = mult_arr
    if acc == NULL or mark == NULL or nb == NULL:
        free(acc); free(mark); free(nb)
        raise MemoryError()
    if k == 0 or mt == 0:
        free(acc); free(mark); free(nb)
        return np.asarray(indptr), np.empty(0, np.int32), np.empty(0, np.float64), np.asarray(self_w)
    with nogil:
        for q in range(mt):
            m = _weight_row(&leafx[q, 0], k, &leaf_ptr[0], &members[0], &mm[0], unit,
                            &leaf_pop[0], include_self, acc, mark, nb, &self_w[q])
            for a in range(m):
                mark[nb[a]] = 0
            indptr[q + 1] = indptr[q] + m
    indices = np.empty(indptr[mt], dtype=np.int32)
    data = np.empty(indptr[mt], dtype=np.float64)
    with nogil:
        for q in range(mt):
            m = _weight_row(&leafx[q, 0], k, &leaf_ptr[0], &members[0], &mm[0], unit,
                            &leaf_pop[0], include_self, acc, mark, nb, &self_w[q])
            qsort(nb, m, sizeof(i32), _cmp_i32)
            for a in range(m):
                indices[indptr[q] + a] = nb[a]
                data[indptr[q] + a] = acc[nb[a]]
                mark[nb[a]] = 0
    free(acc); free(mark); free(nb)
    return np.asarray(indptr), np.asarray(indices), np.asarray(data), np.asarray(self_w)


cdef double _row_sumsq(const i64* leafx, Py_ssize_t k, const i64* leaf_ptr, const i32* members,
                       const i32* member_mult, bint unit, const i32* leaf_pop, double* acc, char* mark,
                       i32* nb) noexcept nogil:
    """sum_j w_j^2 of one row's QRF weights (as forest_weight_rows without the test point)."""
    cdef double self_w = 0.0, total = 0.0
    cdef Py_ssize_t a, m
    m = _weight_row(leafx, k, leaf_ptr, members, member_mult, unit, leaf_pop, False, acc, mark, nb, &self_w)
    for a in range(m):
        total += acc[nb[a]] * acc[nb[a]]
        mark[nb[a]] = 0
    return total


def forest_weight_sumsq(const i64[:, ::1] leafx, const i64[::1] leaf_ptr,
                        const i32[::1] members, member_mult,
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
    mult_arr, unit_ = _mult_arg(member_mult, None)
    cdef bint unit = unit_
    cdef const i32[::1] mm = mult_arr
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
                out[q] = _row_sumsq(&leafx[q, 0], k, &leaf_ptr[0], &members[0], &mm[0], unit,
                                    &leaf_pop[0], acc, mark, nb)
        free(acc); free(mark); free(nb)
    if failed[0]:
        raise MemoryError("could not allocate the per-thread scratch space")
    return np.asarray(out)


# How this module was compiled, read from the C preprocessor of its own build: _OPENMP is defined
# (to the date of the OpenMP specification) only when the compiler ran with OpenMP enabled, so
# this cannot disagree with the prange loops above.
cdef extern from *:
    """
    #ifdef _OPENMP
    #include <omp.h>
    static long confrf_openmp_version(void) { return (long) _OPENMP; }
    static int confrf_openmp_max_threads(void) { return omp_get_max_threads(); }
    #else
    static long confrf_openmp_version(void) { return 0; }
    static int confrf_openmp_max_threads(void) { return 1; }
    #endif
    #define CONFRF_STR_(x) #x
    #define CONFRF_STR(x) CONFRF_STR_(x)
    #if defined(__clang__) || defined(__INTEL_LLVM_COMPILER)
    static const char* confrf_compiler_version(void) { return __VERSION__; }
    #elif defined(__GNUC__)
    static const char* confrf_compiler_version(void) { return "GCC " __VERSION__; }
    #elif defined(_MSC_VER)
    static const char* confrf_compiler_version(void) { return "MSVC " CONFRF_STR(_MSC_VER); }
    #else
    static const char* confrf_compiler_version(void) { return ""; }
    #endif
    static long confrf_cython_hex_version(void) { return (long) CYTHON_HEX_VERSION; }
    """
    long confrf_openmp_version() nogil
    int confrf_openmp_max_threads() nogil
    const char* confrf_compiler_version() nogil
    long confrf_cython_hex_version() nogil


def build_info():
    """How the compiled kernels were built: OpenMP on or off, its threads, the compiler and Cython.

    Returns
    -------
    dict
        ``openmp`` (bool: compiled with OpenMP; without it every kernel runs on one thread),
        ``openmp_version`` (the ``_OPENMP`` date, e.g. 201511 for OpenMP 4.5; None when off),
        ``openmp_max_threads`` (``omp_get_max_threads()`` now: the size of an OpenMP region
        that does not set its own; confrf's kernels always set theirs from ``n_jobs``),
        ``compiler`` (the C compiler's ``__VERSION__``) and ``cython`` (the Cython that wrote the C).
    """
    cdef long version = confrf_openmp_version()
    cdef long cy = confrf_cython_hex_version()
    return {
        "openmp": version != 0,
        "openmp_version": int(version) if version != 0 else None,
        "openmp_max_threads": int(confrf_openmp_max_threads()),
        "compiler": confrf_compiler_version().decode("utf-8", "replace") or None,
        "cython": f"{(cy >> 24) & 0xFF}.{(cy >> 16) & 0xFF}.{(cy >> 8) & 0xFF}",
    }
