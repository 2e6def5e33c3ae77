# ioukit: openmp
"""Fused compiled kernels for the pairwise IoU family on NumPy arrays (private).

One pass writes the (N, M) result with no (N, M) temporaries. Each scalar formula mirrors
``ioukit.overlap._formulas`` operation for operation, in the same dtype (``floating`` is
float32 or float64; every constant is typed, so float32 inputs are computed in float32 as
NumPy does), so the results are bit-identical to the generic path (tests check this).
Built with ``-ffp-contract=off``: no fused multiply-add changes a rounding.

The IoU row loop (the ``box_iou`` hot path) is vectorised, in an AVX2 clone chosen at run time
on x86 CPUs that have it (see :func:`simd`; same bits as the baseline loop, tested).

Rows are shared between OpenMP threads from :data:`PARALLEL_MIN_ELEMENTS` output elements on,
with a dynamic schedule so that a core held by another process slows only its own chunks.

The plain-Python oracle for these kernels is the generic path itself.
"""

import numpy as np

cimport cython
from cython cimport floating
from cython.parallel cimport prange

from ._boxmath cimport _intersection, _iou, _max, _min, _safe_divide

IOU, DICE, GIOU, DIOU, CIOU = 0, 1, 2, 3, 4
METRIC_CODES = {"iou": IOU, "dice": DICE, "giou": GIOU, "diou": DIOU, "ciou": CIOU}

PARALLEL_MIN_ELEMENTS = 250_000
"""Outputs at least this large are filled by several threads."""

cdef double _FOUR_OVER_PI_SQUARED = 4 / np.pi**2

# 1, assigned when the module loads so the C compiler cannot see its value: with a literal 1
# gcc rewrites ``inter / (union if union > 0 else 1)`` as ``inter / union if union > 0 else
# inter``, a conditional division that it may not if-convert (division traps), and the IoU
# loop is not vectorised. The value, and every result, is the same.
cdef double _OPAQUE_ONE = 1


cdef inline floating _dice(
    floating ax1, floating ay1, floating ax2, floating ay2,
    floating bx1, floating by1, floating bx2, floating by2,
) noexcept nogil:
    cdef floating two = 2
    cdef floating inter = _intersection(ax1, ay1, ax2, ay2, bx1, by1, bx2, by2)
    cdef floating total = (ax2 - ax1) * (ay2 - ay1) + (bx2 - bx1) * (by2 - by1)
    return _safe_divide(two * inter, total)


cdef inline floating _giou(
    floating ax1, floating ay1, floating ax2, floating ay2,
    floating bx1, floating by1, floating bx2, floating by2,
) noexcept nogil:
    cdef floating inter = _intersection(ax1, ay1, ax2, ay2, bx1, by1, bx2, by2)
    cdef floating union_ = (ax2 - ax1) * (ay2 - ay1) + (bx2 - bx1) * (by2 - by1) - inter
    cdef floating enclosing = (_max(ax2, bx2) - _min(ax1, bx1)) * (_max(ay2, by2) - _min(ay1, by1))
    return _safe_divide(inter, union_) - _safe_divide(enclosing - union_, enclosing)


cdef inline floating _distance_penalty(
    floating ax1, floating ay1, floating ax2, floating ay2,
    floating bx1, floating by1, floating bx2, floating by2, floating eps,
) noexcept nogil:
    cdef floating two = 2
    cdef floating width = _max(ax2, bx2) - _min(ax1, bx1)
    cdef floating height = _max(ay2, by2) - _min(ay1, by1)
    cdef floating diagonal_squared = width * width + height * height + eps
    cdef floating dx = (ax1 + ax2) / two - (bx1 + bx2) / two
    cdef floating dy = (ay1 + ay2) / two - (by1 + by2) / two
    return _safe_divide(dx * dx + dy * dy, diagonal_squared)


cdef inline floating _ciou(
    floating ax1, floating ay1, floating ax2, floating ay2,
    floating bx1, floating by1, floating bx2, floating by2,
    floating angle_a, floating angle_b, floating eps, floating four_over_pi_squared,
) noexcept nogil:
    cdef floating one = 1
    cdef floating overlap = _iou(ax1, ay1, ax2, ay2, bx1, by1, bx2, by2)
    cdef floating penalty = _distance_penalty(ax1, ay1, ax2, ay2, bx1, by1, bx2, by2, eps)
    cdef floating difference = angle_a - angle_b
    cdef floating v = four_over_pi_squared * (difference * difference)
    cdef floating alpha = _safe_divide(v, one - overlap + v + eps)
    return overlap - penalty - alpha * v


cdef extern from *:
    """
    /* The IoU row loop in C, twice: for the baseline of the build (SSE2 on x86-64) and, on x86
       with gcc or clang, for AVX2, chosen at run time. Both are the operations of _boxmath._iou
       in its order (a's area hoisted); vector instructions round every operation exactly as
       scalar ones and -ffp-contract=off forbids FMA, so both give the same bits. */
    #if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    #define IOUKIT_HAVE_AVX2_CLONE 1
    #else
    #define IOUKIT_HAVE_AVX2_CLONE 0
    #endif
    #define IOUKIT_IOU_ROW(NAME, T, ATTR)                                                    \
    static ATTR void NAME(T ax1, T ay1, T ax2, T ay2, const T *x1, const T *y1,            \
                          const T *x2, const T *y2, Py_ssize_t m, T *row, T one) {          \
        T zero = 0;                                                                          \
        T area_a = (ax2 - ax1) * (ay2 - ay1);                                                \
        for (Py_ssize_t j = 0; j < m; j++) {                                                 \
            T width = (ax2 < x2[j] ? ax2 : x2[j]) - (ax1 > x1[j] ? ax1 : x1[j]);             \
            T height = (ay2 < y2[j] ? ay2 : y2[j]) - (ay1 > y1[j] ? ay1 : y1[j]);            \
            T inter = (width > zero ? width : zero) * (height > zero ? height : zero);       \
            T union_ = area_a + (x2[j] - x1[j]) * (y2[j] - y1[j]) - inter;                   \
            row[j] = inter / (union_ > zero ? union_ : one);                                 \
        }                                                                                    \
    }
    IOUKIT_IOU_ROW(ioukit_iou_row_float, float, )
    IOUKIT_IOU_ROW(ioukit_iou_row_double, double, )
    #if IOUKIT_HAVE_AVX2_CLONE
    IOUKIT_IOU_ROW(ioukit_iou_row_float_avx2, float, __attribute__((target("avx2"))))
    IOUKIT_IOU_ROW(ioukit_iou_row_double_avx2, double, __attribute__((target("avx2"))))
    static int ioukit_cpu_has_avx2(void) {
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") != 0;
    }
    #else
    #define ioukit_iou_row_float_avx2 ioukit_iou_row_float
    #define ioukit_iou_row_double_avx2 ioukit_iou_row_double
    static int ioukit_cpu_has_avx2(void) { return 0; }
    #endif
    """
    void ioukit_iou_row_float(float, float, float, float, const float*, const float*,
                              const float*, const float*, Py_ssize_t, float*, float) noexcept nogil
    void ioukit_iou_row_double(double, double, double, double, const double*, const double*,
                               const double*, const double*, Py_ssize_t, double*,
                               double) noexcept nogil
    void ioukit_iou_row_float_avx2(float, float, float, float, const float*, const float*,
                                   const float*, const float*, Py_ssize_t, float*,
                                   float) noexcept nogil
    void ioukit_iou_row_double_avx2(double, double, double, double, const double*,
                                    const double*, const double*, const double*, Py_ssize_t,
                                    double*, double) noexcept nogil
    int ioukit_cpu_has_avx2() noexcept nogil


cdef bint _use_avx2 = ioukit_cpu_has_avx2()


def simd(avx2=None):
    """The instruction set of the IoU row loop: ``"avx2"`` or ``"baseline"`` (the build's).

    ``avx2=False`` forces the baseline loop and ``avx2=True`` the AVX2 one where the CPU has
    it (tests compare both); the default only reports.
    """
    global _use_avx2
    if avx2 is not None:
        _use_avx2 = bool(avx2) and ioukit_cpu_has_avx2()
    return "avx2" if _use_avx2 else "baseline"


cdef inline void _iou_row(
    floating ax1, floating ay1, floating ax2, floating ay2,
    const floating* x1, const floating* y1, const floating* x2, const floating* y2,
    Py_ssize_t m, floating* row, floating one,
) noexcept nogil:
    # ``one`` is 1 (see _OPAQUE_ONE)
    if floating is float:
        if _use_avx2:
            ioukit_iou_row_float_avx2(ax1, ay1, ax2, ay2, x1, y1, x2, y2, m, row, one)
        else:
            ioukit_iou_row_float(ax1, ay1, ax2, ay2, x1, y1, x2, y2, m, row, one)
    else:
        if _use_avx2:
            ioukit_iou_row_double_avx2(ax1, ay1, ax2, ay2, x1, y1, x2, y2, m, row, one)
        else:
            ioukit_iou_row_double(ax1, ay1, ax2, ay2, x1, y1, x2, y2, m, row, one)


cdef void _fill_row(
    Py_ssize_t i,
    const floating[:, ::1] boxes1,
    const floating[::1] x1, const floating[::1] y1,
    const floating[::1] x2, const floating[::1] y2,
    const floating[::1] angle1, const floating[::1] angle2,
    floating eps, floating four_over_pi_squared, int metric,
    floating[:, ::1] out,
) noexcept nogil:
    # one loop per metric, so the branch sits outside the inner loop
    cdef floating ax1 = boxes1[i, 0]
    cdef floating ay1 = boxes1[i, 1]
    cdef floating ax2 = boxes1[i, 2]
    cdef floating ay2 = boxes1[i, 3]
    cdef floating angle_a
    cdef Py_ssize_t j, m = out.shape[1]
    if m == 0:
        return
    cdef floating* row = &out[i, 0]
    cdef const floating* px1 = &x1[0]
    cdef const floating* py1 = &y1[0]
    cdef const floating* px2 = &x2[0]
    cdef const floating* py2 = &y2[0]
    if metric == 0:
        _iou_row(ax1, ay1, ax2, ay2, px1, py1, px2, py2, m, row, <floating>_OPAQUE_ONE)
    elif metric == 1:
        for j in range(m):
            row[j] = _dice(ax1, ay1, ax2, ay2, px1[j], py1[j], px2[j], py2[j])
    elif metric == 2:
        for j in range(m):
            row[j] = _giou(ax1, ay1, ax2, ay2, px1[j], py1[j], px2[j], py2[j])
    elif metric == 3:
        for j in range(m):
            row[j] = _iou(ax1, ay1, ax2, ay2, px1[j], py1[j], px2[j], py2[j]) - _distance_penalty(
                ax1, ay1, ax2, ay2, px1[j], py1[j], px2[j], py2[j], eps
            )
    else:
        angle_a = angle1[i]
        for j in range(m):
            row[j] = _ciou(
                ax1, ay1, ax2, ay2, px1[j], py1[j], px2[j], py2[j], angle_a, angle2[j], eps,
                four_over_pi_squared,
            )


cdef void _pairwise(
    const floating[:, ::1] boxes1,
    const floating[::1] x1, const floating[::1] y1,
    const floating[::1] x2, const floating[::1] y2,
    const floating[::1] angle1, const floating[::1] angle2,
    floating eps, floating four_over_pi_squared, int metric,
    floating[:, ::1] out, bint parallel,
) noexcept nogil:
    cdef Py_ssize_t i, n = boxes1.shape[0]
    if parallel:
        for i in prange(n, schedule="dynamic", chunksize=16):
            _fill_row(i, boxes1, x1, y1, x2, y2, angle1, angle2, eps, four_over_pi_squared,
                      metric, out)
    else:
        for i in range(n):
            _fill_row(i, boxes1, x1, y1, x2, y2, angle1, angle2, eps, four_over_pi_squared,
                      metric, out)


def pairwise(metric, boxes1, boxes2, angle1, angle2, eps, out=None, *, threads=None):
    """Fill the (N, M) matrix of ``metric`` for xyxy float boxes (N, 4) and (M, 4).

    ``angle1``/``angle2`` are the per-box aspect angles (used by CIoU only, any length
    otherwise). ``boxes1`` and ``boxes2`` share one float dtype (float32 or float64), which
    the result takes. ``threads`` forces (True) or forbids (False) OpenMP threads; by default
    they are used from :data:`PARALLEL_MIN_ELEMENTS` output elements on.
    """
    dtype = boxes1.dtype
    boxes1 = np.ascontiguousarray(boxes1)
    boxes2 = np.asarray(boxes2, dtype=dtype)
    x1, y1, x2, y2 = (np.ascontiguousarray(boxes2[:, k]) for k in range(4))
    if out is None:
        out = np.empty((boxes1.shape[0], boxes2.shape[0]), dtype=dtype)
    a1 = np.ascontiguousarray(angle1, dtype=dtype)
    a2 = np.ascontiguousarray(angle2, dtype=dtype)
    if a1.shape[0] < boxes1.shape[0] or a2.shape[0] < boxes2.shape[0]:
        a1 = np.zeros(boxes1.shape[0], dtype=dtype)
        a2 = np.zeros(boxes2.shape[0], dtype=dtype)
    code = METRIC_CODES[metric]
    parallel = out.size >= PARALLEL_MIN_ELEMENTS if threads is None else bool(threads)
    if dtype == np.float64:
        _pairwise_double(boxes1, x1, y1, x2, y2, a1, a2, float(eps), code, out, parallel)
    elif dtype == np.float32:
        _pairwise_float(boxes1, x1, y1, x2, y2, a1, a2, float(eps), code, out, parallel)
    else:
        raise TypeError(f"boxes1: expected float32 or float64, got {dtype}")
    return out


cdef _pairwise_double(
    const double[:, ::1] boxes1, const double[::1] x1, const double[::1] y1,
    const double[::1] x2, const double[::1] y2, const double[::1] a1, const double[::1] a2,
    double eps, int code, double[:, ::1] out, bint parallel,
):
    cdef double k = _FOUR_OVER_PI_SQUARED
    with nogil:
        _pairwise(boxes1, x1, y1, x2, y2, a1, a2, eps, k, code, out, parallel)


cdef _pairwise_float(
    const float[:, ::1] boxes1, const float[::1] x1, const float[::1] y1,
    const float[::1] x2, const float[::1] y2, const float[::1] a1, const float[::1] a2,
    double eps, int code, float[:, ::1] out, bint parallel,
):
    # constants rounded to float32 once, as NumPy does with typed constants
    cdef float eps32 = <float>eps
    cdef float k = <float>_FOUR_OVER_PI_SQUARED
    with nogil:
        _pairwise(boxes1, x1, y1, x2, y2, a1, a2, eps32, k, code, out, parallel)
