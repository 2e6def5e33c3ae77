# ioukit: openmp
"""Compiled kernel of the bootstrap (private): COCO accumulation of a weighted replicate.

:func:`accumulate_weighted` gives pycocotools' precision (at some max-dets levels) and recall
for the dataset in which image ``i`` appears ``weights[i]`` times, its copies adjacent, from
per-(class, area range, threshold) event lists built once (the records not ignored there, in
accumulation order): a record of an image drawn ``w`` times is ``w`` consecutive records with
its outcome, except inside a tie block (records of one image with one score), whose ``w``
copies follow one another (the block's pattern repeated ``w`` times). Equal, bit for bit, to
:func:`ioukit._kernels.match.accumulate_coco` on the materialised replicate. The plain-Python
twin is ``accumulate_weighted_python`` in ``tests/twins.py``. Built with ``-ffp-contract=off``.
"""

import numpy as np

import os

cimport cython
from cython.parallel cimport prange, threadid
from libc.stdint cimport int32_t, int64_t, uint8_t


cdef double _EPS = float(np.spacing(1))


def thread_count(threads=None):
    """Threads for :func:`accumulate_weighted`: ``threads`` or the CPU count (at most 8)."""
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


@cython.cdivision(True)
cdef void _walk(
    Py_ssize_t cell, int64_t limit, int64_t npig,
    const int64_t[::1] ev_start, const int64_t[::1] ev_end,
    const int32_t[::1] ev_record, const uint8_t[::1] ev_tp, const int32_t[::1] ev_block,
    const int32_t[::1] rec_image, const int32_t[::1] rec_rank,
    const int64_t[::1] weights, const double[::1] recall_thresholds,
    int64_t[::1] run_tp, double[::1] run_prec,
    double* q, Py_ssize_t q_stride, double* rc_out,
    const int64_t[::1] max_dets, int64_t* level_tp,
) noexcept nogil:
    # one (class, area range, threshold) at max-dets ``limit``: precision at each recall
    # threshold written to q[i * q_stride], recall to rc_out (either may be NULL); with
    # level_tp (not NULL), the true positives below each level's max-dets are counted too
    cdef Py_ssize_t e = ev_start[cell], end = ev_end[cell], b, f, n_run = 0, i, s, m
    cdef Py_ssize_t n_m = max_dets.shape[0]
    cdef int64_t tp = 0, fp = 0, w, j, c
    cdef int32_t rank
    if level_tp != NULL:
        for m in range(n_m):
            level_tp[m] = 0
    cdef bint open_run = False
    while e < end:
        b = ev_block[e]
        w = weights[rec_image[ev_record[e]]]
        if b <= 1:
            rank = rec_rank[ev_record[e]]
            if w > 0 and rank < limit:
                if ev_tp[e]:
                    tp += w
                    open_run = True
                    if level_tp != NULL:
                        for m in range(n_m):
                            if rank < max_dets[m]:
                                level_tp[m] += w
                else:
                    if open_run:
                        run_tp[n_run] = tp
                        run_prec[n_run] = (<double>tp) / ((<double>fp) + (<double>tp) + _EPS)
                        n_run += 1
                        open_run = False
                    fp += w
            e += 1
            continue
        # a tie block of b events: its pattern, w times
        for c in range(w):
            for f in range(e, e + b):
                rank = rec_rank[ev_record[f]]
                if rank >= limit:
                    continue
                if ev_tp[f]:
                    tp += 1
                    open_run = True
                    if level_tp != NULL:
                        for m in range(n_m):
                            if rank < max_dets[m]:
                                level_tp[m] += 1
                else:
                    if open_run:
                        run_tp[n_run] = tp
                        run_prec[n_run] = (<double>tp) / ((<double>fp) + (<double>tp) + _EPS)
                        n_run += 1
                        open_run = False
                    fp += 1
        e += b
    if open_run:
        run_tp[n_run] = tp
        run_prec[n_run] = (<double>tp) / ((<double>fp) + (<double>tp) + _EPS)
        n_run += 1
    if rc_out != NULL:
        rc_out[0] = (<double>tp) / npig
    if q == NULL:
        return
    # envelope: suffix maximum over the run ends
    for s in range(n_run - 2, -1, -1):
        if run_prec[s + 1] > run_prec[s]:
            run_prec[s] = run_prec[s + 1]
    s = 0
    for i in range(recall_thresholds.shape[0]):
        j = _first_count(recall_thresholds[i], npig)
        while s < n_run and run_tp[s] < j:
            s += 1
        q[i * q_stride] = run_prec[s] if s < n_run else 0.0


def accumulate_weighted(
    const int64_t[::1] ev_start,
    const int64_t[::1] ev_end,
    const int32_t[::1] ev_record,
    const uint8_t[::1] ev_tp,
    const int32_t[::1] ev_block,
    const int32_t[::1] rec_image,
    const int32_t[::1] rec_rank,
    const int64_t[::1] weights,
    const int64_t[:, ::1] npig,
    const int64_t[::1] max_dets,
    const int64_t[::1] level_slot,
    const double[::1] recall_thresholds,
    double[:, :, :, :, ::1] precision,
    double[:, :, :, ::1] recall,
    int threads=1,
):
    """Fill precision [T,R,K,A,L] and recall [T,K,A,M] of one weighted replicate in place.

    The events of (class k, area a, threshold t) are ``ev_start[c]:ev_end[c]`` with ``c = (k
    * A + a) * T + t``: each is a record (``ev_record``, into ``rec_image`` [N] image
    positions and ``rec_rank`` [N] ranks in group) not ignored there, ``ev_tp`` 1 for a true
    positive, ``ev_block`` the length of its tie block at the block's first event (1 outside
    blocks). ``weights`` [I]: each image's count; ``npig`` [K,A] the replicate's regular
    ground truths (cells with 0 stay untouched). ``level_slot`` [M]: where level m's
    precision goes (-1: recall only). Max detections: a record counts at level m when its
    rank is below ``max_dets[m]``.
    """
    cdef Py_ssize_t n_t = precision.shape[0], n_k = npig.shape[0], n_a = npig.shape[1]
    cdef Py_ssize_t n_m = max_dets.shape[0], longest = 1, cell, k, a, t, m
    cdef Py_ssize_t n_cells = n_k * n_a * n_t
    cdef int64_t total
    if ev_start.shape[0] != n_cells or ev_end.shape[0] != n_cells:
        raise ValueError(f"ev_start, ev_end: expected {n_cells} entries")
    if level_slot.shape[0] != n_m or recall.shape[3] != n_m or not 0 < n_m <= 64:
        raise ValueError(f"level_slot, recall: expected {n_m} (1..64) max-dets levels")
    # scratch: a run end per event at most (a tie block's copies: its events times the count)
    cdef int64_t wmax = max(1, int(np.max(weights)) if weights.shape[0] else 1)
    for cell in range(n_cells):
        total = ev_end[cell] - ev_start[cell]
        if total > longest:
            longest = total
    cdef int n_threads = max(1, min(threads, n_k)) if n_k else 1
    cdef int64_t[:, ::1] run_tp = np.empty((n_threads, longest * wmax + 1), dtype=np.int64)
    cdef double[:, ::1] run_prec = np.empty((n_threads, longest * wmax + 1))
    cdef int tid
    cdef Py_ssize_t q_stride = precision.strides[1] // sizeof(double)
    if n_threads > 1:
        for k in prange(n_k, nogil=True, schedule="dynamic", chunksize=1,
                        num_threads=n_threads):
            tid = threadid()
            _class(k, n_a, n_t, n_m, ev_start, ev_end, ev_record, ev_tp, ev_block, rec_image,
                   rec_rank, weights, npig, max_dets, level_slot, recall_thresholds, precision,
                   recall, run_tp[tid], run_prec[tid], q_stride)
    else:
        with nogil:
            for k in range(n_k):
                _class(k, n_a, n_t, n_m, ev_start, ev_end, ev_record, ev_tp, ev_block,
                       rec_image, rec_rank, weights, npig, max_dets, level_slot,
                       recall_thresholds, precision, recall, run_tp[0], run_prec[0], q_stride)


@cython.cdivision(True)
cdef void _class(
    Py_ssize_t k, Py_ssize_t n_a, Py_ssize_t n_t, Py_ssize_t n_m,
    const int64_t[::1] ev_start, const int64_t[::1] ev_end,
    const int32_t[::1] ev_record, const uint8_t[::1] ev_tp, const int32_t[::1] ev_block,
    const int32_t[::1] rec_image, const int32_t[::1] rec_rank,
    const int64_t[::1] weights, const int64_t[:, ::1] npig, const int64_t[::1] max_dets,
    const int64_t[::1] level_slot, const double[::1] recall_thresholds,
    double[:, :, :, :, ::1] precision, double[:, :, :, ::1] recall,
    int64_t[::1] run_tp, double[::1] run_prec, Py_ssize_t q_stride,
) noexcept nogil:
    cdef Py_ssize_t a, t, m, cell, top = n_m - 1
    cdef int64_t n
    cdef double* q
    cdef int64_t level_tp[64]
    for a in range(n_a):
        n = npig[k, a]
        if n <= 0:
            continue
        for t in range(n_t):
            cell = (k * n_a + a) * n_t + t
            for m in range(top):
                if level_slot[m] >= 0:
                    _walk(cell, max_dets[m], n, ev_start, ev_end, ev_record, ev_tp, ev_block,
                          rec_image, rec_rank, weights, recall_thresholds, run_tp, run_prec,
                          &precision[t, 0, k, a, level_slot[m]], q_stride, NULL, max_dets,
                          NULL)
            q = NULL
            if level_slot[top] >= 0:
                q = &precision[t, 0, k, a, level_slot[top]]
            _walk(cell, max_dets[top], n, ev_start, ev_end, ev_record, ev_tp, ev_block,
                  rec_image, rec_rank, weights, recall_thresholds, run_tp, run_prec,
                  q, q_stride, NULL, max_dets, level_tp)
            for m in range(n_m):
                recall[t, k, a, m] = (<double>level_tp[m]) / n
