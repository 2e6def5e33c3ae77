"""Compiled scanner for COCO result files: one pass over the bytes, columns out (private).

Handles the common shape of a results file, a JSON array of flat objects with ``image_id``,
``category_id`` (integers), ``bbox`` (4 numbers) and ``score`` (number); other keys are
skipped whatever their value, and validated as strictly as the rest (the lexer
``_json_lex.pxd``, RFC 8259). Returns ``INVALID`` only for a file that is not JSON (the
strict parser refuses it too, and names the place); any other shape (a missing key, escapes
in a key, a BOM, an object at the top...) returns a non-zero code and the caller parses the
file with the general JSON parser, which decides and gives the precise error message.

Numbers are converted exactly as Python's ``float`` does (see ``_json_lex.pxd``).

``locate_error`` says where a document stops being JSON, to word the error of a file the
scanner calls ``INVALID`` without parsing it again.

The plain-Python twin is the general parser (``orjson``/``json``): tests compare both.
"""

from libc.stdint cimport int64_t, uint8_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memchr, memcmp, memcpy

from ioukit._kernels._json_lex cimport (
    EXPECT_ARRAY_NEXT, EXPECT_CLOSING_QUOTE, EXPECT_COLON, EXPECT_DIGIT_AFTER_MINUS,
    EXPECT_DIGIT_AFTER_POINT, EXPECT_DIGIT_IN_EXPONENT, EXPECT_END, EXPECT_ESCAPE, EXPECT_FALSE,
    EXPECT_FIRST_KEY, EXPECT_HEX, EXPECT_KEY, EXPECT_NULL, EXPECT_OBJECT_NEXT,
    EXPECT_STRING_CHARACTER, EXPECT_TRUE, EXPECT_UTF8, EXPECT_VALUE, LEX_INVALID,
    LEX_POW10_128, LEX_UNSUPPORTED, LexError, LexNumber, check_document, init_lexer,
    key_equals, lex_number, lex_short_number, skip_string, skip_value, skip_ws, value_or_unsupported,
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

# field codes
cdef enum:
    _IMAGE = 0
    _CATEGORY = 1
    _BBOX = 2
    _SCORE = 3
    _OTHER = 4


cdef inline int _code(Py_ssize_t lexed) noexcept nogil:
    # a lexer code as a scanner code
    return _INVALID if lexed == LEX_INVALID else _UNSUPPORTED


cdef int _key_code(const uint8_t[::1] buf, Py_ssize_t i, Py_ssize_t j) noexcept nogil:
    # buf[i:j] is the key without quotes
    if key_equals(buf, i, j, b"image_id", 8):
        return _IMAGE
    if key_equals(buf, i, j, b"category_id", 11):
        return _CATEGORY
    if key_equals(buf, i, j, b"bbox", 4):
        return _BBOX
    if key_equals(buf, i, j, b"score", 5):
        return _SCORE
    return _OTHER


cdef inline int _known_key(const uint8_t* p, Py_ssize_t i, Py_ssize_t n,
                           Py_ssize_t* end) noexcept nogil:
    # p[i] is the quote opening a key: the field code when the key is exactly one of the four
    # (no escape, the closing quote right after the name), with end after that quote; else
    # -1 and the caller lexes the string (the same answer: _key_code on the skipped string)
    cdef uint8_t c = p[i + 1] if i + 1 < n else 0
    if c == 105 and i + 10 <= n and memcmp(p + i + 1, b'image_id"', 9) == 0:
        end[0] = i + 10
        return _IMAGE
    if c == 99 and i + 13 <= n and memcmp(p + i + 1, b'category_id"', 12) == 0:
        end[0] = i + 13
        return _CATEGORY
    if c == 98 and i + 6 <= n and memcmp(p + i + 1, b'bbox"', 5) == 0:
        end[0] = i + 6
        return _BBOX
    if c == 115 and i + 7 <= n and memcmp(p + i + 1, b'score"', 6) == 0:
        end[0] = i + 7
        return _SCORE
    return -1


cdef inline Py_ssize_t _number(const uint8_t[::1] buf, const uint8_t* p, Py_ssize_t i,
                               Py_ssize_t n, LexNumber* out) noexcept:
    # the number at i: the inlined short case, else the whole lexer (lex_number's codes)
    cdef Py_ssize_t end = lex_short_number(p, i, n, out)
    return end if end >= 0 else lex_number(buf, i, n, out)


cdef int _scan(
    const uint8_t[::1] buf, int64_t[:] image_id, int64_t[:] category_id, double[:, :] bbox,
    double[:] score, Py_ssize_t* records,
) noexcept:
    cdef Py_ssize_t n = buf.shape[0], capacity = image_id.shape[0], record = 0
    cdef Py_ssize_t i, end, key_start
    cdef int code, seen, k
    cdef bint escaped
    cdef LexNumber number
    cdef const uint8_t* p
    records[0] = 0
    i = skip_ws(buf, 0, n)
    if i >= n or buf[i] != 91:
        return _UNSUPPORTED  # an object with "annotations", a BOM, not JSON...
    p = &buf[0]
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
            code = _known_key(p, i, n, &end)
            if code < 0:
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
            if code == _IMAGE or code == _CATEGORY or code == _SCORE:
                end = _number(buf, p, i, n, &number)
                if end == LEX_INVALID:  # a string, null...: the general parser names it
                    return _code(value_or_unsupported(buf, i, n))
                if end < 0:
                    return _code(end)
                if code == _SCORE:
                    score[record] = number.value
                else:
                    if not number.integer or not (-9007199254740992.0 < number.value
                                                  < 9007199254740992.0):
                        return _UNSUPPORTED
                    if code == _IMAGE:
                        image_id[record] = <int64_t>number.value
                    else:
                        category_id[record] = <int64_t>number.value
                seen |= 1 << code
                i = end
            elif code == _BBOX:
                if i >= n or buf[i] != 91:
                    return _code(value_or_unsupported(buf, i, n))
                end = skip_ws(buf, i + 1, n)
                for k in range(4):
                    if k > 0:
                        if end >= n or buf[end] != 44:
                            return _code(value_or_unsupported(buf, i, n))
                        end = skip_ws(buf, end + 1, n)
                    end = _number(buf, p, end, n, &number)
                    if end < 0:
                        return _code(value_or_unsupported(buf, i, n))
                    bbox[record, k] = number.value
                    end = skip_ws(buf, end, n)
                if end >= n or buf[end] != 93:
                    return _code(value_or_unsupported(buf, i, n))
                seen |= 1 << code
                i = end + 1
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
        if seen != 15:
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


def scan_results(buf, image_id, category_id, bbox, score):
    """Fill the columns from a results file; returns (code, records).

    buf (B,) uint8 (read-only is fine); image_id, category_id (C,) int64; bbox (C, 4) float64;
    score (C,) float64. ``code`` is OK, INVALID (not JSON: the strict parser refuses the file
    too) or another reason to let the general parser read the file.
    """
    cdef const uint8_t[::1] data = buf
    cdef int64_t[:] image_view = image_id, category_view = category_id
    cdef double[:, :] bbox_view = bbox
    cdef double[:] score_view = score
    cdef Py_ssize_t records = 0
    cdef int code = _scan(data, image_view, category_view, bbox_view, score_view, &records)
    return code, records


# what was expected, by EXPECT_* code (_json_lex.pxd)
_EXPECTED = {
    EXPECT_VALUE: "a value",
    EXPECT_DIGIT_AFTER_MINUS: "a digit after '-'",
    EXPECT_DIGIT_AFTER_POINT: "a digit after '.'",
    EXPECT_DIGIT_IN_EXPONENT: "a digit in the exponent",
    EXPECT_FIRST_KEY: "'\"' (a key) or '}'",
    EXPECT_KEY: "'\"' (a key)",
    EXPECT_COLON: "':' after the key",
    EXPECT_ARRAY_NEXT: "',' or ']'",
    EXPECT_OBJECT_NEXT: "',' or '}'",
    EXPECT_END: "the end of the file after the value",
    EXPECT_TRUE: "true",
    EXPECT_FALSE: "false",
    EXPECT_NULL: "null",
    EXPECT_CLOSING_QUOTE: "'\"' closing the string",
    EXPECT_ESCAPE: r'one of " \ / b f n r t u after a backslash',
    EXPECT_HEX: r"4 hex digits after '\u'",
    EXPECT_STRING_CHARACTER: "a character (control characters are escaped in JSON)",
    EXPECT_UTF8: "UTF-8 text",
}


def locate_error(const uint8_t[::1] buf):
    """Where the JSON document in ``buf`` stops being JSON, by the scanner's strict lexer.

    Returns ``(byte, line, column, expected)``: the 0-based offset of the first byte that
    cannot continue the document (``len(buf)`` for a document cut short), its 1-based line
    and column (in characters: UTF-8 continuation bytes do not count) and what was expected
    there, in words; ``None`` when ``buf`` is JSON or the strict parser must decide (a lone
    surrogate, nesting deeper than 512, a number that overflows). One pass, no allocation.
    """
    cdef LexError error
    cdef Py_ssize_t k, line = 1, column = 1
    if check_document(buf, &error) != LEX_INVALID:
        return None
    with nogil:
        for k in range(error.position):
            if buf[k] == 10:
                line += 1
                column = 1
            elif buf[k] < 0x80 or buf[k] > 0xBF:
                column += 1
    return error.position, line, column, _EXPECTED[error.expected]


def pow10_128(int q):
    """Eisel-Lemire's ``10**q`` (``-342 <= q <= 308``) as this module holds it: ``(high,
    low)``, the 64-bit halves of the power scaled into ``[2**127, 2**128)`` and truncated
    (for the tests, which compare it with Go's published table)."""
    if not -342 <= q <= 308:
        raise ValueError(f"q: expected -342..308, got {q}")
    return LEX_POW10_128[342 + q][0], LEX_POW10_128[342 + q][1]


def top_level_members(const uint8_t[::1] buf):
    """The members of the JSON object that ``buf`` holds, without parsing their values.

    Returns ``(code, members)``: ``code`` OK with ``members`` a list of ``(key, start,
    end)``, one per member in document order (``key`` the raw bytes between the quotes,
    ``buf[start:end]`` the value's text, white space excluded), after one strict lexer pass
    over the whole document; INVALID (not JSON: the strict parser refuses it too) or another
    code (not an object, a key with escapes, a value the lexer leaves to the strict parser)
    with an empty list: the caller parses the document whole. Where it gives members,
    ``json.loads(buf[start:end])`` is the parsed document's value of ``key`` for the last
    member of each key (a parser keeps the last of repeated keys).
    """
    cdef Py_ssize_t n = buf.shape[0], i, key_start, end, start
    cdef bint escaped
    members = []
    i = skip_ws(buf, 0, n)
    if i >= n or buf[i] != 123:
        return _UNSUPPORTED, []  # an array, a BOM, not JSON: the strict parser decides
    i = skip_ws(buf, i + 1, n)
    if i < n and buf[i] == 125:
        i = skip_ws(buf, i + 1, n)
        return (_OK if i == n else _INVALID), []
    while True:
        if i >= n or buf[i] != 34:
            return _INVALID, []  # an object member starts with a key
        key_start = i + 1
        end = skip_string(buf, i, n, &escaped)
        if end < 0:
            return _code(end), []
        if escaped:
            return _UNSUPPORTED, []  # the strict parser reads an escaped key
        key = bytes(buf[key_start:end - 1])
        i = skip_ws(buf, end, n)
        if i >= n or buf[i] != 58:  # ':'
            return _INVALID, []
        start = skip_ws(buf, i + 1, n)
        i = skip_value(buf, start, n)
        if i < 0:
            return _code(i), []
        members.append((key, start, i))
        i = skip_ws(buf, i, n)
        if i < n and buf[i] == 44:
            i = skip_ws(buf, i + 1, n)
            continue
        if i < n and buf[i] == 125:
            i = skip_ws(buf, i + 1, n)
            return (_OK, members) if i == n else (_INVALID, [])
        return _INVALID, []  # after a member: a comma or the end of the object


# --- segm results: the same records with a compressed RLE ``segmentation`` (#27) -------------

# field codes of a segm record
cdef enum:
    _SEGM_IMAGE = 0
    _SEGM_CATEGORY = 1
    _SEGM_SCORE = 2
    _SEGM_SEGMENTATION = 3
    _SEGM_BBOX = 4
    _SEGM_OTHER = 5


cdef int _segm_key_code(const uint8_t[::1] buf, Py_ssize_t i, Py_ssize_t j) noexcept nogil:
    if key_equals(buf, i, j, b"image_id", 8):
        return _SEGM_IMAGE
    if key_equals(buf, i, j, b"category_id", 11):
        return _SEGM_CATEGORY
    if key_equals(buf, i, j, b"score", 5):
        return _SEGM_SCORE
    if key_equals(buf, i, j, b"segmentation", 12):
        return _SEGM_SEGMENTATION
    if key_equals(buf, i, j, b"bbox", 4):
        return _SEGM_BBOX
    return _SEGM_OTHER


cdef inline Py_ssize_t _plain_string_end(const uint8_t[::1] buf, Py_ssize_t j, Py_ssize_t n,
                                         bint* escaped) noexcept nogil:
    # j at an opening quote (segm scanner only): the index after the closing quote when the
    # string is printable ASCII with no escape but \\ (a compressed RLE's counts: '\' is one
    # of its 64 characters), read 8 bytes at a time; escaped: whether it holds a \\. -1 for
    # anything else, which the caller then lexes in full (skip_string: the same verdict on
    # every string this accepts)
    cdef const uint8_t* p = &buf[0]
    cdef Py_ssize_t i = j + 1, k, stop
    cdef uint64_t x, q, b
    cdef uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL
    cdef uint8_t c
    escaped[0] = False
    while True:
        if i + 8 <= n:
            memcpy(&x, p + i, 8)
            q = x ^ (ones * 0x22)  # zero bytes: '"'
            b = x ^ (ones * 0x5C)  # zero bytes: backslash
            # non-zero exactly when some byte is at or above 0x80, below 0x20 (has-less),
            # '"' or a backslash (has-zero of q, b): the word tricks of "Bit Twiddling Hacks"
            if not ((x & highs) | ((x - ones * 0x20) & ~x & highs) | ((q - ones) & ~q & highs)
                    | ((b - ones) & ~b & highs)):
                i += 8
                continue
            stop = i + 8
        else:
            stop = n
        k = i
        while k < stop:
            c = p[k]
            if c == 34:
                return k + 1
            if c < 0x20 or c >= 0x80:
                return -1
            if c == 92:
                if k + 1 >= n or p[k + 1] != 92:
                    return -1
                escaped[0] = True
                k += 2  # may step past stop: the next word starts after the pair
                continue
            k += 1
        if k >= n:
            return -1
        i = k


cdef inline Py_ssize_t _segm_string(const uint8_t[::1] buf, Py_ssize_t j, Py_ssize_t n,
                                    bint* escaped) noexcept nogil:
    # skip_string for the segm scanner's keys and counts: plain strings by _plain_string_end
    cdef Py_ssize_t end = _plain_string_end(buf, j, n, escaped)
    if end >= 0:
        return end
    return skip_string(buf, j, n, escaped)


cdef Py_ssize_t _rle_object(const uint8_t[::1] buf, Py_ssize_t i, Py_ssize_t n, int64_t* h,
                            int64_t* w, int64_t* lo, int64_t* hi, uint8_t* order) noexcept:
    # ``{"size": [h, w], "counts": "..."}`` at i (either order, nothing else, the sides
    # integers in 0..2**31, the string without escapes): the index after it; LEX_INVALID, or
    # LEX_UNSUPPORTED for any other value (polygons, an uncompressed RLE...)
    cdef Py_ssize_t end, key_start, j
    cdef int seen = 0, k
    cdef bint escaped
    cdef LexNumber number
    cdef int64_t side
    if i >= n or buf[i] != 123:
        return value_or_unsupported(buf, i, n)
    j = skip_ws(buf, i + 1, n)
    order[0] = 0
    while True:
        if j >= n or buf[j] != 34:
            return value_or_unsupported(buf, i, n)  # {} or not JSON
        key_start = j + 1
        end = _segm_string(buf, j, n, &escaped)
        if end < 0:
            return end
        if escaped:
            return value_or_unsupported(buf, i, n)
        j = skip_ws(buf, end, n)
        if j >= n or buf[j] != 58:
            return LEX_INVALID
        j = skip_ws(buf, j + 1, n)
        if key_equals(buf, key_start, end - 1, b"size", 4) and not (seen & 1):
            if j >= n or buf[j] != 91:
                return value_or_unsupported(buf, i, n)
            j = skip_ws(buf, j + 1, n)
            for k in range(2):
                if k == 1:
                    if j >= n or buf[j] != 44:
                        return value_or_unsupported(buf, i, n)
                    j = skip_ws(buf, j + 1, n)
                end = _number(buf, &buf[0], j, n, &number)
                if end < 0 or not number.integer or not (0.0 <= number.value <= 2147483648.0):
                    return value_or_unsupported(buf, i, n)
                side = <int64_t>number.value
                if k == 0:
                    h[0] = side
                else:
                    w[0] = side
                j = skip_ws(buf, end, n)
            if j >= n or buf[j] != 93:
                return value_or_unsupported(buf, i, n)
            j += 1
            seen |= 1
        elif key_equals(buf, key_start, end - 1, b"counts", 6) and not (seen & 2):
            if j >= n or buf[j] != 34:
                return value_or_unsupported(buf, i, n)
            end = _segm_string(buf, j, n, &escaped)
            if end < 0:
                return end
            lo[0] = j + 1
            hi[0] = end - 1
            if escaped:  # '\\' is one of the 64 characters of the alphabet
                order[0] |= 2
            if not (seen & 1):
                order[0] |= 1  # counts before size
            seen |= 2
            j = end
        else:
            return value_or_unsupported(buf, i, n)
        j = skip_ws(buf, j, n)
        if j < n and buf[j] == 44:
            j = skip_ws(buf, j + 1, n)
            continue
        if j < n and buf[j] == 125:
            break
        return LEX_INVALID
    if seen != 3:
        return value_or_unsupported(buf, i, n)
    return j + 1


cdef int _scan_segm(
    const uint8_t[::1] buf, int64_t[:] image_id, int64_t[:] category_id, double[:, :] bbox,
    double[:] score, uint8_t[:] has_bbox, int64_t[:, :] rle, uint8_t[:] order,
    Py_ssize_t* records,
) noexcept:
    cdef Py_ssize_t n = buf.shape[0], capacity = image_id.shape[0], record = 0
    cdef Py_ssize_t i, end, key_start
    cdef int code, seen, k
    cdef bint escaped
    cdef LexNumber number
    cdef int64_t h = 0, w = 0, lo = 0, hi = 0
    cdef uint8_t first = 0
    records[0] = 0
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
        has_bbox[record] = 0
        i = skip_ws(buf, i + 1, n)
        if i < n and buf[i] == 125:
            return _MISSING_KEY
        while True:
            if i >= n or buf[i] != 34:
                return _INVALID
            key_start = i + 1
            end = _segm_string(buf, i, n, &escaped)
            if end < 0:
                return _code(end)
            if escaped:
                return _UNSUPPORTED
            code = _segm_key_code(buf, key_start, end - 1)
            i = skip_ws(buf, end, n)
            if i >= n or buf[i] != 58:
                return _INVALID
            i = skip_ws(buf, i + 1, n)
            if code == _SEGM_IMAGE or code == _SEGM_CATEGORY or code == _SEGM_SCORE:
                end = _number(buf, &buf[0], i, n, &number)
                if end == LEX_INVALID:
                    return _code(value_or_unsupported(buf, i, n))
                if end < 0:
                    return _code(end)
                if code == _SEGM_SCORE:
                    score[record] = number.value
                else:
                    if not number.integer or not (-9007199254740992.0 < number.value
                                                  < 9007199254740992.0):
                        return _UNSUPPORTED
                    if code == _SEGM_IMAGE:
                        image_id[record] = <int64_t>number.value
                    else:
                        category_id[record] = <int64_t>number.value
                seen |= 1 << code
                i = end
            elif code == _SEGM_SEGMENTATION:
                end = _rle_object(buf, i, n, &h, &w, &lo, &hi, &first)
                if end < 0:
                    return _code(end)
                rle[record, 0] = h
                rle[record, 1] = w
                rle[record, 2] = lo
                rle[record, 3] = hi
                order[record] = first
                seen |= 1 << code
                i = end
            elif code == _SEGM_BBOX:
                if i >= n or buf[i] != 91:
                    return _code(value_or_unsupported(buf, i, n))
                end = skip_ws(buf, i + 1, n)
                for k in range(4):
                    if k > 0:
                        if end >= n or buf[end] != 44:
                            return _code(value_or_unsupported(buf, i, n))
                        end = skip_ws(buf, end + 1, n)
                    end = _number(buf, &buf[0], end, n, &number)
                    if end < 0:
                        return _code(value_or_unsupported(buf, i, n))
                    bbox[record, k] = number.value
                    end = skip_ws(buf, end, n)
                if end >= n or buf[end] != 93:
                    return _code(value_or_unsupported(buf, i, n))
                has_bbox[record] = 1
                i = end + 1
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
            return _INVALID
        if seen != 15:
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
        return _INVALID


def scan_segm_results(buf, image_id, category_id, bbox, score, has_bbox, rle, order):
    """:func:`scan_results` for segm results: every record also has a ``segmentation``
    ``{"size": [h, w], "counts": "..."}`` (a compressed RLE, either key order, nothing else
    in it) and may lack ``bbox``. Fills ``has_bbox`` (C,) uint8, ``rle`` (C, 4) int64 (h, w
    and the byte range of the counts string) and ``order`` (C,) uint8 (1: counts first);
    returns (code, records). Any other shape (polygons, an uncompressed RLE, a ``null`` box)
    is left to the general parser."""
    cdef const uint8_t[::1] data = buf
    cdef Py_ssize_t records = 0
    cdef int code = _scan_segm(data, image_id, category_id, bbox, score, has_bbox, rle, order,
                               &records)
    return code, records


cdef Py_ssize_t _unescape(const uint8_t* s, Py_ssize_t length, char* out) noexcept nogil:
    # the lexer-checked string body s[:length] with its simple escapes resolved into out;
    # -1 for a \u escape (left to the general parser)
    cdef Py_ssize_t i = 0, m = 0
    cdef uint8_t c
    while i < length:
        c = s[i]
        if c == 92:
            c = s[i + 1]
            i += 2
            if c == 117:
                return -1
            out[m] = <char>(8 if c == 98 else 12 if c == 102 else 10 if c == 110 else
                            13 if c == 114 else 9 if c == 116 else c)
        else:
            out[m] = <char>c
            i += 1
        m += 1
    return m


def rle_strings(const uint8_t[::1] buf, const int64_t[:, :] rle, uint8_t[::1] counts,
                int64_t[::1] offsets):
    """The counts strings of :func:`scan_segm_results`' columns (``rle`` (N, 4): h, w and the
    byte range of each string) with their simple escapes resolved, one after the other into
    ``counts`` (at least as long as the byte ranges together), each starting at
    ``offsets[k]`` (``offsets`` (N + 1,)); ``counts`` holds at least one byte. Returns the bytes written, or -1 when a string holds
    a ``\\u`` escape (the general parser reads the file)."""
    cdef Py_ssize_t n = rle.shape[0], k, length, at = 0
    cdef const uint8_t* source
    if counts.shape[0] == 0 or offsets.shape[0] != n + 1:
        raise ValueError("counts, offsets: expected at least one byte and N + 1 offsets")
    with nogil:
        for k in range(n):
            offsets[k] = at
            source = &buf[0] + rle[k, 2]
            length = rle[k, 3] - rle[k, 2]
            if memchr(source, 92, length) == NULL:
                memcpy(&counts[0] + at, source, length)
            else:
                length = _unescape(source, length, <char*>&counts[0] + at)
                if length < 0:
                    at = -1
                    break
            at += length
        else:
            offsets[n] = at
    return at
