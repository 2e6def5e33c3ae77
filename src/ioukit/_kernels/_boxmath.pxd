# Scalar box formulas shared by the compiled kernels (private; ``cimport`` only).
#
# Each mirrors ``ioukit.overlap._formulas`` operation for operation in the dtype of its
# arguments (``floating`` is float or double; every constant is typed), so float32 stays
# float32 as in NumPy. The kernels are built with -ffp-contract=off: no FMA changes a rounding.
# ``_min``/``_max`` are a single select, which gcc if-converts in vector loops; they agree
# with NumPy's minimum/maximum on every input a kernel receives (boxes are validated first,
# so no NaN; a signed zero may differ, which no comparison or IoU value can see).

from cython cimport floating


cdef inline floating _min(floating a, floating b) noexcept nogil:
    return a if a < b else b


cdef inline floating _max(floating a, floating b) noexcept nogil:
    return a if a > b else b


cdef inline floating _safe_divide(floating numerator, floating denominator) noexcept nogil:
    cdef floating one = 1
    return numerator / (denominator if denominator > 0 else one)


cdef inline floating _intersection(
    floating ax1, floating ay1, floating ax2, floating ay2,
    floating bx1, floating by1, floating bx2, floating by2,
) noexcept nogil:
    cdef floating zero = 0
    cdef floating width = _min(ax2, bx2) - _max(ax1, bx1)
    cdef floating height = _min(ay2, by2) - _max(ay1, by1)
    return _max(width, zero) * _max(height, zero)


cdef inline floating _iou(
    floating ax1, floating ay1, floating ax2, floating ay2,
    floating bx1, floating by1, floating bx2, floating by2,
) noexcept nogil:
    cdef floating inter = _intersection(ax1, ay1, ax2, ay2, bx1, by1, bx2, by2)
    cdef floating union_ = (ax2 - ax1) * (ay2 - ay1) + (bx2 - bx1) * (by2 - by1) - inter
    return _safe_divide(inter, union_)
