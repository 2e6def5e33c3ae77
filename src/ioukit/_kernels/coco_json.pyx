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

from libc.stdint cimport int64_t, uint8_t

from ioukit._kernels._json_lex cimport (
    EXPECT_ARRAY_NEXT, EXPECT_CLOSING_QUOTE, EXPECT_COLON, EXPECT_DIGIT_AFTER_MINUS,
    EXPECT_DIGIT_AFTER_POINT, EXPECT_DIGIT_IN_EXPONENT, EXPECT_END, EXPECT_ESCAPE, EXPECT_FALSE,
    EXPECT_FIRST_KEY, EXPECT_HEX, EXPECT_KEY, EXPECT_NULL, EXPECT_OBJECT_NEXT,
    EXPECT_STRING_CHARACTER, EXPECT_TRUE, EXPECT_UTF8, EXPECT_VALUE, LEX_INVALID,
    LEX_POW10_128, LEX_UNSUPPORTED, LexError, LexNumber, check_document, init_lexer,
    key_equals, lex_number, skip_string, skip_value, skip_ws, value_or_unsupported,
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


cdef int _scan(
    const uint8_t[::1] buf, int64_t[:] image_id, int64_t[:] category_id, double[:, :] bbox,
    double[:] score, Py_ssize_t* records,
) noexcept:
    cdef Py_ssize_t n = buf.shape[0], capacity = image_id.shape[0], record = 0
    cdef Py_ssize_t i, end, key_start
    cdef int code, seen, k
    cdef bint escaped
    cdef LexNumber number
    records[0] = 0
    i = skip_ws(buf, 0, n)
    if i >= n or buf[i] != 91:
        return _UNSUPPORTED  # an object with "annotations", a BOM, not JSON...
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
            if code == _IMAGE or code == _CATEGORY or code == _SCORE:
                end = lex_number(buf, i, n, &number)
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
                    end = lex_number(buf, end, n, &number)
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
