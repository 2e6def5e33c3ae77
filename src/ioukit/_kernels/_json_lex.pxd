# Strict JSON lexer shared by the compiled results scanners (coco_json, keypoint_json).
#
# RFC 8259 exactly: numbers -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, no NaN/Infinity,
# only the bare words true/false/null, double-quoted strings with valid escapes, valid UTF-8
# and no raw control characters, commas and colons where the grammar puts them. Every
# function returns an index >= 0 (the end of what it read) or one of two codes:
#   LEX_INVALID      not JSON: the strict parser (orjson/json) refuses the document too
#   LEX_UNSUPPORTED  left to the strict parser, which decides: nesting deeper than
#                    MAX_DEPTH, a lone surrogate (a \u escape or UTF-8 bytes: orjson refuses
#                    it, json accepts it), a number that overflows to infinity (orjson
#                    refuses it, json gives inf)
# so that a scanner accepts exactly what the strict parser accepts, and on anything it does
# not accept the caller parses the file with the strict parser, whose error message (file,
# line and column, what was expected) is the one the user sees.
#
# Numbers are converted exactly as Python's float() does: a significand of at most 2**53 with
# a power of ten of at most 22 in magnitude is one correctly rounded IEEE operation (Clinger's
# fast path); any other number goes through PyOS_string_to_double, float()'s own conversion.

from cpython.exc cimport PyErr_Clear, PyErr_Occurred
from cpython.ref cimport PyObject
from libc.math cimport isinf
from libc.stdint cimport uint8_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy

cdef extern from "Python.h":
    double PyOS_string_to_double(const char* s, char** endptr, PyObject* overflow_exception)

cdef enum:
    LEX_INVALID = -1
    LEX_UNSUPPORTED = -2
    MAX_DEPTH = 512

# 10**k for k <= 22: every one is exactly a double
cdef extern from *:
    """
    static const double ioukit_lex_pow10[23] = {
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
        1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    """
    const double* LEX_POW10 "ioukit_lex_pow10"


ctypedef struct LexNumber:
    double value
    bint integer  # no fraction and no exponent


cdef inline Py_ssize_t skip_ws(const uint8_t[::1] buf, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    while i < n and (buf[i] == 32 or buf[i] == 10 or buf[i] == 13 or buf[i] == 9):
        i += 1
    return i


cdef inline bint key_equals(const uint8_t[::1] buf, Py_ssize_t start, Py_ssize_t end,
                            const char* name, Py_ssize_t length) noexcept nogil:
    # whether buf[start:end] (an object key without its quotes) is name (length bytes)
    cdef Py_ssize_t j
    if end - start != length:
        return False
    for j in range(length):
        if buf[start + j] != <uint8_t>name[j]:
            return False
    return True


cdef inline bint is_digit(uint8_t c) noexcept nogil:
    return 48 <= c <= 57


cdef inline double _slow_number(const uint8_t[::1] buf, Py_ssize_t start, Py_ssize_t end,
                                bint* ok) noexcept:
    # float()'s conversion of buf[start:end] (a valid JSON number); needs the GIL
    cdef char local[64]
    cdef char* text = local
    cdef Py_ssize_t length = end - start
    cdef double value
    ok[0] = True
    if length >= 64:
        text = <char*>malloc(length + 1)
        if text == NULL:
            ok[0] = False
            return 0.0
    memcpy(text, &buf[start], length)
    text[length] = 0
    value = PyOS_string_to_double(text, NULL, NULL)
    if text != local:
        free(text)
    if value == -1.0 and PyErr_Occurred() != NULL:  # pragma: no cover - a valid number
        PyErr_Clear()
        ok[0] = False
    return value


cdef inline Py_ssize_t _lex_long_number(const uint8_t[::1] buf, Py_ssize_t i, Py_ssize_t n,
                                        LexNumber* out) noexcept:
    # lex_number for a number of more than 19 digits: the first 19 significant digits kept,
    # whether a non-zero one was dropped noted
    cdef Py_ssize_t start = i
    cdef bint negative = False, fast
    cdef uint64_t mantissa = 0
    cdef int digits = 0  # significant digits kept in mantissa (at most 19)
    cdef bint dropped = False  # a non-zero digit beyond the 19th
    cdef long exponent = 0, exp_value = 0
    cdef bint exp_negative = False
    cdef uint8_t c
    cdef double value
    cdef bint ok
    out.integer = True
    if i < n and buf[i] == 45:  # '-'
        negative = True
        i += 1
    if i >= n:
        return LEX_INVALID
    c = buf[i]
    if c == 48:  # '0': no more integer digits may follow
        i += 1
    elif 49 <= c <= 57:
        while i < n and is_digit(buf[i]):
            if digits < 19:
                mantissa = mantissa * 10 + (buf[i] - 48)
                digits += 1
            else:
                exponent += 1
                dropped = dropped or buf[i] != 48
            i += 1
    else:
        return LEX_INVALID
    if i < n and buf[i] == 46:  # '.'
        out.integer = False
        i += 1
        if i >= n or not is_digit(buf[i]):
            return LEX_INVALID
        while i < n and is_digit(buf[i]):
            if mantissa == 0 and buf[i] == 48:
                exponent -= 1  # leading zeros of the fraction
            elif digits < 19:
                mantissa = mantissa * 10 + (buf[i] - 48)
                digits += 1
                exponent -= 1
            else:
                dropped = dropped or buf[i] != 48
            i += 1
    if i < n and (buf[i] == 101 or buf[i] == 69):  # 'e' 'E'
        out.integer = False
        i += 1
        if i < n and (buf[i] == 43 or buf[i] == 45):
            exp_negative = buf[i] == 45
            i += 1
        if i >= n or not is_digit(buf[i]):
            return LEX_INVALID
        while i < n and is_digit(buf[i]):
            if exp_value < 100000:
                exp_value = exp_value * 10 + (buf[i] - 48)
            i += 1
        exponent += -exp_value if exp_negative else exp_value
    if mantissa == 0 and not dropped:
        # float("-0.0") is -0.0; an integer -0 is int 0, which becomes +0.0
        out.value = -0.0 if negative and not out.integer else 0.0
        return i
    fast = not dropped and mantissa <= (<uint64_t>1 << 53) and -22 <= exponent <= 22
    if fast:
        value = <double>mantissa
        if exponent > 0:
            value = value * LEX_POW10[exponent]
        elif exponent < 0:
            value = value / LEX_POW10[-exponent]
        out.value = -value if negative else value
        return i
    value = _slow_number(buf, start, i, &ok)
    if not ok or isinf(value):
        return LEX_UNSUPPORTED  # orjson refuses a number that overflows; json gives inf
    out.value = value
    return i


cdef inline Py_ssize_t _digits(const uint8_t* p, Py_ssize_t i, Py_ssize_t n, bint bounded,
                               uint64_t* acc) noexcept nogil:
    # the end of the run of digits at p[i]; acc = 10 acc + digit for each (modulo 2**64: the
    # caller uses acc only for at most 19 digits). bounded: p[n - 1] is not a digit, so no
    # run reaches n and the loop needs no index check
    cdef uint64_t m = acc[0]
    cdef unsigned int d
    if bounded:
        while True:
            d = <unsigned int>p[i] - 48
            if d > 9:
                break
            m = m * 10 + d
            i += 1
    else:
        while i < n:
            d = <unsigned int>p[i] - 48
            if d > 9:
                break
            m = m * 10 + d
            i += 1
    acc[0] = m
    return i


cdef inline Py_ssize_t lex_number(const uint8_t[::1] buf, Py_ssize_t i, Py_ssize_t n,
                                  LexNumber* out) noexcept:
    # the number at i, converted; LEX_INVALID when no number starts at i (the character
    # after the number is the caller's to check), LEX_UNSUPPORTED when it overflows
    cdef const uint8_t* p = &buf[0]
    cdef bint bounded = not is_digit(p[n - 1]) if n > 0 else False
    cdef Py_ssize_t start = i, first
    cdef bint negative = False
    cdef uint64_t mantissa = 0
    cdef Py_ssize_t digits  # integer and fraction digits, leading zeros included
    cdef long exponent = 0, exp_value = 0
    cdef bint exp_negative = False
    cdef uint8_t c
    cdef double value
    cdef bint ok
    out.integer = True
    if i < n and p[i] == 45:  # '-'
        negative = True
        i += 1
    if i >= n:
        return LEX_INVALID
    c = p[i]
    first = i
    if c == 48:  # '0': no more integer digits may follow
        i += 1
    elif 49 <= c <= 57:
        i = _digits(p, i, n, bounded, &mantissa)
    else:
        return LEX_INVALID
    digits = i - first
    if i < n and p[i] == 46:  # '.'
        out.integer = False
        i += 1
        first = i
        i = _digits(p, i, n, bounded, &mantissa)
        if i == first:
            return LEX_INVALID
        exponent = first - i
        digits += i - first
    if digits > 19:  # the mantissa wrapped: the careful path
        return _lex_long_number(buf, start, n, out)
    if i < n and (p[i] == 101 or p[i] == 69):  # 'e' 'E'
        out.integer = False
        i += 1
        if i < n and (p[i] == 43 or p[i] == 45):
            exp_negative = p[i] == 45
            i += 1
        if i >= n or not is_digit(p[i]):
            return LEX_INVALID
        while i < n and is_digit(p[i]):
            if exp_value < 100000:
                exp_value = exp_value * 10 + (p[i] - 48)
            i += 1
        exponent += -exp_value if exp_negative else exp_value
    if mantissa == 0:
        # float("-0.0") is -0.0; an integer -0 is int 0, which becomes +0.0
        out.value = -0.0 if negative and not out.integer else 0.0
        return i
    if mantissa <= (<uint64_t>1 << 53) and -22 <= exponent <= 22:  # Clinger's fast path
        value = <double>mantissa
        if exponent > 0:
            value = value * LEX_POW10[exponent]
        elif exponent < 0:
            value = value / LEX_POW10[-exponent]
        out.value = -value if negative else value
        return i
    value = _slow_number(buf, start, i, &ok)
    if not ok or isinf(value):
        return LEX_UNSUPPORTED  # orjson refuses a number that overflows; json gives inf
    out.value = value
    return i


cdef inline int _hex(uint8_t c) noexcept nogil:
    if 48 <= c <= 57:
        return c - 48
    if 97 <= c <= 102:
        return c - 87
    if 65 <= c <= 70:
        return c - 55
    return -1


cdef inline long _escape_u(const uint8_t[::1] buf, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    # the code unit of the 4 hex digits at i, -1 when they are not 4 hex digits
    cdef long value = 0
    cdef int k, h
    if i + 4 > n:
        return -1
    for k in range(4):
        h = _hex(buf[i + k])
        if h < 0:
            return -1
        value = value * 16 + h
    return value


cdef inline bint _cont(uint8_t c) noexcept nogil:
    return 0x80 <= c <= 0xBF


cdef inline Py_ssize_t skip_string(const uint8_t[::1] buf, Py_ssize_t i, Py_ssize_t n,
                                   bint* escaped) noexcept nogil:
    # i at the opening quote; the index after the closing quote, LEX_INVALID or
    # LEX_UNSUPPORTED; escaped: whether the string holds a backslash escape
    cdef uint8_t c
    cdef long unit, low
    escaped[0] = False
    i += 1
    while i < n:
        c = buf[i]
        if c == 34:  # '"'
            return i + 1
        if c < 0x20:
            return LEX_INVALID  # a raw control character
        if c < 0x80:
            if c == 92:  # backslash
                escaped[0] = True
                if i + 1 >= n:
                    return LEX_INVALID
                c = buf[i + 1]
                if c == 117:  # 'u'
                    unit = _escape_u(buf, i + 2, n)
                    if unit < 0:
                        return LEX_INVALID
                    i += 6
                    if 0xD800 <= unit <= 0xDBFF:  # a high surrogate: a low one must follow
                        if i + 1 < n and buf[i] == 92 and buf[i + 1] == 117:
                            low = _escape_u(buf, i + 2, n)
                            if 0xDC00 <= low <= 0xDFFF:
                                i += 6
                                continue
                        return LEX_UNSUPPORTED
                    if 0xDC00 <= unit <= 0xDFFF:
                        return LEX_UNSUPPORTED
                    continue
                if (c == 34 or c == 92 or c == 47 or c == 98 or c == 102 or c == 110
                        or c == 114 or c == 116):  # " \ / b f n r t
                    i += 2
                    continue
                return LEX_INVALID
            i += 1
            continue
        # UTF-8: well-formed sequences only (no overlong forms, no surrogates, <= U+10FFFF)
        if 0xC2 <= c <= 0xDF:
            if i + 1 < n and _cont(buf[i + 1]):
                i += 2
                continue
        elif 0xE0 <= c <= 0xEF:
            if i + 2 < n and _cont(buf[i + 2]) and (
                (c == 0xE0 and 0xA0 <= buf[i + 1] <= 0xBF)
                or (c == 0xED and 0x80 <= buf[i + 1] <= 0x9F)
                or (c != 0xE0 and c != 0xED and _cont(buf[i + 1]))
            ):
                i += 3
                continue
            if c == 0xED and i + 2 < n and 0xA0 <= buf[i + 1] <= 0xBF and _cont(buf[i + 2]):
                return LEX_UNSUPPORTED  # a UTF-8 surrogate: json accepts it, orjson not
        elif 0xF0 <= c <= 0xF4:
            if i + 3 < n and _cont(buf[i + 2]) and _cont(buf[i + 3]) and (
                (c == 0xF0 and 0x90 <= buf[i + 1] <= 0xBF)
                or (c == 0xF4 and 0x80 <= buf[i + 1] <= 0x8F)
                or (c != 0xF0 and c != 0xF4 and _cont(buf[i + 1]))
            ):
                i += 4
                continue
        return LEX_INVALID
    return LEX_INVALID  # unterminated


cdef inline Py_ssize_t _word(const uint8_t[::1] buf, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    # true, false or null at i: the index after it, else LEX_INVALID
    if i + 4 <= n and buf[i] == 116 and buf[i + 1] == 114 and buf[i + 2] == 117 and buf[i + 3] == 101:
        return i + 4
    if (i + 5 <= n and buf[i] == 102 and buf[i + 1] == 97 and buf[i + 2] == 108
            and buf[i + 3] == 115 and buf[i + 4] == 101):
        return i + 5
    if i + 4 <= n and buf[i] == 110 and buf[i + 1] == 117 and buf[i + 2] == 108 and buf[i + 3] == 108:
        return i + 4
    return LEX_INVALID


cdef inline Py_ssize_t skip_value(const uint8_t[::1] buf, Py_ssize_t i, Py_ssize_t n) noexcept:
    # any JSON value at i (white space before it already skipped): the index after it,
    # LEX_INVALID or LEX_UNSUPPORTED. Iterative, with an explicit stack of open containers.
    cdef uint8_t[MAX_DEPTH] stack
    cdef int depth = 0
    cdef uint8_t c
    cdef bint escaped, need_value
    cdef LexNumber number
    while True:
        # a value starts at i
        if i >= n:
            return LEX_INVALID
        c = buf[i]
        need_value = False
        if c == 123 or c == 91:  # { [
            if depth == MAX_DEPTH:
                return LEX_UNSUPPORTED
            stack[depth] = c
            depth += 1
            i = skip_ws(buf, i + 1, n)
            if i < n and buf[i] == c + 2:  # {} []
                depth -= 1
                i += 1
            elif c == 91:
                continue  # the first element
            else:
                # the first key of an object
                if i >= n or buf[i] != 34:
                    return LEX_INVALID
                i = skip_string(buf, i, n, &escaped)
                if i < 0:
                    return i
                i = skip_ws(buf, i, n)
                if i >= n or buf[i] != 58:  # ':'
                    return LEX_INVALID
                i = skip_ws(buf, i + 1, n)
                continue
        elif c == 34:
            i = skip_string(buf, i, n, &escaped)
        elif c == 116 or c == 102 or c == 110:
            i = _word(buf, i, n)
        else:
            i = lex_number(buf, i, n, &number)
        if i < 0:
            return i
        # after a value: close containers, or a comma and the next element/member
        while True:
            if depth == 0:
                return i
            i = skip_ws(buf, i, n)
            if i >= n:
                return LEX_INVALID
            c = buf[i]
            if c == 44:  # ','
                i = skip_ws(buf, i + 1, n)
                if stack[depth - 1] == 123:
                    if i >= n or buf[i] != 34:
                        return LEX_INVALID
                    i = skip_string(buf, i, n, &escaped)
                    if i < 0:
                        return i
                    i = skip_ws(buf, i, n)
                    if i >= n or buf[i] != 58:
                        return LEX_INVALID
                    i = skip_ws(buf, i + 1, n)
                need_value = True
                break
            if c == stack[depth - 1] + 2:  # ] closes [, } closes {
                depth -= 1
                i += 1
                continue
            return LEX_INVALID
        if not need_value:  # pragma: no cover - the loop above returns or breaks
            return LEX_INVALID


cdef inline Py_ssize_t value_or_unsupported(const uint8_t[::1] buf, Py_ssize_t i,
                                            Py_ssize_t n) noexcept:
    # a scanner that cannot take the value at i: LEX_UNSUPPORTED when it is valid JSON (the
    # strict parser decides what to say about it), else the lexer's code
    cdef Py_ssize_t end = skip_value(buf, i, n)
    return LEX_UNSUPPORTED if end >= 0 else end
