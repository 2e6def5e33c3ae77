# ioukit: openmp
"""Compiled kernels of the evaluation pipeline (private): group IoU, the one matcher, COCO
accumulation.

* :func:`group_box_iou` / :func:`group_box_iou_f32` fill every (image, class) group's
  box-IoU matrix [P_i, G_i] (float64 arithmetic with a pixel offset and an eps; or
  Ultralytics' float32 arithmetic);
* :func:`match_groups` is the ONE matcher: greedy in descending score with an explicit
  threshold comparison (``>=`` / ``>``) and tie rule (last gt as pycocotools, first gt as
  Ultralytics, or the VOC devkit's argmax without fallback), crowd and ignore handling and
  area-range ignore; it writes each prediction's status (two bit planes) and its match
  (once per prediction, full rows only for the rare ones that change ground truth);
* :func:`accumulate_coco` turns the status bits into pycocotools' precision/recall/scores arrays.

Inputs are contiguous NumPy arrays already sorted by the caller (stable sorts outside, loops
inside); bool arrays are passed as uint8 views; outputs are allocated by the caller. Built
with ``-ffp-contract=off``. The plain-Python twins are in ``tests/kernels/test_match_kernels.py``.
"""

import numpy as np

import os

cimport cython
from cython.parallel cimport prange, threadid
from libc.math cimport NAN
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.string cimport memcpy

FALSE_POSITIVE, TRUE_POSITIVE, IGNORED = 0, 1, 2
TIE_LAST, TIE_FIRST, ARGMAX = 0, 1, 2

PARALLEL_MIN_PREDICTIONS = 50_000
"""Matching and accumulation share groups/classes between OpenMP threads from this many
evaluated predictions on (``threads=None``); ``threads=True``/``False`` forces either way."""


def _available_threads():
    """``OMP_NUM_THREADS`` when it is set (its first level), else the CPUs this process may
    run on (its affinity mask: ``taskset`` and container limits count), else the CPU count.

    ``prange(num_threads=...)`` overrides OpenMP's own default, so the variable is read here.
    """
    value = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
    if value.isdigit() and int(value) > 0:
        return int(value)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1


def _thread_count(n_items, threads):
    """Threads to use: 1 below the cut-off or when forbidden; else :func:`_available_threads`
    (at most 8).

    The scratch buffers are allocated per thread for exactly this many threads, and
    ``prange(num_threads=...)`` never starts more.
    """
    if threads is False or (threads is None and n_items < PARALLEL_MIN_PREDICTIONS):
        return 1
    return max(1, min(_available_threads(), 8))


cdef double _EPS = float(np.spacing(1))


cdef inline double _dmin(double a, double b) noexcept nogil:
    return a if a < b else b


cdef inline double _dmax(double a, double b) noexcept nogil:
    return a if a > b else b


cdef inline float _fmin(float a, float b) noexcept nogil:
    return a if a < b else b


cdef inline float _fmax(float a, float b) noexcept nogil:
    return a if a > b else b


def group_box_iou(
    const int64_t[::1] gt_start,
    const int64_t[::1] gt_end,
    const int64_t[::1] pred_start,
    const int64_t[::1] kept,
    const double[:, ::1] gt_boxes,
    const double[::1] gt_area,
    const uint8_t[::1] gt_crowd,
    const double[:, ::1] pred_boxes,
    const double[::1] pred_area,
    const int64_t[::1] offsets,
    double[::1] out,
    double pixel_offset,
    double eps,
    const int64_t[::1] gt_rows=None,
    const int64_t[::1] pred_rows=None,
):
    """Box IoU of every group, row-major [P_i, G_i] at ``out[offsets[i]:]``.

    ``w = min(x2) - max(x1) + pixel_offset`` (likewise ``h``); no overlap (``w <= 0`` or
    ``h <= 0``) gives 0; ``union = pred_area + gt_area - w*h + eps``, or ``pred_area + eps``
    for a crowd ground truth; a union <= 0 gives 0. Areas come from the caller (COCO: the
    source ``w * h``, as pycocotools' ``bbIou``).

    ``gt_rows`` / ``pred_rows`` (both or neither): the ``gt_*`` / ``pred_*`` arrays are those
    of whole datasets and group position ``g`` reads row ``gt_rows[g]`` (``p``:
    ``pred_rows[p]``), so the caller gathers nothing (the same values as passing
    ``gt_boxes[gt_rows]``... without them).
    """
    cdef Py_ssize_t group, d, j, g, p, base
    cdef double w, h, inter, union_, da
    cdef bint by_rows = gt_rows is not None
    if by_rows != (pred_rows is not None):
        raise ValueError("gt_rows, pred_rows: expected both or neither")
    with nogil:
        for group in range(gt_start.shape[0]):
            if kept[group] <= 0 or gt_end[group] <= gt_start[group]:
                continue
            base = offsets[group]
            for d in range(kept[group]):
                p = pred_start[group] + d
                if by_rows:
                    p = pred_rows[p]
                da = pred_area[p]
                for j in range(gt_end[group] - gt_start[group]):
                    g = gt_start[group] + j
                    if by_rows:
                        g = gt_rows[g]
                    out[base] = 0.0
                    w = _dmin(pred_boxes[p, 2], gt_boxes[g, 2]) - _dmax(pred_boxes[p, 0], gt_boxes[g, 0]) + pixel_offset
                    if w > 0:
                        h = _dmin(pred_boxes[p, 3], gt_boxes[g, 3]) - _dmax(pred_boxes[p, 1], gt_boxes[g, 1]) + pixel_offset
                        if h > 0:
                            inter = w * h
                            if gt_crowd[g]:
                                union_ = da + eps
                            else:
                                union_ = da + gt_area[g] - inter + eps
                            if union_ > 0:
                                out[base] = inter / union_
                    base += 1


def group_box_iou_f32(
    const int64_t[::1] gt_start,
    const int64_t[::1] gt_end,
    const int64_t[::1] pred_start,
    const int64_t[::1] kept,
    const float[:, ::1] gt_boxes,
    const float[:, ::1] pred_boxes,
    const int64_t[::1] offsets,
    double[::1] out,
    float eps,
):
    """Ultralytics' ``box_iou`` of every group, in float32, stored (exactly) as float64.

    ``inter = clamp(min(x2) - max(x1), 0) * clamp(min(y2) - max(y1), 0)``,
    ``iou = inter / (area_gt + area_pred - inter + eps)``, every step rounded to float32 in
    Ultralytics' order (``(a2 - a1).prod(2)`` areas).
    """
    cdef Py_ssize_t group, d, j, g, p, base
    cdef float w, h, inter, union_, ag, ap, zero = 0
    with nogil:
        for group in range(gt_start.shape[0]):
            if kept[group] <= 0 or gt_end[group] <= gt_start[group]:
                continue
            base = offsets[group]
            for d in range(kept[group]):
                p = pred_start[group] + d
                ap = (pred_boxes[p, 2] - pred_boxes[p, 0]) * (pred_boxes[p, 3] - pred_boxes[p, 1])
                for j in range(gt_end[group] - gt_start[group]):
                    g = gt_start[group] + j
                    ag = (gt_boxes[g, 2] - gt_boxes[g, 0]) * (gt_boxes[g, 3] - gt_boxes[g, 1])
                    w = _fmax(_fmin(gt_boxes[g, 2], pred_boxes[p, 2]) - _fmax(gt_boxes[g, 0], pred_boxes[p, 0]), zero)
                    h = _fmax(_fmin(gt_boxes[g, 3], pred_boxes[p, 3]) - _fmax(gt_boxes[g, 1], pred_boxes[p, 1]), zero)
                    inter = w * h
                    union_ = ag + ap
                    union_ = union_ - inter
                    union_ = union_ + eps
                    out[base] = <double>(inter / union_)
                    base += 1


cdef inline void _no_gt_group(
    Py_ssize_t group,
    const int64_t[::1] pred_start,
    const int64_t[::1] kept,
    const double[::1] pred_area,
    const double[::1] area_lo,
    const double[::1] area_hi,
    const int64_t[::1] slot,
    Py_ssize_t n_thr,
    uint8_t[:, ::1] ign_bits,
    int32_t[::1] first_gt,
    double[::1] first_iou,
    const int64_t[::1] dense_row,
    int64_t[:, ::1] other_gt,
    double[:, ::1] other_iou,
) noexcept nogil:
    # a group without ground truth (most groups): every prediction unmatched, ignored where
    # its own area is outside the range; match_groups calls it directly, without taking this
    # thread's scratch buffers, and _match_group for such a group too
    cdef Py_ssize_t p0 = pred_start[group], d, a, t, row, bit
    cdef bint dense = dense_row.shape[0] > 0
    for d in range(kept[group]):
        row = slot[p0 + d]
        for a in range(area_lo.shape[0]):
            if pred_area[p0 + d] < area_lo[a] or pred_area[p0 + d] > area_hi[a]:
                for t in range(n_thr):
                    bit = a * n_thr + t
                    ign_bits[row, bit >> 3] |= <uint8_t>(0x80 >> (bit & 7))
        first_gt[row] = -1
        first_iou[row] = NAN
        if dense and dense_row[row] >= 0:
            for t in range(n_thr):
                other_gt[dense_row[row], t] = -1
                other_iou[dense_row[row], t] = NAN


cdef void _match_group(
    Py_ssize_t group,
    const int64_t[::1] gt_start,
    const int64_t[::1] gt_end,
    const int64_t[::1] pred_start,
    const int64_t[::1] kept,
    const double[::1] iou_values,
    const int64_t[::1] iou_offsets,
    const double[::1] gt_area,
    const uint8_t[::1] gt_ignore,
    const uint8_t[::1] gt_crowd,
    const uint8_t[::1] gt_never,
    const double[::1] pred_area,
    const double[::1] thresholds,
    const double[::1] area_lo,
    const double[::1] area_hi,
    const int64_t[::1] slot,
    const int64_t[::1] gt_rows,
    int strict,
    int tie,
    uint8_t[:, ::1] tp_bits,
    uint8_t[:, ::1] ign_bits,
    int32_t[::1] first_gt,
    double[::1] first_iou,
    uint8_t[:, ::1] same_bits,
    uint8_t[::1] has_other,
    const int64_t[::1] dense_row,
    int64_t[:, ::1] other_gt,
    double[:, ::1] other_iou,
    int64_t[:, ::1] order,
    uint8_t[:, ::1] ignore,
    uint8_t[::1] taken,
    int64_t[:, :, ::1] choice,
    uint8_t[:, :, ::1] carry,
) noexcept nogil:
    # one group; order/ignore/taken/choice are this thread's scratch buffers
    cdef Py_ssize_t n_thr = thresholds.shape[0]
    cdef Py_ssize_t n_area = area_lo.shape[0]
    cdef Py_ssize_t g0 = gt_start[group]
    cdef Py_ssize_t p0 = pred_start[group]
    cdef Py_ssize_t n_gt = gt_end[group] - g0
    cdef Py_ssize_t n_pred = kept[group]
    cdef Py_ssize_t base_offset, a, b, t, d, j, k, m, source, g, row, bit, drow
    cdef int64_t first, gt_row
    cdef double lo, hi, thr, best, value
    cdef bint same, is_ign, ok
    cdef bint dense = dense_row.shape[0] > 0
    cdef bint use_carry = carry.shape[0] > 0
    if n_pred <= 0:
        return
    if n_gt == 0:
        _no_gt_group(group, pred_start, kept, pred_area, area_lo, area_hi, slot, n_thr,
                     ign_bits, first_gt, first_iou, dense_row, other_gt, other_iou)
        return
    base_offset = iou_offsets[group]
    for a in range(n_area):
        lo = area_lo[a]
        hi = area_hi[a]
        k = 0
        if tie == 2:
            for j in range(n_gt):
                g = g0 + j
                order[a, k] = j
                ignore[a, k] = gt_ignore[g] or gt_area[g] < lo or gt_area[g] > hi
                k += 1
        else:
            # stable partition: regular ground truths first, ignored ones last
            for j in range(n_gt):
                g = g0 + j
                if not (gt_ignore[g] or gt_area[g] < lo or gt_area[g] > hi):
                    order[a, k] = j
                    ignore[a, k] = 0
                    k += 1
            for j in range(n_gt):
                g = g0 + j
                if gt_ignore[g] or gt_area[g] < lo or gt_area[g] > hi:
                    order[a, k] = j
                    ignore[a, k] = 1
                    k += 1
        # an earlier area range with the same pattern has the same matches
        source = a
        for b in range(a):
            same = True
            for j in range(n_gt):
                if order[b, j] != order[a, j] or ignore[b, j] != ignore[a, j]:
                    same = False
                    break
            if same:
                source = b
                break
        if source == a and n_pred == 1 and tie != 2 and not use_carry:
            # one prediction and nothing taken: at every threshold the greedy scan ends on
            # the last (tie 0) or first (tie 1) regular ground truth of the highest IoU if
            # that IoU passes, else on the ignored one of the highest IoU if that passes:
            # two scans, then one comparison per threshold instead of one scan per threshold
            best = 0.0
            best_ign = 0.0
            m_reg = -1
            m_ign = -1
            for j in range(n_gt):
                value = iou_values[base_offset + order[a, j]]
                if value != value:
                    continue  # NaN passes no threshold
                if ignore[a, j]:
                    if m_ign == -1 or value > best_ign or (tie == 0 and value == best_ign):
                        best_ign = value
                        m_ign = j
                elif m_reg == -1 or value > best or (tie == 0 and value == best):
                    best = value
                    m_reg = j
            for t in range(n_thr):
                thr = thresholds[t]
                m = -1
                if m_reg >= 0 and (best > thr if strict else best >= thr):
                    m = m_reg
                elif m_ign >= 0 and (best_ign > thr if strict else best_ign >= thr):
                    m = m_ign
                choice[a, t, 0] = m
        elif source == a:
            for t in range(n_thr):
                thr = thresholds[t]
                for j in range(n_gt):
                    taken[j] = carry[a, t, j] if use_carry else 0
                for d in range(n_pred):
                    m = -1
                    if tie == 2:
                        best = -1.0
                        for j in range(n_gt):
                            value = iou_values[base_offset + d * n_gt + order[a, j]]
                            if value > best:
                                best = value
                                m = j
                        if m >= 0:
                            ok = best > thr if strict else best >= thr
                            if not ok:
                                m = -1
                            elif not ignore[a, m]:
                                if taken[m]:
                                    m = -1
                                else:
                                    taken[m] = 1
                    else:
                        best = thr
                        for j in range(n_gt):
                            if taken[j] and not gt_crowd[g0 + order[a, j]]:
                                continue
                            if m > -1 and not ignore[a, m] and ignore[a, j]:
                                break
                            value = iou_values[base_offset + d * n_gt + order[a, j]]
                            if m == -1:
                                ok = value > best if strict else value >= best
                            elif tie == 0:
                                ok = value >= best
                            else:
                                ok = value > best
                            if not ok:
                                continue
                            best = value
                            m = j
                        if m >= 0:
                            taken[m] = 1
                    choice[a, t, d] = m
                if use_carry:
                    for j in range(n_gt):
                        carry[a, t, j] = taken[j]
        for t in range(n_thr):
            bit = a * n_thr + t
            for d in range(n_pred):
                row = slot[p0 + d]
                m = choice[source, t, d]
                is_ign = m >= 0 and ignore[source, m]
                ok = m >= 0 and not gt_never[g0 + order[source, m]]
                if not ok and (pred_area[p0 + d] < lo or pred_area[p0 + d] > hi):
                    is_ign = True
                if is_ign:
                    ign_bits[row, bit >> 3] |= <uint8_t>(0x80 >> (bit & 7))
                elif ok:
                    tp_bits[row, bit >> 3] |= <uint8_t>(0x80 >> (bit & 7))
        if a == 0:
            # the match (area range 0) once per prediction: the first threshold's, where it
            # holds, and the rare other ground truths (dense rows, second pass)
            for d in range(n_pred):
                row = slot[p0 + d]
                drow = dense_row[row] if dense else -1
                first = -1
                for t in range(n_thr):
                    m = choice[source, t, d]
                    if m < 0:
                        if drow >= 0:
                            other_gt[drow, t] = -1
                            other_iou[drow, t] = NAN
                        continue
                    j = order[source, m]
                    gt_row = gt_rows[g0 + j]
                    value = iou_values[base_offset + d * n_gt + j]
                    if first == -1:
                        first = gt_row
                        first_iou[row] = value
                    if gt_row == first:
                        same_bits[row, t >> 3] |= <uint8_t>(0x80 >> (t & 7))
                    else:
                        has_other[row] = 1
                    if drow >= 0:
                        other_gt[drow, t] = gt_row
                        other_iou[drow, t] = value
                first_gt[row] = <int32_t>first
                if first == -1:
                    first_iou[row] = NAN


@cython.cdivision(True)
def match_groups(
    const int64_t[::1] gt_start,
    const int64_t[::1] gt_end,
    const int64_t[::1] pred_start,
    const int64_t[::1] kept,
    const double[::1] iou_values,
    const int64_t[::1] iou_offsets,
    const double[::1] gt_area,
    const uint8_t[::1] gt_ignore,
    const uint8_t[::1] gt_crowd,
    const uint8_t[::1] gt_never,
    const double[::1] pred_area,
    const double[::1] thresholds,
    const double[::1] area_lo,
    const double[::1] area_hi,
    const int64_t[::1] slot,
    const int64_t[::1] gt_rows,
    int strict,
    int tie,
    const int64_t[::1] group_list,
    uint8_t[:, ::1] tp_bits,
    uint8_t[:, ::1] ign_bits,
    int32_t[::1] first_gt,
    double[::1] first_iou,
    uint8_t[:, ::1] same_bits,
    uint8_t[::1] has_other,
    const int64_t[::1] dense_row,
    int64_t[:, ::1] other_gt,
    double[:, ::1] other_iou,
    threads=None,
    carry=None,
):
    """Match the groups ``group_list``; write each prediction's status bits, its match once
    and, for the rows ``dense_row`` names, its full match rows.

    ``carry`` (uint8 [A, T, G], one group only): which ground truths earlier predictions of
    the group took at each (area range, threshold); read at the start and updated, so a group
    too large for one similarity matrix is matched in consecutive blocks of its predictions
    (descending score) with the one-call result.

    Group ``i`` has ground truths ``gt_start[i]:gt_end[i]`` (group order) and its first
    ``kept[i]`` predictions ``pred_start[i]:`` (descending score, stable); its IoU matrix is
    ``iou_values[iou_offsets[i]:]`` row-major [kept_i, G_i]. Prediction ``p``'s results go to
    row ``slot[p]``; ground truths are reported as ``gt_rows[position]`` (the caller's row
    numbering).

    For each area range ``a``, threshold ``t`` and prediction in order (``tie`` 0 or 1,
    greedy): ground truths that are ignored (``gt_ignore`` or area outside
    ``[area_lo[a], area_hi[a]]``) are scanned after the regular ones (stable); a taken one is
    skipped unless crowd; the scan stops at an ignored one once a regular one is held; the
    first candidate needs ``iou >= t`` (``> t`` when ``strict``), a later one replaces it when
    ``iou >= best`` (``tie`` 0: the last of equal IoUs, pycocotools) or ``iou > best`` (``tie``
    1: the first, Ultralytics). ``tie`` 2 (VOC devkit): the argmax over all ground truths in
    group order (first on ties); below the threshold, or taken, it is a false positive (no
    fallback).

    Status: IGNORED when the match is an ignored ground truth, or when unmatched with the
    prediction's own area outside the range; TRUE_POSITIVE when matched (and the ground truth
    is not ``gt_never``, pycocotools' id-0 bug); else FALSE_POSITIVE. Written as bits
    ``a * T + t`` (``np.packbits`` order) of ``tp_bits`` / ``ign_bits`` [N, ceil(A*T/8)],
    which the caller zeroes (bits are only set).

    The match (area range 0, also ignored matches): ``first_gt``/``first_iou`` [N] hold the
    ground truth and IoU at the first threshold with a match (-1/NaN when none), bit ``t`` of
    ``same_bits`` [N, ceil(T/8)] (zeroed by the caller) is set where the match is that ground
    truth, and ``has_other[row]`` is set to 1 when another threshold took another one. Rows
    with ``dense_row[row] >= 0`` (``dense_row`` empty: none) also get their full rows
    ``other_gt[dense_row[row], t]`` (-1 when none) and ``other_iou`` (NaN when none): the
    caller matches the groups of the ``has_other`` rows again to fill them.
    """
    cdef Py_ssize_t n_groups = group_list.shape[0]
    cdef Py_ssize_t n_thr = thresholds.shape[0]
    cdef Py_ssize_t n_area = area_lo.shape[0]
    cdef Py_ssize_t max_g = 1, max_p = 1, i, group, n_items = 0
    for i in range(n_groups):
        group = group_list[i]
        if gt_end[group] - gt_start[group] > max_g:
            max_g = gt_end[group] - gt_start[group]
        if kept[group] > max_p:
            max_p = kept[group]
        n_items += kept[group]
    cdef uint8_t[:, :, ::1] carried
    if carry is None:
        carried = np.zeros((0, 0, 0), dtype=np.uint8)
    else:
        if n_groups != 1:
            raise ValueError("carry: expected one group in group_list")
        group = group_list[0]
        carried = carry
        if (carried.shape[0] != n_area or carried.shape[1] != n_thr
                or carried.shape[2] != gt_end[group] - gt_start[group]):
            raise ValueError("carry: expected shape (A, T, G) of the group")
    cdef int n_threads = 1 if carry is not None else _thread_count(n_items, threads)
    order_np = np.empty((n_threads, n_area, max_g), dtype=np.int64)
    ignore_np = np.empty((n_threads, n_area, max_g), dtype=np.uint8)
    taken_np = np.empty((n_threads, max_g), dtype=np.uint8)
    choice_np = np.empty((n_threads, n_area, n_thr, max_p), dtype=np.int64)
    cdef int64_t[:, :, ::1] order = order_np
    cdef uint8_t[:, :, ::1] ignore = ignore_np
    cdef uint8_t[:, ::1] taken = taken_np
    cdef int64_t[:, :, :, ::1] choice = choice_np
    cdef int64_t[:, ::1] order0 = order[0]
    cdef uint8_t[:, ::1] ignore0 = ignore[0]
    cdef uint8_t[::1] taken0 = taken[0]
    cdef int64_t[:, :, ::1] choice0 = choice[0]
    cdef int tid
    if n_threads > 1:
        for i in prange(n_groups, nogil=True, schedule="dynamic", chunksize=256,
                        num_threads=n_threads):
            tid = threadid()
            group = group_list[i]
            if gt_end[group] <= gt_start[group]:
                _no_gt_group(group, pred_start, kept, pred_area, area_lo, area_hi, slot,
                             n_thr, ign_bits, first_gt, first_iou, dense_row, other_gt,
                             other_iou)
                continue
            _match_group(group, gt_start, gt_end, pred_start, kept, iou_values,
                         iou_offsets, gt_area, gt_ignore, gt_crowd, gt_never, pred_area,
                         thresholds, area_lo, area_hi, slot, gt_rows, strict, tie, tp_bits,
                         ign_bits, first_gt, first_iou, same_bits, has_other, dense_row,
                         other_gt, other_iou, order[tid], ignore[tid], taken[tid], choice[tid],
                         carried)
    else:
        with nogil:
            for i in range(n_groups):
                group = group_list[i]
                if gt_end[group] <= gt_start[group]:
                    _no_gt_group(group, pred_start, kept, pred_area, area_lo, area_hi, slot,
                                 n_thr, ign_bits, first_gt, first_iou, dense_row, other_gt,
                                 other_iou)
                    continue
                _match_group(group, gt_start, gt_end, pred_start, kept, iou_values,
                             iou_offsets, gt_area, gt_ignore, gt_crowd, gt_never, pred_area,
                             thresholds, area_lo, area_hi, slot, gt_rows, strict, tie, tp_bits,
                             ign_bits, first_gt, first_iou, same_bits, has_other, dense_row,
                             other_gt, other_iou, order0, ignore0, taken0, choice0, carried)


@cython.cdivision(True)
cdef inline void _envelope(
    const int32_t* fb,
    const double* sb,
    Py_ssize_t n_tp,
    Py_ssize_t n,
    double first_score,
    const int64_t[::1] first_index,
    const double[::1] recall_thresholds,
    double[:, :, :, :, ::1] precision,
    double[:, :, :, :, ::1] score_out,
    Py_ssize_t t,
    Py_ssize_t k,
    Py_ssize_t a,
    Py_ssize_t p,
    bint with_scores,
) noexcept nogil:
    # precision tp / (fp + tp + eps) at the true positives (``fb[j]``: the false positives
    # before the j-th), its envelope (maximum from there on) read at the recall thresholds,
    # walking backwards. Inside a run of true positives with no false positive between (same
    # fp) precision never decreases (rounding is monotonic), so only a run's last one is
    # divided.
    cdef Py_ssize_t n_rec = recall_thresholds.shape[0]
    cdef Py_ssize_t idx = n_tp - 1, r = n_rec - 1, j
    cdef double env = 0.0, target, tpv, value, eps = _EPS
    while r >= 0:
        target = recall_thresholds[r]
        if n > 0 and target <= 0.0:
            j = 0
        elif first_index[r] < n_tp:
            j = first_index[r]
        else:
            precision[t, r, k, a, p] = 0.0
            if with_scores:
                score_out[t, r, k, a, p] = 0.0
            r -= 1
            continue
        while idx >= j:
            if idx == n_tp - 1 or fb[idx + 1] != fb[idx]:
                tpv = <double>(idx + 1)
                value = tpv / (<double>fb[idx] + tpv + eps)
                if value > env:
                    env = value
            idx -= 1
        precision[t, r, k, a, p] = env
        if with_scores:
            score_out[t, r, k, a, p] = first_score if n > 0 and target <= 0.0 else sb[j]
        r -= 1


@cython.cdivision(True)
cdef void _accumulate_class(
    Py_ssize_t k,
    const int64_t[::1] class_start,
    const int64_t[::1] class_end,
    const int32_t[::1] rank,
    const uint8_t[:, ::1] tp_bits,
    const uint8_t[:, ::1] ign_bits,
    const double[::1] scores,
    const int64_t[:, ::1] num_regular_gt,
    const int64_t[::1] max_dets,
    const double[::1] recall_thresholds,
    double[:, :, :, :, ::1] precision,
    double[:, :, :, ::1] recall,
    double[:, :, :, :, ::1] score_out,
    const int64_t[::1] level_slot,
    bint with_scores,
    int64_t[:, ::1] members,
    int32_t[::1] fb_buf,
    double[::1] sb_buf,
    int64_t[::1] level_n,
    int64_t[::1] source,
    int64_t[::1] first_index,
    uint8_t[::1] level_of,
    int64_t[::1] tp_at,
) noexcept nogil:
    # one class; members/fb_buf/sb_buf/... are this thread's scratch buffers
    cdef Py_ssize_t n_a = num_regular_gt.shape[1]
    cdef Py_ssize_t n_thr = precision.shape[0]
    cdef Py_ssize_t n_rec = recall_thresholds.shape[0]
    cdef Py_ssize_t n_m = max_dets.shape[0]
    cdef Py_ssize_t s0 = class_start[k]
    cdef Py_ssize_t s1 = class_end[k]
    cdef Py_ssize_t n_all = s1 - s0
    cdef Py_ssize_t a, t, m, i, j, q, r, n, n_tp, bit, byte, longest, src, p, ps, run_end
    cdef Py_ssize_t whole, row_tp, row_ign
    cdef int64_t npig, rk, n_fp, total
    cdef uint8_t mask, x, y
    cdef double target, first_score
    cdef int32_t* fb = &fb_buf[0]
    cdef double* sb = &sb_buf[0]
    cdef const uint8_t* tp0
    cdef const uint8_t* ign0
    cdef const uint8_t* lv = &level_of[0]
    cdef const double* sc
    cdef int64_t* cnt = &tp_at[0]
    # the records of each max-dets level (nested sets, in order): a run of levels with as
    # many records is one sequence, computed once, at its first level whose precision is
    # stored (else its first level: ``source``), and copied to the others. ``level_of[q]``:
    # the first level holding the class's q-th record (n_m: none), so one pass over the class
    # counts every level's true positives. ``level_slot[m]``: where level m's precision (and
    # scores) go on the last axis, -1: recall only
    for m in range(n_m):
        level_n[m] = 0
    for i in range(s0, s1):
        rk = rank[i]
        level_of[i - s0] = <uint8_t>n_m
        for m in range(n_m - 1, -1, -1):
            if rk < max_dets[m]:
                members[m, level_n[m]] = i
                level_n[m] += 1
                level_of[i - s0] = <uint8_t>m
    longest = 0
    m = 0
    while m < n_m:
        run_end = m + 1
        while run_end < n_m and level_n[run_end] == level_n[m]:
            run_end += 1
        src = m
        for q in range(m, run_end):
            if level_slot[q] >= 0:
                src = q
                break
        for q in range(m, run_end):
            source[q] = src
        if level_n[m] > longest:
            longest = level_n[m]
        m = run_end
    # the stored level holding the whole class (read in place, in the counting pass)
    whole = -1
    for m in range(n_m):
        if source[m] == m and level_slot[m] >= 0 and level_n[m] == n_all:
            whole = m
            break
    if n_all > 0:
        tp0 = &tp_bits[s0, 0]
        ign0 = &ign_bits[s0, 0]
        sc = &scores[s0]
    row_tp = tp_bits.strides[0]
    row_ign = ign_bits.strides[0]
    for a in range(n_a):
        npig = num_regular_gt[k, a]
        if npig == 0:
            continue
        # the j-th true positive (from 0) has recall (j + 1) / npig whatever the threshold
        # and level: the first one reaching each recall threshold, found once per area range
        j = 0
        for r in range(n_rec):
            target = recall_thresholds[r]
            while j < longest and (<double>(j + 1)) / npig < target:
                j += 1
            first_index[r] = j
        for t in range(n_thr):
            bit = a * n_thr + t
            byte = bit >> 3
            mask = <uint8_t>(0x80 >> (bit & 7))
            for m in range(n_m + 1):
                cnt[m] = 0
            # one pass over the class: the true positives of each first level and, for the
            # whole level, each true positive's count of false positives before it and its
            # score (branch-free: the slot after the last true positive is written, not kept)
            if whole >= 0:
                n_tp = 0
                n_fp = 0
                for q in range(n_all):
                    x = tp0[q * row_tp + byte] & mask
                    y = ign0[q * row_ign + byte] & mask
                    fb[n_tp] = <int32_t>n_fp
                    if with_scores:
                        sb[n_tp] = sc[q]
                    n_tp += x != 0
                    n_fp += (x | y) == 0
                    cnt[lv[q]] += x != 0
                first_score = scores[s0] if n_all > 0 else 0.0
                _envelope(fb, sb, n_tp, n_all, first_score, first_index, recall_thresholds,
                          precision, score_out, t, k, a, level_slot[whole], with_scores)
            else:
                for q in range(n_all):
                    cnt[lv[q]] += (tp0[q * row_tp + byte] & mask) != 0
            total = 0
            for m in range(n_m):
                total += cnt[m]
                if source[m] != m:
                    continue  # copied below, from its run's computed level
                n = level_n[m]
                recall[t, k, a, m] = (<double>total) / npig if n > 0 else 0.0
                p = level_slot[m]
                if p < 0 or m == whole:
                    continue
                # a stored level without the whole class: its own pass over its records
                n_tp = 0
                n_fp = 0
                for q in range(n):
                    i = members[m, q]
                    x = tp_bits[i, byte] & mask
                    y = ign_bits[i, byte] & mask
                    fb[n_tp] = <int32_t>n_fp
                    if with_scores:
                        sb[n_tp] = scores[i]
                    n_tp += x != 0
                    n_fp += (x | y) == 0
                first_score = scores[members[m, 0]] if n > 0 else 0.0
                _envelope(fb, sb, n_tp, n, first_score, first_index, recall_thresholds,
                          precision, score_out, t, k, a, p, with_scores)
            for m in range(n_m):
                src = source[m]
                if src == m:
                    continue
                recall[t, k, a, m] = recall[t, k, a, src]
                p = level_slot[m]
                if p >= 0:  # then so is src's (the run's first stored level)
                    ps = level_slot[src]
                    for r in range(n_rec):
                        precision[t, r, k, a, p] = precision[t, r, k, a, ps]
                        if with_scores:
                            score_out[t, r, k, a, p] = score_out[t, r, k, a, ps]


def accumulate_coco(
    const int64_t[::1] class_start,
    const int64_t[::1] class_end,
    const int32_t[::1] rank,
    const uint8_t[:, ::1] tp_bits,
    const uint8_t[:, ::1] ign_bits,
    const double[::1] scores,
    const int64_t[:, ::1] num_regular_gt,
    const int64_t[::1] max_dets,
    const double[::1] recall_thresholds,
    double[:, :, :, :, ::1] precision,
    double[:, :, :, ::1] recall,
    double[:, :, :, :, ::1] score_out,
    threads=None,
    const int64_t[::1] level_slot=None,
):
    """Fill precision [T,R,K,A,M], recall [T,K,A,M] and score_out [T,R,K,A,M] in place.

    ``level_slot`` [M] (default ``arange(M)``) stores level m's precision and scores at
    ``[..., level_slot[m]]`` of arrays [T,R,K,A,P], or nowhere where it is -1 (its recall only);
    ``score_out`` of size 0 is not written (precision and recall alone).

    Predictions of class ``k`` are ``class_start[k]:class_end[k]`` in accumulation order
    (class, descending score, ties by image rank then rank in group); ``rank`` is each one's
    place in its group, ``tp_bits`` / ``ign_bits`` [N, ceil(A*T/8)] its outcome (bit
    ``a * T + t``, ``np.packbits`` order; neither set: false positive), ``num_regular_gt`` [K, A] the
    non-ignored ground truths (cells with 0 stay untouched, -1). ``max_dets`` ascending;
    ``recall_thresholds`` increasing, >= 0.

    Equal to pycocotools' cumulative TP/FP, precision envelope and ``searchsorted(recall,
    recall_thresholds, "left")`` sampling; only true positives are stored (recall rises only
    at a true positive, and every other position's precision is at most that of the true
    positive before it, so the envelope over true positives is the same), each as its count
    of false positives before it: the j-th true positive's recall ``(j + 1) / npig`` is the
    same at every threshold and level (searched once per class and area range), and its
    precision ``tp / (fp + tp + eps)`` is divided only where the envelope can change, the
    last true positive of each run (inside a run precision never decreases, and rounding is
    monotonic). A max-dets level with the same records as the one below is copied.
    """
    cdef Py_ssize_t n_k = class_start.shape[0]
    cdef Py_ssize_t n_m = max_dets.shape[0]
    cdef Py_ssize_t longest = 1, k
    for k in range(n_k):
        if class_end[k] - class_start[k] > longest:
            longest = class_end[k] - class_start[k]
    cdef int n_threads = _thread_count(tp_bits.shape[0], threads) if n_k > 1 else 1
    cdef Py_ssize_t n_rec = recall_thresholds.shape[0]
    cdef int64_t[:, :, ::1] members = np.empty((n_threads, n_m, longest), dtype=np.int64)
    cdef bint with_scores = score_out.shape[0] != 0
    if longest >= 2**31 or n_m >= 255:
        raise ValueError("accumulate_coco: 2**31 records in a class or 255 max_dets levels")
    # per thread: each true positive's false positives before it (int32: a class has fewer
    # than 2**31 records) and, for the scores array only, its score; each record's first level
    cdef int32_t[:, ::1] fb = np.empty((n_threads, longest + 1), dtype=np.int32)
    cdef double[:, ::1] sb = np.empty((n_threads, longest + 1 if with_scores else 1))
    cdef uint8_t[:, ::1] level_of = np.empty((n_threads, longest), dtype=np.uint8)
    cdef int64_t[:, ::1] tp_at = np.empty((n_threads, n_m + 1), dtype=np.int64)
    cdef int64_t[:, ::1] level_n = np.zeros((n_threads, n_m), dtype=np.int64)
    cdef int64_t[:, ::1] source = np.zeros((n_threads, n_m), dtype=np.int64)
    cdef int64_t[:, ::1] first_index = np.zeros((n_threads, max(n_rec, 1)), dtype=np.int64)
    cdef int tid
    cdef const int64_t[::1] slots = (
        np.arange(n_m, dtype=np.int64) if level_slot is None else level_slot)
    if slots.shape[0] != n_m:
        raise ValueError(f"level_slot: expected {n_m} entries, got {slots.shape[0]}")
    if n_m and (np.max(slots) >= precision.shape[4] or np.min(slots) < -1):
        raise ValueError(f"level_slot: expected values in [-1, {precision.shape[4]})")
    if with_scores and any(score_out.shape[d] != precision.shape[d] for d in range(5)):
        raise ValueError("score_out: expected precision's shape or size 0")
    if n_threads > 1:
        for k in prange(n_k, nogil=True, schedule="dynamic", chunksize=1,
                        num_threads=n_threads):
            tid = threadid()
            _accumulate_class(k, class_start, class_end, rank, tp_bits, ign_bits, scores,
                              num_regular_gt, max_dets, recall_thresholds, precision, recall,
                              score_out, slots, with_scores, members[tid], fb[tid], sb[tid],
                              level_n[tid], source[tid], first_index[tid], level_of[tid],
                              tp_at[tid])
    else:
        with nogil:
            for k in range(n_k):
                _accumulate_class(k, class_start, class_end, rank, tp_bits, ign_bits,
                                  scores, num_regular_gt, max_dets, recall_thresholds, precision,
                                  recall, score_out, slots, with_scores, members[0], fb[0],
                                  sb[0], level_n[0], source[0], first_index[0], level_of[0],
                                  tp_at[0])


def counting_order(
    const int64_t[::1] key,
    Py_ssize_t n_keys,
    const int64_t[::1] order,
    int64_t[::1] out,
    int64_t[::1] counts,
):
    """``out = order`` stably reordered by ``key[order[i]]`` (a counting sort; ``0 <= key <
    n_keys``); ``counts`` [n_keys + 1] is scratch. One pass of a least-significant-first
    radix sort: reordering ``arange(n)`` by the last key, then each earlier one, gives
    ``argsort(composite key, kind="stable")``.
    """
    cdef Py_ssize_t n = order.shape[0], i, b
    cdef int64_t total = 0, c
    with nogil:
        for b in range(n_keys + 1):
            counts[b] = 0
        for i in range(n):
            counts[key[order[i]] + 1] += 1
        for b in range(n_keys + 1):
            total += counts[b]
            counts[b] = total
        for i in range(n):
            c = key[order[i]]
            out[counts[c]] = order[i]
            counts[c] += 1


@cython.cdivision(True)
def dense_score_rank(const double[::1] scores, int64_t[::1] dense):
    """Dense rank of each score in descending order (0: the highest; equal scores, ``-0.0``
    and ``0.0`` too, share a rank), written to ``dense``; returns the number of distinct
    scores (1 when there is none). No NaN allowed (the caller checks).

    A least-significant-first radix sort of the scores' order-preserving 64-bit keys (11-bit
    digits; a digit equal in every key is skipped), then one walk over the sorted keys.
    """
    cdef Py_ssize_t n = scores.shape[0], i, p, d
    cdef int n_pass = 6, shift
    if n == 0:
        return 1
    if n >= 2**31:
        raise ValueError("dense_score_rank: 2**31 scores or more")
    keys_a = np.empty(n, dtype=np.uint64)
    keys_b = np.empty(n, dtype=np.uint64)
    idx_a = np.empty(n, dtype=np.int32)  # positions < 2**31: half the scratch of int64
    idx_b = np.empty(n, dtype=np.int32)
    hist_np = np.zeros((n_pass, 2048), dtype=np.int64)
    cdef uint64_t[::1] ka = keys_a, kb = keys_b, kt
    cdef int32_t[::1] ia = idx_a, ib = idx_b, it
    cdef int64_t[:, ::1] hist = hist_np
    cdef uint64_t u
    cdef double s
    cdef int64_t total, c, rank_
    with nogil:
        for i in range(n):
            s = scores[i]
            if s == 0.0:
                s = 0.0  # -0.0 sorts with 0.0
            memcpy(&u, &s, 8)
            # ascending order of the value, then inverted: descending
            if u >> 63:
                u = ~u
            else:
                u = u | (<uint64_t>1 << 63)
            u = ~u
            ka[i] = u
            ia[i] = <int32_t>i
            for p in range(n_pass):
                hist[p, (u >> (11 * p)) & 2047] += 1
        for p in range(n_pass):
            shift = 11 * p
            if hist[p, (ka[0] >> shift) & 2047] == n:
                continue
            total = 0
            for d in range(2048):
                c = hist[p, d]
                hist[p, d] = total
                total += c
            for i in range(n):
                d = (ka[i] >> shift) & 2047
                c = hist[p, d]
                kb[c] = ka[i]
                ib[c] = ia[i]
                hist[p, d] = c + 1
            kt = ka
            ka = kb
            kb = kt
            it = ia
            ia = ib
            ib = it
        rank_ = 0
        dense[ia[0]] = 0
        for i in range(1, n):
            if ka[i] != ka[i - 1]:
                rank_ += 1
            dense[ia[i]] = rank_
    return rank_ + 1


def merge_group_keys(const int64_t[::1] gt_key, const int64_t[::1] pred_key):
    """Union of two sorted key arrays with each key's run in both.

    Returns ``(keys, gt_start, gt_end, pred_start, pred_end)``: the distinct keys of both,
    ascending, and for each the rows ``gt_start:gt_end`` of ``gt_key`` (``pred_*`` of
    ``pred_key``) holding it; an absent key has an empty run at its insertion point. One
    linear merge (two passes: count, then fill). The runs tile both arrays (a run ends where
    the next begins), so ``gt_start`` and ``gt_end`` are views of one (n + 1,) array of
    bounds, ``[:-1]`` and ``[1:]`` (likewise ``pred_*``): one array instead of two.
    """
    cdef Py_ssize_t na = gt_key.shape[0], nb = pred_key.shape[0]
    cdef Py_ssize_t i, j, n = 0, q
    cdef int64_t k
    cdef int fill
    keys_np = gb_np = pb_np = None
    cdef int64_t[::1] keys, gb, pb
    for fill in range(2):
        if fill:
            keys_np = np.empty(n, dtype=np.int64)
            gb_np = np.empty(n + 1, dtype=np.int64)
            pb_np = np.empty(n + 1, dtype=np.int64)
            keys, gb, pb = keys_np, gb_np, pb_np
            gb[0] = 0
            pb[0] = 0
        i = j = q = 0
        with nogil:
            while i < na or j < nb:
                if j >= nb or (i < na and gt_key[i] < pred_key[j]):
                    k = gt_key[i]
                else:
                    k = pred_key[j]
                if fill:
                    keys[q] = k
                while i < na and gt_key[i] == k:
                    i += 1
                while j < nb and pred_key[j] == k:
                    j += 1
                if fill:
                    gb[q + 1] = i
                    pb[q + 1] = j
                q += 1
        n = q
    return keys_np, gb_np[:-1], gb_np[1:], pb_np[:-1], pb_np[1:]
