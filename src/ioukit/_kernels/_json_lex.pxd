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
# so that a scanner accepts exactly what the strict parser accepts. Given a LexError, the
# functions also say where a document stops being JSON and what was expected there
# (check_document): the caller words the error from that place, without parsing the file
# again (a results file invalid at byte 61 needs no 1 GB parse to say so); what it leaves to
# the strict parser (LEX_UNSUPPORTED, or a shape the scanner does not take) is parsed there.
#
# Numbers are converted exactly as Python's float() does: a significand of at most 2**53 with
# a power of ten of at most 22 in magnitude is one correctly rounded IEEE operation (Clinger's
# fast path; lex_short_number takes its commonest case, up to 15 digits and no exponent, in
# a few instructions a scanner inlines); a significand of at most 19 digits goes through Eisel-Lemire, which answers
# only when its 128-bit product decides the rounding; any other number (and every one
# Eisel-Lemire leaves) goes through PyOS_string_to_double, float()'s own conversion.

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


# Eisel-Lemire (Lemire, "Number parsing at a gigabyte per second", 2021; as Go's strconv
# eiselLemire64): a significand of at most 19 digits times 10**q, q in [-342, 308], rounded
# to nearest-even from a 128-bit product with 10**q truncated to 128 bits. It answers only
# when the product decides the rounding; otherwise (a possible halfway case, a subnormal or
# infinite result) it returns 0 and the number goes to PyOS_string_to_double. Its table of
# 128-bit powers of ten is computed from its definition when a module that cimports this
# file is imported (init_lexer), checked against Go's published table in the tests.
cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>
    /* 10**q, q = -342..308, normalized to [2**127, 2**128) and truncated: {high, low};
       filled once per module by init_lexer (below) */
    static uint64_t ioukit_lex_pow10_128[651][2];

    static inline void ioukit_mul64(uint64_t a, uint64_t b, uint64_t* hi, uint64_t* lo) {
    #if defined(__SIZEOF_INT128__)
        unsigned __int128 p = (unsigned __int128)a * b;
        *hi = (uint64_t)(p >> 64);
        *lo = (uint64_t)p;
    #else
        uint64_t a0 = a & 0xFFFFFFFFu, a1 = a >> 32, b0 = b & 0xFFFFFFFFu, b1 = b >> 32;
        uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
        uint64_t mid = (p00 >> 32) + (p01 & 0xFFFFFFFFu) + (p10 & 0xFFFFFFFFu);
        *hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
        *lo = (mid << 32) | (p00 & 0xFFFFFFFFu);
    #endif
    }

    static inline int ioukit_clz64(uint64_t x) {  /* x != 0 */
    #if defined(__GNUC__) || defined(__clang__)
        return __builtin_clzll(x);
    #else
        int n = 0;
        while (!(x & 0x8000000000000000u)) { x <<= 1; n++; }
        return n;
    #endif
    }

    /* 1 and *out = man * 10**q correctly rounded when the product decides it; else 0.
       Kept out of line: the lexer's common path stays small */
    #if defined(__GNUC__) || defined(__clang__)
    __attribute__((noinline))
    #endif
    static int ioukit_eisel_lemire(uint64_t man, long q, int negative, double* out) {
        uint64_t x_hi, x_lo, y_hi, y_lo, merged_hi, merged_lo, mantissa, exp2, bits, msb;
        const uint64_t* power;
        int clz;
        int64_t t, f;
        double value;
        if (man == 0 || q < -342 || q > 308) return 0;
        power = ioukit_lex_pow10_128[q + 342];
        clz = ioukit_clz64(man);
        man <<= clz;
        /* floor(q * 217706 / 2**16) = floor(q * log2(10)) on this range, + 64 + 1023 - clz */
        t = (int64_t)q * 217706;
        f = t >= 0 ? t / 65536 : -((-t + 65535) / 65536);
        exp2 = (uint64_t)(f + 64 + 1023 - clz);
        ioukit_mul64(man, power[0], &x_hi, &x_lo);
        if ((x_hi & 0x1FF) == 0x1FF && x_lo + man < man) {  /* the wider approximation */
            ioukit_mul64(man, power[1], &y_hi, &y_lo);
            merged_hi = x_hi;
            merged_lo = x_lo + y_hi;
            if (merged_lo < x_lo) merged_hi++;
            if ((merged_hi & 0x1FF) == 0x1FF && merged_lo + 1 == 0 && y_lo + man < man) return 0;
            x_hi = merged_hi;
            x_lo = merged_lo;
        }
        msb = x_hi >> 63;
        mantissa = x_hi >> (msb + 9);
        exp2 -= 1 ^ msb;
        if (x_lo == 0 && (x_hi & 0x1FF) == 0 && (mantissa & 3) == 1) return 0;  /* halfway? */
        mantissa += mantissa & 1;
        mantissa >>= 1;
        if (mantissa >> 53 > 0) {
            mantissa >>= 1;
            exp2 += 1;
        }
        if (exp2 - 1 >= 0x7FF - 1) return 0;  /* subnormal, zero or infinite */
        bits = exp2 << 52 | (mantissa & 0x000FFFFFFFFFFFFFu);
        if (negative) bits |= 0x8000000000000000u;
        memcpy(&value, &bits, sizeof value);
        *out = value;
        return 1;
    }
    """
    bint eisel_lemire "ioukit_eisel_lemire" (uint64_t man, long q, bint negative,
                                              double* out) noexcept nogil
    uint64_t LEX_POW10_128 "ioukit_lex_pow10_128"[651][2]


cdef inline int init_lexer() except -1:
    # Eisel-Lemire's table from its definition, with Python's exact integers (0.2 ms): for
    # q = -342..308, 10**q scaled by a power of two into [2**127, 2**128) and truncated (for
    # q < 0: floor(2**(127 + b) / 10**-q), b the bit length of 10**-q), as {high, low}. Every
    # module that cimports the lexer calls this once, at import, before any scan.
    cdef int q
    power = 1
    for q in range(309):
        shift = power.bit_length() - 128
        scaled = power >> shift if shift > 0 else power << -shift
        LEX_POW10_128[342 + q][0] = scaled >> 64
        LEX_POW10_128[342 + q][1] = scaled & 0xFFFFFFFFFFFFFFFF
        power *= 10
    power = 1
    for q in range(1, 343):
        power *= 10
        scaled = (1 << (127 + power.bit_length())) // power
        LEX_POW10_128[342 - q][0] = scaled >> 64
        LEX_POW10_128[342 - q][1] = scaled & 0xFFFFFFFFFFFFFFFF
    return 0


ctypedef struct LexNumber:
    double value
    bint integer  # no fraction and no exponent


# what was expected where a document stops being JSON (LexError.expected)
cdef enum:
    EXPECT_VALUE = 0
    EXPECT_DIGIT_AFTER_MINUS = 1
    EXPECT_DIGIT_AFTER_POINT = 2
    EXPECT_DIGIT_IN_EXPONENT = 3
    EXPECT_FIRST_KEY = 4
    EXPECT_KEY = 5
    EXPECT_COLON = 6
    EXPECT_ARRAY_NEXT = 7
    EXPECT_OBJECT_NEXT = 8
    EXPECT_END = 9
    EXPECT_TRUE = 10
    EXPECT_FALSE = 11
    EXPECT_NULL = 12
    EXPECT_CLOSING_QUOTE = 13
    EXPECT_ESCAPE = 14
    EXPECT_HEX = 15
    EXPECT_STRING_CHARACTER = 16
    EXPECT_UTF8 = 17


ctypedef struct LexError:
    Py_ssize_t position  # the byte where the document stops being JSON (n: its end)
    int expected  # EXPECT_*


cdef inline Py_ssize_t _fail(LexError* error, Py_ssize_t position, int expected) noexcept nogil:
    # LEX_INVALID, with the place and the expectation when the caller asked for them
    if error != NULL:
        error.position = position
        error.expected = expected
    return LEX_INVALID


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


cdef inline Py_ssize_t _digits(const uint8_t* p, Py_ssize_t i, Py_ssize_t n, bint bounded,
                               uint64_t* acc) noexcept nogil:
    # the end of the run of digits at p[i] (i itself when p[i] is no digit or i == n);
    # acc = 10 acc + digit for each (modulo 2**64: the caller uses acc only for at most 19
    # digits). bounded: p[n - 1] is not a digit, so no run reaches n and the loop needs no
    # index check; then i < n (p[i] a digit): a bounded run must never start at n, where p[n]
    # is past the buffer
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
    # after the number is the caller's to check; _number_error says where and why),
    # LEX_UNSUPPORTED when it overflows
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
        if i >= n or not is_digit(p[i]):  # "1." at the end of the buffer: p[n] is not ours
            return LEX_INVALID
        first = i
        i = _digits(p, i, n, bounded, &mantissa)
        exponent = first - i
        digits += i - first
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
    if digits <= 19:  # the mantissa is exact (more digits wrapped it: float() decides)
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
        if eisel_lemire(mantissa, exponent, negative, &out.value):
            return i
    value = _slow_number(buf, start, i, &ok)
    if not ok or isinf(value):
        return LEX_UNSUPPORTED  # orjson refuses a number that overflows; json gives inf
    out.value = value
    return i


cdef inline Py_ssize_t lex_short_number(const uint8_t* p, Py_ssize_t i, Py_ssize_t n,
                                        LexNumber* out) noexcept nogil:
    # lex_number's common case, small enough to inline in a scanner's loop: -?D+(.D+)? with at
    # most 15 digits and no exponent (a results file's "417.59", "0.099", "54"). The
    # significand is then below 10**15 < 2**53 and the power of ten at most 10**15, both exact
    # doubles, so one IEEE division is the correctly rounded value (Clinger's fast path): what
    # float() gives, bit for bit. Returns the end of the number, or -1 for anything else (a
    # longer or exponent number, not a number, a leading zero followed by digits): the caller
    # then calls lex_number, which converts it or says why not.
    cdef Py_ssize_t j = i, first
    cdef uint64_t mantissa = 0
    cdef Py_ssize_t digits, fraction = 0
    cdef bint negative = False
    cdef double value
    if j < n and p[j] == 45:  # '-'
        negative = True
        j += 1
    first = j
    j = _digits(p, j, n, False, &mantissa)
    digits = j - first
    if digits == 0 or (digits > 1 and p[first] == 48):  # no digit; "01" is not JSON
        return -1
    if j < n and p[j] == 46:  # '.'
        j += 1
        first = j
        j = _digits(p, j, n, False, &mantissa)
        fraction = j - first
        if fraction == 0:  # "1." is not JSON
            return -1
        digits += fraction
    if digits > 15 or (j < n and (p[j] == 101 or p[j] == 69)):  # long, or 'e' 'E'
        return -1
    out.integer = fraction == 0
    value = <double>mantissa
    if fraction:
        value = value / LEX_POW10[fraction]
    # float("-0.0") is -0.0; an integer -0 is int 0, which becomes +0.0
    out.value = -value if negative and (mantissa != 0 or fraction != 0) else value
    return j


cdef inline Py_ssize_t _number_error(const uint8_t[::1] buf, Py_ssize_t i, Py_ssize_t n,
                                     LexError* error) noexcept nogil:
    # lex_number refused the number at i: LEX_INVALID, with where and why (the same grammar
    # walked again, on the error path only: lex_number, the scanners' hottest code, stays
    # free of the bookkeeping)
    if i < n and buf[i] == 45:  # '-'
        i += 1
        if i >= n or not is_digit(buf[i]):
            return _fail(error, i, EXPECT_DIGIT_AFTER_MINUS)
    if i >= n or not is_digit(buf[i]):
        return _fail(error, i, EXPECT_VALUE)
    i += 1
    if buf[i - 1] != 48:  # '0' takes no more integer digits
        while i < n and is_digit(buf[i]):
            i += 1
    if i < n and buf[i] == 46:  # '.'
        i += 1
        if i >= n or not is_digit(buf[i]):
            return _fail(error, i, EXPECT_DIGIT_AFTER_POINT)
        while i < n and is_digit(buf[i]):
            i += 1
    if i < n and (buf[i] == 101 or buf[i] == 69):  # 'e' 'E'
        i += 1
        if i < n and (buf[i] == 43 or buf[i] == 45):
            i += 1
        if i >= n or not is_digit(buf[i]):
            return _fail(error, i, EXPECT_DIGIT_IN_EXPONENT)
    return _fail(error, i, EXPECT_VALUE)  # pragma: no cover - lex_number took the number


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


cdef inline Py_ssize_t _bad_hex(const uint8_t[::1] buf, Py_ssize_t i, Py_ssize_t n,
                                LexError* error) noexcept nogil:
    # _escape_u refused the 4 characters at i: LEX_INVALID at the first that is not hex
    cdef Py_ssize_t k = i
    while k < i + 4 and k < n and _hex(buf[k]) >= 0:
        k += 1
    return _fail(error, k, EXPECT_HEX)


cdef inline bint _cont(uint8_t c) noexcept nogil:
    return 0x80 <= c <= 0xBF


cdef inline Py_ssize_t skip_string_at(const uint8_t[::1] buf, Py_ssize_t i, Py_ssize_t n,
                                      bint* escaped, LexError* error) noexcept nogil:
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
            return _fail(error, i, EXPECT_STRING_CHARACTER)  # a raw control character
        if c < 0x80:
            if c == 92:  # backslash
                escaped[0] = True
                if i + 1 >= n:
                    return _fail(error, i + 1, EXPECT_ESCAPE)
                c = buf[i + 1]
                if c == 117:  # 'u'
                    unit = _escape_u(buf, i + 2, n)
                    if unit < 0:
                        return _bad_hex(buf, i + 2, n, error)
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
                return _fail(error, i + 1, EXPECT_ESCAPE)
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
        return _fail(error, i, EXPECT_UTF8)
    return _fail(error, n, EXPECT_CLOSING_QUOTE)  # unterminated


cdef inline Py_ssize_t skip_string(const uint8_t[::1] buf, Py_ssize_t i, Py_ssize_t n,
                                   bint* escaped) noexcept nogil:
    return skip_string_at(buf, i, n, escaped, NULL)


cdef inline Py_ssize_t _word(const uint8_t[::1] buf, Py_ssize_t i, Py_ssize_t n,
                             LexError* error) noexcept nogil:
    # buf[i] is 't', 'f' or 'n': the index after true, false or null, else LEX_INVALID
    cdef const char* word = b"true"
    cdef Py_ssize_t length = 4, k
    cdef int expected = EXPECT_TRUE
    if buf[i] == 102:
        word, length, expected = b"false", 5, EXPECT_FALSE
    elif buf[i] == 110:
        word, expected = b"null", EXPECT_NULL
    for k in range(1, length):
        if i + k >= n or buf[i + k] != <uint8_t>word[k]:
            return _fail(error, i + k, expected)
    return i + length


cdef inline Py_ssize_t _key_colon(const uint8_t[::1] buf, Py_ssize_t i, Py_ssize_t n,
                                  int expected, LexError* error) noexcept nogil:
    # an object's key at i and the ':' after it: the index of the member's value; where no
    # key starts, LEX_INVALID expecting expected (EXPECT_FIRST_KEY or EXPECT_KEY)
    cdef bint escaped
    if i >= n or buf[i] != 34:
        return _fail(error, i, expected)
    i = skip_string_at(buf, i, n, &escaped, error)
    if i < 0:
        return i
    i = skip_ws(buf, i, n)
    if i >= n or buf[i] != 58:  # ':'
        return _fail(error, i, EXPECT_COLON)
    return skip_ws(buf, i + 1, n)


cdef inline Py_ssize_t skip_value_at(const uint8_t[::1] buf, Py_ssize_t i, Py_ssize_t n,
                                     LexError* error) noexcept:
    # any JSON value at i (white space before it already skipped): the index after it,
    # LEX_INVALID or LEX_UNSUPPORTED. Iterative, with an explicit stack of open containers.
    cdef uint8_t[MAX_DEPTH] stack
    cdef int depth = 0
    cdef uint8_t c
    cdef bint escaped, need_value
    cdef LexNumber number
    cdef Py_ssize_t end
    while True:
        # a value starts at i
        if i >= n:
            return _fail(error, i, EXPECT_VALUE)
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
                i = _key_colon(buf, i, n, EXPECT_FIRST_KEY, error)  # the first key of an object
                if i < 0:
                    return i
                continue
        elif c == 34:
            i = skip_string_at(buf, i, n, &escaped, error)
        elif c == 116 or c == 102 or c == 110:
            i = _word(buf, i, n, error)
        else:
            end = lex_number(buf, i, n, &number)
            i = _number_error(buf, i, n, error) if end == LEX_INVALID else end
        if i < 0:
            return i
        # after a value: close containers, or a comma and the next element/member
        while True:
            if depth == 0:
                return i
            i = skip_ws(buf, i, n)
            c = buf[i] if i < n else 0
            if c == 44:  # ','
                i = skip_ws(buf, i + 1, n)
                if stack[depth - 1] == 123:
                    i = _key_colon(buf, i, n, EXPECT_KEY, error)
                    if i < 0:
                        return i
                need_value = True
                break
            if i < n and c == stack[depth - 1] + 2:  # ] closes [, } closes {
                depth -= 1
                i += 1
                continue
            return _fail(error, i, EXPECT_ARRAY_NEXT if stack[depth - 1] == 91
                         else EXPECT_OBJECT_NEXT)
        if not need_value:  # pragma: no cover - the loop above returns or breaks
            return LEX_INVALID


cdef inline Py_ssize_t skip_value(const uint8_t[::1] buf, Py_ssize_t i, Py_ssize_t n) noexcept:
    return skip_value_at(buf, i, n, NULL)


cdef inline Py_ssize_t value_or_unsupported(const uint8_t[::1] buf, Py_ssize_t i,
                                            Py_ssize_t n) noexcept:
    # a scanner that cannot take the value at i: LEX_UNSUPPORTED when it is valid JSON (the
    # strict parser decides what to say about it), else the lexer's code
    cdef Py_ssize_t end = skip_value(buf, i, n)
    return LEX_UNSUPPORTED if end >= 0 else end


cdef inline Py_ssize_t check_document(const uint8_t[::1] buf, LexError* error) noexcept:
    # 0 when buf is one JSON value with white space around it; else LEX_INVALID with error
    # set to the first byte where it stops being JSON, or LEX_UNSUPPORTED (the strict parser
    # decides: see the top of this file)
    cdef Py_ssize_t n = buf.shape[0]
    cdef Py_ssize_t i = skip_value_at(buf, skip_ws(buf, 0, n), n, error)
    if i < 0:
        return i
    i = skip_ws(buf, i, n)
    if i < n:
        return _fail(error, i, EXPECT_END)
    return 0
