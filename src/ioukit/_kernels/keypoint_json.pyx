"""One-pass scanner for COCO keypoint result files: bytes in, columns out (private).

Handles the common shape of a keypoint results file: a JSON array of flat objects with
``image_id``, ``category_id`` (integers), ``score`` (a number), ``keypoints`` (exactly ``3 K``
numbers) and optionally ``bbox`` (4 numbers, or empty); other keys are skipped whatever their
value. Anything else (a missing key, another K, escapes in a key, a BOM, NaN, a syntax error...)
returns a non-zero code, and the caller parses the file with a general JSON parser instead,
which also produces the precise error message.

Numbers are converted exactly as Python's ``float`` does: a decimal whose significand is at most
2**53 and whose power of ten is at most 22 in magnitude is one correctly rounded IEEE operation
(Clinger's fast path); any other number is reported back by byte span for Python to parse.

The plain-Python twin is the general parser (``orjson``/``json``): the tests compare both.
"""

import numpy as np

OK, BAD_SYNTAX, MISSING_KEY, TOO_MANY, WRONG_LENGTH = 0, 1, 2, 3, 4

cdef enum:
    _OK = 0
    _BAD_SYNTAX = 1
    _MISSING_KEY = 2
    _TOO_MANY = 3
    _WRONG_LENGTH = 4

cdef double[23] _POW10
cdef int _p
for _p in range(23):
    _POW10[_p] = 10.0 ** _p

cdef enum:
    _IMAGE = 0
    _CATEGORY = 1
    _SCORE = 2
    _KEYPOINTS = 3
    _BBOX = 4
    _OTHER = 5


cdef inline Py_ssize_t _skip_ws(const unsigned char[::1] buf, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    while i < n and (buf[i] == 32 or buf[i] == 10 or buf[i] == 13 or buf[i] == 9):
        i += 1
    return i


cdef inline Py_ssize_t _number(
    const unsigned char[::1] buf, Py_ssize_t i, Py_ssize_t n, double* value, bint* exact,
    bint* integer,
) noexcept nogil:
    """Parse a JSON number at ``i``; returns its end (or -1 on a syntax error)."""
    cdef bint negative = False
    cdef unsigned long long mantissa = 0
    cdef int digits = 0, exponent = 0, exp_value = 0
    cdef bint any_digit = False, exp_negative = False, exp_digit = False
    cdef unsigned char c
    integer[0] = True
    if i < n and buf[i] == 45:  # '-'
        negative = True
        i += 1
    while i < n and 48 <= buf[i] <= 57:
        any_digit = True
        c = buf[i]
        if mantissa > 0 or c != 48:
            if digits < 19:
                mantissa = mantissa * 10 + (c - 48)
            else:
                exponent += 1
            digits += 1
        i += 1
    if not any_digit:
        return -1
    if i < n and buf[i] == 46:  # '.'
        integer[0] = False
        i += 1
        any_digit = False
        while i < n and 48 <= buf[i] <= 57:
            any_digit = True
            c = buf[i]
            if mantissa > 0 or c != 48:
                if digits < 19:
                    mantissa = mantissa * 10 + (c - 48)
                    exponent -= 1
                digits += 1
            else:
                exponent -= 1
            i += 1
        if not any_digit:
            return -1
    if i < n and (buf[i] == 101 or buf[i] == 69):  # 'e' / 'E'
        integer[0] = False
        i += 1
        if i < n and (buf[i] == 43 or buf[i] == 45):
            exp_negative = buf[i] == 45
            i += 1
        while i < n and 48 <= buf[i] <= 57:
            exp_digit = True
            if exp_value < 100000:
                exp_value = exp_value * 10 + (buf[i] - 48)
            i += 1
        if not exp_digit:
            return -1
        exponent += -exp_value if exp_negative else exp_value
    exact[0] = False
    if digits <= 19 and mantissa <= 9007199254740992ULL:  # 2**53
        if mantissa == 0:
            value[0] = -0.0 if negative else 0.0
            exact[0] = True
        elif -22 <= exponent <= 22:
            if exponent >= 0:
                value[0] = <double>mantissa * _POW10[exponent]
            else:
                value[0] = <double>mantissa / _POW10[-exponent]
            if negative:
                value[0] = -value[0]
            exact[0] = True
    return i


cdef Py_ssize_t _skip_string(const unsigned char[::1] buf, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    # i at the opening quote; returns the index after the closing quote, -1 if unterminated
    i += 1
    while i < n:
        if buf[i] == 92:  # backslash
            i += 2
            continue
        if buf[i] == 34:
            return i + 1
        i += 1
    return -1


cdef Py_ssize_t _skip_value(const unsigned char[::1] buf, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    """Skip any JSON value at ``i``; returns its end, -1 on a syntax error."""
    cdef int depth = 0
    cdef unsigned char c
    cdef double value
    cdef bint exact, integer
    if i >= n:
        return -1
    c = buf[i]
    if c == 34:
        return _skip_string(buf, i, n)
    if c == 123 or c == 91:  # { [
        while i < n:
            c = buf[i]
            if c == 34:
                i = _skip_string(buf, i, n)
                if i < 0:
                    return -1
                continue
            if c == 123 or c == 91:
                depth += 1
            elif c == 125 or c == 93:
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        return -1
    if c == 116 and i + 4 <= n and buf[i + 1] == 114 and buf[i + 2] == 117 and buf[i + 3] == 101:
        return i + 4  # true
    if c == 102 and i + 5 <= n and buf[i + 1] == 97 and buf[i + 2] == 108:
        return i + 5  # false
    if c == 110 and i + 4 <= n and buf[i + 1] == 117 and buf[i + 2] == 108:
        return i + 4  # null
    return _number(buf, i, n, &value, &exact, &integer)


cdef inline bint _key_is(
    const unsigned char[::1] buf, Py_ssize_t start, Py_ssize_t end, const char* name, int length
) noexcept nogil:
    cdef int j
    if end - start != length:
        return False
    for j in range(length):
        if buf[start + j] != <unsigned char>name[j]:
            return False
    return True


cdef int _field(const unsigned char[::1] buf, Py_ssize_t start, Py_ssize_t end) noexcept nogil:
    if _key_is(buf, start, end, b"image_id", 8):
        return _IMAGE
    if _key_is(buf, start, end, b"category_id", 11):
        return _CATEGORY
    if _key_is(buf, start, end, b"score", 5):
        return _SCORE
    if _key_is(buf, start, end, b"keypoints", 9):
        return _KEYPOINTS
    if _key_is(buf, start, end, b"bbox", 4):
        return _BBOX
    return _OTHER


cdef Py_ssize_t _numbers(
    const unsigned char[::1] buf, Py_ssize_t i, Py_ssize_t n, double[::1] out, Py_ssize_t base,
    Py_ssize_t expected, Py_ssize_t* count, long long[::1] slow_start, long long[::1] slow_end,
    long long[::1] slow_slot, Py_ssize_t* n_slow, Py_ssize_t slot_base,
) noexcept nogil:
    """Parse ``[n1, n2, ...]`` at ``i`` into ``out[base:base + expected]``; -1 on error.

    ``count`` receives the number of values; more than ``expected`` is an error (-2).
    """
    cdef double value
    cdef bint exact, integer
    cdef Py_ssize_t k = 0, end
    if i >= n or buf[i] != 91:
        return -1
    i = _skip_ws(buf, i + 1, n)
    if i < n and buf[i] == 93:
        count[0] = 0
        return i + 1
    while True:
        end = _number(buf, i, n, &value, &exact, &integer)
        if end < 0:
            return -1
        if k >= expected:
            return -2
        if exact:
            out[base + k] = value
        else:
            if n_slow[0] >= slow_start.shape[0]:
                return -3
            slow_start[n_slow[0]] = i
            slow_end[n_slow[0]] = end
            slow_slot[n_slow[0]] = slot_base + base + k
            n_slow[0] += 1
        k += 1
        i = _skip_ws(buf, end, n)
        if i < n and buf[i] == 44:
            i = _skip_ws(buf, i + 1, n)
            continue
        if i < n and buf[i] == 93:
            count[0] = k
            return i + 1
        return -1


cdef int _scan(
    const unsigned char[::1] buf,
    Py_ssize_t num_values,
    long long[::1] image_ids,
    long long[::1] category_ids,
    double[::1] scores,
    double[::1] keypoints,
    double[::1] bbox,
    unsigned char[::1] bbox_count,
    long long[::1] slow_start,
    long long[::1] slow_end,
    long long[::1] slow_slot,
    Py_ssize_t* records,
    Py_ssize_t* n_slow,
) noexcept nogil:
    cdef Py_ssize_t n = buf.shape[0], i, key_start, key_end, end, count = 0
    cdef Py_ssize_t record = 0, capacity = image_ids.shape[0]
    cdef Py_ssize_t kp_size = keypoints.shape[0]
    cdef int field, seen
    cdef double value
    cdef bint exact, integer
    i = _skip_ws(buf, 0, n)
    if i >= n or buf[i] != 91:
        return _BAD_SYNTAX
    i = _skip_ws(buf, i + 1, n)
    if i < n and buf[i] == 93:
        i = _skip_ws(buf, i + 1, n)
        return _OK if i == n else _BAD_SYNTAX
    while True:
        records[0] = record
        if i >= n or buf[i] != 123:
            return _BAD_SYNTAX
        if record >= capacity:
            return _TOO_MANY
        seen = 0
        bbox_count[record] = 0
        i = _skip_ws(buf, i + 1, n)
        while True:
            if i >= n or buf[i] != 34:
                return _BAD_SYNTAX
            key_start = i + 1
            end = _skip_string(buf, i, n)
            if end < 0:
                return _BAD_SYNTAX
            key_end = end - 1
            field = _field(buf, key_start, key_end)
            i = _skip_ws(buf, end, n)
            if i >= n or buf[i] != 58:  # ':'
                return _BAD_SYNTAX
            i = _skip_ws(buf, i + 1, n)
            if field == _IMAGE or field == _CATEGORY or field == _SCORE:
                end = _number(buf, i, n, &value, &exact, &integer)
                if end < 0:
                    return _BAD_SYNTAX  # a string, null...: the general parser names it
                if field == _SCORE:
                    if exact:
                        scores[record] = value
                    else:
                        if n_slow[0] >= slow_start.shape[0]:
                            return _TOO_MANY
                        slow_start[n_slow[0]] = i
                        slow_end[n_slow[0]] = end
                        slow_slot[n_slow[0]] = -record - 1
                        n_slow[0] += 1
                else:
                    if not (integer and exact):
                        return _BAD_SYNTAX
                    if field == _IMAGE:
                        image_ids[record] = <long long>value
                    else:
                        category_ids[record] = <long long>value
                seen |= 1 << field
            elif field == _KEYPOINTS:
                end = _numbers(buf, i, n, keypoints, record * num_values, num_values, &count,
                               slow_start, slow_end, slow_slot, n_slow, 0)
                if end == -2 or (end >= 0 and count != num_values):
                    return _WRONG_LENGTH
                if end < 0:
                    return _BAD_SYNTAX
                seen |= 1 << field
            elif field == _BBOX:
                end = _numbers(buf, i, n, bbox, 4 * record, 4, &count, slow_start, slow_end,
                               slow_slot, n_slow, kp_size)
                if end < 0 or (count != 0 and count != 4):
                    return _BAD_SYNTAX
                bbox_count[record] = <unsigned char>count
            else:
                end = _skip_value(buf, i, n)
                if end < 0:
                    return _BAD_SYNTAX
            i = _skip_ws(buf, end, n)
            if i < n and buf[i] == 44:
                i = _skip_ws(buf, i + 1, n)
                continue
            if i < n and buf[i] == 125:
                i = _skip_ws(buf, i + 1, n)
                break
            return _BAD_SYNTAX
        if seen != (1 << _IMAGE) | (1 << _CATEGORY) | (1 << _SCORE) | (1 << _KEYPOINTS):
            return _MISSING_KEY
        record += 1
        records[0] = record
        if i < n and buf[i] == 44:
            i = _skip_ws(buf, i + 1, n)
            continue
        if i < n and buf[i] == 93:
            i = _skip_ws(buf, i + 1, n)
            return _OK if i == n else _BAD_SYNTAX
        return _BAD_SYNTAX


def scan_keypoint_results(
    const unsigned char[::1] buf,
    Py_ssize_t num_values,
    long long[::1] image_ids,
    long long[::1] category_ids,
    double[::1] scores,
    double[::1] keypoints,
    double[::1] bbox,
    unsigned char[::1] bbox_count,
    long long[::1] slow_start,
    long long[::1] slow_end,
    long long[::1] slow_slot,
):
    """Scan a results file; returns ``(code, records, slow numbers)``.

    ``num_values`` is 3 K: every record's ``keypoints`` must have exactly that many. The
    keypoints of record ``r`` land in ``keypoints[r * num_values:]``, its box in
    ``bbox[4 r:]`` with ``bbox_count[r]`` its length (0 when absent or empty). Slow numbers are
    reported as byte spans with their slot: ``slot < 0`` is the score of record ``-slot - 1``,
    ``slot >= len(keypoints)`` the bbox value ``slot - len(keypoints)``, others keypoint values.
    """
    cdef Py_ssize_t records = 0, n_slow = 0
    cdef int code
    with nogil:
        code = _scan(buf, num_values, image_ids, category_ids, scores, keypoints, bbox,
                     bbox_count, slow_start, slow_end, slow_slot, &records, &n_slow)
    return code, records, n_slow
