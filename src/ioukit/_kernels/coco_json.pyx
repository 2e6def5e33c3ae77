"""Compiled scanner for COCO result files: one pass over the bytes, columns out (private).

Handles the common shape of a results file, a JSON array of flat objects with ``image_id``,
``category_id`` (integers), ``bbox`` (4 numbers) and ``score`` (number); other keys are
skipped whatever their value. Anything else (a missing key, escapes in a key, a BOM, NaN...)
returns a non-zero code and the caller parses the file with a general JSON parser instead,
which also produces the precise error message.

Numbers are converted exactly as Python's ``float`` does: a decimal whose significand is at
most 2**53 and whose power of ten is at most 22 in magnitude is one correctly rounded IEEE
operation (Clinger's fast path); any other number is reported back by byte span for Python to parse.

The plain-Python twin is the general parser (``orjson``/``json``): tests compare both.
"""

from libc.stdint cimport int64_t, uint8_t

cdef enum:
    _OK = 0
    _BAD_SYNTAX = 1
    _MISSING_KEY = 2
    _TOO_MANY = 3

OK, BAD_SYNTAX, MISSING_KEY, TOO_MANY = _OK, _BAD_SYNTAX, _MISSING_KEY, _TOO_MANY

# field codes
cdef enum:
    _IMAGE = 0
    _CATEGORY = 1
    _BBOX = 2
    _SCORE = 3
    _OTHER = 4

cdef double _POW10[23]
cdef int _k
for _k in range(23):
    _POW10[_k] = float(10**_k)  # exact: every power up to 10**22 is a double


ctypedef struct _Number:
    double value
    Py_ssize_t end  # -1: not a number
    bint exact  # False: Python must parse buf[start:end]
    bint integer


cdef inline Py_ssize_t _skip_ws(const uint8_t[::1] buf, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    while i < n and (buf[i] == 32 or buf[i] == 10 or buf[i] == 13 or buf[i] == 9):
        i += 1
    return i


cdef _Number _number(const uint8_t[::1] buf, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    cdef _Number result
    result.value = 0.0
    result.end = -1
    result.exact = False
    result.integer = False
    cdef Py_ssize_t start = i
    cdef bint negative = False, any_digit = False, integer = True, exp_negative
    cdef int64_t mantissa = 0, digits = 0, exponent = 0, e, exp_digits
    cdef double value
    if i < n and buf[i] == 45:  # '-'
        negative = True
        i += 1
    while i < n and 48 <= buf[i] <= 57:
        any_digit = True
        if mantissa > 0 or buf[i] != 48:
            if digits < 18:
                mantissa = mantissa * 10 + (buf[i] - 48)
            else:
                exponent += 1
            digits += 1
        i += 1
    if i < n and buf[i] == 46:  # '.'
        integer = False
        i += 1
        while i < n and 48 <= buf[i] <= 57:
            any_digit = True
            if mantissa > 0 or buf[i] != 48:
                if digits < 18:
                    mantissa = mantissa * 10 + (buf[i] - 48)
                    exponent -= 1
                digits += 1
            else:
                exponent -= 1
            i += 1
    if i < n and (buf[i] == 101 or buf[i] == 69):  # 'e' 'E'
        integer = False
        i += 1
        exp_negative = False
        if i < n and (buf[i] == 43 or buf[i] == 45):
            exp_negative = buf[i] == 45
            i += 1
        e = 0
        exp_digits = 0
        while i < n and 48 <= buf[i] <= 57:
            if e < 100000:
                e = e * 10 + (buf[i] - 48)
            exp_digits += 1
            i += 1
        if exp_digits == 0:
            return result
        exponent += -e if exp_negative else e
    if not any_digit:
        return result
    result.end = i
    result.integer = integer
    if i - start > 40:
        return result
    if digits > 18 or mantissa > (<int64_t>1 << 53) or exponent > 22 or exponent < -22:
        return result
    value = <double>mantissa
    if exponent > 0:
        value = value * _POW10[exponent]
    elif exponent < 0:
        value = value / _POW10[-exponent]
    if negative:
        value = -value
    result.value = value
    result.exact = True
    return result


cdef Py_ssize_t _skip_string(const uint8_t[::1] buf, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    # buf[i] is the opening quote; returns the index after the closing quote or -1
    cdef uint8_t c
    i += 1
    while i < n:
        c = buf[i]
        if c == 92:  # backslash
            i += 2
            continue
        if c == 34:
            return i + 1
        i += 1
    return -1


cdef Py_ssize_t _skip_value(const uint8_t[::1] buf, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    # any JSON value; returns the index after it or -1
    cdef Py_ssize_t depth = 0
    cdef uint8_t c
    while i < n:
        c = buf[i]
        if c == 34:
            i = _skip_string(buf, i, n)
            if i < 0:
                return -1
        elif c == 91 or c == 123:  # [ {
            depth += 1
            i += 1
        elif c == 93 or c == 125:  # ] }
            if depth == 0:
                return i
            depth -= 1
            i += 1
            if depth == 0:
                return i
        elif c == 44:  # ,
            if depth == 0:
                return i
            i += 1
        else:
            i += 1
            if depth == 0:
                # scalar: run to the next delimiter
                while i < n and buf[i] != 44 and buf[i] != 125 and buf[i] != 93:
                    i += 1
                return i
    return -1


cdef bint _equals(const uint8_t[::1] buf, Py_ssize_t i, Py_ssize_t j, const char* word,
                  Py_ssize_t length) noexcept nogil:
    cdef Py_ssize_t k
    if j - i != length:
        return False
    for k in range(length):
        if buf[i + k] != <uint8_t>word[k]:
            return False
    return True


cdef int _key_code(const uint8_t[::1] buf, Py_ssize_t i, Py_ssize_t j) noexcept nogil:
    # buf[i:j] is the key without quotes
    if _equals(buf, i, j, b"image_id", 8):
        return _IMAGE
    if _equals(buf, i, j, b"category_id", 11):
        return _CATEGORY
    if _equals(buf, i, j, b"bbox", 4):
        return _BBOX
    if _equals(buf, i, j, b"score", 5):
        return _SCORE
    return _OTHER


cdef int _scan(
    const uint8_t[::1] buf, int64_t[:] image_id, int64_t[:] category_id, double[:, :] bbox,
    double[:] score, int64_t[:] slow_start, int64_t[:] slow_end, int64_t[:] slow_slot,
    Py_ssize_t* records, Py_ssize_t* slow_count,
) noexcept nogil:
    cdef Py_ssize_t n = buf.shape[0], capacity = image_id.shape[0]
    cdef Py_ssize_t slow_capacity = slow_start.shape[0], n_slow = 0, record = 0
    cdef Py_ssize_t i, j, key_start, k
    cdef int code, seen
    cdef _Number number
    records[0] = 0
    slow_count[0] = 0
    i = _skip_ws(buf, 0, n)
    if i >= n or buf[i] != 91:
        return _BAD_SYNTAX
    i = _skip_ws(buf, i + 1, n)
    if i < n and buf[i] == 93:
        i = _skip_ws(buf, i + 1, n)
        return _OK if i == n else _BAD_SYNTAX
    while True:
        records[0] = record
        slow_count[0] = n_slow
        if i >= n or buf[i] != 123:
            return _BAD_SYNTAX
        if record >= capacity:
            return _TOO_MANY
        seen = 0
        i = _skip_ws(buf, i + 1, n)
        if i < n and buf[i] == 125:
            return _MISSING_KEY
        while True:
            slow_count[0] = n_slow
            if i >= n or buf[i] != 34:
                return _BAD_SYNTAX
            key_start = i + 1
            j = key_start
            while j < n and buf[j] != 34 and buf[j] != 92:
                j += 1
            if j >= n or buf[j] == 92:
                return _BAD_SYNTAX
            code = _key_code(buf, key_start, j)
            i = _skip_ws(buf, j + 1, n)
            if i >= n or buf[i] != 58:  # ':'
                return _BAD_SYNTAX
            i = _skip_ws(buf, i + 1, n)
            if code == _IMAGE or code == _CATEGORY:
                number = _number(buf, i, n)
                if number.end < 0 or not number.exact or not number.integer:
                    return _BAD_SYNTAX
                if code == _IMAGE:
                    image_id[record] = <int64_t>number.value
                else:
                    category_id[record] = <int64_t>number.value
                seen |= 1 << code
                i = number.end
            elif code == _SCORE:
                number = _number(buf, i, n)
                if number.end < 0:
                    return _BAD_SYNTAX
                if not number.exact:
                    if n_slow >= slow_capacity:
                        return _TOO_MANY
                    slow_start[n_slow] = i
                    slow_end[n_slow] = number.end
                    slow_slot[n_slow] = 5 * record + 4
                    n_slow += 1
                score[record] = number.value
                seen |= 1 << code
                i = number.end
            elif code == _BBOX:
                if i >= n or buf[i] != 91:
                    return _BAD_SYNTAX
                i = _skip_ws(buf, i + 1, n)
                for k in range(4):
                    if k > 0:
                        if i >= n or buf[i] != 44:
                            return _BAD_SYNTAX
                        i = _skip_ws(buf, i + 1, n)
                    number = _number(buf, i, n)
                    if number.end < 0:
                        return _BAD_SYNTAX
                    if not number.exact:
                        if n_slow >= slow_capacity:
                            slow_count[0] = n_slow
                            return _TOO_MANY
                        slow_start[n_slow] = i
                        slow_end[n_slow] = number.end
                        slow_slot[n_slow] = 5 * record + k
                        n_slow += 1
                    bbox[record, k] = number.value
                    i = _skip_ws(buf, number.end, n)
                slow_count[0] = n_slow
                if i >= n or buf[i] != 93:
                    return _BAD_SYNTAX
                seen |= 1 << code
                i += 1
            else:
                i = _skip_value(buf, i, n)
                if i < 0:
                    return _BAD_SYNTAX
            slow_count[0] = n_slow
            i = _skip_ws(buf, i, n)
            if i < n and buf[i] == 44:
                i = _skip_ws(buf, i + 1, n)
                continue
            if i < n and buf[i] == 125:
                break
            return _BAD_SYNTAX
        if seen != 15:
            return _MISSING_KEY
        record += 1
        records[0] = record
        i = _skip_ws(buf, i + 1, n)
        if i < n and buf[i] == 44:
            i = _skip_ws(buf, i + 1, n)
            continue
        if i < n and buf[i] == 93:
            i = _skip_ws(buf, i + 1, n)
            return _OK if i == n else _BAD_SYNTAX
        return _BAD_SYNTAX


def scan_results(buf, image_id, category_id, bbox, score, slow_start, slow_end, slow_slot):
    """Fill the columns from a results file; returns (code, records, slow numbers).

    buf (B,) uint8 (read-only is fine); image_id, category_id (C,) int64; bbox (C, 4) float64;
    score (C,) float64; slow_start, slow_end, slow_slot (S,) int64 receive the byte spans of
    numbers Python must convert, and their slot: ``5 * record + field`` (fields 0-3 the bbox,
    4 the score). ``code`` is OK or the reason to fall back to a general parser.
    """
    cdef const uint8_t[::1] data = buf
    cdef int64_t[:] image_view = image_id, category_view = category_id
    cdef double[:, :] bbox_view = bbox
    cdef double[:] score_view = score
    cdef int64_t[:] start_view = slow_start, end_view = slow_end, slot_view = slow_slot
    cdef Py_ssize_t records = 0, slow_count = 0
    cdef int code
    with nogil:
        code = _scan(data, image_view, category_view, bbox_view, score_view, start_view,
                     end_view, slot_view, &records, &slow_count)
    return code, records, slow_count
