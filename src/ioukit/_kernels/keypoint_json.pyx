"""One-pass scanner for COCO keypoint result files: bytes in, columns out (private).

Handles the common shape of a keypoint results file: a JSON array of flat objects with
``image_id``, ``category_id`` (integers), ``score`` (a number), ``keypoints`` (exactly ``3 K``
numbers) and optionally ``bbox`` (4 numbers, or empty); other keys are skipped whatever their
value, validated as strictly as the rest (the record scanner ``_json_records.pxd`` over the
lexer ``_json_lex.pxd``, RFC 8259, shared with ``coco_json``). Returns ``INVALID`` only for
a file that is not JSON (the strict parser refuses it too); anything else it does not take
(a missing key, another K, escapes in a key, a BOM...) returns another non-zero code, and
the caller parses the file with the general JSON parser, which decides and gives the
precise error message.

Numbers are converted exactly as Python's ``float`` does (see ``_json_lex.pxd``).

Each record's box as pycocotools' ``loadRes`` makes it from the keypoints' extent when the
results have no ``bbox`` (``[x0, y0, x1 - x0, y1 - y0]`` and area ``(x1 - x0) * (y1 - y0)``,
x0 the smallest x over the K keypoints...) is taken on the way, from the values just
written. Its twin is ``coco_keypoints._result_boxes`` (NumPy): the same IEEE operations
(no FMA: ``-ffp-contract=off``), and the same smallest and largest values, except that
between ``-0.0`` and ``+0.0`` the one kept depends on the order of the comparisons: the
scanner marks each record with an x or y ``-0.0`` (the caller lets NumPy decide there).

The plain-Python twin is the general parser (``orjson``/``json``): the tests compare both.
"""

from libc.math cimport signbit
from libc.stdint cimport int64_t, uint8_t

from ioukit._kernels._json_lex cimport (
    LEX_UNSUPPORTED, LexNumber, init_lexer, skip_value, skip_ws, value_or_unsupported,
)
from ioukit._kernels._json_records cimport (
    SCAN_INVALID, SCAN_MISSING_KEY, SCAN_OK, SCAN_TOO_MANY, SCAN_UNSUPPORTED, SCAN_WRONG_LENGTH,
    VALUE_WRONG_LENGTH, Columns, RecordKey, number_at, scan_records,
)

init_lexer()

OK, INVALID, MISSING_KEY, TOO_MANY, WRONG_LENGTH, UNSUPPORTED = (
    SCAN_OK, SCAN_INVALID, SCAN_MISSING_KEY, SCAN_TOO_MANY, SCAN_WRONG_LENGTH, SCAN_UNSUPPORTED
)

# the keys of a record (scan_records: image_id, category_id, score first)
cdef extern from *:
    """
    static const ioukit_record_key ioukit_keypoint_keys[] = {
        IOUKIT_RECORD_KEY("image_id"), IOUKIT_RECORD_KEY("category_id"),
        IOUKIT_RECORD_KEY("score"), IOUKIT_RECORD_KEY("keypoints"), IOUKIT_RECORD_KEY("bbox")};
    """
    const RecordKey* _KEYS "ioukit_keypoint_keys"

cdef enum:
    _KEYPOINTS = 3
    _BBOX = 4


cdef Py_ssize_t _numbers(const uint8_t[::1] buf, Py_ssize_t i, Py_ssize_t n, double* out,
                         Py_ssize_t expected, Py_ssize_t* count) noexcept:
    """Parse ``[n1, n2, ...]`` at ``i`` into ``out[:expected]``.

    Returns the end; VALUE_WRONG_LENGTH when the list has more than ``expected`` values; for
    anything that is not a flat list of numbers, the code of ``value_or_unsupported``.
    """
    cdef LexNumber number
    cdef Py_ssize_t k = 0, j
    if i >= n or buf[i] != 91:
        return value_or_unsupported(buf, i, n)
    j = skip_ws(buf, i + 1, n)
    if j < n and buf[j] == 93:
        count[0] = 0
        return j + 1
    while True:
        j = number_at(buf, j, n, &number)
        if j < 0:
            return value_or_unsupported(buf, i, n)
        if k >= expected:
            j = skip_value(buf, i, n)  # valid JSON with too many values
            return VALUE_WRONG_LENGTH if j >= 0 else j
        out[k] = number.value
        k += 1
        j = skip_ws(buf, j, n)
        if j < n and buf[j] == 44:
            j = skip_ws(buf, j + 1, n)
            continue
        if j < n and buf[j] == 93:
            count[0] = k
            return j + 1
        return value_or_unsupported(buf, i, n)


cdef bint _extent_box(const double* values, Py_ssize_t num_values, double* box,
                      double* area) noexcept nogil:
    # box = [x0, y0, x1 - x0, y1 - y0], area = (x1 - x0) * (y1 - y0): x0, x1 the smallest and
    # largest x of the triples (x, y, v) in values[:num_values], y0, y1 those of y; whether
    # an x or y is -0.0
    cdef Py_ssize_t t
    cdef double x, y
    cdef double x0 = values[0], y0 = values[1], x1 = values[0], y1 = values[1]
    cdef bint negative_zero = False
    for t in range(0, num_values, 3):
        x = values[t]
        y = values[t + 1]
        if x < x0:
            x0 = x
        if x > x1:
            x1 = x
        if y < y0:
            y0 = y
        if y > y1:
            y1 = y
        if (x == 0.0 and signbit(x)) or (y == 0.0 and signbit(y)):
            negative_zero = True
    box[0] = x0
    box[1] = y0
    box[2] = x1 - x0
    box[3] = y1 - y0
    area[0] = (x1 - x0) * (y1 - y0)
    return negative_zero


ctypedef struct _KeypointColumns:
    Py_ssize_t num_values  # 3 K
    double* keypoints  # (C * 3 K,)
    double* bbox  # (C * 4,)
    uint8_t* bbox_count  # (C,)
    double* extent_boxes  # (C * 4,)
    double* extent_areas  # (C,)
    uint8_t* negative_zero  # (C,)


cdef Py_ssize_t _keypoint_value(Columns* columns, int field, Py_ssize_t record,
                                const uint8_t[::1] buf, Py_ssize_t i, Py_ssize_t n) noexcept:
    # the keypoints (exactly 3 K numbers, and their extent box) or the bbox (4 numbers or none)
    cdef _KeypointColumns* c = <_KeypointColumns*>columns.extra
    cdef Py_ssize_t m = c.num_values, count = 0, end
    if field == _KEYPOINTS:
        end = _numbers(buf, i, n, c.keypoints + record * m, m, &count)
        if end == VALUE_WRONG_LENGTH or (end >= 0 and count != m):
            return VALUE_WRONG_LENGTH
        if end >= 0 and m:
            c.negative_zero[record] = _extent_box(c.keypoints + record * m, m,
                                                  c.extent_boxes + 4 * record,
                                                  c.extent_areas + record)
    else:
        end = _numbers(buf, i, n, c.bbox + 4 * record, 4, &count)
        if end == VALUE_WRONG_LENGTH or (end >= 0 and count != 0 and count != 4):
            return LEX_UNSUPPORTED
        if end >= 0:
            c.bbox_count[record] = <uint8_t>count
    return end


def scan_keypoint_results(
    const uint8_t[::1] buf, Py_ssize_t num_values, int64_t[::1] image_ids,
    int64_t[::1] category_ids, double[::1] scores, double[::1] keypoints, double[::1] bbox,
    uint8_t[::1] bbox_count, double[::1] extent_boxes, double[::1] extent_areas,
    uint8_t[::1] negative_zero,
):
    """Scan a results file; returns ``(code, records)``.

    ``num_values`` is 3 K: every record's ``keypoints`` must have exactly that many. The
    keypoints of record ``r`` land in ``keypoints[r * num_values:]``, its box in
    ``bbox[4 r:]`` with ``bbox_count[r]`` its length (0 when absent or empty), the box of
    its keypoints' extent ``[x0, y0, x1 - x0, y1 - y0]`` in ``extent_boxes[4 r:]`` and its
    area in ``extent_areas[r]`` (when K > 0), ``negative_zero[r]`` 1 when one of its x or y
    is ``-0.0`` (the sign of a zero extent then depends on the order of the comparisons).
    ``code`` is OK, INVALID (not JSON: the strict parser refuses the file too) or another
    reason to let the general parser read the file.
    """
    cdef Py_ssize_t records = 0
    # (with bounds checks off, &view[0] of an empty column is never written: capacity 0, or
    # K = 0 for the keypoints)
    cdef _KeypointColumns extra = _KeypointColumns(
        num_values, &keypoints[0], &bbox[0], &bbox_count[0], &extent_boxes[0],
        &extent_areas[0], &negative_zero[0])
    cdef Columns columns = Columns(&image_ids[0], &category_ids[0], &scores[0],
                                   image_ids.shape[0], &extra)
    bbox_count[:] = 0
    negative_zero[:] = 0
    cdef int code = scan_records(buf, _KEYS, 5, 15, _keypoint_value, &columns, &records)
    return code, records
