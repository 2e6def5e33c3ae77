# ioukit: openmp
"""Compiled kernel of the bootstrap (private): COCO accumulation of weighted replicates.

:func:`accumulate_batch` gives, for each of a batch of replicates, pycocotools' precision (at
some max-dets levels) and recall for the dataset in which image ``i`` appears ``weights[i]``
times, its copies adjacent, from per-(class, area range, threshold) event lists built once
(the records not ignored there, in accumulation order): a record of an image drawn ``w``
times is ``w`` consecutive records with its outcome, except inside a tie block (records of
one image with one score), whose ``w`` copies follow one another (the block's pattern
repeated ``w`` times). Equal, bit for bit, to :func:`ioukit._kernels.match.accumulate_coco`
on the materialised replicate.

Up to 16 replicates (lanes) walk each cell's events in one pass, their image weights side by
side (one 64-byte row of int32 per image). The events come in segments: a run of true
positives of one max-dets level, or of false positives, outside tie blocks; a segment adds
its lanes' weights without a branch per event, and only its end is looked at. A run of true
positives that ends (a false positive of positive weight follows, or the walk ends) goes
straight to the bucket of the highest recall threshold it reaches: the precision at
threshold ``i`` is the maximum over the buckets from ``i`` up, pycocotools' envelope read at
the thresholds (maxima are exact, so the values are the same). Ending a run where the
replicate's own run goes on (a segment of false positives that all weigh 0 in that lane)
adds a precision that the longer run's end dominates (same false positives, at least as
many true positives, at least as high a recall): the envelope does not change. Built with
``-ffp-contract=off``.
"""

import numpy as np

import os

cimport cython
from cython.parallel cimport prange
from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.stdlib cimport free, malloc




cdef double _EPS = float(np.spacing(1))

cdef enum:
    _LANES = 16  # replicates walking one cell's events together
    _MAX_LEVELS = 64


def thread_count(threads=None):
    """Threads for :func:`accumulate_batch`: ``threads`` or the CPU count (at most 8)."""
    if threads is False:
        return 1
    if threads is None or threads is True:
        return max(1, min(os.cpu_count() or 1, 8))
    return max(1, int(threads))


def lanes():
    """Replicates that walk the events together (a batch is best a multiple of it)."""
    return _LANES


@cython.cdivision(True)
cdef inline int64_t _first_count(double r, int64_t npig) noexcept nogil:
    # the smallest j >= 0 with (double) j / npig >= r (pycocotools' rc = tp / npig)
    cdef int64_t j = <int64_t>(r * npig) - 1
    if j < 0:
        j = 0
    while (<double>j) / npig < r:
        j += 1
    while j > 0 and (<double>(j - 1)) / npig >= r:
        j -= 1
    return j


def accumulate_batch(
    const int64_t[::1] ev_start,
    const int64_t[::1] ev_end,
    const int32_t[::1] ev_image,
    const uint8_t[::1] ev_level,
    const uint8_t[::1] ev_tp,
    const int32_t[::1] ev_head,
    const int32_t[::1] gt_image,
    const int64_t[::1] gt_cell,
    const int64_t[::1] gt_count,
    const int64_t[:, ::1] weights,
    const int64_t[::1] max_dets,
    const int64_t[::1] level_slot,
    const double[::1] recall_thresholds,
    int64_t[:, :, ::1] npig,
    double[:, :, :, :, :, ::1] precision,
    double[:, :, :, :, ::1] recall,
    int threads=1,
):
    """Fill npig [B,K,A], precision [B,A,L,T,R,K] and recall [B,T,K,A,M] of B weighted
    replicates in place (every entry: -1 where a class has no regular ground truth).

    The events of (class k, area a, threshold t) are ``ev_start[c]:ev_end[c]`` with ``c = (k
    * A + a) * T + t``: each is a record not ignored there, with its image position
    (``ev_image``), its max-dets level (``ev_level``: the smallest m with rank <
    ``max_dets[m]``), ``ev_tp`` 1 for a true positive. ``ev_head`` at the first event of a
    segment: its length (a run of one ``ev_tp`` outside tie blocks, of one level for true
    positives), or minus the length of a tie block; 0 elsewhere. ``gt_image``, ``gt_cell``
    (``k * A + a``), ``gt_count``: the regular ground truths per image and cell.
    ``weights`` [B, I]: each replicate's image counts. ``level_slot`` [M]: where level m's
    precision goes (-1: recall only). The replicates go by groups of up to 16 lanes walking
    each cell's events once; the groups are shared by ``threads`` OpenMP threads. Precision
    is area-major (``precision.transpose(0, 3, 4, 5, 1, 2)`` is pycocotools' layout): the
    values a summary stat averages lie side by side.
    """
    cdef Py_ssize_t n_b = weights.shape[0], n_i = weights.shape[1]
    cdef Py_ssize_t n_t = recall.shape[1], n_r = recall_thresholds.shape[0]
    cdef Py_ssize_t n_k = npig.shape[1], n_a = npig.shape[2]
    cdef Py_ssize_t n_m = max_dets.shape[0], n_cells = n_k * n_a * n_t
    cdef Py_ssize_t n_g = (n_b + _LANES - 1) // _LANES, g, b, i
    cdef int64_t w, wmax = 0, cap
    if ev_start.shape[0] != n_cells or ev_end.shape[0] != n_cells:
        raise ValueError(f"ev_start, ev_end: expected {n_cells} entries")
    if level_slot.shape[0] != n_m or recall.shape[4] != n_m or not 0 < n_m <= _MAX_LEVELS:
        raise ValueError(f"level_slot, recall: expected {n_m} (1..64) max-dets levels")
    if (npig.shape[0] != n_b or precision.shape[0] != n_b or recall.shape[0] != n_b
            or precision.shape[1] != n_a or precision.shape[3] != n_t
            or precision.shape[4] != n_r or precision.shape[5] != n_k):
        raise ValueError(f"npig, precision, recall: expected {n_b} replicates of one layout")
    if ev_image.shape[0] != ev_level.shape[0] or ev_tp.shape[0] != ev_level.shape[0] \
            or ev_head.shape[0] != ev_level.shape[0]:
        raise ValueError("ev_image, ev_level, ev_tp, ev_head: expected one length")
    if gt_cell.shape[0] != gt_image.shape[0] or gt_count.shape[0] != gt_image.shape[0]:
        raise ValueError("gt_image, gt_cell, gt_count: expected one length")
    # each group's weights, image-major: the lanes' weights of one image side by side
    cdef int32_t[:, ::1] wt = np.zeros((max(n_g, 1), max(n_i, 1) * _LANES), dtype=np.int32)
    for b in range(n_b):
        g = b // _LANES
        for i in range(n_i):
            w = weights[b, i]
            if w < 0 or w > 2147483647:
                raise ValueError("weights: expected counts in [0, 2**31)")
            if w > wmax:
                wmax = w
            wt[g, i * _LANES + b % _LANES] = <int32_t>w
    cap = 2147483647 // max(wmax, 1)  # events a lane's int32 segment sum can take
    cdef int n_threads = max(1, min(threads, n_g)) if n_g else 1
    if n_threads > 1:
        for g in prange(n_g, nogil=True, schedule="dynamic", chunksize=1,
                        num_threads=n_threads):
            _group(g, n_b, n_i, n_k, n_a, n_t, n_r, n_m, cap, ev_start, ev_end, ev_image,
                   ev_level, ev_tp, ev_head, gt_image, gt_cell, gt_count, wt, max_dets,
                   level_slot, recall_thresholds, npig, precision, recall)
    else:
        with nogil:
            for g in range(n_g):
                _group(g, n_b, n_i, n_k, n_a, n_t, n_r, n_m, cap, ev_start, ev_end, ev_image,
                       ev_level, ev_tp, ev_head, gt_image, gt_cell, gt_count, wt, max_dets,
                       level_slot, recall_thresholds, npig, precision, recall)


@cython.cdivision(True)
cdef inline Py_ssize_t _close(
    int64_t tp, int64_t fp, Py_ssize_t ptr, const int64_t* jt, double* bucket, Py_ssize_t n_r
) noexcept nogil:
    # a lane's run of true positives ends at tp, fp (a false positive follows, or the walk
    # ends): its precision counts for every recall threshold whose count it reaches;
    # bucket[i] keeps the largest such precision among the runs whose count reaches
    # threshold i but not i+1 (``ptr``: thresholds reached so far, returned updated)
    cdef double p = (<double>tp) / ((<double>fp) + (<double>tp) + _EPS)
    while ptr < n_r and jt[ptr] <= tp:
        ptr += 1
    if ptr > 0 and p > bucket[ptr - 1]:
        bucket[ptr - 1] = p
    return ptr


cdef inline void _false_positives(
    const int32_t* w, int64_t* tp, int64_t* fp, int64_t* open_run, int64_t* hit,
    Py_ssize_t* ptr, const int64_t* jt, double* bucket, Py_ssize_t n_r,
) noexcept nogil:
    # w[lane] false positives in each lane (an event, or a segment's sum): a lane's open run
    # of true positives ends first (_close); hit is scratch [_LANES]
    cdef Py_ssize_t l
    cdef int64_t closing = 0
    for l in range(_LANES):
        hit[l] = open_run[l] & (w[l] > 0)
        closing |= hit[l]
    if closing:
        for l in range(_LANES):
            if hit[l]:
                ptr[l] = _close(tp[l], fp[l], ptr[l], jt + l * n_r, bucket + l * n_r, n_r)
                open_run[l] = 0
    for l in range(_LANES):
        fp[l] += w[l]


cdef inline void _tie_block(
    Py_ssize_t e, Py_ssize_t blk, int32_t limit, const uint8_t[::1] ev_level,
    const uint8_t[::1] ev_tp, const int32_t* row, int64_t* tp, int64_t* fp,
    int64_t* open_run, Py_ssize_t* ptr, const int64_t* jt, double* bucket, Py_ssize_t n_r,
    int64_t* level_acc,
) noexcept nogil:
    # a tie block of blk events (one image): its pattern, w times in each lane; events of
    # a level above ``limit`` do not count; level_acc [level, lane] (may be NULL)
    cdef Py_ssize_t l, f
    cdef int64_t c, w
    cdef int32_t lvl
    for l in range(_LANES):
        w = row[l]
        for c in range(w):
            for f in range(e, e + blk):
                lvl = ev_level[f]
                if lvl > limit:
                    continue
                if ev_tp[f]:
                    tp[l] += 1
                    open_run[l] = 1
                    if level_acc != NULL:
                        level_acc[lvl * _LANES + l] += 1
                else:
                    if open_run[l]:
                        ptr[l] = _close(tp[l], fp[l], ptr[l], jt + l * n_r, bucket + l * n_r,
                                        n_r)
                        open_run[l] = 0
                    fp[l] += 1


cdef void _walk(
    Py_ssize_t cell, int32_t limit, bint top, int64_t cap, Py_ssize_t n_r, Py_ssize_t n_m,
    const int64_t[::1] ev_start, const int64_t[::1] ev_end,
    const int32_t[::1] ev_image, const uint8_t[::1] ev_level,
    const uint8_t[::1] ev_tp, const int32_t[::1] ev_head,
    const int32_t* wt, const int64_t* jt, double* bucket, int64_t* level_out,
) noexcept nogil:
    # one (class, area range, threshold) at the max-dets level ``limit`` for the lanes (the
    # weights ``wt`` [I, _LANES]; unused lanes weigh 0): bucket [lane, R] as in _close. The
    # walk at the last level (``top``: every event counts) goes by segments and gives the
    # true positives below each level's max-dets in level_out [M, _LANES]; a walk at a
    # lower level looks at each event's level.
    cdef Py_ssize_t e = ev_start[cell], end = ev_end[cell], f, l, m, stop, chunk
    cdef int32_t head, lvl
    cdef int64_t closing
    cdef const int32_t* row
    # lane state in local arrays (no aliasing: the lane loops vectorize)
    cdef int64_t tp[_LANES]
    cdef int64_t fp[_LANES]
    cdef int64_t open_run[_LANES]
    cdef int64_t hit[_LANES]
    cdef int32_t total[_LANES]
    cdef Py_ssize_t ptr[_LANES]
    cdef int64_t level_acc[_MAX_LEVELS * _LANES]
    for l in range(_LANES):
        tp[l] = 0
        fp[l] = 0
        ptr[l] = 0
        open_run[l] = 0
    for f in range(_LANES * n_r):
        bucket[f] = 0.0
    if top:
        for f in range(n_m * _LANES):
            level_acc[f] = 0
    while e < end:
        head = ev_head[e]
        if head < 0:
            _tie_block(e, -head, limit, ev_level, ev_tp, wt + (<Py_ssize_t>ev_image[e]) * _LANES,
                       tp, fp, open_run, ptr, jt, bucket, n_r, level_acc if top else NULL)
            e += -head
            continue
        stop = e + head
        if not top:
            # event by event, those of a level above ``limit`` left out
            for f in range(e, stop):
                if ev_level[f] > limit:
                    continue
                row = wt + (<Py_ssize_t>ev_image[f]) * _LANES
                if ev_tp[f]:
                    for l in range(_LANES):
                        tp[l] += row[l]
                        open_run[l] |= row[l] > 0
                else:
                    _false_positives(row, tp, fp, open_run, hit, ptr, jt, bucket, n_r)
            e = stop
            continue
        # a segment: its lanes' weights summed (int32, ``cap`` events at a time)
        lvl = ev_level[e]
        while e < stop:
            chunk = min(stop, e + cap)
            for l in range(_LANES):
                total[l] = 0
            for f in range(e, chunk):
                row = wt + (<Py_ssize_t>ev_image[f]) * _LANES
                for l in range(_LANES):
                    total[l] += row[l]
            if ev_tp[e]:
                for l in range(_LANES):
                    tp[l] += total[l]
                    open_run[l] |= total[l] > 0
                    level_acc[lvl * _LANES + l] += total[l]
            else:
                _false_positives(total, tp, fp, open_run, hit, ptr, jt, bucket, n_r)
            e = chunk
    for l in range(_LANES):
        if open_run[l]:
            ptr[l] = _close(tp[l], fp[l], ptr[l], jt + l * n_r, bucket + l * n_r, n_r)
    if top:
        # a true positive of level v counts at every level m >= v
        for l in range(_LANES):
            closing = 0
            for m in range(n_m):
                closing += level_acc[m * _LANES + l]
                level_out[m * _LANES + l] = closing


@cython.cdivision(True)
cdef void _group(
    Py_ssize_t g, Py_ssize_t n_b, Py_ssize_t n_i, Py_ssize_t n_k, Py_ssize_t n_a,
    Py_ssize_t n_t, Py_ssize_t n_r, Py_ssize_t n_m, int64_t cap,
    const int64_t[::1] ev_start, const int64_t[::1] ev_end,
    const int32_t[::1] ev_image, const uint8_t[::1] ev_level,
    const uint8_t[::1] ev_tp, const int32_t[::1] ev_head,
    const int32_t[::1] gt_image, const int64_t[::1] gt_cell, const int64_t[::1] gt_count,
    const int32_t[:, ::1] wt, const int64_t[::1] max_dets,
    const int64_t[::1] level_slot, const double[::1] recall_thresholds,
    int64_t[:, :, ::1] npig, double[:, :, :, :, :, ::1] precision,
    double[:, :, :, :, ::1] recall,
) noexcept nogil:
    cdef Py_ssize_t b0 = g * _LANES, n_l = min(<Py_ssize_t>_LANES, n_b - b0)
    cdef Py_ssize_t k, a, t, m, cell, l, i, j, top = n_m - 1, n_gt = gt_image.shape[0]
    cdef Py_ssize_t n_slots = precision.shape[2]
    cdef int64_t lane_npig[_LANES]
    cdef int64_t level_tp[_LANES * _MAX_LEVELS]
    cdef int64_t* jt = <int64_t*>malloc(_LANES * n_r * sizeof(int64_t))
    cdef double* bucket = <double*>malloc(_LANES * n_r * sizeof(double))
    cdef int64_t* cell_gt = <int64_t*>malloc(max(n_k * n_a, 1) * _LANES * sizeof(int64_t))
    cdef const int32_t* weights = &wt[g, 0]
    cdef const int32_t* row
    cdef double best
    cdef bint any_gt
    if jt == NULL or bucket == NULL or cell_gt == NULL:
        free(jt)
        free(bucket)
        free(cell_gt)
        return
    # each lane's regular ground truths per (class, area range)
    for i in range(n_k * n_a * _LANES):
        cell_gt[i] = 0
    for i in range(n_gt):
        row = weights + (<Py_ssize_t>gt_image[i]) * _LANES
        for l in range(_LANES):
            cell_gt[gt_cell[i] * _LANES + l] += gt_count[i] * row[l]
    # area-major, then class, then threshold: the precision rows of one area range and
    # threshold are written class after class (their cache lines fill while they are warm)
    for a in range(n_a):
        for k in range(n_k):
            any_gt = False
            for l in range(_LANES):
                lane_npig[l] = cell_gt[(k * n_a + a) * _LANES + l] if l < n_l else 0
                for i in range(n_r):
                    jt[l * n_r + i] = 0
                if lane_npig[l] > 0:
                    any_gt = True
                    for i in range(n_r):
                        jt[l * n_r + i] = _first_count(recall_thresholds[i], lane_npig[l])
            for l in range(n_l):
                npig[b0 + l, k, a] = lane_npig[l]
            for t in range(n_t):
                cell = (k * n_a + a) * n_t + t
                if not any_gt:
                    for l in range(n_l):
                        for j in range(n_m):
                            recall[b0 + l, t, k, a, j] = -1.0
                        for j in range(n_slots):
                            for i in range(n_r):
                                precision[b0 + l, a, j, t, i, k] = -1.0
                    continue
                for m in range(top, -1, -1):
                    if m < top and level_slot[m] < 0:
                        continue
                    _walk(cell, <int32_t>m, m == top, cap, n_r, n_m, ev_start, ev_end,
                          ev_image, ev_level, ev_tp, ev_head, weights, jt, bucket, level_tp)
                    for l in range(n_l):
                        if lane_npig[l] <= 0:
                            if level_slot[m] >= 0:
                                for i in range(n_r):
                                    precision[b0 + l, a, level_slot[m], t, i, k] = -1.0
                            if m == top:
                                for j in range(n_m):
                                    recall[b0 + l, t, k, a, j] = -1.0
                            continue
                        if level_slot[m] >= 0:
                            # precision at threshold i: the best run reaching it or beyond
                            best = 0.0
                            for i in range(n_r - 1, -1, -1):
                                if bucket[l * n_r + i] > best:
                                    best = bucket[l * n_r + i]
                                precision[b0 + l, a, level_slot[m], t, i, k] = best
                        if m == top:
                            for j in range(n_m):
                                recall[b0 + l, t, k, a, j] = (
                                    (<double>level_tp[j * _LANES + l]) / lane_npig[l])
    free(jt)
    free(bucket)
    free(cell_gt)
