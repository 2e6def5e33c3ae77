# ioukit: openmp
"""Exact IoU of convex quadrilaterals (rotated boxes) and rotated NMS on NumPy arrays (private).

Every box arrives as its 4 corners ``(x1, y1, ..., x4, y4)`` in float64 (``(N, 8)``), with its
axis-aligned envelope ``(N, 4)`` and a flag for zero-area boxes. The IoU of one pair:

1. zero-area box, or disjoint envelopes (``<``, touching goes on) -> 0;
2. the pair is put in a canonical order (lexicographic on the corners), so that
   ``iou(a, b) == iou(b, a)`` bit for bit;
3. both quadrilaterals are shifted by the mean of their two vertex centroids (large
   coordinates keep their precision) and oriented counter-clockwise (positive shoelace area);
4. the first is clipped by the four edge half-planes of the second (Sutherland-Hodgman). A
   vertex on an edge line (cross product exactly 0) counts as inside and is kept as is; an
   intersection point is made only where the sign changes strictly, on the segment between
   the two vertices (``prev + t * (cur - prev)``, ``0 < t < 1``), so it never leaves the
   subject polygon. Identical boxes clip to themselves, vertex for vertex, hence IoU exactly
   1.0;
5. shoelace area of the result (fan from its first vertex); ``inter / union`` with
   ``union = area1 + area2 - inter``, 0 when ``union <= 0``.

Simple quadrilaterals that are not convex (one reflex corner, as DOTA labels have; the DOTA
devkit's ``polyiou`` measures any polygon) are cut along the diagonal through their reflex
corner into two triangles that tile them; the intersection is the sum of the convex clippings
of the pieces (a convex quadrilateral is one piece), each area the sum of its pieces'. A corner
is reflex when it turns the wrong way by more than the 1e-9 relative tolerance of
``ioukit._rotated_corners.CONVEXITY_TOLERANCE``; within it a quadrilateral is convex and
computed as before, bit for bit. Self-intersecting quadrilaterals are refused before the kernel.

A convex n-gon clipped by one half-plane has at most ``1.5 n`` vertices (each new vertex
needs an outside neighbour), so 4 -> 6 -> 9 -> 13 -> 19 <= ``_CAPACITY``.

The plain-Python oracle (tests/rotated_oracle.py) repeats these operations one by one and
is tested bit-identical. Built with ``-ffp-contract=off``.
"""

import numpy as np

cimport cython
from cython.parallel cimport prange
from libc.math cimport sqrt
from libc.stdint cimport int64_t, uint8_t

PARALLEL_MIN_ELEMENTS = 20_000
"""Pairwise outputs at least this large are filled by several threads."""

cdef enum:
    _CAPACITY = 24


cdef inline int _clip(
    const double* sx, const double* sy, int n,
    double px, double py, double qx, double qy,
    double* ox, double* oy,
) noexcept nogil:
    """Keep the part of polygon ``s`` on the left of (or on) the directed line p -> q."""
    cdef double ex = qx - px
    cdef double ey = qy - py
    cdef double d_prev, d_cur, t
    cdef int i, prev = n - 1, m = 0
    if n == 0:
        return 0
    d_prev = ex * (sy[prev] - py) - ey * (sx[prev] - px)
    for i in range(n):
        d_cur = ex * (sy[i] - py) - ey * (sx[i] - px)
        if (d_prev < 0 and d_cur > 0) or (d_prev > 0 and d_cur < 0):
            if m < _CAPACITY:
                t = d_prev / (d_prev - d_cur)
                ox[m] = sx[prev] + t * (sx[i] - sx[prev])
                oy[m] = sy[prev] + t * (sy[i] - sy[prev])
                m += 1
        if d_cur >= 0 and m < _CAPACITY:
            ox[m] = sx[i]
            oy[m] = sy[i]
            m += 1
        prev = i
        d_prev = d_cur
    return m


cdef inline double _area(const double* x, const double* y, int n) noexcept nogil:
    """Shoelace area (signed, counter-clockwise positive) as a fan from vertex 0."""
    cdef double total = 0
    cdef int i
    for i in range(1, n - 1):
        total = total + ((x[i] - x[0]) * (y[i + 1] - y[0]) - (x[i + 1] - x[0]) * (y[i] - y[0]))
    return total / 2


cdef inline bint _greater(const double* a, const double* b) noexcept nogil:
    """Lexicographic ``a > b`` over 8 values."""
    cdef int k
    for k in range(8):
        if a[k] != b[k]:
            return a[k] > b[k]
    return False


cdef inline void _load(
    const double* c, double sx, double sy, double* x, double* y
) noexcept nogil:
    """Shifted corners of one box, counter-clockwise (vertex 0 first either way)."""
    cdef int k
    for k in range(4):
        x[k] = c[2 * k] - sx
        y[k] = c[2 * k + 1] - sy
    if _area(x, y, 4) < 0:
        x[1], x[3] = x[3], x[1]
        y[1], y[3] = y[3], y[1]


cdef uint8_t _split(const double* c) noexcept nogil:
    """How to cut a quadrilateral (8,) into convex pieces: 0 convex (one piece, also for a
    self-intersecting or zero-area one, refused or zero before the IoU), 1 along the diagonal
    0-2 (the reflex corner is 0 or 2), 2 along the diagonal 1-3."""
    cdef double ex[4]
    cdef double ey[4]
    cdef double area, cross, tol
    cdef int k, j, reflex = -1, count = 0
    for k in range(4):
        j = (k + 1) % 4
        ex[k] = c[2 * j] - c[2 * k]
        ey[k] = c[2 * j + 1] - c[2 * k + 1]
    area = ((c[2] - c[0]) * (c[5] - c[1]) - (c[4] - c[0]) * (c[3] - c[1])) + (
        (c[4] - c[0]) * (c[7] - c[1]) - (c[6] - c[0]) * (c[5] - c[1]))
    if not (area > 0 or area < 0):
        return 0
    for k in range(4):
        j = (k + 1) % 4  # the corner between edges k and j
        cross = ex[k] * ey[j] - ey[k] * ex[j]
        if area < 0:
            cross = -cross
        tol = 1e-9 * sqrt(ex[k] * ex[k] + ey[k] * ey[k]) * sqrt(ex[j] * ex[j] + ey[j] * ey[j])
        if cross < -tol:
            reflex = j
            count += 1
    if count != 1:
        return 0
    return 1 if reflex % 2 == 0 else 2


def splits(corners):
    """:func:`_split` of every quadrilateral (n, 8) float64, as uint8 (n,)."""
    cdef const double[:, ::1] c = np.ascontiguousarray(corners, dtype=np.float64).reshape(-1, 8)
    out = np.empty(c.shape[0], dtype=np.uint8)
    cdef uint8_t[::1] o = out
    cdef Py_ssize_t i
    with nogil:
        for i in range(c.shape[0]):
            o[i] = _split(&c[i, 0])
    return out


cdef inline int _pieces(
    const double* x, const double* y, uint8_t split, double* px, double* py, int* count
) noexcept nogil:
    """The convex pieces of an oriented quadrilateral: itself, or the two triangles on either
    side of its diagonal 0-2 (split 1) or 1-3 (split 2), counter-clockwise, 4 slots each."""
    cdef int k, first
    if split == 0:
        for k in range(4):
            px[k] = x[k]
            py[k] = y[k]
        count[0] = 4
        return 1
    first = 0 if split == 1 else 1
    for k in range(3):
        px[k] = x[(first + k) % 4]
        py[k] = y[(first + k) % 4]
        px[4 + k] = x[(first + 2 + k) % 4]
        py[4 + k] = y[(first + 2 + k) % 4]
    count[0] = 3
    count[1] = 3
    return 2


cdef inline double _ratio(double inter, double area_a, double area_b) noexcept nogil:
    """IoU from the intersection and the two areas: 0 without overlap or union, at most 1."""
    cdef double union_
    if not inter > 0:
        return 0
    union_ = area_a + area_b - inter
    if not union_ > 0:
        return 0
    inter = inter / union_
    return inter if inter <= 1 else 1


cdef double _pieces_iou(
    const double* a, const double* b, const double* ax, const double* ay,
    const double* bx, const double* by, uint8_t split_a, uint8_t split_b,
) noexcept nogil:
    """IoU of two oriented quadrilaterals of which one at least is not convex."""
    cdef double pa_x[8]
    cdef double pa_y[8]
    cdef double pb_x[8]
    cdef double pb_y[8]
    cdef int ca[2]
    cdef int cb[2]
    cdef double px[_CAPACITY]
    cdef double py[_CAPACITY]
    cdef double qx[_CAPACITY]
    cdef double qy[_CAPACITY]
    cdef double area_a = 0, area_b = 0, inter = 0
    cdef int na, nb, i, j, k, n, m, same = 1
    for k in range(8):
        if a[k] != b[k]:
            same = 0
            break
    na = _pieces(ax, ay, split_a, pa_x, pa_y, ca)
    nb = _pieces(bx, by, split_b, pb_x, pb_y, cb)
    for i in range(na):
        area_a = area_a + _area(&pa_x[4 * i], &pa_y[4 * i], ca[i])
    for j in range(nb):
        area_b = area_b + _area(&pb_x[4 * j], &pb_y[4 * j], cb[j])
    if not (area_a > 0 and area_b > 0):
        return 0
    if same:
        return 1
    for i in range(na):
        for j in range(nb):
            for k in range(ca[i]):
                px[k] = pa_x[4 * i + k]
                py[k] = pa_y[4 * i + k]
            n = ca[i]
            m = cb[j]
            for k in range(m):
                if k % 2 == 0:
                    n = _clip(px, py, n, pb_x[4 * j + k], pb_y[4 * j + k],
                              pb_x[4 * j + (k + 1) % m], pb_y[4 * j + (k + 1) % m], qx, qy)
                else:
                    n = _clip(qx, qy, n, pb_x[4 * j + k], pb_y[4 * j + k],
                              pb_x[4 * j + (k + 1) % m], pb_y[4 * j + (k + 1) % m], px, py)
            if n >= 3:
                inter = inter + (_area(qx, qy, n) if m % 2 else _area(px, py, n))
    return _ratio(inter, area_a, area_b)


cdef double _pair_iou(
    const double* a, const double* b,
    const double* env_a, const double* env_b,
    bint degenerate_a, bint degenerate_b,
    uint8_t split_a, uint8_t split_b,
) noexcept nogil:
    cdef double ax[4]
    cdef double ay[4]
    cdef double bx[4]
    cdef double by[4]
    cdef double px[_CAPACITY]
    cdef double py[_CAPACITY]
    cdef double qx[_CAPACITY]
    cdef double qy[_CAPACITY]
    cdef double sx, sy, area_a, area_b
    cdef const double* tmp
    cdef uint8_t tmp_split
    cdef int k, n
    if degenerate_a or degenerate_b:
        return 0
    if env_a[2] < env_b[0] or env_b[2] < env_a[0] or env_a[3] < env_b[1] or env_b[3] < env_a[1]:
        return 0
    if _greater(a, b):
        tmp = a
        a = b
        b = tmp
        tmp_split = split_a
        split_a = split_b
        split_b = tmp_split
    sx = ((a[0] + a[2] + a[4] + a[6]) / 4 + (b[0] + b[2] + b[4] + b[6]) / 4) / 2
    sy = ((a[1] + a[3] + a[5] + a[7]) / 4 + (b[1] + b[3] + b[5] + b[7]) / 4) / 2
    _load(a, sx, sy, ax, ay)
    _load(b, sx, sy, bx, by)
    if split_a or split_b:
        return _pieces_iou(a, b, ax, ay, bx, by, split_a, split_b)
    area_a = _area(ax, ay, 4)
    area_b = _area(bx, by, 4)
    if not (area_a > 0 and area_b > 0):
        return 0
    for k in range(4):
        px[k] = ax[k]
        py[k] = ay[k]
    n = 4
    for k in range(4):
        if k % 2 == 0:
            n = _clip(px, py, n, bx[k], by[k], bx[(k + 1) % 4], by[(k + 1) % 4], qx, qy)
        else:
            n = _clip(qx, qy, n, bx[k], by[k], bx[(k + 1) % 4], by[(k + 1) % 4], px, py)
    return _ratio(_area(px, py, n) if n >= 3 else 0, area_a, area_b)


cdef void _fill_row(
    Py_ssize_t i,
    const double[:, ::1] c1, const double[:, ::1] e1, const uint8_t[::1] d1,
    const uint8_t[::1] s1,
    const double[:, ::1] c2, const double[:, ::1] e2, const uint8_t[::1] d2,
    const uint8_t[::1] s2,
    double[:, ::1] out,
) noexcept nogil:
    cdef Py_ssize_t j
    for j in range(c2.shape[0]):
        out[i, j] = _pair_iou(&c1[i, 0], &c2[j, 0], &e1[i, 0], &e2[j, 0], d1[i], d2[j],
                              s1[i], s2[j])


def _box_set(corners, env, degenerate):
    """One set's float64 corners (N, 8), envelopes (N, 4), uint8 degenerate flags and splits."""
    c = np.ascontiguousarray(corners, dtype=np.float64)
    return (
        c,
        np.ascontiguousarray(env, dtype=np.float64),
        np.ascontiguousarray(degenerate, dtype=np.uint8),
        splits(c),
    )


def pairwise(corners1, env1, degenerate1, corners2, env2, degenerate2, out=None, *, threads=None):
    """The (N, M) IoU matrix of float64 corners (N, 8) and (M, 8), float64.

    ``env*`` are the envelopes ``(x1, y1, x2, y2)`` of the corners, ``degenerate*`` uint8 flags
    of zero-area boxes. ``threads`` forces (True) or forbids (False) OpenMP threads; by default
    they are used from :data:`PARALLEL_MIN_ELEMENTS` output elements on.
    """
    cdef const double[:, ::1] c1, e1, c2, e2
    cdef const uint8_t[::1] d1, s1, d2, s2
    c1, e1, d1, s1 = _box_set(corners1, env1, degenerate1)
    c2, e2, d2, s2 = _box_set(corners2, env2, degenerate2)
    if out is None:
        out = np.empty((c1.shape[0], c2.shape[0]), dtype=np.float64)
    cdef double[:, ::1] result = out
    cdef Py_ssize_t i, n = c1.shape[0]
    cdef bint parallel = (
        out.size >= PARALLEL_MIN_ELEMENTS if threads is None else bool(threads)
    )
    with nogil:
        if parallel:
            for i in prange(n, schedule="dynamic", chunksize=8):
                _fill_row(i, c1, e1, d1, s1, c2, e2, d2, s2, result)
        else:
            for i in range(n):
                _fill_row(i, c1, e1, d1, s1, c2, e2, d2, s2, result)
    return out


def elementwise(corners1, env1, degenerate1, corners2, env2, degenerate2):
    """The (N,) IoU of aligned pairs of float64 corners (N, 8), float64."""
    cdef const double[:, ::1] c1, e1, c2, e2
    cdef const uint8_t[::1] d1, s1, d2, s2
    c1, e1, d1, s1 = _box_set(corners1, env1, degenerate1)
    c2, e2, d2, s2 = _box_set(corners2, env2, degenerate2)
    out = np.empty(c1.shape[0], dtype=np.float64)
    cdef double[::1] result = out
    cdef Py_ssize_t i
    with nogil:
        for i in range(c1.shape[0]):
            result[i] = _pair_iou(&c1[i, 0], &c2[i, 0], &e1[i, 0], &e2[i, 0], d1[i], d2[i],
                                  s1[i], s2[i])
    return out


cdef Py_ssize_t _lower_bound(const double[::1] values, double key) noexcept nogil:
    """First position with ``values[pos] >= key`` in an ascending array."""
    cdef Py_ssize_t lo = 0, hi = values.shape[0], mid
    while lo < hi:
        mid = (lo + hi) // 2
        if values[mid] < key:
            lo = mid + 1
        else:
            hi = mid
    return lo


cdef Py_ssize_t _upper_bound(const double[::1] values, double key) noexcept nogil:
    """First position with ``values[pos] > key`` in an ascending array."""
    cdef Py_ssize_t lo = 0, hi = values.shape[0], mid
    while lo < hi:
        mid = (lo + hi) // 2
        if values[mid] <= key:
            lo = mid + 1
        else:
            hi = mid
    return lo


def greedy_nms(corners, env, degenerate, order, segments, double threshold, Py_ssize_t limit):
    """Greedy rotated NMS; input indices of the kept boxes in ``order`` (score order).

    ``segments`` (int64 (N,) or None): boxes of different segments never suppress each other.
    Only boxes whose envelope can meet the kept box's along x are visited: the boxes are
    sorted by envelope ``x1`` and a kept box ``k`` looks at ``x1 in [x1[k] - 2 w_max, x2[k]]``
    (twice the widest envelope covers the rounding of the width), so sparse scenes cost far
    less than the quadratic loop, with the same result (a pair with disjoint envelopes has IoU
    0 and never suppresses).
    """
    cdef const double[:, ::1] c = np.ascontiguousarray(corners, dtype=np.float64)
    cdef const double[:, ::1] e = np.ascontiguousarray(env, dtype=np.float64)
    cdef const uint8_t[::1] d = np.ascontiguousarray(degenerate, dtype=np.uint8)
    cdef const int64_t[::1] o = np.ascontiguousarray(order, dtype=np.int64)
    cdef const uint8_t[::1] sp = splits(c)
    cdef Py_ssize_t n = c.shape[0]
    by_x = np.argsort(np.asarray(e[:, 0]), kind="stable").astype(np.int64)
    cdef const int64_t[::1] sorted_ids = by_x
    cdef const double[::1] sorted_x1 = np.ascontiguousarray(np.asarray(e[:, 0])[by_x])
    rank_array = np.empty(n, dtype=np.int64)
    rank_array[np.asarray(o)] = np.arange(n, dtype=np.int64)
    cdef const int64_t[::1] rank = rank_array
    seg_array = np.zeros(n, dtype=np.int64) if segments is None else np.asarray(segments)
    cdef const int64_t[::1] seg = np.ascontiguousarray(seg_array, dtype=np.int64)
    removed_array = np.zeros(n, dtype=np.uint8)
    cdef uint8_t[::1] removed = removed_array
    kept_array = np.empty(min(n, max(limit, 0)), dtype=np.int64)
    cdef int64_t[::1] kept = kept_array
    cdef double w_max = 0
    cdef Py_ssize_t p, q, lo, hi, k, j, count = 0
    if n == 0 or limit <= 0:
        return kept_array[:0]
    w_max = float(np.max(np.asarray(e[:, 2]) - np.asarray(e[:, 0])))
    with nogil:
        for p in range(n):
            k = o[p]
            if removed[k]:
                continue
            kept[count] = k
            count += 1
            if count >= limit:
                break
            lo = _lower_bound(sorted_x1, e[k, 0] - 2 * w_max)
            hi = _upper_bound(sorted_x1, e[k, 2])
            for q in range(lo, hi):
                j = sorted_ids[q]
                if removed[j] or rank[j] <= p or seg[j] != seg[k]:
                    continue
                if _pair_iou(&c[k, 0], &c[j, 0], &e[k, 0], &e[j, 0], d[k], d[j], sp[k],
                             sp[j]) > threshold:
                    removed[j] = 1
    return kept_array[:count].copy()


def group_iou(
    const int64_t[::1] gt_start,
    const int64_t[::1] gt_end,
    const int64_t[::1] pred_start,
    const int64_t[::1] kept_count,
    gt_corners, gt_env, gt_degenerate,
    pred_corners, pred_env, pred_degenerate,
    const int64_t[::1] offsets,
    double[::1] out,
):
    """Fill every (image, class) group's IoU matrix [P_i, G_i] row-major at ``offsets[i]``.

    Corners, envelopes and flags are given in group order (rows ``gt_start[i]:gt_end[i]`` and
    ``pred_start[i]:pred_start[i] + kept_count[i]``), float64 / uint8.
    """
    cdef const double[:, ::1] gc = np.ascontiguousarray(gt_corners, dtype=np.float64)
    cdef const double[:, ::1] ge = np.ascontiguousarray(gt_env, dtype=np.float64)
    cdef const uint8_t[::1] gd = np.ascontiguousarray(gt_degenerate, dtype=np.uint8)
    cdef const double[:, ::1] pc = np.ascontiguousarray(pred_corners, dtype=np.float64)
    cdef const double[:, ::1] pe = np.ascontiguousarray(pred_env, dtype=np.float64)
    cdef const uint8_t[::1] pd = np.ascontiguousarray(pred_degenerate, dtype=np.uint8)
    cdef const uint8_t[::1] gs = splits(gc)
    cdef const uint8_t[::1] ps = splits(pc)
    cdef Py_ssize_t i, p, g, n_g, pos
    with nogil:
        for i in range(gt_start.shape[0]):
            n_g = gt_end[i] - gt_start[i]
            if n_g == 0 or kept_count[i] == 0:
                continue
            pos = offsets[i]
            for p in range(pred_start[i], pred_start[i] + kept_count[i]):
                for g in range(gt_start[i], gt_end[i]):
                    out[pos] = _pair_iou(&pc[p, 0], &gc[g, 0], &pe[p, 0], &ge[g, 0], pd[p],
                                         gd[g],
                                         ps[p], gs[g])
                    pos += 1
