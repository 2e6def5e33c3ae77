# ioukit: openmp
"""Compiled kernel of the bootstrap (private): COCO accumulation of weighted replicates.

:func:`accumulate_batch` gives, for each of a batch of replicates, pycocotools' precision (at
some max-dets levels) and recall for the dataset in which image ``i`` appears ``weights[i]``
times, its copies adjacent, from
per-(class, area range, threshold) event lists built once (the records not ignored there, in
accumulation order): a record of an image drawn ``w`` times is ``w`` consecutive records with
its outcome, except inside a tie block (records of one image with one score), whose ``w``
copies follow one another (the block's pattern repeated ``w`` times). Equal, bit for bit, to
:func:`ioukit._kernels.match.accumulate_coco` on the materialised replicate. Up to 8 replicates
walk each cell's events in one pass (lanes), and a run of true positives goes straight to
the bucket of the highest recall threshold it reaches: the precision at threshold ``i`` is
the maximum over the buckets from ``i`` up, pycocotools' envelope read at the thresholds
(maxima are exact, so the values are the same). Built with ``-ffp-contract=off``.
"""

import numpy as np

import os

cimport cython
from cython.parallel cimport prange
from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.stdlib cimport free, malloc




cdef double _EPS = float(np.spacing(1))

cdef enum:
    _LANES = 8  # replicates walking one cell's events together


def thread_count(threads=None):
    """Threads for :func:`accumulate_batch`: ``threads`` or the CPU count (at most 8)."""
    if threads is False:
        return 1
    if threads is None or threads is True:
        return max(1, min(os.cpu_count() or 1, 8))
    return max(1, int(threads))


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
    const int32_t[::1] ev_rank,
    const uint8_t[::1] ev_tp,
    const int32_t[::1] ev_block,
    const int64_t[:, ::1] weights,
    const int64_t[:, :, ::1] npig,
    const int64_t[::1] max_dets,
    const int64_t[::1] level_slot,
    const double[::1] recall_thresholds,
    double[:, :, :, :, :, ::1] precision,
    double[:, :, :, :, ::1] recall,
    int threads=1,
):
    """Fill precision [B,T,R,K,A,L] and recall [B,T,K,A,M] of B weighted replicates in place.

    The events of (class k, area a, threshold t) are ``ev_start[c]:ev_end[c]`` with ``c = (k
    * A + a) * T + t``: each is a record not ignored there, with its image position
    (``ev_image``) and rank in group (``ev_rank``), ``ev_tp`` 1 for a true positive,
    ``ev_block`` the length of its tie block at the block's first event (1 outside blocks).
    ``weights`` [B, I]: each replicate's image counts; ``npig`` [B,K,A] its regular ground
    truths (cells with 0 stay untouched). ``level_slot`` [M]: where level m's precision goes
    (-1: recall only). A record counts at level m when its rank is below ``max_dets[m]``.
    The replicates go by groups of up to 8 lanes walking each cell's events once; the
    groups are shared by ``threads`` OpenMP threads.
    """
    cdef Py_ssize_t n_b = weights.shape[0], n_i = weights.shape[1]
    cdef Py_ssize_t n_t = precision.shape[1], n_r = recall_thresholds.shape[0]
    cdef Py_ssize_t n_k = npig.shape[1], n_a = npig.shape[2]
    cdef Py_ssize_t n_m = max_dets.shape[0], n_cells = n_k * n_a * n_t
    cdef Py_ssize_t n_g = (n_b + _LANES - 1) // _LANES, g, b, i
    if ev_start.shape[0] != n_cells or ev_end.shape[0] != n_cells:
        raise ValueError(f"ev_start, ev_end: expected {n_cells} entries")
    if level_slot.shape[0] != n_m or recall.shape[4] != n_m or not 0 < n_m <= 64:
        raise ValueError(f"level_slot, recall: expected {n_m} (1..64) max-dets levels")
    if (npig.shape[0] != n_b or precision.shape[0] != n_b or recall.shape[0] != n_b
            or precision.shape[2] != n_r):
        raise ValueError(f"npig, precision, recall: expected {n_b} replicates")
    if ev_image.shape[0] != ev_rank.shape[0] or ev_tp.shape[0] != ev_rank.shape[0] \
            or ev_block.shape[0] != ev_rank.shape[0]:
        raise ValueError("ev_image, ev_rank, ev_tp, ev_block: expected one length")
    # each group's weights, image-major: lane weights of one image side by side
    cdef int64_t[:, ::1] wt = np.zeros((max(n_g, 1), max(n_i, 1) * _LANES), dtype=np.int64)
    for b in range(n_b):
        g = b // _LANES
        for i in range(n_i):
            wt[g, i * _LANES + b % _LANES] = weights[b, i]
    cdef int n_threads = max(1, min(threads, n_g)) if n_g else 1
    if n_threads > 1:
        for g in prange(n_g, nogil=True, schedule="dynamic", chunksize=1,
                        num_threads=n_threads):
            _group(g, n_b, n_k, n_a, n_t, n_r, n_m, ev_start, ev_end, ev_image, ev_rank,
                   ev_tp, ev_block, wt, npig, max_dets, level_slot, recall_thresholds,
                   precision, recall)
    else:
        with nogil:
            for g in range(n_g):
                _group(g, n_b, n_k, n_a, n_t, n_r, n_m, ev_start, ev_end, ev_image, ev_rank,
                       ev_tp, ev_block, wt, npig, max_dets, level_slot, recall_thresholds,
                       precision, recall)


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


@cython.cdivision(True)
cdef void _group_walk(
    Py_ssize_t cell, int64_t limit, Py_ssize_t n_r, Py_ssize_t n_m,
    const int64_t[::1] ev_start, const int64_t[::1] ev_end,
    const int32_t[::1] ev_image, const int32_t[::1] ev_rank,
    const uint8_t[::1] ev_tp, const int32_t[::1] ev_block,
    const int64_t* wt, const int64_t* jt, double* bucket,
    const int64_t[::1] max_dets, int64_t* level_out,
) noexcept nogil:
    # one (class, area range, threshold) at max-dets ``limit`` for the _LANES lanes (the
    # weights ``wt`` [I, _LANES]; unused lanes weigh 0): bucket [lane, R] as in _close; with
    # level_out [64, _LANES] (not NULL), the true positives below each level's max-dets too
    cdef Py_ssize_t e = ev_start[cell], end = ev_end[cell], f, l, m
    cdef int32_t blk, rank
    cdef int64_t w, c
    cdef int64_t closing
    cdef const int64_t* row
    # lane state in local arrays (no aliasing: the lane loops vectorize)
    cdef int64_t tp[_LANES]
    cdef int64_t fp[_LANES]
    cdef int64_t open_run[_LANES]
    cdef int64_t hit[_LANES]
    cdef Py_ssize_t ptr[_LANES]
    cdef int64_t level_tp[64 * _LANES]
    cdef bint levels = level_out != NULL
    for l in range(_LANES):
        tp[l] = 0
        fp[l] = 0
        ptr[l] = 0
        open_run[l] = 0
    for f in range(_LANES * n_r):
        bucket[f] = 0.0
    if levels:
        for f in range(n_m * _LANES):
            level_tp[f] = 0
    while e < end:
        blk = ev_block[e]
        row = wt + (<Py_ssize_t>ev_image[e]) * _LANES
        if blk <= 1:
            rank = ev_rank[e]
            if rank < limit:
                if ev_tp[e]:
                    for l in range(_LANES):
                        tp[l] += row[l]
                        open_run[l] |= row[l] > 0
                    if levels:
                        for m in range(n_m):
                            if rank < max_dets[m]:
                                for l in range(_LANES):
                                    level_tp[m * _LANES + l] += row[l]
                else:
                    closing = 0
                    for l in range(_LANES):
                        hit[l] = open_run[l] & (row[l] > 0)
                        closing |= hit[l]
                    if closing:
                        for l in range(_LANES):
                            if hit[l]:
                                ptr[l] = _close(tp[l], fp[l], ptr[l], jt + l * n_r,
                                                bucket + l * n_r, n_r)
                                open_run[l] = 0
                    for l in range(_LANES):
                        fp[l] += row[l]
            e += 1
            continue
        # a tie block of blk events (one image): its pattern, w times in each lane
        for l in range(_LANES):
            w = row[l]
            for c in range(w):
                for f in range(e, e + blk):
                    rank = ev_rank[f]
                    if rank >= limit:
                        continue
                    if ev_tp[f]:
                        tp[l] += 1
                        open_run[l] = 1
                        if levels:
                            for m in range(n_m):
                                if rank < max_dets[m]:
                                    level_tp[m * _LANES + l] += 1
                    else:
                        if open_run[l]:
                            ptr[l] = _close(tp[l], fp[l], ptr[l], jt + l * n_r,
                                            bucket + l * n_r, n_r)
                            open_run[l] = 0
                        fp[l] += 1
        e += blk
    for l in range(_LANES):
        if open_run[l]:
            ptr[l] = _close(tp[l], fp[l], ptr[l], jt + l * n_r, bucket + l * n_r, n_r)
    if levels:
        for f in range(n_m * _LANES):
            level_out[f] = level_tp[f]


@cython.cdivision(True)
cdef void _group(
    Py_ssize_t g, Py_ssize_t n_b, Py_ssize_t n_k, Py_ssize_t n_a, Py_ssize_t n_t,
    Py_ssize_t n_r, Py_ssize_t n_m,
    const int64_t[::1] ev_start, const int64_t[::1] ev_end,
    const int32_t[::1] ev_image, const int32_t[::1] ev_rank,
    const uint8_t[::1] ev_tp, const int32_t[::1] ev_block,
    const int64_t[:, ::1] wt, const int64_t[:, :, ::1] npig, const int64_t[::1] max_dets,
    const int64_t[::1] level_slot, const double[::1] recall_thresholds,
    double[:, :, :, :, :, ::1] precision, double[:, :, :, :, ::1] recall,
) noexcept nogil:
    cdef Py_ssize_t b0 = g * _LANES, n_l = min(<Py_ssize_t>_LANES, n_b - b0)
    cdef Py_ssize_t k, a, t, m, cell, l, i, j, top = n_m - 1
    cdef int64_t lane_npig[_LANES]
    cdef int64_t level_tp[_LANES * 64]
    cdef int64_t* jt = <int64_t*>malloc(_LANES * n_r * sizeof(int64_t))
    cdef double* bucket = <double*>malloc(_LANES * n_r * sizeof(double))
    cdef double best
    cdef bint any_gt
    if jt == NULL or bucket == NULL:
        free(jt)
        free(bucket)
        return
    for k in range(n_k):
        for a in range(n_a):
            any_gt = False
            for l in range(_LANES):
                lane_npig[l] = npig[b0 + l, k, a] if l < n_l else 0
                for i in range(n_r):
                    jt[l * n_r + i] = 0
                if lane_npig[l] > 0:
                    any_gt = True
                    for i in range(n_r):
                        jt[l * n_r + i] = _first_count(recall_thresholds[i], lane_npig[l])
            if not any_gt:
                continue
            for t in range(n_t):
                cell = (k * n_a + a) * n_t + t
                for m in range(n_m):
                    if m < top and level_slot[m] < 0:
                        continue
                    _group_walk(cell, max_dets[m], n_r, n_m, ev_start, ev_end,
                                ev_image, ev_rank, ev_tp, ev_block, &wt[g, 0], jt,
                                bucket, max_dets, level_tp if m == top else NULL)
                    for l in range(n_l):
                        if lane_npig[l] <= 0:
                            continue
                        if level_slot[m] >= 0:
                            # precision at threshold i: the best run reaching it or beyond
                            best = 0.0
                            for i in range(n_r - 1, -1, -1):
                                if bucket[l * n_r + i] > best:
                                    best = bucket[l * n_r + i]
                                precision[b0 + l, t, i, k, a, level_slot[m]] = best
                        if m == top:
                            for j in range(n_m):
                                recall[b0 + l, t, k, a, j] = (
                                    (<double>level_tp[j * _LANES + l]) / lane_npig[l])
    free(jt)
    free(bucket)
