"""Compiled scanner for the ``annotations`` array of a COCO ground-truth file (private).

The pycocotools drop-in (``ioukit.compat.pycocotools.coco``) reads a ground-truth file's
annotations as columns without building their dicts: ``scan_annotations`` fills ``id``,
``image_id``, ``category_id`` (integers), ``bbox`` (4 numbers), ``area`` and ``iscrowd``
(numbers) from the array's text, one record per annotation in file order; other keys
(``segmentation``, ``ignore``...) are skipped whatever their value, validated as strictly as
the rest (``_json_lex.pxd``, RFC 8259). Any other shape (a missing key, a key with escapes, an
id that is not an integer, a ``bbox`` that is not 4 numbers, ``iscrowd: true``) returns a
code other than ``OK``: the caller parses the file with the general JSON parser, which gives
pycocotools' objects and errors.

Numbers are converted exactly as Python's ``float`` does (see ``_json_lex.pxd``). The
plain-Python twin is the general parser (``json``): tests compare both.
"""

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
    _UNSUPPORTED = 4

OK, INVALID, MISSING_KEY, TOO_MANY, UNSUPPORTED = (
    _OK, _INVALID, _MISSING_KEY, _TOO_MANY, _UNSUPPORTED
)

# field codes (bits of the fields seen in one record)
cdef enum:
    _ID = 0
    _IMAGE = 1
    _CATEGORY = 2
    _BBOX = 3
    _AREA = 4
    _CROWD = 5
    _OTHER = 6

cdef int _ALL = (1 << 6) - 1


cdef inline int _code(Py_ssize_t lexed) noexcept nogil:
    # a lexer code as a scanner code
    return _INVALID if lexed == LEX_INVALID else _UNSUPPORTED


cdef int _key_code(const uint8_t[::1] buf, Py_ssize_t i, Py_ssize_t j) noexcept nogil:
    # buf[i:j] is the key without quotes
    if key_equals(buf, i, j, b"id", 2):
        return _ID
    if key_equals(buf, i, j, b"image_id", 8):
        return _IMAGE
    if key_equals(buf, i, j, b"category_id", 11):
        return _CATEGORY
    if key_equals(buf, i, j, b"bbox", 4):
        return _BBOX
    if key_equals(buf, i, j, b"area", 4):
        return _AREA
    if key_equals(buf, i, j, b"iscrowd", 7):
        return _CROWD
    return _OTHER


cdef int _scan(
    const uint8_t[::1] buf, Py_ssize_t i, Py_ssize_t n, int64_t[:] ids, int64_t[:] image_id,
    int64_t[:] category_id, double[:, :] bbox, double[:] area, double[:] iscrowd,
    Py_ssize_t* records,
) noexcept:
    # buf[i:n] is the array (white space around it excluded)
    cdef Py_ssize_t capacity = ids.shape[0], record = 0
    cdef Py_ssize_t end, key_start
    cdef int code, seen, k
    cdef bint escaped
    cdef LexNumber number
    records[0] = 0
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
        i = skip_ws(buf, i + 1, n)
        if i < n and buf[i] == 125:
            return _MISSING_KEY
        while True:
            if i >= n or buf[i] != 34:
                return _INVALID  # an object member starts with a key
            key_start = i + 1
            end = skip_string(buf, i, n, &escaped)
            if end < 0:
                return _code(end)
            if escaped:
                return _UNSUPPORTED  # "image\u005fid" is image_id: the general parser reads it
            code = _key_code(buf, key_start, end - 1)
            i = skip_ws(buf, end, n)
            if i >= n or buf[i] != 58:  # ':'
                return _INVALID
            i = skip_ws(buf, i + 1, n)
            if code == _BBOX:
                if i >= n or buf[i] != 91:
                    return _code(value_or_unsupported(buf, i, n))
                end = skip_ws(buf, i + 1, n)
                for k in range(4):
                    if k > 0:
                        if end >= n or buf[end] != 44:
                            return _code(value_or_unsupported(buf, i, n))
                        end = skip_ws(buf, end + 1, n)
                    end = lex_number(buf, end, n, &number)
                    if end < 0:
                        return _code(value_or_unsupported(buf, i, n))
                    bbox[record, k] = number.value
                    end = skip_ws(buf, end, n)
                if end >= n or buf[end] != 93:
                    return _code(value_or_unsupported(buf, i, n))
                seen |= 1 << code
                i = end + 1
            elif code != _OTHER:
                end = lex_number(buf, i, n, &number)
                if end == LEX_INVALID:  # a string, true, null...: the general parser reads it
                    return _code(value_or_unsupported(buf, i, n))
                if end < 0:
                    return _code(end)
                if code == _AREA:
                    area[record] = number.value
                elif code == _CROWD:
                    iscrowd[record] = number.value
                else:
                    if not number.integer or not (-9007199254740992.0 < number.value
                                                  < 9007199254740992.0):
                        return _UNSUPPORTED
                    if code == _ID:
                        ids[record] = <int64_t>number.value
                    elif code == _IMAGE:
                        image_id[record] = <int64_t>number.value
                    else:
                        category_id[record] = <int64_t>number.value
                seen |= 1 << code
                i = end
            else:
                i = skip_value(buf, i, n)
                if i < 0:
                    return _code(i)
            i = skip_ws(buf, i, n)
            if i < n and buf[i] == 44:
                i = skip_ws(buf, i + 1, n)
                continue
            if i < n and buf[i] == 125:
                break
            return _INVALID  # after a member: a comma or the end of the object
        if seen != _ALL:
            return _MISSING_KEY
        record += 1
        records[0] = record
        i = skip_ws(buf, i + 1, n)
        if i < n and buf[i] == 44:
            i = skip_ws(buf, i + 1, n)
            continue
        if i < n and buf[i] == 93:
            i = skip_ws(buf, i + 1, n)
            return _OK if i == n else _INVALID
        return _INVALID  # after an element: a comma or the end of the array


def scan_annotations(buf, Py_ssize_t start, Py_ssize_t end, ids, image_id, category_id, bbox,
                     area, iscrowd):
    """Fill the columns from the annotations array ``buf[start:end]``; returns (code, records).

    buf (B,) uint8 (read-only is fine); ids, image_id, category_id (C,) int64; bbox (C, 4),
    area, iscrowd (C,) float64. ``code`` is OK, INVALID (not JSON: the strict parser refuses
    it too) or another reason to let the general parser read the file (TOO_MANY: more than
    C records).
    """
    cdef const uint8_t[::1] data = buf
    cdef int64_t[:] id_view = ids, image_view = image_id, category_view = category_id
    cdef double[:, :] bbox_view = bbox
    cdef double[:] area_view = area, crowd_view = iscrowd
    cdef Py_ssize_t records = 0
    if not 0 <= start <= end <= data.shape[0]:
        raise ValueError(f"start, end: expected 0 <= start <= end <= {data.shape[0]}, "
                         f"got {start}, {end}")
    cdef int code = _scan(data, start, end, id_view, image_view, category_view, bbox_view,
                          area_view, crowd_view, &records)
    return code, records



cdef inline bint _is_digit(uint8_t c) noexcept nogil:
    return 48 <= c <= 57


cdef bint _digit_run(const uint8_t[::1] buf, Py_ssize_t length) noexcept nogil:
    cdef Py_ssize_t n = buf.shape[0], i = 0, j, k
    while i + length <= n:
        j = i + length - 1
        if not _is_digit(buf[j]):
            i = j + 1
            continue
        k = j - 1
        while k >= i and _is_digit(buf[k]):
            k -= 1
        if k < i:
            return True
        i = k + 1
    return False


def has_digit_run(const uint8_t[::1] buf, Py_ssize_t length):
    """Whether ``buf`` holds ``length`` (>= 1) ASCII digits in a row, anywhere (strings too).

    The drop-in's guard before orjson, which reads an integer beyond 64 bits as a float
    (``json`` as an int): such an integer has at least 19 digits. One pass without a copy,
    that mostly skips: the window ``[i, i + length)`` is tested at its last byte first; a
    non-digit there rules out every window holding it, so ``i`` jumps past it; else the
    window is read backwards to its last non-digit, and ``i`` jumps past that (each byte is
    read at most twice). The plain-Python twin is ``re.search(rb"[0-9]{length}", buf)``.
    """
    cdef bint found
    if length < 1:
        raise ValueError(f"length: expected at least 1, got {length}")
    with nogil:
        found = _digit_run(buf, length)
    return found


def box_corners(double[:, ::1] bbox, double[:, ::1] box_wh, double[::1] area):
    """``bbox`` (N, 4) ``x, y, w, h`` turned into corners ``x, y, x + w, y + h`` in place, its
    ``w, h`` copied into ``box_wh`` (N, 2) and ``w * h`` into ``area`` (N,; or of size 0: not
    written): what the drop-in's evaluation reads of a results file, in one pass (the NumPy
    twin: ``box_wh[:] = bbox[:, 2:]; bbox[:, 2:] += bbox[:, :2]; area[:] = w * h``, bit for
    bit: each value is one IEEE operation).
    """
    cdef Py_ssize_t n = bbox.shape[0], i
    cdef double w, h
    cdef bint with_area = area.shape[0] != 0
    if (bbox.shape[1] != 4 or box_wh.shape[0] != n or box_wh.shape[1] != 2
            or (with_area and area.shape[0] != n)):
        raise ValueError("bbox, box_wh, area: expected shapes (N, 4), (N, 2), (N,)")
    with nogil:
        for i in range(n):
            w = bbox[i, 2]
            h = bbox[i, 3]
            box_wh[i, 0] = w
            box_wh[i, 1] = h
            if with_area:
                area[i] = w * h
            bbox[i, 2] = bbox[i, 0] + w
            bbox[i, 3] = bbox[i, 1] + h


# the keys of a plain box result, by code (plain_result_forms' key order)
RESULT_KEYS = ("image_id", "category_id", "bbox", "score")


cdef int _result_key(const uint8_t[::1] buf, Py_ssize_t i, Py_ssize_t j) noexcept nogil:
    if key_equals(buf, i, j, b"image_id", 8):
        return 0
    if key_equals(buf, i, j, b"category_id", 11):
        return 1
    if key_equals(buf, i, j, b"bbox", 4):
        return 2
    if key_equals(buf, i, j, b"score", 5):
        return 3
    return -1


cdef Py_ssize_t _plain_number(const uint8_t[::1] buf, Py_ssize_t i, Py_ssize_t n,
                              bint* integer) noexcept:
    # the end of the number token at i (the scanner read the text: it is valid JSON), and
    # whether it is an integer token; -1 for an integer whose double may not be the int
    # (more than 15 digits: then the lexer decides whether it lies within 2**53)
    cdef Py_ssize_t start = i, digits
    cdef LexNumber number
    if i < n and buf[i] == 45:  # '-'
        i += 1
    digits = i
    while i < n and _is_digit(buf[i]):
        i += 1
    digits = i - digits
    if digits == 0:
        return -1
    integer[0] = True
    if i < n and buf[i] == 46:  # '.'
        integer[0] = False
        i += 1
        while i < n and _is_digit(buf[i]):
            i += 1
    if i < n and (buf[i] == 101 or buf[i] == 69):  # 'e', 'E'
        integer[0] = False
        i += 1
        if i < n and (buf[i] == 43 or buf[i] == 45):
            i += 1
        while i < n and _is_digit(buf[i]):
            i += 1
    if integer[0] and digits > 15:
        if lex_number(buf, start, n, &number) < 0 or not (
                -9007199254740992.0 < number.value < 9007199254740992.0):
            return -1
    return i


def plain_result_forms(const uint8_t[::1] buf, uint8_t[::1] integer_bits):
    """The key order of a results array whose records hold exactly ``image_id``,
    ``category_id`` (integers), ``bbox`` (4 numbers) and ``score`` (a number), each once,
    all in the same order: ``o[0] * 64 + o[1] * 16 + o[2] * 4 + o[3]`` with ``o`` the keys'
    codes (indices into ``RESULT_KEYS``) in record order; -1 for any other array (a record
    with another key, a key twice, another order, an integer beyond 2**53).

    ``integer_bits[r]`` (R >= records,) gets record ``r``'s integer tokens: bit ``k`` for
    ``bbox[k]``, bit 4 for ``score`` (``json`` makes those ints, the rest floats). With the
    scanner's columns (``coco_json.scan_results``, which read the same numbers), these are
    the whole of ``json.loads(buf)``: the drop-in builds the dicts from them and keeps no
    bytes. Run only on a text the scanner read whole (valid JSON, keys without escapes).
    """
    cdef Py_ssize_t n = buf.shape[0], i, end, record = 0, capacity = integer_bits.shape[0]
    cdef int order = -1, got, code, member, k, bits, seen
    cdef bint integer, escaped
    i = skip_ws(buf, 0, n)
    if i >= n or buf[i] != 91:
        return -1
    i = skip_ws(buf, i + 1, n)
    if i < n and buf[i] == 93:
        return -1  # no record: no order
    while True:
        if i >= n or buf[i] != 123 or record >= capacity:
            return -1
        i = skip_ws(buf, i + 1, n)
        got = 0
        seen = 0
        bits = 0
        for member in range(4):
            if member > 0:
                if i >= n or buf[i] != 44:
                    return -1
                i = skip_ws(buf, i + 1, n)
            if i >= n or buf[i] != 34:
                return -1
            end = skip_string(buf, i, n, &escaped)
            if end < 0 or escaped:
                return -1
            code = _result_key(buf, i + 1, end - 1)
            if code < 0 or seen & (1 << code):
                return -1
            seen |= 1 << code
            got = got * 4 + code
            i = skip_ws(buf, end, n)
            if i >= n or buf[i] != 58:
                return -1
            i = skip_ws(buf, i + 1, n)
            if code == 2:
                if i >= n or buf[i] != 91:
                    return -1
                i = skip_ws(buf, i + 1, n)
                for k in range(4):
                    if k > 0:
                        if i >= n or buf[i] != 44:
                            return -1
                        i = skip_ws(buf, i + 1, n)
                    end = _plain_number(buf, i, n, &integer)
                    if end < 0:
                        return -1
                    bits |= integer << k
                    i = skip_ws(buf, end, n)
                if i >= n or buf[i] != 93:
                    return -1
                i = skip_ws(buf, i + 1, n)
            else:
                end = _plain_number(buf, i, n, &integer)
                if end < 0 or (code < 2 and not integer):
                    return -1
                if code == 3:
                    bits |= integer << 4
                i = skip_ws(buf, end, n)
        if i >= n or buf[i] != 125:
            return -1  # a fifth member, or not the end of the object
        if order < 0:
            order = got
        elif got != order:
            return -1
        integer_bits[record] = bits
        record += 1
        i = skip_ws(buf, i + 1, n)
        if i < n and buf[i] == 44:
            i = skip_ws(buf, i + 1, n)
            continue
        if i < n and buf[i] == 93:
            return order
        return -1
