"""One-pass scanner for COCO keypoint result files: bytes in, columns out (private).

Handles the common shape of a keypoint results file: a JSON array of flat objects with
``image_id``, ``category_id`` (integers), ``score`` (a number), ``keypoints`` (exactly ``3 K``
numbers) and optionally ``bbox`` (4 numbers, or empty); other keys are skipped whatever their
value, validated as strictly as the rest (the lexer ``_json_lex.pxd``, RFC 8259, shared with
``coco_json``). Returns ``INVALID`` only for a file that is not JSON (the strict parser
refuses it too); anything else it does not take (a missing key, another K, escapes in a key,
a BOM...) returns another non-zero code, and the caller parses the file with the general
JSON parser, which decides and gives the precise error message.

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
    LEX_INVALID, LexNumber, init_lexer, key_equals, lex_number, skip_string, skip_value,
    skip_ws, value_or_unsupported,
)

init_lexer()

cdef enum:
    _OK = 0
    _INVALID = 1
    _MISSING_KEY = 2
    _TOO_MANY = 3
    _WRONG_LENGTH = 4
    _UNSUPPORTED = 5

OK, INVALID, MISSING_KEY, TOO_MANY, WRONG_LENGTH, UNSUPPORTED = (
    _OK, _INVALID, _MISSING_KEY, _TOO_MANY, _WRONG_LENGTH, _UNSUPPORTED
)

cdef enum:
    _IMAGE = 0
    _CATEGORY = 1
    _SCORE = 2
    _KEYPOINTS = 3
    _BBOX = 4
    _OTHER = 5


cdef inline int _code(Py_ssize_t lexed) noexcept nogil:
    return _INVALID if lexed == LEX_INVALID else _UNSUPPORTED


cdef int _field(const uint8_t[::1] buf, Py_ssize_t start, Py_ssize_t end) noexcept nogil:
    if key_equals(buf, start, end, b"image_id", 8):
        return _IMAGE
    if key_equals(buf, start, end, b"category_id", 11):
        return _CATEGORY
    if key_equals(buf, start, end, b"score", 5):
        return _SCORE
    if key_equals(buf, start, end, b"keypoints", 9):
        return _KEYPOINTS
    if key_equals(buf, start, end, b"bbox", 4):
        return _BBOX
    return _OTHER


cdef Py_ssize_t _numbers(
    const uint8_t[::1] buf, Py_ssize_t i, Py_ssize_t n, double[::1] out, Py_ssize_t base,
    Py_ssize_t expected, Py_ssize_t* count,
) noexcept:
    """Parse ``[n1, n2, ...]`` at ``i`` into ``out[base:base + expected]``.

    Returns the end; ``-3`` when the list has more than ``expected`` values; for anything
    that is not a flat list of numbers, the code of ``value_or_unsupported``.
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
        j = lex_number(buf, j, n, &number)
        if j < 0:
            return value_or_unsupported(buf, i, n)
        if k >= expected:
            j = skip_value(buf, i, n)  # valid JSON with too many values: WRONG_LENGTH
            return -3 if j >= 0 else j
        out[base + k] = number.value
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


cdef int _scan(
    const uint8_t[::1] buf,
    Py_ssize_t num_values,
    int64_t[::1] image_ids,
    int64_t[::1] category_ids,
    double[::1] scores,
    double[::1] keypoints,
    double[::1] bbox,
    uint8_t[::1] bbox_count,
    double[::1] extent_boxes,
    double[::1] extent_areas,
    uint8_t[::1] negative_zero,
    Py_ssize_t* records,
) noexcept:
    cdef Py_ssize_t n = buf.shape[0], i, key_start, end, count = 0
    cdef Py_ssize_t record = 0, capacity = image_ids.shape[0]
    cdef int field, seen
    cdef bint escaped
    cdef LexNumber number
    i = skip_ws(buf, 0, n)
    if i >= n or buf[i] != 91:
        return _UNSUPPORTED
    i = skip_ws(buf, i + 1, n)
    if i < n and buf[i] == 93:
        i = skip_ws(buf, i + 1, n)
        return _OK if i == n else _INVALID
    while True:
        records[0] = record
        if i >= n or buf[i] != 123:
            return _code(value_or_unsupported(buf, i, n))
        if record >= capacity:
            return _TOO_MANY
        seen = 0
        bbox_count[record] = 0
        negative_zero[record] = 0
        i = skip_ws(buf, i + 1, n)
        if i < n and buf[i] == 125:
            return _MISSING_KEY
        while True:
            if i >= n or buf[i] != 34:
                return _INVALID
            key_start = i + 1
            end = skip_string(buf, i, n, &escaped)
            if end < 0:
                return _code(end)
            if escaped:
                return _UNSUPPORTED
            field = _field(buf, key_start, end - 1)
            i = skip_ws(buf, end, n)
            if i >= n or buf[i] != 58:  # ':'
                return _INVALID
            i = skip_ws(buf, i + 1, n)
            if field == _IMAGE or field == _CATEGORY or field == _SCORE:
                end = lex_number(buf, i, n, &number)
                if end == LEX_INVALID:  # a string, null...: the general parser names it
                    return _code(value_or_unsupported(buf, i, n))
                if end < 0:
                    return _code(end)
                if field == _SCORE:
                    scores[record] = number.value
                else:
                    if not number.integer or not (-9007199254740992.0 < number.value
                                                  < 9007199254740992.0):
                        return _UNSUPPORTED
                    if field == _IMAGE:
                        image_ids[record] = <int64_t>number.value
                    else:
                        category_ids[record] = <int64_t>number.value
                seen |= 1 << field
            elif field == _KEYPOINTS:
                end = _numbers(buf, i, n, keypoints, record * num_values, num_values, &count)
                if end == -3 or (end >= 0 and count != num_values):
                    return _WRONG_LENGTH
                if end < 0:
                    return _code(end)
                if num_values:
                    negative_zero[record] = _extent_box(
                        &keypoints[record * num_values], num_values, &extent_boxes[4 * record],
                        &extent_areas[record])
                seen |= 1 << field
            elif field == _BBOX:
                end = _numbers(buf, i, n, bbox, 4 * record, 4, &count)
                if end == -3 or (end >= 0 and count != 0 and count != 4):
                    return _UNSUPPORTED
                if end < 0:
                    return _code(end)
                bbox_count[record] = <uint8_t>count
            else:
                end = skip_value(buf, i, n)
                if end < 0:
                    return _code(end)
            i = skip_ws(buf, end, n)
            if i < n and buf[i] == 44:
                i = skip_ws(buf, i + 1, n)
                continue
            if i < n and buf[i] == 125:
                i = skip_ws(buf, i + 1, n)
                break
            return _INVALID
        if seen != (1 << _IMAGE) | (1 << _CATEGORY) | (1 << _SCORE) | (1 << _KEYPOINTS):
            return _MISSING_KEY
        record += 1
        records[0] = record
        if i < n and buf[i] == 44:
            i = skip_ws(buf, i + 1, n)
            continue
        if i < n and buf[i] == 93:
            i = skip_ws(buf, i + 1, n)
            return _OK if i == n else _INVALID
        return _INVALID


def scan_keypoint_results(
    const uint8_t[::1] buf,
    Py_ssize_t num_values,
    int64_t[::1] image_ids,
    int64_t[::1] category_ids,
    double[::1] scores,
    double[::1] keypoints,
    double[::1] bbox,
    uint8_t[::1] bbox_count,
    double[::1] extent_boxes,
    double[::1] extent_areas,
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
    cdef int code = _scan(buf, num_values, image_ids, category_ids, scores, keypoints, bbox,
                          bbox_count, extent_boxes, extent_areas, negative_zero, &records)
    return code, records
