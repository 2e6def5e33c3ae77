"""Compiled kernels for greedy and soft non-maximum suppression (private).

NumPy in, NumPy out: the caller sorts (stable) the scores; the kernels lay out and loop.
The IoU of two boxes is the scalar formula behind ``ioukit.box_iou`` (continuous
coordinates, 0 when the union is 0; ``_boxmath._iou``), so a pair is suppressed exactly when
``box_iou`` of that pair is greater than the threshold.

Greedy NMS is sub-quadratic: boxes are laid out sorted by ``(segment, x1)`` (a segment is one
class for ``batched_nms``), and a kept box visits only the positions whose boxes can intersect
it along x: from the first position whose running maximum of ``x2`` exceeds its ``x1`` to the
last position whose ``x1`` is below its ``x2``. Every box outside that window has a computed
intersection width ``<= 0`` (the bounds are found by comparisons only, no arithmetic), hence an
IoU of exactly 0, which no threshold ``>= 0`` exceeds; so the result is identical to the
quadratic loop. A negative threshold visits the whole segment.

The plain-Python twins (the textbook quadratic loops, written independently of the layout
tricks above) are the test oracles, in ``tests/twins.py``.
"""

import numpy as np

cimport numpy as cnp
from cython cimport floating
from libc.math cimport exp, expf
from libc.stdlib cimport free, malloc

from ._boxmath cimport _iou

cnp.import_array()

LINEAR, GAUSSIAN = 1, 2
SOFT_METHODS = {"linear": LINEAR, "gaussian": GAUSSIAN}

# 1, unknown to the C compiler (see iou_matrix._OPAQUE_ONE): keeps the division in
# _suppress_window unconditional so the loop is vectorised
cdef double _OPAQUE_ONE = 1



cdef extern from *:
    """
    /* The suppression window of greedy NMS in C: done[q] |= IoU(a, q) > threshold for q in
       [lo, hi), the operations of _boxmath._iou in its order (a's area hoisted), no branch, so
       it is vectorised; once for the build's baseline and, on x86 with gcc or clang, as an
       AVX2 clone chosen at run time (IEEE operations round the same in every vector width and
       -ffp-contract=off forbids FMA: same bits). A box already done stays done. */
    #if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    #define IOUKIT_NMS_AVX2 1
    #else
    #define IOUKIT_NMS_AVX2 0
    #endif
    #define IOUKIT_SUPPRESS(NAME, T, ATTR)                                                   \
    static ATTR void NAME(const T *x1, const T *y1, const T *x2, const T *y2,              \
                          unsigned char *done, Py_ssize_t lo, Py_ssize_t hi, T ax1, T ay1,  \
                          T ax2, T ay2, T threshold, T one) {                               \
        T zero = 0;                                                                          \
        T area_a = (ax2 - ax1) * (ay2 - ay1);                                                \
        for (Py_ssize_t q = lo; q < hi; q++) {                                               \
            T width = (ax2 < x2[q] ? ax2 : x2[q]) - (ax1 > x1[q] ? ax1 : x1[q]);             \
            T height = (ay2 < y2[q] ? ay2 : y2[q]) - (ay1 > y1[q] ? ay1 : y1[q]);            \
            T inter = (width > zero ? width : zero) * (height > zero ? height : zero);       \
            T union_ = area_a + (x2[q] - x1[q]) * (y2[q] - y1[q]) - inter;                   \
            done[q] |= (unsigned char)((inter / (union_ > zero ? union_ : one)) > threshold); \
        }                                                                                    \
    }
    IOUKIT_SUPPRESS(ioukit_suppress_float, float, )
    IOUKIT_SUPPRESS(ioukit_suppress_double, double, )
    #if IOUKIT_NMS_AVX2
    IOUKIT_SUPPRESS(ioukit_suppress_float_avx2, float, __attribute__((target("avx2"))))
    IOUKIT_SUPPRESS(ioukit_suppress_double_avx2, double, __attribute__((target("avx2"))))
    static int ioukit_nms_cpu_has_avx2(void) {
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") != 0;
    }
    #else
    #define ioukit_suppress_float_avx2 ioukit_suppress_float
    #define ioukit_suppress_double_avx2 ioukit_suppress_double
    static int ioukit_nms_cpu_has_avx2(void) { return 0; }
    #endif
    """
    void ioukit_suppress_float(const float*, const float*, const float*, const float*,
                               unsigned char*, Py_ssize_t, Py_ssize_t, float, float, float,
                               float, float, float) noexcept nogil
    void ioukit_suppress_double(const double*, const double*, const double*, const double*,
                                unsigned char*, Py_ssize_t, Py_ssize_t, double, double, double,
                                double, double, double) noexcept nogil
    void ioukit_suppress_float_avx2(const float*, const float*, const float*, const float*,
                                    unsigned char*, Py_ssize_t, Py_ssize_t, float, float, float,
                                    float, float, float) noexcept nogil
    void ioukit_suppress_double_avx2(const double*, const double*, const double*,
                                     const double*, unsigned char*, Py_ssize_t, Py_ssize_t,
                                     double, double, double, double, double,
                                     double) noexcept nogil
    int ioukit_nms_cpu_has_avx2() noexcept nogil


cdef bint _nms_avx2 = ioukit_nms_cpu_has_avx2()


def simd(avx2=None):
    """The instruction set of the suppression loop: ``"avx2"`` or ``"baseline"``;
    ``avx2=False``/``True`` forces one (tests compare both)."""
    global _nms_avx2
    if avx2 is not None:
        _nms_avx2 = bool(avx2) and ioukit_nms_cpu_has_avx2()
    return "avx2" if _nms_avx2 else "baseline"


cdef inline void _suppress_window(
    const floating* x1, const floating* y1, const floating* x2, const floating* y2,
    unsigned char* done, Py_ssize_t lo, Py_ssize_t hi, floating ax1, floating ay1,
    floating ax2, floating ay2, floating threshold, floating one,
) noexcept nogil:
    # done[q] |= IoU(a, q) > threshold for q in [lo, hi) (see the C code above)
    if floating is float:
        if _nms_avx2:
            ioukit_suppress_float_avx2(x1, y1, x2, y2, done, lo, hi, ax1, ay1, ax2, ay2,
                                       threshold, one)
        else:
            ioukit_suppress_float(x1, y1, x2, y2, done, lo, hi, ax1, ay1, ax2, ay2, threshold,
                                  one)
    else:
        if _nms_avx2:
            ioukit_suppress_double_avx2(x1, y1, x2, y2, done, lo, hi, ax1, ay1, ax2, ay2,
                                        threshold, one)
        else:
            ioukit_suppress_double(x1, y1, x2, y2, done, lo, hi, ax1, ay1, ax2, ay2, threshold,
                                   one)


cdef inline Py_ssize_t _first_above(
    const floating* values, Py_ssize_t lo, Py_ssize_t hi, floating target, bint or_equal
) noexcept nogil:
    # first index in [lo, hi) with values[index] > target (>= when or_equal); values
    # non-decreasing on [lo, hi)
    cdef Py_ssize_t mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if values[mid] > target or (or_equal and values[mid] == target):
            hi = mid
        else:
            lo = mid + 1
    return lo


cdef Py_ssize_t _greedy(
    const floating* x1, const floating* y1, const floating* x2, const floating* y2,
    const Py_ssize_t* pos_of_rank, const Py_ssize_t* seg_lo, const Py_ssize_t* seg_hi,
    floating* reach, unsigned char* done, floating threshold, Py_ssize_t n,
    Py_ssize_t limit, Py_ssize_t* keep,
) noexcept nogil:
    """Greedy NMS over boxes laid out by position; returns how many ranks were written to keep.

    x1, y1, x2, y2 : (n,) box columns in position order (sorted by segment, then x1).
    pos_of_rank : (n,) position of the box of each score rank (rank 0 = highest score).
    seg_lo, seg_hi : (n,) bounds [lo, hi) of the segment of each position, or NULL for one
    segment [0, n). reach : (n,) scratch, filled with the running maximum of x2 within each
    segment. done : (n,) scratch of zeros: 1 once a position is kept or suppressed.
    threshold : suppress when IoU > threshold. limit : stop after this many kept boxes.
    keep : (n,) output, ranks of kept boxes.
    """
    cdef Py_ssize_t p, q, r, lo, hi, count = 0
    cdef floating ax1, ay1, ax2, ay2
    cdef floating zero = 0
    cdef bint windowed = threshold >= zero
    for p in range(n):
        if (p == 0 if seg_lo == NULL else p == seg_lo[p]) or x2[p] > reach[p - 1]:
            reach[p] = x2[p]
        else:
            reach[p] = reach[p - 1]
    for r in range(n):
        if count >= limit:
            break
        p = pos_of_rank[r]
        if done[p]:
            continue
        done[p] = 1
        keep[count] = r
        count += 1
        ax1 = x1[p]
        ay1 = y1[p]
        ax2 = x2[p]
        ay2 = y2[p]
        if seg_lo == NULL:
            lo = 0
            hi = n
        else:
            lo = seg_lo[p]
            hi = seg_hi[p]
        if windowed:
            lo = _first_above(reach, lo, hi, ax1, False)
            hi = _first_above(x1, lo, hi, ax2, True)
        _suppress_window(x1, y1, x2, y2, done, lo, hi, ax1, ay1, ax2, ay2, threshold,
                         <floating>_OPAQUE_ONE)
    return count


ctypedef struct _Key:
    double value
    Py_ssize_t index


cdef void _sort_keys(_Key* keys, _Key* scratch, Py_ssize_t n) noexcept nogil:
    # stable bottom-up merge sort by value (keys arrive in index order; no NaN reaches here)
    cdef Py_ssize_t width = 1, lo, mid, hi, i, j, k
    cdef _Key* source = keys
    cdef _Key* target = scratch
    cdef _Key* swap
    while width < n:
        lo = 0
        while lo < n:
            mid = lo + width if lo + width < n else n
            hi = lo + 2 * width if lo + 2 * width < n else n
            i = lo
            j = mid
            k = lo
            while i < mid and j < hi:
                if source[j].value < source[i].value:  # ties: the left (earlier) key first
                    target[k] = source[j]
                    j += 1
                else:
                    target[k] = source[i]
                    i += 1
                k += 1
            while i < mid:
                target[k] = source[i]
                i += 1
                k += 1
            while j < hi:
                target[k] = source[j]
                j += 1
                k += 1
            lo = hi
        swap = source
        source = target
        target = swap
        width *= 2
    if source != keys:
        for i in range(n):
            keys[i] = source[i]


cdef Py_ssize_t _greedy_one_segment(
    const floating[:, :] boxes, const Py_ssize_t[::1] order, floating threshold,
    Py_ssize_t limit, Py_ssize_t[::1] kept,
) noexcept nogil:
    """:func:`_greedy` for a single segment with the whole set-up in C (small inputs are
    dominated by per-call overhead). Writes the kept input indices in score order to ``kept``
    and returns their number; -1 when out of memory."""
    cdef Py_ssize_t n = boxes.shape[0], p, i, r, count
    cdef _Key* keys = <_Key*>malloc(2 * n * sizeof(_Key))
    cdef floating* columns = <floating*>malloc(5 * n * sizeof(floating))
    cdef Py_ssize_t* index = <Py_ssize_t*>malloc(3 * n * sizeof(Py_ssize_t))
    cdef unsigned char* done = <unsigned char*>malloc(n)
    if keys == NULL or columns == NULL or index == NULL or done == NULL:
        free(keys)
        free(columns)
        free(index)
        free(done)
        return -1
    cdef floating* x1 = columns
    cdef floating* y1 = columns + n
    cdef floating* x2 = columns + 2 * n
    cdef floating* y2 = columns + 3 * n
    cdef floating* reach = columns + 4 * n
    cdef Py_ssize_t* pos_of_input = index
    cdef Py_ssize_t* pos_of_rank = index + n
    cdef Py_ssize_t* keep = index + 2 * n
    for i in range(n):
        keys[i].value = boxes[i, 0]
        keys[i].index = i
        done[i] = 0
    _sort_keys(keys, keys + n, n)
    for p in range(n):
        i = keys[p].index
        x1[p] = boxes[i, 0]
        y1[p] = boxes[i, 1]
        x2[p] = boxes[i, 2]
        y2[p] = boxes[i, 3]
        pos_of_input[i] = p
    for r in range(n):
        pos_of_rank[r] = pos_of_input[order[r]]
    count = _greedy(x1, y1, x2, y2, pos_of_rank, NULL, NULL, reach, done, threshold, n, limit,
                    keep)
    for r in range(count):
        kept[r] = order[keep[r]]
    free(keys)
    free(columns)
    free(index)
    free(done)
    return count


cdef _one_segment(const floating[:, :] boxes, order, floating threshold, Py_ssize_t limit):
    cdef const Py_ssize_t[::1] order_view = order
    kept = np.empty(boxes.shape[0], dtype=np.intp)
    cdef Py_ssize_t[::1] kept_view = kept
    cdef Py_ssize_t count
    with nogil:
        count = _greedy_one_segment(boxes, order_view, threshold, limit, kept_view)
    if count < 0:
        raise MemoryError(f"boxes: no memory for NMS over {boxes.shape[0]} boxes")
    return kept[:count].astype(np.int64, copy=False)


cdef Py_ssize_t _segmented(
    const floating[:, ::1] columns, const Py_ssize_t[::1] pos_of_rank,
    const Py_ssize_t[::1] seg_lo, const Py_ssize_t[::1] seg_hi, floating[::1] reach,
    unsigned char[::1] done, floating threshold, Py_ssize_t limit, Py_ssize_t[::1] keep,
) noexcept nogil:
    cdef Py_ssize_t n = columns.shape[1]
    if n == 0:
        return 0
    return _greedy(&columns[0, 0], &columns[1, 0], &columns[2, 0], &columns[3, 0],
                   &pos_of_rank[0], &seg_lo[0], &seg_hi[0], &reach[0], &done[0], threshold, n,
                   limit, &keep[0])


def _run_segmented(columns, pos_of_rank, seg_lo, seg_hi, threshold, limit):
    n = columns.shape[1]
    reach = np.empty(n, dtype=columns.dtype)
    done = np.zeros(n, dtype=np.uint8)
    keep = np.empty(n, dtype=np.intp)
    if columns.dtype == np.float32:
        count = _segmented[float](columns, pos_of_rank, seg_lo, seg_hi, reach, done,
                                  <float>threshold, limit, keep)
    else:
        count = _segmented[double](columns, pos_of_rank, seg_lo, seg_hi, reach, done,
                                   <double>threshold, limit, keep)
    return keep[:count]


def threshold_below(threshold, dtype):
    """The largest value of ``dtype`` that is ``<= threshold`` (a Python float).

    For every value ``v`` of that dtype, ``v > threshold_below(t)`` is ``v > t`` compared
    exactly (as torchvision's C++ does: a float32 IoU against a double threshold). Rounding
    the threshold to nearest instead would keep a float32 IoU equal to ``float32(t) > t``.
    """
    dtype = np.dtype(dtype)
    with np.errstate(over="ignore"):
        value = dtype.type(threshold)
    if float(value) > threshold:
        value = np.nextafter(value, dtype.type(-np.inf))
    return value


def greedy_nms(boxes, order, segments, threshold, limit):
    """Kept input indices (int64), in processing order.

    boxes : (n, 4) float32 or float64 xyxy (any strides, any byte order).
    order : (n,) input indices in processing (score) order.
    segments : (n,) non-negative int segment (class) of each box, or None for one segment.
    threshold : suppress when IoU > threshold, compared exactly (a float32 IoU against the
        double threshold, see :func:`threshold_below`).
    limit : stop after this many kept boxes.
    """
    boxes = _native_float(boxes)
    threshold = threshold_below(threshold, boxes.dtype)
    n = boxes.shape[0]
    if n == 0:
        return np.empty(0, dtype=np.int64)
    order = np.ascontiguousarray(order, dtype=np.intp)
    limit = max(min(int(limit), n), 0)
    if segments is None:
        if boxes.dtype == np.float32:
            return _one_segment[float](boxes, order, <float>threshold, limit)
        return _one_segment[double](boxes, order, <double>threshold, limit)
    layout = np.lexsort((boxes[:, 0], segments))
    seg_sorted = segments[layout]
    starts = np.flatnonzero(np.r_[True, seg_sorted[1:] != seg_sorted[:-1]])
    ends = np.r_[starts[1:], n]
    sizes = ends - starts
    seg_lo = np.repeat(starts, sizes).astype(np.intp)
    seg_hi = np.repeat(ends, sizes).astype(np.intp)
    columns = np.ascontiguousarray(boxes[layout].T)  # (4, n): one gather, one copy
    pos_of_input = np.empty(n, dtype=np.intp)
    pos_of_input[layout] = np.arange(n, dtype=np.intp)
    pos_of_rank = pos_of_input[order]
    keep = _run_segmented(columns, pos_of_rank, seg_lo, seg_hi, threshold, limit)
    return np.asarray(order[keep], dtype=np.int64)


def _native_float(array):
    # float32/float64 in native byte order (a copy only when needed); other dtypes refused
    array = np.asarray(array)
    if array.dtype.kind != "f" or array.dtype.itemsize not in (4, 8):
        raise TypeError(f"boxes: expected float32 or float64, got {array.dtype}")
    if not array.dtype.isnative:
        array = array.astype(array.dtype.newbyteorder("="))
    return array


cdef Py_ssize_t _soft(
    const floating[::1] x1, const floating[::1] y1, const floating[::1] x2,
    const floating[::1] y2, floating[::1] scores, int method, floating sigma,
    floating iou_threshold, floating score_threshold, bint early_stop,
    unsigned char[::1] done, Py_ssize_t[::1] order, floating[::1] decayed,
) noexcept nogil:
    """Soft-NMS (ensemble-boxes' semantics); returns the number of selection steps written.

    x1, y1, x2, y2, scores : (n,) in input order; ``scores`` is a scratch copy, decayed in place.
    method : LINEAR or GAUSSIAN. done : (n,) scratch of zeros.
    order, decayed : (n,) outputs: input index and score of each selected box, in selection
    order (the highest current score first, the lowest input index on ties).
    early_stop : stop once the best remaining score is <= score_threshold (exact when the
    threshold is >= 0, because decay never raises a score above a non-negative threshold).
    """
    cdef Py_ssize_t n = x1.shape[0], steps = 0, step, j, best
    cdef floating one = 1
    cdef floating best_score, overlap, ax1, ay1, ax2, ay2
    for step in range(n):
        best = -1
        best_score = scores[0]
        for j in range(n):
            if done[j] == 0 and (best < 0 or scores[j] > best_score):
                best = j
                best_score = scores[j]
        if best < 0 or (early_stop and best_score <= score_threshold):
            break
        done[best] = 1
        order[steps] = best
        decayed[steps] = best_score
        steps += 1
        ax1 = x1[best]
        ay1 = y1[best]
        ax2 = x2[best]
        ay2 = y2[best]
        for j in range(n):
            if done[j]:
                continue
            overlap = _iou(ax1, ay1, ax2, ay2, x1[j], y1[j], x2[j], y2[j])
            if method == 1:
                if overlap > iou_threshold:
                    scores[j] = (one - overlap) * scores[j]
            else:
                # exp in the dtype of the scores (expf for float32, as numba and C do)
                if floating is float:
                    scores[j] = expf(-(overlap * overlap) / sigma) * scores[j]
                else:
                    scores[j] = exp(-(overlap * overlap) / sigma) * scores[j]
    return steps


def soft_nms(boxes, scores, method, sigma, iou_threshold, score_threshold):
    """Selected input indices and their decayed scores, before the final score filter.

    boxes : (n, 4) float xyxy. scores : (n,) float of the same dtype (not modified).
    Returns only the steps with a decayed score > score_threshold. The linear method decays
    when IoU > iou_threshold compared exactly (see :func:`threshold_below`); the scores are
    compared with ``score_threshold`` rounded to their dtype, as NumPy and PyTorch compare an
    array with a Python float.
    """
    boxes = _native_float(boxes)
    n = boxes.shape[0]
    dtype = boxes.dtype
    iou_threshold = threshold_below(iou_threshold, dtype)
    columns = [np.ascontiguousarray(boxes[:, k]) for k in range(4)]
    work = np.array(scores, dtype=dtype, copy=True)
    done = np.zeros(n, dtype=np.uint8)
    order = np.empty(n, dtype=np.intp)
    decayed = np.empty(n, dtype=dtype)
    if n == 0:
        return order.astype(np.int64), decayed
    code = SOFT_METHODS[method]
    early = score_threshold >= 0
    if dtype == np.float32:
        steps = _soft[float](*columns, work, code, <float>sigma, <float>iou_threshold,
                             <float>score_threshold, early, done, order, decayed)
    else:
        steps = _soft[double](*columns, work, code, <double>sigma, <double>iou_threshold,
                              <double>score_threshold, early, done, order, decayed)
    selected = decayed[:steps] > dtype.type(score_threshold)
    return order[:steps][selected].astype(np.int64), decayed[:steps][selected]
