# ioukit: openmp
"""Object keypoint similarity (OKS) of every (image, class) group, as pycocotools (private).

pycocotools' ``COCOeval.computeOks`` for one prediction ``d`` and one ground truth ``g``::

    e = (dx**2 + dy**2) / vars / (area + np.spacing(1)) / 2      # (K,)
    e = e[v > 0]                       # only when some keypoint of g is visible
    oks = np.sum(np.exp(-e)) / e.shape[0]

where ``dx = xd - xg`` when ``g`` has a visible keypoint, else the distance of ``xd`` to the
outside of the box three times ``g``'s size (``x0 = x - w``, ``x1 = x + 2 w``): ``dx =
max(0, x0 - xd) + max(0, xd - x1)`` (the ``z`` branch, over all K keypoints).

To give the same bits, the work is split in three passes over a flat array of terms:

1. :func:`fill_terms` writes ``-e`` of every (prediction, ground truth, counted keypoint),
   operation for operation as above (built with ``-ffp-contract=off``);
2. the caller applies ``numpy.exp`` in place (NumPy's own exp, which is not always the C
   library's to the last bit);
3. :func:`sum_terms` adds each pair's terms in NumPy's pairwise summation order (8
   accumulators, blocks of 128) and divides by their count.

Layout: group ``i`` owns the matrix ``[P_i, G_i]`` (its first ``P_i`` predictions in
descending-score order, its ``G_i`` ground truths), row-major at ``out[offsets[i]:]``. Its
terms start at ``term_offsets[i]``: row ``p`` holds ``S_i = sum(n_terms[g])`` terms, pair
``(p, g)`` ``n_terms[g]`` of them, ground truths in order. ``n_terms[g]`` is the number of
visible keypoints of ``g`` (``v > 0``), or K when there is none.

:func:`oks_groups` does the three passes pair row by pair row in a small per-thread buffer
(no flat terms array): it calls NumPy's own float64 ``exp`` inner loop, the function
``numpy.exp`` runs on float64 arrays (``set_exp_loop`` takes it from the ufunc object), on
each row's terms in place, as ``numpy.exp(terms, out=terms)`` does on a whole chunk. The loop
is elementwise, so the bits are the same; the caller checks that on a sample first and keeps
the three passes when they differ.

Groups are shared between OpenMP threads when ``parallel`` is set (the caller decides from the
number of terms), with a dynamic schedule so that a core held by another process slows only
its own chunks. The plain-Python oracle is ``tests/evaluation/similarity/test_oks.py::oks_twin``.
"""

cimport numpy as cnp
from cython.parallel cimport prange, threadid

import numpy as np

cnp.import_array()

ctypedef void (*_unary_loop)(char**, cnp.npy_intp*, cnp.npy_intp*, void*) noexcept nogil

UNDERFLOW = -746.0
"""Below this, ``exp`` is +0 (the true value is under 1e-324); the caller checks NumPy's."""

cdef double _UNDERFLOW = UNDERFLOW
cdef _unary_loop _exp_loop = NULL
cdef void* _exp_data = NULL


cdef inline double _pairwise_sum(const double* a, Py_ssize_t n) noexcept nogil:
    # NumPy's pairwise_sum for float64 (numpy/_core/src/umath/loops_utils.h.src), unrolled 8
    cdef double res, r0, r1, r2, r3, r4, r5, r6, r7
    cdef Py_ssize_t i, n2
    if n < 8:
        res = 0.0
        for i in range(n):
            res = res + a[i]
        return res
    elif n <= 128:
        r0 = a[0]
        r1 = a[1]
        r2 = a[2]
        r3 = a[3]
        r4 = a[4]
        r5 = a[5]
        r6 = a[6]
        r7 = a[7]
        i = 8
        while i < n - (n % 8):
            r0 = r0 + a[i]
            r1 = r1 + a[i + 1]
            r2 = r2 + a[i + 2]
            r3 = r3 + a[i + 3]
            r4 = r4 + a[i + 4]
            r5 = r5 + a[i + 5]
            r6 = r6 + a[i + 6]
            r7 = r7 + a[i + 7]
            i = i + 8
        res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        while i < n:
            res = res + a[i]
            i = i + 1
        return res
    else:
        n2 = n // 2
        n2 = n2 - n2 % 8
        return _pairwise_sum(a, n2) + _pairwise_sum(a + n2, n - n2)


cdef inline double _max0(double a) noexcept nogil:
    # np.max((0, a), axis=0) for a non-NaN a
    return a if a > 0.0 else 0.0


cdef inline Py_ssize_t _pair_terms(
    Py_ssize_t d, Py_ssize_t g,
    const double[:, :, ::1] gt_keypoints, const Py_ssize_t[:, ::1] visible_index,
    const Py_ssize_t[::1] n_terms, const double[:, ::1] outer_box,
    const double[::1] area_eps, const double[:, :, ::1] pred_keypoints,
    const double[::1] variances, double* dest,
) noexcept nogil:
    # the exponents -d^2 / vars / (area + eps) / 2 of prediction d against ground truth g
    # (pycocotools' computeOks), written to dest; returns how many (n_terms[g])
    cdef Py_ssize_t j, k
    cdef Py_ssize_t n_k = variances.shape[0]
    cdef double dx, dy, xd, yd, x0, x1, y0, y1
    if visible_index[g, 0] >= 0:
        # some keypoint visible: distances to the visible ground-truth keypoints
        for j in range(n_terms[g]):
            k = visible_index[g, j]
            dx = pred_keypoints[d, k, 0] - gt_keypoints[g, k, 0]
            dy = pred_keypoints[d, k, 1] - gt_keypoints[g, k, 1]
            dest[j] = -((dx * dx + dy * dy) / variances[k] / area_eps[g] / 2.0)
        return n_terms[g]
    # none visible: distance to the outside of the tripled box, all K keypoints
    x0 = outer_box[g, 0]
    y0 = outer_box[g, 1]
    x1 = outer_box[g, 2]
    y1 = outer_box[g, 3]
    for k in range(n_k):
        xd = pred_keypoints[d, k, 0]
        yd = pred_keypoints[d, k, 1]
        dx = _max0(x0 - xd) + _max0(xd - x1)
        dy = _max0(y0 - yd) + _max0(yd - y1)
        dest[k] = -((dx * dx + dy * dy) / variances[k] / area_eps[g] / 2.0)
    return n_k


cdef void _fill_group(
    Py_ssize_t i,
    const Py_ssize_t[::1] gt_start, const Py_ssize_t[::1] gt_end,
    const Py_ssize_t[::1] pred_start, const Py_ssize_t[::1] pred_count,
    const Py_ssize_t[::1] term_offsets,
    const double[:, :, ::1] gt_keypoints, const Py_ssize_t[:, ::1] visible_index,
    const Py_ssize_t[::1] n_terms, const double[:, ::1] outer_box,
    const double[::1] area_eps, const double[:, :, ::1] pred_keypoints,
    const Py_ssize_t[::1] pred_row, const double[::1] variances, double[::1] terms,
) noexcept nogil:
    cdef Py_ssize_t p, g, d
    cdef Py_ssize_t pos = term_offsets[i]
    if gt_end[i] == gt_start[i]:
        return
    for p in range(pred_count[i]):
        d = pred_row[pred_start[i] + p]
        for g in range(gt_start[i], gt_end[i]):
            pos = pos + _pair_terms(d, g, gt_keypoints, visible_index, n_terms, outer_box,
                                    area_eps, pred_keypoints, variances, &terms[pos])


cdef void _sum_group(
    Py_ssize_t i,
    const Py_ssize_t[::1] gt_start, const Py_ssize_t[::1] gt_end,
    const Py_ssize_t[::1] pred_count, const Py_ssize_t[::1] term_offsets,
    const Py_ssize_t[::1] n_terms, const Py_ssize_t[::1] offsets,
    const double[::1] terms, double[::1] out,
) noexcept nogil:
    cdef Py_ssize_t p, g, n
    cdef Py_ssize_t pos = term_offsets[i]
    cdef Py_ssize_t o = offsets[i]
    if gt_end[i] == gt_start[i]:
        return
    for p in range(pred_count[i]):
        for g in range(gt_start[i], gt_end[i]):
            n = n_terms[g]
            out[o] = _pairwise_sum(&terms[pos], n) / <double>n
            pos = pos + n
            o = o + 1


def fill_terms(
    Py_ssize_t first, Py_ssize_t last,
    const Py_ssize_t[::1] gt_start, const Py_ssize_t[::1] gt_end,
    const Py_ssize_t[::1] pred_start, const Py_ssize_t[::1] pred_count,
    const Py_ssize_t[::1] term_offsets,
    const double[:, :, ::1] gt_keypoints, const Py_ssize_t[:, ::1] visible_index,
    const Py_ssize_t[::1] n_terms, const double[:, ::1] outer_box,
    const double[::1] area_eps, const double[:, :, ::1] pred_keypoints,
    const Py_ssize_t[::1] pred_row, const double[::1] variances, double[::1] terms,
    bint parallel,
):
    """Write ``-e`` of every term of groups ``first..last-1`` into ``terms``.

    ``term_offsets`` are relative to ``terms`` (the caller subtracts the chunk's start).
    Group ``i``'s predictions are ``pred_keypoints[pred_row[pred_start[i] + p]]`` for ``p <
    pred_count[i]`` (rows of the whole array: no gathered copy; the caller checks the rows).
    ``visible_index[g]`` lists ``g``'s visible keypoints first (in order), then -1;
    ``outer_box[g]`` is ``(x - w, y - h, x + 2 w, y + 2 h)``; ``area_eps[g]`` is the OKS
    area plus ``np.spacing(1)``; ``variances`` is ``(2 sigma) ** 2``, shape (K,).
    """
    cdef Py_ssize_t i
    with nogil:
        if parallel:
            for i in prange(first, last, schedule="dynamic", chunksize=64):
                _fill_group(i, gt_start, gt_end, pred_start, pred_count, term_offsets,
                            gt_keypoints, visible_index, n_terms, outer_box, area_eps,
                            pred_keypoints, pred_row, variances, terms)
        else:
            for i in range(first, last):
                _fill_group(i, gt_start, gt_end, pred_start, pred_count, term_offsets,
                            gt_keypoints, visible_index, n_terms, outer_box, area_eps,
                            pred_keypoints, pred_row, variances, terms)


def sum_terms(
    Py_ssize_t first, Py_ssize_t last,
    const Py_ssize_t[::1] gt_start, const Py_ssize_t[::1] gt_end,
    const Py_ssize_t[::1] pred_count, const Py_ssize_t[::1] term_offsets,
    const Py_ssize_t[::1] n_terms, const Py_ssize_t[::1] offsets,
    const double[::1] terms, double[::1] out, bint parallel,
):
    """OKS of every pair of groups ``first..last-1``: the mean of its (exponentiated) terms."""
    cdef Py_ssize_t i
    with nogil:
        if parallel:
            for i in prange(first, last, schedule="dynamic", chunksize=64):
                _sum_group(i, gt_start, gt_end, pred_count, term_offsets, n_terms, offsets,
                           terms, out)
        else:
            for i in range(first, last):
                _sum_group(i, gt_start, gt_end, pred_count, term_offsets, n_terms, offsets,
                           terms, out)


def pairwise_sum(const double[::1] values):
    """NumPy's ``np.sum`` of a float64 vector, in its pairwise order (exposed for tests)."""
    return _pairwise_sum(&values[0], values.shape[0]) if values.shape[0] else 0.0


def set_exp_loop(Py_ssize_t index):
    """Take inner loop ``index`` of ``numpy.exp`` (its ``types[index]`` must be ``'d->d'``)."""
    global _exp_loop, _exp_data
    cdef cnp.ufunc u = np.exp
    if u.nargs != 2 or not 0 <= index < u.ntypes:
        raise ValueError(f"index: expected a loop of numpy.exp (0..{u.ntypes - 1}), got {index}")
    if u.types[2 * index] != cnp.NPY_DOUBLE or u.types[2 * index + 1] != cnp.NPY_DOUBLE:
        raise ValueError(f"index: numpy.exp loop {index} is not float64 -> float64")
    _exp_loop = <_unary_loop>u.functions[index]
    _exp_data = u.data[index]


cdef inline void _exp_inplace(double* a, Py_ssize_t n) noexcept nogil:
    # numpy.exp(a, out=a) on n contiguous float64 values, through NumPy's own loop
    cdef char* args[2]
    cdef cnp.npy_intp dims[1]
    cdef cnp.npy_intp steps[2]
    args[0] = <char*>a
    args[1] = <char*>a
    dims[0] = n
    steps[0] = sizeof(double)
    steps[1] = sizeof(double)
    _exp_loop(args, dims, steps, _exp_data)


def exp_inplace(double[::1] values):
    """``numpy.exp(values, out=values)`` through the loop of :func:`set_exp_loop` (tests)."""
    if _exp_loop == NULL:
        raise RuntimeError("set_exp_loop was not called")
    if values.shape[0]:
        _exp_inplace(&values[0], values.shape[0])


cdef void _oks_group(
    Py_ssize_t i,
    const Py_ssize_t[::1] gt_start, const Py_ssize_t[::1] gt_end,
    const Py_ssize_t[::1] pred_start, const Py_ssize_t[::1] pred_count,
    const double[:, :, ::1] gt_keypoints, const Py_ssize_t[:, ::1] visible_index,
    const Py_ssize_t[::1] n_terms, const double[:, ::1] outer_box,
    const double[::1] area_eps, const double[:, :, ::1] pred_keypoints,
    const Py_ssize_t[::1] pred_row,
    const double[::1] variances, const Py_ssize_t[::1] offsets, double[::1] out,
    double* row, double* live,
) noexcept nogil:
    # _fill_group, exp and _sum_group of one prediction at a time: ``row`` holds its terms
    cdef Py_ssize_t p, g, j, d, t, n, m
    cdef Py_ssize_t o = offsets[i]
    cdef double v, w
    if gt_end[i] == gt_start[i]:
        return
    for p in range(pred_count[i]):
        d = pred_row[pred_start[i] + p]
        t = 0
        for g in range(gt_start[i], gt_end[i]):
            t = t + _pair_terms(d, g, gt_keypoints, visible_index, n_terms, outer_box,
                                area_eps, pred_keypoints, variances, row + t)
        m = 0
        for j in range(t):
            v = row[j]
            live[m] = v
            m = m + (not v < _UNDERFLOW)
        # exp underflows to +0 below UNDERFLOW (checked by the caller): only the other terms,
        # packed into ``live`` (branch-free) above, go through the exp loop (NumPy's vector exp
        # takes a slow path on underflow; half the terms of crowded images underflow)
        _exp_inplace(live, m)
        m = 0
        for j in range(t):
            v = row[j]
            w = live[m]
            row[j] = 0.0 if v < _UNDERFLOW else w
            m = m + (not v < _UNDERFLOW)
        t = 0
        for g in range(gt_start[i], gt_end[i]):
            n = n_terms[g]
            out[o] = _pairwise_sum(&row[t], n) / <double>n
            t = t + n
            o = o + 1


def oks_groups(
    Py_ssize_t first, Py_ssize_t last,
    const Py_ssize_t[::1] gt_start, const Py_ssize_t[::1] gt_end,
    const Py_ssize_t[::1] pred_start, const Py_ssize_t[::1] pred_count,
    const double[:, :, ::1] gt_keypoints, const Py_ssize_t[:, ::1] visible_index,
    const Py_ssize_t[::1] n_terms, const double[:, ::1] outer_box,
    const double[::1] area_eps, const double[:, :, ::1] pred_keypoints,
    const Py_ssize_t[::1] pred_row,
    const double[::1] variances, const Py_ssize_t[::1] offsets, double[::1] out,
    double[:, ::1] rows, bint parallel,
):
    """OKS of every pair of groups ``first..last-1`` in one pass (needs :func:`set_exp_loop`).

    ``rows`` is scratch, one row per thread (``prange`` starts at most ``rows.shape[0]``),
    each of twice the largest number of terms of one prediction (``S_i``) of these groups;
    the other arguments are those of :func:`fill_terms` and :func:`sum_terms`.
    """
    cdef Py_ssize_t i
    cdef int n_threads = <int>rows.shape[0]
    cdef Py_ssize_t half = rows.shape[1] // 2
    if _exp_loop == NULL:
        raise RuntimeError("set_exp_loop was not called")
    if n_threads < 1 or half < 1:
        raise ValueError("rows: expected at least one scratch row of at least 2 values")
    if parallel and n_threads > 1:
        for i in prange(first, last, nogil=True, schedule="dynamic", chunksize=16,
                        num_threads=n_threads):
            _oks_group(i, gt_start, gt_end, pred_start, pred_count, gt_keypoints,
                       visible_index, n_terms, outer_box, area_eps, pred_keypoints,
                       pred_row, variances, offsets, out, &rows[threadid(), 0],
                       &rows[threadid(), half])
    else:
        with nogil:
            for i in range(first, last):
                _oks_group(i, gt_start, gt_end, pred_start, pred_count, gt_keypoints,
                           visible_index, n_terms, outer_box, area_eps, pred_keypoints,
                           pred_row, variances, offsets, out, &rows[0, 0], &rows[0, half])
